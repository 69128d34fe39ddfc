/* sqvfs: "skiff-ro", the VFS through which skiff opens every database: it
 * reads the application's files and can change none of them, and it holds no
 * lock on a WAL database's file that the application could see.
 *
 * Why (issue 23). SQLite pairs a database with its -wal and -shm by name. An
 * application in WAL mode that closes its last connection checkpoints the WAL
 * into the database and deletes the -wal and -shm, but only if it can take
 * an EXCLUSIVE lock on the database file, that is, only if no other
 * connection is open. A WAL-mode connection holds a SHARED lock on the
 * database file from its first read until it closes, so beside skiff's
 * connection the application's close left its -wal and -shm behind; it then
 * moved a VACUUM INTO copy into place (os.replace) and reopened, and the copy
 * adopted the old file's WAL frames by name: "Rowid out of order", rows gone.
 * (Not skiff's close: a read-only connection never checkpoints nor deletes,
 * its file descriptor cannot take the EXCLUSIVE lock.) A reader that takes
 * no lock on the database file leaves the application's close alone.
 *
 * What this VFS does, file by file:
 * - The database: opened read-only through the default (unix) VFS. xWrite,
 *   xTruncate and xSync never reach it. Locks: in a WAL database (header
 *   bytes 18 and 19 both 2) SHARED is granted without taking it. A reader in
 *   WAL mode needs no lock on the database file: its snapshot is protected
 *   by a read lock in the -shm, which writers and checkpointers respect. In
 *   a rollback-journal database the lock is real: there it is what keeps a
 *   writer off the pages being read. Nothing above SHARED is ever granted.
 * - The -shm: mapped read-only (sqguard.c makes the unix VFS's open for
 *   writing fail, so it falls back to O_RDONLY, as readonly_shm=1 does):
 *   skiff neither writes read marks nor runs recovery; it reads with a mark
 *   a writer left, or, when no live connection keeps the -shm (or there is
 *   none), from the WAL file itself (SQLite's "unreliable shm" path). Never
 *   deleted when the connection closes.
 * - The -wal and a -journal: opened by this file, O_RDONLY, never created.
 *   A -wal that is not there reads as empty: the database file is then the
 *   whole database (a WAL database whose application closed cleanly).
 * - xDelete: refused. Temporary files (sorts): the default VFS's own, in the
 *   temporary directory; they are skiff's, not the application's.
 *
 * The price of holding no lock: an application that closes its last
 * connection, switches the journal mode or takes locking_mode=EXCLUSIVE
 * believes it is alone, and may checkpoint pages under a read of skiff's in
 * progress. The read is then not trusted: sqvfs_check() after each read sees
 * the -wal skiff read deleted or replaced, or the database file held with a
 * write lock, and the caller drops the rows read and opens the database
 * again. (It cannot see one case: an application that keeps its -wal at
 * close, SQLITE_FCNTL_PERSIST_WAL, or whose close-time checkpoint fails
 * with an I/O error, and that closed entirely while skiff read.) */
#include "sources/sqlite/sqvfs.h"

#include "sources/sqlite/sqguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The lock-byte page of the file format (fileformat2 §1.3): the PENDING
 * byte, then RESERVED, then the SHARED range. */
#define PENDING_BYTE 0x40000000
#define SHARED_FIRST (PENDING_BYTE + 2)
#define SHARED_SIZE 510

/* The database file: the default VFS's file follows this struct. */
struct dbfile {
	sqlite3_file base;
	const char *path; /* SQLite's full path name; lives until xClose */
	int fd;           /* the default VFS's descriptor, -1 not known */
	int level;        /* the lock SQLite believes it holds */
	int real_level;   /* the lock held for real (rollback journal) */
	bool faked;       /* a SHARED lock was granted without taking it */
	bool no_shm;      /* there is no -shm to map (and none is made) */
	sqlite3_file real[];
};

