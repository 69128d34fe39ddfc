/* Unit tests for loading the offset file after damage to one generation or
 * both: torn and garbage files, bit flips, bad content, refusals, a stale
 * temp file, an unreadable or too large file, no directory.
 *
 * The tests run as root, for whom chmod 000 does not cause EACCES: an
 * unreadable file is simulated by the open wrapper (offsetsfake.c), and
 * also by a directory in place of the file. */
#include "offsetsfake.h"
#include "testlib.h"

#include "util/crc32c.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

int main(void)
{
	/* Every write rewrites the whole file here (the journal's own faults
	 * and damage: test_offsets_log.c). */
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_torn_and_garbage();
	test_bit_flips();
	test_bad_content();
	test_canonical_and_newest();
	test_refusals();
	test_stale_tmp();
	test_unreadable();
	test_too_large_and_no_dir();
	testlib_rmtree(base);
	return testlib_done("test_offsets_damage");
}
