/* fleetdev: prints the value of a record a device writes on its status
 * topic, encoded by the device's own encoders (fleet_heartbeat,
 * connect_records), for the end-to-end tests of `skiff fleet` while no
 * device loop writes them (the test produces the value with kcat).
 *
 *   fleetdev heartbeat DEVICE AT_MS INTERVAL_MS HEALTH CONNS GROUPS
 *            (CONNS, GROUPS: comma-separated, "-" for none)
 *   fleetdev outcome DEVICE TOPIC OFFSET APPLIED|REFUSED [REASON]
 *   fleetdev status DEVICE STATE           (RUNNING, PAUSED, FAILED, ...)
 *   fleetdev describe BOOTSTRAP TOPIC      the topic's partitions, then its
 *                                          configs as the broker says, k=v lines
 *   fleetdev delete-records BOOTSTRAP TOPIC OFFSET
 *                                          partition 0's records before OFFSET
 *                                          deleted (its log start moved there)
 *
 * Exit 0, or 2 with a line on stderr. */
#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "util/buf.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a comma list in place ("-": none). */
static size_t split(char *s, const char **items, size_t max)
{
	size_t n = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	for (char *p = s; p != NULL && n < max;) {
		char *c = strchr(p, ',');

		if (c != NULL)
			*c++ = '\0';
		items[n++] = p;
		p = c;
	}
	return n;
}

static int describe(const char *bootstrap, const char *topic)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	const rd_kafka_metadata_t *md = NULL;
	rd_kafka_ConfigResource_t *res =
	    rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
	rd_kafka_queue_t *q;
	rd_kafka_event_t *ev;
	rd_kafka_t *rk;
	char err[512];
	int rc = 2;

	if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof(err)) != 0 ||
	    (rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err))) == NULL) {
		fprintf(stderr, "fleetdev: %s\n", err);
		return 2;
	}
	q = rd_kafka_queue_new(rk);
	rd_kafka_t *h = rk;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(h, topic, NULL);

	if (rd_kafka_metadata(h, 0, rkt, &md, 20000) == 0 && md->topic_cnt == 1 &&
	    md->topics[0].err == 0)
		printf("partitions=%d\n", md->topics[0].partition_cnt);
	if (md != NULL)
		rd_kafka_metadata_destroy(md);
	rd_kafka_topic_destroy(rkt);
	rd_kafka_DescribeConfigs(rk, &res, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, 30000);
	if (ev != NULL && rd_kafka_event_error(ev) == 0) {
		size_t n = 0, nc = 0;
		const rd_kafka_ConfigResource_t **r = rd_kafka_DescribeConfigs_result_resources(
		    rd_kafka_event_DescribeConfigs_result(ev), &n);
		const rd_kafka_ConfigEntry_t **e =
		    n == 1 ? rd_kafka_ConfigResource_configs(r[0], &nc) : NULL;

		for (size_t i = 0; i < nc; i++)
			printf("%s=%s\n", rd_kafka_ConfigEntry_name(e[i]),
			       rd_kafka_ConfigEntry_value(e[i]) ? rd_kafka_ConfigEntry_value(e[i])
			                                        : "");
		rc = 0;
	} else {
		fprintf(stderr, "fleetdev: describe %s: %s\n", topic,
		        ev != NULL ? rd_kafka_event_error_string(ev) : "no answer");
	}
	if (ev != NULL)
		rd_kafka_event_destroy(ev);
	rd_kafka_ConfigResource_destroy(res);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

