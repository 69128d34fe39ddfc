/* offsets: the in-memory offset map, dirty tracking and the flush; see
 * offsets.h. Persistence is the backend's (offsets_file.c).
 *
 * Entries live in an insertion-ordered array; util/hash indexes them by key
 * so that a lookup is O(1), since the worker puts every partition's offset on
 * every flush.
 *
 * Canonical text: cJSON validates the JSON and its shape, but the stored text
 * is the input with the whitespace between tokens removed, every token kept
 * as written. cJSON holds numbers as double and would re-print an integer
 * above 2^53 (a SQLite rowid, an inode) rounded; jsonint reads them exactly,
 * so they must survive the store byte for byte. For the worker's text
 * (cJSON_PrintUnformatted keys, snprintf values) this is the identity. */
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"

#include "util/hash.h"
#include "util/rstr.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define ENTRY_OVERHEAD 32 /* bytes counted per entry against OFFSETS_MAX_BYTES */
#define MIN_CAP 16

struct entry {
	char *key;   /* rstr (util/rstr.h): the journal's shadow may share it */
	char *value; /* rstr, as key */
};

struct offsets {
	struct entry *ents; /* insertion order */
	size_t n, cap;
	struct hash index; /* key -> position in ents */
	size_t bytes;      /* counted against OFFSETS_MAX_BYTES */
	bool dirty;
	/* What changed since the last write that left nothing unwritten
	 * (offsets_changed): positions in ents, each once (chg_bits: one bit a
	 * position, words for cap of them), in the order first changed; or
	 * chg_all: not known (a load, a removal, out of memory). */
	uint32_t *chg;
	size_t nchg, chg_cap, chg_words;
	uint64_t *chg_bits;
	bool chg_all;
	uint64_t changes;   /* puts that changed something, ever */
	uint64_t attempted; /* highest generation loaded or handed to the backend */
	/* The write in flight: its generation (0: none), the changes it holds. */
	uint64_t writing, writing_changes;
	offsets_done_fn done;
	void *done_arg;
	/* Statistics: counted through these, which point into own until
	 * offsets_register_stats moves them into the registry. */
	struct {
		uint64_t generation, flushes, flush_failures, skipped_clean, from_prev;
	} own;
	uint64_t *generation, *flushes, *flush_failures, *skipped_clean, *from_prev;
	const struct offset_backend_ops *ops;
	void *ctx;
	char note[1024]; /* offsets_load_note */
	bool note_warn;
};

enum kind { KEY, VALUE };

/* Notes that ents[i] changed (offsets_changed). */
static void note_changed(struct offsets *o, size_t i)
{
	size_t w = i / 64;

	if (o->chg_all)
		return;
	if (w >= o->chg_words) {
		size_t words = (o->cap + 63) / 64 > w ? (o->cap + 63) / 64 : w + 1;
		uint64_t *bits = realloc(o->chg_bits, words * sizeof(*bits));

		if (bits == NULL)
			goto all;
		memset(bits + o->chg_words, 0, (words - o->chg_words) * sizeof(*bits));
		o->chg_bits = bits;
		o->chg_words = words;
	}
	if (o->chg_bits[w] >> (i % 64) & 1)
		return;
	if (o->nchg == o->chg_cap) {
		size_t cap = o->chg_cap ? o->chg_cap * 2 : MIN_CAP;
		uint32_t *chg = realloc(o->chg, cap * sizeof(*chg));

		if (chg == NULL)
			goto all;
		o->chg = chg;
		o->chg_cap = cap;
	}
	o->chg_bits[w] |= UINT64_C(1) << (i % 64);
	o->chg[o->nchg++] = (uint32_t)i;
	return;
all:
	o->chg_all = true;
}

/* After a write that left nothing unwritten: nothing changed since. */
static void changed_clear(struct offsets *o)
{
	for (size_t k = 0; k < o->nchg; k++)
		o->chg_bits[o->chg[k] / 64] &= ~(UINT64_C(1) << (o->chg[k] % 64));
	o->nchg = 0;
	o->chg_all = false;
}

static struct entry *lookup(const struct offsets *o, const char *key)
{
	size_t i;

	return hash_get(&o->index, key, &i) ? &o->ents[i] : NULL;
}

