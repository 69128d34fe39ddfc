/* offsets_file: the crash-safe local file backend of the offset store
 * (offsets_store.h is the store as a backend sees it; the file's format, generations and journal
 * are described at the top of offsets_file.c). Opens itself and hands offsets_open its ops.
 *
 * Leaf module: never logs; errors come back as "what: why" in errbuf. Called
 * from the main loop only. */
#ifndef SKIFF_OFFSETS_FILE_H
#define SKIFF_OFFSETS_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct offsets;
struct offset_backend_ops;

/* Opens the file-backed store at path and loads it: the newest valid of
 * "path" and "path.prev" wins; a stale "path.tmp" is removed. Neither
 * present: an empty store. Present but all unreadable: OFFSETS_ERR_CORRUPT
 * with errbuf naming each file and what is wrong, and what the user can do.
 * A file written by a newer skiff (higher format version) is also
 * OFFSETS_ERR_CORRUPT, even when the other generation is valid: falling back
 * silently would rewind and then overwrite it. A file that cannot be read
 * (EACCES, EIO, a directory in its place): OFFSETS_ERR_IO; a missing
 * directory: OFFSETS_ERR_NODIR (skiff does not create it: a typo would
 * silently start from nothing).
 * On success *out is owned by the caller (offsets_destroy); when the load fell
 * back to "path.prev" (offsets_stats: loaded_from_prev), errbuf says why, for
 * the caller to log as a warning. */
int offsets_open_file(const char *path, struct offsets **out, char *errbuf, size_t errlen);

/* offsets_open_file for the one process that will write the store: first
 * takes "path.lock" (flock), then, while loading, locks the files at path and
 * "path.prev", and locks every new generation before it is renamed into
 * place, so the store itself stays locked while this process lives: a second
 * skiff is refused with OFFSETS_ERR_LOCKED even when the lock file was deleted.
 * The locks go with offsets_destroy or the process (even after SIGKILL). */
int offsets_open_file_held(const char *path, struct offsets **out, char *errbuf, size_t errlen);

/* The file backend of offsets_open_file(_held) without opening a store, for
 * a backend that keeps the file beside something else (offsets_kafka.h).
 * Checks the directory and, with hold, takes the lock as
 * offsets_open_file_held does. On success *ops and *ctx are the caller's
 * (ops->close(ctx)). Errors as offsets_open_file. */
int offsets_file_backend(const char *path, bool hold, const struct offset_backend_ops **ops,
                         void **ctx, char *errbuf, size_t errlen);

#endif
