/* source_sqlite: timestamps parsed and formatted, Java's doubles, base64, and
 * a row's values and schema as the source builds them. */
#include "config/config.h"
#include "convert/convert.h"
#include "convert/javafmt.h"
#include "config/props.h"
#include "core/source.h"
#include "sources/sqlite/sqlts.h"
#include "sqlitefake.h"
#include "testlib.h"
#include "util/text.h"

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
	CHECK(sqlts_from_int(20241301100001LL, &ns) == -1);      /* month 13: nothing */
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
	b = text_base64("", 0);
	CHECK_STR(b, "");
	free(b);
	b = text_base64("f", 1);
	CHECK_STR(b, "Zg==");
	free(b);
	b = text_base64("fo", 2);
	CHECK_STR(b, "Zm8=");
	free(b);
	b = text_base64("foobar", 6);
	CHECK_STR(b, "Zm9vYmFy");
	free(b);
	b = text_base64("\x00\xff\x10", 3);
	CHECK_STR(b, "AP8Q");
	free(b);
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
	struct sourceenv_fake f;
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
	sourceenv_fake_init(&f, "test");
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
	CHECK(sourceenv_fake_counted(&f, "timestamps_unparsed") == 1);
	p = source_sqlite_ops.offset_json(ctx, &recs[0].offset);
	CHECK(strncmp(p, "{\"polling.timestamp\":", 21) == 0);
	free(p);
	CHECK(!b.more);
	/* Bulk reads the whole table again after poll.interval.ms. */
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 4);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* ---- rows rendered as text: the converter's bytes, as from the tree -------- */

#define NTRICKY 10

/* What c writes for v, NUL-terminated (caller frees); "(null)" for null. */
static char *conv(bool schemas, const struct record_value *v, uint64_t *replaced)
{
	struct converter c = {CONV_JSON, schemas};
	char *out = NULL, *z;
	size_t len = 0;

	CHECK_INT(convert_value(&c, v, &out, &len, replaced), 0);
	z = out != NULL ? strndup(out, len) : strdup("(null)");
	free(out);
	return z;
}

/* One poll of the "tricky" table: each record's key and value as JsonConverter
 * writes them, with and without schemas, into out[i][0..3]; the sum of the
 * replaced UTF-8 sequences (the source's counter and the converter's). */
static size_t render_all(bool text, char *out[NTRICKY][4], uint64_t *replaced, uint64_t *unparsed)
{
	struct source_batch b;
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512];

	sourceenv_fake_init(&f, "test");
	f.env.json_values = f.env.json_keys = text;
	CHECK_INT(open_src(&f,
	                   "mode=incrementing\ntable.whitelist=tricky\ntopic.prefix=x.\n"
	                   "key.column.name=id,na\"me\n",
	                   &ctx, err, sizeof(err)),
	          0);
	if (poll_once(ctx, &b, 100, err, sizeof(err)) != 0)
		fprintf(stderr, "poll: %s\n", err);
	CHECK_INT(b.n, NTRICKY);
	*replaced = 0;
	for (size_t i = 0; i < b.n && i < NTRICKY; i++) {
		CHECK(recs[i].value.kind == (text ? VALUE_JSON : VALUE_STRUCT));
		/* None, as the JDBC source's rows: Kafka stamps the produce time
		 * and TimestampRouter fails on it, as in Connect
		 * (docs/converters-and-transforms.md). */
		CHECK(recs[i].timestamp_ms == 0);
		out[i][0] = conv(true, &recs[i].value, replaced);
		out[i][1] = conv(false, &recs[i].value, replaced);
		out[i][2] = conv(true, &recs[i].key, replaced);
		out[i][3] = conv(false, &recs[i].key, replaced);
	}
	*replaced += sourceenv_fake_counted(&f, "utf8_replaced");
	*unparsed = sourceenv_fake_counted(&f, "timestamps_unparsed");
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
	return b.n;
}

/* Every storage class in every declared kind, NULLs, text with a NUL, invalid
 * UTF-8, escapes and surrogate pairs, infinities, odd column names: the text
 * path writes what the tree and the converter write, byte for byte. */
