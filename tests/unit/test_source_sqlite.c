/* source_sqlite: every mode against temporary databases, with a fake worker
 * environment: batches, restarts from committed offsets, equal timestamps
 * across batch boundaries, values and schemas, and the bad-input cases. */
#include "config.h"
#include "javafmt.h"
#include "props.h"
#include "source.h"
#include "source_sqlite.h"
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

extern const struct source_ops source_sqlite_ops;

/* ---- a fake worker ---------------------------------------------------------- */

#define MAXP 8
#define MAXC 16

struct fake {
	struct source_env env;
	char *parts[MAXP];
	char *committed[MAXP];
	size_t nparts;
	const char *cnames[MAXC];
	uint64_t cvals[MAXC];
	size_t ncounts;
	char lastlog[1024];
	int nlogs;
};

static struct partition *f_partition(struct source_env *env, const char *json)
{
	struct fake *f = env->opaque;

	for (size_t i = 0; i < f->nparts; i++)
		if (strcmp(f->parts[i], json) == 0)
			return (struct partition *)(uintptr_t)(i + 1);
	if (f->nparts == MAXP)
		return NULL;
	f->parts[f->nparts] = strdup(json);
	return (struct partition *)(uintptr_t)(++f->nparts);
}

static const char *f_committed(struct source_env *env, struct partition *p)
{
	struct fake *f = env->opaque;

	return f->committed[(uintptr_t)p - 1];
}

static void f_count(struct source_env *env, const char *name, uint64_t n)
{
	struct fake *f = env->opaque;

	for (size_t i = 0; i < f->ncounts; i++)
		if (strcmp(f->cnames[i], name) == 0) {
			f->cvals[i] += n;
			return;
		}
	if (f->ncounts < MAXC) {
		f->cnames[f->ncounts] = name;
		f->cvals[f->ncounts++] = n;
	}
}

static void f_log(struct source_env *env, int level, const char *fmt, ...)
{
	struct fake *f = env->opaque;
	va_list ap;

	(void)level;
	va_start(ap, fmt);
	vsnprintf(f->lastlog, sizeof(f->lastlog), fmt, ap);
	va_end(ap);
	f->nlogs++;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "  log: %s\n", f->lastlog);
}

static uint64_t counted(struct fake *f, const char *name)
{
	for (size_t i = 0; i < f->ncounts; i++)
		if (strcmp(f->cnames[i], name) == 0)
			return f->cvals[i];
	return 0;
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->env = (struct source_env){.opaque = f,
	                             .connector = "test",
	                             .partition = f_partition,
	                             .committed = f_committed,
	                             .count = f_count,
	                             .log = f_log};
}

static void fake_free(struct fake *f)
{
	for (size_t i = 0; i < f->nparts; i++) {
		free(f->parts[i]);
		free(f->committed[i]);
	}
}

/* Commits off as the worker would after an ack of the record. */
static void commit(struct fake *f, void *ctx, const struct record *r)
{
	size_t i = (uintptr_t)r->part - 1;

	free(f->committed[i]);
	f->committed[i] = source_sqlite_ops.offset_json(ctx, &r->offset);
}

/* ---- helpers ------------------------------------------------------------------ */

static char dbpath[512];

static void sql(const char *path, const char *text)
{
	sqlite3 *db = NULL;
	char *err = NULL;

	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sql failed: %s: %s\n", text, err ? err : sqlite3_errmsg(db));
		exit(2);
	}
	sqlite3_close(db);
}

static void new_db(const char *name)
{
	snprintf(dbpath, sizeof(dbpath), "%s/%s", testlib_tmpdir(), name);
	unlink(dbpath);
}

