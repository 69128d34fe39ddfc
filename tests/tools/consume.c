/* consume: reads a topic for the end-to-end tests and prints each record as
 * one JSON line.
 *
 *   consume -b BOOTSTRAP -t TOPIC [-n MIN_RECORDS] [-T TIMEOUT_MS]
 *           [-x read_committed|read_uncommitted] [-c PARTITIONS] [-g PARTITIONS] [-D]
 *
 * Without -n: reads every partition from the beginning up to its high
 * watermark as of the start (for read_committed: up to what is committed),
 * then exits 0. A topic that does not exist is empty.
 * With -n: waits for the topic to exist and reads until at least N records
 * were seen, then on to the high watermarks of that moment, so the output is
 * everything the topic held; exits 3 when fewer than N came within -T.
 * With -c N: creates the topic with N partitions and replication factor 1
 * (fine when it exists), waits until every partition has a leader, exits 0.
 * With -g N: grows the existing topic to N partitions, waits until it has
 * them, exits 0 (murmur2 then moves keys: one key in two partitions).
 * With -D: deletes the topic (fine when it is missing), exits 0.
 *
 * Output: {"partition":p,"offset":o,"timestamp":ms,"key":b64|null,
 * "value":b64|null,"headers":[[name,b64|null],...]}. No consumer group, no
 * commits: partitions are assigned. Errors go to stderr with exit 2; a
 * timeout without -n is exit 3 too. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/num.h"

#define EXIT_ERR 2
#define EXIT_TIMEOUT 3
#define MAX_PARTITIONS 10000

struct opts {
	const char *bootstrap;
	const char *topic;
	const char *isolation;
	int64_t min_records; /* -1: no -n */
	int64_t timeout_ms;
	int64_t create_partitions; /* 0: no -c */
	int64_t grow_partitions;   /* 0: no -g */
	bool delete_topic;         /* -D */
};

/* Per assigned partition: how far we got, and whether it reached the end. */
struct part {
	int64_t next;   /* offset after the last record or EOF seen */
	int64_t target; /* high watermark to reach */
	bool eof;       /* EOF seen since the target was set */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	if (left < 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

static void usage(void)
{
	fprintf(stderr, "usage: consume -b BOOTSTRAP -t TOPIC [-n MIN_RECORDS] [-T TIMEOUT_MS]\n"
	                "               [-x read_committed|read_uncommitted] [-c PARTITIONS]\n"
	                "               [-g PARTITIONS] [-D]\n");
	exit(EXIT_ERR);
}

static int64_t num_arg(const char *s, int64_t min, int64_t max, char opt)
{
	int64_t v;

	if (num_parse_i64(s, min, max, &v) != 0) {
		fprintf(stderr,
		        "consume: -%c: want a number in [%" PRId64 ", %" PRId64 "], got \"%s\"\n",
		        opt, min, max, s);
		exit(EXIT_ERR);
	}
	return v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){.isolation = "read_uncommitted", .min_records = -1, .timeout_ms = 30000};
	while ((c = getopt(argc, argv, "b:t:n:T:x:c:g:D")) != -1) {
		switch (c) {
		case 'b':
			o->bootstrap = optarg;
			break;
		case 't':
			o->topic = optarg;
			break;
		case 'n':
			o->min_records = num_arg(optarg, 0, INT64_MAX, 'n');
			break;
		case 'T':
			o->timeout_ms = num_arg(optarg, 0, 86400000, 'T');
			break;
		case 'x':
			o->isolation = optarg;
			break;
		case 'c':
			o->create_partitions = num_arg(optarg, 1, MAX_PARTITIONS, 'c');
			break;
		case 'g':
			o->grow_partitions = num_arg(optarg, 2, MAX_PARTITIONS, 'g');
			break;
		case 'D':
			o->delete_topic = true;
			break;
		default:
			usage();
		}
	}
	if (!o->bootstrap || !o->topic || optind != argc)
		usage();
	if (strcmp(o->isolation, "read_committed") != 0 &&
	    strcmp(o->isolation, "read_uncommitted") != 0)
		usage();
}

/* Standard base64 with padding. Returns a malloc'ed string, or NULL. */
static char *base64(const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1);
	char *w = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		*w++ = tab[p[i] >> 2];
		*w++ = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		*w++ = tab[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		*w++ = tab[p[i + 2] & 63];
	}
	if (i < n) {
		*w++ = tab[p[i] >> 2];
		if (i + 1 < n) {
			*w++ = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
			*w++ = tab[(p[i + 1] & 15) << 2];
		} else {
			*w++ = tab[(p[i] & 3) << 4];
			*w++ = '=';
		}
		*w++ = '=';
	}
	*w = '\0';
	return out;
}

