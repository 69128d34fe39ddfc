/* tailstream: where a stream resumes and what it reads next, without Kafka:
 * a fake environment hands out one partition and a committed offset. */
#include "core/log.h"
#include "sources/file/tailstream.h"
#include "sources/file/tailnotice.h"
#include "sourceenv_fake.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* The environment (sourceenv_fake.h): warnings only, bare, as the checks
 * below read them; one partition, whose committed offset is committed_json. */
static struct sourceenv_fake fake;
static char *const counted = fake.counts;
static char *const logged = fake.logged;
static const char *committed_json;

static const char *fake_committed(struct source_env *env, struct partition *p)
{
	(void)env;
	(void)p;
	return committed_json;
}

static int no_room(void *opaque, const struct tailstream *except)
{
	(void)opaque;
	(void)except;
	return -1;
}

static bool not_shared(void *opaque, int wd, const struct tailstream *except)
{
	(void)opaque;
	(void)wd;
	(void)except;
	return false;
}

static struct tailctx ctx = {.env = &fake.env,
                             .max_line = 1000,
                             .policy = TAILFILE_SPLIT,
                             .rotate_wait_ms = 0,
                             .notice = &tailnotice_poll,
                             .max_open = 64,
                             /* 47 + HELD_SLACK + the file at the path: a
                              * chain of 64 */
                             .max_held_files = 47,
                             .max_held_bytes = 1 << 20,
                             .make_room = no_room,
                             .wd_shared = not_shared};
static char dir[256], logpath[512];
static char arena[1 << 16];
static struct src_offset last;
static struct tailstream *s_ct; /* the stream of the copytruncate resume tests */

static void put(const char *name, const char *text, const char *mode)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, mode);
	CHECK(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0);
	/* distinct birth times, as real rotations a moment apart have */
	nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
}

/* The wall clock as skiff reads it, moved by wall_shift_ns (a clock stepped
 * back: negative); files are stamped on it with stamp_shifted. */
static int64_t wall_shift_ns;
int64_t __real_clock_wall_ns(void);
int64_t __wrap_clock_wall_ns(void);
int64_t __wrap_clock_wall_ns(void)
{
	return __real_clock_wall_ns() + wall_shift_ns;
}

static void stamp_shifted(const char *name)
{
	char p[1024];
	int64_t at = __real_clock_wall_ns() + wall_shift_ns;
	struct timespec ts[2] = {{.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000}};

	ts[1] = ts[0];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	CHECK_INT(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static void mv(const char *from, const char *to)
{
	char a[600], b[600];

	snprintf(a, sizeof(a), "%s/%s", dir, from);
	snprintf(b, sizeof(b), "%s/%s", dir, to);
	CHECK(rename(a, b) == 0);
}

/* Checks and reads until the stream is caught up; returns the lines as
 * "a|b|" (static storage). */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the worker's clock */
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *drain(struct tailstream *s)
{
	static char out[4096];
	struct tailline lines[64];
	char errbuf[128];
	size_t used = 0;

	out[0] = '\0';
	tailstream_check(s, mono_ms());
	for (int rounds = 0; rounds < 50; rounds++) {
		struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};
		size_t n = 0;
		int rc;

		tailctx_release(&ctx); /* as the worker does at each poll */
		rc = tailstream_read(s, &buf, lines, 64, &n, mono_ms(), errbuf, sizeof(errbuf));

		for (size_t i = 0; i < n && used + lines[i].len + 2 < sizeof(out); i++) {
			memcpy(out + used, lines[i].bytes, lines[i].len);
			used += lines[i].len;
			out[used++] = '|';
			out[used] = '\0';
			src_ref_drop(last.ref); /* held as the worker holds an offset */
			last = lines[i].after;
			src_ref_hold(last.ref);
		}
		CHECK(rc >= 0);
		if (rc == 0 && n == 0 && tailstream_deadline(s) < 0)
			break;
		tailstream_check(s, mono_ms());
	}
	return out;
}

static char *offset_of_last(void)
{
	static char json[256];

	tailpos_format(&last, json, sizeof(json));
	return json;
}

static void test_new_then_rotations_while_stopped(void)
{
	struct tailstream *s;
	char *saved;

	put("app.log", "a1\na2\n", "w");
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a1|a2|");
	saved = strdup(offset_of_last());
	tailstream_free(s);
	/* stopped: a3 lands in A, then A -> .2, B -> .1, C at the path */
	put("app.log", "a3\n", "a");
	mv("app.log", "app.log.1");
	put("app.log", "b1\n", "w");
	mv("app.log.1", "app.log.2");
	mv("app.log", "app.log.1");
	put("app.log", "c1\n", "w");
	committed_json = saved;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a3|b1|c1|");
	CHECK_INT(ctx.nopen, 1);
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	free(saved);
	committed_json = NULL;
}

static void test_copytruncate_while_running(void)
{
	struct tailstream *s;

	put("ct.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/ct.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	/* logrotate copytruncate: the copy holds a line skiff had not read */
	put("ct.log", "x3\n", "a");
	put("ct.log.1", "x1\nx2\nx3\n", "w");
	put("ct.log", "", "w");
	put("ct.log", "y1\n", "a");
	counted[0] = '\0';
	CHECK_STR(drain(s), "x3|y1|");
	CHECK(strstr(counted, "truncations+1") != NULL);
	tailstream_free(s);
}

static void test_partial_line_at_rotation(void)
{
	struct tailstream *s;

	put("p.log", "p1\nno-newline", "w");
	snprintf(logpath, sizeof(logpath), "%s/p.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "p1|");
	mv("p.log", "p.log.1");
	put("p.log", "q1\n", "w");
	counted[0] = '\0';
	CHECK_STR(drain(s), "no-newline|q1|");
	CHECK(strstr(counted, "partial_lines_shipped+1") != NULL);
	tailstream_free(s);
}

static void test_replaced_while_stopped(void)
{
	struct tailstream *s;
	char *saved;

	put("r.log", "old1\nold2\nold3\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/r.log", dir);
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "old1|old2|old3|");
	saved = strdup(offset_of_last());
	tailstream_free(s);
	/* rewritten in place (same inode), longer than the position */
	put("r.log", "new-1\nnew-2\nnew-3\nnew-4\n", "w");
	committed_json = saved;
	counted[0] = '\0';
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "new-1|new-2|new-3|new-4|");
	CHECK(strstr(counted, "fingerprint_resets+1") != NULL);
	tailstream_free(s);
	free(saved);
	committed_json = NULL;
}

static void rm(const char *name)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	CHECK(unlink(p) == 0);
}

