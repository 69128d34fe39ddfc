/* fleetconf: the fleet's keys as the worker file gives them, every refusal
 * naming file:line and key, the topic templates, the notices without
 * fleet.enabled, and the default transforms held to the registry. */
#include "fleet/fleetconf.h"

#include "config/config.h"
#include "config/settings.h"
#include "testlib.h"
#include "transform/txops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[256];

static const char base[] = "offset.storage.file.filename=/tmp/o\n"
                           "connectors.a.connector.class=FileStreamSource\n"
                           "connectors.a.file=/tmp/f\n"
                           "connectors.a.topic=t\n";

/* Loads base + extra as a worker file at path (static storage). Returns
 * settings_load's code, err its message. */
static int load(struct settings *s, const char *extra, char *err, size_t errlen)
{
	static char path[512];
	char text[4096];
	char *paths[1] = {path};
	int rc;

	snprintf(path, sizeof(path), "%s/w.properties", dir);
	snprintf(text, sizeof(text), "%s%s", base, extra);
	testlib_write_file(path, text, strlen(text));
	err[0] = '\0';
	rc = settings_load(paths, 1, s, err, errlen);
	if (rc != 0)
		settings_destroy(s);
	return rc;
}

static void expect_error(const char *extra, const char *want)
{
	struct settings s;
	char err[1024];

	CHECK_INT(load(&s, extra, err, sizeof(err)), SETTINGS_ERR);
	if (strstr(err, want) == NULL) {
		testlib_failures++;
		fprintf(stderr, "error '%s' lacks '%s'\n", err, want);
	}
}

static void expect_ok(const char *extra, struct settings *s)
{
	char err[1024];

	int rc = load(s, extra, err, sizeof(err));

	CHECK_INT(rc, 0);
	if (rc != 0)
		fprintf(stderr, "unexpected: %s\n", err);
}

static void test_defaults(void)
{
	struct settings s;
	const struct fleet_conf *c;

	expect_ok("fleet.enabled=true\n", &s);
	c = fleetconf_conf(s.worker);
	CHECK(c->enabled);
	CHECK_STR(c->config_topic, "skiff.config.{device}");
	CHECK_STR(c->status_topic, "skiff.status.{device}");
	CHECK_STR(c->group_topic, "skiff.config.group.{group}");
	CHECK_INT(c->config_replication_factor, 3);
	CHECK_INT(c->status_replication_factor, 3);
	CHECK_INT(c->status_partitions, 1);
	CHECK_INT(c->heartbeat_interval_ms, 300000);
	CHECK_INT(c->fetch_wait_max_ms, 55000);
	CHECK_INT(c->groups.n, 0);
	/* By default a remote configuration names nothing. */
	CHECK_INT(c->allow.connector_classes.n, 0);
	CHECK_INT(c->allow.files.n, 0);
	CHECK_INT(c->allow.databases.n, 0);
	CHECK_INT(c->allow.topics.n, 0);
	CHECK_INT(c->allow.providers.n, 0);
	CHECK(!c->allow.journals && !c->allow.producer && !c->allow.replace_local &&
	      !c->allow.log_level);
	settings_destroy(&s);
}

/* fleet.allow.transforms' default is every transform and predicate of
 * Connect's that skiff implements: the registry and the default agree. */
static void test_default_transforms_are_the_registry(void)
{
	const struct tx_ops *const *lists[] = {txregistry_transforms, txregistry_predicates};
	struct settings s;
	const struct config_list *t;
	size_t n = 0;

	expect_ok("fleet.enabled=true\n", &s);
	t = &fleetconf_conf(s.worker)->allow.transforms;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; lists[l][i] != NULL; i++) {
			char cls[256];
			bool found = false;

			snprintf(cls, sizeof(cls), "%s.%s", lists[l][i]->pkg, lists[l][i]->name);
			for (size_t k = 0; k < t->n; k++)
				found |= strcmp(t->items[k], cls) == 0;
			if (!found) {
				testlib_failures++;
				fprintf(stderr, "fleet.allow.transforms lacks %s\n", cls);
			}
			n++;
		}
	CHECK_INT(t->n, n);
	settings_destroy(&s);
}

