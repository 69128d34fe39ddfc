/* commits: acknowledged prefix -> offset store (core/commits.h).
 *
 * Why an offset is never stored past an unacknowledged record: the only
 * text stored is what commits_take rendered from acks_take, the contiguous
 * acknowledged prefix (core/acks.c); a put that failed is retried with the
 * same text, which names a prefix that was acknowledged then and stays so;
 * and a newer store of the key drops the older text first, so that a retry
 * never moves an offset back over a newer one. */
#include "core/commits.h"

#include "config/settings.h"
#include "core/source.h"
#include "offsets/offsets_doc.h"

#include "core/acks.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "offsets/offsets.h"
#include "util/clock.h"
#include "util/rstr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A put that failed, kept until it succeeds or a newer one supersedes it. */
struct retry {
	const char *key; /* an rstr held */
	char *json;
	bool outside; /* a transaction wrote it: gen, device */
	uint64_t gen;
	char *device;
};

struct commits {
	struct offsets *o;
	commits_render_fn render;
	const bool *stopping; /* the worker's stop flag (borrowed) */
	struct retry *retries;
	size_t nretries, capretries;
	bool moved;          /* an offset moved since the last commits_put_all */
	int last;            /* outcome of the last completed offset write */
	int64_t last_ms;     /* loop_now_ms() when it completed, 0: none */
	int64_t verified_ms; /* loop_now_ms() of the last offsets_verify */
	/* The gauges, registered by the worker; own cells until then. */
	uint64_t *cells[3];
	uint64_t own[3];
};

_Static_assert((int)COMMITS_ERR_NOMEM < (int)OFFSETS_ERR_CONFIG,
               "commits' codes stay apart from the store's it passes on");

const char *commits_strerror(int rc)
{
	switch (rc) {
	case COMMITS_OK:
		return "ok";
	case COMMITS_ERR_NOMEM:
		return "out of memory";
	case COMMITS_ERR_SOURCE:
		return "the source refuses the offset";
	case COMMITS_ERR_STORE:
		return "the store refuses the offset";
	case COMMITS_ERR_WRITE:
		return "writing the offsets failed";
	default:
		return offsets_strerror(rc);
	}
}

int commits_new(struct offsets *o, commits_render_fn render, struct commits **out)
{
	struct commits *cm = calloc(1, sizeof(*cm));

	*out = NULL;
	if (cm == NULL)
		return COMMITS_ERR_NOMEM;
	cm->o = o;
	cm->render = render;
	for (size_t i = 0; i < 3; i++)
		cm->cells[i] = &cm->own[i];
	*out = cm;
	return COMMITS_OK;
}

void commits_set_store(struct commits *cm, struct offsets *o)
{
	cm->o = o;
}

void commits_set_stopping(struct commits *cm, const bool *stopping)
{
	cm->stopping = stopping;
}

static void free_retry(struct retry *r)
{
	rstr_drop(r->key);
	free(r->json);
	free(r->device);
}

void commits_destroy(struct commits *cm)
{
	if (cm == NULL)
		return;
	for (size_t i = 0; i < cm->nretries; i++)
		free_retry(&cm->retries[i]);
	free(cm->retries);
	free(cm);
}

uint64_t **commits_cell(struct commits *cm, enum commits_gauge g)
{
	return &cm->cells[g];
}

int commits_take(struct commits *cm, struct partition *p, char **json)
{
	struct acks_fifo *f = partition_flight(p);
	struct src_offset off;

	*json = NULL;
	if (f == NULL || !acks_take(f, &off))
		return 0;
	if ((*json = cm->render(p, &off)) == NULL) {
		f->advanced = true; /* taken again at the next flush */
		return COMMITS_ERR_NOMEM;
	}
	return 1;
}

/* Forgets the kept put of key: a newer one was stored, or is kept instead. */
static void forget(struct commits *cm, const char *key)
{
	for (size_t i = 0; i < cm->nretries; i++) {
		if (strcmp(cm->retries[i].key, key) != 0)
			continue;
		free_retry(&cm->retries[i]);
		cm->retries[i] = cm->retries[--cm->nretries];
		return;
	}
}

