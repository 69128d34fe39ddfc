/* fleetconf: the worker keys of a fleet steered through Kafka topics
 * (issue 28; docs/fleet.md). One table (fleetconf_keys), bound once at load
 * to struct fleet_conf in the worker section, as restconf's keys are.
 *
 * Kafka Connect's config.storage.topic and status.storage.topic act only
 * with fleet.enabled=true: without it they stay inert, so a Connect
 * distributed worker file pasted into skiff never reads the Connect
 * cluster's configurations nor writes over its statuses. The fleet.allow.*
 * keys are the device's last word over what a remote configuration may name
 * (fleet/fleetallow.h checks a connector against them); by default they
 * allow nothing. */
#ifndef SKIFF_FLEETCONF_H
#define SKIFF_FLEETCONF_H

#include "config/config.h"

#include <stdbool.h>
#include <stdint.h>

/* What a remote connector configuration may name (fleet.allow.*). Lists
 * of globs are matched with fnmatch(FNM_PATHNAME); empty: nothing. */
struct fleet_allow_conf {
	struct config_list connector_classes; /* classes or Connect's aliases */
	struct config_list files;             /* paths a file source may read */
	struct config_list databases;         /* SQLite databases */
	bool journals;                        /* journald sources */
	struct config_list topics;            /* topics records may go to */
	struct config_list transforms;        /* transform and predicate classes */
	bool producer;                        /* producer.override.* (never the cluster's keys) */
	struct config_list providers;         /* ${provider:path} references allowed */
	bool replace_local;                   /* replacing a connector the local files define */
	bool log_level;                       /* logger-cluster-* records */
};

/* The fleet's worker keys, bound (CFG_FIELD) in the worker section. Topic
 * names are templates: {device} is the device's name (core/device.h),
 * {group} a group's. */
struct fleet_conf {
	bool enabled;                      /* fleet.enabled */
	const char *config_topic;          /* config.storage.topic (template) */
	const char *status_topic;          /* status.storage.topic (template, {device} required) */
	int64_t config_replication_factor; /* config.storage.replication.factor */
	int64_t status_replication_factor; /* status.storage.replication.factor */
	int64_t status_partitions;         /* status.storage.partitions */
	struct config_list groups;         /* fleet.groups */
	const char *group_topic;           /* fleet.group.topic (template, {group}) */
	int64_t heartbeat_interval_ms;     /* fleet.heartbeat.interval.ms */
	int64_t fetch_wait_max_ms;         /* fleet.fetch.wait.max.ms */
	struct fleet_allow_conf allow;     /* fleet.allow.* */
};

/* The table (fleet/fleetconf.c). */
extern const struct config_key fleetconf_keys[];

#endif
