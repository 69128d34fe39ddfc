/* worker: the loop, the path of a record, and the offset flush. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/acks.h"
#include "config/config.h"
#include "core/connectors.h"
#include "convert/convert.h"
#include "core/eos.h"
#include "core/log.h"
#include "core/pipeline.h"
#include "core/loop.h"
#include "core/reload.h"
#include "offsets/offsets.h"
#include "util/rstr.h"
#include "config/settings.h"
#include "control/health.h"
#include "control/notify.h"
#include "control/pmetrics.h"
#include "control/restconf.h"
#include "control/status_sock.h"
#include "kafka/sink_kafka.h"
#include "core/source.h"
#include "core/source_env.h"
#include "core/stats.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static int64_t now_ms(void)
{
	return loop_now_ms();
}

/* ---- offsets ------------------------------------------------------------- */

/* Puts the offsets acknowledged since the last flush into the store, and
 * writes it when something changed. */
static void flush_offsets(struct worker *w)
{
	commits_put_all(w->commits, w->parts, w->eos != NULL);
	source_env_log_counters(w->envs);
	commits_write(w->commits, now_ms());
}

static void on_flush_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	struct worker *w = arg;

	flush_offsets(w);
	w->next_flush = now_ms() + w->flush_interval;
	/* A burst is over (nothing in flight after many records were): what it
	 * made resident goes back to the system, the slab's slots and the free
	 * memory glibc keeps in every thread's arena (librdkafka's too). */
	if (acks_shrink(w->acks)) {
#ifdef __GLIBC__
		malloc_trim(0);
#endif
	}
}

/* ---- the loop ------------------------------------------------------------ */

/* Takes the signals that came: SIGHUP asks for a reload at the end of the
 * turn, any other stops. */
static void take_signals(struct worker *w, int fd)
{
	unsigned char sig[16];
	ssize_t n;

	while ((n = read(fd, sig, sizeof(sig))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (sig[i] == SIGHUP) {
				reload_ask(w->reload); /* at the end of the turn */
			} else if (!w->stop) {
				log_info("signal %d: stopping", sig[i]);
				w->stop = true;
			}
		}
	}
}

static void on_signal_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	take_signals(arg, fd);
}

/* worker_private.h */
void worker_waiting(struct worker *w)
{
	notify_alive(w->notify);
	if (w->sig_watch != NULL)
		take_signals(w, w->sigfd);
}

static void on_offsets_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	struct worker *w = arg;

	offsets_poll(w->offsets);
}

/* supervisor_ops.serve: the producer's descriptor fired. */
static void serve_sink(void *ctx)
{
	pipeline_poll_sink(((struct worker *)ctx)->pipe);
}

/* Before the loop sleeps: which sources it watches, when it wakes. While
 * blocked a source is not read (a readable one would wake the loop for
 * nothing, as often as the file is written, and one with rows buffered would
 * ask for 0), but it is watched, resting between looks (source_env_mode):
 * a file rotated and deleted meanwhile must be opened before it goes. A stop
 * or a reload waiting for acknowledgements (drain) reads nothing either, and
 * watches for the same reason: with Kafka away that wait is
 * offset.flush.timeout.ms, time enough for rotations to delete files. */
static int prepare(struct worker *w, int64_t now)
{
	bool wait = pipeline_blocked(w->pipe) || w->stop || w->reloading;

	for (size_t i = 0; i < connectors_count(w->conns); i++) {
		struct conn *c = connectors_at(w->conns, i);
		enum source_env_mode m = source_env_mode(c, wait);

		if (c->removed)
			continue;
		if (source_env_watch(c, m, now) != 0)
			return WORKER_ERR_NOMEM;
	}
	supervisor_wake(w->sup);
	/* An idle skiff has nothing to flush and sets no flush timer; whatever
	 * wakes it (the rescan) checks, once a flush interval, that the store
	 * was not deleted under it, which arms the timer. */
	commits_idle_check(w->commits, now, w->flush_interval);
	/* Exactly-once past its boundary: no write starts until the transaction
	 * ends (its offset records come after the store's in the topic). */
	loop_timer_set(w->flush_timer,
	               commits_due(w->commits) && !eos_blocks(w->eos) ? w->next_flush : -1, 0);
	return 0;
}

