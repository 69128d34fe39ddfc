/* fleetallow: what a connector configuration from the fleet may name
 * (issue 28, design §3, §5.1). The device's lists are built by hand here
 * (struct fleet_allow_conf, as fleetconf's table binds them); connectors
 * for pass 2 are loaded by settings from files, as the reload would. */
#include "fleet/fleetallow.h"

#include "config/settings.h"
#include "core/source.h"
#include "fleet/fleetconf.h"
#include "testlib.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lists built by hand --------------------------------------------------------- */

#define MAX_LISTS 64

static struct {
	char *text;
	const char **items;
} made[MAX_LISTS];
static size_t nmade;

/* A config_list of the comma-separated text (items trimmed of nothing: the
 * tests write none). Freed by free_lists(). */
static struct config_list list(const char *text)
{
	struct config_list l = {0};
	char *t = strdup(text), *p;
	const char **items = calloc(strlen(text) + 1, sizeof(*items));

	if (t == NULL || items == NULL || nmade == MAX_LISTS)
		abort();
	made[nmade].text = t;
	made[nmade].items = items;
	nmade++;
	l.text = text;
	for (p = t; *text != '\0';) {
		char *comma = strchr(p, ',');

		items[l.n++] = p;
		if (comma == NULL)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	l.items = items;
	return l;
}

static void free_lists(void)
{
	for (size_t i = 0; i < nmade; i++) {
		free(made[i].text);
		free(made[i].items);
	}
	nmade = 0;
}

/* ---- paths ------------------------------------------------------------------------ */

static int path_rc(const char *allowed, const char *path, bool glob)
{
	struct config_list l = list(allowed);
	const char *why;

	return fleetallow_path(&l, path, glob, &why);
}

static void test_paths(void)
{
	const char *app = "/var/log/app/*.log";
	const char *why;
	struct config_list l = list(app);

	CHECK_INT(path_rc(app, "/var/log/app/x.log", false), 0);
	CHECK_INT(path_rc(app, "/etc/shadow", false), FLEETALLOW_ERR_FILE);
	CHECK_INT(fleetallow_path(&l, "/var/log/app/../../etc/shadow", false, &why),
	          FLEETALLOW_ERR_PATH);
	CHECK_STR(why, "has a '..' component");
	/* a '..' that only looks inside: refused all the same (lexically) */
	CHECK_INT(path_rc(app, "/var/log/app/../app/x.log", false), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc(app, "var/log/app/x.log", false), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc(app, "/var/log/app//x.log", false), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc(app, "/var/log/app/./x.log", false), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc(app, "/var/log/app/", false), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc(app, "/var/log/app/x.log/", false), FLEETALLOW_ERR_PATH);
	/* a literal path is a name, whatever bytes it holds */
	CHECK_INT(path_rc(app, "/var/log/app/[x].log", false), 0);
	CHECK_INT(path_rc(app, "/var/log/app/*", false), FLEETALLOW_ERR_FILE);
	/* one of several allowed globs; a relative allowed one allows nothing */
	CHECK_INT(path_rc("var/log/*,/srv/*/out.log", "/srv/a/out.log", false), 0);
	CHECK_INT(path_rc("var/log/*", "/var/log/x", false), FLEETALLOW_ERR_FILE);
	/* nothing allowed */
	CHECK_INT(path_rc("", "/var/log/app/x.log", false), FLEETALLOW_ERR_FILE);
}

/* A remote glob is allowed when every name it can match is: both ways. */
static void test_glob_subsets(void)
{
	/* the allowed glob is wider: accepted */
	CHECK_INT(path_rc("/var/log/app/*", "/var/log/app/*.log", true), 0);
	CHECK_INT(path_rc("/var/log/app/*", "/var/log/app/[a-z].log", true), 0);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/[a-z].log", true), 0);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/a*b.log", true), 0);
	CHECK_INT(path_rc("/var/log/[a-z]*/*.log", "/var/log/app/*.log", true), 0);
	CHECK_INT(path_rc("/var/log/app/?.log", "/var/log/app/[ab].log", true), 0);
	CHECK_INT(path_rc("/var/log/app/[a-c].log", "/var/log/app/[ab].log", true), 0);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/{a,b}.log", true), 0);
	/* the remote glob is wider: refused */
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/*", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/*/x", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/*/x.log", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/*/x.log", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/[ab].log", "/var/log/app/[a-c].log", true),
	          FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/[a-z].log", "/var/log/app/?.log", true),
	          FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/{app,../etc}/x.log", true),
	          FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/{app,etc}/x.log", true),
	          FLEETALLOW_ERR_FILE);
	/* where fnmatch(allowed, remote as text) would say yes and be wrong */
	CHECK_INT(path_rc("/var/log/app/?.log", "/var/log/app/*.log", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/\\*", "/var/log/app/*", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/[*]x", "/var/log/app/*x", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(path_rc("/var/log/app/x?", "/var/log/app/x*", true), FLEETALLOW_ERR_FILE);
	/* but a remote escaped '*' is the name "*" */
	CHECK_INT(path_rc("/var/log/app/\\*", "/var/log/app/\\*", true), 0);
	/* a group without ',' is checked both ways; the alternatives are bounded */
	CHECK_INT(path_rc("/var/log/app/*.log", "/var/log/app/{x}.log", true), 0);
	CHECK_INT(path_rc("/var/log/app/x.log", "/var/log/app/{x}.log", true), FLEETALLOW_ERR_FILE);
	CHECK_INT(
	    path_rc("/var/log/app/*", "/var/log/app/{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}.log", true),
	    FLEETALLOW_ERR_PATH);
	CHECK_INT(
	    path_rc("/var/log/app/*", "/var/log/app/{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}.log", true), 0);
	/* globs that can reach a parent or the directory itself */
	CHECK_INT(path_rc("/var/log/app/*/x", "/var/log/app/.*/x", true), FLEETALLOW_ERR_PATH);
	CHECK_INT(path_rc("/var/log/app/*/x", "/var/log/app/.?/x", true), FLEETALLOW_ERR_PATH);
	/* glob(3) matches a leading period only by a literal one: never ".." */
	CHECK_INT(path_rc("/var/log/app/*/x", "/var/log/app/[.][.]/x", true), 0);
	CHECK_INT(path_rc("/var/log/app/*/x", "/var/log/app/*/x", true), 0);
}

/* ---- pass 1: the record ----------------------------------------------------------- */

static int record_rc(const struct fleet_allow_conf *a, const char *json, char *err, size_t len)
{
	cJSON *o = cJSON_Parse(json);
	int rc;

	CHECK(o != NULL);
	rc = fleetallow_record(a, "app", cJSON_GetObjectItemCaseSensitive(o, "properties"), err,
	                       len);
	cJSON_Delete(o);
	return rc;
}

static void test_record(void)
{
	struct fleet_allow_conf a = {0};
	char err[512];

	/* Connect's own record (the capture): passes pass 1 whatever the lists */
	CHECK_INT(record_rc(&a,
	                    "{\"properties\":{\"connector.class\":\"FileStreamSource\","
	                    "\"tasks.max\":\"1\",\"file\":\"/tmp/in.txt\",\"topic\":"
	                    "\"data-15f0c3\",\"name\":\"app\"}}",
	                    err, sizeof(err)),
	          0);
	/* a secret named in a value, refused before anything resolves it */
	CHECK_INT(record_rc(&a,
	                    "{\"properties\":{\"name\":\"app\",\"transforms.tag.static.value\":"
	                    "\"${file:/etc/shadow:x}\"}}",
	                    err, sizeof(err)),
	          FLEETALLOW_ERR_PROVIDER);
	CHECK_STR(err, "connector app: ${file:/etc/shadow:x} in transforms.tag.static.value is "
	               "not allowed by fleet.allow.providers (empty)");
	a.providers = list("file:/etc/skiff/*.properties,env");
	CHECK_INT(
	    record_rc(&a, "{\"properties\":{\"v\":\"a${file:/etc/shadow:x}b\"}}", err, sizeof(err)),
	    FLEETALLOW_ERR_PROVIDER);
	CHECK_INT(record_rc(&a, "{\"properties\":{\"v\":\"${file:/etc/skiff/../shadow:x}\"}}", err,
	                    sizeof(err)),
	          FLEETALLOW_ERR_PROVIDER);
	CHECK_INT(record_rc(&a, "{\"properties\":{\"v\":\"${dir:/etc/skiff/f.properties:x}\"}}",
	                    err, sizeof(err)),
	          FLEETALLOW_ERR_PROVIDER);
	CHECK_INT(record_rc(&a,
	                    "{\"properties\":{\"v\":\"${file:/etc/skiff/f.properties:pw} "
	                    "${env:HOME}\"}}",
	                    err, sizeof(err)),
	          0);
	/* "${" that is no reference stays text: nothing to resolve */
	CHECK_INT(record_rc(&a, "{\"properties\":{\"v\":\"${nothing}\"}}", err, sizeof(err)), 0);
	a.providers = (struct config_list){0};

	/* worker keys, named */
	CHECK_INT(record_rc(&a, "{\"properties\":{\"bootstrap.servers\":\"evil:9092\"}}", err,
	                    sizeof(err)),
	          FLEETALLOW_ERR_WORKER_KEY);
	CHECK_STR(err, "connector app: bootstrap.servers is a worker key: only the device's own "
	               "worker file sets it");
	{
		static const char *const worker[] = {
		    "security.protocol",
		    "ssl.truststore.location",
		    "sasl.jaas.config",
		    "offset.storage.topic",
		    "offset.storage.file.filename",
		    "fleet.allow.files",
		    "fleet.enabled",
		    "config.storage.topic",
		    "listeners",
		    "config.providers",
		    "config.providers.f.class",
		    "connectors.x.file",
		    "kafka.debug",
		    "producer.acks",
		    "consumer.override.x",
		    "device.id",
		    "plugin.path",
		};

		for (size_t i = 0; i < sizeof(worker) / sizeof(worker[0]); i++) {
			char json[256];

			snprintf(json, sizeof(json), "{\"properties\":{\"%s\":\"x\"}}", worker[i]);
			if (record_rc(&a, json, err, sizeof(err)) != FLEETALLOW_ERR_WORKER_KEY)
				fprintf(stderr, "not refused: %s\n", worker[i]);
			CHECK_INT(record_rc(&a, json, err, sizeof(err)), FLEETALLOW_ERR_WORKER_KEY);
		}
	}
	/* keys a connector takes, some also worker keys */
	CHECK_INT(record_rc(&a,
	                    "{\"properties\":{\"key.converter\":\"x\",\"header.converter\":\"x\","
	                    "\"topic.prefix\":\"x\",\"transforms\":\"t\",\"predicates.p.type\":"
	                    "\"x\",\"offsets.storage.topic\":\"x\"}}",
	                    err, sizeof(err)),
	          0);

	/* producer overrides */
	CHECK_INT(
	    record_rc(&a, "{\"properties\":{\"producer.override.acks\":\"1\"}}", err, sizeof(err)),
	    FLEETALLOW_ERR_PRODUCER);
	CHECK_STR(err, "connector app: producer.override.acks needs fleet.allow.producer=true");
	a.producer = true;
	CHECK_INT(
	    record_rc(&a, "{\"properties\":{\"producer.override.acks\":\"1\"}}", err, sizeof(err)),
	    0);
	CHECK_INT(record_rc(&a,
	                    "{\"properties\":{\"producer.override.bootstrap.servers\":"
	                    "\"evil:9092\"}}",
	                    err, sizeof(err)),
	          FLEETALLOW_ERR_CLUSTER);
	CHECK_STR(err, "connector app: producer.override.bootstrap.servers would connect it "
	               "elsewhere: never allowed from the fleet, whatever fleet.allow.producer "
	               "says");
	{
		static const char *const cluster[] = {
		    "security.protocol",    "sasl.jaas.config",
		    "ssl.ca.location",      "metadata.broker.list",
		    "plugin.library.paths", "enable.ssl.certificate.verification",
		};

		for (size_t i = 0; i < sizeof(cluster) / sizeof(cluster[0]); i++) {
			char json[256];

			snprintf(json, sizeof(json),
			         "{\"properties\":{\"producer.override.%s\":\"x\"}}", cluster[i]);
			CHECK_INT(record_rc(&a, json, err, sizeof(err)), FLEETALLOW_ERR_CLUSTER);
		}
	}
	a.producer = false;

	/* name */
	CHECK_INT(record_rc(&a, "{\"properties\":{\"name\":\"other\"}}", err, sizeof(err)),
	          FLEETALLOW_ERR_NAME);
	CHECK_STR(err, "connector app: name is 'other', not the record's connector");
	CHECK_INT(record_rc(&a, "{\"properties\":{\"name\":null}}", err, sizeof(err)),
	          FLEETALLOW_ERR_NAME);
	/* shapes */
	CHECK_INT(record_rc(&a, "{\"properties\":{\"tasks.max\":1}}", err, sizeof(err)),
	          FLEETALLOW_ERR_RECORD);
	CHECK_INT(record_rc(&a, "{\"properties\":[]}", err, sizeof(err)), FLEETALLOW_ERR_RECORD);
	CHECK_INT(record_rc(&a, "{\"properties\":{\"file\":null}}", err, sizeof(err)), 0);
}

/* ---- pass 2: the connector --------------------------------------------------------- */

struct loaded {
	struct settings s;
	bool ok;
};

/* Loads the connector file text (name app) with a minimal worker file. */
static void load(struct loaded *l, const char *connector)
{
	const char *dir = testlib_tmpdir();
	char worker[512], wpath[512], cpath[512], err[1024];
	char *paths[2] = {wpath, cpath};
	int n;

	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/app.properties", dir);
	n = snprintf(worker, sizeof(worker),
	             "bootstrap.servers=localhost:9092\noffset.storage.file.filename=%s/offsets\n",
	             dir);
	testlib_write_file(wpath, worker, (size_t)n);
	testlib_write_file(cpath, connector, strlen(connector));
	l->ok = settings_load(paths, 2, &l->s, err, sizeof(err)) == 0 && l->s.nconnectors == 1;
	if (!l->ok)
		fprintf(stderr, "load: %s\n", err);
	CHECK(l->ok);
}

static int vet(const struct fleet_allow_conf *a, const char *connector, char *err, size_t len)
{
	struct loaded l;
	int rc = -100;

	load(&l, connector);
	if (l.ok)
		rc = fleetallow_connector(a, &l.s.connectors[0], err, len);
	settings_destroy(&l.s);
	return rc;
}

static const char *const file_app = "name=app\nconnector.class=FileStreamSource\n"
                                    "file=/etc/shadow\ntopic=logs.app\n";

static void test_connector(void)
{
	struct fleet_allow_conf a = {0};
	char err[512];

	/* defaults: everything refused, saying what it would need */
	CHECK_INT(vet(&a, file_app, err, sizeof(err)), FLEETALLOW_ERR_CLASS);
	CHECK_STR(err, "connector app: class FileStreamSource is not in "
	               "fleet.allow.connector.classes (empty); also needs fleet.allow.files, "
	               "fleet.allow.topics");

	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:/data/app.db\nmode=bulk\n"
	              "table.whitelist=t\ntopic.prefix=logs.\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_CLASS);
	CHECK_STR(err, "connector app: class JdbcSourceConnector is not in "
	               "fleet.allow.connector.classes (empty); also needs fleet.allow.databases, "
	               "fleet.allow.topics");
#ifdef SKIFF_HAVE_JOURNALD
	CHECK_INT(vet(&a, "name=app\nconnector.class=journald\ntopic=logs.j\n", err, sizeof(err)),
	          FLEETALLOW_ERR_CLASS);
	CHECK_STR(err, "connector app: class journald is not in fleet.allow.connector.classes "
	               "(empty); also needs fleet.allow.journals, fleet.allow.topics");
#endif

	/* class not listed; then listed by Connect's full name (an alias) */
	a.connector_classes = list("JdbcSourceConnector");
	CHECK_INT(vet(&a, file_app, err, sizeof(err)), FLEETALLOW_ERR_CLASS);
	CHECK_STR(err, "connector app: class FileStreamSource is not in "
	               "fleet.allow.connector.classes (JdbcSourceConnector); also needs "
	               "fleet.allow.files, fleet.allow.topics");
	a.connector_classes =
	    list("JdbcSourceConnector,org.apache.kafka.connect.file.FileStreamSourceConnector");
	a.files = list("/var/log/app/app-*.log");
	a.topics = list("logs.*");
	CHECK_INT(vet(&a, file_app, err, sizeof(err)), FLEETALLOW_ERR_FILE);
	CHECK_STR(err, "connector app: file /etc/shadow is outside fleet.allow.files "
	               "(/var/log/app/app-*.log)");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSourceConnector\n"
	              "file=/var/log/app/app-1.log\ntopic=logs.app\n",
	              err, sizeof(err)),
	          0);
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "file=/var/log/app/../../etc/shadow\ntopic=logs.app\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_PATH);
	CHECK_STR(err, "connector app: file /var/log/app/../../etc/shadow has a '..' component "
	               "(fleet.allow.files takes absolute, normalised paths)");
	/* globs, rotated.dirs */
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "files=/var/log/app/app-[0-9].log\ntopic=logs.app\n",
	              err, sizeof(err)),
	          0);
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "files=/var/log/app/*\ntopic=logs.app\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_FILE);
	CHECK_STR(err, "connector app: file glob /var/log/app/* is outside fleet.allow.files "
	               "(/var/log/app/app-*.log)");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "files=/var/log/app/app-1.log\nrotated.dirs=/var/log/old\ntopic=logs.app\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_FILE);
	CHECK_STR(err, "connector app: file glob /var/log/old/* is outside fleet.allow.files "
	               "(/var/log/app/app-*.log)");

	/* topics: a glob */
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "file=/var/log/app/app-1.log\ntopic=other\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_TOPIC);
	CHECK_STR(err, "connector app: topic other is outside fleet.allow.topics (logs.*)");

	/* transforms and predicates */
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "file=/var/log/app/app-1.log\ntopic=logs.app\ntransforms=tag\n"
	              "transforms.tag.type=org.apache.kafka.connect.transforms.InsertField$Value\n"
	              "transforms.tag.static.field=site\ntransforms.tag.static.value=x\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_TRANSFORM);
	CHECK_STR(err, "connector app: transform "
	               "org.apache.kafka.connect.transforms.InsertField$Value is not in "
	               "fleet.allow.transforms (empty)");
	a.transforms = list("org.apache.kafka.connect.transforms.InsertField");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "file=/var/log/app/app-1.log\ntopic=logs.app\ntransforms=tag\n"
	              "transforms.tag.type=org.apache.kafka.connect.transforms.InsertField$Value\n"
	              "transforms.tag.static.field=site\ntransforms.tag.static.value=x\n"
	              "transforms.tag.predicate=p\npredicates=p\n"
	              "predicates.p.type=org.apache.kafka.connect.transforms.predicates."
	              "TopicNameMatches\npredicates.p.pattern=.*\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_TRANSFORM);
	CHECK_STR(err,
	          "connector app: predicate "
	          "org.apache.kafka.connect.transforms.predicates.TopicNameMatches is not "
	          "in fleet.allow.transforms (org.apache.kafka.connect.transforms.InsertField)");
	a.transforms = list("org.apache.kafka.connect.transforms.*");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=FileStreamSource\n"
	              "file=/var/log/app/app-1.log\ntopic=logs.app\ntransforms=tag\n"
	              "transforms.tag.type=org.apache.kafka.connect.transforms.InsertField$Value\n"
	              "transforms.tag.static.field=site\ntransforms.tag.static.value=x\n",
	              err, sizeof(err)),
	          0);

	/* sqlite: the file behind connection.url, the topics */
	a.connector_classes = list("JdbcSourceConnector");
	a.databases = list("/data/*.db");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:/home/u/secret.db\nmode=bulk\n"
	              "table.whitelist=t\ntopic.prefix=logs.\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_DATABASE);
	CHECK_STR(err, "connector app: database /home/u/secret.db is outside "
	               "fleet.allow.databases (/data/*.db)");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=io.confluent.connect.jdbc.JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:file:/data/%2E%2E/home/x.db\nmode=bulk\n"
	              "table.whitelist=t\ntopic.prefix=logs.\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_PATH);
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:/data/app.db\nmode=bulk\n"
	              "table.whitelist=t,u\ntopic.prefix=logs.\n",
	              err, sizeof(err)),
	          0);
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:/data/app.db\nmode=bulk\n"
	              "table.whitelist=t\ntopic.prefix=\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_TOPIC);
	CHECK_STR(err, "connector app: topic t is outside fleet.allow.topics (logs.*)");
	CHECK_INT(vet(&a,
	              "name=app\nconnector.class=JdbcSourceConnector\n"
	              "connection.url=jdbc:sqlite:data/app.db\nmode=bulk\n"
	              "table.whitelist=t\ntopic.prefix=logs.\n",
	              err, sizeof(err)),
	          FLEETALLOW_ERR_PATH);

