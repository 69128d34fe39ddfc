/* jsonspan: value spans in JSON text (jsonspan.h). */
#include "util/jsonspan.h"

#include <string.h>

static bool space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_space(const char *s, size_t len, size_t i)
{
	while (i < len && space(s[i]))
		i++;
	return i;
}

/* The length of the string token at s (s[0] == '"'), or 0. */
static size_t string_len(const char *s, size_t len)
{
	for (size_t i = 1; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

size_t jsonspan_value(const char *s, size_t len)
{
	size_t depth = 0, i = 0, n;

	if (len == 0)
		return 0;
	if (s[0] == '"')
		return string_len(s, len);
	if (s[0] != '{' && s[0] != '[') {
		/* A number or a literal: up to a delimiter. */
		while (i < len && !space(s[i]) && strchr(",}]:\"", s[i]) == NULL && s[i] != '\0')
			i++;
		return i;
	}
	for (; i < len; i++) {
		if (s[i] == '"') {
			if ((n = string_len(s + i, len - i)) == 0)
				return 0;
			i += n - 1;
		} else if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if ((s[i] == '}' || s[i] == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* The next value of the container s after *cursor (0: the first), with its
 * key when keyed. */
static bool next(const char *s, size_t len, size_t *cursor, bool keyed, const char **key,
                 size_t *klen, const char **val, size_t *vlen)
{
	size_t i = *cursor, n;

	if (i == 0) {
		if (len == 0 || s[0] != (keyed ? '{' : '['))
			return false;
		i = 1;
	} else {
		i = skip_space(s, len, i);
		if (i >= len || s[i] != ',')
			return false;
		i++;
	}
	i = skip_space(s, len, i);
	if (keyed) {
		if (i >= len || s[i] != '"' || (n = string_len(s + i, len - i)) == 0)
			return false;
		*key = s + i + 1;
		*klen = n - 2;
		i = skip_space(s, len, i + n);
		if (i >= len || s[i] != ':')
			return false;
		i = skip_space(s, len, i + 1);
	}
	if (i >= len || (n = jsonspan_value(s + i, len - i)) == 0)
		return false;
	*val = s + i;
	*vlen = n;
	*cursor = i + n;
	return true;
}

bool jsonspan_member_next(const char *s, size_t len, size_t *cursor, const char **key, size_t *klen,
                          const char **val, size_t *vlen)
{
	return next(s, len, cursor, true, key, klen, val, vlen);
}

bool jsonspan_member(const char *s, size_t len, const char *key, const char **val, size_t *vlen)
{
	size_t cur = 0, klen, want = strlen(key);
	const char *k;

	while (jsonspan_member_next(s, len, &cur, &k, &klen, val, vlen))
		if (klen == want && memcmp(k, key, want) == 0)
			return true;
	return false;
}

bool jsonspan_array_next(const char *s, size_t len, size_t *cursor, const char **val, size_t *vlen)
{
	return next(s, len, cursor, false, NULL, NULL, val, vlen);
}
