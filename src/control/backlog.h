/* backlog: what the sources know is still unread, per connector (the sum
 * over its partitions, for `skiff status`) and per shown partition (the
 * skiff_partition_backlog gauges, through pmetrics). Asked of the sources
 * at each export through the pipeline's query (core/query.h). Main loop
 * only; error convention: util/err.h. */
#ifndef SKIFF_BACKLOG_H
#define SKIFF_BACKLOG_H

#include "core/source.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct query;
struct pmetrics;
struct backlog;

enum {
	BACKLOG_OK = 0,
	BACKLOG_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a BACKLOG_* code. */
const char *backlog_strerror(int rc);

/* q and pm (the partitions' gauges) are borrowed and must outlive it.
 * Returns BACKLOG_OK and *out (backlog_destroy), or BACKLOG_ERR_NOMEM. */
int backlog_new(const struct query *q, struct pmetrics *pm, struct backlog **out);

/* Asks every open source for its backlog at now: the connectors' sums and
 * the shown partitions' gauges; a partition no source told is unknown now
 * (its gauge hidden). */
void backlog_refresh(struct backlog *b, int64_t now);

/* Connector i's backlog as the last backlog_refresh learnt it: the sum of
 * the partitions it knows into *n (in *unit). Returns how many partitions
 * it knows (0: unknown). */
int backlog_of(const struct backlog *b, size_t i, enum source_unit *unit, uint64_t *n);

/* Accepts NULL. */
void backlog_destroy(struct backlog *b);

#endif
