/* Unit tests for loop.c: descriptors, timers, removal during callbacks, the
 * computed timeout, and no fixed cap on registrations. */
#include "core/loop.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[256];

/* poll() through -Wl,--wrap=poll (test_loop.cmake): the next fail_polls
 * calls fail with fail_errno instead. */
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
static int fail_polls, fail_errno;
static int polls, last_timeout; /* poll() calls, and the last one's timeout */

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	polls++;
	last_timeout = timeout;
	if (fail_polls > 0) {
		fail_polls--;
		errno = fail_errno;
		return -1;
	}
	return __real_poll(fds, n, timeout);
}

struct hits {
	int n;
	int last_fd;
	int revents;
};

static void on_fd(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	struct hits *h = arg;
	char buf[64];

	h->n++;
	h->last_fd = fd;
	h->revents = revents;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void on_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	(*(int *)arg)++;
}

static void mkpipe(int p[2])
{
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0)
		abort();
}

static void test_fds(void)
{
	struct loop *l = NULL;
	struct loop_fd *a, *b;
	struct hits ha = {0}, hb = {0};
	int pa[2], pb[2], t = 0;
	struct loop_timer *tick;

	mkpipe(pa);
	mkpipe(pb);
	CHECK_INT(loop_new(&l), 0);
	CHECK_INT(loop_fd_add(l, pa[0], POLLIN, on_fd, &ha, &a), 0);
	CHECK_INT(loop_fd_add(l, pb[0], POLLIN, on_fd, &hb, &b), 0);
	/* Only the readable one is called back. */
	CHECK(write(pb[1], "x", 1) == 1);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(ha.n == 0 && hb.n == 1 && hb.last_fd == pb[0] && (hb.revents & POLLIN));
	/* Events 0: registered but not watched (a blocked worker's sources). */
	loop_fd_set(b, pb[0], 0);
	CHECK(write(pb[1], "x", 1) == 1);
	CHECK_INT(loop_timer_add(l, loop_now_ms() + 30, 0, on_timer, &t, &tick), 0);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(hb.n == 1 && t == 1);
	/* Enabled again, and moved to another descriptor. */
	loop_fd_set(b, pa[0], POLLIN);
	CHECK(write(pa[1], "y", 1) == 1);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(hb.n == 2 && hb.last_fd == pa[0]);
	loop_fd_del(l, a);
	loop_fd_del(l, b);
	loop_fd_del(l, NULL);
	loop_destroy(l);
	for (int i = 0; i < 2; i++) {
		close(pa[i]);
		close(pb[i]);
	}
}

/* Two watches on readable pipes; the first callback deletes the second,
 * which must not be called back (and must not be read after it is freed:
 * the sanitizer build would say so). */
struct victim {
	struct loop_fd *other;
	int calls;
};

static void on_fd_delete_other(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	struct victim *v = arg;

	v->calls++;
	if (v->other != NULL) {
		loop_fd_del(l, v->other);
		v->other = NULL;
	}
}

static void on_fd_delete_self(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	(*(int *)arg)++;
	loop_fd_del(l, w);
}

static void test_delete_during_callbacks(void)
{
	struct loop *l = NULL;
	struct loop_fd *first, *second, *self;
	struct victim v1 = {0}, v2 = {0};
	int p[2], selfcalls = 0;

	mkpipe(p);
	CHECK(write(p[1], "z", 1) == 1); /* stays readable: nobody reads it */
	CHECK_INT(loop_new(&l), 0);
	CHECK_INT(loop_fd_add(l, p[0], POLLIN, on_fd_delete_other, &v1, &first), 0);
	CHECK_INT(loop_fd_add(l, p[0], POLLIN, on_fd_delete_other, &v2, &second), 0);
	CHECK_INT(loop_fd_add(l, p[0], POLLIN, on_fd_delete_self, &selfcalls, &self), 0);
	v1.other = second;
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(v1.calls == 1 && v2.calls == 0 && selfcalls == 1);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(v1.calls == 2 && v2.calls == 0 && selfcalls == 1);
	loop_destroy(l);
	close(p[0]);
	close(p[1]);
}

struct chain {
	struct loop_timer *other;
	int calls;
};

static void on_timer_delete_other(struct loop *l, struct loop_timer *t, void *arg)
{
	struct chain *c = arg;

	c->calls++;
	loop_timer_del(l, c->other);
	c->other = NULL;
}