static void test_values_bound(void)
{
	struct settings s;
	const struct fleet_conf *c;

	expect_ok("fleet.enabled=true\n"
	          "device.id=gw-0042\n"
	          "config.storage.topic=acme.cfg.{device}\n"
	          "status.storage.topic=acme.st.{device}\n"
	          "config.storage.replication.factor=-1\n"
	          "status.storage.partitions=2\n"
	          "fleet.groups=site-berlin, pi4\n"
	          "fleet.group.topic=acme.grp.{group}\n"
	          "fleet.heartbeat.interval.ms=1000\n"
	          "kafka.socket.timeout.ms=120000\n"
	          "fleet.fetch.wait.max.ms=118999\n"
	          "fleet.allow.files=/var/log/app/*.log\n"
	          "fleet.allow.journals=true\n"
	          "fleet.allow.transforms=org.apache.kafka.connect.transforms.InsertField\n"
	          "config.storage.segment.ms=3600000\n"
	          "status.storage.delete.retention.ms=2592000000\n"
	          "config.storage.cleanup.policy=compact\n",
	          &s);
	c = fleetconf_conf(s.worker);
	CHECK_STR(c->config_topic, "acme.cfg.{device}");
	CHECK_INT(c->config_replication_factor, -1);
	CHECK_INT(c->status_partitions, 2);
	CHECK_INT(c->groups.n, 2);
	CHECK_STR(c->groups.items[1], "pi4");
	CHECK_INT(c->heartbeat_interval_ms, 1000);
	CHECK_INT(c->fetch_wait_max_ms, 118999);
	CHECK_STR(c->allow.files.items[0], "/var/log/app/*.log");
	CHECK(c->allow.journals);
	CHECK_INT(c->allow.transforms.n, 1);
	/* The topic configs, per topic, prefix stripped. */
	{
		size_t cur = 0;
		const char *k, *v, *where;
		char want[600];

		CHECK(fleetconf_topic_config(s.worker, FLEETCONF_CONFIG, &cur, &k, &v, &where));
		CHECK_STR(k, "segment.ms");
		CHECK_STR(v, "3600000");
		snprintf(want, sizeof(want), "%s/w.properties:19", dir);
		CHECK_STR(where, want);
		CHECK(fleetconf_topic_config(s.worker, FLEETCONF_CONFIG, &cur, &k, &v, &where));
		CHECK_STR(k, "cleanup.policy");
		CHECK(!fleetconf_topic_config(s.worker, FLEETCONF_CONFIG, &cur, &k, &v, &where));
		cur = 0;
		CHECK(fleetconf_topic_config(s.worker, FLEETCONF_STATUS, &cur, &k, &v, &where));
		CHECK_STR(k, "delete.retention.ms");
		CHECK(!fleetconf_topic_config(s.worker, FLEETCONF_STATUS, &cur, &k, &v, &where));
	}
	settings_destroy(&s);
}

