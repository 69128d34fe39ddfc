/* source_sqlite: every mode against temporary databases (incrementing,
 * timestamp, both, query), batches, restarts from committed offsets, equal
 * timestamps across batch boundaries, several tables, quoted names. */
#include "config/config.h"
#include "convert/javafmt.h"
#include "config/props.h"
#include "core/source.h"
#include "sources/sqlite/sqlts.h"
#include "sqlitefake.h"
#include "testlib.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

/* ---- modes ------------------------------------------------------------------- */

static void test_incrementing(void)
{
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[4000];
	size_t n;
	bool ordered = true;

	new_db("inc.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
	fill(1, 2500);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=db-\n"
	                   "batch.max.rows=1000\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_STR(f.parts[0], "{\"protocol\":\"1\",\"table\":\"t\"}");
	n = drain(&f, ctx, 1024, ids, 4000);
	CHECK_INT(n, 2500);
	for (size_t i = 0; i < n && i < 4000; i++)
		ordered = ordered && ids[i] == (int64_t)i + 1;
	CHECK(ordered);
	CHECK_STR(f.committed[0], "{\"incrementing\":2500}");
	CHECK_STR(recs[0].topic, "db-t");
	source_sqlite_ops.close(ctx);

	/* Restart from the committed offset: only new rows. */
	fill(2501, 2600);
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=db-\n", &ctx,
	                   err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 1024, ids, 4000);
	CHECK_INT(n, 100);
	CHECK_INT(ids[0], 2501);
	CHECK_INT(ids[99], 2600);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_hidden_rowid_and_worker_max(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("rowid.db");
	sql(dbpath,
	    "CREATE TABLE t(id INT, v TEXT); INSERT INTO t VALUES (10,'a'),(5,'b'),(7,'c')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=\n", &ctx, err,
	                   sizeof(err)),
	          0);
	/* The worker may lower batch->max below batch.max.rows. */
	CHECK_INT(poll_once(ctx, &b, 2, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK(b.more);
	CHECK_STR(recs[0].topic, "t");
	CHECK_INT(int_field(&recs[0], "id"), 10);
	CHECK_STR(offj(ctx, &recs[1]), "{\"incrementing\":2}");
	CHECK_INT(poll_once(ctx, &b, 2, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(int_field(&recs[0], "id"), 7);
	CHECK(!b.more);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_timestamp_groups(const char *create, const char *rows, size_t worker_max)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	static char *offs[64];
	static int64_t seen[64];
	char props[512], want[128];
	const char *seen_at;
	size_t n = 0;

	new_db("ts.db");
	sql(dbpath, create);
	/* ts: 1 x1, 2 x5, 3 x1, 4 x4 (seconds since 2024-01-01, as text). */
	sql(dbpath,
	    "INSERT INTO t(id, ts) VALUES "
	    "(1,'2024-01-01 00:00:01'),(2,'2024-01-01T00:00:02Z'),(3,'2024-01-01 00:00:02'),"
	    "(4,'2024-01-01 02:00:02+02:00'),(5,'2024-01-01 00:00:02.000'),"
	    "(6,1704067202),(7,'2024-01-01 00:00:03'),(8,'2024-01-01 00:00:04'),"
	    "(9,'2024-01-01 00:00:04'),(10,1704067204000),(11,'2024-01-01 00:00:04')");
	sourceenv_fake_init(&f, "test");
	snprintf(props, sizeof(props),
	         "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	         "timestamp.column.name=ts\nbatch.max.rows=%s\n",
	         rows);
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	for (int round = 0; round < 20; round++) {
		CHECK_INT(poll_once(ctx, &b, worker_max, err, sizeof(err)), 0);
		for (size_t i = 0; i < b.n && n < 64; i++, n++) {
			offs[n] = source_sqlite_ops.offset_json(ctx, &recs[i].offset);
			seen[n] = int_field(&recs[i], "id");
		}
		if (b.n == 0 && !b.more)
			break;
	}
	CHECK_INT(n, 11);
	/* Record 2 (ts 2, the group goes on) carries ts 1, the last complete one;
	 * a table with a rowid the largest one looked at (11, at the start). */
	seen_at = strstr(create, "WITHOUT ROWID") ? "}" : ",\"rowid_seen\":11}";
	snprintf(want, sizeof(want), "{\"timestamp_nanos\":0,\"timestamp\":1704067201000%s",
	         seen_at);
	CHECK_STR(offs[0], want);
	if (strcmp(rows, "3") == 0) {
		CHECK_STR(offs[1], want);
		snprintf(want, sizeof(want), "{\"timestamp_nanos\":0,\"timestamp\":1704067202000%s",
		         seen_at);
		CHECK_STR(offs[5], want);
	}
	snprintf(want, sizeof(want), "{\"timestamp_nanos\":0,\"timestamp\":1704067204000%s",
	         seen_at);
	CHECK_STR(offs[10], want);
	source_sqlite_ops.close(ctx);

	/* Restart after every possible last-acknowledged record: the rows after it
	 * all come back (duplicates allowed, losses not). */
	for (size_t k = 0; k < n; k++) {
		static int64_t ids[64];
		size_t m;
		bool ok = true;

		free(f.committed[0]);
		f.committed[0] = strdup(offs[k]);
		CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
		m = drain(&f, ctx, worker_max, ids, 64);
		for (size_t j = k + 1; j < n; j++) {
			bool found = false;

			for (size_t q = 0; q < m; q++)
				found = found || ids[q] == seen[j];
			ok = ok && found;
		}
		CHECK(ok);
		source_sqlite_ops.close(ctx);
	}
	for (size_t k = 0; k < n; k++)
		free(offs[k]);
	sourceenv_fake_free(&f);
}

static void test_timestamp_incrementing(void)
{
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[64];
	size_t n;

	new_db("tsi.db");
	sql(dbpath,
	    "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, v);"
	    "INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:02', 1), ('2024-01-01 00:00:01', 2),"
	    "('2024-01-01 00:00:02', 3), ('2024-01-01 00:00:02', 4), ('2024-01-01 00:00:03', 5)");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp+incrementing\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\nincrementing.column.name=id\n"
	                   "batch.max.rows=2\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 64);
	CHECK_INT(n, 5);
	CHECK_INT(ids[0], 2);
	CHECK_INT(ids[1], 1);
	CHECK_INT(ids[2], 3);
	CHECK_INT(ids[3], 4);
	CHECK_INT(ids[4], 5);
	CHECK_STR(f.committed[0],
	          "{\"timestamp_nanos\":0,\"incrementing\":5,\"timestamp\":1704067203000}");
	source_sqlite_ops.close(ctx);
	/* Restart in the middle of the ts=2 group: (ts = 2 AND id > 3) OR ts > 2. */
	free(f.committed[0]);
	f.committed[0] =
	    strdup("{\"timestamp_nanos\":0,\"incrementing\":3,\"timestamp\":1704067202000}");
	/* An update moves row 1 forward: timestamp modes see changed rows. */
	sql(dbpath, "UPDATE t SET ts = '2024-01-01 00:00:09' WHERE id = 1");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp+incrementing\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\nincrementing.column.name=id\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 64);
	CHECK_INT(n, 3);
	CHECK_INT(ids[0], 4);
	CHECK_INT(ids[1], 5);
	CHECK_INT(ids[2], 1);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* The rows a wrong clock hides (sqclock.c): a new row stamped behind the
 * position comes at once, with the position as its offset; a row stamped in
 * the future waits and is counted; both in timestamp+incrementing mode (the
 * id, also after a restart) and in timestamp mode (the rowid). */
static void test_clock_rows(const char *mode, const char *behind_offset)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], props[300];

	new_db("clock.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, v);"
	            "INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:01', 1), "
	            "('2024-01-01 00:00:02', 2), ('2024-01-01 00:00:03', 3)");
	snprintf(props, sizeof(props),
	         "mode=%s\ntable.whitelist=t\ntopic.prefix=p.\ntimestamp.column.name=ts\n"
	         "incrementing.column.name=id\n",
	         mode);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(drain(&f, ctx, 100, NULL, 0), 3);
	sql(dbpath, "INSERT INTO t(ts, v) VALUES ('1970-01-02 00:00:00', 4), "
	            "('2099-01-01 00:00:00', 5), ('2024-01-01 00:00:04', 6)");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK_INT(int_field(&recs[0], "id"), 4);
	/* The position, never moved back: in timestamp+incrementing with the
	 * row's id, as no unread row lies between (a restart does not send it
	 * again). */
	CHECK_STR(offj(ctx, &recs[0]), behind_offset);
	CHECK_INT(int_field(&recs[1], "id"), 6);
	for (size_t i = 0; i < b.n; i++)
		commit(&f, ctx, &recs[i]);
	CHECK_INT(sourceenv_fake_counted(&f, "rows_behind_offset"), 1);
	CHECK_INT(sourceenv_fake_counted(&f, "rows_in_future"), 1);
	CHECK(strstr(f.lastlog, "rows have a timestamp after now") != NULL);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0); /* each once */
	source_sqlite_ops.close(ctx);
	/* Stopped: a row stamped behind the offset comes meanwhile. Its id
	 * tells it after a restart; in timestamp mode its rowid above the
	 * offset's rowid_seen. */
	sql(dbpath, "INSERT INTO t(ts, v) VALUES ('1970-01-03 00:00:00', 7)");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.n == 1 ? int_field(&recs[0], "id") : 0, 7);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* timestamp+incrementing: a row behind the position while rows stamped
 * with the position's timestamp wait unread between (a batch split them):
 * its offset keeps the position's id, so a restart from it loses none of
 * them. */
static void test_clock_row_with_rows_between(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[16];
	const char *props = "mode=timestamp+incrementing\ntable.whitelist=t\ntopic.prefix=p.\n"
	                    "timestamp.column.name=ts\nincrementing.column.name=id\n"
	                    "batch.max.rows=2\n";

	new_db("between.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL);"
	            "INSERT INTO t(ts) VALUES ('2024-01-01 00:00:05'), ('2024-01-01 00:00:05'), "
	            "('2024-01-01 00:00:05'), ('2024-01-01 00:00:05')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	for (size_t i = 0; i < b.n; i++)
		commit(&f, ctx, &recs[i]);
	sql(dbpath, "INSERT INTO t(ts) VALUES ('1970-01-02 00:00:00')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK_INT(int_field(&recs[0], "id"), 5);
	CHECK_STR(offj(ctx, &recs[0]),
	          "{\"timestamp_nanos\":0,\"incrementing\":2,\"timestamp\":1704067205000}");
	CHECK_INT(b.n == 2 ? int_field(&recs[1], "id") : 0, 3);
	commit(&f, ctx, &recs[0]);
	source_sqlite_ops.close(ctx);
	/* Stopped after the row behind: rows 3 and 4 come, then 5 again. */
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(drain(&f, ctx, 100, ids, 16), 3);
	CHECK_INT(ids[0], 3);
	CHECK_INT(ids[1], 4);
	CHECK_INT(ids[2], 5);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_delay_and_initial(void)
{
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512], buf[512];
	static int64_t ids[16];
	int64_t now = (int64_t)time(NULL);
	size_t n;

	new_db("delay.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL)");
	snprintf(buf, sizeof(buf), "INSERT INTO t VALUES (1, %lld), (2, %lld), (3, %lld)",
	         (long long)(now - 100), (long long)(now - 2) * 1000, (long long)(now + 1000));
	sql(dbpath, buf);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\ntimestamp.delay.interval.ms=30000\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 1); /* row 2 is within the delay, row 3 in the future */
	CHECK_INT(ids[0], 1);
	/* A late row behind the newest read but inside the delay window is read
	 * once the window passes it; here: zero delay on restart. */
	snprintf(buf, sizeof(buf), "INSERT INTO t VALUES (4, %lld)", (long long)(now - 50));
	sql(dbpath, buf);
	source_sqlite_ops.close(ctx);
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 2);
	CHECK_INT(ids[0], 4);
	CHECK_INT(ids[1], 2);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* timestamp.initial=-1: only rows from now on. */
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\ntimestamp.initial=-1\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 0);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
	sourceenv_fake_init(&f, "test");
	snprintf(buf, sizeof(buf),
	         "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	         "timestamp.column.name=ts\ntimestamp.initial=%lld\n",
	         (long long)(now - 60) * 1000);
	CHECK_INT(open_src(&f, buf, &ctx, err, sizeof(err)), 0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 2);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_query_mode(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], *sc;

	new_db("query.db");
	sql(dbpath, "CREATE TABLE a(id INTEGER PRIMARY KEY, v INT NOT NULL);"
	            "CREATE TABLE n(id INTEGER PRIMARY KEY, name TEXT);"
	            "INSERT INTO a VALUES (1, 5), (2, -1), (3, 7);"
	            "INSERT INTO n VALUES (1, 'one'), (2, 'two'), (3, 'three')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntopic.prefix=joined\nincrementing.column.name=id\n"
	                   "query=SELECT a.id, a.v, n.name FROM a JOIN n ON n.id = a.id "
	                   "WHERE a.v > 0;\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_STR(f.parts[0], "{\"query\":\"query\"}");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK_STR(recs[0].topic, "joined");
	CHECK_STR(field(&recs[1], "name"), "\"three\"");
	sc = cJSON_PrintUnformatted(recs[0].value.schema);
	CHECK_STR(sc, "{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":true,"
	              "\"field\":\"id\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"v\"},"
	              "{\"type\":\"string\",\"optional\":true,\"field\":\"name\"}],"
	              "\"optional\":false}");
	free(sc);
	commit(&f, ctx, &recs[1]);
	source_sqlite_ops.close(ctx);
	sql(dbpath, "INSERT INTO a VALUES (4, 9); INSERT INTO n VALUES (4, 'four')");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntopic.prefix=joined\nincrementing.column.name=id\n"
	                   "query=SELECT a.id, a.v, n.name FROM a JOIN n ON n.id = a.id "
	                   "WHERE a.v > 0\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "name"), "\"four\"");
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* Timestamp mode over a query: no rowid, equal timestamps page by OFFSET. */
	sql(dbpath, "CREATE TABLE e(id INT, ts TEXT);"
	            "INSERT INTO e VALUES (1,'2024-01-01'),(2,'2024-01-02'),(3,'2024-01-02'),"
	            "(4,'2024-01-02'),(5,'2024-01-02'),(6,'2024-01-03')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntopic.prefix=e\ntimestamp.column.name=ts\n"
	                   "batch.max.rows=2\nquery=SELECT * FROM e\n",
	                   &ctx, err, sizeof(err)),
	          0);
	{
		static int64_t ids[16];
		size_t n = drain(&f, ctx, 100, ids, 16);
		bool all = n == 6;

		for (int want = 1; want <= 6 && all; want++) {
			bool found = false;

			for (size_t i = 0; i < n; i++)
				found = found || ids[i] == want;
			all = found;
		}
		CHECK(all);
		CHECK_INT(n, 6);
	}
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_without_rowid(void)
{
	test_timestamp_groups("CREATE TABLE t(id INT PRIMARY KEY, ts NOT NULL) WITHOUT ROWID", "3",
	                      100);
	test_timestamp_groups("CREATE TABLE t(id INT PRIMARY KEY, ts NOT NULL) WITHOUT ROWID", "4",
	                      3);
}

