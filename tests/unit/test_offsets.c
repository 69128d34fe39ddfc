/* Unit tests for the offset store's checksum (crc32c) and its map (puts,
 * flushes, limits) with a backend in memory. The store's wrappers and
 * helpers are shared with the other test_offsets_* files (offsetsfake.c). */
#include "offsetsfake.h"
#include "testlib.h"

#include "util/crc32c.h"
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const struct offset_backend_ops mem_ops = {
    .name = "mem", .load = mem_load, .store = mem_store, .close = mem_close};

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

int main(void)
{
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_crc32c();
	test_map_put();
	test_map_flush();
	test_map_limits();
	testlib_rmtree(base);
	return testlib_done("test_offsets");
}
