/* metrics: the stats registry (stats.h) in Prometheus's text format 0.0.4.
 *
 * Each metric becomes skiff_<name>, with its unit (stats_unit) in the name
 * and the value scaled to it: _bytes; durations in _seconds; wall-clock
 * times as _timestamp_seconds; counters end in _total. Labels: connector and
 * partition (the source partition as compact JSON), escaped as the format
 * asks. Samples of one name are grouped under one HELP and TYPE, whatever
 * order they were registered in. Pure: main loop, no I/O. */
#ifndef SKIFF_METRICS_H
#define SKIFF_METRICS_H

#include <stddef.h>

#include "util/err.h"

struct stats;

/* Failures of metrics_render (util/err.h). */
enum metrics_err {
	METRICS_OK = 0,
	METRICS_ERR_NOMEM = -2, /* out of memory */
};

/* Renders every metric of s. Returns 0 and *out (malloc'd, NUL-terminated,
 * caller frees; *len without the NUL), or METRICS_ERR_NOMEM. */
int metrics_render(const struct stats *s, char **out, size_t *len);

/* A short text for a metrics_err code; never NULL. */
const char *metrics_strerror(int err);

#endif
