/* connectors: the connector slots and each connector's lifecycle
 * (core/connectors.h).
 *
 * The promise under pause and stop: a paused connector polls nothing and
 * produces nothing more, and its records in flight still acknowledge and
 * advance its offsets as ever. A stop first does the same, dropping the
 * part of the last batch not yet handed to the producer (never submitted,
 * so no offset passes it); once nothing of the connector is in flight its
 * acknowledged offsets go into the store and the source is closed
 * (connector_close with CLOSE_KEEP_PREFIX). A resume opens the source
 * again, which reads on from the stored offsets: exactly the records after
 * the last acknowledged one, unless KIP-875's PATCH or DELETE changed the
 * stored offsets while it was stopped. A removal or the exit abandons what
 * is in flight instead (CLOSE_ABANDON): its acknowledgements advance
 * nothing, and the next start reads those records again. Main loop only. */
#include "core/connectors.h"

#include "config/settings.h"
#include "core/active_topics.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/pipeline.h"
#include "core/stats.h"
#include "core/tolerance.h"
#include "core/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *connectors_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case CONNECTORS_ERR_STATE:
		return "the connector is FAILED or restarting";
	case CONNECTORS_ERR_OPEN:
		return "the connector's source did not open";
	case CONNECTORS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown connectors error";
	}
}

/* ---- slots ----------------------------------------------------------------- */

/* When Kafka last acknowledged a record of a connector closed for good
 * (changed or removed by a reload or a REST call, reopened after a
 * producer's rebuild), kept by its name as the registry keeps its counters
 * (stats_retire): opened again under that name, it shows its acked count
 * and the time of the last of them, never "acked 6000, last ack never". */
struct last_ack {
	char *name;
	int64_t ms; /* loop_now_ms() */
};

struct connectors {
	struct connectors_conf conf;
	struct acks *acks; /* borrowed (connectors_set_acks) */
	struct conn **slots;
	size_t n, cap;
	struct last_ack *kept; /* one per name closed after an acknowledgement */
	size_t nkept;
	uint64_t epoch; /* connectors_epoch */
};

/* c's state or trace changed, or c came or went (connectors_epoch). */
static void changed(struct conn *c)
{
	c->set->epoch++;
}

uint64_t connectors_epoch(const struct connectors *set)
{
	return set->epoch;
}

int connectors_new(const struct connectors_conf *conf, struct connectors **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return CONNECTORS_ERR_NOMEM;
	(*out)->conf = *conf;
	return 0;
}

void connectors_set_acks(struct connectors *set, struct acks *acks)
{
	set->acks = acks;
}

size_t connectors_count(const struct connectors *set)
{
	return set->n;
}

struct conn *connectors_at(const struct connectors *set, size_t i)
{
	return set->slots[i];
}

/* Zeroes c but for its set. */
static void clear(struct conn *c)
{
	struct connectors *set = c->set;

	memset(c, 0, sizeof(*c));
	c->set = set;
}

struct conn *connectors_slot(struct connectors *set)
{
	struct conn *c;

	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 8;
		struct conn **slots = realloc(set->slots, cap * sizeof(*slots));

		if (slots == NULL)
			return NULL;
		set->slots = slots;
		set->cap = cap;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->set = set;
	set->slots[set->n++] = c;
	set->epoch++; /* a connector more, as the query counts them */
	return c;
}

void connectors_destroy(struct connectors *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->n; i++) {
		if (!set->slots[i]->removed)
			connector_close(set->slots[i], CLOSE_ABANDON);
		free(set->slots[i]);
	}
	for (size_t i = 0; i < set->nkept; i++)
		free(set->kept[i].name);
	free(set->kept);
	free(set->slots);
	free(set);
}

/* ---- open and close ---------------------------------------------------------- */

/* Keeps ms, the last acknowledgement of connector name, which closes. Out
 * of memory loses it: the reopened connector says "last ack never" until
 * its next acknowledgement, nothing worse. */
static void keep_last_ack(struct connectors *set, const char *name, int64_t ms)
{
	struct last_ack *kept;
	char *copy;

	if (ms <= 0)
		return;
	for (size_t i = 0; i < set->nkept; i++)
		if (strcmp(set->kept[i].name, name) == 0) {
			set->kept[i].ms = ms;
			return;
		}
	if ((copy = strdup(name)) == NULL ||
	    (kept = realloc(set->kept, (set->nkept + 1) * sizeof(*kept))) == NULL) {
		free(copy);
		return;
	}
	set->kept = kept;
	set->kept[set->nkept++] = (struct last_ack){.name = copy, .ms = ms};
}