/* Stopped cleanly; three rotations with `rotate 2` delete A, and the new
 * file at the path gets A's inode (ext4 does that routinely). The stored
 * offset's birth time and fingerprint say it is not A: A's unread line is
 * lost (counted), B and C (.2 and .1) are read, then D. */
static void test_inode_reused_after_stop(void)
{
	struct tailstream *s;
	struct tailpos p;
	struct stat st;
	char saved[256];

	put("ir.log", "a1\na2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/ir.log", dir);
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a1|a2|");
	CHECK(tailpos_parse(offset_of_last(), &p) == 0 && p.has_born);
	tailstream_free(s);
	put("ir.log", "a3\n", "a");
	mv("ir.log", "ir.log.1");
	put("ir.log", "b1\n", "w");
	mv("ir.log.1", "ir.log.2");
	mv("ir.log", "ir.log.1");
	put("ir.log", "c1\n", "w");
	rm("ir.log.2");
	mv("ir.log.1", "ir.log.2");
	mv("ir.log", "ir.log.1");
	put("ir.log", "d1-and-more\n", "w");
	/* the new file has A's dev and inode (simulated: the offset is
	 * rewritten to name the new file's inode, keeping A's fp and born) */
	CHECK(stat(logpath, &st) == 0);
	snprintf(saved, sizeof(saved),
	         "{\"position\":%lld,\"dev\":%lld,\"ino\":%lld,\"fp\":%lld,"
	         "\"fplen\":%lld,\"born\":%lld}",
	         (long long)p.pos, (long long)st.st_dev, (long long)st.st_ino, (long long)p.fp,
	         (long long)p.fplen, (long long)p.born);
	committed_json = saved;
	counted[0] = '\0';
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "b1|c1|d1-and-more|");
	CHECK(strstr(counted, "files_gone_unread+1") != NULL);
	tailstream_free(s);
	committed_json = NULL;
}

/* rotate.wait.ms is long (5 s): the new file is read as soon as the
 * rotated one is at its end and the new one has bytes, not 5 s later; a
 * late write to the rotated file still ships while it lingers. */
static void test_successor_read_at_once(void)
{
	struct tailstream *s;

	ctx.rotate_wait_ms = 5000;
	put("w.log", "a1\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/w.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a1|");
	mv("w.log", "w.log.1");
	put("w.log", "b1\n", "w");
	CHECK_STR(drain(s), "b1|");
	put("w.log.1", "a2-late\n", "a");
	put("w.log", "b2\n", "a");
	CHECK_STR(drain(s), "a2-late|b2|");
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	ctx.rotate_wait_ms = 0;
}

/* RotatingFileHandler with 5 backups rotates 20 times while the stream
 * is not read (the producer queue is full), each rotation noticed (a
 * directory event): every file is held open as it appears, so none is
 * lost when its backup slot is reused, whatever the chain's length. */
static void test_many_rotations_while_behind(void)
{
	struct tailstream *s;
	char want[4096] = "", text[32];

	ctx.rotate_wait_ms = 5000;
	put("rf.log", "f0\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/rf.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "f0|");
	for (int r = 1; r <= 20; r++) {
		for (int k = 5; k >= 1; k--) {
			char a[600], b[600];

			snprintf(a, sizeof(a), "%s/rf.log.%d", dir, k);
			snprintf(b, sizeof(b), "%s/rf.log.%d", dir, k + 1);
			if (k == 5)
				unlink(a); /* the oldest backup goes */
			else
				rename(a, b); /* absent in the first rounds */
		}
		mv("rf.log", "rf.log.1");
		snprintf(text, sizeof(text), "f%d\n", r);
		put("rf.log", text, "w");
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "f%d|", r);
		tailstream_check(s, mono_ms());
	}
	CHECK_STR(drain(s), want);
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	ctx.rotate_wait_ms = 0;
}

/* More rotated files than a stream may hold open (max.held.files 47 and the
 * slack: 63) pile up while it is not read; one that never got a place is
 * deleted: it is named and counted with its bytes as listed, and every
 * other file is read in order. */
static void test_file_deleted_before_opened_is_counted(void)
{
	struct tailstream *s;
	char text[32], name[64], want[8192] = "";

	ctx.rotate_wait_ms = 5000;
	put("many.log", "m0\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/many.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "m0|");
	for (int r = 1; r <= 70; r++) {
		snprintf(name, sizeof(name), "many.log.%d", r);
		mv("many.log", name);
		snprintf(text, sizeof(text), "m%d\n", r);
		put("many.log", text, "w");
		if (r != 68) /* m68 is rotated to many.log.69 */
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "m%d|", r);
		tailstream_check(s, mono_ms());
	}
	counted[0] = '\0';
	rm("many.log.69");
	tailstream_check(s, mono_ms());
	CHECK(strstr(counted, "files_gone_unread+1") != NULL);
	CHECK(strstr(counted, "bytes_unread_lost+4") != NULL); /* "m68\n" */
	CHECK_STR(drain(s), want);
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	ctx.rotate_wait_ms = 0;
}

/* The backlog: the bytes after the read position in every file of the
 * chain, found at a restart after two rotations; a partial last line
 * counts until it is read. */
