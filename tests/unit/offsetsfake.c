/* offsetsfake: what the offset store's unit tests share (test_offsets*.c
 * with test_offsets*.cmake): wrappers of open, write, fsync, close and
 * rename that count calls and fail one on demand, and helpers that make
 * store files and judge what a load makes of them. */
#include "offsetsfake.h"

#include "offsets/offsets_file.h"
#include "testlib.h"

#include "util/crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- wrappers ----------------------------------------------------------- */

struct wrapstate w = {.tmp_fd = -1, .failed_fd = -1};

static int fail(int e)
{
	errno = e;
	return -1;
}

/* Returns a one-shot fault's errno and disarms it. */
static int take(int *knob)
{
	int e = *knob;

	*knob = 0;
	return e;
}

int __wrap_open(const char *file, int flags, ...)
{
	unsigned int mode = 0;
	int fd, e;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, unsigned int);
	va_end(ap);
	w.opens++;
	if (w.eacces != NULL && strcmp(file, w.eacces) == 0)
		return fail(EACCES);
	if ((flags & O_EXCL) && (w.creates++, e = take(&w.create_errno)) != 0)
		return fail(e);
	fd = __real_open(file, flags, mode);
	if (fd >= 0 && (flags & O_EXCL))
		w.tmp_fd = fd;
	return fd;
}

/* With _FILE_OFFSET_BITS=64 on a 32-bit target (armhf), <fcntl.h> makes
 * open() a call of open64(): the same wrapper sees both. */
int __wrap_open64(const char *file, int flags, ...)
{
	unsigned int mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, unsigned int);
	va_end(ap);
	return __wrap_open(file, flags | O_LARGEFILE, mode);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	int e = take(&w.write_errno);

	w.writes++;
	if (e != 0)
		return fail(e);
	if (w.choppy && w.writes % 2 == 0)
		return fail(EINTR);
	return __real_write(fd, buf, w.choppy && n > 7 ? 7 : n);
}

int __wrap_fsync(int fd)
{
	struct stat st;
	int e;

	w.fsyncs++;
	w.fsync_retried += fd == w.failed_fd;
	if (fstat(fd, &st) != 0)
		return fail(EBADF);
	e = take(S_ISDIR(st.st_mode) ? &w.fsync_dir_errno : &w.fsync_file_errno);
	if (e != 0) {
		w.failed_fd = fd;
		return fail(e);
	}
	return __real_fsync(fd);
}

int __wrap_close(int fd)
{
	int rc = __real_close(fd), e;

	if (fd == w.failed_fd)
		w.failed_fd = -1;
	if (fd != w.tmp_fd)
		return rc;
	w.tmp_fd = -1;
	e = take(&w.close_errno);
	return e != 0 ? fail(e) : rc;
}

int __wrap_rename(const char *from, const char *to)
{
	w.renames++;
	if (w.rename_nth > 0 && --w.rename_nth == 0)
		return fail(EIO);
	return __real_rename(from, to);
}

/* ---- helpers ------------------------------------------------------------ */

char base[256], dir[300];
char path[400], prev[410], tmp[410];
char err[1024];

/* A fresh directory (under base) with path, prev and tmp names in it. */
void fresh(void)
{
	static int n;

	snprintf(dir, sizeof(dir), "%s/%d", base, n++);
	if (mkdir(dir, 0755) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/offsets.json", dir);
	snprintf(prev, sizeof(prev), "%s.prev", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
}

int exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

char *slurp(const char *p, size_t *len)
{
	struct stat st;
	char *d;
	int fd = open(p, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0)
		abort();
	d = malloc((size_t)st.st_size + 1);
	if (d == NULL || read(fd, d, (size_t)st.st_size) != st.st_size)
		abort();
	close(fd);
	d[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return d;
}

/* Writes body plus a correct checksum trailer: a document as skiff would. */
void write_doc(const char *p, const char *body)
{
	char *d = malloc(strlen(body) + 32);
	int n;

	if (d == NULL)
		abort();
	n = snprintf(d, strlen(body) + 32, "%s,\"crc32c\":\"%08" PRIx32 "\"}\n", body,
	             crc32c(0, body, strlen(body)));
	testlib_write_file(p, d, (size_t)n);
	free(d);
}

struct offsets *open_ok(void)
{
	struct offsets *o = NULL;
	int rc = offsets_open_file(path, &o, err, sizeof(err));

	if (rc != 0)
		fprintf(stderr, "open %s: %s\n", path, err);
	CHECK_INT(rc, 0);
	return o;
}

uint64_t gen_of(const struct offsets *o)
{
	struct offsets_stats st;

	offsets_stats(o, &st);
	return st.generation;
}

/* Sets KEY to value and flushes; the store's generation after it. */
uint64_t put_flush(struct offsets *o, const char *value)
{
	CHECK_INT(offsets_put(o, KEY, value), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	return gen_of(o);
}

/* path = generation 2 holding VAL_B, prev = generation 1 holding VAL_A. */
void two_generations(void)
{
	struct offsets *o;

	fresh();
	o = open_ok();
	CHECK_INT(put_flush(o, VAL_A), 1);
	CHECK_INT(put_flush(o, VAL_B), 2);
	offsets_destroy(o);
}

/* What load makes of the files: generation 2 (RIGHT), generation 1 from prev
 * (OTHER), a refusal, or anything else (WRONG: a test failure). */
enum verdict verdict(void)
{
	struct offsets *o = NULL;
	struct offsets_stats st;
	enum verdict v = WRONG;
	int rc = offsets_open_file(path, &o, err, sizeof(err));

	if (rc == OFFSETS_ERR_CORRUPT)
		return REFUSED;
	if (rc != 0)
		return WRONG;
	offsets_stats(o, &st);
	if (offsets_count(o) != 1 || offsets_get(o, KEY) == NULL)
		v = WRONG;
	else if (st.generation == 2 && !st.loaded_from_prev && !strcmp(offsets_get(o, KEY), VAL_B))
		v = RIGHT;
	else if (st.generation == 1 && st.loaded_from_prev && !strcmp(offsets_get(o, KEY), VAL_A))
		v = OTHER;
	offsets_destroy(o);
	return v;
}

/* A JSON object {"v":"xxx..."} of exactly size bytes (free()). */
char *make_big(size_t size)
{
	char *big = malloc(size + 1);

	if (big == NULL)
		abort();
	memcpy(big, "{\"v\":\"", 6);
	memset(big + 6, 'x', size - 8);
	memcpy(big + size - 2, "\"}", 3);
	return big;
}

void fill(struct offsets *o)
{
	char *v = make_big(OFFSETS_MAX_BYTES - 60);

	CHECK_INT(offsets_put(o, FILL_KEY, v), 0);
	free(v);
}
