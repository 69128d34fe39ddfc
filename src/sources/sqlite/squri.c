/* squri: the file behind an SQLite URI (jdbc:sqlite:file:...),
 * so that a URI is watched for deletion and replacement like a plain path.
 *
 * SQLite's rules (https://sqlite.org/uri.html): "file:" then an optional
 * "//authority" (empty or "localhost"), the path up to '?' or '#', %XX
 * escapes decoded. An in-memory database has no file and is refused, and so
 * is a vfs= parameter: skiff opens every database through its read-only VFS
 * (sqvfs.c), which a vfs= would replace. */
#include "util/num.h"
#include "sources/sqlite/squri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes n bytes of p with %XX escapes into out (n + 1 bytes). Returns
 * false when an escape is malformed or NUL. */
static bool unescape(const char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (p[i] != '%') {
			*out++ = p[i];
			continue;
		}
		if (i + 2 >= n || (hi = num_hex_digit(p[i + 1])) < 0 ||
		    (lo = num_hex_digit(p[i + 2])) < 0 || (hi | lo) == 0)
			return false;
		*out++ = (char)(hi * 16 + lo);
		i += 2;
	}
	*out = '\0';
	return true;
}

/* Whether the query q ("?k=v&k=v#...") names parameter key (decoded as
 * SQLite decodes it). */
static bool has_param(const char *q, const char *key)
{
	const char *end = q + strcspn(q, "#");

	for (const char *p = q + 1; p < end;) {
		size_t n = strcspn(p, "=&#");
		char name[64];

		if (n < sizeof(name) && unescape(p, n, name) && strcmp(name, key) == 0)
			return true;
		p += strcspn(p, "&#");
		if (*p == '&')
			p++;
		else
			break;
	}
	return false;
}

char *squri_file(const char *uri, char *errbuf, size_t errlen)
{
	const char *p = uri + 5, *q = strpbrk(uri, "?#");
	size_t n;
	char *file;

	if (strncmp(p, "//", 2) == 0) {
		const char *slash = strchr(p + 2, '/');
		size_t alen = slash ? (size_t)(slash - p - 2) : 0;

		if (slash == NULL ||
		    (alen != 0 && !(alen == 9 && strncmp(p + 2, "localhost", 9) == 0))) {
			snprintf(errbuf, errlen,
			         "connection.url: %s: the authority must be empty or "
			         "localhost (file:///path or file:/path)",
			         uri);
			return NULL;
		}
		p = slash;
	}
	n = q != NULL && q >= p ? (size_t)(q - p) : strlen(p);
	if (n == 0 || (n == 8 && strncmp(p, ":memory:", 8) == 0) ||
	    (q != NULL && strstr(q, "mode=memory") != NULL)) {
		snprintf(errbuf, errlen, "connection.url: %s: name a database file", uri);
		return NULL;
	}
	if (q != NULL && *q == '?' && has_param(q, "vfs")) {
		snprintf(errbuf, errlen,
		         "connection.url: %s: vfs= is not allowed: skiff reads every database "
		         "through its own read-only VFS",
		         uri);
		return NULL;
	}
	if ((file = malloc(n + 1)) == NULL) {
		snprintf(errbuf, errlen, "sqlite source: out of memory");
		return NULL;
	}
	if (!unescape(p, n, file)) {
		snprintf(errbuf, errlen, "connection.url: %s: a %%XX escape is malformed", uri);
		free(file);
		return NULL;
	}
	return file;
}
