/* supervisor: the producer's life after start (kafka/supervisor.h).
 * librdkafka reads its TLS files (certificate, key, CA, keystore, CRL) once,
 * when the producer is made, and cannot read them again; short-lived device
 * certificates are replaced on disk while skiff runs. So the supervisor
 * watches those files (filewatch.h: inotify on their directories, nothing
 * while idle) and, once a change has settled, makes a new producer:
 *
 * 1. The new producer is made first. When that fails (a half-written or
 *    mismatched certificate and key, which librdkafka checks when it is
 *    made) the reason is logged and the running producer goes on: its
 *    connections were made with the old certificate and still work. The
 *    next change is tried again.
 * 2. Reading stops and the records in flight are waited for (at most
 *    offset.flush.timeout.ms), then the acknowledged offsets are written
 *    (ops->drain).
 * 3. A connector that still has records in flight (the old producer cannot
 *    reach the broker: say its certificate was the broken one) is closed and
 *    opened again from its stored offsets, so those records are read again
 *    (duplicates bounded by the records in flight, as at a restart:
 *    ops->restart).
 * 4. The old producer is destroyed (purged without delivery reports, so no
 *    late report is mistaken for an ack), the ack slots are made anew for
 *    the new producer's queue (ops->swapped), and reading resumes.
 *
 * Main thread only. */
#include "kafka/supervisor.h"

#include "config/config.h"
#include "config/settings.h"
#include "core/acks.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/stats.h"
#include "kafka/ratelimit.h"
#include "kafka/sink_kafka.h"
#include "util/filewatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct supervisor {
	struct supervisor_conf conf;
	struct sink *sink;
	struct loop_fd *sink_watch;
	/* The TLS files the producer read, watched for a new certificate. */
	struct filewatch *tls;
	struct loop_fd *tls_watch;
	struct loop_timer *tls_settle;
	bool tls_due; /* the files settled: compare them at the end of the turn */
	/* Worker sections a reload replaced with a new producer's: kept until
	 * exit, as a string read from one may still be held. */
	struct config_section **retired;
	size_t nretired;
	/* bandwidth.max.bytes.per.second; NULL: no cap. */
	struct ratelimit *rl;
	struct loop_timer *rl_timer;
	uint64_t rl_updates; /* the producer statistics last settled */
	uint64_t *bw_limit, *bw_throttled;
	uint64_t sent_before; /* bytes the producers before this one sent (a counter never drops) */
};

const char *supervisor_strerror(int err)
{
	switch (err) {
	case SUPERVISOR_OK:
		return "success";
	case SUPERVISOR_ERR:
		return "transient failure";
	case SUPERVISOR_ERR_CONFIG:
		return "configuration error";
	case SUPERVISOR_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown supervisor error";
	}
}

/* A SINK_* code from sink_open as a SUPERVISOR_* code. */
static int from_sink(int rc)
{
	return rc == SINK_ERR_CONFIG  ? SUPERVISOR_ERR_CONFIG
	       : rc == SINK_ERR_NOMEM ? SUPERVISOR_ERR_NOMEM
	                              : SUPERVISOR_ERR;
}

int supervisor_new(const struct supervisor_conf *conf, struct supervisor **out)
{
	struct supervisor *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL)
		return SUPERVISOR_ERR_NOMEM;
	s->conf = *conf;
	*out = s;
	return 0;
}

static void on_sink_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	struct supervisor *s = arg;

	s->conf.ops->serve(s->conf.ctx);
}

int supervisor_open(struct supervisor *s, char *errbuf, size_t errlen)
{
	int rc = s->conf.open_sink(s->conf.settings->worker, s->conf.delivery, s->conf.delivery_ctx,
	                           &s->sink, errbuf, errlen);

	if (rc != 0)
		return from_sink(rc);
	if (loop_fd_add(s->conf.loop, sink_fd(s->sink), POLLIN, on_sink_fd, s, &s->sink_watch) !=
	    0) {
		snprintf(errbuf, errlen, "worker: out of memory");
		return SUPERVISOR_ERR_NOMEM;
	}
	return 0;
}

struct sink *supervisor_sink(const struct supervisor *s)
{
	return s->sink;
}

uint64_t supervisor_sent_before(const struct supervisor *s)
{
	return s->sent_before;
}

/* Quiet time after the last event before the files are compared: a tool
 * renames a certificate and its key one after the other. */
#define SETTLE_MS 1000
#define MAX_TLS_FILES 16

/* The rebuild runs the loop itself (the drain): it waits for the end of the
 * turn (supervisor_turn), not inside this callback. */
