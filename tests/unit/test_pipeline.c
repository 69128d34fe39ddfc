/* The record path, from a scripted source through the worker's loop to a
 * fake producer (sinkfake.c) and the offset store: what reaches the store
 * is the contiguous acknowledged prefix whatever the order of the
 * acknowledgements; a full producer stops reading until a delivery; a
 * record Kafka refuses is skipped or fails its connector as
 * errors.tolerance says; failed offset writes pause reading; a stop waits
 * for the records in flight, stores their prefix and closes the source
 * once. */
#include "config/settings.h"
#include "core/commits.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "offsetsfake.h"
#include "sinkfake.h"
#include "testlib.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_P "[\"p\",{\"f\":\"a\"}]"

/* ---- a scripted source: records 1..total of one partition, 4 a poll ---- */

static struct script {
	int total;  /* records it has */
	int next;   /* the next it gives (1-based) */
	int polls;  /* calls of poll */
	int closes; /* calls of close */
	struct partition *part;
	char lines[64][16];
} sc;

static int sopen(const struct config_section *cfg, struct source_env *env, void **ctx, char *errbuf,
                 size_t errlen)
{
	(void)cfg;
	sc.part = env->partition(env, "{\"f\":\"a\"}");
	*ctx = &sc;
	if (sc.part == NULL) {
		snprintf(errbuf, errlen, "no partition");
		return SOURCE_ERR_NOMEM;
	}
	return 0;
}

static int spoll(void *ctx, struct source_batch *b, int64_t now, char *errbuf, size_t errlen)
{
	(void)ctx;
	(void)now;
	(void)errbuf;
	(void)errlen;
	sc.polls++;
	while (b->n < b->max && b->n < 4 && sc.next <= sc.total) {
		struct record *r = &b->records[b->n++];
		int i = sc.next++;

		memset(r, 0, sizeof(*r));
		snprintf(sc.lines[i % 64], sizeof(sc.lines[0]), "line %d", i);
		r->part = sc.part;
		r->offset.v[0] = i;
		r->topic = "t";
		r->value.kind = VALUE_STRING;
		r->value.bytes = sc.lines[i % 64];
		r->value.len = strlen(sc.lines[i % 64]);
	}
	b->more = sc.next <= sc.total; /* at most 4 a poll: more come at once */
	return 0;
}

static int64_t stimeout(void *ctx, int64_t now)
{
	(void)ctx;
	return 2;
}

static char *sjson(void *ctx, const struct src_offset *off)
{
	char buf[64];

	(void)ctx;
	snprintf(buf, sizeof(buf), "{\"position\":%lld}", (long long)off->v[0]);
	return strdup(buf);
}

static void sclose(void *ctx)
{
	sc.closes += ctx != NULL; /* worker_destroy closes a stopped one with NULL */
}

static struct source_ops scripted;

/* ---- the fake producer, made by the worker ----------------------------- */

static struct sinkfake *fake;
static uint32_t capacity;

static int open_fake(const struct config_section *ws, sink_delivery_fn cb, void *cb_ctx,
                     struct sink **out, char *errbuf, size_t errlen)
{
	(void)ws;
	(void)errbuf;
	(void)errlen;
	fake = sinkfake_new(cb, cb_ctx, capacity);
	*out = fake != NULL ? sinkfake_sink(fake) : NULL;
	return fake != NULL ? 0 : SINK_ERR_NOMEM;
}

/* ---- a worker around them ---------------------------------------------- */

struct rig {
	char dir[512];
	struct settings s;
	struct offsets *o;
	struct stats *st;
	struct worker *wk;
};

