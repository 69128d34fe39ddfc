/* taildup: the same file named twice, so that it is not shipped twice
 * without a word.
 *
 * Within one connector, two paths may name one file (dev+inode): a symlink
 * and its target, a hard link, overlapping glob patterns, "a/./x" and
 * "a/x". Only the first path is tailed; the others are skipped, said once
 * and counted (paths_duplicate), and looked at again at every rescan, since
 * a symlink may be re-pointed. Across connectors (each ships to its own
 * topic, as Connect would, twice) the file is tailed by both and a warning
 * names the file and both connectors, at start or when the second one finds
 * it. The paths are compared by what they name now (one statx each), so a
 * rotation that gives a path a new file is followed.
 *
 * One struct taildup per file connector; they know each other through a list
 * of this module's own (one thread: the main loop). */
#ifndef SKIFF_TAILDUP_H
#define SKIFF_TAILDUP_H

#include "core/source.h"
#include "util/err.h"

struct taildup;

enum {
	TAILDUP_OK = 0,
	TAILDUP_ERR = -1,       /* failed */
	TAILDUP_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a TAILDUP_* code. */
const char *taildup_strerror(int rc);

/* A connector's register, known to the others until taildup_free. env: the
 * connector's (logs, counts, its name), borrowed. Returns 0 and *out, or
 * TAILDUP_ERR_NOMEM (*out NULL). */
int taildup_new(struct source_env *env, struct taildup **out);

/* Decides about path, not yet tailed by d's connector: returns true when
 * another path of the same connector names the same file (skip it; said
 * once per path and file), else records it as tailed and returns false
 * (after warning when another connector tails the same file). Out of memory:
 * false (tailed; a duplicate is worse than nothing). */
bool taildup_skip(struct taildup *d, const char *path);

/* The path taildup_skip just recorded as tailed (its last call, which
 * returned false for these same bytes) is kept at path from now on, the
 * caller's (a stream's own), valid as long as d: d frees its copy. */
void taildup_adopt(struct taildup *d, const char *path);

/* Starts (on) or ends a pass, such as one glob of every pattern: within it,
 * what a tailed path names, d's and the other connectors' alike, is looked
 * up once, not again for each new path (a glob of 10,000 new files: 10,000
 * statx, not 50 million; beside another connector's 5,000 files, 5,000
 * more, not 25 million). One pass at a time. Outside a pass every lookup
 * is fresh. */
void taildup_pass(struct taildup *d, bool on);

/* Unregisters and frees. Accepts NULL. */
void taildup_free(struct taildup *d);

#endif
