/* sink: the seam between the record path and a producer. The worker hands
 * records to a struct sink and learns their fate from delivery reports; it
 * never knows which producer it talks to. kafka/sink_kafka.c fills the ops
 * with librdkafka's producer (sink_open there); tests fill them with a fake
 * (tests/unit/sinkfake.c) that delivers in any order with any result.
 *
 * Ownership: whoever opened a sink owns the handle and frees it with
 * sink_destroy. A sink never frees a token: it hands each one it took back
 * exactly once, to the delivery callback given when it was opened (or never,
 * when destroyed first). Main loop only: delivery callbacks run from
 * sink_poll on the caller's thread. */
#ifndef SKIFF_SINK_H
#define SKIFF_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct config_section;
struct record_header;

/* The outcome of one record, in a delivery report. */
enum sink_result {
	SINK_DELIVERED, /* acknowledged by the broker */
	SINK_FAILED,    /* not delivered; a restart may deliver it (timed out, fenced) */
	SINK_REFUSED,   /* the cluster will never take it as configured (too large,
	                 * not authorised, invalid topic): a person must act */
};

/* Called from sink_poll() for each delivery report: token as given to
 * sink_produce, and with a failure a reason (the producer's text). */
typedef void (*sink_delivery_fn)(void *ctx, void *token, enum sink_result res, const char *reason);

/* Failures of a sink's operations (error convention: util/err.h). */
enum {
	SINK_OK = 0,
	SINK_ERR = -1,        /* not taken, and a restart may help (fatal, a pipe) */
	SINK_QUEUE_FULL = -2, /* nothing taken: retry after sink_poll freed room */
	SINK_ERR_CONFIG = -3, /* this record can never be produced as configured; or,
	                       * from sink_open, a bad property */
	SINK_ERR_NOMEM = -4,  /* out of memory: a restart may help */
	SINK_TXN_PENDING = 1, /* sink_txn: not a failure: not done within the timeout and
	                       * going on in the background; calling it again with the
	                       * same op resumes it */
};

/* One record for the producer. Every pointer is borrowed for the call only:
 * the sink copies what it keeps. headers may be NULL with nheaders 0. */
struct sink_record {
	const char *topic;
	const void *key;
	size_t klen;
	const void *value;
	size_t vlen;
	const struct record_header *headers;
	size_t nheaders;
	int64_t timestamp_ms;
};

/* Transactions (exactly.once.source.support=enabled). */
enum sink_txn_op {
	SINK_TXN_INIT,   /* fences a previous instance of the id, aborts its open transaction */
	SINK_TXN_BEGIN,  /* every record produced from here on belongs to the transaction */
	SINK_TXN_COMMIT, /* waits for every record of it, then commits */
	SINK_TXN_ABORT,  /* drops every record of it (read_committed readers never see them) */
};

/* What the producer says of itself, for /metrics. */
struct sink_stats {
	uint64_t wire_bytes;  /* every request sent to brokers: on the socket, after
	                       * compression, framing included (librdkafka tx_bytes) */
	uint64_t done_bytes;  /* keys and values of the records whose delivery was
	                       * reported (delivered or failed), since this sink began */
	uint64_t done_msgs;   /* ... and how many records */
	uint64_t queue_depth; /* records and requests in the producer queue now */
	uint64_t brokers;     /* brokers of the cluster the producer knows */
	uint64_t brokers_up;  /* ... with a connection up */
	uint64_t updates;     /* statistics received (statistics.interval.ms) */
};

/* What a producer implements; ctx is its own. The wrappers below document
 * each operation. */
struct sink_ops {
	int (*produce)(void *ctx, const struct sink_record *r, void *token, char *errbuf,
	               size_t errlen);
	void (*poll)(void *ctx);
	int (*fd)(const void *ctx);
	int (*in_flight)(const void *ctx);
	uint32_t (*queue_capacity)(const void *ctx);
	size_t (*message_max)(const void *ctx);
	int (*fatal)(void *ctx, char *errbuf, size_t errlen);
	int (*txn)(void *ctx, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen);
	bool (*fenced)(void *ctx, char *id, size_t idlen, int64_t *timeout_ms);
	int (*reachable)(void *ctx, int timeout_ms, char *errbuf, size_t errlen);
	void (*stats)(const void *ctx, struct sink_stats *out);
	char *(*cluster_id)(void *ctx);
	void (*destroy)(void *ctx);
};

/* A producer: its ops and its context. Made by its constructor (sink_open in
 * kafka/sink_kafka.h, or a test's fake), which keeps it inside its own
 * allocation; freed by sink_destroy. */
struct sink {
	const struct sink_ops *ops;
	void *ctx;
};

/* A producer's constructor, as sink_open (kafka/sink_kafka.h): from the
 * worker section, reports to cb(cb_ctx, ...). */
typedef int (*sink_open_fn)(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
                            struct sink **out, char *errbuf, size_t errlen);

/* Produces r. token comes back exactly once through the delivery callback,
 * unless this returns non-zero (then the sink took nothing). 0,
 * SINK_QUEUE_FULL, SINK_ERR_CONFIG (this record never fits: errbuf says
 * why), SINK_ERR (errbuf). */
int sink_produce(struct sink *s, const struct sink_record *r, void *token, char *errbuf,
                 size_t errlen);

/* Serves delivery reports (and the producer's logs and errors); non-blocking. */
void sink_poll(struct sink *s);

/* A descriptor that becomes readable when sink_poll has work (-1: none). */
int sink_fd(const struct sink *s);

/* Records not yet acknowledged or failed. */
int sink_in_flight(const struct sink *s);

/* The most records the producer queue holds. */
uint32_t sink_queue_capacity(const struct sink *s);

/* The largest record (key and value) the producer sends. */
size_t sink_message_max(const struct sink *s);

/* Non-zero when the producer can do nothing more (a fatal error, or it could
 * not start a thread it needs: a restart may cure it); errbuf says which. */
int sink_fatal(struct sink *s, char *errbuf, size_t errlen);

/* Runs op, blocking up to timeout_ms (INIT, COMMIT, ABORT). Returns 0;
 * SINK_TXN_PENDING when it did not finish in time and goes on (call again to
 * resume it, or give up: SINK_ERR); SINK_ERR_CONFIG when the producer can do
 * nothing more (fenced, fatal); SINK_ERR otherwise (abort, and a restart may
 * help). errbuf says why. A record produced with token NULL gets no delivery
 * callback: the offset records a transaction carries beside the records. */
int sink_txn(struct sink *s, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen);

/* True when the fatal error is the transactional producer's fencing: *id
 * gets the transactional.id, *timeout_ms the transaction.timeout.ms. */
bool sink_fenced(struct sink *s, char *id, size_t idlen, int64_t *timeout_ms);

/* Whether a broker of the cluster answers within timeout_ms (blocks up to
 * that). 0, or SINK_ERR with errbuf why. */
int sink_reachable(struct sink *s, int timeout_ms, char *errbuf, size_t errlen);

/* Fills *out (see struct sink_stats). */
void sink_stats(const struct sink *s, struct sink_stats *out);

/* The cluster id, without waiting: malloc'd (caller frees), or NULL when not
 * known yet. */
char *sink_cluster_id(struct sink *s);

/* Short text for a SINK_* error code. */
const char *sink_strerror(int err);

/* Drops everything undelivered (no delivery report from here on, so none is
 * mistaken for an ack: those records are read again at the next start) and
 * frees the sink. Accepts NULL. */
void sink_destroy(struct sink *s);

#endif
