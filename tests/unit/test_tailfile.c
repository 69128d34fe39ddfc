/* tailfile: line ends, partial lines, long-line policies, fingerprints. */
#include "sources/file/tailfile.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char path[512];
static char arena[4096];

/* Reads everything available; lines joined as "a|b|" into out. */
static int read_all(struct tailfile *tf, bool final, char *out, size_t outlen, size_t *nlines,
                    struct tailfile_stats *st)
{
	struct tailline lines[64];
	struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};
	size_t n = 0, used = 0;
	int rc;

	out[0] = '\0';
	*nlines = 0;
	do {
		buf.used = 0;
		rc = tailfile_read(tf, &buf, lines, 64, &n, final, st, NULL, 0);
		for (size_t i = 0; i < n; i++) {
			CHECK(used + lines[i].len + 1 < outlen);
			memcpy(out + used, lines[i].bytes, lines[i].len);
			used += lines[i].len;
			out[used++] = '|';
			out[used] = '\0';
		}
		*nlines += n;
	} while (rc == TAILFILE_MORE);
	return rc;
}

static struct tailfile *open_with(const char *data, size_t max_line, enum tailfile_policy pol)
{
	struct tailfile *tf = NULL;

	testlib_write_file(path, data, strlen(data));
	CHECK_INT(tailfile_open(NULL, path, max_line, pol, &tf, NULL, 0), 0);
	CHECK_INT(tailfile_start(tf, 0), 0);
	return tf;
}

static void append(const char *data)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	CHECK(fd >= 0 && write(fd, data, strlen(data)) == (ssize_t)strlen(data));
	close(fd);
}

static void test_line_ends(void)
{
	struct tailfile_stats st = {0};
	char out[1024];
	size_t n;
	struct tailfile *tf = open_with("a\nb\r\nc\rd\n\npart", 100, TAILFILE_SPLIT);

	CHECK_INT(read_all(tf, false, out, sizeof(out), &n, &st), TAILFILE_EOF);
	CHECK_STR(out, "a|b|c|d||");
	CHECK_INT(tailfile_pos(tf), 10); /* the partial line waits */
	append("ial\r");
	CHECK_INT(read_all(tf, false, out, sizeof(out), &n, &st), TAILFILE_EOF);
	CHECK_STR(out, ""); /* "\r" at the end: "\r\n" or a lone "\r"? */
	append("\nnext\n");
	CHECK_INT(read_all(tf, false, out, sizeof(out), &n, &st), TAILFILE_EOF);
	CHECK_STR(out, "partial|next|");
	append("last\r");
	CHECK_INT(read_all(tf, true, out, sizeof(out), &n, &st), TAILFILE_EOF);
	CHECK_STR(out, "last|"); /* final: the lone "\r" ends it */
	CHECK_INT(st.partial, 0);
	tailfile_close(tf);
}

static void test_partial_final(void)
{
	struct tailfile_stats st = {0};
	char out[1024];
	size_t n;
	struct tailfile *tf = open_with("x\nno newline", 100, TAILFILE_SPLIT);

	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "x|");
	read_all(tf, true, out, sizeof(out), &n, &st);
	CHECK_STR(out, "no newline|");
	CHECK_INT(st.partial, 1);
	CHECK_INT(tailfile_pos(tf), 12);
	tailfile_close(tf);
}

static void test_policies(void)
{
	const char *data = "short\n0123456789abcdef\nok\n0123456789ABCDEFGHIJ";
	struct tailfile_stats st = {0};
	char out[1024];
	size_t n;
	struct tailfile *tf = open_with(data, 8, TAILFILE_SPLIT);

	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "short|01234567|89abcdef|ok|01234567|89ABCDEF|");
	CHECK_INT(st.split, 2);
	tailfile_close(tf);

	memset(&st, 0, sizeof(st));
	tf = open_with(data, 8, TAILFILE_TRUNCATE);
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "short|01234567|ok|01234567|");
	append("KLMN\nafter\n"); /* the rest of the cut line is dropped */
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "after|");
	CHECK_INT(st.truncated, 2);
	tailfile_close(tf);

	memset(&st, 0, sizeof(st));
	tf = open_with(data, 8, TAILFILE_SKIP);
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "short|ok|");
	append("\nafter\n");
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "after|");
	CHECK_INT(st.skipped, 2);
	tailfile_close(tf);
}

