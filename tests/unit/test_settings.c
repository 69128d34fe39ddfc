/* settings and config: Connect's files as shipped, the inline form, and every
 * error with file:line. */
#include "config/config.h"
#include "cli/help.h"
#include "config/settings.h"
#include "core/source.h"
#include "testlib.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[256];

static char *write_tmp(const char *name, const char *text)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 512, "%s/%s", dir, name);
	testlib_write_file(p, text, strlen(text));
	return p;
}

/* Loads the files; returns 0 or -1 and leaves the error in err. */
static int load(struct settings *s, char *err, size_t errlen, int n, ...)
{
	char *paths[8];
	va_list ap;
	int rc;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		paths[i] = va_arg(ap, char *);
	va_end(ap);
	err[0] = '\0';
	rc = settings_load(paths, (size_t)n, s, err, errlen);
	if (rc != 0)
		settings_destroy(s);
	return rc;
}

static void test_connect_files_unchanged(void)
{
	struct settings s;
	char err[1024];
	char *w = "../props/corpus/connect-standalone.properties";
	char *c = "../props/corpus/connect-file-source.properties";

	CHECK_INT(load(&s, err, sizeof(err), 2, w, c), 0);
	if (err[0])
		fprintf(stderr, "%s\n", err);
	CHECK_INT(s.nconnectors, 1);
	CHECK_STR(s.connectors[0].name, "local-file-source");
	CHECK_STR(s.connectors[0].ops->kind, "file");
	CHECK_STR(config_str(s.connectors[0].cfg, "file"), "test.txt");
	CHECK_STR(config_str(s.connectors[0].cfg, "topic"), "connect-test");
	CHECK_INT(config_int(s.worker, "offset.flush.interval.ms"), 10000);
	CHECK_INT(config_int(s.worker, "offset.flush.timeout.ms"), 5000);
	CHECK_STR(config_str(s.worker, "offset.storage.file.filename"), "/tmp/connect.offsets");
	CHECK(s.connectors[0].value_conv.kind == CONV_JSON &&
	      s.connectors[0].value_conv.schemas_enable);
	settings_destroy(&s);
}

static void test_inline_and_overrides(void)
{
	struct settings s;
	char err[1024];
	char *w = write_tmp("device.properties",
	                    "bootstrap.servers = 127.0.0.1:9092\n"
	                    "offset.storage.file.filename=/var/lib/skiff/offsets\n"
	                    "value.converter=StringConverter\n"
	                    "plugin.path=/usr/share/java\n"
	                    "internal.key.converter.schemas.enable=false\n"
	                    "producer.linger.ms=20\n"
	                    "connectors.syslog.connector.class=org.apache.kafka.connect.file."
	                    "FileStreamSourceConnector\n"
	                    "connectors.syslog.file=/var/log/syslog\n"
	                    "connectors.syslog.topic=logs\n"
	                    "connectors.app.connector.class=FileStreamSourceConnector\n"
	                    "connectors.app.file=/var/log/app.log\n"
	                    "connectors.app.topic=app\n"
	                    "connectors.app.value.converter=JsonConverter\n"
	                    "connectors.app.value.converter.schemas.enable=false\n");

	CHECK_INT(load(&s, err, sizeof(err), 1, w), 0);
	if (err[0])
		fprintf(stderr, "%s\n", err);
	CHECK_INT(s.nconnectors, 2);
	CHECK_STR(s.connectors[0].name, "syslog");
	CHECK_STR(s.connectors[1].name, "app");
	CHECK(s.connectors[0].value_conv.kind == CONV_STRING);
	CHECK(s.connectors[1].value_conv.kind == CONV_JSON);
	CHECK(!s.connectors[1].value_conv.schemas_enable);
	CHECK(s.connectors[0].key_conv.kind == CONV_JSON);
	CHECK_INT(config_notice_count(s.worker), 2);
	CHECK_INT(config_passthrough_count(s.worker), 1);
	CHECK_STR(config_passthrough_key(s.worker, 0), "producer.linger.ms");
	{
		char want[600];

		snprintf(want, sizeof(want), "%s:11", w);
		CHECK_STR(config_where(s.connectors[1].cfg, "file"), want);
	}
	settings_destroy(&s);
}

