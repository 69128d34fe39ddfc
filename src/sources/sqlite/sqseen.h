/* sqseen: row fingerprints: the last timestamp's group, the last ids read (sqseen.c). Main loop
 * only. */
#ifndef SKIFF_SQSEEN_H
#define SKIFF_SQSEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/sqlite/sqlitelib.h"
#include "util/err.h"

/* A row's fingerprint over the types and bytes of its columns. */
struct sqprint {
	uint64_t a, b;
};

/* Fingerprints columns [0, ncols) of st's current row. */
void sqseen_print(sqlite3_stmt *st, size_t ncols, struct sqprint *p);

/* Most rows of one timestamp the group remembers (at most ~6 MB). */
#define SQGROUP_MAX 100000

/* The rows read so far with timestamp ts, as a multiset of fingerprints.
 * Zero-initialised it is empty; owns its table (sqseen_group_free). */
struct sqgroup {
	int64_t ts;
	struct sqgroup_entry *v;
	size_t cap, n; /* slots, distinct fingerprints */
	size_t rows;   /* rows read of group ts */
};

/* Forgets every row, then tracks group ts. */
void sqseen_group_reset(struct sqgroup *g, int64_t ts);
/* Starts a query that reads the group again. */
void sqseen_group_new_pass(struct sqgroup *g);
/* True when a row with fingerprint p was read before and this query has not
 * yet met that many of them: skip it. */
bool sqseen_group_seen(struct sqgroup *g, const struct sqprint *p);
/* Failures of sqseen_group_add (util/err.h). */
enum sqseen_err {
	SQSEEN_OK = 0,
	SQSEEN_ERR_FULL = -2,  /* SQGROUP_MAX rows remembered already */
	SQSEEN_ERR_NOMEM = -3, /* out of memory */
};
/* A short text for a sqseen_err code; never NULL. */
const char *sqseen_strerror(int err);
/* Records a row read. Returns SQSEEN_OK, SQSEEN_ERR_NOMEM, or
 * SQSEEN_ERR_FULL. */
int sqseen_group_add(struct sqgroup *g, const struct sqprint *p);
bool sqseen_group_full(const struct sqgroup *g);
void sqseen_group_free(struct sqgroup *g);

/* The last SQRING_N ids read with their rows' fingerprints (and how many
 * columns those covered). Zero-initialised it is empty. */
#define SQRING_N 32
struct sqring {
	int64_t id[SQRING_N];
	struct sqprint p[SQRING_N];
	size_t ncols[SQRING_N];
	size_t n, head;
};

void sqseen_ring_push(struct sqring *r, int64_t id, const struct sqprint *p, size_t ncols);
size_t sqseen_ring_len(const struct sqring *r);
/* The k-th newest entry (0: the last id read). */
void sqseen_ring_get(const struct sqring *r, size_t k, int64_t *id, const struct sqprint **p,
                     size_t *ncols);
void sqseen_ring_drop_newest(struct sqring *r);
void sqseen_ring_clear(struct sqring *r);

#endif
