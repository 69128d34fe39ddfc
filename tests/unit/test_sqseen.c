/* sqseen: row fingerprints, the multiset of the last timestamp's
 * group (identical rows counted, a new pass, the bound) and the ring of the
 * last ids read. */
#include "sources/sqlite/sqseen.h"
#include "testlib.h"

#include <sqlite3.h>
#include <stdio.h>

/* Fingerprints of "SELECT <cols>" rows of an in-memory database. */
static struct sqprint print_of(sqlite3 *db, const char *select)
{
	sqlite3_stmt *st = NULL;
	struct sqprint p = {0, 0};

	CHECK_INT(sqlite3_prepare_v2(db, select, -1, &st, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	sqseen_print(st, (size_t)sqlite3_column_count(st), &p);
	sqlite3_finalize(st);
	return p;
}

static bool same(struct sqprint a, struct sqprint b)
{
	return a.a == b.a && a.b == b.b;
}

static void test_prints(void)
{
	sqlite3 *db = NULL;

	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK(same(print_of(db, "SELECT 1, 'a', NULL"), print_of(db, "SELECT 1, 'a', NULL")));
	/* Type, value, column boundaries and NULLs all count. */
	CHECK(!same(print_of(db, "SELECT 1"), print_of(db, "SELECT '1'")));
	CHECK(!same(print_of(db, "SELECT 1"), print_of(db, "SELECT 1.0")));
	CHECK(!same(print_of(db, "SELECT 'ab', 'c'"), print_of(db, "SELECT 'a', 'bc'")));
	CHECK(!same(print_of(db, "SELECT NULL, 1"), print_of(db, "SELECT 1, NULL")));
	CHECK(!same(print_of(db, "SELECT x'00'"), print_of(db, "SELECT x'0000'")));
	sqlite3_close(db);
}

static void test_group(void)
{
	struct sqgroup g = {0};
	struct sqprint a = {1, 2}, b = {3, 4}, c = {5, 6};

	sqseen_group_reset(&g, 100);
	CHECK(!sqseen_group_seen(&g, &a));
	CHECK_INT(sqseen_group_add(&g, &a), 0);
	CHECK_INT(sqseen_group_add(&g, &a), 0); /* two identical rows */
	CHECK_INT(sqseen_group_add(&g, &b), 0);
	/* The next query meets a twice and b once: all skipped, a third a and
	 * any c are new. */
	sqseen_group_new_pass(&g);
	CHECK(sqseen_group_seen(&g, &a));
	CHECK(sqseen_group_seen(&g, &b));
	CHECK(sqseen_group_seen(&g, &a));
	CHECK(!sqseen_group_seen(&g, &a));
	CHECK(!sqseen_group_seen(&g, &c));
	CHECK_INT(g.rows, 3);
	sqseen_group_reset(&g, 200);
	CHECK(!sqseen_group_seen(&g, &a));
	CHECK_INT(g.ts, 200);
	/* Bounded: the row after SQGROUP_MAX is refused. */
	for (uint64_t i = 0; i < SQGROUP_MAX; i++) {
		struct sqprint p = {i * 0x9e3779b97f4a7c15ULL, i};

		if (sqseen_group_add(&g, &p) != 0) {
			CHECK(0);
			break;
		}
	}
	CHECK(sqseen_group_full(&g));
	CHECK_INT(sqseen_group_add(&g, &c), -2);
	sqseen_group_new_pass(&g);
	{
		struct sqprint p = {77 * 0x9e3779b97f4a7c15ULL, 77};

		CHECK(sqseen_group_seen(&g, &p));
	}
	/* A new timestamp gives the large table back, and starts empty. */
	sqseen_group_reset(&g, 300);
	CHECK_INT(g.cap, 0);
	CHECK(!sqseen_group_seen(&g, &c));
	CHECK_INT(sqseen_group_add(&g, &c), 0);
	CHECK_INT(g.cap, 256);
	sqseen_group_free(&g);
}

static void test_ring(void)
{
	struct sqring r = {0};
	struct sqprint p = {9, 9};
	const struct sqprint *q;
	size_t n;
	int64_t id;

	for (int64_t i = 1; i <= SQRING_N + 5; i++)
		sqseen_ring_push(&r, i, &p, 3);
	CHECK_INT(sqseen_ring_len(&r), SQRING_N);
	sqseen_ring_get(&r, 0, &id, &q, &n);
	CHECK_INT(id, SQRING_N + 5);
	CHECK_INT(n, 3);
	sqseen_ring_get(&r, SQRING_N - 1, &id, &q, &n);
	CHECK_INT(id, 6);
	sqseen_ring_drop_newest(&r);
	sqseen_ring_get(&r, 0, &id, &q, &n);
	CHECK_INT(id, SQRING_N + 4);
	sqseen_ring_push(&r, 100, &p, 3);
	sqseen_ring_get(&r, 0, &id, &q, &n);
	CHECK_INT(id, 100);
	sqseen_ring_clear(&r);
	CHECK_INT(sqseen_ring_len(&r), 0);
}

int main(void)
{
	test_prints();
	test_group();
	test_ring();
	return testlib_done("test_sqseen");
}
