/* sqrows: a table's buffer of rows read (by its query, sqquery.c, or found
 * behind the clock, sqclock.c) and not yet handed out as records: their
 * values and keys rendered once, as trees or as text in t->text. */
#include "sources/sqlite/sqrows.h"

#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqvalue.h"

#include "core/source.h"

#include <stdlib.h>
#include <string.h>

/* The most rendered text kept allocated between queries. */
#define TEXT_KEEP (1u << 20)

static bool own(struct sqsrc *s, cJSON *o)
{
	if (s->nowned == s->capowned) {
		size_t cap = s->capowned ? s->capowned * 2 : 256;
		cJSON **g = realloc(s->owned, cap * sizeof(*g));

		if (g == NULL)
			return false;
		s->owned = g;
		s->capowned = cap;
	}
	s->owned[s->nowned++] = o;
	return true;
}

/* source_sqlite.h */
struct sqrow *sqrows_add(struct sqsrc *s, struct sqtable *t, sqlite3_stmt *st)
{
	struct sqrow *r;

	if (t->nrows == t->caprows) {
		size_t cap = t->caprows ? t->caprows * 2 : 64;
		struct sqrow *g = realloc(t->rows, cap * sizeof(*g));

		if (g == NULL)
			return NULL;
		t->rows = g;
		t->caprows = cap;
	}
	r = &t->rows[t->nrows];
	memset(r, 0, sizeof(*r));
	r->vat = buf_len(&t->text);
	if (s->env->json_values
	        ? sqvalue_row_json(st, t->cols, t->val_idx, t->ncols, t->name, &t->vschemas,
	                           &t->text, &r->vjson, &s->stats) != 0
	        : (r->value = sqvalue_row(st, t->cols, t->val_idx, t->ncols, t->name, &t->vschemas,
	                                  &r->vschema, &s->stats)) == NULL)
		return NULL;
	r->vlen = buf_len(&t->text) - r->vat;
	r->kat = buf_len(&t->text);
	if (t->nkeys > 0 &&
	    (s->env->json_keys
	         ? sqvalue_row_json(st, t->cols, t->key_idx, t->nkeys, NULL, &t->kschemas, &t->text,
	                            &r->kjson, &s->stats) != 0
	         : (r->key = sqvalue_row(st, t->cols, t->key_idx, t->nkeys, NULL, &t->kschemas,
	                                 &r->kschema, &s->stats)) == NULL)) {
		cJSON_Delete(r->value);
		return NULL;
	}
	r->klen = buf_len(&t->text) - r->kat;
	t->nrows++;
	return r;
}

/* A row's value or key as a record carries it: its tree, its text, or null
 * (no key columns). */
static struct record_value value_of(const struct sqtable *t, const struct sqschemas *c,
                                    const cJSON *tree, const cJSON *schema, const char *json,
                                    size_t at, size_t len)
{
	if (tree != NULL)
		return (struct record_value){.kind = VALUE_STRUCT,
		                             .payload = tree,
		                             .schema = schema,
		                             .schema_json = sqvalue_schemas_json(c, schema)};
	if (json != NULL)
		return (struct record_value){.kind = VALUE_JSON,
		                             .bytes = buf_ptr(&t->text) + at,
		                             .len = len,
		                             .schema_json = json};
	return (struct record_value){.kind = VALUE_NULL};
}

/* source_sqlite.h */
size_t sqrows_emit(struct sqsrc *s, struct sqtable *t, struct source_batch *b, size_t room)
{
	size_t n = 0;

	while (n < room && t->head < t->nrows && b->n < b->max) {
		struct sqrow *w = &t->rows[t->head];
		struct record *r = &b->records[b->n];

		/* Trees are freed at the next poll; text lives until the
		 * table's next query, which no poll before the next runs. */
		if ((w->value != NULL && !own(s, w->value)) || (w->key != NULL && !own(s, w->key)))
			break;
		memset(r, 0, sizeof(*r));
		r->part = t->part;
		r->topic = t->topic;
		r->offset = w->off;
		r->value =
		    value_of(t, &t->vschemas, w->value, w->vschema, w->vjson, w->vat, w->vlen);
		r->key = value_of(t, &t->kschemas, w->key, w->kschema, w->kjson, w->kat, w->klen);
		w->value = w->key = NULL;
		t->head++;
		b->n++;
		n++;
	}
	return n;
}

/* source_sqlite.h */
bool sqrows_buffered(const struct sqtable *t)
{
	return t->head < t->nrows;
}

/* source_sqlite.h */
void sqrows_drop(struct sqtable *t)
{
	for (size_t i = t->head; i < t->nrows; i++) {
		cJSON_Delete(t->rows[i].value);
		cJSON_Delete(t->rows[i].key);
	}
	t->head = t->nrows = 0;
	/* A query of large rows must not pin their size for good. */
	if (buf_len(&t->text) > TEXT_KEEP)
		buf_free(&t->text);
	else
		buf_reset(&t->text);
}
