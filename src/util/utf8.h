/* utf8: UTF-8 as Java reads it. One decoder for every place skiff must turn
 * bytes into what a Java String would hold (a file line, a SQLite TEXT value,
 * a .properties file), so they cannot drift apart. Pure functions, any
 * thread. */
#ifndef SKIFF_UTF8_H
#define SKIFF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The UTF-8 bytes of U+FFFD, what Java's decoder puts for a malformed
 * sequence. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Java's UTF-8 decoder (sun.nio.cs.UTF_8, JDK 17 to 25) at s, which holds
 * avail > 0 bytes (the rest of the value). Returns the length of the
 * well-formed sequence there (1..4: no overlong form, no encoded surrogate,
 * nothing above U+10FFFF), or 0 when it is malformed, and then *skip is the
 * number of bytes one U+FFFD replaces: Unicode's "maximal subpart", except
 * that Java takes ED A0..BF as a prefix and replaces ED A0 80 as a whole. An
 * incomplete sequence at the end of s is one U+FFFD, as at the end of Java's
 * input. */
size_t utf8_seq(const unsigned char *s, size_t avail, size_t *skip);

/* The number of bytes below 0x80 (NUL included) at the start of s, which
 * holds len bytes; read eight at a time. */
size_t utf8_ascii_run(const char *s, size_t len);

/* The length of the longest well-formed UTF-8 prefix of the len bytes of s
 * (NUL bytes allowed): len when all of it is. */
size_t utf8_valid_prefix(const char *s, size_t len);

/* Where to cut s, which holds len bytes, into a first piece of at most max
 * (> 0) bytes without splitting a character: len when len <= max; else max,
 * backed off to the first byte of the character that starts before s + max
 * and goes on past it, when s[lead..max] (the byte at the cut included) is
 * a well-formed prefix of a sequence longer than max - lead. Never backs off
 * over bytes that are no such prefix (invalid UTF-8 is cut at max, as
 * before), nor to 0; looks at s[max - 3..max] only, so the cut is the same
 * whatever follows s[max]. */
size_t utf8_cut(const char *s, size_t len, size_t max);

/* True when len bytes of s are well-formed UTF-8 (NUL bytes allowed). */
bool utf8_valid(const char *s, size_t len);

#endif
