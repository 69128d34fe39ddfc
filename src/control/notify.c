/* notify: systemd's service notifications from the loop (notify.h).
 *
 * READY=1 once the connectors run, STATUS= a one-line summary (checked every
 * second, sent when it changed), WATCHDOG=1 from a loop timer at half of
 * $WATCHDOG_USEC (so a loop that stops turning stops the pings, and systemd
 * restarts skiff), STOPPING=1 at shutdown, RELOADING=1 around a reload.
 * A failed send is logged once and otherwise ignored: notifications never
 * stop skiff. Main thread only. */
#include "control/notify.h"

#include "control/sdnotify.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/query.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATUS_EVERY_MS 1000
/* No acknowledgement for this long with records in flight: Kafka is not
 * taking them (down, unreachable, or refusing). */
#define ACK_SILENCE_MS 10000

struct notify {
	const struct query *q;
	struct loop *loop;
	struct sdnotify *sd; /* NULL: not run by systemd (nothing is sent) */
	struct loop_timer *watchdog, *status_timer;
	char *status_sent; /* the last STATUS= text sent */
};

const char *notify_strerror(int rc)
{
	switch (rc) {
	case NOTIFY_OK:
		return "ok";
	case NOTIFY_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown notify error";
	}
}

static void send_msg(struct notify *n, const char *msg)
{
	static bool warned;
	char why[256];

	if (sdnotify_send(n->sd, msg, why, sizeof(why)) != 0 && !warned) {
		log_warn("systemd notification failed: %s (further failures are not logged)", why);
		warned = true;
	}
}

void notify_summary(const struct query *q, char *buf, size_t len)
{
	size_t running = 0, failed = 0, nconns = q->ops->connectors(q->ctx);
	uint64_t acked = 0, lost = 0;
	struct query_producer pr;
	struct query_flush fl;
	int64_t silent;
	const char *kafka = "idle";

	q->ops->producer(q->ctx, &pr);
	q->ops->flush(q->ctx, &fl);
	silent = pr.last_ack_ms > 0 ? loop_now_ms() - pr.last_ack_ms : -1;
	for (size_t i = 0; i < nconns; i++) {
		struct query_conn c;

		q->ops->connector(q->ctx, i, &c);
		if (c.state == QUERY_FAILED)
			failed++;
		else
			running++;
		acked += c.acked;
		lost += c.failed;
	}
	if (pr.in_flight > 0)
		kafka =
		    silent < 0 || silent >= ACK_SILENCE_MS ? "not acknowledging" : "acknowledging";
	snprintf(buf, len,
	         "%zu connector%s running, %zu failed; %llu records acked, %llu failed; "
	         "Kafka %s, %d in flight%s",
	         running, running == 1 ? "" : "s", failed, (unsigned long long)acked,
	         (unsigned long long)lost, kafka, pr.in_flight,
	         fl.failures_in_row > 0 ? "; offset flush failing" : "");
}

/* Sends STATUS= when the summary changed since the last one sent. */
static void send_status(struct notify *n)
{
	char text[384], msg[400];

	notify_summary(n->q, text, sizeof(text));
	if (n->status_sent != NULL && strcmp(n->status_sent, text) == 0)
		return;
	free(n->status_sent);
	n->status_sent = strdup(text);
	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	send_msg(n, msg);
}

static void on_status_timer(struct loop *l, struct loop_timer *t, void *arg)
{
	send_status(arg);
}

static void on_watchdog(struct loop *l, struct loop_timer *t, void *arg)
{
	send_msg(arg, "WATCHDOG=1");
}

/* How often WATCHDOG=1 goes: half of $WATCHDOG_USEC, in ms; 0: never. */
static int64_t watchdog_every(const struct notify *n)
{
	uint64_t usec = sdnotify_watchdog_usec(n->sd);
	int64_t half = (int64_t)(usec / 2000);

	return usec > 0 && half < 1 ? 1 : half;
}

void notify_alive(struct notify *n)
{
	int64_t now = loop_now_ms(), when, every;

	if (n == NULL || n->watchdog == NULL || (when = loop_timer_when(n->watchdog)) < 0 ||
	    when > now)
		return;
	every = watchdog_every(n);
	send_msg(n, "WATCHDOG=1");
	loop_timer_set(n->watchdog, now + every, every);
}

int notify_open(struct loop *l, const struct query *q, struct notify **out)
{
	char why[512];
	uint64_t usec;
	int64_t half;
	struct notify *n = calloc(1, sizeof(*n));
	int rc;

	*out = NULL;
	if (n == NULL)
		return NOTIFY_ERR_NOMEM;
	n->q = q;
	n->loop = l;
	rc = sdnotify_open(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"),
	                   &n->sd, why, sizeof(why));
	if (rc == SDNOTIFY_ERR_NOMEM)
		goto nomem;
	if (rc != 0)
		log_warn("systemd notifications off: %s", why);
	*out = n;
	if (n->sd == NULL)
		return NOTIFY_OK;
	usec = sdnotify_watchdog_usec(n->sd);
	half = watchdog_every(n);
	if (loop_timer_add(l, usec > 0 ? loop_now_ms() : -1, half, on_watchdog, n, &n->watchdog) !=
	        0 ||
	    loop_timer_add(l, loop_now_ms() + STATUS_EVERY_MS, STATUS_EVERY_MS, on_status_timer, n,
	                   &n->status_timer) != 0) {
		*out = NULL;
		goto nomem;
	}
	if (usec > 0)
		log_info("systemd watchdog: WATCHDOG=1 every %lld ms", (long long)half);
	return NOTIFY_OK;
nomem:
	notify_close(n);
	return NOTIFY_ERR_NOMEM;
}

void notify_send(struct notify *n, const char *what)
{
	char msg[512], text[384];
	struct timespec ts;

	if (n == NULL || n->sd == NULL)
		return;
	notify_summary(n->q, text, sizeof(text));
	if (strcmp(what, "RELOADING=1") == 0) {
		/* systemd >= 253 wants the time the reload began with it. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
		         (unsigned long long)ts.tv_sec * 1000000ull +
		             (unsigned long long)ts.tv_nsec / 1000ull);
	} else {
		snprintf(msg, sizeof(msg), "%s\nSTATUS=%s", what,
		         strcmp(what, "STOPPING=1") == 0 ? "stopping" : text);
	}
	send_msg(n, msg);
	free(n->status_sent);
	n->status_sent = NULL;
	if (strcmp(what, "STOPPING=1") == 0)
		loop_timer_set(n->status_timer, -1, 0); /* "stopping" stays the status */
	if (strcmp(what, "READY=1") == 0)
		n->status_sent = strdup(text);
}

void notify_close(struct notify *n)
{
	if (n == NULL)
		return;
	loop_timer_del(n->loop, n->watchdog);
	loop_timer_del(n->loop, n->status_timer);
	sdnotify_close(n->sd);
	free(n->status_sent);
	free(n);
}