/* worker_private.h */
int worker_turn(struct worker *w)
{
	char errbuf[512];
	int64_t now;
	int code;

	if (prepare(w, now_ms()) != 0) {
		log_error("loop: out of memory");
		return WORKER_EXIT_TEMPFAIL;
	}
	if (loop_once(w->loop, errbuf, sizeof(errbuf)) != 0) {
		log_error("%s", errbuf);
		return WORKER_EXIT_TEMPFAIL;
	}
	/* Served every turn too: librdkafka writes to the pipe only when its
	 * queue turns non-empty. */
	pipeline_poll_sink(w->pipe);
	if ((code = supervisor_turn(w->sup, w->stop)) != 0)
		return code;
	if (!w->stop)
		reload_turn(w->reload);
	now = now_ms();
	for (size_t i = 0; i < connectors_count(w->conns) && !w->stop; i++) {
		struct conn *c = connectors_at(w->conns, i);

		pipeline_produce(w->pipe, c);
		if (source_env_mode(c, pipeline_blocked(w->pipe)) == SOURCE_ENV_WATCH)
			source_env_notice(c, now);
		else if (c->ready)
			pipeline_poll_source(w->pipe, c, now);
	}
	if ((code = eos_boundary(w->eos, false)) != 0)
		return code;
	code = connectors_exit_code(w->conns);
	if (code != 0)
		log_error("no connector is running");
	return code;
}

/* One turn of the loop with the producer's pipe, signals, the store's and
 * the sources' watches (w->stop or w->reloading is set, or exactly-once
 * drains: nothing is read), sleeping until deadline at most. 0, or -1 when
 * the loop failed. */
static int drain_turn(struct worker *w, int64_t now, int64_t deadline)
{
	char errbuf[512];

	if (prepare(w, now) != 0)
		return -1;
	loop_timer_set(w->flush_timer, -1, 0);
	loop_timer_set(w->tick, deadline - now > 100 ? now + 100 : deadline, 0);
	if (loop_once(w->loop, errbuf, sizeof(errbuf)) != 0)
		return -1;
	pipeline_poll_sink(w->pipe);
	offsets_poll(w->offsets);
	now = now_ms();
	for (size_t i = 0; i < connectors_count(w->conns); i++)
		if (source_env_mode(connectors_at(w->conns, i), true) == SOURCE_ENV_WATCH)
			source_env_notice(connectors_at(w->conns, i), now);
	return 0;
}

/* Runs drain_turn until done(w) or the deadline. */
static void drain(struct worker *w, int64_t deadline, bool (*done)(const struct worker *))
{
	int64_t now;

	while (!done(w) && (now = now_ms()) < deadline)
		if (drain_turn(w, now, deadline) != 0)
			break;
	loop_timer_set(w->flush_timer, -1, 0);
	loop_timer_set(w->tick, -1, 0);
}

/* worker_private.h. The transaction bounds its own drain and commit (eos.c):
 * the loop runs until it ended, one way or the other. */
int worker_eos_settle(struct worker *w)
{
	int64_t now;
	int code;

	while ((code = eos_boundary(w->eos, true)) == 0 && !eos_idle(w->eos)) {
		now = now_ms();
		if (drain_turn(w, now, now + 100) != 0) {
			code = eos_exit_code(w->eos);
			break;
		}
	}
	loop_timer_set(w->flush_timer, -1, 0);
	loop_timer_set(w->tick, -1, 0);
	return code;
}

static bool nothing_in_flight(const struct worker *w)
{
	return sink_in_flight(supervisor_sink(w->sup)) == 0;
}

static bool no_write_in_flight(const struct worker *w)
{
	return !offsets_writing(w->offsets);
}

static void on_tick(struct loop *l, struct loop_timer *t, void *arg)
{
}

/* source_ops.stopping's put: p's offset as the source amends it, over the
 * acknowledged prefix just put (never a partition with none stored). */
static void put_stopping(void *arg, struct partition *p, const char *json)
{
	struct worker *w = arg;

	if (w->eos != NULL || offsets_get(w->offsets, p->key) == NULL)
		return;
	if (offsets_put_shared(w->offsets, p->key, json) != 0)
		log_warn("offsets: cannot record what %s held at this stop (out of memory or too "
		         "many partitions)",
		         p->key);
}

/* At a stop: the acknowledged prefix into the store, then each source says
 * what of what it read past it the next start reads again, and counts the
 * rest (source_ops.stopping). */
static void stop_sources(struct worker *w)
{
	commits_put_all(w->commits, w->parts, w->eos != NULL);
	for (size_t i = 0; i < connectors_count(w->conns); i++) {
		struct conn *c = connectors_at(w->conns, i);

		if (!c->removed && c->ctx != NULL && c->cs->ops->stopping != NULL)
			c->cs->ops->stopping(c->ctx, put_stopping, w);
	}
}

/* Waits up to offset.flush.timeout.ms for records in flight, then commits
 * what was acknowledged (waiting as long again for that write). */
