/* fleetlink: the fleet's tie to Kafka (issue 28, docs/fleet.md): its
 * configuration topics read in, its status records written out. The fleet
 * (fleet/fleet.c) sees only this seam (kafka/fleetlink.c: the per-key
 * coalescing of status records); kafka/fleetlink_kafka.c fills it with
 * librdkafka (fleetlink_kafka_ops: the fleet's only librdkafka user), tests
 * with a fake (tests/unit/fleetlinkfake.c).
 *
 * In: each topic's single partition is assign()ed from the beginning (no
 * consumer group: nothing to coordinate, no commits), read to its end at
 * start (a snapshot, as Connect's readToEnd: begun with where it ends, ended
 * once every record before that was handed out), then long-polled. Records are handed out in log
 * order as (topic, topic id, offset, key, value or NULL for a tombstone).
 * read_committed: a configuration written in an aborted transaction is never
 * seen.
 *
 * Out: status records through an idempotent acks=all producer of its own
 * (held until the link is ready, fleetlink_cbs.ready),
 * never the records' transactional producer (a status record in an aborted
 * transaction would vanish). Bounded per key: while one record of a key is in
 * flight, only the newest of those sent after it is kept (at most two per
 * key, FLEETLINK_MAX_KEYS keys); an older pending one is dropped as
 * superseded, which for a compacted topic of last-value-wins loses nothing.
 *
 * The loop: one descriptor (fleetlink_fd) readable when records, ends or
 * delivery reports wait; fleetlink_poll hands them out through the
 * callbacks. Main loop only: every callback runs from fleetlink_poll, on
 * the caller's thread. Error convention: util/err.h. */
#ifndef SKIFF_FLEETLINK_H
#define SKIFF_FLEETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct config_section;
struct fleetlink;

enum fleetlink_err {
	FLEETLINK_OK = 0,
	FLEETLINK_ERR = -1,        /* librdkafka failed (no client, a pipe): a restart may pass */
	FLEETLINK_ERR_CONFIG = -2, /* bad settings, or a topic refused: a person must act */
	FLEETLINK_ERR_NOMEM = -3,
	FLEETLINK_ERR_FULL = -4,     /* FLEETLINK_MAX_KEYS status keys held: nothing taken */
	FLEETLINK_ERR_NOSTATUS = -5, /* fleetlink_send without a status topic */
};

/* Status keys held at once (each with at most two records). */
#define FLEETLINK_MAX_KEYS 4096
/* Records handed out by one fleetlink_poll before it yields to the loop
 * (the descriptor stays readable). */
#define FLEETLINK_POLL_BUDGET 500

/* A short text for a fleetlink_err code; never NULL. */
const char *fleetlink_strerror(int err);

/* What a link reads and writes. Every pointer is the caller's and must
 * outlive the link. */
struct fleetlink_conf {
	const struct config_section *worker; /* connection settings (kafka/kconf.h kconf_worker) */
	const char *device;                  /* group.id skiff-fleet-<device>, client.id */
	const char *const *topics;           /* configuration topics, read from the beginning */
	size_t ntopics;
	const char *status_topic;  /* NULL: no producer (fleetlink_send refused) */
	bool create_status;        /* create status_topic when missing, check it is compacted */
	int status_partitions;     /* at its creation */
	int status_replication;    /* at its creation; -1: the broker's default */
	const char *create_config; /* a configuration topic to create when missing; NULL: none */
	int config_replication;    /* at its creation; -1: the broker's default */
	int64_t fetch_wait_max_ms; /* the long poll (fleet.fetch.wait.max.ms) */
	int timeout_ms;            /* an admin request (status records are never given up) */
};

/* One record read. Borrowed for the callback only. */
struct fleetlink_record {
	const char *topic;
	/* The topic's id (KIP-516): NULL, always, with librdkafka 2.0.2, whose
	 * metadata carries none. */
	const char *topic_id;
	int64_t offset;
	const char *key; /* not NUL-terminated; NULL: no key */
	size_t klen;
	const char *value; /* not NUL-terminated; NULL: a tombstone */
	size_t vlen;
};

/* What a link reports; arg as given to fleetlink_open. Called from
 * fleetlink_poll. */
