/* core/connectors.c, a connector's lifecycle, from a scripted source
 * through the worker to a fake producer and the offset store (workerrig.c):
 * a stop waits for the records in flight, stores their acknowledged prefix
 * and closes the source once; a restart opens it once more and keeps its
 * counters registered; a reload's removal (CLOSE_ABANDON) closes it without
 * storing anything; a failed connector decides the exit code once none
 * runs. */
#include "config/settings.h"
#include "core/connectors.h"
#include "core/pipeline.h"
#include "core/query.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "sinkfake.h"
#include "testlib.h"
#include "workerrig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rig_up(struct workerrig *r, int records)
{
	workerrig_up(r, &(struct workerrig_conf){.records = records});
	CHECK_INT(connectors_count(r->wk->conns), 1);
}

/* The connector's series as /metrics lists them ("name{connector}" each,
 * in registration order) into buf; returns how many. */
static int series_of(const struct workerrig *r, char *buf, size_t len)
{
	struct stats_view v;
	size_t cur = 0, at = 0;
	int n = 0;

	buf[0] = '\0';
	while (stats_next(r->st, &cur, &v)) {
		if (v.connector == NULL || strcmp(v.connector, "p") != 0 || v.partition != NULL)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s;", v.desc->name);
		CHECK(at < len);
		n++;
	}
	return n;
}

static void test_stop_waits_for_records_in_flight(void)
{
	struct workerrig r;
	char errbuf[512];

	rig_up(&r, 5);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 5);
	CHECK_INT(connector_stop(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(r.c->run, CONN_STOPPING);
	/* Records 1, 2, 4 and 5 acknowledged: it waits for 3. */
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 3, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 4, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(r.c->run, CONN_STOPPING);
	CHECK_INT(r.sc.closes, 0);
	CHECK(r.c->ctx != NULL);
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK_INT(r.c->run, CONN_STOPPED);
	CHECK(r.c->ctx == NULL);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":5}");
	CHECK_INT(r.sc.closes, 1);
	/* Stopped again: nothing more happens. */
	CHECK_INT(connector_stop(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(r.sc.closes, 1);
	CHECK_INT(r.sc.opens, 1);
	CHECK_INT(sinkfake_count(r.fake), 5);
	workerrig_down(&r);
	CHECK_INT(r.sc.closes, 1);
}

static void test_restart_reopens_once_and_keeps_metrics(void)
{
	struct workerrig r;
	char before[2048], after[2048];
	uint64_t *produced;
	int n;

	rig_up(&r, 8);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 8);
	produced = r.c->produced;
	CHECK_INT(*produced, 8);
	n = series_of(&r, before, sizeof(before));
	CHECK(n >= 5); /* records_produced, _acked, _failed, _skipped, utf8 */
	CHECK(strstr(before, "records_produced;") != NULL);
	/* With records in flight it stops first (RESTARTING), and opens once
	 * they are acknowledged. */
	connector_restart(r.c);
	CHECK(r.c->restarting);
	CHECK_INT(r.c->run, CONN_STOPPING);
	CHECK_INT(r.sc.opens, 1);
	r.sc.total = 10; /* the reopened source reads on: 9 and 10 */
	for (size_t k = 0; k < 8; k++)
		sinkfake_deliver(r.fake, k, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK(!r.c->restarting);
	CHECK_INT(r.c->run, CONN_RUNNING);
	CHECK_INT(r.sc.closes, 1);
	CHECK_INT(r.sc.opens, 2);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":8}");
	/* The same series, the same handles, counting on. */
	CHECK_INT(series_of(&r, after, sizeof(after)), n);
	CHECK_STR(after, before);
	CHECK(r.c->produced == produced);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 10);
	CHECK_INT(*produced, 10);
	CHECK_INT(r.sc.opens, 2);
	/* A second restart while one is under way changes nothing. */
	connector_restart(r.c);
	connector_restart(r.c);
	sinkfake_deliver(r.fake, 8, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 9, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK_INT(r.sc.opens, 3);
	CHECK_INT(r.sc.closes, 2);
	workerrig_down(&r);
	CHECK_INT(r.sc.closes, 3);
}

/* The same acknowledged records: CLOSE_KEEP_PREFIX stores them,
 * CLOSE_ABANDON (a reload's removal) does not, and frees the slot. */
static void test_abandon_stores_nothing(void)
{
	struct workerrig r;

	for (int keep = 0; keep < 2; keep++) {
		rig_up(&r, 3);
		CHECK_INT(workerrig_turns(&r, 3), 0);
		CHECK_INT(sinkfake_count(r.fake), 3);
		sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
		sinkfake_deliver(r.fake, 1, SINK_DELIVERED, NULL);
		pipeline_poll_sink(r.wk->pipe); /* acknowledged, not flushed yet */
		CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL);
		connector_close(r.c, keep ? CLOSE_KEEP_PREFIX : CLOSE_ABANDON);
		CHECK_INT(r.sc.closes, 1);
		CHECK(r.c->ctx == NULL);
		CHECK(keep ? !r.c->removed : r.c->removed);
		sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
		for (int i = 0; i < 20; i++)
			(void)workerrig_turn(&r);
		if (keep)
			CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":2}");
		else
			CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL);
		CHECK_INT(r.sc.closes, 1);
		workerrig_down(&r);
		CHECK_INT(r.sc.closes, 1);
	}
}

/* Closed and opened again under its name, as a reload or a REST PUT that
 * changes it does: its acked count is kept (the registry's), and so is the
 * time of its last acknowledgement, which was lost ("acked 2, last ack
 * never" in `skiff status`). */
