/* fleetfill: fills offsets topics with the records of a simulated fleet of
 * skiff devices, for the fleet tests and tests/bench/bench_fleet.py; or,
 * with -S, the devices' status topics, for tests/bench/bench_fleet_status.py.
 *
 *   fleetfill -b BOOTSTRAP -t TOPIC -d DEVICES -f FILES [-p PARTITIONS]
 *             [-P] [-o FIRST_DEVICE]
 *   fleetfill -b BOOTSTRAP -t PREFIX -d DEVICES -S [-o FIRST_DEVICE]
 *
 * Device i (FIRST_DEVICE <= i < FIRST_DEVICE + DEVICES) runs connector
 * "app-dev<i>" on FILES files /var/log/app/<j>.log, and its offsets are what
 * skiff writes for them: key ["app-dev<i>",{"filename":"/var/log/app/<j>.log"}],
 * value {"position":N} partitioned with Java's murmur2 of the key, headers
 * skiff.generation, skiff.device "dev<i>", skiff.store and skiff.offset (the
 * whole value with the file's identity), as offsets_kafka.c writes them.
 *
 * Without -P: one shared TOPIC, created compacted with PARTITIONS (25)
 * partitions when missing. With -P: a topic per device, TOPIC-dev<i>, one
 * partition each, compacted, created in batches (an existing one is fine).
 * With -S: device i is "dev-<i>" (i in 5 digits or more), its status topic
 * PREFIX<device> (skiff.status.: status.storage.topic's default), one
 * partition, compacted, created in batches (an existing one is fine). Each
 * gets what a device running connectors "app" and "db" writes there, with
 * the device's own encoders: status-connector-NAME and status-task-NAME-0
 * (RUNNING) for both, skiff-outcome-app (APPLIED, of offset 0 of
 * skiff.config.<device>) and a heartbeat (ok, now, 300 s interval,
 * group "all") last: 6 records.
 *
 * Prints "<records> records <bytes> bytes" (key, value and headers) and exits
 * 0; errors go to stderr with exit 2. Progress goes to stderr, a line for
 * each PROGRESS records acknowledged and for each batch of topics created,
 * so that a caller can tell a slow fill (a loaded machine) from one stuck. */
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "util/buf.h"
#include "util/num.h"

#define EXIT_ERR 2
#define TIMEOUT_MS 900000
#define BATCH 500 /* topics per CreateTopics request, devices per flush */
#define PROGRESS 2000

/* What the delivery reports counted. */
struct acks {
	int64_t acked, failed, total;
};

struct opts {
	const char *bootstrap, *topic;
	int64_t devices, files, partitions, first;
	bool per_device, status;
};

static int usage(void)
{
	fprintf(stderr,
	        "usage: fleetfill -b BOOTSTRAP -t TOPIC -d DEVICES -f FILES "
	        "[-p PARTITIONS] [-P] [-o FIRST_DEVICE]\n"
	        "       fleetfill -b BOOTSTRAP -t PREFIX -d DEVICES -S [-o FIRST_DEVICE]\n");
	return EXIT_ERR;
}

static bool num(const char *s, int64_t min, int64_t *out)
{
	return num_parse_i64(s, min, INT64_MAX, out) == 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){.partitions = 25};
	while ((c = getopt(argc, argv, "b:t:d:f:p:PSo:")) != -1) {
		if ((c == 'd' && !num(optarg, 1, &o->devices)) ||
		    (c == 'f' && !num(optarg, 1, &o->files)) ||
		    (c == 'p' && !num(optarg, 1, &o->partitions)) ||
		    (c == 'o' && !num(optarg, 0, &o->first)) || c == '?')
			return usage();
		if (c == 'b')
			o->bootstrap = optarg;
		else if (c == 't')
			o->topic = optarg;
		else if (c == 'P')
			o->per_device = true;
		else if (c == 'S')
			o->status = o->per_device = true;
	}
	return o->bootstrap && o->topic && o->devices > 0 && (o->files > 0 || o->status) ? 0
	                                                                                 : usage();
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct acks *a = opaque;

	(void)rk;
	if (m->err != 0 && a->failed++ == 0)
		fprintf(stderr, "fleetfill: %s\n", rd_kafka_err2str(m->err));
	if (m->err == 0 && ++a->acked % PROGRESS == 0)
		fprintf(stderr, "fleetfill: %" PRId64 " of %" PRId64 " records acknowledged\n",
		        a->acked, a->total);
}

