/* fleetlink: the seam and the per-key coalescing of status records (see
 * fleetlink.h). A key's slot lives while a record of it is in flight: its
 * newest unsent record waits in the slot (replacing an older one, which is
 * then never sent) and goes when the flying one's report comes. Before the
 * link is ready (fleetlink_ops.late), a slot only holds its newest record,
 * sent once the start is done. A status
 * topic is compacted, last value wins: the superseded record carried
 * nothing the newer one does not. */
#include "kafka/fleetlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One status key with a record in flight. */
struct slot {
	char *key;
	bool flying;  /* a record of it in flight (else held: the link not ready) */
	bool pending; /* a newer record waits */
	char *value;  /* the waiting record's value, NULL: a tombstone */
	size_t vlen;
	size_t index; /* in the link's slots */
};

struct fleetlink {
	const struct fleetlink_ops *ops;
	void *ctx;
	struct fleetlink_cbs cbs;
	void *arg;
	bool status; /* a status topic: sending allowed */
	bool ready;  /* the start done: records may fly */
	struct slot **slots;
	size_t nslots, cap;
};

const char *fleetlink_strerror(int err)
{
	switch (err) {
	case FLEETLINK_OK:
		return "ok";
	case FLEETLINK_ERR:
		return "the Kafka client failed";
	case FLEETLINK_ERR_CONFIG:
		return "settings that cannot work";
	case FLEETLINK_ERR_NOMEM:
		return "out of memory";
	case FLEETLINK_ERR_FULL:
		return "too many status keys in flight";
	case FLEETLINK_ERR_NOSTATUS:
		return "no status topic";
	}
	return "unknown fleetlink error";
}

static struct slot *find(const struct fleetlink *l, const char *key)
{
	for (size_t i = 0; i < l->nslots; i++)
		if (strcmp(l->slots[i]->key, key) == 0)
			return l->slots[i];
	return NULL;
}

static void slot_free(struct slot *s)
{
	if (s == NULL)
		return;
	free(s->key);
	free(s->value);
	free(s);
}

/* Unlinks s from l (the last slot takes its place) and frees it. */
static void slot_drop(struct fleetlink *l, struct slot *s)
{
	struct slot *last = l->slots[--l->nslots];

	last->index = s->index;
	l->slots[s->index] = last;
	slot_free(s);
}

/* A copy of value (NULL stays NULL) into *out. Returns 0 or -1. */
static int copy_value(const char *value, size_t vlen, char **out)
{
	*out = NULL;
	if (value == NULL)
		return 0;
	*out = malloc(vlen + 1);
	if (*out == NULL)
		return -1;
	memcpy(*out, value, vlen);
	(*out)[vlen] = '\0';
	return 0;
}

static void on_begin(void *arg, const char *topic, const char *topic_id, int64_t end)
{
	struct fleetlink *l = arg;

	if (l->cbs.begin != NULL)
		l->cbs.begin(l->arg, topic, topic_id, end);
}

static void on_record(void *arg, const struct fleetlink_record *r)
{
	struct fleetlink *l = arg;

	if (l->cbs.record != NULL)
		l->cbs.record(l->arg, r);
}

static void on_snapshot(void *arg, const char *topic, int64_t end)
{
	struct fleetlink *l = arg;

	if (l->cbs.snapshot != NULL)
		l->cbs.snapshot(l->arg, topic, end);
}

static void on_error(void *arg, int rc, const char *why)
{
	struct fleetlink *l = arg;

	if (l->cbs.error != NULL)
		l->cbs.error(l->arg, rc, why);
}

static void on_waiting(void *arg, const char *why)
{
	struct fleetlink *l = arg;

	if (l->cbs.waiting != NULL)
		l->cbs.waiting(l->arg, why);
}

/* Sends s's waiting record; refused at once (the queue full, a fatal
 * producer): reported as the record's fate, and the slot freed. */
static void launch(struct fleetlink *l, struct slot *s)
{
	char err[256];
	int rc;

	s->pending = false;
	rc = l->ops->produce(l->ctx, s->key, s->value, s->vlen, s, err, sizeof(err));
	free(s->value);
	s->value = NULL;
	if (rc == 0) {
		s->flying = true;
		return;
	}
	if (l->cbs.sent != NULL)
		l->cbs.sent(l->arg, s->key, rc, err);
	slot_drop(l, s);
}

/* The start done: every record held flies (from the last slot down, as
 * launch may drop one and move the last into its place). */
static void on_ready(void *arg)
{
	struct fleetlink *l = arg;

	l->ready = true;
	for (size_t i = l->nslots; i-- > 0;)
		if (!l->slots[i]->flying)
			launch(l, l->slots[i]);
	if (l->cbs.ready != NULL)
		l->cbs.ready(l->arg);
}

