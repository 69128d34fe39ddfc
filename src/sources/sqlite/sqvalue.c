/* sqvalue: one row as Connect would carry it.
 *
 * SQLite types values, not columns: a column declared INTEGER may hold text.
 * A field's Connect type therefore follows the value's storage class (INTEGER
 * int64, REAL float64, TEXT string, BLOB bytes), and the declared type only
 * decides the type of a NULL and the logical types the JDBC connector gives
 * (DATETIME/TIMESTAMP Timestamp, DATE Date, BOOLEAN boolean). Each distinct
 * set of field types gets its own struct schema, built once and cached.
 *
 * Integers are exact: the payload carries their digits as raw JSON, never a
 * double. Doubles are written as Java's Double.toString writes them
 * (javafmt_number), so the bytes match what Connect's JsonConverter
 * produces. */
#include "util/buf.h"
#include "convert/convert.h"
#include "convert/javafmt.h"
#include "sources/sqlite/sqvalue.h"

#include "sources/sqlite/sqlts.h"
#include "util/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_SCHEMAS 64

struct sqschema_entry {
	char *sig; /* one type letter per field */
	cJSON *schema;
	char *json; /* schema rendered once for the converter */
};

/* Field type letters. */
enum {
	F_INT64 = 'l',
	F_FLOAT64 = 'd',
	F_STRING = 's',
	F_BYTES = 'y',
	F_BOOLEAN = 'o',
	F_TIMESTAMP = 'T',
	F_DATE = 'D',
};

static bool has(const char *s, const char *word)
{
	return strcasestr(s, word) != NULL;
}

void sqvalue_classify(const char *t, enum sqcol_kind *kind, enum sqcol_logical *logical)
{
	if (t == NULL)
		t = "";
	if (has(t, "INT"))
		*kind = SQCOL_INTEGER;
	else if (has(t, "CHAR") || has(t, "CLOB") || has(t, "TEXT"))
		*kind = SQCOL_TEXT;
	else if (has(t, "BLOB") || *t == '\0')
		*kind = SQCOL_BLOB;
	else if (has(t, "REAL") || has(t, "FLOA") || has(t, "DOUB"))
		*kind = SQCOL_REAL;
	else
		*kind = SQCOL_NUMERIC;
	if (has(t, "DATETIME") || has(t, "TIMESTAMP"))
		*logical = SQLOG_TIMESTAMP;
	else if (has(t, "DATE"))
		*logical = SQLOG_DATE;
	else if (has(t, "BOOL"))
		*logical = SQLOG_BOOLEAN;
	else
		*logical = SQLOG_NONE;
}

/* The field type of a NULL in column c. */
static char null_type(const struct sqcol *c)
{
	switch (c->logical) {
	case SQLOG_TIMESTAMP:
		return F_TIMESTAMP;
	case SQLOG_DATE:
		return F_DATE;
	case SQLOG_BOOLEAN:
		return F_BOOLEAN;
	case SQLOG_NONE:
		break;
	}
	switch (c->kind) {
	case SQCOL_INTEGER:
		return F_INT64;
	case SQCOL_TEXT:
		return F_STRING;
	case SQCOL_BLOB:
		return F_BYTES;
	case SQCOL_REAL:
	case SQCOL_NUMERIC:
		return F_FLOAT64;
	}
	return F_STRING;
}

/* ---- schemas --------------------------------------------------------------- */

static cJSON *field_schema(const struct sqcol *c, char type)
{
	cJSON *f = cJSON_CreateObject();
	const char *t = type == F_INT64 || type == F_TIMESTAMP ? "int64"
	                : type == F_DATE                       ? "int32"
	                : type == F_FLOAT64                    ? "double"
	                : type == F_BYTES                      ? "bytes"
	                : type == F_BOOLEAN                    ? "boolean"
	                                                       : "string";
	bool ok;

	/* Connect's JsonConverter.asJsonSchema: its type names (FLOAT64 is
	 * "double" there) and order: type, optional, name, version, then the
	 * struct field's name. */
	ok = f != NULL && cJSON_AddStringToObject(f, "type", t) != NULL &&
	     cJSON_AddBoolToObject(f, "optional", c->optional) != NULL;
	if (ok && type == F_TIMESTAMP)
		ok =
		    cJSON_AddStringToObject(f, "name", "org.apache.kafka.connect.data.Timestamp") &&
		    cJSON_AddNumberToObject(f, "version", 1);
	if (ok && type == F_DATE)
		ok = cJSON_AddStringToObject(f, "name", "org.apache.kafka.connect.data.Date") &&
		     cJSON_AddNumberToObject(f, "version", 1);
	if (ok && cJSON_AddStringToObject(f, "field", c->name) != NULL)
		return f;
	cJSON_Delete(f);
	return NULL;
}

