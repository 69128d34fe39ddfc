/* Unit tests of src/transform/: the chain's parsing (class names, variants,
 * predicates, errors naming file:line and key) and each transform on a line
 * and on a row, checked through the JsonConverter bytes a user would see.
 * tests/convert/transforms.sh checks the same transforms against Connect's. */
#include "config/config.h"
#include "convert/convert.h"
#include "config/props.h"
#include "core/source.h"
#include "testlib.h"
#include "transform/transform.h"
#include "transform/txdate.h"
#include "transform/txregex.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

static char err[1024];

#define T "org.apache.kafka.connect.transforms."
#define P "org.apache.kafka.connect.transforms.predicates."

static const char row_env[] =
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,"
    "\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"msg\"}],"
    "\"optional\":false,\"name\":\"row\"},\"payload\":{\"id\":42,\"msg\":\"hi\"}}";

/* The chain of the properties text, or NULL with err set; keys whose value
 * starts with "SECRET" are marked as a config provider marks them. */
static struct transform_chain *chain(const char *text)
{
	static const struct config_key none[] = {CFG_END};
	const struct config_key *tables[] = {none};
	struct config_spec spec = {
	    .prefix = "", .tables = tables, .ntables = 1, .passthrough = transform_config_prefixes};
	struct props *p = NULL;
	struct config_section *s = NULL;
	struct transform_chain *c = NULL;

	err[0] = '\0';
	if (props_load_mem("c.properties", text, strlen(text), &p, err, sizeof(err)) != 0)
		return NULL;
	for (size_t i = 0; i < props_count(p); i++) {
		char *v = strdup(props_value(p, i));

		if (strncmp(v, "SECRET", 6) == 0)
			props_set_value(p, i, v, true);
		free(v);
	}
	if (config_section_load(p, &spec, &s, err, sizeof(err)) == 0)
		transform_chain_parse(s, &c, err, sizeof(err));
	config_section_destroy(s);
	props_destroy(p);
	return c;
}

/* What the chain makes of a record: "dropped", "error: ...", or
 * "TOPIC|KEY|VALUE|H=V,..." with key and value through JsonConverter
 * (schemas.enable=false for the value, true for the key). Static storage. */
static const char *run(const char *props, bool line, int64_t ts)
{
	static char res[4096];
	struct transform_chain *c = chain(props);
	cJSON *env = cJSON_Parse(row_env);
	struct record r = {.topic = "skiff-test", .timestamp_ms = ts};
	struct transform_out t;
	struct converter json = {CONV_JSON, false}, jkey = {CONV_JSON, true};
	char *k = NULL, *v = NULL;
	size_t kl = 0, vl = 0, at;
	uint64_t rep = 0;
	enum transform_result tr;

	if (c == NULL) {
		snprintf(res, sizeof(res), "config: %s", err);
		cJSON_Delete(env);
		return res;
	}
	if (line)
		r.value = (struct record_value){.kind = VALUE_STRING, .bytes = "a line", .len = 6};
	else
		r.value = (struct record_value){VALUE_STRUCT,
		                                NULL,
		                                0,
		                                cJSON_GetObjectItem(env, "payload"),
		                                cJSON_GetObjectItem(env, "schema"),
		                                NULL};
	tr = transform_chain_apply(c, &r, &t, err, sizeof(err));
	if (tr != TRANSFORM_OK) {
		snprintf(res, sizeof(res), "%s%s", tr == TRANSFORM_DROP ? "dropped" : "error: ",
		         tr == TRANSFORM_DROP ? "" : err);
	} else {
		convert_value(&jkey, &t.key, &k, &kl, &rep);
		convert_value(&json, &t.value, &v, &vl, &rep);
		at = (size_t)snprintf(res, sizeof(res), "%s|%.*s|%.*s|", t.topic, (int)(k ? kl : 4),
		                      k ? k : "null", (int)(v ? vl : 4), v ? v : "null");
		for (size_t i = 0; i < t.nheaders && at < sizeof(res); i++)
			at += (size_t)snprintf(res + at, sizeof(res) - at, "%s=%.*s,",
			                       t.headers[i].name, (int)t.headers[i].len,
			                       (const char *)t.headers[i].value);
	}
	free(k);
	free(v);
	transform_chain_destroy(c);
	cJSON_Delete(env);
	return res;
}

