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
 * - The application's files: while SQLite runs on behalf of skiff's
 *   read-only VFS (sqvfs.c, between sqguard_enter and sqguard_leave), the
 *   system calls through which SQLite's unix VFS could change a file fail
 *   with EACCES: an open for writing or creating (so the -shm is mapped
 *   read-only, never created, never truncated), fchmod (SQLite sets the mode
 *   of an empty file it opens) and unlink. sqvfs.c refuses the same at the
 *   VFS's own level; this is the second line, under everything SQLite does
 *   inside the unix VFS. Outside that scope (an in-process writer in a unit
 *   test, a tool) the calls pass unchanged.
 * - --check: the environment a source gets when no worker runs. */
#include "sources/sqlite/sqguard.h"

#include "sources/sqlite/sqsrc.h"

#include "core/log.h"
#include "core/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the unix VFS's system calls ------------------------------------------------ */

typedef int (*open_fn)(const char *, int, ...);
typedef int (*fchmod_fn)(int, mode_t);
typedef int (*unlink_fn)(const char *);

static open_fn real_open;
static fchmod_fn real_fchmod;
static unlink_fn real_unlink;
static int scope; /* > 0: SQLite works for skiff's read-only VFS */
static const char *capture_path;
static int capture_fd = -1;

void sqguard_enter(void)
{
	scope++;
}

void sqguard_leave(void)
{
	scope--;
}

/* Opens path without blocking; a FIFO is refused. */
static int open_nonblocking(const char *path, int flags, int mode)
{
	struct stat st;
	int fd, fl;

	fd = real_open != NULL ? real_open(path, flags | O_NONBLOCK, mode)
	                       : open(path, flags | O_NONBLOCK, mode);
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

static int guarded_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	/* SQLite then opens the -shm read-only, and a missing file stays missing. */
	if (scope > 0 && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND))) {
		errno = EACCES;
		return -1;
	}
	fd = open_nonblocking(path, flags, mode);
	if (fd >= 0 && scope > 0 && capture_path != NULL && strcmp(path, capture_path) == 0)
		capture_fd = fd;
	return fd;
}

static int guarded_fchmod(int fd, mode_t mode)
{
	if (scope > 0) {
		errno = EACCES;
		return -1;
	}
	return real_fchmod(fd, mode);
}

static int guarded_unlink(const char *path)
{
	if (scope > 0) {
		errno = EACCES;
		return -1;
	}
	return real_unlink(path);
}

void sqguard_capture(const char *path)
{
	capture_path = path;
	capture_fd = -1;
}

int sqguard_captured(void)
{
	int fd = capture_fd;

	capture_path = NULL;
	capture_fd = -1;
	return fd;
}

int sqguard_open_ro(const char *path)
{
	return open_nonblocking(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
}

/* Replaces the unix VFS's system call name with fn; *real keeps the old one. */
static void replace(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr fn,
                    sqlite3_syscall_ptr *real)
{
	*real = vfs->xGetSystemCall(vfs, name);
	if (*real == NULL || vfs->xSetSystemCall(vfs, name, fn) != SQLITE_OK)
		*real = NULL;
}

void sqguard_install(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find("unix");
	sqlite3_syscall_ptr o = NULL, c = NULL, u = NULL;

	/* Once per process; the unix VFS's system calls are process-wide. */
	if (real_open != NULL || vfs == NULL || vfs->iVersion < 3 || vfs->xSetSystemCall == NULL ||
	    vfs->xGetSystemCall == NULL)
		return;
	replace(vfs, "open", (sqlite3_syscall_ptr)guarded_open, &o);
	replace(vfs, "fchmod", (sqlite3_syscall_ptr)guarded_fchmod, &c);
	replace(vfs, "unlink", (sqlite3_syscall_ptr)guarded_unlink, &u);
	real_open = (open_fn)o;
	real_fchmod = (fchmod_fn)c;
	real_unlink = (unlink_fn)u;
}

void sqguard_irregular(struct sqsrc *s, int64_t now)
{
	if (!s->conn.irregular_warned) {
		s->env->log(s->env, LOG_WARN,
		            "%s is not a regular file (a FIFO, directory or device): waiting for "
		            "a database there",
		            s->path);
		s->env->count(s->env, "paths_not_regular", 1);
	}
	s->conn.irregular_warned = true;
	s->conn.retry_at = now + s->poll_ms;
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

__attribute__((format(printf, 3, 4))) static void quiet_log(struct source_env *env, int level,
                                                            const char *fmt, ...)
{
	(void)env;
	(void)level;
	(void)fmt;
}

void sqguard_check_env(struct source_env *env, const char *connector, bool quiet)
{
	*env = (struct source_env){.connector = connector,
	                           .partition = check_partition,
	                           .committed = check_committed,
	                           .count = check_count,
	                           .log = quiet ? quiet_log : check_log};
}

/* ---- a rollback journal under the timestamp modes ---------------------------- */

void sqguard_journal(struct sqsrc *s)
{
	sqlite3_stmt *st = NULL;
	const char *mode;

	if (s->mode != SQ_TIMESTAMP && s->mode != SQ_TS_INC)
		return;
	if (sqlite3_prepare_v2(s->conn.db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
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