/* split backs off to the first byte of a character across the cut: each
 * piece's offset is where the next starts, and a reader started at that
 * offset (a restart) reads the same rest. */
static void test_split_utf8(void)
{
	/* "first", then 14 + U+1F600 + "gh" + 18 bytes, then "x" */
	const char *data = "first\nabcdefghijklmn\xF0\x9F\x98\x80gh0123456789ABCDEFGH\nx\n";
	struct tailline lines[16];
	struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};
	struct tailfile_stats st = {0};
	size_t n = 0;
	char out[1024];
	struct tailfile *tf = open_with(data, 16, TAILFILE_SPLIT);

	CHECK_INT(tailfile_read(tf, &buf, lines, 16, &n, false, &st, NULL, 0), TAILFILE_EOF);
	CHECK_INT(n, 5);
	CHECK_INT(lines[1].len, 14);
	CHECK_INT(lines[1].after.v[0], 20);
	CHECK_INT(lines[2].start, 20);
	CHECK(lines[2].len == 16 && memcmp(lines[2].bytes, "\xF0\x9F\x98\x80", 4) == 0);
	CHECK_INT(lines[2].after.v[0], 36);
	CHECK_INT(lines[3].start, 36);
	CHECK(lines[3].len == 8 && memcmp(lines[3].bytes, "ABCDEFGH", 8) == 0);
	CHECK_INT(st.split, 1);
	tailfile_close(tf);

	tf = open_with(data, 16, TAILFILE_SPLIT);
	CHECK_INT(tailfile_start(tf, 20), 0);
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "\xF0\x9F\x98\x80gh0123456789|ABCDEFGH|x|");
	tailfile_close(tf);
}

/* truncate keeps what comes before a character the limit would cut. */
static void test_truncate_utf8(void)
{
	const char *data = "abcdefghijklmn\xF0\x9F\x98\x80gh\nx\n";
	struct tailfile_stats st = {0};
	size_t n = 0;
	char out[1024];
	struct tailfile *tf = open_with(data, 16, TAILFILE_TRUNCATE);

	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "abcdefghijklmn|x|");
	CHECK_INT(st.truncated, 1);
	tailfile_close(tf);
}

/* A long file read through a small arena: the fingerprint of each record's
 * offset is the hash of the file's first min(position, 1024) bytes. */
static void test_fingerprint(void)
{
	static char data[8192];
	struct tailline lines[16];
	struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};
	struct tailfile_stats st = {0};
	struct tailfile *tf;
	size_t len = 0, n = 0, total = 0;
	int rc;

	for (int i = 0; len + 40 < sizeof(data); i++)
		len +=
		    (size_t)snprintf(data + len, sizeof(data) - len, "line %d with some text\n", i);
	tf = open_with(data, 100, TAILFILE_SPLIT);
	do {
		buf.used = 0;
		rc = tailfile_read(tf, &buf, lines, 16, &n, false, &st, NULL, 0);
		for (size_t i = 0; i < n; i++) {
			int64_t end = lines[i].after.v[0];
			size_t fl = end < TAILID_FP_MAX ? (size_t)end : TAILID_FP_MAX;

			/* fp over the first KiB, then the tail: the 64 bytes before */
			CHECK((uint64_t)lines[i].after.v[3] ==
			      (end <= TAILID_FP_MAX
			           ? tailid_fp_update(TAILID_FP_EMPTY, data, fl)
			           : tailpos_tail(data + end - TAILPOS_TAIL, TAILPOS_TAIL)));
			CHECK(lines[i].start + (int64_t)lines[i].len + 1 == end);
		}
		total += n;
	} while (rc == TAILFILE_MORE);
	CHECK(total > 300);
	CHECK(tailfile_mark(tf)->fp_full &&
	      tailfile_mark(tf)->fp == tailid_fp_update(TAILID_FP_EMPTY, data, TAILID_FP_MAX));
	CHECK_INT(tailfile_pos(tf), (int64_t)len);
	CHECK(tailfile_matches(tf, tailfile_fp(tf), TAILID_FP_MAX));
	CHECK(!tailfile_matches(tf, tailfile_fp(tf), 10));
	/* A restart at a position recomputes the same fingerprint. */
	CHECK_INT(tailfile_start(tf, 2000), 0);
	CHECK(tailfile_fp(tf) == tailid_fp_update(TAILID_FP_EMPTY, data, TAILID_FP_MAX));
	CHECK((uint64_t)tailfile_v3(tf) == tailpos_tail(data + 2000 - TAILPOS_TAIL, TAILPOS_TAIL));
	CHECK_INT(tailfile_start(tf, (int64_t)len + 1), -1); /* beyond the end */
	tailfile_rewind(tf);
	CHECK_INT(tailfile_pos(tf), 0);
	CHECK(tailfile_fp(tf) == TAILID_FP_EMPTY);
	CHECK(!tailfile_mark(tf)->fp_full); /* a new mark: earlier offsets keep theirs */
	tailfile_close(tf);
}