/* Keeps a failed put of key for the next flush. 0 or COMMITS_ERR_NOMEM. */
static int keep(struct commits *cm, const char *key, const char *json,
                const struct commit_origin *origin)
{
	struct retry r = {0};

	if (cm->nretries == cm->capretries) {
		size_t cap = cm->capretries ? 2 * cm->capretries : 4;
		struct retry *grown = realloc(cm->retries, cap * sizeof(*grown));

		if (grown == NULL)
			return COMMITS_ERR_NOMEM;
		cm->retries = grown;
		cm->capretries = cap;
	}
	r.json = strdup(json);
	if (origin != NULL) {
		r.outside = true;
		r.gen = origin->gen;
		r.device = strdup(origin->device);
	}
	if (r.json == NULL || (origin != NULL && r.device == NULL)) {
		free(r.json);
		free(r.device);
		return COMMITS_ERR_NOMEM;
	}
	r.key = rstr_hold(key);
	cm->retries[cm->nretries++] = r;
	return 0;
}

/* The put itself: json as key's value, and where a transaction wrote it. */
static int put(struct commits *cm, const char *key, const char *json, bool outside, uint64_t gen,
               const char *device)
{
	int rc = offsets_put_shared(cm->o, key, json);

	if (rc == 0 && outside)
		offsets_written_outside(cm->o, key, gen, device);
	return rc;
}

int commits_store(struct commits *cm, struct partition *p, const char *json,
                  const struct commit_origin *origin)
{
	struct acks_fifo *f = partition_flight(p);
	int rc;

	forget(cm, p->key);
	rc = put(cm, p->key, json, origin != NULL, origin ? origin->gen : 0,
	         origin ? origin->device : NULL);
	if (rc != 0 && keep(cm, p->key, json, origin) != 0) {
		if (f != NULL)
			f->advanced = true; /* taken again at the next flush */
		return COMMITS_ERR_NOMEM;
	}
	/* Stored, or its text kept: the source's reference is not needed. */
	if (f != NULL)
		acks_settle(f);
	partition_land(p);
	return rc;
}

int commits_anchor(struct commits *cm, struct partition *p, const struct src_offset *off)
{
	char *json;
	int rc;

	if (offsets_get(cm->o, p->key) != NULL || partition_inflight(p) > 0 ||
	    partition_advanced(p))
		return 0;
	if ((json = cm->render(p, off)) == NULL)
		return COMMITS_ERR_NOMEM;
	forget(cm, p->key);
	rc = offsets_put_shared(cm->o, p->key, json);
	free(json);
	return rc == 0 ? 1 : rc;
}

/* Puts again what failed before; those that fail again stay. */
static void retry_all(struct commits *cm)
{
	size_t kept = 0;

	for (size_t i = 0; i < cm->nretries; i++) {
		struct retry *r = &cm->retries[i];

		if (put(cm, r->key, r->json, r->outside, r->gen, r->device) == 0)
			free_retry(r);
		else
			cm->retries[kept++] = *r;
	}
	cm->nretries = kept;
}

void commits_put_all(struct commits *cm, struct partitions *t, bool eos)
{
	/* A store acknowledged later is served from its descriptor; this
	 * catches a wake-up its queue did not give (it signals only when it
	 * turns non-empty). */
	offsets_poll(cm->o);
	retry_all(cm);
	/* Exactly-once: offsets reach the store when their transaction
	 * commits (core/eos.c), not when their records are acknowledged. */
	for (size_t i = 0; i < partitions_count(t) && !eos; i++) {
		struct partition *p = partitions_at(t, i);
		char *json;

		if (commits_take(cm, p, &json) == 0)
			continue;
		if (json == NULL || commits_store(cm, p, json, NULL) != 0)
			log_error(
			    "offsets: cannot record %s (out of memory or too many partitions)",
			    p->key);
		free(json);
	}
	cm->moved = false;
}

