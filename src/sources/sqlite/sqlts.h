/* sqlts: timestamps as SQLite databases hold them: parsing, the skiff_ts() SQL function, Java's
 * Timestamp split (sqlts.c). Main loop only. */
#ifndef SKIFF_SQLTS_H
#define SKIFF_SQLTS_H

#include <stdint.h>
#include <stddef.h>

#include "sources/sqlite/sqlitelib.h"

/* Nanoseconds since 1970-01-01T00:00:00Z; int64 covers 1677-09-21 to
 * 2262-04-11. */
#define SQLTS_NONE INT64_MIN
/* What skiff_ts() returns for a value it cannot read: after every instant
 * (no conversion yields it), so the rows before it are read first. */
#define SQLTS_BAD INT64_MAX
#define SQLTS_BAD_SQL "9223372036854775807"

/* Parses an ISO-8601 text timestamp:
 *   YYYY-MM-DD
 *   YYYY-MM-DD[T ]HH:MM[:SS[.fraction]][zone]
 * zone: Z | z | [+-]HH | [+-]HHMM | [+-]HH:MM, optionally after spaces;
 * no zone means UTC. Up to 9 fraction digits count, more are ignored.
 * Surrounding spaces are allowed. Returns 0 and *ns, or -1 with why (a
 * static string). */
int sqlts_parse_text(const char *s, size_t len, int64_t *ns, const char **why);

/* Converts a number to ns. A Julian day (2299160.5 to 2816787.5, what
 * julianday() returns) is one; an integer YYYYMMDDhhmmss or YYYYMMDD (from
 * 19000101) is that UTC time; else an epoch number whose unit follows the
 * magnitude: |v| < 1e11 seconds, < 1e14 milliseconds, < 1e17 microseconds,
 * else nanoseconds. Returns 0, or -1 when out of range. */
int sqlts_from_int(int64_t v, int64_t *ns);
int sqlts_from_real(double v, int64_t *ns);

/* Converts one SQLite value (INTEGER, REAL or TEXT; not NULL) to ns.
 * Returns 0, or -1 with a message in errbuf naming the value. */
int sqlts_from_value(sqlite3_value *v, int64_t *ns, char *errbuf, size_t errlen);

/* What skiff_ts() counts as it converts: the values after `after` (the
 * timestamp modes' query computes it once for every row of the table, so
 * n is then the rows in the future). Reset by the caller. */
struct sqlts_clock {
	int64_t after;
	uint64_t n;
};

/* Registers skiff_ts(x) on db: x as ns since the epoch, NULL for NULL,
 * SQLTS_BAD for anything else; counting into clk (NULL: not). clk lives
 * as long as db. Returns an SQLite result code. */
int sqlts_register(sqlite3 *db, struct sqlts_clock *clk);

/* Java's Timestamp split: getTime() (ms, floored) and getNanos(). */
int64_t sqlts_ms(int64_t ns);
int64_t sqlts_nanos(int64_t ns);
/* The reverse: ms + nanos-of-second to ns; -1 when out of range. */
int sqlts_join(int64_t ms, int64_t nanos, int64_t *ns);

/* Renders ns as "YYYY-MM-DDTHH:MM:SS.fffffffffZ" into buf (>= 40 bytes). */
void sqlts_format(int64_t ns, char *buf, size_t len);

#endif