/* Makes room for one more entry. */
static int grow(struct offsets *o)
{
	size_t cap = o->cap ? o->cap * 2 : MIN_CAP;
	struct entry *ents;

	if (o->n < o->cap)
		return 0;
	ents = realloc(o->ents, cap * sizeof(*ents));
	if (ents == NULL)
		return OFFSETS_ERR_NOMEM;
	o->ents = ents;
	o->cap = cap;
	return 0;
}

static bool shape_ok(const cJSON *j, enum kind kind)
{
	if (kind == VALUE)
		return cJSON_IsObject(j);
	return cJSON_IsArray(j) && cJSON_GetArraySize(j) == 2 &&
	       cJSON_IsString(cJSON_GetArrayItem(j, 0)) && cJSON_IsObject(cJSON_GetArrayItem(j, 1));
}

/* A copy of valid JSON text without the whitespace between tokens (what
 * cJSON skips: every byte up to 32), an rstr (rstr_drop), or NULL. */
static char *compact(const char *text)
{
	char *out = rstr_new(NULL, strlen(text)), *q = out;
	bool in_string = false;

	if (out == NULL)
		return NULL;
	for (const char *p = text; *p != '\0'; p++) {
		if (in_string && *p == '\\' && p[1] != '\0')
			*q++ = *p++; /* the escaped byte is copied below */
		else if (in_string && *p == '"')
			in_string = false;
		else if (!in_string && (unsigned char)*p <= 32)
			continue;
		else if (!in_string && *p == '"')
			in_string = true;
		*q++ = *p;
	}
	*q = '\0';
	return out;
}

/* Validates text and its shape; *out is its canonical text (an rstr:
 * rstr_drop). */
static int canonical(const char *text, enum kind kind, char **out)
{
	cJSON *j = cJSON_ParseWithOpts(text, NULL, 1);
	bool ok = j != NULL && shape_ok(j, kind);

	cJSON_Delete(j);
	*out = NULL;
	if (!ok)
		return OFFSETS_ERR_ARG;
	*out = compact(text);
	return *out != NULL ? 0 : OFFSETS_ERR_NOMEM;
}

static bool fits(const struct offsets *o, size_t removed, size_t added)
{
	return o->bytes - removed + added <= OFFSETS_MAX_BYTES;
}

/* Sets an existing entry's value; *changed says whether it differed. */
static int update(struct offsets *o, struct entry *e, const char *value, bool *changed)
{
	char *v = NULL;
	size_t oldlen = strlen(e->value);
	int rc;

	*changed = false;
	if (strcmp(e->value, value) == 0)
		return 0;
	rc = canonical(value, VALUE, &v);
	if (rc != 0)
		return rc;
	if (strcmp(e->value, v) == 0)
		goto out;
	if (!fits(o, oldlen, strlen(v))) {
		rc = OFFSETS_ERR_FULL;
		goto out;
	}
	o->bytes = o->bytes - oldlen + strlen(v);
	rstr_drop(e->value);
	e->value = v;
	v = NULL;
	*changed = true;
out:
	rstr_drop(v);
	return rc;
}

/* Appends (key, value); key is canonical and not present. Takes key. */
static int insert(struct offsets *o, char *key, const char *value)
{
	char *v = NULL;
	size_t need;
	int rc = OFFSETS_ERR_FULL;

	if (o->n >= OFFSETS_MAX_ENTRIES)
		goto out;
	rc = canonical(value, VALUE, &v);
	if (rc != 0)
		goto out;
	need = strlen(key) + strlen(v) + ENTRY_OVERHEAD;
	rc = OFFSETS_ERR_FULL;
	if (!fits(o, 0, need))
		goto out;
	rc = grow(o);
	if (rc == 0 && hash_put(&o->index, key, o->n) != 0)
		rc = OFFSETS_ERR_NOMEM;
	if (rc != 0)
		goto out;
	o->ents[o->n++] = (struct entry){.key = key, .value = v};
	o->bytes += need;
	return 0;
out:
	rstr_drop(key);
	rstr_drop(v);
	return rc;
}

/* offsets_put and offsets_load_entry: the first lookup uses the text as given
 * (the worker's text is already canonical); only a miss canonicalises. */