/* Opens the source with properties text (connection.url is added). */
static int open_src(struct fake *f, const char *text, void **ctx, char *err, size_t errlen)
{
	const struct config_key *tables[] = {source_sqlite_ops.config_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 1};
	struct config_section *cfg = NULL;
	struct props *p = NULL;
	char buf[4096];
	int rc;

	snprintf(buf, sizeof(buf), "connection.url=jdbc:sqlite:%s\n%s", dbpath, text);
	err[0] = '\0';
	*ctx = NULL;
	if (props_load_mem("test.properties", buf, strlen(buf), &p, err, errlen) != 0 ||
	    config_section_load(p, &spec, &cfg, err, errlen) != 0) {
		props_destroy(p);
		return -1;
	}
	rc = source_sqlite_ops.open(cfg, &f->env, ctx, err, errlen);
	config_section_destroy(cfg);
	props_destroy(p);
	return rc;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One poll with a batch of max records; now is far ahead so timers fire. */
static struct record recs[2048];

static int poll_once(void *ctx, struct source_batch *b, size_t max, char *err, size_t errlen)
{
	static int64_t t = 1000000;

	b->records = recs;
	b->max = max;
	b->n = 0;
	t += 100000;
	return source_sqlite_ops.poll(ctx, b, t, err, errlen);
}

static char *payload_text(const struct record *r)
{
	return cJSON_PrintUnformatted(r->value.payload);
}

/* The value of field name of r's payload as printed JSON (static buffer). */
static const char *field(const struct record *r, const char *name)
{
	static char buf[256];
	cJSON *it = cJSON_GetObjectItemCaseSensitive(r->value.payload, name);
	char *s = it ? cJSON_PrintUnformatted(it) : NULL;

	snprintf(buf, sizeof(buf), "%s", s ? s : "(absent)");
	free(s);
	return buf;
}

/* offset_json as a static string. */
static const char *offj(void *ctx, const struct record *r)
{
	static char buf[256];
	char *j = source_sqlite_ops.offset_json(ctx, &r->offset);

	snprintf(buf, sizeof(buf), "%s", j ? j : "(null)");
	free(j);
	return buf;
}

static int64_t int_field(const struct record *r, const char *name)
{
	return strtoll(field(r, name), NULL, 10);
}

/* Polls until nothing is left, committing every record; returns the ids (field
 * id) seen, in order, in ids[]. */
static size_t drain(struct fake *f, void *ctx, size_t max, int64_t *ids, size_t cap)
{
	struct source_batch b;
	char err[512];
	size_t n = 0;

	for (int rounds = 0; rounds < 10000; rounds++) {
		if (poll_once(ctx, &b, max, err, sizeof(err)) != 0) {
			fprintf(stderr, "poll error: %s\n", err);
			CHECK(0);
			break;
		}
		for (size_t i = 0; i < b.n; i++) {
			if (n < cap)
				ids[n] = int_field(&recs[i], "id");
			n++;
			commit(f, ctx, &recs[i]);
		}
		if (b.n == 0 && !b.more)
			break;
	}
	return n;
}

/* ---- timestamps and values --------------------------------------------------- */

static int64_t parse(const char *s)
{
	const char *why = NULL;
	int64_t ns = 0;

	if (sqlts_parse_text(s, strlen(s), &ns, &why) != 0)
		return -42;
	return ns;
}

static void test_ts_parse(void)
{
	char buf[64];
	int64_t ns = 0;

	CHECK(parse("1970-01-01") == 0);
	CHECK(parse("2024-03-01 12:34:56") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01T12:34:56Z") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01t12:34:56z") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01 12:34") == 1709296440LL * 1000000000);
	CHECK(parse("2024-03-01 12:34:56.5") == 1709296496LL * 1000000000 + 500000000);
	CHECK(parse("2024-03-01 12:34:56.123456789") == 1709296496123456789LL);
	CHECK(parse("2024-03-01 12:34:56.1234567891") == 1709296496123456789LL);
	CHECK(parse("2024-03-01 12:34:56,25") == 1709296496250000000LL);
	CHECK(parse("2024-03-01T14:34:56+02:00") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01T14:34:56+0200") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01T14:34:56+02") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01 07:04:56.000-05:30") == 1709296496LL * 1000000000);
	CHECK(parse("2024-03-01 14:34:56 +02:00") == 1709296496LL * 1000000000);
	CHECK(parse("  2024-03-01 12:34:56  ") == 1709296496LL * 1000000000);
	CHECK(parse("1969-12-31 23:59:59.5") == -500000000);
	CHECK(parse("2024-02-29") > 0);
	CHECK(parse("2023-02-29") == -42);
	CHECK(parse("2024-13-01") == -42);
	CHECK(parse("2024-01-01 24:00") == -42);
	CHECK(parse("2024-01-01 10:00:60") == -42);
	CHECK(parse("01/02/2024") == -42);
	CHECK(parse("2024-01-01 10") == -42);
	CHECK(parse("2024-01-01 10:00:00.") == -42);
	CHECK(parse("2024-01-01 10:00:00 UTC") == -42);
	CHECK(parse("2024-01-01X10:00") == -42);
	CHECK(parse("1600-01-01") == -42);
	CHECK(parse("1700000000") == -42);
	CHECK(parse("") == -42);
	CHECK(sqlts_from_int(1700000000, &ns) == 0 && ns == 1700000000LL * 1000000000);
	CHECK(sqlts_from_int(1700000000123LL, &ns) == 0 && ns == 1700000000123LL * 1000000);
	CHECK(sqlts_from_int(1700000000123456LL, &ns) == 0 && ns == 1700000000123456LL * 1000);
	CHECK(sqlts_from_int(1700000000123456789LL, &ns) == 0 && ns == 1700000000123456789LL);
	CHECK(sqlts_from_int(99999999999LL, &ns) == -1); /* seconds beyond 2262 */
	CHECK(sqlts_from_real(1700000000.5, &ns) == 0 && ns == 1700000000500000000LL);
	/* julianday('2024-01-01 10:00:00'), not 1970-01-29 as epoch seconds. */
	CHECK(sqlts_from_real(2460310.5 + 10.0 / 24, &ns) == 0 && ns == 1704103200000000000LL);
	CHECK(sqlts_from_int(2460311, &ns) == 0 && ns == 1704110400000000000LL); /* noon */
	/* strftime('%Y%m%d%H%M%S') and '%Y%m%d' as integers. */
	CHECK(sqlts_from_int(20240101100001LL, &ns) == 0 && ns == 1704103201000000000LL);
	CHECK(sqlts_from_int(20240101, &ns) == 0 && ns == 1704067200000000000LL);
	CHECK(sqlts_from_int(20241301100001LL, &ns) == -1); /* month 13: nothing */
	CHECK(sqlts_from_int(9223372036854775807LL, &ns) == -1); /* SQLTS_BAD */
	/* Java's Timestamp split and back, before and after 1970. */
	CHECK_INT(sqlts_ms(-1500000000), -1500);
	CHECK_INT(sqlts_nanos(-1500000000), 500000000);
	CHECK(sqlts_join(-1500, 500000000, &ns) == 0 && ns == -1500000000);
	CHECK(sqlts_join(1709296496123LL, 123456789, &ns) == 0 && ns == 1709296496123456789LL);
	CHECK(sqlts_join(sqlts_ms(SQLTS_NONE), sqlts_nanos(SQLTS_NONE), &ns) == 0 &&
	      ns == SQLTS_NONE);
	sqlts_format(1709296496123456789LL, buf, sizeof(buf));
	CHECK_STR(buf, "2024-03-01T12:34:56.123456789Z");
}

/* A REAL as the SQLite source writes it: javafmt_number, and no text for
 * infinities (they stay numbers for the converter). */
static const char *jd(double d)
{
	static char buf[JAVAFMT_NUMBER_MAX];

	if (!isfinite(d))
		return "(none)";
	javafmt_number(d, false, buf, sizeof(buf));
	return buf;
}

static void test_values(void)
{
	char *b;

	/* Java's Double.toString. */
	CHECK_STR(jd(1.0), "1.0");
	CHECK_STR(jd(-2.5), "-2.5");
	CHECK_STR(jd(0.1), "0.1");
	CHECK_STR(jd(100.0), "100.0");
	CHECK_STR(jd(1234567.0), "1234567.0");
	CHECK_STR(jd(1e7), "1.0E7");
	CHECK_STR(jd(12345678.9), "1.23456789E7");
	CHECK_STR(jd(0.001), "0.001");
	CHECK_STR(jd(0.0001), "1.0E-4");
	CHECK_STR(jd(0.00012), "1.2E-4");
	CHECK_STR(jd(0.0), "0.0");
	CHECK_STR(jd(-0.0), "-0.0");
	CHECK_STR(jd(3.141592653589793), "3.141592653589793");
	CHECK_STR(jd(1e300), "1.0E300");
	CHECK_STR(jd(4.9e-324), "4.9E-324");
	CHECK_STR(jd(1.0 / 3), "0.3333333333333333");
	CHECK_STR(jd(1e308 * 10), "(none)");
	b = sqvalue_base64((const unsigned char *)"", 0);
	CHECK_STR(b, "");
	free(b);
	b = sqvalue_base64((const unsigned char *)"f", 1);
	CHECK_STR(b, "Zg==");
	free(b);
	b = sqvalue_base64((const unsigned char *)"fo", 2);
	CHECK_STR(b, "Zm8=");
	free(b);
	b = sqvalue_base64((const unsigned char *)"foobar", 6);
	CHECK_STR(b, "Zm9vYmFy");
	free(b);
	b = sqvalue_base64((const unsigned char *)"\x00\xff\x10", 3);
	CHECK_STR(b, "AP8Q");
	free(b);
}

/* ---- modes ------------------------------------------------------------------- */

static void fill(int from, int to)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
	         "WITH RECURSIVE c(x) AS (SELECT %d UNION ALL SELECT x+1 FROM c WHERE x<%d) "
	         "INSERT INTO t(id, v) SELECT x, 'row ' || x FROM c",
	         from, to);
	sql(dbpath, buf);
}

