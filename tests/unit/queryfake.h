/* queryfake: the pipeline's query (core/query.h) for unit tests of the
 * control clients. The test fills its views directly (connectors,
 * partitions, flush, producer) and the backlog each connector tells; the
 * ops hand them out as the worker would. Commands are recorded. Fixed
 * sizes: a test's pipeline is small. Single-threaded. */
#ifndef SKIFF_QUERYFAKE_H
#define SKIFF_QUERYFAKE_H

#include "core/query.h"

#define QUERYFAKE_MAX 64

struct queryfake {
	struct query q; /* ops and ctx: pass &f->q to the client */
	size_t nconns, nparts;
	struct query_conn conns[QUERYFAKE_MAX];
	struct query_part parts[QUERYFAKE_MAX];
	struct pseries *shown[QUERYFAKE_MAX]; /* parts[i].shown points here */
	struct query_flush flush;
	struct query_producer producer;
	struct stats *stats;
	/* The backlog partition i's source tells (backlog_known[i]: it does). */
	bool backlog_known[QUERYFAKE_MAX];
	enum source_unit backlog_unit[QUERYFAKE_MAX];
	uint64_t backlog[QUERYFAKE_MAX];
	char bandwidth[160];
	/* The last command given, and what the next answers. */
	size_t command_conn;
	int command_cmd; /* -1: none */
	int command_rc;
	/* The layer changes asked for: how many, the last one (its strings
	 * borrowed: valid during the call only; name copied), and what the
	 * next answers (0: REST_PENDING, and the test calls its done). */
	int changes;
	struct query_change change;
	char change_name[128];
	int change_rc;
	uint64_t epoch; /* what state_epoch answers: a test bumps it */
};

/* Empties f and points its query at itself; stats borrowed (may be NULL). */
void queryfake_init(struct queryfake *f, struct stats *stats);

/* Adds a RUNNING connector named name; returns its index. */
size_t queryfake_conn(struct queryfake *f, const char *name);

/* Adds a partition of connector conn with key; returns its index. */
size_t queryfake_part(struct queryfake *f, size_t conn, const char *key);

#endif
