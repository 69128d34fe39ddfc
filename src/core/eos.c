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
 * another instance of the transactional.id fenced it (a restart would fence that one in turn).
 * The transaction is a state machine the loop drives (core/eos.h): the wait
 * for its records' acknowledgements goes through the loop; init, the
 * commit itself and an abort are single calls bounded as before. */
#include "core/eos.h"

#include "config/settings.h"
#include "control/sdnotify.h"
#include "control/standby.h"
#include "core/commits.h"
#include "core/device.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/sink.h"
#include "core/worker.h"
#include "offsets/offsets.h"
#include "offsets/offsets_kvalue.h"

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

/* An init, a commit or an abort, outside the loop, is resumed in steps of
 * this, the watchdog fed and signals taken in between (env->waiting): a
 * broker stopped or frozen held the loop 36 to 40 s without a WATCHDOG=1,
 * past the unit's WatchdogSec=30s. The commit is not resumed turn by turn
 * with a short timeout: librdkafka 2.0.2 (Debian 12's) called so at 10 ms
 * aborted on its own assertion (rd_kafka_txn_set_state: "Invalid
 * transaction state transition", test_exit_codes.py's two boards), and
 * resumed with long steps it never did; the drain before it, the long
 * part, goes through the loop. */
#define TXN_STEP_MS 1000

struct eos {
	struct eos_env env;
	enum eos_state state;
	bool poll;         /* transaction.boundary=poll, else interval */
	int64_t period_ms; /* poll: EOS_POLL_MS; interval: the interval */
	/* poll: the previous commit's end + period; interval: its start +
	 * period. A transaction commits no sooner (see due()). */
	int64_t next_ms;
	bool begun;                   /* begin_transaction done, not ended yet */
	bool failed;                  /* a record of the open transaction was not delivered */
	bool broken;                  /* a transaction failed: the worker exits exit_code */
	bool claimed;                 /* init_transactions done: other instances fenced */
	bool asked;                   /* commit at the end of this turn (eos_commit_soon) */
	int64_t first_ms;             /* when the open transaction got its first record; 0 */
	int64_t since_ms;             /* when draining or committing began */
	int exit_code;                /* after a failed transaction: 75, or 78 when taken over */
	uint64_t gen;                 /* the generation of the transaction's offset records */
	char **json;                  /* per partition: the offset the transaction carries */
	size_t njson;                 /* ... for the first njson partitions */
	struct offsets *offsets;      /* the store (eos_start) */
	const char *topic;            /* offset.storage.topic */
	struct loop_timer *timer;     /* wakes the loop: a boundary, a deadline, a pending commit */
	char device[DEVICE_NAME_MAX]; /* the offset records' skiff.device */
};

static struct sink *sink(const struct eos *e)
{
	return e->env.sink(e->env.ctx);
}

/* Only wakes the loop: the turn that follows moves the transaction on. */
static void on_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	(void)l, (void)t, (void)arg;
}

/* The shortest boundary any connector of s asks for: poll (0) or an interval. */
static int64_t interval_ms(const struct settings *s, int64_t flush_interval)
{
	int64_t best = -1;

	for (size_t i = 0; i < s->nconnectors; i++) {
		const struct connector_conf *c = settings_connector(s->connectors[i].cfg);
		int64_t ms = c->boundary_interval_ms;

		if (c->boundary == SETTINGS_BOUNDARY_POLL)
			return 0;
		if (ms < 0)
			ms = flush_interval;
		if (best < 0 || ms < best)
			best = ms;
	}
	return best < 0 ? 0 : best;
}

/* eos.h */
int eos_open(const struct settings *s, int64_t flush_interval, const struct eos_env *env,
             struct eos **out, char *errbuf, size_t errlen)
{
	struct eos *e;

	*out = NULL;
	if (settings_worker(s->worker)->eos != SETTINGS_EOS_ENABLED)
		return 0;
	if ((e = calloc(1, sizeof(*e))) == NULL ||
	    loop_timer_add(env->loop, -1, 0, on_timer, e, &e->timer) != 0) {
		free(e);
		snprintf(errbuf, errlen, "exactly-once: out of memory");
		return WORKER_ERR_NOMEM;
	}
	e->env = *env;
	e->topic = settings_worker(s->worker)->offset_topic;
	e->period_ms = interval_ms(s, flush_interval);
	e->poll = e->period_ms == 0;
	if (e->poll)
		e->period_ms = EOS_POLL_MS;
	(void)device_name(s->worker, e->device, sizeof(e->device));
	*out = e;
	return 0;
}

