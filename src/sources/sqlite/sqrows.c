/* sqrows: a table's buffer of rows read (by its query, sqquery.c, or found
 * behind the clock, sqclock.c) and not yet handed out as records: their
 * values and keys rendered once, as trees or as text in t->rows.text. */
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

/* sqrows.h */
struct sqrow *sqrows_add(struct sqsrc *s, struct sqtable *t, sqlite3_stmt *st)
{
	struct sqrow *r;

	if (t->rows.n == t->rows.cap) {
		size_t cap = t->rows.cap ? t->rows.cap * 2 : 64;
		struct sqrow *g = realloc(t->rows.v, cap * sizeof(*g));

		if (g == NULL)
			return NULL;
		t->rows.v = g;
		t->rows.cap = cap;
	}
	r = &t->rows.v[t->rows.n];
	memset(r, 0, sizeof(*r));
	r->vat = buf_len(&t->rows.text);
	if (s->env->json_values
	        ? sqvalue_row_json(st, t->cols, t->val_idx, t->ncols, t->name, &t->vschemas,
	                           &t->rows.text, &r->vjson, &s->stats) != 0
	        : (r->value = sqvalue_row(st, t->cols, t->val_idx, t->ncols, t->name, &t->vschemas,
	                                  &r->vschema, &s->stats)) == NULL)
		return NULL;
	r->vlen = buf_len(&t->rows.text) - r->vat;
	r->kat = buf_len(&t->rows.text);
	if (t->nkeys > 0 &&
	    (s->env->json_keys
	         ? sqvalue_row_json(st, t->cols, t->key_idx, t->nkeys, NULL, &t->kschemas,
	                            &t->rows.text, &r->kjson, &s->stats) != 0
	         : (r->key = sqvalue_row(st, t->cols, t->key_idx, t->nkeys, NULL, &t->kschemas,
	                                 &r->kschema, &s->stats)) == NULL)) {
		cJSON_Delete(r->value);
		return NULL;
	}
	r->klen = buf_len(&t->rows.text) - r->kat;
	t->rows.n++;
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
		                             .bytes = buf_ptr(&t->rows.text) + at,
		                             .len = len,
		                             .schema_json = json};
	return (struct record_value){.kind = VALUE_NULL};
}

/* sqrows.h */
size_t sqrows_emit(struct sqsrc *s, struct sqtable *t, struct source_batch *b, size_t room)
{
	size_t n = 0;

	while (n < room && t->rows.head < t->rows.n && b->n < b->max) {
		struct sqrow *w = &t->rows.v[t->rows.head];
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
		t->rows.head++;
		b->n++;
		n++;
	}
	return n;
}

/* sqrows.h */
bool sqrows_buffered(const struct sqtable *t)
{
	return t->rows.head < t->rows.n;
}

/* sqrows.h */
void sqrows_drop(struct sqtable *t)
{
	for (size_t i = t->rows.head; i < t->rows.n; i++) {
		cJSON_Delete(t->rows.v[i].value);
		cJSON_Delete(t->rows.v[i].key);
	}
	t->rows.head = t->rows.n = 0;
	/* A query of large rows must not pin their size for good. */
	if (buf_len(&t->rows.text) > TEXT_KEEP)
		buf_free(&t->rows.text);
	else
		buf_reset(&t->rows.text);
}

/* sqrows.h */
void sqrows_free(struct sqtable *t)
{
	sqrows_drop(t);
	buf_free(&t->rows.text);
	free(t->rows.v);
	t->rows.v = NULL;
	t->rows.cap = 0;
}
