/* pipeline: read -> transform/convert -> produce -> ack (core/pipeline.h).
 *
 * Why no record is lost silently here: a record is submitted to the acks
 * (its slot is the producer's token) before it is produced and cancelled
 * when the producer does not take it; a record filtered out or skipped by
 * errors.tolerance=all is acknowledged as done, as Connect commits it;
 * every other failure stops its connector with its offset before the
 * record (connector_fail), so a restart reads it again.
 *
 * What records_failed counts: every record a transform, a converter, the
 * producer or Kafka failed on, skipped or not, as Connect's
 * total-record-failures counts a failure whatever errors.tolerance says
 * (a skipped one counts in records_skipped too). Out of memory is not the
 * record's failure and is not counted. */
#include "core/pipeline.h"

#include "core/acks.h"
#include "core/active_topics.h"
#include "config/settings.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/stats.h"
#include "core/tolerance.h"
#include "convert/convert.h"
#include "kafka/supervisor.h"
#include "transform/transform.h"
#include "util/buf.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>

/* The most bytes a converted key or value keeps allocated between records. */
#define SCRATCH_KEEP (1024 * 1024)

struct pipeline {
	struct acks *acks;      /* borrowed (pipeline_set_producer) */
	struct supervisor *sup; /* borrowed (pipeline_set_producer) */
	struct commits *commits;
	const struct pipeline_hooks *hooks;
	void *ctx;
	bool queue_full;       /* the producer refused a record; wait for a delivery report */
	uint64_t produced;     /* records handed to the producer since the start */
	int64_t last_ack_ms;   /* loop_now_ms() of the last acknowledgement, 0: none */
	int64_t turn_ms;       /* loop_now_ms() read once before the producer's reports
	                        * are served: stamps heads and acks, not one read a record */
	int64_t turn_epoch_ms; /* the wall clock in ms, read with turn_ms */
	/* A record's key and value as converted, reused record after record
	 * (the producer copies them). */
	struct buf kscratch, vscratch;
};

int pipeline_new(const struct pipeline_conf *conf, struct pipeline **out)
{
	struct pipeline *pl = calloc(1, sizeof(*pl));

	*out = NULL;
	if (pl == NULL)
		return PIPELINE_ERR_NOMEM;
	pl->commits = conf->commits;
	pl->hooks = conf->hooks;
	pl->ctx = conf->ctx;
	buf_init(&pl->kscratch, CONVERT_MAX_BYTES);
	buf_init(&pl->vscratch, CONVERT_MAX_BYTES);
	*out = pl;
	return 0;
}

void pipeline_destroy(struct pipeline *pl)
{
	if (pl == NULL)
		return;
	buf_free(&pl->kscratch);
	buf_free(&pl->vscratch);
	free(pl);
}

void pipeline_set_producer(struct pipeline *pl, struct supervisor *sup, struct acks *acks)
{
	pl->sup = sup;
	pl->acks = acks;
	pl->queue_full = false;
}

int64_t pipeline_turn_ms(const struct pipeline *pl)
{
	return pl->turn_ms;
}

int64_t pipeline_turn_epoch_ms(const struct pipeline *pl)
{
	return pl->turn_epoch_ms;
}

int64_t pipeline_last_ack_ms(const struct pipeline *pl)
{
	return pl->last_ack_ms;
}

/* What one step did with a record. */
enum step {
	STEP_GO,   /* on to the next step */
	STEP_DONE, /* the record is done (filtered, skipped or produced): next record */
	STEP_STOP, /* the batch stops here: blocked, or c failed */
};

/* A record's key and value as converted (views into the pipeline's scratch
 * buffers, or the record's own bytes). */
struct converted {
	const char *key, *val;
	size_t klen, vlen;
};

static int64_t now_ms(void)
{
	return loop_now_ms();
}

/* errors.tolerance=all: token's record, which Kafka refused for good
 * (reason: librdkafka's), is done. Before acks_done on token. */
