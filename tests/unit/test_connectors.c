/* core/connectors.c, a connector's lifecycle, from a scripted source
 * through the worker to a fake producer (sinkfake.c) and the offset store:
 * a stop waits for the records in flight, stores their acknowledged prefix
 * and closes the source once; a restart opens it once more and keeps its
 * counters registered; a reload's removal (CLOSE_ABANDON) closes it without
 * storing anything; a failed connector decides the exit code once none
 * runs. */
#include "config/settings.h"
#include "core/connectors.h"
#include "core/pipeline.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "offsetsfake.h"
#include "sinkfake.h"
#include "testlib.h"

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
	int opens;  /* calls of open */
	int closes; /* calls of close with its context */
	struct partition *part;
	char lines[64][16];
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
		snprintf(sc.lines[i % 64], sizeof(sc.lines[0]), "line %d", i);
		r->part = sc.part;
		r->offset.v[0] = i;
		r->topic = "t";
		r->value.kind = VALUE_STRING;
		r->value.bytes = sc.lines[i % 64];
		r->value.len = strlen(sc.lines[i % 64]);
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

/* ---- the fake producer, made by the worker ----------------------------- */

static struct sinkfake *fake;

static int open_fake(const struct config_section *ws, sink_delivery_fn cb, void *cb_ctx,
                     struct sink **out, char *errbuf, size_t errlen)
{
	(void)ws;
	(void)errbuf;
	(void)errlen;
	fake = sinkfake_new(cb, cb_ctx, 0);
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
	struct conn *c; /* its one connector */
};

static void rig_up(struct rig *r, int records)
{
	char wpath[600], cpath[600], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};

	memset(r, 0, sizeof(*r));
	memset(&sc, 0, sizeof(sc));
	sc.total = records;
	sc.next = 1;
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
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\n"
	         "topic=t\n",
	         r->dir);
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
	CHECK_INT(connectors_count(r->wk->conns), 1);
	r->c = connectors_at(r->wk->conns, 0);
}

static void rig_down(struct rig *r)
{
	worker_destroy(r->wk);
	stats_destroy(r->st);
	offsets_destroy(r->o);
	settings_destroy(&r->s);
}

/* One turn that does not sleep in the loop (the fake's descriptor is made
 * readable), a little over offset.flush.interval.ms after the last. */
static int turn(struct rig *r)
{
	usleep(1200);
	sinkfake_wake(fake);
	return worker_turn(r->wk);
}

static int turns(struct rig *r, int n)
{
	for (int i = 0; i < n; i++) {
		int code = turn(r);

		if (code != 0)
			return code;
	}
	return 0;
}

/* The connector's series as /metrics lists them ("name{connector}" each,
 * in registration order) into buf; returns how many. */
static int series_of(const struct rig *r, char *buf, size_t len)
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
	struct rig r;
	char errbuf[512];

	rig_up(&r, 5);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 5);
	CHECK_INT(connector_stop(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(r.c->run, CONN_STOPPING);
	/* Records 1, 2, 4 and 5 acknowledged: it waits for 3. */
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 3, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 4, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 5), 0);
	CHECK_INT(r.c->run, CONN_STOPPING);
	CHECK_INT(sc.closes, 0);
	CHECK(r.c->ctx != NULL);
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 2), 0);
	CHECK_INT(r.c->run, CONN_STOPPED);
	CHECK(r.c->ctx == NULL);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":5}");
	CHECK_INT(sc.closes, 1);
	/* Stopped again: nothing more happens. */
	CHECK_INT(connector_stop(r.c, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(turns(&r, 5), 0);
	CHECK_INT(sc.closes, 1);
	CHECK_INT(sc.opens, 1);
	CHECK_INT(sinkfake_count(fake), 5);
	rig_down(&r);
	CHECK_INT(sc.closes, 1);
}

static void test_restart_reopens_once_and_keeps_metrics(void)
{
	struct rig r;
	char before[2048], after[2048];
	uint64_t *produced;
	int n;

	rig_up(&r, 8);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 8);
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
	CHECK_INT(sc.opens, 1);
	sc.total = 10; /* the reopened source reads on: 9 and 10 */
	for (size_t k = 0; k < 8; k++)
		sinkfake_deliver(fake, k, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 2), 0);
	CHECK(!r.c->restarting);
	CHECK_INT(r.c->run, CONN_RUNNING);
	CHECK_INT(sc.closes, 1);
	CHECK_INT(sc.opens, 2);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":8}");
	/* The same series, the same handles, counting on. */
	CHECK_INT(series_of(&r, after, sizeof(after)), n);
	CHECK_STR(after, before);
	CHECK(r.c->produced == produced);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 10);
	CHECK_INT(*produced, 10);
	CHECK_INT(sc.opens, 2);
	/* A second restart while one is under way changes nothing. */
	connector_restart(r.c);
	connector_restart(r.c);
	sinkfake_deliver(fake, 8, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 9, SINK_DELIVERED, NULL);
	CHECK_INT(turns(&r, 2), 0);
	CHECK_INT(sc.opens, 3);
	CHECK_INT(sc.closes, 2);
	rig_down(&r);
	CHECK_INT(sc.closes, 3);
}