static void on_settled(struct loop *l, struct loop_timer *t, void *arg)
{
	struct supervisor *s = arg;

	s->tls_due = true;
}

static void rebuild_if_changed(struct supervisor *s)
{
	const char *path = filewatch_changed(s->tls);
	char why[1024];

	if (path == NULL)
		return;
	snprintf(why, sizeof(why), "%s changed", path);
	log_notice("producer: %s changed on disk; librdkafka reads it only when a producer is "
	           "made: draining, flushing offsets and making a new one",
	           path);
	(void)supervisor_rebuild(s, s->conf.settings->worker, why);
}

static void on_tls_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	struct supervisor *s = arg;

	if (filewatch_drain(s->tls))
		loop_timer_set(s->tls_settle, loop_now_ms() + SETTLE_MS, 0);
}

/* Watches the TLS files the worker section names (none: nothing). */
static int watch_tls(struct supervisor *s)
{
	const char *files[MAX_TLS_FILES];
	size_t n = sink_tls_files(s->conf.settings->worker, files, MAX_TLS_FILES);
	char why[1024];
	int rc;

	if (n == 0)
		return 0;
	rc = filewatch_new(files, n, &s->tls, why, sizeof(why));
	if (rc == FILEWATCH_ERR_NOMEM)
		return SUPERVISOR_ERR_NOMEM;
	if (rc != 0) {
		log_warn("producer: %s: a new certificate will not be seen until skiff restarts",
		         why);
		return 0;
	}
	if (loop_fd_add(s->conf.loop, filewatch_fd(s->tls), POLLIN, on_tls_fd, s, &s->tls_watch) !=
	        0 ||
	    loop_timer_add(s->conf.loop, -1, 0, on_settled, s, &s->tls_settle) != 0)
		return SUPERVISOR_ERR_NOMEM;
	log_info("producer: watching %zu TLS file%s for changes", n, n == 1 ? "" : "s");
	return 0;
}

int supervisor_rebuild(struct supervisor *s, const struct config_section *ws, const char *why)
{
	struct sink *next = NULL;
	struct acks *slab;
	char err[1024];
	int rc, left;

	rc = s->conf.open_sink(ws, s->conf.delivery, s->conf.delivery_ctx, &next, err, sizeof(err));
	if (rc != 0) {
		log_error("producer: no new producer after %s: %s; the running one goes on, and "
		          "the next change is tried again",
		          why, err);
		return from_sink(rc);
	}
	if (acks_new(sink_queue_capacity(next), &slab) != 0) {
		sink_destroy(next);
		log_error("producer: no new producer after %s: out of memory; the running one "
		          "goes on",
		          why);
		return SUPERVISOR_ERR_NOMEM;
	}
	/* Exactly-once: the old producer's transaction commits first. */
	if (s->conf.ops->commit(s->conf.ctx) != 0) {
		sink_destroy(next);
		acks_destroy(slab);
		return SUPERVISOR_ERR;
	}
	left = s->conf.ops->drain(s->conf.ctx);
	/* No slot of the old slab may outlive it. */
	s->conf.ops->restart(s->conf.ctx);
	{
		struct sink_stats ss;

		/* skiff_producer_sent_bytes_total goes on from there. */
		sink_stats(s->sink, &ss);
		s->sent_before += ss.wire_bytes;
	}
	sink_destroy(s->sink);
	s->sink = next;
	loop_fd_set(s->sink_watch, sink_fd(next), POLLIN);
	s->conf.ops->swapped(s->conf.ctx, slab);
	log_notice("producer: a new producer after %s (%d records were still in flight); "
	           "reading resumes",
	           why, left);
	return 0;
}

int supervisor_rewatch(struct supervisor *s)
{
	loop_fd_del(s->conf.loop, s->tls_watch);
	loop_timer_del(s->conf.loop, s->tls_settle);
	filewatch_destroy(s->tls);
	s->tls_watch = NULL;
	s->tls_settle = NULL;
	s->tls = NULL;
	s->tls_due = false;
	return watch_tls(s);
}

void supervisor_retire(struct supervisor *s, struct config_section *old)
{
	struct config_section **grown;

	if (old == NULL)
		return;
	grown = realloc(s->retired, (s->nretired + 1) * sizeof(*grown));
	if (grown == NULL) {
		/* Leaked rather than freed under a reader: a reload at most. */
		log_warn("reload: out of memory keeping the previous worker settings");
		return;
	}
	s->retired = grown;
	s->retired[s->nretired++] = old;
}

void supervisor_stop(struct supervisor *s)
{
	if (s == NULL)
		return;
	sink_destroy(s->sink);
	s->sink = NULL;
}