static void test_parse_errors(void)
{
	CHECK(chain("transforms=a\ntransforms.a.type=" T "Nope$Value\n") == NULL);
	CHECK(strstr(err, "c.properties:2: transforms.a.type: '" T
	                  "Nope$Value' is not a transform") != NULL);
	CHECK(chain("transforms=a\n") == NULL);
	CHECK(strcmp(err, "c.properties:1: transforms.a.type: missing required property") == 0);
	CHECK(chain("transforms=\npredicates=p\n") == NULL);
	CHECK(strcmp(err, "c.properties:2: predicates.p.type: missing required property") == 0);
	CHECK(chain("transforms=a\ntransforms.a.type=" T "InsertField\n") == NULL); /* no $Value */
	CHECK(chain("transforms=a\ntransforms.a.type=" T "Filter\ntransforms.a.predicate=p\n") ==
	      NULL);
	CHECK(strstr(err, "'p' is not listed in predicates") != NULL);
	CHECK(chain("transformsX=1\n") == NULL);
	CHECK(strstr(err, "unknown property 'transformsX'") != NULL);
	CHECK(chain("transforms=a,a\ntransforms.a.type=" T "Filter\n") == NULL);
	CHECK(chain("transforms=r\ntransforms.r.type=" T "ReplaceField$Value\n"
	            "transforms.r.renames=a:b:c\n") == NULL);
	CHECK(strstr(err, "Invalid rename mapping: a:b:c") != NULL);
	CHECK(chain("transforms=r\ntransforms.r.type=" T "RegexRouter\ntransforms.r.regex=a*?\n"
	            "transforms.r.replacement=x\n") == NULL);
	CHECK(strstr(err, "transforms.r.regex") != NULL);
	/* No transforms at all: an empty chain, records pass unchanged. */
	struct transform_chain *c = chain("transforms=\n");
	CHECK(c != NULL && transform_chain_len(c) == 0);
	transform_chain_destroy(c);
}

static void test_line_transforms(void)
{
	CHECK_STR(run("transforms=h\ntransforms.h.type=" T
	              "HoistField$Value\ntransforms.h.field=line\n",
	              true, 0),
	          "skiff-test|null|{\"line\":\"a line\"}|");
	CHECK_STR(run("transforms=i\ntransforms.i.type=" T "InsertField$Value\n"
	              "transforms.i.static.field=d\ntransforms.i.static.value=x\n",
	              true, 0),
	          "error: transforms.i (" T "InsertField$Value): Only Struct objects supported for "
	          "[field insertion], found: java.lang.String");
	CHECK_STR(run("transforms=r\ntransforms.r.type=" T "RegexRouter\n"
	              "transforms.r.regex=skiff-(\\\\w+)\ntransforms.r.replacement=x.$1\n",
	              true, 0),
	          "x.test|null|\"a line\"|");
	CHECK_STR(run("transforms=h\ntransforms.h.type=" T "InsertHeader\ntransforms.h.header=dev\n"
	              "transforms.h.value.literal=gw 1\n",
	              true, 0),
	          "skiff-test|null|\"a line\"|dev=gw 1,");
	CHECK_STR(run("transforms=t\ntransforms.t.type=" T "TimestampRouter\n", true, 86400000),
	          "skiff-test-19700102|null|\"a line\"|");
	CHECK(strstr(run("transforms=t\ntransforms.t.type=" T "TimestampRouter\n", true, 0),
	             "Timestamp missing") != NULL);
}

