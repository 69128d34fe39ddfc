/* sinkfake: a producer for unit tests behind core/sink.h. It keeps every
 * record produced (copies, with its token) and reports nothing by itself:
 * the test delivers them, in any order, with any result, and the reports
 * run at the next sink_poll, as librdkafka's do. A capacity makes produce
 * answer SINK_QUEUE_FULL while that many records are in flight; a fatal
 * error and one-shot produce failures can be set. Single-threaded. */
#ifndef SKIFF_SINKFAKE_H
#define SKIFF_SINKFAKE_H

#include "core/sink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sinkfake;

/* One record as produced: copies the fake owns. */
struct sinkfake_record {
	char *topic;
	char *key, *value; /* NUL-terminated copies (NULL: none) */
	size_t klen, vlen;
	size_t nheaders;
	void *token;
	bool reported; /* its delivery was asked for (sinkfake_deliver) */
};

/* A fake whose reports go to cb(cb_ctx, ...); capacity 0: unbounded. Returns
 * the fake, NULL when out of memory. Its handle: sinkfake_sink; freed by
 * sink_destroy of that handle (which drops reports not yet polled). */
struct sinkfake *sinkfake_new(sink_delivery_fn cb, void *cb_ctx, uint32_t capacity);

/* The fake as a sink (borrowed: lives as long as the fake). */
struct sink *sinkfake_sink(struct sinkfake *f);

/* Records produced so far (delivered or not), and the i-th of them
 * (0-based, in produce order). */
size_t sinkfake_count(const struct sinkfake *f);
const struct sinkfake_record *sinkfake_record(const struct sinkfake *f, size_t i);

/* Asks for the i-th record's delivery report with res (reason: for a
 * failure): it runs at the next sink_poll, after those asked before. A
 * record produced with token NULL gets none (as librdkafka's offset records
 * of a transaction). Each record is reported once: asking again is a bug,
 * and aborts. */
void sinkfake_deliver(struct sinkfake *f, size_t i, enum sink_result res, const char *reason);

/* Asks for a SINK_DELIVERED report of every record not reported yet, in
 * produce order. */
void sinkfake_deliver_all(struct sinkfake *f);

/* The next produce fails with rc (errbuf: why) and takes nothing. */
void sinkfake_fail_next(struct sinkfake *f, int rc, const char *why);

/* From now on sink_fatal answers non-zero with why. */
void sinkfake_set_fatal(struct sinkfake *f, const char *why);

/* The next n sink_txn calls answer rc; then 0. Counts every call. */
void sinkfake_txn_answer(struct sinkfake *f, int rc, int n);
int sinkfake_txn_calls(const struct sinkfake *f, enum sink_txn_op op);

/* Makes the fake's descriptor readable (a loop waiting on it wakes). */
void sinkfake_wake(struct sinkfake *f);

/* How many times sink_poll was called. */
int sinkfake_polls(const struct sinkfake *f);

#endif
