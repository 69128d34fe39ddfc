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

struct conn;
struct partition;
struct record;
struct worker;

/* What the pipeline tells the rest of the worker and asks of it, filled by
 * worker.c (so that the record path calls nothing that calls it back). */
struct pipeline_hooks {
	/* Stops c for good (connector_fail). */
	void (*fail)(struct conn *c, bool config, const char *why);
	/* A delivery report of a record of p (connector_acked). */
	void (*acked)(struct partition *p, bool ok);
	/* r went to the producer, to topic (connector_produced). */
	void (*produced)(const struct record *r, const char *topic, size_t vlen);
	/* bytes went to the producer (supervisor_charge). */
	void (*charge)(struct worker *w, size_t bytes);
	/* Exactly-once: a transaction is open for the next record (0), or the
	 * worker is to exit; a record failed; the producer was fenced. */
	int (*txn_begin)(struct worker *w);
	void (*txn_failed)(struct worker *w);
	bool (*fenced)(const struct worker *w);
};

/* Serves the producer's delivery reports, the turn's clocks read once for
 * all of them. */
void pipeline_poll_sink(struct worker *w);

/* True while records cannot go to the producer: its queue or the ack slots
 * are full, offset writes fail (commits_paused), an exactly-once
 * transaction is past its boundary (eos_blocks), or the bandwidth cap has
 * no room now. */
bool pipeline_blocked(const struct worker *w);

/* Transforms, converts and produces c's batch from c->next on. Returns
 * when the batch is done, the worker is blocked, or c failed. */
void pipeline_produce(struct conn *c);

/* Polls c's source for a new batch when the last one is done and the
 * worker is not blocked, and produces it. */
void pipeline_poll_source(struct conn *c, int64_t now);

/* The producer's delivery report callback (sink_delivery_fn): ctx is the
 * worker, token an ack slot. */
void pipeline_delivery(void *ctx, void *token, enum sink_result res, const char *reason);

#endif