static int set(struct offsets *o, const char *key, const char *value, bool loading, bool shared)
{
	struct entry *e = lookup(o, key);
	char *ckey = NULL;
	bool changed = false;
	int rc;

	if (e == NULL) {
		rc = canonical(key, KEY, &ckey);
		if (rc != 0)
			return rc;
		e = lookup(o, ckey);
		if (e == NULL && shared && strcmp(ckey, key) == 0) {
			rstr_drop(ckey); /* the caller's string will do */
			ckey = (char *)rstr_hold(key);
		}
	}
	if (e != NULL) {
		rstr_drop(ckey);
		if (loading)
			return OFFSETS_ERR_ARG;
		rc = update(o, e, value, &changed);
	} else {
		rc = insert(o, ckey, value);
		changed = rc == 0;
		e = changed ? &o->ents[o->n - 1] : NULL;
	}
	if (changed && !loading) {
		o->dirty = true;
		o->changes++;
		note_changed(o, (size_t)(e - o->ents));
	} else if (changed) {
		o->chg_all = true;
	}
	return rc;
}

int offsets_put(struct offsets *o, const char *key, const char *value)
{
	return set(o, key, value, false, false);
}

int offsets_put_shared(struct offsets *o, const char *key, const char *value)
{
	return set(o, key, value, false, true);
}

int offsets_load_entry(struct offsets *o, const char *key, const char *value)
{
	return set(o, key, value, true, false);
}

/* Removes entry idx, keeping the order of the others. */
static void remove_at(struct offsets *o, size_t idx)
{
	struct entry *e = &o->ents[idx];

	o->bytes -= strlen(e->key) + strlen(e->value) + ENTRY_OVERHEAD;
	rstr_drop(e->key);
	rstr_drop(e->value);
	memmove(e, e + 1, (o->n - idx - 1) * sizeof(*e));
	o->n--;
	o->chg_all = true; /* the positions after it moved */
	/* Fewer keys than before: putting them back never allocates. */
	hash_clear(&o->index);
	for (size_t i = 0; i < o->n; i++)
		(void)hash_put(&o->index, o->ents[i].key, i);
}

int offsets_load_record(struct offsets *o, const char *key, const char *value)
{
	char *ckey = NULL;
	struct entry *e;
	bool changed;
	int rc = canonical(key, KEY, &ckey);

	if (rc != 0)
		return rc;
	e = lookup(o, ckey);
	if (e == NULL && value == NULL) {
		rstr_drop(ckey);
		return 0;
	}
	o->chg_all = true;
	if (e == NULL)
		return insert(o, ckey, value);
	rstr_drop(ckey);
	if (value != NULL)
		return update(o, e, value, &changed);
	remove_at(o, (size_t)(e - o->ents));
	return 0;
}

void offsets_load_reset(struct offsets *o)
{
	for (size_t i = 0; i < o->n; i++) {
		rstr_drop(o->ents[i].key);
		rstr_drop(o->ents[i].value);
	}
	hash_clear(&o->index);
	o->n = 0;
	o->bytes = 0;
	o->chg_all = true;
}

const char *offsets_get(const struct offsets *o, const char *key)
{
	const struct entry *e = lookup(o, key);
	char *ckey = NULL;

	if (e == NULL && canonical(key, KEY, &ckey) == 0) {
		e = lookup(o, ckey);
		rstr_drop(ckey);
	}
	return e ? e->value : NULL;
}

const char *offsets_key_of(const struct offsets *o, const char *key)
{
	const struct entry *e = lookup(o, key);

	return e != NULL ? e->key : NULL;
}

bool offsets_dirty(const struct offsets *o)
{
	return o->dirty;
}

/* Marks a write of the map as it is now; returns its generation. */
static uint64_t begin(struct offsets *o)
{
	/* A fresh number per attempt: a failed attempt may still have put its
	 * file in place (directory fsync failure), and two different documents
	 * must never share a generation. */
	o->writing = ++o->attempted;
	o->writing_changes = o->changes;
	return o->writing;
}

/* offsets.h */
uint64_t offsets_next_generation(struct offsets *o)
{
	return ++o->attempted;
}

