/* health: the pipeline's health verdict (GET /health, `skiff status`'s
 * first line) and the gauges computed, not counted, before an export of the
 * registry (the partitions' series, the connectors' states, the producer's
 * figures, the process's memory and CPU, the sources' backlog). A client of
 * the pipeline's query (core/query.h). Main loop only; error convention:
 * util/err.h. */
#ifndef SKIFF_HEALTH_H
#define SKIFF_HEALTH_H

#include "core/source.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct query;
struct health;

enum {
	HEALTH_OK = 0,
	HEALTH_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a HEALTH_* code. */
const char *health_strerror(int rc);

/* 0 when healthy, -1 when not: a connector failed, the last offset write
 * failed, or a record has waited for Kafka's acknowledgement longer than
 * health.ack.timeout.ms. msg gets one line either way. */
int health_check(const struct query *q, char *msg, size_t len);

/* Registers the producer's and the process's gauges in q's registry. q is
 * borrowed and must outlive it. Returns HEALTH_OK and *out
 * (health_destroy), or HEALTH_ERR_NOMEM. */
int health_new(const struct query *q, struct health **out);

/* Sets the computed gauges: before an export of the registry. */
void health_refresh(struct health *h);

/* Sets the process's gauges only (resident memory from /proc/self/statm,
 * CPU time): cheap, for a client that reports them between exports (the
 * fleet's heartbeat). */
void health_refresh_process(struct health *h);

/* Connector i's backlog as the last health_refresh learnt it (backlog_of). */
int health_backlog(const struct health *h, size_t i, enum source_unit *unit, uint64_t *n);

/* Accepts NULL. */
void health_destroy(struct health *h);

#endif
