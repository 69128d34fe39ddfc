/* fleetlinkfake: a fleet link for unit tests behind kafka/fleetlink.h
 * (fleetlinkfake_ops). A test queues what the cluster would say (records,
 * ends of snapshots, errors, delivery reports, in that order of calls) and
 * the link hands them out at the next fleetlink_poll; the fake's descriptor
 * is readable while anything is queued. What the link produced is kept, in
 * order, for the test to read and to deliver in any order with any result. */
#ifndef SKIFF_FLEETLINKFAKE_H
#define SKIFF_FLEETLINKFAKE_H

#include "kafka/fleetlink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fleetlinkfake;

/* One status record as produced: copies the fake owns. */
struct fleetlinkfake_sent {
	char *key;
	char *value; /* NULL: a tombstone */
	size_t vlen;
	void *token;
	bool delivered; /* its report queued already */
};

extern const struct fleetlink_ops fleetlinkfake_ops;
/* The same, late (fleetlink_ops.late): ready only once
 * fleetlinkfake_ready's event is polled. */
extern const struct fleetlink_ops fleetlinkfake_late_ops;
/* Queue the late start's events (fleetlink_events.waiting, .ready). */
void fleetlinkfake_waiting(struct fleetlinkfake *f, const char *why);
void fleetlinkfake_ready(struct fleetlinkfake *f);

/* The fake the last fleetlink_open on fleetlinkfake_ops made (freed with
 * its link), NULL before. */
struct fleetlinkfake *fleetlinkfake_last(void);

/* Queues a snapshot's begin, a record (value NULL: a tombstone), a
 * snapshot's end, an error. */
void fleetlinkfake_begin(struct fleetlinkfake *f, const char *topic, int64_t end);
void fleetlinkfake_record(struct fleetlinkfake *f, const char *topic, int64_t offset,
                          const char *key, const char *value);
void fleetlinkfake_end(struct fleetlinkfake *f, const char *topic, int64_t end);
void fleetlinkfake_error(struct fleetlinkfake *f, const char *why);

/* Status records produced so far, and the i-th (borrowed). */
size_t fleetlinkfake_count(const struct fleetlinkfake *f);
const struct fleetlinkfake_sent *fleetlinkfake_sent(const struct fleetlinkfake *f, size_t i);

/* Queues the i-th produced record's report: rc 0 (acknowledged) or
 * FLEETLINK_ERR with why. Once per record. */
void fleetlinkfake_deliver(struct fleetlinkfake *f, size_t i, int rc, const char *why);

/* The next produce fails with rc (0: none). */
void fleetlinkfake_refuse(struct fleetlinkfake *f, int rc);

/* What the link was opened with (the fake's copy). */
const struct fleetlink_conf *fleetlinkfake_conf(const struct fleetlinkfake *f);

#endif