static int shut_down(struct worker *w, int code)
{
	uint64_t replaced = 0;
	int left;

	w->stop = true;
	notify_send(w->notify, "STOPPING=1");
	if (w->on_stop != NULL) {
		void (*fn)(void *) = w->on_stop;

		w->on_stop = NULL;
		fn(w->on_stop_arg);
	}
	if (worker_eos_settle(w) != 0 && code == WORKER_EXIT_OK)
		code = WORKER_EXIT_TEMPFAIL;
	drain(w, now_ms() + w->flush_timeout, nothing_in_flight);
	left = sink_in_flight(supervisor_sink(w->sup));
	if (left > 0)
		log_warn("%d records still unacknowledged after offset.flush.timeout.ms=%lld: the "
		         "next start reads again those still in their files, tables and journals "
		         "(each file connector names its files, and counts those deleted since)",
		         left, (long long)w->flush_timeout);
	for (size_t i = 0; i < connectors_count(w->conns); i++)
		replaced += connectors_at(w->conns, i)->removed
		                ? 0
		                : *connectors_at(w->conns, i)->utf8_replaced;
	if (replaced > 0)
		log_notice(
		    "converters replaced %llu invalid UTF-8 sequences with U+FFFD (as Connect "
		    "does; ByteArrayConverter passes bytes unchanged)",
		    (unsigned long long)replaced);
	drain(w, now_ms() + w->flush_timeout, no_write_in_flight);
	stop_sources(w);
	flush_offsets(w);
	drain(w, now_ms() + w->flush_timeout, no_write_in_flight);
	if ((offsets_writing(w->offsets) || commits_last(w->commits, NULL) != 0) &&
	    code == WORKER_EXIT_OK)
		code = WORKER_EXIT_TEMPFAIL;
	return code;
}

int worker_drain_and_flush(struct worker *w)
{
	bool reloading = w->reloading;
	int left;

	w->reloading = true; /* no source is read while it drains (watched: prepare) */
	/* Exactly-once: the open transaction carries the offsets of its
	 * records into the store. A connector a reload restarts opens from the
	 * store: without the commit it read again what the transaction then
	 * committed (2,140 lines twice for read_committed, no crash). A failed
	 * commit makes the turn's end exit. */
	(void)worker_eos_settle(w);
	drain(w, now_ms() + w->flush_timeout, nothing_in_flight);
	left = sink_in_flight(supervisor_sink(w->sup));
	drain(w, now_ms() + w->flush_timeout, no_write_in_flight);
	flush_offsets(w);
	drain(w, now_ms() + w->flush_timeout, no_write_in_flight);
	w->reloading = reloading;
	w->next_flush = now_ms() + w->flush_interval;
	return left;
}

int worker_run(struct worker *w, int sigfd)
{
	int code = 0;

	w->sigfd = sigfd;
	if (loop_fd_add(w->loop, sigfd, POLLIN, on_signal_fd, w, &w->sig_watch) != 0 ||
	    notify_open(w->loop, &w->query, &w->notify) != 0 ||
	    status_sock_open(w->loop, &w->query, w->health,
	                     settings_worker(w->settings->worker)->offset_file, &w->status) != 0 ||
	    supervisor_start(w->sup) != 0) {
		log_error("loop: out of memory");
		return WORKER_EXIT_TEMPFAIL;
	}
	log_info("running %zu connector%s", connectors_count(w->conns),
	         connectors_count(w->conns) == 1 ? "" : "s");
	notify_send(w->notify, "READY=1");
	while (!w->stop && code == 0)
		code = worker_turn(w);
	code = shut_down(w, code);
	log_info("stopped (exit %d)", code);
	return code;
}

void worker_on_stop(struct worker *w, void (*fn)(void *arg), void *arg)
{
	w->on_stop = fn;
	w->on_stop_arg = arg;
}

struct loop *worker_loop(struct worker *w)
{
	return w->loop;
}

/* ---- set-up -------------------------------------------------------------- */

/* ---- what the producer's supervisor asks of the worker ------------------ */

/* Closes c and opens it again from its stored offsets, paused if it was;
 * failing that, c stays FAILED with the reason. */
static void restart_conn(struct worker *w, struct conn *c)
{
	const struct connector_settings *cs = c->cs;
	bool paused = c->run == CONN_PAUSED || c->run == CONN_STOPPING;
	char why[1024];
	int rc;

	log_notice("connector %s: records still in flight on the old producer: reading again "
	           "from the stored offsets",
	           cs->name);
	connector_close(c, CLOSE_ABANDON);
	rc = connector_open(c, cs, OPEN_NEW, why, sizeof(why));
	if (rc == 0) {
		c->run = paused ? CONN_PAUSED : CONN_RUNNING;
		return;
	}
	log_error("connector %s: cannot reopen: %s", cs->name, why);
	connector_fail_open(c, rc != WORKER_ERR_NOMEM, why); /* source.h: as at start */
}

