/* fleet_heartbeat: skiff's heartbeat and outcome records on a device's status
 * topic (issue 28, design §3.3): the fields as written, the round trip, the
 * FLEET_HEARTBEAT_MAX bound whatever the heartbeat holds (100 connectors of
 * 200-character names, control characters that escape six-fold, extreme
 * numbers), and named errors for what a decoder must refuse. */
#include "fleet/fleet_heartbeat.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static char *encode(const struct fleet_heartbeat *hb)
{
	struct buf b;
	char *out = NULL;

	buf_init(&b, 1 << 16);
	CHECK_INT(fleet_heartbeat_encode(hb, &b), 0);
	buf_addz(&b, "");
	CHECK_INT(buf_take(&b, &out, NULL), 0);
	return out;
}

static void fields(void)
{
	const char *conns[] = {"app", "db"};
	const char *groups[] = {"site-berlin"};
	const struct fleet_heartbeat_applied applied[] = {
	    {"skiff.config.gw-0042", "Aq3CnK1XTqyB0M9d8rWv7g", 17}};
	struct fleet_heartbeat hb = {
	    .device = "gw-0042",
	    .version = "0.28.0",
	    .at_ms = 1796481706349,
	    .seq = 812,
	    .interval_ms = 300000,
	    .health = "ok",
	    .reason = NULL,
	    .last_ack_ms = 1796481700000,
	    .lost_records = 1,
	    .lost_bytes = 2,
	    .lost_files = 3,
	    .backlog_bytes = 4,
	    .rss_kb = 8428,
	    .connectors = conns,
	    .nconnectors = 2,
	    .groups = groups,
	    .ngroups = 1,
	    .applied = applied,
	    .napplied = 1,
	};
	struct fleet_heartbeat d;
	char err[256] = "";
	char *got = encode(&hb);

	CHECK_STR(got,
	          "{\"device\":\"gw-0042\",\"version\":\"0.28.0\",\"at\":1796481706349,\"seq\":"
	          "812,\"interval_ms\":300000,\"health\":\"ok\",\"reason\":null,\"last_ack_"
	          "ms\":1796481700000,\"lost\":{\"records\":1,\"bytes\":2,\"files\":3},"
	          "\"backlog_bytes\":4,\"rss_kb\":8428,\"connectors\":[\"app\",\"db\"],"
	          "\"groups\":[\"site-berlin\"],\"applied\":{\"skiff.config.gw-0042\":{\"id\":"
	          "\"Aq3CnK1XTqyB0M9d8rWv7g\",\"offset\":17}}}");
	CHECK_INT(fleet_heartbeat_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK_STR(d.device, "gw-0042");
	CHECK_STR(d.version, "0.28.0");
	CHECK_INT(d.at_ms, 1796481706349);
	CHECK_INT(d.seq, 812);
	CHECK_INT(d.interval_ms, 300000);
	CHECK_STR(d.health, "ok");
	CHECK(d.reason == NULL);
	CHECK_INT(d.last_ack_ms, 1796481700000);
	CHECK_INT(d.lost_records, 1);
	CHECK_INT(d.lost_bytes, 2);
	CHECK_INT(d.lost_files, 3);
	CHECK_INT(d.backlog_bytes, 4);
	CHECK_INT(d.rss_kb, 8428);
	CHECK_INT(d.nconnectors, 2);
	if (d.nconnectors == 2) {
		CHECK_STR(d.connectors[0], "app");
		CHECK_STR(d.connectors[1], "db");
	}
	CHECK_INT(d.ngroups, 1);
	if (d.ngroups == 1)
		CHECK_STR(d.groups[0], "site-berlin");
	CHECK_INT(d.napplied, 1);
	if (d.napplied == 1) {
		CHECK_STR(d.applied[0].topic, "skiff.config.gw-0042");
		CHECK_STR(d.applied[0].id, "Aq3CnK1XTqyB0M9d8rWv7g");
		CHECK_INT(d.applied[0].offset, 17);
	}
	CHECK_INT(d.cut_connectors + d.cut_groups + d.cut_applied + d.cut_text, 0);
	fleet_heartbeat_clear(&d);
	free(got);
}

/* Strings as Jackson escapes them, numbers read back exactly (past 2^53),
 * no ack yet as null. */
static void round_trip(void)
{
	struct fleet_heartbeat hb = {
	    .device = "gw-1",
	    .version = "0.28.0",
	    .at_ms = INT64_MAX,
	    .seq = 9007199254740993, /* 2^53 + 1: a double rounds it */
	    .interval_ms = 1000,
	    .health = "failing",
	    .reason = "connector app: \"x\"\n\x01 caf\xc3\xa9",
	    .last_ack_ms = -1,
	    .lost_records = INT64_MAX,
	};
	struct fleet_heartbeat d;
	char err[256] = "";
	char *got = encode(&hb);

	CHECK(strstr(got, "\"reason\":\"connector app: \\\"x\\\"\\n\\u0001 caf\xc3\xa9\"") != NULL);
	CHECK(strstr(got, "\"last_ack_ms\":null") != NULL);
	CHECK_INT(fleet_heartbeat_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK_STR(d.reason, hb.reason);
	CHECK_INT(d.at_ms, INT64_MAX);
	CHECK_INT(d.seq, 9007199254740993);
	CHECK_INT(d.lost_records, INT64_MAX);
	CHECK_INT(d.last_ack_ms, -1);
	CHECK_INT(d.nconnectors, 0);
	fleet_heartbeat_clear(&d);
	free(got);
}

/* A config topic and its marker's id of 60 bytes and more, in a heartbeat
 * far below its bound: all of it goes out (the escaper once asked the
 * bounded buffer for the worst case, 6 bytes a byte, and failed it). */
static void long_topic_id(void)
{
	const char *const names[] = {"app"};
	const struct fleet_heartbeat_applied a = {
	    "skiff.config.gw-7c8722ff", "skiff-topic-id:43c04f37-1ef7-4fa8-9a3a-78ab1a2c0ada", 2};
	struct fleet_heartbeat hb = {.device = "gw-7c8722ff",
	                             .version = "0.28.0",
	                             .at_ms = 1796500000000,
	                             .interval_ms = 1000,
	                             .health = "ok",
	                             .last_ack_ms = 1796500000000,
	                             .connectors = names,
	                             .nconnectors = 1,
	                             .applied = &a,
	                             .napplied = 1};
	struct buf b;

	buf_init(&b, FLEET_HEARTBEAT_MAX);
	CHECK_INT(fleet_heartbeat_encode(&hb, &b), 0);
	CHECK(strstr(buf_cstr(&b), a.id) != NULL);
	buf_free(&b);
}

/* 100 connectors of 200-character names: the heartbeat stays within its
 * bound, keeps whole names only, and counts the ones left out. */
static void hundred_long_names(void)
{
	static char names[100][201];
	const char *conns[100];
	struct fleet_heartbeat hb = {
	    .device = "gw-0042",
	    .version = "0.28.0",
	    .at_ms = 1796481706349,
	    .seq = 812,
	    .interval_ms = 300000,
	    .health = "ok",
	    .last_ack_ms = 1796481700000,
	    .rss_kb = 8428,
	    .connectors = conns,
	    .nconnectors = 100,
	};
	struct fleet_heartbeat d;
	char err[256] = "";
	char *got;

	for (int i = 0; i < 100; i++) {
		memset(names[i], 'a' + i % 26, 200);
		names[i][200] = '\0';
		conns[i] = names[i];
	}
	got = encode(&hb);
	CHECK(strlen(got) <= FLEET_HEARTBEAT_MAX);
	CHECK_INT(fleet_heartbeat_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK_STR(d.device, "gw-0042");
	for (size_t i = 0; i < d.nconnectors; i++)
		CHECK_STR(d.connectors[i], names[i]);
	CHECK(d.cut_connectors >= 1);
	CHECK_INT(d.cut_connectors, 100 - (int64_t)d.nconnectors);
	CHECK_INT(d.cut_text, 0);
	fleet_heartbeat_clear(&d);
	free(got);

	/* Names of 20 characters: the first ones listed, whole. */
	for (int i = 0; i < 100; i++)
		names[i][20] = '\0';
	got = encode(&hb);
	CHECK(strlen(got) <= FLEET_HEARTBEAT_MAX);
	CHECK_INT(fleet_heartbeat_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK(d.nconnectors >= 5);
	for (size_t i = 0; i < d.nconnectors; i++)
		CHECK_STR(d.connectors[i], names[i]);
	CHECK_INT(d.cut_connectors, 100 - (int64_t)d.nconnectors);
	fleet_heartbeat_clear(&d);
	free(got);
}

/* Whatever it holds, a heartbeat is at most FLEET_HEARTBEAT_MAX bytes and
 * decodes: extreme numbers, names of control characters (six bytes each
 * escaped), a long device name and reason, many groups and topics. */
static void bound_holds(void)
{
	static char big[4096];
	const char *many[64];
	struct fleet_heartbeat_applied app[64];
	int worst = 0;

	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)(i % 3 == 0 ? 0x01 : i % 3 == 1 ? 'x' : '"');
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 64; i++)
		many[i] = big + sizeof(big) - 1 - (size_t)(i * 7 % 300);
	for (int i = 0; i < 64; i++)
		app[i] = (struct fleet_heartbeat_applied){many[i], many[(i + 1) % 64], INT64_MIN};
	for (size_t dl = 0; dl < 700; dl += 37)
		for (size_t n = 0; n < 64; n += 9) {
			struct fleet_heartbeat hb = {
			    .device = big + sizeof(big) - 1 - dl,
			    .version = big + sizeof(big) - 1 - dl / 2,
			    .at_ms = INT64_MIN,
			    .seq = INT64_MIN,
			    .interval_ms = INT64_MIN,
			    .health = big + sizeof(big) - 1 - dl / 3,
			    .reason = big + sizeof(big) - 1 - dl,
			    .last_ack_ms = INT64_MAX,
			    .lost_records = INT64_MIN,
			    .lost_bytes = INT64_MIN,
			    .lost_files = INT64_MIN,
			    .backlog_bytes = INT64_MIN,
			    .rss_kb = INT64_MIN,
			    .connectors = many,
			    .nconnectors = n,
			    .groups = many,
			    .ngroups = n,
			    .applied = app,
			    .napplied = n,
			};
			struct fleet_heartbeat d;
			char err[256] = "";
			char *got = encode(&hb);
			size_t len = got ? strlen(got) : 9999;

			if ((int)len > worst)
				worst = (int)len;
			CHECK(len <= FLEET_HEARTBEAT_MAX);
			CHECK_INT(fleet_heartbeat_decode(got, len, &d, err, sizeof(err)), 0);
			CHECK_INT(d.at_ms, INT64_MIN);
			CHECK_INT(d.nconnectors + (size_t)d.cut_connectors, n);
			CHECK_INT(d.napplied + (size_t)d.cut_applied, n);
			/* A cut string is a prefix of what was given. */
			CHECK(d.device != NULL &&
			      strncmp(d.device, hb.device, strlen(d.device)) == 0);
			if (strlen(d.device) < dl)
				CHECK(d.cut_text > 0);
			fleet_heartbeat_clear(&d);
			free(got);
		}
	CHECK(worst > FLEET_HEARTBEAT_MAX - 80); /* the budget is used, not wasted */
}

/* A device in a group, as the fleet runs one: its own config topic and its
 * group's applied, plain names, about 430 bytes. Encoded whole: the
 * encoder reserved each string's worst-case escape (six bytes a byte)
 * in its bounded buffer, and the group's id, 35 bytes near the end, made
 * every heartbeat of such a device fail (TOOBIG: none sent, found by
 * tests/e2e/test_fleet_rollout.py). Then every length of plain names up to
 * the bound: each heartbeat encodes, whole when it fits. */
static void a_device_in_a_group(void)
{
	static char name[600];
	const char *groups[] = {"all-3b3d3d39"};
	struct fleet_heartbeat_applied applied[] = {
	    {"skiff.config.dev-07-3b3d3d39", "topic:skiff.config.dev-07-3b3d3d39", 0},
	    {"skiff.config.group.all-3b3d3d39", "topic:skiff.config.group.all-3b3d3d39", 12}};
	struct fleet_heartbeat hb = {
	    .device = "dev-07-3b3d3d39",
	    .version = "0.1.0",
	    .at_ms = 1796497372594,
	    .seq = 7,
	    .interval_ms = 1000,
	    .health = "ok",
	    .last_ack_ms = -1,
	    .rss_kb = 7516,
	    .groups = groups,
	    .ngroups = 1,
	    .applied = applied,
	    .napplied = 2,
	};
	struct fleet_heartbeat d;
	char err[256] = "";
	char *got = encode(&hb);

	CHECK(got != NULL);
	CHECK_INT(fleet_heartbeat_decode(got, got ? strlen(got) : 0, &d, err, sizeof(err)), 0);
	CHECK_INT(d.napplied, 2);
	CHECK_INT(d.cut_connectors + d.cut_groups + d.cut_applied + d.cut_text, 0);
	if (d.napplied == 2)
		CHECK_STR(d.applied[1].id, "topic:skiff.config.group.all-3b3d3d39");
	fleet_heartbeat_clear(&d);
	free(got);

	memset(name, 'g', sizeof(name) - 1);
	for (size_t n = 1; n < sizeof(name); n += 7) {
		struct buf b;

		applied[1].id = name + sizeof(name) - 1 - n;
		buf_init(&b, FLEET_HEARTBEAT_MAX);
		CHECK_INT(fleet_heartbeat_encode(&hb, &b), 0);
		CHECK(buf_len(&b) > 0 && buf_len(&b) <= FLEET_HEARTBEAT_MAX);
		buf_free(&b);
	}
}

static void decode_refuses(void)
{
	static const struct {
		const char *value;
		int code;
		const char *why;
	} bad[] = {
	    {"not json", FLEET_HEARTBEAT_ERR_JSON, "not JSON"},
	    {"[1]", FLEET_HEARTBEAT_ERR_JSON, "not one JSON object"},
	    {"{\"device\":\"a\",\"device\":\"b\"}", FLEET_HEARTBEAT_ERR_JSON,
	     "member device named twice"},
	    {"{\"version\":\"1\"}", FLEET_HEARTBEAT_ERR_SHAPE, "member device is missing"},
	    {"{\"device\":7}", FLEET_HEARTBEAT_ERR_SHAPE, "member device is not a string"},
	    {"{\"device\":\"d\",\"version\":\"1\",\"at\":3.5}", FLEET_HEARTBEAT_ERR_SHAPE,
	     "member at is not an integer"},
	    {"{\"device\":\"d\",\"version\":\"1\",\"at\":\"3\"}", FLEET_HEARTBEAT_ERR_SHAPE,
	     "member at is not an integer"},
	    {"{\"device\":\"d\",\"version\":\"1\",\"at\":1,\"seq\":1,\"interval_ms\":1,\"health\":"
	     "\"ok\",\"reason\":null,\"last_ack_ms\":null,\"backlog_bytes\":0,\"rss_kb\":0,"
	     "\"lost\":"
	     "[]}",
	     FLEET_HEARTBEAT_ERR_SHAPE, "member lost is missing or not an object"},
	    {"{\"device\":\"d\",\"version\":\"1\",\"at\":1,\"seq\":1,\"interval_ms\":1,\"health\":"
	     "\"ok\",\"reason\":null,\"last_ack_ms\":null,\"backlog_bytes\":0,\"rss_kb\":0,"
	     "\"lost\":"
	     "{\"records\":0,\"bytes\":0,\"files\":0},\"connectors\":[1],\"groups\":[],\"applied\":"
	     "{}"
	     "}",
	     FLEET_HEARTBEAT_ERR_SHAPE, "member connectors holds an item that is not a string"},
	    {"{\"device\":\"d\",\"version\":\"1\",\"at\":1,\"seq\":1,\"interval_ms\":1,\"health\":"
	     "\"ok\",\"reason\":null,\"last_ack_ms\":null,\"backlog_bytes\":0,\"rss_kb\":0,"
	     "\"lost\":"
	     "{\"records\":0,\"bytes\":0,\"files\":0},\"connectors\":[],\"groups\":[],\"applied\":{"
	     "\"t\":5}}",
	     FLEET_HEARTBEAT_ERR_SHAPE, "applied member t is not an object"},
	};
	struct fleet_heartbeat d;
	char *huge;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";

		CHECK_INT(fleet_heartbeat_decode(bad[i].value, strlen(bad[i].value), &d, err,
		                                 sizeof(err)),
		          bad[i].code);
		CHECK_STR(err, bad[i].why);
		fleet_heartbeat_clear(&d);
	}
	huge = calloc(1, FLEET_HEARTBEAT_DECODE_MAX + 2);
	if (huge != NULL) {
		char err[256] = "";

		memset(huge, ' ', FLEET_HEARTBEAT_DECODE_MAX + 1);
		CHECK_INT(fleet_heartbeat_decode(huge, FLEET_HEARTBEAT_DECODE_MAX + 1, &d, err,
		                                 sizeof(err)),
		          FLEET_HEARTBEAT_ERR_TOOBIG);
		fleet_heartbeat_clear(&d);
		free(huge);
	}
	{
		struct fleet_heartbeat hb = {.device = "d", .version = NULL, .health = "ok"};
		struct buf b;

		buf_init(&b, 1024);
		CHECK_INT(fleet_heartbeat_encode(&hb, &b), FLEET_HEARTBEAT_ERR_ARG);
		buf_free(&b);
	}
	CHECK_STR(fleet_heartbeat_strerror(FLEET_HEARTBEAT_ERR_SHAPE),
	          "not the shape of skiff's heartbeat or outcome");
}

/* ---- outcomes ---------------------------------------------------------------- */

static char *encode_outcome(const struct fleet_outcome *o)
{
	struct buf b;
	char *out = NULL;

	buf_init(&b, 1 << 16);
	CHECK_INT(fleet_outcome_encode(o, &b), 0);
	buf_addz(&b, "");
	CHECK_INT(buf_take(&b, &out, NULL), 0);
	return out;
}

static void outcomes(void)
{
	struct fleet_outcome o = {
	    .topic = "skiff.config.gw-0042",
	    .offset = 17,
	    .record = CONNECT_CONNECTOR,
	    .outcome = FLEET_OUTCOME_APPLIED,
	    .worker_id = "gw-0042",
	    .generation = 12,
	    .at_ms = 1796481706349,
	};
	struct fleet_outcome d;
	char err[256] = "", *got = encode_outcome(&o), long_reason[3000];

	CHECK_STR(got, "{\"topic\":\"skiff.config.gw-0042\",\"offset\":17,\"record\":\"connector\","
	               "\"outcome\":\"APPLIED\",\"reason\":null,\"worker_id\":\"gw-0042\","
	               "\"generation\":12,\"at\":1796481706349}");
	CHECK_INT(fleet_outcome_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK_STR(d.topic, o.topic);
	CHECK_INT(d.offset, 17);
	CHECK_INT(d.record, CONNECT_CONNECTOR);
	CHECK_INT(d.outcome, FLEET_OUTCOME_APPLIED);
	CHECK(d.reason == NULL);
	CHECK_STR(d.worker_id, "gw-0042");
	CHECK_INT(d.generation, 12);
	CHECK_INT(d.at_ms, 1796481706349);
	fleet_outcome_clear(&d);
	free(got);

	/* REFUSED with a reason, cut at the bound with "..." to say so. */
	o.record = CONNECT_TARGET_STATE;
	o.outcome = FLEET_OUTCOME_REFUSED;
	o.reason =
	    "connector app: file /etc/shadow is outside fleet.allow.files (/var/log/app/*.log)";
	got = encode_outcome(&o);
	CHECK(strstr(got, "\"record\":\"target-state\",\"outcome\":\"REFUSED\",\"reason\":"
	                  "\"connector app: file /etc/shadow is outside fleet.allow.files "
	                  "(/var/log/app/*.log)\"") != NULL);
	CHECK_INT(fleet_outcome_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK_STR(d.reason, o.reason);
	CHECK_INT(d.record, CONNECT_TARGET_STATE);
	CHECK_INT(d.outcome, FLEET_OUTCOME_REFUSED);
	fleet_outcome_clear(&d);
	free(got);

	memset(long_reason, '\n', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	o.reason = long_reason;
	o.record = CONNECT_RESTART;
	got = encode_outcome(&o);
	CHECK_INT(fleet_outcome_decode(got, strlen(got), &d, err, sizeof(err)), 0);
	CHECK(d.reason != NULL && strlen(d.reason) == (FLEET_OUTCOME_REASON_MAX - 2 - 3) / 2 + 3);
	CHECK(d.reason != NULL && strcmp(d.reason + strlen(d.reason) - 3, "...") == 0);
	CHECK_INT(d.record, CONNECT_RESTART);
	fleet_outcome_clear(&d);
	free(got);

	{
		static const struct {
			const char *value;
			const char *why;
		} bad[] = {
		    {"{\"topic\":\"t\",\"offset\":1,\"record\":\"task\",\"outcome\":\"APPLIED\","
		     "\"reason\":null,\"worker_id\":\"w\",\"generation\":1,\"at\":1}",
		     "member record task is none of connector, target-state, restart"},
		    {"{\"topic\":\"t\",\"offset\":1,\"record\":\"restart\",\"outcome\":\"DONE\","
		     "\"reason\":null,\"worker_id\":\"w\",\"generation\":1,\"at\":1}",
		     "member outcome DONE is neither APPLIED nor REFUSED"},
		    {"{\"topic\":\"t\",\"offset\":1,\"record\":\"restart\",\"outcome\":\"APPLIED\","
		     "\"reason\":null,\"worker_id\":\"w\",\"generation\":2147483648,\"at\":1}",
		     "member generation 2147483648 is not an int32"},
		    {"{\"topic\":\"t\",\"offset\":1.5}", "member offset is not an integer"},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			CHECK_INT(fleet_outcome_decode(bad[i].value, strlen(bad[i].value), &d, err,
			                               sizeof(err)),
			          FLEET_HEARTBEAT_ERR_SHAPE);
			CHECK_STR(err, bad[i].why);
			fleet_outcome_clear(&d);
		}
	}
	{
		struct buf b;

		buf_init(&b, 1024);
		o.record = CONNECT_TASK;
		CHECK_INT(fleet_outcome_encode(&o, &b), FLEET_HEARTBEAT_ERR_ARG);
		buf_free(&b);
	}
}

static void keys(void)
{
	struct buf b;
	const char *name = NULL;
	size_t n = 0;

	buf_init(&b, 1024);
	CHECK_INT(fleet_outcome_key("app", &b), 0);
	CHECK_STR(buf_cstr(&b), "skiff-outcome-app");
	CHECK(fleet_outcome_key_parse(buf_ptr(&b), buf_len(&b), &name, &n));
	CHECK(n == 3 && memcmp(name, "app", 3) == 0);
	CHECK(!fleet_outcome_key_parse("skiff-outcome-", 14, &name, &n));
	CHECK(
	    !fleet_outcome_key_parse(FLEET_HEARTBEAT_KEY, strlen(FLEET_HEARTBEAT_KEY), &name, &n));
	CHECK_INT(fleet_outcome_key("", &b), FLEET_HEARTBEAT_ERR_ARG);
	buf_free(&b);
}

int main(void)
{
	fields();
	round_trip();
	long_topic_id();
	hundred_long_names();
	bound_holds();
	a_device_in_a_group();
	decode_refuses();
	outcomes();
	keys();
	return testlib_done("test_fleet_heartbeat");
}
