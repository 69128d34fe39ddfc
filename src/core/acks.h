/* acks: records in flight and the contiguous acknowledged prefix.
 *
 * One slab of slots, sized once at creation (the most records skiff keeps in
 * flight: memory is bounded by construction). Each source partition has a
 * FIFO (struct acks_fifo, kept by the caller for the partition) threaded
 * through the slab in read order. A delivery report marks its slot; the
 * FIFO's head then advances over every acknowledged slot, and the offset of
 * the last slot passed becomes committable. A failed slot is never passed:
 * the partition's committable offset stops just before it.
 *
 * The slot pointer is the token handed to librdkafka as msg_opaque, so a
 * delivery report finds its slot without a lookup. Called from the main loop
 * only (delivery reports are served there by rd_kafka_poll). */
#ifndef SKIFF_ACKS_H
#define SKIFF_ACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/source.h"
#include "util/err.h"

struct acks;

struct acks_fifo {
	uint32_t head, tail;           /* slot indices; ACKS_NIL when empty */
	uint32_t inflight;             /* slots in this FIFO */
	uint32_t pending;              /* ... of which no delivery report came yet */
	bool failed;                   /* a record of this partition failed for good */
	bool advanced;                 /* committable moved since acks_take() */
	struct src_offset committable; /* offset after the last record of the prefix */
};

#define ACKS_NIL UINT32_MAX

/* Initialises an empty FIFO. */
void acks_fifo_init(struct acks_fifo *f);

/* Drops f's committable offset's reference (f's owner is going away; after
 * acks_abandon, or with acks_destroy). */
void acks_fifo_fini(struct acks_fifo *f);

/* Failures of acks_new (util/err.h). */
enum acks_err {
	ACKS_OK = 0,
	ACKS_ERR_RANGE = -2, /* capacity not in 1..2^31 */
	ACKS_ERR_NOMEM = -3, /* out of memory */
};

/* A short text for an acks_err code; never NULL. */
const char *acks_strerror(int err);

/* Creates a slab of capacity slots (1..2^31) in *out. Returns ACKS_OK, or
 * ACKS_ERR_RANGE or ACKS_ERR_NOMEM with *out NULL. The caller owns it
 * (acks_destroy). A slot is 56 bytes (x86-64): with the
 * default 20,000 in flight, 1.1 MB of address space, resident only as far
 * as records were ever in flight at once (freed slots are reused first).
 * Each holds a reference to its offset's src_ref, if any, until the FIFO
 * passes it. */
int acks_new(uint32_t capacity, struct acks **out);

/* Free slots. */
uint32_t acks_available(const struct acks *a);
uint32_t acks_capacity(const struct acks *a);

/* Appends a record whose offset-after is *off to f. Returns the token for the
 * delivery report, or NULL when the slab is full (the caller should not have
 * asked: check acks_available first). */
void *acks_submit(struct acks *a, struct acks_fifo *f, const struct src_offset *off);

/* Takes back the most recent acks_submit of token's FIFO (the record could not
 * be handed to the producer after all). token must be that FIFO's tail. */
void acks_cancel(struct acks *a, void *token);

/* Records the outcome of token's delivery: ok, or failed for good. Advances
 * the FIFO's acknowledged prefix and frees the slots it passes. Returns the
 * token's FIFO, or NULL when nobody waits for it any more (acks_abandon). */
struct acks_fifo *acks_done(struct acks *a, void *token, bool ok);

/* The FIFO token's record belongs to, while its delivery report is awaited;
 * NULL when nobody waits for it any more (acks_abandon). */
struct acks_fifo *acks_owner(const void *token);

/* Lets go of f (its connector stopped): acknowledged and failed slots are
 * freed now, slots still in flight when their delivery report arrives. f's
 * committable offset stays as it was. */
void acks_abandon(struct acks *a, struct acks_fifo *f);

/* When the committable offset of f moved since the last call, copies it to
 * *out, clears the flag and returns true. out->ref is f's (borrowed): valid
 * until the next acks call on f; hold it to keep it longer. */
bool acks_take(struct acks_fifo *f, struct src_offset *out);

/* The offset acks_take gave is stored: f gives back its reference (nothing
 * reads f's committable offset again until it moves). A source's offset
 * reference is what it needs to render the offset (the file source: 56
 * bytes per file, held by every idle file of a glob otherwise). */
void acks_settle(struct acks_fifo *f);

/* After a burst: when no record is in flight and more than 64 KiB of slots
 * were ever used, gives their pages back to the system (the slots count as
 * never used again) and returns true; otherwise changes nothing and returns
 * false. Cheap to call at every offset flush. */
bool acks_shrink(struct acks *a);

void acks_destroy(struct acks *a);

#endif
