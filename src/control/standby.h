/* standby: a start that waits for something outside skiff (the Kafka
 * cluster with exactly-once, worker_await_cluster) sleeps instead of exiting
 * for systemd to start it again: it tells systemd (Type=notify) that the
 * service is up and waiting, so that neither the start timeout nor the
 * watchdog ends it, feeds the watchdog while it sleeps, and stops at SIGTERM
 * or SIGINT. Main thread, before the worker runs. */
#ifndef SKIFF_STANDBY_H
#define SKIFF_STANDBY_H

#include <stdint.h>

struct sdnotify;

/* Sends systemd "READY=1" and "STATUS=<status>". Returns the channel, which
 * the caller closes (sdnotify_close), or NULL when not run by systemd. */
struct sdnotify *standby_notify(const char *status);

/* Sleeps up to ms on the signal pipe sigfd, in steps the watchdog of n (may
 * be NULL) allows. Returns 1 when SIGTERM or SIGINT came (SIGHUP is dropped:
 * the configuration is not in use yet), else 0. */
int standby_sleep(struct sdnotify *n, int sigfd, int64_t ms);

#endif