/* The last acknowledgement kept for connector name, 0: none. */
static int64_t kept_last_ack(const struct connectors *set, const char *name)
{
	for (size_t i = 0; i < set->nkept; i++)
		if (strcmp(set->kept[i].name, name) == 0)
			return set->kept[i].ms;
	return 0;
}

/* A fresh slot c for cs: zeroed, its env, batch and counters made and
 * registered. Returns 0 or WORKER_ERR_NOMEM with errbuf. */
static int make(struct conn *c, const struct connector_settings *cs, char *errbuf, size_t errlen)
{
	const struct connector_hooks *life = c->set->conf.hooks;

	clear(c);
	c->cs = cs;
	c->ready = true;
	c->last_ack_ms = kept_last_ack(c->set, cs->name);
	tolerance_init(&c->tol, cs->cfg);
	life->source_env(c->set->conf.ctx, c);
	c->records = calloc(BATCH_RECORDS, sizeof(*c->records));
	if (c->records == NULL || life->source_register(c) != 0) {
		snprintf(errbuf, errlen, "connector %s: out of memory", cs->name);
		free(c->records);
		c->records = NULL;
		free((char *)c->env.state_file);
		c->env.state_file = NULL;
		return WORKER_ERR_NOMEM;
	}
	return 0;
}

int connector_open(struct conn *c, const struct connector_settings *cs, enum connector_open_how how,
                   char *errbuf, size_t errlen)
{
	char why[512]; /* a source's reason; errbuf adds the connector's name */
	int rc;

	if (how == OPEN_NEW && (rc = make(c, cs, errbuf, errlen)) != 0)
		return rc;
	changed(c); /* a new connector, or one open again */
	rc = cs->ops->open(cs->cfg, &c->env, &c->ctx, why, sizeof(why));
	if (rc == 0) {
		c->batch.n = c->next = 0;
		c->ready = true; /* read what is there at once */
		return 0;
	}
	snprintf(errbuf, errlen, "connector %s: %s", cs->name, why);
	c->ctx = NULL;
	return rc == SOURCE_ERR_NOMEM    ? WORKER_ERR_NOMEM
	       : rc == SOURCE_ERR_CONFIG ? WORKER_ERR_CONFIG
	                                 : WORKER_ERR;
}

/* c's acknowledged prefixes into the store, through the one path
 * (core/commits.c), and its partitions let go of. A put that fails is kept
 * and tried again at the next flush: c's source is closed by then, its
 * text is not. */
static void keep_prefix(struct conn *c)
{
	struct connectors *set = c->set;
	struct commits *commits = set->conf.commits;

	for (size_t i = 0; i < partitions_count(set->conf.parts); i++) {
		struct partition *p = partitions_at(set->conf.parts, i);
		char *json;

		if (p->conn != c)
			continue;
		if (commits_take(commits, p, &json) != 0 &&
		    (json == NULL || commits_store(commits, p, json, NULL) != 0))
			log_error("offsets: cannot record %s (out of memory or too many "
			          "partitions): retrying at the next flush; until then its last "
			          "records would be read again after a resume",
			          p->key);
		free(json);
		partition_abandon(set->acks, p);
	}
	set->conf.hooks->flush_soon(set->conf.ctx);
}

/* Frees everything of c but the slot itself, which becomes a tombstone. */
static void release(struct conn *c)
{
	const struct connectors_conf *conf = &c->set->conf;

	conf->hooks->log_counters(conf->ctx); /* what closing it lost (file source) */
	stats_retire(conf->stats, c->cs->name);
	keep_last_ack(c->set, c->cs->name, c->last_ack_ms);
	for (int i = 0; i < c->nwatches; i++)
		loop_fd_del(conf->loop, c->watches[i]);
	loop_timer_del(conf->loop, c->deadline);
	free(c->records);
	free(c->trace);
	conf->hooks->source_free(c);
	connector_forget_topics(c);
	clear(c);
	c->stopped = c->removed = true;
	changed(c);
}

