/* jsonint: exact 64-bit integers out of JSON text. cJSON keeps numbers as
 * double, which rounds integers above 2^53 (a SQLite rowid, an inode); offset
 * values are therefore read with this scanner, not through cJSON. */
#ifndef SKIFF_JSONINT_H
#define SKIFF_JSONINT_H

#include <stdint.h>

/* Finds member key of the top-level JSON object in json and parses its value
 * as a base-10 integer (no fraction, no exponent). Returns 0 and *out, or -1
 * when json is not an object, the member is absent, or not such an integer. */
int jsonint_get(const char *json, const char *key, int64_t *out);

#endif
