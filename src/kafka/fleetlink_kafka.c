/* fleetlink_kafka: the fleet link with librdkafka (fleetlink.h): a
 * consumer that assign()s each configuration topic's partition 0 from the
 * beginning, one idempotent producer for the status topic, and one pipe both
 * clients' queues signal (rd_kafka_queue_io_event_enable), the descriptor
 * the loop watches.
 *
 * Two consumers, one after the other: the snapshots are read with a short
 * fetch.wait.max.ms, then, once every topic's snapshot ended, that consumer
 * is replaced by the long-polling one, assigned where the first stopped.
 * librdkafka keeps one Fetch in flight per broker, and a partition that
 * becomes fetchable while one is out waits for its answer: with the long
 * poll from the start, a second topic (a group's) whose first offset was
 * found a moment after the first's waited the whole 55 s (the mock cluster
 * showed it, in an optimised build). No record is lost or repeated by the
 * swap: the second starts after the last record handed out.
 *
 * Where a topic's snapshot ends is asked once at start (ListOffsets: the high
 * watermark, the last stable offset with read_committed), and it has ended
 * when the record before that offset was handed out, or the reader's
 * position reached it (records of aborted transactions and transaction
 * markers are never handed out), or at once for an empty topic. Not from
 * librdkafka's partition EOF alone: that comes with a Fetch answer, and the
 * Fetch at the end is the long poll: measured on the test broker, an empty
 * topic's EOF came after fetch.wait.max.ms, every start would wait 55 s. EOF
 * still ends a snapshot whose end could not be asked (the cluster did not
 * answer at start). */
#include "kafka/fleetlink_kafka.h"

#include "config/config.h"
#include "kafka/kconf.h"
#include "kafka/ktopic.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* librdkafka 2.0.2 sends a Metadata request every second with a refresh
 * interval of 800000 to 1200000 ms (measured for issue 28's design: its derived
 * metadata.max.age.ms, 3 x refresh, overflows a signed 32-bit count of
 * microseconds). 600000 with an explicit max age below 2147483 is quiet:
 * ~2-3 KB/h. */
#define METADATA_REFRESH_MS "600000"
#define METADATA_MAX_AGE_MS "1800000"
/* The reader's buffers: configuration records are small (a connector's
 * config ~600 B); librdkafka's defaults (64 MiB of prefetch) would be a
 * Pi's memory for nothing. A batch larger than a fetch still comes whole
 * (KIP-74). */
#define FETCH_BYTES "262144"
#define QUEUE_KB "256"
#define QUEUE_MSGS "1000"
/* The group.id: librdkafka 2.0.2's assign() fetches nothing without one.
 * Nothing joins or commits; FindCoordinator wants Describe on it (ACL). */
#define GROUP_PREFIX "skiff-fleet-"

/* The start's steps, in order: the status topic created and checked
 * (create_status), create_config created and checked, then the topics read
 * (their ends asked, assigned). Each admin request answers on the pipe; one
 * the cluster did not answer (no broker, no controller) is sent again with
 * a doubled timeout (librdkafka answers it as soon as the cluster comes, so
 * the timeout only bounds how often an absent cluster is asked). */
enum start {
	START_STATUS,
	START_STATUS_CHECK,
	START_CONFIG,
	START_CONFIG_CHECK,
	START_READ,
	START_DONE,
	START_FAILED, /* refused (a topic's policy, a setting): a person must act */
};
/* The first request's timeout: "waiting for Kafka" is said after it. */
#define START_FIRST_WAIT_MS 5000

/* A configuration topic being read. */
struct topic {
	const char *name;
	int64_t end;  /* where its snapshot ends, from the start's ListOffsets; -1: not known */
	bool empty;   /* nothing below end at start: ended at once */
	bool begun;   /* its snapshot's begin reported */
	bool ended;   /* its snapshot's end reported */
	int64_t next; /* the offset after the last record handed out; -1: none yet */
	/* Why the start's ListOffsets failed (no such topic, not authorised),
	 * to be reported by the first poll; 0: nothing to report. */
	rd_kafka_resp_err_t err;
};

