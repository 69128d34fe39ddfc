/* jsonspan: where a value lies in JSON text, without parsing it. cJSON keeps
 * numbers as double and would round integers above 2^53 (an inode, a file
 * fingerprint, a rowid); a KIP-875 PATCH therefore takes each offset's text
 * span as sent (offsets_put canonicalises whitespace and keeps tokens byte
 * for byte). The text is expected to be valid JSON (checked first, e.g. by
 * cJSON); on anything else these return "not found", never read past len.
 * Leaf module. */
#ifndef SKIFF_JSONSPAN_H
#define SKIFF_JSONSPAN_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the JSON value at the start of s (no leading whitespace):
 * a string with its quotes, an object or array to its closing bracket, a
 * literal or number to its last character. 0 when it does not end within
 * len. */
size_t jsonspan_value(const char *s, size_t len);

/* Steps through the members of the object s (len bytes, from its '{'):
 * *cursor starts at 0. Returns true with the member's key (raw text between
 * its quotes, escapes as written) and its value's span, false at the end or
 * on malformed text. */
bool jsonspan_member_next(const char *s, size_t len, size_t *cursor, const char **key, size_t *klen,
                          const char **val, size_t *vlen);

/* The value of the first member of the object s whose raw key equals key:
 * true and its span, or false. */
bool jsonspan_member(const char *s, size_t len, const char *key, const char **val, size_t *vlen);

/* Steps through the elements of the array s (from its '['), as
 * jsonspan_member_next. */
bool jsonspan_array_next(const char *s, size_t len, size_t *cursor, const char **val, size_t *vlen);

#endif