void connector_close(struct conn *c, enum connector_close_how how)
{
	struct connectors *set = c->set;

	/* A slot no connector opened in (a reload's added connector whose
	 * offsets could not be read): nothing to close, a tombstone at once. */
	if (c->cs == NULL) {
		c->stopped = c->removed = true;
		changed(c);
		return;
	}
	if (how == CLOSE_KEEP_PREFIX)
		keep_prefix(c);
	else
		partitions_drop_conn(set->conf.parts, set->acks, c, set->conf.hooks->unshow);
	c->cs->ops->close(c->ctx);
	c->ctx = NULL;
	if (how == CLOSE_ABANDON)
		release(c);
}

/* ---- failure ------------------------------------------------------------- */

void connector_fail(struct conn *c, bool config, const char *why)
{
	if (c->stopped)
		return;
	/* Acknowledgements of records before the failed one still advance
	 * its offsets. */
	log_error("connector %s stopped: %s. Its offset stays before the record that failed; "
	          "fix the cause and restart it (POST /connectors/%s/restart) or skiff to "
	          "resume from there",
	          c->cs->name, why, c->cs->name);
	c->stopped = true;
	c->config_error = config;
	free(c->trace);
	c->trace = strdup(why); /* NULL: /status says FAILED without the text */
	c->batch.n = c->next = 0;
	changed(c);
}

void connector_fail_open(struct conn *c, bool config, const char *why)
{
	if (c->records == NULL) {
		connector_close(c, CLOSE_ABANDON);
		return;
	}
	c->stopped = true;
	c->config_error = config;
	free(c->trace);
	c->trace = strdup(why); /* NULL: FAILED without the text */
	changed(c);
}

int connectors_exit_code(const struct connectors *set)
{
	bool config = true, any = false;

	for (size_t i = 0; i < set->n; i++) {
		const struct conn *c = set->slots[i];

		if (c->removed)
			continue;
		if (!c->stopped)
			return 0;
		any = true;
		config &= c->config_error;
	}
	/* None at all: the REST API or the fleet removed the last one (or
	 * gave none yet), and may add more. */
	if (!any && set->conf.rest)
		return 0;
	if (set->conf.steered)
		return 0;
	return config ? WORKER_EXIT_CONFIG : WORKER_EXIT_TEMPFAIL;
}

/* ---- pause, resume, stop, restart ------------------------------------------ */

/* Records of c still waiting for a delivery report (a failed one waits no
 * more: it holds its slot, but nothing will come for it). */
static uint32_t pending(const struct conn *c)
{
	uint32_t n = 0;

	const struct partitions *parts = c->set->conf.parts;

	for (size_t i = 0; i < partitions_count(parts); i++)
		if (partitions_at(parts, i)->conn == c)
			n += partition_pending(partitions_at(parts, i));
	return n;
}

/* Opens stopped c's source again from the stored offsets: 0 or the
 * WORKER_ERR_* code, logged, errbuf saying why. */
static int reopen(struct conn *c, char *errbuf, size_t errlen)
{
	int rc = connector_open(c, c->cs, OPEN_REGISTERED, errbuf, errlen);

	if (rc != 0)
		log_error("%s", errbuf);
	return rc;
}

/* The second half of a restart: c is closed, its offsets in the store. Its
 * failure is forgotten and it opens again as it ran before; failing that, it
 * is FAILED with the reason. */
static void finish_restart(struct conn *c)
{
	char why[1024];
	int rc;

	c->restarting = false;
	c->stopped = c->config_error = false;
	free(c->trace);
	c->trace = NULL;
	changed(c);
	rc = reopen(c, why, sizeof(why));
	if (rc != 0) {
		connector_fail(c, rc == WORKER_ERR_CONFIG, why);
		return;
	}
	c->run = c->restart_to;
	log_notice("connector %s: restarted (REST API), reading on from its stored offsets",
	           c->cs->name);
}

/* A stopping connector none of whose records waits for Kafka any more: its
 * acknowledged offsets into the store (written at the next flush, due at
 * once), then its source closed; a restart opens it again. A failed
 * connector's failed record (and the acknowledged ones behind it) are let
 * go here: its offset stays before them, so they are read again. */
