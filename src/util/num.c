#include "util/num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

int num_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end = NULL;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return -1;
	if (v < min || v > max)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int num_parse_bool(const char *s, bool *out)
{
	if (strcasecmp(s, "true") == 0) {
		*out = true;
		return 0;
	}
	if (strcasecmp(s, "false") == 0) {
		*out = false;
		return 0;
	}
	return -1;
}

int num_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
