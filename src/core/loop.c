/* loop: descriptors and timers around one poll(2); see loop.h.
 *
 * Handles live in two growable arrays of pointers, in the order they were
 * added. Deleting during a turn only marks the handle dead (its callback is
 * never called again); dead handles are freed and the arrays compacted when
 * the turn ends, so a callback that deletes its neighbour cannot make the
 * dispatch read freed memory. The pollfd array is rebuilt every turn from the
 * enabled watches: a handful of descriptors, cheaper than tracking changes. */
#include "core/loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct loop_fd {
	int fd;
	short events;
	bool dead;
	loop_fd_fn fn;
	void *arg;
};

struct loop_hook {
	bool dead;
	loop_hook_fn fn;
	void *arg;
};

struct loop_timer {
	int64_t when; /* -1: disarmed */
	int64_t period;
	bool dead;
	loop_timer_fn fn;
	void *arg;
};

struct loop {
	struct loop_fd **fds;
	size_t nfds, capfds;
	struct loop_timer **timers;
	size_t ntimers, captimers;
	struct loop_hook **hooks;
	size_t nhooks, caphooks;
	struct pollfd *pfds;   /* this turn's poll set ... */
	struct loop_fd **pmap; /* ... and the watch of each entry */
	size_t cappfds;
	bool in_turn;
	bool has_dead;
};

int64_t loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int loop_new(struct loop **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? 0 : LOOP_ERR_NOMEM;
}

/* arr (n of *cap entries of size bytes) with room for one more: arr itself,
 * a larger copy (*cap updated), or NULL when out of memory (arr intact). */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return arr;
	p = realloc(arr, ncap * size);
	if (p != NULL)
		*cap = ncap;
	return p;
}

int loop_fd_add(struct loop *l, int fd, short events, loop_fd_fn fn, void *arg,
                struct loop_fd **out)
{
	struct loop_fd **fds = grow(l->fds, l->nfds, &l->capfds, sizeof(*fds)), *w;

	*out = NULL;
	if (fds == NULL)
		return LOOP_ERR_NOMEM;
	l->fds = fds;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return LOOP_ERR_NOMEM;
	*w = (struct loop_fd){.fd = fd, .events = events, .fn = fn, .arg = arg};
	l->fds[l->nfds++] = w;
	*out = w;
	return 0;
}

void loop_fd_set(struct loop_fd *w, int fd, short events)
{
	w->fd = fd;
	w->events = events;
}

int loop_timer_add(struct loop *l, int64_t when_ms, int64_t period_ms, loop_timer_fn fn, void *arg,
                   struct loop_timer **out)
{
	struct loop_timer **timers = grow(l->timers, l->ntimers, &l->captimers, sizeof(*timers)),
	                  *t;

	*out = NULL;
	if (timers == NULL)
		return LOOP_ERR_NOMEM;
	l->timers = timers;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return LOOP_ERR_NOMEM;
	*t = (struct loop_timer){.when = when_ms, .period = period_ms, .fn = fn, .arg = arg};
	l->timers[l->ntimers++] = t;
	*out = t;
	return 0;
}

int loop_hook_add(struct loop *l, loop_hook_fn fn, void *arg, struct loop_hook **out)
{
	struct loop_hook **hooks = grow(l->hooks, l->nhooks, &l->caphooks, sizeof(*hooks)), *h;

	*out = NULL;
	if (hooks == NULL)
		return LOOP_ERR_NOMEM;
	l->hooks = hooks;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return LOOP_ERR_NOMEM;
	*h = (struct loop_hook){.fn = fn, .arg = arg};
	l->hooks[l->nhooks++] = h;
	*out = h;
	return 0;
}

void loop_timer_set(struct loop_timer *t, int64_t when_ms, int64_t period_ms)
{
	t->when = when_ms;
	t->period = period_ms;
}

int64_t loop_timer_when(const struct loop_timer *t)
{
	return t->when;
}

/* Frees the dead handles and closes the gaps, keeping the order. */
static void reap(struct loop *l)
{
	size_t j = 0;

	for (size_t i = 0; i < l->nfds; i++) {
		if (l->fds[i]->dead)
			free(l->fds[i]);
		else
			l->fds[j++] = l->fds[i];
	}
	l->nfds = j;
	j = 0;
	for (size_t i = 0; i < l->ntimers; i++) {
		if (l->timers[i]->dead)
			free(l->timers[i]);
		else
			l->timers[j++] = l->timers[i];
	}
	l->ntimers = j;
	j = 0;
	for (size_t i = 0; i < l->nhooks; i++) {
		if (l->hooks[i]->dead)
			free(l->hooks[i]);
		else
			l->hooks[j++] = l->hooks[i];
	}
	l->nhooks = j;
	l->has_dead = false;
}

void loop_fd_del(struct loop *l, struct loop_fd *w)
{
	if (w == NULL)
		return;
	w->dead = true;
	w->events = 0;
	l->has_dead = true;
	if (!l->in_turn)
		reap(l);
}

