/* Unit tests for the offset store: crc32c, the map, the file format, loading
 * after every kind of damage, and fault injection. open, write, fsync, close
 * and rename are wrapped (test_offsets.cmake: -Wl,--wrap=...) so that a test
 * can count them and make one fail.
 *
 * The tests run as root, for whom chmod 000 does not cause EACCES: an
 * unreadable file is simulated by the open wrapper, and also by a directory
 * in place of the file. */
#include "testlib.h"

#include "crc32c.h"
#include "offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- wrappers ----------------------------------------------------------- */

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __real_close(int fd);
int __wrap_close(int fd);
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);

static struct {
	int opens, creates, writes, fsyncs, renames; /* calls seen */
	const char *eacces;                          /* open of this path fails with EACCES */
	int create_errno;     /* one-shot: the next O_CREAT|O_EXCL open fails */
	int write_errno;      /* one-shot: the next write fails */
	int fsync_file_errno; /* one-shot: the next fsync of a regular file fails */
	int fsync_dir_errno;  /* one-shot: the next fsync of a directory fails */
	int close_errno;      /* one-shot: the temp file's close fails (after closing) */
	int rename_nth;       /* the nth rename from now fails with EIO */
	int choppy;           /* writes: at most 7 bytes, EINTR every other call */
	int tmp_fd;           /* descriptor of the temp file being written */
	int failed_fd;        /* descriptor whose fsync failed, until closed */
	int fsync_retried;    /* fsyncs of failed_fd: must stay 0 */
} w = {.tmp_fd = -1, .failed_fd = -1};

static int fail(int err)
{
	errno = err;
	return -1;
}

/* Returns a one-shot fault's errno and disarms it. */
static int take(int *knob)
{
	int e = *knob;

	*knob = 0;
	return e;
}

int __wrap_open(const char *path, int flags, ...)
{
	unsigned int mode = 0;
	int fd, e;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, unsigned int);
	va_end(ap);
	w.opens++;
	if (w.eacces != NULL && strcmp(path, w.eacces) == 0)
		return fail(EACCES);
	if ((flags & O_EXCL) && (w.creates++, e = take(&w.create_errno)) != 0)
		return fail(e);
	fd = __real_open(path, flags, mode);
	if (fd >= 0 && (flags & O_EXCL))
		w.tmp_fd = fd;
	return fd;
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

#define KEY "[\"conn\",{\"filename\":\"f\"}]"
#define VAL_A "{\"position\":1}"
#define VAL_B "{\"position\":2}"
#define VAL_C "{\"position\":3}"

static char base[256], dir[300];
static char path[400], prev[410], tmp[410];
static char err[1024];