struct kctx {
	struct fleetlink_conf conf; /* a copy; what it points to is the caller's */
	const struct fleetlink_events *ev;
	void *arg;
	rd_kafka_t *consumer; /* the snapshot reader, then the long-polling one */
	bool polling;         /* consumer is the long-polling one */
	rd_kafka_t *producer; /* NULL: no status topic */
	rd_kafka_queue_t *cq, *pq;
	struct topic *topics;
	int pipefd[2];
	bool closing; /* kdestroy began: no report goes out */
	/* The start (topics checked, then read), taken from kpoll without
	 * waiting: the device runs on while the cluster is away. */
	enum start step;
	rd_kafka_queue_t *aq; /* where the step's admin request answers; NULL: none out */
	int wait_ms;          /* its request timeout: doubled at each retry, to timeout_ms */
	bool said;            /* "waiting for Kafka" reported */
};

/* Sets each name=value of kv (NULL-terminated pairs) with where "fleet". */
static int set_all(rd_kafka_conf_t *conf, const char *const *kv, char *errbuf, size_t errlen)
{
	for (size_t i = 0; kv[i] != NULL; i += 2)
		if (kconf_set(conf, kv[i], kv[i + 1], "fleet", errbuf, errlen) != 0)
			return -1;
	return 0;
}

/* Refuses a long poll that would hold the connection past the socket
 * timeout: librdkafka warns, and the requests queued behind the open Fetch
 * (FindCoordinator, Metadata) time out and drop the connection. */
static int check_wait(rd_kafka_conf_t *conf, int64_t wait_ms, char *errbuf, size_t errlen)
{
	char v[32];
	size_t n = sizeof(v);
	long long sock;

	if (rd_kafka_conf_get(conf, "socket.timeout.ms", v, &n) != RD_KAFKA_CONF_OK)
		return 0;
	sock = strtoll(v, NULL, 10);
	if (wait_ms < sock - 1000)
		return 0;
	snprintf(errbuf, errlen,
	         "fleet.fetch.wait.max.ms=%" PRId64 " must be below socket.timeout.ms - 1000 "
	         "(socket.timeout.ms=%lld): a long poll holds the connection, and requests "
	         "queued behind it would time out",
	         wait_ms, sock);
	return -1;
}

static int consumer_conf(const struct fleetlink_conf *c, enum fleetlink_client which,
                         rd_kafka_conf_t *conf, char *errbuf, size_t errlen)
{
	int64_t wait_ms =
	    which == FLEETLINK_SNAPSHOT ? FLEETLINK_SNAPSHOT_WAIT_MS : c->fetch_wait_max_ms;
	char group[256], wait[32];
	const char *kv[] = {
	    "group.id",
	    group,
	    "enable.auto.commit",
	    "false",
	    "enable.auto.offset.store",
	    "false",
	    "auto.offset.reset",
	    "earliest",
	    "enable.partition.eof",
	    "true",
	    "isolation.level",
	    "read_committed",
	    "fetch.wait.max.ms",
	    wait,
	    "fetch.min.bytes",
	    "1",
	    "message.max.bytes",
	    FETCH_BYTES,
	    "fetch.max.bytes",
	    FETCH_BYTES,
	    "max.partition.fetch.bytes",
	    FETCH_BYTES,
	    "queued.max.messages.kbytes",
	    QUEUE_KB,
	    "queued.min.messages",
	    QUEUE_MSGS,
	    NULL,
	};

	snprintf(group, sizeof(group), "%s%.200s", GROUP_PREFIX, c->device);
	snprintf(wait, sizeof(wait), "%" PRId64, wait_ms);
	if (set_all(conf, kv, errbuf, errlen) != 0)
		return -1;
	/* Both are checked: the snapshot reader is refused for the long
	 * poll's sake, before anything starts. */
	return check_wait(conf, c->fetch_wait_max_ms, errbuf, errlen);
}

