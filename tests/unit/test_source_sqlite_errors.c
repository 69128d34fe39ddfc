/* source_sqlite: bad input: configuration errors, missing databases and
 * tables, bad rows, schema changes and a replaced database, deletes, locks
 * and timeouts. */
#include "config/config.h"
#include "convert/javafmt.h"
#include "config/props.h"
#include "core/source.h"
#include "sources/sqlite/sqlitelib.h"

#include "sqlitefake.h"
#include "testlib.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

/* ---- bad input ---------------------------------------------------------------- */

static void expect_open_error(const char *props, const char *needle)
{
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512];

	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), -1);
	if (strstr(err, needle) == NULL)
		fprintf(stderr, "  error was: %s\n  expected: %s\n", err, needle);
	CHECK(strstr(err, needle) != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void expect_poll_code(const char *props, int code, const char *needle)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), code);
	if (strstr(err, needle) == NULL)
		fprintf(stderr, "  error was: %s\n  expected: %s\n", err, needle);
	CHECK(strstr(err, needle) != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* What a restart cannot fix: a person must act (exit 78). */
static void expect_poll_error(const char *props, const char *needle)
{
	expect_poll_code(props, SOURCE_ERR_CONFIG, needle);
}

static void test_config_errors(void)
{
	new_db("cfg.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, n INT, ts TEXT, b BLOB, s TEXT)");
	expect_open_error("table.whitelist=t\ntopic.prefix=p\n", "'mode'");
	expect_open_error("mode=increment\ntable.whitelist=t\ntopic.prefix=p\n", "is not one of");
	expect_open_error("mode=bulk\ntopic.prefix=p\n", "set table.whitelist");
	expect_open_error("mode=bulk\ntable.whitelist=t\nquery=SELECT 1\ntopic.prefix=p\n",
	                  "not both");
	expect_open_error("mode=bulk\ntable.whitelist=t\ntable.include.list=t\ntopic.prefix=p\n",
	                  "not both");
	expect_open_error("mode=bulk\ntable.whitelist=t\n", "topic.prefix is required");
	expect_open_error("mode=bulk\nquery=SELECT 1\ntopic.prefix=\n", "must not be empty");
	expect_open_error("mode=incrementing\nquery=SELECT 1\ntopic.prefix=q\n",
	                  "set incrementing.column.name");
	expect_open_error("mode=timestamp\ntable.whitelist=t\ntopic.prefix=p\n",
	                  "needs timestamp.column.name");
	expect_open_error("mode=bulk\ntable.whitelist=t,x,T\ntopic.prefix=p\n", "listed twice");
	expect_open_error("mode=bulk\ntable.whitelist=a b\ntopic.prefix=p\n",
	                  "not a valid Kafka topic name");
	expect_open_error(
	    "mode=bulk\ntable.whitelist=t\ntopic.prefix=p\ndb.timezone=Europe/Berlin\n",
	    "only UTC");
	expect_open_error("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\nbatch.max.rows=0\n",
	                  "out of range");
	expect_open_error("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\nunknown.key=1\n",
	                  "unknown.key");

	expect_poll_error(
	    "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	    "incrementing.column.name=nope\n",
	    "incrementing.column.name nope is not one of its columns (id, n, ts, b, s)");
	expect_poll_error("mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                  "incrementing.column.name=s\n",
	                  "not declared as an integer");
	expect_poll_error("mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                  "incrementing.column.name=n\n",
	                  "incrementing column n is nullable");
	expect_poll_error("mode=timestamp\ntable.whitelist=t\ntopic.prefix=p\n"
	                  "timestamp.column.name=ts\n",
	                  "timestamp column ts is nullable");
	expect_poll_error("mode=timestamp\ntable.whitelist=t\ntopic.prefix=p\n"
	                  "timestamp.column.name=ts,nope\nvalidate.non.null=false\n",
	                  "timestamp.column.name nope is not one of");
	expect_poll_error("mode=timestamp\ntable.whitelist=t\ntopic.prefix=p\n"
	                  "timestamp.column.name=b\nvalidate.non.null=false\n",
	                  "declared BLOB");
	expect_poll_error("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\nkey.column.name=k\n",
	                  "key.column.name k is not one of");
	expect_poll_error("mode=bulk\nquery=SELECT FROM nothing\ntopic.prefix=p\n",
	                  "query: preparing it");
	expect_poll_error("mode=bulk\nquery=SELECT * FROM t WHERE id > ?\ntopic.prefix=p\n",
	                  "it has parameters");
	expect_open_error("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\nquery.suffix=LIMIT 1\n",
	                  "query.suffix");
}

static void test_missing_db_and_table(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("later.db");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(sourceenv_fake_counted(&f, "database_missing") == 1);
	CHECK(strstr(f.lastlog, "waiting for it") != NULL);
	sql(dbpath, "CREATE TABLE other(x)");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(sourceenv_fake_counted(&f, "tables_missing") == 1);
	CHECK(strstr(f.lastlog, "tables there: other") != NULL);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK(sourceenv_fake_counted(&f, "tables_missing") == 1); /* warned once */
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'x')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	/* A non-database file. */
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
	new_db("notadb.db");
	testlib_write_file(dbpath, "this is not an SQLite database, not at all....", 46);
	/* ... may pass (the application writes its database there): 75. */
	expect_poll_code("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\n", SOURCE_ERR,
	                 "not a database");
}

