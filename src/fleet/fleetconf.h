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
#include <stddef.h>
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

/* The table (fleet/fleetconf.c), loaded with the worker's keys
 * (config/settings.c keeps the bound struct in the worker section). */
extern const struct config_key fleetconf_keys[];

/* The worker section's bound fleet keys (owned by it; a section
 * settings_load did not make aborts). */
static inline const struct fleet_conf *fleetconf_conf(const struct config_section *worker)
{
	return (const struct fleet_conf *)config_section_kept(worker, fleetconf_keys);
}

/* Failures (util/err.h). */
enum {
	FLEETCONF_OK = 0,
	FLEETCONF_ERR = -1,          /* a fleet key is wrong: errbuf says which (exit 78) */
	FLEETCONF_ERR_NAME = -2,     /* a device or group name no topic can hold */
	FLEETCONF_ERR_TOOLONG = -3,  /* an expanded topic name over Kafka's 249 characters */
	FLEETCONF_ERR_OVERFLOW = -4, /* an expanded topic name larger than the caller's buffer */
};

/* A short text for a FLEETCONF_* code; never NULL. */
const char *fleetconf_strerror(int err);

/* The longest device or group name: with the templates' few literal
 * characters it stays under Kafka's 249 for a topic name. */
#define FLEETCONF_NAME_MAX 200
/* The most groups a device belongs to (each a topic it reads). */
#define FLEETCONF_GROUPS_MAX 64
/* Kafka's longest topic name. */
#define FLEETCONF_TOPIC_MAX 249

/* Checks that name (a device's or a group's) may be part of a topic name:
 * 1 to FLEETCONF_NAME_MAX of [A-Za-z0-9-]. '.' and '_' are refused: Kafka
 * refuses a topic whose name equals another's once '.' and '_' are folded
 * (skiff.status.gw_1, skiff.status.gw.1), and the second device would find
 * out at provisioning only. Returns FLEETCONF_OK or FLEETCONF_ERR_NAME. For
 * the fleet's start, with the device's resolved name (core/device.h): a
 * machine id is always one. */
int fleetconf_name_check(const char *name);

/* Writes tmpl (config.storage.topic, status.storage.topic or
 * fleet.group.topic) into buf with each {device} or {group} replaced by name
 * (a device's or a group's, as the template holds). Returns FLEETCONF_OK;
 * FLEETCONF_ERR_OVERFLOW when it does not fit len bytes with its NUL (buf
 * then holds nothing usable); FLEETCONF_ERR_TOOLONG when it fits but is
 * longer than FLEETCONF_TOPIC_MAX. */
int fleetconf_topic(const char *tmpl, const char *name, char *buf, size_t len);

/* Checks the fleet's keys of the worker section w (bound), when
 * fleet.enabled: status.storage.topic holds {device}; the templates hold
 * only topic characters and their own placeholder (fleet.group.topic
 * {group}); device_id (the worker's device.id, NULL: unset, the machine id
 * is used and always fits) and each of fleet.groups pass
 * fleetconf_name_check, at most FLEETCONF_GROUPS_MAX groups, none twice;
 * each template expanded with them (a machine id's 32 characters without
 * device.id) stays within FLEETCONF_TOPIC_MAX; sizes are -1 or positive;
 * fleet.fetch.wait.max.ms is under kafka.socket.timeout.ms (librdkafka's
 * 60000) - 1000; topic configs (fleetconf_topic_config) keep the topics
 * compacted. Without fleet.enabled nothing is checked: the keys are
 * ignored. Returns FLEETCONF_OK, or FLEETCONF_ERR with errbuf
 * "file:line: key: why". Start-up and reload. */
int fleetconf_check(const struct config_section *w, const char *device_id, char *errbuf,
                    size_t errlen);

/* The lines to log about the fleet's keys of w, one per call: with
 * fleet.enabled a config.storage.topic without {device} (*warn true: a
 * warning); without it each key of the table or config.storage.X /
 * status.storage.X that was set, as a notice saying it is ignored (the five
 * Connect keys word for word as an inert key's notice). Writes buf and
 * returns true, advancing *cursor (start at 0); false past the last. */
bool fleetconf_next_notice(const struct config_section *w, size_t *cursor, bool *warn, char *buf,
                           size_t len);

/* Which topic a topic config is for. */
enum fleetconf_topic { FLEETCONF_CONFIG, FLEETCONF_STATUS };

/* The topic configs of a created config or status topic: every
 * config.storage.X (status.storage.X) of the worker file but the table's
 * keys, as offset.storage.X are the offsets topic's. Fills *key (X),
 * *value and *where ("file:line"), all owned by w, advances *cursor (start
 * at 0) and returns true; false past the last. */
bool fleetconf_topic_config(const struct config_section *w, enum fleetconf_topic which,
                            size_t *cursor, const char **key, const char **value,
                            const char **where);

#endif
