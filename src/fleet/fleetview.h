/* fleetview: what `skiff fleet` knows of the devices from their status
 * topics (issue 28, design §4.7): per device only the last heartbeat, the
 * last status of each connector and the last outcome of each connector
 * (skiff-outcome-NAME), fed one record at a time as the topics are read, so
 * memory is bounded by devices and connectors, never by records. Renders
 * the status table and its JSON, and answers whether a device applied a
 * configuration record written at a given topic and offset.
 *
 * A device is named by its status topic (status.storage.topic's template,
 * {device} in it), not by what a record says. Records that do not decode
 * (another writer's, a newer device's of another shape) are counted and
 * skipped, never fatal: one bad device must not hide the fleet.
 *
 * Pure: no Kafka, no clock (now_ms is given), no log. Single-threaded.
 * Error convention: util/err.h. */
#ifndef SKIFF_FLEETVIEW_H
#define SKIFF_FLEETVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

enum {
	FLEETVIEW_OK = 0,
	FLEETVIEW_ERR_NOMEM = -2,
	FLEETVIEW_ERR_ARG = -3, /* a template without {device}, an unknown device */
};

const char *fleetview_strerror(int err);

struct fleetview;

/* A new empty view for status topics named by status_tmpl (copied; must
 * hold {device}). Returns 0 and *out (fleetview_destroy), _ARG or _NOMEM. */
int fleetview_new(const char *status_tmpl, struct fleetview **out);

void fleetview_destroy(struct fleetview *v);

/* Whether topic is a status topic of v's template: true with the device's
 * name in buf (len bytes with its NUL), which passes fleetconf_name_check. */
bool fleetview_topic_device(const struct fleetview *v, const char *topic, char *buf, size_t len);

/* Feeds one record of a status topic (value NULL: a tombstone). A topic of
 * no device is ignored. Returns 0 or _NOMEM; an undecodable record is
 * counted (fleetview_skipped) and returns 0. */
int fleetview_feed(struct fleetview *v, const char *topic, const char *key, size_t keylen,
                   const char *value, size_t vallen);

/* Records skipped for not decoding. */
uint64_t fleetview_skipped(const struct fleetview *v);

/* Whether the device was seen (a record of its status topic, or
 * fleetview_add_device). */
bool fleetview_has(const struct fleetview *v, const char *device);

/* Adds a device seen without any record (its status topic exists, empty).
 * Returns 0 or _NOMEM. */
int fleetview_add_device(struct fleetview *v, const char *device);

/* The devices whose last heartbeat lists group, in name order: calls fn for
 * each; returns how many. */
size_t fleetview_group(const struct fleetview *v, const char *group,
                       void (*fn)(void *ctx, const char *device), void *ctx);

/* What a device answered to a configuration record. */
enum fleetview_answer {
	FLEETVIEW_NO_ANSWER,
	FLEETVIEW_APPLIED,
	FLEETVIEW_REFUSED,
};

/* Whether device answered the record written to topic at offset for the
 * connector name: its last skiff-outcome-NAME names topic with an offset at
 * or past offset. *reason: REFUSED's reason (owned by v, valid until the
 * next feed; "" when the device gave none). */
enum fleetview_answer fleetview_answer(const struct fleetview *v, const char *device,
                                       const char *name, const char *topic, int64_t offset,
                                       const char **reason);

/* When the device was last seen: its last heartbeat's "at", or -1. */
int64_t fleetview_last_seen(const struct fleetview *v, const char *device);

/* "12s ago", "3m ago", "5h ago", "2d ago", "never" (age of at_ms at now_ms)
 * into buf. */
void fleetview_age(int64_t at_ms, int64_t now_ms, char *buf, size_t len);

/* Which devices to show: all (both NULL), one, or a group's. */
struct fleetview_filter {
	const char *device;
	const char *group;
};

/* Appends the table, one line per device in name order, with a header:
 * DEVICE HEALTH LAST-SEEN VERSION CONNECTORS BACKLOG LOST RSS. HEALTH is the
 * heartbeat's verdict, "stale" when the heartbeat is older than twice the
 * interval it carries, "unknown" without one. Returns 0 or out's error as
 * _NOMEM. */
int fleetview_table(const struct fleetview *v, const struct fleetview_filter *f, int64_t now_ms,
                    struct buf *out);

/* Appends the same as one JSON document for scripts:
 * {"devices":[{"device","health","stale","reason","last_seen_ms","age_ms",
 *   "version","interval_ms","seq","groups":[...],"connectors":[{"name","state"}],
 *   "backlog_bytes","lost":{"records","bytes","files"},"rss_kb",
 *   "outcomes":[{"name","topic","offset","record","outcome","reason","at_ms"}]}],
 *  "skipped":N}
 * (a device without heartbeat has null for its heartbeat's members). */
int fleetview_json(const struct fleetview *v, const struct fleetview_filter *f, int64_t now_ms,
                   struct buf *out);

#endif