static void test_incrementing(void)
{
	struct fake f;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[4000];
	size_t n;
	bool ordered = true;

	new_db("inc.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
	fill(1, 2500);
	fake_init(&f);
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
	fake_free(&f);
}

static void test_hidden_rowid_and_worker_max(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("rowid.db");
	sql(dbpath,
	    "CREATE TABLE t(id INT, v TEXT); INSERT INTO t VALUES (10,'a'),(5,'b'),(7,'c')");
	fake_init(&f);
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
	fake_free(&f);
}

static const char expect_schema[] =
    "{\"type\":\"struct\",\"fields\":["
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"big\"},"
    "{\"type\":\"double\",\"optional\":true,\"field\":\"r\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"s\"},"
    "{\"type\":\"bytes\",\"optional\":true,\"field\":\"b\"},"
    "{\"type\":\"int64\",\"optional\":true,\"name\":\"org.apache.kafka.connect.data.Timestamp\","
    "\"version\":1,\"field\":\"ts\"},"
    "{\"type\":\"int32\",\"optional\":true,\"name\":\"org.apache.kafka.connect.data.Date\","
    "\"version\":1,\"field\":\"d\"},"
    "{\"type\":\"boolean\",\"optional\":true,\"field\":\"flag\"}"
    "],\"optional\":false,\"name\":\"vals\"}";

static void test_values_and_schema(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], *p, *sc;

	new_db("vals.db");
	sql(dbpath,
	    "CREATE TABLE vals(id INTEGER PRIMARY KEY, big INTEGER, r REAL, s TEXT NOT NULL, "
	    "b BLOB, ts DATETIME, d DATE, flag BOOLEAN);"
	    "INSERT INTO vals VALUES (1, 9007199254740993, 0.1, 'a\"b', x'00ff10', "
	    "'2024-03-01 12:34:56.789', '2024-03-01', 1);"
	    "INSERT INTO vals VALUES (2, NULL, NULL, '', NULL, NULL, NULL, NULL);"
	    "INSERT INTO vals VALUES (3, -9223372036854775808, 1e20, 'x', x'', 1709296496, "
	    "'2024-03-02', 0);"
	    "INSERT INTO vals VALUES (4, 'text in int', 5, 'y', 'not blob', 'garbage', "
	    "NULL, NULL);");
	fake_init(&f);
	CHECK_INT(open_src(&f,
	                   "mode=bulk\ntable.whitelist=vals\ntopic.prefix=x.\nkey.column.name=id\n",
	                   &ctx, err, sizeof(err)),
	          0);
	CHECK_STR(f.parts[0], "{\"table\":\"vals\"}");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 4);
	p = payload_text(&recs[0]);
	CHECK_STR(p, "{\"id\":1,\"big\":9007199254740993,\"r\":0.1,\"s\":\"a\\\"b\",\"b\":\"AP8Q\","
	             "\"ts\":1709296496789,\"d\":19783,\"flag\":true}");
	free(p);
	sc = cJSON_PrintUnformatted(recs[0].value.schema);
	CHECK_STR(sc, expect_schema);
	free(sc);
	p = payload_text(&recs[1]);
	CHECK_STR(p,
	          "{\"id\":2,\"big\":null,\"r\":null,\"s\":\"\",\"b\":null,\"ts\":null,\"d\":null,"
	          "\"flag\":null}");
	free(p);
	/* Same field types, so the very same schema object. */
	CHECK(recs[1].value.schema == recs[0].value.schema);
	p = payload_text(&recs[2]);
	CHECK_STR(p, "{\"id\":3,\"big\":-9223372036854775808,\"r\":1.0E20,\"s\":\"x\",\"b\":\"\","
	             "\"ts\":1709296496000,\"d\":19784,\"flag\":false}");
	free(p);
	/* SQLite types values: text in an INTEGER column is a string field. */
	p = payload_text(&recs[3]);
	CHECK_STR(p, "{\"id\":4,\"big\":\"text in int\",\"r\":5.0,\"s\":\"y\",\"b\":\"not blob\","
	             "\"ts\":\"garbage\",\"d\":null,\"flag\":null}");
	free(p);
	CHECK(recs[3].value.schema != recs[0].value.schema);
	sc = cJSON_PrintUnformatted(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(recs[3].value.schema, "fields"), 1));
	CHECK_STR(sc, "{\"type\":\"string\",\"optional\":true,\"field\":\"big\"}");
	free(sc);
	/* The key: a struct of the key columns, without a name (ValueToKey). */
	CHECK(recs[0].key.kind == VALUE_STRUCT);
	p = cJSON_PrintUnformatted(recs[0].key.payload);
	CHECK_STR(p, "{\"id\":1}");
	free(p);
	sc = cJSON_PrintUnformatted(recs[0].key.schema);
	CHECK_STR(sc, "{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,"
	              "\"field\":\"id\"}],\"optional\":false}");
	free(sc);
	CHECK(counted(&f, "timestamps_unparsed") == 1);
	p = source_sqlite_ops.offset_json(ctx, &recs[0].offset);
	CHECK(strncmp(p, "{\"polling.timestamp\":", 21) == 0);
	free(p);
	CHECK(!b.more);
	/* Bulk reads the whole table again after poll.interval.ms. */
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 4);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
}

