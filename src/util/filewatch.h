/* filewatch: tells when any of a few named files changed on disk: written in
 * place, replaced by a rename (how certificate tools and Kubernetes secret
 * volumes update them), deleted or created again.
 *
 * It watches the files' directories with inotify (a file's own watch would
 * follow the old inode through a rename and miss the new one), so an idle
 * process is woken only by activity in those directories. An event only says
 * "look": filewatch_changed() then compares each file's identity and times
 * (stat, through symlinks) with what it saw last, so noise from other files
 * in a directory changes nothing. A file that is a symlink is watched in
 * the directory of what it resolves to as well (certs/device.pem ->
 * ../ext/device.pem: ext/ too), resolved again after each change.
 *
 * The caller polls filewatch_fd() for POLLIN, calls filewatch_drain() when
 * it is readable, and filewatch_changed() once things settled. Main thread
 * only. Error convention: util/err.h. */
#ifndef SKIFF_FILEWATCH_H
#define SKIFF_FILEWATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

enum {
	FILEWATCH_OK = 0,
	FILEWATCH_ERR = -1,       /* inotify could not be set up (errbuf says why) */
	FILEWATCH_ERR_NOMEM = -2, /* out of memory */
};

struct filewatch;

/* Watches the n files of paths (copied; a file need not exist yet).
 * Returns 0 and *out (filewatch_destroy), FILEWATCH_ERR with errbuf
 * "path: why" (no inotify, or a directory that cannot be watched), or
 * FILEWATCH_ERR_NOMEM. */
int filewatch_new(const char *const *paths, size_t n, struct filewatch **out, char *errbuf,
                  size_t errlen);

/* The inotify descriptor: readable when a watched directory saw activity. */
int filewatch_fd(const struct filewatch *fw);

/* Reads every pending event. Returns whether one may concern a watched file
 * (false for events on other names of the directories only). */
bool filewatch_drain(struct filewatch *fw);

/* Re-reads each file's identity. Returns the path (borrowed, valid as long
 * as fw) of the first one that differs from the last look, or NULL when
 * none does; every file's new state is remembered either way. */
const char *filewatch_changed(struct filewatch *fw);

/* Accepts NULL. */
void filewatch_destroy(struct filewatch *fw);

#endif
