/* atomicfile: see atomicfile.h.
 *
 * Crash windows of atomicfile_replace(path, prev) (generation N in path,
 * N-1 in prev, N+1 being written), and what a reader finds afterwards:
 *   1. while PATH.tmp is written or fsynced: path = N, prev = N-1, a partial
 *      PATH.tmp. The temp file never got a name that a reader trusts.
 *   2. after rename(path, prev), before rename(tmp, path): path missing,
 *      prev = N, PATH.tmp = N+1 (complete, but never trusted).
 *   3. after both renames, before the directory fsync: the renames may or may
 *      not have reached the disk, in any combination (1, 2, or path = N+1,
 *      prev = N; or path = N+1, prev = N-1 if only the second one survived).
 * In every case each name that exists refers to a complete, fsynced file (data
 * is fsynced before any rename), so a reader that validates both path and
 * prev and takes the newest valid one finds generation N or N+1. This relies
 * on rename(2) being atomic across a crash, which ext4, xfs, btrfs and f2fs
 * provide; FAT (vfat/exfat) does not, and is not a supported place for state. */
#include "util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static void fmt(char *errbuf, size_t errlen, const char *f, ...)
    __attribute__((format(printf, 3, 4)));

static void fmt(char *errbuf, size_t errlen, const char *f, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, f);
	vsnprintf(errbuf, errlen, f, ap);
	va_end(ap);
}

/* "step path: strerror(errno)"; call right after the failing call. */
static void syserr(char *errbuf, size_t errlen, const char *step, const char *path)
{
	fmt(errbuf, errlen, "%s %s: %s", step, path, strerror(errno));
}

static char *concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (s != NULL) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
	}
	return s;
}

/* The directory holding path: "." for a bare name, "/" for "/name". */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n;
	char *d;

	if (slash == NULL)
		return concat(".", "");
	n = slash == path ? 1 : (size_t)(slash - path);
	d = malloc(n + 1);
	if (d != NULL) {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

/* Removes a temp file we gave up on; a failure is added to errbuf. */
static void discard(const char *tmp, char *errbuf, size_t errlen)
{
	size_t used;

	if (unlink(tmp) == 0 || errno == ENOENT || errbuf == NULL)
		return;
	used = strnlen(errbuf, errlen);
	if (used + 1 < errlen)
		fmt(errbuf + used, errlen - used, "; remove %s: %s", tmp, strerror(errno));
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Creates tmp afresh, writes data, fsyncs and closes it. On failure tmp is
 * removed: a descriptor whose fsync failed is closed, never fsynced again.
 * held: when not NULL, the new file is flocked at once and *held is a
 * duplicate descriptor that keeps the lock after the close (no second open:
 * the syscalls on tmp stay those of a plain write, which the fault suite
 * counts). */
static int write_tmp(const char *tmp, const void *data, size_t len, int *held, char *errbuf,
                     size_t errlen)
{
	int fd;

	if (unlink(tmp) != 0 && errno != ENOENT) {
		syserr(errbuf, errlen, "remove stale", tmp);
		return -1;
	}
	fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		syserr(errbuf, errlen, "create", tmp);
		return -1;
	}
	if (held != NULL &&
	    (flock(fd, LOCK_EX | LOCK_NB) != 0 || (*held = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)) {
		syserr(errbuf, errlen, "lock", tmp);
		goto fail;
	}
	if (write_all(fd, data, len) != 0) {
		syserr(errbuf, errlen, "write", tmp);
		goto fail;
	}
	if (fsync(fd) != 0) {
		syserr(errbuf, errlen, "fsync", tmp);
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1; /* Linux releases the descriptor even when close fails */
		syserr(errbuf, errlen, "close", tmp);
		goto fail;
	}
	return 0;
fail:
	/* Already failing: the file is discarded, so its close status is moot. */
	if (fd >= 0)
		(void)close(fd);
	if (held != NULL && *held >= 0) {
		(void)close(*held);
		*held = -1;
	}
	discard(tmp, errbuf, errlen);
	return -1;
}

/* The generation step: path -> prev (when asked and path exists), then
 * tmp -> path. On failure tmp is removed. */
static int swap_in(const char *tmp, const char *path, const char *prev, int *done, char *errbuf,
                   size_t errlen)
{
	if (prev != NULL) {
		if (rename(path, prev) == 0) {
			*done |= ATOMICFILE_ROTATED;
		} else if (errno != ENOENT) {
			fmt(errbuf, errlen, "rename %s -> %s: %s", path, prev, strerror(errno));
			goto fail;
		}
	}
	if (rename(tmp, path) != 0) {
		fmt(errbuf, errlen, "rename %s -> %s: %s", tmp, path, strerror(errno));
		goto fail;
	}
	*done |= ATOMICFILE_REPLACED;
	return 0;
fail:
	discard(tmp, errbuf, errlen);
	return -1;
}

int atomicfile_replace(const char *path, const char *prev, const void *data, size_t len, int *done,
                       char *errbuf, size_t errlen)
{
	return atomicfile_replace_held(path, prev, data, len, done, NULL, errbuf, errlen);
}

int atomicfile_replace_held(const char *path, const char *prev, const void *data, size_t len,
                            int *done, int *held, char *errbuf, size_t errlen)
{
	char *tmp = concat(path, ".tmp"), *dir = dir_of(path);
	int dirfd = -1, lockfd = -1, steps = 0, rc = ATOMICFILE_ERR_NOMEM;

	if (tmp == NULL || dir == NULL) {
		fmt(errbuf, errlen, "write %s: out of memory", path);
		goto out;
	}
	rc = ATOMICFILE_ERR_IO;
	/* Opened first so that nothing but its fsync can fail after the renames. */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		syserr(errbuf, errlen, "open directory", dir);
		goto out;
	}
	if (write_tmp(tmp, data, len, held != NULL ? &lockfd : NULL, errbuf, errlen) != 0)
		goto out;
	if (swap_in(tmp, path, prev, &steps, errbuf, errlen) != 0)
		goto out;
	if (fsync(dirfd) != 0) {
		syserr(errbuf, errlen, "fsync", dir);
		goto out;
	}
	rc = 0;
out:
	if (dirfd >= 0 && close(dirfd) != 0 && rc == 0) {
		syserr(errbuf, errlen, "close", dir);
		rc = ATOMICFILE_ERR_IO;
	}
	if (done != NULL)
		*done = steps;
	if (held != NULL && rc == 0)
		*held = lockfd;
	else if (lockfd >= 0)
		(void)close(lockfd);
	free(tmp);
	free(dir);
	return rc;
}

int atomicfile_write(const char *path, const void *data, size_t len, char *errbuf, size_t errlen)
{
	return atomicfile_replace(path, NULL, data, len, NULL, errbuf, errlen);
}

/* Reads fd to EOF into buf (room for cap bytes). Returns bytes read, or -1. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Checks that fd is a regular file of at most max bytes; sets *size. */
static int check_size(int fd, const char *path, size_t max, size_t *size, char *errbuf,
                      size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		syserr(errbuf, errlen, "stat", path);
		return ATOMICFILE_ERR_IO;
	}
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		syserr(errbuf, errlen, "read", path);
		return ATOMICFILE_ERR_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		fmt(errbuf, errlen, "read %s: not a regular file", path);
		return ATOMICFILE_ERR_IO;
	}
	if ((unsigned long long)st.st_size > max) {
		fmt(errbuf, errlen, "%s: too large (%lld bytes, the limit is %zu)", path,
		    (long long)st.st_size, max);
		return ATOMICFILE_ERR_TOOBIG;
	}
	*size = (size_t)st.st_size;
	return 0;
}

