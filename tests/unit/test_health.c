/* The health verdict, the backlog sums and the partitions' series under
 * metrics.partition.limit, each from a faked pipeline (queryfake.c): the
 * control clients see the worker only through core/query.h, so a view is
 * all a test needs. */
#include "control/backlog.h"
#include "control/health.h"
#include "control/pmetrics.h"
#include "core/query.h"
#include "core/stats.h"
#include "offsets/offsets.h"
#include "queryfake.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>

static void verdict(void)
{
	struct queryfake f;
	char msg[512];
	size_t a, p;

	queryfake_init(&f, NULL);
	a = queryfake_conn(&f, "a");
	queryfake_conn(&f, "b");
	p = queryfake_part(&f, a, "[\"a\",{\"file\":\"/x\"}]");
	f.producer.in_flight = 4;
	f.parts[p].waited_ms = 1500;
	f.flush.ack_timeout = 2000;
	CHECK_INT(health_check(&f.q, msg, sizeof(msg)), 0);
	CHECK_STR(msg, "2 connectors; 4 records in flight, the oldest waiting 1500 ms");

	f.parts[p].waited_ms = 2500;
	CHECK_INT(health_check(&f.q, msg, sizeof(msg)), -1);
	CHECK_STR(msg, "a record of [\"a\",{\"file\":\"/x\"}] has waited 2500 ms for Kafka's "
	               "acknowledgement (health.ack.timeout.ms=2000)");

	/* A failed offset write outranks a late record, a failed connector both. */
	f.flush.last = OFFSETS_ERR_IO;
	CHECK_INT(health_check(&f.q, msg, sizeof(msg)), -1);
	CHECK(strncmp(msg, "the last offset write failed: ", 30) == 0);
	f.conns[1].state = QUERY_FAILED;
	f.conns[1].trace = "disk gone";
	CHECK_INT(health_check(&f.q, msg, sizeof(msg)), -1);
	CHECK_STR(msg, "connector b FAILED: disk gone");
	f.conns[1].trace = NULL;
	CHECK_INT(health_check(&f.q, msg, sizeof(msg)), -1);
	CHECK_STR(msg, "connector b FAILED: (no reason kept)");
}

/* How many series named name (with a partition label) stats_next shows, and
 * the partition labels among them into parts (";"-joined). */
static size_t shown(struct stats *st, const char *name, char *parts, size_t len)
{
	struct stats_view v;
	size_t cur = 0, n = 0;

	parts[0] = '\0';
	while (stats_next(st, &cur, &v))
		if (strcmp(v.desc->name, name) == 0 && v.partition != NULL) {
			n++;
			snprintf(parts + strlen(parts), len - strlen(parts), "%s;", v.partition);
		}
	return n;
}

static void series_under_the_cap(void)
{
	static const char *const keys[] = {
	    "[\"a\",{\"f\":0}]", "[\"a\",{\"f\":1}]", "[\"a\",{\"f\":2}]",
	    "[\"a\",{\"f\":3}]", "[\"a\",{\"f\":4}]",
	};
	struct queryfake f;
	struct stats *st = NULL;
	struct pmetrics *pm = NULL;
	char parts[256];
	size_t a;

	CHECK_INT(stats_new(&st), 0);
	queryfake_init(&f, st);
	a = queryfake_conn(&f, "a");
	for (size_t i = 0; i < 5; i++)
		queryfake_part(&f, a, keys[i]);
	f.flush.part_limit = 2;
	/* In flight first, then the latest acknowledgement. */
	f.parts[3].in_flight = 1;
	f.parts[1].last_ack_ms = 500;
	f.parts[4].last_ack_ms = 900;
	CHECK_INT(pmetrics_new(&f.q, &pm), 0);
	pmetrics_refresh(pm, 0);
	CHECK_INT(shown(st, "partition_records_acked", parts, sizeof(parts)), 2);
	CHECK(f.shown[3] != NULL && f.shown[4] != NULL);
	CHECK(f.shown[0] == NULL && f.shown[1] == NULL && f.shown[2] == NULL);

	/* 3 acknowledges last and drains: 4 and 3 stay (3 shown already beats
	 * nothing; 4 outranks 1); then 1 acknowledges latest and takes 4's. */
	f.parts[3].in_flight = 0;
	f.parts[3].last_ack_ms = 1000;
	pmetrics_refresh(pm, 0);
	CHECK(f.shown[3] != NULL && f.shown[4] != NULL);
	f.parts[1].last_ack_ms = 2000;
	pmetrics_refresh(pm, 0);
	CHECK_INT(shown(st, "partition_records_acked", parts, sizeof(parts)), 2);
	CHECK(f.shown[1] != NULL && f.shown[3] != NULL && f.shown[4] == NULL);

	/* Under the limit: all shown. */
	f.flush.part_limit = 10;
	pmetrics_refresh(pm, 0);
	CHECK_INT(shown(st, "partition_records_acked", parts, sizeof(parts)), 5);
	for (size_t i = 0; i < 5; i++)
		pmetrics_unshow(&f.shown[i], true);
	CHECK_INT(shown(st, "partition_records_acked", parts, sizeof(parts)), 0);
	pmetrics_destroy(pm);
	stats_destroy(st);
}

