/* sqguard: paths that are not files, the system calls SQLite may make for skiff, journal mode,
 * --check's env (sqguard.c). Main loop only. */
#ifndef SKIFF_SQGUARD_H
#define SKIFF_SQGUARD_H

#include <stdbool.h>
#include <stdint.h>

struct source_env;
struct sqsrc;

/* Makes SQLite's open(2) of any file never block (a FIFO is refused), and
 * its open for writing, fchmod and unlink fail inside sqguard_enter()'s
 * scope. Once per process, before the first sqlite3_open. */
void sqguard_install(void);

/* The scope of the read-only VFS (sqvfs.c): while entered, the unix VFS
 * cannot open a file for writing or creating, change a file's mode or
 * delete a file. Calls nest. */
void sqguard_enter(void);
void sqguard_leave(void);

/* Remembers the descriptor of the next open of path (compared as a string)
 * inside the scope; sqguard_captured() returns it (-1: none) and forgets
 * path. path must live until then. */
void sqguard_capture(const char *path);
int sqguard_captured(void);

/* Opens path read-only without blocking: a descriptor, or -1 with errno
 * (ENXIO for a FIFO). The caller closes it. */
int sqguard_open_ro(const char *path);

/* The database path names a FIFO, directory or device: says so once while it
 * lasts, counts it, and schedules the next look. */
void sqguard_irregular(struct sqsrc *s, int64_t now);

/* Timestamp modes on a database in rollback-journal mode: warns that each
 * query holds the writers off while it reads the whole table (WAL does not). */
void sqguard_journal(struct sqsrc *s);

/* Fills env for --check: logs go to the log (quiet: nowhere), nothing is
 * stored. */
void sqguard_check_env(struct source_env *env, const char *connector, bool quiet);

#endif