static int delete_records(const char *bootstrap, const char *topic, const char *offset)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
	rd_kafka_DeleteRecords_t *del;
	rd_kafka_queue_t *q;
	rd_kafka_event_t *ev;
	rd_kafka_t *rk;
	char err[512];
	int rc = 2;

	rd_kafka_topic_partition_list_add(tp, topic, 0)->offset = strtoll(offset, NULL, 10);
	if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof(err)) != 0 ||
	    (rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err))) == NULL) {
		fprintf(stderr, "fleetdev: %s\n", err);
		rd_kafka_topic_partition_list_destroy(tp);
		return 2;
	}
	q = rd_kafka_queue_new(rk);
	del = rd_kafka_DeleteRecords_new(tp);
	rd_kafka_DeleteRecords(rk, &del, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, 30000);
	if (ev != NULL && rd_kafka_event_error(ev) == 0) {
		const rd_kafka_topic_partition_list_t *res =
		    rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));

		if (res != NULL && res->cnt == 1 && res->elems[0].err == 0)
			rc = 0;
		else
			fprintf(stderr, "fleetdev: delete-records %s: %s\n", topic,
			        res != NULL && res->cnt == 1 ? rd_kafka_err2str(res->elems[0].err)
			                                     : "no result");
	} else {
		fprintf(stderr, "fleetdev: delete-records %s: %s\n", topic,
		        ev != NULL ? rd_kafka_event_error_string(ev) : "no answer");
	}
	if (ev != NULL)
		rd_kafka_event_destroy(ev);
	rd_kafka_DeleteRecords_destroy(del);
	rd_kafka_topic_partition_list_destroy(tp);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return rc;
}

int main(int argc, char **argv)
{
	struct buf b;
	int rc = -1;

	if (argc == 4 && strcmp(argv[1], "describe") == 0)
		return describe(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "delete-records") == 0)
		return delete_records(argv[2], argv[3], argv[4]);
	buf_init(&b, 1 << 16);
	if (argc == 8 && strcmp(argv[1], "heartbeat") == 0) {
		const char *conns[64], *groups[64];
		struct fleet_heartbeat hb = {.device = argv[2],
		                             .version = "0.28.0-test",
		                             .at_ms = strtoll(argv[3], NULL, 10),
		                             .seq = 1,
		                             .interval_ms = strtoll(argv[4], NULL, 10),
		                             .health = argv[5],
		                             .last_ack_ms = strtoll(argv[3], NULL, 10),
		                             .lost_records = 0,
		                             .backlog_bytes = 1536,
		                             .rss_kb = 8428};

		hb.nconnectors = split(argv[6], conns, 64);
		hb.connectors = conns;
		hb.ngroups = split(argv[7], groups, 64);
		hb.groups = groups;
		rc = fleet_heartbeat_encode(&hb, &b);
	} else if ((argc == 6 || argc == 7) && strcmp(argv[1], "outcome") == 0) {
		struct fleet_outcome o = {.topic = argv[3],
		                          .offset = strtoll(argv[4], NULL, 10),
		                          .record = CONNECT_CONNECTOR,
		                          .outcome = strcmp(argv[5], "APPLIED") == 0
		                                         ? FLEET_OUTCOME_APPLIED
		                                         : FLEET_OUTCOME_REFUSED,
		                          .reason = argc == 7 ? argv[6] : NULL,
		                          .worker_id = argv[2],
		                          .generation = 1,
		                          .at_ms = 0};

		rc = fleet_outcome_encode(&o, &b);
	} else if (argc == 4 && strcmp(argv[1], "status") == 0) {
		struct connect_status s = {.worker_id = argv[2], .generation = 1};
		int i;

		for (i = CONNECT_STATE_UNASSIGNED; i < CONNECT_STATE_DESTROYED; i++)
			if (strcmp(connect_state_name((enum connect_state)i), argv[3]) == 0)
				break;
		s.state = (enum connect_state)i;
		rc = connect_status_encode(&s, &b);
	}
	if (rc != 0) {
		fprintf(stderr,
		        "usage: fleetdev heartbeat DEVICE AT_MS INTERVAL_MS HEALTH CONNS "
		        "GROUPS | outcome DEVICE TOPIC OFFSET APPLIED|REFUSED [REASON] | "
		        "status DEVICE STATE (%d)\n",
		        rc);
		buf_free(&b);
		return 2;
	}
	fwrite(buf_ptr(&b), 1, buf_len(&b), stdout);
	buf_free(&b);
	return 0;
}
