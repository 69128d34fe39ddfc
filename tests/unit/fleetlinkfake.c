/* fleetlinkfake: see fleetlinkfake.h. Aborts on out of memory: a test's
 * fake has no failure of its own to report. */
#include "fleetlinkfake.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { BEGIN, RECORD, END, ERROR, DELIVERY, WAITING, READY };

/* One queued event. */
struct event {
	enum kind kind;
	char *topic, *key, *value; /* value NULL: a tombstone */
	int64_t offset;            /* RECORD's; BEGIN's and END's end */
	size_t sent;               /* DELIVERY: which produced record */
	int rc;
	char *why;
};

struct fleetlinkfake {
	struct fleetlink_conf conf;
	const struct fleetlink_events *ev;
	void *arg;
	int pipefd[2];
	struct event *q;
	size_t nq, capq;
	struct fleetlinkfake_sent *sent;
	size_t nsent, capsent;
	int refuse;
};

static struct fleetlinkfake *last;

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap == 0 ? 16 : *cap * 2;
	p = realloc(p, *cap * size);
	if (p == NULL)
		abort();
	return p;
}

static char *dup_or_null(const char *s)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	if (d == NULL)
		abort();
	return d;
}

static void push(struct fleetlinkfake *f, const struct event *e)
{
	f->q = grow(f->q, &f->capq, f->nq, sizeof(*f->q));
	f->q[f->nq++] = *e;
	if (write(f->pipefd[1], "1", 1) < 0) {
		/* full: readable anyway */
	}
}

static int fopen_(const struct fleetlink_conf *c, const struct fleetlink_events *ev, void *arg,
                  void **ctx, char *errbuf, size_t errlen)
{
	struct fleetlinkfake *f = calloc(1, sizeof(*f));

	if (f == NULL || pipe2(f->pipefd, O_NONBLOCK | O_CLOEXEC) != 0)
		abort();
	f->conf = *c;
	f->ev = ev;
	f->arg = arg;
	last = f;
	*ctx = f;
	return 0;
}

static int ffd(const void *ctx)
{
	const struct fleetlinkfake *f = ctx;

	return f->pipefd[0];
}

static void event_free(struct event *e)
{
	free(e->topic);
	free(e->key);
	free(e->value);
	free(e->why);
}

static void fpoll(void *ctx)
{
	struct fleetlinkfake *f = ctx;
	struct event *q = f->q;
	size_t n = f->nq;
	char buf[64];

	while (read(f->pipefd[0], buf, sizeof(buf)) > 0)
		;
	/* Taken off the queue first: a callback may queue more, for the
	 * next poll. */
	f->q = NULL;
	f->nq = f->capq = 0;
	for (size_t i = 0; i < n; i++) {
		struct event e = q[i];
		struct fleetlink_record r = {
		    .topic = e.topic,
		    .offset = e.offset,
		    .key = e.key,
		    .klen = e.key != NULL ? strlen(e.key) : 0,
		    .value = e.value,
		    .vlen = e.value != NULL ? strlen(e.value) : 0,
		};

		switch (e.kind) {
		case BEGIN:
			f->ev->begin(f->arg, e.topic, NULL, e.offset);
			break;
		case RECORD:
			f->ev->record(f->arg, &r);
			break;
		case END:
			f->ev->snapshot(f->arg, e.topic, e.offset);
			break;
		case ERROR:
			f->ev->error(f->arg, e.rc, e.why);
			break;
		case DELIVERY:
			f->ev->delivered(f->arg, f->sent[e.sent].token, e.rc, e.why);
			break;
		case WAITING:
			f->ev->waiting(f->arg, e.why);
			break;
		case READY:
			f->ev->ready(f->arg);
			break;
		}
		event_free(&e);
	}
	free(q);
}

