/* jpos: the journal position as one sequence number per
 * sequence-number id, its offset text, and the cursor reader; see
 * jpos.h. */
#include "sources/journald/jpos.h"

#include "core/source.h"
#include "util/num.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 9007199254740992.0 /* 2^53: larger JSON numbers are not exact */

struct jpos_id {
	char id[33];
	uint64_t seq;
	uint64_t used; /* when it was last set: the least recently set one goes first */
	unsigned flags;
};

struct jpos {
	struct jpos_id ids[JPOS_IDS_MAX];
	size_t n;
	uint64_t clock;
	size_t hint; /* the id found last: entries of one id come in runs */
};

int jpos_new(struct jpos **out)
{
	*out = calloc(1, sizeof(struct jpos));
	return *out != NULL ? JPOS_OK : JPOS_ERR_NOMEM;
}

const char *jpos_strerror(int err)
{
	switch (err) {
	case JPOS_OK:
		return "no error";
	case JPOS_ERR:
		return "not a journal position";
	case JPOS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}

void jpos_free(struct jpos *p)
{
	free(p);
}

static struct jpos_id *find(const struct jpos *p, const char *id)
{
	struct jpos *m = (struct jpos *)p; /* the hint only: no position changes */

	if (p->hint < p->n && strcmp(p->ids[p->hint].id, id) == 0)
		return &m->ids[p->hint];
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->ids[i].id, id) == 0) {
			m->hint = i;
			return &m->ids[i];
		}
	return NULL;
}

bool jpos_get(const struct jpos *p, const char *id, uint64_t *seq)
{
	const struct jpos_id *e = find(p, id);

	if (e != NULL)
		*seq = e->seq;
	return e != NULL;
}

int jpos_set(struct jpos *p, const char *id, uint64_t seq, char dropped[33])
{
	struct jpos_id *e = find(p, id);
	size_t old = 0;
	int rc = 0;

	if (e == NULL && strlen(id) != 32)
		return -1;
	if (e == NULL && p->n == JPOS_IDS_MAX) {
		for (size_t i = 1; i < p->n; i++)
			if (p->ids[i].used < p->ids[old].used)
				old = i;
		memcpy(dropped, p->ids[old].id, 33);
		p->ids[old] = p->ids[--p->n];
		rc = 1;
	}
	if (e == NULL) {
		e = &p->ids[p->n++];
		memcpy(e->id, id, 33);
		e->flags = 0;
	}
	e->seq = seq;
	e->used = ++p->clock;
	return rc;
}

unsigned jpos_flags(const struct jpos *p, const char *id)
{
	const struct jpos_id *e = find(p, id);

	return e != NULL ? e->flags : 0;
}

void jpos_flag(struct jpos *p, const char *id, unsigned flags)
{
	struct jpos_id *e = find(p, id);

	if (e != NULL)
		e->flags |= flags;
}

void jpos_unflag(struct jpos *p, unsigned flags)
{
	for (size_t i = 0; i < p->n; i++)
		p->ids[i].flags &= ~flags;
}

size_t jpos_sweep(struct jpos *p, unsigned flags)
{
	size_t kept = 0, dropped;

	for (size_t i = 0; i < p->n; i++)
		if (p->ids[i].flags & flags)
			p->ids[kept++] = p->ids[i];
	dropped = p->n - kept;
	p->n = kept;
	return dropped;
}

/* True for 32 lower-case or upper-case hex digits. */
static bool is_id(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (num_hex_digit(s[i]) < 0)
			return false;
	return n == 32;
}

int jpos_load(struct jpos *p, const cJSON *seqnums)
{
	const cJSON *it;
	char dropped[33];

	if (!cJSON_IsObject(seqnums) || cJSON_GetArraySize(seqnums) > JPOS_IDS_MAX)
		return -1;
	cJSON_ArrayForEach(it, seqnums)
	{
		double v = it->valuedouble;

		if (!is_id(it->string) || !cJSON_IsNumber(it) || v < 0 || v > EXACT_MAX ||
		    v != (double)(uint64_t)v)
			return -1;
		if (jpos_set(p, it->string, (uint64_t)v, dropped) != 0)
			return -1;
	}
	return 0;
}