/* The same acknowledged records: CLOSE_KEEP_PREFIX stores them,
 * CLOSE_ABANDON (a reload's removal) does not, and frees the slot. */
static void test_abandon_stores_nothing(void)
{
	struct rig r;

	for (int keep = 0; keep < 2; keep++) {
		rig_up(&r, 3);
		CHECK_INT(turns(&r, 3), 0);
		CHECK_INT(sinkfake_count(fake), 3);
		sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
		sinkfake_deliver(fake, 1, SINK_DELIVERED, NULL);
		pipeline_poll_sink(r.wk->pipe); /* acknowledged, not flushed yet */
		CHECK(offsets_get(r.o, KEY_P) == NULL);
		connector_close(r.c, keep ? CLOSE_KEEP_PREFIX : CLOSE_ABANDON);
		CHECK_INT(sc.closes, 1);
		CHECK(r.c->ctx == NULL);
		CHECK(keep ? !r.c->removed : r.c->removed);
		sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
		for (int i = 0; i < 20; i++)
			(void)turn(&r);
		if (keep)
			CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":2}");
		else
			CHECK(offsets_get(r.o, KEY_P) == NULL);
		CHECK_INT(sc.closes, 1);
		rig_down(&r);
		CHECK_INT(sc.closes, 1);
	}
}

/* A slot nothing opened in (a reload's added connector whose offsets could
 * not be read) closes to a tombstone: before, closing it read its settings
 * through a NULL pointer. */
static void test_close_of_a_slot_never_opened(void)
{
	struct rig r;
	struct conn *c;

	rig_up(&r, 1);
	c = connectors_slot(r.wk->conns);
	CHECK(c != NULL);
	CHECK_INT(connectors_count(r.wk->conns), 2);
	connector_close(c, CLOSE_ABANDON);
	CHECK(c->removed);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0); /* p runs */
	CHECK_INT(turns(&r, 2), 0);
	rig_down(&r);
	CHECK_INT(sc.closes, 1);
}

static void test_exit_code_once_none_runs(void)
{
	struct rig r;
	char errbuf[512];

	rig_up(&r, 2);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0);
	connector_fail(r.c, true, "a bad column");
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_CONFIG);
	CHECK_STR(r.c->trace, "a bad column");
	CHECK_INT(turn(&r), WORKER_EXIT_CONFIG);
	/* Failed: pause and stop are refused, a restart clears it. */
	CHECK_INT(connector_pause(r.c, errbuf, sizeof(errbuf)), CONNECTORS_ERR_STATE);
	CHECK(strstr(errbuf, "FAILED") != NULL);
	connector_restart(r.c);
	CHECK(!r.c->stopped);
	CHECK_INT(sc.opens, 2);
	CHECK_INT(connectors_exit_code(r.wk->conns), 0);
	/* A failure a restart may pass: 75. */
	connector_fail(r.c, false, "out of memory");
	CHECK_INT(connectors_exit_code(r.wk->conns), WORKER_EXIT_TEMPFAIL);
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
	test_stop_waits_for_records_in_flight();
	test_restart_reopens_once_and_keeps_metrics();
	test_abandon_stores_nothing();
	test_close_of_a_slot_never_opened();
	test_exit_code_once_none_runs();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_done("test_connectors");
}