/* A -wal or -journal, read-only. */
struct rofile {
	sqlite3_file base;
	const char *path;
	int fd; /* -1: the file is not there (an empty WAL) */
	uint64_t dev, ino;
};

static sqlite3_vfs *under; /* the default VFS */
static sqlite3_vfs vfs;
static const sqlite3_io_methods db_methods, ro_methods;

#define REAL(f) (((struct dbfile *)(f))->real)
#define RM(f) (REAL(f)->pMethods)

/* ---- the -wal and -journal --------------------------------------------------- */

static int ro_close(sqlite3_file *f)
{
	struct rofile *r = (struct rofile *)f;

	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	return SQLITE_OK;
}

static int ro_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct rofile *r = (struct rofile *)f;
	size_t got = 0;

	while (r->fd >= 0 && got < (size_t)amt) {
		ssize_t n = pread(r->fd, (char *)buf + got, (size_t)amt - got, (off_t)off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return SQLITE_IOERR_READ;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == (size_t)amt)
		return SQLITE_OK;
	memset((char *)buf + got, 0, (size_t)amt - got); /* as xRead must */
	return SQLITE_IOERR_SHORT_READ;
}

static int refuse_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	(void)f;
	(void)buf;
	(void)amt;
	(void)off;
	return SQLITE_READONLY;
}

static int refuse_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	(void)f;
	(void)size;
	return SQLITE_READONLY;
}

static int no_sync(sqlite3_file *f, int flags)
{
	(void)f;
	(void)flags;
	return SQLITE_OK; /* nothing was written */
}

static int ro_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct rofile *r = (struct rofile *)f;
	struct stat st;

	*size = 0;
	if (r->fd >= 0 && fstat(r->fd, &st) != 0)
		return SQLITE_IOERR_FSTAT;
	if (r->fd >= 0)
		*size = st.st_size;
	return SQLITE_OK;
}

static int ro_lock(sqlite3_file *f, int level)
{
	(void)f;
	(void)level;
	return SQLITE_OK; /* the default VFS takes none on these files either */
}

static int ro_reserved(sqlite3_file *f, int *out)
{
	(void)f;
	*out = 0;
	return SQLITE_OK;
}

static int ro_control(sqlite3_file *f, int op, void *arg)
{
	(void)f;
	(void)op;
	(void)arg;
	return SQLITE_NOTFOUND;
}

static int ro_sector(sqlite3_file *f)
{
	(void)f;
	return 4096; /* the unix VFS's default */
}

static int ro_device(sqlite3_file *f)
{
	(void)f;
	return 0;
}

static const sqlite3_io_methods ro_methods = {
    .iVersion = 1,
    .xClose = ro_close,
    .xRead = ro_read,
    .xWrite = refuse_write,
    .xTruncate = refuse_truncate,
    .xSync = no_sync,
    .xFileSize = ro_size,
    .xLock = ro_lock,
    .xUnlock = ro_lock,
    .xCheckReservedLock = ro_reserved,
    .xFileControl = ro_control,
    .xSectorSize = ro_sector,
    .xDeviceCharacteristics = ro_device,
};

static int ro_open(const char *path, struct rofile *r, int flags, int *out)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->fd = sqguard_open_ro(path);
	if (r->fd < 0 && (errno != ENOENT || !(flags & SQLITE_OPEN_WAL)))
		return SQLITE_CANTOPEN;
	if (r->fd >= 0 && (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(r->fd);
		return SQLITE_CANTOPEN;
	}
	if (r->fd >= 0) {
		r->dev = (uint64_t)st.st_dev;
		r->ino = (uint64_t)st.st_ino;
	}
	r->base.pMethods = &ro_methods;
	if (out != NULL)
		*out = SQLITE_OPEN_READONLY | (flags & 0x0FFFFF00);
	return SQLITE_OK;
}

/* ---- the database file ------------------------------------------------------- */

