/* Exactly-once through the loop (core/eos.c), from a scripted source
 * through the worker to a fake producer (sinkfake.c): while the
 * transaction waits for its records' acknowledgements the worker's turns
 * return and the loop serves other descriptors and timers, reading stays
 * paused; the commit (resumed while it answers SINK_TXN_PENDING) then
 * lands and the offsets reach the store once, after it and never before. A record of the
 * transaction that fails aborts it, and the worker exits 75 with no offset stored. A stop's
 * boundary (worker_eos_settle) runs the loop until the transaction ended. */
#include "config/settings.h"
#include "core/eos.h"
#include "core/loop.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "offsetsfake.h"
#include "sinkfake.h"
#include "testlib.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_P "[\"p\",{\"f\":\"a\"}]"

/* ---- a scripted source: records 1..total of one partition, 4 a poll ---- */

static struct script {
	int total; /* records it has */
	int next;  /* the next it gives (1-based) */
	int polls; /* calls of poll */
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
	b->more = sc.next <= sc.total;
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
	(void)ctx;
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

/* ---- a worker with exactly-once around them ---------------------------- */

struct rig {
	char dir[512];
	struct settings s;
	struct offsets *o;
	struct stats *st;
	struct worker *wk;
};

static void rig_up_with(struct rig *r, int records, int flush_timeout_ms)
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
	         "offset.storage.topic=offs\nexactly.once.source.support=enabled\n"
	         "device.id=unit\n"
	         "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
	         "offset.flush.interval.ms=1\noffset.flush.timeout.ms=%d\n",
	         path, flush_timeout_ms);
	testlib_write_file(wpath, text, strlen(text));
	snprintf(text, sizeof(text),
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n", r->dir);
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
	CHECK(r->wk->eos != NULL);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_INIT), 1);
}

static void rig_up(struct rig *r, int records)
{
	rig_up_with(r, records, 2000);
}

static void rig_down(struct rig *r)
{
	worker_destroy(r->wk);
	stats_destroy(r->st);
	offsets_destroy(r->o);
	settings_destroy(&r->s);
}

/* One turn that does not sleep long in the loop: the fake's descriptor is
 * made readable. */
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

/* ---- a client of the loop of our own: a pipe and a timer --------------- */

static int served, fired;

static void on_pipe(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	char b[16];

	(void)l, (void)watch, (void)revents, (void)arg;
	while (read(fd, b, sizeof(b)) > 0)
		served++;
}

static void on_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	(void)l, (void)t, (void)arg;
	fired++;
}

static void deliver_all(void)
{
	for (size_t k = 0; k < sinkfake_count(fake); k++)
		if (!sinkfake_record(fake, k)->reported)
			sinkfake_deliver(fake, k, SINK_DELIVERED, NULL);
}

/* Offset records the fake got (token NULL, on the offsets topic). */
static int offset_records(const char *key)
{
	int n = 0;

	for (size_t k = 0; k < sinkfake_count(fake); k++) {
		const struct sinkfake_record *rec = sinkfake_record(fake, k);

		if (rec->token == NULL && strcmp(rec->topic, "offs") == 0 &&
		    strcmp(rec->key, key) == 0)
			n++;
	}
	return n;
}

/* The records of the transaction acknowledged one a turn: while it drains
 * (reading paused) the turns return and the loop serves another client's
 * pipe and timer; then the commit, answering pending five times, is
 * resumed within its bounded call, and the offsets reach the store once,
 * after it. */