void loop_timer_del(struct loop *l, struct loop_timer *t)
{
	if (t == NULL)
		return;
	t->dead = true;
	t->when = -1;
	l->has_dead = true;
	if (!l->in_turn)
		reap(l);
}

void loop_hook_del(struct loop *l, struct loop_hook *h)
{
	if (h == NULL)
		return;
	h->dead = true;
	l->has_dead = true;
	if (!l->in_turn)
		reap(l);
}

int loop_timeout(const struct loop *l, int64_t now_ms)
{
	int64_t t = -1;

	for (size_t i = 0; i < l->ntimers; i++) {
		int64_t when = l->timers[i]->when, d;

		if (when < 0)
			continue;
		d = when > now_ms ? when - now_ms : 0;
		if (t < 0 || d < t)
			t = d;
	}
	return t > LOOP_MAX_WAIT_MS ? LOOP_MAX_WAIT_MS : (int)t;
}

/* Fills this turn's poll set from the enabled watches. */
static int build(struct loop *l, nfds_t *n)
{
	*n = 0;
	if (l->nfds > l->cappfds) {
		struct pollfd *p = realloc(l->pfds, l->nfds * sizeof(*p));
		struct loop_fd **m;

		if (p == NULL)
			return LOOP_ERR_NOMEM;
		l->pfds = p;
		m = realloc(l->pmap, l->nfds * sizeof(*m));
		if (m == NULL)
			return LOOP_ERR_NOMEM;
		l->pmap = m;
		l->cappfds = l->nfds;
	}
	for (size_t i = 0; i < l->nfds; i++) {
		struct loop_fd *w = l->fds[i];

		if (w->events == 0)
			continue;
		l->pfds[*n] = (struct pollfd){.fd = w->fd, .events = w->events};
		l->pmap[(*n)++] = w;
	}
	return 0;
}

static void fire_fds(struct loop *l, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++) {
		struct loop_fd *w = l->pmap[i];

		/* Deleted or disabled by an earlier callback of this turn. */
		if (l->pfds[i].revents == 0 || w->dead || w->events == 0)
			continue;
		w->fn(l, w, w->fd, l->pfds[i].revents, w->arg);
	}
}

/* Calls back the timers due at now; a timer added by a callback waits for
 * the next turn. */
static void fire_timers(struct loop *l, int64_t now)
{
	size_t n = l->ntimers;

	for (size_t i = 0; i < n; i++) {
		struct loop_timer *t = l->timers[i];

		if (t->dead || t->when < 0 || t->when > now)
			continue;
		if (t->period > 0) {
			t->when += t->period;
			if (t->when <= now) /* fell behind: no burst of catch-up calls */
				t->when = now + t->period;
		} else {
			t->when = -1;
		}
		t->fn(l, t, t->arg);
	}
}

/* The kernel's ERESTART_RESTARTBLOCK (include/linux/errno.h), internal,
 * but seen by user space when a debugger attaches (ptrace) while poll()
 * sleeps: an interruption like EINTR. Taken as a failure, skiff exited 75
 * under gdb. */
#define LOOP_ERESTART_RESTARTBLOCK 516

/* True when poll() failed only because something interrupted it: the
 * turn goes on with no descriptor ready. */
static bool interrupted(int err)
{
	return err == EINTR || err == LOOP_ERESTART_RESTARTBLOCK;
}

/* Calls the turn hooks; one added by a hook waits for the next turn. */
static void run_hooks(struct loop *l)
{
	size_t n = l->nhooks;

	if (n == 0)
		return;
	l->in_turn = true;
	for (size_t i = 0; i < n; i++)
		if (!l->hooks[i]->dead)
			l->hooks[i]->fn(l, l->hooks[i], l->hooks[i]->arg);
	l->in_turn = false;
	if (l->has_dead)
		reap(l);
}

int loop_once(struct loop *l, char *errbuf, size_t errlen)
{
	nfds_t n;
	int rc;

	run_hooks(l);
	rc = build(l, &n);
	if (rc != 0) {
		snprintf(errbuf, errlen, "loop: %s", loop_strerror(rc));
		return rc;
	}
	if (poll(l->pfds, n, loop_timeout(l, loop_now_ms())) < 0) {
		if (!interrupted(errno)) {
			snprintf(errbuf, errlen, "poll: %s", strerror(errno));
			return LOOP_ERR;
		}
		n = 0;
	}
	l->in_turn = true;
	fire_fds(l, n);
	fire_timers(l, loop_now_ms());
	l->in_turn = false;
	if (l->has_dead)
		reap(l);
	return 0;
}

const char *loop_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case LOOP_ERR:
		return "poll failed";
	case LOOP_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown loop error";
	}
}

void loop_destroy(struct loop *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->nfds; i++)
		free(l->fds[i]);
	for (size_t i = 0; i < l->ntimers; i++)
		free(l->timers[i]);
	for (size_t i = 0; i < l->nhooks; i++)
		free(l->hooks[i]);
	free(l->fds);
	free(l->timers);
	free(l->hooks);
	free(l->pfds);
	free(l->pmap);
	free(l);
}
