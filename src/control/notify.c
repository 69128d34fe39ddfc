/* worker_notify: systemd's service notifications from the loop (sdnotify.h).
 *
 * READY=1 once the connectors run, STATUS= a one-line summary (checked every
 * second, sent when it changed), WATCHDOG=1 from a loop timer at half of
 * $WATCHDOG_USEC (so a loop that stops turning stops the pings, and systemd
 * restarts skiff), STOPPING=1 at shutdown, RELOADING=1 around a reload.
 * A failed send is logged once and otherwise ignored: notifications never
 * stop skiff. Main thread only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/log.h"
#include "core/loop.h"
#include "control/sdnotify.h"
#include "core/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATUS_EVERY_MS 1000
/* No acknowledgement for this long with records in flight: Kafka is not
 * taking them (down, unreachable, or refusing). */
#define ACK_SILENCE_MS 10000

static void send_msg(struct worker *w, const char *msg)
{
	static bool warned;
	char why[256];

	if (sdnotify_send(w->notify, msg, why, sizeof(why)) != 0 && !warned) {
		log_warn("systemd notification failed: %s (further failures are not logged)", why);
		warned = true;
	}
}

void worker_notify_summary(const struct worker *w, char *buf, size_t len)
{
	size_t running = 0, failed = 0;
	uint64_t acked = 0, lost = 0;
	int inflight = w->sink != NULL ? sink_in_flight(w->sink) : 0;
	int64_t silent = w->last_ack_ms > 0 ? loop_now_ms() - w->last_ack_ms : -1;
	const char *kafka = "idle";

	for (size_t i = 0; i < w->nconns; i++) {
		const struct conn *c = w->conns[i];

		if (c->removed)
			continue;
		if (c->stopped)
			failed++;
		else
			running++;
		acked += *c->acked;
		lost += *c->failed;
	}
	if (inflight > 0)
		kafka =
		    silent < 0 || silent >= ACK_SILENCE_MS ? "not acknowledging" : "acknowledging";
	snprintf(buf, len,
	         "%zu connector%s running, %zu failed; %llu records acked, %llu failed; "
	         "Kafka %s, %d in flight%s",
	         running, running == 1 ? "" : "s", failed, (unsigned long long)acked,
	         (unsigned long long)lost, kafka, inflight,
	         commits_failures(w->commits) > 0 ? "; offset flush failing" : "");
}

/* Sends STATUS= when the summary changed since the last one sent. */
static void send_status(struct worker *w)
{
	char text[384], msg[400];

	worker_notify_summary(w, text, sizeof(text));
	if (w->status_sent != NULL && strcmp(w->status_sent, text) == 0)
		return;
	free(w->status_sent);
	w->status_sent = strdup(text);
	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	send_msg(w, msg);
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
static int64_t watchdog_every(const struct worker *w)
{
	uint64_t usec = sdnotify_watchdog_usec(w->notify);
	int64_t half = (int64_t)(usec / 2000);

	return usec > 0 && half < 1 ? 1 : half;
}

/* worker_private.h */
void worker_notify_alive(struct worker *w)
{
	int64_t now = loop_now_ms(), when, every;

	if (w->watchdog == NULL || (when = loop_timer_when(w->watchdog)) < 0 || when > now)
		return;
	every = watchdog_every(w);
	send_msg(w, "WATCHDOG=1");
	loop_timer_set(w->watchdog, now + every, every);
}

int worker_notify_open(struct worker *w)
{
	char why[512];
	uint64_t usec;
	int64_t half;
	int rc = sdnotify_open(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"),
	                       getenv("WATCHDOG_PID"), &w->notify, why, sizeof(why));

	if (rc == SDNOTIFY_ERR_NOMEM)
		return WORKER_ERR_NOMEM;
	if (rc != 0)
		log_warn("systemd notifications off: %s", why);
	if (w->notify == NULL)
		return 0;
	usec = sdnotify_watchdog_usec(w->notify);
	half = watchdog_every(w);
	if (loop_timer_add(w->loop, usec > 0 ? loop_now_ms() : -1, half, on_watchdog, w,
	                   &w->watchdog) != 0 ||
	    loop_timer_add(w->loop, loop_now_ms() + STATUS_EVERY_MS, STATUS_EVERY_MS,
	                   on_status_timer, w, &w->status_timer) != 0)
		return WORKER_ERR_NOMEM;
	if (usec > 0)
		log_info("systemd watchdog: WATCHDOG=1 every %lld ms", (long long)half);
	return 0;
}

void worker_notify(struct worker *w, const char *what)
{
	char msg[512], text[384];
	struct timespec ts;

	if (w->notify == NULL)
		return;
	worker_notify_summary(w, text, sizeof(text));
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
	send_msg(w, msg);
	free(w->status_sent);
	w->status_sent = NULL;
	if (strcmp(what, "STOPPING=1") == 0)
		loop_timer_set(w->status_timer, -1, 0); /* "stopping" stays the status */
	if (strcmp(what, "READY=1") == 0)
		w->status_sent = strdup(text);
}

void worker_notify_close(struct worker *w)
{
	sdnotify_close(w->notify);
	w->notify = NULL;
	free(w->status_sent);
	w->status_sent = NULL;
}