static void test_timers(void)
{
	struct loop *l = NULL;
	struct loop_timer *once, *every, *a, *b, *off;
	struct chain ca = {0}, cb = {0};
	int n_once = 0, n_every = 0, n_off = 0;
	int64_t start;

	CHECK_INT(loop_new(&l), 0);
	start = loop_now_ms();
	CHECK_INT(loop_timer_add(l, start + 20, 0, on_timer, &n_once, &once), 0);
	CHECK_INT(loop_timer_add(l, start + 10, 10, on_timer, &n_every, &every), 0);
	CHECK_INT(loop_timer_add(l, -1, 0, on_timer, &n_off, &off), 0);
	while (n_once == 0)
		CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(loop_now_ms() - start >= 20);
	CHECK(n_every >= 1 && n_off == 0);
	/* A one-shot timer that fired is disarmed, not deleted. */
	CHECK_INT(loop_timer_when(once), -1);
	CHECK(loop_timer_when(every) > start + 10);
	loop_timer_set(once, loop_now_ms(), 0);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK_INT(n_once, 2);
	loop_timer_del(l, every);
	loop_timer_del(l, once);
	/* Two due timers; the first deletes the second, which is not called. */
	CHECK_INT(loop_timer_add(l, 0, 0, on_timer_delete_other, &ca, &a), 0);
	CHECK_INT(loop_timer_add(l, 0, 0, on_timer_delete_other, &cb, &b), 0);
	ca.other = b;
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(ca.calls == 1 && cb.calls == 0);
	loop_timer_del(l, off);
	loop_destroy(l);
}

static void test_timeout(void)
{
	struct loop *l = NULL;
	struct loop_timer *t1, *t2, *t3;
	int n = 0;

	CHECK_INT(loop_new(&l), 0);
	CHECK_INT(loop_timeout(l, 1000), -1); /* nothing armed: wait for a descriptor */
	CHECK_INT(loop_timer_add(l, -1, 0, on_timer, &n, &t1), 0);
	CHECK_INT(loop_timeout(l, 1000), -1);
	CHECK_INT(loop_timer_add(l, 1500, 0, on_timer, &n, &t2), 0);
	CHECK_INT(loop_timeout(l, 1000), 500);
	CHECK_INT(loop_timer_add(l, 1200, 0, on_timer, &n, &t3), 0);
	CHECK_INT(loop_timeout(l, 1000), 200);
	CHECK_INT(loop_timeout(l, 1300), 0); /* overdue: at once */
	loop_timer_set(t1, 1000 + 10LL * LOOP_MAX_WAIT_MS, 0);
	loop_timer_set(t2, -1, 0);
	loop_timer_set(t3, -1, 0);
	CHECK_INT(loop_timeout(l, 1000), LOOP_MAX_WAIT_MS);
	loop_timer_del(l, t3);
	loop_timer_set(t2, 1001, 0);
	CHECK_INT(loop_timeout(l, 1000), 1);
	loop_destroy(l);
}

/* No fixed cap: far more watches and timers than any table used to hold. */
static void test_no_cap(void)
{
	enum { N = 3000 };
	struct loop *l = NULL;
	struct loop_fd **w = calloc(N, sizeof(*w));
	struct loop_timer **t = calloc(N, sizeof(*t));
	struct hits h = {0};
	int p[2], fired = 0, rc = 0;

	mkpipe(p);
	CHECK_INT(loop_new(&l), 0);
	for (int i = 0; i < N && rc == 0; i++) {
		rc = loop_fd_add(l, p[0], i == N - 1 ? POLLIN : 0, on_fd, &h, &w[i]);
		if (rc == 0)
			rc = loop_timer_add(l, i == N - 1 ? 0 : -1, 0, on_timer, &fired, &t[i]);
	}
	CHECK_INT(rc, 0);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK_INT(loop_once(l, err, sizeof(err)), 0);
	CHECK(h.n == 1 && fired == 1);
	for (int i = 0; i < N; i += 2) {
		loop_fd_del(l, w[i]);
		loop_timer_del(l, t[i]);
	}
	loop_destroy(l);
	free(w);
	free(t);
	close(p[0]);
	close(p[1]);
	CHECK(loop_strerror(LOOP_ERR_NOMEM) != NULL);
}