static void test_backlog_over_the_chain(void)
{
	struct tailstream *s;
	char *saved;
	uint64_t bytes = 99;

	snprintf(logpath, sizeof(logpath), "%s/bl.log", dir);
	put("bl.log", "a1\na2\n", "w");
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK(!tailstream_backlog(s, &bytes)); /* not looked at yet */
	tailstream_check(s, mono_ms());
	CHECK(tailstream_backlog(s, &bytes));
	CHECK_INT(bytes, 6);
	CHECK_STR(drain(s), "a1|a2|");
	CHECK(tailstream_backlog(s, &bytes));
	CHECK_INT(bytes, 0);
	saved = strdup(offset_of_last());
	tailstream_free(s);
	put("bl.log", "a3\n", "a");
	mv("bl.log", "bl.log.1");
	put("bl.log", "b1-\n", "w");
	mv("bl.log.1", "bl.log.2");
	mv("bl.log", "bl.log.1");
	put("bl.log", "c1--\npart", "w");
	committed_json = saved;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	tailstream_check(s, mono_ms());
	CHECK(tailstream_backlog(s, &bytes));
	CHECK_INT(bytes, 3 + 4 + 9);
	CHECK_STR(drain(s), "a3|b1-|c1--|");
	CHECK(tailstream_backlog(s, &bytes));
	CHECK_INT(bytes, 4); /* "part": no newline yet */
	put("bl.log", "\n", "a");
	CHECK(tailstream_backlog(s, &bytes)); /* fstat: no event needed */
	CHECK_INT(bytes, 5);
	tailstream_free(s);
	free(saved);
	committed_json = NULL;
}

enum gz_damage { GZ_GOOD, GZ_BAD, GZ_EMPTY, GZ_NO_TRAILER };

/* name holds text gzip'd; GZ_BAD: its first block's type made invalid (the
 * byte after the 10-byte header), so not one byte of it decodes; GZ_EMPTY:
 * the file is empty; GZ_NO_TRAILER: cut before its CRC32 and length (every
 * byte decodes, none verifies). */
static void put_gz(const char *name, const char *text, enum gz_damage d)
{
	unsigned char gz[512];
	z_stream zs = {0};
	size_t len;
	char p[600];
	FILE *f;

	CHECK_INT(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (unsigned char *)text;
	zs.avail_in = (unsigned)strlen(text);
	zs.next_out = gz;
	zs.avail_out = sizeof(gz);
	CHECK_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
	deflateEnd(&zs);
	len = d == GZ_EMPTY ? 0 : d == GZ_NO_TRAILER ? zs.total_out - 8 : zs.total_out;
	if (d == GZ_BAD)
		gz[10] = 0xff;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	CHECK(len == 0 || fwrite(gz, 1, len, f) == len);
	CHECK(fclose(f) == 0);
	nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
}

/* Stopped: A (the offset's, "a1" read) and B rotated and compressed, then C
 * at the path; da and db: how A's and B's .gz are damaged. The damaged one
 * is named and counted once, in compressed_cut_short; every other line
 * read once. */
static void check_damaged(enum gz_damage da, enum gz_damage db, const char *want)
{
	struct tailstream *s;
	const char *once;
	char *saved;

	snprintf(logpath, sizeof(logpath), "%s/z.log", dir);
	put("z.log", "a1\n", "w");
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a1|");
	saved = strdup(offset_of_last());
	tailstream_free(s);
	put("z.log", "a2\n", "a");
	put_gz("z.log.2.gz", "a1\na2\n", da);
	rm("z.log");
	put_gz("z.log.1.gz", "b1\nb2\n", db);
	put("z.log", "c1\n", "w");
	committed_json = saved;
	counted[0] = '\0';
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), want);
	CHECK(strstr(counted, "compressed_cut_short+1 ") != NULL);
	once = strstr(counted, "cut_short");
	CHECK(once != NULL && strstr(once + 1, "cut_short") == NULL);
	CHECK(strstr(counted, "files_gone_unread") == NULL);
	tailstream_free(s);
	free(saved);
	committed_json = NULL;
	rm("z.log");
	rm("z.log.1.gz");
	rm("z.log.2.gz");
}

static void test_damaged_compressed_sibling(void)
{
	check_damaged(GZ_GOOD, GZ_BAD, "a2|c1|");
	check_damaged(GZ_GOOD, GZ_EMPTY, "a2|c1|");
}

/* The offset's own file compressed since and damaged: counted once (not
 * also as a file gone), and B and C read. */
static void test_damaged_compressed_offset_file(void)
{
	check_damaged(GZ_NO_TRAILER, GZ_GOOD, "b1|b2|c1|");
	check_damaged(GZ_EMPTY, GZ_GOOD, "b1|b2|c1|");
	check_damaged(GZ_BAD, GZ_GOOD, "b1|b2|c1|");
}

/* logrotate's rotation with compress, by hand: .N.gz shift up, the path's
 * file (text) becomes .1.gz, the original removed. */
static void rotate_gz(const char *base, const char *text, int shifted)
{
	char a[300], b[300];

	for (int k = shifted; k >= 1; k--) {
		snprintf(a, sizeof(a), "%s.%d.gz", base, k);
		snprintf(b, sizeof(b), "%s.%d.gz", base, k + 1);
		mv(a, b);
	}
	snprintf(a, sizeof(a), "%s.1", base);
	mv(base, a);
	snprintf(b, sizeof(b), "%s.1.gz", base);
	put_gz(b, text, GZ_GOOD);
	rm(a);
}

/* Running: a writer recreated bk.log between logrotate's rename and its
 * create, so logrotate moved it aside as bk.log-2026120100.backup (b1) and
 * created U; all read. Then, while the stream does not look, U (u2 unread)
 * and V are rotated and compressed: after V's .gz comes W, not the .backup
 * again - logrotate never compresses it, yet it is older than U (issue 14). */
static void test_backup_older_than_compressed_while_running(void)
{
	struct tailstream *s;

	snprintf(logpath, sizeof(logpath), "%s/bk.log", dir);
	put("bk.log", "a1\n", "w");
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "a1|");
	mv("bk.log", "bk.log.1");
	put("bk.log", "b1\n", "w");
	mv("bk.log", "bk.log-2026120100.backup");
	put("bk.log", "u1\n", "w");
	CHECK_STR(drain(s), "b1|u1|");
	put_gz("bk.log.1.gz", "a1\n", GZ_GOOD);
	rm("bk.log.1");
	put("bk.log", "u2\n", "a");
	rotate_gz("bk.log", "u1\nu2\n", 1);
	put("bk.log", "v1\n", "w");
	rotate_gz("bk.log", "v1\n", 2);
	put("bk.log", "w1\n", "w");
	CHECK_STR(drain(s), "u2|v1|w1|");
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
}