static int db_close(sqlite3_file *f)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xClose(REAL(f));
	sqguard_leave();
	return rc;
}

static int db_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xRead(REAL(f), buf, amt, off);
	sqguard_leave();
	return rc;
}

static int db_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xFileSize(REAL(f), size);
	sqguard_leave();
	return rc;
}

/* Bytes 18 and 19 of the header, the read and write versions: 2 in WAL mode. */
static bool is_wal(sqlite3_file *f)
{
	unsigned char v[2];

	return db_read(f, v, 2, 18) == SQLITE_OK && v[0] == 2 && v[1] == 2;
}

static int db_lock(sqlite3_file *f, int level)
{
	struct dbfile *d = (struct dbfile *)f;
	int rc;

	if (level <= d->level)
		return SQLITE_OK;
	if (level > SQLITE_LOCK_SHARED)
		return SQLITE_BUSY; /* never asked: no checkpoint at close */
	if (is_wal(f)) {
		d->level = level;
		d->faked = true;
		return SQLITE_OK;
	}
	sqguard_enter();
	rc = RM(f)->xLock(REAL(f), level);
	sqguard_leave();
	if (rc == SQLITE_OK)
		d->level = d->real_level = level;
	return rc;
}

static int db_unlock(sqlite3_file *f, int level)
{
	struct dbfile *d = (struct dbfile *)f;
	int rc = SQLITE_OK;

	if (d->real_level > level) {
		sqguard_enter();
		rc = RM(f)->xUnlock(REAL(f), level);
		sqguard_leave();
		if (rc == SQLITE_OK)
			d->real_level = level;
	}
	if (d->level > level)
		d->level = level;
	if (level == SQLITE_LOCK_NONE)
		d->faked = false;
	return rc;
}

static int db_reserved(sqlite3_file *f, int *out)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xCheckReservedLock(REAL(f), out);
	sqguard_leave();
	return rc;
}

static int db_control(sqlite3_file *f, int op, void *arg)
{
	int rc;

	/* Hints for a writer: the unix VFS answers them by growing the file. */
	if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE ||
	    op == SQLITE_FCNTL_SYNC || op == SQLITE_FCNTL_COMMIT_PHASETWO)
		return SQLITE_OK;
	sqguard_enter();
	rc = RM(f)->xFileControl(REAL(f), op, arg);
	sqguard_leave();
	return rc;
}

static int db_sector(sqlite3_file *f)
{
	return RM(f)->xSectorSize(REAL(f));
}

static int db_device(sqlite3_file *f)
{
	return RM(f)->xDeviceCharacteristics(REAL(f));
}

static int db_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **pp)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xShmMap(REAL(f), page, size, 0, pp);
	sqguard_leave();
	/* No -shm, and skiff creates none: SQLite reads the WAL file itself
	 * into its own memory, as when the -shm cannot be trusted. */
	((struct dbfile *)f)->no_shm = rc == SQLITE_CANTOPEN;
	if (rc == SQLITE_CANTOPEN)
		rc = SQLITE_READONLY_CANTINIT;
	(void)extend;
	return rc;
}

static int db_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	int rc;

	/* No -shm, no one to share a lock with: whoever comes makes a new
	 * one, and sqvfs_check() sees the -wal it makes. */
	if (((struct dbfile *)f)->no_shm)
		return SQLITE_OK;
	sqguard_enter();
	rc = RM(f)->xShmLock(REAL(f), offset, n, flags);
	sqguard_leave();
	return rc;
}

static void db_shm_barrier(sqlite3_file *f)
{
	RM(f)->xShmBarrier(REAL(f));
}

static int db_shm_unmap(sqlite3_file *f, int delete_flag)
{
	int rc;

	(void)delete_flag; /* the -shm is the application's: never deleted */
	sqguard_enter();
	rc = RM(f)->xShmUnmap(REAL(f), 0);
	sqguard_leave();
	return rc;
}