/* eos.h */
void eos_reload(struct eos *e, const struct settings *s, int64_t flush_interval)
{
	int64_t ms;

	if (e == NULL)
		return;
	ms = interval_ms(s, flush_interval);
	if ((ms == 0) == e->poll && (ms == 0 || ms == e->period_ms))
		return;
	e->poll = ms == 0;
	e->period_ms = e->poll ? EOS_POLL_MS : ms;
	/* An interval counts from now, as from a start. */
	e->next_ms = loop_now_ms() + (e->poll ? 0 : e->period_ms);
	log_info("exactly-once: boundary now %s (%lld ms)", e->poll ? "poll" : "interval",
	         (long long)e->period_ms);
}

/* How long a wait that began at start may go on, of timeout_ms: at most
 * offset.flush.timeout.ms once the worker stops, the stop's own bound
 * (SIGTERM with the broker frozen exited after 37 s, past the unit's
 * TimeoutStopSec=30s). */
static int64_t wait_left(const struct eos *e, int64_t start, int64_t timeout_ms)
{
	if (*e->env.stopping && timeout_ms > *e->env.flush_timeout)
		timeout_ms = *e->env.flush_timeout;
	return start + timeout_ms - loop_now_ms();
}

/* The longest a drain or a commit may take: 6 x offset.flush.timeout.ms. */
static int64_t budget_ms(const struct eos *e)
{
	return *e->env.flush_timeout * 6;
}

/* Runs op (INIT, COMMIT, ABORT) outside the loop for up to timeout_ms, resuming it
 * step by step. Returns sink_txn's code (a timeout at the end: SINK_ERR). */
static int txn(struct eos *e, enum sink_txn_op op, int64_t timeout_ms, char *errbuf, size_t errlen)
{
	int64_t start = loop_now_ms(), left, step;
	int rc;

	for (;;) {
		left = wait_left(e, start, timeout_ms);
		step = left > TXN_STEP_MS ? TXN_STEP_MS : left > 0 ? left : 0;
		rc = sink_txn(sink(e), op, (int)step, errbuf, errlen);
		if (rc != SINK_TXN_PENDING)
			return rc;
		if (left <= TXN_STEP_MS)
			return SINK_ERR;
		e->env.waiting(e->env.ctx);
	}
}

/* eos.h */
int eos_fence(struct eos *e, char *errbuf, size_t errlen)
{
	int rc;

	if (e == NULL || e->claimed)
		return 0;
	rc = sink_txn(sink(e), SINK_TXN_INIT, (int)budget_ms(e), errbuf, errlen);
	if (rc != 0)
		return rc == SINK_ERR_CONFIG ? WORKER_ERR_CONFIG : WORKER_ERR;
	e->claimed = true;
	return 0;
}

/* eos.h */
int eos_start(struct eos *e, struct offsets *o, char *errbuf, size_t errlen)
{
	int rc;

	if (e == NULL)
		return 0;
	e->offsets = o;
	if ((rc = eos_fence(e, errbuf, errlen)) != 0)
		return rc;
	/* Connect's interval counts from the task's start; the first poll
	 * commits as soon as the sources have nothing more ready. */
	e->next_ms = loop_now_ms() + (e->poll ? 0 : e->period_ms);
	log_info("exactly-once: transactions on, boundary %s (%lld ms)",
	         e->poll ? "poll" : "interval", (long long)e->period_ms);
	return 0;
}

/* Opens a transaction. Returns 0, or -1 with the worker to exit
 * (eos_exit_code). */
static int begin(struct eos *e)
{
	char errbuf[512];

	if (e->broken)
		return -1;
	if (sink_txn(sink(e), SINK_TXN_BEGIN, 0, errbuf, sizeof(errbuf)) != 0) {
		if (!eos_fenced(e))
			log_error("%s", errbuf);
		(void)eos_exit_code(e);
		return -1;
	}
	e->state = EOS_OPEN;
	e->begun = true;
	e->first_ms = loop_now_ms();
	return 0;
}