/* Timestamp mode with 3-row batches over groups of equal timestamps: every
 * record's offset, taken as the last acknowledged one, must lose no row. */
static void test_timestamp_groups(const char *create, const char *rows, size_t worker_max)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	static char *offs[64];
	static int64_t seen[64];
	char props[512];
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
	fake_init(&f);
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
	/* Record 2 (ts 2, the group goes on) carries ts 1, the last complete one. */
	CHECK_STR(offs[0], "{\"timestamp_nanos\":0,\"timestamp\":1704067201000}");
	if (strcmp(rows, "3") == 0) {
		CHECK_STR(offs[1], "{\"timestamp_nanos\":0,\"timestamp\":1704067201000}");
		CHECK_STR(offs[5], "{\"timestamp_nanos\":0,\"timestamp\":1704067202000}");
	}
	CHECK_STR(offs[10], "{\"timestamp_nanos\":0,\"timestamp\":1704067204000}");
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
	fake_free(&f);
}

static void test_timestamp_incrementing(void)
{
	struct fake f;
	void *ctx = NULL;
	char err[512];
	static int64_t ids[64];
	size_t n;

	new_db("tsi.db");
	sql(dbpath,
	    "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, v);"
	    "INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:02', 1), ('2024-01-01 00:00:01', 2),"
	    "('2024-01-01 00:00:02', 3), ('2024-01-01 00:00:02', 4), ('2024-01-01 00:00:03', 5)");
	fake_init(&f);
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
	fake_free(&f);
}

