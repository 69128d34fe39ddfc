/* tailindex: finds the streams an inotify event or a poll concerns without
 * walking every stream (issue 10: idle cost independent of their number).
 *
 * Streams are known by their index in the caller's array (stable: streams
 * are only added). Three indexes:
 *   - by name: the streams whose directory and base name an event names;
 *   - by watch descriptor: the streams whose file watch is wd (several
 *     streams may share one; the caller reports each change, tailindex_wd);
 *   - the marked set: streams the caller must look at in every poll (ready,
 *     a deadline, not quiet). The caller marks a stream whenever it acts on
 *     it and unmarks one when nothing but an event or a full look can give
 *     it work; an unmarked stream costs nothing per poll.
 * Single-threaded (the source's poll). Error convention: util/err.h. */
#ifndef SKIFF_TAILINDEX_H
#define SKIFF_TAILINDEX_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

enum {
	TAILINDEX_OK = 0,
	TAILINDEX_ERR_NOMEM = -2,
	TAILINDEX_NONE = -1, /* tailindex_*_first/next: no more */
};

struct tailindex;

/* A short text for a TAILINDEX_ERR_* code. */
const char *tailindex_strerror(int rc);

/* An empty index. Returns 0 and *out (tailindex_free), or
 * TAILINDEX_ERR_NOMEM (*out NULL). */
int tailindex_new(struct tailindex **out);

/* Frees x. Accepts NULL. */
void tailindex_free(struct tailindex *x);

/* Adds stream i (the next index: 0, 1, ...) named dir/base, with no watch,
 * marked. path: the stream's path, kept (not copied) when it reads
 * dir/base, and then valid while x is; otherwise dir/base is copied.
 * Returns 0 or TAILINDEX_ERR_NOMEM (x unchanged). */
int tailindex_add(struct tailindex *x, size_t i, const char *dir, const char *base,
                  const char *path);

/* The first stream named dir/base, then the next one after i; or
 * TAILINDEX_NONE. */
long tailindex_name_first(const struct tailindex *x, const char *dir, const char *base);
long tailindex_name_next(const struct tailindex *x, size_t i);

/* Records that stream i's file watch is now wd (-1: none). Returns 0 or
 * TAILINDEX_ERR_NOMEM (i then found under no watch: the caller looks at it
 * in every poll). */
int tailindex_wd(struct tailindex *x, size_t i, int wd);
/* True when i's recorded watch is wd. */
bool tailindex_wd_is(const struct tailindex *x, size_t i, int wd);

/* The first stream watching wd, then the next one after i; or
 * TAILINDEX_NONE. */
long tailindex_wd_first(const struct tailindex *x, int wd);
long tailindex_wd_next(const struct tailindex *x, size_t i);

/* Marks stream i (idempotent). */
void tailindex_mark(struct tailindex *x, size_t i);
/* The number of marked streams, and the k-th of them (k < that number). */
size_t tailindex_nmarked(const struct tailindex *x);
size_t tailindex_marked(const struct tailindex *x, size_t k);
/* Unmarks the k-th marked stream: the last marked one takes its place k. */
void tailindex_unmark_at(struct tailindex *x, size_t k);

#endif