static void test_start_at_end(void)
{
	struct tailfile_stats st = {0};
	char out[1024];
	size_t n;
	struct tailfile *tf = open_with("old\nolder\nhalf", 100, TAILFILE_SPLIT);

	CHECK_INT(tailfile_start_at_end(tf), 0);
	CHECK_INT(tailfile_pos(tf), 10);
	append(" done\n");
	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK_STR(out, "half done|");
	tailfile_close(tf);
}

static void test_not_regular(void)
{
	struct tailfile *tf = (struct tailfile *)1;
	char why[128] = "";

	CHECK_INT(tailfile_open(NULL, "/", 100, TAILFILE_SPLIT, &tf, NULL, 0), TAILFILE_ERR_NOTREG);
	CHECK(tf == NULL);
	CHECK_INT(
	    tailfile_open(NULL, "/nonexistent/file", 100, TAILFILE_SPLIT, &tf, why, sizeof(why)),
	    TAILFILE_ERR_NOENT);
	CHECK(strcmp(why, strerror(ENOENT)) == 0); /* the text users see in the log */
	tailfile_close(NULL);
}

/* /proc files have size 0 yet read bytes: not logs. An empty log is one. */
static void test_pseudo(void)
{
	struct tailfile *tf = (struct tailfile *)1;

	CHECK_INT(tailfile_open(NULL, "/proc/loadavg", 100, TAILFILE_SPLIT, &tf, NULL, 0),
	          TAILFILE_ERR_PSEUDO);
	CHECK(tf == NULL);
	tf = open_with("", 100, TAILFILE_SPLIT);
	CHECK(tf != NULL);
	tailfile_close(tf);
}

/* Truncated and written again past the position with the same first bytes:
 * only the bytes before the position tell. */
static void test_still_there(void)
{
	struct tailfile *tf = open_with("same head 0123456789\nline one\n", 100, TAILFILE_SPLIT);
	struct tailfile_stats st = {0};
	char out[256];
	size_t n = 0;
	const void *last;
	size_t last_len;

	read_all(tf, false, out, sizeof(out), &n, &st);
	CHECK(n == 2 && tailfile_still_there(tf));
	tailfile_last(tf, &last, &last_len);
	CHECK(last_len == 30 && memcmp(last, "same head 0123456789\nline one\n", 30) == 0);
	append("line two\n");
	CHECK(tailfile_still_there(tf));
	testlib_write_file(path, "same head 0123456789\nline ONE\nline three\n", 42);
	CHECK(!tailfile_still_there(tf));
	CHECK(tailfile_start(tf, 20) == 0 && tailfile_still_there(tf));
	tailfile_rewind(tf);
	CHECK(tailfile_still_there(tf));
	tailfile_close(tf);
}

/* Reads of a plain file come in chunks smaller than the arena: a line longer
 * than a chunk, a line ending exactly at one, and a partial last line of a
 * final file all come out whole, each once. */
