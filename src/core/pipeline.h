/* pipeline: the path of a record through the worker: a source's batch is
 * read, each record transformed and converted, handed to the producer with
 * an ack slot as its token, and its delivery report acknowledges it (or
 * fails its connector). Backpressure: while the producer's queue, the ack
 * slots, the offset store or the bandwidth cap say no (pipeline_blocked),
 * no source is read. Main loop only; the delivery callback runs from
 * sink_poll on the same thread. */
#ifndef SKIFF_PIPELINE_H
#define SKIFF_PIPELINE_H

#include "core/sink.h"

#include <stdbool.h>
#include <stdint.h>

struct acks;
struct commits;
struct conn;
struct partition;
struct pipeline;
struct record;
struct supervisor;

/* What the pipeline tells the rest of the worker and asks of it, filled by
 * worker.c (so that the record path calls nothing that calls it back); ctx
 * is pipeline_conf.ctx. */
struct pipeline_hooks {
	/* Stops c for good (connector_fail). */
	void (*fail)(struct conn *c, bool config, const char *why);
	/* A delivery report of a record of p (connector_acked). */
	void (*acked)(struct partition *p, bool ok);
	/* r went to the producer, to topic (connector_produced). */
	void (*produced)(const struct record *r, const char *topic, size_t vlen);
	/* Exactly-once: a transaction is open for the next record (0), or the
	 * worker is to exit; a record failed; the producer was fenced. */
	int (*txn_begin)(void *ctx);
	void (*txn_failed)(void *ctx);
	bool (*fenced)(void *ctx);
	/* Exactly-once: the open transaction is past its boundary, draining
	 * (eos_blocks): no record goes to the producer until it ended. */
	bool (*txn_blocks)(void *ctx);
};

/* What the record path works with: the offsets' commits (the worker's,
 * borrowed for the pipeline's life), hooks and their ctx. */
struct pipeline_conf {
	struct commits *commits;
	const struct pipeline_hooks *hooks;
	void *ctx;
};

enum {
	PIPELINE_ERR_NOMEM = -2, /* out of memory */
};

/* A record path over conf (copied), its producer given later
 * (pipeline_set_producer). Returns 0 or PIPELINE_ERR_NOMEM; the caller owns
 * *out (pipeline_destroy, which accepts NULL). */
int pipeline_new(const struct pipeline_conf *conf, struct pipeline **out);
void pipeline_destroy(struct pipeline *pl);

/* The producer's supervisor (the sink records go to, the bandwidth cap
 * they are charged to) and the ack slots records are submitted to, both
 * borrowed; called again when a new producer brings new slots: its queue
 * has room. Before the first pipeline_poll_sink. */
void pipeline_set_producer(struct pipeline *pl, struct supervisor *sup, struct acks *acks);

/* The clocks read once per turn by pipeline_poll_sink (loop_now_ms, and the
 * wall clock in ms), and loop_now_ms() of the last acknowledgement (0:
 * none). */
int64_t pipeline_turn_ms(const struct pipeline *pl);
int64_t pipeline_turn_epoch_ms(const struct pipeline *pl);
int64_t pipeline_last_ack_ms(const struct pipeline *pl);

/* Serves the producer's delivery reports, the turn's clocks read once for
 * all of them. */
void pipeline_poll_sink(struct pipeline *pl);

/* True while records cannot go to the producer: its queue or the ack slots
 * are full, offset writes fail (commits_paused), an exactly-once
 * transaction is past its boundary (hooks' txn_blocks), or the bandwidth
 * cap has no room now. */
bool pipeline_blocked(const struct pipeline *pl);

/* Transforms, converts and produces c's batch from c->next on. Returns
 * when the batch is done, the worker is blocked, or c failed. */
void pipeline_produce(struct pipeline *pl, struct conn *c);

/* Polls c's source for a new batch when the last one is done and the
 * worker is not blocked, and produces it. */
void pipeline_poll_source(struct pipeline *pl, struct conn *c, int64_t now);

/* The producer's delivery report callback (sink_delivery_fn): ctx is the
 * pipeline, token an ack slot. */
void pipeline_delivery(void *ctx, void *token, enum sink_result res, const char *reason);

#endif