/* A fresh directory (under base) with path, prev and tmp names in it. */
static void fresh(void)
{
	static int n;

	snprintf(dir, sizeof(dir), "%s/%d", base, n++);
	if (mkdir(dir, 0755) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/offsets.json", dir);
	snprintf(prev, sizeof(prev), "%s.prev", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
}

static int exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static char *slurp(const char *p, size_t *len)
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
static void write_doc(const char *p, const char *body)
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

static struct offsets *open_ok(void)
{
	struct offsets *o = NULL;
	int rc = offsets_open_file(path, &o, err, sizeof(err));

	if (rc != 0)
		fprintf(stderr, "open %s: %s\n", path, err);
	CHECK_INT(rc, 0);
	return o;
}

static uint64_t gen_of(const struct offsets *o)
{
	struct offsets_stats st;

	offsets_stats(o, &st);
	return st.generation;
}

/* Sets KEY to value and flushes; the store's generation after it. */
static uint64_t put_flush(struct offsets *o, const char *value)
{
	CHECK_INT(offsets_put(o, KEY, value), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	return gen_of(o);
}

/* path = generation 2 holding VAL_B, prev = generation 1 holding VAL_A. */
static void two_generations(void)
{
	struct offsets *o;

	fresh();
	o = open_ok();
	CHECK_INT(put_flush(o, VAL_A), 1);
	CHECK_INT(put_flush(o, VAL_B), 2);
	offsets_destroy(o);
}

enum verdict { RIGHT, OTHER, REFUSED, WRONG };

/* What load makes of the files: generation 2 (RIGHT), generation 1 from prev
 * (OTHER), a refusal, or anything else (WRONG: a test failure). */
static enum verdict verdict(void)
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
static char *make_big(size_t size)
{
	char *big = malloc(size + 1);

	if (big == NULL)
		abort();
	memcpy(big, "{\"v\":\"", 6);
	memset(big + 6, 'x', size - 8);
	memcpy(big + size - 2, "\"}", 3);
	return big;
}

/* ---- crc32c ------------------------------------------------------------- */

static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return ~crc;
}

static void test_crc32c(void)
{
	unsigned char b[256];

	CHECK_INT(crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_INT(crc32c(0, "", 0), 0);
	CHECK_INT(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
	/* RFC 3720 (iSCSI) B.4 vectors. */
	memset(b, 0, 32);
	CHECK_INT(crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xff, 32);
	CHECK_INT(crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	CHECK_INT(crc32c(0, b, 32), 0x46DD794Eu);
	/* The table, entry by entry, against the definition. */
	for (int i = 0; i < 256; i++)
		b[i] = (unsigned char)i;
	for (int i = 0; i < 256; i++)
		CHECK_INT(crc32c(0, b + i, 1), crc_bitwise(0, b + i, 1));
	CHECK_INT(crc32c(0, b, 256), crc_bitwise(0, b, 256));
}

/* ---- the map, with a backend in memory ---------------------------------- */

struct mem {
	int loads, stores, closes, fail_load, fail_store;
	uint64_t last_gen;
	size_t last_count;
};

static int mem_load(void *ctx, struct offsets *o, uint64_t *gen, int *from_prev, char *e, size_t el)
{
	struct mem *m = ctx;

	m->loads++;
	if (m->fail_load) {
		snprintf(e, el, "mem: cannot load");
		return OFFSETS_ERR_IO;
	}
	*gen = 7;
	*from_prev = 0;
	return offsets_load_entry(o, "[\"c\",{\"p\":0}]", "{\"o\":0}");
}

static int mem_store(void *ctx, const struct offsets *o, uint64_t gen, char *e, size_t el)
{
	struct mem *m = ctx;

	m->stores++;
	m->last_gen = gen;
	m->last_count = offsets_count(o);
	if (m->fail_store) {
		snprintf(e, el, "mem: cannot store");
		return OFFSETS_ERR_IO;
	}
	return 0;
}

static void mem_close(void *ctx)
{
	((struct mem *)ctx)->closes++;
}

static const struct offset_backend_ops mem_ops = {"mem", mem_load, mem_store, mem_close};

static void test_map_put(void)
{
	struct mem m = {0};
	struct offsets *o = NULL;

	CHECK_INT(offsets_open(&mem_ops, &m, &o, err, sizeof(err)), 0);
	CHECK(o != NULL && !offsets_dirty(o) && offsets_count(o) == 1);
	CHECK_STR(offsets_get(o, "[\"c\",{\"p\":0}]"), "{\"o\":0}");
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":0}]", "{\"o\":0}"), 0);
	CHECK(!offsets_dirty(o)); /* equal value */
	CHECK_INT(offsets_put(o, "[\"c\", {\"p\": 0}]", "{ \"o\" : 0 }"), 0);
	CHECK(!offsets_dirty(o)); /* equal once canonical */
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK_INT(m.stores, 0);
	CHECK_INT(offsets_put(o, "[\"c\", {\"p\": 1}]", "{ \"o\" : 5 }"), 0);
	CHECK(offsets_dirty(o));
	CHECK_STR(offsets_key(o, 1), "[\"c\",{\"p\":1}]");
	CHECK_STR(offsets_value(o, 1), "{\"o\":5}");
	CHECK_STR(offsets_get(o, "[ \"c\",{\"p\":1} ]"), "{\"o\":5}");
	CHECK(offsets_get(o, "[\"c\",{\"p\":2}]") == NULL);
	CHECK(offsets_get(o, "not json") == NULL);
	CHECK(offsets_key(o, 2) == NULL && offsets_value(o, 2) == NULL);

	/* Rejected: what load would refuse. */
	CHECK_INT(offsets_put(o, "[\"c\",{}", "{}"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "{\"c\":1}", "{}"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "[\"c\",{},1]", "{}"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "[1,{}]", "{}"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "[\"c\",{}]", "5"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "[\"c\",{}]", "{} x"), OFFSETS_ERR_ARG);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "null"), OFFSETS_ERR_ARG);
	CHECK_STR(offsets_get(o, "[\"c\",{\"p\":1}]"), "{\"o\":5}");
	CHECK_INT(offsets_count(o), 2);
	offsets_destroy(o);
	CHECK_INT(m.closes, 1);
}

static void test_map_flush(void)
{
	struct mem m = {0};
	struct offsets *o = NULL;
	struct offsets_stats st;

	CHECK_INT(offsets_open(&mem_ops, &m, &o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":5}"), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(m.stores == 1 && m.last_gen == 8 && m.last_count == 2 && !offsets_dirty(o));
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_stats(o, &st);
	CHECK(st.generation == 8 && st.flushes == 1 && st.skipped_clean == 1);

	/* A failed store: counted, still dirty, a new generation next time. */
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":6}"), 0);
	m.fail_store = 1;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_IO);
	CHECK_STR(err, "mem: cannot store");
	offsets_stats(o, &st);
	CHECK(st.flush_failures == 1 && st.generation == 8 && offsets_dirty(o));
	m.fail_store = 0;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(m.last_gen == 10 && gen_of(o) == 10 && !offsets_dirty(o));
	offsets_destroy(o);
	CHECK_INT(m.closes, 1);
	offsets_destroy(NULL);

	m = (struct mem){.fail_load = 1};
	o = (struct offsets *)&m;
	CHECK_INT(offsets_open(&mem_ops, &m, &o, err, sizeof(err)), OFFSETS_ERR_IO);
	CHECK(o == NULL && m.closes == 1);
	CHECK(strcmp(offsets_strerror(OFFSETS_ERR_CORRUPT), offsets_strerror(OFFSETS_ERR_IO)) != 0);
}