static int producer_conf(const struct fleetlink_conf *c, rd_kafka_conf_t *conf, char *errbuf,
                         size_t errlen)
{
	/* acks=all and idempotence: a status record acknowledged is on every
	 * in-sync replica, and a retried batch never lands after a later one
	 * (a key's older state over its newer). Not transactional: a status
	 * record in an aborted transaction would vanish. */
	const char *kv[] = {
	    "acks",
	    "all",
	    "enable.idempotence",
	    "true",
	    /* Connect's keys spread as Java's producer spreads them. */
	    "partitioner",
	    "murmur2_random",
	    "linger.ms",
	    "0",
	    /* A deleted status topic must not come back with the broker's
	     * default policy (delete). */
	    "allow.auto.create.topics",
	    "false",
	    /* Never given up: a record waits for a cluster away as long as it
	     * is away (librdkafka retries it), bounded by the link's
	     * coalescing (two per key); timed out, the state it carried would
	     * be lost until the next change. */
	    "message.timeout.ms",
	    "0",
	    NULL,
	};

	(void)c;
	return set_all(conf, kv, errbuf, errlen);
}

int fleetlink_kafka_conf(const struct fleetlink_conf *c, enum fleetlink_client which,
                         rd_kafka_conf_t **out, char *errbuf, size_t errlen)
{
	char id[256];
	const char *md[] = {
	    "topic.metadata.refresh.interval.ms",
	    METADATA_REFRESH_MS,
	    "metadata.max.age.ms",
	    METADATA_MAX_AGE_MS,
	    "client.id",
	    id,
	    NULL,
	};
	rd_kafka_conf_t *conf;
	int rc;

	*out = NULL;
	conf = kconf_worker(c->worker, "skiff-fleet", errbuf, errlen);
	if (conf == NULL)
		return FLEETLINK_ERR_CONFIG;
	snprintf(id, sizeof(id), "skiff-fleet-%.200s", c->device);
	/* The fleet's own, over any kafka.X of the worker file: these two are
	 * the idle device's cost (docs/fleet.md). */
	rc = set_all(conf, md, errbuf, errlen);
	if (rc == 0)
		rc = which == FLEETLINK_PRODUCER ? producer_conf(c, conf, errbuf, errlen)
		                                 : consumer_conf(c, which, conf, errbuf, errlen);
	if (rc != 0) {
		rd_kafka_conf_destroy(conf);
		return FLEETLINK_ERR_CONFIG;
	}
	*out = conf;
	return 0;
}

/* A ktopic_err as a fleetlink_err. */
static int from_ktopic(int rc)
{
	return rc == 0                   ? 0
	       : rc == KTOPIC_ERR_CONFIG ? FLEETLINK_ERR_CONFIG
	       : rc == KTOPIC_ERR_NOMEM  ? FLEETLINK_ERR_NOMEM
	                                 : FLEETLINK_ERR;
}