/* eos.h */
int eos_begin(struct eos *e)
{
	return e == NULL || e->state != EOS_IDLE ? 0 : begin(e);
}

/* eos.h */
void eos_failed(struct eos *e)
{
	if (e != NULL)
		e->failed = true;
}

/* eos.h */
bool eos_blocks(const struct eos *e)
{
	return e != NULL && e->state >= EOS_DRAINING;
}

/* eos.h */
bool eos_idle(const struct eos *e)
{
	return !eos_blocks(e);
}

/* eos.h */
enum eos_state eos_state(const struct eos *e)
{
	return e == NULL ? EOS_IDLE : e->state;
}

/* eos.h */
bool eos_fenced(const struct eos *e)
{
	char id[256];
	int64_t tmo;

	return e != NULL && sink_fenced(sink(e), id, sizeof(id), &tmo);
}

/* eos.h */
bool eos_holds(const struct eos *e, const struct conn *c)
{
	struct partitions *t = e != NULL ? e->env.parts : NULL;

	for (size_t i = 0; t != NULL && i < partitions_count(t); i++) {
		struct partition *p = partitions_at(t, i);

		/* Past the boundary the transaction took the offsets: they are
		 * its until it ends. */
		if (p->conn == c && (partition_advanced(p) ||
		                     (i < e->njson && e->json != NULL && e->json[i] != NULL)))
			return true;
	}
	return false;
}

/* eos.h */
void eos_commit_soon(struct eos *e)
{
	if (e != NULL)
		e->asked = true;
}

/* True when the open transaction holds a record or an offset. */
static bool holds_something(const struct eos *e)
{
	for (size_t i = 0; i < partitions_count(e->env.parts); i++) {
		struct partition *p = partitions_at(e->env.parts, i);

		if (partition_inflight(p) > 0 || partition_advanced(p))
			return true;
	}
	return false;
}

/* Drops the offsets the transaction carried (not stored). */
static void drop_json(struct eos *e)
{
	for (size_t i = 0; e->json != NULL && i < e->njson; i++) {
		free(e->json[i]);
		e->json[i] = NULL;
	}
	e->njson = 0;
}

/* Produces the offset records of the partitions that moved into the
 * transaction; their values stay in e->json until the commit. The records'
 * values are Connect's, the whole in skiff.offset (offsets_kvalue.h). */
static int add_offsets(struct eos *e, char *errbuf, size_t errlen)
{
	size_t n = partitions_count(e->env.parts);
	char **json = realloc(e->json, (n + 1) * sizeof(*json));
	struct offsets_krecord r;
	struct sink_record rec;

	if (json == NULL) {
		snprintf(errbuf, errlen, "exactly-once: out of memory");
		return -1;
	}
	memset(json, 0, (n + 1) * sizeof(*json));
	e->json = json;
	e->njson = n;
	e->gen = offsets_next_generation(e->offsets);
	for (size_t i = 0; i < n; i++) {
		struct partition *p = partitions_at(e->env.parts, i);

		if (commits_take(e->env.commits, p, &e->json[i]) == 0)
			continue;
		if (e->json[i] == NULL) {
			snprintf(errbuf, errlen, "exactly-once: out of memory");
			return -1;
		}
		offsets_kvalue_encode(&r, e->json[i], e->gen, e->device, NULL);
		rec = (struct sink_record){.topic = e->topic,
		                           .key = p->key,
		                           .klen = strlen(p->key),
		                           .value = r.value,
		                           .vlen = r.vlen,
		                           .headers = r.headers,
		                           .nheaders = r.nheaders};
		if (sink_produce(sink(e), &rec, NULL, errbuf, errlen) != 0)
			return -1;
	}
	return 0;
}

/* Committed: the store may have the offsets now, and its write need not
 * send the offsets topic what the transaction wrote there. */
