/* fleetstate: the fleet's reducer (issue 28). Records read from a device's
 * config topics in, a plan of steps against what the device applied out.
 * Pure: no I/O, no clock, no log, no Kafka.
 *
 * Topics. The device reads its own config topic and one topic per group
 * (fleet.groups), each a single partition read from the beginning. They are
 * given to fleetstate_new in that order: topics[0] the device's own, then
 * the groups in fleet.groups order. Per connector name the device's own
 * topic wins, then the later group over the earlier one; a configuration is
 * taken whole from the topic that wins, never merged key by key. A target
 * state is resolved the same way, on its own: `skiff fleet pause app
 * --device X` pauses on X a connector whose configuration comes from a group.
 *
 * Records (fleetstate_take), per topic in log order; the last record of a
 * key wins:
 *   connector-X        {"properties":{...}}: X's configuration; a
 *                      tombstone: the topic no longer names X
 *   target-state-X     STARTED, PAUSED, STOPPED (state.v2 over state); one
 *                      read before connector-X (KIP-980) is kept and goes
 *                      with X's configuration when it comes; a connector
 *                      never given one is STARTED
 *   restart-connector-X one-shot: planned once, and only when read at or
 *                      after the topic's high watermark at start (a request
 *                      from last week is not replayed at every boot)
 *   skiff-topic-id     a UUID skiff fleet provision (or config) writes as the
 *                      topic's first record: the topic's id from here on,
 *                      for a broker client that gives none (librdkafka
 *                      2.0.2). A first marker names the topic it is read in
 *                      (the id it replaces stays an alias: what was applied
 *                      or refused under it is the same topic's); another
 *                      marker than the topic's means it was deleted and
 *                      recreated (see below), the read's end kept.
 *   task-*, commit-*, tasks-fencing-*, session-key, logger-cluster-*:
 *                      skipped (a skiff runs one task per connector and
 *                      derives it); a key of no kind counted as unknown.
 * A tombstone and an absent key mean the same (compaction turns one into
 * the other), so a tombstone in the device's own topic lets a group's
 * configuration of the same name apply.
 *
 * Removal by absence. Compaction drops tombstones delete.retention.ms after
 * cleaning: a device offline for a week may never see connector-X's. So an
 * applied connector that no topic names is removed, but only once every
 * topic has been read to its high watermark at start (fleetstate_begin, then
 * records or fleetstate_position up to it). A name is decided once no
 * unread record can change it: every topic ranked at or above the one whose
 * configuration wins, and at or above the one whose target state wins (all
 * topics when none holds one), read that far; until then it gets no step. A
 * topic whose id changed since the connector was applied
 * (deleted and recreated, KIP-516) removes nothing: the connector is kept
 * and a REPORT step says so, until a record names it.
 *
 * Plans compare configurations as maps (Connect reorders properties on a
 * PATCH): a re-read of what runs is no step at all, and the same
 * configuration at another offset is an ACK (record the source, report
 * APPLIED, reload nothing). A record the caller refused is passed back to
 * fleetstate_plan by (topic id, offset) and is not planned again.
 *
 * Bounds: per topic one slot per name (the last record of each of its
 * keys), FLEETSTATE_MAX_NAMES slots over all topics and one pending restart
 * per name; a record past them is refused with FLEETSTATE_ERR_LIMIT and
 * its topic can no longer prove an absence (nothing is removed by it). A
 * value longer than FLEETSTATE_MAX_VALUE is a bad record: reported, the
 * running configuration kept.
 *
 * Use (the fleet's loop client): fleetstate_begin each topic with the id
 * and high watermark metadata gave, fleetstate_take every record, then,
 * whenever no step of the previous plan is still running, fleetstate_plan
 * against the store as those steps left it. The reducer knows only the
 * fleet's connectors: a RESTART naming a connector of the local files is
 * the caller's to allow or refuse, and a target state for a name no topic
 * configures waits for its configuration (so a local connector cannot yet
 * be paused through a topic).
 *
 * Single-threaded (the fleet's loop client). Error convention: util/err.h. */
#ifndef SKIFF_FLEETSTATE_H
#define SKIFF_FLEETSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "fleet/connect_records.h"
#include "util/err.h"

enum {
	FLEETSTATE_OK = 0,
	FLEETSTATE_ERR_NOMEM = -2,
	FLEETSTATE_ERR_LIMIT = -3, /* a bound of the header's passed: the record is not kept */
	FLEETSTATE_ERR_TOPIC = -4, /* a topic the reducer was not given */
	FLEETSTATE_ERR_ARG = -5,   /* no topics, an empty topic name, a name twice */
};

/* The key of a config topic's marker record (its value: the topic's id, a
 * UUID), and the most bytes of that value. */
#define FLEETSTATE_MARKER_KEY "skiff-topic-id"
#define FLEETSTATE_MARKER_MAX 64

/* Most slots (a name in one topic) over all topics, most bytes of a value. */
#define FLEETSTATE_MAX_NAMES 4096
#define FLEETSTATE_MAX_VALUE (1024 * 1024)

const char *fleetstate_strerror(int code);

struct fleetstate;

/* A record as read: topic, its topic id (KIP-516, as text), offset, key
 * and value (NULL: a tombstone). Borrowed for the call. */