/* Whether topic has a leader for partition 0 in a fresh Metadata answer. */
static bool led(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	const struct rd_kafka_metadata *md = NULL;
	bool ok = false;

	if (rkt == NULL)
		return false;
	if (rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		ok = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
		     md->topics[0].partition_cnt > 0 && md->topics[0].partitions[0].leader >= 0;
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return ok;
}

/* Why Metadata has no topic: its error there (TOPIC_AUTHORIZATION_FAILED
 * when the device may not describe it, UNKNOWN_TOPIC_OR_PART when it does
 * not exist), or fallback when the cluster did not say. ListOffsets alone
 * says "unknown partition" for both: an ACL that does not match would read
 * as a topic not provisioned. */
static rd_kafka_resp_err_t topic_err(rd_kafka_t *rk, const char *topic, int timeout_ms,
                                     rd_kafka_resp_err_t fallback)
{
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err = fallback;

	if (rkt == NULL)
		return fallback;
	if (rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (md->topic_cnt == 1 && md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
			err = md->topics[0].err;
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return err;
}

/* Waits up to timeout_ms for a topic just created to have a leader: the
 * consumer, told of it by nothing else, would learn of it only at its next
 * metadata refresh (topic.metadata.refresh.interval.ms, 10 min). Measured
 * on the test broker: assigned at once after the create, nothing came in
 * 30 s. */
static void await_topic(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 100) {
		if (led(rk, topic, timeout_ms - waited))
			return;
		usleep(100 * 1000);
	}
}

/* The spec of the status topic (status) or of create_config. */
static struct ktopic_spec spec_of(const struct kctx *k, bool status)
{
	const struct fleetlink_conf *c = &k->conf;
	struct ktopic_spec st = {
	    .topic = c->status_topic,
	    .key = "status.storage.topic",
	    .prefix = "status.storage.",
	    .noun = "status",
	    .loses = "the broker deletes a connector's last state and the fleet loses sight of it",
	    .lock_name = "skiff-status",
	    .partitions = c->status_partitions,
	    .replication_factor = c->status_replication,
	};
	struct ktopic_spec config = {
	    .topic = c->create_config,
	    .key = "config.storage.topic",
	    .prefix = "config.storage.",
	    .noun = "configuration",
	    .loses = "the broker deletes configurations and a device that restarts drops its "
	             "fleet's connectors",
	    .lock_name = "skiff-config",
	    /* Connect refuses a config topic of more than one: its order is its
	     * point. */
	    .partitions = 1,
	    .replication_factor = c->config_replication,
	};

	return status ? st : config;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kctx *k = opaque;

	if (k->closing)
		return;
	k->ev->delivered(k->arg, m->_private,
	                 m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? 0 : FLEETLINK_ERR,
	                 m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? NULL : rd_kafka_err2str(m->err));
}

/* A client of which into *rk. */
static int client(struct kctx *k, enum fleetlink_client which, rd_kafka_t **rk, char *errbuf,
                  size_t errlen)
{
	rd_kafka_conf_t *conf = NULL;
	char why[256]; /* librdkafka's reason; the message around it fits errbuf's 512 */
	int rc = fleetlink_kafka_conf(&k->conf, which, &conf, errbuf, errlen);

	if (rc != 0)
		return rc;
	if (which == FLEETLINK_PRODUCER) {
		rd_kafka_conf_set_opaque(conf, k);
		rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	}
	rc = kconf_new(which == FLEETLINK_PRODUCER ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER, conf,
	               rk, why, sizeof(why));
	if (rc != KCONF_OK) {
		rd_kafka_conf_destroy(conf);
		snprintf(errbuf, errlen, "fleet: %s: %s%s",
		         which == FLEETLINK_PRODUCER ? "status producer" : "consumer", why,
		         rc == KCONF_ERR_NOMEM ? ": out of memory or threads" : "");
		return rc == KCONF_ERR_NOMEM ? FLEETLINK_ERR_NOMEM : FLEETLINK_ERR_CONFIG;
	}
	return 0;
}

/* Where each topic's snapshot ends: its end offset now. A cluster that
 * does not answer is asked no further (each would wait as long): those
 * snapshots end at librdkafka's EOF. Blocks up to timeout_ms. */
static void ask_ends(struct kctx *k)
{
	for (size_t i = 0; i < k->conf.ntopics; i++) {
		struct topic *t = &k->topics[i];
		int64_t lo = -1, hi = -1;
		rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
		    k->consumer, t->name, 0, &lo, &hi, k->conf.timeout_ms);

		if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
			if (ktopic_unreachable(err))
				return;
			/* Said, not ended: a missing topic read as empty would
			 * remove every connector it gave. */
			if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
			    err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
			    err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
				err = topic_err(k->consumer, t->name, k->conf.timeout_ms, err);
			t->err = err;
			continue;
		}
		t->end = hi;
		/* Nothing left below the end (empty, or all deleted): no record
		 * will say it. */
		t->empty = lo >= hi;
	}
}

/* Assigns partition 0 of every topic: after its last record handed out,
 * else from its beginning. */
static int assign(struct kctx *k, char *errbuf, size_t errlen)
{
	rd_kafka_topic_partition_list_t *tp =
	    rd_kafka_topic_partition_list_new((int)k->conf.ntopics);
	rd_kafka_resp_err_t err;

	if (tp == NULL) {
		snprintf(errbuf, errlen, "fleet: out of memory");
		return FLEETLINK_ERR_NOMEM;
	}
	for (size_t i = 0; i < k->conf.ntopics; i++)
		rd_kafka_topic_partition_list_add(tp, k->conf.topics[i], 0)->offset =
		    k->topics[i].next >= 0 ? k->topics[i].next : RD_KAFKA_OFFSET_BEGINNING;
	err = rd_kafka_assign(k->consumer, tp);
	rd_kafka_topic_partition_list_destroy(tp);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		snprintf(errbuf, errlen, "fleet: cannot assign the configuration topics: %s",
		         rd_kafka_err2str(err));
		return FLEETLINK_ERR;
	}
	return 0;
}