/* offsets.h */
void offsets_written_outside(struct offsets *o, const char *key, uint64_t gen, const char *device)
{
	const struct entry *e = lookup(o, key);
	char *ckey = NULL;

	if (e == NULL && canonical(key, KEY, &ckey) == 0) {
		e = lookup(o, ckey);
		free(ckey);
	}
	if (e != NULL && o->ops->written != NULL)
		o->ops->written(o->ctx, e->key, e->value, gen, device);
}

/* Ends the write in flight: counts it, and cleans the store when nothing
 * changed since it began. */
static void end(struct offsets *o, int rc)
{
	if (rc != 0) {
		(*o->flush_failures)++;
	} else {
		if (o->changes == o->writing_changes) {
			o->dirty = false;
			changed_clear(o);
		}
		*o->generation = o->writing;
		(*o->flushes)++;
	}
	o->writing = 0;
}

int offsets_flush(struct offsets *o, char *errbuf, size_t errlen)
{
	int rc;

	if (o->writing != 0) {
		snprintf(errbuf, errlen, "offset store: %s", offsets_strerror(OFFSETS_ERR_BUSY));
		return OFFSETS_ERR_BUSY;
	}
	if (!o->dirty) {
		(*o->skipped_clean)++;
		return 0;
	}
	o->done = NULL;
	if (errlen > 0)
		errbuf[0] = '\0';
	rc = o->ops->store(o->ctx, o, begin(o), errbuf, errlen);
	if (rc != OFFSETS_INPROGRESS)
		end(o, rc);
	return rc;
}

int offsets_write(struct offsets *o, offsets_done_fn done, void *arg)
{
	char errbuf[1024];
	uint64_t gen;
	int rc;

	if (o->writing != 0)
		return OFFSETS_ERR_BUSY;
	if (!o->dirty) {
		(*o->skipped_clean)++;
		done(arg, 0, NULL);
		return 0;
	}
	gen = begin(o);
	o->done = done;
	o->done_arg = arg;
	errbuf[0] = '\0';
	rc = o->ops->store(o->ctx, o, gen, errbuf, sizeof(errbuf));
	if (rc != OFFSETS_INPROGRESS)
		offsets_write_done(o, gen, rc, rc != 0 || errbuf[0] != '\0' ? errbuf : NULL);
	return 0;
}

void offsets_verify(struct offsets *o)
{
	if (o->writing == 0 && o->ops->moved != NULL && o->ops->moved(o->ctx))
		offsets_load_mark_dirty(o);
}

void offsets_write_done(struct offsets *o, uint64_t generation, int rc, const char *why)
{
	offsets_done_fn done = o->done;

	if (o->writing == 0 || generation != o->writing)
		return; /* not the write in flight: a backend's late duplicate */
	end(o, rc);
	o->done = NULL;
	if (done != NULL)
		done(o->done_arg, rc, why);
}

bool offsets_writing(const struct offsets *o)
{
	return o->writing != 0;
}

size_t offsets_count(const struct offsets *o)
{
	return o->n;
}

const char *offsets_key(const struct offsets *o, size_t i)
{
	return i < o->n ? o->ents[i].key : NULL;
}

const char *offsets_value(const struct offsets *o, size_t i)
{
	return i < o->n ? o->ents[i].value : NULL;
}

void offsets_stats(const struct offsets *o, struct offsets_stats *out)
{
	*out = (struct offsets_stats){.generation = *o->generation,
	                              .flushes = *o->flushes,
	                              .flush_failures = *o->flush_failures,
	                              .skipped_clean = *o->skipped_clean,
	                              .loaded_from_prev = *o->from_prev != 0};
}

static const struct stats_desc stat_descs[] = {
    {"offsets_generation", STATS_GAUGE, "generation of the last durable offset write", 0},
    {"offsets_flushes", STATS_COUNTER, "durable offset writes", 0},
    {"offsets_flush_failures", STATS_COUNTER,
     "offset writes that failed (the previous generation stayed in place)", 0},
    {"offsets_flushes_skipped", STATS_COUNTER, "offset flushes skipped: nothing changed", 0},
    {"offsets_loaded_from_prev", STATS_GAUGE,
     "1 when the offsets were loaded from the previous generation", 0},
};