static void test_map_limits(void)
{
	struct mem m = {0};
	struct offsets *o = NULL;
	char key[64], *big = make_big(OFFSETS_MAX_BYTES - 60);
	int rc = 0;

	CHECK_INT(offsets_open(&mem_ops, &m, &o, err, sizeof(err)), 0);
	for (int i = 1; i < OFFSETS_MAX_ENTRIES && rc == 0; i++) {
		snprintf(key, sizeof(key), "[\"c\",{\"p\":%d}]", i);
		rc = offsets_put(o, key, "{\"o\":1}");
	}
	CHECK_INT(rc, 0);
	CHECK_INT(offsets_count(o), OFFSETS_MAX_ENTRIES);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":-1}]", "{}"), OFFSETS_ERR_FULL);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":77}]", "{\"o\":2}"), 0); /* updates still fine */
	for (int i = 0; i < OFFSETS_MAX_ENTRIES; i += 4099) {
		snprintf(key, sizeof(key), "[\"c\",{\"p\":%d}]", i);
		CHECK_STR(offsets_key(o, (size_t)i), key);
		CHECK(offsets_get(o, key) != NULL);
	}
	offsets_destroy(o);

	/* The byte cap (counting 32 bytes per entry): a value close to it fits
	 * alone, but not beside the loaded entry, and nothing fits after it. */
	m = (struct mem){0};
	CHECK_INT(offsets_open(&mem_ops, &m, &o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", big), OFFSETS_ERR_FULL);
	offsets_load_reset(o);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", big), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":2}]", "{}"), OFFSETS_ERR_FULL);
	offsets_destroy(o);
	free(big);
}

/* ---- the file: format and round trip ------------------------------------ */

#define DOC_GEN1                                                                                   \
	"{\"format\":\"skiff-offsets\",\"version\":1,\"generation\":1,\"offsets\":[{\"key\":"      \
	"[\"conn\",{\"filename\":\"f\"}],\"value\":{\"position\":1}}],\"crc32c\":\"7f283dff\"}\n"