/* Everything the consumer reports (records, ends, errors) on one queue,
 * and that queue (like the producer's, delivery reports) on the pipe. */
static void attach(struct kctx *k)
{
	rd_kafka_poll_set_consumer(k->consumer);
	k->cq = rd_kafka_queue_get_consumer(k->consumer);
	rd_kafka_queue_io_event_enable(k->cq, k->pipefd[1], "1", 1);
}

/* Closes the consumer. Assigned only: it leaves no group, commits
 * nothing. */
static void detach(struct kctx *k)
{
	if (k->cq != NULL)
		rd_kafka_queue_destroy(k->cq);
	k->cq = NULL;
	if (k->consumer != NULL) {
		rd_kafka_consumer_close(k->consumer);
		rd_kafka_destroy(k->consumer);
	}
	k->consumer = NULL;
}

/* Whether step has anything to do with k's settings. */
static bool step_wanted(const struct kctx *k, enum start step)
{
	switch (step) {
	case START_STATUS:
	case START_STATUS_CHECK:
		return k->conf.status_topic != NULL && k->conf.create_status;
	case START_CONFIG:
	case START_CONFIG_CHECK:
		return k->conf.create_config != NULL;
	default:
		return true;
	}
}

/* Sends the admin request of k->step (its answer to come on the pipe).
 * Returns 0, or a fleetlink_err with errbuf. */
static int step_post(struct kctx *k, char *errbuf, size_t errlen)
{
	bool status = k->step == START_STATUS || k->step == START_STATUS_CHECK;
	bool create = k->step == START_STATUS || k->step == START_CONFIG;
	rd_kafka_t *rk = status ? k->producer : k->consumer;
	struct ktopic_spec t = spec_of(k, status);
	int rc;

	k->aq = rd_kafka_queue_new(rk);
	if (k->aq == NULL) {
		snprintf(errbuf, errlen, "fleet: out of memory");
		return FLEETLINK_ERR_NOMEM;
	}
	rd_kafka_queue_io_event_enable(k->aq, k->pipefd[1], "1", 1);
	rc = create ? ktopic_create_post(rk, k->conf.worker, &t, k->wait_ms, k->aq, errbuf, errlen)
	            : ktopic_check_post(rk, &t, k->wait_ms, k->aq, errbuf, errlen);
	if (rc != 0) {
		rd_kafka_queue_destroy(k->aq);
		k->aq = NULL;
	}
	return from_ktopic(rc);
}

/* The topics read: their ends asked (the cluster just answered: this
 * waits little), then assigned; sends may go. */
static int step_read(struct kctx *k, char *errbuf, size_t errlen)
{
	int rc;

	if (k->conf.create_config != NULL)
		await_topic(k->consumer, k->conf.create_config, k->conf.timeout_ms);
	ask_ends(k);
	rc = assign(k, errbuf, errlen);
	if (rc != 0)
		return rc;
	k->step = START_DONE;
	/* The next poll says the ends of empty topics. */
	if (write(k->pipefd[1], "1", 1) < 0) {
		/* Full: a wake-up is pending anyway. */
	}
	k->ev->ready(k->arg);
	return 0;
}

/* Goes through the steps from k->step that need no answer, and sends the
 * first request that does. Refused: said, and the start stops there. */
static void step_on(struct kctx *k)
{
	char why[512];
	int rc = 0;

	while (rc == 0 && k->aq == NULL && k->step < START_DONE) {
		if (!step_wanted(k, k->step))
			k->step++;
		else if (k->step == START_READ)
			rc = step_read(k, why, sizeof(why));
		else
			rc = step_post(k, why, sizeof(why));
	}
	if (rc != 0) {
		k->step = START_FAILED;
		k->ev->error(k->arg, rc, why);
	}
}

