/* Unit tests for the offset store's journal (offsets_log.c, NAME.log): a
 * flush writes what changed, not the store; a torn or damaged record is
 * never applied, in part or whole; records of another base are skipped; a
 * failed append makes the next write a compaction; a removed key survives a
 * restart as removed; integers above 2^53 come back byte for byte. */
#include "offsetsfake.h"
#include "testlib.h"

#include "util/crc32c.h"
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "offsets/offsets_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY2 "[\"conn\",{\"filename\":\"g\"}]"
#define BIG "{\"position\":9007199254740993,\"ino\":18446744073709551615}"

static char logp[420];

static void fresh_log(void)
{
	fresh();
	snprintf(logp, sizeof(logp), "%s.log", path);
}

static off_t size_of(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? st.st_size : -1;
}

/* The value of key after a restart, and its generation and from_prev. */
static const char *reload(const char *key, uint64_t *gen, int *from_prev)
{
	static char val[256];
	struct offsets *o = open_ok();
	struct offsets_stats st;
	const char *v;

	if (o == NULL)
		return NULL;
	v = offsets_get(o, key);
	snprintf(val, sizeof(val), "%s", v ? v : "(none)");
	offsets_stats(o, &st);
	*gen = st.generation;
	*from_prev = st.loaded_from_prev;
	offsets_destroy(o);
	return val;
}

/* 1,000 keys, then one of them changes: the base stays, the log grows by
 * one record of one entry. */
static void test_proportional(void)
{
	struct offsets *o;
	char key[64];
	off_t base_size, log1;
	uint64_t gen;
	int fp;

	fresh_log();
	o = open_ok();
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "[\"conn\",{\"filename\":\"/var/log/f%04d\"}]", i);
		CHECK_INT(offsets_put(o, key, VAL_A), 0);
	}
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0); /* the first write: a base */
	base_size = size_of(path);
	CHECK(base_size > 50000 && !exists(logp));
	CHECK_INT(put_flush(o, VAL_B), 2);
	log1 = size_of(logp);
	CHECK(log1 > 0 && log1 < 150 && size_of(path) == base_size && !exists(prev));
	CHECK_INT(put_flush(o, VAL_C), 3);
	CHECK(size_of(logp) == 2 * log1);
	offsets_destroy(o);
	CHECK_STR(reload(KEY, &gen, &fp), VAL_C);
	CHECK(gen == 3 && fp == 0);
	CHECK_STR(reload("[\"conn\",{\"filename\":\"/var/log/f0999\"}]", &gen, &fp), VAL_A);
}

/* With one small key, the log reaches 4 KiB and the next write compacts:
 * a new base (the old one is prev), the log gone. */
static void test_compaction(void)
{
	struct offsets *o;
	char v[64];
	uint64_t gen;
	int fp, i;

	fresh_log();
	o = open_ok();
	put_flush(o, VAL_A);
	for (i = 0; i < 200 && !exists(prev); i++) {
		snprintf(v, sizeof(v), "{\"position\":%d}", 100 + i);
		put_flush(o, v);
	}
	CHECK(exists(prev) && i > 10 && i < 200);
	CHECK(size_of(logp) == -1);
	offsets_destroy(o);
	CHECK_STR(reload(KEY, &gen, &fp), v);
	CHECK(gen == (uint64_t)i + 1);
}

/* Base generation 1 (VAL_A), log: generation 2 (VAL_B), 3 (VAL_C). */
static void three_generations(char **logdata, size_t *len, size_t *first)
{
	struct offsets *o;

	fresh_log();
	o = open_ok();
	put_flush(o, VAL_A);
	put_flush(o, VAL_B);
	*first = (size_t)size_of(logp);
	put_flush(o, VAL_C);
	offsets_destroy(o);
	*logdata = slurp(logp, len);
}

/* Every length of the log: a torn record is never applied, in part or
 * whole, and the write after it compacts (never appends behind it). */
static void test_torn_tail(void)
{
	size_t len, first, bad = 0;
	char *d;
	uint64_t gen;
	int fp;

	three_generations(&d, &len, &first);
	for (size_t cut = 0; cut < len; cut++) {
		const char *want = cut < first ? VAL_A : VAL_B;
		const char *got;

		testlib_write_file(logp, d, cut);
		got = reload(KEY, &gen, &fp);
		bad += got == NULL || strcmp(got, want) != 0 || gen != (cut < first ? 1u : 2u) ||
		       fp != 0;
	}
	CHECK_INT(bad, 0);
	/* Torn after generation 2: the next write is a new base. */
	testlib_write_file(logp, d, len - 3);
	{
		struct offsets *o = open_ok();

		CHECK_INT(put_flush(o, "{\"position\":4}"), 3);
		offsets_destroy(o);
	}
	CHECK(exists(prev) && !exists(logp));
	CHECK_STR(reload(KEY, &gen, &fp), "{\"position\":4}");
	free(d);
}