static void test_format(void)
{
	struct offsets *o;
	size_t len;
	char *d;

	fresh();
	o = open_ok();
	CHECK(!exists(path) && !exists(prev)); /* opening writes nothing */
	CHECK_INT(put_flush(o, VAL_A), 1);
	offsets_destroy(o);
	d = slurp(path, &len);
	CHECK_STR(d, DOC_GEN1); /* the CRC was computed independently */
	CHECK_INT(len, strlen(DOC_GEN1));
	free(d);
	CHECK(!exists(prev) && !exists(tmp));
}

static void test_round_trip(void)
{
	struct offsets *o;
	struct offsets_stats st;
	char key[64], val[64];

	fresh();
	o = open_ok();
	for (int i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "[\"c%d\",{\"file\":\"/var/log/%d\"}]", i % 3, i);
		snprintf(val, sizeof(val), "{\"position\":%d,\"inode\":%d}", i * 1000, i);
		CHECK_INT(offsets_put(o, key, val), 0);
	}
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, "[\"c1\",{\"file\":\"/var/log/4\"}]", "{\"position\":1}"), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_destroy(o);

	o = open_ok();
	offsets_stats(o, &st);
	CHECK(st.generation == 2 && !st.loaded_from_prev && !offsets_dirty(o));
	CHECK_INT(offsets_count(o), 50);
	for (int i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "[\"c%d\",{\"file\":\"/var/log/%d\"}]", i % 3, i);
		snprintf(val, sizeof(val), "{\"position\":%d,\"inode\":%d}", i * 1000, i);
		CHECK_STR(offsets_key(o, (size_t)i), key); /* insertion order kept */
		CHECK_STR(offsets_value(o, (size_t)i), i == 4 ? "{\"position\":1}" : val);
	}
	CHECK_INT(put_flush(o, VAL_A), 3);
	offsets_destroy(o);
	o = open_ok();
	CHECK_INT(gen_of(o), 3);
	CHECK_INT(offsets_count(o), 51);
	offsets_destroy(o);
}

/* A clean store writes nothing: no call reaches the system, the file keeps
 * its inode and mtime. */
static void test_clean_writes_nothing(void)
{
	struct offsets *o;
	struct offsets_stats st;
	struct stat before, after;
	int opens, writes, fsyncs, renames;

	fresh();
	o = open_ok();
	put_flush(o, VAL_A);
	CHECK(stat(path, &before) == 0);
	opens = w.opens, writes = w.writes, fsyncs = w.fsyncs, renames = w.renames;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, KEY, VAL_A), 0);
	CHECK_INT(offsets_put(o, "[\"conn\", {\"filename\": \"f\"}]", "{\"position\": 1}"), 0);
	CHECK(!offsets_dirty(o));
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(w.opens == opens && w.writes == writes && w.fsyncs == fsyncs && w.renames == renames);
	CHECK(stat(path, &after) == 0);
	CHECK(before.st_ino == after.st_ino && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
	      before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
	offsets_stats(o, &st);
	CHECK(st.skipped_clean == 2 && st.flushes == 1 && st.generation == 1);
	offsets_destroy(o);
}

/* Integers beyond 2^53 (SQLite rowids, inodes) and string escapes survive a
 * put, a flush and a load byte for byte: nothing is re-printed through a
 * double. Odd but valid spacing in a stored document is compacted. */
static void test_exact_text(void)
{
	static const char k2[] = "[\"c\\\"q\",{\"f\":\"a b\\\\\",\"n\":18446744073709551615}]";
	static const char v2[] = "{\"id\":9007199254740993,\"ino\":-9223372036854775808,"
	                         "\"s\":\"x\\u00e9 ]}\",\"f\":1.10}";
	struct offsets *o;

	fresh();
	o = open_ok();
	CHECK_INT(offsets_put(o, k2, v2), 0);
	CHECK_INT(offsets_put(o, KEY, " {\"position\" :\t9223372036854775807}\n"), 0);
	CHECK_STR(offsets_get(o, KEY), "{\"position\":9223372036854775807}");
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_destroy(o);
	o = open_ok();
	CHECK(o != NULL && offsets_count(o) == 2);
	CHECK_STR(offsets_key(o, 0), k2);
	CHECK_STR(offsets_get(o, k2), v2);
	CHECK_STR(offsets_get(o, KEY), "{\"position\":9223372036854775807}");
	offsets_destroy(o);

	write_doc(path, "{ \"offsets\" :\n [ { \"value\" : {\"p\" : 9007199254740993 } ,\"key\":"
	                "[\"c\",{\"x\":[1, {\"y\":\"]}\"}]}] } ] ,\"generation\":8,"
	                "\"format\":\"skiff-offsets\",\"version\":1");
	o = open_ok();
	CHECK(o != NULL && gen_of(o) == 8 && offsets_count(o) == 1);
	CHECK_STR(offsets_key(o, 0), "[\"c\",{\"x\":[1,{\"y\":\"]}\"}]}]");
	CHECK_STR(offsets_value(o, 0), "{\"p\":9007199254740993}");
	offsets_destroy(o);
}