static cJSON *struct_schema(const struct sqcol *cols, const size_t *idx, size_t n, const char *sig,
                            const char *name)
{
	cJSON *s = cJSON_CreateObject(), *fields = NULL;

	if (s == NULL || cJSON_AddStringToObject(s, "type", "struct") == NULL ||
	    (fields = cJSON_AddArrayToObject(s, "fields")) == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		cJSON *f = field_schema(&cols[idx[i]], sig[i]);

		if (f == NULL)
			goto fail;
		cJSON_AddItemToArray(fields, f);
	}
	if (cJSON_AddBoolToObject(s, "optional", false) == NULL)
		goto fail;
	if (name != NULL && cJSON_AddStringToObject(s, "name", name) == NULL)
		goto fail;
	return s;
fail:
	cJSON_Delete(s);
	return NULL;
}

/* The cached schema of the field types sig (one letter per field), built
 * on first use; NULL when memory is short. */
static const struct sqschema_entry *schema_for(struct sqschemas *c, const struct sqcol *cols,
                                               const size_t *idx, size_t n, const char *sig,
                                               const char *name)
{
	struct sqschema_entry *e;

	for (size_t i = 0; i < c->n; i++) {
		if (memcmp(c->v[i].sig, sig, n) == 0)
			return &c->v[i];
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4;
		struct sqschema_entry *grown = realloc(c->v, cap * sizeof(*grown));

		if (grown == NULL)
			return NULL;
		c->v = grown;
		c->cap = cap;
	}
	e = &c->v[c->n];
	e->sig = malloc(n + 1);
	e->schema = struct_schema(cols, idx, n, sig, name);
	e->json = e->schema ? convert_schema_json(e->schema) : NULL;
	if (e->sig == NULL || e->schema == NULL || e->json == NULL) {
		free(e->sig);
		free(e->json);
		cJSON_Delete(e->schema);
		return NULL;
	}
	memcpy(e->sig, sig, n);
	e->sig[n] = '\0';
	c->n++;
	return e;
}

void sqvalue_schemas_clear(struct sqschemas *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].sig);
		free(c->v[i].json);
		cJSON_Delete(c->v[i].schema);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

const char *sqvalue_schemas_json(const struct sqschemas *c, const cJSON *schema)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].schema == schema)
			return c->v[i].json;
	return NULL;
}

bool sqvalue_schemas_full(const struct sqschemas *c)
{
	return c->n >= MAX_SCHEMAS;
}

/* ---- values ---------------------------------------------------------------- */

