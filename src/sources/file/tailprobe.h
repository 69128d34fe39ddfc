/* tailprobe: what a stream resuming from a stored place sees of its path's
 * family - the file at the path, p's copy, p's file moved or compressed
 * since - with the checks of p (size, first bytes, tail) made where each
 * file opens: the observing half of a resume, whose deciding half is
 * tailplan.c. Opens and closes files; keeps none open; logs nothing. Main
 * loop only. */
#ifndef SKIFF_TAILPROBE_H
#define SKIFF_TAILPROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/file/tailfile.h"
#include "sources/file/tailplan.h"
#include "sources/file/tailpos.h"

/* Where a probe looks, and how files are opened there (tailfile_open). */
struct tailprobe_where {
	const char *path;
	const char *const *dirs; /* rotated.dirs */
	size_t ndirs;
	size_t max_line;
	enum tailfile_policy policy;
	struct tailguard *guard; /* the connector's (NULL: none) */
};

/* The observations and the paths of the files found (malloc'd; NULL: none;
 * tailprobe_free). */
struct tailprobe {
	struct tailobs_set obs;
	char *copy, *moved, *z, *undec;
};

/* Observes the file at the path for p (obs.live). */
void tailprobe_live(const struct tailprobe_where *w, const struct tailpos *p,
                    struct tailprobe *out);

/* Observes, for the case tailplan_case decided, the rotated siblings it
 * reads: REPLACED, p's copy by first bytes, else p's file compressed since;
 * MOVED, the sibling with p's inode, else (not p's file) p's file
 * compressed since, else the oldest compressed file that decodes to
 * nothing. Each found file is opened at p's position and checked; a file
 * renamed between its search and its open is searched for again. Looks no
 * further than the first that serves. held_seen is left as it is. */
void tailprobe_family(const struct tailprobe_where *w, const struct tailpos *p,
                      enum tailplan_case kind, struct tailprobe *out);

/* Frees the paths of pr (not pr). */
void tailprobe_free(struct tailprobe *pr);

#endif
