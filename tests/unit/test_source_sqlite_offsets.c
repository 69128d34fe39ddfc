/* source_sqlite: the offsets-topic key and value of each mode, as skiff
 * writes them. With a file argument the lines are written there for
 * tests/convert/jdbc_offsets.sh, which compares them byte for byte with what
 * Kafka Connect's JsonConverter makes of Confluent's JDBC partition and
 * offset maps for the same rows (JdbcOffsets.java); the value as the
 * offsets topic's record holds it (skiff's own members in a header). Without one, only the
 * shapes are checked here. */
#include "offsets/offsets_doc.h"
#include "offsets/offsets_kvalue.h"
#include "core/source.h"
#include "sqlitefake.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* One row, as in JdbcOffsets.java: id 42, ts 2024-03-01 12:34:56.123456789 UTC. */
#define ROW "INSERT INTO t(id, ts) VALUES (42, '2024-03-01 12:34:56.123456789')"

/* Polls mode's source once and writes "name key value" (value "null" when
 * no offset is kept) to out. */
static void dump_mode(FILE *out, const char *name, const char *props)
{
	struct sourceenv_fake f;
	struct source_batch b;
	void *ctx = NULL;
	char err[512];
	char *val = NULL, *key = NULL;
	cJSON *part;
	char cv[OFFSETS_KVALUE_MAX];
	size_t n;

	new_db("offsets.db");
	sql(dbpath, "CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL)");
	sql(dbpath, ROW);
	sourceenv_fake_init(&f, "test");
	CHECK_INT(open_src(&f, props, &ctx, err, sizeof(err)), 0);
	CHECK_INT(poll_once(ctx, &b, 10, err, sizeof(err)), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(f.nparts, 1);
	if (b.n == 1 && f.nparts == 1) {
		part = cJSON_Parse(f.parts[0]);
		key = offsets_doc_key("jdbc-sqlite", part);
		cJSON_Delete(part);
		val = source_sqlite_ops.offset_json(ctx, &recs[0].offset);
		/* The record's value: Connect's members (offsets_kvalue.h). */
		if (val != NULL && (n = offsets_kvalue_connect(val, cv, sizeof(cv))) > 0)
			memcpy(val, cv, n + 1);
		fprintf(out, "%s %s %s\n", name, key ? key : "?", val ? val : "null");
	}
	free(key);
	free(val);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static const char *const modes[][2] = {
    {"bulk", "mode=bulk\ntable.whitelist=t\ntopic.prefix=p.\n"},
    {"incrementing", "mode=incrementing\ntable.whitelist=t\ntopic.prefix=p.\n"
                     "incrementing.column.name=id\n"},
    {"timestamp", "mode=timestamp\ntable.whitelist=t\ntopic.prefix=p.\n"
                  "timestamp.column.name=ts\ntimestamp.delay.interval.ms=0\n"},
    {"timestamp+incrementing", "mode=timestamp+incrementing\ntable.whitelist=t\n"
                               "topic.prefix=p.\nincrementing.column.name=id\n"
                               "timestamp.column.name=ts\n"},
    {"query-bulk", "mode=bulk\nquery=SELECT * FROM t\ntopic.prefix=q\n"},
    {"query-incrementing", "mode=incrementing\nquery=SELECT * FROM t\ntopic.prefix=q\n"
                           "incrementing.column.name=id\n"},
    {"query-timestamp+incrementing", "mode=timestamp+incrementing\nquery=SELECT * FROM t\n"
                                     "topic.prefix=q\nincrementing.column.name=id\n"
                                     "timestamp.column.name=ts\n"},
};

int main(int argc, char **argv)
{
	FILE *out = argc > 1 ? fopen(argv[1], "w") : tmpfile();

	CHECK(out != NULL);
	if (out == NULL)
		return testlib_done("source_sqlite_offsets");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		dump_mode(out, modes[i][0], modes[i][1]);
	fclose(out);
	return testlib_done("source_sqlite_offsets");
}