/* supervisor_ops.restart: after the drain, no slot of the old slab may
 * outlive it. A connector that reads (or may read again) with records in
 * flight is restarted; one that failed for good only has its partitions'
 * slots dropped. */
static void let_go_of_old_slots(void *ctx)
{
	struct worker *w = ctx;

	for (size_t k = 0; k < connectors_count(w->conns); k++) {
		struct conn *c = connectors_at(w->conns, k);
		bool busy = false;

		if (c->removed)
			continue;
		for (size_t i = 0; i < partitions_count(w->parts); i++)
			busy |= partitions_at(w->parts, i)->conn == c &&
			        partition_inflight(partitions_at(w->parts, i)) > 0;
		if (!busy)
			continue;
		if (!c->stopped) {
			restart_conn(w, c);
			continue;
		}
		for (size_t i = 0; i < partitions_count(w->parts); i++)
			if (partitions_at(w->parts, i)->conn == c &&
			    partition_inflight(partitions_at(w->parts, i)) > 0)
				partition_abandon(w->acks, partitions_at(w->parts, i));
	}
}

/* supervisor_ops.commit: the old producer's transaction commits first. */
static int commit_before_rebuild(void *ctx)
{
	return worker_eos_settle(ctx);
}

/* supervisor_ops.drain */
static int drain_before_rebuild(void *ctx)
{
	struct worker *w = ctx;
	int left = worker_drain_and_flush(w);

	if (left > 0)
		log_warn("producer: %d records unacknowledged after offset.flush.timeout.ms=%lld",
		         left, (long long)w->flush_timeout);
	return left;
}

/* supervisor_ops.swapped: the new producer's ack slots. */
static void swapped(void *ctx, struct acks *slab)
{
	struct worker *w = ctx;

	acks_destroy(w->acks);
	w->acks = slab;
	pipeline_set_producer(w->pipe, w->sup, slab);
	connectors_set_acks(w->conns, slab);
	eos_reopen(w->eos);
}

/* supervisor_ops.fatal */
static int sink_fatal_exit(void *ctx, const char *why)
{
	struct worker *w = ctx;

	if (!eos_fenced(w->eos)) /* else eos_exit_code says it */
		log_error("%s", why);
	return eos_exit_code(w->eos);
}

static const struct supervisor_ops supervision = {
    .serve = serve_sink,
    .commit = commit_before_rebuild,
    .drain = drain_before_rebuild,
    .restart = let_go_of_old_slots,
    .swapped = swapped,
    .fatal = sink_fatal_exit,
};

/* ---- what the reload asks of the worker ---------------------------------- */

static int reload_drain(void *ctx)
{
	return worker_drain_and_flush(ctx);
}

/* reload_ops.apply: the flush timings and the health bound. */
static void reload_apply(void *ctx, const struct worker_conf *wc)
{
	struct worker *w = ctx;

	w->flush_interval = wc->flush_interval_ms;
	w->flush_timeout = wc->flush_timeout_ms;
	w->health_ack_ms = wc->health_ack_timeout_ms;
	w->part_limit = (size_t)wc->metrics_partition_limit;
	w->next_flush = now_ms() + w->flush_interval;
}

static void reload_eos(void *ctx)
{
	struct worker *w = ctx;

	eos_reload(w->eos, w->settings, w->flush_interval);
}

static void reload_notify(void *ctx, const char *state)
{
	notify_send(((struct worker *)ctx)->notify, state);
}

static size_t reload_slots(void *ctx)
{
	return connectors_count(((struct worker *)ctx)->conns);
}

static const struct connector_settings *reload_slot(void *ctx, size_t k)
{
	const struct conn *c = connectors_at(((struct worker *)ctx)->conns, k);

	return c->removed ? NULL : c->cs;
}

static void reload_rebind(void *ctx, size_t k, const struct connector_settings *cs)
{
	connectors_at(((struct worker *)ctx)->conns, k)->cs = cs;
}

static long reload_add(void *ctx)
{
	struct worker *w = ctx;

	return connectors_slot(w->conns) != NULL ? (long)connectors_count(w->conns) - 1 : -1;
}

/* reload_ops.fail: slot k stays FAILED with why as its trace, polling
 * nothing until a reload that changes it or a restart. Only out of memory
 * before its counters existed (no records array) leaves the slot free. */
static void reload_fail(void *ctx, size_t k, const char *why)
{
	connector_fail_open(connectors_at(((struct worker *)ctx)->conns, k), true, why);
}

