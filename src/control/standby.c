/* standby: see standby.h. */
#include "control/standby.h"

#include "core/log.h"
#include "core/loop.h"
#include "control/sdnotify.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Sleeps up to ms on the signal pipe. Returns 1 when SIGTERM or SIGINT
 * came (SIGHUP is dropped: the configuration is not in use yet), else 0. */
static int nap(int sigfd, int64_t ms)
{
	struct pollfd pfd = {.fd = sigfd, .events = POLLIN};
	unsigned char sig[16];
	ssize_t n;

	if (poll(&pfd, 1, (int)ms) <= 0)
		return 0;
	while ((n = read(sigfd, sig, sizeof(sig))) > 0)
		for (ssize_t i = 0; i < n; i++)
			if (sig[i] != SIGHUP) {
				log_info("signal %d: stopping", sig[i]);
				return 1;
			}
	return 0;
}

/* standby.h */
struct sdnotify *standby_notify(const char *status)
{
	struct sdnotify *n = NULL;
	char msg[1024], why[256];

	if (sdnotify_open(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"),
	                  &n, why, sizeof(why)) != 0)
		return NULL;
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
	(void)sdnotify_send(n, msg, why, sizeof(why));
	return n;
}

/* standby.h */
int standby_sleep(struct sdnotify *n, int sigfd, int64_t ms)
{
	char why[256];
	int64_t step = n != NULL ? (int64_t)(sdnotify_watchdog_usec(n) / 2000) : 0;
	int64_t end = loop_now_ms() + ms, now;

	while ((now = loop_now_ms()) < end) {
		if (n != NULL)
			(void)sdnotify_send(n, "WATCHDOG=1", why, sizeof(why));
		if (nap(sigfd, step > 0 && step < end - now ? step : end - now))
			return 1;
	}
	return 0;
}