/* skiff_ts() on values as an application might store them. */
static void test_ts_function(void)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	const char *sqls[] = {
	    "SELECT skiff_ts('1704067203')",
	    "SELECT skiff_ts(' 1704067203000 ')",
	    "SELECT skiff_ts('1704067203.5')",
	    "SELECT skiff_ts(1704067203.5)",
	    "SELECT skiff_ts('2024-01-01 00:00:03')",
	    "SELECT skiff_ts(NULL)",
	    "SELECT skiff_ts('12/31/2023')",
	    "SELECT skiff_ts(x'00')",
	    "SELECT skiff_ts('1e5')",
	};
	const int64_t want[] = {1704067203000000000LL,
	                        1704067203000000000LL,
	                        1704067203500000000LL,
	                        1704067203500000000LL,
	                        1704067203000000000LL,
	                        -1,
	                        -2,
	                        -2,
	                        -2};

	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK_INT(sqlts_register(db, NULL), SQLITE_OK);
	for (size_t i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
		int rc;

		CHECK_INT(sqlite3_prepare_v2(db, sqls[i], -1, &st, NULL), SQLITE_OK);
		rc = sqlite3_step(st);
		if (want[i] == -2) {
			/* Not an SQL error, which would fail the query for every row:
			 * a place after every instant, where the reader stops. */
			CHECK(rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == SQLTS_BAD);
		} else if (want[i] == -1) {
			CHECK(rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL);
		} else {
			CHECK(rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == want[i]);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

/* Two tables: a partition and a topic each; COALESCE of two timestamp
 * columns; NULL positions are counted when not refused. */
static void test_two_tables_and_coalesce(void)
{
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[16];
	size_t n;

	new_db("two.db");
	sql(dbpath,
	    "CREATE TABLE a(id INTEGER PRIMARY KEY, created TEXT NOT NULL, updated TEXT);"
	    "CREATE TABLE b(id INTEGER PRIMARY KEY, created TEXT, updated TEXT);"
	    "INSERT INTO a VALUES (1, '2024-01-01 00:00:05', NULL),"
	    "(2, '2024-01-01 00:00:01', '2024-01-01 00:00:09'), (3, '2024-01-01 00:00:07', NULL);"
	    "INSERT INTO b VALUES (1, '2024-01-01', NULL), (2, NULL, NULL)");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=a, b\ntopic.prefix=two.\n"
	                   "timestamp.column.name=updated,created\nvalidate.non.null=false\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(f.nparts, 2);
	CHECK_STR(f.parts[1], "{\"protocol\":\"1\",\"table\":\"b\"}");
	{
		struct source_batch bt;

		CHECK_INT(poll_once(ctx, &bt, 100, err, sizeof(err)), 0);
		CHECK_INT(bt.n, 4);
		/* a by COALESCE(updated, created): 1 (05), 3 (07), 2 (09); then b. */
		CHECK_STR(recs[0].topic, "two.a");
		CHECK_INT(int_field(&recs[0], "id"), 1);
		CHECK_INT(int_field(&recs[1], "id"), 3);
		CHECK_INT(int_field(&recs[2], "id"), 2);
		CHECK_STR(recs[3].topic, "two.b");
		for (size_t i = 0; i < bt.n; i++)
			commit(&f, ctx, &recs[i]);
	}
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 0);
	CHECK(sourceenv_fake_counted(&f, "rows_without_position") == 1); /* b's row 2 */
	CHECK_STR(f.committed[0],
	          "{\"timestamp_nanos\":0,\"timestamp\":1704067209000,\"rowid_seen\":3}");
	CHECK_STR(f.committed[1],
	          "{\"timestamp_nanos\":0,\"timestamp\":1704067200000,\"rowid_seen\":2}");
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_quoted_identifiers(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("quoted.db");
	sql(dbpath, "CREATE TABLE \"my.table-1\"(\"select\" INTEGER PRIMARY KEY, "
	            "\"we\"\"ird col\" TEXT NOT NULL);"
	            "INSERT INTO \"my.table-1\" VALUES (1, 'a'), (2, 'b')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp+incrementing\ntable.whitelist=my.table-1\n"
	                   "topic.prefix=\nincrementing.column.name=select\n"
	                   "timestamp.column.name=we\"ird col\nvalidate.non.null=true\n",
	                   &ctx, err, sizeof(err)),
	          0);
	/* 'a' is not a timestamp: a clear error, not a silent skip, once the
	 * rows before it (none here) are handed out; a person must fix it. */
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), SOURCE_ERR_CONFIG);
	CHECK(strstr(err, "table my.table-1: select 1: timestamp column we\"ird col") != NULL);
	CHECK(strstr(err, "'a' is not a timestamp") != NULL);
	CHECK(strstr(err, "ISO-8601") != NULL);
	source_sqlite_ops.close(ctx);
	sql(dbpath,
	    "UPDATE \"my.table-1\" SET \"we\"\"ird col\" = '2024-01-01 00:00:0' || \"select\"");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp+incrementing\ntable.whitelist=my.table-1\n"
	                   "topic.prefix=\nincrementing.column.name=select\n"
	                   "timestamp.column.name=we\"ird col\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK_STR(recs[0].topic, "my.table-1");
	CHECK_STR(field(&recs[1], "we\"ird col"), "\"2024-01-01 00:00:02\"");
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

int main(void)
{
	test_incrementing();
	test_hidden_rowid_and_worker_max();
	test_timestamp_groups("CREATE TABLE t(id INTEGER PRIMARY KEY, ts NOT NULL)", "3", 100);
	/* batch.max.rows above the worker's batch: rows wait in the source. */
	test_timestamp_groups("CREATE TABLE t(id INTEGER PRIMARY KEY, ts NOT NULL)", "5", 2);
	test_without_rowid();
	test_timestamp_incrementing();
	test_clock_rows("timestamp+incrementing",
	                "{\"timestamp_nanos\":0,\"incrementing\":4,\"timestamp\":1704067203000}");
	test_clock_row_with_rows_between();
	test_clock_rows("timestamp",
	                "{\"timestamp_nanos\":0,\"timestamp\":1704067203000,\"rowid_seen\":4}");
	test_delay_and_initial();
	test_query_mode();
	test_ts_function();
	test_two_tables_and_coalesce();
	test_quoted_identifiers();
	return testlib_done("test_source_sqlite_modes");
}
