/* source_env: what the worker offers a source (struct source_env: partition
 * handles, committed offsets, anchors, counters and gauges, logging, the
 * value budget, a state file) and the source in the loop (its descriptors,
 * watches and deadline, and watch() while reading pauses). Its state lives
 * in the connector's slot (core/conn.h); counted events go to the stats
 * registry, and this module is their log exporter. Main thread only. */
#ifndef SKIFF_SOURCE_ENV_H
#define SKIFF_SOURCE_ENV_H

#include <stdbool.h>
#include <stdint.h>

struct conn;
struct worker;

/* Fills c->env, what the worker offers c's source (partition handles,
 * committed offsets, counting, logging). c->env.state_file is malloc'd:
 * source_env_free frees it. */
void source_env_init(struct conn *c);

/* Registers c's metrics (labelled with its name) and its deadline timer.
 * Returns 0 or WORKER_ERR_NOMEM. */
int source_env_register(struct conn *c);

/* What the loop does with a source while it sleeps. */
enum source_env_mode {
	SOURCE_ENV_IDLE,  /* nothing: stopped, failed, or the worker drains */
	SOURCE_ENV_READ,  /* poll() when its descriptors fire or it is due */
	SOURCE_ENV_WATCH, /* reading pauses: watch() (source_ops.watch) instead */
};

/* The mode of c while the worker runs (not draining), blocked: records
 * cannot go to the producer now. */
enum source_env_mode source_env_mode(const struct conn *c, bool blocked);

/* Mirrors c's descriptors and deadline into the loop before it sleeps, as
 * mode says: in SOURCE_ENV_READ a source that is ready or has records left
 * is due at once; in SOURCE_ENV_WATCH its descriptors rest
 * SOURCE_WATCH_REST_MS after each watch(). Returns 0 or WORKER_ERR_NOMEM. */
int source_env_watch(struct conn *c, enum source_env_mode mode, int64_t now);

/* In SOURCE_ENV_WATCH: calls c's watch() when a descriptor fired or its
 * deadline passed; c is then ready to be polled once reading resumes. */
void source_env_notice(struct conn *c, int64_t now);

/* The log exporter: logs the STATS_F_LOG metrics that moved since last
 * logged ("connector X: name=N"). */
void source_env_log_counters(struct worker *w);

/* Frees what source_env_* allocated for c (not the source itself, nor its
 * watches and deadline: connector_close deletes those from the loop). */
void source_env_free(struct conn *c);

#endif