static void test_chunks(void)
{
	enum { BIG = 200000, ARENA = 600000 };
	char *data = malloc(BIG * 3), *mem = malloc(ARENA);
	struct tailbuf buf = {.mem = mem, .cap = ARENA};
	struct tailline lines[16];
	struct tailfile_stats st = {0};
	struct tailfile *tf;
	size_t n, len = 0, sizes[5] = {10, BIG - 11, 65535, 150000, 7};

	CHECK(data != NULL && mem != NULL);
	for (size_t i = 0; i < 5; i++) {
		memset(data + len, 'a' + (int)i, sizes[i]);
		len += sizes[i];
		data[len++] = '\n';
	}
	data[--len] = '\0'; /* the last line has no terminator */
	tf = open_with(data, BIG, TAILFILE_SPLIT);
	CHECK_INT(tailfile_read(tf, &buf, lines, 16, &n, true, &st, NULL, 0), TAILFILE_EOF);
	CHECK_INT(n, 5);
	for (size_t i = 0; i < n && i < 5; i++) {
		CHECK_INT(lines[i].len, sizes[i]);
		CHECK(lines[i].bytes[0] == 'a' + (int)i &&
		      lines[i].bytes[sizes[i] - 1] == 'a' + (int)i);
	}
	CHECK_INT(st.partial, 1);
	CHECK_INT(st.split, 0);
	tailfile_close(tf);
	free(data);
	free(mem);
}

/* A file let go unread (max.held.*): the bytes and lines after the
 * position are counted - "\r\n" across two 16 KiB reads once, a lone "\r"
 * and a partial last line each one - and the position and the offset's
 * integers end where reading it all would have left them. */
static void test_skip_rest(void)
{
	enum { HEAD = 16383 };
	struct tailfile_stats st = {0};
	struct tailfile *tf, *read;
	char *data = malloc(HEAD + 64), out[64];
	uint64_t bytes = 0, lines = 0;
	size_t n, len;

	CHECK(data != NULL);
	memset(data, 'x', HEAD);
	memcpy(data + HEAD, "\r\nl1\rl2\n\ntail", 13);
	len = HEAD + 13;
	data[len] = '\0';
	tf = open_with(data, HEAD + 10, TAILFILE_SPLIT);
	CHECK_INT(tailfile_skip_rest(tf, &bytes, &lines), 0);
	CHECK_INT(bytes, len);
	CHECK_INT(lines, 5); /* x..x, l1, l2, "", tail */
	CHECK_INT(tailfile_pos(tf), len);
	CHECK_INT(tailfile_open(NULL, path, HEAD + 10, TAILFILE_SPLIT, &read, NULL, 0), 0);
	CHECK_INT(tailfile_start(read, 0), 0);
	{
		struct tailline l[8];
		char *mem = malloc(2 * (HEAD + 64));
		struct tailbuf buf = {.mem = mem, .cap = 2 * (HEAD + 64)};

		CHECK(mem != NULL);
		CHECK_INT(tailfile_read(read, &buf, l, 8, &n, true, &st, NULL, 0), TAILFILE_EOF);
		CHECK_INT(n, 5);
		free(mem);
	}
	CHECK_INT(tailfile_pos(read), tailfile_pos(tf));
	CHECK(tailfile_fp(read) == tailfile_fp(tf));
	CHECK(tailfile_v3(read) == tailfile_v3(tf));
	tailfile_close(read);
	tailfile_close(tf);
	/* From a line's start in the middle; nothing left: nothing counted. */
	tf = open_with("one\ntwo\nthree", 100, TAILFILE_SPLIT);
	CHECK_INT(tailfile_start(tf, 4), 0);
	CHECK_INT(tailfile_skip_rest(tf, &bytes, &lines), 0);
	CHECK_INT(bytes, 9);
	CHECK_INT(lines, 2);
	CHECK_INT(tailfile_skip_rest(tf, &bytes, &lines), 0);
	CHECK_INT(bytes, 0);
	CHECK_INT(lines, 0);
	append("\n");
	CHECK_INT(read_all(tf, false, out, sizeof(out), &n, &st), TAILFILE_EOF);
	CHECK_INT(n, 1); /* the "\n" written after: an empty line, as a reader sees it */
	tailfile_close(tf);
	free(data);
}