struct fleetlink_cbs {
	/* Before any record of topic, once: where its snapshot ends, the offset
	 * after its last record at start (the high watermark; the last stable
	 * offset with transactions): records before it are the snapshot,
	 * records at or after it news. -1: not known (the cluster did not
	 * answer at start, and a record came before any answer said it).
	 * topic_id: NULL with librdkafka 2.0.2 (fleetlink_record). May be
	 * NULL. */
	void (*begin)(void *arg, const char *topic, const char *topic_id, int64_t end);
	void (*record)(void *arg, const struct fleetlink_record *r);
	/* topic read to the end begin said (end: that offset, or where the
	 * reader found the end when begin said -1): every record before it
	 * was handed out. Once per topic, after its begin. A topic that cannot
	 * be read (error) is never ended: read as empty, it would remove every
	 * connector it gave. */
	void (*snapshot)(void *arg, const char *topic, int64_t end);
	/* A status record's fate: rc 0 (acknowledged by every in-sync replica),
	 * or FLEETLINK_ERR with why. key NUL-terminated, borrowed. */
	void (*sent)(void *arg, const char *key, int rc, const char *why);
	/* A reading failure (topic missing, not authorised): rc, why. The link
	 * goes on (librdkafka retries); the fleet reports it. Also a start
	 * refused (a status topic that is not compacted): the link then reads
	 * and sends nothing. May be NULL. */
	void (*error)(void *arg, int rc, const char *why);
	/* The cluster did not answer the start (ops->late): why, once; the
	 * link asks again, less and less often, until it does. May be NULL. */
	void (*waiting)(void *arg, const char *why);
	/* The start is done: topics checked and assigned, status records
	 * held until now sent. Once. May be NULL. */
	void (*ready)(void *arg);
};

/* What an implementation gives the link: events the link's own callbacks
 * (fleetlink.c) take, arg the link. */
struct fleetlink_events {
	void (*begin)(void *arg, const char *topic, const char *topic_id, int64_t end);
	void (*record)(void *arg, const struct fleetlink_record *r);
	void (*snapshot)(void *arg, const char *topic, int64_t end);
	void (*delivered)(void *arg, void *token, int rc, const char *why);
	void (*error)(void *arg, int rc, const char *why);
	void (*waiting)(void *arg, const char *why);
	void (*ready)(void *arg);
};

/* An implementation; ctx is its own. */
struct fleetlink_ops {
	/* true: open returns before the cluster answered, and the start goes
	 * on from poll (ev->waiting, ev->ready); status records sent before
	 * ev->ready are held (coalesced per key, never produced). false: the
	 * link is ready at open. */
	bool late;
	/* Opens: 0 with *ctx, or a fleetlink_err with errbuf. Reports through
	 * ev(arg, ...) from poll only. */
	int (*open)(const struct fleetlink_conf *c, const struct fleetlink_events *ev, void *arg,
	            void **ctx, char *errbuf, size_t errlen);
	int (*fd)(const void *ctx);
	/* Hands out what waits, at most FLEETLINK_POLL_BUDGET records. */
	void (*poll)(void *ctx);
	/* Produces key=value (value NULL: a tombstone) to the status topic,
	 * copied; its fate comes back once through ev->delivered with token.
	 * 0, or a fleetlink_err with errbuf (then no report). */
	int (*produce)(void *ctx, const char *key, const char *value, size_t vlen, void *token,
	               char *errbuf, size_t errlen);
	/* Frees; no event is reported from here on (records in flight are
	 * dropped: call it after their reports, or accept their loss). */
	void (*destroy)(void *ctx);
};

/* Opens a link on ops (kafka/fleetlink_kafka.h's fleetlink_kafka_ops, or a
 * test's; librdkafka's waits for nothing: a cluster away at open is
 * waited for from poll, cbs->waiting). Returns 0 and *out
 * (fleetlink_destroy), or a fleetlink_err with errbuf. c and cbs are copied;
 * what they point to is borrowed. Main thread. */
int fleetlink_open(const struct fleetlink_ops *ops, const struct fleetlink_conf *c,
                   const struct fleetlink_cbs *cbs, void *arg, struct fleetlink **out, char *errbuf,
                   size_t errlen);

/* The descriptor to watch for POLLIN (core/loop.h loop_fd_add); owned by the
 * link. */
int fleetlink_fd(const struct fleetlink *l);

/* Hands out what waits (begins and ends of snapshots, records, errors, delivery
 * reports) through the callbacks. From the loop when fleetlink_fd is
 * readable. A callback may call fleetlink_send, not fleetlink_destroy. */
void fleetlink_poll(struct fleetlink *l);

/* Sends key=value (value NULL: a tombstone) to the status topic; key and
 * value are copied. Coalesced per key (see above): a record superseded while
 * pending is never sent, and gets no sent callback. Returns 0, or
 * FLEETLINK_ERR_FULL, FLEETLINK_ERR_NOSTATUS, FLEETLINK_ERR_NOMEM or the
 * producer's refusal, with errbuf. */
int fleetlink_send(struct fleetlink *l, const char *key, const char *value, size_t vlen,
                   char *errbuf, size_t errlen);

/* Status records in flight or pending (at most two per key). */
size_t fleetlink_pending(const struct fleetlink *l);

/* Frees the link; pending status records are dropped. Accepts NULL. */
void fleetlink_destroy(struct fleetlink *l);

#endif