static bool refusal_skipped(void *token, const char *reason)
{
	struct acks_fifo *f = acks_owner(token);
	struct partition *p = f != NULL ? partition_of(f) : NULL;

	return p != NULL && tolerance_refusal(&p->conn->tol, p->conn->cs->name, p->key, reason);
}

/* errors.tolerance=all: r, which failed (why), is skipped and done at once,
 * as a filtered record: its offset may move past it. False: c does not
 * tolerate it (or no slot: out of memory), the caller stops c. Call only
 * while a slot is free (pipeline_blocked() is false). */
static bool skip(struct pipeline *pl, struct conn *c, struct record *r, const char *why)
{
	struct acks_fifo *f;
	void *token;

	if (!c->tol.all)
		return false;
	f = partition_fifo(r->part);
	token = f != NULL ? acks_submit(pl->acks, f, &r->offset) : NULL;
	if (token == NULL)
		return false;
	(void)tolerance_record(&c->tol, c->cs->name, r, why);
	f = acks_done(pl->acks, token, true);
	if (f != NULL) {
		partition_head(r->part, now_ms());
		if (f->advanced)
			commits_moved(pl->commits);
	}
	return true;
}

/* r failed for good (why) in a transform, a converter or the producer:
 * counted (records_failed), then skipped if c tolerates it, else c stops
 * (config: as connector_fail's, the same record fails the same way after
 * a restart). */
static enum step record_failed(struct pipeline *pl, struct conn *c, struct record *r, bool config,
                               const char *why)
{
	stats_add(c->failed, 1);
	if (config && skip(pl, c, r, why))
		return STEP_DONE;
	pl->hooks->fail(c, config, why);
	return STEP_STOP;
}

void pipeline_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
	struct pipeline *pl = ctx;
	/* errors.tolerance=all: a record Kafka refused for good is done. */
	bool skipped = res == SINK_REFUSED && refusal_skipped(token, reason);
	struct acks_fifo *f = acks_done(pl->acks, token, res == SINK_DELIVERED || skipped);
	struct partition *p;
	bool advanced;
	char why[512];

	pl->queue_full = false; /* a report frees room in the producer queue */
	if (res != SINK_DELIVERED)
		pl->hooks->txn_failed(pl->ctx);
	if (f == NULL)
		return;
	p = partition_of(f);
	partition_head(p, pl->turn_ms);
	/* Read before hooks->acked: a stop it finishes frees f. */
	advanced = f->advanced;
	pl->hooks->acked(p, res == SINK_DELIVERED);
	if (res == SINK_DELIVERED) {
		stats_add(p->conn->acked, 1);
		p->conn->last_ack_ms = pl->last_ack_ms = pl->turn_ms;
	} else {
		stats_add(p->conn->failed, 1); /* skipped or not */
	}
	if (res == SINK_DELIVERED || skipped) {
		if (advanced)
			commits_moved(pl->commits);
		return;
	}
	/* Fenced: librdkafka fails or purges every record; the connector did
	 * nothing wrong, and the worker exits (eos_exit_code). */
	if (pl->hooks->fenced(pl->ctx))
		return;
	snprintf(why, sizeof(why), "a record of %s could not be delivered: %s", p->key, reason);
	pl->hooks->fail(p->conn, res == SINK_REFUSED, why);
}

void pipeline_poll_sink(struct pipeline *pl)
{
	pl->turn_ms = now_ms();
	pl->turn_epoch_ms = clock_wall_ns() / 1000000;
	sink_poll(supervisor_sink(pl->sup));
}

bool pipeline_blocked(const struct pipeline *pl)
{
	return pl->queue_full || acks_available(pl->acks) == 0 || commits_paused(pl->commits) ||
	       pl->hooks->txn_blocks(pl->ctx) || !supervisor_allows(pl->sup, now_ms());
}

/* Frees a scratch buffer that held a large record: a long line or row must
 * not pin its size for good. */
static void trim(struct buf *b)
{
	if (buf_len(b) > SCRATCH_KEEP)
		buf_free(b);
}