static void oom(void)
{
	fprintf(stderr, "consume: out of memory\n");
	exit(EXIT_ERR);
}

/* A base64 string or null, for bytes that may be absent. */
static cJSON *bytes_json(const void *p, size_t n)
{
	cJSON *j;
	char *s;

	if (!p)
		return cJSON_CreateNull();
	s = base64(p, n);
	if (!s)
		oom();
	j = cJSON_CreateString(s);
	free(s);
	return j;
}

/* int64 as a raw JSON number: cJSON's doubles would round large offsets. */
static cJSON *i64_json(int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return cJSON_CreateRaw(buf);
}

static cJSON *headers_json(const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *hdrs;
	cJSON *arr = cJSON_CreateArray();
	const char *name;
	const void *val;
	size_t size, i;

	if (!arr)
		oom();
	if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return arr;
	for (i = 0;
	     rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
	     i++) {
		cJSON *pair = cJSON_CreateArray();

		if (!pair)
			oom();
		cJSON_AddItemToArray(pair, cJSON_CreateString(name));
		cJSON_AddItemToArray(pair, bytes_json(val, size));
		cJSON_AddItemToArray(arr, pair);
	}
	return arr;
}

static void print_record(const rd_kafka_message_t *m)
{
	cJSON *o = cJSON_CreateObject();
	char *line;

	if (!o)
		oom();
	cJSON_AddItemToObject(o, "partition", i64_json(m->partition));
	cJSON_AddItemToObject(o, "offset", i64_json(m->offset));
	cJSON_AddItemToObject(o, "timestamp", i64_json(rd_kafka_message_timestamp(m, NULL)));
	cJSON_AddItemToObject(o, "key", bytes_json(m->key, m->key_len));
	cJSON_AddItemToObject(o, "value", bytes_json(m->payload, m->len));
	cJSON_AddItemToObject(o, "headers", headers_json(m));
	line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!line)
		oom();
	if (fputs(line, stdout) == EOF || putchar('\n') == EOF) {
		fprintf(stderr, "consume: writing stdout: %s\n", strerror(errno));
		exit(EXIT_ERR);
	}
	cJSON_free(line);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	fprintf(stderr, "consume: kafka: %s: %s\n", rd_kafka_err2name(err), reason);
	if (err == RD_KAFKA_RESP_ERR__FATAL)
		exit(EXIT_ERR);
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
	char errstr[512];

	if (rd_kafka_conf_set(conf, k, v, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "consume: %s=%s: %s\n", k, v, errstr);
		exit(EXIT_ERR);
	}
}

static rd_kafka_t *client(const struct opts *o, rd_kafka_type_t type)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;

	set(conf, "bootstrap.servers", o->bootstrap);
	set(conf, "client.id", "skiff-test-consume");
	if (type == RD_KAFKA_CONSUMER) {
		set(conf, "group.id", "skiff-test-consume");
		set(conf, "enable.auto.commit", "false");
		set(conf, "enable.auto.offset.store", "false");
		set(conf, "enable.partition.eof", "true");
		set(conf, "auto.offset.reset", "earliest");
		set(conf, "allow.auto.create.topics", "false");
		set(conf, "isolation.level", o->isolation);
	}
	rd_kafka_conf_set_error_cb(conf, error_cb);
	rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
	if (!rk) {
		fprintf(stderr, "consume: %s\n", errstr);
		exit(EXIT_ERR);
	}
	return rk;
}

