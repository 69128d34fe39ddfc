/* conn: one connector's slot, the state of a connector as its lifecycle
 * (core/connectors.c, which owns it: made by connectors_slot, freed by
 * connectors_destroy) keeps it. Read and written by the record path
 * (core/pipeline.c: the batch, the counters, the failure) and by the source
 * env (core/source_env.c: the env and its host, the events, the source's
 * watches and deadline); control/ sees a connector through core/query.h.
 * Main thread only. */
#ifndef SKIFF_CONN_H
#define SKIFF_CONN_H

#include "core/connectors.h"
#include "core/source.h"
#include "core/tolerance.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct active_topics;
struct connector_settings;
struct loop_fd;
struct loop_timer;
struct source_env_host;

/* The most records one poll of a source returns (its batch's size). */
#define BATCH_RECORDS 1024

/* A counter a source named through env->count (or a counter or gauge of one
 * of its partitions, env->partition_stat), and its registry handle. */
struct event {
	const char *name;
	char *partition; /* the partition's JSON (owned), NULL: the connector's */
	uint64_t *value;
	size_t index; /* in the registry */
};

struct conn {
	struct connectors *set; /* the set it is a slot of */
	const struct connector_settings *cs;
	void *ctx;
	struct source_env env;
	struct source_env_host *host; /* what env is served from (core/source_env.h) */
	bool stopped;                 /* failed for good: no more polls */
	bool config_error;            /* ... for a reason no restart fixes (exit 78) */
	bool ready;                   /* a descriptor fired, the deadline passed, or it has more */
	enum conn_run run;            /* core/connectors.h */
	bool stop_paused;             /* CONN_STOPPING: it was paused (shown until STOPPED) */
	bool restarting; /* CONN_STOPPING for a restart: then opened again, as restart_to */
	enum conn_run restart_to;
	char *trace; /* why it stopped for good (connector_fail), for /status */
	struct record *records;
	struct source_batch batch;
	size_t next; /* first record of batch not yet produced */
	/* The source in the loop: its descriptors as pollfds() gave them last,
	 * one watch each, and its deadline. */
	struct pollfd *pfds;
	struct loop_fd **watches;
	int cap, nwatches;
	struct loop_timer *deadline;
	/* While reading pauses (source_ops.watch): a descriptor fired since the
	 * last watch() or poll(); when watch() is due by its own deadline (-1:
	 * none); until when the descriptors rest after a call. */
	bool woke;
	int64_t watch_at, watch_rest;
	struct event *events;
	size_t nevents, capevents;
	uint64_t *produced, *acked, *failed, *utf8_replaced;
	struct tolerance tol; /* errors.tolerance, errors.log.*: decoded at open */
	/* notify: */
	bool removed;        /* dropped by a reload: a tombstone, skipped everywhere */
	int64_t last_ack_ms; /* loop_now_ms() of the last acknowledgement, 0: none;
	                      * kept when it opens again under its name */
	/* Connect's active topics (core/active_topics.h), NULL: none yet. */
	struct active_topics *topics;
};

/* True while c reads: neither failed nor paused or stopped by a person. */
static inline bool conn_reading(const struct conn *c)
{
	return !c->stopped && c->run == CONN_RUNNING;
}

#endif
