/* sqlts: timestamps as SQLite databases hold them.
 *
 * SQLite has no timestamp type: applications store ISO-8601 text
 * (datetime('now'), Python's str(datetime), JavaScript's toISOString()) or an
 * epoch number (unixepoch(), Date.now(), time.time()). Both are turned into
 * one int64 of nanoseconds since the epoch, in C, by the skiff_ts() SQL
 * function, so that comparisons and ordering in the queries are by instant,
 * whatever the text layout or the zone. (The JDBC connector binds a
 * java.sql.Timestamp and lets SQLite compare it with whatever the column
 * holds, which is why its timestamp modes fail on SQLite.) */
#include "sources/sqlite/sqlts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000LL

static const char iso_forms[] = "ISO-8601 text (YYYY-MM-DD, YYYY-MM-DD[T ]HH:MM[:SS[.fraction]] "
                                "with an optional Z or +HH:MM zone) or an epoch number (as a "
                                "number or as text)";

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
	int64_t r = a % b;

	return r < 0 ? r + b : r;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

/* Reads exactly n digits at *p. */
static bool digits(const char **p, const char *end, int n, int *out)
{
	int v = 0;

	if (end - *p < n)
		return false;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

static bool lit(const char **p, const char *end, char c)
{
	if (*p < end && **p == c) {
		(*p)++;
		return true;
	}
	return false;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/* Fraction digits after '.' or ','; returns ns. */
static bool fraction(const char **p, const char *end, int64_t *ns)
{
	int64_t v = 0;
	int n = 0;

	if (*p >= end || **p < '0' || **p > '9')
		return false;
	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++, n++) {
		if (n < 9)
			v = v * 10 + (**p - '0');
	}
	for (; n < 9; n++)
		v *= 10;
	*ns = v;
	return true;
}

/* Zone designator; returns its offset east of UTC in seconds. */
static bool zone(const char **p, const char *end, int64_t *off, const char **why)
{
	int sign, hh = 0, mm = 0;

	skip_spaces(p, end);
	if (*p == end)
		return true;
	if (lit(p, end, 'Z') || lit(p, end, 'z'))
		return true;
	if (**p != '+' && **p != '-') {
		*why = "unexpected text after the time";
		return false;
	}
	sign = **p == '-' ? -1 : 1;
	(*p)++;
	if (!digits(p, end, 2, &hh)) {
		*why = "zone is not +HH, +HHMM or +HH:MM";
		return false;
	}
	if (*p < end && **p != ' ') {
		lit(p, end, ':');
		if (!digits(p, end, 2, &mm)) {
			*why = "zone is not +HH, +HHMM or +HH:MM";
			return false;
		}
	}
	if (hh > 18 || mm > 59) {
		*why = "zone offset out of range";
		return false;
	}
	*off = sign * (hh * 3600 + mm * 60);
	return true;
}

/* HH:MM[:SS[.f]] into seconds of the day and ns. */
static bool clock_time(const char **p, const char *end, int64_t *secs, int64_t *ns,
                       const char **why)
{
	int hh, mi, ss = 0;

	if (!digits(p, end, 2, &hh) || !lit(p, end, ':') || !digits(p, end, 2, &mi)) {
		*why = "time is not HH:MM[:SS[.fraction]]";
		return false;
	}
	if (lit(p, end, ':')) {
		if (!digits(p, end, 2, &ss)) {
			*why = "seconds are not two digits";
			return false;
		}
		if ((lit(p, end, '.') || lit(p, end, ',')) && !fraction(p, end, ns)) {
			*why = "no digits after the decimal point";
			return false;
		}
	}
	if (hh > 23 || mi > 59 || ss > 59) {
		*why = "hour, minute or second out of range";
		return false;
	}
	*secs = hh * 3600 + mi * 60 + ss;
	return true;
}

int sqlts_parse_text(const char *s, size_t len, int64_t *out, const char **why)
{
	const char *p = s, *end = s + len;
	int y, mo, d;
	int64_t secs = 0, ns = 0, off = 0, total;

	skip_spaces(&p, end);
	while (end > p && end[-1] == ' ')
		end--;
	if (!digits(&p, end, 4, &y) || !lit(&p, end, '-') || !digits(&p, end, 2, &mo) ||
	    !lit(&p, end, '-') || !digits(&p, end, 2, &d)) {
		*why = "does not start with a date YYYY-MM-DD";
		return -1;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) {
		*why = "no such date";
		return -1;
	}
	if (p < end) {
		if (!lit(&p, end, 'T') && !lit(&p, end, 't') && !lit(&p, end, ' ')) {
			*why = "date and time are not separated by T or a space";
			return -1;
		}
		skip_spaces(&p, end);
		if (!clock_time(&p, end, &secs, &ns, why) || !zone(&p, end, &off, why))
			return -1;
		skip_spaces(&p, end);
		if (p != end) {
			*why = "unexpected text after the zone";
			return -1;
		}
	}
	total = days_from_civil(y, mo, d) * 86400 + secs - off;
	if (__builtin_mul_overflow(total, NS_PER_S, &total) ||
	    __builtin_add_overflow(total, ns, &total)) {
		*why = "outside the years 1677 to 2262";
		return -1;
	}
	*out = total;
	return 0;
}

static int scale_int(int64_t v, int64_t *ns)
{
	int64_t a = v < 0 ? -(v + 1) : v; /* no overflow for INT64_MIN */
	int64_t mul = a < 100000000000LL         ? NS_PER_S
	              : a < 100000000000000LL    ? 1000000
	              : a < 100000000000000000LL ? 1000
	                                         : 1;

	return __builtin_mul_overflow(v, mul, ns) ? -1 : 0;
}

/* Julian day numbers of 1582-10-15 and 3000-01-01: what julianday() returns.
 * As epoch seconds this range is 1970-01-27 to 1970-02-02, which no
 * application means. */
#define JD_MIN 2299160.5
#define JD_MAX 2816787.5
#define JD_EPOCH 2440587.5

static bool julian(double v)
{
	return v >= JD_MIN && v <= JD_MAX;
}

/* A Julian day to ns, rounded to the millisecond as SQLite's own date
 * functions do. */
static int from_julian(double jd, int64_t *ns)
{
	double ms = round((jd - JD_EPOCH) * 86400000.0);

	if (ms < -9.2e12 || ms > 9.2e12)
		return -1;
	*ns = (int64_t)ms * 1000000;
	return 0;
}

/* YYYYMMDDhhmmss (14 digits) or YYYYMMDD (8 digits, years 1900 on), as
 * strftime('%Y%m%d%H%M%S') writes them. As epoch numbers the first would be
 * milliseconds after 2262 (out of range), the second seconds in 1970. Returns
 * 1 and *ns for such a date, 0 when v is not one. */
static int calendar_int(int64_t v, int64_t *ns)
{
	int64_t date = v, secs = 0, y;
	int mo, d;

	if (v >= 10000000000000LL && v <= 99999999999999LL) {
		int64_t hms = v % 1000000;

		if (hms / 10000 > 23 || hms / 100 % 100 > 59 || hms % 100 > 59)
			return 0;
		secs = hms / 10000 * 3600 + hms / 100 % 100 * 60 + hms % 100;
		date = v / 1000000;
	} else if (v < 19000101 || v > 99991231) {
		return 0;
	}
	y = date / 10000;
	mo = (int)(date / 100 % 100);
	d = (int)(date % 100);
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return 0;
	secs += days_from_civil(y, mo, d) * 86400;
	return __builtin_mul_overflow(secs, NS_PER_S, ns) ? 0 : 1;
}

int sqlts_from_int(int64_t v, int64_t *ns)
{
	if (calendar_int(v, ns))
		return 0;
	if (julian((double)v))
		return from_julian((double)v, ns);
	return scale_int(v, ns) == 0 && *ns != SQLTS_BAD ? 0 : -1;
}

int sqlts_from_real(double v, int64_t *ns)
{
	double a = fabs(v), mul, r;

	if (!isfinite(v))
		return -1;
	if (julian(v))
		return from_julian(v, ns);
	mul = a < 1e11 ? 1e9 : a < 1e14 ? 1e6 : a < 1e17 ? 1e3 : 1;
	r = floor(v * mul);
	if (r < -9.2e18 || r > 9.2e18)
		return -1;
	*ns = (int64_t)r;
	return 0;
}

/* An epoch number stored as text (strftime('%s') returns text, and a TEXT
 * column keeps it so): [spaces][-]digits[.digits][spaces]. */
static int number_text(const char *s, int64_t *ns)
{
	const char *p = s + strspn(s, " "), *q = p + (*p == '-' || *p == '+');
	size_t ndig = strspn(q, "0123456789"), nfrac = 0;
	const char *end;

	if (ndig == 0 || ndig > 19)
		return -1;
	if (q[ndig] == '.')
		nfrac = strspn(q + ndig + 1, "0123456789");
	end = q + ndig + (q[ndig] == '.' ? 1 + nfrac : 0);
	if (end[strspn(end, " ")] != '\0')
		return -1;
	if (q[ndig] == '.')
		return sqlts_from_real(strtod(p, NULL), ns);
	errno = 0;
	{
		long long v = strtoll(p, NULL, 10);

		if (errno != 0)
			return -1;
		return sqlts_from_int((int64_t)v, ns);
	}
}

int sqlts_from_value(sqlite3_value *v, int64_t *ns, char *errbuf, size_t errlen)
{
	const char *why = NULL;

	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		if (sqlts_from_int(sqlite3_value_int64(v), ns) == 0)
			return 0;
		snprintf(errbuf, errlen, "%lld is outside the years 1677 to 2262 as an epoch",
		         (long long)sqlite3_value_int64(v));
		return -1;
	case SQLITE_FLOAT:
		if (sqlts_from_real(sqlite3_value_double(v), ns) == 0)
			return 0;
		snprintf(errbuf, errlen, "%g is outside the years 1677 to 2262 as an epoch",
		         sqlite3_value_double(v));
		return -1;
	case SQLITE_TEXT: {
		const char *s = (const char *)sqlite3_value_text(v);
		int n = sqlite3_value_bytes(v);

		if (s != NULL && sqlts_parse_text(s, (size_t)n, ns, &why) == 0)
			return 0;
		if (s != NULL && number_text(s, ns) == 0)
			return 0;
		snprintf(errbuf, errlen,
		         "'%.64s%s' is not a timestamp skiff understands (%s); "
		         "it reads %s",
		         s ? s : "", n > 64 ? "..." : "", why ? why : "?", iso_forms);
		return -1;
	}
	default:
		snprintf(errbuf, errlen, "a BLOB is not a timestamp; skiff reads %s", iso_forms);
		return -1;
	}
}

