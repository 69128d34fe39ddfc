/* eos: exactly-once (exactly.once.source.support=enabled, KIP-618).
 *
 * One transaction at a time, for the whole worker, on the records' producer
 * (made transactional by sink_open). A transaction holds every record the
 * sources gave since the last one and, produced last, the offset records of
 * the partitions it moved (the offsets topic's key, value and generation
 * headers, encoded by offsets_kvalue as the store's own writes are). The store sees an offset only
 * once its transaction committed; the store's own write (the file, the topic's replica records)
 * follows as in at-least-once. Any failure aborts and the worker exits 75: the next start reads the
 * committed offsets (read_committed) and reads again what the aborted transaction held; 78 when
 * another instance of the transactional.id fenced it (a restart would fence that one in turn). */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/acks.h"
#include "config/config.h"
#include "core/device.h"
#include "core/log.h"
#include "core/loop.h"
#include "offsets/offsets.h"
#include "offsets/offsets_kvalue.h"
#include "control/sdnotify.h"
#include "config/settings.h"
#include "core/sink.h"
#include "core/source.h"
#include "control/standby.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* transaction.boundary=poll: what a Connect task's poll() returns. A
 * Connect task asks for records in a loop, and a poll that finds none ready
 * waits for some (FileStreamSource's up to 1 s) before it returns: a
 * transaction holds what the source had ready, then the task sleeps. skiff's
 * loop has no such sleep (it wakes at each write of the file), so a
 * transaction per wake-up made 45 a second at any rate. Here a poll is
 * bounded by this time instead: a transaction opens with its first record
 * (none while idle), commits once the sources have nothing more ready and
 * this long passed since the previous commit (a lone line after a quiet
 * spell commits at once), and is never older than this. Each transaction
 * costs librdkafka 2.0.2's main thread 3 to 4 ms of CPU (a timer due in
 * under 1 ms is waited for by spinning, and every AddPartitionsToTxn is
 * one: one for the records' partitions, one for the offsets', one more when
 * the coordinator still completes the previous commit): a commit per
 * wake-up cost 12 to 19 times the CPU of at least once for a device tailing
 * a log, one a second under 1.5 times (docs/performance.md). No count bounds
 * it: the 10,000 records it held before made a backlog of 300,000 lines 30
 * transactions, 1.7 times the CPU; what an abort reads again and what a
 * read_committed consumer waits for are bounded by the time. */
#define EOS_POLL_MS 1000

/* Waiting for the cluster at the start: a probe of this long, then a sleep
 * from the first to the longest, doubling; a line in the log at the start
 * of the wait and then this often. */
#define WAIT_PROBE_MS 1000
#define WAIT_FIRST_MS 1000
#define WAIT_LONGEST_MS 30000
#define WAIT_LOG_EVERY_MS (10 * 60 * 1000)

struct eos {
	bool poll;         /* transaction.boundary=poll, else interval */
	int64_t period_ms; /* poll: EOS_POLL_MS; interval: the interval */
	/* poll: the previous commit's end + period; interval: its start +
	 * period. A transaction commits no sooner (see due()). */
	int64_t next_ms;
	bool open;                    /* begin_transaction done, not committed yet */
	bool failed;                  /* a record of the open transaction was not delivered */
	bool broken;                  /* a transaction failed: the worker exits exit_code */
	bool claimed;                 /* init_transactions done: other instances fenced */
	bool asked;                   /* commit at the end of this turn (worker_eos_commit_soon) */
	int64_t first_ms;             /* when the open transaction got its first record; 0 */
	int exit_code;                /* after a failed transaction: 75, or 78 when taken over */
	uint64_t gen;                 /* the generation of the open transaction's offset records */
	char **json;                  /* per partition: the offset the transaction carries */
	struct loop_timer *timer;     /* wakes the loop when an open transaction is due */
	char device[DEVICE_NAME_MAX]; /* the offset records' skiff.device */
};

/* Only wakes the loop: the turn that follows reaches the boundary. */
static void on_boundary_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	(void)l, (void)t, (void)arg;
}

/* The shortest boundary any connector asks for: poll (0) or an interval. */
static int64_t interval_ms(const struct worker *w)
{
	int64_t best = -1;

	for (size_t i = 0; i < w->settings->nconnectors; i++) {
		const struct connector_conf *c = settings_connector(w->settings->connectors[i].cfg);
		int64_t ms = c->boundary_interval_ms;

		if (c->boundary == SETTINGS_BOUNDARY_POLL)
			return 0;
		if (ms < 0)
			ms = w->flush_interval;
		if (best < 0 || ms < best)
			best = ms;
	}
	return best < 0 ? 0 : best;
}