static void test_delay_and_initial(void)
{
	struct fake f;
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
	fake_init(&f);
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
	fake_free(&f);

	/* timestamp.initial=-1: only rows from now on. */
	fake_init(&f);
	CHECK_INT(open_src(&f,
	                   "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	                   "timestamp.column.name=ts\ntimestamp.initial=-1\n",
	                   &ctx, err, sizeof(err)),
	          0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 0);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
	fake_init(&f);
	snprintf(buf, sizeof(buf),
	         "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
	         "timestamp.column.name=ts\ntimestamp.initial=%lld\n",
	         (long long)(now - 60) * 1000);
	CHECK_INT(open_src(&f, buf, &ctx, err, sizeof(err)), 0);
	n = drain(&f, ctx, 100, ids, 16);
	CHECK_INT(n, 2);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
}

static void test_query_mode(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], *sc;

	new_db("query.db");
	sql(dbpath, "CREATE TABLE a(id INTEGER PRIMARY KEY, v INT NOT NULL);"
	            "CREATE TABLE n(id INTEGER PRIMARY KEY, name TEXT);"
	            "INSERT INTO a VALUES (1, 5), (2, -1), (3, 7);"
	            "INSERT INTO n VALUES (1, 'one'), (2, 'two'), (3, 'three')");
	fake_init(&f);
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
	fake_free(&f);

	/* Timestamp mode over a query: no rowid, equal timestamps page by OFFSET. */
	sql(dbpath, "CREATE TABLE e(id INT, ts TEXT);"
	            "INSERT INTO e VALUES (1,'2024-01-01'),(2,'2024-01-02'),(3,'2024-01-02'),"
	            "(4,'2024-01-02'),(5,'2024-01-02'),(6,'2024-01-03')");
	fake_init(&f);
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
	fake_free(&f);
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
	CHECK_INT(sqlts_register(db), SQLITE_OK);
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
	struct fake f;
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
	fake_init(&f);
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
	CHECK(counted(&f, "rows_without_position") == 1); /* b's row 2 */
	CHECK_STR(f.committed[0], "{\"timestamp_nanos\":0,\"timestamp\":1704067209000}");
	CHECK_STR(f.committed[1], "{\"timestamp_nanos\":0,\"timestamp\":1704067200000}");
	source_sqlite_ops.close(ctx);
	fake_free(&f);
}