/* Pauses reading while offsets cannot be saved, and resumes when they can. */
static void note_flush(struct commits *cm, int rc)
{
	cm->last = rc;
	*cm->cells[COMMITS_FLUSH_TIME] = (uint64_t)(clock_wall_ns() / 1000000);
	*cm->cells[COMMITS_FLUSH_OK] = rc == 0;
	if (rc == 0) {
		if (commits_paused(cm) && !(cm->stopping != NULL && *cm->stopping))
			log_notice("offsets: saved again; reading resumes");
		*cm->cells[COMMITS_FAILED_IN_A_ROW] = 0;
		return;
	}
	if (++*cm->cells[COMMITS_FAILED_IN_A_ROW] == FLUSH_FAILURES_BEFORE_PAUSE)
		log_warn("offsets: %d flushes in a row failed: reading pauses until offsets can be "
		         "saved, so that a crash cannot replay more than was acknowledged since",
		         FLUSH_FAILURES_BEFORE_PAUSE);
}

/* The completion of an offset write (offsets_done_fn): for the file store
 * at once, for a store acknowledged later from the loop. */
static void on_flushed(void *arg, int rc, const char *why)
{
	struct commits *cm = arg;

	if (rc != 0)
		log_error("offsets: %s (the previous offsets stay in place; retrying at the next "
		          "flush)",
		          why != NULL ? why : offsets_strerror(rc));
	else if (why != NULL)
		log_warn("offsets: %s", why);
	else
		log_debug("offsets: flushed");
	cm->last_ms = loop_now_ms();
	note_flush(cm, rc);
}

void commits_write(struct commits *cm, int64_t now)
{
	/* A store deleted under skiff is written whole again, or the write
	 * fails saying so, even when no offset moved. */
	offsets_verify(cm->o);
	cm->verified_ms = now;
	if (!offsets_dirty(cm->o)) {
		note_flush(cm, 0);
		return;
	}
	if (!offsets_writing(cm->o))
		offsets_write(cm->o, on_flushed, cm);
}

void commits_moved(struct commits *cm)
{
	cm->moved = true;
}

bool commits_pending(const struct commits *cm)
{
	return cm->moved;
}

bool commits_due(const struct commits *cm)
{
	return cm->moved || cm->nretries > 0 || offsets_dirty(cm->o);
}

void commits_idle_check(struct commits *cm, int64_t now, int64_t interval)
{
	if (!commits_due(cm) && !offsets_writing(cm->o) && now - cm->verified_ms >= interval) {
		offsets_verify(cm->o);
		cm->verified_ms = now;
	}
}

bool commits_paused(const struct commits *cm)
{
	return *cm->cells[COMMITS_FAILED_IN_A_ROW] >= FLUSH_FAILURES_BEFORE_PAUSE;
}

uint64_t commits_failures(const struct commits *cm)
{
	return *cm->cells[COMMITS_FAILED_IN_A_ROW];
}

int commits_last(const struct commits *cm, int64_t *at_ms)
{
	if (at_ms != NULL)
		*at_ms = cm->last_ms;
	return cm->last;
}

/* ---- KIP-875's offset edits ------------------------------------------------ */

/* Whether cs's source would use entry e (a reset always passes: junk
 * stored earlier must stay removable, as Connect allows), and it lies
 * within the source's data (check_reach: not past a table's newest row or
 * a file's end, not inside a line; no --force here, `skiff offsets set
 * --force` with skiff stopped). *settled: what check_reach would store
 * instead (NULL: e as sent; caller frees). Returns 0, COMMITS_ERR_SOURCE
 * with errbuf, or COMMITS_ERR_NOMEM. */