/* A flipped bit anywhere in a record stops the replay before it; a damaged
 * complete record followed by a good one is reported (loaded_from_prev). */
static void test_bit_flips(void)
{
	size_t len, first, bad = 0;
	char *d;
	uint64_t gen;
	int fp;

	three_generations(&d, &len, &first);
	for (size_t at = 0; at < len; at++) {
		const char *got;

		d[at] ^= 0x04;
		testlib_write_file(logp, d, len);
		got = reload(KEY, &gen, &fp);
		if (at < first)
			bad += got == NULL || strcmp(got, VAL_A) || gen != 1 || fp != 1;
		else
			bad += got == NULL || strcmp(got, VAL_B) || gen != 2;
		d[at] ^= 0x04;
	}
	CHECK_INT(bad, 0);
	free(d);
}

/* A log left from before a compaction (its unlink lost) is skipped over the
 * new base, and applied over the old base when that is all there is. */
static void test_stale_base(void)
{
	struct offsets *o;
	size_t len;
	char *d;
	uint64_t gen;
	int fp;

	fresh_log();
	o = open_ok();
	put_flush(o, VAL_A);
	put_flush(o, VAL_B); /* log over base 1 */
	offsets_destroy(o);
	d = slurp(logp, &len);
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	o = open_ok();
	put_flush(o, VAL_C); /* base 3, base 1 is prev, log dropped */
	offsets_destroy(o);
	unsetenv("SKIFF_OFFSETS_COMPACT_BYTES");
	CHECK(!exists(logp) && exists(prev));
	testlib_write_file(logp, d, len);
	CHECK_STR(reload(KEY, &gen, &fp), VAL_C);
	CHECK(gen == 3 && fp == 0);
	unlink(path);
	CHECK_STR(reload(KEY, &gen, &fp), VAL_B);
	CHECK(gen == 2 && fp == 1);
	free(d);
}

/* Integers above 2^53 byte for byte; a removed key stays removed. */
static void test_bigint_and_removal(void)
{
	struct offsets *o;
	uint64_t gen;
	int fp;

	fresh_log();
	o = open_ok();
	put_flush(o, VAL_A);
	CHECK_INT(offsets_put(o, KEY2, BIG), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_destroy(o);
	CHECK_STR(reload(KEY2, &gen, &fp), BIG);
	o = open_ok();
	CHECK_INT(offsets_remove(o, KEY2), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	offsets_destroy(o);
	CHECK(exists(logp) && !exists(prev));
	CHECK_STR(reload(KEY2, &gen, &fp), "(none)");
	CHECK_STR(reload(KEY, &gen, &fp), VAL_A);
	CHECK(gen == 3);
}

/* A record of a newer log version: refused, like a newer base. */
static void test_newer_version(void)
{
	struct offsets *o = NULL;
	char line[256];
	const char *body = "{\"log\":2,\"base\":1,\"generation\":2,\"offsets\":[]}";
	int n;

	fresh_log();
	o = open_ok();
	put_flush(o, VAL_A);
	offsets_destroy(o);
	n = snprintf(line, sizeof(line), "%s\t%08" PRIx32 "\n", body,
	             crc32c(0, body, strlen(body)));
	testlib_write_file(logp, line, (size_t)n);
	o = NULL;
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "newer skiff") != NULL && strstr(err, ".log") != NULL);
	offsets_destroy(o);
}

/* Each step of an append failing: the flush fails naming the step and the
 * log, the store stays dirty, a restart loads the old or the new value (the
 * record may be in the page cache), and the next write is a compaction. */
