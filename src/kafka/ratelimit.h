/* ratelimit: a token bucket of bytes for a metered link
 * (bandwidth.max.bytes.per.second), fed from three sides.
 *
 * Before a record goes to the producer, the caller charges its size
 * (ratelimit_charge): an estimate, known at once, scaled by what the wire
 * has cost per estimated byte so far (compression makes it less than 1,
 * framing more). The record is then queued in the producer until its
 * delivery is reported (ratelimit_reported). When the producer says what it
 * really sent (librdkafka's statistics: bytes on the socket, after
 * compression, with the protocol's framing and retries), ratelimit_settle
 * replaces the estimates of the records reported since the last settle by
 * that count, and learns the ratio from the two. A record still queued keeps
 * its charge: it has not been sent yet.
 *
 * Two bounds hold the rate on the wire: the bucket holds at most a tenth of
 * a second of the rate (burst), and no record goes while the queued ones are
 * worth more than half a second of it (so a link that comes back after an
 * outage gets at most that at once, not everything read meanwhile). A record
 * larger than the burst still goes when the bucket is not below 0: the
 * bucket goes into debt for all of it, and nothing goes until it is paid. So
 * any window of T seconds carries at most rate * (T + 0.6 s) plus one
 * record, apart from the error of one statistics report.
 *
 * The caller stops producing (and reading) while ratelimit_allows() is false
 * and sleeps until ratelimit_ready_at() or a delivery report: no record is
 * dropped, no loop spins. Times are loop_now_ms() values, passed in so the
 * unit tests need no clock. Single-threaded. */
#ifndef SKIFF_RATELIMIT_H
#define SKIFF_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

enum {
	RATELIMIT_OK = 0,
	RATELIMIT_ERR_NOMEM = -2,
};

struct ratelimit;

/* A bucket for bytes_per_s (> 0), full at now_ms. Returns 0 and *out
 * (ratelimit_destroy), or RATELIMIT_ERR_NOMEM. */
int ratelimit_new(uint64_t bytes_per_s, int64_t now_ms, struct ratelimit **out);

/* A record of bytes (estimated) goes to the producer: takes bytes times the
 * learnt wire ratio from the bucket, which may go below 0, and counts them
 * as queued. */
void ratelimit_charge(struct ratelimit *r, uint64_t bytes, int64_t now_ms);

/* The producer's running total of the estimated bytes of records whose
 * delivery was reported, delivered or failed (it may start again from 0, for
 * a new producer), and whether nothing is in it now: they leave the queued
 * count. */
void ratelimit_reported(struct ratelimit *r, uint64_t done_total, bool empty);

/* The producer's running total of bytes on the wire (it may start again from
 * 0): what it sent since the last call replaces the charges of the records
 * reported since. */
void ratelimit_settle(struct ratelimit *r, uint64_t wire_total, int64_t now_ms);

/* Whether a record may go now: the bucket is not below 0 and what is queued
 * is worth at most half a second of the rate. Counts the time spent
 * refusing (ratelimit_throttled_ms). */
bool ratelimit_allows(struct ratelimit *r, int64_t now_ms);

/* When the bucket will have refilled to half its burst, to resume reading
 * then (fewer than 20 wake-ups a second while throttled); -1 when only a
 * delivery report can let a record go (the queued ones are worth too much). */
int64_t ratelimit_ready_at(const struct ratelimit *r, int64_t now_ms);

/* Milliseconds spent throttled since creation. */
uint64_t ratelimit_throttled_ms(const struct ratelimit *r, int64_t now_ms);

/* Accepts NULL. */
void ratelimit_destroy(struct ratelimit *r);

#endif