struct fleetstate_record {
	const char *topic;
	const char *topic_id;
	int64_t offset;
	const char *key;
	size_t keylen;
	const char *value;
	size_t valuelen;
};

/* Where a record was read. topic NULL: none (a target state never given). */
struct fleetstate_source {
	const char *topic;
	const char *topic_id;
	int64_t offset;
};

/* A connector as the device applied it (the fleet store's entry), or as a
 * step asks to record it once done. */
struct fleetstate_applied {
	const char *name;
	struct fleetstate_source config_from;
	const cJSON *config; /* its properties: an object of strings */
	enum connect_target target;
	struct fleetstate_source target_from;
};

/* A record the caller refused, by (topic id, offset). */
struct fleetstate_mark {
	const char *topic_id;
	int64_t offset;
};

enum fleetstate_op {
	FLEETSTATE_ADD,     /* entry: a new connector, started in entry.target */
	FLEETSTATE_REPLACE, /* entry: another configuration (and target state) */
	FLEETSTATE_ACK,     /* entry: what runs, from another record: record it, reload nothing */
	FLEETSTATE_TARGET_STATE, /* entry: the same configuration, another target state */
	FLEETSTATE_REMOVE,       /* reason: a tombstone, or absent from a whole read */
	FLEETSTATE_RESTART,      /* include_tasks, only_failed */
	FLEETSTATE_REPORT,       /* reason: nothing applied (a bad record, a recreated topic) */
};

/* One step. Every string and config is owned by the plan. */
struct fleetstate_step {
	enum fleetstate_op op;
	const char *name;
	enum connect_kind
	    record; /* the record answered: CONNECT_CONNECTOR, _TARGET_STATE, _RESTART */
	struct fleetstate_source from;   /* that record (REMOVE by absence, REPORT of a recreated
	                                    topic: the applied entry's source) */
	struct fleetstate_applied entry; /* ADD, REPLACE, ACK, TARGET_STATE: store it once done */
	bool include_tasks, only_failed; /* RESTART */
	const char *reason;              /* REMOVE, REPORT */
};

struct fleetstate_plan;

struct fleetstate_counts {
	uint64_t taken;     /* records taken */
	uint64_t skipped;   /* task-, commit-, tasks-fencing-, session-key, logger-cluster-,
	                     a restart-connector- tombstone */
	uint64_t unknown;   /* keys of no kind Connect writes */
	uint64_t old;       /* restart requests read before the high watermark at start */
	uint64_t bad;       /* values that do not decode (reported) */
	uint64_t refused;   /* records refused with FLEETSTATE_ERR_LIMIT */
	uint64_t recreated; /* topic ids that changed under the reducer */
};

/* A reducer over ntopics topics (names copied): topics[0] the device's own,
 * then the groups in fleet.groups order. Returns 0, FLEETSTATE_ERR_ARG or
 * _NOMEM (*out NULL). */
int fleetstate_new(const char *const *topics, size_t ntopics, struct fleetstate **out);

/* Frees st; NULL is fine. */
void fleetstate_destroy(struct fleetstate *st);

/* The start of topic's read: its id from metadata and its high watermark
 * (records at or after it are news). A topic with hwm 0 is read whole at
 * once. Returns 0, _TOPIC or _NOMEM. */
int fleetstate_begin(struct fleetstate *st, const char *topic, const char *topic_id, int64_t hwm);

/* The consumer's position in topic (the next offset it reads): a read that
 * passed compacted-away offsets or transaction markers reaches the high
 * watermark without a record at hwm - 1. Returns 0 or _TOPIC. */
int fleetstate_position(struct fleetstate *st, const char *topic, int64_t next);

/* True once every topic has been read to its high watermark at start and
 * none refused a record: only then can an absence remove. */
bool fleetstate_complete(const struct fleetstate *st);

/* Takes one record. A record of another topic id than the topic's (the topic
 * was deleted and recreated) first forgets what the old one said. Returns 0,
 * _TOPIC, _LIMIT (errbuf says which bound; counted) or _NOMEM. */
int fleetstate_take(struct fleetstate *st, const struct fleetstate_record *rec, char *errbuf,
                    size_t errlen);

/* The steps that take applied (napplied entries, names unique) to what the
 * records read so far ask for; refused: records the caller refused (not
 * planned again). Order: removals, then per name in the order first read
 * (ADD, REPLACE, ACK, TARGET_STATE, REPORT), then restarts. Restart requests
 * are consumed: planned once. Borrowed inputs; *out is the caller's
 * (fleetstate_plan_free). Returns 0 or _NOMEM. */
int fleetstate_plan(struct fleetstate *st, const struct fleetstate_applied *applied,
                    size_t napplied, const struct fleetstate_mark *refused, size_t nrefused,
                    struct fleetstate_plan **out);

size_t fleetstate_plan_count(const struct fleetstate_plan *p);
const struct fleetstate_step *fleetstate_plan_step(const struct fleetstate_plan *p, size_t i);
void fleetstate_plan_free(struct fleetstate_plan *p);

/* The id topic is read under now (owned by st, valid until the next call
 * on st), or NULL: begun without one, or not a topic of st. */
const char *fleetstate_topic_id(struct fleetstate *st, const char *topic);

void fleetstate_counts(const struct fleetstate *st, struct fleetstate_counts *out);

/* "ADD", "REPLACE", ... */
const char *fleetstate_op_name(enum fleetstate_op op);

#endif
