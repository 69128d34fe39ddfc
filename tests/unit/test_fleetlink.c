/* test_fleetlink: the fleet's tie to Kafka (src/kafka/fleetlink.c,
 * fleetlink_kafka.c). The librdkafka side against librdkafka's mock cluster
 * (rdkafka_mock.h: a broker in the process, Produce, Fetch, ListOffsets,
 * idempotent producers): a configuration topic read to its end, then a new
 * record through the descriptor; a tombstone handed out as NULL; status
 * records acknowledged. The coalescing of status records against the fake
 * (tests/unit/fleetlinkfake.c), where deliveries come on cue. And the
 * clients' configuration: the two librdkafka 2.0.2 traps measured for the
 * design (docs/fleet.md) asserted on the property sets built. */
#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "kafka/fleetlink.h"
#include "kafka/fleetlink_kafka.h"
#include "fleetlinkfake.h"
#include "testlib.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_SEEN 64

/* What the callbacks saw. */
struct seen {
	struct {
		char topic[128], key[128], value[256];
		const char *topic_id;
		bool tombstone;
		int64_t offset;
	} rec[MAX_SEEN];
	size_t nrec;
	char begun[8][128];
	int64_t begin_end[8];
	size_t nbegun;
	bool record_before_begin; /* a record of a topic not begun yet */
	char ended[8][128];
	int64_t end[8];
	size_t nended;
	char sent[MAX_SEEN][128];
	int sent_rc[MAX_SEEN];
	size_t nsent;
	size_t nerror, nwaiting, nready;
	char error[512];
};

static void on_record(void *arg, const struct fleetlink_record *r)
{
	struct seen *s = arg;

	bool begun = false;

	for (size_t i = 0; i < s->nbegun; i++)
		begun = begun || strcmp(s->begun[i], r->topic) == 0;
	s->record_before_begin = s->record_before_begin || !begun;
	if (s->nrec == MAX_SEEN)
		return;
	snprintf(s->rec[s->nrec].topic, sizeof(s->rec[0].topic), "%s", r->topic);
	snprintf(s->rec[s->nrec].key, sizeof(s->rec[0].key), "%.*s", (int)r->klen,
	         r->key != NULL ? r->key : "");
	snprintf(s->rec[s->nrec].value, sizeof(s->rec[0].value), "%.*s", (int)r->vlen,
	         r->value != NULL ? r->value : "");
	s->rec[s->nrec].tombstone = r->value == NULL;
	s->rec[s->nrec].topic_id = r->topic_id;
	s->rec[s->nrec].offset = r->offset;
	s->nrec++;
}

static void on_begin(void *arg, const char *topic, const char *topic_id, int64_t end)
{
	struct seen *s = arg;

	CHECK(topic_id == NULL); /* librdkafka 2.0.2 gives none */
	if (s->nbegun == 8)
		return;
	snprintf(s->begun[s->nbegun], sizeof(s->begun[0]), "%s", topic);
	s->begin_end[s->nbegun++] = end;
}

static void on_snapshot(void *arg, const char *topic, int64_t end)
{
	struct seen *s = arg;

	if (s->nended == 8)
		return;
	snprintf(s->ended[s->nended], sizeof(s->ended[0]), "%s", topic);
	s->end[s->nended++] = end;
}

static void on_sent(void *arg, const char *key, int rc, const char *why)
{
	struct seen *s = arg;

	if (s->nsent == MAX_SEEN)
		return;
	snprintf(s->sent[s->nsent], sizeof(s->sent[0]), "%s", key);
	s->sent_rc[s->nsent++] = rc;
}

static void on_error(void *arg, int rc, const char *why)
{
	struct seen *s = arg;

	s->nerror++;
	snprintf(s->error, sizeof(s->error), "%s", why);
}

static void on_waiting(void *arg, const char *why)
{
	struct seen *s = arg;

	s->nwaiting++;
	snprintf(s->error, sizeof(s->error), "%s", why);
}

static void on_ready(void *arg)
{
	struct seen *s = arg;

	s->nready++;
}

static const struct fleetlink_cbs cbs = {
    .begin = on_begin,
    .record = on_record,
    .snapshot = on_snapshot,
    .sent = on_sent,
    .error = on_error,
    .waiting = on_waiting,
    .ready = on_ready,
};

