/* worker_sink: the producer's life after start. librdkafka reads its TLS
 * files (certificate, key, CA, keystore, CRL) once, when the producer is
 * made, and cannot read them again; short-lived device certificates are
 * replaced on disk while skiff runs. So the worker watches those files
 * (filewatch.h: inotify on their directories, nothing while idle) and, once
 * a change has settled, makes a new producer:
 *
 * 1. The new producer is made first. When that fails (a half-written or
 *    mismatched certificate and key, which librdkafka checks when it is
 *    made) the reason is logged and the running producer goes on: its
 *    connections were made with the old certificate and still work. The
 *    next change is tried again.
 * 2. Reading stops and the records in flight are waited for (at most
 *    offset.flush.timeout.ms), then the acknowledged offsets are written.
 * 3. A connector that still has records in flight (the old producer cannot
 *    reach the broker: say its certificate was the broken one) is closed and
 *    opened again from its stored offsets, so those records are read again
 *    (duplicates bounded by the records in flight, as at a restart).
 * 4. The old producer is destroyed (purged without delivery reports, so no
 *    late report is mistaken for an ack), the ack slots are made anew for
 *    the new producer's queue, and reading resumes.
 *
 * Main thread only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/acks.h"
#include "config/config.h"
#include "util/filewatch.h"
#include "core/log.h"
#include "core/pipeline.h"
#include "core/loop.h"
#include "kafka/ratelimit.h"
#include "kafka/sink_kafka.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quiet time after the last event before the files are compared: a tool
 * renames a certificate and its key one after the other. */
#define SETTLE_MS 1000
#define MAX_TLS_FILES 16

/* The rebuild runs the loop itself (the drain): it waits for the end of the
 * turn (worker_sink_turn), not inside this callback. */
static void on_settled(struct loop *l, struct loop_timer *t, void *arg)
{
	struct worker *w = arg;

	w->tls_due = true;
}

static void rebuild_if_changed(struct worker *w)
{
	const char *path = filewatch_changed(w->tls);
	char why[1024];

	if (path == NULL)
		return;
	snprintf(why, sizeof(why), "%s changed", path);
	log_notice("producer: %s changed on disk; librdkafka reads it only when a producer is "
	           "made: draining, flushing offsets and making a new one",
	           path);
	(void)worker_sink_rebuild(w, w->settings->worker, why);
}

static void on_tls_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	struct worker *w = arg;

	if (filewatch_drain(w->tls))
		loop_timer_set(w->tls_settle, loop_now_ms() + SETTLE_MS, 0);
}

int worker_sink_watch(struct worker *w)
{
	const char *files[MAX_TLS_FILES];
	size_t n = sink_tls_files(w->settings->worker, files, MAX_TLS_FILES);
	char why[1024];
	int rc;

	if (n == 0)
		return 0;
	rc = filewatch_new(files, n, &w->tls, why, sizeof(why));
	if (rc == FILEWATCH_ERR_NOMEM)
		return WORKER_ERR_NOMEM;
	if (rc != 0) {
		log_warn("producer: %s: a new certificate will not be seen until skiff restarts",
		         why);
		return 0;
	}
	if (loop_fd_add(w->loop, filewatch_fd(w->tls), POLLIN, on_tls_fd, w, &w->tls_watch) != 0 ||
	    loop_timer_add(w->loop, -1, 0, on_settled, w, &w->tls_settle) != 0)
		return WORKER_ERR_NOMEM;
	log_info("producer: watching %zu TLS file%s for changes", n, n == 1 ? "" : "s");
	return 0;
}

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
	rc = connector_open(w, c, cs, OPEN_NEW, why, sizeof(why));
	if (rc == 0) {
		c->run = paused ? CONN_PAUSED : CONN_RUNNING;
		return;
	}
	log_error("connector %s: cannot reopen: %s", cs->name, why);
	if (c->records == NULL) {
		connector_close(c, CLOSE_ABANDON);
		return;
	}
	c->stopped = true;
	c->config_error = rc != WORKER_ERR_NOMEM; /* source.h: as at start */
	c->trace = strdup(why);                   /* NULL: FAILED without the text */
}

/* After the drain: no slot of the old slab may outlive it. A connector
 * that reads (or may read again) with records in flight is restarted; one
 * that failed for good only has its partitions' slots dropped. */
