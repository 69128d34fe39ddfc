/* sqvalue: one row as Connect would carry it: values, schemas, the declared type's meaning
 * (sqvalue.c). Main loop only. */
#ifndef SKIFF_SQVALUE_H
#define SKIFF_SQVALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sources/sqlite/sqlitelib.h"

struct buf;

/* What a declared column type says, by SQLite's affinity rules, plus the
 * Connect logical type it asks for. */
enum sqcol_kind {
	SQCOL_INTEGER, /* INT affinity */
	SQCOL_TEXT,    /* CHAR, CLOB, TEXT */
	SQCOL_BLOB,    /* BLOB, or no declared type */
	SQCOL_REAL,    /* REAL, FLOA, DOUB */
	SQCOL_NUMERIC, /* everything else */
};

enum sqcol_logical {
	SQLOG_NONE,
	SQLOG_TIMESTAMP, /* DATETIME, TIMESTAMP */
	SQLOG_DATE,      /* DATE */
	SQLOG_BOOLEAN,   /* BOOL, BOOLEAN */
};

struct sqcol {
	char *name;
	/* Optional (NULL: rendered per row): the name as a JSON member's key,
	 * "name": as JsonConverter writes it, key_len bytes, and the invalid
	 * UTF-8 sequences replaced in it (counted again for every row, as
	 * rendering it per row would). From sqvalue_col_key(); owned. */
	char *key;
	size_t key_len;
	uint64_t key_replaced;
	enum sqcol_kind kind;
	enum sqcol_logical logical;
	bool declared; /* has a declared type */
	bool optional;
};

/* Renders c->name into c->key (once per table layout: every row of the
 * table writes the same key). Returns 0, or -1 when memory is short. */
int sqvalue_col_key(struct sqcol *c);

/* Classifies a declared type (NULL or "" for none). */
void sqvalue_classify(const char *decltype, enum sqcol_kind *kind, enum sqcol_logical *logical);

/* The Connect struct schemas one table produced, one per distinct set of
 * field types (SQLite typing is per value, so a column may carry an integer
 * in one row and text in the next). Owned by the table; a schema stays valid
 * until sqvalue_schemas_clear(). */
struct sqschemas {
	struct sqschema_entry *v;
	size_t n, cap;
};

/* Counters the value code bumps, reported through env->count by the caller. */
struct sqvalue_stats {
	uint64_t utf8_replaced;
	uint64_t ts_unparsed;
};

/* Builds the payload object of one row: fields idx[0..n-1] of stmt (column
 * indexes), described by cols[idx[i]]. *schema is a schema from cache
 * (struct name: name, or none when NULL). Returns the payload (caller frees
 * with cJSON_Delete) or NULL on allocation failure. */
cJSON *sqvalue_row(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                   const char *name, struct sqschemas *cache, const cJSON **schema,
                   struct sqvalue_stats *st);

/* sqvalue_row() as text: appends to out the payload JsonConverter writes
 * for that row, the same bytes, without building the tree; *schema_json is
 * the converter's rendering of its schema, from cache. Returns 0, or -1 when
 * memory is short or out is full (out as it was). */
int sqvalue_row_json(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                     const char *name, struct sqschemas *cache, struct buf *out,
                     const char **schema_json, struct sqvalue_stats *st);

void sqvalue_schemas_clear(struct sqschemas *c);
/* The converter's rendering of schema, a schema of c (NULL if not one). */
const char *sqvalue_schemas_json(const struct sqschemas *c, const cJSON *schema);
/* True when the cache holds so many variants it should be cleared (between
 * polls only: records point to its schemas). */
bool sqvalue_schemas_full(const struct sqschemas *c);

#endif