static void expect_error(const char *text, const char *want_substring)
{
	struct settings s;
	char err[1024];
	char *w = write_tmp("bad.properties", text);

	CHECK_INT(load(&s, err, sizeof(err), 1, w), -1);
	if (strstr(err, want_substring) == NULL) {
		testlib_failures++;
		fprintf(stderr, "error '%s' lacks '%s'\n", err, want_substring);
	}
}

static void test_errors(void)
{
	const char *base = "offset.storage.file.filename=/tmp/o\n"
	                   "connectors.a.connector.class=FileStreamSource\n"
	                   "connectors.a.file=/tmp/f\n"
	                   "connectors.a.topic=t\n";
	char text[1024];

	snprintf(text, sizeof(text), "%sofset.flush.interval.ms=5\n", base);
	expect_error(text, "bad.properties:5: unknown property 'ofset.flush.interval.ms'");
	snprintf(text, sizeof(text), "%soffset.flush.interval.ms=12abc\n", base);
	expect_error(text, "bad.properties:5: offset.flush.interval.ms: '12abc' is not an integer");
	snprintf(text, sizeof(text), "%soffset.flush.interval.ms=-1\n", base);
	expect_error(text, "bad.properties:5: offset.flush.interval.ms: -1 is out of range");
	snprintf(text, sizeof(text), "%svalue.converter.schemas.enable=yes\n", base);
	expect_error(
	    text, "bad.properties:5: value.converter.schemas.enable: 'yes' is not true or false");
	snprintf(text, sizeof(text), "%svalue.converter.schema.enable=false\n", base);
	expect_error(text, "bad.properties:5: unknown property 'value.converter.schema.enable'");
	snprintf(text, sizeof(text), "%sconnectors.a.batch.size=0\n", base);
	expect_error(text, "bad.properties:5: batch.size: 0 is out of range");
	snprintf(text, sizeof(text), "%sconnectors.a.fille=/x\n", base);
	expect_error(text, "bad.properties:5: unknown property 'connectors.a.fille'");
	snprintf(text, sizeof(text), "%sconnectors.a.max.line.policy=drop\n", base);
	expect_error(text, "max.line.policy: 'drop' is not one of split|truncate|skip");
	snprintf(text, sizeof(text), "%svalue.converter=io.confluent.connect.avro.AvroConverter\n",
	         base);
	expect_error(text, "bad.properties:5: value.converter: unknown converter "
	                   "'io.confluent.connect.avro.AvroConverter'");
	snprintf(text, sizeof(text), "%sconnectors.a.name=x\n", base);
	expect_error(text, "an inline connector is named by its prefix");
	expect_error("offset.storage.file.filename=/tmp/o\nconnectors.b.connector.class=Nope\n",
	             "unknown connector class 'Nope'");
	expect_error("offset.storage.file.filename=/tmp/o\nconnectors.b.connector.class=Nope\n",
	             "(known: FileStreamSource, JdbcSourceConnector");
	expect_error("offset.storage.file.filename=/tmp/"
	             "o\nconnectors.b.connector.class=FileStreamSource\nconnectors.b.file=/f\n",
	             "missing required property 'topic'");
	expect_error("bootstrap.servers=x:1\n",
	             "missing required property 'offset.storage.file.filename'");
	expect_error("offset.storage.file.filename=/tmp/o\n", "no connector");
	expect_error("offset.storage.topic=o\noffset.storage.partitions=0\n",
	             "offset.storage.partitions=0: give -1");
	expect_error("offset.storage.file.filename=/tmp/o\nexactly.once.source.support=enabled\n",
	             "exactly.once.source.support=enabled needs offset.storage.topic");
	expect_error("offset.storage.topic=o\nconnectors.a.connector.class=FileStreamSource\n"
	             "connectors.a.file=/tmp/a\nconnectors.a.topic=t\n"
	             "connectors.a.transaction.boundary=connector\n",
	             "no skiff source defines transaction boundaries");
	expect_error("offset.storage.topic=o\nexactly.once.source.support=on\n",
	             "exactly.once.source.support");
	expect_error("offset.storage.file.filename=/tmp/o\nconnectors.=x\n",
	             "is not connectors.<name>.<property>");
	expect_error("offset.storage.file.filename=/tmp/o\nkey=\\u12\n", "bad.properties:2");
}

