/* pmetrics: the series of the source partitions in the registry (the
 * skiff_partition_* of /metrics), for the metrics.partition.limit most
 * active partitions only, picked again at each export. A client of the
 * pipeline's query (core/query.h): it keeps a partition's series in the
 * partition's query_part.shown slot, which the partition never reads.
 * Main loop only; error convention: util/err.h. */
#ifndef SKIFF_PMETRICS_H
#define SKIFF_PMETRICS_H

#include "core/source.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>

struct query;
struct query_part;
struct pseries;
struct pmetrics;

enum {
	PMETRICS_OK = 0,
	PMETRICS_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a PMETRICS_* code. */
const char *pmetrics_strerror(int rc);

/* Series of q's partitions, in q's registry. q is borrowed and must outlive
 * it. Returns PMETRICS_OK and *out (pmetrics_destroy), or
 * PMETRICS_ERR_NOMEM. */
int pmetrics_new(const struct query *q, struct pmetrics **out);

/* Before an export: picks the partitions to show (those with records in
 * flight first, then by their last acknowledgement, the ones shown
 * already before others of the same rank), removes the series of those no
 * longer picked, and sets the values of the others at now. */
void pmetrics_refresh(struct pmetrics *pm, int64_t now);

/* The backlog gauges: begin marks every shown one untold, put sets p's
 * (when p is shown) to n in unit, end hides those no source told (a value
 * of another time would mislead). */
void pmetrics_backlog_begin(struct pmetrics *pm, int64_t now);
void pmetrics_backlog_put(struct pmetrics *pm, const struct query_part *p, enum source_unit unit,
                          uint64_t n);
void pmetrics_backlog_end(struct pmetrics *pm, int64_t now);

/* Removes the series kept in *shown and frees them (*shown NULL after):
 * a partition that goes. keep_registry false: the registry is going too
 * (nothing removed from it, only freed). Accepts *shown NULL. */
void pmetrics_unshow(struct pseries **shown, bool keep_registry);

/* Frees pm (not the series: pmetrics_unshow). Accepts NULL. */
void pmetrics_destroy(struct pmetrics *pm);

#endif
