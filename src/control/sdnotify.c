/* sdnotify: the sd_notify datagram protocol (see sdnotify.h). */
#include "control/sdnotify.h"

#include "util/num.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct sdnotify {
	int fd;
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint64_t watchdog_usec;
};

/* Fills n->addr from $NOTIFY_SOCKET: a path, or '@' and an abstract name
 * (sun_path starts with a NUL, and the length counts no terminator). */
static int parse_addr(struct sdnotify *n, const char *addr)
{
	size_t len = strlen(addr);

	if ((addr[0] != '/' && addr[0] != '@') || len >= sizeof(n->addr.sun_path))
		return SDNOTIFY_ERR_ADDR;
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, addr, len);
	if (addr[0] == '@')
		n->addr.sun_path[0] = '\0';
	else
		len++; /* a path's terminating NUL is part of the address */
	n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	return 0;
}

/* The watchdog applies when WATCHDOG_PID is absent or names this process. */
static uint64_t parse_watchdog(const char *usec, const char *pid)
{
	int64_t v = 0, p = 0;

	if (usec == NULL || num_parse_i64(usec, 1, INT64_MAX, &v) != 0)
		return 0;
	if (pid != NULL && *pid != '\0' &&
	    (num_parse_i64(pid, 1, INT64_MAX, &p) != 0 || p != (int64_t)getpid()))
		return 0;
	return (uint64_t)v;
}

int sdnotify_open(const char *addr, const char *watchdog_usec, const char *watchdog_pid,
                  struct sdnotify **out, char *errbuf, size_t errlen)
{
	struct sdnotify *n;
	int rc;

	*out = NULL;
	if (addr == NULL || *addr == '\0')
		return 0;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return SDNOTIFY_ERR_NOMEM;
	rc = parse_addr(n, addr);
	if (rc != 0) {
		snprintf(errbuf, errlen, "NOTIFY_SOCKET=%s: not an absolute path or @abstract name",
		         addr);
		goto fail;
	}
	/* Non-blocking: a service manager that stopped reading must not stall
	 * the loop; a lost notification is retried by the next one. */
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (n->fd < 0) {
		rc = SDNOTIFY_ERR;
		snprintf(errbuf, errlen, "NOTIFY_SOCKET=%s: socket: %s", addr, strerror(errno));
		goto fail;
	}
	n->watchdog_usec = parse_watchdog(watchdog_usec, watchdog_pid);
	*out = n;
	return 0;
fail:
	free(n);
	return rc;
}

int sdnotify_send(struct sdnotify *n, const char *msg, char *errbuf, size_t errlen)
{
	ssize_t sent;

	if (n == NULL)
		return 0;
	sent = sendto(n->fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&n->addr,
	              n->addrlen);
	if (sent < 0) {
		snprintf(errbuf, errlen, "%s", strerror(errno));
		return SDNOTIFY_ERR;
	}
	return 0;
}

uint64_t sdnotify_watchdog_usec(const struct sdnotify *n)
{
	return n != NULL ? n->watchdog_usec : 0;
}

const char *sdnotify_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case SDNOTIFY_ERR:
		return "notification failed";
	case SDNOTIFY_ERR_ADDR:
		return "unusable NOTIFY_SOCKET address";
	case SDNOTIFY_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown sdnotify error";
	}
}

void sdnotify_close(struct sdnotify *n)
{
	if (n == NULL)
		return;
	close(n->fd);
	free(n);
}