static void test_bad_rows(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("badrows.db");
	sql(dbpath, "CREATE TABLE t(k INTEGER, v); INSERT INTO t VALUES (1,'a'),(2,'b'),"
	            "('three','c'),(4,'d'),(NULL,'e')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "incrementing.column.name=k\nvalidate.non.null=false\n",
	                   &ctx, err, sizeof(err)),
	          0);
	/* The rows before the bad one are delivered; the connector then stops
	 * with the reason, and its offset stays before the bad row. */
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 3);
	CHECK_STR(offj(ctx, &recs[2]), "{\"incrementing\":4}");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), SOURCE_ERR_CONFIG);
	CHECK(strstr(err, "not an integer") != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
	/* The same with worker batches of 2: the good rows still come first. */
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "incrementing.column.name=k\nvalidate.non.null=false\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 2, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK_INT(poll_once(ctx, &b, 2, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(int_field(&recs[0], "k"), 4);
	CHECK_INT(poll_once(ctx, &b, 2, err, sizeof(err)), SOURCE_ERR_CONFIG);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_schema_change_and_replaced_db(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], other[600];

	new_db("change.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'x')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	sql(dbpath, "ALTER TABLE t ADD COLUMN extra TEXT; INSERT INTO t VALUES (2, 'y', 'new')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "extra"), "\"new\"");
	CHECK(sourceenv_fake_counted(&f, "schema_changes") == 1);
	sql(dbpath, "ALTER TABLE t DROP COLUMN v; INSERT INTO t VALUES (3, 'z')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "v"), "(absent)");
	CHECK(sourceenv_fake_counted(&f, "schema_changes") == 2);

	/* Replaced by a database of other rows: its ids are read from their
	 * start. */
	snprintf(other, sizeof(other), "%s.new", dbpath);
	unlink(other);
	sql(other, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'again')");
	CHECK_INT(rename(other, dbpath), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "v"), "\"again\"");
	CHECK(sourceenv_fake_counted(&f, "database_reopened") == 1);
	CHECK(sourceenv_fake_counted(&f, "ids_reused") == 1);
	CHECK(strstr(f.lastlog, "reading the new ids from their start") != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* Dropping the mode's column stops the connector with the reason. */
	new_db("drop.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v);"
	            "INSERT INTO t VALUES (1, '2024-01-01', 'x')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "timestamp.column.name=ts\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	sql(dbpath, "ALTER TABLE t DROP COLUMN ts");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), SOURCE_ERR_CONFIG);
	CHECK(strstr(err, "timestamp.column.name ts is not one of its columns") != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* Never in the writers' way: after a poll no lock and no read transaction
 * remain; a locked database makes poll return quickly and retry later. */
static void test_locks(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	sqlite3 *w = NULL;
	int64_t t0;
	int busy = 0, total = 0;

	new_db("locks.db");
	sql(dbpath, "PRAGMA journal_mode=DELETE; CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	fill(1, 50);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "batch.max.rows=10\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 10);
	/* Rollback journal: an exclusive lock is only possible with no reader. */
	CHECK_INT(sqlite3_open(dbpath, &w), SQLITE_OK);
	CHECK_INT(sqlite3_exec(w, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	t0 = mono_ms();
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(mono_ms() - t0 < 1000);
	CHECK(sourceenv_fake_counted(&f, "database_busy") >= 1);
	CHECK_INT(sqlite3_exec(w, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < 50 && total < 40; i++) {
		int rc = poll_once(ctx, &b, 100, err, sizeof(err));

		busy += rc != 0;
		total += (int)b.n;
		/* Between polls a writer gets its exclusive lock at once. */
		CHECK_INT(sqlite3_exec(w, "BEGIN EXCLUSIVE; COMMIT", NULL, NULL, NULL), SQLITE_OK);
	}
	CHECK_INT(busy, 0);
	CHECK_INT(total, 40);
	sqlite3_close(w);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* WAL: after a poll a TRUNCATE checkpoint completes (no reader left). */
	new_db("wal.db");
	sql(dbpath, "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	CHECK_INT(sqlite3_open(dbpath, &w), SQLITE_OK);
	sqlite3_exec(w, "PRAGMA wal_autocheckpoint=0", NULL, NULL, NULL);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "batch.max.rows=10\n",
	                   &ctx, err, sizeof(err)),
	          0);
	for (int i = 0; i < 5; i++) {
		int log = -1, ckpt = -1;

		CHECK_INT(sqlite3_exec(w,
		                       "INSERT INTO t(v) SELECT randomblob(1000) FROM "
		                       "(SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)",
		                       NULL, NULL, NULL),
		          SQLITE_OK);
		CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
		CHECK_INT(b.n, 3);
		CHECK_INT(
		    sqlite3_wal_checkpoint_v2(w, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &ckpt),
		    SQLITE_OK);
		CHECK_INT(log, 0);
	}
	sqlite3_close(w);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_timeouts(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("timer.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n"
	                   "poll.interval.ms=700\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_INT(source_sqlite_ops.timeout_ms(ctx, 5), 0);
	b.records = recs;
	b.max = 10;
	CHECK_INT(source_sqlite_ops.poll(ctx, &b, 1000, err, sizeof(err)), 0);
	CHECK(!b.more);
	CHECK_INT(source_sqlite_ops.timeout_ms(ctx, 1000), 700);
	CHECK_INT(source_sqlite_ops.timeout_ms(ctx, 1500), 200);
	CHECK_INT(source_sqlite_ops.pollfds(ctx, NULL, 0), 0);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* Rows deleted without ids being reused: nothing is read again, nothing said. */
static void test_deletes_without_reuse(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	/* AUTOINCREMENT used as a queue: every row read is deleted. */
	new_db("queue.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
	            "INSERT INTO t(v) VALUES ('a'), ('b')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	sql(dbpath, "DELETE FROM t");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	sql(dbpath, "INSERT INTO t(v) VALUES ('c')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(int_field(&recs[0], "id"), 3);
	CHECK(sourceenv_fake_counted(&f, "ids_reused") == 0);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* Without AUTOINCREMENT: the last row read deleted, larger ids remain. */
	new_db("del.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v);"
	            "INSERT INTO t(v) VALUES ('a'), ('b')");
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	sql(dbpath, "INSERT INTO t(v) VALUES ('c'); DELETE FROM t WHERE id = 2");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(int_field(&recs[0], "id"), 3);
	/* The last row read updated in place: read again, said. */
	sql(dbpath, "UPDATE t SET v = 'changed' WHERE id = 3");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(int_field(&recs[0], "id"), 3);
	CHECK(sourceenv_fake_counted(&f, "ids_reused") == 1);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* After a restart: an AUTOINCREMENT sequence below the stored offset
	 * (the table dropped and created while skiff was stopped). */
	new_db("restart.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
	            "INSERT INTO t(v) VALUES ('new1'), ('new2')");
	sourceenv_fake_init(&f, "test");
	f.committed[0] = strdup("{\"incrementing\":5}");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK(sourceenv_fake_counted(&f, "ids_reused") == 1);
	CHECK(strstr(f.lastlog, "AUTOINCREMENT sequence is below the stored offset 5") != NULL);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
	/* The newest rows deleted while stopped: the sequence holds, no alarm. */
	sql(dbpath, "INSERT INTO t(v) VALUES ('3'), ('4'), ('5'); DELETE FROM t WHERE id > 3");
	sourceenv_fake_init(&f, "test");
	f.committed[0] = strdup("{\"incrementing\":5}");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(sourceenv_fake_counted(&f, "ids_reused") == 0);
	CHECK(sourceenv_fake_counted(&f, "offset_ahead_of_table") == 0);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* The application closes its last connection while skiff reads: it
 * believes itself alone (skiff holds no lock it can see), checkpoints and
 * deletes its -wal. The read is dropped, the position stays, and the rows
 * come once, from the database opened again. */
static sqlite3 *app_db;

static void close_app_during_read(struct sourceenv_fake *f, const char *line)
{
	(void)f;
	/* Logged while the batch's read transaction is open (the layout). */
	if (app_db != NULL && strncmp(line, "t: SELECT", 9) == 0) {
		CHECK_INT(sqlite3_close(app_db), SQLITE_OK);
		app_db = NULL;
	}
}

static void test_app_closes_during_read(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], wal[600];
	int64_t ids[64];
	size_t n;

	new_db("closing.db");
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	CHECK_INT(sqlite3_open(dbpath, &app_db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(app_db,
	                       "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v);"
	                       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
	                       "WHERE x<20) INSERT INTO t SELECT x, 'row ' || x FROM c",
	                       NULL, NULL, NULL),
	          SQLITE_OK);
	sourceenv_fake_init(&f, "test");
	f.on_log = close_app_during_read;
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK(app_db == NULL);
	CHECK(access(wal, F_OK) != 0); /* the application's close cleaned up */
	CHECK_INT(b.n, 0);
	CHECK_INT(sourceenv_fake_counted(&f, "database_reads_dropped"), 1);
	sql(dbpath, "INSERT INTO t VALUES (21, 'row 21'), (22, 'row 22')");
	n = drain(&f, ctx, 100, ids, 64);
	CHECK_INT(n, 22);
	for (size_t i = 0; i < n && i < 64; i++)
		CHECK_INT(ids[i], (int64_t)i + 1);
	CHECK(sourceenv_fake_counted(&f, "database_reopened") >= 1);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* A crashed application's hot rollback journal: a read-only reader cannot
 * roll it back (SQLITE_READONLY_ROLLBACK), nor can a read-only -shm be
 * recovered or initialised (SQLITE_READONLY_RECOVERY, _CANTINIT): the
 * application will, so the source waits as for a lock, never stops. */
static void test_hot_journal_waited_for(void)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], journal[600];
	int64_t ids[16];
	pid_t pid;

	new_db("hotjournal.db");
	snprintf(journal, sizeof(journal), "%s-journal", dbpath);
	sql(dbpath, "PRAGMA journal_mode=DELETE; CREATE TABLE t(id INTEGER PRIMARY KEY, v);"
	            "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
	pid = fork();
	if (pid == 0) {
		sqlite3 *w = NULL;

		/* Pages spill into the file, the originals are in the journal. */
		if (sqlite3_open(dbpath, &w) != SQLITE_OK ||
		    sqlite3_exec(w,
		                 "PRAGMA cache_size=1; BEGIN; WITH RECURSIVE c(x) AS (SELECT 10 "
		                 "UNION ALL SELECT x+1 FROM c WHERE x<400) INSERT INTO t SELECT x, "
		                 "randomblob(500) FROM c",
		                 NULL, NULL, NULL) != SQLITE_OK)
			_exit(2);
		_exit(0); /* crashed inside its transaction */
	}
	CHECK(waitpid(pid, NULL, 0) == pid);
	CHECK(access(journal, F_OK) == 0);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
		CHECK_INT(b.n, 0);
	}
	CHECK(sourceenv_fake_counted(&f, "database_busy") >= 3);
	CHECK(access(journal, F_OK) == 0); /* skiff rolled nothing back */
	/* The application comes back: its first read rolls the journal back. */
	sql(dbpath, "SELECT count(*) FROM t");
	CHECK(access(journal, F_OK) != 0);
	CHECK_INT(drain(&f, ctx, 100, ids, 16), 3);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

int main(void)
{
	test_config_errors();
	test_missing_db_and_table();
	test_bad_rows();
	test_schema_change_and_replaced_db();
	test_deletes_without_reuse();
	test_locks();
	test_timeouts();
	test_app_closes_during_read();
	test_hot_journal_waited_for();
	return testlib_done("test_source_sqlite_errors");
}