/* Stopped cleanly after reading U to its end; bk2.log-2026120500.backup
 * (b1, logrotate's rename race) was read before U. While stopped U is
 * rotated and compressed, then V, and U's copy deleted: at the restart the
 * stored offset's file is gone, not compressed, and the .backup, born
 * before it, was read already - only V and W (issue 22: ~20 lines shipped
 * twice after a stop during an outage). */
static void test_backup_older_than_gone_offset_file(void)
{
	struct tailstream *s;
	char *saved;

	snprintf(logpath, sizeof(logpath), "%s/bk2.log", dir);
	committed_json = NULL;
	put("bk2.log", "b1\n", "w");
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "b1|");
	mv("bk2.log", "bk2.log-2026120500.backup");
	put("bk2.log", "u1\n", "w");
	CHECK_STR(drain(s), "u1|");
	saved = strdup(offset_of_last());
	tailstream_free(s);
	rotate_gz("bk2.log", "u1\n", 0);
	put("bk2.log", "v1\n", "w");
	rotate_gz("bk2.log", "v1\n", 1);
	put("bk2.log", "w1\n", "w");
	rm("bk2.log.2.gz"); /* U's copy: `rotate 1` */
	committed_json = saved;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "v1|w1|");
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	free(saved);
	committed_json = NULL;
}

/* read.from history: fz.log.2.gz is read first, with no uncompressed file
 * before it, so its offset says its floor is not known ("after":1). While
 * stopped it is deleted and a newer .gz made; fz.log.1, born before the
 * first .gz was compressed (delaycompress) yet newer than its lines, is
 * still read: only an uncompressed offset's birth is a floor (issue 22). */
static void test_compressed_offset_floor_unknown(void)
{
	struct tailstream *s;
	char *saved;

	snprintf(logpath, sizeof(logpath), "%s/fz.log", dir);
	committed_json = NULL;
	put("fz.keep", "n1\n", "w");
	put_gz("fz.log.2.gz", "o1\no2\n", GZ_GOOD);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json,
	                         TAILSTREAM_HISTORY, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "o1|o2|");
	saved = strdup(offset_of_last());
	CHECK(strstr(saved, "\"after\":1") != NULL);
	tailstream_free(s);
	rm("fz.log.2.gz");
	put_gz("fz.log.2.gz", "p1\n", GZ_GOOD);
	mv("fz.keep", "fz.log.1");
	put("fz.log", "c1\n", "w");
	committed_json = saved;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "p1|n1|c1|");
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	free(saved);
	committed_json = NULL;
}

/* While the stream is not read (Kafka away) rotated files are held: each
 * counts in the budget once rotated away, and its bytes once deleted (only
 * skiff keeps them on disk). Letting go of the first deleted one counts
 * what was unread of it and names it, nothing when it was read to its end;
 * reading goes on with the next file. */
