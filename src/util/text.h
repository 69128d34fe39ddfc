/* text: small byte-string helpers shared by sources and converters: is it
 * text (UTF-8 by utf8.h's one decoder, without NUL), its base64. Pure
 * functions, any thread. */
#ifndef SKIFF_TEXT_H
#define SKIFF_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* True when len bytes of s are well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF) and hold no NUL byte: text that a C
 * string and a Java String both carry unchanged. */
bool text_is_utf8(const char *s, size_t len);

/* len bytes of s with each malformed UTF-8 sequence replaced by U+FFFD,
 * as Java's decoder replaces it (utf8.h): a malloc'd NUL-terminated string
 * of *outlen bytes (caller frees), or NULL when memory is short. */
char *text_utf8_replace(const char *s, size_t len, size_t *outlen);

/* Standard base64 with padding (RFC 4648), as Java's Base64 encoder and
 * Connect's JsonConverter write bytes. Returns a malloc'd NUL-terminated
 * string (caller frees), or NULL when memory is short. */
char *text_base64(const void *p, size_t len);

/* Decodes standard base64 as Java's Base64.getDecoder() does: the RFC 4648
 * alphabet only (no blank, no line break), padding optional but only at
 * the end. Writes at most cap bytes to out and their count to *n. Returns
 * 0, or -1 when s is not base64 or decodes to more than cap bytes. */
int text_unbase64(const char *s, size_t len, void *out, size_t cap, size_t *n);

#endif
