/* sqvfs: the read-only VFS. A writer (the default VFS, in a child process,
 * as an application is: in one process SQLite shares the -shm mapping and
 * its locks between connections) and a reader through "skiff-ro" on the same
 * database: the reader reads every state a writer leaves, and changes
 * nothing of it: no file created, written, truncated, re-moded or deleted,
 * no lock the writer's close can see. */
#include "sources/sqlite/sqguard.h"
#include "sources/sqlite/sqvfs.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char db[512], wal[520], shm[520];

/* A file as the reader must leave it: -1 size when missing. */
struct look {
	long long size, mtime_ns;
	unsigned long ino;
	mode_t mode;
	unsigned long sum;
};

static struct look look_at(const char *path)
{
	struct look l = {.size = -1};
	struct stat st;
	FILE *f;
	int c;

	if (stat(path, &st) != 0)
		return l;
	l.size = st.st_size;
	l.mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	l.ino = (unsigned long)st.st_ino;
	l.mode = st.st_mode;
	if ((f = fopen(path, "rb")) != NULL) {
		while ((c = fgetc(f)) != EOF)
			l.sum = l.sum * 31 + (unsigned long)c;
		fclose(f);
	}
	return l;
}

static int same(struct look a, struct look b)
{
	return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ino == b.ino && a.mode == b.mode &&
	       a.sum == b.sum;
}

/* The application: a child process that runs the SQL it is sent. */
struct app {
	pid_t pid;
	FILE *to, *from;
};

static void app_serve(int in, int out)
{
	FILE *fi = fdopen(in, "r"), *fo = fdopen(out, "w");
	sqlite3 *w = NULL;
	char line[4096];

	while (fgets(line, sizeof(line), fi) != NULL) {
		char *err = NULL;
		int rc = SQLITE_OK;

		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, ".open") == 0)
			rc = sqlite3_open(db, &w);
		else if (strcmp(line, ".close") == 0)
			rc = sqlite3_close(w), w = NULL;
		else if (strcmp(line, ".crash") == 0)
			_exit(0); /* the connection left open: a hot -wal */
		else
			rc = sqlite3_exec(w, line, NULL, NULL, &err);
		fprintf(fo, "%d %s\n", rc, err ? err : "");
		fflush(fo);
		sqlite3_free(err);
	}
	_exit(0);
}

static struct app app_start(void)
{
	struct app a;
	int down[2], up[2];