static void test_append_faults(void)
{
	struct {
		const char *step;
		int *knob;
		int value;
		bool fresh_log; /* the log is created by this append */
	} f[] = {
	    {"open", &w.create_errno, ENOSPC, true},
	    {"write", &w.write_errno, ENOSPC, false},
	    {"fsync", &w.fsync_file_errno, EIO, false},
	    {"fsync directory of", &w.fsync_dir_errno, EIO, true},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct offsets *o;
		char want[600];
		const char *got;
		uint64_t gen;
		int fp, creates, failures = testlib_failures;

		fresh_log();
		o = open_ok();
		put_flush(o, VAL_A);
		if (!f[i].fresh_log)
			put_flush(o, "{\"position\":5}"); /* the log exists */
		CHECK_INT(offsets_put(o, KEY, VAL_B), 0);
		*f[i].knob = f[i].value;
		CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_IO);
		snprintf(want, sizeof(want), "%s %s: %s", f[i].step, logp, strerror(f[i].value));
		CHECK_STR(err, want);
		CHECK(offsets_dirty(o) && w.fsync_retried == 0);
		got = reload(KEY, &gen, &fp);
		CHECK(got != NULL &&
		      (strcmp(got, VAL_B) == 0 ||
		       strcmp(got, f[i].fresh_log ? VAL_A : "{\"position\":5}") == 0));
		creates = w.creates;
		CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
		CHECK(w.creates == creates + 1 && exists(prev) && !exists(logp)); /* compacted */
		offsets_destroy(o);
		CHECK_STR(reload(KEY, &gen, &fp), VAL_B);
		if (testlib_failures != failures)
			fprintf(stderr, "  (in append fault %zu: %s)\n", i, f[i].step);
	}
}

/* The process holding the store folds the log into a new base at close,
 * from its first run on: prev is then the base before, and the next start
 * reads one file. */
static void test_compaction_at_close(void)
{
	struct offsets *o = NULL;
	uint64_t gen;
	int fp;

	fresh_log();
	CHECK_INT(offsets_open_file_held(path, &o, err, sizeof(err)), 0);
	put_flush(o, VAL_A); /* the first write: base 1 */
	put_flush(o, VAL_B); /* appended: generation 2 */
	CHECK(exists(logp) && !exists(prev));
	offsets_destroy(o);
	CHECK(!exists(logp) && exists(prev));
	CHECK_STR(reload(KEY, &gen, &fp), VAL_B);
	CHECK(gen == 3 && fp == 0);
	unlink(path);
	CHECK_STR(reload(KEY, &gen, &fp), VAL_A); /* prev: the base before */
}

/* The store deleted under it (issue 22): the log alone, then the whole
 * directory. Appends never go to an unlinked log; while the directory is
 * gone a write fails saying so; once it is back, or the log went, the next
 * write is the whole store, with a note; a clean store notices too
 * (offsets_verify). */
static void test_deleted_under_the_store(void)
{
	char lock[450];
	struct offsets *o = NULL;
	uint64_t gen;
	int fp;

	fresh_log();
	snprintf(lock, sizeof(lock), "%s.lock", path);
	CHECK_INT(offsets_open_file_held(path, &o, err, sizeof(err)), 0);
	if (o == NULL)
		return;
	put_flush(o, VAL_A); /* the base */
	put_flush(o, VAL_B); /* appended */
	CHECK(exists(logp));
	/* The log deleted: noticed while clean, then written whole. */
	CHECK(unlink(logp) == 0);
	CHECK(!offsets_dirty(o));
	offsets_verify(o);
	CHECK(offsets_dirty(o));
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(strstr(err, ".log was deleted") != NULL && strstr(err, "written whole") != NULL);
	CHECK(!exists(logp));
	CHECK_STR(reload(KEY, &gen, &fp), VAL_B);
	put_flush(o, VAL_C); /* appended again, to a log that is there */
	CHECK(exists(logp) && err[0] == '\0');

	/* The directory deleted: nothing written, said, every time. */
	testlib_rmtree(dir);
	offsets_verify(o);
	CHECK(offsets_dirty(o));
	for (int i = 0; i < 2; i++) {
		CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_IO);
		CHECK(strstr(err, dir) != NULL && strstr(err, "was deleted") != NULL);
		CHECK(!exists(dir));
	}
	/* Back: the whole store, and the lock file taken again. */
	CHECK(mkdir(dir, 0755) == 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(strstr(err, "made again") != NULL);
	CHECK(exists(path) && exists(lock) && !exists(logp));
	CHECK(!offsets_dirty(o));
	CHECK_STR(reload(KEY, &gen, &fp), VAL_C);
	/* The base file replaced (another file renamed over it): the next
	 * write is whole. */
	snprintf(lock, sizeof(lock), "%s.other", path);
	write_doc(lock, "not ours\n");
	CHECK(rename(lock, path) == 0);
	offsets_verify(o);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(strstr(err, "deleted or replaced") != NULL);
	CHECK_STR(reload(KEY, &gen, &fp), VAL_C);
	offsets_destroy(o);
}

/* The log's last line, as written (static storage). */
static const char *last_record(void)
{
	static char rec[4096];
	FILE *f = fopen(logp, "r");
	char line[4096];

	rec[0] = '\0';
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		snprintf(rec, sizeof(rec), "%s", line);
	if (f != NULL)
		fclose(f);
	return rec;
}

