/* stats: the registry of every counter and gauge skiff keeps.
 *
 * A metric is registered once, with a name (lower_snake_case, no unit
 * suffix: exporters add their own, e.g. Prometheus's _total), a type, one
 * line of help and its labels (connector, source partition; either may be
 * absent). Registering the same name and labels again returns the same
 * handle, so a module need not remember whether it registered already. There
 * is no fixed cap: the registry grows until memory runs out, and then says so
 * (STATS_ERR_NOMEM) instead of dropping the metric.
 *
 * The hot path: a handle is a pointer to the metric's value; counting is
 * `*h += n` (stats_add), setting a gauge `*h = v`. Nothing else is touched.
 *
 * Exporters (the log today; /metrics, /health and `skiff status` later) read
 * every metric through stats_next(), in registration order, and keep their
 * own state (what was logged last, say) indexed by stats_view.index.
 *
 * Ownership: the registry owns the metrics and copies the labels; name and
 * help must be static strings (string literals). Handles stay valid until
 * stats_destroy, or stats_remove of that handle. Single-threaded: main loop only. Error convention:
 * util/err.h. */
#ifndef SKIFF_STATS_H
#define SKIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	STATS_OK = 0,
	STATS_ERR_NOMEM = -2,
	STATS_ERR_CONFLICT = -3, /* the name was registered with another type or help */
};

enum stats_type {
	STATS_COUNTER, /* only grows (a restart resets it) */
	STATS_GAUGE,   /* a value now: may go down */
};

/* Flags of a metric, for exporters. */
enum {
	/* An event a person should see in the log (a loss, a skipped file):
	 * the log exporter writes "connector X: name=N" when it moves. */
	STATS_F_LOG = 1u << 0,
	/* The unit, for exporters to name and scale the value (Prometheus:
	 * _bytes, _seconds, _timestamp_seconds); none: records, events, a state. */
	STATS_F_BYTES = 1u << 1,
	STATS_F_MS = 1u << 2,       /* a duration in milliseconds */
	STATS_F_EPOCH_MS = 1u << 3, /* a wall-clock time, ms since 1970 (0: never) */
	/* A state a person should see in `skiff status` while it is not 0 (a
	 * gauge: files held waiting), without a log line each time it moves. */
	STATS_F_STATUS = 1u << 4,
};

/* What a metric is. Every string is static. */
struct stats_desc {
	const char *name;
	enum stats_type type;
	const char *help;
	unsigned flags;
};

/* Which one: NULL for a label the metric does not have. Copied. */
struct stats_labels {
	const char *connector;
	const char *partition; /* the source partition as compact JSON */
};

/* One metric as an exporter sees it; strings owned by the registry. */
struct stats_view {
	size_t index; /* 0, 1, ... in registration order */
	const struct stats_desc *desc;
	const char *connector; /* NULL: no such label */
	const char *partition;
	uint64_t value;
};

struct stats;

/* Creates an empty registry. Returns 0 and *out (stats_destroy) or
 * STATS_ERR_NOMEM. */
int stats_new(struct stats **out);

/* Frees the registry; every handle dies with it. Accepts NULL. */
void stats_destroy(struct stats *s);

/* Registers the metric (d, labels) or finds it; labels may be NULL. Returns
 * 0 and *value (the handle), and *index when index is not NULL;
 * STATS_ERR_CONFLICT when d->name exists with another type or help;
 * STATS_ERR_NOMEM. */
int stats_register(struct stats *s, const struct stats_desc *d, const struct stats_labels *labels,
                   uint64_t **value, size_t *index);

/* The iterator: fills *v with the metric at *cursor (start at 0), advances
 * *cursor and returns true; false past the last one. */
bool stats_next(const struct stats *s, size_t *cursor, struct stats_view *v);

/* Number of metrics registered. */
size_t stats_count(const struct stats *s);

/* Hides every metric labelled with connector (closed by a reload, or
 * restarted with new settings) from stats_next until it is registered again;
 * its value is kept (a counter never goes back). Handles stay valid. */
void stats_retire(struct stats *s, const char *connector);

/* Removes the metric of handle h for good (a series that comes and goes,
 * such as a source partition's shown only while it is among the most
 * active): not listed any more, its handle dead, its memory and that of a
 * label no other metric names taken by the next metric registered. A later
 * registration of the same name and labels starts from 0. Accepts NULL. */
void stats_remove(struct stats *s, uint64_t *h);

/* Hides the one metric of handle h in the same way (a gauge whose value
 * is unknown now) until it is registered again. */
void stats_hide(uint64_t *h);

/* Short text for a STATS_ERR_* code. */
const char *stats_strerror(int err);

static inline void stats_add(uint64_t *h, uint64_t n)
{
	*h += n;
}

#endif