/* The answer of the step's request, if it came: the next step, or the
 * same again when the cluster was not reached (said once). */
static void step_answer(struct kctx *k)
{
	bool status = k->step == START_STATUS || k->step == START_STATUS_CHECK;
	bool create = k->step == START_STATUS || k->step == START_CONFIG;
	struct ktopic_spec t = spec_of(k, status);
	rd_kafka_event_t *ev = k->aq != NULL ? rd_kafka_queue_poll(k->aq, 0) : NULL;
	char why[512], said[640];
	int rc;

	if (ev == NULL)
		return;
	rc = create ? ktopic_create_result(k->conf.worker, &t, k->wait_ms, ev, why, sizeof(why))
	            : ktopic_check_result(k->conf.worker, &t, ev, why, sizeof(why));
	rd_kafka_event_destroy(ev);
	rd_kafka_queue_destroy(k->aq);
	k->aq = NULL;
	if (rc == KTOPIC_ERR_IO) {
		if (!k->said) {
			k->said = true;
			snprintf(
			    said, sizeof(said),
			    "fleet: waiting for Kafka (%s); the device runs on, the fleet joins "
			    "when the cluster answers",
			    why);
			k->ev->waiting(k->arg, said);
		}
		k->wait_ms =
		    k->wait_ms * 2 < k->conf.timeout_ms ? k->wait_ms * 2 : k->conf.timeout_ms;
	} else if (rc != 0) {
		k->step = START_FAILED;
		k->ev->error(k->arg, from_ktopic(rc), why);
		return;
	} else {
		k->step++;
	}
	step_on(k);
}

static void kdestroy(void *vctx);