static rd_kafka_t *producer(const struct opts *o, struct acks *acks)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;

	if (rd_kafka_conf_set(conf, "bootstrap.servers", o->bootstrap, errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "partitioner", "murmur2_random", errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "linger.ms", "50", errstr, sizeof(errstr)) ||
	    /* Batches as small as devices write them (a few keys a flush), at
	     * most Java's default: a reader meets the topic as it is. */
	    rd_kafka_conf_set(conf, "batch.size", "16384", errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "allow.auto.create.topics", "false", errstr, sizeof(errstr)) ||
	    /* Thousands of topics just created take the broker minutes. */
	    rd_kafka_conf_set(conf, "topic.metadata.propagation.max.ms", "600000", errstr,
	                      sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "message.timeout.ms", "900000", errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr))) {
		fprintf(stderr, "fleetfill: %s\n", errstr);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_conf_set_opaque(conf, acks);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (rk == NULL) {
		fprintf(stderr, "fleetfill: %s\n", errstr);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

/* Creates names[0..n) compacted with partitions each; existing ones pass. */
static int create(rd_kafka_t *rk, char **names, size_t n, int partitions)
{
	rd_kafka_NewTopic_t *nt[BATCH];
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_event_t *ev = NULL;
	const rd_kafka_topic_result_t **res;
	char errstr[512];
	size_t cnt = 0;
	int rc = EXIT_ERR;

	for (size_t i = 0; i < n; i++) {
		nt[i] = rd_kafka_NewTopic_new(names[i], partitions, 1, errstr, sizeof(errstr));
		(void)rd_kafka_NewTopic_set_config(nt[i], "cleanup.policy", "compact");
	}
	rd_kafka_CreateTopics(rk, nt, n, NULL, q);
	ev = rd_kafka_queue_poll(q, TIMEOUT_MS);
	if (ev == NULL || rd_kafka_event_error(ev)) {
		fprintf(stderr, "fleetfill: create: %s\n",
		        ev ? rd_kafka_event_error_string(ev) : "timed out");
		goto out;
	}
	res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
	for (size_t i = 0; i < cnt; i++) {
		rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[i]);

		if (err != 0 && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
			fprintf(stderr, "fleetfill: create %s: %s\n",
			        rd_kafka_topic_result_name(res[i]),
			        rd_kafka_topic_result_error_string(res[i]));
			goto out;
		}
	}
	rc = 0;
out:
	if (ev != NULL)
		rd_kafka_event_destroy(ev);
	for (size_t i = 0; i < n; i++)
		rd_kafka_NewTopic_destroy(nt[i]);
	rd_kafka_queue_destroy(q);
	return rc;
}

/* Creates the topics devices [from, to) write to: the shared one, or one
 * each. */
static int create_some(rd_kafka_t *rk, const struct opts *o, int64_t from, int64_t to)
{
	char *names[BATCH];
	size_t n = 0;
	int rc = 0;

	if (!o->per_device) {
		names[0] = (char *)o->topic;
		return create(rk, names, 1, (int)o->partitions);
	}
	for (int64_t i = from; i < to && n < BATCH; i++) {
		size_t len = strlen(o->topic) + 32;

		names[n] = malloc(len);
		if (names[n] == NULL) {
			rc = EXIT_ERR;
			goto out;
		}
		snprintf(names[n++], len, o->status ? "%sdev-%05" PRId64 : "%s-dev%" PRId64,
		         o->topic, i);
	}
	rc = create(rk, names, n, 1);
out:
	while (n > 0)
		free(names[--n]);
	if (rc == 0)
		fprintf(stderr, "fleetfill: topics of devices %" PRId64 "-%" PRId64 " created\n",
		        from, to - 1);
	return rc;
}

/* Produces device i's offsets; adds their bytes to *bytes. */
static int device(rd_kafka_t *rk, const struct opts *o, int64_t i, uint64_t *bytes)
{
	char topic[512], key[128], value[64], full[256], dev[32], store[40];

	snprintf(topic, sizeof(topic), o->per_device ? "%s-dev%" PRId64 : "%s", o->topic, i);
	snprintf(dev, sizeof(dev), "dev%" PRId64, i);
	snprintf(store, sizeof(store), "%032" PRIx64, (uint64_t)i * 2654435761u + 1);
	for (int64_t j = 0; j < o->files; j++) {
		int64_t pos = 32 * (1000 + j);
		int klen = snprintf(key, sizeof(key),
		                    "[\"app-dev%" PRId64 "\",{\"filename\":\"/var/log/app/%" PRId64
		                    ".log\"}]",
		                    i, j);
		int vlen = snprintf(value, sizeof(value), "{\"position\":%" PRId64 "}", pos);
		int flen =
		    snprintf(full, sizeof(full),
		             "{\"position\":%" PRId64 ",\"dev\":65024,\"ino\":%" PRId64
		             ",\"fp\":%" PRId64 ",\"fplen\":1024,\"born\":1796437074053405521}",
		             pos, 1000000 + i * 100 + j, (int64_t)(i * 7919 + j) * 104729);
		rd_kafka_headers_t *h = rd_kafka_headers_new(4);
		rd_kafka_resp_err_t err;

		rd_kafka_header_add(h, "skiff.generation", -1, "42", 2);
		rd_kafka_header_add(h, "skiff.device", -1, dev, -1);
		rd_kafka_header_add(h, "skiff.store", -1, store, -1);
		rd_kafka_header_add(h, "skiff.offset", -1, full, flen);
		*bytes += (uint64_t)klen + (uint64_t)vlen + (uint64_t)flen + strlen(dev) +
		          strlen(store) + 2 + 16 + 12 + 11 + 12;
		do {
			err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
			                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			                        RD_KAFKA_V_KEY(key, (size_t)klen),
			                        RD_KAFKA_V_VALUE(value, (size_t)vlen),
			                        RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
			if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
				rd_kafka_poll(rk, 100);
		} while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
		if (err != 0) {
			rd_kafka_headers_destroy(h);
			fprintf(stderr, "fleetfill: %s: %s\n", topic, rd_kafka_err2str(err));
			return EXIT_ERR;
		}
	}
	rd_kafka_poll(rk, 0);
	return 0;
}

/* Produces one record of a status topic; adds its bytes to *bytes. */
static int status_record(rd_kafka_t *rk, const char *topic, const char *key, const struct buf *v,
                         uint64_t *bytes)
{
	rd_kafka_resp_err_t err;

	if (buf_err(v) != 0) {
		fprintf(stderr, "fleetfill: %s: %s: encoding failed\n", topic, key);
		return EXIT_ERR;
	}
	*bytes += strlen(key) + buf_len(v);
	do {
		err = rd_kafka_producev(
		    rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
		    RD_KAFKA_V_KEY(key, strlen(key)),
		    RD_KAFKA_V_VALUE((void *)(uintptr_t)buf_ptr(v), buf_len(v)), RD_KAFKA_V_END);
		if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 100);
	} while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
	if (err != 0) {
		fprintf(stderr, "fleetfill: %s: %s\n", topic, rd_kafka_err2str(err));
		return EXIT_ERR;
	}
	return 0;
}