static cJSON *raw_int(int64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", (long long)v);
	return cJSON_CreateRaw(num);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* A timestamp-ish value in column c: Timestamp (ms) or Date (days). */
static cJSON *time_item(sqlite3_stmt *stmt, int i, const struct sqcol *c, char *type)
{
	char err[256];
	int64_t ns;

	if (sqlts_from_value(sqlite3_column_value(stmt, i), &ns, err, sizeof(err)) != 0)
		return NULL;
	*type = c->logical == SQLOG_DATE ? F_DATE : F_TIMESTAMP;
	return raw_int(c->logical == SQLOG_DATE ? floor_div(ns, 86400000000000LL) : sqlts_ms(ns));
}

/* A REAL. SQLite keeps +-Infinity (NaN becomes NULL on the way in): they stay
 * doubles, which the converter writes as Connect does ("Infinity"), so a
 * required field never turns null. */
static cJSON *real_item(double d)
{
	char num[JAVAFMT_NUMBER_MAX];
	cJSON *it;

	if (isfinite(d)) {
		javafmt_number(d, false, num, sizeof(num));
		return cJSON_CreateRaw(num);
	}
	/* Not cJSON_CreateNumber: it casts the double to int. */
	it = cJSON_CreateNumber(0);
	if (it != NULL)
		it->valuedouble = d;
	return it;
}

/* The item for column i of the current row and its field type letter. */
static cJSON *item(sqlite3_stmt *stmt, int i, const struct sqcol *c, char *type,
                   struct sqvalue_stats *st)
{
	int t = sqlite3_column_type(stmt, i);
	cJSON *it;
	char *b64;

	if (t == SQLITE_NULL) {
		*type = null_type(c);
		return cJSON_CreateNull();
	}
	if ((c->logical == SQLOG_TIMESTAMP || c->logical == SQLOG_DATE) && t != SQLITE_BLOB) {
		it = time_item(stmt, i, c, type);
		if (it != NULL)
			return it;
		st->ts_unparsed++;
	}
	switch (t) {
	case SQLITE_INTEGER:
		if (c->logical == SQLOG_BOOLEAN) {
			*type = F_BOOLEAN;
			return cJSON_CreateBool(sqlite3_column_int64(stmt, i) != 0);
		}
		*type = F_INT64;
		return raw_int(sqlite3_column_int64(stmt, i));
	case SQLITE_FLOAT:
		*type = F_FLOAT64;
		return real_item(sqlite3_column_double(stmt, i));
	case SQLITE_TEXT:
		*type = F_STRING;
		/* Text with a NUL or invalid UTF-8 too: as the JDBC driver's
		 * String would hold it, written by the converter's one escaper. */
		return convert_string_item((const char *)sqlite3_column_text(stmt, i),
		                           (size_t)sqlite3_column_bytes(stmt, i),
		                           &st->utf8_replaced);
	default:
		*type = F_BYTES;
		b64 = text_base64(sqlite3_column_blob(stmt, i),
		                  (size_t)sqlite3_column_bytes(stmt, i));
		if (b64 == NULL)
			return NULL;
		it = cJSON_CreateString(b64);
		free(b64);
		return it;
	}
}

cJSON *sqvalue_row(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                   const char *name, struct sqschemas *cache, const cJSON **schema,
                   struct sqvalue_stats *st)
{
	char sigbuf[256], *sig = n < sizeof(sigbuf) ? sigbuf : malloc(n + 1);
	cJSON *obj = cJSON_CreateObject();
	const struct sqschema_entry *e;

	if (sig == NULL || obj == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct sqcol *c = &cols[idx[i]];
		cJSON *it = item(stmt, (int)idx[i], c, &sig[i], st);

		if (it == NULL)
			goto fail;
		/* The key is the column name, owned by the table layout, which
		 * outlives the payload (both are rebuilt only between polls). */
		cJSON_AddItemToObjectCS(obj, c->name, it);
	}
	e = schema_for(cache, cols, idx, n, sig, name);
	if (e == NULL)
		goto fail;
	*schema = e->schema;
	if (sig != sigbuf)
		free(sig);
	return obj;
fail:
	if (sig != sigbuf)
		free(sig);
	cJSON_Delete(obj);
	return NULL;
}

/* ---- rows rendered as text ---------------------------------------------------
 * What JsonConverter writes for sqvalue_row()'s payload, written straight
 * from the statement: the same bytes (tests/unit/test_source_sqlite_values.c
 * compares the two), without a tree and its allocations per value. */

/* A REAL: raw text when finite, as real_item(); an infinity is a string, as
 * the converter writes a double JSON cannot carry. */
static void put_real(struct buf *o, double d)
{
	char num[JAVAFMT_NUMBER_MAX];
	size_t n = javafmt_number(d, false, num, sizeof(num));

	if (isfinite(d)) {
		buf_add(o, num, n);
		return;
	}
	buf_addc(o, '"');
	buf_add(o, num, n);
	buf_addc(o, '"');
}

/* len bytes of s as the converter writes the string convert_string_item()
 * makes of them: the one escaper, which also writes NUL as \u0000 and
 * replaces invalid UTF-8. */
static void put_str(struct buf *o, const char *s, size_t len, uint64_t *replaced)
{
	char *d = buf_room(o, convert_json_string_max(len));

	if (d != NULL)
		buf_commit(o, convert_json_string(d, s, len, replaced));
}

/* A BLOB: its base64 (never escaped). Returns 0 or -1. */
static int put_blob(struct buf *o, sqlite3_stmt *stmt, int i)
{
	char *b64 =
	    text_base64(sqlite3_column_blob(stmt, i), (size_t)sqlite3_column_bytes(stmt, i));

	if (b64 == NULL)
		return -1;
	buf_addc(o, '"');
	buf_addz(o, b64);
	buf_addc(o, '"');
	free(b64);
	return 0;
}

/* Column i of the current row as item() and the converter make it; returns
 * its field type letter, or 0 when memory is short. */
static char put_item(struct buf *o, sqlite3_stmt *stmt, int i, const struct sqcol *c,
                     struct sqvalue_stats *st)
{
	int t = sqlite3_column_type(stmt, i);
	char num[JAVAFMT_LONG_MAX], err[256];
	int64_t ns;

	if (t == SQLITE_NULL)
		return buf_add(o, "null", 4) == 0 ? null_type(c) : 0;
	if ((c->logical == SQLOG_TIMESTAMP || c->logical == SQLOG_DATE) && t != SQLITE_BLOB) {
		if (sqlts_from_value(sqlite3_column_value(stmt, i), &ns, err, sizeof(err)) == 0) {
			bool date = c->logical == SQLOG_DATE;

			buf_add(o, num,
			        javafmt_long(date ? floor_div(ns, 86400000000000LL) : sqlts_ms(ns),
			                     num));
			return date ? F_DATE : F_TIMESTAMP;
		}
		st->ts_unparsed++;
	}
	switch (t) {
	case SQLITE_INTEGER:
		if (c->logical == SQLOG_BOOLEAN) {
			buf_addz(o, sqlite3_column_int64(stmt, i) != 0 ? "true" : "false");
			return F_BOOLEAN;
		}
		buf_add(o, num, javafmt_long(sqlite3_column_int64(stmt, i), num));
		return F_INT64;
	case SQLITE_FLOAT:
		put_real(o, sqlite3_column_double(stmt, i));
		return F_FLOAT64;
	case SQLITE_TEXT:
		/* text before bytes: SQLite's order for a value it may convert */
		put_str(o, (const char *)sqlite3_column_text(stmt, i),
		        (size_t)sqlite3_column_bytes(stmt, i), &st->utf8_replaced);
		return F_STRING;
	default:
		return put_blob(o, stmt, i) == 0 ? F_BYTES : 0;
	}
}

int sqvalue_col_key(struct sqcol *c)
{
	size_t len = strlen(c->name);
	size_t max = convert_json_string_max(len) + 1;

	free(c->key);
	c->key_replaced = 0;
	if ((c->key = malloc(max)) == NULL)
		return -1;
	c->key_len = convert_json_string(c->key, c->name, len, &c->key_replaced);
	c->key[c->key_len++] = ':';
	return 0;
}

/* Appends column c's "name": to out. */
static void put_key(struct buf *out, const struct sqcol *c, struct sqvalue_stats *st)
{
	if (c->key != NULL) {
		buf_add(out, c->key, c->key_len);
		st->utf8_replaced += c->key_replaced;
		return;
	}
	put_str(out, c->name, strlen(c->name), &st->utf8_replaced);
	buf_addc(out, ':');
}

int sqvalue_row_json(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                     const char *name, struct sqschemas *cache, struct buf *out,
                     const char **schema_json, struct sqvalue_stats *st)
{
	char sigbuf[256], *sig = n < sizeof(sigbuf) ? sigbuf : malloc(n + 1);
	size_t start = buf_len(out), i;
	const struct sqschema_entry *e = NULL;

	if (sig == NULL)
		return -1;
	buf_addc(out, '{');
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(out, ',');
		put_key(out, &cols[idx[i]], st);
		if ((sig[i] = put_item(out, stmt, (int)idx[i], &cols[idx[i]], st)) == 0)
			break;
	}
	buf_addc(out, '}');
	if (i == n && buf_err(out) == 0)
		e = schema_for(cache, cols, idx, n, sig, name);
	if (sig != sigbuf)
		free(sig);
	if (e == NULL) {
		buf_truncate(out, start);
		return -1;
	}
	*schema_json = e->json;
	return 0;
}
