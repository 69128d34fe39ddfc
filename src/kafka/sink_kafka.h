/* sink_kafka: the librdkafka producer. Produces records, serves delivery
 * reports on the caller's thread, and never takes a flush for an ack.
 *
 * Defaults (each overridable with producer.* / kafka.* properties):
 * enable.idempotence=true, acks=all, message.timeout.ms=0 (never give up: an
 * edge device may be offline for hours), partitioner=murmur2_random, and a
 * bounded queue (queue.buffering.max.messages / .kbytes). librdkafka's main
 * queue is made readable through a pipe (rd_kafka_queue_io_event_enable), so
 * the worker's poll(2) wakes for delivery reports, logs and errors, and
 * sink_poll() runs the callbacks on the main loop: acks need no locks. */
#ifndef SKIFF_SINK_KAFKA_H
#define SKIFF_SINK_KAFKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct config_section;
struct record_header;

struct sink;

/* The outcome of one record, in a delivery report. */
enum sink_result {
	SINK_DELIVERED, /* acknowledged by the broker */
	SINK_FAILED,    /* not delivered; a restart may deliver it (timed out, fenced) */
	SINK_REFUSED,   /* the cluster will never take it as configured (too large,
	                 * not authorised, invalid topic): a person must act */
};

/* Called from sink_poll() for each delivery report: token as given to
 * sink_produce, and with a failure a reason (librdkafka's text). */
typedef void (*sink_delivery_fn)(void *ctx, void *token, enum sink_result res, const char *reason);

/* skiff's i-th producer default (librdkafka's name and value, applied before
 * the user's producer.* and kafka.* keys): the key, and *value; NULL past the
 * last. Static strings. For --help-config. */
const char *sink_default(size_t i, const char **value);

/* Failures of sink_open and sink_produce (error convention: util/err.h). */
enum {
	SINK_OK = 0,
	SINK_ERR = -1,         /* not taken, and a restart may help (fatal, a pipe) */
	SINK_QUEUE_FULL = -2,  /* nothing taken: retry after sink_poll freed room */
	SINK_ERR_CONFIG = -3,  /* this record can never be produced as configured; or,
	                        * from sink_open, a bad property */
	SINK_ERR_NOMEM = -4,   /* out of memory: a restart may help */
	SINK_ERR_TIMEOUT = -5, /* sink_txn: not done within the timeout; calling it
	                        * again with the same op resumes it */
};

/* Creates the producer from the worker section (bootstrap.servers, producer.*,
 * kafka.*, security keys). Does not wait for a broker: skiff starts and reads
 * with none reachable. Returns 0 and *out (sink_destroy), or SINK_ERR_CONFIG
 * with "file:line: why" for a bad property, or for limits that contradict
 * each other (a record message.max.bytes allows that the queue could never
 * hold); SINK_ERR_NOMEM; SINK_ERR (no pipe). */
int sink_open(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
              struct sink **out, char *errbuf, size_t errlen);

/* The most records the producer queue holds (queue.buffering.max.messages). */
uint32_t sink_queue_capacity(const struct sink *s);
/* The producer's message.max.bytes: the largest record it sends. */
size_t sink_message_max(const struct sink *s);

/* A descriptor that becomes readable when sink_poll has work. */
int sink_fd(const struct sink *s);

/* Produces one record. key, value and headers are copied
 * (RD_KAFKA_MSG_F_COPY: one allocation with librdkafka's own for the
 * message): the caller keeps them and may reuse them at once. headers may be
 * NULL with nheaders 0. */
int sink_produce(struct sink *s, const char *topic, const char *key, size_t klen, const char *value,
                 size_t vlen, const struct record_header *headers, size_t nheaders,
                 int64_t timestamp_ms, void *token, char *errbuf, size_t errlen);

/* Transactions (exactly.once.source.support=enabled: the producer is then
 * transactional, transactional.id "<offset.storage.topic>-<device.id or
 * machine id>"). */
