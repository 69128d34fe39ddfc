/* fleet_cli: `skiff fleet status|config|pause|resume|stop|restart|remove|
 * provision`, the operator's side of a fleet steered through Kafka topics
 * (issue 28, design §4.7). It reads the devices' status topics and writes
 * Kafka Connect's configuration records, byte for byte as Connect's
 * distributed worker writes them, to a device's or a group's config topic;
 * with --wait it reads the devices' answers (skiff-outcome-NAME) to the
 * offsets it wrote. Its clients connect as the worker's internal clients do
 * (kconf_worker), from --bootstrap and the --command-config file (Kafka
 * tools' name for Connect's client keys: security.protocol, sasl.*, ssl.*).
 *
 * Exit codes: 0 done (every device applied); 1 some device refused; 75 some
 * device did not answer in time, or the cluster could not be reached; 78
 * what a person must fix (usage, an unknown device, a properties file). */
#ifndef SKIFF_FLEET_CLI_H
#define SKIFF_FLEET_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLEET_CLI_SETS_MAX 256
#define FLEET_CLI_GROUPS_MAX 64

enum fleet_cmd {
	FLEET_CMD_STATUS,
	FLEET_CMD_CONFIG,
	FLEET_CMD_PAUSE,
	FLEET_CMD_RESUME,
	FLEET_CMD_STOP,
	FLEET_CMD_RESTART,
	FLEET_CMD_REMOVE,
	FLEET_CMD_PROVISION,
};

/* The command line, parsed: strings point into argv. */
struct fleet_args {
	enum fleet_cmd cmd;
	const char *name; /* the connector (config ... remove) */
	const char *bootstrap, *command_config;
	const char *device, *group;           /* at most one of them */
	const char *file;                     /* config: FILE.properties, "-" for stdin */
	const char *sets[FLEET_CLI_SETS_MAX]; /* config: --set k=v, each with a '=' */
	size_t nsets;
	const char *groups[FLEET_CLI_GROUPS_MAX]; /* provision: --group, repeated */
	size_t ngroups;
	const char *status_topic, *config_topic, *group_topic; /* templates */
	const char *principal;                                 /* provision: User:ID */
	const char *operator_principal;                        /* provision: its grants */
	bool json;
	bool include_tasks, only_failed; /* restart */
	int64_t wait_ms;                 /* -1: don't wait */
	int64_t timeout_ms;              /* reading and writing */
	int replication_factor;          /* provision: -1 the broker's default */
	int status_partitions;           /* provision */
};

/* Parses argv (argv[0] "fleet") into *a. Returns 0; 1 for --help (usage
 * printed by the caller); -1 with errbuf saying what is wrong (a missing
 * NAME, --device with --group, --set without '=', a device or group name no
 * topic can hold, ...). */
int fleet_args_parse(int argc, char **argv, struct fleet_args *a, char *errbuf, size_t errlen);

/* argv[0] is "fleet". Returns the process's exit code (above). */
int fleet_main(int argc, char **argv);

#endif