static int reload_open(void *ctx, size_t k, const struct connector_settings *cs, char *why,
                       size_t len)
{
	struct worker *w = ctx;

	if (connector_open(connectors_at(w->conns, k), cs, OPEN_NEW, why, len) == 0)
		return 0;
	reload_fail(w, k, why);
	return -1;
}

static void reload_close(void *ctx, size_t k)
{
	connector_close(connectors_at(((struct worker *)ctx)->conns, k), CLOSE_ABANDON);
}

/* reload_ops.soon: the tick makes the next turn's poll return at once. */
static void reload_soon(void *ctx)
{
	loop_timer_set(((struct worker *)ctx)->tick, now_ms(), 0);
}

static const struct reload_ops reloading = {
    .drain_and_flush = reload_drain,
    .apply = reload_apply,
    .eos_reload = reload_eos,
    .notify = reload_notify,
    .slots = reload_slots,
    .slot = reload_slot,
    .rebind = reload_rebind,
    .add = reload_add,
    .open = reload_open,
    .fail = reload_fail,
    .close = reload_close,
    .soon = reload_soon,
};

void worker_reload_setup(struct worker *w, struct settings *s, char *const *paths, size_t n,
                         bool cli_log_level)
{
	reload_setup(w->reload, s, w->offsets, paths, n, cli_log_level);
}

/* The record path's calls into exactly-once (pipeline_hooks), ctx the
 * worker. */
static int txn_begin(void *ctx)
{
	return eos_begin(((struct worker *)ctx)->eos);
}

static void txn_failed(void *ctx)
{
	eos_failed(((struct worker *)ctx)->eos);
}

static bool fenced(void *ctx)
{
	return eos_fenced(((struct worker *)ctx)->eos);
}

static bool txn_blocks(void *ctx)
{
	return eos_blocks(((struct worker *)ctx)->eos);
}

/* What the record path (core/pipeline.c) calls of the worker. */
static const struct pipeline_hooks hooks = {
    .fail = connector_fail,
    .acked = connector_acked,
    .produced = connector_produced,
    .txn_begin = txn_begin,
    .txn_failed = txn_failed,
    .fenced = fenced,
    .txn_blocks = txn_blocks,
};

/* partitions_drop_conn's gone: p's series leave the registry. */
static void unshow(struct partition *p)
{
	pmetrics_unshow(&p->series, true);
}

/* connector_hooks' calls of the worker, ctx the worker. */
static void log_counters(void *ctx)
{
	source_env_log_counters(((struct worker *)ctx)->envs);
}

static bool txn_holds(void *ctx, const struct conn *c)
{
	return eos_holds(((struct worker *)ctx)->eos, c);
}

static void txn_commit_soon(void *ctx)
{
	eos_commit_soon(((struct worker *)ctx)->eos);
}

static void flush_soon(void *ctx)
{
	((struct worker *)ctx)->next_flush = now_ms();
}

/* connector_hooks.source_env: c's env, hosted by the worker's. */
static void env_init(void *ctx, struct conn *c)
{
	source_env_init(((struct worker *)ctx)->envs, c);
}

/* What the connectors' lifecycle (core/connectors.c) calls of the worker. */
static const struct connector_hooks life = {
    .source_env = env_init,
    .source_register = source_env_register,
    .source_free = source_env_free,
    .log_counters = log_counters,
    .unshow = unshow,
    .txn_holds = txn_holds,
    .txn_commit_soon = txn_commit_soon,
    .flush_soon = flush_soon,
};

/* eos_env.more_ready: a connector's source has records ready now. */
static bool more_ready(void *arg)
{
	const struct worker *w = arg;

	for (size_t i = 0; i < connectors_count(w->conns); i++) {
		const struct conn *c = connectors_at(w->conns, i);

		if (!c->removed && !c->stopped && (c->ready || c->next < c->batch.n))
			return true;
	}
	return false;
}

static void committed(void *arg)
{
	connectors_committed(((struct worker *)arg)->conns);
}

static void waiting(void *arg)
{
	worker_waiting(arg);
}

static struct sink *current_sink(void *arg)
{
	const struct worker *w = arg;

	return supervisor_sink(w->sup);
}

/* Exactly-once, when the settings enable it (else w->eos stays NULL). */
static int open_eos(struct worker *w, char *errbuf, size_t errlen)
{
	const struct eos_env env = {.loop = w->loop,
	                            .parts = w->parts,
	                            .commits = w->commits,
	                            .sink = current_sink,
	                            .flush_timeout = &w->flush_timeout,
	                            .stopping = &w->stop,
	                            .ctx = w,
	                            .more_ready = more_ready,
	                            .committed = committed,
	                            .waiting = waiting};

	return eos_open(w->settings, w->flush_interval, &env, &w->eos, errbuf, errlen);
}