/* A value close to OFFSETS_MAX_BYTES is written and read back. */
static void test_large_store(void)
{
	struct offsets *o;
	char *big = make_big(OFFSETS_MAX_BYTES - 100);

	fresh();
	o = open_ok();
	CHECK_INT(offsets_put(o, KEY, big), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_destroy(o);
	o = open_ok();
	CHECK(o != NULL && offsets_count(o) == 1 && strcmp(offsets_get(o, KEY), big) == 0);
	offsets_destroy(o);
	free(big);
}

/* ---- load: damage to one generation or both ------------------------------ */

/* Replaces path with bytes, restores prev, and judges the result. */
static enum verdict with_path(const char *bytes, size_t len, const char *prevdata, size_t prevlen)
{
	testlib_write_file(path, bytes, len);
	testlib_write_file(prev, prevdata, prevlen);
	return verdict();
}

static void test_torn_and_garbage(void)
{
	size_t len, plen, bad = 0;
	char *good, *p;

	two_generations();
	good = slurp(path, &len);
	p = slurp(prev, &plen);
	CHECK_INT(verdict(), RIGHT);
	for (size_t cut = 0; cut < len; cut++)
		bad += with_path(good, cut, p, plen) != OTHER;
	CHECK_INT(bad, 0);
	CHECK_INT(with_path("", 0, p, plen), OTHER);
	CHECK_INT(with_path("\x01\x02garbage\xff", 11, p, plen), OTHER);
	CHECK_INT(with_path("\xac\xed\x00\x05sr\x00", 7, p, plen), OTHER);
	/* Nothing of path is reused: after a fallback, the next write keeps the
	 * good prev (it does not rotate the bad file into prev). */
	testlib_write_file(path, "garbage", 7);
	{
		struct offsets *o = open_ok();

		CHECK_INT(put_flush(o, VAL_B), 2);
		offsets_destroy(o);
	}
	CHECK_INT(verdict(), RIGHT);
	unlink(path);
	CHECK_INT(verdict(), OTHER);
	free(good);
	free(p);
}

/* Flips every bit of path, one at a time: load never yields a wrong value. */
static void test_bit_flips(void)
{
	size_t len, plen, wrong = 0, right = 0, other = 0, refused = 0;
	char *good, *p;

	two_generations();
	good = slurp(path, &len);
	p = slurp(prev, &plen);
	for (size_t bit = 0; bit < len * 8; bit++) {
		enum verdict v;

		good[bit / 8] ^= (char)(1 << bit % 8);
		v = with_path(good, len, p, plen);
		good[bit / 8] ^= (char)(1 << bit % 8);
		wrong += v == WRONG || v == REFUSED;
		other += v == OTHER;
		right += v == RIGHT;
		/* And without prev: the right generation, or a refusal. */
		good[bit / 8] ^= (char)(1 << bit % 8);
		testlib_write_file(path, good, len);
		unlink(prev);
		v = verdict();
		good[bit / 8] ^= (char)(1 << bit % 8);
		wrong += v != RIGHT && v != REFUSED;
		refused += v == REFUSED;
	}
	CHECK_INT(wrong, 0);
	/* CRC-32C catches every single-bit error: all fall back or refuse. */
	CHECK_INT(other, len * 8);
	CHECK_INT(refused, len * 8);
	CHECK_INT(right, 0);
	free(good);
	free(p);
}

#define HEAD(v, g) "{\"format\":\"skiff-offsets\",\"version\":" v ",\"generation\":" g
#define ENTRY_A "{\"key\":" KEY ",\"value\":" VAL_A "}"

/* Documents with a correct checksum but content load must refuse. */
static void test_bad_content(void)
{
	static const char *const bodies[] = {
	    HEAD("0", "5") ",\"offsets\":[]",
	    HEAD("\"1\"", "5") ",\"offsets\":[]",
	    HEAD("1.5", "5") ",\"offsets\":[]",
	    "{\"format\":\"other\",\"version\":1,\"generation\":5,\"offsets\":[]",
	    "{\"version\":1,\"generation\":5,\"offsets\":[]",
	    HEAD("1", "0") ",\"offsets\":[]",
	    HEAD("1", "-3") ",\"offsets\":[]",
	    HEAD("1", "2.5") ",\"offsets\":[]",
	    HEAD("1", "1e300") ",\"offsets\":[]",
	    HEAD("1", "5") ",\"offsets\":{}",
	    HEAD("1", "5"),
	    HEAD("1", "5") ",\"offsets\":[{\"key\":\"[\\\"conn\\\",{}]\",\"value\":" VAL_A "}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":[\"conn\"],\"value\":" VAL_A "}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":[\"conn\",{},{}],\"value\":" VAL_A "}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":[1,{}],\"value\":" VAL_A "}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":" KEY ",\"value\":\"{}\"}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":" KEY "}]",
	    HEAD("1", "5") ",\"offsets\":[" ENTRY_A "," ENTRY_A "]", /* duplicate */
	    HEAD("1", "5") ",\"offsets\":[{\"k\\u0065y\":" KEY ",\"value\":" VAL_A "}]",
	    HEAD("1", "5") ",\"offsets\":[{\"key\":" KEY ",\"value\":" VAL_A "}] junk",
	    "[1,2",
	};
	size_t plen;
	char *p;

	two_generations();
	p = slurp(prev, &plen);
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		write_doc(path, bodies[i]);
		testlib_write_file(prev, p, plen);
		if (verdict() != OTHER) {
			testlib_failures++;
			fprintf(stderr, "bad content %zu not refused: %s\n", i, bodies[i]);
		}
	}
	/* Control: the same framing with good content is accepted. */
	write_doc(path, HEAD("1", "5") ",\"offsets\":[" ENTRY_A "]");
	{
		struct offsets *o = open_ok();

		CHECK(o != NULL && gen_of(o) == 5 && offsets_count(o) == 1);
		offsets_destroy(o);
	}
	free(p);
}