static void finish_stop(struct conn *c)
{
	const struct connectors_conf *conf = &c->set->conf;

	if (c->run != CONN_STOPPING || pending(c) > 0)
		return;
	/* Exactly-once: c's offsets reach the store with the transaction that
	 * holds its records. Stored here, before it committed, a crash lost
	 * them: the store was past the records the restart's abort took (2,346
	 * lines after a stop and a kill -9 300 ms later). The commit ends this
	 * turn, then connectors_committed finishes the stop. */
	if (conf->hooks->txn_holds(conf->ctx, c)) {
		conf->hooks->txn_commit_soon(conf->ctx);
		return;
	}
	connector_close(c, CLOSE_KEEP_PREFIX);
	c->run = CONN_STOPPED;
	changed(c);
	if (c->restarting)
		finish_restart(c);
	else
		log_notice("connector %s: stopped (REST API); its offsets are in the store",
		           c->cs->name);
}

void connectors_committed(struct connectors *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (!set->slots[i]->removed)
			finish_stop(set->slots[i]);
}

void connector_acked(struct partition *p, bool ok)
{
	if (ok) {
		p->acked++;
		p->last_ack_ms = pipeline_turn_epoch_ms(p->conn->set->conf.pipe);
	}
	/* acks_done has counted this one out already. */
	if (p->conn->run == CONN_STOPPING && partition_pending(p) == 0)
		finish_stop(p->conn);
}

void connector_produced(const struct record *r, const char *topic, size_t vlen)
{
	struct partition *p = r->part;

	p->produced++;
	p->read_bytes += r->value.kind == VALUE_STRING ? r->value.len : vlen;
	partition_head(p, pipeline_turn_ms(p->conn->set->conf.pipe));
	/* The connector's active topics (Connect's): out of memory leaves this
	 * one unlisted, as Connect's list is only informative. */
	(void)active_topics_note(&p->conn->topics, topic);
}

void connector_forget_topics(struct conn *c)
{
	active_topics_free(c->topics);
	c->topics = NULL;
}

void connector_restart(struct conn *c)
{
	if (c->restarting || (c->run == CONN_STOPPED && !c->stopped) || c->run == CONN_STOPPING)
		return;
	c->restart_to = c->run == CONN_PAUSED ? CONN_PAUSED : CONN_RUNNING;
	c->batch.n = c->next = 0; /* never submitted: read again */
	c->restarting = true;
	c->stop_paused = c->restart_to == CONN_PAUSED;
	c->run = CONN_STOPPING;
	changed(c);
	log_info("connector %s: restarting (REST API)", c->cs->name);
	finish_stop(c);
}

/* What pause, resume and stop share: a FAILED or restarting connector is
 * refused, a STOPPED one opens again unless stopped again. */
static int ready_for(struct conn *c, bool stop, char *errbuf, size_t errlen)
{
	if (c->stopped || c->restarting) {
		snprintf(errbuf, errlen,
		         "connector %s %s: POST /connectors/%s/restart resumes it from its "
		         "stored offsets",
		         c->cs->name, c->restarting ? "is restarting" : "FAILED", c->cs->name);
		return CONNECTORS_ERR_STATE;
	}
	if (c->run == CONN_STOPPED && !stop && reopen(c, errbuf, errlen) != 0)
		return CONNECTORS_ERR_OPEN;
	return 0;
}

/* pause (resume false) or resume. */
static int run_as(struct conn *c, bool resume, char *errbuf, size_t errlen)
{
	int rc = ready_for(c, false, errbuf, errlen);

	if (rc != 0)
		return rc;
	if (resume)
		c->ready = true;
	if (c->run != (resume ? CONN_RUNNING : CONN_PAUSED))
		changed(c);
	c->run = resume ? CONN_RUNNING : CONN_PAUSED;
	log_info("connector %s: %s (REST API)", c->cs->name, resume ? "resumed" : "paused");
	return 0;
}

int connector_pause(struct conn *c, char *errbuf, size_t errlen)
{
	return run_as(c, false, errbuf, errlen);
}

int connector_resume(struct conn *c, char *errbuf, size_t errlen)
{
	return run_as(c, true, errbuf, errlen);
}

int connector_stop(struct conn *c, char *errbuf, size_t errlen)
{
	int rc = ready_for(c, true, errbuf, errlen);

	if (rc != 0)
		return rc;
	if (c->run != CONN_STOPPED) {
		/* Never submitted: no offset passes them, the reopened source
		 * reads them again. */
		c->batch.n = c->next = 0;
		if (c->run != CONN_STOPPING)
			c->stop_paused = c->run == CONN_PAUSED;
		c->run = CONN_STOPPING;
		changed(c);
		finish_stop(c);
	}
	log_info("connector %s: stopping (REST API)", c->cs->name);
	return 0;
}
