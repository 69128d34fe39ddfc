/* sqvfs: "skiff-ro", the read-only VFS every database is opened through (sqvfs.c). Main loop
 * only. */
#ifndef SKIFF_SQVFS_H
#define SKIFF_SQVFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/sqlite/sqlitelib.h"

#define SQVFS_NAME "skiff-ro"

/* Registers the VFS SQVFS_NAME over the unix VFS (not as the default).
 * Once per process; later calls do nothing. Returns an SQLite result code. */
int sqvfs_register(void);

/* The database file as a read began, for sqvfs_check(). */
struct sqvfs_mark {
	bool known;
	int64_t size, mtime_ns, ctime_ns;
};

/* Records db's file (a connection opened through SQVFS_NAME) before a read
 * transaction. */
void sqvfs_mark(sqlite3 *db, struct sqvfs_mark *m);

/* Whether what db read since m (NULL: before a read, whether db may read at
 * all) can be trusted. In a WAL database skiff holds no lock an application
 * sees (sqvfs.c), so an application that believed itself alone (it closed
 * its last connection, switched the journal mode, took an exclusive lock)
 * may have checkpointed pages under the read. Returns SQVFS_SOUND, or with
 * why: SQVFS_STALE (the application deleted or replaced the -wal, or opened
 * a database that had none, or the file changed under a read without one:
 * drop what was read and open the database again), SQVFS_HELD (another
 * connection holds the file with a write lock: drop what was read and wait).
 * Main loop only. */
enum { SQVFS_SOUND, SQVFS_STALE, SQVFS_HELD };
int sqvfs_check(sqlite3 *db, const struct sqvfs_mark *m, char *why, size_t len);

#endif
