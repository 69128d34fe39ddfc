/* supervisor: the producer's life after start. It owns the producer (the
 * struct sink the record path produces to, which it may swap for a new one),
 * its descriptor in the loop, the watch on its TLS files, the bandwidth cap
 * (bandwidth.max.bytes.per.second) and the bytes sent by the producers it
 * replaced. The worker around it is seen only through struct supervisor_ops:
 * this module includes no worker header. Exactly-once fencing stays with
 * core/eos.c, which the rebuild reaches through ops->commit and
 * ops->swapped. Main loop only. */
#ifndef SKIFF_SUPERVISOR_H
#define SKIFF_SUPERVISOR_H

#include "core/sink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct acks;
struct config_section;
struct loop;
struct settings;
struct stats;
struct supervisor;

/* Failures (util/err.h). */
enum {
	SUPERVISOR_OK = 0,
	SUPERVISOR_ERR = -1,        /* may pass with a restart (a pipe, a thread) */
	SUPERVISOR_ERR_CONFIG = -2, /* a person must act (a bad producer property) */
	SUPERVISOR_ERR_NOMEM = -3,  /* out of memory */
};

/* A short text for a SUPERVISOR_* code. */
const char *supervisor_strerror(int err);

/* What the supervisor asks of the worker around it; each gets ctx. Called
 * from supervisor_* on the loop's thread, never from a loop callback of the
 * supervisor's own (the rebuild runs the loop: it waits for the end of the
 * turn). */
struct supervisor_ops {
	/* The producer's descriptor is readable: serve its delivery reports. */
	void (*serve)(void *ctx);
	/* A rebuild, before it drains: commits the open exactly-once
	 * transaction on the old producer. Non-zero: the rebuild gives up (the
	 * worker then exits at the end of the turn). */
	int (*commit)(void *ctx);
	/* Runs the loop, reading nothing, until no record is in flight (at most
	 * offset.flush.timeout.ms), and writes the offsets acknowledged.
	 * Returns the records still in flight. */
	int (*drain)(void *ctx);
	/* After the drain: each connector with records still in flight on the
	 * old producer is closed and opened again from its stored offsets (one
	 * failed for good only lets go of its ack slots). */
	void (*restart)(void *ctx);
	/* The new producer is in place (supervisor_sink answers it): slab, sized
	 * for its queue, replaces the ack slots (handed over: the worker frees
	 * the old and, in the end, this one); exactly-once fences for it. */
	void (*swapped)(void *ctx, struct acks *slab);
	/* The producer can do nothing more (why: the producer's text): logs it
	 * and returns the exit code. */
	int (*fatal)(void *ctx, const char *why);
};

/* What supervisor_new is given; every pointer is borrowed and outlives the
 * supervisor. */
struct supervisor_conf {
	struct loop *loop;
	struct stats *stats;
	/* Its worker section names the TLS files and the bandwidth cap; a reload
	 * may replace the section (supervisor_retire keeps the old one). */
	const struct settings *settings;
	sink_open_fn open_sink; /* sink_open, or a test's fake */
	sink_delivery_fn delivery;
	void *delivery_ctx;
	const struct supervisor_ops *ops;
	void *ctx;
};

/* A supervisor with no producer yet (supervisor_open makes it). Returns 0 and *out
 * (supervisor_destroy), or SUPERVISOR_ERR_NOMEM. */
int supervisor_new(const struct supervisor_conf *conf, struct supervisor **out);

/* Makes the producer from the worker section and registers its descriptor
 * with the loop. Returns 0, or a SUPERVISOR_ERR_* code with errbuf. */
int supervisor_open(struct supervisor *s, char *errbuf, size_t errlen);

/* Before the loop runs: watches the TLS files the worker section names (a
 * directory that cannot be watched is logged), and opens the bandwidth cap
 * with its gauges (no cap: nothing). Returns 0 or SUPERVISOR_ERR_NOMEM. */
int supervisor_start(struct supervisor *s);

/* The producer now (borrowed: a rebuild may replace it; NULL before
 * supervisor_open). */
struct sink *supervisor_sink(const struct supervisor *s);

/* The bytes on the wire of the producers a rebuild replaced: with the
 * running one's (sink_stats), a total that never drops. */
uint64_t supervisor_sent_before(const struct supervisor *s);

/* Makes a new producer from ws (why: for the log), drains and flushes the
 * old one, restarts connectors whose records it still held, and swaps
 * (ops->commit, ->drain, ->restart, ->swapped, in that order). On failure to
 * make it, logs and keeps the running one: returns its SUPERVISOR_ERR_*
 * code. */
int supervisor_rebuild(struct supervisor *s, const struct config_section *ws, const char *why);

/* After a reload made a new producer: watches the new section's TLS files
 * instead. Returns 0 or SUPERVISOR_ERR_NOMEM. */
int supervisor_rewatch(struct supervisor *s);

/* Keeps old (a worker section a reload replaced; owned from here on) until
 * supervisor_destroy: a string read from it may still be held. */
void supervisor_retire(struct supervisor *s, struct config_section *old);

/* At the end of each turn, after the producer's reports: TLS files that
 * changed and settled make a new producer (not while stopping); the bytes on
 * the wire settle the bandwidth estimates. Returns 0, or the exit code
 * (ops->fatal) when the producer can do nothing more. */
int supervisor_turn(struct supervisor *s, bool stopping);

/* True while the bandwidth cap (if any) lets records go to the producer. */
bool supervisor_allows(struct supervisor *s, int64_t now_ms);

/* A record of bytes (key and value as produced) went to the producer. */
void supervisor_charge(struct supervisor *s, size_t bytes);

/* Before the loop sleeps: wakes it when the bucket refilled enough. */
void supervisor_wake(struct supervisor *s);

/* One line for `skiff status` into buf ("" without a cap). */
void supervisor_summary(const struct supervisor *s, char *buf, size_t len);

/* Destroys the producer: what it holds undelivered is dropped without a
 * delivery report, so nothing is acknowledged after this. The rest stays
 * for supervisor_destroy. Accepts NULL. */
void supervisor_stop(struct supervisor *s);

/* Frees the producer (if still there), the file watch, the bandwidth bucket
 * and the retired sections. Accepts NULL. */
void supervisor_destroy(struct supervisor *s);

#endif