#ifdef SKIFF_HAVE_JOURNALD
	/* journald: only with fleet.allow.journals */
	a.connector_classes = list("JournaldSource,journald");
	CHECK_INT(vet(&a, "name=app\nconnector.class=journald\ntopic=logs.j\n", err, sizeof(err)),
	          FLEETALLOW_ERR_JOURNAL);
	CHECK_STR(err, "connector app: the journal needs fleet.allow.journals=true");
	a.journals = true;
	CHECK_INT(vet(&a, "name=app\nconnector.class=journald\ntopic=logs.j\n", err, sizeof(err)),
	          0);
#endif
}

/* The lists as the worker file's fleet.allow.* rows bind them
 * (fleetconf_keys), defaults included: Connect's built-in transforms by
 * class name, without $Key/$Value. */
static void test_with_the_table(void)
{
	const char *dir = testlib_tmpdir();
	char worker[1024], wpath[512], cpath[512], err[1024];
	char *paths[2] = {wpath, cpath};
	static const char conn[] =
	    "name=app\nconnector.class=FileStreamSource\nfile=/var/log/app/a.log\n"
	    "topic=logs.a\ntransforms=tag,route\n"
	    "transforms.tag.type=org.apache.kafka.connect.transforms.InsertField$Value\n"
	    "transforms.tag.static.field=site\ntransforms.tag.static.value=x\n"
	    "transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter\n"
	    "transforms.route.regex=.*\ntransforms.route.replacement=logs.b\n";
	struct settings s;
	const struct fleet_allow_conf *a;
	int n;

	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/app.properties", dir);
	n = snprintf(worker, sizeof(worker),
	             "bootstrap.servers=localhost:9092\noffset.storage.file.filename=%s/offsets\n"
	             "fleet.allow.connector.classes=FileStreamSource\n"
	             "fleet.allow.files=/var/log/app/*.log, /var/log/other/*\n"
	             "fleet.allow.topics=logs.*\n",
	             dir);
	testlib_write_file(wpath, worker, (size_t)n);
	testlib_write_file(cpath, conn, strlen(conn));
	if (settings_load(paths, 2, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "load: %s\n", err);
		CHECK(0);
		return;
	}
	a = &fleetconf_conf(s.worker)->allow;
	CHECK_INT(fleetallow_connector(a, &s.connectors[0], err, sizeof(err)), 0);
	CHECK(!a->journals && !a->producer && a->providers.n == 0);
	settings_destroy(&s);
}

