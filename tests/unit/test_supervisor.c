/* The producer's supervisor (kafka/supervisor.c) with fake producers
 * (workerrig.c's, over sinkfake.c): a rebuild makes the new producer first, then commits,
 * drains, restarts and swaps, in that order and once each, and keeps the
 * running producer when the new one cannot be made; the bandwidth cap
 * pauses reading and wakes the loop when the bucket refilled; a producer's
 * fatal error ends the turn with the worker's exit code. Then the same
 * through a worker: a rebuild with records in flight on the old producer
 * reopens their connector once from the stored offsets, and a fatal error
 * of the new producer exits 75 as before. */
#include "config/settings.h"
#include "core/acks.h"
#include "core/loop.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "kafka/supervisor.h"
#include "offsets/offsets.h"
#include "sinkfake.h"
#include "testlib.h"
#include "workerrig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
	(void)ctx;
	(void)token;
	(void)res;
	(void)reason;
}

/* ---- the worker's side, recorded ----------------------------------------- */

static struct calls {
	char order[64]; /* one letter a call: c(ommit) d(rain) r(estart) s(wapped) */
	int serve, fatal;
	int commit_rc, drain_left, fatal_code;
	char why[512];
	struct acks *slab;      /* the last swapped in (the test frees it) */
	struct sink *at_swap;   /* supervisor_sink when swapped was called */
	struct supervisor *sup; /* for at_swap */
} calls;

static void note(char c)
{
	size_t n = strlen(calls.order);

	if (n + 1 < sizeof(calls.order))
		calls.order[n] = c;
}

static void serve(void *ctx)
{
	(void)ctx;
	calls.serve++;
}

static int commit(void *ctx)
{
	(void)ctx;
	note('c');
	return calls.commit_rc;
}

static int drain(void *ctx)
{
	(void)ctx;
	note('d');
	return calls.drain_left;
}

static void restart(void *ctx)
{
	(void)ctx;
	note('r');
}

static void swapped(void *ctx, struct acks *slab)
{
	(void)ctx;
	note('s');
	acks_destroy(calls.slab);
	calls.slab = slab;
	calls.at_swap = supervisor_sink(calls.sup);
}

static int fatal(void *ctx, const char *why)
{
	(void)ctx;
	calls.fatal++;
	snprintf(calls.why, sizeof(calls.why), "%s", why);
	return calls.fatal_code;
}

static const struct supervisor_ops recorded = {
    .serve = serve,
    .commit = commit,
    .drain = drain,
    .restart = restart,
    .swapped = swapped,
    .fatal = fatal,
};

struct rig {
	struct settings s;
	struct loop *loop;
	struct stats *st;
	struct supervisor *sup;
};

