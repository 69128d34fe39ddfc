/* propsdump: prints .properties files as src/config/props.c loads them, in the
 * format of tests/props/PropsDump.java, for tests/props/compare.sh.
 *
 * Usage: propsdump FILE...
 *
 * For each file: "== FILE", then "KEY=VALUE" per entry sorted by the escaped
 * key, or "ERROR" (the reason on stderr). Escaping: each UTF-16 unit outside
 * printable ASCII, and '\' and '=', as backslash-u and four upper-case hex
 * digits. Since the escaped strings are ASCII, strcmp sorts them as Java's
 * String.compareTo does. Exit status 1 when any file failed. */
#include "config/props.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct line {
	char *key;
	char *value;
};

static char *put_unit(char *o, unsigned u)
{
	static const char hex[] = "0123456789ABCDEF";

	*o++ = '\\';
	*o++ = 'u';
	*o++ = hex[u >> 12 & 0xF];
	*o++ = hex[u >> 8 & 0xF];
	*o++ = hex[u >> 4 & 0xF];
	*o++ = hex[u & 0xF];
	return o;
}

/* Decodes the code point at *s (props.c hands out valid UTF-8 only). */
static uint32_t next_cp(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t cp;
	int n, i;

	if (p[0] < 0x80)
		n = 0, cp = p[0];
	else if (p[0] < 0xE0)
		n = 1, cp = p[0] & 0x1F;
	else if (p[0] < 0xF0)
		n = 2, cp = p[0] & 0x0F;
	else
		n = 3, cp = p[0] & 0x07;
	for (i = 1; i <= n; i++)
		cp = cp << 6 | (p[i] & 0x3F);
	*s = p + n + 1;
	return cp;
}

/* Returns a new escaped copy of s (a byte grows to at most 6 characters). */
static char *escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *res = malloc(strlen(s) * 6 + 1), *o = res;

	if (res == NULL)
		return NULL;
	while (*p) {
		uint32_t cp = next_cp(&p);

		if (cp >= 0x20 && cp <= 0x7E && cp != '\\' && cp != '=') {
			*o++ = (char)cp;
		} else if (cp < 0x10000) {
			o = put_unit(o, cp);
		} else {
			o = put_unit(o, 0xD800 + ((cp - 0x10000) >> 10));
			o = put_unit(o, 0xDC00 + ((cp - 0x10000) & 0x3FF));
		}
	}
	*o = '\0';
	return res;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->key, ((const struct line *)b)->key);
}

static int dump(const struct props *p)
{
	size_t n = props_count(p), i;
	struct line *lines = calloc(n + 1, sizeof(*lines));
	int rc = -1;

	if (lines == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		lines[i].key = escape(props_key(p, i));
		lines[i].value = escape(props_value(p, i));
		if (lines[i].key == NULL || lines[i].value == NULL)
			goto out;
	}
	qsort(lines, n, sizeof(*lines), by_key);
	for (i = 0; i < n; i++)
		printf("%s=%s\n", lines[i].key, lines[i].value);
	rc = 0;
out:
	for (i = 0; i < n; i++) {
		free(lines[i].key);
		free(lines[i].value);
	}
	free(lines);
	return rc;
}

int main(int argc, char **argv)
{
	char err[512];
	int i, status = 0;

	for (i = 1; i < argc; i++) {
		struct props *p = NULL;

		printf("== %s\n", argv[i]);
		if (props_load_file(argv[i], &p, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			printf("ERROR\n");
			status = 1;
			continue;
		}
		if (dump(p) != 0) {
			fprintf(stderr, "%s: out of memory\n", argv[i]);
			status = 2;
		}
		props_destroy(p);
	}
	return status;
}
