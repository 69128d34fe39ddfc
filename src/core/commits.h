/* commits: the one path from an acknowledged prefix to the offset store.
 * The worker's flush, a connector's stop, a source's starting place
 * (source_env.anchor) and an exactly-once commit all take a partition's
 * committable offset and store it here, so that each failure is handled
 * the same way: a store that fails (the store full, out of memory) keeps
 * the offset's text and is retried at the next flush, also for a connector
 * closed meanwhile; a newer store of the same key supersedes it. It also
 * keeps the outcome of the offset writes (FLUSH_FAILURES_BEFORE_PAUSE in a
 * row pause reading), and applies KIP-875's offset edits. Leaf of the
 * worker: it logs only what a write's completion says and how a source
 * settled an edited offset. Main loop only. */
#ifndef SKIFF_COMMITS_H
#define SKIFF_COMMITS_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct offsets;
struct partition;
struct partitions;
struct src_offset;
struct connector_settings;
struct offsets_doc_entry;

/* Offset flushes that may fail in a row before reading pauses: past them, a
 * crash would replay ever more, so duplicates would no longer be bounded. */
#define FLUSH_FAILURES_BEFORE_PAUSE 3

/* commits' own codes. commits_store and commits_anchor also pass on the
 * store's OFFSETS_ERR_* (offsets.h), so these sit below every one of them;
 * -1 stays the generic failure (util/err.h), which commits never returns. */
enum {
	COMMITS_OK = 0,
	COMMITS_ERR_NOMEM = -32,  /* out of memory rendering or keeping an offset */
	COMMITS_ERR_SOURCE = -33, /* commits_alter: the source refuses an offset */
	COMMITS_ERR_STORE = -34,  /* commits_alter: the store refuses one */
	COMMITS_ERR_WRITE = -35,  /* commits_write_now: the write failed */
};

/* A short text for a COMMITS_* code, or for an OFFSETS_ERR_* passed on. */
const char *commits_strerror(int rc);

/* p's offset off as its source renders it (source_ops.offset_json): a
 * malloc'd string, NULL when out of memory. */
typedef char *(*commits_render_fn)(struct partition *p, const struct src_offset *off);

/* Where a stored offset came from when not from the store's own write: an
 * exactly-once transaction wrote it as generation gen of device. */
struct commit_origin {
	uint64_t gen;
	const char *device;
};

/* The gauges the worker registers (stats_register keeps the cell pointer). */
enum commits_gauge {
	COMMITS_FAILED_IN_A_ROW, /* offsets_flush_failures_in_a_row */
	COMMITS_FLUSH_TIME,      /* offsets_last_flush */
	COMMITS_FLUSH_OK,        /* offsets_last_flush_ok */
};

struct commits;

/* A commits for the store o (borrowed, set later with commits_set_store
 * when NULL), rendering through render. Returns 0 and *out (caller owns:
 * commits_destroy), or COMMITS_ERR_NOMEM (*out NULL). */
int commits_new(struct offsets *o, commits_render_fn render, struct commits **out);
void commits_set_store(struct commits *cm, struct offsets *o);

/* The worker's stop flag (borrowed): while set, a write that succeeds
 * again does not say that reading resumes. */
void commits_set_stopping(struct commits *cm, const bool *stopping);

/* Frees cm and the offsets it still retries. Accepts NULL. */
void commits_destroy(struct commits *cm);

/* The registry cell of gauge g, for stats_register; until registered, cm
 * counts in cells of its own. */
uint64_t **commits_cell(struct commits *cm, enum commits_gauge g);

/* Takes p's committable offset when it moved since last taken: 1 and *json
 * (malloc'd, caller frees after commits_store); 0 when nothing moved;
 * COMMITS_ERR_NOMEM when it could not be rendered (p is marked as moved
 * again: the next flush takes it). */
int commits_take(struct commits *cm, struct partition *p, char **json);