static void rig_up(struct rig *r, const char *extra)
{
	char errbuf[512];
	struct supervisor_conf conf = {
	    .open_sink = workerrig_open_sink, .delivery = no_delivery, .ops = &recorded};

	memset(r, 0, sizeof(*r));
	memset(&calls, 0, sizeof(calls));
	calls.fatal_code = WORKER_EXIT_TEMPFAIL;
	memset(&workerrig_sinks, 0, sizeof(workerrig_sinks));
	workerrig_settings(&r->s, extra, NULL);
	CHECK_INT(loop_new(&r->loop), 0);
	CHECK_INT(stats_new(&r->st), 0);
	conf.loop = r->loop;
	conf.stats = r->st;
	conf.settings = &r->s;
	CHECK_INT(supervisor_new(&conf, &r->sup), 0);
	calls.sup = r->sup;
	CHECK(supervisor_sink(r->sup) == NULL);
	CHECK_INT(supervisor_open(r->sup, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(workerrig_sinks.n, 1);
	CHECK_INT(supervisor_start(r->sup), 0);
}

static void rig_down(struct rig *r)
{
	supervisor_destroy(r->sup);
	acks_destroy(calls.slab);
	stats_destroy(r->st);
	loop_destroy(r->loop);
	settings_destroy(&r->s);
}

static void test_rebuild_swaps_and_restarts_once(void)
{
	struct rig r;
	struct sink *old;

	rig_up(&r, "");
	old = supervisor_sink(r.sup);
	CHECK(old == sinkfake_sink(workerrig_sinks.made[0]));
	calls.drain_left = 2;
	CHECK_INT(supervisor_rebuild(r.sup, r.s.worker, "test"), 0);
	/* Made first, then the old one's transaction, the drain, the
	 * connectors, and the swap: each once. */
	CHECK_INT(workerrig_sinks.n, 2);
	CHECK_STR(calls.order, "cdrs");
	CHECK(supervisor_sink(r.sup) == sinkfake_sink(workerrig_sinks.made[1]));
	/* in place before swapped */
	CHECK(calls.at_swap == sinkfake_sink(workerrig_sinks.made[1]));
	CHECK(calls.slab != NULL);
	/* The new producer's descriptor wakes the loop and is served. */
	sinkfake_wake(workerrig_sinks.made[1]);
	CHECK_INT(loop_once(r.loop, calls.why, sizeof(calls.why)), 0);
	CHECK_INT(calls.serve, 1);
	rig_down(&r);
}

static void test_rebuild_keeps_the_running_producer(void)
{
	struct rig r;
	struct sink *old;

	rig_up(&r, "");
	old = supervisor_sink(r.sup);
	/* A new producer that cannot be made: nothing drains, nothing swaps. */
	workerrig_sinks.refuse_next = true;
	CHECK_INT(supervisor_rebuild(r.sup, r.s.worker, "test"), SUPERVISOR_ERR_CONFIG);
	CHECK_STR(calls.order, "");
	CHECK(supervisor_sink(r.sup) == old);
	/* An exactly-once commit that fails: the new one goes, the old stays. */
	calls.commit_rc = -1;
	CHECK_INT(supervisor_rebuild(r.sup, r.s.worker, "test"), SUPERVISOR_ERR);
	CHECK_STR(calls.order, "c");
	CHECK(supervisor_sink(r.sup) == old);
	CHECK(calls.slab == NULL);
	rig_down(&r);
}

static void test_bandwidth_throttles_and_wakes(void)
{
	struct rig r;
	char line[256];
	int64_t now;
	int turns = 0;

	/* 10,000 bytes a second: a bucket of 1,000. */
	rig_up(&r, "bandwidth.max.bytes.per.second=10000\n");
	now = loop_now_ms();
	CHECK(supervisor_allows(r.sup, now));
	supervisor_summary(r.sup, line, sizeof(line));
	CHECK(strstr(line, "cap 10000 bytes/s; under it") != NULL);
	supervisor_wake(r.sup);
	CHECK_INT(loop_timeout(r.loop, loop_now_ms()), -1); /* under the cap: no timer */
	/* 2,000 bytes with their framing: the bucket is 1,000 below 0. */
	supervisor_charge(r.sup, 2000 - 16);
	CHECK(!supervisor_allows(r.sup, loop_now_ms()));
	supervisor_summary(r.sup, line, sizeof(line));
	CHECK(strstr(line, "reading paused to hold it") != NULL);
	/* The producer reports the records gone (the fake holds none), and the
	 * loop is woken once the bucket has refilled (to half of it). */
	CHECK_INT(supervisor_turn(r.sup, false), 0);
	supervisor_wake(r.sup);
	CHECK(loop_timeout(r.loop, loop_now_ms()) >= 0);
	while (!supervisor_allows(r.sup, loop_now_ms()) && turns++ < 100) {
		CHECK_INT(loop_once(r.loop, line, sizeof(line)), 0);
		supervisor_wake(r.sup);
	}
	CHECK(supervisor_allows(r.sup, loop_now_ms()));
	CHECK(turns < 100);
	supervisor_wake(r.sup);
	CHECK_INT(loop_timeout(r.loop, loop_now_ms()), -1);
	CHECK_INT(calls.serve, 0);
	rig_down(&r);
}

static void test_no_cap_always_allows(void)
{
	struct rig r;
	char line[64] = "x";

	rig_up(&r, "");
	supervisor_charge(r.sup, 1u << 30);
	CHECK(supervisor_allows(r.sup, loop_now_ms()));
	supervisor_summary(r.sup, line, sizeof(line));
	CHECK_STR(line, "");
	rig_down(&r);
}

static void test_fatal_ends_the_turn(void)
{
	struct rig r;

	rig_up(&r, "");
	CHECK_INT(supervisor_turn(r.sup, false), 0);
	CHECK_INT(calls.fatal, 0);
	sinkfake_set_fatal(workerrig_sinks.made[0], "producer: fatal error: broker: fenced");
	CHECK_INT(supervisor_turn(r.sup, false), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(calls.fatal, 1);
	CHECK_STR(calls.why, "producer: fatal error: broker: fenced");
	rig_down(&r);
}

/* ---- through a worker ---------------------------------------------------- */

static void test_worker_rebuild_and_fatal(void)
{
	struct workerrig r;

	workerrig_up(&r, &(struct workerrig_conf){.records = 3});
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(sinkfake_count(r.fake), 3);
	CHECK_INT(r.sc.opens, 1);
	/* Record 1 acknowledged, 2 and 3 never: the drain gives up after
	 * offset.flush.timeout.ms, the connector reopens once from offset 1. */
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	CHECK_INT(supervisor_rebuild(r.wk->sup, r.s.worker, "test"), 0);
	CHECK_INT(workerrig_sinks.n, 2);
	CHECK(supervisor_sink(r.wk->sup) == sinkfake_sink(workerrig_sinks.made[1]));
	CHECK_INT(r.sc.opens, 2);
	CHECK_INT(r.sc.closes, 1);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":1}");
	/* The new producer's fatal error: exit 75, as before the supervisor. */
	sinkfake_set_fatal(workerrig_sinks.made[1], "producer: fatal error: out of threads");
	sinkfake_wake(workerrig_sinks.made[1]);
	CHECK_INT(worker_turn(r.wk), WORKER_EXIT_TEMPFAIL);
	workerrig_down(&r);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	test_rebuild_swaps_and_restarts_once();
	test_rebuild_keeps_the_running_producer();
	test_bandwidth_throttles_and_wakes();
	test_no_cap_always_allows();
	test_fatal_ends_the_turn();
	test_worker_rebuild_and_fatal();
	workerrig_cleanup();
	return testlib_done("test_supervisor");
}