static void backlog_sums(void)
{
	struct queryfake f;
	struct stats *st = NULL;
	struct pmetrics *pm = NULL;
	struct backlog *b = NULL;
	enum source_unit unit;
	uint64_t n;
	char parts[256];
	size_t a, c, p0, p1, p2;

	CHECK_INT(stats_new(&st), 0);
	queryfake_init(&f, st);
	a = queryfake_conn(&f, "a");
	c = queryfake_conn(&f, "c");
	p0 = queryfake_part(&f, a, "[\"a\",{\"f\":0}]");
	p1 = queryfake_part(&f, a, "[\"a\",{\"f\":1}]");
	p2 = queryfake_part(&f, c, "[\"c\",{\"t\":\"x\"}]");
	f.backlog_known[p0] = f.backlog_known[p1] = true;
	f.backlog[p0] = 100;
	f.backlog[p1] = 23;
	CHECK_INT(pmetrics_new(&f.q, &pm), 0);
	CHECK_INT(backlog_new(&f.q, pm, &b), 0);
	pmetrics_refresh(pm, 0);
	backlog_refresh(b, 0);
	CHECK_INT(backlog_of(b, a, &unit, &n), 2);
	CHECK_INT(n, 123);
	CHECK_INT(unit, SOURCE_UNIT_BYTES);
	CHECK_INT(backlog_of(b, c, &unit, &n), 0); /* its source tells none */
	CHECK_INT(backlog_of(b, 7, &unit, &n), 0);
	CHECK_INT(shown(st, "partition_backlog", parts, sizeof(parts)), 2);

	/* A partition no longer told is unknown: its gauge hidden. */
	f.backlog_known[p1] = false;
	f.backlog_known[p2] = true;
	f.backlog_unit[p2] = SOURCE_UNIT_ROWS;
	f.backlog[p2] = 9;
	backlog_refresh(b, 0);
	CHECK_INT(backlog_of(b, a, &unit, &n), 1);
	CHECK_INT(n, 100);
	CHECK_INT(backlog_of(b, c, &unit, &n), 1);
	CHECK_INT(unit, SOURCE_UNIT_ROWS);
	CHECK_INT(n, 9);
	CHECK_INT(shown(st, "partition_backlog", parts, sizeof(parts)), 1);
	CHECK_STR(parts, "{\"f\":0};");
	CHECK_INT(shown(st, "partition_backlog_rows", parts, sizeof(parts)), 1);
	for (size_t i = 0; i < 3; i++)
		pmetrics_unshow(&f.shown[i], true);
	backlog_destroy(b);
	pmetrics_destroy(pm);
	stats_destroy(st);
}

/* The computed gauges: connector states and the producer's figures. */
static void refresh(void)
{
	struct queryfake f;
	struct stats *st = NULL;
	struct health *h = NULL;
	struct stats_view v;
	size_t cur = 0, a, b;
	uint64_t state_a = 9, state_b = 9, sent = 0;

	CHECK_INT(stats_new(&st), 0);
	queryfake_init(&f, st);
	a = queryfake_conn(&f, "a");
	b = queryfake_conn(&f, "b");
	f.conns[b].state = QUERY_STOPPING;
	f.conns[b].stop_paused = true;
	f.producer.sent_before = 1000;
	f.producer.stats.wire_bytes = 24;
	CHECK_INT(health_new(&f.q, &h), 0);
	health_refresh(h);
	while (stats_next(st, &cur, &v)) {
		if (strcmp(v.desc->name, "connector_state") == 0)
			*(strcmp(v.connector, "a") == 0 ? &state_a : &state_b) = v.value;
		if (strcmp(v.desc->name, "producer_sent") == 0)
			sent = v.value;
	}
	CHECK_INT(state_a, 0);
	CHECK_INT(state_b, 1); /* shown as PAUSED until the stop completes */
	CHECK_INT(sent, 1024);
	(void)a;
	health_destroy(h);
	stats_destroy(st);
}

int main(void)
{
	verdict();
	series_under_the_cap();
	backlog_sums();
	refresh();
	return testlib_done("health");
}
