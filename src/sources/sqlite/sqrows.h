/* sqrows: a table's rows read and not yet handed out as records (sqrows.c). Main loop only. */
#ifndef SKIFF_SQROWS_H
#define SKIFF_SQROWS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "convert/convert.h"
#include "core/source.h"
#include "sources/sqlite/sqlitelib.h"
#include "util/buf.h"

struct source_batch;
struct sqsrc;
struct sqtable;

/* A row read and converted, waiting to be handed to the worker: a tree, or
 * (env->json_values, json_keys) text in its table's buffer. */
struct sqrow {
	cJSON *value, *key; /* owned until emitted; NULL when text */
	const cJSON *vschema, *kschema;
	const char *vjson, *kjson;   /* text: the schemas as the converter writes them */
	size_t vat, vlen, kat, klen; /* text: where in the table's text */
	/* v[0] the id, v[1] the timestamp, v[2] bulk: the pass's start; in
	 * timestamp mode 1 when v[3] holds the largest rowid the clock's check
	 * had looked at (the offset's "rowid_seen", sqclock.c). */
	struct src_offset off;
};

/* The most text a table's rows of one query hold: the batch stops adding
 * rows at a few MB, so this only bounds one huge row (key and value). */
#define SQ_TEXT_MAX ((size_t)2 * CONVERT_MAX_BYTES)

/* The rows of a table's last query (at most batch.max.rows), handed out over
 * as many polls as the worker's batches need; part of struct sqtable (rows).
 * Owns v and text (sqrows_free). */
struct sqrows {
	struct sqrow *v;
	size_t n, head, cap;
	struct buf text; /* the rows' payloads rendered as text, SQ_TEXT_MAX */
	bool more;       /* the last query stopped at its limit: more rows wait */
};

/* Appends the current row of st (t's columns first, as t->stmt has them) to
 * t's buffer, its offset zeroed. NULL when memory is short. */
struct sqrow *sqrows_add(struct sqsrc *s, struct sqtable *t, sqlite3_stmt *st);

/* Hands up to room buffered rows of t to b as records (their payloads are
 * then s's until the next poll). Returns how many. */
size_t sqrows_emit(struct sqsrc *s, struct sqtable *t, struct source_batch *b, size_t room);

/* True while t has buffered rows not yet handed out. */
bool sqrows_buffered(const struct sqtable *t);

/* Frees t's buffered rows (close, and before each query). */
void sqrows_drop(struct sqtable *t);

/* Frees t's rows and their buffers (close). */
void sqrows_free(struct sqtable *t);

#endif
