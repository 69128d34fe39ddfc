/* sdnotify: systemd's service notification protocol (sd_notify(3)), written
 * against the documented protocol instead of linking libsystemd, which is
 * optional here (only the journald source needs it) and whose sd_notify would
 * be the only reason to carry it on boards without the journal.
 *
 * The protocol: each message is one datagram of newline-separated
 * "KEY=VALUE" assignments sent to the AF_UNIX SOCK_DGRAM socket named by
 * $NOTIFY_SOCKET (a path, or an abstract name when it starts with '@').
 * $WATCHDOG_USEC asks for "WATCHDOG=1" at least that often; $WATCHDOG_PID,
 * when set, names the process it is meant for. A "vsock:" address (VMs) is
 * not supported: sdnotify_open says so.
 *
 * Leaf module; error convention: util/err.h. Main thread only. */
#ifndef SKIFF_SDNOTIFY_H
#define SKIFF_SDNOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	SDNOTIFY_OK = 0,
	SDNOTIFY_ERR = -1,      /* the socket could not be made or the send failed */
	SDNOTIFY_ERR_ADDR = -2, /* $NOTIFY_SOCKET is no address skiff can use */
	SDNOTIFY_ERR_NOMEM = -3,
};

struct sdnotify;

/* Opens the notification channel from the given values of $NOTIFY_SOCKET,
 * $WATCHDOG_USEC and $WATCHDOG_PID (any may be NULL). Returns 0 and *out, or
 * 0 and *out NULL when addr is NULL or empty (not run by systemd: every
 * other call is then a no-op); or an SDNOTIFY_ERR_* code with errbuf
 * "NOTIFY_SOCKET=...: why". */
int sdnotify_open(const char *addr, const char *watchdog_usec, const char *watchdog_pid,
                  struct sdnotify **out, char *errbuf, size_t errlen);

/* Sends msg (one or more "KEY=VALUE" lines) as one datagram. Never blocks.
 * Returns 0 (also for n NULL) or SDNOTIFY_ERR with errbuf "why". */
int sdnotify_send(struct sdnotify *n, const char *msg, char *errbuf, size_t errlen);

/* The watchdog interval systemd asked for in µs, or 0 (none, or meant for
 * another process). */
uint64_t sdnotify_watchdog_usec(const struct sdnotify *n);

/* Short text for an SDNOTIFY_ERR_* code. */
const char *sdnotify_strerror(int err);

/* Closes the socket and frees n. Accepts NULL. */
void sdnotify_close(struct sdnotify *n);

#endif
