/* offsets_store: the offset store's side that its backends see (offsets.c). A
 * backend (offsets_file.c, offsets_kafka.c, offsets_log.c) fills a const
 * struct offset_backend_ops, hands it to offsets_open, and during load and
 * write calls back into the store through the functions below; the store
 * calls no backend but through the ops. The users' API (get, put, write,
 * iteration) is offsets.h, which this header includes.
 *
 * Called from the main loop only. */
#ifndef SKIFF_OFFSETS_STORE_H
#define SKIFF_OFFSETS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offsets/offsets.h"

/* A backend persists the map and reads it back. Load is a walk over what the
 * backend holds, entry by entry, in the order it stored them: a snapshot
 * backend (the file: one generation holds each key once) hands each entry to
 * offsets_load_entry; a log backend (a compacted topic read from its start to
 * its end, where a key recurs and a tombstone deletes it) hands each record
 * to offsets_load_record. A write completes in store (the file) or later
 * (store returns OFFSETS_INPROGRESS, then the backend calls
 * offsets_write_done: a topic). Every op is called on the main loop. */
struct offset_backend_ops {
	const char *name;
	/* Fills o (see above); *generation: the highest stored, 0 for none;
	 * *from_prev: 1 when an older copy had to be used (errbuf says why). */
	int (*load)(void *ctx, struct offsets *o, uint64_t *generation, int *from_prev,
	            char *errbuf, size_t errlen);
	/* Writes every entry of o as generation: returns 0 once it is durable
	 * (errbuf "" or a note for the log, see offsets_done_fn), or a negative
	 * OFFSETS_ERR_* with errbuf; or, for a backend whose
	 * writes are acknowledged later, takes from o now whatever it needs,
	 * returns OFFSETS_INPROGRESS and calls offsets_write_done(o,
	 * generation, ..) once when the write completes. */
	int (*store)(void *ctx, const struct offsets *o, uint64_t generation, char *errbuf,
	             size_t errlen);
	void (*close)(void *ctx);
	/* Optional (offsets_verify): true when what the backend stored is no
	 * longer where it put it, so the next store must write it whole. */
	bool (*moved)(void *ctx);
	/* Optional, for a backend acknowledged later: a descriptor the loop
	 * watches for readability (-1: none), and what to do then (serve the
	 * acknowledgements, which call offsets_write_done). */
	int (*fd)(void *ctx);
	void (*poll)(void *ctx);
	/* Optional: key's value is in the backend's medium already, written
	 * outside the store as generation gen by device (offsets_written_outside). */
	void (*written)(void *ctx, const char *key, const char *value, uint64_t gen,
	                const char *device);
	/* Optional (offsets_adopt): loads connector's keys now. */
	int (*adopt)(void *ctx, struct offsets *o, const char *connector, char *errbuf,
	             size_t errlen);
};

/* Creates a store persisted by ops and loads it (ops->load). Takes ctx in
 * every case: ops->close(ctx) runs in offsets_destroy, or before an error
 * return. On success *out is owned by the caller (offsets_destroy); on failure
 * *out is NULL and errbuf says why. Called from the main loop at start-up. */
int offsets_open(const struct offset_backend_ops *ops, void *ctx, struct offsets **out,
                 char *errbuf, size_t errlen);

/* For backends: adds an entry during load without marking the store dirty.
 * Validates and canonicalises like offsets_put; a key already present is
 * OFFSETS_ERR_ARG (a stored generation never holds a key twice). */
int offsets_load_entry(struct offsets *o, const char *key, const char *value);

/* For log backends: applies one record read back, in the order written: a
 * later value of a key replaces the earlier one, value NULL (a tombstone)
 * removes the key. Validates and canonicalises like offsets_put. */
int offsets_load_record(struct offsets *o, const char *key, const char *value);

/* For backends: drops every entry, when a generation turns out bad halfway
 * through loading and the backend tries another. */
void offsets_load_reset(struct offsets *o);

/* For backends, during load: the backends disagree (a topic behind the
 * file, or the file behind the topic), so the store is dirty and the next
 * write puts the same offsets in both. */
void offsets_load_mark_dirty(struct offsets *o);

/* For backends, during load: what the load found worth a line in the log
 * beside the offsets themselves (copied, at most 1 KiB kept), at info
 * (the offsets topic's records and bytes read and the time it took) or,
 * with warn, as a warning (an offset Connect wrote that could not be taken
 * as written). A later note replaces an info note, never a warning. */
void offsets_load_note(struct offsets *o, bool warn, const char *text);

/* For backends whose store returned OFFSETS_INPROGRESS: the write of
 * generation completed (rc and why as offsets_done_fn). */
void offsets_write_done(struct offsets *o, uint64_t generation, int rc, const char *why);

/* What changed since the last write that succeeded with nothing changed
 * meanwhile: *idx[0..*n) (positions for offsets_key/offsets_value, each
 * once, valid until the next change), so that a backend writes in
 * proportion to what changed, not to the store (issue 22: 20,000 entries
 * looked up per flush). Returns false when that is not known - after a
 * load, a removal (positions move), out of memory, or before the first
 * write: every entry may have changed. A superset: a put of the same value
 * is not a change, and a write that failed leaves the list as it was. */
bool offsets_changed(const struct offsets *o, const uint32_t **idx, size_t *n);

#endif