static void let_go_of_old_slots(struct worker *w)
{
	for (size_t k = 0; k < w->nconns; k++) {
		struct conn *c = w->conns[k];
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

int worker_sink_rebuild(struct worker *w, const struct config_section *ws, const char *why)
{
	struct sink *next = NULL;
	struct acks *slab;
	char err[1024];
	int rc, left;

	rc = w->open_sink(ws, pipeline_delivery, w, &next, err, sizeof(err));
	if (rc != 0) {
		log_error("producer: no new producer after %s: %s; the running one goes on, and "
		          "the next change is tried again",
		          why, err);
		return rc == SINK_ERR_CONFIG  ? WORKER_ERR_CONFIG
		       : rc == SINK_ERR_NOMEM ? WORKER_ERR_NOMEM
		                              : WORKER_ERR;
	}
	if (acks_new(sink_queue_capacity(next), &slab) != 0) {
		sink_destroy(next);
		log_error("producer: no new producer after %s: out of memory; the running one "
		          "goes on",
		          why);
		return WORKER_ERR_NOMEM;
	}
	/* Exactly-once: the old producer's transaction commits first. */
	if (worker_eos_boundary(w, true) != 0) {
		sink_destroy(next);
		acks_destroy(slab);
		return WORKER_ERR;
	}
	left = worker_drain_and_flush(w);
	if (left > 0)
		log_warn("producer: %d records unacknowledged after offset.flush.timeout.ms=%lld",
		         left, (long long)w->flush_timeout);
	let_go_of_old_slots(w);
	{
		struct sink_stats ss;

		/* skiff_producer_sent_bytes_total goes on from there. */
		sink_stats(w->sink, &ss);
		w->sent_before += ss.wire_bytes;
	}
	sink_destroy(w->sink);
	acks_destroy(w->acks);
	w->acks = slab;
	w->sink = next;
	w->queue_full = false;
	loop_fd_set(w->sink_watch, sink_fd(next), POLLIN);
	worker_eos_reopen(w);
	log_notice("producer: a new producer after %s (%d records were still in flight); "
	           "reading resumes",
	           why, left);
	return 0;
}

int worker_sink_rewatch(struct worker *w)
{
	loop_fd_del(w->loop, w->tls_watch);
	loop_timer_del(w->loop, w->tls_settle);
	filewatch_destroy(w->tls);
	w->tls_watch = NULL;
	w->tls_settle = NULL;
	w->tls = NULL;
	w->tls_due = false;
	return worker_sink_watch(w);
}

void worker_sink_retire(struct worker *w, struct config_section *old)
{
	struct config_section **grown;

	if (old == NULL)
		return;
	grown = realloc(w->retired, (w->nretired + 1) * sizeof(*grown));
	if (grown == NULL) {
		/* Leaked rather than freed under a reader: a reload at most. */
		log_warn("reload: out of memory keeping the previous worker settings");
		return;
	}
	w->retired = grown;
	w->retired[w->nretired++] = old;
}

void worker_sink_close(struct worker *w)
{
	for (size_t i = 0; i < w->nretired; i++)
		config_section_destroy(w->retired[i]);
	free(w->retired);
	w->retired = NULL;
	w->nretired = 0;
	filewatch_destroy(w->tls);
	w->tls = NULL;
	ratelimit_destroy(w->rl);
	w->rl = NULL;
}

/* ---- bandwidth.max.bytes.per.second ------------------------------------- */

/* A record's framing in a v2 batch beside its key and value (length,
 * attributes, deltas, header count: varints), a little more than most. */
#define RECORD_FRAMING 16

static void on_bandwidth(struct loop *l, struct loop_timer *t, void *arg)
{
	/* Nothing to do: the turn after this wake-up reads again. */
}

int worker_bandwidth_open(struct worker *w)
{
	static const struct stats_desc d[] = {
	    {"bandwidth_limit", STATS_GAUGE,
	     "bandwidth.max.bytes.per.second: the cap on bytes sent to Kafka (0: none)",
	     STATS_F_BYTES},
	    {"bandwidth_throttled", STATS_COUNTER,
	     "time reading was paused to hold the bandwidth cap", STATS_F_MS},
	};
	int64_t cap = settings_worker(w->settings->worker)->bandwidth;

	if (cap <= 0)
		return 0;
	if (ratelimit_new((uint64_t)cap, loop_now_ms(), &w->rl) != 0 ||
	    loop_timer_add(w->loop, -1, 0, on_bandwidth, w, &w->rl_timer) != 0 ||
	    stats_register(w->stats, &d[0], NULL, &w->bw_limit, NULL) != 0 ||
	    stats_register(w->stats, &d[1], NULL, &w->bw_throttled, NULL) != 0)
		return WORKER_ERR_NOMEM;
	*w->bw_limit = (uint64_t)cap;
	log_info("bandwidth: at most %lld bytes a second to Kafka, after compression "
	         "(bandwidth.max.bytes.per.second); reading pauses while over it",
	         (long long)cap);
	return 0;
}

void worker_bandwidth_charge(struct worker *w, size_t bytes)
{
	if (w->rl != NULL)
		ratelimit_charge(w->rl, bytes + RECORD_FRAMING, loop_now_ms());
}

/* Tells the bucket what left the producer queue (estimated as charged) and,
 * at each statistics report, what went on the wire. */
static void settle(struct worker *w)
{
	struct sink_stats ss;

	if (w->rl == NULL)
		return;
	sink_stats(w->sink, &ss);
	ratelimit_reported(w->rl, ss.done_bytes + ss.done_msgs * RECORD_FRAMING,
	                   sink_in_flight(w->sink) == 0);
	if (ss.updates == w->rl_updates)
		return;
	w->rl_updates = ss.updates;
	ratelimit_settle(w->rl, ss.wire_bytes, loop_now_ms());
}

void worker_sink_turn(struct worker *w)
{
	if (w->tls_due && !w->stop) {
		w->tls_due = false;
		rebuild_if_changed(w);
	}
	/* After a new producer, which counts from 0 with nothing queued. */
	settle(w);
}

void worker_bandwidth_wake(struct worker *w)
{
	int64_t now = loop_now_ms();

	if (w->rl == NULL)
		return;
	loop_timer_set(w->rl_timer,
	               ratelimit_allows(w->rl, now) ? -1 : ratelimit_ready_at(w->rl, now), 0);
	*w->bw_throttled = ratelimit_throttled_ms(w->rl, now);
}

void worker_bandwidth_summary(const struct worker *w, char *buf, size_t len)
{
	int64_t now = loop_now_ms();

	buf[0] = '\0';
	if (w->rl == NULL)
		return;
	snprintf(buf, len, "bandwidth: cap %llu bytes/s; %s; throttled %.1f s in all\n",
	         (unsigned long long)*w->bw_limit,
	         ratelimit_allows(w->rl, now) ? "under it" : "reading paused to hold it",
	         (double)ratelimit_throttled_ms(w->rl, now) / 1000.0);
}