static void test_separate_files_errors(void)
{
	struct settings s;
	char err[1024];
	char *w = write_tmp("w.properties", "offset.storage.file.filename=/tmp/o\n");
	char *c1 = write_tmp("c1.properties",
	                     "name=x\nconnector.class=FileStreamSource\nfile=/a\ntopic=t\n");
	char *c2 = write_tmp("c2.properties",
	                     "name=x\nconnector.class=FileStreamSource\nfile=/b\ntopic=t\n");
	char *c3 =
	    write_tmp("c3.properties", "connector.class=FileStreamSource\nfile=/b\ntopic=t\n");

	CHECK_INT(load(&s, err, sizeof(err), 3, w, c1, c2), -1);
	CHECK(strstr(err, "connector name 'x' is used twice") != NULL);
	CHECK_INT(load(&s, err, sizeof(err), 2, w, c3), -1);
	CHECK(strstr(err, "c3.properties: missing required property 'name'") != NULL);
	CHECK_INT(load(&s, err, sizeof(err), 2, w, "/nonexistent/c.properties"), -1);
	CHECK(strstr(err, "/nonexistent/c.properties") != NULL);
}

static void test_secrets_masked(void)
{
	struct settings s;
	char err[1024], *out = NULL;
	size_t len = 0;
	FILE *fp;
	char *w = write_tmp("sec.properties", "offset.storage.file.filename=/tmp/o\n"
	                                      "producer.sasl.password=hunter2\n"
	                                      "sasl.oauthbearer.client.secret=hunter3\n"
	                                      "producer.ssl.key.password=hunter4\n"
	                                      "connectors.a.connector.class=FileStreamSource\n"
	                                      "connectors.a.file=/tmp/f\n"
	                                      "connectors.a.topic=t\n");

	CHECK_INT(load(&s, err, sizeof(err), 1, w), 0);
	fp = open_memstream(&out, &len);
	settings_print(&s, fp);
	fclose(fp);
	CHECK(strstr(out, "hunter") == NULL);
	CHECK(strstr(out, "producer.sasl.password=[hidden]") != NULL);
	CHECK(strstr(out, "file=/tmp/f") != NULL);
	free(out);
	settings_destroy(&s);
	/* A JAAS line librdkafka cannot read is refused, its secret not shown. */
	w = write_tmp("jaas.properties",
	              "offset.storage.file.filename=/tmp/o\n"
	              "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
	              "required password=\"hunter5\";\n"
	              "connectors.a.connector.class=FileStreamSource\n"
	              "connectors.a.file=/tmp/f\n"
	              "connectors.a.topic=t\n");
	CHECK_INT(load(&s, err, sizeof(err), 1, w), -1);
	CHECK(strstr(err, "jaas.properties:2: sasl.jaas.config: librdkafka reads no JAAS") != NULL);
	CHECK(strstr(err, "hunter") == NULL);
	CHECK_STR(config_display("producer.sasl.password", "x", 0), "[hidden]");
	CHECK_STR(config_display("bootstrap.servers", "x", 0), "x");
}

/* The element of o's array arr whose "name" (or whose string value) is want;
 * NULL when none. */
static const cJSON *find(const cJSON *o, const char *arr, const char *want)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, arr))
	{
		const char *n = cJSON_IsString(it)
		                    ? it->valuestring
		                    : cJSON_GetStringValue(cJSON_GetObjectItem(it, "name"));

		if (n != NULL && strcmp(n, want) == 0)
			return it;
	}
	return NULL;
}

