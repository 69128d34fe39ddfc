/* settings: skiff's configuration as a whole. Reads the worker file (Kafka
 * Connect's connect-standalone.properties) and the connectors, given either as
 * separate connector files (Connect's form) or inline in the worker file under
 * "connectors.<name>." (the on-device single-file form), validates them
 * against the config tables and resolves each connector's source and
 * converters. Start-up only. */
#ifndef SKIFF_SETTINGS_H
#define SKIFF_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "config/connlayer.h"
#include "convert/convert.h"
#include "util/err.h"

struct cJSON;
struct config_key;
struct config_section;
struct props;
struct providers;
struct source_guard;
struct source_ops;
struct transform_chain;

/* exactly.once.source.support=, in the order of its choices. */
enum settings_eos { SETTINGS_EOS_ENABLED, SETTINGS_EOS_PREPARING, SETTINGS_EOS_DISABLED };

/* The worker's keys (settings.c's worker table), bound once when the worker
 * section loads and kept in it: settings_worker(). Strings and lists are
 * owned by that section. */
struct worker_conf {
	struct config_list bootstrap, providers;
	const char *key_converter, *value_converter;
	bool key_schemas, value_schemas;
	const char *offset_file, *offset_topic, *device_id;
	int64_t offset_rf, offset_partitions;
	int64_t flush_interval_ms, flush_timeout_ms;
	int log_level; /* enum log_level (core/log.h: the choices' order), -1: unset */
	int64_t bandwidth, health_ack_timeout_ms, metrics_partition_limit;
	enum settings_eos eos;
};

/* errors.tolerance=, exactly.once.support= and transaction.boundary=, in
 * the order of their choices. */
enum settings_tolerance { SETTINGS_TOLERANCE_NONE, SETTINGS_TOLERANCE_ALL };
enum settings_eos_support { SETTINGS_EOS_REQUESTED, SETTINGS_EOS_REQUIRED };
enum settings_boundary {
	SETTINGS_BOUNDARY_POLL,
	SETTINGS_BOUNDARY_INTERVAL,
	SETTINGS_BOUNDARY_CONNECTOR
};

/* The keys every connector takes, bound once when its section loads and
 * kept in it: settings_connector(). */
struct connector_conf {
	const char *name, *connector_class;
	int64_t tasks_max;
	const char *key_converter, *value_converter; /* NULL: the worker's */
	bool key_schemas, value_schemas;
	enum settings_tolerance tolerance;
	bool errors_log, errors_log_messages;
	int64_t retry_timeout, retry_delay_max_ms;
	enum settings_eos_support eos_support;
	enum settings_boundary boundary;
	int64_t boundary_interval_ms;
};

struct connector_settings {
	const char *name;             /* owned by settings */
	const struct source_ops *ops; /* the source for connector.class */
	struct config_section *cfg;   /* common connector keys + the source's keys */
	struct converter key_conv;    /* resolved: connector override or worker */
	struct converter value_conv;
	struct transform_chain *chain; /* transforms=..., owned (transform.h) */
	char *file;                    /* the file its keys were read from, owned */
	char *prefix;                  /* their prefix there ("" or "connectors.NAME."), owned */
	enum connlayer_kind layer;     /* what gave it: the files, or a layer (connlayer.h) */
	bool over;                     /* a layer's, over a connector of that name below it, */
	enum connlayer_kind under;     /* ... which this gave */
	/* The run-time guard (core/source.h), borrowed; NULL: none (the files'
	 * and the REST API's connectors). Its layer's (settings.guards[layer]),
	 * set by settings_load_with for every connector of that layer. */
	const struct source_guard *guard;
};

/* A layer's entry refused (connlayer_replaces: it may not replace the
 * connector of its name below it); the connector below runs. */
struct settings_refusal {
	enum connlayer_kind layer;
	char *name; /* owned */
	char *why;  /* "connector X: ...", owned */
};

/* As many connectors and files as memory allows: the arrays grow while the
 * files load, and do not move after settings_load returns (a running
 * connector points at its connector_settings). */
struct settings {
	struct config_section *worker;
	size_t nconnectors, capconnectors;
	struct connector_settings *connectors;
	struct props **files;
	size_t nfiles;
	struct providers *providers; /* config.providers of the worker file */
	/* The layers laid over the files' connectors, in order (connlayer.h);
	 * [CONNLAYER_FILES] is NULL. */
	struct connlayer *layers[CONNLAYER_KINDS];
	struct settings_refusal *refusals;
	size_t nrefusals;
	/* Each layer's run-time guard, borrowed (it outlives every settings
	 * that holds it), NULL: none; every connector of the layer carries it
	 * (connector_settings.guard). Set once by its owner (settings_guard:
	 * main.c sets the fleet's, fleetallow_guard), carried by each reload
	 * into the new settings (settings_load_with's guards). */
	const struct source_guard *guards[CONNLAYER_KINDS];
};

/* Failures of settings_load and settings_help_doc (util/err.h). */
enum {
	SETTINGS_OK = 0,
	SETTINGS_ERR = -1,       /* the configuration is wrong: a person must act (exit 78) */
	SETTINGS_ERR_NOMEM = -2, /* out of memory: a restart may pass (exit 75) */
};

/* Loads paths[0] as the worker file and paths[1..n-1] as connector files,
 * and lays over them the layers kept beside the offsets file (connlayer.h),
 * the fleet's then the REST API's: each entry replaces the connector of its
 * name, a deletion removes it; an entry its layer's policy does not let
 * replace a connector below it is refused (settings.refusals, logged by
 * settings_log_notices) and that connector runs. The fleet's layer's
 * policy is the worker file's fleet.allow.replace.local, set at each load. Returns 0 and a filled
 * *out (release with settings_destroy), or SETTINGS_ERR or
 * SETTINGS_ERR_NOMEM with "file:line: why" in errbuf. */