static int kopen(const struct fleetlink_conf *c, const struct fleetlink_events *ev, void *arg,
                 void **ctx, char *errbuf, size_t errlen)
{
	struct kctx *k = calloc(1, sizeof(*k));
	int rc = FLEETLINK_ERR_NOMEM;

	*ctx = NULL;
	if (k == NULL || (k->topics = calloc(c->ntopics + 1, sizeof(*k->topics))) == NULL) {
		free(k);
		snprintf(errbuf, errlen, "fleet: out of memory");
		return FLEETLINK_ERR_NOMEM;
	}
	k->conf = *c;
	k->ev = ev;
	k->arg = arg;
	k->pipefd[0] = k->pipefd[1] = -1;
	for (size_t i = 0; i < c->ntopics; i++) {
		k->topics[i].name = c->topics[i];
		k->topics[i].end = -1;
		k->topics[i].next = -1;
	}
	k->step = START_STATUS;
	k->wait_ms = START_FIRST_WAIT_MS < c->timeout_ms ? START_FIRST_WAIT_MS : c->timeout_ms;
	rc = client(k, FLEETLINK_SNAPSHOT, &k->consumer, errbuf, errlen);
	if (rc == 0 && c->status_topic != NULL)
		rc = client(k, FLEETLINK_PRODUCER, &k->producer, errbuf, errlen);
	if (rc == 0 && pipe2(k->pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
		snprintf(errbuf, errlen, "fleet: pipe: %s", strerror(errno));
		rc = FLEETLINK_ERR;
	}
	if (rc != 0)
		goto fail;
	attach(k);
	if (k->producer != NULL) {
		k->pq = rd_kafka_queue_get_main(k->producer);
		rd_kafka_queue_io_event_enable(k->pq, k->pipefd[1], "1", 1);
	}
	/* The start goes on from kpoll: nothing here waits for the cluster. */
	if (write(k->pipefd[1], "1", 1) < 0) {
		/* A fresh pipe is empty. */
	}
	*ctx = k;
	return 0;
fail:
	kdestroy(k);
	return rc;
}

static int kfd(const void *vctx)
{
	const struct kctx *k = vctx;

	return k->pipefd[0];
}

static struct topic *topic_state(struct kctx *k, const char *name)
{
	for (size_t i = 0; i < k->conf.ntopics; i++)
		if (strcmp(k->topics[i].name, name) == 0)
			return &k->topics[i];
	return NULL;
}

/* Says, once, why a topic's end could not be asked at start: a topic that
 * does not exist, or that the device may not read, is otherwise silent
 * (librdkafka waits for it), and its snapshot never ends. */
static void say_missing(struct kctx *k)
{
	char why[512];
	bool none;

	for (size_t i = 0; i < k->conf.ntopics; i++) {
		struct topic *t = &k->topics[i];

		if (t->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			continue;
		none = t->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
		       t->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
		       t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
		snprintf(why, sizeof(why), "fleet: configuration topic %s: %s: %s", t->name,
		         none ? "no such topic" : rd_kafka_err2str(t->err),
		         "its snapshot waits until it can be read");
		t->err = RD_KAFKA_RESP_ERR_NO_ERROR;
		k->ev->error(k->arg, FLEETLINK_ERR, why);
	}
}

/* Reports t's snapshot begun, once, with its end: the one asked at start,
 * else the high watermark the last Fetch answer gave (the one that brought
 * the record about to be handed out), else -1. */
static void begin(struct kctx *k, struct topic *t)
{
	int64_t lo = -1, hi = -1;

	if (t->begun)
		return;
	if (t->end < 0 &&
	    rd_kafka_get_watermark_offsets(k->consumer, t->name, 0, &lo, &hi) ==
	        RD_KAFKA_RESP_ERR_NO_ERROR &&
	    hi >= 0)
		t->end = hi;
	t->begun = true;
	k->ev->begin(k->arg, t->name, NULL, t->end);
}

/* Reports t's snapshot ended at end, once. */
static void ended(struct kctx *k, struct topic *t, int64_t end)
{
	if (t->ended)
		return;
	begin(k, t);
	if (t->end < 0)
		t->end = end;
	t->ended = true;
	k->ev->snapshot(k->arg, t->name, end);
}

/* Ends the snapshots whose reader reached their end without a record at
 * its offset - 1 (an empty topic, transaction markers at the end). */
static void reached(struct kctx *k)
{
	for (size_t i = 0; i < k->conf.ntopics; i++) {
		struct topic *t = &k->topics[i];
		rd_kafka_topic_partition_list_t *tp;

		if (t->ended || t->end < 0)
			continue;
		begin(k, t);
		tp = rd_kafka_topic_partition_list_new(1);
		if (tp == NULL)
			return;
		rd_kafka_topic_partition_list_add(tp, t->name, 0);
		if (t->empty || (rd_kafka_position(k->consumer, tp) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		                 tp->elems[0].offset >= t->end))
			ended(k, t, t->end);
		rd_kafka_topic_partition_list_destroy(tp);
	}
}

/* One message of the consumer's queue: a record, an end, or an error. */
static void take(struct kctx *k, const rd_kafka_message_t *m)
{
	const char *topic = m->rkt != NULL ? rd_kafka_topic_name(m->rkt) : NULL;
	struct topic *t = topic != NULL ? topic_state(k, topic) : NULL;
	char why[512];

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		/* Every EOF after the first (each time the reader catches up)
		 * says nothing new. */
		if (t != NULL) {
			if (t->end < 0 && !t->begun)
				t->end = m->offset;
			ended(k, t, t->end >= 0 ? t->end : m->offset);
		}
		return;
	}
	if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		snprintf(why, sizeof(why), "fleet: configuration topic %s: %s",
		         topic != NULL ? topic : "(none)", rd_kafka_message_errstr(m));
		k->ev->error(k->arg, FLEETLINK_ERR, why);
		return;
	}
	if (t == NULL)
		return;
	begin(k, t);
	struct fleetlink_record r = {
	    .topic = t->name,
	    .topic_id = NULL,
	    .offset = m->offset,
	    .key = m->key,
	    .klen = m->key_len,
	    .value = m->payload,
	    .vlen = m->len,
	};
	t->next = m->offset + 1;
	k->ev->record(k->arg, &r);
	if (t->end >= 0 && m->offset + 1 >= t->end)
		ended(k, t, t->end);
}

static bool all_ended(const struct kctx *k)
{
	for (size_t i = 0; i < k->conf.ntopics; i++)
		if (!k->topics[i].ended)
			return false;
	return true;
}

