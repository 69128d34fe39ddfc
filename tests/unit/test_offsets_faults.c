/* Unit tests for the offset file under injected faults: each open, write,
 * fsync, close and rename failing in turn (offsetsfake.c's wrappers), and
 * writes cut short or interrupted. */
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

int main(void)
{
	/* Every write rewrites the whole file here (the journal's own faults
	 * and damage: test_offsets_log.c). */
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_faults();
	test_choppy_writes();
	testlib_rmtree(base);
	return testlib_done("test_offsets_faults");
}