int atomicfile_read(const char *path, size_t max, char **data, size_t *len, char *errbuf,
                    size_t errlen)
{
	int fd, rc;
	size_t size = 0;
	ssize_t got;
	char *buf = NULL;

	*data = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? ATOMICFILE_ERR_NOENT : ATOMICFILE_ERR_IO;
		syserr(errbuf, errlen, "open", path);
		return rc;
	}
	rc = check_size(fd, path, max, &size, errbuf, errlen);
	if (rc != 0)
		goto out;
	rc = ATOMICFILE_ERR_NOMEM;
	buf = malloc(size + 2); /* one spare byte to notice growth, one for the NUL */
	if (buf == NULL) {
		fmt(errbuf, errlen, "read %s: out of memory", path);
		goto out;
	}
	rc = ATOMICFILE_ERR_IO;
	got = read_all(fd, buf, size + 1);
	if (got < 0) {
		syserr(errbuf, errlen, "read", path);
		goto out;
	}
	if ((size_t)got != size) {
		fmt(errbuf, errlen, "read %s: file changed size while being read", path);
		goto out;
	}
	buf[got] = '\0';
	*data = buf;
	*len = (size_t)got;
	buf = NULL;
	rc = 0;
out:
	/* Read-only descriptor: a close error cannot lose data. */
	(void)close(fd);
	free(buf);
	return rc;
}

int atomicfile_remove_tmp(const char *path, char *errbuf, size_t errlen)
{
	char *tmp = concat(path, ".tmp");
	int rc = 0;

	if (tmp == NULL) {
		fmt(errbuf, errlen, "remove %s.tmp: out of memory", path);
		return ATOMICFILE_ERR_NOMEM;
	}
	if (unlink(tmp) != 0 && errno != ENOENT) {
		syserr(errbuf, errlen, "remove stale", tmp);
		rc = ATOMICFILE_ERR_IO;
	}
	free(tmp);
	return rc;
}

int atomicfile_check_dir(const char *path, char *errbuf, size_t errlen)
{
	char *dir = dir_of(path);
	struct stat st;
	int rc = 0;

	if (dir == NULL) {
		fmt(errbuf, errlen, "directory of %s: out of memory", path);
		return ATOMICFILE_ERR_NOMEM;
	}
	if (stat(dir, &st) != 0) {
		rc = errno == ENOENT ? ATOMICFILE_ERR_NOENT : ATOMICFILE_ERR_IO;
		fmt(errbuf, errlen, "directory %s (of %s): %s", dir, path, strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		rc = ATOMICFILE_ERR_IO;
		fmt(errbuf, errlen, "directory %s (of %s): %s", dir, path, strerror(ENOTDIR));
	}
	free(dir);
	return rc;
}