enum sink_txn_op {
	SINK_TXN_INIT,   /* fences a previous instance of the id, aborts its open transaction */
	SINK_TXN_BEGIN,  /* every record produced from here on belongs to the transaction */
	SINK_TXN_COMMIT, /* waits for every record of it, then commits */
	SINK_TXN_ABORT,  /* drops every record of it (read_committed readers never see them) */
};

/* Runs op, blocking up to timeout_ms (INIT, COMMIT, ABORT). Returns 0;
 * SINK_ERR_TIMEOUT when it did not finish in time and goes on (call again to
 * resume it, or give up: SINK_ERR); SINK_ERR_CONFIG when the producer can do
 * nothing more (fenced, fatal); SINK_ERR otherwise (abort, and a restart may
 * help). errbuf says why.
 * A record produced with token NULL gets no delivery callback: the offset
 * records a transaction carries beside the records. */
int sink_txn(struct sink *s, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen);

/* Whether a broker of the cluster answers a metadata request within
 * timeout_ms (blocks up to that). Returns 0, or SINK_ERR with errbuf
 * librdkafka's why. Main thread. */
int sink_reachable(struct sink *s, int timeout_ms, char *errbuf, size_t errlen);

/* Serves delivery reports, logs and errors; non-blocking. */
void sink_poll(struct sink *s);

/* Records not yet acknowledged or failed. */
int sink_in_flight(const struct sink *s);

/* What the producer says of itself, for /metrics. */
struct sink_stats {
	uint64_t wire_bytes;  /* every request sent to brokers: on the socket, after
	                       * compression, framing included (librdkafka tx_bytes) */
	uint64_t done_bytes;  /* keys and values of the records whose delivery was
	                       * reported (delivered or failed), since this sink began */
	uint64_t done_msgs;   /* ... and how many records */
	uint64_t queue_depth; /* records and requests in the producer queue now */
	uint64_t brokers;     /* brokers of the cluster librdkafka knows */
	uint64_t brokers_up;  /* ... with a connection up */
	uint64_t updates;     /* statistics received (statistics.interval.ms) */
};

/* Fills *out: the counts of librdkafka's last statistics (every
 * statistics.interval.ms, skiff's default 5000; 0 before the first) and the
 * queue depth now. Main loop. */
void sink_stats(const struct sink *s, struct sink_stats *out);

/* The cluster id from the metadata librdkafka has, without waiting: a
 * malloc'd string (caller frees), or NULL when not known yet. Main loop. */
char *sink_cluster_id(struct sink *s);

/* Non-zero when librdkafka raised a fatal error (e.g. the idempotent
 * producer's sequence was lost), or could not start a thread it needs (out
 * of memory or threads: a restart may cure it); errbuf says which. */
int sink_fatal(struct sink *s, char *errbuf, size_t errlen);

/* True when the fatal error is the transactional producer's fencing: the
 * coordinator saw a newer epoch of its transactional.id (another producer's
 * init_transactions, or its own transaction aborted for outliving
 * transaction.timeout.ms). *id gets the transactional.id, *timeout_ms the
 * producer's transaction.timeout.ms. */
bool sink_fenced(struct sink *s, char *id, size_t idlen, int64_t *timeout_ms);

/* The files librdkafka reads once, when the producer is made, that worker
 * section w names (ssl.certificate.location, ssl.key.location,
 * ssl.ca.location but "probe", ssl.keystore.location, ssl.crl.location,
 * bare or as producer.X / kafka.X): at most max of them into out (borrowed
 * from w). Returns how many. A change to any needs a new producer. */
size_t sink_tls_files(const struct config_section *w, const char **out, size_t max);

/* Short text for a SINK_* error code. */
const char *sink_strerror(int err);

/* Purges everything undelivered and destroys the producer. Purged records get
 * no delivery report (the callback is not called from here on), so none is
 * mistaken for an ack: their offsets were never committed, and they are read
 * again at the next start. Accepts NULL. */
void sink_destroy(struct sink *s);

#endif