static void store_offsets(struct eos *e)
{
	struct commit_origin origin = {.gen = e->gen, .device = e->device};

	for (size_t i = 0; i < e->njson && i < partitions_count(e->env.parts); i++)
		if (e->json[i] != NULL) {
			struct partition *p = partitions_at(e->env.parts, i);

			/* A failed put is kept and tried again at the next flush. */
			if (commits_store(e->env.commits, p, e->json[i], &origin) != 0)
				log_error("offsets: cannot record %s", p->key);
		}
	drop_json(e);
}

/* eos.h */
int eos_exit_code(struct eos *e)
{
	char id[256];
	int64_t tmo, age;

	if (e != NULL && e->broken)
		return e->exit_code;
	if (e != NULL) {
		e->broken = true;
		e->exit_code = WORKER_EXIT_TEMPFAIL;
	}
	if (e == NULL || !sink_fenced(sink(e), id, sizeof(id), &tmo))
		return WORKER_EXIT_TEMPFAIL;
	/* The coordinator also bumps the epoch of a transaction it aborted for
	 * outliving transaction.timeout.ms, which librdkafka reports as this
	 * same fencing: only a younger transaction was surely taken over. */
	age = e->first_ms > 0 ? loop_now_ms() - e->first_ms : 0;
	if (age >= tmo / 2) {
		log_error("exactly-once: fenced with a transaction open %lld ms "
		          "(transaction.timeout.ms=%lld): restarting",
		          (long long)age, (long long)tmo);
		return WORKER_EXIT_TEMPFAIL;
	}
	e->exit_code = WORKER_EXIT_CONFIG;
	log_error("exactly-once: another skiff with transactional.id %s took over and "
	          "fenced this one. Two devices with one device.id, or without device.id one "
	          "/etc/machine-id (a cloned SD card image: give each copy its own device.id, "
	          "or its own machine id with systemd-machine-id-setup), or one "
	          "producer.transactional.id in two configurations; not restarting, or the "
	          "two would fence each other in turn",
	          id);
	return WORKER_EXIT_CONFIG;
}

/* Whether the open transaction (holding something since first_ms) is to
 * commit at now; if not, *wake: when the loop must look again, in case
 * nothing else wakes it. poll: once the sources have nothing more ready
 * and next_ms came, or once it is period_ms old (a source that always has
 * more); interval: at next_ms. */
static bool due(const struct eos *e, int64_t now, int64_t *wake)
{
	if (e->asked)
		return true;
	if (!e->poll) {
		*wake = e->next_ms;
		return now >= e->next_ms;
	}
	if (now - e->first_ms >= e->period_ms ||
	    (now >= e->next_ms && !e->env.more_ready(e->env.ctx)))
		return true;
	/* Ready records keep the loop turning; the timer is for the quiet
	 * after them, or for a loop that waits on a full producer queue. */
	*wake = now < e->next_ms ? e->next_ms : e->first_ms + e->period_ms;
	return false;
}

/* The transaction failed (errbuf: why): aborts it, outside the loop (the
 * worker exits next), and returns the exit code. */
static int fail(struct eos *e, const char *why)
{
	char errbuf[512];

	loop_timer_set(e->timer, -1, 0);
	drop_json(e);
	/* A fenced producer can neither commit nor abort: only say so. */
	if (eos_fenced(e))
		return eos_exit_code(e);
	log_error("%s; aborting it: its records are read again at the next start", why);
	if (txn(e, SINK_TXN_ABORT, *e->env.flush_timeout, errbuf, sizeof(errbuf)) != 0)
		log_error("%s", errbuf);
	return eos_exit_code(e);
}

/* EOS_IDLE or EOS_OPEN: the boundary, when it came, begins the drain. */
static void reach(struct eos *e, bool force, int64_t now)
{
	int64_t wake = -1;

	if (!holds_something(e))
		return;
	if (e->first_ms == 0)
		e->first_ms = now; /* offsets moved with no record (filtered, skipped) */
	if (!force && !due(e, now, &wake)) {
		loop_timer_set(e->timer, wake, 0);
		return;
	}
	if (!e->poll)
		e->next_ms = now + e->period_ms;
	e->state = EOS_DRAINING;
	e->since_ms = now;
}