char *jpos_json(const struct jpos *p, const char *cursor)
{
	cJSON *o = cJSON_CreateObject(), *map = NULL;
	char *json = NULL, num[24];

	if (o == NULL || cJSON_AddStringToObject(o, "cursor", cursor) == NULL ||
	    (map = cJSON_AddObjectToObject(o, "seqnums")) == NULL)
		goto out;
	for (size_t i = 0; i < p->n; i++) {
		/* raw digits: cJSON prints a double, inexact past 15 digits */
		snprintf(num, sizeof(num), "%llu", (unsigned long long)p->ids[i].seq);
		if (cJSON_AddRawToObject(map, p->ids[i].id, num) == NULL)
			goto out;
	}
	json = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return json;
}

/* The texts of one source, counted (jpos.h): the source's reference and
 * one per text alive, so that the last of them frees it. */
struct jpos_texts {
	uint32_t refs;
	size_t bytes;
};

/* A position text as records' offsets name it: ref first, so that the
 * object starts where its ref does and free needs no context. */
struct jpos_text {
	struct src_ref ref;
	struct jpos_texts *of;
	size_t size;
	char json[];
};

static void texts_drop(struct jpos_texts *t)
{
	if (t != NULL && --t->refs == 0)
		free(t);
}

int jpos_texts_new(struct jpos_texts **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return JPOS_ERR_NOMEM;
	(*out)->refs = 1;
	return JPOS_OK;
}

void jpos_texts_free(struct jpos_texts *t)
{
	texts_drop(t);
}

size_t jpos_texts_bytes(const struct jpos_texts *t)
{
	return t->bytes;
}

static void text_free(struct src_ref *ref)
{
	struct jpos_text *t = (struct jpos_text *)(void *)ref;

	t->of->bytes -= t->size;
	texts_drop(t->of);
	free(t);
}

int jpos_text_new(struct jpos_texts *of, const char *json, struct src_ref **out)
{
	size_t n = strlen(json) + 1;
	struct jpos_text *t = malloc(sizeof(*t) + n);

	*out = NULL;
	if (t == NULL)
		return JPOS_ERR_NOMEM;
	src_ref_init(&t->ref, text_free);
	t->of = of;
	t->size = sizeof(*t) + n;
	memcpy(t->json, json, n);
	of->refs++;
	of->bytes += t->size;
	*out = &t->ref;
	return JPOS_OK;
}

const char *jpos_text(const struct src_ref *ref)
{
	if (ref == NULL)
		return NULL;
	return ((const struct jpos_text *)(const void *)ref)->json;
}

/* The value of "<key>=" in a ';'-separated cursor, and its length. */
static const char *cursor_item(const char *c, char key, size_t *len)
{
	while (*c != '\0') {
		const char *end = strchr(c, ';');

		if (end == NULL)
			end = c + strlen(c);
		if (c[0] == key && c[1] == '=') {
			*len = (size_t)(end - c - 2);
			return c + 2;
		}
		c = *end == ';' ? end + 1 : end;
	}
	return NULL;
}

int jpos_cursor_seqnum(const char *cursor, char id[33], uint64_t *seqnum)
{
	size_t slen = 0, ilen = 0;
	const char *s = cursor_item(cursor, 's', &slen);
	const char *i = cursor_item(cursor, 'i', &ilen);
	uint64_t v = 0;

	if (s == NULL || i == NULL || slen != 32 || ilen == 0 || ilen > 16)
		return -1;
	for (size_t k = 0; k < 32; k++)
		if (num_hex_digit(s[k]) < 0)
			return -1;
	for (size_t k = 0; k < ilen; k++) {
		int h = num_hex_digit(i[k]);

		if (h < 0)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	memcpy(id, s, 32);
	id[32] = '\0';
	*seqnum = v;
	return 0;
}