/* Partition count of the topic: >0, 0 when the topic does not exist (or has
 * no partition with a leader yet when want_leaders), or -1 on error, which
 * is printed unless quiet. */
static int partitions(rd_kafka_t *rk, const char *topic, bool want_leaders, bool quiet,
                      int timeout_ms)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_resp_err_t err;
	int i, j, n = 0;

	/* All topics: asking for one by name could auto-create it. */
	err = rd_kafka_metadata(rk, 1, NULL, &md, timeout_ms);
	if (err) {
		if (!quiet)
			fprintf(stderr, "consume: metadata: %s\n", rd_kafka_err2str(err));
		return -1;
	}
	for (i = 0; i < md->topic_cnt; i++) {
		const struct rd_kafka_metadata_topic *t = &md->topics[i];

		if (strcmp(t->topic, topic) != 0 || t->err)
			continue;
		n = t->partition_cnt;
		for (j = 0; want_leaders && j < t->partition_cnt; j++)
			if (t->partitions[j].leader < 0 || t->partitions[j].err)
				n = 0;
	}
	rd_kafka_metadata_destroy(md);
	return n;
}

/* Waits until the topic exists with all leaders; returns its partition
 * count, 0 on timeout. */
static int await_topic(rd_kafka_t *rk, const char *topic, int64_t deadline)
{
	int n;

	for (;;) {
		/* Quiet: the broker may not be up yet, which is what we wait for. */
		n = partitions(rk, topic, true, true,
		               remaining(deadline) > 5000 ? 5000 : remaining(deadline) + 1);
		if (n > 0 || now_ms() >= deadline)
			return n > 0 ? n : 0;
		usleep(200 * 1000);
	}
}