/* source_env_ops, ctx the worker. */
static size_t message_max(void *ctx)
{
	const struct worker *w = ctx;
	const struct sink *sink = w->sup != NULL ? supervisor_sink(w->sup) : NULL;

	return sink != NULL ? sink_message_max(sink) : 0;
}

static int64_t flush_interval(void *ctx)
{
	return ((const struct worker *)ctx)->flush_interval;
}

/* What the sources' env (core/source_env.c) asks of the worker. */
static const struct source_env_ops env_ops = {
    .flush_soon = flush_soon,
    .message_max = message_max,
    .flush_interval = flush_interval,
};

/* What the query asks of the worker (struct query_host_ops). */
static void query_flush_soon(void *ctx)
{
	((struct worker *)ctx)->next_flush = loop_now_ms();
}

static void query_limits(void *ctx, int64_t *ack_timeout, size_t *part_limit)
{
	const struct worker *w = ctx;

	*ack_timeout = w->health_ack_ms;
	*part_limit = w->part_limit;
}

static const struct config_section *query_worker_config(void *ctx)
{
	return ((const struct worker *)ctx)->settings->worker;
}

static const struct query_host_ops query_ops = {
    .flush_soon = query_flush_soon,
    .limits = query_limits,
    .worker_config = query_worker_config,
};

/* worker.h */
const struct query *worker_query(struct worker *w)
{
	return &w->query;
}

/* worker.h */
struct health *worker_health(struct worker *w)
{
	return w->health;
}

/* The host of the sources' envs, over the loop, the registry, the
 * partitions and the commits (made before). Returns 0 or
 * SOURCE_ENV_ERR_NOMEM. */
static int open_envs(struct worker *w)
{
	struct source_env_conf ec = {
	    .loop = w->loop,
	    .stats = w->stats,
	    .parts = w->parts,
	    .commits = w->commits,
	    .offset_file = settings_worker(w->settings->worker)->offset_file,
	    .ops = &env_ops,
	    .ctx = w,
	};

	return source_env_host_new(&ec, &w->envs);
}

/* The connector slots, over the loop, the registry, the partitions and
 * the commits (made before). Returns 0 or CONNECTORS_ERR_NOMEM. */
static int open_connectors(struct worker *w)
{
	struct connectors_conf cc = {
	    .loop = w->loop,
	    .stats = w->stats,
	    .parts = w->parts,
	    .commits = w->commits,
	    .pipe = w->pipe,
	    .hooks = &life,
	    .ctx = w,
	    .rest = settings_remote_connectors(w->settings->worker),
	    .steered = settings_fleet_steered(w->settings->worker),
	};

	return connectors_new(&cc, &w->conns);
}

/* commits_render_fn: p's offset as its source renders it. */
static char *render(struct partition *p, const struct src_offset *off)
{
	return p->conn->cs->ops->offset_json(p->conn->ctx, off);
}

/* The offset flush's gauges; then (control/health.c) the producer's and
 * the process's, in this order (the order of /metrics). Returns 0 or
 * WORKER_ERR_NOMEM. */
static int register_gauges(struct worker *w)
{
	static const struct stats_desc d[] = {
	    {"offsets_last_flush", STATS_GAUGE, "when the last offset write completed",
	     STATS_F_EPOCH_MS},
	    {"offsets_last_flush_ok", STATS_GAUGE, "1 when the last offset write succeeded", 0},
	};
	uint64_t **cells[] = {commits_cell(w->commits, COMMITS_FLUSH_TIME),
	                      commits_cell(w->commits, COMMITS_FLUSH_OK)};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (stats_register(w->stats, &d[i], NULL, cells[i], NULL) != 0)
			return WORKER_ERR_NOMEM;
	return health_new(&w->query, &w->health) == 0 ? 0 : WORKER_ERR_NOMEM;
}

/* The record path, and the producer's delivery reports to it (its
 * producer comes with open_sink). Returns 0 or PIPELINE_ERR_NOMEM. */
static int open_pipeline(struct worker *w, struct supervisor_conf *sc)
{
	struct pipeline_conf pc = {.commits = w->commits, .hooks = &hooks, .ctx = w};
	int rc = pipeline_new(&pc, &w->pipe);

	sc->delivery_ctx = w->pipe;
	return rc;
}