static void test_text_matches_tree(void)
{
	char *tree[NTRICKY][4] = {{0}}, *text[NTRICKY][4] = {{0}};
	uint64_t r1, r2, u1, u2;

	new_db("tricky.db");
	sql(dbpath,
	    "CREATE TABLE tricky(id INTEGER PRIMARY KEY, \"na\"\"me\" TEXT, \"\xc3\xbc\" INTEGER, "
	    "r REAL, b BLOB, ts DATETIME, d DATE, flag BOOLEAN, n NUMERIC, nodecl);"
	    "INSERT INTO tricky VALUES (1, 'plain', 7, 1.5, x'00ff10', '2024-03-01 12:34:56.789', "
	    "'2024-03-01', 1, 10, 1.25);"
	    "INSERT INTO tricky VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"
	    "INSERT INTO tricky VALUES (3, CAST(x'610062' AS TEXT), -9223372036854775808, 9e999, "
	    "x'', 1709296496, '1969-12-31', 0, 'ten', 'x');"
	    "INSERT INTO tricky VALUES (4, CAST(x'61ff62c080e282' AS TEXT), 9223372036854775807, "
	    "-9e999, 'not blob', 'garbage', -1, 2, 1e300, x'01');"
	    "INSERT INTO tricky VALUES (5, char(1,10,34,92,127,8232,128512,9,13,8,12), 0, -0.0, "
	    "zeroblob(5), 2460310.5, 20240101, 'yes', 0.1, NULL);"
	    "INSERT INTO tricky VALUES (6, '', 'text in int', 1e-5, 'x', x'00', 1.5, -3, -0.0, 4);"
	    "INSERT INTO tricky VALUES (7, 'ü€😀', 1, 123456789.125, NULL, 1700000000123, "
	    "'2024-02-30', NULL, NULL, 'y');"
	    "INSERT INTO tricky VALUES (8, 'k', 2, 4.9e-324, x'ff', '1600-01-01', x'01', 1.0, "
	    "'', '');"
	    "INSERT INTO tricky VALUES (9, '\"quoted\"', 3, 1e7, x'', '2024-03-01T12:00:00+02:00', "
	    "'2024-03-01 23:59', 'true', 5, -7);"
	    "INSERT INTO tricky VALUES (10, 'last', 4, 0.001, x'41', 99999999999999999, "
	    "'x', NULL, 1e-7, 2.5);");
	CHECK_INT(render_all(false, tree, &r1, &u1), NTRICKY);
	CHECK_INT(render_all(true, text, &r2, &u2), NTRICKY);
	for (size_t i = 0; i < NTRICKY; i++) {
		for (size_t k = 0; k < 4; k++) {
			if (tree[i][k] == NULL || text[i][k] == NULL) {
				CHECK(tree[i][k] != NULL && text[i][k] != NULL);
				continue;
			}
			CHECK_STR(text[i][k], tree[i][k]);
			free(tree[i][k]);
			free(text[i][k]);
		}
	}
	CHECK(r1 > 0 && r1 == r2);
	CHECK(u1 > 0 && u1 == u2);
}

/* A column name with invalid UTF-8: the text path renders each name once per
 * table, and still counts its replacement in every row, as when it rendered
 * the name for each row. */
static void test_text_key_counted_per_row(void)
{
	struct source_batch b;
	struct sourceenv_fake f;
	void *ctx = NULL;
	char err[512], *v;
	uint64_t replaced = 0;

	new_db("oddname.db");
	sql(dbpath, "CREATE TABLE odd(id INTEGER PRIMARY KEY, \"a\xff\" TEXT);"
	            "INSERT INTO odd VALUES (1, 'x'), (2, 'y'), (3, 'z');");
	sourceenv_fake_init(&f, "test");
	f.env.json_values = f.env.json_keys = true;
	CHECK_INT(open_src(&f, "mode=incrementing\ntable.whitelist=odd\ntopic.prefix=x.\n", &ctx,
	                   err, sizeof(err)),
	          0);
	CHECK_INT(poll_once(ctx, &b, 100, err, sizeof(err)), 0);
	CHECK_INT(b.n, 3);
	v = b.n == 3 ? conv(false, &recs[2].value, &replaced) : NULL;
	CHECK_STR(v != NULL ? v : "", "{\"id\":3,\"a\xef\xbf\xbd\":\"z\"}");
	free(v);
	CHECK_INT(sourceenv_fake_counted(&f, "utf8_replaced"), 3);
	source_sqlite_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* Timestamp mode with 3-row batches over groups of equal timestamps: every
 * record's offset, taken as the last acknowledged one, must lose no row. */

int main(void)
{
	test_ts_parse();
	test_values();
	test_values_and_schema();
	test_text_matches_tree();
	test_text_key_counted_per_row();
	return testlib_done("test_source_sqlite_values");
}