/* Every refusal with fleet.enabled names the file, the line and the key. */
static void test_refusals(void)
{
	char want[1024];

	expect_error("fleet.enabled=true\nstatus.storage.topic=skiff.status\n",
	             "w.properties:6: status.storage.topic=skiff.status must hold {device}");
	expect_error("fleet.enabled=true\nstatus.storage.topic=st.{group}.{device}\n",
	             "w.properties:6: status.storage.topic=st.{group}.{device}: {group} has no "
	             "meaning here");
	expect_error("fleet.enabled=true\nconfig.storage.topic=cfg/{device}\n",
	             "w.properties:6: config.storage.topic=cfg/{device}: '/' cannot be in a topic "
	             "name");
	expect_error("fleet.enabled=true\nconfig.storage.topic=\n",
	             "w.properties:6: config.storage.topic is empty");
	expect_error("fleet.enabled=true\nfleet.group.topic=grp\n",
	             "w.properties:6: fleet.group.topic=grp must hold {group}");
	expect_error("fleet.enabled=true\nfleet.group.topic=g.{group}.{device}\n",
	             "fleet.group.topic=g.{group}.{device}: {device} has no meaning here");
	/* The device's name: '.' and '_' collide once Kafka folds them. */
	expect_error("fleet.enabled=true\ndevice.id=gw_1\n",
	             "w.properties:6: device.id=gw_1: with fleet.enabled the device's name names a "
	             "topic, so it may hold only letters, digits and '-'");
	expect_error("fleet.enabled=true\ndevice.id=gw.1\n", "w.properties:6: device.id=gw.1:");
	{
		char text[512], id[202];

		memset(id, 'a', 201);
		id[201] = '\0';
		snprintf(text, sizeof(text), "fleet.enabled=true\ndevice.id=%s\n", id);
		expect_error(text, "at most 200 characters");
		id[200] = '\0';
		snprintf(text, sizeof(text), "fleet.enabled=true\ndevice.id=%s\n", id);
		{
			struct settings s;

			expect_ok(text, &s);
			settings_destroy(&s);
		}
	}
	expect_error("fleet.enabled=true\nfleet.groups=berlin,site_2\n",
	             "w.properties:6: fleet.groups=site_2: with fleet.enabled a group's name");
	/* Expanded over Kafka's 249: with device.id, a machine id, a group. */
	{
		char text[2048], lit[260];

		memset(lit, 'p', 230);
		lit[230] = '\0';
		snprintf(text, sizeof(text),
		         "fleet.enabled=true\ndevice.id=gw-1\n"
		         "status.storage.topic=%s.{device}.%s\n",
		         lit, "0123456789abcdefghij");
		expect_error(text, "w.properties:7: status.storage.topic=pppp");
		expect_error(text,
		             "with device.id the topic name is longer than Kafka's 249 characters");
		lit[220] = '\0';
		snprintf(text, sizeof(text),
		         "fleet.enabled=true\nconfig.storage.topic=%s{device}\n", lit);
		expect_error(text, "with a machine id (32 characters) the topic name is longer");
		lit[50] = '\0';
		snprintf(
		    text, sizeof(text),
		    "fleet.enabled=true\nfleet.groups=a,%0200d\nfleet.group.topic=%s.{group}\n", 0,
		    lit);
		expect_error(text, "w.properties:7: fleet.group.topic=ppppp");
		expect_error(text, "with a group of fleet.groups the topic name is longer");
	}
	expect_error("fleet.enabled=true\nfleet.groups=a,b,a\n",
	             "w.properties:6: fleet.groups: a is listed twice");
	{
		char text[1024];
		size_t n =
		    (size_t)snprintf(text, sizeof(text), "fleet.enabled=true\nfleet.groups=");

		for (int i = 0; i <= FLEETCONF_GROUPS_MAX; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "g%d,", i);
		snprintf(text + n, sizeof(text) - n, "\n");
		expect_error(text, "w.properties:6: fleet.groups: 65 groups, at most 64");
	}
	expect_error("fleet.enabled=true\nstatus.storage.replication.factor=0\n",
	             "w.properties:6: status.storage.replication.factor=0: give -1");
	expect_error("fleet.enabled=true\nstatus.storage.partitions=0\n",
	             "w.properties:6: status.storage.partitions=0: give -1");
	expect_error("fleet.enabled=true\nfleet.heartbeat.interval.ms=999\n",
	             "w.properties:6: fleet.heartbeat.interval.ms: 999 is out of range");
	/* The long poll must end before the socket times out. */
	expect_error("fleet.enabled=true\nfleet.fetch.wait.max.ms=59000\n",
	             "w.properties:6: fleet.fetch.wait.max.ms=59000 must be under "
	             "socket.timeout.ms - 1000 (59000)");
	snprintf(want, sizeof(want),
	         "w.properties:6: fleet.fetch.wait.max.ms=55000 must be under socket.timeout.ms "
	         "- 1000 (29000, kafka.socket.timeout.ms at %s/w.properties:7)",
	         dir);
	expect_error("fleet.enabled=true\nfleet.fetch.wait.max.ms=55000\n"
	             "kafka.socket.timeout.ms=30000\n",
	             want);
	expect_error("fleet.enabled=true\nstatus.storage.cleanup.policy=delete\n",
	             "w.properties:6: status.storage.cleanup.policy=delete: the topic must be "
	             "compacted");
	expect_error("fleet.enabled=true\nconfig.storage.partitions=3\n",
	             "w.properties:6: config.storage.partitions: not a topic config (the config "
	             "topic has one partition");
}

/* Without fleet.enabled nothing is checked and each key set is a notice:
 * Connect's keys word for word as before, skiff's own saying why. */
