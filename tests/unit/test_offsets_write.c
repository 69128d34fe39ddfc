/* Unit tests for the asynchronous side of the offset store (offsets.h):
 * offsets_write with a backend that completes at once (as the file does) and
 * one that completes later (as a Kafka topic will), and a log backend's load
 * (offsets_load_record: later values win, tombstones delete). */
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "testlib.h"

#include <stdio.h>

struct backend {
	int later; /* store returns OFFSETS_INPROGRESS */
	int fail;
	int stores;
	uint64_t gen;
	struct offsets *o; /* for offsets_write_done */
};

struct outcome {
	int calls, rc;
	char why[128];
};

static int be_load(void *ctx, struct offsets *o, uint64_t *gen, int *from_prev, char *e, size_t el)
{
	struct backend *b = ctx;
	int rc = 0;

	b->o = o;
	*gen = 0;
	*from_prev = 0;
	/* A compacted topic read from its start: a key recurs, a tombstone. */
	rc |= offsets_load_record(o, "[\"c\",{\"p\":1}]", "{\"o\":1}");
	rc |= offsets_load_record(o, "[\"c\",{\"p\":2}]", "{\"o\":1}");
	rc |= offsets_load_record(o, "[\"c\", {\"p\":1}]", "{\"o\":5}");
	rc |= offsets_load_record(o, "[\"c\",{\"p\":3}]", "{\"o\":1}");
	rc |= offsets_load_record(o, "[\"c\",{\"p\":2}]", NULL);
	rc |= offsets_load_record(o, "[\"c\",{\"p\":9}]", NULL); /* never seen: nothing */
	return rc;
}

static int be_store(void *ctx, const struct offsets *o, uint64_t gen, char *e, size_t el)
{
	struct backend *b = ctx;

	b->stores++;
	b->gen = gen;
	if (b->later)
		return OFFSETS_INPROGRESS;
	if (b->fail) {
		snprintf(e, el, "mem: cannot store");
		return OFFSETS_ERR_IO;
	}
	return 0;
}

static void be_close(void *ctx)
{
}

static const struct offset_backend_ops be_ops = {
    .name = "mem", .load = be_load, .store = be_store, .close = be_close};

static void on_done(void *arg, int rc, const char *why)
{
	struct outcome *out = arg;

	out->calls++;
	out->rc = rc;
	snprintf(out->why, sizeof(out->why), "%s", why ? why : "");
}

static void test_load_log(void)
{
	struct backend b = {0};
	struct offsets *o = NULL;
	char err[256];

	CHECK_INT(offsets_open(&be_ops, &b, &o, err, sizeof(err)), 0);
	CHECK_INT(offsets_count(o), 2);
	CHECK_STR(offsets_get(o, "[\"c\",{\"p\":1}]"), "{\"o\":5}");
	CHECK(offsets_get(o, "[\"c\",{\"p\":2}]") == NULL);
	CHECK_STR(offsets_key(o, 1), "[\"c\",{\"p\":3}]");
	CHECK(!offsets_dirty(o));
	CHECK_INT(offsets_load_record(o, "not json", "{}"), OFFSETS_ERR_ARG);
	offsets_destroy(o);
}

static void test_write_at_once(void)
{
	struct backend b = {0};
	struct offsets *o = NULL;
	struct outcome out = {0};
	char err[256];

	CHECK_INT(offsets_open(&be_ops, &b, &o, err, sizeof(err)), 0);
	/* Clean: completes at once, writes nothing. */
	CHECK_INT(offsets_write(o, on_done, &out), 0);
	CHECK(out.calls == 1 && out.rc == 0 && b.stores == 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":6}"), 0);
	CHECK_INT(offsets_write(o, on_done, &out), 0);
	CHECK(out.calls == 2 && out.rc == 0 && b.stores == 1 && !offsets_dirty(o));
	CHECK(!offsets_writing(o));
	/* A failure completes with the backend's reason; the store stays dirty. */
	b.fail = 1;
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":7}"), 0);
	CHECK_INT(offsets_write(o, on_done, &out), 0);
	CHECK(out.calls == 3 && out.rc == OFFSETS_ERR_IO && offsets_dirty(o));
	CHECK_STR(out.why, "mem: cannot store");
	offsets_destroy(o);
}

static void test_write_later(void)
{
	struct backend b = {.later = 1};
	struct offsets *o = NULL;
	struct outcome out = {0};
	struct offsets_stats st;
	char err[256];
	uint64_t first;

	CHECK_INT(offsets_open(&be_ops, &b, &o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":6}"), 0);
	CHECK_INT(offsets_write(o, on_done, &out), 0);
	CHECK(out.calls == 0 && offsets_writing(o));
	first = b.gen;
	/* One write at a time; puts go on meanwhile. */
	CHECK_INT(offsets_write(o, on_done, &out), OFFSETS_ERR_BUSY);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), OFFSETS_ERR_BUSY);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":8}"), 0);
	/* A completion for another generation is ignored. */
	offsets_write_done(o, first + 100, 0, NULL);
	CHECK(out.calls == 0 && offsets_writing(o));
	offsets_write_done(o, first, 0, NULL);
	CHECK(out.calls == 1 && out.rc == 0 && !offsets_writing(o));
	/* The put during the write is not in it: still dirty. */
	CHECK(offsets_dirty(o));
	offsets_write_done(o, first, 0, NULL); /* a late duplicate: ignored */
	CHECK_INT(out.calls, 1);
	CHECK_INT(offsets_write(o, on_done, &out), 0);
	CHECK(b.gen == first + 1);
	offsets_write_done(o, b.gen, OFFSETS_ERR_IO, "topic: not acknowledged");
	CHECK(out.calls == 2 && out.rc == OFFSETS_ERR_IO && offsets_dirty(o));
	CHECK_STR(out.why, "topic: not acknowledged");
	offsets_stats(o, &st);
	CHECK(st.flushes == 1 && st.flush_failures == 1 && st.generation == first);
	offsets_destroy(o);
}

int main(void)
{
	test_load_log();
	test_write_at_once();
	test_write_later();
	return testlib_done("test_offsets_write");
}