static void test_held_budget(void)
{
	struct tailstream *s;
	int64_t born;

	ctx.rotate_wait_ms = 5000;
	put("h.log", "h0a\nh0b\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/h.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "h0a|h0b|");
	CHECK_INT(ctx.held_files, 0);
	mv("h.log", "h.log.1");
	put("h.log", "h1a\nh1b\nh1c\n", "w");
	tailstream_check(s, mono_ms());
	CHECK_INT(ctx.held_files, 1); /* h0, read to its end, not let go yet */
	CHECK_INT(ctx.held_bytes, 0);
	CHECK(!tailstream_first_gone(s, &born));
	mv("h.log", "h.log.1"); /* h0 deleted: its name goes to h1 */
	put("h.log", "h2\n", "w");
	tailstream_check(s, mono_ms());
	CHECK_INT(ctx.held_files, 2);
	CHECK_INT(ctx.held_bytes, 8);
	CHECK(tailstream_first_gone(s, &born));
	counted[0] = '\0';
	tailstream_drop_first(s, "a test");
	CHECK_STR(counted, ""); /* nothing of it was unread */
	CHECK_INT(ctx.held_files, 1);
	CHECK_INT(ctx.held_bytes, 0);
	CHECK(!tailstream_first_gone(s, &born)); /* h1 is still on disk */
	rm("h.log.1");
	tailstream_check(s, mono_ms());
	CHECK_INT(ctx.held_bytes, 12);
	CHECK(tailstream_first_gone(s, &born));
	tailstream_drop_first(s, "a test");
	CHECK_STR(counted, "bytes_unread_lost+12 lines_unread_lost+3 files_gone_unread+1 ");
	CHECK_INT(ctx.held_files, 0);
	CHECK_INT(ctx.held_bytes, 0);
	CHECK_STR(drain(s), "h2|");
	tailstream_free(s);
	CHECK_INT(ctx.nopen, 0);
	CHECK_INT(ctx.held_files, 0);
	ctx.rotate_wait_ms = 0;
}

/* Two copytruncates with compress (no delaycompress) before skiff looks
 * (reading paused, SIGSTOP, a slow look): the first copy is found
 * compressed by its first bytes, and the second, compressed too, is read
 * after it - not lost whole. A copy still being compressed beside its
 * original is taken once. (Before, only uncompressed newer copies were.) */
static void test_two_compressed_copytruncates_unseen(void)
{
	struct tailstream *s;

	put("cz.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/cz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	/* Born after skiff opened cz.log as the file system's coarse clock
	 * tells (a copy is looked for among those made since). */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("cz.log", "x3\n", "a");
	put_gz("cz.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("cz.log", "", "w");
	put("cz.log", "y1\ny2\n", "a");
	mv("cz.log.1.gz", "cz.log.2.gz");
	put_gz("cz.log.1.gz", "y1\ny2\ny3\n", GZ_GOOD);
	put("cz.log", "", "w");
	put("cz.log", "z1\nz2\n", "a");
	mv("cz.log.2.gz", "cz.log.3.gz");
	mv("cz.log.1.gz", "cz.log.2.gz");
	put("cz.log.1", "z1\nz2\n", "w"); /* the third copy, gzip under way */
	put_gz("cz.log.1.gz", "z1\n", GZ_NO_TRAILER);
	put("cz.log", "", "w");
	put("cz.log", "w1\n", "a");
	counted[0] = '\0';
	logged[0] = '\0';
	CHECK_STR(drain(s), "x3|y1|y2|y3|z1|z2|w1|");
	tailstream_free(s);
	rm("cz.log.1");
	rm("cz.log.1.gz");
	rm("cz.log.2.gz");
	rm("cz.log.3.gz");
}

/* Reading paused (Kafka away), the watch looks at the file at the path
 * (tailstream_look) behind a copy it already holds: two copytruncates it
 * missed (starved), compressed at once, are both read - the one its first
 * bytes name and the one made after it. (Before, a look with files ahead
 * in the chain took only the first: a whole copy lost, not counted.) */
static void test_copytruncates_unseen_while_paused(void)
{
	struct tailstream *s;

	put("pz.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/pz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	/* Seen: the copy is held, the file at the path waits behind it. */
	put("pz.log", "x3\n", "a");
	put_gz("pz.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("pz.log", "", "w");
	put("pz.log", "y1\ny2\n", "a");
	tailstream_look(s);
	tailstream_look(s); /* its first bytes, to know its next copy by */
	CHECK_INT((int)tailstream_open_files(s), 2);
	/* A clock tick: copies are told from older ones by an mtime after the
	 * look at the truncation, and a file written in the look's own tick
	 * may be stamped before it (logrotate's copies come rotations apart). */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	/* Two more, unseen. */
	put("pz.log", "y3\n", "a");
	mv("pz.log.1.gz", "pz.log.2.gz");
	put_gz("pz.log.1.gz", "y1\ny2\ny3\n", GZ_GOOD);
	put("pz.log", "", "w");
	put("pz.log", "z1\nz2\n", "a");
	put("pz.log", "z3\n", "a");
	rm("pz.log.2.gz"); /* rotate 2: x's copy, held */
	mv("pz.log.1.gz", "pz.log.2.gz");
	put_gz("pz.log.1.gz", "z1\nz2\nz3\n", GZ_GOOD);
	put("pz.log", "", "w");
	put("pz.log", "w1\n", "a");
	counted[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "x3|y1|y2|y3|z1|z2|z3|w1|");
	CHECK_STR(counted, "truncations+1 ");
	tailstream_free(s);
	rm("pz.log.1.gz");
	rm("pz.log.2.gz");
}

/* The same, starved longer: the copy the look's first bytes name was
 * deleted before skiff looked. The copies made after it are still read,
 * and the one gone is counted (files_gone_unread, at least the bytes skiff
 * saw in the file) and named in a warning. */
static void test_copytruncate_copy_gone_while_paused(void)
{
	struct tailstream *s;

	put("qz.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/qz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("qz.log", "x3\n", "a");
	put_gz("qz.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("qz.log", "", "w");
	put("qz.log", "y1\ny2\n", "a");
	tailstream_look(s);
	tailstream_look(s);
	/* A tick: see pz.log. */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	/* Three unseen: y's copy made, shifted, deleted. */
	put("qz.log", "y3\n", "a");
	mv("qz.log.1.gz", "qz.log.2.gz");
	put_gz("qz.log.1.gz", "y1\ny2\ny3\n", GZ_GOOD);
	put("qz.log", "", "w");
	put("qz.log", "z1\n", "a");
	rm("qz.log.2.gz");
	mv("qz.log.1.gz", "qz.log.2.gz");
	put_gz("qz.log.1.gz", "z1\n", GZ_GOOD);
	put("qz.log", "", "w");
	put("qz.log", "v1\n", "a");
	rm("qz.log.2.gz"); /* y's copy, never opened */
	mv("qz.log.1.gz", "qz.log.2.gz");
	put_gz("qz.log.1.gz", "v1\n", GZ_GOOD);
	put("qz.log", "", "w");
	put("qz.log", "w1\n", "a");
	counted[0] = '\0';
	logged[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "x3|z1|v1|w1|");
	CHECK_STR(counted, "truncations+1 bytes_unread_lost+6 files_gone_unread+1 ");
	CHECK(strstr(logged, "qz.log was truncated at byte 0") != NULL);
	CHECK(strstr(logged, "at least 6 bytes") != NULL);
	tailstream_free(s);
	rm("qz.log.1.gz");
	rm("qz.log.2.gz");
}

/* The wall clock stepped back an hour (NTP correcting a board's clock)
 * after a truncation was seen, then three copytruncates while skiff was
 * starved: the files written since are stamped before that truncation was
 * seen. The copies on disk are still read and the one gone counted (hostile
 * finding h22b: z1 and v1 were not read, y's copy not counted, the loss
 * called a copytruncate window). */
static void test_copytruncate_after_the_clock_stepped_back(void)
{
	struct tailstream *s;

	put("cb.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/cb.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("cb.log", "x3\n", "a");
	put_gz("cb.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("cb.log", "", "w");
	put("cb.log", "y1\ny2\n", "a");
	tailstream_look(s);
	tailstream_look(s);
	wall_shift_ns = -INT64_C(3600000000000);
	put("cb.log", "y3\n", "a");
	mv("cb.log.1.gz", "cb.log.2.gz");
	put_gz("cb.log.1.gz", "y1\ny2\ny3\n", GZ_GOOD);
	put("cb.log", "", "w");
	put("cb.log", "z1\n", "a");
	rm("cb.log.2.gz");
	mv("cb.log.1.gz", "cb.log.2.gz");
	put_gz("cb.log.1.gz", "z1\n", GZ_GOOD);
	put("cb.log", "", "w");
	put("cb.log", "v1\n", "a");
	rm("cb.log.2.gz"); /* y's copy, never opened */
	mv("cb.log.1.gz", "cb.log.2.gz");
	put_gz("cb.log.1.gz", "v1\n", GZ_GOOD);
	put("cb.log", "", "w");
	put("cb.log", "w1\n", "a");
	stamp_shifted("cb.log.1.gz");
	stamp_shifted("cb.log.2.gz");
	stamp_shifted("cb.log");
	counted[0] = '\0';
	logged[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "x3|z1|v1|w1|");
	CHECK_STR(counted, "truncations+1 bytes_unread_lost+6 files_gone_unread+1 ");
	wall_shift_ns = 0;
	tailstream_free(s);
	rm("cb.log.1.gz");
	rm("cb.log.2.gz");
}

/* The watch heard each copy made (tailstream_copy_made: a rotated name
 * created): starved through four copytruncates, two of their copies were
 * deleted unseen, two are on disk. Both gone are counted and named, one
 * warning each, and the two on disk read; starved through two more whose
 * copies are all gone, both are counted though none is left to read. */
static void test_copytruncate_copies_heard_made_and_gone(void)
{
	struct tailstream *s;

	put("hz.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/hz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("hz.log", "x3\n", "a");
	tailstream_copy_made(s);
	put_gz("hz.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("hz.log", "", "w");
	put("hz.log", "y1\ny2\n", "a");
	tailstream_look(s);
	tailstream_look(s);
	/* A tick: see pz.log. */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	/* Four unseen: y's and z's copies deleted, u's and v's on disk. */
	put("hz.log", "y3\n", "a");
	tailstream_copy_made(s);
	rm("hz.log.1.gz"); /* held */
	put_gz("hz.log.1.gz", "y1\ny2\ny3\n", GZ_GOOD);
	put("hz.log", "", "w");
	put("hz.log", "z1\n", "a");
	tailstream_copy_made(s);
	mv("hz.log.1.gz", "hz.log.2.gz");
	put_gz("hz.log.1.gz", "z1\n", GZ_GOOD);
	put("hz.log", "", "w");
	put("hz.log", "u1\n", "a");
	tailstream_copy_made(s);
	rm("hz.log.2.gz");
	mv("hz.log.1.gz", "hz.log.2.gz");
	put_gz("hz.log.1.gz", "u1\n", GZ_GOOD);
	put("hz.log", "", "w");
	put("hz.log", "v1\n", "a");
	tailstream_copy_made(s);
	rm("hz.log.2.gz");
	mv("hz.log.1.gz", "hz.log.2.gz");
	put_gz("hz.log.1.gz", "v1\n", GZ_GOOD);
	put("hz.log", "", "w");
	put("hz.log", "w1\n", "a");
	counted[0] = '\0';
	logged[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "x3|u1|v1|w1|");
	CHECK_STR(counted, "truncations+1 bytes_unread_lost+6 files_gone_unread+2 ");
	CHECK(strstr(logged, "hz.log was truncated at byte 0, and its copy deleted") != NULL);
	CHECK(strstr(logged, "hz.log was truncated again, and that copy deleted") != NULL);
	/* Two more, both copies gone (rotate 2 made a third since). */
	put("hz.log", "w2\n", "a");
	tailstream_look(s); /* hz.log's first bytes, as a look would see them */
	/* A tick: see pz.log. */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	tailstream_copy_made(s);
	put("hz.log", "", "w");
	put("hz.log", "t1\n", "a");
	tailstream_copy_made(s);
	put("hz.log", "", "w");
	put("hz.log", "s1\n", "a");
	counted[0] = '\0';
	logged[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "s1|");
	CHECK_STR(counted, "truncations+1 bytes_unread_lost+3 files_gone_unread+2 ");
	tailstream_free(s);
	rm("hz.log.1.gz");
	rm("hz.log.2.gz");
}

/* skiff read past the end of the copy (lines written between logrotate's
 * copy and its truncation, read before it): the copy, born since the file
 * was opened, is not a later copy to read, nor a copy gone. */
static void test_copytruncate_read_past_the_copy(void)
{
	struct tailstream *s;
	char big[1200] = "";
	size_t used = 0;

	/* Over 1 KiB: a copy is known by its first KiB. */
	for (int i = 0; i < 11; i++)
		used += (size_t)snprintf(big + used, sizeof(big) - used, "x%02d%096d\n", i, 0);
	put("oz.log", big, "w");
	snprintf(logpath, sizeof(logpath), "%s/oz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK(strlen(drain(s)) == 11 * 100);
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("oz.log", "x11\n", "a");
	snprintf(big + used, sizeof(big) - used, "x11\n");
	put("oz.log.1", big, "w");
	put("oz.log", "x12\n", "a");
	CHECK_STR(drain(s), "x11|x12|");
	put("oz.log", "", "w");
	put("oz.log", "y1\n", "a");
	counted[0] = '\0';
	CHECK_STR(drain(s), "y1|");
	CHECK_STR(counted, "truncations+1 ");
	tailstream_free(s);
	rm("oz.log.1");
}

/* The truncation handled, skiff stopped before it looks again (SIGSTOP,
 * starved): two more copytruncates, the file grown past the size it had
 * then. The look knows it by its first bytes, kept when the truncation was
 * handled, and reads both copies. (Before, they were kept only from the
 * next look on: the truncations went unseen, their copies unread.) */
static void test_copytruncates_right_after_one_seen(void)
{
	struct tailstream *s;

	put("rz.log", "x1\nx2\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/rz.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "x1|x2|");
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("rz.log", "x3\n", "a");
	put_gz("rz.log.1.gz", "x1\nx2\nx3\n", GZ_GOOD);
	put("rz.log", "", "w");
	put("rz.log", "y1\n", "a");
	tailstream_look(s); /* no look after it */
	/* A tick: see pz.log. */
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	put("rz.log", "y2\n", "a");
	mv("rz.log.1.gz", "rz.log.2.gz");
	put_gz("rz.log.1.gz", "y1\ny2\n", GZ_GOOD);
	put("rz.log", "", "w");
	put("rz.log", "z1\n", "a");
	put("rz.log", "z2\n", "a");
	rm("rz.log.2.gz");
	mv("rz.log.1.gz", "rz.log.2.gz");
	put_gz("rz.log.1.gz", "z1\nz2\n", GZ_GOOD);
	put("rz.log", "", "w");
	put("rz.log", "w1\nw2\nw3\n", "a");
	counted[0] = '\0';
	tailstream_look(s);
	CHECK_STR(drain(s), "x3|y1|y2|z1|z2|w1|w2|w3|");
	CHECK_STR(counted, "truncations+1 ");
	tailstream_free(s);
	rm("rz.log.1.gz");
	rm("rz.log.2.gz");
}

/* Closed (a stop while Kafka is away) with held files deleted since they
 * were rotated: each one with bytes unread is named and counted with what
 * it still held, to the byte and line - a restart finds only the stored
 * offset's file missing. One read to its end is not; one whose compressed
 * copy is on disk (compress without delaycompress) is not either: the
 * restart reads the copy. */
static void test_closing_counts_held_deleted_files(void)
{
	struct tailstream *s;

	ctx.rotate_wait_ms = 5000;
	put("c.log", "c0\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/c.log", dir);
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "c0|");
	mv("c.log", "c.log.1");
	put("c.log", "c1a\nc1b\n", "w");
	tailstream_check(s, mono_ms());
	mv("c.log", "c.log.1"); /* c0 deleted, read to its end */
	put("c.log", "c2\n", "w");
	tailstream_check(s, mono_ms());
	mv("c.log", "c.log.2");
	put("c.log", "c3\n", "w");
	tailstream_check(s, mono_ms());
	rm("c.log.1");                         /* c1 deleted, unread */
	put_gz("c.log.2.gz", "c2\n", GZ_GOOD); /* c2 compressed, then deleted */
	rm("c.log.2");
	logged[0] = '\0';
	counted[0] = '\0';
	tailstream_free(s);
	CHECK(strstr(logged, "unread from byte 0: 8 bytes, 2 lines lost") != NULL);
	CHECK(strstr(logged, "closing rotated file") != NULL &&
	      strstr(strstr(logged, "closing rotated file") + 1, "closing rotated file") == NULL);
	CHECK_STR(counted, "bytes_unread_lost+8 lines_unread_lost+2 files_gone_unread+1 ");
	CHECK_INT(ctx.nopen, 0);
	CHECK_INT(ctx.held_files, 0);
	CHECK_INT(ctx.held_bytes, 0);
	rm("c.log.2.gz");
	ctx.rotate_wait_ms = 0;
}

/* The stored offset (after a2) with "seen" as a stop writes it: the file
 * held a3 too, read but not acknowledged. */
static char *stopped_offset(const char *base)
{
	char *saved;
	size_t n;

	put(base, "a1\na2\n", "w");
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s_ct),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s_ct), "a1|a2|");
	saved = malloc(300);
	CHECK(saved != NULL);
	snprintf(saved, 300, "%s", offset_of_last()); /* acknowledged */
	put(base, "a3\n", "a");
	CHECK_STR(drain(s_ct), "a3|"); /* waiting at the stop */
	tailstream_free(s_ct);
	n = strlen(saved);
	CHECK(n > 1 && saved[n - 1] == '}');
	snprintf(saved + n - 1, 300 - (n - 1), ",\"seen\":9}");
	return saved;
}

/* Stopped with a3 read but not acknowledged; while stopped, copytruncate
 * three times (delaycompress, rotate 2): A's copy is deleted, B's is on
 * disk compressed, C's uncompressed. The restart reads B, C, then the path
 * (D), and counts A's 3 unread bytes ("seen"), naming the generation lost.
 * (Before: the path from 0 alone, B and C skipped, 1 file and 0 bytes
 * counted - issue 22's hostile run, 8,010 lines.) */
static void test_copytruncated_while_stopped_copy_gone(void)
{
	char *saved;

	snprintf(logpath, sizeof(logpath), "%s/ct.log", dir);
	saved = stopped_offset("ct.log");
	put("ct.log.1", "a1\na2\na3\n", "w"); /* A's copy */
	put("ct.log", "", "w");
	put("ct.log", "b1\nb2\n", "a");
	put_gz("ct.log.2.gz", "a1\na2\na3\n", GZ_GOOD);
	rm("ct.log.1");
	put("ct.log.1", "b1\nb2\n", "w"); /* B's copy */
	put("ct.log", "", "w");
	put("ct.log", "c1\n", "a");
	rm("ct.log.2.gz"); /* A's, rotate 2 */
	put_gz("ct.log.2.gz", "b1\nb2\n", GZ_GOOD);
	rm("ct.log.1");
	put("ct.log.1", "c1\n", "w"); /* C's copy */
	put("ct.log", "", "w");
	put("ct.log", "d1\n", "a");
	committed_json = saved;
	counted[0] = '\0';
	logged[0] = '\0';
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s_ct),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s_ct), "b1|b2|c1|d1|");
	CHECK(strstr(counted, "bytes_unread_lost+3 ") != NULL);
	CHECK(strstr(counted, "files_gone_unread+1 ") != NULL);
	CHECK(strstr(logged, "bytes 6 to 9") != NULL);
	tailstream_free(s_ct);
	CHECK_INT(ctx.nopen, 0);
	free(saved);
	committed_json = NULL;
	rm("ct.log.1");
	rm("ct.log.2.gz");
}

/* The same, A's copy compressed and on disk (compress, no delaycompress):
 * a3 is read from it, then B's copy and the path; nothing counted. */
static void test_copytruncated_while_stopped_copy_compressed(void)
{
	char *saved;

	snprintf(logpath, sizeof(logpath), "%s/cu.log", dir);
	saved = stopped_offset("cu.log");
	put_gz("cu.log.1.gz", "a1\na2\na3\n", GZ_GOOD); /* A's copy */
	put("cu.log", "", "w");
	put("cu.log", "b1\nb2\n", "a");
	mv("cu.log.1.gz", "cu.log.2.gz");
	put_gz("cu.log.1.gz", "b1\nb2\n", GZ_GOOD); /* B's copy */
	put("cu.log", "", "w");
	put("cu.log", "c1\n", "a");
	committed_json = saved;
	counted[0] = '\0';
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s_ct),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s_ct), "a3|b1|b2|c1|");
	CHECK(strstr(counted, "lost") == NULL && strstr(counted, "gone") == NULL);
	tailstream_free(s_ct);
	CHECK_INT(ctx.nopen, 0);
	free(saved);
	committed_json = NULL;
	rm("cu.log.1.gz");
	rm("cu.log.2.gz");
}

/* Connect's offset (a position alone) on a file truncated since: nothing
 * orders the rotated siblings against it, so the path alone is read from
 * 0, as Connect would - not every sibling on disk again. */
static void test_connect_offset_truncated(void)
{
	struct tailstream *s;

	snprintf(logpath, sizeof(logpath), "%s/cn.log", dir);
	put("cn.log.1", "old1\n", "w");
	put("cn.log", "b1\n", "w");
	committed_json = "{\"position\":6}";
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "b1|");
	tailstream_free(s);
	committed_json = NULL;
	rm("cn.log.1");
}

/* A file read to its end and let go while the record of its last line
 * still waits for Kafka (the worker holds its offset), then deleted: a
 * stop names it with the bytes read past the committed offset and counts
 * them (issue 22: with create rotation such files were forgotten, one a
 * stop, their lines lost unsaid). */
static void test_stop_counts_a_file_let_go_while_its_records_wait(void)
{
	struct tailstream *s;
	struct src_offset held;
	char *saved, *stored;

	put("w.log", "w0\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/w.log", dir);
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "w0|");
	saved = strdup(offset_of_last()); /* w0 acknowledged */
	put("w.log", "w1\n", "a");
	CHECK_STR(drain(s), "w1|");
	held = last; /* w1's record, in flight */
	src_ref_hold(held.ref);
	mv("w.log", "w.log.1");
	put("w.log", "x0\n", "w");
	committed_json = saved;
	CHECK_STR(drain(s), "x0|"); /* w.log.1 let go: waiting */
	CHECK_INT(ctx.nopen, 2);
	rm("w.log.1");
	logged[0] = '\0';
	counted[0] = '\0';
	stored = tailstream_stop(s, saved);
	CHECK(strstr(logged, "from byte 3 to 6, deleted since: 3 bytes, 1 lines lost") != NULL);
	CHECK(strstr(logged, "from byte 0 to 3: on disk") != NULL);
	CHECK_STR(counted, "bytes_unread_lost+3 lines_unread_lost+1 files_gone_unread+1 ");
	CHECK(stored != NULL && strstr(stored, "\"finished\":1") != NULL);
	free(stored);
	/* Acknowledged since: no longer kept. */
	src_ref_drop(held.ref);
	tailctx_release(&ctx);
	CHECK_STR(drain(s), "");
	CHECK_INT(ctx.nopen, 1);
	tailstream_free(s);
	committed_json = NULL;
	free(saved);
	rm("w.log");
}

/* Lines read from a file, then logrotate copytruncate: the copy holds them.
 * Their records wait for Kafka and the copy is deleted: a stop starts from
 * the copy (the file at the path, same inode, holds the next generation),
 * names it and counts it, and stores no "seen" of the next generation's
 * size (issue 22: "5000 records still unacknowledged", no file named). */
static void test_stop_names_the_copy_holding_the_unacknowledged(void)
{
	struct tailstream *s;
	struct src_offset held;
	char *saved, *stored;

	put("t.log", "t0\n", "w");
	snprintf(logpath, sizeof(logpath), "%s/t.log", dir);
	committed_json = NULL;
	CHECK_INT(tailstream_new(&ctx, logpath, (struct partition *)&committed_json, 0, &s),
	          TAILSTREAM_OK);
	CHECK_STR(drain(s), "t0|");
	saved = strdup(offset_of_last()); /* t0 acknowledged */
	put("t.log", "t1\n", "a");
	CHECK_STR(drain(s), "t1|");
	held = last; /* t1's record, in flight */
	src_ref_hold(held.ref);
	put("t.log.1", "t0\nt1\n", "w");
	put("t.log", "u0\nu1\n", "w");
	committed_json = saved;
	CHECK_STR(drain(s), "u0|u1|"); /* the copy read from byte 6: nothing more */
	rm("t.log.1");
	logged[0] = '\0';
	counted[0] = '\0';
	stored = tailstream_stop(s, saved);
	CHECK(strstr(logged, "t.log.1 (inode ") != NULL &&
	      strstr(logged, "from byte 3 to 6, deleted since: 3 bytes, 1 lines lost") != NULL);
	CHECK(strstr(logged, "t.log (inode ") != NULL &&
	      strstr(logged, "from byte 0 to 6: on disk") != NULL);
	CHECK_STR(counted, "bytes_unread_lost+3 lines_unread_lost+1 files_gone_unread+1 ");
	CHECK(stored != NULL && strstr(stored, "\"finished\":1") != NULL &&
	      strstr(stored, "\"seen\"") == NULL);
	free(stored);
	src_ref_drop(held.ref);
	tailstream_free(s);
	committed_json = NULL;
	free(saved);
	rm("t.log");
}

int main(void)
{
	sourceenv_fake_init(&fake, "t");
	fake.log_only = LOG_WARN;
	fake.log_bare = 1;
	fake.env.committed = fake_committed;
	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(logpath, sizeof(logpath), "%s/app.log", dir);
	test_new_then_rotations_while_stopped();
	test_copytruncate_while_running();
	test_partial_line_at_rotation();
	test_replaced_while_stopped();
	test_inode_reused_after_stop();
	test_successor_read_at_once();
	test_many_rotations_while_behind();
	test_file_deleted_before_opened_is_counted();
	test_backlog_over_the_chain();
	test_damaged_compressed_sibling();
	test_damaged_compressed_offset_file();
	test_backup_older_than_compressed_while_running();
	test_backup_older_than_gone_offset_file();
	test_compressed_offset_floor_unknown();
	test_held_budget();
	test_two_compressed_copytruncates_unseen();
	test_closing_counts_held_deleted_files();
	test_copytruncates_unseen_while_paused();
	test_copytruncate_copy_gone_while_paused();
	test_copytruncate_after_the_clock_stepped_back();
	test_copytruncate_copies_heard_made_and_gone();
	test_copytruncate_read_past_the_copy();
	test_copytruncates_right_after_one_seen();
	test_copytruncated_while_stopped_copy_gone();
	test_copytruncated_while_stopped_copy_compressed();
	test_connect_offset_truncated();
	test_stop_counts_a_file_let_go_while_its_records_wait();
	test_stop_names_the_copy_holding_the_unacknowledged();
	src_ref_drop(last.ref);
	tailctx_fini(&ctx); /* the marks of the lines handed out */
	return testlib_done("test_tailstream");
}