/* A worker section of text, its keys bound as settings_load binds them;
 * the caller destroys it. */
static struct config_section *worker(const char *text)
{
	static const char *const passthrough[] = {"kafka.", "security.", "sasl.", "ssl.", NULL};
	const struct config_key *tables[1];
	struct config_spec spec = {
	    .prefix = "", .tables = tables, .ntables = 1, .passthrough = passthrough};
	struct config_section *s = NULL;
	struct props *p = NULL;
	const char *name;
	size_t size;
	char err[512];

	CHECK(settings_table(0, &name, &tables[0], &size));
	CHECK_INT(props_load_mem("w.properties", text, strlen(text), &p, err, sizeof(err)), 0);
	if (config_section_load(p, &spec, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "worker: %s\n", err);
		abort();
	}
	CHECK_INT(config_section_keep(s, tables[0], size), 0);
	props_destroy(p);
	return s;
}

static struct fleetlink_conf conf_of(const struct config_section *w, const char *const *topics,
                                     size_t ntopics, const char *status)
{
	struct fleetlink_conf c = {
	    .worker = w,
	    .device = "dev-1",
	    .topics = topics,
	    .ntopics = ntopics,
	    .status_topic = status,
	    .status_partitions = 1,
	    .status_replication = -1,
	    .fetch_wait_max_ms = 55000,
	    .timeout_ms = 10000,
	};
	return c;
}

/* property's value in conf, "" when it has none. */
static const char *get(rd_kafka_conf_t *conf, const char *property)
{
	static char v[512];
	size_t n = sizeof(v);

	if (rd_kafka_conf_get(conf, property, v, &n) != RD_KAFKA_CONF_OK)
		v[0] = '\0';
	return v;
}

/* ---- the clients' configuration ------------------------------------------- */

static void test_config(void)
{
	struct config_section *w = worker("bootstrap.servers=localhost:9\n"
	                                  /* A user's own refresh in the trap's range: the fleet's
	                                   * clients keep theirs. */
	                                  "kafka.topic.metadata.refresh.interval.ms=900000\n"
	                                  "security.protocol=PLAINTEXT\n");
	const char *topics[] = {"skiff.config.dev-1"};
	struct fleetlink_conf c = conf_of(w, topics, 1, "skiff.status.dev-1");
	rd_kafka_conf_t *conf = NULL;
	char err[512];

	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_CONSUMER, &conf, err, sizeof(err)), 0);
	/* Trap 1: librdkafka's default 500 costs 1.4 MB/h per idle device. */
	CHECK_STR(get(conf, "fetch.wait.max.ms"), "55000");
	/* Trap 2: a refresh of 800000-1200000 sends Metadata every second. */
	CHECK_STR(get(conf, "topic.metadata.refresh.interval.ms"), "600000");
	CHECK_STR(get(conf, "metadata.max.age.ms"), "1800000");
	CHECK(strtoll(get(conf, "metadata.max.age.ms"), NULL, 10) < 2147483);
	CHECK_STR(get(conf, "group.id"), "skiff-fleet-dev-1");
	CHECK_STR(get(conf, "enable.auto.commit"), "false");
	CHECK_STR(get(conf, "isolation.level"), "read_committed");
	CHECK_STR(get(conf, "enable.partition.eof"), "true");
	CHECK_STR(get(conf, "bootstrap.servers"), "localhost:9");
	CHECK_STR(get(conf, "security.protocol"), "plaintext");
	CHECK_STR(get(conf, "client.id"), "skiff-fleet-dev-1");
	rd_kafka_conf_destroy(conf);

	/* The snapshot reader at start: short polls, until it hands over. */
	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_SNAPSHOT, &conf, err, sizeof(err)), 0);
	CHECK_STR(get(conf, "fetch.wait.max.ms"), "500");
	CHECK_STR(get(conf, "topic.metadata.refresh.interval.ms"), "600000");
	CHECK_STR(get(conf, "metadata.max.age.ms"), "1800000");
	CHECK_STR(get(conf, "group.id"), "skiff-fleet-dev-1");
	CHECK_STR(get(conf, "isolation.level"), "read_committed");
	rd_kafka_conf_destroy(conf);

	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_PRODUCER, &conf, err, sizeof(err)), 0);
	CHECK_STR(get(conf, "topic.metadata.refresh.interval.ms"), "600000");
	CHECK_STR(get(conf, "metadata.max.age.ms"), "1800000");
	CHECK_STR(get(conf, "enable.idempotence"), "true");
	CHECK_STR(get(conf, "acks"), "-1");
	/* Not the records' transactional producer. */
	CHECK_STR(get(conf, "transactional.id"), "");
	rd_kafka_conf_destroy(conf);

	/* The long poll must end before the socket times out. */
	c.fetch_wait_max_ms = 59000;
	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_CONSUMER, &conf, err, sizeof(err)),
	          FLEETLINK_ERR_CONFIG);
	CHECK(conf == NULL);
	CHECK(strstr(err, "fleet.fetch.wait.max.ms=59000 must be below socket.timeout.ms - 1000 "
	                  "(socket.timeout.ms=60000)") != NULL);
	c.fetch_wait_max_ms = 58999;
	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_CONSUMER, &conf, err, sizeof(err)), 0);
	rd_kafka_conf_destroy(conf);
	config_section_destroy(w);

	w = worker("bootstrap.servers=localhost:9\nkafka.socket.timeout.ms=30000\n");
	c = conf_of(w, topics, 1, NULL);
	CHECK_INT(fleetlink_kafka_conf(&c, FLEETLINK_CONSUMER, &conf, err, sizeof(err)),
	          FLEETLINK_ERR_CONFIG);
	CHECK(strstr(err, "(socket.timeout.ms=30000)") != NULL);
	config_section_destroy(w);
}

