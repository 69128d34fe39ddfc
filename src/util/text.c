/* text: see text.h. */
#include "util/text.h"
#include "util/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool text_is_utf8(const char *s, size_t len)
{
	/* The one validator is utf8.c's (Java's decoder); this adds no NUL. */
	return memchr(s, '\0', len) == NULL && utf8_valid(s, len);
}

char *text_utf8_replace(const char *s, size_t len, size_t *outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out, *o;
	size_t n, skip;

	/* A malformed byte becomes at most three. */
	if (len > (SIZE_MAX - 1) / 3 || (out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	o = out;
	for (size_t i = 0; i < len; i += n) {
		n = u[i] < 0x80 ? 1 : utf8_seq(u + i, len - i, &skip);
		if (n == 0) {
			memcpy(o, UTF8_REPLACEMENT, 3);
			o += 3;
			n = skip;
		} else {
			memcpy(o, s + i, n);
			o += n;
		}
	}
	*o = '\0';
	*outlen = (size_t)(o - out);
	return out;
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

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int text_unbase64(const char *s, size_t len, void *out, size_t cap, size_t *n)
{
	unsigned char *o = out;
	uint32_t acc = 0;
	size_t bits = 0, pad = 0;

	*n = 0;
	while (len > 0 && s[len - 1] == '=' && pad < 2) {
		len--;
		pad++;
	}
	/* Java: "=" only ends the data, and a lone trailing symbol is an error. */
	if (len % 4 == 1 || (pad > 0 && (len + pad) % 4 != 0))
		return -1;
	for (size_t i = 0; i < len; i++) {
		int v = b64_value((unsigned char)s[i]);

		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (*n == cap)
				return -1;
			o[(*n)++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return 0;
}