static void rig_up(struct rig *r, int records, uint32_t cap, const char *tolerance)
{
	char wpath[600], cpath[600], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};

	memset(r, 0, sizeof(*r));
	memset(&sc, 0, sizeof(sc));
	sc.total = records;
	sc.next = 1;
	capacity = cap;
	fresh();
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", r->dir);
	snprintf(cpath, sizeof(cpath), "%s/p.properties", r->dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s\n"
	         "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
	         "offset.flush.interval.ms=1\noffset.flush.timeout.ms=200\n",
	         path);
	testlib_write_file(wpath, text, strlen(text));
	snprintf(text, sizeof(text),
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n"
	         "errors.tolerance=%s\n",
	         r->dir, tolerance);
	testlib_write_file(cpath, text, strlen(text));
	CHECK_INT(settings_load(paths, 2, &r->s, errbuf, sizeof(errbuf)), 0);
	scripted = *r->s.connectors[0].ops;
	scripted.open = sopen;
	scripted.poll = spoll;
	scripted.pollfds = NULL;
	scripted.timeout_ms = stimeout;
	scripted.watch = NULL;
	scripted.offset_json = sjson;
	scripted.stopping = NULL;
	scripted.backlog = NULL;
	scripted.close = sclose;
	r->s.connectors[0].ops = &scripted;
	r->o = open_ok();
	CHECK_INT(stats_new(&r->st), 0);
	CHECK_INT(worker_new_with(&r->s, r->st, open_fake, &r->wk, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(worker_start(r->wk, r->o, errbuf, sizeof(errbuf)), 0);
}

static void rig_down(struct rig *r)
{
	worker_destroy(r->wk);
	stats_destroy(r->st);
	offsets_destroy(r->o);
	settings_destroy(&r->s);
}

/* One turn, a little over offset.flush.interval.ms after the last (a flush
 * is due when something moved), that does not sleep in the loop: the fake's
 * descriptor is made readable, as a reading paused waits on nothing else. */
static int turn(struct rig *r)
{
	usleep(1200);
	sinkfake_wake(fake);
	return worker_turn(r->wk);
}

/* Runs n turns; returns the first exit code (0: none). */
static int turns(struct rig *r, int n)
{
	for (int i = 0; i < n; i++) {
		int code = turn(r);

		if (code != 0)
			return code;
	}
	return 0;
}

/* Turns until the store holds want for KEY_P (NULL: nothing), at most 200. */
static const char *stored_after_turns(struct rig *r, const char *want)
{
	for (int i = 0; i < 200; i++) {
		const char *got = offsets_get(r->o, KEY_P);

		if (want == NULL ? got == NULL : got != NULL && strcmp(got, want) == 0)
			return got;
		(void)turn(r);
	}
	return offsets_get(r->o, KEY_P);
}

static void test_acked_prefix_under_out_of_order_acks(void)
{
	struct rig r;

	rig_up(&r, 5, 0, "none");
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 5);
	CHECK_STR(sinkfake_record(fake, 4)->value, "line 5");
	/* Acks of records 3, 1, 5, 2: the prefix is 1..3. */
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 4, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	CHECK_INT(turns(&r, 20), 0);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":3}"); /* 4 is not acknowledged */
	sinkfake_deliver(fake, 3, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":5}"), "{\"position\":5}");
	rig_down(&r);
}

static void test_backpressure_stops_reading(void)
{
	struct rig r;
	int polls;

	rig_up(&r, 5, 2, "none");
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 2);
	polls = sc.polls;
	CHECK_INT(turns(&r, 20), 0);
	CHECK_INT(sc.polls, polls); /* full: the source is not asked */
	CHECK_INT(sinkfake_count(fake), 2);
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 3), 0);
	CHECK(sc.polls > polls);
	CHECK_INT(sinkfake_count(fake), 3);
	rig_down(&r);
}

static void test_refused_record_and_tolerance(void)
{
	struct rig r;

	/* errors.tolerance=all: the refused record is done, the offset passes it. */
	rig_up(&r, 3, 0, "all");
	CHECK_INT(turns(&r, 3), 0);
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_REFUSED, "Broker: Message size too large");
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	rig_down(&r);
	/* none: the connector fails (exit 78 once none runs), its offset stays
	 * before the refused record. */
	rig_up(&r, 3, 0, "none");
	CHECK_INT(turns(&r, 3), 0);
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_REFUSED, "Broker: Message size too large");
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 5), WORKER_EXIT_CONFIG);
	CHECK_STR(stored_after_turns(&r, "{\"position\":1}"), "{\"position\":1}");
	rig_down(&r);
}

