/* worker: the one loop. Polls the sources, converts and produces their
 * records, serves delivery reports, advances offsets over each partition's
 * contiguous acknowledged prefix, and flushes them every
 * offset.flush.interval.ms when they changed.
 *
 * Everything is a descriptor or a timer registered with the loop (loop.h):
 * the sources' descriptors (inotify) and deadlines, librdkafka's main queue
 * (through a pipe), the flush timer, and a self-pipe the signal handlers
 * write to. While records cannot go on (the producer queue or the ack slots
 * are full, or three offset flushes in a row failed) the sources' descriptors
 * and deadlines are left out: only a delivery report, the flush timer or a
 * signal wakes the worker.
 *
 * Its counters (records produced, acknowledged and failed per connector, the
 * events each source counts) live in the stats registry (stats.h), which the
 * caller owns; the worker is their log exporter. Offsets are written through
 * the asynchronous offsets_write (offsets.h). Main thread only; error
 * convention: util/err.h. */
#ifndef SKIFF_WORKER_H
#define SKIFF_WORKER_H

#include <stdbool.h>
#include <stddef.h>

struct settings;
struct offsets;
struct stats;

/* Exit codes for supervisors (sysexits.h). */
enum {
	WORKER_EXIT_OK = 0,
	WORKER_EXIT_TEMPFAIL = 75, /* transient: restart me */
	WORKER_EXIT_CONFIG = 78,   /* configuration or offset store: a person must act */
};

/* worker_new's failures. */
enum {
	WORKER_ERR = -1,        /* may pass with a restart (a pipe, a descriptor limit) */
	WORKER_ERR_CONFIG = -2, /* a person must act (a bad property, a source refused) */
	WORKER_ERR_NOMEM = -3,  /* out of memory: a restart may pass */
};

struct worker;

/* Creates the loop and the producer (with exactly-once transactional, its
 * transactional.id not yet claimed); no connector yet (worker_start). stats
 * (the registry the worker counts in) is borrowed and must outlive the
 * worker. Returns 0 and *out (worker_destroy), or a WORKER_ERR_* code with
 * errbuf "what: why". */
int worker_new(const struct settings *s, struct stats *stats, struct worker **out, char *errbuf,
               size_t errlen);

/* Exactly-once only (else 0 at once): claims the transactional.id with the
 * producer that will ship (init_transactions), which fences every other
 * instance of it and aborts what it left open. Called after the store's lock
 * is taken and before its topic is read (offsets_open_store's fence), so
 * that nothing commits between the read and the fence. Returns 0 or a
 * WORKER_ERR_* code (WORKER_ERR_CONFIG: the producer can do nothing more). */
int worker_fence(struct worker *w, char *errbuf, size_t errlen);

/* Exactly-once only (else 0 at once): blocks until a broker of the cluster
 * answers, probing with a backoff from 1 s doubling to 30 s and sleeping on
 * sigfd (main's signal pipe) in between; logs the wait once and then every
 * 10 minutes, and tells systemd READY=1 with a STATUS saying it waits (and
 * feeds its watchdog). *waited says whether it had to wait. Returns 0, or 1
 * when SIGTERM or SIGINT came while waiting (exit 0). Main thread, before
 * the store is opened. */
int worker_await_cluster(struct worker *w, int sigfd, bool *waited);

/* Opens every connector of the settings from offsets (the loaded store,
 * borrowed, must outlive the worker) and, with exactly-once, the first
 * transaction (claiming the transactional.id first when worker_fence was
 * not called). Returns 0 or a WORKER_ERR_* code with errbuf. */
int worker_start(struct worker *w, struct offsets *offsets, char *errbuf, size_t errlen);

/* The exit code for a worker_new, worker_fence or worker_start failure: 78 for WORKER_ERR_CONFIG,
 * else 75. */
int worker_exit_code(int err);

/* Short text for a WORKER_ERR_* code. */
const char *worker_strerror(int err);

/* Runs until SIGTERM/SIGINT arrive on sigfd (the signal number as one byte),
 * or no connector can go on. Returns a WORKER_EXIT_* code. */
int worker_run(struct worker *w, int sigfd);

/* fn(arg) once, when w begins to stop (a signal, no connector able to go
 * on): before the drain, while the loop and the producer still run. For a
 * client main.c wires beside the worker that must start nothing more from
 * then on (the fleet's loop client, fleet/fleet.h). One at a time: a
 * second call replaces the first; fn NULL: none. */
void worker_on_stop(struct worker *w, void (*fn)(void *arg), void *arg);

/* Lets SIGHUP reload the configuration (core/reload.c, docs/operations.md, "Reload"):
 * s is the settings w was created from, which a reload replaces in place;
 * paths (n of them) the files it was loaded from. Both borrowed: they must
 * outlive w. cli_log_level: --log-level was given, and wins over log.level.
 * Without this call SIGHUP is logged and ignored. */
void worker_reload_setup(struct worker *w, struct settings *s, char *const *paths, size_t n,
                         bool cli_log_level);

/* ---- the REST API's view ------------------------------------------------- */

struct health;
struct loop;
struct query;
struct rest_ops;

/* The loop the worker runs, for other servers to register with (rest.h). */
struct loop *worker_loop(struct worker *w);

/* For control/rest_worker.c, whose ctx is the worker (worker_rest_ops): w's
 * query (core/query.h), and the health client w made (control/health.h).
 * Both live as long as w. */
const struct query *worker_query(struct worker *w);
struct health *worker_health(struct worker *w);

/* The worker as the REST API sees it (rest.h), ctx: the worker. Connectors
 * paused or stopped there stop reading (records in flight still
 * acknowledge); a stop also waits for them, puts the offsets in the store
 * and closes the source; resume opens it again from the stored offsets,
 * which KIP-875's PATCH and DELETE may have changed while it was stopped. */
extern const struct rest_ops worker_rest_ops;

/* Closes the producer, then the sources (nothing undelivered is committed:
 * the producer drops it without a delivery report). Accepts NULL. */
void worker_destroy(struct worker *w);

#endif
