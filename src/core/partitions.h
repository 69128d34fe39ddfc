/* partitions: the worker's table of source partitions, by key, and each
 * partition's flight (its records in flight and its committable offset, an
 * acks FIFO). A partition is made when its source first names it
 * (source_env.partition) and lives until its connector closes. Main loop
 * only. */
#ifndef SKIFF_PARTITIONS_H
#define SKIFF_PARTITIONS_H

#include "core/acks.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most partitions the table holds (a source naming more is refused one). */
#define PARTITIONS_MAX 65536

struct conn;
struct pseries; /* control/pmetrics.c */
struct flight;  /* partitions.c: made at a partition's first record */

struct partition {
	char *key; /* ["connector",{partition map}]: an rstr (the store shares it) */
	struct conn *conn;
	struct flight *fl; /* NULL: nothing in flight, nothing to store */
	/* Counted since the partition was made (its connector opened), and
	 * shown as its series while it has them (control/pmetrics.c). */
	uint64_t produced, acked, read_bytes;
	int64_t last_ack_ms; /* the wall clock's ms of the last acknowledgement, 0: none */
	/* Its series in the registry while it is among the
	 * metrics.partition.limit most active partitions; NULL: not shown. */
	struct pseries *series;
};

struct partitions;

enum {
	PARTITIONS_OK = 0,
	PARTITIONS_ERR = -1,       /* failed */
	PARTITIONS_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a PARTITIONS_* code. */
const char *partitions_strerror(int rc);

/* An empty table. Returns 0 and *out (caller owns: partitions_destroy), or
 * PARTITIONS_ERR_NOMEM (*out NULL). */
int partitions_new(struct partitions **out);

/* How many partitions the table holds, and the i-th (an index stays valid
 * until partitions_drop_conn). */
size_t partitions_count(const struct partitions *t);
struct partition *partitions_at(const struct partitions *t, size_t i);

/* The partition of key, NULL when the table has none. */
struct partition *partitions_find(const struct partitions *t, const char *key);

/* A new partition of c with key (an rstr: taken over on success, left to
 * the caller on failure), at the end of the table. NULL when the table is
 * full (PARTITIONS_MAX) or memory is short. */
struct partition *partitions_add(struct partitions *t, char *key, struct conn *c);

/* Removes c's partitions: their records in flight are abandoned in a (their
 * acknowledgements advance nothing), gone(p) is called for each before it
 * is freed (NULL: none). The others keep their order. */
void partitions_drop_conn(struct partitions *t, struct acks *a, const struct conn *c,
                          void (*gone)(struct partition *p));

/* Abandons every flight in a, calls gone(p) for each partition, frees
 * them and the table. Accepts NULL. */
void partitions_destroy(struct partitions *t, struct acks *a, void (*gone)(struct partition *p));

/* p's FIFO, for a record to join (its flight made when p has none), or
 * NULL when out of memory. */
struct acks_fifo *partition_fifo(struct partition *p);

/* p's FIFO if it has a flight, else NULL: for taking and settling its
 * committable offset. */
struct acks_fifo *partition_flight(struct partition *p);

/* Frees p's flight once nothing of p is in flight, its committable offset
 * is stored and its source reference let go (acks_settle). */
void partition_land(struct partition *p);

/* Lets go of p's flight whatever it holds (p goes away, or its records
 * are abandoned: their acknowledgements advance nothing). */
void partition_abandon(struct acks *a, struct partition *p);

/* The partition of a FIFO acks_done or acks_owner gave back. */
struct partition *partition_of(struct acks_fifo *f);

/* Records of p in flight (waiting for Kafka, or failed). */
uint32_t partition_inflight(const struct partition *p);

/* Records of p still waiting for a delivery report. */
uint32_t partition_pending(const struct partition *p);

/* True when p's committable offset moved since it was last taken. */
bool partition_advanced(const struct partition *p);

/* Notes that p's FIFO head (its oldest unacknowledged record) may have
 * changed, at loop time now. */
void partition_head(struct partition *p, int64_t now);

/* How long p's oldest unacknowledged record has waited at loop time now
 * (0: none), as partition_head last noted it. */
int64_t partition_waited(const struct partition *p, int64_t now);

#endif
