/* The record path, from a scripted source through the worker's loop to a
 * fake producer and the offset store (workerrig.c): what reaches the store
 * is the contiguous acknowledged prefix whatever the order of the
 * acknowledgements; a full producer stops reading until a delivery; a
 * record Kafka refuses is skipped or fails its connector as
 * errors.tolerance says; failed offset writes pause reading; a stop waits
 * for the records in flight, stores their prefix and closes the source
 * once. */
#include "config/settings.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "offsetsfake.h"
#include "sinkfake.h"
#include "testlib.h"
#include "workerrig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void rig_up(struct workerrig *r, int records, uint32_t cap, const char *tolerance)
{
	char keys[64];

	snprintf(keys, sizeof(keys), "errors.tolerance=%s\n", tolerance);
	workerrig_up(
	    r, &(struct workerrig_conf){.records = records, .capacity = cap, .connector = keys});
}

/* Turns until the store holds want for WORKERRIG_KEY (NULL: nothing), at most 200. */
static const char *stored_after_turns(struct workerrig *r, const char *want)
{
	for (int i = 0; i < 200; i++) {
		const char *got = offsets_get(r->o, WORKERRIG_KEY);

		if (want == NULL ? got == NULL : got != NULL && strcmp(got, want) == 0)
			return got;
		(void)workerrig_turn(r);
	}
	return offsets_get(r->o, WORKERRIG_KEY);
}

static void test_acked_prefix_under_out_of_order_acks(void)
{
	struct workerrig r;

	rig_up(&r, 5, 0, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 5);
	CHECK_STR(sinkfake_record(r.fake, 4)->value, "line 5");
	/* Acks of records 3, 1, 5, 2: the prefix is 1..3. */
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 4, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	CHECK_INT(workerrig_turns(&r, 20), 0);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":3}"); /* 4 is not acknowledged */
	sinkfake_deliver(r.fake, 3, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":5}"), "{\"position\":5}");
	workerrig_down(&r);
}

static void test_backpressure_stops_reading(void)
{
	struct workerrig r;
	int polls;

	rig_up(&r, 5, 2, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 2);
	polls = r.sc.polls;
	CHECK_INT(workerrig_turns(&r, 20), 0);
	CHECK_INT(r.sc.polls, polls); /* full: the source is not asked */
	CHECK_INT(sinkfake_count(r.fake), 2);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK(r.sc.polls > polls);
	CHECK_INT(sinkfake_count(r.fake), 3);
	workerrig_down(&r);
}

static void test_refused_record_and_tolerance(void)
{
	struct workerrig r;

	/* errors.tolerance=all: the refused record is done, the offset passes it. */
	rig_up(&r, 3, 0, "all");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_REFUSED, "Broker: Message size too large");
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	workerrig_down(&r);
	/* none: the connector fails (exit 78 once none runs), its offset stays
	 * before the refused record. */
	rig_up(&r, 3, 0, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_REFUSED, "Broker: Message size too large");
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 5), WORKER_EXIT_CONFIG);
	CHECK_STR(stored_after_turns(&r, "{\"position\":1}"), "{\"position\":1}");
	workerrig_down(&r);
}

/* Runs a rig whose connector has more_keys until its first exit code or 20
 * turns, delivering whatever it produced; *failed and *skipped: its
 * records_failed and records_skipped then. */
static void count_failures(const char *more_keys, uint64_t *failed, uint64_t *skipped)
{
	struct workerrig r;

	workerrig_up(&r, &(struct workerrig_conf){.records = 3, .connector = more_keys});
	for (int i = 0; i < 20 && workerrig_turn(&r) == 0; i++)
		sinkfake_deliver_all(r.fake);
	*failed = *r.c->failed;
	*skipped = *r.c->tol.skipped;
	workerrig_down(&r);
}

/* A record a transform fails on counts in records_failed whatever
 * errors.tolerance says, as Connect's total-record-failures does: with none
 * it stopped its connector and records_failed stayed 0, so /metrics and
 * `skiff status` showed a FAILED connector with no failed record. */
