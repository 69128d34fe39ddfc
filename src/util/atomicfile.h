/* atomicfile: crash-safe replacement and bounded reading of small files.
 *
 * A replacement writes "PATH.tmp" (after removing a stale one), fsyncs and
 * closes it, optionally renames the current PATH to a "previous generation"
 * name, renames PATH.tmp over PATH and fsyncs the directory. Every step is
 * checked; a failed fsync is never retried on the same descriptor (the temp
 * file is discarded and the next call writes a new one).
 *
 * Leaf module: it never logs; errors come back in errbuf as "step path: why",
 * e.g. "fsync /var/lib/skiff/offsets.json.tmp: Input/output error".
 * Not thread-safe with itself on the same path (one writer per path). */
#ifndef SKIFF_ATOMICFILE_H
#define SKIFF_ATOMICFILE_H

#include <stddef.h>

#include "util/err.h"

/* Error codes (negative returns). */
enum {
	ATOMICFILE_OK = 0,
	ATOMICFILE_ERR_IO = -1,
	ATOMICFILE_ERR_NOENT = -2,  /* atomicfile_read: the file does not exist */
	ATOMICFILE_ERR_TOOBIG = -3, /* atomicfile_read: larger than the caller's limit */
	ATOMICFILE_ERR_NOMEM = -4,
};

/* Steps atomicfile_replace got through, reported in *done even on failure. */
enum {
	ATOMICFILE_ROTATED = 1,  /* the old PATH was renamed to prev */
	ATOMICFILE_REPLACED = 2, /* PATH.tmp was renamed to PATH: the new content is visible
	                          * (durable only if the call returned 0) */
};

/* Replaces path with len bytes of data, durably: see the top of this file.
 * When prev is not NULL an existing path is first renamed to prev (keeping the
 * previous generation); a missing path is not an error. Returns 0 once
 * everything, including the directory fsync, succeeded; otherwise a negative
 * ATOMICFILE_ERR_* with errbuf set, PATH.tmp removed, and *done (if not NULL)
 * telling which renames happened: nothing renamed means path and prev are
 * untouched. The new file is created 0600 (less under the umask): offsets
 * reveal paths and positions. Called from the main loop; blocks on the disk. */
int atomicfile_replace(const char *path, const char *prev, const void *data, size_t len, int *done,
                       char *errbuf, size_t errlen);

/* atomicfile_replace, and the file is held: PATH.tmp is flocked (LOCK_EX) as
 * soon as it is created, before it is renamed over PATH, so the file at PATH is
 * locked by the caller at every instant (another process that opens PATH and
 * asks for the lock is refused). On success *held is that descriptor (the
 * caller closes it, normally once the next generation is held); on failure
 * nothing is held. */
int atomicfile_replace_held(const char *path, const char *prev, const void *data, size_t len,
                            int *done, int *held, char *errbuf, size_t errlen);

/* atomicfile_replace without a previous generation. */
int atomicfile_write(const char *path, const void *data, size_t len, char *errbuf, size_t errlen);

/* Reads the whole regular file at path, refusing more than max bytes.
 * Returns 0 with *data (NUL-terminated, owned by the caller: free()) and *len;
 * ATOMICFILE_ERR_NOENT when it does not exist; ATOMICFILE_ERR_TOOBIG;
 * ATOMICFILE_ERR_IO (also for a directory or a device in its place) or
 * ATOMICFILE_ERR_NOMEM, with errbuf set. */
int atomicfile_read(const char *path, size_t max, char **data, size_t *len, char *errbuf,
                    size_t errlen);

/* Checks that the directory that holds path exists and is a directory, so a
 * missing mount or a typo is reported before any write. Returns 0 or
 * ATOMICFILE_ERR_NOENT / ATOMICFILE_ERR_IO / ATOMICFILE_ERR_NOMEM with errbuf
 * set ("directory /var/lib/skiff (of /var/lib/skiff/offsets.json): No such
 * file or directory"). */
int atomicfile_check_dir(const char *path, char *errbuf, size_t errlen);

/* Removes a stale "path.tmp" left by a crash, if there is one. Returns 0 or
 * ATOMICFILE_ERR_IO / ATOMICFILE_ERR_NOMEM with errbuf set. */
int atomicfile_remove_tmp(const char *path, char *errbuf, size_t errlen);

#endif