static void test_row_transforms(void)
{
	CHECK_STR(run("transforms=i\ntransforms.i.type=" T "InsertField$Value\n"
	              "transforms.i.static.field=d\ntransforms.i.static.value=x\n"
	              "transforms.i.topic.field=t\n",
	              false, 0),
	          "skiff-test|null|{\"id\":42,\"msg\":\"hi\",\"t\":\"skiff-test\",\"d\":\"x\"}|");
	CHECK_STR(run("transforms=r\ntransforms.r.type=" T "ReplaceField$Value\n"
	              "transforms.r.exclude=id\ntransforms.r.renames=msg:m\n",
	              false, 0),
	          "skiff-test|null|{\"m\":\"hi\"}|");
	CHECK_STR(run("transforms=m\ntransforms.m.type=" T
	              "MaskField$Value\ntransforms.m.fields=id,msg\n",
	              false, 0),
	          "skiff-test|null|{\"id\":0,\"msg\":\"\"}|");
	CHECK_STR(run("transforms=k,e\ntransforms.k.type=" T "ValueToKey\ntransforms.k.fields=id\n"
	              "transforms.e.type=" T "ExtractField$Key\ntransforms.e.field=id\n",
	              false, 0),
	          "skiff-test|{\"schema\":{\"type\":\"int64\",\"optional\":false},\"payload\":42}|"
	          "{\"id\":42,\"msg\":\"hi\"}|");
	CHECK_STR(run("transforms=h\ntransforms.h.type=" T "HeaderFrom$Value\n"
	              "transforms.h.fields=id,msg\ntransforms.h.headers=i,m\n"
	              "transforms.h.operation=move\n",
	              false, 0),
	          "skiff-test|null|{}|i=42,m=hi,");
	CHECK_STR(run("transforms=f\ntransforms.f.type=" T "Filter\ntransforms.f.predicate=p\n"
	              "predicates=p\npredicates.p.type=" P "TopicNameMatches\n"
	              "predicates.p.pattern=skiff-.*\n",
	              false, 0),
	          "dropped");
	CHECK_STR(run("transforms=f\ntransforms.f.type=" T "Filter\ntransforms.f.predicate=p\n"
	              "transforms.f.negate=true\npredicates=p\n"
	              "predicates.p.type=" P "HasHeaderKey\npredicates.p.name=x\n",
	              false, 0),
	          "dropped");
	CHECK_STR(run("transforms=s\ntransforms.s.type=" T "SetSchemaMetadata$Value\n"
	              "transforms.s.schema.name=n2\n",
	              false, 0),
	          "skiff-test|null|{\"id\":42,\"msg\":\"hi\"}|");
}

/* 1 when Java's pattern matches all of s, 0 when not, -1 when refused. */
static int rx(const char *pattern, const char *s)
{
	regex_t re;
	regmatch_t m[TXREGEX_NMATCH];
	int res;

	if (txregex_compile(&re, pattern, err, sizeof(err)) != 0)
		return -1;
	res = txregex_matches(&re, s, m, TXREGEX_NMATCH) ? 1 : 0;
	regfree(&re);
	return res;
}

/* Escapes inside a [...] class mean what they mean to Java, or the pattern
 * is refused: never a pattern that loads and means something else. */
static void test_regex_classes(void)
{
	CHECK(rx("[\\w]+", "ab_9") == 1 && rx("[\\w]+", "a-b") == 0 && rx("[\\w]", "\\") == 0);
	CHECK(rx("b-p[\\d]-x", "b-p3-x") == 1 && rx("b-p[\\d]-x", "b-pd-x") == 0);
	CHECK(rx("[\\s]", " ") == 1 && rx("[\\D]", "a") == 1 && rx("[\\D]", "1") == 0);
	CHECK(rx("[^\\d\\s]+", "ab") == 1 && rx("[^\\d\\s]+", "a1") == 0);
	CHECK(rx("x[\\-.]y", "x-y") == 1 && rx("x[\\-.]y", "x.y") == 1 &&
	      rx("x[\\-.]y", "x\\y") == 0);
	CHECK(rx("x[a\\]]y", "x]y") == 1 && rx("x[a\\]]y", "xay") == 1 &&
	      rx("x[a\\]]y", "x\\y") == 0 && rx("x[a\\]]y", "xa]y") == 0);
	CHECK(rx("[]-]", "]") == 1 && rx("[]-]", "-") == 1 && rx("[]-]", "a") == 0);
	CHECK(rx("[\\^]", "^") == 1 && rx("[^\\^]", "^") == 0 && rx("[^\\^]", "a") == 1);
	CHECK(rx("[\\^\\-]", "-") == 1 && rx("[\\^\\-]", "^") == 1 && rx("[\\^\\-]", "a") == 0);
	CHECK(rx("[\\[.:]+", "[.:") == 1 && rx("[\\\\]", "\\") == 1 && rx("[\\\\]", "a") == 0);
	CHECK(rx("[*+?]+", "*?+") == 1 && rx("[W-a]+", "X^_`") == 1 && rx("[W-a]", "V") == 0);
	CHECK(rx("[a[b]]", "a") == -1 && strstr(err, "cannot run a [...] class inside") != NULL);
	CHECK(rx("[a&&b]", "a") == -1 && rx("[\\p{L}]", "a") == -1 && rx("[z-a]", "a") == -1);
	CHECK(rx("[abc", "a") == -1 && strstr(err, "'[abc': ") == err);
	CHECK(rx("[\\d-z]+", "1-z") == 1 && rx("[\\d-z]", "5") == 1 && rx("[\\d-z]", "y") == 0);
}