/* Records about a local connector, and log levels. */
static void test_local_and_log_level(void)
{
	struct fleet_allow_conf a = {0};
	char err[256];

	CHECK_INT(fleetallow_local(&a, "app", false, err, sizeof(err)), 0);
	CHECK_INT(fleetallow_local(&a, "app", true, err, sizeof(err)), FLEETALLOW_ERR_LOCAL);
	CHECK_STR(err, "connector app: defined in the device's own files: the fleet may change "
	               "it only with fleet.allow.replace.local=true");
	a.replace_local = true;
	CHECK_INT(fleetallow_local(&a, "app", true, err, sizeof(err)), 0);
	CHECK_INT(fleetallow_log_level(&a, "org.apache.kafka", err, sizeof(err)),
	          FLEETALLOW_ERR_LOG_LEVEL);
	CHECK_STR(err, "logger org.apache.kafka: a log level from the fleet needs "
	               "fleet.allow.log.level=true");
	a.log_level = true;
	CHECK_INT(fleetallow_log_level(&a, "org.apache.kafka", err, sizeof(err)), 0);
}

/* Every code has its own name. */
static void test_strerror(void)
{
	for (int c = FLEETALLOW_OK; c >= FLEETALLOW_ERR_NOMEM; c--) {
		CHECK(strcmp(fleetallow_strerror(c), "unknown error") != 0);
		for (int d = c + 1; d <= FLEETALLOW_OK; d++)
			CHECK(strcmp(fleetallow_strerror(c), fleetallow_strerror(d)) != 0);
	}
	CHECK_STR(fleetallow_strerror(FLEETALLOW_ERR_NOMEM - 1), "unknown error");
}