static void test_failed_offset_writes_pause_reading(void)
{
	struct rig r;
	int polls, i;

	rig_up(&r, 40, 0, "none");
	CHECK_INT(turns(&r, 2), 0);
	/* Three writes fail in a row: reading pauses. */
	for (i = 0; i < 200 && !commits_paused(r.wk->commits); i++) {
		size_t n = sinkfake_count(fake);

		for (size_t k = 0; k < n; k++)
			if (!sinkfake_record(fake, k)->reported)
				sinkfake_deliver(fake, k, SINK_DELIVERED, NULL);
		w.fsync_file_errno = EIO;
		(void)turn(&r);
	}
	CHECK(commits_paused(r.wk->commits));
	w.fsync_file_errno = 0;
	polls = sc.polls;
	/* ... until a write succeeds (the next flush retries it). */
	for (i = 0; i < 200 && commits_paused(r.wk->commits); i++) {
		if (i < 5)
			w.fsync_file_errno = EIO;
		(void)turn(&r);
		if (i < 5)
			CHECK_INT(sc.polls, polls);
	}
	CHECK(!commits_paused(r.wk->commits));
	CHECK_INT(turns(&r, 5), 0);
	CHECK(sc.polls > polls);
	rig_down(&r);
}

static void test_stop_with_records_in_flight(void)
{
	struct rig r;
	char errbuf[512];
	struct conn *c;

	rig_up(&r, 5, 0, "none");
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 5);
	c = connectors_at(r.wk->conns, 0);
	CHECK_INT(worker_rest_ops.control(r.wk, 0, REST_STOP, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(c->run, CONN_STOPPING);
	/* Records 1, 2, 4 and 5 acknowledged: it waits for 3. */
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 3, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 4, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 5), 0);
	CHECK_INT(c->run, CONN_STOPPING);
	CHECK_INT(sc.closes, 0);
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 2), 0);
	CHECK_INT(c->run, CONN_STOPPED);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":5}");
	CHECK_INT(sc.closes, 1);
	CHECK_INT(turns(&r, 5), 0);
	CHECK_INT(sc.closes, 1);
	CHECK_INT(sinkfake_count(fake), 5); /* nothing read while stopped */
	rig_down(&r);
	CHECK_INT(sc.closes, 1);
}

/* Fills the store o up to OFFSETS_MAX_BYTES but a little: a new key no
 * longer fits. */
static void fill(struct offsets *o)
{
	size_t n = OFFSETS_MAX_BYTES - 60;
	char *v = malloc(n + 16);

	CHECK(v != NULL);
	memcpy(v, "{\"x\":\"", 6);
	memset(v + 6, 'a', n - 8);
	memcpy(v + n - 2, "\"}", 3);
	CHECK_INT(offsets_put(o, "[\"big\",{}]", v), 0);
	free(v);
}

/* A stop whose store fails (the store is full) keeps the acknowledged
 * prefix and stores it at a later flush, although the source is closed:
 * before core/commits it was dropped with a log line, and a resume read
 * those records again. */
static void test_failed_store_at_a_stop_is_retried(void)
{
	struct rig r;
	char errbuf[512];

	rig_up(&r, 3, 0, "none");
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 3);
	fill(r.o);
	CHECK_INT(worker_rest_ops.control(r.wk, 0, REST_STOP, errbuf, sizeof(errbuf)), 0);
	for (size_t k = 0; k < 3; k++)
		sinkfake_deliver(fake, k, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 5), 0);
	CHECK_INT(connectors_at(r.wk->conns, 0)->run, CONN_STOPPED);
	CHECK_INT(sc.closes, 1);
	CHECK(offsets_get(r.o, KEY_P) == NULL); /* no room */
	CHECK_INT(offsets_put(r.o, "[\"big\",{}]", "{\"x\":1}"), 0);
	CHECK_STR(stored_after_turns(&r, "{\"position\":3}"), "{\"position\":3}");
	rig_down(&r);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_acked_prefix_under_out_of_order_acks();
	test_backpressure_stops_reading();
	test_refused_record_and_tolerance();
	test_failed_offset_writes_pause_reading();
	test_stop_with_records_in_flight();
	test_failed_store_at_a_stop_is_retried();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_done("test_pipeline");
}
