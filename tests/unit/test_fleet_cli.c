/* fleet_cli: `skiff fleet`'s command line: what each command needs (a NAME,
 * --device or --group, not both; a file or --set for config, not both;
 * --bootstrap except for provision's printing), --set without '=', names no
 * topic can hold, --opt=value and --opt value alike, the defaults (the
 * topics' templates, no wait). */
#include "cli/fleet_cli.h"
#include "testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int parse(struct fleet_args *a, char *err, size_t len, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, len);
	argv[argc++] = "fleet";
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	err[0] = '\0';
	return fleet_args_parse(argc, argv, a, err, len);
}

#define BS "--bootstrap", "127.0.0.1:9092"

static void good(void)
{
	struct fleet_args a;
	char err[512];

	CHECK_INT(parse(&a, err, sizeof(err), "status", BS, NULL), 0);
	CHECK_INT(a.cmd, FLEET_CMD_STATUS);
	CHECK_STR(a.status_topic, "skiff.status.{device}");
	CHECK_STR(a.config_topic, "skiff.config.{device}");
	CHECK_STR(a.group_topic, "skiff.config.group.{group}");
	CHECK(a.wait_ms == -1 && !a.json && a.device == NULL && a.group == NULL);
	CHECK_INT(parse(&a, err, sizeof(err), "status", "--bootstrap=h:1", "--json", "--group",
	                "site-1", "--command-config", "c.properties", NULL),
	          0);
	CHECK(a.json);
	CHECK_STR(a.bootstrap, "h:1");
	CHECK_STR(a.group, "site-1");
	CHECK_STR(a.command_config, "c.properties");
	CHECK_INT(parse(&a, err, sizeof(err), "config", "app", "--device", "gw-1", "--set",
	                "topic=t", "--set", "connector.class=FileStreamSource", "--wait", "30", BS,
	                NULL),
	          0);
	CHECK_INT(a.cmd, FLEET_CMD_CONFIG);
	CHECK_STR(a.name, "app");
	CHECK_INT((int)a.nsets, 2);
	CHECK_STR(a.sets[1], "connector.class=FileStreamSource");
	CHECK(a.wait_ms == 30000);
	CHECK_INT(parse(&a, err, sizeof(err), "config", "app", "app.properties", "--group", "g", BS,
	                NULL),
	          0);
	CHECK_STR(a.file, "app.properties");
	CHECK_INT(parse(&a, err, sizeof(err), "restart", "app", "--device", "gw-1",
	                "--include-tasks", "--only-failed", BS, NULL),
	          0);
	CHECK(a.include_tasks && a.only_failed && a.cmd == FLEET_CMD_RESTART);
	CHECK_INT(parse(&a, err, sizeof(err), "provision", "--device", "gw-1", "--group", "a",
	                "--group", "b", "--replication-factor", "3", NULL),
	          0);
	CHECK_INT((int)a.ngroups, 2);
	CHECK_INT(a.replication_factor, 3);
	CHECK(a.bootstrap == NULL);
	/* The operator's grants alone: no device to provision. */
	CHECK_INT(parse(&a, err, sizeof(err), "provision", "--operator", "User:ops", NULL), 0);
	CHECK_STR(a.operator_principal, "User:ops");
	CHECK(a.device == NULL);
	CHECK_INT(parse(&a, err, sizeof(err), "remove", "--help", NULL), 1);
	CHECK_INT(parse(&a, err, sizeof(err), "--help", NULL), 1);
}

static void bad(const char *want, ...)
{
	struct fleet_args a;
	char err[512], *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, want);
	argv[argc++] = "fleet";
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	CHECK_INT(fleet_args_parse(argc, argv, &a, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fprintf(stderr, "want \"%s\" in \"%s\"\n", want, err);
	CHECK(strstr(err, want) != NULL);
}

static void refused(void)
{
	bad("give a command", NULL);
	bad("unknown command \"list\"", "list", NULL);
	bad("give --bootstrap", "status", NULL);
	bad("give the connector's NAME", "pause", "--device", "gw-1", BS, NULL);
	bad("give --device ID or --group G", "pause", "app", BS, NULL);
	bad("not both", "pause", "app", "--device", "gw-1", "--group", "g", BS, NULL);
	bad("--set topic: give KEY=VALUE", "config", "app", "--device", "d", "--set", "topic", BS,
	    NULL);
	bad("--set =x: give KEY=VALUE", "config", "app", "--device", "d", "--set", "=x", BS, NULL);
	bad("config: give the connector's FILE.properties", "config", "app", "--device", "d", BS,
	    NULL);
	bad("not both", "config", "app", "f.properties", "--set", "a=b", "--device", "d", BS, NULL);
	bad("a file or --set is for config only", "pause", "app", "--device", "d", "--set", "a=b",
	    BS, NULL);
	bad("device \"gw_1\"", "pause", "app", "--device", "gw_1", BS, NULL);
	bad("group \"a.b\"", "status", "--group", "a.b", BS, NULL);
	bad("provision: give --device ID, or --operator User:NAME", "provision", NULL);
	bad("--operator: the topic templates ({device}.cfg, ", "provision", "--operator",
	    "User:ops", "--config-topic", "{device}.cfg", NULL);
	bad("provision: --group is a device's", "provision", "--operator", "User:ops", "--group",
	    "a", NULL);
	bad("--wait x: give whole seconds", "pause", "app", "--device", "d", "--wait", "x", BS,
	    NULL);
	bad("--wait: give its value", "pause", "app", "--device", "d", BS, "--wait", NULL);
	bad("unknown option --force", "status", "--force", BS, NULL);
	bad("unexpected argument \"extra\"", "pause", "app", "extra", "--device", "d", BS, NULL);
	bad("--status-topic st: must hold {device}", "status", "--status-topic", "st", BS, NULL);
	bad("--replication-factor 0", "provision", "--device", "d", "--replication-factor", "0",
	    NULL);
}

int main(void)
{
	good();
	refused();
	return testlib_done("fleet_cli");
}