/* The loop and the worker's own registrations. */
static int open_loop(struct worker *w, sink_open_fn opener, char *errbuf, size_t errlen)
{
	static const struct stats_desc in_a_row = {
	    "offsets_flush_failures_in_a_row", STATS_GAUGE,
	    "offset writes that failed in a row (3 pause reading until one succeeds)", 0};
	struct supervisor_conf sc = {.stats = w->stats,
	                             .settings = w->settings,
	                             .open_sink = opener,
	                             .delivery = pipeline_delivery,
	                             .ops = &supervision,
	                             .ctx = w};

	if (loop_new(&w->loop) != 0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return WORKER_ERR_NOMEM;
	}
	sc.loop = w->loop;
	if (partitions_new(&w->parts) != 0 || commits_new(NULL, render, &w->commits) != 0 ||
	    open_envs(w) != 0 || open_pipeline(w, &sc) != 0 || open_connectors(w) != 0 ||
	    supervisor_new(&sc, &w->sup) != 0 ||
	    loop_timer_add(w->loop, -1, 0, on_flush_timer, w, &w->flush_timer) != 0 ||
	    loop_timer_add(w->loop, -1, 0, on_tick, w, &w->tick) != 0 ||
	    stats_register(w->stats, &in_a_row, NULL,
	                   commits_cell(w->commits, COMMITS_FAILED_IN_A_ROW), NULL) != 0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return WORKER_ERR_NOMEM;
	}
	/* The query's host, before the health client reads through it. */
	w->qhost = (struct query_host){.conns = w->conns,
	                               .parts = w->parts,
	                               .commits = w->commits,
	                               .pipe = w->pipe,
	                               .sup = w->sup,
	                               .stats = w->stats,
	                               .ops = &query_ops,
	                               .ctx = w};
	if (register_gauges(w) != 0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return WORKER_ERR_NOMEM;
	}
	commits_set_stopping(w->commits, &w->stop);
	return 0;
}

/* The reload, with nothing to reload until worker_reload_setup. */
static int open_reload(struct worker *w, char *errbuf, size_t errlen)
{
	struct reload_env env = {.ops = &reloading,
	                         .ctx = w,
	                         .sup = w->sup,
	                         .query = &w->query,
	                         .draining = &w->reloading};

	if (reload_new(&env, &w->reload) != 0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return WORKER_ERR_NOMEM;
	}
	w->qhost.reload = w->reload;
	return 0;
}

/* The producer, its pipe in the loop, and as many ack slots as its queue
 * holds records: memory for in-flight records is bounded by construction. */
static int open_sink(struct worker *w, char *errbuf, size_t errlen)
{
	int rc = supervisor_open(w->sup, errbuf, errlen);
	struct sink *sink = supervisor_sink(w->sup);

	if (rc != 0)
		return rc == SUPERVISOR_ERR_CONFIG  ? WORKER_ERR_CONFIG
		       : rc == SUPERVISOR_ERR_NOMEM ? WORKER_ERR_NOMEM
		                                    : WORKER_ERR;
	if (acks_new(sink_queue_capacity(sink), &w->acks) != 0) {
		snprintf(errbuf, errlen, "out of memory for %u in-flight records",
		         sink_queue_capacity(sink));
		return WORKER_ERR_NOMEM;
	}
	pipeline_set_producer(w->pipe, w->sup, w->acks);
	connectors_set_acks(w->conns, w->acks);
	return 0;
}

int worker_new(const struct settings *s, struct stats *stats, struct worker **out, char *errbuf,
               size_t errlen)
{
	return worker_new_with(s, stats, sink_open, out, errbuf, errlen);
}

/* worker_private.h */
int worker_new_with(const struct settings *s, struct stats *stats, sink_open_fn opener,
                    struct worker **out, char *errbuf, size_t errlen)
{
	struct worker *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (w == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return WORKER_ERR_NOMEM;
	}
	w->settings = s;
	w->query = (struct query){&host_query_ops, &w->qhost};
	w->stats = stats;
	w->flush_interval = settings_worker(s->worker)->flush_interval_ms;
	w->flush_timeout = settings_worker(s->worker)->flush_timeout_ms;
	w->health_ack_ms = settings_worker(s->worker)->health_ack_timeout_ms;
	w->part_limit = (size_t)settings_worker(s->worker)->metrics_partition_limit;
	w->next_flush = now_ms() + w->flush_interval;
	if ((rc = open_loop(w, opener, errbuf, errlen)) != 0 ||
	    (rc = open_reload(w, errbuf, errlen)) != 0 ||
	    (rc = open_sink(w, errbuf, errlen)) != 0 || (rc = open_eos(w, errbuf, errlen)) != 0) {
		worker_destroy(w);
		return rc;
	}
	*out = w;
	return 0;
}

int worker_fence(struct worker *w, char *errbuf, size_t errlen)
{
	return eos_fence(w->eos, errbuf, errlen);
}

