/* sqdb: the connection to the database file.
 *
 * Opened through skiff's read-only VFS (sqvfs.c: nothing of the
 * application's files is ever written, created or deleted, and a WAL
 * database's file is never locked), read-only, query_only and without a
 * checkpoint at close, with the statements every query shares (BEGIN,
 * COMMIT, ROLLBACK, the schema version) prepared once. Before each query the
 * path is looked at again: a file deleted is waited for, a file replaced
 * (another inode) is opened anew, as is a connection whose -wal the
 * application deleted or replaced, a path that is no regular file is never
 * opened (that would block the process), nor an empty file (an application
 * creating its database). A database locked by a writer is retried with a
 * growing back-off, said once while it lasts. */
#include "sources/sqlite/sqdb.h"

#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqguard.h"
#include "sources/sqlite/sqlayout.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqvfs.h"

#include "core/log.h"
#include "core/source.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* How long one attempt waits for a lock inside SQLite (SQ_BUSY_TIMEOUT_MS:
 * it sleeps with its own growing steps), and the most skiff then waits
 * before trying again. The
 * main loop must not stall: Kafka's delivery reports are served there. */
#define BUSY_BACKOFF_MAX_MS 2000
#define BUSY_WARN_MS 5000
/* The page cache of the polling connection: 256 KiB, not SQLite's 2,000 KiB
 * per connection. A batch reads its rows once, in order; what the next batch
 * reads again is the B-tree's interior pages and the last leaf, a few pages,
 * so a larger cache only holds pages that are never read again (the kernel's
 * page cache keeps the file). At full load (bench_memory.py --sqlite) it is
 * 1.8 MB of peak RSS for the same rows/s. A sort larger than 1 MB spills to
 * SQLite's temporary file as before. */
#define CACHE_PRAGMA "PRAGMA cache_size = -256"

void sqdb_close(struct sqsrc *s)
{
	for (size_t i = 0; i < s->ntables; i++)
		sqlayout_drop(&s->tables[i]);
	sqlite3_finalize(s->conn.begin);
	sqlite3_finalize(s->conn.commit);
	sqlite3_finalize(s->conn.rollback);
	sqlite3_finalize(s->conn.schema_version);
	s->conn.begin = s->conn.commit = s->conn.rollback = s->conn.schema_version = NULL;
	sqlite3_close(s->conn.db);
	s->conn.db = NULL;
}