/* worker_private.h */
int worker_eos_open(struct worker *w, char *errbuf, size_t errlen)
{
	if (settings_worker(w->settings->worker)->eos != SETTINGS_EOS_ENABLED)
		return 0;
	w->eos = calloc(1, sizeof(*w->eos));
	if (w->eos == NULL) {
		snprintf(errbuf, errlen, "exactly-once: out of memory");
		return WORKER_ERR_NOMEM;
	}
	w->eos->period_ms = interval_ms(w);
	w->eos->poll = w->eos->period_ms == 0;
	if (w->eos->poll)
		w->eos->period_ms = EOS_POLL_MS;
	(void)device_name(w->settings->worker, w->eos->device, sizeof(w->eos->device));
	return 0;
}

/* worker_private.h */
void worker_eos_reload(struct worker *w)
{
	struct eos *e = w->eos;
	int64_t ms;

	if (e == NULL)
		return;
	ms = interval_ms(w);
	if ((ms == 0) == e->poll && (ms == 0 || ms == e->period_ms))
		return;
	e->poll = ms == 0;
	e->period_ms = e->poll ? EOS_POLL_MS : ms;
	/* An interval counts from now, as from a start. */
	e->next_ms = loop_now_ms() + (e->poll ? 0 : e->period_ms);
	log_info("exactly-once: boundary now %s (%lld ms)", e->poll ? "poll" : "interval",
	         (long long)e->period_ms);
}

/* worker_private.h */
int worker_eos_fence(struct worker *w, char *errbuf, size_t errlen)
{
	int rc;

	if (w->eos == NULL || w->eos->claimed)
		return 0;
	rc = sink_txn(supervisor_sink(w->sup), SINK_TXN_INIT, (int)w->flush_timeout * 6, errbuf,
	              errlen);
	if (rc != 0)
		return rc == SINK_ERR_CONFIG ? WORKER_ERR_CONFIG : WORKER_ERR;
	w->eos->claimed = true;
	return 0;
}

/* worker_private.h */
int worker_eos_start(struct worker *w, char *errbuf, size_t errlen)
{
	int rc;

	if (w->eos == NULL)
		return 0;
	if ((rc = worker_eos_fence(w, errbuf, errlen)) != 0)
		return rc;
	/* Connect's interval counts from the task's start; the first poll
	 * commits as soon as the sources have nothing more ready. */
	w->eos->next_ms = loop_now_ms() + (w->eos->poll ? 0 : w->eos->period_ms);
	if (loop_timer_add(w->loop, -1, 0, on_boundary_timer, w, &w->eos->timer) != 0) {
		snprintf(errbuf, errlen, "exactly-once: out of memory");
		return WORKER_ERR_NOMEM;
	}
	log_info("exactly-once: transactions on, boundary %s (%lld ms)",
	         w->eos->poll ? "poll" : "interval", (long long)w->eos->period_ms);
	return 0;
}

/* Opens a transaction unless one is open. Returns 0, or -1 with the
 * worker to exit (worker_eos_exit_code). */
static int begin(struct worker *w)
{
	char errbuf[512];

	if (w->eos->open)
		return 0;
	if (w->eos->broken)
		return -1;
	if (sink_txn(supervisor_sink(w->sup), SINK_TXN_BEGIN, 0, errbuf, sizeof(errbuf)) != 0) {
		if (!worker_eos_fenced(w))
			log_error("%s", errbuf);
		(void)worker_eos_exit_code(w);
		return -1;
	}
	w->eos->open = true;
	w->eos->first_ms = loop_now_ms();
	return 0;
}

/* worker_private.h */
int worker_eos_begin(struct worker *w)
{
	return w->eos == NULL || w->eos->open ? 0 : begin(w);
}

void worker_eos_failed(struct worker *w)
{
	if (w->eos != NULL)
		w->eos->failed = true;
}

/* worker_private.h */
bool worker_eos_fenced(const struct worker *w)
{
	char id[256];
	int64_t tmo;

	return w->eos != NULL && sink_fenced(supervisor_sink(w->sup), id, sizeof(id), &tmo);
}

/* worker_private.h */
bool worker_eos_holds(const struct worker *w, const struct conn *c)
{
	for (size_t i = 0; w->eos != NULL && i < partitions_count(w->parts); i++)
		if (partitions_at(w->parts, i)->conn == c &&
		    partition_advanced(partitions_at(w->parts, i)))
			return true;
	return false;
}