	if (pipe(down) != 0 || pipe(up) != 0)
		exit(2);
	a.pid = fork();
	if (a.pid == 0) {
		close(down[1]);
		close(up[0]);
		app_serve(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	a.to = fdopen(down[1], "w");
	a.from = fdopen(up[0], "r");
	return a;
}

/* Sends one command; returns its SQLite result code. */
static int app(struct app *a, const char *cmd)
{
	char line[4096];
	int rc = -1;

	fprintf(a->to, "%s\n", cmd);
	fflush(a->to);
	if (fgets(line, sizeof(line), a->from) == NULL || sscanf(line, "%d", &rc) != 1)
		return -1;
	if (rc != SQLITE_OK)
		fprintf(stderr, "  app: %s: %s", cmd, line);
	return rc;
}

static void app_end(struct app *a)
{
	fclose(a->to);
	fclose(a->from);
	waitpid(a->pid, NULL, 0);
}

static struct app writer(void)
{
	struct app a = app_start();

	CHECK_INT(app(&a, ".open"), SQLITE_OK);
	CHECK_INT(app(&a, "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(id INTEGER "
	                  "PRIMARY KEY, v)"),
	          SQLITE_OK);
	return a;
}

static void insert(struct app *a, int n)
{
	char sql[200];

	snprintf(sql, sizeof(sql),
	         "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
	         "INSERT INTO t(v) SELECT randomblob(100) FROM c",
	         n);
	CHECK_INT(app(a, sql), SQLITE_OK);
}

static sqlite3 *reader(void)
{
	sqlite3 *r = NULL;

	CHECK_INT(sqvfs_register(), SQLITE_OK);
	CHECK_INT(sqlite3_open_v2(db, &r, SQLITE_OPEN_READONLY, SQVFS_NAME), SQLITE_OK);
	sqlite3_db_config(r, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	return r;
}

/* count(*) of t through r in one read transaction, checked by sqvfs_check;
 * -1 with the error printed. */
static long long count(sqlite3 *r, int *check)
{
	sqlite3_stmt *st = NULL;
	struct sqvfs_mark m;
	char why[200] = "";
	long long n = -1;
	int rc;

	sqvfs_mark(r, &m);
	rc = sqlite3_prepare_v2(r, "SELECT count(*) FROM t", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		fprintf(stderr, "  read: %s (%d)\n", sqlite3_errmsg(r), rc);
	if (check != NULL)
		*check = sqvfs_check(r, &m, why, sizeof(why));
	sqlite3_finalize(st);
	return n;
}

static void fresh(const char *name)
{
	snprintf(db, sizeof(db), "%s/%s", testlib_tmpdir(), name);
	snprintf(wal, sizeof(wal), "%s-wal", db);
	snprintf(shm, sizeof(shm), "%s-shm", db);
}

/* The writer's close beside an open reader checkpoints and deletes the
 * -wal and -shm, as it does alone. */
static void test_close_beside_reader(void)
{
	struct app w;
	sqlite3 *r;
	char why[200] = "";

	fresh("close.db");
	w = writer();
	insert(&w, 100);
	r = reader();
	CHECK_INT(count(r, NULL), 100);
	insert(&w, 50);
	CHECK_INT(count(r, NULL), 150);
	CHECK_INT(app(&w, ".close"), SQLITE_OK);
	app_end(&w);
	CHECK_INT(look_at(wal).size, -1);
	CHECK_INT(look_at(shm).size, -1);
	/* The reader's files are gone: it must open again. */
	CHECK_INT(sqvfs_check(r, NULL, why, sizeof(why)), SQVFS_STALE);
	CHECK(strstr(why, "deleted the -wal") != NULL);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
}

/* A WAL database whose application closed cleanly: read from the file, no
 * -wal or -shm created, nothing changed. */
static void test_quiescent_wal(void)
{
	struct app w;
	sqlite3 *r;
	struct look before;
	char why[200] = "";
	int check = -1;

	fresh("quiet.db");
	w = writer();
	insert(&w, 10);
	CHECK_INT(app(&w, ".close"), SQLITE_OK);
	before = look_at(db);
	r = reader();
	CHECK_INT(count(r, &check), 10);
	CHECK_INT(check, SQVFS_SOUND);
	CHECK_INT(look_at(wal).size, -1);
	CHECK_INT(look_at(shm).size, -1);
	CHECK(same(before, look_at(db)));
	/* The application opens it again and writes: the reader reopens. */
	CHECK_INT(app(&w, ".open"), SQLITE_OK);
	insert(&w, 5);
	CHECK_INT(sqvfs_check(r, NULL, why, sizeof(why)), SQVFS_STALE);
	CHECK(strstr(why, "a -wal appeared") != NULL);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	r = reader();
	CHECK_INT(count(r, &check), 15);
	CHECK_INT(check, SQVFS_SOUND);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	app_end(&w);
}

/* A hot WAL left by a killed application: read with its frames, and the
 * -wal, -shm and database left byte for byte, time for time. */
static void test_hot_wal_after_crash(void)
{
	struct app w;
	struct look d, l, s;
	sqlite3 *r;
	int check = -1;

	fresh("hot.db");
	w = writer();
	insert(&w, 30);
	app(&w, ".crash");
	app_end(&w);
	d = look_at(db);
	l = look_at(wal);
	s = look_at(shm);
	CHECK(l.size > 0);
	r = reader();
	CHECK_INT(count(r, &check), 30);
	CHECK_INT(check, SQVFS_SOUND);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	CHECK(same(d, look_at(db)));
	CHECK(same(l, look_at(wal)));
	CHECK(same(s, look_at(shm)));
}

/* A live writer with frames past every read mark: the reader reads them
 * and writes no read mark into the -shm. */
static void test_live_writer_shm_untouched(void)
{
	struct app w;
	sqlite3 *r;
	struct look s;
	int check = -1;

	fresh("live.db");
	w = writer();
	insert(&w, 20);
	CHECK_INT(app(&w, "PRAGMA wal_checkpoint(TRUNCATE)"), SQLITE_OK);
	insert(&w, 7); /* after the writer's last read: no mark covers it */
	s = look_at(shm);
	r = reader();
	CHECK_INT(count(r, &check), 27);
	CHECK_INT(check, SQVFS_SOUND);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	CHECK(same(s, look_at(shm)));
	app_end(&w);
}

/* An empty -shm with another mode than the database: SQLite would set its
 * mode when it opens it (robust_open); through the VFS it stays. */
static void test_no_chmod_no_create(void)
{
	struct app w;
	sqlite3 *r;
	struct look s;

	fresh("mode.db");
	w = writer();
	insert(&w, 3);
	CHECK_INT(app(&w, ".close"), SQLITE_OK);
	app_end(&w);
	testlib_write_file(shm, "", 0);
	CHECK(chmod(shm, 0600) == 0);
	s = look_at(shm);
	r = reader();
	CHECK_INT(count(r, NULL), 3);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	CHECK(same(s, look_at(shm)));
	CHECK_INT(look_at(wal).size, -1);
}

/* A write or a checkpoint through the VFS changes nothing. */
static void test_writes_refused(void)
{
	struct app w;
	sqlite3 *r;
	struct look l;

	fresh("refuse.db");
	w = writer();
	insert(&w, 1);
	r = reader();
	CHECK_INT(count(r, NULL), 1);
	l = look_at(wal);
	CHECK(sqlite3_exec(r, "INSERT INTO t(v) VALUES (1)", NULL, NULL, NULL) != SQLITE_OK);
	(void)sqlite3_exec(r, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	CHECK_INT(count(r, NULL), 1);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	CHECK(same(l, look_at(wal)));
	app_end(&w);
}

/* A writer that holds the database exclusively (locking_mode=EXCLUSIVE):
 * a read beside it is not trusted. */
static void test_exclusive_writer_seen(void)
{
	struct app w;
	sqlite3 *r;
	char why[200] = "";
	int check = -1;

	fresh("excl.db");
	w = writer();
	insert(&w, 4);
	r = reader();
	CHECK_INT(count(r, &check), 4);
	CHECK_INT(check, SQVFS_SOUND);
	CHECK_INT(app(&w, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT"), SQLITE_OK);
	CHECK_INT(sqvfs_check(r, NULL, why, sizeof(why)), SQVFS_HELD);
	CHECK(strstr(why, "exclusively") != NULL);
	CHECK_INT(sqlite3_close(r), SQLITE_OK);
	app_end(&w);
}

int main(void)
{
	sqguard_install();
	test_close_beside_reader();
	test_quiescent_wal();
	test_hot_wal_after_crash();
	test_live_writer_shm_untouched();
	test_no_chmod_no_create();
	test_writes_refused();
	test_exclusive_writer_seen();
	return testlib_done("test_sqvfs");
}
