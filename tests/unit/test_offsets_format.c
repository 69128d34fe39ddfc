/* Unit tests for the offset file: its format, the round trip, what a clean
 * flush writes (nothing), large stores and exact text. */
#include "offsetsfake.h"
#include "testlib.h"

#include "util/crc32c.h"
#include "offsets/offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the file: format and round trip ------------------------------------ */

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

int main(void)
{
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_format();
	test_round_trip();
	test_clean_writes_nothing();
	test_large_store();
	test_exact_text();
	testlib_rmtree(base);
	return testlib_done("test_offsets_format");
}