static const char *member(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* --help-config's document holds every key of every table, as the tables
 * say, and the text is made from it. */
static void test_help_lists_every_key(void)
{
	cJSON *doc = NULL;
	const cJSON *sections, *worker, *rest, *fleet, *conn, *k, *defs;
	char *out = NULL;
	size_t len = 0, nsources = 0;
	FILE *fp;

	CHECK_INT(settings_help_doc(&doc), 0);
	if (doc == NULL)
		return;
	sections = cJSON_GetObjectItem(doc, "sections");
	worker = cJSON_GetArrayItem(sections, 0);
	rest = cJSON_GetArrayItem(sections, 1);
	fleet = cJSON_GetArrayItem(sections, 2);
	conn = cJSON_GetArrayItem(sections, 3);
	CHECK_STR(member(worker, "id"), "worker");
	CHECK_STR(member(rest, "id"), "rest");
	CHECK_STR(member(fleet, "id"), "fleet");
	CHECK_STR(member(conn, "id"), "connector");
	/* The fleet's: Connect's two topics are keys now, no more ignored. */
	CHECK_STR(member(find(fleet, "keys", "status.storage.topic"), "default"),
	          "skiff.status.{device}");
	CHECK_STR(member(find(fleet, "keys", "status.storage.partitions"), "default"), "1");
	CHECK(find(fleet, "keys", "fleet.allow.files") != NULL);
	CHECK(find(worker, "ignored", "config.storage.topic") == NULL);
	/* The REST API's keys, Connect's and skiff's bounds. */
	CHECK(find(rest, "keys", "listeners") != NULL);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(
	    find(rest, "keys", "listeners.https.ssl.keystore.password"), "secret")));
	CHECK_STR(member(find(rest, "keys", "rest.max.connections"), "default"), "64");
	CHECK(find(rest, "ignored", "rest.port") != NULL);
	k = find(worker, "keys", "offset.flush.interval.ms");
	CHECK_STR(member(k, "default"), "60000");
	CHECK_STR(member(k, "min"), "0");
	CHECK_STR(member(k, "max"), "2147483647");
	/* int64 bounds as text: exact, where a JSON number read as a double is not */
	CHECK_STR(member(find(conn, "keys", "errors.retry.timeout"), "min"),
	          "-9223372036854775808");
	k = find(worker, "keys", "log.level");
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(k, "choices")), 5);
	CHECK(cJSON_GetObjectItem(k, "default") == NULL);
	k = find(conn, "keys", "name");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(k, "required")));
	CHECK(cJSON_GetObjectItem(k, "default") == NULL);
	CHECK(find(worker, "ignored", "plugin.path") != NULL);
	CHECK(find(worker, "keys", "plugin.path") == NULL);
	/* the producer's defaults are sink_kafka.c's, not a copy */
	defs = cJSON_GetObjectItem(find(worker, "patterns", "producer.*, kafka.*"), "defaults");
	CHECK_STR(member(defs, "acks"), "all");
	CHECK_STR(member(defs, "message.timeout.ms"), "0");
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		const cJSON *sec = cJSON_GetArrayItem(sections, (int)(4 + i));

		nsources++;
		CHECK_STR(member(sec, "kind"), source_registry[i]->kind);
		for (const struct config_key *t = source_registry[i]->config_keys; t->name; t++)
			CHECK(find(sec, (t->flags & CFG_INERT) ? "ignored" : "keys", t->name) !=
			      NULL);
	}
	CHECK_INT(cJSON_GetArraySize(sections), 4 + nsources);
	CHECK(find(doc, "chain_keys", "transforms") != NULL);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "transforms")) > 0);

	fp = open_memstream(&out, &len);
	help_print_text(doc, fp);
	fclose(fp);
	CHECK(strstr(out, "offset.flush.interval.ms  (int, default \"60000\", 0..2147483647)") !=
	      NULL);
	CHECK(strstr(out, "offset.flush.timeout.ms  (int, default \"5000\"") != NULL);
	CHECK(strstr(out, "  name  (string, required)\n") != NULL);
	CHECK(strstr(out, "one of error|warn|notice|info|debug)") != NULL);
	CHECK(strstr(out, "skiff's defaults: enable.idempotence=true acks=all") != NULL);
	CHECK(strstr(out, "org.apache.kafka.connect.transforms.Cast$Key|$Value") != NULL);
	free(out);
	cJSON_Delete(doc);
}

