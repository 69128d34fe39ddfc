/* sqlitefake: the shared part of the test_source_sqlite_*.c unit tests
 * (see sqlitefake.h); the fake environment is sourceenv_fake's. */
#include "config/config.h"
#include "convert/javafmt.h"
#include "config/props.h"
#include "core/source.h"
#include "sources/sqlite/sqlitelib.h"

#include "sqlitefake.h"
#include "core/stats.h"
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

/* Commits off as the worker would after an ack of the record. */
void commit(struct sourceenv_fake *f, void *ctx, const struct record *r)
{
	sourceenv_fake_take(f, r->part, source_sqlite_ops.offset_json(ctx, &r->offset));
}

/* ---- helpers ------------------------------------------------------------------ */

char dbpath[512];

void sql(const char *path, const char *text)
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

void new_db(const char *name)
{
	snprintf(dbpath, sizeof(dbpath), "%s/%s", testlib_tmpdir(), name);
	unlink(dbpath);
}

/* Opens the source with properties text (connection.url is added). */
int open_src(struct sourceenv_fake *f, const char *text, void **ctx, char *err, size_t errlen)
{
	/* The connector's own key, which skiff's connector section holds
	 * beside the source's (the source names its line in errors). */
	static const struct config_key conn_keys[] = {
	    {"connector.class", CFG_CLASS, NULL, 0, 0, NULL, 0, "the source", CFG_NOFIELD},
	    CFG_END,
	};
	const struct config_key *tables[] = {conn_keys, source_sqlite_ops.config_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 2};
	struct config_section *cfg = NULL;
	struct props *p = NULL;
	char buf[4096];
	int rc;

	snprintf(buf, sizeof(buf),
	         "connector.class=JdbcSourceConnector\nconnection.url=jdbc:sqlite:%s\n%s", dbpath,
	         text);
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

int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One poll with a batch of max records; now is far ahead so timers fire. */
struct record recs[2048];

int poll_once(void *ctx, struct source_batch *b, size_t max, char *err, size_t errlen)
{
	static int64_t t = 1000000;

	b->records = recs;
	b->max = max;
	b->n = 0;
	t += 100000;
	return source_sqlite_ops.poll(ctx, b, t, err, errlen);
}

char *payload_text(const struct record *r)
{
	return cJSON_PrintUnformatted(r->value.payload);
}

/* The value of field name of r's payload as printed JSON (static buffer). */
const char *field(const struct record *r, const char *name)
{
	static char buf[256];
	cJSON *it = cJSON_GetObjectItemCaseSensitive(r->value.payload, name);
	char *s = it ? cJSON_PrintUnformatted(it) : NULL;

	snprintf(buf, sizeof(buf), "%s", s ? s : "(absent)");
	free(s);
	return buf;
}

/* offset_json as a static string. */
const char *offj(void *ctx, const struct record *r)
{
	static char buf[256];
	char *j = source_sqlite_ops.offset_json(ctx, &r->offset);

	snprintf(buf, sizeof(buf), "%s", j ? j : "(null)");
	free(j);
	return buf;
}

int64_t int_field(const struct record *r, const char *name)
{
	return strtoll(field(r, name), NULL, 10);
}

/* Polls until nothing is left, committing every record; returns the ids (field
 * id) seen, in order, in ids[]. */
size_t drain(struct sourceenv_fake *f, void *ctx, size_t max, int64_t *ids, size_t cap)
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

void fill(int from, int to)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
	         "WITH RECURSIVE c(x) AS (SELECT %d UNION ALL SELECT x+1 FROM c WHERE x<%d) "
	         "INSERT INTO t(id, v) SELECT x, 'row ' || x FROM c",
	         from, to);
	sql(dbpath, buf);
}
