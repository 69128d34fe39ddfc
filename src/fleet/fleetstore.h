/* fleetstore: what the fleet has applied on this device, kept across
 * restarts (issue 28; design §2.4, §4.5). Not the connectors' configurations
 * (those are the fleet layer, fleet-connectors.json, beside the REST API's
 * layer): the bookkeeping that lets a device that was away tell what changed.
 *
 *   - the generation (int32): +1 at each start and each applied change, the
 *     "generation" of the device's Connect status records (one writer per
 *     status topic makes it a sequence);
 *   - per config topic (its own, its groups'): the topic id (KIP-516, as
 *     Kafka prints it) and the offset applied up to; a topic found with
 *     another id was deleted and made again, and its emptiness must not
 *     remove every connector it gave;
 *   - per connector the fleet gave: the topic, topic id and offset of the
 *     record its configuration was last applied from, its target state and
 *     the record that gave it; a connector absent from its topic's snapshot
 *     was removed (compaction drops tombstones after a day);
 *   - refusals, by (topic id, offset): a refused record is reported once,
 *     not again at each restart. At most FLEETSTORE_MAX_REFUSALS, the oldest
 *     forgotten first: past the bound a restart reports an old refusal once
 *     more, which costs one status record;
 *   - the status keys published, so that a removed connector's keys can be
 *     tombstoned.
 *
 * On disk: "fleet-state.json" beside the offsets file (none with the
 * offsets topic alone: the store then lives in memory until exit), one JSON
 * document and a newline, closed by a CRC-32C as the offsets file is:
 *   {"format":"skiff-fleet-state","version":1,"generation":12,
 *    "topics":[{"topic":"skiff.config.gw-1","id":"V1Vw5wSwRlmq6DP5bfq8_A","offset":17}],
 *    "connectors":[{"name":"app","config_from":{"topic":"skiff.config.gw-1",
 *      "id":"V1Vw5wSwRlmq6DP5bfq8_A","offset":15},"target":"PAUSED",
 *      "target_from":{"topic":"skiff.config.gw-1","id":"V1Vw5wSwRlmq6DP5bfq8_A","offset":16}}],
 *    "refusals":[{"id":"V1Vw5wSwRlmq6DP5bfq8_A","offset":16}],
 *    "status_keys":["status-connector-app","status-task-app-0"],"crc32c":"0123abcd"}
 * Written as the offsets file is (util/atomicfile.h: temp file, fsync,
 * rename, fsync of the directory; mode 0600), keeping the previous
 * generation as "fleet-state.json.prev". Load takes the valid one of the two
 * with the higher generation, so a torn or damaged file falls back on the
 * one before; after that the next save renames straight over the bad file
 * (rotating it would replace the good one). When files exist and neither is
 * valid (torn, garbage, checksum, a newer version), load fails naming each
 * file and why, and skiff refuses to start (exit 78), as with the offsets
 * file: starting empty would keep connectors a topic no longer names and
 * report old refusals again. A person deletes both files to start over; the
 * device then takes its topics' state as new (the fleet layer's configs
 * compare equal and are not reloaded).
 *
 * Bounded: the counts below, each text at most FLEETSTORE_MAX_TEXT bytes,
 * offsets in [0, 2^53] (exact in JSON), the file at most FLEETSTORE_MAX_BYTES.
 *
 * Leaf module (util and the target state names of connect_records). Main
 * loop only. Error convention: util/err.h. */
#ifndef SKIFF_FLEETSTORE_H
#define SKIFF_FLEETSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet/connect_records.h"
#include "util/err.h"

enum {
	FLEETSTORE_OK = 0,
	FLEETSTORE_ERR_IO = -1,      /* a file cannot be read or written (errbuf: which, why) */
	FLEETSTORE_ERR_NOMEM = -2,   /* out of memory */
	FLEETSTORE_ERR_CORRUPT = -3, /* no valid generation: torn, damaged, not this format */
	FLEETSTORE_ERR_VERSION = -4, /* written by a newer skiff (a version this one lacks) */
	FLEETSTORE_ERR_FULL = -5,    /* a bound reached: nothing was added */
	FLEETSTORE_ERR_ARG = -6,     /* a text too long or empty, an offset out of range */
};

/* A short text for a FLEETSTORE_* code; never NULL. */
const char *fleetstore_strerror(int err);

/* The file's name, beside the offsets file. */
#define FLEETSTORE_FILE "fleet-state.json"

#define FLEETSTORE_MAX_TOPICS 128       /* config topics: the device's and its groups' */
#define FLEETSTORE_MAX_CONNECTORS 1024  /* connectors the fleet gave */
#define FLEETSTORE_MAX_REFUSALS 256     /* remembered refusals (the oldest go first) */
#define FLEETSTORE_MAX_STATUS_KEYS 4096 /* status keys published */
#define FLEETSTORE_MAX_TEXT 512         /* bytes of a name, topic, id or key */
/* Every count at its bound, every text at its length escaped six-fold
 * (\u00XX) fits: (128 * 2 + 1024 * 5 + 256 + 4096) * 512 * 6 (30 MB) + structure. */