static void test_reopen_keeps_the_last_ack(void)
{
	const struct connector_settings *cs;
	struct workerrig r;
	char errbuf[512];
	int64_t last;

	rig_up(&r, 3);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK_INT(*r.c->acked, 2);
	last = r.c->last_ack_ms;
	CHECK(last > 0);
	cs = r.c->cs;
	connector_close(r.c, CLOSE_ABANDON);
	CHECK_INT(connector_open(r.c, cs, OPEN_NEW, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(*r.c->acked, 2);
	CHECK_INT(r.c->last_ack_ms, last);
	workerrig_down(&r);
}

/* A slot nothing opened in (a reload's added connector whose offsets could
 * not be read) closes to a tombstone: before, closing it read its settings
 * through a NULL pointer. */
static void test_close_of_a_slot_never_opened(void)
{
	struct workerrig r;
	struct conn *c;

	rig_up(&r, 1);
	c = connectors_slot(r.wk->conns);
	CHECK(c != NULL);
	CHECK_INT(connectors_count(r.wk->conns), 2);
	connector_close(c, CLOSE_ABANDON);
	CHECK(c->removed);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0); /* p runs */
	CHECK_INT(workerrig_turns(&r, 2), 0);
	workerrig_down(&r);
	CHECK_INT(r.sc.closes, 1);
}

/* A source that could not open again (a reload's changed connector, a
 * producer's rebuild): FAILED with the reason, its counters kept; a slot
 * without counters becomes a tombstone. */
static void test_fail_open(void)
{
	struct workerrig r;
	uint64_t *produced;
	struct conn *c;

	rig_up(&r, 2);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	produced = r.c->produced;
	connector_fail_open(r.c, true, "connector p: no such file");
	CHECK(r.c->stopped && !r.c->removed);
	CHECK_STR(r.c->trace, "connector p: no such file");
	CHECK(r.c->produced == produced);
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_CONFIG);
	c = connectors_slot(r.wk->conns);
	CHECK(c != NULL);
	connector_fail_open(c, false, "out of memory");
	CHECK(c->removed && c->trace == NULL);
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_CONFIG); /* p alone decides */
	workerrig_down(&r);
}

static void test_exit_code_once_none_runs(void)
{
	struct workerrig r;
	char errbuf[512];

	rig_up(&r, 2);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0);
	connector_fail(r.c, true, "a bad column");
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_CONFIG);
	CHECK_STR(r.c->trace, "a bad column");
	CHECK_INT(workerrig_turn(&r), WORKER_EXIT_CONFIG);
	/* Failed: pause and stop are refused, a restart clears it. */
	CHECK_INT(connector_pause(r.c, errbuf, sizeof(errbuf)), CONNECTORS_ERR_STATE);
	CHECK(strstr(errbuf, "FAILED") != NULL);
	connector_restart(r.c);
	CHECK(!r.c->stopped);
	CHECK_INT(r.sc.opens, 2);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0);
	/* A failure a restart may pass: 75. */
	connector_fail(r.c, false, "out of memory");
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_TEMPFAIL);
	workerrig_down(&r);
}

static uint64_t epoch(const struct workerrig *r)
{
	const struct query *q = worker_query(r->wk);

	return q->ops->state_epoch(q->ctx);
}

/* The query's state epoch moves with every state or trace change, and when
 * a connector comes or goes; records, acknowledgements, flushes and a
 * command that changes nothing leave it. */
static void test_state_epoch(void)
{
	struct workerrig r;
	char errbuf[512];
	uint64_t e;
	struct conn *c;

	rig_up(&r, 6);
	e = epoch(&r);
	CHECK_INT(workerrig_turns(&r, 3), 0); /* records produced */
	for (size_t k = 0; k < 6; k++)
		sinkfake_deliver(r.fake, k, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 3), 0); /* acknowledged, flushed */
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":6}");
	CHECK(epoch(&r) == e);
	CHECK_INT(connector_pause(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK(epoch(&r) > e);
	e = epoch(&r);
	CHECK_INT(connector_pause(r.c, errbuf, sizeof(errbuf)), 0); /* paused already */
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK(epoch(&r) == e);
	CHECK_INT(connector_resume(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK(epoch(&r) > e);
	e = epoch(&r);
	CHECK_INT(connector_resume(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK(epoch(&r) == e);
	connector_fail(r.c, false, "a broken pipe");
	CHECK(epoch(&r) > e);
	e = epoch(&r);
	connector_fail(r.c, false, "again"); /* FAILED already: its trace stays */
	CHECK(epoch(&r) == e);
	connector_restart(r.c);
	CHECK(epoch(&r) > e);
	CHECK(!r.c->stopped);
	e = epoch(&r);
	CHECK_INT(connector_stop(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK(epoch(&r) > e);
	CHECK_INT(r.c->run, CONN_STOPPED); /* nothing in flight: at once */
	e = epoch(&r);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK(epoch(&r) == e);
	/* A connector added (a reload's new slot), then removed. */
	c = connectors_slot(r.wk->conns);
	CHECK(c != NULL);
	CHECK(epoch(&r) > e);
	e = epoch(&r);
	connector_close(c, CLOSE_ABANDON);
	CHECK(epoch(&r) > e);
	e = epoch(&r);
	connector_close(r.c, CLOSE_ABANDON);
	CHECK(epoch(&r) > e);
	workerrig_down(&r);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	test_stop_waits_for_records_in_flight();
	test_restart_reopens_once_and_keeps_metrics();
	test_abandon_stores_nothing();
	test_reopen_keeps_the_last_ack();
	test_fail_open();
	test_close_of_a_slot_never_opened();
	test_exit_code_once_none_runs();
	test_state_epoch();
	workerrig_cleanup();
	return testlib_done("test_connectors");
}
