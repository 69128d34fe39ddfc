/* backlog: the sources' backlog, per connector and per shown partition
 * (backlog.h). Main loop only. */
#include "control/backlog.h"

#include "control/pmetrics.h"
#include "core/query.h"

#include <stdlib.h>

struct sum {
	uint64_t n;
	enum source_unit unit;
	int known; /* partitions told */
};

struct backlog {
	const struct query *q;
	struct pmetrics *pm;
	struct sum *sums; /* by connector index, as of the last refresh */
	size_t nsums;
};

const char *backlog_strerror(int rc)
{
	switch (rc) {
	case BACKLOG_OK:
		return "ok";
	case BACKLOG_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown backlog error";
	}
}

int backlog_new(const struct query *q, struct pmetrics *pm, struct backlog **out)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return BACKLOG_ERR_NOMEM;
	(*out)->q = q;
	(*out)->pm = pm;
	return BACKLOG_OK;
}

void backlog_destroy(struct backlog *b)
{
	if (b == NULL)
		return;
	free(b->sums);
	free(b);
}

/* query_backlog_fn: into the connector's sum, and p's gauge when shown. */
static void put(void *arg, const struct query_part *p, enum source_unit u, uint64_t n)
{
	struct backlog *b = arg;
	struct sum *s;

	if ((u != SOURCE_UNIT_BYTES && u != SOURCE_UNIT_ROWS) || p->conn >= b->nsums)
		return;
	s = &b->sums[p->conn];
	s->unit = u;
	s->n += n;
	s->known++;
	pmetrics_backlog_put(b->pm, p, u, n);
}

void backlog_refresh(struct backlog *b, int64_t now)
{
	size_t n = b->q->ops->connectors(b->q->ctx);

	pmetrics_backlog_begin(b->pm, now);
	if (n > b->nsums) {
		struct sum *grown = realloc(b->sums, n * sizeof(*grown));

		if (grown != NULL) {
			b->sums = grown;
			b->nsums = n;
		}
	}
	for (size_t i = 0; i < b->nsums; i++)
		b->sums[i] = (struct sum){0};
	for (size_t i = 0; i < n && i < b->nsums; i++)
		b->q->ops->backlog(b->q->ctx, i, put, b);
	pmetrics_backlog_end(b->pm, now);
}

int backlog_of(const struct backlog *b, size_t i, enum source_unit *unit, uint64_t *n)
{
	if (i >= b->nsums) {
		*unit = SOURCE_UNIT_BYTES;
		*n = 0;
		return 0;
	}
	*unit = b->sums[i].unit;
	*n = b->sums[i].n;
	return b->sums[i].known;
}
