/* status_sock: `skiff status` is served from the loop through a unix
 * socket, skiff.sock in the state directory (the offsets file's directory).
 * It is created 0600 (umask 0177 around bind): only the service user (and
 * root) can connect. Whoever connects gets a short human summary and the
 * connection is closed; the first line says "healthy" or "UNHEALTHY: why"
 * (health_check), which the client turns into its exit code. The summary
 * is at most STATUS_MAX bytes and written at once (non-blocking; a client
 * that does not read gets what fitted). A stale socket of a dead skiff is
 * replaced: the offsets lock is held, so no other skiff serves this
 * directory. Main thread only. */
#include "control/status_sock.h"

#include "control/health.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/query.h"
#include "core/stats.h"
#include "offsets/offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define STATUS_MAX 16384

struct status_sock {
	const struct query *q;
	struct health *health;
	struct loop *loop;
	int fd;
	struct loop_fd *watch;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

const char *status_sock_strerror(int rc)
{
	switch (rc) {
	case STATUS_SOCK_OK:
		return "ok";
	case STATUS_SOCK_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown status socket error";
	}
}

struct out {
	char buf[STATUS_MAX];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= sizeof(o->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len +=
		    (size_t)n < sizeof(o->buf) - o->len ? (size_t)n : sizeof(o->buf) - o->len - 1;
}

static void put_ago(struct out *o, const char *what, int64_t when_ms, int64_t now)
{
	if (when_ms <= 0)
		put(o, "%s never", what);
	else
		put(o, "%s %.1f s ago", what, (double)(now - when_ms) / 1000.0);
}

static const char *conn_state(const struct query_conn *c)
{
	switch (c->state) {
	case QUERY_FAILED:
		return "FAILED";
	case QUERY_PAUSED:
		return "PAUSED";
	case QUERY_STOPPING: /* its records in flight still acknowledge */
		return "STOPPING";
	case QUERY_STOPPED:
		return "STOPPED";
	case QUERY_RUNNING:
		break;
	}
	return "RUNNING";
}

/* One line per connector, and its loss and event counters under it. */
static void put_conns(struct status_sock *d, struct out *o, int64_t now)
{
	const struct query *q = d->q;
	struct stats *st = q->ops->stats(q->ctx);
	size_t n = q->ops->connectors(q->ctx);

	for (size_t i = 0; i < n; i++) {
		struct query_conn c;
		struct stats_view v;
		size_t cur = 0;
		enum source_unit unit;
		uint64_t backlog;

		q->ops->connector(q->ctx, i, &c);
		put(o, "connector %s: %s; records produced %llu, acked %llu, failed %llu; ", c.name,
		    conn_state(&c), (unsigned long long)c.produced, (unsigned long long)c.acked,
		    (unsigned long long)c.failed);
		put_ago(o, "last ack", c.last_ack_ms, now);
		if (health_backlog(d->health, i, &unit, &backlog) > 0)
			put(o, "; backlog %llu %s", (unsigned long long)backlog,
			    unit == SOURCE_UNIT_ROWS ? "rows" : "bytes");
		put(o, "\n");
		if (c.state == QUERY_FAILED && c.trace != NULL)
			put(o, "  failed: %s\n", c.trace);
		while (stats_next(st, &cur, &v))
			if ((v.desc->flags & (STATS_F_LOG | STATS_F_STATUS)) &&
			    v.connector != NULL && v.value > 0 && strcmp(v.connector, c.name) == 0)
				put(o, "  %s%s%s=%llu\n", v.partition ? v.partition : "",
				    v.partition ? " " : "", v.desc->name,
				    (unsigned long long)v.value);
	}
}

static void summary(struct status_sock *d, struct out *o)
{
	const struct query *q = d->q;
	char msg[1024], bw[160];
	int64_t now = loop_now_ms();
	struct query_producer pr;
	struct query_flush fl;
	int healthy = health_check(q, msg, sizeof(msg));

	health_refresh(d->health); /* the backlog */

	put(o, "skiff %s (pid %ld): %s%s\n", SKIFF_VERSION, (long)getpid(),
	    healthy == 0 ? "healthy: " : "UNHEALTHY: ", msg);
	put_conns(d, o, now);
	q->ops->flush(q->ctx, &fl);
	put_ago(o, "offsets: last flush", fl.last_ms, now);
	put(o, ", %s\n", fl.last == 0 ? "ok" : offsets_strerror(fl.last));
	q->ops->producer(q->ctx, &pr);
	put(o, "kafka: %d records in flight; ", pr.in_flight);
	put_ago(o, "last ack", pr.last_ack_ms, now);
	if (pr.stats.updates > 0)
		put(o, "; brokers up %llu of %llu", (unsigned long long)pr.stats.brokers_up,
		    (unsigned long long)pr.stats.brokers);
	put(o, "\n");
	q->ops->bandwidth(q->ctx, bw, sizeof(bw));
	put(o, "%s", bw);
}

static void on_accept(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	struct status_sock *d = arg;
	struct out *o;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c < 0)
		return;
	o = malloc(sizeof(*o));
	if (o != NULL) {
		o->len = 0;
		summary(d, o);
		if (send(c, o->buf, o->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			log_debug("status: %s", strerror(errno));
	}
	free(o);
	close(c);
}

int status_sock_path(const char *offsets_file, char *out, size_t len)
{
	const char *slash = strrchr(offsets_file, '/');
	int dirlen = slash == NULL ? 1 : (int)(slash - offsets_file);
	int n = snprintf(out, len, "%.*s/skiff.sock", slash == NULL ? 1 : dirlen,
	                 slash == NULL ? "."
	                 : dirlen == 0 ? "/"
	                               : offsets_file);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Binds the socket 0600 and registers it with the loop. */
static int bind_status(struct status_sock *d)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	mode_t old;
	int rc;

	memcpy(a.sun_path, d->path, strlen(d->path) + 1);
	d->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->fd < 0)
		return -1;
	(void)unlink(d->path);
	old = umask(0177); /* 0600: the service user alone */
	rc = bind(d->fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc != 0 || listen(d->fd, 8) != 0)
		return -1;
	return loop_fd_add(d->loop, d->fd, POLLIN, on_accept, d, &d->watch);
}

int status_sock_open(struct loop *l, const struct query *q, struct health *h, const char *file,
                     struct status_sock **out)
{
	struct status_sock *d = calloc(1, sizeof(*d));

	*out = d;
	if (d == NULL)
		return STATUS_SOCK_ERR_NOMEM;
	d->q = q;
	d->health = h;
	d->loop = l;
	d->fd = -1;
	if (file == NULL) {
		/* The offsets topic alone: no state directory to put it in. */
		log_notice("skiff status: no socket without offset.storage.file.filename");
		d->path[0] = '\0';
		return STATUS_SOCK_OK;
	}
	if (status_sock_path(file, d->path, sizeof(d->path)) != 0) {
		log_warn("skiff status: no socket: the path next to %s is too long", file);
		d->path[0] = '\0';
		return STATUS_SOCK_OK;
	}
	if (bind_status(d) != 0) {
		log_warn("skiff status: no socket at %s: %s", d->path, strerror(errno));
		d->path[0] = '\0';
	}
	return STATUS_SOCK_OK;
}

void status_sock_close(struct status_sock *d)
{
	if (d == NULL)
		return;
	loop_fd_del(d->loop, d->watch);
	if (d->fd >= 0)
		close(d->fd);
	if (d->path[0] != '\0')
		(void)unlink(d->path);
	free(d);
}
