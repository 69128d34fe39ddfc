/* Unit tests for stats.c: registration, labels, iteration, no cap, and the
 * offset store's statistics moved into the registry. */
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"
#include "core/stats.h"
#include "testlib.h"

#include <stdio.h>

static const struct stats_desc lines = {"lines_truncated", STATS_COUNTER, "lines cut", STATS_F_LOG};
static const struct stats_desc depth = {"queue_depth", STATS_GAUGE, "records queued", 0};

static void test_register_and_labels(void)
{
	struct stats *s = NULL;
	struct stats_labels a = {.connector = "a"}, b = {.connector = "b"};
	struct stats_labels ap = {.connector = "a", .partition = "{\"filename\":\"x\"}"};
	uint64_t *ha, *hb, *hap, *again, *g;
	size_t ia, ib, iagain;

	CHECK_INT(stats_new(&s), 0);
	CHECK_INT(stats_register(s, &lines, &a, &ha, &ia), 0);
	CHECK_INT(stats_register(s, &lines, &b, &hb, &ib), 0);
	CHECK_INT(stats_register(s, &lines, &ap, &hap, NULL), 0);
	CHECK(ha != hb && ha != hap && hb != hap && ia == 0 && ib == 1);
	/* Registered once: the same name and labels give the same handle. */
	CHECK_INT(stats_register(s, &lines, &a, &again, &iagain), 0);
	CHECK(again == ha && iagain == ia);
	CHECK_INT(stats_count(s), 3);
	/* The same name with another type or help is refused. */
	{
		struct stats_desc other = lines;
		uint64_t *h;

		other.type = STATS_GAUGE;
		CHECK_INT(stats_register(s, &other, &a, &h, NULL), STATS_ERR_CONFLICT);
		CHECK(h == NULL);
		other = lines;
		other.help = "something else";
		CHECK_INT(stats_register(s, &other, &b, &h, NULL), STATS_ERR_CONFLICT);
	}
	CHECK_INT(stats_register(s, &depth, NULL, &g, NULL), 0);
	stats_add(ha, 3);
	stats_add(ha, 2);
	stats_add(hap, 1);
	*g = 42;
	CHECK(*ha == 5 && *hb == 0 && *hap == 1);
	CHECK(stats_strerror(STATS_ERR_CONFLICT) != NULL);
	stats_destroy(s);
	stats_destroy(NULL);
}

static void test_iterate(void)
{
	struct stats *s = NULL;
	struct stats_labels a = {.connector = "a"};
	struct stats_view v;
	uint64_t *h, *g;
	size_t cur = 0, n = 0;

	CHECK_INT(stats_new(&s), 0);
	CHECK(!stats_next(s, &cur, &v)); /* empty */
	CHECK_INT(stats_register(s, &lines, &a, &h, NULL), 0);
	CHECK_INT(stats_register(s, &depth, NULL, &g, NULL), 0);
	*h = 7;
	*g = 9;
	cur = 0;
	while (stats_next(s, &cur, &v)) {
		if (n == 0) {
			CHECK(v.index == 0 && v.desc->type == STATS_COUNTER && v.value == 7);
			CHECK_STR(v.desc->name, "lines_truncated");
			CHECK_STR(v.desc->help, "lines cut");
			CHECK_STR(v.connector, "a");
			CHECK(v.partition == NULL && (v.desc->flags & STATS_F_LOG));
		} else {
			CHECK(v.index == 1 && v.desc->type == STATS_GAUGE && v.value == 9);
			CHECK(v.connector == NULL && v.partition == NULL);
		}
		n++;
	}
	CHECK_INT(n, 2);
	stats_destroy(s);
}

/* A connector closed by a reload leaves the listing; registered again, it is
 * back with its value (a counter never goes back). */
static void test_retire(void)
{
	struct stats *s = NULL;
	struct stats_labels a = {.connector = "a"}, b = {.connector = "b"};
	struct stats_view v;
	uint64_t *ha, *hb, *again;
	size_t cur = 0, n = 0;

	CHECK_INT(stats_new(&s), 0);
	CHECK_INT(stats_register(s, &lines, &a, &ha, NULL), 0);
	CHECK_INT(stats_register(s, &lines, &b, &hb, NULL), 0);
	*ha = 3;
	stats_retire(s, "a");
	while (stats_next(s, &cur, &v)) {
		CHECK_STR(v.connector, "b");
		n++;
	}
	CHECK_INT(n, 1);
	CHECK_INT(stats_register(s, &lines, &a, &again, NULL), 0);
	CHECK(again == ha && *again == 3);
	cur = n = 0;
	while (stats_next(s, &cur, &v))
		n++;
	CHECK_INT(n, 2);
	stats_destroy(s);
}

/* One gauge whose value is unknown now leaves the listing alone, and comes
 * back when registered again. */
static void test_hide(void)
{
	struct stats *s = NULL;
	struct stats_labels a = {.connector = "a", .partition = "{\"p\":1}"},
	                    b = {.connector = "a", .partition = "{\"p\":2}"};
	struct stats_view v;
	uint64_t *ha, *hb, *again;
	size_t cur = 0, n = 0;

	CHECK_INT(stats_new(&s), 0);
	CHECK_INT(stats_register(s, &lines, &a, &ha, NULL), 0);
	CHECK_INT(stats_register(s, &lines, &b, &hb, NULL), 0);
	stats_hide(ha);
	while (stats_next(s, &cur, &v)) {
		CHECK_STR(v.partition, "{\"p\":2}");
		n++;
	}
	CHECK_INT(n, 1);
	CHECK_INT(stats_register(s, &lines, &a, &again, NULL), 0);
	CHECK(again == ha);
	cur = n = 0;
	while (stats_next(s, &cur, &v))
		n++;
	CHECK_INT(n, 2);
	stats_destroy(s);
}

