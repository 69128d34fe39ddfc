/* txdate: the part of java.text.SimpleDateFormat that Connect's
 * TimestampRouter, TimestampConverter and Cast use, on ms since the epoch:
 * formatting, and parsing as a lenient SimpleDateFormat parses (fields out
 * of range roll over; text after the pattern is ignored).
 *
 * Letters: y M (numbers; MMM and longer English month names) d H k K h m s
 * S a E (English day names) Z X; 'quoted' text; anything not a letter as it
 * is. Other letters (G Y w W D F u z L) are refused by name when the pattern
 * is checked. The proleptic Gregorian calendar is used throughout: Java's
 * Julian dates before 1582-10-15 differ. Pure functions; main loop (the
 * local time zone is read for a pattern not in UTC). */
#ifndef SKIFF_TXDATE_H
#define SKIFF_TXDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/* Checks pattern. Returns 0, or -1 with "'z' (time zone name)" style text
 * naming the letter skiff does not do, or an unterminated quote, in why. */
int txdate_check(const char *pattern, char *why, size_t whylen);

/* Appends SimpleDateFormat(pattern).format(new Date(ms)) to o, in UTC when
 * utc, else in the local time zone (a JVM's default). pattern has passed
 * txdate_check. */
void txdate_format(const char *pattern, int64_t ms, bool utc, struct buf *o);

/* SimpleDateFormat(pattern) with time zone UTC, .parse(text): 0 and *ms,
 * or -1 when the text does not match (ParseException). pattern has passed
 * txdate_check. */
int txdate_parse(const char *pattern, const char *text, int64_t *ms);

/* Days since 1970-01-01 of y-m-d, m 1..12 (proleptic Gregorian). */
int64_t txdate_days(int64_t y, int m, int d);

#endif