/* A poll() interrupted by a signal, or by ptrace (a debugger attached:
 * the kernel's ERESTART_RESTARTBLOCK, 516, leaks to user space when a
 * restart block cannot be restarted), is a turn with no descriptor ready,
 * not a failure: skiff once exited 75 with gdb attached. Any other error
 * fails the turn, naming it. */
static void test_interrupted_poll(void)
{
	struct loop *l = NULL;
	struct loop_timer *tick;
	struct loop_fd *a;
	int pa[2], t = 0;
	struct hits h = {0};

	mkpipe(pa);
	CHECK_INT(loop_new(&l), 0);
	CHECK_INT(loop_fd_add(l, pa[0], POLLIN, on_fd, &h, &a), 0);
	CHECK_INT(loop_timer_add(l, loop_now_ms(), 0, on_timer, &t, &tick), 0);
	CHECK(write(pa[1], "x", 1) == 1);
	fail_polls = 1;
	fail_errno = EINTR;
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK(h.n == 0); /* no descriptor taken as ready */
	CHECK(t == 1);   /* timers due still fire */
	fail_polls = 1;
	fail_errno = 516;
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK(h.n == 0);
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK(h.n == 1); /* the next turn sees it */
	fail_polls = 1;
	fail_errno = EBADF;
	CHECK(loop_once(l, err, sizeof(err)) == LOOP_ERR);
	CHECK(strstr(err, "poll: ") != NULL);
	loop_destroy(l);
	close(pa[0]);
	close(pa[1]);
}

/* A turn hook's state: calls, and what it does at its next call. */
static struct hooked {
	int calls;
	struct loop_timer *arm; /* armed due now */
	bool del_self;
	int polls_at_call; /* polls seen when it was last called */
} hk;

static void on_hook(struct loop *l, struct loop_hook *h, void *arg)
{
	CHECK(arg == &hk);
	hk.calls++;
	hk.polls_at_call = polls;
	if (hk.arm != NULL) {
		loop_timer_set(hk.arm, loop_now_ms(), 0);
		hk.arm = NULL;
	}
	if (hk.del_self)
		loop_hook_del(l, h);
}

/* A turn hook runs once a turn, before the sleep: a timer it arms counts
 * for that very poll; it wakes nothing by itself (an idle loop polls once a
 * timer's period, hook or not); deleted, it is called no more. */
static void test_turn_hook(void)
{
	struct loop *l = NULL;
	struct loop_timer *soon = NULL, *slow = NULL;
	struct loop_hook *h = NULL;
	int fired = 0, slow_fired = 0, p0;

	memset(&hk, 0, sizeof(hk));
	CHECK(loop_new(&l) == 0);
	CHECK(loop_timer_add(l, -1, 0, on_timer, &fired, &soon) == 0);
	CHECK(loop_timer_add(l, loop_now_ms() + 30, 30, on_timer, &slow_fired, &slow) == 0);
	CHECK(loop_hook_add(l, on_hook, &hk, &h) == 0);
	hk.arm = soon;
	p0 = polls;
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK_INT(hk.calls, 1);
	CHECK_INT(hk.polls_at_call, p0); /* before the poll */
	CHECK_INT(polls, p0 + 1);
	CHECK_INT(last_timeout, 0); /* the timer it armed */
	CHECK_INT(fired, 1);
	/* Idle: each turn sleeps until the slow timer, one poll each. */
	for (int i = 0; i < 3; i++)
		CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK_INT(hk.calls, 4);
	CHECK_INT(polls, p0 + 4);
	CHECK(slow_fired >= 3);
	hk.del_self = true;
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK_INT(hk.calls, 5);
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK_INT(hk.calls, 5);
	/* Deleted from outside, between turns. */
	memset(&hk, 0, sizeof(hk));
	CHECK(loop_hook_add(l, on_hook, &hk, &h) == 0);
	loop_hook_del(l, h);
	CHECK(loop_once(l, err, sizeof(err)) == 0);
	CHECK_INT(hk.calls, 0);
	loop_destroy(l);
}

int main(void)
{
	test_fds();
	test_delete_during_callbacks();
	test_timers();
	test_timeout();
	test_no_cap();
	test_interrupted_poll();
	test_turn_hook();
	return testlib_done("test_loop");
}