/* Stores json (borrowed) as p's offset; origin non-NULL: a transaction
 * wrote it already (offsets_written_outside). On success p's flight lets go
 * of the source's reference and lands. On failure the text is kept and put
 * again at the next commits_put_all (even after p is gone); returns the
 * store's OFFSETS_ERR_* (the caller logs it once, with its context), or
 * COMMITS_ERR_NOMEM when it could not even be kept (p is then marked as
 * moved again, when it still has its flight). */
int commits_store(struct commits *cm, struct partition *p, const char *json,
                  const struct commit_origin *origin);

/* Stores where p starts (source_env.anchor), when p has nothing stored and
 * nothing in flight or moved. Returns 1 when stored (the flush is due
 * now), 0 when not needed, or an error as commits_store's (not retried: an
 * anchor names no record, and the source anchors again at its next start). */
int commits_anchor(struct commits *cm, struct partition *p, const struct src_offset *off);

/* At a flush or a stop: serves the store's queue, puts again what failed
 * before, then (unless exactly-once: offsets come with their transaction)
 * every partition's moved offset. Logs, once per partition, what could not
 * be stored. */
void commits_put_all(struct commits *cm, struct partitions *t, bool eos);

/* After commits_put_all: checks the store was not deleted under skiff, and
 * starts a write when something changed (never while one is in flight);
 * the write's outcome is kept (commits_last). now: loop_now_ms(). */
void commits_write(struct commits *cm, int64_t now);

/* An acknowledgement moved an offset: a flush is due. */
void commits_moved(struct commits *cm);

/* Whether an offset moved since the last commits_put_all. */
bool commits_pending(const struct commits *cm);

/* Whether something waits: an offset moved, the store changed, or a put
 * failed and waits for its retry. */
bool commits_due(const struct commits *cm);

/* An idle worker's look, once every interval, that the store was not
 * deleted under it (at now). */
void commits_idle_check(struct commits *cm, int64_t now, int64_t interval);

/* True while reading pauses: FLUSH_FAILURES_BEFORE_PAUSE writes in a row
 * failed. */
bool commits_paused(const struct commits *cm);

/* Offset writes failed in a row (0: the last succeeded). */
uint64_t commits_failures(const struct commits *cm);

/* The outcome of the last completed write (0 or an OFFSETS_ERR_*), and
 * loop_now_ms() when it completed (0: none yet). */
int commits_last(const struct commits *cm, int64_t *at_ms);

/* KIP-875's edit of the stored offsets of cs's connector (stopped: no
 * record of it in flight). e[0..n-1] are a PATCH's entries: an offset is
 * stored as sent, or as its source settles it (source_ops.check_offset,
 * check_reach: within the source's data; the settling is logged), null
 * removes; all are checked before any is stored, so that a refused PATCH
 * changes nothing. e NULL (DELETE): every stored partition of the
 * connector is removed. The store is not written (commits_write_now).
 * Returns 0, COMMITS_ERR_SOURCE (errbuf: the source's reason, as Connect's
 * connector throws it), COMMITS_ERR_STORE (errbuf: which key, for a PATCH),
 * or COMMITS_ERR_NOMEM (errbuf "out of memory"). */
int commits_alter(struct commits *cm, const struct connector_settings *cs,
                  const struct offsets_doc_entry *e, size_t n, char *errbuf, size_t errlen);

/* KIP-875's GET: connector's stored offsets as a document, into *json
 * (malloc'd, caller frees). Returns 0 or COMMITS_ERR_NOMEM. */
int commits_print(const struct commits *cm, const char *connector, char **json);

/* Writes the store now when it can (the file backend completes before
 * returning); when a write is in flight or cannot start, sets *deferred
 * (the caller's flush writes it) and returns 0. Returns 0 or
 * COMMITS_ERR_WRITE with errbuf. */
int commits_write_now(struct commits *cm, bool *deferred, char *errbuf, size_t errlen);

#endif
