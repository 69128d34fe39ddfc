/* source_env: what the worker offers a source (struct source_env: partition
 * handles, committed offsets, anchors, counters and gauges, logging, the
 * value budget, a state file) and the source in the loop (its descriptors,
 * watches and deadline, and watch() while reading pauses). Its state lives
 * in the connector's slot (core/conn.h); counted events go to the stats
 * registry, and this module is their log exporter. Main thread only. */
#ifndef SKIFF_SOURCE_ENV_H
#define SKIFF_SOURCE_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct commits;
struct conn;
struct loop;
struct offsets;
struct partition;
struct partitions;
struct source_env_host;
struct stats;

/* What the sources' env asks of the rest of the worker, ctx
 * source_env_conf.ctx: an anchor was put, the next flush is due now; the producer's
 * message.max.bytes (0: no producer); the offset flush interval now (a reload may change it). */
struct source_env_ops {
	void (*flush_soon)(void *ctx);
	size_t (*message_max)(void *ctx);
	int64_t (*flush_interval)(void *ctx);
};

/* What the env works with, the worker's and borrowed for the host's life:
 * the loop (each source's watches and deadline), the registry (counters),
 * the partition table and the commits (anchors); offset_file (may be NULL
 * or empty: no state files). */
struct source_env_conf {
	struct loop *loop;
	struct stats *stats;
	struct partitions *parts;
	struct commits *commits;
	const char *offset_file;
	const struct source_env_ops *ops;
	void *ctx;
};

/* The host of every source's env (struct source_env_host, opaque): conf,
 * the offset store once it is open, and the log exporter's memory (what
 * each counter showed when last logged). 0 or SOURCE_ENV_ERR_NOMEM; the
 * caller owns *out (source_env_host_destroy, which accepts NULL). */
enum {
	SOURCE_ENV_ERR_NOMEM = -2, /* out of memory */
};
int source_env_host_new(const struct source_env_conf *conf, struct source_env_host **out);
void source_env_host_destroy(struct source_env_host *h);

/* The offset store the envs read committed offsets and stored keys from
 * (borrowed): before the first source opens. */
void source_env_host_set_offsets(struct source_env_host *h, struct offsets *offsets);

/* Fills c->env, what the worker offers c's source (partition handles,
 * committed offsets, counting, logging), hosted by h (c->host). c->env.state_file is malloc'd:
 * source_env_free frees it. */
void source_env_init(struct source_env_host *h, struct conn *c);

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
void source_env_log_counters(struct source_env_host *h);

/* Frees what source_env_* allocated for c (not the source itself, nor its
 * watches and deadline: connector_close deletes those from the loop). */
void source_env_free(struct conn *c);

#endif