/* Applies c's transforms to r into *t. A record filtered out is done at
 * once (Connect commits a filtered record's offset). */
static enum step transform_one(struct pipeline *pl, struct conn *c, struct record *r,
                               struct transform_out *t, char *errbuf, size_t errlen)
{
	enum transform_result tr = transform_chain_apply(c->cs->chain, r, t, errbuf, errlen);
	struct acks_fifo *f;

	if (tr == TRANSFORM_DROP) {
		if ((f = partition_fifo(r->part)) == NULL) {
			pl->hooks->fail(c, false, "out of memory");
			return STEP_STOP;
		}
		pipeline_delivery(pl, acks_submit(pl->acks, f, &r->offset), SINK_DELIVERED, NULL);
		return STEP_DONE;
	}
	if (tr == TRANSFORM_ERROR)
		return record_failed(pl, c, r, true, errbuf);
	if (tr != TRANSFORM_OK) {
		/* Out of memory may pass after a restart (75). */
		pl->hooks->fail(c, false, errbuf);
		return STEP_STOP;
	}
	return STEP_GO;
}

/* A guarded connector (connector_settings.guard, the fleet's): t's final
 * topic must be one its guard allows, asked once per topic (the topics
 * already produced to, c->topics, were allowed; past ACTIVE_TOPICS_MAX a
 * new one is asked at each record). Outside: c fails with the reason, its
 * offset before r (never a silent drop, nor a skip by errors.tolerance). */
static enum step topic_allowed(struct pipeline *pl, struct conn *c, const struct transform_out *t,
                               char *errbuf, size_t errlen)
{
	const struct source_guard *g = c->cs->guard;
	char why[384];

	if (g == NULL || g->allow_topic == NULL || active_topics_has(c->topics, t->topic))
		return STEP_GO;
	if (g->allow_topic(g->arg, t->topic, why, sizeof(why)) == 0)
		return STEP_GO;
	snprintf(errbuf, errlen, "a record's topic %s (after the transforms) is %s", t->topic, why);
	pl->hooks->fail(c, true, errbuf);
	return STEP_STOP;
}

/* Converts t's key and value with c's converters into *kv. */
static enum step convert_one(struct pipeline *pl, struct conn *c, struct record *r,
                             struct transform_out *t, struct converted *kv, char *errbuf,
                             size_t errlen)
{
	int krc, vrc;
	bool shape;

	krc = convert_value_view(&c->cs->key_conv, &t->key, &pl->kscratch, &kv->key, &kv->klen,
	                         c->utf8_replaced);
	vrc = krc != 0 ? 0
	               : convert_value_view(&c->cs->value_conv, &t->value, &pl->vscratch, &kv->val,
	                                    &kv->vlen, c->utf8_replaced);
	if (krc == 0 && vrc == 0)
		return STEP_GO;
	/* A shape no restart changes is the user's to fix (78); out of memory
	 * may pass (75). */
	shape = (krc != 0 ? krc : vrc) == CONVERT_ERR_SHAPE;
	snprintf(errbuf, errlen, "%s cannot serialise this record's %s (%s)",
	         convert_class_name(krc != 0 ? &c->cs->key_conv : &c->cs->value_conv),
	         krc != 0 ? "key" : "value",
	         shape ? "a struct" : "out of memory, or larger than 1 GB");
	if (shape)
		return record_failed(pl, c, r, true, errbuf);
	pl->hooks->fail(c, false, errbuf);
	return STEP_STOP;
}