/* Load canonicalises what it reads, and prefers the higher generation. */
static void test_canonical_and_newest(void)
{
	struct offsets *o;
	struct offsets_stats st;

	fresh();
	write_doc(path, HEAD("1", "3") ",\"offsets\":[{\"value\": {\"position\" : 1},"
	                               "\"key\":[ \"conn\" , {\"filename\":\"f\"} ]}]");
	o = open_ok();
	CHECK_STR(offsets_key(o, 0), KEY);
	CHECK_STR(offsets_get(o, KEY), VAL_A);
	CHECK(!offsets_dirty(o));
	offsets_destroy(o);

	write_doc(prev, HEAD("1", "4") ",\"offsets\":[{\"key\":" KEY ",\"value\":" VAL_B "}]");
	o = open_ok();
	offsets_stats(o, &st);
	CHECK(st.generation == 4 && st.loaded_from_prev == 1);
	CHECK_STR(offsets_get(o, KEY), VAL_B);
	CHECK_INT(put_flush(o, "{\"position\":9}"), 5);
	offsets_destroy(o);
	o = open_ok(); /* path (5) now, prev still 4: the older path was not rotated over it */
	offsets_stats(o, &st);
	CHECK(st.generation == 5 && st.loaded_from_prev == 0);
	offsets_destroy(o);
	unlink(path);
	o = open_ok();
	CHECK(o != NULL && gen_of(o) == 4);
	offsets_destroy(o);
}