static int fproduce(void *ctx, const char *key, const char *value, size_t vlen, void *token,
                    char *errbuf, size_t errlen)
{
	struct fleetlinkfake *f = ctx;
	struct fleetlinkfake_sent *s;

	if (f->refuse != 0) {
		int rc = f->refuse;

		f->refuse = 0;
		snprintf(errbuf, errlen, "fake: refused");
		return rc;
	}
	f->sent = grow(f->sent, &f->capsent, f->nsent, sizeof(*f->sent));
	s = &f->sent[f->nsent++];
	memset(s, 0, sizeof(*s));
	s->key = dup_or_null(key);
	if (value != NULL) {
		s->value = malloc(vlen + 1);
		if (s->value == NULL)
			abort();
		memcpy(s->value, value, vlen);
		s->value[vlen] = '\0';
	}
	s->vlen = vlen;
	s->token = token;
	return 0;
}

static void fdestroy(void *ctx)
{
	struct fleetlinkfake *f = ctx;

	for (size_t i = 0; i < f->nq; i++)
		event_free(&f->q[i]);
	for (size_t i = 0; i < f->nsent; i++) {
		free(f->sent[i].key);
		free(f->sent[i].value);
	}
	free(f->q);
	free(f->sent);
	close(f->pipefd[0]);
	close(f->pipefd[1]);
	if (last == f)
		last = NULL;
	free(f);
}

const struct fleetlink_ops fleetlinkfake_ops = {
    .open = fopen_,
    .fd = ffd,
    .poll = fpoll,
    .produce = fproduce,
    .destroy = fdestroy,
};

struct fleetlinkfake *fleetlinkfake_last(void)
{
	return last;
}

void fleetlinkfake_record(struct fleetlinkfake *f, const char *topic, int64_t offset,
                          const char *key, const char *value)
{
	struct event e = {.kind = RECORD,
	                  .topic = dup_or_null(topic),
	                  .key = dup_or_null(key),
	                  .value = dup_or_null(value),
	                  .offset = offset};

	push(f, &e);
}

void fleetlinkfake_begin(struct fleetlinkfake *f, const char *topic, int64_t end)
{
	struct event e = {.kind = BEGIN, .topic = dup_or_null(topic), .offset = end};

	push(f, &e);
}

void fleetlinkfake_end(struct fleetlinkfake *f, const char *topic, int64_t end)
{
	struct event e = {.kind = END, .topic = dup_or_null(topic), .offset = end};

	push(f, &e);
}

void fleetlinkfake_error(struct fleetlinkfake *f, const char *why)
{
	struct event e = {.kind = ERROR, .rc = FLEETLINK_ERR, .why = dup_or_null(why)};

	push(f, &e);
}

size_t fleetlinkfake_count(const struct fleetlinkfake *f)
{
	return f->nsent;
}

const struct fleetlinkfake_sent *fleetlinkfake_sent(const struct fleetlinkfake *f, size_t i)
{
	return i < f->nsent ? &f->sent[i] : NULL;
}

void fleetlinkfake_deliver(struct fleetlinkfake *f, size_t i, int rc, const char *why)
{
	struct event e = {.kind = DELIVERY, .sent = i, .rc = rc, .why = dup_or_null(why)};

	if (i >= f->nsent || f->sent[i].delivered)
		abort();
	f->sent[i].delivered = true;
	push(f, &e);
}

void fleetlinkfake_refuse(struct fleetlinkfake *f, int rc)
{
	f->refuse = rc;
}

const struct fleetlink_conf *fleetlinkfake_conf(const struct fleetlinkfake *f)
{
	return &f->conf;
}

const struct fleetlink_ops fleetlinkfake_late_ops = {
    .late = true,
    .open = fopen_,
    .fd = ffd,
    .poll = fpoll,
    .produce = fproduce,
    .destroy = fdestroy,
};

void fleetlinkfake_waiting(struct fleetlinkfake *f, const char *why)
{
	struct event e = {.kind = WAITING, .why = dup_or_null(why)};

	push(f, &e);
}

void fleetlinkfake_ready(struct fleetlinkfake *f)
{
	struct event e = {.kind = READY};

	push(f, &e);
}
