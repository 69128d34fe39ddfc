/* txdate: SimpleDateFormat's common letters, formatting and lenient
 * parsing (txdate.h). */
#include "transform/txdate.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/buf.h"

static const char letters[] = "yMdHkKhmsSaEZX";

static const char *const months[] = {"January",   "February", "March",    "April",
                                     "May",       "June",     "July",     "August",
                                     "September", "October",  "November", "December"};
static const char *const days[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                   "Thursday", "Friday", "Saturday"};

/* What Java's letters that skiff does not do mean, for the refusal. */
static const char *const refused[] = {
    "G era",
    "Y week year",
    "w week in year",
    "W week in month",
    "D day in year",
    "F day of week in month",
    "u day number of week",
    "z time zone name",
    "L month (standalone)",
};

struct parts {
	int64_t year;
	int mon, mday, hour, min, sec, ms, wday; /* mon 1..12, wday 0: Sunday */
	long off;                                /* seconds east of UTC */
};

int64_t txdate_days(int64_t y, int m, int d)
{
	/* Howard Hinnant's days_from_civil. */
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int64_t floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static void civil(int64_t z, struct parts *p)
{
	int64_t era, doe, yoe, doy, mp;

	p->wday = (int)(((z % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	p->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	p->mon = (int)(mp < 10 ? mp + 3 : mp - 9);
	p->year = yoe + era * 400 + (p->mon <= 2);
}

static void split(int64_t ms, bool utc, struct parts *p)
{
	int64_t secs = floordiv(ms, 1000), day;
	struct tm tm;
	time_t t = (time_t)secs;

	p->off = 0;
	if (!utc && localtime_r(&t, &tm) != NULL)
		p->off = tm.tm_gmtoff;
	p->ms = (int)(ms - secs * 1000);
	secs += p->off;
	day = floordiv(secs, 86400);
	civil(day, p);
	secs -= day * 86400;
	p->hour = (int)(secs / 3600);
	p->min = (int)(secs / 60 % 60);
	p->sec = (int)(secs % 60);
}

int txdate_check(const char *pattern, char *why, size_t whylen)
{
	bool quoted = false;

	for (const char *p = pattern; *p != '\0'; p++) {
		char c = *p;
		size_t n = 1;

		if (c == '\'') {
			quoted = !quoted;
			continue;
		}
		if (quoted || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			continue;
		while (p[n] == c)
			n++;
		if (strchr(letters, c) != NULL && !(c == 'X' && n > 3)) {
			p += n - 1;
			continue;
		}
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
			if (refused[i][0] == c) {
				snprintf(why, whylen,
				         "skiff does not do the pattern letter '%c' (%s)", c,
				         refused[i] + 2);
				return -1;
			}
		}
		if (c == 'X')
			snprintf(why, whylen, "invalid ISO 8601 format: length=%zu", n);
		else
			snprintf(why, whylen, "Illegal pattern character '%c'", c);
		return -1;
	}
	if (quoted) {
		snprintf(why, whylen, "Unterminated quote");
		return -1;
	}
	return 0;
}

/* v in decimal, zero-padded to width as Java pads a pattern's run of
 * letters, however long the run ("%0*lld" into a bounded buffer overflowed
 * it for runs over 31 letters). */
static void put_num(struct buf *o, int64_t v, size_t width)
{
	char n[32];
	size_t len = (size_t)snprintf(n, sizeof(n), "%lld", (long long)v);
	size_t digits = v < 0 ? len - 1 : len;

	if (v < 0)
		buf_add(o, "-", 1);
	for (size_t i = digits + (v < 0); i < width; i++)
		buf_add(o, "0", 1);
	buf_add(o, v < 0 ? n + 1 : n, digits);
}

/* Quoted text at *pp (just after the opening quote) as a literal; moves *pp
 * past the closing quote. '' inside is one quote. */
static const char *literal(const char *p, struct buf *o, const char *text, size_t *at, bool *ok)
{
	for (; *p != '\0'; p++) {
		if (*p == '\'' && p[1] == '\'') {
			p++;
		} else if (*p == '\'') {
			return p + 1;
		}
		if (o != NULL)
			buf_add(o, p, 1);
		else if (text[*at] == *p)
			(*at)++;
		else
			*ok = false;
	}
	return p;
}

static void put_zone(struct buf *o, char c, size_t n, long off)
{
	long a = off < 0 ? -off : off;
	char z[64];

	if (c == 'X' && off == 0) {
		buf_addz(o, "Z");
		return;
	}
	if (c == 'X' && n == 1)
		snprintf(z, sizeof(z), "%c%02ld", off < 0 ? '-' : '+', a / 3600);
	else if (c == 'X' && n == 3)
		snprintf(z, sizeof(z), "%c%02ld:%02ld", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
	else
		snprintf(z, sizeof(z), "%c%02ld%02ld", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
	buf_addz(o, z);
}

static void put_field(struct buf *o, char c, size_t n, const struct parts *p)
{
	switch (c) {
	case 'y':
		put_num(o, n == 2 ? p->year % 100 : p->year, n);
		break;
	case 'M':
		if (n >= 3)
			buf_add(o, months[p->mon - 1], n == 3 ? 3 : strlen(months[p->mon - 1]));
		else
			put_num(o, p->mon, n);
		break;
	case 'E':
		buf_add(o, days[p->wday], n >= 4 ? strlen(days[p->wday]) : 3);
		break;
	case 'a':
		buf_addz(o, p->hour < 12 ? "AM" : "PM");
		break;
	case 'd':
		put_num(o, p->mday, n);
		break;
	case 'H':
		put_num(o, p->hour, n);
		break;
	case 'k':
		put_num(o, p->hour == 0 ? 24 : p->hour, n);
		break;
	case 'K':
		put_num(o, p->hour % 12, n);
		break;
	case 'h':
		put_num(o, p->hour % 12 == 0 ? 12 : p->hour % 12, n);
		break;
	case 'm':
		put_num(o, p->min, n);
		break;
	case 's':
		put_num(o, p->sec, n);
		break;
	case 'S':
		put_num(o, p->ms, n);
		break;
	default: /* Z, X */
		put_zone(o, c, n, p->off);
	}
}

void txdate_format(const char *pattern, int64_t ms, bool utc, struct buf *o)
{
	struct parts p;
	bool ok = true;

	split(ms, utc, &p);
	for (const char *s = pattern; *s != '\0';) {
		size_t n = 1;

		if (*s == '\'' && s[1] == '\'') {
			buf_addz(o, "'");
			s += 2;
			continue;
		}
		if (*s == '\'') {
			s = literal(s + 1, o, NULL, NULL, &ok);
			continue;
		}
		if (strchr(letters, *s) == NULL || *s == '\0') {
			buf_add(o, s++, 1);
			continue;
		}
		while (s[n] == *s)
			n++;
		put_field(o, *s, n, &p);
		s += n;
	}
}

/* ---- parsing --------------------------------------------------------------- */

struct fields {
	int64_t year, mon, mday, hour, hour12, min, sec, ms;
	bool pm, h12, zoned;
	int64_t off; /* seconds east of UTC */
};

/* A number at text+*at: at most max characters when max > 0 (Java's
 * obeyCount, when another field follows without a literal between). */
static int number(const char *text, size_t *at, size_t max, int64_t *v, size_t *digits)
{
	size_t i = *at, start;
	bool neg = text[i] == '-';

	i += neg;
	start = i;
	*v = 0;
	while (text[i] >= '0' && text[i] <= '9' && (max == 0 || i - *at < max) &&
	       *v < 100000000000000LL)
		*v = *v * 10 + (text[i++] - '0');
	if (i == start)
		return -1;
	*digits = i - start;
	*v = neg ? -*v : *v;
	*at = i;
	return 0;
}

/* The longest of names (case-insensitive, full or three-letter) at text. */
static int name(const char *text, size_t *at, const char *const *names, int count)
{
	for (int full = 1; full >= 0; full--) {
		for (int i = 0; i < count; i++) {
			size_t n = full ? strlen(names[i]) : 3;

			if (strncasecmp(text + *at, names[i], n) == 0) {
				*at += n;
				return i;
			}
		}
	}
	return -1;
}

static int zone(const char *text, size_t *at, char c, struct fields *f)
{
	const char *s = text + *at, *end = s + 3;
	int64_t h, m = 0;

	if (c == 'X' && *s == 'Z') {
		(*at)++;
		f->zoned = true;
		f->off = 0;
		return 0;
	}
	if ((*s != '+' && *s != '-') || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9')
		return -1;
	h = (s[1] - '0') * 10 + (s[2] - '0');
	if (*end == ':' && end[1] >= '0' && end[1] <= '9')
		end++;
	if (end[0] >= '0' && end[0] <= '9' && end[1] >= '0' && end[1] <= '9') {
		m = (end[0] - '0') * 10 + (end[1] - '0');
		end += 2;
	}
	*at = (size_t)(end - text);
	f->zoned = true;
	f->off = (*s == '-' ? -1 : 1) * (h * 3600 + m * 60);
	return 0;
}

/* A two-digit year, as SimpleDateFormat places it: within 80 years before
 * and 20 after now. */
static int64_t century(int64_t yy)
{
	struct parts now;
	int64_t start;

	split((int64_t)time(NULL) * 1000, true, &now);
	start = now.year - 80;
	return yy + start / 100 * 100 + (yy < start % 100 ? 100 : 0);
}

static int parse_field(const char *text, size_t *at, char c, size_t n, bool obey, struct fields *f)
{
	int64_t v;
	size_t got, start;
	int i;

	while (text[*at] == ' ' || text[*at] == '\t')
		(*at)++;
	start = *at;
	if (c == 'Z' || c == 'X')
		return zone(text, at, c, f);
	if (c == 'a') {
		i = strncasecmp(text + *at, "AM", 2) == 0   ? 0
		    : strncasecmp(text + *at, "PM", 2) == 0 ? 1
		                                            : -1;
		f->pm = i == 1;
		*at += 2;
		return i < 0 ? -1 : 0;
	}
	if (c == 'E')
		return name(text, at, days, 7) < 0 ? -1 : 0;
	if (c == 'M' && n >= 3) {
		i = name(text, at, months, 12);
		f->mon = i + 1;
		return i < 0 ? -1 : 0;
	}
	if (number(text, at, obey ? n : 0, &v, &got) != 0)
		return -1;
	switch (c) {
	case 'y':
		f->year = n <= 2 && got == 2 && text[start] != '-' ? century(v) : v;
		break;
	case 'M':
		f->mon = v;
		break;
	case 'd':
		f->mday = v;
		break;
	case 'H':
		f->hour = v;
		break;
	case 'k':
		f->hour = v == 24 ? 0 : v;
		break;
	case 'K':
	case 'h':
		f->h12 = true;
		f->hour12 = c == 'h' && v == 12 ? 0 : v;
		break;
	case 'm':
		f->min = v;
		break;
	case 's':
		f->sec = v;
		break;
	default:
		f->ms = v;
	}
	return 0;
}

/* The instant the lenient calendar makes of f, in *ms; -1 when it lies
 * past what 64 bits of ms hold (a hostile "99999999-99-99"). */
static int instant(const struct fields *f, int64_t *ms)
{
	int64_t mons, y, day, hour = f->h12 ? f->hour12 + (f->pm ? 12 : 0) : f->hour, t;

	if (__builtin_mul_overflow(f->year, 12, &mons) ||
	    __builtin_add_overflow(mons, f->mon - 1, &mons))
		return -1;
	y = floordiv(mons, 12);
	if (y > 300000000 || y < -300000000)
		return -1;
	day = txdate_days(y, (int)(mons - y * 12 + 1), 1);
	if (__builtin_add_overflow(day, f->mday - 1, &t) || __builtin_mul_overflow(t, 24, &t) ||
	    __builtin_add_overflow(t, hour, &t) || __builtin_mul_overflow(t, 60, &t) ||
	    __builtin_add_overflow(t, f->min, &t) || __builtin_mul_overflow(t, 60, &t) ||
	    __builtin_add_overflow(t, f->sec, &t) ||
	    __builtin_sub_overflow(t, f->zoned ? f->off : 0, &t) ||
	    __builtin_mul_overflow(t, 1000, &t) || __builtin_add_overflow(t, f->ms, &t))
		return -1;
	*ms = t;
	return 0;
}

int txdate_parse(const char *pattern, const char *text, int64_t *ms)
{
	struct fields f = {.year = 1970, .mon = 1, .mday = 1};
	size_t at = 0;
	bool ok = true;

	for (const char *s = pattern; *s != '\0' && ok;) {
		size_t n = 1;

		if (*s == '\'' && s[1] == '\'') {
			ok = text[at] == '\'';
			at++;
			s += 2;
			continue;
		}
		if (*s == '\'') {
			s = literal(s + 1, NULL, text, &at, &ok);
			continue;
		}
		if (strchr(letters, *s) == NULL) {
			ok = text[at] == *s;
			at += ok;
			s++;
			continue;
		}
		while (s[n] == *s)
			n++;
		/* Java counts digits only when a field follows at once. */
		ok = parse_field(text, &at, *s, n, s[n] != '\0' && strchr(letters, s[n]) != NULL,
		                 &f) == 0;
		s += n;
	}
	if (!ok || at == 0)
		return -1;
	return instant(&f, ms);
}