/* Every snapshot read: the long-polling consumer takes over where the
 * snapshot reader stopped (records it fetched past that and did not hand
 * out are fetched again). A failure is said, and the snapshot reader goes
 * on (its short polls cost bandwidth, not records). */
static void swap(struct kctx *k)
{
	rd_kafka_t *polling = NULL;
	char why[512];

	k->polling = true;
	if (client(k, FLEETLINK_CONSUMER, &polling, why, sizeof(why)) != 0) {
		k->ev->error(k->arg, FLEETLINK_ERR, why);
		return;
	}
	/* Past the end without a record there (an empty topic, transaction
	 * markers): from the end. */
	for (size_t i = 0; i < k->conf.ntopics; i++)
		if (k->topics[i].next < k->topics[i].end)
			k->topics[i].next = k->topics[i].end;
	detach(k);
	k->consumer = polling;
	attach(k);
	if (assign(k, why, sizeof(why)) != 0)
		k->ev->error(k->arg, FLEETLINK_ERR, why);
}

static void kpoll(void *vctx)
{
	struct kctx *k = vctx;
	char buf[64];
	int n;

	/* Drained first: an event that comes while the queues are served
	 * wakes the loop again. */
	while (read(k->pipefd[0], buf, sizeof(buf)) > 0)
		;
	if (k->producer != NULL)
		rd_kafka_poll(k->producer, 0);
	if (k->step < START_DONE) {
		if (k->aq != NULL)
			step_answer(k);
		else
			step_on(k);
		if (k->step != START_DONE)
			return;
	}
	say_missing(k);
	for (n = 0; n < FLEETLINK_POLL_BUDGET; n++) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(k->consumer, 0);

		if (m == NULL) {
			reached(k);
			if (!k->polling && all_ended(k))
				swap(k);
			return;
		}
		take(k, m);
		rd_kafka_message_destroy(m);
	}
	/* More may wait: the queue signals only when it turns non-empty, so
	 * the loop is woken by hand. */
	if (write(k->pipefd[1], "1", 1) < 0) {
		/* Full: a wake-up is pending anyway. */
	}
}

static int kproduce(void *vctx, const char *key, const char *value, size_t vlen, void *token,
                    char *errbuf, size_t errlen)
{
	struct kctx *k = vctx;
	size_t len = value != NULL ? vlen : 0;
	rd_kafka_resp_err_t err;

	if (k->producer == NULL) {
		snprintf(errbuf, errlen, "status record %s: no status.storage.topic", key);
		return FLEETLINK_ERR_NOSTATUS;
	}
	err = rd_kafka_producev(
	    k->producer, RD_KAFKA_V_TOPIC(k->conf.status_topic), RD_KAFKA_V_KEY(key, strlen(key)),
	    RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
	    RD_KAFKA_V_OPAQUE(token), RD_KAFKA_V_END);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	snprintf(errbuf, errlen, "status.storage.topic %s: %s: %s", k->conf.status_topic, key,
	         rd_kafka_err2str(err));
	return err == RD_KAFKA_RESP_ERR__QUEUE_FULL ? FLEETLINK_ERR_FULL : FLEETLINK_ERR;
}

static void kdestroy(void *vctx)
{
	struct kctx *k = vctx;

	if (k == NULL)
		return;
	k->closing = true;
	if (k->aq != NULL)
		rd_kafka_queue_destroy(k->aq);
	detach(k);
	if (k->pq != NULL)
		rd_kafka_queue_destroy(k->pq);
	if (k->producer != NULL) {
		/* Records not yet acknowledged are dropped (fleetlink.h). */
		rd_kafka_purge(k->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_destroy(k->producer);
	}
	if (k->pipefd[0] >= 0)
		close(k->pipefd[0]);
	if (k->pipefd[1] >= 0)
		close(k->pipefd[1]);
	free(k->topics);
	free(k);
}

const struct fleetlink_ops fleetlink_kafka_ops = {
    .late = true,
    .open = kopen,
    .fd = kfd,
    .poll = kpoll,
    .produce = kproduce,
    .destroy = kdestroy,
};