static void fkey(char *key, size_t len, int i)
{
	snprintf(key, len, "[\"conn\",{\"filename\":\"/var/log/f%04d\"}]", i);
}

/* A flush writes from the store's list of what changed since the last
 * write (offsets_changed), not by comparing every entry with the journal's
 * shadow (issue 22: 20,000 lookups a flush at 20,000 files): the list holds
 * each changed entry once, is empty after a write, unknown after a removal
 * or a load, kept by a failed write; the records and a restart hold
 * exactly the store. */
static void test_changes_listed(void)
{
	struct offsets *o;
	const uint32_t *idx;
	char key[64];
	size_t n;
	uint64_t gen;
	int fp;

	fresh_log();
	o = open_ok();
	CHECK(!offsets_changed(o, &idx, &n)); /* loaded: not known */
	for (int i = 0; i < 1000; i++) {
		fkey(key, sizeof(key), i);
		CHECK_INT(offsets_put(o, key, VAL_A), 0);
	}
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0); /* a base */
	CHECK(offsets_changed(o, &idx, &n) && n == 0);
	fkey(key, sizeof(key), 900);
	CHECK_INT(offsets_put(o, key, VAL_B), 0);
	CHECK_INT(offsets_put(o, key, VAL_C), 0);
	fkey(key, sizeof(key), 5);
	CHECK_INT(offsets_put(o, key, VAL_A), 0); /* the same: no change */
	CHECK(offsets_changed(o, &idx, &n) && n == 1 && idx[0] == 900);
	CHECK_INT(offsets_put(o, key, VAL_B), 0);
	CHECK_INT(offsets_put(o, KEY2, VAL_A), 0); /* a new key */
	CHECK(offsets_changed(o, &idx, &n) && n == 3 && idx[1] == 5 && idx[2] == 1000);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(offsets_changed(o, &idx, &n) && n == 0);
	CHECK(strstr(last_record(), "f0900") != NULL && strstr(last_record(), "f0005") != NULL &&
	      strstr(last_record(), "\"g\"") != NULL && strstr(last_record(), "f0006") == NULL);
	/* A failed append keeps the list; the compaction after it writes all. */
	fkey(key, sizeof(key), 7);
	CHECK_INT(offsets_put(o, key, VAL_C), 0);
	w.write_errno = ENOSPC;
	CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_IO);
	CHECK(offsets_changed(o, &idx, &n) && n == 1 && idx[0] == 7);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(offsets_changed(o, &idx, &n) && n == 0 && !exists(logp));
	/* A removal moves positions: the next write compares all (null). */
	fkey(key, sizeof(key), 3);
	CHECK_INT(offsets_remove(o, key), 0);
	CHECK(!offsets_changed(o, &idx, &n));
	fkey(key, sizeof(key), 8);
	CHECK_INT(offsets_put(o, key, VAL_B), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(strstr(last_record(), "f0003\"}],\"value\":null") != NULL &&
	      strstr(last_record(), "f0008") != NULL && strstr(last_record(), "f0009") == NULL);
	CHECK(offsets_changed(o, &idx, &n) && n == 0);
	fkey(key, sizeof(key), 999);
	CHECK_INT(offsets_put(o, key, VAL_C), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
	CHECK(strstr(last_record(), "f0999") != NULL && strstr(last_record(), "f0998") == NULL);
	offsets_destroy(o);
	CHECK_STR(reload(key, &gen, &fp), VAL_C);
	fkey(key, sizeof(key), 3);
	CHECK_STR(reload(key, &gen, &fp), "(none)");
	fkey(key, sizeof(key), 5);
	CHECK_STR(reload(key, &gen, &fp), VAL_B);
	fkey(key, sizeof(key), 7);
	CHECK_STR(reload(key, &gen, &fp), VAL_C);
	fkey(key, sizeof(key), 900);
	CHECK_STR(reload(key, &gen, &fp), VAL_C);
	CHECK_STR(reload(KEY2, &gen, &fp), VAL_A);
	fkey(key, sizeof(key), 6);
	CHECK_STR(reload(key, &gen, &fp), VAL_A);
}

int main(void)
{
	unsetenv("SKIFF_OFFSETS_COMPACT_BYTES");
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_proportional();
	test_compaction();
	test_torn_tail();
	test_bit_flips();
	test_stale_base();
	test_bigint_and_removal();
	test_newer_version();
	test_append_faults();
	test_compaction_at_close();
	test_deleted_under_the_store();
	test_changes_listed();
	testlib_rmtree(base);
	return testlib_done("test_offsets_log");
}