int settings_load(char *const *paths, size_t n, struct settings *out, char *errbuf, size_t errlen);

/* Whether connectors may come from outside the files while skiff runs:
 * the REST API listens (listeners) or the fleet steers it (fleet.enabled).
 * Then none at all is a state to wait in, not an error. */
bool settings_remote_connectors(const struct config_section *worker);

/* fleet.enabled: the fleet steers this device (fleet/fleetconf.h). */
bool settings_fleet_steered(const struct config_section *worker);

/* Loads an operator tool's client properties file (Kafka tools'
 * --command-config: Connect's client keys, security.protocol, sasl.*,
 * ssl.*) as a worker section, checked as a worker file's keys are
 * (wireprops: file:line, the key and the librdkafka way), with
 * bootstrap.servers set to bootstrap when it is not NULL (where: "--bootstrap").
 * path NULL: no file, the defaults and bootstrap only. defaults: NULL, or
 * key, value pairs ending in NULL, each taken unless the file sets the key
 * (the fleet's topic configs, config.storage.X, as a worker file's). No
 * connector is loaded or wanted. Returns 0 and *out
 * (config_section_destroy), or SETTINGS_ERR / SETTINGS_ERR_NOMEM with
 * errbuf "file:line: why". For `skiff fleet`, whose clients kconf_worker
 * builds from it. */
int settings_load_client(const char *path, const char *bootstrap, const char *const *defaults,
                         struct config_section **out, char *errbuf, size_t errlen);

/* settings_load with layers given: layers[k] (an array of CONNLAYER_KINDS;
 * [CONNLAYER_FILES] unused), each taken in every case, NULL: the one kept
 * beside the offsets file; layers NULL: all of them. guards (an array of
 * CONNLAYER_KINDS, borrowed, or NULL: none) become out->guards, each given
 * to every connector of its layer. For a change a client asks for before
 * it is kept, and SIGHUP (the layers and guards as they run). */
int settings_load_with(char *const *paths, size_t n, struct connlayer **layers,
                       const struct source_guard *const *guards, struct settings *out, char *errbuf,
                       size_t errlen);

/* Sets layer's guard (borrowed: it must outlive s and every settings a
 * reload makes from it; NULL: none) in s and in every connector of that
 * layer s holds. Before the connectors open: the fleet's layer's connectors
 * kept from a previous run are read at the first load. */
void settings_guard(struct settings *s, enum connlayer_kind layer, const struct source_guard *g);

/* The refusal of layer's entry name in s, or NULL. */
const struct settings_refusal *settings_refused(const struct settings *s, enum connlayer_kind layer,
                                                const char *name);

/* Loads p (a connector's keys, as a connector file gives them) as the
 * connector of a configuration whose worker section is worker would:
 * 0, or SETTINGS_ERR / SETTINGS_ERR_NOMEM with errbuf "NAME:LINE: why"
 * (NAME: props_name(p)). For the REST API's config/validate. */
int settings_check_connector(const struct config_section *worker, const struct props *p,
                             char *errbuf, size_t errlen);

/* The keys every connector takes (Connect's ConnectorConfig), and the
 * worker's, as tables. */
extern const struct config_key *const settings_connector_keys;
extern const struct config_key *const settings_worker_keys;

/* Every key a worker file may hold, which a connector's configuration
 * from afar must not (fleet/fleetallow.h): the rows of the worker
 * section's tables (settings_worker_keys, restconf_keys, ...; NULL ends
 * them), the key prefixes it keeps for librdkafka (producer., kafka.,
 * sasl., ...) and those another reader takes (connectors.,
 * config.providers.), each NULL-terminated. A table the worker section
 * loads is added to settings_worker_tables. */
extern const struct config_key *const *const settings_worker_tables;
extern const char *const *const settings_worker_passthrough;
extern const char *const *const settings_worker_skip;

/* The worker section's bound keys (a section settings_load made; another
 * aborts: a programming error). Owned by the section. Inline: read by
 * modules settings itself calls (the producer, the device's name). */
static inline const struct worker_conf *settings_worker(const struct config_section *worker)
{
	return (const struct worker_conf *)config_section_kept(worker, settings_worker_keys);
}

/* The same for a connector section (connector_settings.cfg). */
static inline const struct connector_conf *settings_connector(const struct config_section *cfg)
{
	return (const struct connector_conf *)config_section_kept(cfg, settings_connector_keys);
}

/* The i-th config table (worker, REST, connector, then each source's):
 * its name, rows and the size of the settings struct its rows bind (0: the
 * table is not bound yet). Returns false past the last. For the unit test
 * that checks every table's binding (config_table_check). */
bool settings_table(size_t i, const char **name, const struct config_key **table, size_t *size);

/* Logs the notices (inert keys) of every section. */
void settings_log_notices(const struct settings *s);

/* Prints the effective configuration, secrets masked (for --check). */
void settings_print(const struct settings *s, FILE *fp);

/* Builds --help-config's document (its shape: help.h) from every table: the
 * worker's, every connector's, each source's, the keys passed to librdkafka
 * with skiff's producer defaults, and the transforms. Returns 0 and *out
 * (owned by the caller, cJSON_Delete), or SETTINGS_ERR_NOMEM. */
int settings_help_doc(struct cJSON **out);

/* Frees everything in s (not s itself). Accepts a zeroed or partly loaded s. */
void settings_destroy(struct settings *s);

#endif