int offsets_register_stats(struct offsets *o, struct stats *st)
{
	uint64_t **ptr[] = {&o->generation, &o->flushes, &o->flush_failures, &o->skipped_clean,
	                    &o->from_prev};
	uint64_t *cell[5];

	for (size_t i = 0; i < 5; i++)
		if (stats_register(st, &stat_descs[i], NULL, &cell[i], NULL) != 0)
			return OFFSETS_ERR_NOMEM;
	for (size_t i = 0; i < 5; i++) {
		*cell[i] += **ptr[i];
		*ptr[i] = cell[i];
	}
	return 0;
}

const char *offsets_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case OFFSETS_ERR_IO:
		return "offset store I/O error";
	case OFFSETS_ERR_CORRUPT:
		return "no valid offset store generation";
	case OFFSETS_ERR_FULL:
		return "offset store full";
	case OFFSETS_ERR_NOMEM:
		return "out of memory";
	case OFFSETS_ERR_ARG:
		return "offset key or value is not valid JSON of the expected shape";
	case OFFSETS_ERR_LOCKED:
		return "offset store in use by another process";
	case OFFSETS_ERR_NODIR:
		return "offset store directory missing";
	case OFFSETS_ERR_BUSY:
		return "an offset write is in flight";
	case OFFSETS_INPROGRESS:
		return "offset write in progress";
	case OFFSETS_ERR_CONFIG:
		return "offset store settings unusable";
	default:
		return "unknown offset store error";
	}
}

int offsets_open(const struct offset_backend_ops *ops, void *ctx, struct offsets **out,
                 char *errbuf, size_t errlen)
{
	struct offsets *o = calloc(1, sizeof(*o));
	uint64_t gen = 0;
	int from_prev = 0, rc;

	*out = NULL;
	if (o == NULL) {
		ops->close(ctx);
		snprintf(errbuf, errlen, "offset store: out of memory");
		return OFFSETS_ERR_NOMEM;
	}
	o->ops = ops;
	o->ctx = ctx;
	o->chg_all = true; /* until the first write */
	o->generation = &o->own.generation;
	o->flushes = &o->own.flushes;
	o->flush_failures = &o->own.flush_failures;
	o->skipped_clean = &o->own.skipped_clean;
	o->from_prev = &o->own.from_prev;
	rc = ops->load(ctx, o, &gen, &from_prev, errbuf, errlen);
	if (rc != 0) {
		offsets_destroy(o);
		return rc;
	}
	o->attempted = gen;
	o->own.generation = gen;
	o->own.from_prev = from_prev != 0;
	*out = o;
	return 0;
}

void offsets_destroy(struct offsets *o)
{
	if (o == NULL)
		return;
	offsets_load_reset(o);
	free(o->ents);
	free(o->chg);
	free(o->chg_bits);
	hash_free(&o->index);
	if (o->ops != NULL && o->ops->close != NULL)
		o->ops->close(o->ctx);
	free(o);
}

int offsets_remove(struct offsets *o, const char *key)
{
	int rc;

	if (offsets_get(o, key) == NULL)
		return 0;
	rc = offsets_load_record(o, key, NULL);
	if (rc == 0) {
		o->dirty = true;
		o->changes++;
	}
	return rc;
}

int offsets_adopt(struct offsets *o, const char *connector, char *errbuf, size_t errlen)
{
	if (errlen > 0)
		errbuf[0] = '\0';
	return o->ops->adopt != NULL ? o->ops->adopt(o->ctx, o, connector, errbuf, errlen) : 0;
}

int offsets_fd(const struct offsets *o)
{
	return o->ops->fd != NULL ? o->ops->fd(o->ctx) : -1;
}

void offsets_poll(struct offsets *o)
{
	if (o->ops->poll != NULL)
		o->ops->poll(o->ctx);
}

void offsets_load_note(struct offsets *o, bool warn, const char *text)
{
	if (o->note_warn && !warn)
		return;
	snprintf(o->note, sizeof(o->note), "%s", text);
	o->note_warn = warn;
}

const char *offsets_load_said(const struct offsets *o, bool *warn)
{
	*warn = o->note_warn;
	return o->note;
}

void offsets_load_mark_dirty(struct offsets *o)
{
	o->dirty = true;
	o->changes++;
	o->chg_all = true;
}

bool offsets_changed(const struct offsets *o, const uint32_t **idx, size_t *n)
{
	*idx = o->chg;
	*n = o->nchg;
	return !o->chg_all;
}
