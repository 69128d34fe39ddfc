/* jpos: the journald source's position, and the offset texts records
 * refer to. Needs no libsystemd, so that it builds (and is unit-tested)
 * everywhere. Main loop only.
 *
 * Where reading stands, per sequence-number id. sd-journal orders
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
 * The offset texts (jpos_text), which records stand for. A journal position is
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
 * reading as for the other sources. A text is ~200 bytes and ~50 more
 * per sequence-number id: with one or two ids, 5000 one-entry batches in
 * flight (the ack slots nearly full: each acknowledgement lets one entry
 * in) hold ~1.3 MiB. With many ids they could hold far more (1,024 ids:
 * 45 KB a text), so the source also stops reading while its texts alive
 * hold JPOS_TEXTS_BYTES (jpos_texts_bytes), until acknowledgements free
 * them; no offset flush has to ask for a text any more. */
#ifndef SKIFF_JPOS_H
#define SKIFF_JPOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct src_ref;

#define JPOS_IDS_MAX 1024           /* ~56 bytes each in memory, up to ~50 in the offset */
#define JPOS_TEXTS_BYTES (4u << 20) /* of one source's texts alive, at most */

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

struct jpos_texts;

/* The account of one source's texts, in *out. Returns JPOS_OK, or
 * JPOS_ERR_NOMEM with *out NULL. jpos_texts_free gives the source's
 * reference back (accepts NULL); the account lives on until its last text
 * goes, which may be after the source closed. */
int jpos_texts_new(struct jpos_texts **out);
void jpos_texts_free(struct jpos_texts *t);

/* The bytes of t's texts alive. */
size_t jpos_texts_bytes(const struct jpos_texts *t);

/* A refcounted copy of an offset text (jpos_json) for records' offsets to
 * refer to, counted in of, in *out with one reference, the caller's;
 * src_ref_drop of the last frees it, and needs no context. Returns
 * JPOS_OK, or JPOS_ERR_NOMEM with *out NULL. */
int jpos_text_new(struct jpos_texts *of, const char *json, struct src_ref **out);

/* The text of a ref from jpos_text_new, valid while the ref is held; NULL
 * for NULL. */
const char *jpos_text(const struct src_ref *ref);

#endif