/* ---- the librdkafka side, on the mock cluster -------------------------------- */

static rd_kafka_t *mock_host;
static rd_kafka_mock_cluster_t *mock;

static void mock_start(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[512];

	rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
	mock_host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (mock_host == NULL)
		abort();
	mock = rd_kafka_mock_cluster_new(mock_host, 1);
	if (mock == NULL)
		abort();
}

static void mock_stop(void)
{
	rd_kafka_mock_cluster_destroy(mock);
	rd_kafka_destroy(mock_host);
}

/* Writes key=value (NULL: a tombstone) to topic, acknowledged. */
static void produce(const char *topic, const char *key, const char *value)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[512];
	rd_kafka_t *p;

	rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mock), err,
	                  sizeof(err));
	rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
	p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (p == NULL)
		abort();
	CHECK_INT(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, strlen(key)),
	                            RD_KAFKA_V_VALUE((void *)value, value ? strlen(value) : 0),
	                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
	          0);
	CHECK_INT(rd_kafka_flush(p, 10000), 0);
	rd_kafka_destroy(p);
}

/* topic's partition 0 high watermark, -1 when not known. */
static int64_t high_watermark(const char *topic)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	int64_t lo = -1, hi = -1;
	char err[512];
	rd_kafka_t *c;

	rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mock), err,
	                  sizeof(err));
	rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
	c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	if (c == NULL)
		abort();
	if (rd_kafka_query_watermark_offsets(c, topic, 0, &lo, &hi, 5000) != 0)
		hi = -1;
	rd_kafka_destroy(c);
	return hi;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs the link as the loop would (poll(2) on its descriptor, then
 * fleetlink_poll) until *count reaches want or 20 s pass. */
static void run_until(struct fleetlink *l, const size_t *count, size_t want)
{
	int64_t deadline = now_ms() + 20000;

	while (*count < want && now_ms() < deadline) {
		struct pollfd p = {.fd = fleetlink_fd(l), .events = POLLIN};

		if (poll(&p, 1, 200) > 0)
			fleetlink_poll(l);
	}
}

