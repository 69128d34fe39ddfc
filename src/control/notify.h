/* notify: systemd's service notifications (sdnotify.h) as a client of the
 * loop, seeing the pipeline through its query (core/query.h).
 *
 * READY=1 once the connectors run, STATUS= a one-line summary (checked every
 * second, sent when it changed), WATCHDOG=1 from a loop timer at half of
 * $WATCHDOG_USEC, STOPPING=1 at shutdown, RELOADING=1 around a reload.
 * Notifications never stop skiff: a failed send is logged once. Main
 * thread only; error convention: util/err.h. */
#ifndef SKIFF_NOTIFY_H
#define SKIFF_NOTIFY_H

#include "util/err.h"

#include <stddef.h>

struct loop;
struct query;
struct notify;

enum {
	NOTIFY_OK = 0,
	NOTIFY_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a NOTIFY_* code. */
const char *notify_strerror(int rc);

/* Opens $NOTIFY_SOCKET (if any; a socket that cannot be used is logged and
 * notifications are off) and registers the watchdog and STATUS= timers
 * with l. q (the pipeline's query) and l are borrowed and must outlive it.
 * Returns NOTIFY_OK and *out (notify_close), or NOTIFY_ERR_NOMEM. */
int notify_open(struct loop *l, const struct query *q, struct notify **out);

/* Sends "READY=1", "STOPPING=1", "RELOADING=1" (with MONOTONIC_USEC) and
 * the current STATUS=; no-op without $NOTIFY_SOCKET or with n NULL. */
void notify_send(struct notify *n, const char *what);

/* The one-line summary STATUS= carries, into buf. */
void notify_summary(const struct query *q, char *buf, size_t len);

/* Sends WATCHDOG=1 when the watchdog timer is due (from a wait outside the
 * loop), and re-arms it. Accepts NULL. */
void notify_alive(struct notify *n);

/* Closes the socket, removes the timers and frees n. Accepts NULL. */
void notify_close(struct notify *n);

#endif
