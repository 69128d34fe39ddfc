/* mockcluster: librdkafka's mock cluster (rdkafka_mock.h) as a process the
 * fault tests drive: produce errors and latency that a real broker cannot be
 * made to return on cue.
 *
 *   mockcluster [-b BROKERS] [-t TOPIC -p PARTITIONS]
 *
 * Starts a cluster of BROKERS (default 3) mock brokers on 127.0.0.1, creates
 * TOPIC with PARTITIONS partitions (replication factor BROKERS) when given,
 * prints "bootstrap HOST:PORT,..." and then obeys one command a line on
 * standard input, answering "ok" or "error: why" on standard output:
 *
 *   errors BROKER N ERR... the next N Produce requests to BROKER fail with
 *                          the ERRs in turn (ERR: a name such as
 *                          NOT_LEADER_FOR_PARTITION, or a number); the
 *                          request is not appended
 *   pending BROKER         answers "ok N": errors not yet served
 *   rtt BROKER MS          BROKER answers every request MS later (appended
 *                          at once, answered late: a request timeout that
 *                          the broker did process)
 *   leader TOPIC PART BROKER   moves the partition's leadership
 *   down BROKER | up BROKER    takes a broker off the network and back
 *   quit                   exits (so does the end of standard input)
 *
 * Exit status 0, or 2 on a usage error or when the cluster cannot start. */
#include "util/num.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_ERRORS 64
#define MAX_WORDS (MAX_ERRORS + 4)

static void usage(void)
{
	fprintf(stderr, "usage: mockcluster [-b BROKERS] [-t TOPIC -p PARTITIONS]\n");
	exit(2);
}

/* An error code from its name (as rd_kafka_err2name spells it) or number. */
static int parse_err(const char *s, rd_kafka_resp_err_t *out)
{
	const struct rd_kafka_err_desc *descs;
	size_t n;
	int64_t v;

	if (num_parse_i64(s, -200, 1000, &v) == 0) {
		*out = (rd_kafka_resp_err_t)v;
		return 0;
	}
	rd_kafka_get_err_descs(&descs, &n);
	for (size_t i = 0; i < n; i++) {
		if (descs[i].name != NULL && strcmp(descs[i].name, s) == 0) {
			*out = descs[i].code;
			return 0;
		}
	}
	return -1;
}

static int32_t int_word(const char *s, int64_t min, int64_t max, int *bad)
{
	int64_t v = 0;

	if (num_parse_i64(s, min, max, &v) != 0)
		*bad = 1;
	return (int32_t)v;
}

/* Runs one command of n words; returns NULL or what is wrong. */
static const char *run(rd_kafka_mock_cluster_t *mc, char **w, int n)
{
	rd_kafka_resp_err_t errs[MAX_ERRORS], err = RD_KAFKA_RESP_ERR_NO_ERROR;
	int bad = 0;

	if (strcmp(w[0], "errors") == 0 && n >= 4) {
		int32_t b = int_word(w[1], 1, 1000, &bad),
		        cnt = int_word(w[2], 1, MAX_ERRORS, &bad);

		if (bad)
			return "errors BROKER N ERR...";
		for (int32_t i = 0; i < cnt; i++)
			if (parse_err(w[3 + i % (n - 3)], &errs[i]) != 0)
				return "unknown error name";
		for (int32_t i = 0; i < cnt && !err; i++)
			err = rd_kafka_mock_broker_push_request_error_rtts(mc, b, 0 /* Produce */,
			                                                   1, errs[i], 0);
	} else if (strcmp(w[0], "pending") == 0 && n == 2) {
		int32_t b = int_word(w[1], 1, 1000, &bad);
		size_t cnt = 0;

		if (bad)
			return "pending BROKER";
		err = rd_kafka_mock_broker_error_stack_cnt(mc, b, 0 /* Produce */, &cnt);
		if (!err) {
			printf("ok %zu\n", cnt);
			return "";
		}
	} else if (strcmp(w[0], "rtt") == 0 && n == 3) {
		int32_t b = int_word(w[1], 1, 1000, &bad), ms = int_word(w[2], 0, 600000, &bad);

		if (bad)
			return "rtt BROKER MS";
		err = rd_kafka_mock_broker_set_rtt(mc, b, ms);
	} else if (strcmp(w[0], "leader") == 0 && n == 4) {
		int32_t p = int_word(w[2], 0, 100000, &bad), b = int_word(w[3], -1, 1000, &bad);

		if (bad)
			return "leader TOPIC PARTITION BROKER";
		err = rd_kafka_mock_partition_set_leader(mc, w[1], p, b);
	} else if ((strcmp(w[0], "down") == 0 || strcmp(w[0], "up") == 0) && n == 2) {
		int32_t b = int_word(w[1], 1, 1000, &bad);

		if (bad)
			return "down|up BROKER";
		err = w[0][0] == 'd' ? rd_kafka_mock_broker_set_down(mc, b)
		                     : rd_kafka_mock_broker_set_up(mc, b);
	} else {
		return "unknown command";
	}
	return err ? rd_kafka_err2str(err) : NULL;
}

/* Splits line in place into at most max words. */
static int split(char *line, char **w, int max)
{
	int n = 0;

	for (char *p = line; *p != '\0' && n < max;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			*p++ = '\0';
		if (*p == '\0')
			break;
		w[n++] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *topic = NULL;
	int64_t brokers = 3, partitions = 1;
	char errstr[512], *line = NULL, *w[MAX_WORDS];
	size_t cap = 0;
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;
	rd_kafka_mock_cluster_t *mc;
	int c;

	while ((c = getopt(argc, argv, "b:t:p:")) != -1) {
		if (c == 'b' && num_parse_i64(optarg, 1, 16, &brokers) == 0)
			continue;
		if (c == 't') {
			topic = optarg;
			continue;
		}
		if (c == 'p' && num_parse_i64(optarg, 1, 1000, &partitions) == 0)
			continue;
		usage();
	}
	if (optind != argc)
		usage();
	rd_kafka_conf_set(conf, "log_level", "3", NULL, 0);
	/* The cluster lives in this handle's threads; it never connects anywhere. */
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (rk == NULL) {
		fprintf(stderr, "mockcluster: %s\n", errstr);
		return 2;
	}
	mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
	if (mc == NULL) {
		fprintf(stderr, "mockcluster: cannot create the mock cluster\n");
		rd_kafka_destroy(rk);
		return 2;
	}
	if (topic != NULL &&
	    rd_kafka_mock_topic_create(mc, topic, (int)partitions, (int)brokers) != 0) {
		fprintf(stderr, "mockcluster: cannot create topic %s\n", topic);
		return 2;
	}
	printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(mc));
	fflush(stdout);
	while (getline(&line, &cap, stdin) > 0) {
		int n = split(line, w, MAX_WORDS);
		const char *why;

		if (n == 0)
			continue;
		if (strcmp(w[0], "quit") == 0)
			break;
		why = run(mc, w, n);
		if (why == NULL)
			printf("ok\n");
		else if (*why != '\0') /* "": run answered itself */
			printf("error: %s\n", why);
		fflush(stdout);
	}
	free(line);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	return 0;
}
