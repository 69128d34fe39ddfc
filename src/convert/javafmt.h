/* javafmt: numbers and dates in the text Java gives them, as Connect's
 * converters write them (JsonConverter's doubles, Struct.toString()). Pure
 * functions; javafmt_date reads the local time zone (main loop only). */
#ifndef SKIFF_JAVAFMT_H
#define SKIFF_JAVAFMT_H

#include <stdbool.h>
#include <stddef.h>

#define JAVAFMT_NUMBER_MAX 64
#define JAVAFMT_DATE_MAX 128
#define JAVAFMT_LONG_MAX 20

/* Double.toString(d), or Float.toString((float)d) when is_float (Java 19+
 * digits): "100.0", "0.001", "1.0E7", "9.9E-4", "NaN", "-Infinity". Writes a
 * NUL-terminated string into out (JAVAFMT_NUMBER_MAX bytes suffice) and
 * returns its length. */
size_t javafmt_number(double d, bool is_float, char *out, size_t outlen);

/* java.util.Date.toString() of ms since the epoch in the local time zone
 * ("Thu Jan 01 00:00:00 UTC 1970"), into out (JAVAFMT_DATE_MAX bytes
 * suffice); returns its length. */
size_t javafmt_date(long long ms, char *out, size_t outlen);

/* Long.toString(i) (as "%lld" writes it, without snprintf's cost: SQLite rows
 * are many integers) into out, JAVAFMT_LONG_MAX bytes, not NUL-terminated;
 * returns its length. */
size_t javafmt_long(long long i, char out[JAVAFMT_LONG_MAX]);

#endif