/* Series that come and go (a partition's, shown while among the most
 * active): 20 rounds of 500 partitions, each round's removed before the
 * next is registered. Each new series takes a removed one's place (the
 * registry does not grow with the partitions it ever showed), a removed one
 * is listed no more and starts from 0 when registered again, and every
 * series not removed is still found under its labels. */
static void test_remove(void)
{
	enum { N = 500, ROUNDS = 20 };
	static char json[N][32];
	struct stats *s = NULL;
	struct stats_labels conn = {.connector = "c"};
	struct stats_view v;
	uint64_t *h[N], *keep, *again;
	size_t cur = 0, n = 0, count;

	CHECK_INT(stats_new(&s), 0);
	CHECK_INT(stats_register(s, &lines, &conn, &keep, NULL), 0);
	*keep = 5;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++) {
			struct stats_labels l = {.connector = "c", .partition = json[i]};

			snprintf(json[i], sizeof(json[i]), "{\"p\":%d}", r * N + i);
			CHECK_INT(stats_register(s, &depth, &l, &h[i], NULL), 0);
			*h[i] = (uint64_t)(r * N + i);
		}
		if (r == 0)
			count = stats_count(s);
		CHECK_INT(stats_count(s), count);
		/* Every other one first, then the rest: the lookup of those left
		 * survives removals in the middle of a probe run. */
		for (int i = 0; i < N; i += 2)
			stats_remove(s, h[i]);
		for (int i = 1; i < N; i += 2) {
			struct stats_labels l = {.connector = "c", .partition = json[i]};

			CHECK_INT(stats_register(s, &depth, &l, &again, NULL), 0);
			CHECK(again == h[i] && *again == (uint64_t)(r * N + i));
			stats_remove(s, h[i]);
		}
	}
	stats_remove(s, NULL);
	while (stats_next(s, &cur, &v)) {
		CHECK(v.partition == NULL && v.value == 5);
		n++;
	}
	CHECK_INT(n, 1);
	{
		struct stats_labels l = {.connector = "c", .partition = json[0]};

		CHECK_INT(stats_register(s, &depth, &l, &again, NULL), 0);
		CHECK(*again == 0);
	}
	CHECK_INT(stats_register(s, &lines, &conn, &again, NULL), 0);
	CHECK(again == keep && *keep == 5);
	stats_destroy(s);
}

/* No cap: the seventeenth counter of a connector (the old limit dropped it)
 * and thousands more are registered, each its own, and all iterate. */
static void test_no_cap(void)
{
	enum { N = 5000 };
	static char names[N][24];
	struct stats *s = NULL;
	struct stats_labels l = {.connector = "c"};
	struct stats_view v;
	uint64_t *h[N];
	size_t cur = 0, n = 0;
	int rc = 0;

	CHECK_INT(stats_new(&s), 0);
	for (int i = 0; i < N && rc == 0; i++) {
		struct stats_desc d = {names[i], STATS_COUNTER, "one of many", 0};

		snprintf(names[i], sizeof(names[i]), "counter_%d", i);
		rc = stats_register(s, &d, &l, &h[i], NULL);
		if (rc == 0)
			stats_add(h[i], (uint64_t)i);
	}
	CHECK_INT(rc, 0);
	CHECK_INT(stats_count(s), N);
	CHECK(*h[16] == 16);
	while (stats_next(s, &cur, &v)) {
		CHECK(v.value == v.index);
		n++;
	}
	CHECK_INT(n, N);
	stats_destroy(s);
}

/* The offset store counts in the registry once registered; offsets_stats
 * reads the same cells, so nothing is counted twice. */
static void test_offsets_stats(void)
{
	char dir[512], path[600], errbuf[512];
	struct offsets *o = NULL;
	struct offsets_stats st;
	struct stats *s = NULL;
	struct stats_view v;
	size_t cur = 0;
	uint64_t flushes = 99;

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(path, sizeof(path), "%s/offsets", dir);
	CHECK_INT(stats_new(&s), 0);
	CHECK_INT(offsets_open_file(path, &o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":1}"), 0);
	CHECK_INT(offsets_flush(o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(offsets_register_stats(o, s), 0);
	CHECK_INT(offsets_put(o, "[\"c\",{\"p\":1}]", "{\"o\":2}"), 0);
	CHECK_INT(offsets_flush(o, errbuf, sizeof(errbuf)), 0);
	offsets_stats(o, &st);
	CHECK(st.flushes == 2 && st.generation == 2);
	while (stats_next(s, &cur, &v))
		if (v.value == 2 && v.desc->type == STATS_COUNTER)
			flushes = v.value;
	CHECK_INT(flushes, 2);
	offsets_destroy(o);
	stats_destroy(s);
}

int main(void)
{
	test_register_and_labels();
	test_iterate();
	test_retire();
	test_remove();
	test_hide();
	test_no_cap();
	test_offsets_stats();
	return testlib_done("test_stats");
}