static int check_one(const struct commits *cm, const struct connector_settings *cs,
                     const struct offsets_doc_entry *e, char **settled, char *errbuf, size_t errlen)
{
	char why[1024] = "", *part, *off, *key;
	int rc = 0, src = 0;

	*settled = NULL;
	if (e->offset == NULL || cs->ops->check_offset == NULL)
		return 0;
	part = cJSON_PrintUnformatted(e->partition);
	off = strndup(e->offset, e->olen);
	key = offsets_doc_key(cs->name, e->partition);
	if (part == NULL || off == NULL || key == NULL)
		rc = COMMITS_ERR_NOMEM;
	else if ((src = cs->ops->check_offset(cs->cfg, part, off, why, sizeof(why))) ==
	         SOURCE_ERR_FOREIGN)
		src = 0; /* stored, as Connect stores it */
	else if (src == 0 && cs->ops->check_reach != NULL)
		src = cs->ops->check_reach(cs->cfg, part, off, offsets_get(cm->o, key), true,
		                           settled, why, sizeof(why));
	if (src != 0) {
		snprintf(errbuf, errlen, "%s", why);
		rc = COMMITS_ERR_SOURCE;
	} else if (rc == 0 && why[0] != '\0') {
		log_info("connector %s: %s", cs->name, why);
	}
	free(part);
	free(off);
	free(key);
	return rc;
}

/* Applies one PATCH entry: an offset is stored as sent (or as settled,
 * when not NULL), null removes. */
static int alter_one(struct commits *cm, const char *name, const struct offsets_doc_entry *e,
                     const char *settled, char *errbuf, size_t errlen)
{
	char *key = offsets_doc_key(name, e->partition), *val = NULL;
	int rc = COMMITS_ERR_STORE;

	if (e->offset != NULL)
		val = settled != NULL ? strdup(settled) : strndup(e->offset, e->olen);
	if (key == NULL || (e->offset != NULL && val == NULL))
		rc = COMMITS_ERR_NOMEM;
	else if ((val ? offsets_put(cm->o, key, val) : offsets_remove(cm->o, key)) == 0)
		rc = 0;
	if (rc == COMMITS_ERR_STORE)
		snprintf(errbuf, errlen,
		         "the offset store refuses %s (too many partitions or too "
		         "large)",
		         key);
	free(key);
	free(val);
	return rc;
}

int commits_print(const struct commits *cm, const char *connector, char **json)
{
	return offsets_doc_print(cm->o, connector, json) == 0 ? 0 : COMMITS_ERR_NOMEM;
}

int commits_alter(struct commits *cm, const struct connector_settings *cs,
                  const struct offsets_doc_entry *e, size_t n, char *errbuf, size_t errlen)
{
	const char *part;
	size_t plen;
	int rc = 0;

	if (e == NULL) {
		/* DELETE: every stored partition of this connector. */
		for (size_t k = offsets_count(cm->o); k-- > 0 && rc == 0;)
			if (offsets_doc_own_key(offsets_key(cm->o, k), cs->name, &part, &plen) &&
			    offsets_remove(cm->o, offsets_key(cm->o, k)) != 0)
				rc = COMMITS_ERR_STORE;
	} else {
		/* All checked before any is stored: a refused PATCH changes
		 * nothing. */
		char **settled = calloc(n, sizeof(*settled));

		rc = settled != NULL ? 0 : COMMITS_ERR_NOMEM;
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = check_one(cm, cs, &e[k], &settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = alter_one(cm, cs->name, &e[k], settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && settled != NULL; k++)
			free(settled[k]);
		free(settled);
	}
	if (rc == COMMITS_ERR_NOMEM)
		snprintf(errbuf, errlen, "out of memory");
	return rc;
}

static void on_written(void *arg, int rc, const char *why)
{
	int *out = arg;

	*out = rc;
}

int commits_write_now(struct commits *cm, bool *deferred, char *errbuf, size_t errlen)
{
	int done = 1; /* not completed yet */

	*deferred = false;
	if (offsets_writing(cm->o) || offsets_write(cm->o, on_written, &done) != 0) {
		*deferred = true;
		return 0;
	}
	if (done < 0) {
		snprintf(errbuf, errlen,
		         "the offsets were changed in memory but could not be "
		         "written: %s",
		         offsets_strerror(done));
		return COMMITS_ERR_WRITE;
	}
	return 0;
}