/* Produces device i's status topic's records (see the top); adds their
 * bytes to *bytes. */
static int status_device(rd_kafka_t *rk, const struct opts *o, int64_t i, uint64_t *bytes)
{
	static const char *const conns[] = {"app", "db"}, *const groups[] = {"all"};
	char topic[512], dev[32], cfg[64], key[64];
	struct timespec now;
	struct buf v;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(dev, sizeof(dev), "dev-%05" PRId64, i);
	snprintf(topic, sizeof(topic), "%s%s", o->topic, dev);
	snprintf(cfg, sizeof(cfg), "skiff.config.%s", dev);
	buf_init(&v, 1 << 16);
	for (size_t c = 0; c < 2 && rc == 0; c++) {
		struct connect_status s = {
		    .state = CONNECT_STATE_RUNNING, .worker_id = dev, .generation = 1};

		buf_reset(&v);
		connect_status_encode(&s, &v);
		snprintf(key, sizeof(key), "status-connector-%s", conns[c]);
		rc = status_record(rk, topic, key, &v, bytes);
		snprintf(key, sizeof(key), "status-task-%s-0", conns[c]);
		rc = rc != 0 ? rc : status_record(rk, topic, key, &v, bytes);
	}
	if (rc == 0) {
		struct fleet_outcome oc = {.topic = cfg,
		                           .record = CONNECT_CONNECTOR,
		                           .outcome = FLEET_OUTCOME_APPLIED,
		                           .worker_id = dev,
		                           .generation = 1,
		                           .at_ms = (int64_t)now.tv_sec * 1000};

		buf_reset(&v);
		fleet_outcome_encode(&oc, &v);
		rc = status_record(rk, topic, FLEET_OUTCOME_PREFIX "app", &v, bytes);
	}
	if (rc == 0) {
		struct fleet_heartbeat hb = {.device = dev,
		                             .version = "0.28.0-bench",
		                             .at_ms = (int64_t)now.tv_sec * 1000,
		                             .seq = 1,
		                             .interval_ms = 300000,
		                             .health = "ok",
		                             .last_ack_ms = (int64_t)now.tv_sec * 1000,
		                             .backlog_bytes = 1536,
		                             .rss_kb = 8428,
		                             .connectors = conns,
		                             .nconnectors = 2,
		                             .groups = groups,
		                             .ngroups = 1};

		buf_reset(&v);
		fleet_heartbeat_encode(&hb, &v);
		rc = status_record(rk, topic, FLEET_HEARTBEAT_KEY, &v, bytes);
	}
	buf_free(&v);
	rd_kafka_poll(rk, 0);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct acks acks = {0};
	int rc = 0;
	uint64_t bytes = 0;
	rd_kafka_t *rk;

	if (parse(argc, argv, &o) != 0)
		return EXIT_ERR;
	acks.total = o.devices * (o.status ? 6 : o.files);
	rk = producer(&o, &acks);
	if (rk == NULL)
		return EXIT_ERR;
	/* A batch of devices at a time: their topics created, their records
	 * produced and acknowledged, so that thousands of new topics never
	 * wait in the producer at once. */
	for (int64_t from = o.first; from < o.first + o.devices && rc == 0; from += BATCH) {
		int64_t to =
		    from + BATCH < o.first + o.devices ? from + BATCH : o.first + o.devices;

		rc = from == o.first || o.per_device ? create_some(rk, &o, from, to) : 0;
		for (int64_t i = from; i < to && rc == 0; i++)
			rc =
			    o.status ? status_device(rk, &o, i, &bytes) : device(rk, &o, i, &bytes);
		if (rc == 0 && rd_kafka_flush(rk, TIMEOUT_MS) != 0) {
			fprintf(stderr, "fleetfill: not every record acknowledged in time\n");
			rc = EXIT_ERR;
		}
	}
	rd_kafka_destroy(rk);
	if (rc == 0 && acks.failed > 0)
		rc = EXIT_ERR;
	if (rc == 0)
		printf("%" PRId64 " records %" PRIu64 " bytes\n", acks.total, bytes);
	return rc;
}