/* The list in messages is the registry's: each source's first class name. */
static void test_class_names_from_registry(void)
{
	char want[512] = "", got[512], small[8];
	size_t n = 0;

	for (size_t i = 0; source_registry[i] != NULL; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%s", i ? ", " : "",
		                      source_registry[i]->classes[0]);
	CHECK_INT(source_class_names(got, sizeof(got)), n);
	CHECK_STR(got, want);
	CHECK_INT(source_class_names(small, sizeof(small)), n); /* the length, as snprintf */
	CHECK_STR(small, "FileStr");
}

/* Kafka's config/connect-distributed.properties as shipped (3.9.1, comments
 * dropped), with the partitions it leaves commented out. */
static const char connect_distributed[] =
    "bootstrap.servers=localhost:9092\n"
    "group.id=connect-cluster\n"
    "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
    "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
    "key.converter.schemas.enable=true\n"
    "value.converter.schemas.enable=true\n"
    "offset.storage.topic=connect-offsets\n"
    "offset.storage.replication.factor=1\n"
    "offset.storage.partitions=25\n"
    "config.storage.topic=connect-configs\n"
    "config.storage.replication.factor=1\n"
    "status.storage.topic=connect-status\n"
    "status.storage.replication.factor=1\n"
    "status.storage.partitions=5\n"
    "offset.flush.interval.ms=10000\n";

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What settings_log_notices writes to stderr, its lines sorted. Static
 * storage. */
static const char *logged_notices(const struct settings *s)
{
	static char out[8192];
	char path[512], *lines[64], *text = NULL, *p;
	size_t n = 0, used = 0, len = 0;
	FILE *f;
	int saved;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/notices.log", dir);
	fflush(stderr);
	saved = dup(2);
	if (saved < 0 || (f = fopen(path, "w")) == NULL) {
		CHECK(false);
		return out;
	}
	dup2(fileno(f), 2);
	settings_log_notices(s);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(f);
	if ((f = fopen(path, "r")) == NULL || getdelim(&text, &len, '\0', f) < 0) {
		CHECK(false);
		return out;
	}
	fclose(f);
	for (p = text; *p != '\0' && n < 64;) {
		char *nl = strchr(p, '\n');

		lines[n++] = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	qsort(lines, n, sizeof(lines[0]), cmp_line);
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", lines[i]);
	free(text);
	return out;
}

/* A Connect distributed worker file runs skiff as it did before the fleet:
 * config.storage.* and status.storage.* are accepted with the notice an
 * inert key gets, word for word, and nothing else is said (issue 28: a
 * device must never read a Connect cluster's configurations because its
 * worker file names them). */
static void test_connect_distributed_file_compat(void)
{
	struct settings s;
	char err[1024], want[4096];
	char *w = write_tmp("connect-distributed.properties", connect_distributed);
	char *c = "../props/corpus/connect-file-source.properties";
	/* In logged_notices' order: sorted as text ("...:10: config..." first). */
	const char *const inert[] = {
	    "config.storage.topic:10",      "config.storage.replication.factor:11",
	    "status.storage.topic:12",      "status.storage.replication.factor:13",
	    "status.storage.partitions:14", "group.id:2",
	};
	size_t used = 0;

	CHECK_INT(load(&s, err, sizeof(err), 2, w, c), 0);
	if (err[0]) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	for (size_t i = 0; i < sizeof(inert) / sizeof(inert[0]); i++) {
		const char *colon = strchr(inert[i], ':');

		used +=
		    (size_t)snprintf(want + used, sizeof(want) - used,
		                     "skiff notice: %s:%s: %.*s is a Kafka Connect setting with "
		                     "no meaning for skiff; ignored\n",
		                     w, colon + 1, (int)(colon - inert[i]), inert[i]);
	}
	CHECK_STR(logged_notices(&s), want);
	CHECK_INT(s.nconnectors, 1);
	settings_destroy(&s);
}

int main(void)
{
	test_class_names_from_registry();
	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	test_connect_files_unchanged();
	test_connect_distributed_file_compat();
	test_inline_and_overrides();
	test_errors();
	test_separate_files_errors();
	test_secrets_masked();
	test_help_lists_every_key();
	return testlib_done("test_settings");
}