static void test_failed_records_counted_whatever_the_tolerance(void)
{
#define MASK                                                                                       \
	"transforms=m\ntransforms.m.type=org.apache.kafka.connect.transforms.MaskField$Value\n"    \
	"transforms.m.fields=v\n"
	struct workerrig r;
	uint64_t failed, skipped;

	count_failures(MASK "errors.tolerance=none\n", &failed, &skipped);
	CHECK_INT(failed, 1); /* the first record stops it */
	CHECK_INT(skipped, 0);
	count_failures(MASK "errors.tolerance=all\n", &failed, &skipped);
	CHECK_INT(failed, 3);
	CHECK_INT(skipped, 3);
#undef MASK
	/* A record Kafka refuses, skipped (all) or stopping its connector. */
	rig_up(&r, 3, 0, "all");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	sinkfake_deliver(r.fake, 1, SINK_REFUSED, "Broker: Message size too large");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(*r.c->failed, 1);
	CHECK_INT(*r.c->tol.skipped, 1);
	workerrig_down(&r);
	rig_up(&r, 3, 0, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	sinkfake_deliver(r.fake, 1, SINK_REFUSED, "Broker: Message size too large");
	CHECK_INT(workerrig_turns(&r, 3), WORKER_EXIT_CONFIG);
	CHECK_INT(*r.c->failed, 1);
	CHECK_INT(*r.c->tol.skipped, 0);
	workerrig_down(&r);
}

static void test_failed_offset_writes_pause_reading(void)
{
	struct workerrig r;
	int polls, i;

	rig_up(&r, 40, 0, "none");
	CHECK_INT(workerrig_turns(&r, 2), 0);
	/* Three writes fail in a row: reading pauses. */
	for (i = 0; i < 200 && !commits_paused(r.wk->commits); i++) {
		sinkfake_deliver_all(r.fake);
		w.fsync_file_errno = EIO;
		(void)workerrig_turn(&r);
	}
	CHECK(commits_paused(r.wk->commits));
	w.fsync_file_errno = 0;
	polls = r.sc.polls;
	/* ... until a write succeeds (the next flush retries it). */
	for (i = 0; i < 200 && commits_paused(r.wk->commits); i++) {
		if (i < 5)
			w.fsync_file_errno = EIO;
		(void)workerrig_turn(&r);
		if (i < 5)
			CHECK_INT(r.sc.polls, polls);
	}
	CHECK(!commits_paused(r.wk->commits));
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK(r.sc.polls > polls);
	workerrig_down(&r);
}

static void test_stop_with_records_in_flight(void)
{
	struct workerrig r;
	char errbuf[512];
	struct conn *c;

	rig_up(&r, 5, 0, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 5);
	c = connectors_at(r.wk->conns, 0);
	CHECK_INT(worker_rest_ops.control(r.wk, 0, REST_STOP, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(c->run, CONN_STOPPING);
	/* Records 1, 2, 4 and 5 acknowledged: it waits for 3. */
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 3, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 4, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(c->run, CONN_STOPPING);
	CHECK_INT(r.sc.closes, 0);
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 2), 0);
	CHECK_INT(c->run, CONN_STOPPED);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":5}");
	CHECK_INT(r.sc.closes, 1);
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(r.sc.closes, 1);
	CHECK_INT(sinkfake_count(r.fake), 5); /* nothing read while stopped */
	workerrig_down(&r);
	CHECK_INT(r.sc.closes, 1);
}

/* A stop whose store fails (the store is full) keeps the acknowledged
 * prefix and stores it at a later flush, although the source is closed:
 * before core/commits it was dropped with a log line, and a resume read
 * those records again. */
static void test_failed_store_at_a_stop_is_retried(void)
{
	struct workerrig r;
	char errbuf[512];

	rig_up(&r, 3, 0, "none");
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 3);
	fill(r.o);
	CHECK_INT(worker_rest_ops.control(r.wk, 0, REST_STOP, errbuf, sizeof(errbuf)), 0);
	for (size_t k = 0; k < 3; k++)
		sinkfake_deliver(r.fake, k, SINK_DELIVERED, NULL);
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(connectors_at(r.wk->conns, 0)->run, CONN_STOPPED);
	CHECK_INT(r.sc.closes, 1);
	CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL); /* no room */
	CHECK_INT(offsets_put(r.o, FILL_KEY, "{\"x\":1}"), 0);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	workerrig_down(&r);
}

/* The topic guard of a guarded connector (connector_settings.guard, the
 * fleet's): asked once per new final topic, after the transforms. */
static int topic_asks;

static int allow_topic(const void *arg, const char *topic, char *why, size_t len)
{
	topic_asks++;
	if (strncmp(topic, (const char *)arg, strlen((const char *)arg)) == 0)
		return 0;
	snprintf(why, len, "outside the test's prefix (%s)", (const char *)arg);
	return -1;
}

#define ROUTER                                                                                     \
	"transforms=r\ntransforms.r.type=org.apache.kafka.connect.transforms.RegexRouter\n"        \
	"transforms.r.regex=(.*)\ntransforms.r.replacement="