/* worker_private.h */
void worker_eos_commit_soon(struct worker *w)
{
	if (w->eos != NULL)
		w->eos->asked = true;
}

/* True when the open transaction holds a record or an offset. */
static bool holds_something(const struct worker *w)
{
	for (size_t i = 0; i < partitions_count(w->parts); i++)
		if (partition_inflight(partitions_at(w->parts, i)) > 0 ||
		    partition_advanced(partitions_at(w->parts, i)))
			return true;
	return false;
}

/* The waits below hold the main thread outside the loop, up to
 * timeout_ms from start: offset.flush.timeout.ms once skiff stops, the
 * stop's own bound (SIGTERM with the broker frozen exited after 37 s, past
 * the unit's TimeoutStopSec=30s). Each step is at most TXN_STEP_MS, and
 * between steps worker_waiting feeds systemd's watchdog and takes signals:
 * a broker stopped or frozen mid-transaction held the loop 36 to 40 s
 * without a WATCHDOG=1, past the unit's WatchdogSec=30s. */
#define TXN_STEP_MS 1000

static int64_t wait_left(const struct worker *w, int64_t start, int64_t timeout_ms)
{
	if (w->stop && timeout_ms > w->flush_timeout)
		timeout_ms = w->flush_timeout;
	return start + timeout_ms - loop_now_ms();
}

/* Runs op (INIT, COMMIT, ABORT) for up to timeout_ms, resuming it step by
 * step. Returns sink_txn's code (a timeout at the end: SINK_ERR). */
static int txn(struct worker *w, enum sink_txn_op op, int64_t timeout_ms, char *errbuf,
               size_t errlen)
{
	int64_t start = loop_now_ms(), left, step;
	int rc;

	for (;;) {
		left = wait_left(w, start, timeout_ms);
		step = left > TXN_STEP_MS ? TXN_STEP_MS : left > 0 ? left : 0;
		rc = sink_txn(supervisor_sink(w->sup), op, (int)step, errbuf, errlen);
		if (rc != SINK_TXN_PENDING)
			return rc;
		if (left <= TXN_STEP_MS)
			return SINK_ERR;
		worker_waiting(w);
	}
}

/* Serves delivery reports until every record is acknowledged or failed,
 * and the store's write in flight (the file, then the topic's replica
 * records) until it completed: the transaction's offset records must come
 * after those in the topic, since a read keeps the last record of a key. */
static int await_records(struct worker *w)
{
	int64_t start = loop_now_ms();

	while (sink_in_flight(supervisor_sink(w->sup)) > 0 || offsets_writing(w->offsets)) {
		struct pollfd pfd[2] = {{.fd = sink_fd(supervisor_sink(w->sup)), .events = POLLIN},
		                        {.fd = offsets_fd(w->offsets), .events = POLLIN}};

		worker_waiting(w);
		if (wait_left(w, start, w->flush_timeout * 6) < 0)
			return -1;
		(void)poll(pfd, pfd[1].fd >= 0 ? 2 : 1, 100);
		w->turn_ms = loop_now_ms();
		sink_poll(supervisor_sink(w->sup));
		offsets_poll(w->offsets);
	}
	return 0;
}

/* Produces the offset records of the partitions that moved into the open
 * transaction; their values stay in e->json until the commit. The records'
 * values are Connect's, the whole in skiff.offset (offsets_kvalue.h). */
static int add_offsets(struct worker *w, char *errbuf, size_t errlen)
{
	struct eos *e = w->eos;
	const char *topic = settings_worker(w->settings->worker)->offset_topic;
	char *json;
	struct offsets_krecord r;
	struct sink_record rec;

	e->gen = offsets_next_generation(w->offsets);
	for (size_t i = 0; i < partitions_count(w->parts); i++) {
		struct partition *p = partitions_at(w->parts, i);

		if (commits_take(w->commits, p, &json) == 0)
			continue;
		free(e->json[i]);
		e->json[i] = json;
		if (e->json[i] != NULL) {
			offsets_kvalue_encode(&r, e->json[i], e->gen, e->device, NULL);
			rec = (struct sink_record){.topic = topic,
			                           .key = p->key,
			                           .klen = strlen(p->key),
			                           .value = r.value,
			                           .vlen = r.vlen,
			                           .headers = r.headers,
			                           .nheaders = r.nheaders};
		}
		if (e->json[i] == NULL ||
		    sink_produce(supervisor_sink(w->sup), &rec, NULL, errbuf, errlen) != 0) {
			if (e->json[i] == NULL)
				snprintf(errbuf, errlen, "exactly-once: out of memory");
			return -1;
		}
	}
	return 0;
}

