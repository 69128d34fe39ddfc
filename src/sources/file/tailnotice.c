/* tailnotice: the inotify and the poll backend (see tailnotice.h). */
#include "sources/file/tailnotice.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define DIR_MASK                                                                                   \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MOVE_SELF | IN_DELETE_SELF |     \
	 IN_ONLYDIR)
#define FILE_MASK (IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF)

struct tailnotice {
	int fd;                /* the inotify descriptor; -1 for poll */
	int64_t pass_ms, next; /* poll: the stat passes' period, the next one */
};

/* ---- inotify ------------------------------------------------------------ */

static int in_open(struct tailnotice **out, int64_t pass_ms, char *errbuf, size_t errlen)
{
	struct tailnotice *n = calloc(1, sizeof(*n));

	(void)pass_ms;
	*out = NULL;
	if (n == NULL) {
		snprintf(errbuf, errlen, "inotify: %s", strerror(ENOMEM));
		return TAILNOTICE_ERR_NOMEM;
	}
	if ((n->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		snprintf(errbuf, errlen, "inotify: %s (watch.mode=poll works without it)",
		         strerror(errno));
		free(n);
		return TAILNOTICE_ERR_SYSTEM;
	}
	*out = n;
	return TAILNOTICE_OK;
}

static int in_fds(const struct tailnotice *n, struct pollfd *out, int max)
{
	if (max < 1)
		return 0;
	out[0] = (struct pollfd){.fd = n->fd, .events = POLLIN};
	return 1;
}

static int64_t in_deadline(const struct tailnotice *n)
{
	(void)n;
	return -1;
}

static int in_watch_dir(struct tailnotice *n, const char *dir, bool writes)
{
	return inotify_add_watch(n->fd, dir, DIR_MASK | (writes ? IN_MODIFY : 0));
}

static int in_watch_file(struct tailnotice *n, const char *path)
{
	return inotify_add_watch(n->fd, path, FILE_MASK);
}

static void in_unwatch(struct tailnotice *n, int handle)
{
	inotify_rm_watch(n->fd, handle);
}

/* An inotify mask in tailnotice's terms. */
static unsigned what_of(uint32_t mask)
{
	unsigned what = 0;

	if (mask & IN_Q_OVERFLOW)
		return TAILNOTICE_OVERFLOW;
	if (mask & (IN_CREATE | IN_MOVED_TO))
		what |= TAILNOTICE_NAME_IN;
	if (mask & IN_CREATE)
		what |= TAILNOTICE_CREATED;
	if (mask & IN_ISDIR)
		what |= TAILNOTICE_ISDIR;
	if (mask & IN_MODIFY)
		what |= TAILNOTICE_WRITE;
	if (mask & IN_ATTRIB)
		what |= TAILNOTICE_ATTRIB;
	if (mask & IN_DELETE_SELF)
		what |= TAILNOTICE_GONE;
	if (mask & IN_IGNORED)
		what |= TAILNOTICE_DROPPED;
	if (mask & IN_MOVE_SELF)
		what |= TAILNOTICE_MOVED;
	return what;
}

static void in_drain(struct tailnotice *n, int64_t now, tailnotice_fn fn, void *arg)
{
	char evbuf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t got;

	(void)now;
	while ((got = read(n->fd, evbuf, sizeof(evbuf))) > 0) {
		for (char *p = evbuf; p < evbuf + got;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			fn(arg, ev->wd, ev->len > 0 ? ev->name : NULL, what_of(ev->mask));
			p += sizeof(*ev) + ev->len;
		}
	}
}

static void in_close(struct tailnotice *n)
{
	if (n == NULL)
		return;
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}

const struct tailnotice_ops tailnotice_inotify = {
    .hears = true,
    .open = in_open,
    .fds = in_fds,
    .deadline = in_deadline,
    .watch_dir = in_watch_dir,
    .watch_file = in_watch_file,
    .unwatch = in_unwatch,
    .drain = in_drain,
    .close = in_close,
};

/* ---- poll: hears nothing; the connector's stat passes do the work ------- */

static int poll_open(struct tailnotice **out, int64_t pass_ms, char *errbuf, size_t errlen)
{
	struct tailnotice *n = calloc(1, sizeof(*n));

	if ((*out = n) == NULL) {
		snprintf(errbuf, errlen, "poll: %s", strerror(ENOMEM));
		return TAILNOTICE_ERR_NOMEM;
	}
	n->fd = -1;
	n->pass_ms = pass_ms;
	n->next = 0; /* the first drain makes a pass */
	return TAILNOTICE_OK;
}

static int poll_fds(const struct tailnotice *n, struct pollfd *out, int max)
{
	(void)n, (void)out, (void)max;
	return 0;
}

static int64_t poll_deadline(const struct tailnotice *n)
{
	return n->next;
}

static int poll_watch_dir(struct tailnotice *n, const char *dir, bool writes)
{
	(void)n, (void)dir, (void)writes;
	errno = ENOTSUP;
	return -1;
}

static int poll_watch_file(struct tailnotice *n, const char *path)
{
	(void)n, (void)path;
	errno = ENOTSUP;
	return -1;
}

static void poll_unwatch(struct tailnotice *n, int handle)
{
	(void)n, (void)handle;
}

static void poll_drain(struct tailnotice *n, int64_t now, tailnotice_fn fn, void *arg)
{
	if (now < n->next)
		return;
	n->next = now + n->pass_ms;
	fn(arg, -1, NULL, TAILNOTICE_PASS);
}

const struct tailnotice_ops tailnotice_poll = {
    .hears = false,
    .open = poll_open,
    .fds = poll_fds,
    .deadline = poll_deadline,
    .watch_dir = poll_watch_dir,
    .watch_file = poll_watch_file,
    .unwatch = poll_unwatch,
    .drain = poll_drain,
    .close = in_close,
};