/* EOS_DRAINING: once every record is acknowledged or failed, and the
 * store's write in flight (the file, then the topic's replica records)
 * completed (the transaction's offset records must come after those in the
 * topic, since a read keeps the last record of a key), produces the offset
 * records and begins the commit. 0, or -1 with errbuf. */
static int drain(struct eos *e, int64_t now, char *errbuf, size_t errlen)
{
	int64_t left = wait_left(e, e->since_ms, budget_ms(e));

	if (sink_in_flight(sink(e)) > 0 || offsets_writing(e->offsets)) {
		if (left < 0) {
			snprintf(errbuf, errlen, "exactly-once: records not acknowledged in time");
			return -1;
		}
		/* The producer's and the store's descriptors wake the loop; the
		 * timer is the deadline. */
		loop_timer_set(e->timer, now + left, 0);
		return 0;
	}
	if (e->failed) {
		snprintf(errbuf, errlen, "exactly-once: a record of the transaction failed");
		return -1;
	}
	/* Opened here when it holds only offsets: records filtered or skipped. */
	if (!e->begun && sink_txn(sink(e), SINK_TXN_BEGIN, 0, errbuf, errlen) != 0)
		return -1;
	e->begun = true;
	if (add_offsets(e, errbuf, errlen) != 0)
		return -1;
	e->state = EOS_COMMITTING;
	e->since_ms = loop_now_ms();
	return 0;
}

/* EOS_COMMITTING: the commit, bounded by 6 x offset.flush.timeout.ms (the
 * flush timeout once stopping), in steps (TXN_STEP_MS). With every record
 * acknowledged it waits only for the offset records and EndTxn. 1 when
 * committed, -1 with errbuf. */
static int commit(struct eos *e, char *errbuf, size_t errlen)
{
	return txn(e, SINK_TXN_COMMIT, budget_ms(e), errbuf, errlen) == 0 ? 1 : -1;
}

/* eos.h */
int eos_boundary(struct eos *e, bool force)
{
	char errbuf[512];
	int64_t now = loop_now_ms();

	if (e == NULL)
		return 0;
	if (e->broken)
		return e->exit_code;
	if (e->state <= EOS_OPEN)
		reach(e, force || e->asked, now);
	if (e->state == EOS_DRAINING) {
		loop_timer_set(e->timer, -1, 0);
		if (drain(e, now, errbuf, sizeof(errbuf)) != 0)
			return fail(e, errbuf);
	}
	if (e->state != EOS_COMMITTING)
		return 0;
	if (commit(e, errbuf, sizeof(errbuf)) < 0)
		return fail(e, errbuf);
	loop_timer_set(e->timer, -1, 0);
	e->state = EOS_IDLE;
	e->begun = false;
	store_offsets(e);
	e->first_ms = 0;
	e->asked = false;
	if (e->poll)
		e->next_ms = loop_now_ms() + e->period_ms;
	e->env.committed(e->env.ctx);
	return 0;
}

/* eos.h */
void eos_reopen(struct eos *e)
{
	char errbuf[512];

	if (e == NULL)
		return;
	/* The old producer's committed, the next opens on this one. */
	e->state = EOS_IDLE;
	e->begun = false;
	if (txn(e, SINK_TXN_INIT, budget_ms(e), errbuf, sizeof(errbuf)) != 0) {
		log_error("%s (the new producer's); exiting to start again", errbuf);
		e->broken = true;
		e->exit_code = WORKER_EXIT_TEMPFAIL;
	}
}

/* eos.h */
int eos_await_cluster(struct eos *e, const char *servers, int sigfd, bool *waited)
{
	struct sdnotify *n = NULL;
	int64_t since = loop_now_ms(), logged = since, pause = WAIT_FIRST_MS;
	char why[256], status[512];
	int rc = 0;

	*waited = false;
	if (e == NULL)
		return 0;
	while (rc == 0 && sink_reachable(sink(e), WAIT_PROBE_MS, why, sizeof(why)) != 0) {
		sink_poll(sink(e)); /* librdkafka's own lines, folded */
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

/* eos.h */
void eos_close(struct eos *e)
{
	if (e == NULL)
		return;
	loop_timer_del(e->env.loop, e->timer);
	drop_json(e);
	free(e->json);
	free(e);
}