static int create_topic(const struct opts *o)
{
	rd_kafka_t *rk = client(o, RD_KAFKA_PRODUCER);
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	int64_t deadline = now_ms() + o->timeout_ms;
	char errstr[512];
	rd_kafka_NewTopic_t *nt =
	    rd_kafka_NewTopic_new(o->topic, (int)o->create_partitions, 1, errstr, sizeof(errstr));
	rd_kafka_event_t *ev = NULL;
	const rd_kafka_topic_result_t **res;
	size_t cnt;
	int rc = EXIT_ERR;

	if (!nt) {
		fprintf(stderr, "consume: -c: %s\n", errstr);
		goto out;
	}
	rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, remaining(deadline) + 1);
	if (!ev || rd_kafka_event_error(ev)) {
		fprintf(stderr, "consume: create %s: %s\n", o->topic,
		        ev ? rd_kafka_event_error_string(ev) : "timed out");
		goto out;
	}
	res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
	if (cnt != 1 ||
	    (rd_kafka_topic_result_error(res[0]) &&
	     rd_kafka_topic_result_error(res[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)) {
		fprintf(stderr, "consume: create %s: %s\n", o->topic,
		        cnt == 1 ? rd_kafka_topic_result_error_string(res[0]) : "no result");
		goto out;
	}
	/* Producers right after us should find every leader in place. */
	if (await_topic(rk, o->topic, deadline) > 0)
		rc = 0;
	else
		fprintf(stderr, "consume: create %s: partitions have no leader in time\n",
		        o->topic);
out:
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_NewTopic_destroy(nt);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

/* -g: an existing topic grown to grow_partitions partitions (a key's
 * partition by murmur2 then moves: the same key in two partitions). */
static int grow_topic(const struct opts *o)
{
	rd_kafka_t *rk = client(o, RD_KAFKA_PRODUCER);
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	int64_t deadline = now_ms() + o->timeout_ms;
	char errstr[512];
	rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(
	    o->topic, (size_t)o->grow_partitions, errstr, sizeof(errstr));
	rd_kafka_event_t *ev = NULL;
	const rd_kafka_topic_result_t **res;
	size_t cnt = 0;
	int rc = EXIT_ERR;

	if (!np) {
		fprintf(stderr, "consume: -g: %s\n", errstr);
		goto out;
	}
	rd_kafka_CreatePartitions(rk, &np, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, remaining(deadline) + 1);
	if (!ev || rd_kafka_event_error(ev)) {
		fprintf(stderr, "consume: grow %s: %s\n", o->topic,
		        ev ? rd_kafka_event_error_string(ev) : "timed out");
		goto out;
	}
	res = rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev),
	                                              &cnt);
	if (cnt != 1 || rd_kafka_topic_result_error(res[0])) {
		fprintf(stderr, "consume: grow %s: %s\n", o->topic,
		        cnt == 1 ? rd_kafka_topic_result_error_string(res[0]) : "no result");
		goto out;
	}
	while (await_topic(rk, o->topic, deadline) < o->grow_partitions && now_ms() < deadline)
		usleep(200 * 1000);
	if (await_topic(rk, o->topic, deadline) >= o->grow_partitions)
		rc = 0;
	else
		fprintf(stderr, "consume: grow %s: partitions have no leader in time\n", o->topic);
out:
	if (ev)
		rd_kafka_event_destroy(ev);
	if (np)
		rd_kafka_NewPartitions_destroy(np);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

static int delete_topic(const struct opts *o)
{
	rd_kafka_t *rk = client(o, RD_KAFKA_PRODUCER);
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(o->topic);
	rd_kafka_event_t *ev;
	const rd_kafka_topic_result_t **res;
	size_t cnt = 0;
	rd_kafka_resp_err_t err;
	int rc = EXIT_ERR;

	rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, (int)o->timeout_ms + 1);
	res = ev ? rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &cnt)
	         : NULL;
	err = cnt == 1 ? rd_kafka_topic_result_error(res[0])
	      : ev     ? rd_kafka_event_error(ev)
	               : RD_KAFKA_RESP_ERR__TIMED_OUT;
	if (err == 0 || err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
		rc = 0;
	else
		fprintf(stderr, "consume: delete %s: %s\n", o->topic, rd_kafka_err2str(err));
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_DeleteTopic_destroy(dt);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

/* Whether a watermark query failed only for now: a topic just created
 * (auto-created by the producer under test) can be in the metadata before
 * its partition has a leader that answers ("Broker: Not leader for
 * partition"), as can one whose broker is restarting; and this client's
 * own view of the partition can lag the metadata it was counted from
 * ("Local: Unknown partition", seen at a load average of 21). */
static bool transient(rd_kafka_resp_err_t err)
{
	return err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
	       err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
	       err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
	       err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
}

/* Sets every partition's target to its current high watermark, asking
 * again after a transient error until the deadline. Returns 0 or -1. */
static int set_targets(rd_kafka_t *rk, const char *topic, struct part *parts, int n,
                       int64_t deadline)
{
	int64_t lo, hi;
	rd_kafka_resp_err_t err;
	int p;

	for (p = 0; p < n; p++) {
		while ((err = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi,
		                                               remaining(deadline) + 1)) &&
		       transient(err) && now_ms() < deadline)
			usleep(100 * 1000);
		if (err) {
			fprintf(stderr, "consume: watermarks of %s [%d]: %s\n", topic, p,
			        rd_kafka_err2str(err));
			return -1;
		}
		parts[p].target = hi;
		parts[p].eof = false;
		if (parts[p].next < lo)
			parts[p].next = lo;
	}
	return 0;
}

static bool all_done(const struct part *parts, int n)
{
	int p;

	for (p = 0; p < n; p++)
		if (parts[p].next < parts[p].target && !parts[p].eof)
			return false;
	return true;
}

