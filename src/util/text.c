/* text: see text.h. */
#include "text.h"

#include <stdint.h>
#include <stdlib.h>

static bool cont(unsigned char b)
{
	return (b & 0xC0) == 0x80;
}

/* Length of the well-formed sequence at s (avail bytes left), or 0. */
static size_t seq_len(const unsigned char *s, size_t avail)
{
	unsigned char b = s[0];

	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF)
		return avail >= 2 && cont(s[1]) ? 2 : 0;
	if (b >= 0xE0 && b <= 0xEF) {
		if (avail < 3 || !cont(s[1]) || !cont(s[2]))
			return 0;
		if ((b == 0xE0 && s[1] < 0xA0) || (b == 0xED && s[1] >= 0xA0))
			return 0; /* overlong, or a surrogate */
		return 3;
	}
	if (b >= 0xF0 && b <= 0xF4) {
		if (avail < 4 || !cont(s[1]) || !cont(s[2]) || !cont(s[3]))
			return 0;
		if ((b == 0xF0 && s[1] < 0x90) || (b == 0xF4 && s[1] >= 0x90))
			return 0; /* overlong, or above U+10FFFF */
		return 4;
	}
	return 0;
}

bool text_is_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = u[i] == 0 ? 0 : seq_len(u + i, len - i);

		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

char *text_base64(const void *p, size_t len)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	char *out, *o;
	size_t i;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		*o++ = abc[v >> 18];
		*o++ = abc[(v >> 12) & 63];
		*o++ = abc[(v >> 6) & 63];
		*o++ = abc[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0);

		*o++ = abc[v >> 18];
		*o++ = abc[(v >> 12) & 63];
		*o++ = i + 1 < len ? abc[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}