int worker_await_cluster(struct worker *w, int sigfd, bool *waited)
{
	return eos_await_cluster(w->eos, settings_worker(w->settings->worker)->bootstrap.text,
	                         sigfd, waited);
}

/* Whether the source's table has key. */
static bool has_key(const struct source_ops *ops, const char *key)
{
	for (const struct config_key *k = ops->config_keys; k != NULL && k->name != NULL; k++)
		if (strcmp(k->name, key) == 0)
			return true;
	return false;
}

/* A store that holds nothing (a first start, or a state directory emptied
 * or lost): one line saying so and where each connector starts, so that a
 * restart that reads everything again, or skips to the end, is never
 * silent. */
static void say_empty_store(const struct worker *w)
{
	const struct settings *s = w->settings;
	const char *file = settings_worker(s->worker)->offset_file;
	/* No connector (the REST API's to come) leaves the loop below nothing
	 * to write: it printed what the stack held. */
	char line[4096] = "no connector yet";
	size_t n = 0;

	if (offsets_count(w->offsets) > 0)
		return;
	for (size_t i = 0; i < s->nconnectors && n < sizeof(line); i++) {
		const struct connector_settings *cs = &s->connectors[i];
		bool rf = has_key(cs->ops, "read.from");
		/* A source's key, shown as --check shows it. */
		const char *from = rf ? config_shown(cs->cfg, "read.from") : "beginning";
		int k = snprintf(line + n, sizeof(line) - n, "%sconnector %s (%s) at the %s%s",
		                 i > 0 ? "; " : "", cs->name, cs->ops->kind, from,
		                 rf ? " (read.from)" : "");

		n += k > 0 ? (size_t)k : 0;
	}
	log_warn("offset store %s: no stored offsets (a first start, or its files were deleted): "
	         "%s",
	         file != NULL && *file != '\0' ? file : settings_worker(s->worker)->offset_topic,
	         line);
}

int worker_start(struct worker *w, struct offsets *offsets, char *errbuf, size_t errlen)
{
	const struct settings *s = w->settings;
	int rc;

	w->offsets = offsets;
	commits_set_store(w->commits, offsets);
	source_env_host_set_offsets(w->envs, offsets);
	if (offsets_fd(offsets) >= 0 && loop_fd_add(w->loop, offsets_fd(offsets), POLLIN,
	                                            on_offsets_fd, w, &w->offsets_watch) != 0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return WORKER_ERR_NOMEM;
	}
	if ((rc = eos_start(w->eos, offsets, errbuf, errlen)) != 0)
		return rc;
	say_empty_store(w);
	for (size_t i = 0; i < s->nconnectors; i++) {
		struct conn *c = connectors_slot(w->conns);

		if (c == NULL) {
			snprintf(errbuf, errlen, "worker: out of memory");
			return WORKER_ERR_NOMEM;
		}
		/* source.h: a source that refuses to open at start needs a
		 * person, whatever it said; out of memory may pass. */
		if ((rc = connector_open(c, &s->connectors[i], OPEN_NEW, errbuf, errlen)) != 0)
			return rc == WORKER_ERR_NOMEM ? rc : WORKER_ERR_CONFIG;
	}
	return 0;
}

int worker_exit_code(int err)
{
	if (err == 0)
		return WORKER_EXIT_OK;
	return err == WORKER_ERR_CONFIG ? WORKER_EXIT_CONFIG : WORKER_EXIT_TEMPFAIL;
}

const char *worker_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case WORKER_ERR:
		return "transient failure";
	case WORKER_ERR_CONFIG:
		return "configuration error";
	case WORKER_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown worker error";
	}
}

/* partitions_destroy's gone: the series' registry goes with stats. */
static void free_series(struct partition *p)
{
	pmetrics_unshow(&p->series, false);
}

void worker_destroy(struct worker *w)
{
	if (w == NULL)
		return;
	/* The sink first: it drops what is undelivered without a delivery
	 * report, so nothing is acknowledged after this point. */
	supervisor_stop(w->sup);
	eos_close(w->eos);
	w->eos = NULL;
	/* Each logs what closing it lost (the file source counts the held
	 * files deleted since), before the registry goes. */
	connectors_destroy(w->conns);
	w->conns = NULL;
	reload_destroy(w->reload);
	notify_close(w->notify);
	w->notify = NULL;
	status_sock_close(w->status);
	w->status = NULL;
	supervisor_destroy(w->sup);
	partitions_destroy(w->parts, w->acks, free_series);
	health_destroy(w->health);
	source_env_host_destroy(w->envs);
	commits_destroy(w->commits);
	acks_destroy(w->acks);
	loop_destroy(w->loop);
	pipeline_destroy(w->pipe);
	free(w);
}
