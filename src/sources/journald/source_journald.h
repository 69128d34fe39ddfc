/* source_journald: the parts of the journald connector that need no
 * libsystemd, so that they build (and are unit-tested) everywhere.
 *
 * jring: the cursors that offsets stand for. A journal position is a
 * cursor, a string; struct src_offset holds integers. Each record's offset
 * carries a sequence number (v[0]) naming a cursor kept here, and
 * offset_json() turns the number back into {"cursor":"..."}. The ring keeps
 * one cursor per poll batch (the cursor of the batch's last entry): a record
 * inside a batch carries the previous batch's cursor, so an acknowledged
 * prefix that ends inside a batch commits the position before that batch
 * (re-read after a crash: duplicates within one batch, never a gap).
 *
 * Bound: at most JRING_SLOTS cursors between the oldest one the worker may
 * still ask for (the last one it asked for: offsets advance in order) and
 * the newest. A full ring stops reading until the next offset flush asks for
 * a newer one; with BATCH_RECORDS-sized batches that is far beyond what an
 * offset flush interval ever holds, with one-entry batches 4096 batches per
 * flush interval.
 *
 * jfields: one journal datum ("FIELD=value", value any bytes) into a
 * Connect struct's payload and schema. Main loop only. */
#ifndef SKIFF_SOURCE_JOURNALD_H
#define SKIFF_SOURCE_JOURNALD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define JRING_SLOTS 4096

struct jring;

/* A ring whose sequence number 0 holds a copy of cursor ("" stands for
 * "before the first entry"). NULL when memory is short. Free with
 * jring_free (accepts NULL). */
struct jring *jring_new(const char *cursor);
void jring_free(struct jring *r);

/* True when no more cursors can be pushed until jring_get asks for a newer
 * one. */
bool jring_full(const struct jring *r);

/* Keeps a copy of cursor; returns its sequence number, or -1 when the ring
 * is full or memory is short. */
int64_t jring_push(struct jring *r, const char *cursor);

/* The newest sequence number. */
int64_t jring_head(const struct jring *r);

/* The cursor of sequence number seq (owned by the ring, valid until the
 * next push), and every older one may be dropped from now on. NULL when seq
 * is no longer (or not yet) held. */
const char *jring_get(struct jring *r, int64_t seq);

/* The sequence-number id (s=, 32 hex digits) and sequence number (i=) of a
 * journal cursor. sd-journal calls cursors opaque; skiff reads these two
 * only to count the entries a gap lost, and a cursor it cannot read counts
 * as an unknown gap. Returns 0, or -1 when the cursor has not both. */
int jcursor_seqnum(const char *cursor, char id[33], uint64_t *seqnum);

/* Adds one datum of an entry to payload (the struct's values) and fields
 * (its schema's "fields" array). The value becomes a string when it is
 * well-formed UTF-8 without NUL, else bytes (base64 in the payload, as
 * Connect's JsonConverter writes bytes). Journal field names are [A-Z0-9_],
 * valid Connect field names. Returns 0, 1 when the field was already in the
 * entry (a repeated field: its first value is kept, this one dropped), -1
 * for a datum without '=' (malformed) or when memory is short (-2). */
int jfields_add(cJSON *payload, cJSON *fields, const void *data, size_t len);

/* How many bytes of a field value v (len bytes) to keep under a cap: len
 * when it fits, else cap moved back (by at most 3 bytes) to the start of a
 * UTF-8 character, so that cutting text keeps it text. */
size_t jfields_cut(const char *v, size_t len, size_t cap);

/* The optional int64 fields __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP
 * (microseconds), which sd-journal keeps outside the entry's data. Returns
 * 0 or -2 when memory is short. */
int jfields_add_time(cJSON *payload, cJSON *fields, const char *name, uint64_t usec);

/* A new struct schema {"type":"struct","fields":[],"optional":false,
 * "name":"skiff.journal.Entry"}; *fields is its array. NULL on no memory. */
cJSON *jfields_schema(cJSON **fields);

#endif