static int db_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xFetch(REAL(f), off, amt, pp);
	sqguard_leave();
	return rc;
}

static int db_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	int rc;

	sqguard_enter();
	rc = RM(f)->xUnfetch(REAL(f), off, p);
	sqguard_leave();
	return rc;
}

static const sqlite3_io_methods db_methods = {
    .iVersion = 3,
    .xClose = db_close,
    .xRead = db_read,
    .xWrite = refuse_write,
    .xTruncate = refuse_truncate,
    .xSync = no_sync,
    .xFileSize = db_size,
    .xLock = db_lock,
    .xUnlock = db_unlock,
    .xCheckReservedLock = db_reserved,
    .xFileControl = db_control,
    .xSectorSize = db_sector,
    .xDeviceCharacteristics = db_device,
    .xShmMap = db_shm_map,
    .xShmLock = db_shm_lock,
    .xShmBarrier = db_shm_barrier,
    .xShmUnmap = db_shm_unmap,
    .xFetch = db_fetch,
    .xUnfetch = db_unfetch,
};

/* ---- the VFS ------------------------------------------------------------------ */

static int vfs_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	int type = flags & 0x0FFFFF00, rc;
	struct dbfile *d = (struct dbfile *)f;

	(void)v;
	f->pMethods = NULL;
	if (name != NULL &&
	    (type & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL)))
		return ro_open(name, (struct rofile *)f, flags, out);
	if (name == NULL || !(type & SQLITE_OPEN_MAIN_DB))
		return under->xOpen(under, name, f, flags, out); /* skiff's temporary files */
	memset(d, 0, sizeof(*d));
	d->path = name;
	d->fd = -1;
	flags &= ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE |
	           SQLITE_OPEN_DELETEONCLOSE);
	flags |= SQLITE_OPEN_READONLY;
	sqguard_enter();
	sqguard_capture(name);
	rc = under->xOpen(under, name, d->real, flags, out);
	/* -1 when the unix VFS reused a descriptor of the same file (only after
	 * a real lock): no write-lock check then (sqvfs_check). */
	d->fd = sqguard_captured();
	if (rc != SQLITE_OK && d->real->pMethods != NULL)
		d->real->pMethods->xClose(d->real);
	sqguard_leave();
	if (rc != SQLITE_OK)
		return rc;
	f->pMethods = &db_methods;
	return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	(void)name;
	(void)sync;
	return SQLITE_READONLY; /* the -wal above all: it is the application's */
}

static int vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return under->xAccess(under, name, flags, out);
}

static int vfs_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return under->xFullPathname(under, name, n, out);
}

static void *vfs_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return under->xDlOpen(under, name);
}

static void vfs_dlerror(sqlite3_vfs *v, int n, char *msg)
{
	(void)v;
	under->xDlError(under, n, msg);
}

static void (*vfs_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return under->xDlSym(under, h, sym);
}

static void vfs_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	under->xDlClose(under, h);
}

static int vfs_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return under->xRandomness(under, n, out);
}

static int vfs_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return under->xSleep(under, us);
}

static int vfs_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return under->xCurrentTime(under, out);
}

static int vfs_last_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return under->xGetLastError != NULL ? under->xGetLastError(under, n, out) : 0;
}

static int vfs_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return under->xCurrentTimeInt64(under, out);
}