/* Serves one message or event. Returns true when it was a record. */
static bool serve(rd_kafka_message_t *m, struct part *parts, int n)
{
	struct part *pt = m->partition >= 0 && m->partition < n ? &parts[m->partition] : NULL;

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (pt) {
			pt->eof = true;
			if (m->offset > pt->next)
				pt->next = m->offset;
		}
		return false;
	}
	if (m->err) {
		fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
		return false;
	}
	print_record(m);
	if (pt && m->offset + 1 > pt->next)
		pt->next = m->offset + 1;
	return true;
}

static int assign_all(rd_kafka_t *rk, const char *topic, int n)
{
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n);
	rd_kafka_resp_err_t err;
	int p;

	for (p = 0; p < n; p++)
		rd_kafka_topic_partition_list_add(list, topic, p)->offset =
		    RD_KAFKA_OFFSET_BEGINNING;
	err = rd_kafka_assign(rk, list);
	rd_kafka_topic_partition_list_destroy(list);
	if (err) {
		fprintf(stderr, "consume: assign: %s\n", rd_kafka_err2str(err));
		return -1;
	}
	return 0;
}

/* Reads until the targets are reached (want < 0) or want records were seen
 * and then the targets of that moment are reached. */
static int read_loop(rd_kafka_t *rk, const struct opts *o, struct part *parts, int n,
                     int64_t deadline)
{
	int64_t seen = 0, want = o->min_records;
	bool draining = want < 0;

	for (;;) {
		rd_kafka_message_t *m;

		if (!draining && seen >= want) {
			if (set_targets(rk, o->topic, parts, n, deadline) != 0)
				return EXIT_ERR;
			draining = true;
		}
		if (draining && all_done(parts, n))
			return 0;
		if (now_ms() >= deadline) {
			if (want >= 0 && seen >= want)
				return 0;
			fprintf(stderr,
			        "consume: timed out after %" PRId64 " ms with %" PRId64
			        " records\n",
			        o->timeout_ms, seen);
			return EXIT_TIMEOUT;
		}
		m = rd_kafka_consumer_poll(rk,
		                           remaining(deadline) > 200 ? 200 : remaining(deadline));
		if (!m)
			continue;
		if (serve(m, parts, n))
			seen++;
		rd_kafka_message_destroy(m);
	}
}

static int consume(const struct opts *o)
{
	rd_kafka_t *rk = client(o, RD_KAFKA_CONSUMER);
	int64_t deadline = now_ms() + o->timeout_ms;
	struct part *parts = NULL;
	int n, rc = EXIT_ERR;

	if (o->min_records < 0) {
		n = partitions(rk, o->topic, false, false, remaining(deadline) + 1);
		if (n <= 0) {
			rc = n == 0 ? 0 : EXIT_ERR;
			goto out;
		}
	} else if ((n = await_topic(rk, o->topic, deadline)) == 0) {
		fprintf(stderr, "consume: topic %s did not appear in %" PRId64 " ms\n", o->topic,
		        o->timeout_ms);
		rc = EXIT_TIMEOUT;
		goto out;
	}
	parts = calloc((size_t)n, sizeof(*parts));
	if (!parts)
		oom();
	if (o->min_records < 0 && set_targets(rk, o->topic, parts, n, deadline) != 0)
		goto out;
	if (assign_all(rk, o->topic, n) != 0)
		goto out;
	rc = read_loop(rk, o, parts, n, deadline);
out:
	free(parts);
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc;

	parse_args(argc, argv, &o);
	rc = o.delete_topic        ? delete_topic(&o)
	     : o.create_partitions ? create_topic(&o)
	     : o.grow_partitions   ? grow_topic(&o)
	                           : consume(&o);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "consume: writing stdout: %s\n", strerror(errno));
		return EXIT_ERR;
	}
	return rc;
}
