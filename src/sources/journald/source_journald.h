/* source_journald: the parts of the journald connector that need no
 * libsystemd, so that they build (and are unit-tested) everywhere.
 *
 * jpos_text: the offsets that records stand for. A journal position is
 * text (jpos_json: a cursor and a map of sequence numbers); struct
 * src_offset holds integers and a reference (core/source.h). Each record's
 * offset refers to a refcounted copy of a text, which offset_json() hands
 * back. There is one text per poll batch (the position after the batch's
 * last entry): a record inside a batch refers to the previous batch's, so
 * an acknowledged prefix that ends inside a batch commits the position
 * before that batch (re-read after a crash: duplicates within one batch,
 * never a gap). A text lives while a record in flight or a committable
 * offset names it, and is freed when the last such reference goes.
 *
 * Bound: at most one text per batch in flight, so at most as many as the
 * worker's ack slots (producer.queue.buffering.max.messages), which bound
 * reading as for the other sources; each text is ~60 bytes per sequence-number id
 * (one or two on most systems). An offset flush no longer has to ask for a
 * text before reading goes on.
 *
 * jpos: where reading stands, per sequence-number id. sd-journal orders
 * the files of a journal by sequence number only within one id (one
 * journald's files); files of different ids (another boot after the
 * journal was recreated, another host's file in a journal-remote
 * directory) it interleaves by their clocks, so a file whose clock is
 * behind sorts before entries already read. Within one id sequence numbers
 * only grow in sd-journal's order; so "the last sequence number passed, per
 * id" says exactly which entries were read, whatever their clocks. At most
 * JPOS_IDS_MAX ids: a new one beyond that drops the one set least recently
 * (its entries, if still in the journal, are read again at the next rescan:
 * duplicates, never a gap). Ids with no entry left in the journal are
 * dropped at the end of each pass from the head, so only ids that are in
 * the journal count against the bound.
 *
 * jfields: one journal datum ("FIELD=value", value any bytes) into a
 * Connect struct's payload and schema. Main loop only. */
#ifndef SKIFF_SOURCE_JOURNALD_H
#define SKIFF_SOURCE_JOURNALD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct src_ref;

#define JPOS_IDS_MAX 1024 /* ~56 bytes each in memory, up to ~50 in the offset */

/* jpos flags, the reader's own marks per id. */
#define JPOS_SEEN 1u    /* an entry of the id was met since the scan began */
#define JPOS_SETTLED 2u /* its stored position was found, or found gone */

/* The sequence-number id (s=, 32 hex digits) and sequence number (i=) of a
 * journal cursor. sd-journal calls cursors opaque, and libsystemd 252 has
 * no sd_journal_get_seqnum(); every cursor it writes has both. Returns 0,
 * or -1 when the cursor has not both. */
int jpos_cursor_seqnum(const char *cursor, char id[33], uint64_t *seqnum);

struct jpos;

/* Failures of jpos_* (util/err.h). */
enum jpos_err {
	JPOS_OK = 0,
	JPOS_ERR = -1,       /* not an id, not a "seqnums" object */
	JPOS_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a jpos_err code; never NULL. */
const char *jpos_strerror(int err);

/* An empty position in *out. Returns JPOS_OK, or JPOS_ERR_NOMEM with *out
 * NULL. Free with jpos_free (accepts NULL). */
int jpos_new(struct jpos **out);
void jpos_free(struct jpos *p);

/* True and *seq when id (32 hex digits) has a position. */
bool jpos_get(const struct jpos *p, const char *id, uint64_t *seq);

/* Sets id's position to seq (flags kept; a new id has none). Returns 0, 1
 * when a new id took the place of the one set least recently (its id in
 * dropped), -1 when id is not 32 characters. */
int jpos_set(struct jpos *p, const char *id, uint64_t seq, char dropped[33]);

/* The JPOS_* flags of id (0 when unknown); jpos_flag adds flags to a known
 * id. */
unsigned jpos_flags(const struct jpos *p, const char *id);
void jpos_flag(struct jpos *p, const char *id, unsigned flags);

/* Clears flags from every id. */
void jpos_unflag(struct jpos *p, unsigned flags);

/* Drops every id without one of flags, clears nothing; returns how many
 * went. */
size_t jpos_sweep(struct jpos *p, unsigned flags);

/* Adds the ids of an offset's "seqnums" object ({"<id>": <seqnum>, ...},
 * at most JPOS_IDS_MAX, integers up to 2^53). Returns 0 or -1 when it is
 * not such an object. */
int jpos_load(struct jpos *p, const cJSON *seqnums);

/* The offset text {"cursor":"<cursor>","seqnums":{...}}, malloc'd (the
 * caller frees), NULL when memory is short. */
char *jpos_json(const struct jpos *p, const char *cursor);

/* A refcounted copy of an offset text (jpos_json) for records' offsets to
 * refer to, in *out with one reference, the caller's; src_ref_drop of the
 * last frees it, and needs no context. Returns JPOS_OK, or JPOS_ERR_NOMEM
 * with *out NULL. */
int jpos_text_new(const char *json, struct src_ref **out);

/* The text of a ref from jpos_text_new, valid while the ref is held; NULL
 * for NULL. */
const char *jpos_text(const struct src_ref *ref);

/* Results of jfields_add and jfields_add_time (util/err.h). */
enum jfields_err {
	JFIELDS_OK = 0,
	JFIELDS_REPEATED = 1,       /* not a failure: the field was there already */
	JFIELDS_ERR_MALFORMED = -1, /* a datum without '=', or a bad field name */
	JFIELDS_ERR_NOMEM = -2,     /* out of memory */
};

/* A short text for a jfields_err code; never NULL. */
const char *jfields_strerror(int err);

/* Adds one datum of an entry to payload (the struct's values) and fields
 * (its schema's "fields" array). The value becomes a string when it is
 * well-formed UTF-8 without NUL, else bytes (base64 in the payload, as
 * Connect's JsonConverter writes bytes). Journal field names are [A-Z0-9_],
 * valid Connect field names. Returns JFIELDS_OK, JFIELDS_REPEATED when the
 * field was already in the entry (its first value is kept, this one
 * dropped), JFIELDS_ERR_MALFORMED for a datum without '=', or
 * JFIELDS_ERR_NOMEM. */
int jfields_add(cJSON *payload, cJSON *fields, const void *data, size_t len);

/* How many bytes of a field value v (len bytes) to keep under a cap: len
 * when it fits, else cap moved back (by at most 3 bytes) to the start of a
 * UTF-8 character, so that cutting text keeps it text. */
size_t jfields_cut(const char *v, size_t len, size_t cap);

/* The optional int64 fields __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP
 * (microseconds), which sd-journal keeps outside the entry's data. Returns
 * JFIELDS_OK or JFIELDS_ERR_NOMEM. */
int jfields_add_time(cJSON *payload, cJSON *fields, const char *name, uint64_t usec);

/* A new struct schema {"type":"struct","fields":[],"optional":false,
 * "name":"skiff.journal.Entry"}; *fields is its array. NULL on no memory. */
cJSON *jfields_schema(cJSON **fields);

#endif