#define FLEETSTORE_MAX_BYTES (32u << 20)
#define FLEETSTORE_MAX_OFFSET 9007199254740992LL /* 2^53 */

struct fleetstore;

/* The store beside offsets_file (NULL or "": none; the store lives in
 * memory and fleetstore_save writes nothing), read when it exists, its
 * generation as found (0 when new; fleetstore_bump at start). Returns 0 and
 * *out (fleetstore_destroy), or FLEETSTORE_ERR_IO, _NOMEM, _CORRUPT or
 * _VERSION with errbuf naming each file and what is wrong with it. */
int fleetstore_load(const char *offsets_file, struct fleetstore **out, char *errbuf, size_t errlen);

/* Writes the store durably (see the top of this file); on failure the files
 * on disk are as they were and the store in memory is unchanged (the next
 * save writes a fresh temp file). Returns 0 or FLEETSTORE_ERR_IO /
 * FLEETSTORE_ERR_NOMEM with errbuf "step path: why". Blocks on the disk. */
int fleetstore_save(struct fleetstore *fs, char *errbuf, size_t errlen);

/* The file, or NULL when the store is not kept. Owned by fs. */
const char *fleetstore_path(const struct fleetstore *fs);

/* The generation, and the generation + 1 (kept, returned): at each start and
 * each applied change. Stays at INT32_MAX once there (2^31 changes: a
 * change a second for 68 years). */
int32_t fleetstore_generation(const struct fleetstore *fs);
int32_t fleetstore_bump(struct fleetstore *fs);

/* A config topic's id and the offset applied up to (the next to read):
 * set (added or replaced; texts copied), or read (*id owned by fs).
 * fleetstore_topic_set returns 0, FLEETSTORE_ERR_ARG, _FULL or _NOMEM;
 * fleetstore_topic returns false for a topic not kept. */
int fleetstore_topic_set(struct fleetstore *fs, const char *topic, const char *id, int64_t offset);
bool fleetstore_topic(const struct fleetstore *fs, const char *topic, const char **id,
                      int64_t *offset);

/* Where a record was read: its topic, the topic's id and the offset.
 * topic NULL: none (a target state never given). Field for field
 * fleetstate.h's struct fleetstate_source. */
struct fleetstore_source {
	const char *topic;
	const char *topic_id;
	int64_t offset;
};

/* A connector the fleet gave, as applied (fleetstate.h's struct
 * fleetstate_applied but the configuration, which the fleet layer keeps):
 * the record its configuration was last applied from, its target state and
 * the record that gave it. Texts owned by whoever filled it (fs for a
 * read). */
struct fleetstore_connector {
	const char *name;
	struct fleetstore_source config_from; /* required */
	enum connect_target target;
	struct fleetstore_source target_from; /* topic NULL: never given (STARTED) */
};

/* Adds or replaces c (by name; texts copied; on failure the entry is as it
 * was). Returns 0, FLEETSTORE_ERR_ARG (no config_from, a text or offset
 * out of bounds, an unknown target), _FULL or _NOMEM. */
int fleetstore_connector_set(struct fleetstore *fs, const struct fleetstore_connector *c);
/* Removes name's entry; false when there was none. */
bool fleetstore_connector_remove(struct fleetstore *fs, const char *name);
size_t fleetstore_connector_count(const struct fleetstore *fs);
/* Fills *out with entry i (< count), or name's entry (false: none). */
void fleetstore_connector_at(const struct fleetstore *fs, size_t i,
                             struct fleetstore_connector *out);
bool fleetstore_connector_find(const struct fleetstore *fs, const char *name,
                               struct fleetstore_connector *out);

/* Remembers that the record at (topic id, offset) was refused and
 * reported; at the bound the oldest refusal is forgotten. Returns 0 (also
 * when it was remembered already), FLEETSTORE_ERR_ARG or _NOMEM. */
int fleetstore_refusal_add(struct fleetstore *fs, const char *id, int64_t offset);
/* True when that record was refused and reported. */
bool fleetstore_refused(const struct fleetstore *fs, const char *id, int64_t offset);
/* The refusals remembered, oldest first (for fleetstate_plan's marks):
 * refusal i (< count) into *id (owned by fs) and *offset. */
size_t fleetstore_refusal_count(const struct fleetstore *fs);
void fleetstore_refusal_at(const struct fleetstore *fs, size_t i, const char **id, int64_t *offset);

/* A key of the status topic the device wrote a value to (added once), so
 * that it can write a tombstone when its connector goes. Returns 0,
 * FLEETSTORE_ERR_ARG, _FULL (not kept: the caller counts it) or _NOMEM. */
int fleetstore_status_key_add(struct fleetstore *fs, const char *key);
/* Forgets key (its tombstone was written); false when not kept. */
bool fleetstore_status_key_remove(struct fleetstore *fs, const char *key);
size_t fleetstore_status_key_count(const struct fleetstore *fs);
/* Key i (< count), owned by fs. */
const char *fleetstore_status_key(const struct fleetstore *fs, size_t i);

/* Accepts NULL. */
void fleetstore_destroy(struct fleetstore *fs);

#endif
