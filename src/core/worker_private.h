/* worker_private: the worker's own structure, for core/worker.c and the
 * white-box unit tests only (tests/unit/). Every other module goes through
 * a header of its own (core/worker.h, core/query.h, ...) and the host or
 * ops the worker gives it. Main thread only. */
#ifndef SKIFF_WORKER_PRIVATE_H
#define SKIFF_WORKER_PRIVATE_H

#include "core/acks.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/connectors.h"
#include "control/rest.h"
#include "util/buf.h"
#include "util/hash.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/pipeline.h"
#include "core/query.h"
#include "config/settings.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/tolerance.h"
#include "kafka/supervisor.h"

#include <stdbool.h>
#include <stdint.h>

struct worker {
	const struct settings *settings;
	struct offsets *offsets;
	struct stats *stats;
	struct loop *loop;
	struct loop_fd *sig_watch, *offsets_watch;
	int sigfd; /* the signal pipe sig_watch watches (set with it) */
	struct loop_timer *flush_timer, *tick;
	/* The producer (supervisor_sink), its rebuilds and the bandwidth cap
	 * (kafka/supervisor.c). */
	struct supervisor *sup;
	struct pipeline *pipe; /* the record path (core/pipeline.c) */
	struct acks *acks;
	struct eos *eos; /* exactly-once (core/eos.h); NULL: at least once */
	/* The connector slots (core/connectors.c). */
	struct connectors *conns;
	struct partitions *parts;
	int64_t flush_interval, flush_timeout, next_flush;
	bool stop;
	struct commits *commits;      /* acknowledged prefixes into the store */
	struct source_env_host *envs; /* the sources' envs (core/source_env.c) */
	/* The worker as control/ sees it (core/query.h): its clients borrow
	 * &query. systemd's notifications (control/notify.c). */
	struct query query;
	struct query_host qhost; /* what query reads: &qhost is query's ctx */
	struct notify *notify;
	void (*on_stop)(void *arg); /* worker_on_stop */
	void *on_stop_arg;
	struct reload *reload;      /* SIGHUP and the REST API's changes (core/reload.c) */
	bool reloading;             /* a reload or a new producer drains: no source is read */
	struct status_sock *status; /* skiff status (control/status_sock.c) */
	/* the health verdict's bounds, as the query hands them to control/ */
	int64_t health_ack_ms; /* health.ack.timeout.ms */
	size_t part_limit;     /* metrics.partition.limit */
	struct health *health; /* the verdict and the computed gauges (control/health.c) */
};

/* ---- worker.c, for the reload and the tests --------------------------- */

/* worker_new with the producer made by open_sink (sink_open: Kafka's; a
 * test passes its fake's constructor). */
int worker_new_with(const struct settings *s, struct stats *stats, sink_open_fn open_sink,
                    struct worker **out, char *errbuf, size_t errlen);

/* One turn of the loop (worker_run's body): waits for what is due, serves
 * the producer's reports, reads and produces. Returns 0 to go on, or an
 * exit code. */
int worker_turn(struct worker *w);

/* From a wait that holds the main thread outside the loop (exactly-once's
 * init or abort, up to 6 x offset.flush.timeout.ms): feeds systemd's
 * watchdog when due and takes the signals that came (SIGTERM sets w->stop,
 * SIGHUP asks for a reload), as the loop would. Call it at least every
 * second of the wait. */
void worker_waiting(struct worker *w);

/* Runs the loop with sources unwatched until nothing is in flight (or
 * offset.flush.timeout.ms), then writes the offsets (waiting as long);
 * with exactly-once, commits the open transaction first. Returns the
 * records still in flight. */
int worker_drain_and_flush(struct worker *w);

/* Exactly-once (core/eos.h): forces the open transaction's boundary and
 * runs the loop (nothing read) until it committed or aborted. Returns 0, or
 * the exit code after an abort. A stop, a reload and a new producer call it
 * before they drain. */
int worker_eos_settle(struct worker *w);

#endif
