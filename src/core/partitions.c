/* partitions: the partition table and the flights (core/partitions.h). */
#include "core/partitions.h"

#include "util/hash.h"
#include "util/rstr.h"

#include <stdlib.h>

/* What a partition needs only while records of it are in flight, or its
 * committable offset moved and is not in the store yet: most partitions of
 * a large glob are idle, and 88 bytes each were the most of what one cost
 * the worker. Made at its first record (partition_fifo), freed once it has
 * landed (partition_land). */
struct flight {
	struct acks_fifo fifo; /* first: a token's FIFO is its flight */
	struct partition *p;
	/* The oldest unacknowledged record: the FIFO head, and since when (loop
	 * time) it has been the head: a lower bound of how long it waited. */
	uint32_t head_seen;
	int64_t head_since;
};

struct partitions {
	struct partition **parts;
	size_t nparts;
	struct hash idx; /* key -> index in parts */
};

const char *partitions_strerror(int rc)
{
	switch (rc) {
	case PARTITIONS_OK:
		return "ok";
	case PARTITIONS_ERR_NOMEM:
		return "out of memory";
	default:
		return "failed";
	}
}

int partitions_new(struct partitions **out)
{
	struct partitions *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (t == NULL)
		return PARTITIONS_ERR_NOMEM;
	hash_init(&t->idx);
	*out = t;
	return PARTITIONS_OK;
}

size_t partitions_count(const struct partitions *t)
{
	return t->nparts;
}

struct partition *partitions_at(const struct partitions *t, size_t i)
{
	return t->parts[i];
}

struct partition *partitions_find(const struct partitions *t, const char *key)
{
	size_t i;

	return hash_get(&t->idx, key, &i) ? t->parts[i] : NULL;
}

struct partition *partitions_add(struct partitions *t, char *key, struct conn *c)
{
	struct partition *p = NULL, **grown;

	if (t->nparts == PARTITIONS_MAX || (p = calloc(1, sizeof(*p))) == NULL ||
	    (grown = realloc(t->parts, (t->nparts + 1) * sizeof(*grown))) == NULL) {
		free(p);
		return NULL;
	}
	t->parts = grown;
	if (hash_put(&t->idx, key, t->nparts) != 0) {
		free(p);
		return NULL;
	}
	p->key = key;
	p->conn = c;
	t->parts[t->nparts++] = p;
	return p;
}

static void free_partition(struct acks *a, struct partition *p, void (*gone)(struct partition *))
{
	partition_abandon(a, p);
	if (gone != NULL)
		gone(p);
	rstr_drop(p->key);
	free(p);
}

void partitions_drop_conn(struct partitions *t, struct acks *a, const struct conn *c,
                          void (*gone)(struct partition *p))
{
	size_t kept = 0;

	for (size_t i = 0; i < t->nparts; i++) {
		struct partition *p = t->parts[i];

		if (p->conn != c) {
			t->parts[kept++] = p;
			continue;
		}
		/* Still in flight: its acknowledgement finds nobody and
		 * advances nothing; the record is read again from the
		 * stored offset. */
		free_partition(a, p, gone);
	}
	t->nparts = kept;
	/* The index again, of those kept: it had room for all of them. */
	hash_clear(&t->idx);
	for (size_t i = 0; i < t->nparts; i++)
		(void)hash_put(&t->idx, t->parts[i]->key, i);
}

void partitions_destroy(struct partitions *t, struct acks *a, void (*gone)(struct partition *p))
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nparts; i++)
		free_partition(a, t->parts[i], gone);
	free(t->parts);
	hash_free(&t->idx);
	free(t);
}

struct acks_fifo *partition_fifo(struct partition *p)
{
	if (p->fl == NULL) {
		if ((p->fl = calloc(1, sizeof(*p->fl))) == NULL)
			return NULL;
		acks_fifo_init(&p->fl->fifo);
		p->fl->p = p;
		p->fl->head_seen = ACKS_NIL;
	}
	return &p->fl->fifo;
}

struct acks_fifo *partition_flight(struct partition *p)
{
	return p->fl != NULL ? &p->fl->fifo : NULL;
}

void partition_land(struct partition *p)
{
	const struct acks_fifo *f = p->fl != NULL ? &p->fl->fifo : NULL;

	if (f == NULL || f->inflight > 0 || f->advanced || f->committable.ref != NULL)
		return;
	free(p->fl);
	p->fl = NULL;
}

void partition_abandon(struct acks *a, struct partition *p)
{
	if (p->fl == NULL)
		return;
	acks_abandon(a, &p->fl->fifo);
	acks_fifo_fini(&p->fl->fifo);
	free(p->fl);
	p->fl = NULL;
}

struct partition *partition_of(struct acks_fifo *f)
{
	return ((struct flight *)(void *)f)->p;
}

uint32_t partition_inflight(const struct partition *p)
{
	return p->fl != NULL ? p->fl->fifo.inflight : 0;
}

uint32_t partition_pending(const struct partition *p)
{
	return p->fl != NULL ? p->fl->fifo.pending : 0;
}

bool partition_advanced(const struct partition *p)
{
	return p->fl != NULL && p->fl->fifo.advanced;
}

void partition_head(struct partition *p, int64_t now)
{
	struct flight *fl = p->fl;

	if (fl == NULL)
		return;
	if (fl->fifo.inflight == 0) {
		fl->head_seen = ACKS_NIL;
	} else if (fl->fifo.head != fl->head_seen) {
		fl->head_seen = fl->fifo.head;
		fl->head_since = now;
	}
}

int64_t partition_waited(const struct partition *p, int64_t now)
{
	return partition_inflight(p) > 0 ? now - p->fl->head_since : 0;
}