/* A value from a config provider is "[hidden]" in --check's listing and in
 * errors, as everywhere else. */
static void test_secrets(void)
{
	struct transform_chain *c;
	char out[2048] = "";
	FILE *fp;

	c = chain("transforms=i,r\ntransforms.i.type=" T "InsertField$Value\n"
	          "transforms.i.static.field=dev\ntransforms.i.static.value=SECRETDEV1\n"
	          "transforms.r.type=" T "RegexRouter\ntransforms.r.regex=SECRET-(.*)\n"
	          "transforms.r.replacement=x-$1\n");
	CHECK(c != NULL);
	fp = fmemopen(out, sizeof(out) - 1, "w");
	transform_chain_print(c, "", fp);
	fclose(fp);
	CHECK(strstr(out, "SECRET") == NULL);
	CHECK(strstr(out, "static.value=[hidden]") != NULL);
	CHECK(strstr(out, "regex=[hidden]") != NULL && strstr(out, "replacement=x-$1") != NULL);
	transform_chain_destroy(c);
	CHECK(chain("transforms=r\ntransforms.r.type=" T "RegexRouter\n"
	            "transforms.r.regex=SECRETRE(\ntransforms.r.replacement=x\n") == NULL);
	CHECK(strstr(err, "SECRET") == NULL &&
	      strstr(err, "transforms.r.regex: '[hidden]'") != NULL);
	CHECK(chain("transforms=c\ntransforms.c.type=" T "Cast$Value\n"
	            "transforms.c.spec=SECRETx:nope\n") == NULL);
	CHECK(strstr(err, "SECRET") == NULL && strstr(err, "transforms.c.spec") != NULL);
}

/* Values are trimmed as Java's String.trim() (every char <= ' '), as
 * ConfigDef trims STRING, LIST and CLASS values: a ${dir:...} file's
 * trailing newline is not part of the value. */
static void test_trim(void)
{
	CHECK_STR(run("transforms=i\\n\ntransforms.i.type=" T "InsertField$Value\\r\\n\n"
	              "transforms.i.static.field=\\td\\n\ntransforms.i.static.value=x\\n\n",
	              false, 0),
	          "skiff-test|null|{\"id\":42,\"msg\":\"hi\",\"d\":\"x\"}|");
	CHECK_STR(run("transforms=h\ntransforms.h.type=" T "InsertHeader\ntransforms.h.header=dev\n"
	              "transforms.h.value.literal=gw 1\\r\\n\n",
	              true, 0),
	          "skiff-test|null|\"a line\"|dev=gw 1,");
	CHECK_STR(run("transforms=r\ntransforms.r.type=" T "ReplaceField$Value\n"
	              "transforms.r.exclude=id\\n,\\nmsg\\n\n",
	              false, 0),
	          "skiff-test|null|{}|");
}

/* Cast, Flatten and TimestampConverter (tests/convert/transforms.sh holds
 * the many cases compared with Connect; these are the ones a user hits
 * first). */