/* A flying record's report: says so, then sends the slot's waiting record,
 * or frees the slot. */
static void on_delivered(void *arg, void *token, int rc, const char *why)
{
	struct fleetlink *l = arg;
	struct slot *s = token;

	if (l->cbs.sent != NULL)
		l->cbs.sent(l->arg, s->key, rc, why);
	s->flying = false;
	if (!s->pending) {
		slot_drop(l, s);
		return;
	}
	launch(l, s);
}

static const struct fleetlink_events events = {
    .begin = on_begin,
    .record = on_record,
    .snapshot = on_snapshot,
    .delivered = on_delivered,
    .error = on_error,
    .waiting = on_waiting,
    .ready = on_ready,
};

int fleetlink_open(const struct fleetlink_ops *ops, const struct fleetlink_conf *c,
                   const struct fleetlink_cbs *cbs, void *arg, struct fleetlink **out, char *errbuf,
                   size_t errlen)
{
	struct fleetlink *l = calloc(1, sizeof(*l));
	int rc;

	*out = NULL;
	if (l == NULL) {
		snprintf(errbuf, errlen, "fleet link: out of memory");
		return FLEETLINK_ERR_NOMEM;
	}
	l->ops = ops;
	l->cbs = *cbs;
	l->arg = arg;
	l->status = c->status_topic != NULL;
	l->ready = !ops->late;
	rc = ops->open(c, &events, l, &l->ctx, errbuf, errlen);
	if (rc != 0) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int fleetlink_fd(const struct fleetlink *l)
{
	return l->ops->fd(l->ctx);
}

void fleetlink_poll(struct fleetlink *l)
{
	l->ops->poll(l->ctx);
}

/* A new slot for key, its record flying: 0, or a fleetlink_err with errbuf. */
static int fly(struct fleetlink *l, const char *key, const char *value, size_t vlen, char *errbuf,
               size_t errlen)
{
	struct slot *s;
	int rc;

	if (l->nslots == FLEETLINK_MAX_KEYS) {
		snprintf(errbuf, errlen, "status record %s: %d keys in flight already", key,
		         FLEETLINK_MAX_KEYS);
		return FLEETLINK_ERR_FULL;
	}
	if (l->nslots == l->cap) {
		size_t cap = l->cap == 0 ? 16 : l->cap * 2;
		struct slot **slots = realloc(l->slots, cap * sizeof(*slots));

		if (slots == NULL)
			goto nomem;
		l->slots = slots;
		l->cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL || (s->key = strdup(key)) == NULL) {
		free(s);
		goto nomem;
	}
	if (!l->ready) {
		/* Held until the link is ready (on_ready). */
		if (copy_value(value, vlen, &s->value) != 0) {
			slot_free(s);
			goto nomem;
		}
		s->vlen = vlen;
		s->pending = true;
	} else {
		rc = l->ops->produce(l->ctx, key, value, vlen, s, errbuf, errlen);
		if (rc != 0) {
			slot_free(s);
			return rc;
		}
		s->flying = true;
	}
	s->index = l->nslots;
	l->slots[l->nslots++] = s;
	return 0;
nomem:
	snprintf(errbuf, errlen, "status record %s: out of memory", key);
	return FLEETLINK_ERR_NOMEM;
}

int fleetlink_send(struct fleetlink *l, const char *key, const char *value, size_t vlen,
                   char *errbuf, size_t errlen)
{
	struct slot *s;
	char *copy;

	if (!l->status) {
		snprintf(errbuf, errlen, "status record %s: no status.storage.topic", key);
		return FLEETLINK_ERR_NOSTATUS;
	}
	s = find(l, key);
	if (s == NULL)
		return fly(l, key, value, vlen, errbuf, errlen);
	if (copy_value(value, vlen, &copy) != 0) {
		snprintf(errbuf, errlen, "status record %s: out of memory", key);
		return FLEETLINK_ERR_NOMEM;
	}
	/* One in flight: this one waits, superseding any that waited. */
	free(s->value);
	s->value = copy;
	s->vlen = vlen;
	s->pending = true;
	return 0;
}

size_t fleetlink_pending(const struct fleetlink *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nslots; i++)
		n += (l->slots[i]->flying ? 1 : 0) + (l->slots[i]->pending ? 1 : 0);
	return n;
}

void fleetlink_destroy(struct fleetlink *l)
{
	if (l == NULL)
		return;
	if (l->ctx != NULL)
		l->ops->destroy(l->ctx);
	for (size_t i = 0; i < l->nslots; i++)
		slot_free(l->slots[i]);
	free(l->slots);
	free(l);
}