/* A topic a RegexRouter computes, outside what the guard allows: the
 * connector fails with the reason as its trace before the record goes
 * (never a silent drop, nor a skip by errors.tolerance=all), nothing
 * produced, its offset before that record. Inside: produced, the guard
 * asked once for the topic, not per record. No guard: as ever. */
static void test_topic_guard(void)
{
	struct source_guard g = {.allow_topic = allow_topic, .arg = "app-"};
	struct workerrig r;

	workerrig_up(&r, &(struct workerrig_conf){.records = 3,
	                                          .connector = ROUTER "secret-$1\n"
	                                                              "errors.tolerance=all\n"});
	r.s.connectors[0].guard = &g;
	topic_asks = 0;
	CHECK_INT(workerrig_turns(&r, 5), WORKER_EXIT_CONFIG);
	CHECK_INT(sinkfake_count(r.fake), 0);
	CHECK_STR(r.c->trace,
	          "a record's topic secret-t (after the transforms) is outside the test's prefix "
	          "(app-)");
	CHECK_INT(topic_asks, 1);
	CHECK(stored_after_turns(&r, NULL) == NULL);
	workerrig_down(&r);

	workerrig_up(&r, &(struct workerrig_conf){.records = 5, .connector = ROUTER "app-$1\n"});
	r.s.connectors[0].guard = &g;
	topic_asks = 0;
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(sinkfake_count(r.fake), 5);
	CHECK_STR(sinkfake_record(r.fake, 4)->topic, "app-t");
	CHECK_INT(topic_asks, 1);
	workerrig_down(&r);

	workerrig_up(&r, &(struct workerrig_conf){.records = 2, .connector = ROUTER "secret-$1\n"});
	CHECK_INT(workerrig_turns(&r, 5), 0);
	CHECK_INT(sinkfake_count(r.fake), 2);
	workerrig_down(&r);
}
#undef ROUTER

static int allow_prefix(const void *arg, const char *real_path, char *why, size_t len)
{
	if (strncmp(real_path, (const char *)arg, strlen((const char *)arg)) == 0)
		return 0;
	snprintf(why, len, "outside the test's prefix (%s)", (const char *)arg);
	return -1;
}

/* The path guard through the worker: connector p, the file source itself,
 * guarded (connector_settings.guard) to its own directory; its file a link
 * to a file outside. The connector fails with the file source's reason as
 * its trace, files_refused=1 in the registry, nothing produced or stored. */
static void test_path_guard_fails_the_connector(void)
{
	static char gdir[512];
	struct source_guard g = {.allow_path = allow_prefix, .arg = gdir};
	char file[600], secret[600], want[2048];
	struct stats_view v;
	struct workerrig r;
	uint64_t refused = UINT64_MAX;
	size_t cur = 0;
	int code = 0;

	snprintf(secret, sizeof(secret), "%s/secret.txt", testlib_tmpdir());
	testlib_write_file(secret, "root:SECRET\n", 12);
	workerrig_up(&r, &(struct workerrig_conf){.file_source = true, .guard = &g});
	snprintf(gdir, sizeof(gdir), "%.400s", r.s.connectors[0].file);
	*strrchr(gdir, '/') = '\0';
	snprintf(file, sizeof(file), "%s/app.log", gdir);
	CHECK(symlink(secret, file) == 0);
	for (int i = 0; i < 200 && code == 0; i++)
		code = workerrig_turn(&r);
	CHECK_INT(code, WORKER_EXIT_CONFIG);
	snprintf(want, sizeof(want), "file %s resolves to %s, outside the test's prefix (%s)", file,
	         secret, gdir);
	CHECK_STR(r.c->trace, want);
	CHECK_INT(sinkfake_count(r.fake), 0);
	while (stats_next(r.st, &cur, &v))
		if (strcmp(v.desc->name, "files_refused") == 0 && v.connector != NULL &&
		    strcmp(v.connector, "p") == 0)
			refused = v.value;
	CHECK_INT(refused, 1);
	workerrig_down(&r);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	test_acked_prefix_under_out_of_order_acks();
	test_backpressure_stops_reading();
	test_refused_record_and_tolerance();
	test_failed_records_counted_whatever_the_tolerance();
	test_failed_offset_writes_pause_reading();
	test_stop_with_records_in_flight();
	test_failed_store_at_a_stop_is_retried();
	test_topic_guard();
	test_path_guard_fails_the_connector();
	workerrig_cleanup();
	return testlib_done("test_pipeline");
}