static void test_cast_flatten_timestamp(void)
{
	CHECK_STR(run("transforms=c\ntransforms.c.type=" T "Cast$Value\n"
	              "transforms.c.spec=id:string,msg:int32\n",
	              false, 0),
	          "error: transforms.c (" T "Cast$Value): Value (hi) was out of range for "
	          "requested data type");
	CHECK_STR(run("transforms=c\ntransforms.c.type=" T
	              "Cast$Value\ntransforms.c.spec=id:int8\n",
	              false, 0),
	          "skiff-test|null|{\"id\":42,\"msg\":\"hi\"}|");
	CHECK_STR(run("transforms=h,c\ntransforms.h.type=" T "HoistField$Value\n"
	              "transforms.h.field=l\ntransforms.c.type=" T "Cast$Value\n"
	              "transforms.c.spec=l:boolean\n",
	              true, 0),
	          "skiff-test|null|{\"l\":false}|");
	CHECK(chain("transforms=c\ntransforms.c.type=" T "Cast$Value\ntransforms.c.spec=a:map\n") ==
	      NULL);
	CHECK(strstr(err, "c.properties:3: transforms.c.spec: Cast transformation does not support "
	                  "casting to MAP") != NULL);
	CHECK(chain("transforms=c\ntransforms.c.type=" T "Cast$Value\ntransforms.c.spec=\n") ==
	      NULL);
	CHECK(strstr(err, "Must specify at least one field to cast.") != NULL);
	CHECK_STR(run("transforms=h,o,f\ntransforms.h.type=" T "HoistField$Value\n"
	              "transforms.h.field=l\ntransforms.o.type=" T "HoistField$Value\n"
	              "transforms.o.field=o\ntransforms.f.type=" T "Flatten$Value\n"
	              "transforms.f.delimiter=_\n",
	              true, 0),
	          "skiff-test|null|{\"o_l\":\"a line\"}|");
	CHECK_STR(run("transforms=t\ntransforms.t.type=" T "TimestampConverter$Value\n"
	              "transforms.t.field=id\ntransforms.t.target.type=string\n"
	              "transforms.t.unix.precision=seconds\n"
	              "transforms.t.format=yyyy-MM-dd'T'HH:mm:ss.SSSXXX EEE MMM h a\n",
	              false, 0),
	          "skiff-test|null|{\"id\":\"1970-01-01T00:00:42.000Z Thu Jan 12 AM\","
	          "\"msg\":\"hi\"}|");
	CHECK_STR(run("transforms=t\ntransforms.t.type=" T "TimestampConverter$Value\n"
	              "transforms.t.target.type=unix\ntransforms.t.format=yyyy-MM-dd\n",
	              true, 0),
	          "error: transforms.t (" T "TimestampConverter$Value): Could not parse timestamp: "
	          "value (a line) does not match pattern (yyyy-MM-dd)");
	/* The letters skiff does not do are refused by name at load. */
	CHECK(chain("transforms=t\ntransforms.t.type=" T "TimestampConverter$Value\n"
	            "transforms.t.target.type=string\ntransforms.t.format=YYYY-ww\n") == NULL);
	CHECK(strstr(err, "transforms.t.format: ") != NULL &&
	      strstr(err, "the pattern letter 'Y' (week year)") != NULL);
	CHECK(chain("transforms=t\ntransforms.t.type=" T "TimestampConverter$Value\n"
	            "transforms.t.target.type=Instant\n") == NULL);
	CHECK(strstr(err, "String must be one of: string, unix, Date, Time, Timestamp") != NULL);
}

/* txdate: SimpleDateFormat's parse and format, and hostile text. */
static void test_dates(void)
{
	int64_t ms = 0;
	struct buf o;
	char *text = NULL;

	CHECK(txdate_parse("yyyy-MM-dd HH:mm:ss", "2023-11-14 22:13:20", &ms) == 0 &&
	      ms == 1700000000000LL);
	/* Lenient: month 13 is January of the next year; text after is ignored. */
	CHECK(txdate_parse("yyyy-MM-dd", "2023-13-01 and more", &ms) == 0 && ms == 1704067200000LL);
	CHECK(txdate_parse("yyyyMMddHHmm", "202311142213", &ms) == 0 && ms == 1699999980000LL);
	CHECK(txdate_parse("dd/MMM/yyyy:HH:mm:ss Z", "14/Nov/2023:23:13:20 +0100", &ms) == 0 &&
	      ms == 1700000000000LL);
	CHECK(txdate_parse("yyyy-MM-dd", "2023/11/14", &ms) == -1);
	CHECK(txdate_parse("yyyy-MM-dd", "99999999999999999999-99-99", &ms) == -1);
	CHECK(txdate_parse("yyyy-MM-dd HH", "99999999-99999999-99999999 99999999999999", &ms) ==
	      -1);
	buf_init(&o, 256);
	txdate_format("EEEE d MMMM yyyy hh:mm a XXX ''yy''", 1700000000000LL, true, &o);
	txdate_format("|yyyy", INT64_MAX, true, &o);
	CHECK(buf_take(&o, &text, NULL) == 0);
	CHECK_STR(text, "Tuesday 14 November 2023 10:13 PM Z '23'|292278994");
	free(text);
	/* A run of 40 letters pads to 40 digits (it overflowed a 32-byte buffer). */
	buf_init(&o, 256);
	txdate_format("dddddddddddddddddddddddddddddddddddddddd", 1700000000000LL, true, &o);
	CHECK(buf_take(&o, &text, NULL) == 0);
	CHECK_STR(text, "0000000000000000000000000000000000000014");
	free(text);
}

int main(void)
{
	test_parse_errors();
	test_line_transforms();
	test_row_transforms();
	test_trim();
	test_regex_classes();
	test_secrets();
	test_cast_flatten_timestamp();
	test_dates();
	return testlib_done("transform");
}