/* The run-time guard fleetallow_guard builds from the lists: where a file
 * really is against fleet.allow.files (strict: a rotated copy needs a glob
 * that matches its own name), a record's final topic against
 * fleet.allow.topics; the reasons name the key and its value. */
static void test_guard(void)
{
	struct fleet_allow_conf a = {0};
	struct source_guard g;
	char why[256];

	a.files = list("/var/log/app/*.log");
	a.topics = list("app-*,audit");
	fleetallow_guard(&a, &g);
	CHECK(g.arg == &a);
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/x.log", why, sizeof(why)), 0);
	CHECK_INT(g.allow_path(g.arg, "/etc/shadow", why, sizeof(why)), FLEETALLOW_ERR_FILE);
	CHECK_STR(why, "outside fleet.allow.files (/var/log/app/*.log)");
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/x.log.1", why, sizeof(why)),
	          FLEETALLOW_ERR_FILE);
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/sub/x.log", why, sizeof(why)),
	          FLEETALLOW_ERR_FILE);
	a.files = list("/var/log/app/*.log*");
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/x.log.1", why, sizeof(why)), 0);
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/x.log.2.gz", why, sizeof(why)), 0);
	CHECK_INT(g.allow_topic(g.arg, "app-2026.12.05", why, sizeof(why)), 0);
	CHECK_INT(g.allow_topic(g.arg, "audit", why, sizeof(why)), 0);
	CHECK_INT(g.allow_topic(g.arg, "secret", why, sizeof(why)), FLEETALLOW_ERR_TOPIC);
	CHECK_STR(why, "outside fleet.allow.topics (app-*,audit)");
	/* nothing allowed: nothing passes */
	a = (struct fleet_allow_conf){0};
	CHECK_INT(g.allow_path(g.arg, "/var/log/app/x.log", why, sizeof(why)), FLEETALLOW_ERR_FILE);
	CHECK_STR(why, "outside fleet.allow.files (empty)");
	CHECK_INT(g.allow_topic(g.arg, "app-x", why, sizeof(why)), FLEETALLOW_ERR_TOPIC);
	CHECK_STR(why, "outside fleet.allow.topics (empty)");
}

int main(void)
{
	test_strerror();
	test_local_and_log_level();
	test_with_the_table();
	test_paths();
	test_glob_subsets();
	test_record();
	test_connector();
	test_guard();
	free_lists();
	return testlib_done("test_fleetallow");
}