void supervisor_destroy(struct supervisor *s)
{
	if (s == NULL)
		return;
	supervisor_stop(s);
	for (size_t i = 0; i < s->nretired; i++)
		config_section_destroy(s->retired[i]);
	free(s->retired);
	filewatch_destroy(s->tls);
	ratelimit_destroy(s->rl);
	free(s);
}

/* ---- bandwidth.max.bytes.per.second ------------------------------------- */

/* A record's framing in a v2 batch beside its key and value (length,
 * attributes, deltas, header count: varints), a little more than most. */
#define RECORD_FRAMING 16

static void on_bandwidth(struct loop *l, struct loop_timer *t, void *arg)
{
	/* Nothing to do: the turn after this wake-up reads again. */
}

static int open_bandwidth(struct supervisor *s)
{
	static const struct stats_desc d[] = {
	    {"bandwidth_limit", STATS_GAUGE,
	     "bandwidth.max.bytes.per.second: the cap on bytes sent to Kafka (0: none)",
	     STATS_F_BYTES},
	    {"bandwidth_throttled", STATS_COUNTER,
	     "time reading was paused to hold the bandwidth cap", STATS_F_MS},
	};
	int64_t cap = settings_worker(s->conf.settings->worker)->bandwidth;

	if (cap <= 0)
		return 0;
	if (ratelimit_new((uint64_t)cap, loop_now_ms(), &s->rl) != 0 ||
	    loop_timer_add(s->conf.loop, -1, 0, on_bandwidth, s, &s->rl_timer) != 0 ||
	    stats_register(s->conf.stats, &d[0], NULL, &s->bw_limit, NULL) != 0 ||
	    stats_register(s->conf.stats, &d[1], NULL, &s->bw_throttled, NULL) != 0)
		return SUPERVISOR_ERR_NOMEM;
	*s->bw_limit = (uint64_t)cap;
	log_info("bandwidth: at most %lld bytes a second to Kafka, after compression "
	         "(bandwidth.max.bytes.per.second); reading pauses while over it",
	         (long long)cap);
	return 0;
}

int supervisor_start(struct supervisor *s)
{
	int rc = watch_tls(s);

	return rc != 0 ? rc : open_bandwidth(s);
}

bool supervisor_allows(struct supervisor *s, int64_t now_ms)
{
	return s->rl == NULL || ratelimit_allows(s->rl, now_ms);
}

void supervisor_charge(struct supervisor *s, size_t bytes)
{
	if (s->rl != NULL)
		ratelimit_charge(s->rl, bytes + RECORD_FRAMING, loop_now_ms());
}

/* Tells the bucket what left the producer queue (estimated as charged) and,
 * at each statistics report, what went on the wire. */
static void settle(struct supervisor *s)
{
	struct sink_stats ss;

	if (s->rl == NULL)
		return;
	sink_stats(s->sink, &ss);
	ratelimit_reported(s->rl, ss.done_bytes + ss.done_msgs * RECORD_FRAMING,
	                   sink_in_flight(s->sink) == 0);
	if (ss.updates == s->rl_updates)
		return;
	s->rl_updates = ss.updates;
	ratelimit_settle(s->rl, ss.wire_bytes, loop_now_ms());
}

int supervisor_turn(struct supervisor *s, bool stopping)
{
	char errbuf[512];

	if (s->tls_due && !stopping) {
		s->tls_due = false;
		rebuild_if_changed(s);
	}
	/* After a new producer, which counts from 0 with nothing queued. */
	settle(s);
	if (sink_fatal(s->sink, errbuf, sizeof(errbuf)) != 0)
		return s->conf.ops->fatal(s->conf.ctx, errbuf);
	return 0;
}

void supervisor_wake(struct supervisor *s)
{
	int64_t now = loop_now_ms();

	if (s->rl == NULL)
		return;
	loop_timer_set(s->rl_timer,
	               ratelimit_allows(s->rl, now) ? -1 : ratelimit_ready_at(s->rl, now), 0);
	*s->bw_throttled = ratelimit_throttled_ms(s->rl, now);
}

void supervisor_summary(const struct supervisor *s, char *buf, size_t len)
{
	int64_t now = loop_now_ms();

	buf[0] = '\0';
	if (s->rl == NULL)
		return;
	snprintf(buf, len, "bandwidth: cap %llu bytes/s; %s; throttled %.1f s in all\n",
	         (unsigned long long)*s->bw_limit,
	         ratelimit_allows(s->rl, now) ? "under it" : "reading paused to hold it",
	         (double)ratelimit_throttled_ms(s->rl, now) / 1000.0);
}