/* Commits the open transaction (opened here when it holds only offsets:
 * records filtered out or skipped). */
static int commit(struct worker *w, char *errbuf, size_t errlen)
{
	struct eos *e = w->eos;
	struct commit_origin origin;
	char **json = realloc(e->json, (partitions_count(w->parts) + 1) * sizeof(*json));

	if (json == NULL) {
		snprintf(errbuf, errlen, "exactly-once: out of memory");
		return -1;
	}
	if (!e->open && sink_txn(supervisor_sink(w->sup), SINK_TXN_BEGIN, 0, errbuf, errlen) != 0)
		return -1;
	e->open = true;
	memset(json, 0, (partitions_count(w->parts) + 1) * sizeof(*json));
	e->json = json;
	if (await_records(w) != 0) {
		snprintf(errbuf, errlen, "exactly-once: records not acknowledged in time");
		return -1;
	}
	if (e->failed) {
		snprintf(errbuf, errlen, "exactly-once: a record of the transaction failed");
		return -1;
	}
	if (add_offsets(w, errbuf, errlen) != 0 ||
	    txn(w, SINK_TXN_COMMIT, w->flush_timeout * 6, errbuf, errlen) != 0)
		return -1;
	e->open = false;
	origin = (struct commit_origin){.gen = e->gen, .device = e->device};
	/* Committed: the store may have them now, and its write need not send
	 * the offsets topic what the transaction wrote there. */
	for (size_t i = 0; i < partitions_count(w->parts); i++)
		if (e->json[i] != NULL) {
			struct partition *p = partitions_at(w->parts, i);

			/* A failed put is kept and tried again at the next flush. */
			if (commits_store(w->commits, p, e->json[i], &origin) != 0)
				log_error("offsets: cannot record %s", p->key);
			free(e->json[i]);
			e->json[i] = NULL;
		}
	return 0;
}

/* worker_private.h */
int worker_eos_exit_code(struct worker *w)
{
	char id[256];
	int64_t tmo, age;

	if (w->eos != NULL && w->eos->broken)
		return w->eos->exit_code;
	if (w->eos != NULL) {
		w->eos->broken = true;
		w->eos->exit_code = WORKER_EXIT_TEMPFAIL;
	}
	if (w->eos == NULL || !sink_fenced(supervisor_sink(w->sup), id, sizeof(id), &tmo))
		return WORKER_EXIT_TEMPFAIL;
	/* The coordinator also bumps the epoch of a transaction it aborted for
	 * outliving transaction.timeout.ms, which librdkafka reports as this
	 * same fencing: only a younger transaction was surely taken over. */
	age = w->eos->first_ms > 0 ? loop_now_ms() - w->eos->first_ms : 0;
	if (age >= tmo / 2) {
		log_error("exactly-once: fenced with a transaction open %lld ms "
		          "(transaction.timeout.ms=%lld): restarting",
		          (long long)age, (long long)tmo);
		return WORKER_EXIT_TEMPFAIL;
	}
	w->eos->exit_code = WORKER_EXIT_CONFIG;
	log_error("exactly-once: another skiff with transactional.id %s took over and "
	          "fenced this one. Two devices with one device.id, or without device.id one "
	          "/etc/machine-id (a cloned SD card image: give each copy its own device.id, "
	          "or its own machine id with systemd-machine-id-setup), or one "
	          "producer.transactional.id in two configurations; not restarting, or the "
	          "two would fence each other in turn",
	          id);
	return WORKER_EXIT_CONFIG;
}

/* True when a connector's source has records ready now. */
static bool more_ready(const struct worker *w)
{
	for (size_t i = 0; i < w->nconns; i++) {
		const struct conn *c = w->conns[i];

		if (!c->removed && !c->stopped && (c->ready || c->next < c->batch.n))
			return true;
	}
	return false;
}

/* Whether the open transaction (holding something since first_ms) is to
 * commit at now; if not, *wake: when the loop must look again, in case
 * nothing else wakes it. poll: once the sources have nothing more ready
 * and next_ms came, or once it is period_ms old (a source that always has
 * more); interval: at next_ms. */
