/* props: a reader for .properties files with the rules of java.util.Properties.load.
 *
 * Comments start with '#' or '!' as the first non-blank character of a natural
 * line; key and value are separated by '=', ':' or white space (with blanks
 * around the separator ignored); a line ending in an odd number of backslashes
 * continues on the next line (leading blanks of the continuation dropped);
 * escapes \t \n \r \f \uXXXX are decoded and any other "\c" is "c". A key that
 * appears twice keeps its last value (as Java's Hashtable does).
 *
 * Bytes are read as UTF-8 (Java's Properties.load(Reader) with UTF-8), not as
 * ISO-8859-1: non-ASCII bytes pass through, \uXXXX escapes (surrogate pairs
 * included) are encoded as UTF-8. Invalid UTF-8, a lone surrogate, a \u0000
 * (C strings cannot carry it) and a malformed \u escape are errors that name
 * the file and line. Files larger than PROPS_MAX_FILE_BYTES are refused.
 *
 * Leaf module: it never logs. */
#ifndef SKIFF_PROPS_H
#define SKIFF_PROPS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

#define PROPS_MAX_FILE_BYTES (1024 * 1024)

struct props;

/* Failures of props_load_file and props_load_mem (util/err.h). */
enum {
	PROPS_OK = 0,
	PROPS_ERR = -1,       /* unreadable or malformed: a person must act */
	PROPS_ERR_NOMEM = -2, /* out of memory: a restart may pass */
};

/* Reads and parses the file at path. On success returns 0 and *out owns a new
 * struct props (free with props_destroy). On failure returns PROPS_ERR or
 * PROPS_ERR_NOMEM, *out is NULL and errbuf holds "path:line: why" (or "path:
 * why" for I/O errors). */
int props_load_file(const char *path, struct props **out, char *errbuf, size_t errlen);

/* Parses len bytes of data; name is used in error messages and kept as
 * props_name(). Same contract as props_load_file. */
int props_load_mem(const char *name, const char *data, size_t len, struct props **out, char *errbuf,
                   size_t errlen);

/* An empty set named name (as props_name()), to fill with props_add: the
 * REST API's connector configurations, which come as JSON, not as a file.
 * Returns 0 and *out (props_destroy), or -1 (out of memory). */
int props_new(const char *name, struct props **out);

/* Sets key to value (both copied), as if read at line; a key present keeps
 * its place and takes the new value and line. Returns 0, or -1 (out of
 * memory) with p unchanged. */
int props_add(struct props *p, const char *key, const char *value, int line);

/* Number of distinct keys. */
size_t props_count(const struct props *p);

/* The i-th distinct key, its value and the line (1-based, the first natural
 * line of the logical line) of its winning (last) definition, in order of first
 * appearance. Strings are owned by p and live until props_destroy. */
const char *props_key(const struct props *p, size_t i);
const char *props_value(const struct props *p, size_t i);
int props_line(const struct props *p, size_t i);

/* Replaces the i-th value with a copy of value (a config provider resolved
 * it: src/config/provider.h); secret marks it as never to be shown. Returns 0, or
 * -1 (out of memory, or no such entry) with p unchanged. */
int props_set_value(struct props *p, size_t i, const char *value, bool secret);

/* True when the i-th value came from props_set_value(..., true). */
bool props_secret(const struct props *p, size_t i);

/* The value of key, or NULL when absent. Owned by p. */
const char *props_get(const struct props *p, const char *key);

/* The name given at load (the path for props_load_file). Owned by p. */
const char *props_name(const struct props *p);

/* Frees p and all its strings. Accepts NULL. */
void props_destroy(struct props *p);

#endif
