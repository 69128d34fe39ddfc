/* The producer's supervisor (kafka/supervisor.c) with fake producers
 * (sinkfake.c): a rebuild makes the new producer first, then commits,
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
#include "offsets/offsets_file.h"
#include "sinkfake.h"
#include "testlib.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[256];

/* ---- fake producers, one per open ---------------------------------------- */

#define MAX_FAKES 8

static struct sinkfake *fakes[MAX_FAKES];
static int nfakes;
static bool refuse_open; /* the next open fails as a bad property would */

static int open_fake(const struct config_section *ws, sink_delivery_fn cb, void *cb_ctx,
                     struct sink **out, char *errbuf, size_t errlen)
{
	struct sinkfake *f;

	(void)ws;
	*out = NULL;
	if (refuse_open) {
		refuse_open = false;
		snprintf(errbuf, errlen, "ssl.key.location: no such key");
		return SINK_ERR_CONFIG;
	}
	if (nfakes == MAX_FAKES || (f = sinkfake_new(cb, cb_ctx, 0)) == NULL)
		return SINK_ERR_NOMEM;
	fakes[nfakes++] = f;
	*out = sinkfake_sink(f);
	return 0;
}

static void no_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
	(void)ctx;
	(void)token;
	(void)res;
	(void)reason;
}

/* ---- a worker section from a properties file ----------------------------- */

static int nsettings;

/* Loads a worker section with extra (more worker keys) and one file
 * connector into *s. */