static void test_inert_without_fleet(void)
{
	struct settings s;
	char line[1536], want[1536];
	size_t cur = 0;
	bool warn;

	expect_ok("status.storage.topic=shared-status\n"
	          "config.storage.topic=connect-configs\n"
	          "fleet.groups=site_2\n"
	          "status.storage.cleanup.policy=delete\n"
	          "device.id=gw_1\n",
	          &s);
	CHECK(!fleetconf_conf(s.worker)->enabled);
	CHECK(fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	snprintf(want, sizeof(want),
	         "%s/w.properties:6: config.storage.topic is a Kafka Connect setting with no "
	         "meaning for skiff; ignored",
	         dir);
	CHECK_STR(line, want);
	CHECK(!warn);
	CHECK(fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	snprintf(want, sizeof(want),
	         "%s/w.properties:5: status.storage.topic is a Kafka Connect setting with no "
	         "meaning for skiff; ignored",
	         dir);
	CHECK_STR(line, want);
	CHECK(fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	snprintf(want, sizeof(want),
	         "%s/w.properties:7: fleet.groups: ignored without "
	         "fleet.enabled=true",
	         dir);
	CHECK_STR(line, want);
	CHECK(fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	snprintf(want, sizeof(want),
	         "%s/w.properties:8: status.storage.cleanup.policy is a Kafka Connect setting "
	         "with no meaning for skiff; ignored",
	         dir);
	CHECK_STR(line, want);
	CHECK(!fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	settings_destroy(&s);
}

static void test_warning_shared_config_topic(void)
{
	struct settings s;
	char line[1536], want[1536];
	size_t cur = 0;
	bool warn;

	expect_ok("fleet.enabled=true\nconfig.storage.topic=one-device-config\n", &s);
	CHECK(fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	CHECK(warn);
	snprintf(want, sizeof(want),
	         "%s/w.properties:6: config.storage.topic=one-device-config holds no {device}: "
	         "every device reading it runs the same connectors",
	         dir);
	CHECK_STR(line, want);
	CHECK(!fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	settings_destroy(&s);
	/* The default holds {device}: nothing to say. */
	cur = 0;
	expect_ok("fleet.enabled=true\n", &s);
	CHECK(!fleetconf_next_notice(s.worker, &cur, &warn, line, sizeof(line)));
	settings_destroy(&s);
}

static void test_topic(void)
{
	char buf[300], small[20], name[240];

	CHECK_INT(fleetconf_topic("skiff.status.{device}", "gw-0042", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "skiff.status.gw-0042");
	CHECK_INT(fleetconf_topic("skiff.config.group.{group}", "site-berlin", buf, sizeof(buf)),
	          0);
	CHECK_STR(buf, "skiff.config.group.site-berlin");
	CHECK_INT(fleetconf_topic("{device}.x.{device}", "d", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "d.x.d");
	CHECK_INT(fleetconf_topic("fixed", "d", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "fixed");
	/* The buffer: exactly full with the NUL fits, one less does not. */
	CHECK_INT(fleetconf_topic("s.{device}", "0123456789abcdefg", small, sizeof(small)), 0);
	CHECK_STR(small, "s.0123456789abcdefg");
	CHECK_INT(fleetconf_topic("s.{device}", "0123456789abcdefgh", small, sizeof(small)),
	          FLEETCONF_ERR_OVERFLOW);
	CHECK_INT(fleetconf_topic("st.{device}.0123456789abcdef", "x", small, sizeof(small)),
	          FLEETCONF_ERR_OVERFLOW);
	CHECK_INT(fleetconf_topic("x", "d", small, 0), FLEETCONF_ERR_OVERFLOW);
	/* Kafka's 249: "skiff.status." is 13. */
	memset(name, 'a', 237);
	name[237] = '\0';
	CHECK_INT(fleetconf_topic("skiff.status.{device}", name, buf, sizeof(buf)),
	          FLEETCONF_ERR_TOOLONG);
	name[236] = '\0';
	CHECK_INT(fleetconf_topic("skiff.status.{device}", name, buf, sizeof(buf)), 0);
	CHECK_INT(strlen(buf), 249);
	CHECK(strstr(fleetconf_strerror(FLEETCONF_ERR_OVERFLOW), "buffer") != NULL);
	CHECK(strstr(fleetconf_strerror(FLEETCONF_ERR_TOOLONG), "249") != NULL);
	CHECK(strstr(fleetconf_strerror(-99), "unknown") != NULL);
}

static void test_name_check(void)
{
	char name[202];

	CHECK_INT(fleetconf_name_check("gw-0042"), 0);
	CHECK_INT(fleetconf_name_check("0123456789abcdef0123456789abcdef"), 0);
	CHECK_INT(fleetconf_name_check(""), FLEETCONF_ERR_NAME);
	CHECK_INT(fleetconf_name_check("gw_1"), FLEETCONF_ERR_NAME);
	CHECK_INT(fleetconf_name_check("gw.1"), FLEETCONF_ERR_NAME);
	CHECK_INT(fleetconf_name_check("gw 1"), FLEETCONF_ERR_NAME);
	CHECK_INT(fleetconf_name_check("gw{device}"), FLEETCONF_ERR_NAME);
	memset(name, 'a', 201);
	name[201] = '\0';
	CHECK_INT(fleetconf_name_check(name), FLEETCONF_ERR_NAME);
	name[200] = '\0';
	CHECK_INT(fleetconf_name_check(name), 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	test_defaults();
	test_default_transforms_are_the_registry();
	test_values_bound();
	test_refusals();
	test_inert_without_fleet();
	test_warning_shared_config_topic();
	test_topic();
	test_name_check();
	return testlib_done("test_fleetconf");
}