static void test_refusals(void)
{
	struct offsets *o = (struct offsets *)1;

	/* Both bad: both names and reasons, and what to do. */
	two_generations();
	testlib_write_file(path, "garbage", 7);
	testlib_write_file(prev, "{\"format\"", 9);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(o == NULL);
	CHECK(strstr(err, path) != NULL && strstr(err, prev) != NULL);
	CHECK(strstr(err, "Refusing to start") != NULL && strstr(err, "delete both") != NULL);
	CHECK(strstr(err, "no checksum") != NULL);

	unlink(path);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "offsets.json: not found") != NULL);

	/* A Kafka Connect standalone file. */
	unlink(prev);
	testlib_write_file(path, "\xac\xed\x00\x05sr\x00\x11java.util.HashMap", 26);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "Kafka Connect (Java-serialized) offsets file; skiff cannot read it") !=
	      NULL);

	/* Written by a newer skiff: refused even though prev is valid. */
	two_generations();
	write_doc(path, HEAD("2", "3") ",\"offsets\":[],\"more\":1");
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "written by a newer skiff (format version 2") != NULL);
	CHECK(strstr(err, path) != NULL);
}

static void test_stale_tmp(void)
{
	struct offsets *o = NULL;

	/* Neither file: an empty store at generation 0; a stale tmp goes. */
	fresh();
	testlib_write_file(tmp, "{\"format\":\"skiff-off", 20);
	o = open_ok();
	CHECK(o != NULL && offsets_count(o) == 0 && gen_of(o) == 0);
	CHECK(!exists(tmp));
	offsets_destroy(o);

	/* A stale tmp beside valid generations goes too, and is not used. */
	two_generations();
	write_doc(tmp, HEAD("1", "99") ",\"offsets\":[]");
	CHECK_INT(verdict(), RIGHT);
	CHECK(!exists(tmp));
}

static void test_unreadable(void)
{
	struct offsets *o = NULL;

	two_generations();
	/* Unreadable (simulated: root ignores permissions): an I/O error naming
	 * the file, not "corrupt", and no fallback to prev. */
	w.eacces = path;
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_IO);
	w.eacces = NULL;
	CHECK(strstr(err, path) != NULL && strstr(err, strerror(EACCES)) != NULL);
	CHECK(o == NULL);

	/* A directory in place of the file: the same. */
	unlink(path);
	CHECK(mkdir(path, 0755) == 0);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_IO);
	CHECK(strstr(err, path) != NULL && strstr(err, strerror(EISDIR)) != NULL);
	rmdir(path);
}

static void test_too_large_and_no_dir(void)
{
	struct offsets *o = NULL;

	/* Too large: refused with a reason, prev used. */
	two_generations();
	CHECK(truncate(path, (off_t)OFFSETS_MAX_BYTES + 64 * 1024 + 1) == 0);
	CHECK_INT(verdict(), OTHER);
	unlink(prev);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "too large") != NULL);

	/* The directory is missing. */
	fresh();
	snprintf(path, sizeof(path), "%s/no/such/dir/offsets.json", dir);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_NODIR);
	CHECK(strstr(err, "/no/such/dir") != NULL && strstr(err, strerror(ENOENT)) != NULL);
	CHECK_INT(offsets_open_file("", &o, err, sizeof(err)), OFFSETS_ERR_ARG);
}

/* ---- fault injection ----------------------------------------------------- */

/* One fault per case, and the message it must produce ("step path: why"). */
static const struct fault {
	const char *step;
	int *knob;
	int value;
	bool renamed; /* the new file was renamed into place before the failure */
} faults[] = {
    {"create", &w.create_errno, ENOSPC, false}, {"write", &w.write_errno, ENOSPC, false},
    {"fsync", &w.fsync_file_errno, EIO, false}, {"close", &w.close_errno, EIO, false},
    {"rename", &w.rename_nth, 1, false}, /* offsets.json -> offsets.json.prev */
    {"rename", &w.rename_nth, 2, false}, /* offsets.json.tmp -> offsets.json */
    {"fsync", &w.fsync_dir_errno, EIO, true},
};
#define NFAULTS (sizeof(faults) / sizeof(faults[0]))

