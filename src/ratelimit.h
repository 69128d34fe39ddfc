/* ratelimit: a token bucket of bytes for a metered link
 * (bandwidth.max.bytes.per.second), fed from two sides.
 *
 * Before a record goes to the producer, the caller charges its size as
 * produced (ratelimit_charge): an estimate, known at once. When the
 * producer reports what it really sent to the brokers (librdkafka's
 * statistics: bytes on the wire, after compression, with the protocol's
 * framing), ratelimit_settle replaces the estimates since the last report by
 * that count: compression gives the difference back, framing and
 * retransmissions take it. So the estimate bounds bursts between reports,
 * and the wire count keeps the long run honest.
 *
 * The bucket holds at most a tenth of a second of the rate (burst), so that
 * over any 10 s window no more than 10.1 s of the rate is sent, apart from
 * the error of one report. The caller stops producing (and reading) while
 * ratelimit_allows() is false and sleeps until ratelimit_ready_at(): no
 * record is dropped, no loop spins. Times are loop_now_ms() values, passed
 * in so the unit tests need no clock. Single-threaded. */
#ifndef SKIFF_RATELIMIT_H
#define SKIFF_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

enum {
	RATELIMIT_ERR_NOMEM = -2,
};

struct ratelimit;

/* A bucket for bytes_per_s (> 0), full at now_ms. Returns 0 and *out
 * (ratelimit_destroy), or RATELIMIT_ERR_NOMEM. */
int ratelimit_new(uint64_t bytes_per_s, int64_t now_ms, struct ratelimit **out);

/* Takes bytes (a record as produced) from the bucket; it may go below 0. */
void ratelimit_charge(struct ratelimit *r, uint64_t bytes, int64_t now_ms);

/* The sender's running total of bytes on the wire (it may start again from
 * 0, for a new producer): what it sent since the last call replaces what was
 * charged since. */
void ratelimit_settle(struct ratelimit *r, uint64_t wire_total, int64_t now_ms);

/* Whether a record may go now (the bucket is not below 0). Counts the time
 * spent refusing (ratelimit_throttled_ms). */
bool ratelimit_allows(struct ratelimit *r, int64_t now_ms);

/* When the bucket will have refilled to half its burst, to resume reading
 * then: fewer than 20 wake-ups a second while throttled. */
int64_t ratelimit_ready_at(const struct ratelimit *r, int64_t now_ms);

/* Milliseconds spent throttled since creation. */
uint64_t ratelimit_throttled_ms(const struct ratelimit *r, int64_t now_ms);

/* Accepts NULL. */
void ratelimit_destroy(struct ratelimit *r);

#endif