static void test_drain_serves_the_loop(void)
{
	struct rig r;
	struct loop_fd *watch = NULL;
	struct loop_timer *timer = NULL;
	int pfd[2], draining = 0, served_draining = 0, fired_draining = 0, polls;
	size_t next = 0;

	served = fired = 0;
	rig_up(&r, 5);
	CHECK_INT(pipe2(pfd, O_NONBLOCK | O_CLOEXEC), 0);
	CHECK_INT(loop_fd_add(r.wk->loop, pfd[0], POLLIN, on_pipe, NULL, &watch), 0);
	CHECK_INT(loop_timer_add(r.wk->loop, -1, 0, on_timer, NULL, &timer), 0);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 5);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_BEGIN), 1);
	sinkfake_txn_answer(fake, SINK_TXN_PENDING, 5);
	polls = sc.polls;
	for (int i = 0; i < 200 && (draining == 0 || eos_state(r.wk->eos) != EOS_IDLE); i++) {
		bool was = eos_state(r.wk->eos) == EOS_DRAINING;
		int s0 = served, f0 = fired;

		if (was) {
			/* Another client's request and timer, while it drains. */
			CHECK_INT((int)write(pfd[1], "x", 1), 1);
			loop_timer_set(timer, loop_now_ms(), 0);
			draining++;
			CHECK(offsets_get(r.o, KEY_P) == NULL); /* not before the commit */
			CHECK(eos_blocks(r.wk->eos));
			CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 0);
		}
		if (was && next < 5)
			sinkfake_deliver(fake, next++, SINK_DELIVERED, NULL);
		CHECK_INT(turn(&r), 0);
		if (was && eos_state(r.wk->eos) == EOS_DRAINING) {
			served_draining += served > s0;
			fired_draining += fired > f0;
		}
	}
	/* The turns returned while it drained, the loop served the pipe and the
	 * timer meanwhile, and nothing was read. */
	CHECK(draining >= 5);
	CHECK(served_draining >= 3);
	CHECK(fired_draining >= 3);
	CHECK_INT(sc.polls, polls);
	CHECK_INT(eos_state(r.wk->eos), EOS_IDLE);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 6);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_ABORT), 0);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":5}");
	CHECK_INT(offset_records(KEY_P), 1);
	/* Stored once: nothing more to commit, no second offset record. */
	CHECK_INT(turns(&r, 20), 0);
	CHECK_INT(offset_records(KEY_P), 1);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 6);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_BEGIN), 1);
	loop_fd_del(r.wk->loop, watch);
	loop_timer_del(r.wk->loop, timer);
	close(pfd[0]);
	close(pfd[1]);
	rig_down(&r);
}

static void test_failed_record_aborts(void)
{
	struct rig r;
	int code = 0;

	rig_up(&r, 3);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 3);
	sinkfake_deliver(fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(fake, 1, SINK_FAILED, "Local: Message timed out");
	sinkfake_deliver(fake, 2, SINK_DELIVERED, NULL);
	for (int i = 0; i < 50 && code == 0; i++)
		code = turn(&r);
	CHECK_INT(code, WORKER_EXIT_TEMPFAIL);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_ABORT), 1);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 0);
	CHECK_INT(offset_records(KEY_P), 0);
	CHECK(offsets_get(r.o, KEY_P) == NULL);
	/* From then on the worker is to exit, with the same code. */
	CHECK_INT(turn(&r), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(worker_eos_settle(r.wk), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_ABORT), 1);
	rig_down(&r);
}

/* Records never acknowledged: the drain's deadline (6 x
 * offset.flush.timeout.ms, a loop timer) aborts, exit 75, turns returning
 * meanwhile. */
static void test_drain_deadline_aborts(void)
{
	struct rig r;
	int code = 0, waiting = 0;

	rig_up_with(&r, 3, 50);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 3);
	for (int i = 0; i < 2000 && code == 0; i++) {
		code = turn(&r);
		waiting += code == 0 && eos_state(r.wk->eos) == EOS_DRAINING;
	}
	CHECK_INT(code, WORKER_EXIT_TEMPFAIL);
	CHECK(waiting >= 2);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_ABORT), 1);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 0);
	CHECK(offsets_get(r.o, KEY_P) == NULL);
	rig_down(&r);
}

/* A stop's boundary: the open transaction drains and commits (pending
 * twice) through the loop before the stop goes on. */
static void test_settle_runs_the_loop_until_committed(void)
{
	struct rig r;

	rig_up(&r, 3);
	CHECK_INT(turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(fake), 3);
	deliver_all();
	sinkfake_txn_answer(fake, SINK_TXN_PENDING, 2);
	CHECK_INT(worker_eos_settle(r.wk), 0);
	CHECK(eos_idle(r.wk->eos));
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 3);
	CHECK_STR(offsets_get(r.o, KEY_P), "{\"position\":3}");
	CHECK_INT(offset_records(KEY_P), 1);
	/* Nothing held: a second boundary commits nothing. */
	CHECK_INT(worker_eos_settle(r.wk), 0);
	CHECK_INT(sinkfake_txn_calls(fake, SINK_TXN_COMMIT), 3);
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
	test_drain_serves_the_loop();
	test_failed_record_aborts();
	test_drain_deadline_aborts();
	test_settle_runs_the_loop_until_committed();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_done("test_eos");
}