static void ts_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sqlts_clock *clk = sqlite3_user_data(ctx);
	char err[512];
	int64_t ns;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	/* A value it cannot read gets a place after every instant, not an SQL
	 * error: that would fail the whole query, for one row anywhere in the
	 * table. The reader stops when it reaches that row. */
	if (sqlts_from_value(argv[0], &ns, err, sizeof(err)) != 0)
		ns = SQLTS_BAD;
	else if (clk != NULL && ns > clk->after)
		clk->n++;
	sqlite3_result_int64(ctx, ns);
}

int sqlts_register(sqlite3 *db, struct sqlts_clock *clk)
{
	return sqlite3_create_function(db, "skiff_ts", 1,
	                               SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, clk,
	                               ts_func, NULL, NULL);
}

int64_t sqlts_ms(int64_t ns)
{
	return floor_div(ns, 1000000);
}

int64_t sqlts_nanos(int64_t ns)
{
	return floor_mod(ns, NS_PER_S);
}

int sqlts_join(int64_t ms, int64_t nanos, int64_t *ns)
{
	int64_t v;

	if (nanos < 0 || nanos >= NS_PER_S)
		return -1;
	if (__builtin_mul_overflow(floor_div(ms, 1000), NS_PER_S, &v) ||
	    __builtin_add_overflow(v, nanos, &v)) {
		if (ms >= 0)
			return -1;
		v = SQLTS_NONE; /* before 1677: what sqlts_ms(SQLTS_NONE) wrote */
	}
	*ns = v;
	return 0;
}

void sqlts_format(int64_t ns, char *buf, size_t len)
{
	int64_t secs = floor_div(ns, NS_PER_S), days = floor_div(secs, 86400), y;
	int64_t sod = secs - days * 86400;
	int m, d;

	if (ns == SQLTS_NONE) {
		snprintf(buf, len, "the beginning");
		return;
	}
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d.%09lldZ", (long long)y, m, d,
	         (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
	         (long long)floor_mod(ns, NS_PER_S));
}