static void test_quoted_identifiers(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("quoted.db");
	sql(dbpath, "CREATE TABLE \"my.table-1\"(\"select\" INTEGER PRIMARY KEY, "
	            "\"we\"\"ird col\" TEXT NOT NULL);"
	            "INSERT INTO \"my.table-1\" VALUES (1, 'a'), (2, 'b')");
	fake_init(&f);
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
	fake_free(&f);
}

/* ---- bad input ---------------------------------------------------------------- */

static void expect_open_error(const char *props, const char *needle)
{
	struct fake f;
	void *ctx = NULL;
	char err[512];

	fake_init(&f);
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), -1);
	if (strstr(err, needle) == NULL)
		fprintf(stderr, "  error was: %s\n  expected: %s\n", err, needle);
	CHECK(strstr(err, needle) != NULL);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
}

static void expect_poll_code(const char *props, int code, const char *needle)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	fake_init(&f);
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), code);
	if (strstr(err, needle) == NULL)
		fprintf(stderr, "  error was: %s\n  expected: %s\n", err, needle);
	CHECK(strstr(err, needle) != NULL);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
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
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("later.db");
	fake_init(&f);
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(counted(&f, "database_missing") == 1);
	CHECK(strstr(f.lastlog, "waiting for it") != NULL);
	sql(dbpath, "CREATE TABLE other(x)");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(counted(&f, "tables_missing") == 1);
	CHECK(strstr(f.lastlog, "tables there: other") != NULL);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK(counted(&f, "tables_missing") == 1); /* warned once */
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'x')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	/* A non-database file. */
	source_sqlite_ops.close(ctx);
	fake_free(&f);
	new_db("notadb.db");
	testlib_write_file(dbpath, "this is not an SQLite database, not at all....", 46);
	/* ... may pass (the application writes its database there): 75. */
	expect_poll_code("mode=bulk\ntable.whitelist=t\ntopic.prefix=p\n", SOURCE_ERR,
	                 "not a database");
}

static void test_bad_rows(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("badrows.db");
	sql(dbpath, "CREATE TABLE t(k INTEGER, v); INSERT INTO t VALUES (1,'a'),(2,'b'),"
	            "('three','c'),(4,'d'),(NULL,'e')");
	fake_init(&f);
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
	fake_free(&f);
	/* The same with worker batches of 2: the good rows still come first. */
	fake_init(&f);
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
	fake_free(&f);
}

static void test_schema_change_and_replaced_db(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512], other[600];

	new_db("change.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'x')");
	fake_init(&f);
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	sql(dbpath, "ALTER TABLE t ADD COLUMN extra TEXT; INSERT INTO t VALUES (2, 'y', 'new')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "extra"), "\"new\"");
	CHECK(counted(&f, "schema_changes") == 1);
	sql(dbpath, "ALTER TABLE t DROP COLUMN v; INSERT INTO t VALUES (3, 'z')");
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "v"), "(absent)");
	CHECK(counted(&f, "schema_changes") == 2);

	/* Replaced by a database of other rows: its ids are read from their
	 * start. */
	snprintf(other, sizeof(other), "%s.new", dbpath);
	unlink(other);
	sql(other, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'again')");
	CHECK_INT(rename(other, dbpath), 0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_STR(field(&recs[0], "v"), "\"again\"");
	CHECK(counted(&f, "database_reopened") == 1);
	CHECK(counted(&f, "ids_reused") == 1);
	CHECK(strstr(f.lastlog, "reading the new ids from their start") != NULL);
	source_sqlite_ops.close(ctx);
	fake_free(&f);

	/* Dropping the mode's column stops the connector with the reason. */
	new_db("drop.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v);"
	            "INSERT INTO t VALUES (1, '2024-01-01', 'x')");
	fake_init(&f);
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
	fake_free(&f);
}