static void test_snapshot_then_long_poll(void)
{
	const char *topic = "skiff.config.dev-1";
	const char *topics[] = {topic};
	struct config_section *w;
	struct fleetlink_conf c;
	struct fleetlink *l = NULL;
	struct seen s = {0};
	char text[512], err[512];

	CHECK_INT(rd_kafka_mock_topic_create(mock, topic, 1, 1), 0);
	produce(topic, "connector-app", "{\"properties\":{\"name\":\"app\"}}");
	produce(topic, "target-state-app", "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}");
	produce(topic, "connector-old", NULL);
	snprintf(text, sizeof(text), "bootstrap.servers=%s\n",
	         rd_kafka_mock_cluster_bootstraps(mock));
	w = worker(text);
	c = conf_of(w, topics, 1, NULL);
	/* The mock answers an empty Fetch only after the whole wait. */
	c.fetch_wait_max_ms = 100;
	CHECK_INT(fleetlink_open(&fleetlink_kafka_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	if (l == NULL) {
		fprintf(stderr, "open: %s\n", err);
		config_section_destroy(w);
		return;
	}
	run_until(l, &s.nended, 1);
	/* Begun with its end before its first record, ended there. */
	CHECK_INT(s.nbegun, 1);
	CHECK_STR(s.begun[0], topic);
	CHECK_INT(s.begin_end[0], 3);
	CHECK(!s.record_before_begin);
	CHECK_INT(s.nended, 1);
	CHECK_STR(s.ended[0], topic);
	CHECK_INT(s.end[0], 3);
	/* Every record before the end, in order, before the end was said. */
	CHECK_INT(s.nrec, 3);
	CHECK_STR(s.rec[0].topic, topic);
	CHECK_INT(s.rec[0].offset, 0);
	CHECK_STR(s.rec[0].key, "connector-app");
	CHECK_STR(s.rec[0].value, "{\"properties\":{\"name\":\"app\"}}");
	CHECK(!s.rec[0].tombstone);
	CHECK(s.rec[0].topic_id == NULL); /* librdkafka 2.0.2 gives none */
	CHECK_INT(s.rec[1].offset, 1);
	CHECK_STR(s.rec[1].key, "target-state-app");
	CHECK_INT(s.rec[2].offset, 2);
	CHECK_STR(s.rec[2].key, "connector-old");
	CHECK(s.rec[2].tombstone);

	/* After the snapshot: a new record comes through the descriptor, and
	 * no second end is said. */
	produce(topic, "connector-db", "{\"properties\":{\"name\":\"db\"}}");
	run_until(l, &s.nrec, 4);
	CHECK_INT(s.nrec, 4);
	CHECK_INT(s.rec[3].offset, 3);
	CHECK_STR(s.rec[3].key, "connector-db");
	CHECK_INT(s.nended, 1);
	CHECK_INT(s.nbegun, 1);
	CHECK_INT(s.nerror, 0);
	fleetlink_destroy(l);
	config_section_destroy(w);
}

/* With the fleet's 55 s long poll (the mock holds an empty Fetch that
 * long): snapshots end when their reader reaches the end asked at open,
 * not when the Fetch at the end comes back: an empty topic, and one of two
 * records. (A topic ending in a transaction marker: librdkafka 2.0.2's mock
 * writes none, so the reader's position is the check there, untested
 * here.) */
static void test_snapshot_ends_without_the_long_poll(void)
{
	const char *topics[] = {"skiff.config.dev-4", "skiff.config.dev-5"};
	struct config_section *w;
	struct fleetlink_conf c;
	struct fleetlink *l = NULL;
	struct seen s = {0};
	char text[512], err[512];
	int64_t t0;

	CHECK_INT(rd_kafka_mock_topic_create(mock, topics[0], 1, 1), 0);
	CHECK_INT(rd_kafka_mock_topic_create(mock, topics[1], 1, 1), 0);
	produce(topics[1], "connector-a", "{\"properties\":{}}");
	produce(topics[1], "connector-b", "{\"properties\":{}}");
	snprintf(text, sizeof(text), "bootstrap.servers=%s\n",
	         rd_kafka_mock_cluster_bootstraps(mock));
	w = worker(text);
	c = conf_of(w, topics, 2, NULL);
	t0 = now_ms();
	CHECK_INT(fleetlink_open(&fleetlink_kafka_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	if (l != NULL) {
		run_until(l, &s.nended, 2);
		CHECK_INT(s.nended, 2);
		CHECK_INT(s.nbegun, 2);
		CHECK(!s.record_before_begin);
		/* Well before the long poll's 55 s: not its EOF. */
		CHECK(now_ms() - t0 < 20000);
		for (size_t i = 0; i < s.nended; i++)
			CHECK_INT(s.end[i], strcmp(s.ended[i], topics[0]) == 0 ? 0 : 2);
		CHECK_INT(s.nrec, 2);
		CHECK_STR(s.rec[1].key, "connector-b");
	}
	fleetlink_destroy(l);
	config_section_destroy(w);
}

/* An empty topic's snapshot ends at 0; two topics end each on its own. */
static void test_empty_topic_and_two_topics(void)
{
	const char *topics[] = {"skiff.config.dev-2", "skiff.config.group.all"};
	struct config_section *w;
	struct fleetlink_conf c;
	struct fleetlink *l = NULL;
	struct seen s = {0};
	char text[512], err[512];

	CHECK_INT(rd_kafka_mock_topic_create(mock, topics[0], 1, 1), 0);
	CHECK_INT(rd_kafka_mock_topic_create(mock, topics[1], 1, 1), 0);
	produce(topics[1], "connector-all", "{\"properties\":{}}");
	snprintf(text, sizeof(text), "bootstrap.servers=%s\n",
	         rd_kafka_mock_cluster_bootstraps(mock));
	w = worker(text);
	c = conf_of(w, topics, 2, NULL);
	c.fetch_wait_max_ms = 100;
	CHECK_INT(fleetlink_open(&fleetlink_kafka_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	if (l != NULL) {
		run_until(l, &s.nended, 2);
		CHECK_INT(s.nended, 2);
		for (size_t i = 0; i < s.nended; i++)
			CHECK_INT(s.end[i], strcmp(s.ended[i], topics[0]) == 0 ? 0 : 1);
		CHECK_INT(s.nrec, 1);
		CHECK_STR(s.rec[0].topic, topics[1]);
	}
	fleetlink_destroy(l);
	config_section_destroy(w);
}

/* Status records go out, acknowledged, and land in the status topic. */
static void test_status_on_mock(void)
{
	const char *status = "skiff.status.dev-1";
	const char *topics[] = {"skiff.config.dev-3"};
	const char *running =
	    "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"dev-1\",\"generation\":1}";
	struct config_section *w;
	struct fleetlink_conf c;
	struct fleetlink *l = NULL;
	struct seen s = {0};
	char text[512], err[512];

	CHECK_INT(rd_kafka_mock_topic_create(mock, topics[0], 1, 1), 0);
	/* Made here: librdkafka 2.0.2's mock takes no CreateTopics (no
	 * controller), so create_status is for the real broker's test. */
	CHECK_INT(rd_kafka_mock_topic_create(mock, status, 1, 1), 0);
	snprintf(text, sizeof(text), "bootstrap.servers=%s\n",
	         rd_kafka_mock_cluster_bootstraps(mock));
	w = worker(text);
	c = conf_of(w, topics, 1, status);
	c.fetch_wait_max_ms = 100;
	CHECK_INT(fleetlink_open(&fleetlink_kafka_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	if (l == NULL) {
		fprintf(stderr, "open: %s\n", err);
		config_section_destroy(w);
		return;
	}
	CHECK_INT(
	    fleetlink_send(l, "status-connector-app", running, strlen(running), err, sizeof(err)),
	    0);
	CHECK_INT(fleetlink_send(l, "status-task-old-0", NULL, 0, err, sizeof(err)), 0);
	run_until(l, &s.nsent, 2);
	CHECK_INT(s.nsent, 2);
	CHECK_INT(s.sent_rc[0], 0);
	CHECK_INT(s.sent_rc[1], 0);
	CHECK_INT(fleetlink_pending(l), 0);
	CHECK_INT(high_watermark(status), 2);
	fleetlink_destroy(l);
	config_section_destroy(w);
}

/* ---- coalescing, on the fake ---------------------------------------------- */

static void test_coalescing(void)
{
	const char *topics[] = {"c"};
	struct fleetlink_conf c = conf_of(NULL, topics, 1, "s");
	struct fleetlink *l = NULL;
	struct fleetlinkfake *f;
	struct seen s = {0};
	char err[512];

	CHECK_INT(fleetlink_open(&fleetlinkfake_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	f = fleetlinkfake_last();
	CHECK_INT(fleetlink_send(l, "k", "v1", 2, err, sizeof(err)), 0);
	/* While v1 flies: v2 waits, v3 supersedes it, a tombstone supersedes
	 * v3; another key flies at once. */
	CHECK_INT(fleetlink_send(l, "k", "v2", 2, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_send(l, "k", "v3", 2, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_send(l, "other", "x", 1, err, sizeof(err)), 0);
	CHECK_INT(fleetlinkfake_count(f), 2);
	CHECK_INT(fleetlink_pending(l), 3); /* two of k (bounded), one of other */
	CHECK_INT(fleetlink_send(l, "k", NULL, 0, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_pending(l), 3);
	CHECK_STR(fleetlinkfake_sent(f, 0)->value, "v1");
	CHECK_STR(fleetlinkfake_sent(f, 1)->key, "other");

	/* v1 acknowledged: the newest waiting one (the tombstone) goes. */
	fleetlinkfake_deliver(f, 0, 0, NULL);
	fleetlink_poll(l);
	CHECK_INT(s.nsent, 1);
	CHECK_STR(s.sent[0], "k");
	CHECK_INT(fleetlinkfake_count(f), 3);
	CHECK_STR(fleetlinkfake_sent(f, 2)->key, "k");
	CHECK(fleetlinkfake_sent(f, 2)->value == NULL);
	CHECK_INT(fleetlink_pending(l), 2);

	/* A failure is reported; the key is free again after it. */
	fleetlinkfake_deliver(f, 2, FLEETLINK_ERR, "Local: Message timed out");
	fleetlinkfake_deliver(f, 1, 0, NULL);
	fleetlink_poll(l);
	CHECK_INT(s.nsent, 3);
	CHECK_INT(s.sent_rc[1], FLEETLINK_ERR);
	CHECK_STR(s.sent[2], "other");
	CHECK_INT(fleetlink_pending(l), 0);
	CHECK_INT(fleetlinkfake_count(f), 3);

	/* A produce refused when the waiting one is sent: reported as its
	 * fate, nothing left behind. */
	CHECK_INT(fleetlink_send(l, "k", "a", 1, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_send(l, "k", "b", 1, err, sizeof(err)), 0);
	fleetlinkfake_refuse(f, FLEETLINK_ERR_FULL);
	fleetlinkfake_deliver(f, 3, 0, NULL);
	fleetlink_poll(l);
	CHECK_INT(s.nsent, 5);
	CHECK_INT(s.sent_rc[4], FLEETLINK_ERR_FULL);
	CHECK_INT(fleetlink_pending(l), 0);
	fleetlink_destroy(l);

	/* Without a status topic nothing is sent. */
	c.status_topic = NULL;
	CHECK_INT(fleetlink_open(&fleetlinkfake_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_send(l, "k", "v", 1, err, sizeof(err)), FLEETLINK_ERR_NOSTATUS);
	fleetlink_destroy(l);
}

/* The key bound holds: FLEETLINK_MAX_KEYS keys in flight, the next refused. */
/* A late link (the cluster away at open): status records are held, the
 * newest per key, produced none until the start is done, then all at once;
 * pending stays bounded by the keys. */
static void test_held_until_ready(void)
{
	const char *topics[] = {"c"};
	struct fleetlink_conf c = conf_of(NULL, topics, 1, "s");
	struct fleetlink *l = NULL;
	struct fleetlinkfake *f;
	struct seen s = {0};
	char err[512];

	CHECK_INT(fleetlink_open(&fleetlinkfake_late_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	f = fleetlinkfake_last();
	for (int i = 0; i < 100; i++) {
		char v[16];

		snprintf(v, sizeof(v), "v%d", i);
		CHECK_INT(fleetlink_send(l, "k", v, strlen(v), err, sizeof(err)), 0);
	}
	CHECK_INT(fleetlink_send(l, "gone", NULL, 0, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_send(l, "other", "x", 1, err, sizeof(err)), 0);
	CHECK_INT(fleetlinkfake_count(f), 0);
	CHECK_INT(fleetlink_pending(l), 3);
	fleetlinkfake_waiting(f, "fleet: waiting for Kafka (no answer)");
	fleetlink_poll(l);
	CHECK_INT(s.nwaiting, 1);
	CHECK_INT(s.nready, 0);
	CHECK_INT(fleetlinkfake_count(f), 0);
	fleetlinkfake_ready(f);
	fleetlink_poll(l);
	CHECK_INT(s.nready, 1);
	CHECK_INT(fleetlinkfake_count(f), 3);
	CHECK_INT(fleetlink_pending(l), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct fleetlinkfake_sent *x = fleetlinkfake_sent(f, i);

		if (strcmp(x->key, "k") == 0)
			CHECK_STR(x->value, "v99");
		else if (strcmp(x->key, "gone") == 0)
			CHECK(x->value == NULL);
		else
			CHECK_STR(x->value, "x");
	}
	/* Ready: a send flies at once, as on an early link. */
	fleetlinkfake_deliver(f, 0, 0, NULL);
	fleetlinkfake_deliver(f, 1, 0, NULL);
	fleetlinkfake_deliver(f, 2, 0, NULL);
	fleetlink_poll(l);
	CHECK_INT(fleetlink_pending(l), 0);
	CHECK_INT(s.nsent, 3);
	CHECK_INT(fleetlink_send(l, "k", "w", 1, err, sizeof(err)), 0);
	CHECK_INT(fleetlinkfake_count(f), 4);
	fleetlink_destroy(l);
}

static void test_key_bound(void)
{
	const char *topics[] = {"c"};
	struct fleetlink_conf c = conf_of(NULL, topics, 1, "s");
	struct fleetlink *l = NULL;
	struct seen s = {0};
	char err[512], key[32];

	CHECK_INT(fleetlink_open(&fleetlinkfake_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	for (int i = 0; i < FLEETLINK_MAX_KEYS; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		if (fleetlink_send(l, key, "v", 1, err, sizeof(err)) != 0)
			break;
	}
	CHECK_INT(fleetlink_pending(l), FLEETLINK_MAX_KEYS);
	CHECK_INT(fleetlink_send(l, "one-more", "v", 1, err, sizeof(err)), FLEETLINK_ERR_FULL);
	/* A key already in flight still takes a newer record. */
	CHECK_INT(fleetlink_send(l, "k0", "w", 1, err, sizeof(err)), 0);
	CHECK_INT(fleetlink_pending(l), FLEETLINK_MAX_KEYS + 1);
	fleetlink_destroy(l);
}

/* Records, ends and errors pass through the link as the implementation
 * gives them. */
static void test_fake_passes_through(void)
{
	const char *topics[] = {"c"};
	struct fleetlink_conf c = conf_of(NULL, topics, 1, NULL);
	struct fleetlink *l = NULL;
	struct fleetlinkfake *f;
	struct seen s = {0};
	char err[512];
	struct pollfd p;

	CHECK_INT(fleetlink_open(&fleetlinkfake_ops, &c, &cbs, &s, &l, err, sizeof(err)), 0);
	f = fleetlinkfake_last();
	p = (struct pollfd){.fd = fleetlink_fd(l), .events = POLLIN};
	CHECK_INT(poll(&p, 1, 0), 0);
	fleetlinkfake_begin(f, "c", 1);
	fleetlinkfake_record(f, "c", 0, "connector-a", NULL);
	fleetlinkfake_end(f, "c", 1);
	fleetlinkfake_error(f, "c: Broker: Unknown topic or partition");
	CHECK_INT(poll(&p, 1, 0), 1);
	fleetlink_poll(l);
	CHECK_INT(s.nbegun, 1);
	CHECK_INT(s.begin_end[0], 1);
	CHECK_INT(s.nrec, 1);
	CHECK(!s.record_before_begin);
	CHECK(s.rec[0].tombstone);
	CHECK_INT(s.nended, 1);
	CHECK_INT(s.nerror, 1);
	CHECK_INT(poll(&p, 1, 0), 0);
	fleetlink_destroy(l);
}

int main(void)
{
	test_config();
	test_coalescing();
	test_held_until_ready();
	test_key_bound();
	test_fake_passes_through();
	mock_start();
	test_snapshot_then_long_poll();
	test_empty_topic_and_two_topics();
	test_snapshot_ends_without_the_long_poll();
	test_status_on_mock();
	mock_stop();
	return testlib_done("test_fleetlink");
}
