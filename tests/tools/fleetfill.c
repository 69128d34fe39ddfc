/* fleetfill: fills offsets topics with the records of a simulated fleet of
 * skiff devices, for the fleet tests and tests/bench/bench_fleet.py.
 *
 *   fleetfill -b BOOTSTRAP -t TOPIC -d DEVICES -f FILES [-p PARTITIONS]
 *             [-P] [-o FIRST_DEVICE]
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
#include <unistd.h>

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
	bool per_device;
};

static int usage(void)
{
	fprintf(stderr, "usage: fleetfill -b BOOTSTRAP -t TOPIC -d DEVICES -f FILES "
	                "[-p PARTITIONS] [-P] [-o FIRST_DEVICE]\n");
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
	while ((c = getopt(argc, argv, "b:t:d:f:p:Po:")) != -1) {
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
	}
	return o->bootstrap && o->topic && o->devices > 0 && o->files > 0 ? 0 : usage();
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
	int rc;

	if (!o->per_device) {
		names[0] = (char *)o->topic;
		return create(rk, names, 1, (int)o->partitions);
	}
	for (int64_t i = from; i < to && n < BATCH; i++) {
		size_t len = strlen(o->topic) + 32;

		names[n] = malloc(len);
		snprintf(names[n++], len, "%s-dev%" PRId64, o->topic, i);
	}
	rc = create(rk, names, n, 1);
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

int main(int argc, char **argv)
{
	struct opts o;
	struct acks acks = {0};
	int rc = 0;
	uint64_t bytes = 0;
	rd_kafka_t *rk;

	if (parse(argc, argv, &o) != 0)
		return EXIT_ERR;
	acks.total = o.devices * o.files;
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
			rc = device(rk, &o, i, &bytes);
		if (rc == 0 && rd_kafka_flush(rk, TIMEOUT_MS) != 0) {
			fprintf(stderr, "fleetfill: not every record acknowledged in time\n");
			rc = EXIT_ERR;
		}
	}
	rd_kafka_destroy(rk);
	if (rc == 0 && acks.failed > 0)
		rc = EXIT_ERR;
	if (rc == 0)
		printf("%" PRId64 " records %" PRIu64 " bytes\n", o.devices * o.files, bytes);
	return rc;
}