static void load_settings(struct settings *s, const char *extra)
{
	char dir[300], wpath[400], cpath[400], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};

	snprintf(dir, sizeof(dir), "%s/%d", base, nsettings++);
	CHECK_INT(mkdir(dir, 0755), 0);
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/p.properties", dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets.json\n"
	         "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
	         "offset.flush.interval.ms=1\noffset.flush.timeout.ms=200\n%s",
	         dir, extra);
	testlib_write_file(wpath, text, strlen(text));
	snprintf(text, sizeof(text),
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\n"
	         "topic=t\n",
	         dir);
	testlib_write_file(cpath, text, strlen(text));
	memset(s, 0, sizeof(*s));
	CHECK_INT(settings_load(paths, 2, s, errbuf, sizeof(errbuf)), 0);
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
	    .open_sink = open_fake, .delivery = no_delivery, .ops = &recorded};

	memset(r, 0, sizeof(*r));
	memset(&calls, 0, sizeof(calls));
	calls.fatal_code = WORKER_EXIT_TEMPFAIL;
	nfakes = 0;
	load_settings(&r->s, extra);
	CHECK_INT(loop_new(&r->loop), 0);
	CHECK_INT(stats_new(&r->st), 0);
	conf.loop = r->loop;
	conf.stats = r->st;
	conf.settings = &r->s;
	CHECK_INT(supervisor_new(&conf, &r->sup), 0);
	calls.sup = r->sup;
	CHECK(supervisor_sink(r->sup) == NULL);
	CHECK_INT(supervisor_open(r->sup, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(nfakes, 1);
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
	CHECK(old == sinkfake_sink(fakes[0]));
	calls.drain_left = 2;
	CHECK_INT(supervisor_rebuild(r.sup, r.s.worker, "test"), 0);
	/* Made first, then the old one's transaction, the drain, the
	 * connectors, and the swap: each once. */
	CHECK_INT(nfakes, 2);
	CHECK_STR(calls.order, "cdrs");
	CHECK(supervisor_sink(r.sup) == sinkfake_sink(fakes[1]));
	CHECK(calls.at_swap == sinkfake_sink(fakes[1])); /* in place before swapped */
	CHECK(calls.slab != NULL);
	/* The new producer's descriptor wakes the loop and is served. */
	sinkfake_wake(fakes[1]);
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
	refuse_open = true;
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
	sinkfake_set_fatal(fakes[0], "producer: fatal error: broker: fenced");
	CHECK_INT(supervisor_turn(r.sup, false), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(calls.fatal, 1);
	CHECK_STR(calls.why, "producer: fatal error: broker: fenced");
	rig_down(&r);
}

/* ---- through a worker ---------------------------------------------------- */

/* A scripted source: records 1..total of one partition, 4 a poll. */
static struct script {
	int total, next, opens, closes;
	struct partition *part;
	char lines[16][16];
} sc;

static int sopen(const struct config_section *cfg, struct source_env *env, void **ctx, char *errbuf,
                 size_t errlen)
{
	(void)cfg;
	sc.opens++;
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
	while (b->n < b->max && b->n < 4 && sc.next <= sc.total) {
		struct record *r = &b->records[b->n++];
		int i = sc.next++;

		memset(r, 0, sizeof(*r));
		snprintf(sc.lines[i % 16], sizeof(sc.lines[0]), "line %d", i);
		r->part = sc.part;
		r->offset.v[0] = i;
		r->topic = "t";
		r->value.kind = VALUE_STRING;
		r->value.bytes = sc.lines[i % 16];
		r->value.len = strlen(sc.lines[i % 16]);
	}
	b->more = sc.next <= sc.total;
	return 0;
}

static int64_t stimeout(void *ctx, int64_t now)
{
	(void)ctx;
	(void)now;
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
	sc.closes += ctx != NULL;
}

static struct source_ops scripted;

static void test_worker_rebuild_and_fatal(void)
{
	struct settings s;
	struct stats *st = NULL;
	struct offsets *o = NULL;
	struct worker *w = NULL;
	char errbuf[1024], opath[600];
	int code = 0;

	memset(&sc, 0, sizeof(sc));
	sc.total = 3;
	sc.next = 1;
	nfakes = 0;
	load_settings(&s, "");
	scripted = *s.connectors[0].ops;
	scripted.open = sopen;
	scripted.poll = spoll;
	scripted.pollfds = NULL;
	scripted.timeout_ms = stimeout;
	scripted.watch = NULL;
	scripted.offset_json = sjson;
	scripted.stopping = NULL;
	scripted.backlog = NULL;
	scripted.close = sclose;
	s.connectors[0].ops = &scripted;
	snprintf(opath, sizeof(opath), "%s", settings_worker(s.worker)->offset_file);
	CHECK_INT(offsets_open_file(opath, &o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(stats_new(&st), 0);
	CHECK_INT(worker_new_with(&s, st, open_fake, &w, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(worker_start(w, o, errbuf, sizeof(errbuf)), 0);
	for (int i = 0; i < 5 && code == 0; i++) {
		sinkfake_wake(fakes[0]);
		code = worker_turn(w);
	}
	CHECK_INT(code, 0);
	CHECK_INT(sinkfake_count(fakes[0]), 3);
	CHECK_INT(sc.opens, 1);
	/* Record 1 acknowledged, 2 and 3 never: the drain gives up after
	 * offset.flush.timeout.ms, the connector reopens once from offset 1. */
	sinkfake_deliver(fakes[0], 0, SINK_DELIVERED, NULL);
	CHECK_INT(supervisor_rebuild(w->sup, s.worker, "test"), 0);
	CHECK_INT(nfakes, 2);
	CHECK(supervisor_sink(w->sup) == sinkfake_sink(fakes[1]));
	CHECK_INT(sc.opens, 2);
	CHECK_INT(sc.closes, 1);
	CHECK_STR(offsets_get(o, "[\"p\",{\"f\":\"a\"}]"), "{\"position\":1}");
	/* The new producer's fatal error: exit 75, as before the supervisor. */
	sinkfake_set_fatal(fakes[1], "producer: fatal error: out of threads");
	sinkfake_wake(fakes[1]);
	CHECK_INT(worker_turn(w), WORKER_EXIT_TEMPFAIL);
	worker_destroy(w);
	stats_destroy(st);
	offsets_destroy(o);
	settings_destroy(&s);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_rebuild_swaps_and_restarts_once();
	test_rebuild_keeps_the_running_producer();
	test_bandwidth_throttles_and_wakes();
	test_no_cap_always_allows();
	test_fatal_ends_the_turn();
	test_worker_rebuild_and_fatal();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_done("test_supervisor");
}