static int prepare(struct sqsrc *s, const char *sql, sqlite3_stmt **st)
{
	return sqlite3_prepare_v3(s->conn.db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

static int open_db(struct sqsrc *s, const struct stat *st, int64_t now, char *errbuf, size_t errlen)
{
	int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (s->uri ? SQLITE_OPEN_URI : 0);
	int rc;

	sqguard_install();
	rc = sqvfs_register();
	if (rc == SQLITE_OK)
		rc = sqlite3_open_v2(s->path, &s->conn.db, flags, SQVFS_NAME);
	if (rc == SQLITE_OK) {
		/* sqvfs.c refuses a checkpoint anyway; this keeps SQLite from asking. */
		sqlite3_db_config(s->conn.db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
		sqlite3_extended_result_codes(s->conn.db, 0);
		sqlite3_busy_timeout(s->conn.db, SQ_BUSY_TIMEOUT_MS);
		rc = sqlts_register(s->conn.db, &s->clock);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->conn.db, "PRAGMA query_only = 1", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->conn.db, CACHE_PRAGMA, NULL, NULL, NULL);
	if (rc == SQLITE_OK && (rc = prepare(s, "BEGIN", &s->conn.begin)) == SQLITE_OK &&
	    (rc = prepare(s, "COMMIT", &s->conn.commit)) == SQLITE_OK &&
	    (rc = prepare(s, "ROLLBACK", &s->conn.rollback)) == SQLITE_OK)
		rc = prepare(s, "PRAGMA schema_version", &s->conn.schema_version);
	if (rc != SQLITE_OK && sqlitelib_busy(rc)) {
		/* Reading the schema met a lock, or what only the application
		 * can do first (a hot journal to roll back): wait for it. */
		sqdb_close(s);
		sqdb_busy(s, now);
		return 1;
	}
	if (rc != SQLITE_OK) {
		snprintf(errbuf, errlen, "%s: %s", s->path,
		         s->conn.db ? sqlite3_errmsg(s->conn.db) : sqlite3_errstr(rc));
		sqdb_close(s);
		return -1;
	}
	s->conn.dev = st ? (uint64_t)st->st_dev : 0;
	s->conn.ino = st ? (uint64_t)st->st_ino : 0;
	s->env->log(s->env, LOG_INFO, "reading %s (read-only)", s->path);
	sqguard_journal(s);
	return 0;
}

/* An empty file: SQLite would take it for an empty database, and beside a
 * -wal it would delete the -wal (an application creating its database). */
static int empty(struct sqsrc *s, int64_t now)
{
	if (!s->conn.empty_warned)
		s->env->log(s->env, LOG_WARN, "%s is empty (0 bytes): waiting for a database there",
		            s->path);
	s->conn.empty_warned = true;
	s->conn.retry_at = now + s->poll_ms;
	return 1;
}

/* The connection's files as the application left them (sqvfs_check): 0 to
 * read on, 1 to wait (held exclusively, or not yet closable). */
static int stale(struct sqsrc *s, int64_t now, bool may_close)
{
	char why[200];
	int rc = sqvfs_check(s->conn.db, NULL, why, sizeof(why));

	if (rc == SQVFS_SOUND)
		return 0;
	if (rc == SQVFS_HELD) {
		sqdb_busy(s, now);
		return 1;
	}
	if (!may_close) {
		s->conn.retry_at = now + SQ_BUSY_TIMEOUT_MS;
		return 1;
	}
	s->env->log(s->env, LOG_INFO, "%s: %s: re-opening it", s->path, why);
	s->env->count(s->env, "database_reopened", 1);
	sqdb_close(s);
	return 0;
}

int sqdb_ensure(struct sqsrc *s, int64_t now, bool may_close, char *errbuf, size_t errlen)
{
	struct stat st;
	int rc;

	if (stat(s->file, &st) != 0) {
		if (s->conn.db != NULL && !may_close)
			return 0;
		if (s->conn.db != NULL) {
			s->env->log(s->env, LOG_WARN, "%s was deleted: waiting for it", s->path);
			sqdb_close(s);
		} else if (!s->conn.missing_warned) {
			s->env->log(s->env, LOG_WARN, "%s: %s; waiting for it", s->path,
			            strerror(errno));
			s->env->count(s->env, "database_missing", 1);
		}
		s->conn.missing_warned = true;
		s->conn.retry_at = now + s->poll_ms;
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		/* Opening a FIFO would block the whole process. */
		if (s->conn.db != NULL && !may_close)
			return 0;
		sqdb_close(s);
		sqguard_irregular(s, now);
		return 1;
	}
	s->conn.irregular_warned = false;
	if (s->conn.db == NULL && st.st_size == 0)
		return empty(s, now);
	s->conn.empty_warned = false;
	if (s->conn.db != NULL && may_close &&
	    ((uint64_t)st.st_dev != s->conn.dev || (uint64_t)st.st_ino != s->conn.ino)) {
		s->env->log(s->env, LOG_WARN, "%s was replaced by another file: re-opening it",
		            s->path);
		s->env->count(s->env, "database_reopened", 1);
		sqdb_close(s);
	}
	if (s->conn.db != NULL && (rc = stale(s, now, may_close)) != 0)
		return rc;
	s->conn.missing_warned = false;
	return s->conn.db != NULL ? 0 : open_db(s, &st, now, errbuf, errlen);
}

/* ---- the busy back-off ----------------------------------------------------- */

void sqdb_busy(struct sqsrc *s, int64_t now)
{
	int64_t cap = s->poll_ms < BUSY_BACKOFF_MAX_MS ? s->poll_ms : BUSY_BACKOFF_MAX_MS;

	if (s->conn.busy_since == 0) {
		s->conn.busy_since = now;
		s->conn.backoff_ms = SQ_BUSY_TIMEOUT_MS;
	} else {
		s->conn.backoff_ms = s->conn.backoff_ms * 2 > cap ? cap : s->conn.backoff_ms * 2;
	}
	s->conn.retry_at = now + s->conn.backoff_ms;
	s->env->count(s->env, "database_busy", 1);
	if (!s->conn.busy_warned && now - s->conn.busy_since >= BUSY_WARN_MS) {
		s->env->log(s->env, LOG_WARN,
		            "%s has been locked by a writer for %lld ms; retrying every %lld ms",
		            s->path, (long long)(now - s->conn.busy_since), (long long)cap);
		s->conn.busy_warned = true;
	}
}

void sqdb_answer(struct sqsrc *s, int64_t now)
{
	if (s->conn.busy_since != 0 && s->conn.busy_warned)
		s->env->log(s->env, LOG_INFO, "%s readable again after %lld ms", s->path,
		            (long long)(now - s->conn.busy_since));
	s->conn.busy_since = 0;
	s->conn.busy_warned = false;
}
