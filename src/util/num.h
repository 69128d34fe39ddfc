/* num: checked number parsing. Whole string must be a number in range;
 * "12abc", "", " 5" and overflow are errors. */
#ifndef SKIFF_NUM_H
#define SKIFF_NUM_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a base-10 signed integer within [min, max]. Returns 0, or -1 with
 * *out untouched. */
int num_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parses "true"/"false" case-insensitively, as Java's Boolean does for
 * Connect's BOOLEAN type. Returns 0 or -1. */
int num_parse_bool(const char *s, bool *out);

/* The value of one hexadecimal digit (either case), or -1 for another
 * character. */
int num_hex_digit(char c);

#endif