int sqvfs_register(void)
{
	size_t size;

	if (under != NULL)
		return SQLITE_OK;
	under = sqlite3_vfs_find("unix");
	if (under == NULL || under->iVersion < 2) {
		under = NULL;
		return SQLITE_ERROR;
	}
	size = sizeof(struct dbfile) + (size_t)under->szOsFile;
	if (size < sizeof(struct rofile))
		size = sizeof(struct rofile);
	vfs = (sqlite3_vfs){
	    .iVersion = 2,
	    .szOsFile = (int)size,
	    .mxPathname = under->mxPathname,
	    .zName = SQVFS_NAME,
	    .xOpen = vfs_open,
	    .xDelete = vfs_delete,
	    .xAccess = vfs_access,
	    .xFullPathname = vfs_full,
	    .xDlOpen = vfs_dlopen,
	    .xDlError = vfs_dlerror,
	    .xDlSym = vfs_dlsym,
	    .xDlClose = vfs_dlclose,
	    .xRandomness = vfs_random,
	    .xSleep = vfs_sleep,
	    .xCurrentTime = vfs_time,
	    .xGetLastError = vfs_last_error,
	    .xCurrentTimeInt64 = vfs_time64,
	};
	if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) {
		under = NULL;
		return SQLITE_ERROR;
	}
	return SQLITE_OK;
}

/* ---- is a read sound ---------------------------------------------------------- */

static struct dbfile *db_of(sqlite3 *db)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods != &db_methods)
		return NULL;
	return (struct dbfile *)f;
}

static struct rofile *wal_of(sqlite3 *db)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods != &ro_methods)
		return NULL;
	return (struct rofile *)f;
}

/* "<path>-wal" into buf. */
static bool wal_path(const struct dbfile *d, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-wal", d->path);

	return n > 0 && (size_t)n < len;
}

void sqvfs_mark(sqlite3 *db, struct sqvfs_mark *m)
{
	struct dbfile *d = db_of(db);
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (d == NULL || d->fd < 0 || fstat(d->fd, &st) != 0)
		return;
	m->known = true;
	m->size = (int64_t)st.st_size;
	m->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	m->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

/* Which connection holds a write lock on the lock-byte page: its pid, or 0. */
static long writer(const struct dbfile *d)
{
	struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};

	l.l_start = PENDING_BYTE;
	l.l_len = 1;
	if (fcntl(d->fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK)
		return l.l_pid > 0 ? (long)l.l_pid : -1;
	l = (struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET};
	l.l_start = SHARED_FIRST;
	l.l_len = SHARED_SIZE;
	if (fcntl(d->fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK)
		return l.l_pid > 0 ? (long)l.l_pid : -1;
	return 0;
}

int sqvfs_check(sqlite3 *db, const struct sqvfs_mark *m, char *why, size_t len)
{
	struct dbfile *d = db_of(db);
	struct rofile *w = wal_of(db);
	char path[4096];
	struct stat st;
	long pid;

	if (d == NULL || !d->faked)
		return SQVFS_SOUND; /* a rollback journal: the lock was real */
	if (d->fd >= 0 && (pid = writer(d)) != 0) {
		snprintf(why, len, "another connection (pid %ld) holds the database exclusively",
		         pid);
		return SQVFS_HELD;
	}
	if (w != NULL && w->fd >= 0) {
		if (fstat(w->fd, &st) == 0 && st.st_nlink == 0) {
			snprintf(why, len,
			         "the application deleted the -wal (it closed the database)");
			return SQVFS_STALE;
		}
		if (stat(w->path, &st) != 0 || (uint64_t)st.st_dev != w->dev ||
		    (uint64_t)st.st_ino != w->ino) {
			snprintf(why, len, "the -wal was replaced");
			return SQVFS_STALE;
		}
		return SQVFS_SOUND;
	}
	/* No -wal when the connection began: the file was all there was. */
	if (wal_path(d, path, sizeof(path)) && stat(path, &st) == 0) {
		snprintf(why, len, "the application opened the database (a -wal appeared)");
		return SQVFS_STALE;
	}
	if (m != NULL && m->known && d->fd >= 0 && fstat(d->fd, &st) == 0 &&
	    (m->size != (int64_t)st.st_size ||
	     m->mtime_ns != (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec ||
	     m->ctime_ns != (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec)) {
		snprintf(why, len, "the database file changed while it was read");
		return SQVFS_STALE;
	}
	return SQVFS_SOUND;
}
