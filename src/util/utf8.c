/* utf8: Java's UTF-8 decoder, settled against the real one by
 * tests/convert/compare.sh (lines.hex). */
#include "util/utf8.h"

#include <stdint.h>
#include <string.h>

#define HIGH_BITS 0x8080808080808080ull

static bool cont(unsigned char b)
{
	return (b & 0xC0) == 0x80;
}

static size_t three(const unsigned char *s, size_t avail, size_t *skip)
{
	unsigned char b = s[0];

	if (avail > 1 && ((b == 0xE0 && (s[1] & 0xE0) == 0x80) || !cont(s[1])))
		return 0;
	if (avail < 3 || !cont(s[2])) {
		*skip = avail < 3 ? avail : 2;
		return 0;
	}
	if (b == 0xED && s[1] >= 0xA0) { /* a surrogate */
		*skip = 3;
		return 0;
	}
	return 3;
}

static size_t four(const unsigned char *s, size_t avail, size_t *skip)
{
	unsigned char b = s[0];

	if (avail > 1 && ((b == 0xF0 && (s[1] < 0x90 || s[1] > 0xBF)) ||
	                  (b == 0xF4 && (s[1] & 0xF0) != 0x80) || !cont(s[1])))
		return 0;
	if (avail > 2 && !cont(s[2])) {
		*skip = 2;
		return 0;
	}
	if (avail < 4 || !cont(s[3])) {
		*skip = avail < 4 ? avail : 3;
		return 0;
	}
	return 4;
}

size_t utf8_seq(const unsigned char *s, size_t avail, size_t *skip)
{
	unsigned char b = s[0];

	*skip = 1;
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF)
		return avail >= 2 && cont(s[1]) ? 2 : 0;
	if (b >= 0xE0 && b <= 0xEF)
		return three(s, avail, skip);
	if (b >= 0xF0 && b <= 0xF4)
		return four(s, avail, skip);
	return 0;
}

size_t utf8_ascii_run(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	uint64_t w;

	/* Eight bytes a word while no byte has its high bit: most text is ASCII. */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, u + i, 8);
		if (w & HIGH_BITS)
			break;
	}
	while (i < len && u[i] < 0x80)
		i++;
	return i;
}

size_t utf8_valid_prefix(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n, skip;

	while (i < len) {
		i += utf8_ascii_run(s + i, len - i);
		if (i == len)
			break;
		n = utf8_seq(u + i, len - i, &skip);
		if (n == 0)
			break;
		i += n;
	}
	return i;
}

bool utf8_valid(const char *s, size_t len)
{
	return utf8_valid_prefix(s, len) == len;
}

/* The length of the sequence a lead byte starts, 0 for a byte that starts
 * none (a continuation byte, C0, C1, F5..FF). */
static size_t seq_len(unsigned char b)
{
	if (b >= 0xC2 && b <= 0xDF)
		return 2;
	if (b >= 0xE0 && b <= 0xEF)
		return 3;
	if (b >= 0xF0 && b <= 0xF4)
		return 4;
	return 0;
}

/* True when b may follow lead as its second byte: no overlong form, no
 * surrogate, nothing above U+10FFFF (Unicode's table 3-7). */
static bool second_ok(unsigned char lead, unsigned char b)
{
	if (lead == 0xE0)
		return b >= 0xA0 && b <= 0xBF;
	if (lead == 0xED)
		return b >= 0x80 && b <= 0x9F;
	if (lead == 0xF0)
		return b >= 0x90 && b <= 0xBF;
	if (lead == 0xF4)
		return b >= 0x80 && b <= 0x8F;
	return cont(b);
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t lead = max, k;

	if (len <= max)
		return len;
	/* The last byte before the cut that is no continuation byte, within
	 * the 3 a character can have before it. */
	for (k = 1; k <= 3 && k <= max; k++) {
		if (!cont(u[max - k])) {
			lead = max - k;
			break;
		}
	}
	if (lead == max || lead == 0 || seq_len(u[lead]) <= max - lead)
		return max;
	if (!second_ok(u[lead], u[lead + 1]))
		return max;
	for (k = lead + 2; k <= max; k++)
		if (!cont(u[k]))
			return max;
	return lead;
}
