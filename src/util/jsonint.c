#include "util/jsonint.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Skips a JSON string starting at its opening quote; returns the byte after
 * the closing quote, or NULL when unterminated. */
static const char *skip_string(const char *p)
{
	for (p++; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static int parse_int(const char *p, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(p, &end, 10);
	if (errno != 0 || end == p || *end == '.' || *end == 'e' || *end == 'E')
		return -1;
	*out = (int64_t)v;
	return 0;
}

int jsonint_get(const char *json, const char *key, int64_t *out)
{
	size_t klen = strlen(key);
	const char *p = json ? skip_ws(json) : NULL;
	int depth = 0;

	if (p == NULL || *p != '{')
		return -1;
	for (; *p != '\0'; p++) {
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		} else if (*p == '"') {
			const char *start = p + 1, *after = skip_string(p);

			if (after == NULL)
				return -1;
			if (depth == 1 && (size_t)(after - 1 - start) == klen &&
			    strncmp(start, key, klen) == 0 && *skip_ws(after) == ':')
				return parse_int(skip_ws(skip_ws(after) + 1), out);
			p = after - 1;
		}
	}
	return -1;
}