static bool due(const struct worker *w, int64_t now, int64_t *wake)
{
	const struct eos *e = w->eos;

	if (e->asked)
		return true;
	if (!e->poll) {
		*wake = e->next_ms;
		return now >= e->next_ms;
	}
	if (now - e->first_ms >= e->period_ms || (now >= e->next_ms && !more_ready(w)))
		return true;
	/* Ready records keep the loop turning; the timer is for the quiet
	 * after them, or for a loop that waits on a full producer queue. */
	*wake = now < e->next_ms ? e->next_ms : e->first_ms + e->period_ms;
	return false;
}

/* worker_private.h */
int worker_eos_boundary(struct worker *w, bool force)
{
	struct eos *e = w->eos;
	char errbuf[512];
	int64_t now = loop_now_ms(), wake = -1;

	if (e != NULL && e->broken)
		return e->exit_code;
	if (e == NULL || !holds_something(w))
		return 0;
	if (e->first_ms == 0)
		e->first_ms = now; /* offsets moved with no record (filtered, skipped) */
	if (!force && !due(w, now, &wake)) {
		loop_timer_set(e->timer, wake, 0);
		return 0;
	}
	loop_timer_set(e->timer, -1, 0);
	if (!e->poll)
		e->next_ms = now + e->period_ms;
	if (commit(w, errbuf, sizeof(errbuf)) == 0) {
		e->first_ms = 0;
		e->asked = false;
		if (e->poll)
			e->next_ms = loop_now_ms() + e->period_ms;
		connectors_committed(w);
		return 0;
	}
	/* A fenced producer can neither commit nor abort: only say so. */
	if (worker_eos_fenced(w))
		return worker_eos_exit_code(w);
	log_error("%s; aborting it: its records are read again at the next start", errbuf);
	if (txn(w, SINK_TXN_ABORT, w->flush_timeout, errbuf, sizeof(errbuf)) != 0)
		log_error("%s", errbuf);
	return worker_eos_exit_code(w);
}

/* worker_private.h */
void worker_eos_reopen(struct worker *w)
{
	char errbuf[512];

	if (w->eos == NULL)
		return;
	w->eos->open = false; /* the old producer's committed, the next opens on this one */
	if (txn(w, SINK_TXN_INIT, w->flush_timeout * 6, errbuf, sizeof(errbuf)) != 0) {
		log_error("%s (the new producer's); exiting to start again", errbuf);
		w->eos->broken = true;
		w->eos->exit_code = WORKER_EXIT_TEMPFAIL;
	}
}

/* worker.h */
int worker_await_cluster(struct worker *w, int sigfd, bool *waited)
{
	const char *servers = settings_worker(w->settings->worker)->bootstrap.text;
	struct sdnotify *n = NULL;
	int64_t since = loop_now_ms(), logged = since, pause = WAIT_FIRST_MS;
	char why[256], status[512];
	int rc = 0;

	*waited = false;
	if (w->eos == NULL)
		return 0;
	while (rc == 0 &&
	       sink_reachable(supervisor_sink(w->sup), WAIT_PROBE_MS, why, sizeof(why)) != 0) {
		sink_poll(supervisor_sink(w->sup)); /* librdkafka's own lines, folded */
		if (!*waited) {
			log_warn(
			    "exactly-once: cannot reach the Kafka cluster (bootstrap.servers %s): "
			    "%s; waiting for it (the offsets file alone may lag the committed "
			    "transactions)",
			    servers, why);
			snprintf(
			    status, sizeof(status),
			    "exactly-once: waiting for the Kafka cluster (bootstrap.servers %s)",
			    servers);
			n = standby_notify(status);
		} else if (loop_now_ms() - logged >= WAIT_LOG_EVERY_MS) {
			logged = loop_now_ms();
			log_warn("exactly-once: still waiting for the Kafka cluster (%lld s)",
			         (long long)((logged - since) / 1000));
		}
		*waited = true;
		rc = standby_sleep(n, sigfd, pause);
		pause = pause * 2 > WAIT_LONGEST_MS ? WAIT_LONGEST_MS : pause * 2;
	}
	if (rc == 0 && *waited)
		log_info("exactly-once: the Kafka cluster answers after %lld s; starting",
		         (long long)((loop_now_ms() - since) / 1000));
	sdnotify_close(n);
	return rc;
}

/* worker_private.h */
void worker_eos_close(struct worker *w)
{
	if (w->eos == NULL)
		return;
	loop_timer_del(w->loop, w->eos->timer);
	for (size_t i = 0; w->eos->json != NULL && i < partitions_count(w->parts); i++)
		free(w->eos->json[i]);
	free(w->eos->json);
	free(w->eos);
	w->eos = NULL;
}
