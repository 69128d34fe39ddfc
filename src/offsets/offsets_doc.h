/* offsets_doc: KIP-875's offsets document, {"offsets":[{"partition":{...},
 * "offset":{...}},...]}, over the offset store: what the REST API's
 * /connectors/NAME/offsets serves and takes, and what `skiff offsets` prints
 * and reads. Offsets travel as text, never through cJSON's doubles, so that
 * integers above 2^53 (rowids, inode numbers) stay exact. Leaf module. */
#ifndef SKIFF_OFFSETS_DOC_H
#define SKIFF_OFFSETS_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct offsets;

enum {
	OFFSETS_DOC_OK = 0,
	OFFSETS_DOC_ERR_SHAPE = -1, /* not the document's shape */
	OFFSETS_DOC_ERR_NOMEM = -2,
	/* the shape, but not storable as meant: a NUL in a string, a
	 * partition named twice (errbuf says which) */
	OFFSETS_DOC_ERR_VALUE = -3,
};

/* One entry of a document read: the partition parsed, the offset as the text
 * sent (not NUL-terminated; NULL: null, a removal). */
struct offsets_doc_entry {
	const cJSON *partition; /* an object */
	const char *offset;
	size_t olen;
};

/* For a stored key ["name",{partition}]: true when it is connector name's,
 * with the partition's text in *part, *plen. */
bool offsets_doc_own_key(const char *key, const char *name, const char **part, size_t *plen);

/* ["name",partition] as the worker writes keys (malloc'd), or NULL; the
 * partition's members in name order, as every source writes them. */
char *offsets_doc_key(const char *name, const cJSON *partition);

/* The document of connector name's stored offsets, in *json (malloc'd).
 * Returns 0 or OFFSETS_DOC_ERR_NOMEM. */
int offsets_doc_print(const struct offsets *o, const char *name, char **json);

/* The entries of a document: j is text parsed; *out (malloc'd, n + 1 of
 * them) points into j and text. A NUL in a string, a partition named twice
 * (whatever its members' order) and an object with a member named twice are
 * refused (OFFSETS_DOC_ERR_VALUE). Returns 0, OFFSETS_DOC_ERR_SHAPE,
 * OFFSETS_DOC_ERR_VALUE with errbuf, or OFFSETS_DOC_ERR_NOMEM. */
int offsets_doc_entries(const char *text, size_t len, const cJSON *j,
                        struct offsets_doc_entry **out, size_t *n, char *errbuf, size_t errlen);

/* What the document must look like, for an error message. */
extern const char offsets_doc_shape[];

#endif