/* What a producer's refusal of r means: backpressure, or c fails. */
static enum step refused(struct pipeline *pl, struct conn *c, struct record *r, size_t bytes,
                         int rc, char *errbuf, size_t errlen)
{

	if (rc == SINK_QUEUE_FULL && sink_in_flight(supervisor_sink(pl->sup)) > 0) {
		/* Backpressure: no reading, no spinning, until a delivery report. */
		pl->queue_full = true;
		return STEP_STOP;
	}
	if (rc == SINK_QUEUE_FULL) {
		/* Nothing queued and still no room: it can never fit. */
		snprintf(errbuf, errlen,
		         "a record of %zu bytes is larger than the "
		         "whole producer queue (producer.queue.buffering.max.kbytes)",
		         bytes);
		stats_add(c->failed, 1);
		pl->hooks->fail(c, true, errbuf);
		return STEP_STOP;
	}
	if (rc == SINK_ERR_NOMEM) {
		pl->hooks->fail(c, false, errbuf);
		return STEP_STOP;
	}
	return record_failed(pl, c, r, rc == SINK_ERR_CONFIG, errbuf);
}

/* Hands r, as *t and *kv, to the producer with an ack slot as its token. */
static enum step produce_one(struct pipeline *pl, struct conn *c, struct record *r,
                             const struct transform_out *t, const struct converted *kv,
                             char *errbuf, size_t errlen)
{
	struct sink_record rec = {.topic = t->topic,
	                          .key = kv->key,
	                          .klen = kv->klen,
	                          .value = kv->val,
	                          .vlen = kv->vlen,
	                          .headers = t->headers,
	                          .nheaders = t->nheaders,
	                          .timestamp_ms = t->timestamp_ms};
	struct acks_fifo *f;
	void *token;
	int rc;

	if (pl->hooks->txn_begin(pl->ctx) != 0)
		return STEP_STOP; /* the turn's end exits (eos_boundary) */
	if ((f = partition_fifo(r->part)) == NULL) {
		pl->hooks->fail(c, false, "out of memory");
		return STEP_STOP;
	}
	token = acks_submit(pl->acks, f, &r->offset);
	rc = sink_produce(supervisor_sink(pl->sup), &rec, token, errbuf, errlen);
	trim(&pl->kscratch);
	trim(&pl->vscratch);
	if (rc == 0) {
		supervisor_charge(pl->sup, kv->klen + kv->vlen);
		stats_add(c->produced, 1);
		pl->produced++;
		pl->hooks->produced(r, t->topic, kv->vlen);
		return STEP_DONE;
	}
	acks_cancel(pl->acks, token);
	return refused(pl, c, r, kv->klen + kv->vlen, rc, errbuf, errlen);
}

void pipeline_produce(struct pipeline *pl, struct conn *c)
{
	char errbuf[512];

	while (conn_reading(c) && c->next < c->batch.n) {
		struct record *r = &c->records[c->next];
		struct transform_out t;
		struct converted kv = {0};
		enum step s;

		if (pipeline_blocked(pl))
			return;
		s = transform_one(pl, c, r, &t, errbuf, sizeof(errbuf));
		if (s == STEP_GO)
			s = topic_allowed(pl, c, &t, errbuf, sizeof(errbuf));
		if (s == STEP_GO)
			s = convert_one(pl, c, r, &t, &kv, errbuf, sizeof(errbuf));
		if (s == STEP_GO)
			s = produce_one(pl, c, r, &t, &kv, errbuf, sizeof(errbuf));
		if (s == STEP_STOP)
			return;
		c->next++;
	}
}

void pipeline_poll_source(struct pipeline *pl, struct conn *c, int64_t now)
{
	char errbuf[1024];
	uint32_t room = acks_available(pl->acks);
	int rc;

	if (!conn_reading(c) || c->next < c->batch.n || pipeline_blocked(pl))
		return;
	c->batch.records = c->records;
	c->batch.max = room < BATCH_RECORDS ? room : BATCH_RECORDS;
	c->batch.n = 0;
	c->next = 0;
	c->ready = c->woke = false;
	rc = c->cs->ops->poll(c->ctx, &c->batch, now, errbuf, sizeof(errbuf));
	if (rc != 0) {
		pl->hooks->fail(c, rc == SOURCE_ERR_CONFIG, errbuf);
		return;
	}
	if (c->batch.more)
		c->ready = true;
	pipeline_produce(pl, c);
}
