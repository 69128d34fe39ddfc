/* javafmt: numbers and dates as Java prints them, for Connect's converters. */
#include "convert/javafmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Copies s into out (truncated to outlen - 1); returns the bytes copied. */
static size_t copy_out(char *out, size_t outlen, const char *s)
{
	size_t n = strlen(s);

	if (outlen == 0)
		return 0;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

static bool reads_back(const char *s, double d, bool is_float)
{
	return is_float ? strtof(s, NULL) == (float)d : strtod(s, NULL) == d;
}

/* The digits of d > 0 when d is a decimal of at most 15 digits with at most
 * six after the point (sensor readings mostly are), without printf or
 * strtod: the fast path of the SQLite source's REAL values. N / 10^k
 * correctly rounded equals d exactly when that decimal reads back as d, and
 * a decimal of at most 15 digits that does is the shortest (two doubles are
 * further apart than 15-digit decimals are). Returns the number of digits
 * (no trailing zero) with *exp, or 0 when d is not such a decimal. */
static int short_decimal(double d, char dig[24], int *exp)
{
	static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
	char tmp[24];
	int k, len = 0, n = 0;
	int64_t v;

	if (!(d >= 1e-6 && d < 1e15))
		return 0;
	for (k = 0; k <= 6; k++) {
		double m = d * p10[k];

		if (m >= 1e15)
			return 0;
		if (m == floor(m) && (double)(int64_t)m / p10[k] == d)
			break;
	}
	if (k > 6)
		return 0;
	for (v = (int64_t)(d * p10[k]); v > 0; v /= 10)
		tmp[len++] = (char)('0' + v % 10);
	*exp = len - 1 - k;
	while (len > 0)
		dig[n++] = tmp[--len];
	while (n > 1 && dig[n - 1] == '0')
		n--;
	return n;
}

/* The decimal digits Java 19+ prints for d > 0 (Double.toString,
 * Float.toString): the shortest that read back as d, the closest to d among
 * them, and two digits when one would do but two are closer (4.9E-324).
 * Fills dig (no dot, no trailing zero) and *exp, the power of ten of the
 * first digit; returns the number of digits. */
static int java_digits(double d, bool is_float, char dig[24], int *exp)
{
	char buf[40], two[40];
	int p, max = is_float ? 9 : 17, n = 0;
	const char *s;

	if (!is_float && (n = short_decimal(d, dig, exp)) > 0)
		return n;
	/* 15 significant digits identify a decimal of at most 15 digits
	 * exactly, so when they read back, dropping their trailing zeros gives
	 * the shortest: a normal double needs no shorter try. Subnormals have
	 * fewer bits, and floats fewer digits: search from one. */
	p = !is_float && d >= DBL_MIN ? 15 : 1;
	for (; p < max; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
		if (reads_back(buf, d, is_float))
			break;
	}
	if (p == max)
		snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
	if (p == 1) {
		snprintf(two, sizeof(two), "%.1e", d);
		if (reads_back(two, d, is_float))
			memcpy(buf, two, sizeof(buf));
	}
	for (s = buf; *s != 'e' && *s != '\0'; s++) {
		if (*s != '.')
			dig[n++] = *s;
	}
	while (n > 1 && dig[n - 1] == '0')
		n--;
	*exp = *s == 'e' ? (int)strtol(s + 1, NULL, 10) : 0;
	return n;
}

/* Double.toString(d), or Float.toString((float)d) when is_float: plain from
 * 10^-3 up to 10^7 ("100.0", "0.001"), otherwise "1.0E7", "9.9E-4". */
size_t javafmt_number(double d, bool is_float, char *out, size_t outlen)
{
	char dig[24], buf[64];
	int n, e, i, k = 0;

	if (isnan(d) || isinf(d))
		return copy_out(out, outlen, isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity");
	if (d == 0)
		return copy_out(out, outlen, signbit(d) ? "-0.0" : "0.0");
	if (d < 0)
		buf[k++] = '-';
	n = java_digits(fabs(d), is_float, dig, &e);
	if (e >= 0 && e < 7) {
		for (i = 0; i <= e; i++)
			buf[k++] = i < n ? dig[i] : '0';
		buf[k++] = '.';
		for (i = e + 1; i < n || i == e + 1; i++)
			buf[k++] = i < n ? dig[i] : '0';
	} else if (e < 0 && e >= -3) {
		buf[k++] = '0';
		buf[k++] = '.';
		for (i = -1; i > e; i--)
			buf[k++] = '0';
		for (i = 0; i < n; i++)
			buf[k++] = dig[i];
	} else {
		buf[k++] = dig[0];
		buf[k++] = '.';
		for (i = 1; i < n || i == 1; i++)
			buf[k++] = i < n ? dig[i] : '0';
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, "E%d", e);
	}
	buf[k] = '\0';
	return copy_out(out, outlen, buf);
}

/* The zone's present name for standard (isdst 0) or daylight time (1), as
 * Java names a zone whatever the date; the historical name when the zone
 * has no such time now. */
static const char *zone_name(const struct tm *tm)
{
	time_t now = time(NULL);
	struct tm cur;

	for (int half = 0; half < 2; half++) {
		time_t t = now + (time_t)half * 182 * 86400;

		if (localtime_r(&t, &cur) != NULL && (cur.tm_isdst > 0) == (tm->tm_isdst > 0))
			return cur.tm_zone;
	}
	return tm->tm_zone;
}

/* java.util.Date.toString() of ms since the epoch, in the local time zone
 * (the JVM's default zone is the system's): "Thu Jan 01 00:00:00 UTC 1970".
 * Called from the main loop only (tzset). */
size_t javafmt_date(long long ms, char *out, size_t outlen)
{
	time_t t = (time_t)(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
	struct tm tm;
	char day[40], year[24], all[JAVAFMT_DATE_MAX];

	tzset();
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(day, sizeof(day), "%a %b %d %H:%M:%S ", &tm) == 0 ||
	    strftime(year, sizeof(year), " %Y", &tm) == 0) {
		snprintf(all, sizeof(all), "%lld", ms);
		return copy_out(out, outlen, all);
	}
	snprintf(all, sizeof(all), "%s%s%s", day, zone_name(&tm), year);
	return copy_out(out, outlen, all);
}

size_t javafmt_long(long long i, char out[JAVAFMT_LONG_MAX])
{
	char d[JAVAFMT_LONG_MAX], *p = d + sizeof(d);
	unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (i < 0)
		*--p = '-';
	memcpy(out, p, (size_t)(d + sizeof(d) - p));
	return (size_t)(d + sizeof(d) - p);
}