/* The lines between two read positions of a compressed file: a stop
 * counting what was read from a held .gz deleted since (hostile finding:
 * -ENOTSUP, and 1,299 lines read but not acknowledged went uncounted). */
static void test_lines_between_compressed(void)
{
	enum { LINES = 3000 };
	struct tailfile_stats st = {0};
	char gzpath[600], *plain = malloc(LINES * 16), *gz = malloc(LINES * 16);
	struct tailfile *tf = NULL;
	z_stream zs = {0};
	size_t len = 0, n, total = 0;
	uint64_t lines = 7;

	CHECK(plain != NULL && gz != NULL);
	for (int i = 0; i < LINES; i++)
		len += (size_t)snprintf(plain + len, 16, "line %06d\n", i); /* 12 bytes */
	CHECK_INT(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)plain;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)gz;
	zs.avail_out = LINES * 16;
	CHECK_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
	snprintf(gzpath, sizeof(gzpath), "%s.1.gz", path);
	testlib_write_file(gzpath, gz, zs.total_out);
	deflateEnd(&zs);
	CHECK_INT(tailfile_open(NULL, gzpath, 100, TAILFILE_SPLIT, &tf, NULL, 0), 0);
	CHECK_INT(tailfile_start(tf, 0), 0);
	{
		struct tailline l[64];
		struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};

		do { /* some of it, as a reader paused by a full queue */
			buf.used = 0;
			CHECK(tailfile_read(tf, &buf, l, 64, &n, false, &st, NULL, 0) >= 0);
			total += n;
		} while (n > 0 && total < 1000);
	}
	CHECK(tailfile_pos(tf) == (int64_t)total * 12);
	CHECK_INT(tailfile_lines_between(tf, 0, tailfile_pos(tf), &lines), 0);
	CHECK_INT(lines, total);
	CHECK_INT(tailfile_lines_between(tf, 120, 240, &lines), 0);
	CHECK_INT(lines, 10);
	CHECK_INT(tailfile_lines_between(tf, 0, (int64_t)len + 12, &lines), TAILFILE_ERR_SHORT);
	tailfile_close(tf);
	unlink(gzpath);
	free(plain);
	free(gz);
}

/* A read stopped by its line budget at the file's end has not reached it:
 * tailfile_end says so, or the stream takes the lines left for a partial
 * one and closes the file as idle (hostile finding h22c: 3,000 files of 3
 * lines under a glob, Kafka up: 4 files shipped their first line only,
 * the rest never, the files never written again). */
static void test_end_after_a_read_stopped_by_max(void)
{
	struct tailline l[4];
	struct tailbuf buf = {.mem = arena, .cap = sizeof(arena)};
	struct tailfile_stats st = {0};
	struct tailfile *tf = open_with("a\nb\nc\n", 100, TAILFILE_SPLIT);
	size_t n;

	CHECK_INT(tailfile_read(tf, &buf, l, 1, &n, false, &st, NULL, 0), TAILFILE_MORE);
	CHECK_INT(n, 1);
	CHECK_INT(tailfile_pos(tf), 2);
	CHECK_INT(tailfile_end(tf), -1); /* b and c are lines, not a partial one */
	buf.used = 0;
	CHECK_INT(tailfile_read(tf, &buf, l, 4, &n, false, &st, NULL, 0), TAILFILE_EOF);
	CHECK_INT(n, 2);
	CHECK_INT(tailfile_end(tf), 6);
	tailfile_close(tf);
}

int main(void)
{
	snprintf(path, sizeof(path), "%s/f.log", testlib_tmpdir());
	test_line_ends();
	test_partial_final();
	test_policies();
	test_split_utf8();
	test_truncate_utf8();
	test_fingerprint();
	test_start_at_end();
	test_not_regular();
	test_pseudo();
	test_still_there();
	test_chunks();
	test_skip_rest();
	test_lines_between_compressed();
	test_end_after_a_read_stopped_by_max();
	unlink(path);
	return testlib_done("test_tailfile");
}
