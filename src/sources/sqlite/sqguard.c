/* sqguard: what stands between the SQLite source and a path or a
 * configuration it cannot trust.
 *
 * - A FIFO (or a directory, a device) at the database path: open(2) of a FIFO
 *   blocks until a writer comes, and skiff is one thread, so the whole
 *   process hung there and SIGTERM went unanswered. The path's type is
 *   checked before every open (ensure_db), and SQLite's own open() goes
 *   through a wrapper that never blocks: O_NONBLOCK, and a FIFO refused, which
 *   also covers a FIFO put there between the check and the open, and the
 *   -journal and -wal files SQLite opens beside the database.
 * - --check: the environment a source gets when no worker runs. */
#include "source_sqlite.h"

#include "log.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- open(2) that never blocks ----------------------------------------------- */

typedef int (*open_fn)(const char *, int, ...);

static open_fn real_open;

static int nonblocking_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode, fd, fl;
	struct stat st;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	fd = real_open(path, flags | O_NONBLOCK, mode);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		close(fd);
		errno = ENXIO; /* SQLite answers "unable to open database file" */
		return -1;
	}
	/* A regular file ignores O_NONBLOCK; a device keeps what it asked for. */
	if (!(flags & O_NONBLOCK) && (fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

void sqguard_install(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);

	/* Once per process; the unix VFS's system calls are process-wide. */
	if (real_open != NULL || vfs == NULL || vfs->iVersion < 3 || vfs->xSetSystemCall == NULL ||
	    vfs->xGetSystemCall == NULL)
		return;
	real_open = (open_fn)vfs->xGetSystemCall(vfs, "open");
	if (real_open == NULL ||
	    vfs->xSetSystemCall(vfs, "open", (sqlite3_syscall_ptr)nonblocking_open) != SQLITE_OK)
		real_open = NULL;
}

void sqguard_irregular(struct sqsrc *s, int64_t now)
{
	if (!s->irregular_warned) {
		s->env->log(s->env, LOG_WARN,
		            "%s is not a regular file (a FIFO, directory or device): waiting for "
		            "a database there",
		            s->path);
		s->env->count(s->env, "paths_not_regular", 1);
	}
	s->irregular_warned = true;
	s->retry_at = now + s->poll_ms;
}

/* ---- the environment of --check ---------------------------------------------- */

static struct partition *check_partition(struct source_env *env, const char *json)
{
	(void)json;
	return (struct partition *)env; /* any non-NULL handle: nothing is stored */
}

static const char *check_committed(struct source_env *env, struct partition *p)
{
	(void)env;
	(void)p;
	return NULL;
}

static void check_count(struct source_env *env, const char *name, uint64_t n)
{
	(void)env;
	(void)name;
	(void)n;
}

__attribute__((format(printf, 3, 4))) static void check_log(struct source_env *env, int level,
                                                            const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vconnector((enum log_level)level, env->connector, fmt, ap);
	va_end(ap);
}

void sqguard_check_env(struct source_env *env, const char *connector)
{
	*env = (struct source_env){.connector = connector,
	                           .partition = check_partition,
	                           .committed = check_committed,
	                           .count = check_count,
	                           .log = check_log};
}

/* ---- a rollback journal under the timestamp modes ---------------------------- */

void sqguard_journal(struct sqsrc *s)
{
	sqlite3_stmt *st = NULL;
	const char *mode;

	if (s->mode != SQ_TIMESTAMP && s->mode != SQ_TS_INC)
		return;
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && (mode = (const char *)sqlite3_column_text(st, 0)) &&
	    strcmp(mode, "wal") != 0) {
		s->env->log(s->env, LOG_WARN,
		            "%s uses a rollback journal (journal_mode=%s): the timestamp modes "
		            "compute every row's timestamp on each query, and while they do a "
		            "writer cannot commit (with a busy timeout it waits, without one it "
		            "gets 'database is locked'). Switch the database to WAL once (PRAGMA "
		            "journal_mode=WAL): then readers never block writers",
		            s->path, mode);
		s->env->count(s->env, "database_not_wal", 1);
	}
	sqlite3_finalize(st);
}
