/* loop: the one poll(2) loop, where anything that waits registers (in the
 * spirit of redis ae.c).
 *
 * A descriptor is registered with the events it waits for (POLLIN, POLLOUT)
 * and a callback; a timer with a monotonic deadline in ms, one-shot or
 * periodic, and a callback; a turn hook with a callback. loop_once() calls
 * the turn hooks, computes one timeout from the armed timers, sleeps in one
 * poll(2) over the enabled descriptors, then calls back every descriptor
 * that is ready and every timer that is due. Nothing is capped: the tables
 * grow, and a registration that cannot grow fails with LOOP_ERR_NOMEM.
 *
 * Ownership: the loop owns its watch, timer and hook handles (freed by
 * loop_fd_del, loop_timer_del, loop_hook_del or loop_destroy); the registrant owns the
 * descriptor (the loop never closes it) and whatever arg points to. A
 * callback may add, change or delete any registration, itself included: a
 * deleted handle is never called again and is freed once the turn ends.
 *
 * Single-threaded: every function is called from the main loop's thread,
 * and every callback runs there, from inside loop_once(). Error convention:
 * util/err.h. */
#ifndef SKIFF_LOOP_H
#define SKIFF_LOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	LOOP_OK = 0,
	LOOP_ERR = -1,       /* poll(2) failed (not EINTR) */
	LOOP_ERR_NOMEM = -2, /* a table could not grow */
};

/* The longest single poll(2) sleep when a timer is armed further ahead. */
#define LOOP_MAX_WAIT_MS 3600000

struct loop;
struct loop_fd;
struct loop_hook;
struct loop_timer;

/* revents as poll(2) gave them (POLLIN, POLLHUP, POLLERR, POLLNVAL...). */
typedef void (*loop_fd_fn)(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg);
typedef void (*loop_timer_fn)(struct loop *l, struct loop_timer *t, void *arg);
typedef void (*loop_hook_fn)(struct loop *l, struct loop_hook *h, void *arg);

/* Creates an empty loop. Returns 0 and *out (loop_destroy), or LOOP_ERR_NOMEM. */
int loop_new(struct loop **out);

/* Frees every handle (no callback runs). Accepts NULL. */
void loop_destroy(struct loop *l);

/* The monotonic clock in ms, the time base of every timer. */
int64_t loop_now_ms(void);

/* Watches fd for events (0: registered but left out of poll(2) until
 * loop_fd_set enables it). Returns 0 and *out, or LOOP_ERR_NOMEM. */
int loop_fd_add(struct loop *l, int fd, short events, loop_fd_fn fn, void *arg,
                struct loop_fd **out);

/* Changes the descriptor and events of w (events 0: not watched). */
void loop_fd_set(struct loop_fd *w, int fd, short events);

/* Unregisters w. Accepts NULL. */
void loop_fd_del(struct loop *l, struct loop_fd *w);

/* A timer due at when_ms (loop_now_ms time base; -1: disarmed), and again
 * every period_ms after it when period_ms > 0. A one-shot timer that fired is
 * disarmed, not deleted: its handle stays valid for loop_timer_set.
 * Returns 0 and *out, or LOOP_ERR_NOMEM. */
int loop_timer_add(struct loop *l, int64_t when_ms, int64_t period_ms, loop_timer_fn fn, void *arg,
                   struct loop_timer **out);

/* Re-arms t (when_ms -1: disarms it). */
void loop_timer_set(struct loop_timer *t, int64_t when_ms, int64_t period_ms);

/* When t is due next, or -1 when disarmed. */
int64_t loop_timer_when(const struct loop_timer *t);

/* Unregisters t. Accepts NULL. */
void loop_timer_del(struct loop *l, struct loop_timer *t);

/* A turn hook: fn is called once in every loop_once, first, before the
 * timeout is computed and poll(2) sleeps: after everything the turn before
 * did, its callbacks and what the caller did between two loop_once calls
 * (for a client that looks at what changed, e.g. query_ops.state_epoch,
 * instead of polling on a timer). It wakes nothing by itself: an idle loop
 * sleeps as long with hooks as without. fn may add, change or delete any
 * registration (a timer it arms, a descriptor it enables count for this
 * very sleep). Hooks are called in the order they were added. Returns 0
 * and *out, or LOOP_ERR_NOMEM. */
int loop_hook_add(struct loop *l, loop_hook_fn fn, void *arg, struct loop_hook **out);

/* Unregisters h. Accepts NULL. */
void loop_hook_del(struct loop *l, struct loop_hook *h);

/* How long poll(2) would sleep at now_ms: 0 when a timer is due, else the
 * time to the nearest armed timer (at most LOOP_MAX_WAIT_MS), else -1 (no
 * timer armed: only a descriptor ends the wait). */
int loop_timeout(const struct loop *l, int64_t now_ms);

/* One turn: the turn hooks, one poll(2) with loop_timeout(), then the
 * callbacks of ready descriptors, then those of due timers (in the order
 * they were added).
 * EINTR counts as a turn with nothing ready. Returns 0, or LOOP_ERR with
 * errbuf "poll: why". */
int loop_once(struct loop *l, char *errbuf, size_t errlen);

/* Short text for a LOOP_ERR_* code. */
const char *loop_strerror(int err);

#endif