/* Never in the writers' way: after a poll no lock and no read transaction
 * remain; a locked database makes poll return quickly and retry later. */
static void test_locks(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	sqlite3 *w = NULL;
	int64_t t0;
	int busy = 0, total = 0;

	new_db("locks.db");
	sql(dbpath, "PRAGMA journal_mode=DELETE; CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	fill(1, 50);
	fake_init(&f);
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
	CHECK(counted(&f, "database_busy") >= 1);
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
	fake_free(&f);

	/* WAL: after a poll a TRUNCATE checkpoint completes (no reader left). */
	new_db("wal.db");
	sql(dbpath, "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	CHECK_INT(sqlite3_open(dbpath, &w), SQLITE_OK);
	sqlite3_exec(w, "PRAGMA wal_autocheckpoint=0", NULL, NULL, NULL);
	fake_init(&f);
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
	fake_free(&f);
}

static void test_timeouts(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	new_db("timer.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
	fake_init(&f);
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
	fake_free(&f);
}

/* Rows deleted without ids being reused: nothing is read again, nothing said. */
static void test_deletes_without_reuse(void)
{
	struct fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];

	/* AUTOINCREMENT used as a queue: every row read is deleted. */
	new_db("queue.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
	            "INSERT INTO t(v) VALUES ('a'), ('b')");
	fake_init(&f);
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
	CHECK(counted(&f, "ids_reused") == 0);
	source_sqlite_ops.close(ctx);
	fake_free(&f);

	/* Without AUTOINCREMENT: the last row read deleted, larger ids remain. */
	new_db("del.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, v);"
	            "INSERT INTO t(v) VALUES ('a'), ('b')");
	fake_init(&f);
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
	CHECK(counted(&f, "ids_reused") == 1);
	source_sqlite_ops.close(ctx);
	fake_free(&f);

	/* After a restart: an AUTOINCREMENT sequence below the stored offset
	 * (the table dropped and created while skiff was stopped). */
	new_db("restart.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
	            "INSERT INTO t(v) VALUES ('new1'), ('new2')");
	fake_init(&f);
	f.committed[0] = strdup("{\"incrementing\":5}");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 2);
	CHECK(counted(&f, "ids_reused") == 1);
	CHECK(strstr(f.lastlog, "AUTOINCREMENT sequence is below the stored offset 5") != NULL);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
	/* The newest rows deleted while stopped: the sequence holds, no alarm. */
	sql(dbpath, "INSERT INTO t(v) VALUES ('3'), ('4'), ('5'); DELETE FROM t WHERE id > 3");
	fake_init(&f);
	f.committed[0] = strdup("{\"incrementing\":5}");
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p\n", &ctx, err,
	                   sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 0);
	CHECK(counted(&f, "ids_reused") == 0);
	CHECK(counted(&f, "offset_ahead_of_table") == 0);
	source_sqlite_ops.close(ctx);
	fake_free(&f);
}

int main(void)
{
	test_ts_parse();
	test_values();
	test_incrementing();
	test_hidden_rowid_and_worker_max();
	test_values_and_schema();
	test_timestamp_groups("CREATE TABLE t(id INTEGER PRIMARY KEY, ts NOT NULL)", "3", 100);
	/* batch.max.rows above the worker's batch: rows wait in the source. */
	test_timestamp_groups("CREATE TABLE t(id INTEGER PRIMARY KEY, ts NOT NULL)", "5", 2);
	test_without_rowid();
	test_timestamp_incrementing();
	test_delay_and_initial();
	test_query_mode();
	test_ts_function();
	test_two_tables_and_coalesce();
	test_quoted_identifiers();
	test_config_errors();
	test_missing_db_and_table();
	test_bad_rows();
	test_schema_change_and_replaced_db();
	test_deletes_without_reuse();
	test_locks();
	test_timeouts();
	return testlib_done("test_source_sqlite");
}