static void expected(size_t i, char *buf, size_t len)
{
	if (i < 4)
		snprintf(buf, len, "%s %s: %s", faults[i].step, tmp, strerror(faults[i].value));
	else if (i == 4)
		snprintf(buf, len, "rename %s -> %s: %s", path, prev, strerror(EIO));
	else if (i == 5)
		snprintf(buf, len, "rename %s -> %s: %s", tmp, path, strerror(EIO));
	else
		snprintf(buf, len, "fsync %s: %s", dir, strerror(EIO));
}

/* After the failed flush: what a restart would load now. */
static void check_after_failure(size_t i)
{
	struct offsets *o = open_ok();
	struct offsets_stats st;

	if (o == NULL)
		return;
	/* The old value, or the new one once it was renamed into place. */
	CHECK_STR(offsets_get(o, KEY), faults[i].renamed ? VAL_C : VAL_B);
	offsets_stats(o, &st);
	if (i == 5) /* path is gone, prev holds generation 2 */
		CHECK(st.loaded_from_prev == 1 && st.generation == 2);
	offsets_destroy(o);
}

/* After the next, successful flush: generation 4 in path, and prev holds the
 * generation before it. */
static void check_after_success(size_t i)
{
	struct offsets *o = open_ok();

	CHECK(o != NULL && gen_of(o) == 4);
	if (o != NULL)
		CHECK_STR(offsets_get(o, KEY), VAL_C);
	offsets_destroy(o);
	unlink(path);
	o = open_ok();
	CHECK(o != NULL && gen_of(o) == (faults[i].renamed ? 3 : 2));
	offsets_destroy(o);
}

/* A store at generation 2 (VAL_B, with VAL_A in prev) flushes VAL_C and meets
 * fault i; then the fault clears and the flush is repeated. */
static void fault_case(size_t i)
{
	struct offsets *o;
	struct offsets_stats st;
	struct stat before, after;
	char want[1024];
	int renames, creates;

	fresh();
	o = open_ok();
	put_flush(o, VAL_A);
	put_flush(o, VAL_B);
	CHECK(stat(path, &before) == 0);
	CHECK_INT(offsets_put(o, KEY, VAL_C), 0);
	renames = w.renames;
	*faults[i].knob = faults[i].value;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_IO);
	w.rename_nth = 0;
	expected(i, want, sizeof(want));
	CHECK_STR(err, want);
	CHECK(w.fsync_retried == 0 && !exists(tmp) && offsets_dirty(o));
	offsets_stats(o, &st);
	CHECK(st.flush_failures == 1 && st.generation == 2 && st.flushes == 2);
	if (i < 4) /* before any rename: nothing on disk moved */
		CHECK(w.renames == renames && stat(path, &after) == 0 &&
		      after.st_ino == before.st_ino);
	check_after_failure(i);

	creates = w.creates;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK_INT(w.creates, creates + 1); /* a new temp file, not a retry */
	CHECK(!offsets_dirty(o) && gen_of(o) == 4);
	offsets_destroy(o);
	check_after_success(i);
}

static void test_faults(void)
{
	for (size_t i = 0; i < NFAULTS; i++) {
		int before = testlib_failures;

		fault_case(i);
		if (testlib_failures != before)
			fprintf(stderr, "  (in fault case %zu: %s)\n", i, faults[i].step);
	}
}

/* Short writes and EINTR are part of normal life, not failures. */
static void test_choppy_writes(void)
{
	struct offsets *o;
	size_t len;
	char *d;
	int writes = w.writes;

	fresh();
	o = open_ok();
	w.choppy = 1;
	CHECK_INT(put_flush(o, VAL_A), 1);
	w.choppy = 0;
	CHECK(w.writes - writes > 20);
	offsets_destroy(o);
	d = slurp(path, &len);
	CHECK_STR(d, DOC_GEN1);
	free(d);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

int main(void)
{
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_crc32c();
	test_map_put();
	test_map_flush();
	test_map_limits();
	test_format();
	test_round_trip();
	test_clean_writes_nothing();
	test_large_store();
	test_exact_text();
	test_torn_and_garbage();
	test_bit_flips();
	test_bad_content();
	test_canonical_and_newest();
	test_refusals();
	test_stale_tmp();
	test_unreadable();
	test_too_large_and_no_dir();
	test_faults();
	test_choppy_writes();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_done("test_offsets");
}
