/* Exactly-once through the loop (core/eos.c), from a scripted source
 * through the worker to a fake producer (workerrig.c): while the
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
#include "sinkfake.h"
#include "testlib.h"
#include "workerrig.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A worker with exactly-once (workerrig.c). */
static void rig_up_with(struct workerrig *r, int records, int flush_timeout_ms)
{
	char keys[256];

	snprintf(keys, sizeof(keys),
	         "offset.storage.topic=offs\nexactly.once.source.support=enabled\n"
	         "device.id=unit\noffset.flush.timeout.ms=%d\n",
	         flush_timeout_ms);
	workerrig_up(r, &(struct workerrig_conf){.records = records, .worker = keys});
	CHECK(r->wk->eos != NULL);
	CHECK_INT(sinkfake_txn_calls(r->fake, SINK_TXN_INIT), 1);
}

static void rig_up(struct workerrig *r, int records)
{
	rig_up_with(r, records, 2000);
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

/* Offset records the fake got (token NULL, on the offsets topic). */
static int offset_records(struct sinkfake *fake, const char *key)
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
	struct workerrig r;
	struct loop_fd *watch = NULL;
	struct loop_timer *timer = NULL;
	int pfd[2], draining = 0, served_draining = 0, fired_draining = 0, polls;
	size_t next = 0;

	served = fired = 0;
	rig_up(&r, 5);
	CHECK_INT(pipe2(pfd, O_NONBLOCK | O_CLOEXEC), 0);
	CHECK_INT(loop_fd_add(r.wk->loop, pfd[0], POLLIN, on_pipe, NULL, &watch), 0);
	CHECK_INT(loop_timer_add(r.wk->loop, -1, 0, on_timer, NULL, &timer), 0);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 5);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_BEGIN), 1);
	sinkfake_txn_answer(r.fake, SINK_TXN_PENDING, 5);
	polls = r.sc.polls;
	for (int i = 0; i < 200 && (draining == 0 || eos_state(r.wk->eos) != EOS_IDLE); i++) {
		bool was = eos_state(r.wk->eos) == EOS_DRAINING;
		int s0 = served, f0 = fired;

		if (was) {
			/* Another client's request and timer, while it drains. */
			CHECK_INT((int)write(pfd[1], "x", 1), 1);
			loop_timer_set(timer, loop_now_ms(), 0);
			draining++;
			CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL); /* not before the commit */
			CHECK(eos_blocks(r.wk->eos));
			CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 0);
		}
		if (was && next < 5)
			sinkfake_deliver(r.fake, next++, SINK_DELIVERED, NULL);
		CHECK_INT(workerrig_turn(&r), 0);
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
	CHECK_INT(r.sc.polls, polls);
	CHECK_INT(eos_state(r.wk->eos), EOS_IDLE);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 6);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_ABORT), 0);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":5}");
	CHECK_INT(offset_records(r.fake, WORKERRIG_KEY), 1);
	/* Stored once: nothing more to commit, no second offset record. */
	CHECK_INT(workerrig_turns(&r, 20), 0);
	CHECK_INT(offset_records(r.fake, WORKERRIG_KEY), 1);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 6);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_BEGIN), 1);
	loop_fd_del(r.wk->loop, watch);
	loop_timer_del(r.wk->loop, timer);
	close(pfd[0]);
	close(pfd[1]);
	workerrig_down(&r);
}

static void test_failed_record_aborts(void)
{
	struct workerrig r;
	int code = 0;

	rig_up(&r, 3);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 3);
	sinkfake_deliver(r.fake, 0, SINK_DELIVERED, NULL);
	sinkfake_deliver(r.fake, 1, SINK_FAILED, "Local: Message timed out");
	sinkfake_deliver(r.fake, 2, SINK_DELIVERED, NULL);
	for (int i = 0; i < 50 && code == 0; i++)
		code = workerrig_turn(&r);
	CHECK_INT(code, WORKER_EXIT_TEMPFAIL);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_ABORT), 1);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 0);
	CHECK_INT(offset_records(r.fake, WORKERRIG_KEY), 0);
	CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL);
	/* From then on the worker is to exit, with the same code. */
	CHECK_INT(workerrig_turn(&r), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(worker_eos_settle(r.wk), WORKER_EXIT_TEMPFAIL);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_ABORT), 1);
	workerrig_down(&r);
}

/* Records never acknowledged: the drain's deadline (6 x
 * offset.flush.timeout.ms, a loop timer) aborts, exit 75, turns returning
 * meanwhile. */
static void test_drain_deadline_aborts(void)
{
	struct workerrig r;
	int code = 0, waiting = 0;

	rig_up_with(&r, 3, 50);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 3);
	for (int i = 0; i < 2000 && code == 0; i++) {
		code = workerrig_turn(&r);
		waiting += code == 0 && eos_state(r.wk->eos) == EOS_DRAINING;
	}
	CHECK_INT(code, WORKER_EXIT_TEMPFAIL);
	CHECK(waiting >= 2);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_ABORT), 1);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 0);
	CHECK(offsets_get(r.o, WORKERRIG_KEY) == NULL);
	workerrig_down(&r);
}

/* A stop's boundary: the open transaction drains and commits (pending
 * twice) through the loop before the stop goes on. */
static void test_settle_runs_the_loop_until_committed(void)
{
	struct workerrig r;

	rig_up(&r, 3);
	CHECK_INT(workerrig_turns(&r, 3), 0);
	CHECK_INT(sinkfake_count(r.fake), 3);
	sinkfake_deliver_all(r.fake);
	sinkfake_txn_answer(r.fake, SINK_TXN_PENDING, 2);
	CHECK_INT(worker_eos_settle(r.wk), 0);
	CHECK(eos_idle(r.wk->eos));
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 3);
	CHECK_STR(offsets_get(r.o, WORKERRIG_KEY), "{\"position\":3}");
	CHECK_INT(offset_records(r.fake, WORKERRIG_KEY), 1);
	/* Nothing held: a second boundary commits nothing. */
	CHECK_INT(worker_eos_settle(r.wk), 0);
	CHECK_INT(sinkfake_txn_calls(r.fake, SINK_TXN_COMMIT), 3);
	workerrig_down(&r);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	test_drain_serves_the_loop();
	test_failed_record_aborts();
	test_drain_deadline_aborts();
	test_settle_runs_the_loop_until_committed();
	workerrig_cleanup();
	return testlib_done("test_eos");
}
