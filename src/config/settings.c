/* settings: the worker and connector tables, and the two ways of giving
 * connectors (Connect's separate files, or inline under "connectors.<name>."). */
#include "config/settings.h"

#include "config/config.h"
#include "core/log.h"
#include "config/props.h"
#include "config/provider.h"
#include "control/restconf.h"
#include "config/connlayer.h"
#include "fleet/fleetconf.h"
#include "kafka/sink_kafka.h"
#include "core/source.h"
#include "transform/transform.h"
#include "kafka/wireprops.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INERT(k)                                                                                   \
	{                                                                                          \
		k, CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,                                        \
		    "Kafka Connect setting; no meaning here.", CFG_NOFIELD                         \
	}
#define INT_MAX32 2147483647

static const struct config_key worker_keys[] = {
    {"bootstrap.servers", CFG_LIST, "localhost:9092", 0, 0, NULL, 0,
     "Kafka brokers to connect to first (host:port, comma-separated).",
     CFG_FIELD(struct worker_conf, bootstrap)},
    {"key.converter", CFG_CLASS, "org.apache.kafka.connect.json.JsonConverter", 0, 0, NULL, 0,
     "Converter for record keys: JsonConverter, StringConverter or ByteArrayConverter.",
     CFG_FIELD(struct worker_conf, key_converter)},
    {"value.converter", CFG_CLASS, "org.apache.kafka.connect.json.JsonConverter", 0, 0, NULL, 0,
     "Converter for record values: JsonConverter, StringConverter or ByteArrayConverter.",
     CFG_FIELD(struct worker_conf, value_converter)},
    {"key.converter.schemas.enable", CFG_BOOL, "true", 0, 0, NULL, 0,
     "JsonConverter: wrap keys in Connect's {\"schema\":...,\"payload\":...} envelope.",
     CFG_FIELD(struct worker_conf, key_schemas)},
    {"value.converter.schemas.enable", CFG_BOOL, "true", 0, 0, NULL, 0,
     "JsonConverter: wrap values in Connect's {\"schema\":...,\"payload\":...} envelope.",
     CFG_FIELD(struct worker_conf, value_schemas)},
    {"offset.storage.file.filename", CFG_STRING, NULL, 0, 0, NULL, 0,
     "File the source offsets are stored in (crash-safe; the previous generation is kept "
     "as FILE.prev). This, offset.storage.topic or both must be set.",
     CFG_FIELD(struct worker_conf, offset_file)},
    {"offset.storage.topic", CFG_STRING, NULL, 0, 0, NULL, 0,
     "Compacted Kafka topic the offsets are also (or only) stored in, as Connect's "
     "distributed mode does; created when missing. Beside the file it restores a lost "
     "state directory (docs/offsets.md). Other offset.storage.X are topic "
     "configs X.",
     CFG_FIELD(struct worker_conf, offset_topic)},
    {"offset.storage.replication.factor", CFG_INT, "3", -1, INT_MAX32, NULL, 0,
     "Replication factor of a created offsets topic; -1: the broker's default.",
     CFG_FIELD(struct worker_conf, offset_rf)},
    {"offset.storage.partitions", CFG_INT, "25", -1, INT_MAX32, NULL, 0,
     "Partitions of a created offsets topic; -1: the broker's default.",
     CFG_FIELD(struct worker_conf, offset_partitions)},
    {"device.id", CFG_STRING, NULL, 0, 0, NULL, 0,
     "This device's name on its offset records (header skiff.device) and in the "
     "exactly-once transactional.id, to tell its own from another device's in a shared "
     "offsets topic; default /etc/machine-id, else an id kept in "
     "<offset.storage.file.filename>.device, never the host name. Give one that survives "
     "re-flashing (docs/offsets.md).",
     CFG_FIELD(struct worker_conf, device_id)},
    {"offset.flush.interval.ms", CFG_INT, "60000", 0, INT_MAX32, NULL, 0,
     "How often acknowledged offsets are written, when they changed.",
     CFG_FIELD(struct worker_conf, flush_interval_ms)},
    {"offset.flush.timeout.ms", CFG_INT, "5000", 0, INT_MAX32, NULL, 0,
     "On shutdown, how long to wait for records in flight to be acknowledged.",
     CFG_FIELD(struct worker_conf, flush_timeout_ms)},
    {"log.level", CFG_ENUM, NULL, 0, 0, "error|warn|notice|info|debug", 0,
     "skiff's own: the most verbose level logged (default info; --log-level overrides "
     "it). A reload (SIGHUP) applies a change at once.",
     CFG_FIELD(struct worker_conf, log_level)},
    INERT("plugin.path"),
    {"bandwidth.max.bytes.per.second", CFG_INT, "0", 0, INT_MAX32, NULL, 0,
     "Cap on bytes sent to Kafka, after compression, with the protocol's framing (0: none). "
     "Held by pausing reading, never by dropping.",
     CFG_FIELD(struct worker_conf, bandwidth)},
    {"health.ack.timeout.ms", CFG_INT, "60000", 1000, INT_MAX32, NULL, 0,
     "/health is unhealthy once a record waited this long for Kafka's acknowledgement.",
     CFG_FIELD(struct worker_conf, health_ack_timeout_ms)},
    {"metrics.partition.limit", CFG_INT, "100", 0, INT_MAX32, NULL, 0,
     "Most source partitions (files, tables) with skiff_partition_* series in /metrics: "
     "those with records in flight, then the most recently acknowledged. Connector totals "
     "count every partition whatever this is; 0: none.",
     CFG_FIELD(struct worker_conf, metrics_partition_limit)},
    INERT("group.id"),
    INERT("header.converter"),
    INERT("task.shutdown.graceful.timeout.ms"),
    {"config.providers", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Connect's config providers, by name; each needs config.providers.<name>.class "
     "(EnvVarConfigProvider, FileConfigProvider or DirectoryConfigProvider, in "
     "org.apache.kafka.common.config.provider) and may take "
     "config.providers.<name>.param.* (allowlist.pattern; allowed.paths). Values of the "
     "worker and connector files then use ${env:VAR}, ${file:/path:key}, "
     "${dir:/path:file}; what they give is a secret, never printed.",
     CFG_FIELD(struct worker_conf, providers)},
    INERT("metrics.sample.window.ms"),
    INERT("metrics.num.samples"),
    INERT("metrics.recording.level"),
    INERT("metric.reporters"),
    INERT("connector.client.config.override.policy"),
    INERT("internal.key.converter"),
    INERT("internal.value.converter"),
    INERT("internal.key.converter.schemas.enable"),
    INERT("internal.value.converter.schemas.enable"),
    INERT("key.converter.schemas.cache.size"),
    INERT("value.converter.schemas.cache.size"),
    INERT("key.converter.decimal.format"),
    INERT("value.converter.decimal.format"),
    INERT("key.converter.replace.null.with.default"),
    INERT("value.converter.replace.null.with.default"),
    INERT("topic.creation.enable"),
    {"exactly.once.source.support", CFG_ENUM, "disabled", 0, 0, "enabled|preparing|disabled", 0,
     "Connect's exactly-once for sources (KIP-618): enabled writes records and their "
     "offsets in one Kafka transaction; needs offset.storage.topic (docs/exactly-once.md).",
     CFG_FIELD(struct worker_conf, eos)},
    INERT("scheduled.rebalance.max.delay.ms"),
    CFG_END,
};

static const struct config_key connector_keys[] = {
    {"name", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED,
     "Connector name: the first element of its offset keys.",
     CFG_FIELD(struct connector_conf, name)},
    {"connector.class", CFG_CLASS, NULL, 0, 0, NULL, CFG_REQUIRED,
     "Which source: a class name listed with each source below (Connect's short or full "
     "name).",
     CFG_FIELD(struct connector_conf, connector_class)},
    {"tasks.max", CFG_INT, "1", 1, INT_MAX32, NULL, 0,
     "Accepted for Connect compatibility; skiff runs one task per connector.",
     CFG_FIELD(struct connector_conf, tasks_max)},
    {"key.converter", CFG_CLASS, NULL, 0, 0, NULL, 0, "Overrides the worker's key.converter.",
     CFG_FIELD(struct connector_conf, key_converter)},
    {"value.converter", CFG_CLASS, NULL, 0, 0, NULL, 0, "Overrides the worker's value.converter.",
     CFG_FIELD(struct connector_conf, value_converter)},
    {"key.converter.schemas.enable", CFG_BOOL, "true", 0, 0, NULL, 0,
     "With a connector key.converter: JsonConverter envelope on or off.",
     CFG_FIELD(struct connector_conf, key_schemas)},
    {"value.converter.schemas.enable", CFG_BOOL, "true", 0, 0, NULL, 0,
     "With a connector value.converter: JsonConverter envelope on or off.",
     CFG_FIELD(struct connector_conf, value_schemas)},
    INERT("header.converter"),
    INERT("config.action.reload"),
    {"errors.tolerance", CFG_ENUM, "none", 0, 0, "none|all", 0,
     "A record a transform or converter fails on, or Kafka refuses for good: none stops "
     "the connector before it (its offset stays); all skips it (counted in "
     "records_skipped; its offset may move past it).",
     CFG_FIELD(struct connector_conf, tolerance)},
    {"errors.log.enable", CFG_BOOL, "false", 0, 0, NULL, 0,
     "With errors.tolerance=all: log each skipped record's failure (without the record).",
     CFG_FIELD(struct connector_conf, errors_log)},
    {"errors.log.include.messages", CFG_BOOL, "false", 0, 0, NULL, 0,
     "With errors.log.enable: include the record (topic, source partition and offset, "
     "key, value, headers) in that line.",
     CFG_FIELD(struct connector_conf, errors_log_messages)},
    {"errors.retry.timeout", CFG_INT, "0", INT64_MIN, INT64_MAX, NULL, 0,
     "Connect retries retriable failures this long (-1: for ever). No transform or "
     "converter failure is retriable (as Connect's DataException is not): accepted, "
     "nothing is retried.",
     CFG_FIELD(struct connector_conf, retry_timeout)},
    {"errors.retry.delay.max.ms", CFG_INT, "60000", INT64_MIN, INT64_MAX, NULL, 0,
     "Connect's longest wait between those retries; accepted, see errors.retry.timeout.",
     CFG_FIELD(struct connector_conf, retry_delay_max_ms)},
    {"exactly.once.support", CFG_ENUM, "requested", 0, 0, "requested|required", 0,
     "Connect's per-connector exactly-once request; every skiff source can give it, so "
     "both mean the same.",
     CFG_FIELD(struct connector_conf, eos_support)},
    {"transaction.boundary", CFG_ENUM, "poll", 0, 0, "poll|interval|connector", 0,
     "With exactly-once: poll, a transaction per burst of records the sources have ready, "
     "at most one a second and never older (none while idle); interval, one per "
     "transaction.boundary.interval.ms; connector is refused (no source defines them).",
     CFG_FIELD(struct connector_conf, boundary)},
    {"transaction.boundary.interval.ms", CFG_INT, "-1", -1, INT32_MAX, NULL, 0,
     "With transaction.boundary=interval: ms per transaction (-1: offset.flush.interval.ms).",
     CFG_FIELD(struct connector_conf, boundary_interval_ms)},
    INERT("offsets.storage.topic"),
    CFG_END,
};

const struct config_key *const settings_connector_keys = connector_keys;
const struct config_key *const settings_worker_keys = worker_keys;

bool settings_table(size_t i, const char **name, const struct config_key **table, size_t *size)
{
	static const struct {
		const char *name;
		const struct config_key *table;
		size_t size;
	} own[] = {
	    {"worker", worker_keys, sizeof(struct worker_conf)},
	    {"rest", restconf_keys, sizeof(struct restconf_conf)},
	    {"fleet", fleetconf_keys, sizeof(struct fleet_conf)},
	    {"connector", connector_keys, sizeof(struct connector_conf)},
	};
	size_t nown = sizeof(own) / sizeof(own[0]);

	if (i < nown) {
		*name = own[i].name;
		*table = own[i].table;
		*size = own[i].size;
		return true;
	}
	for (size_t k = 0; source_registry[k] != NULL; k++) {
		if (k == i - nown) {
			*name = source_registry[k]->kind;
			*table = source_registry[k]->config_keys;
			*size = source_registry[k]->config_size;
			return true;
		}
	}
	return false;
}

/* Worker keys handed to librdkafka (checked there), Connect's per-client
 * prefixes that have no client here (accepted, ignored by the sink), and
 * the internal topics' topic configs (offset.storage.X: offsets_ktopic.c;
 * config.storage.X, status.storage.X: fleetconf_topic_config). */
static const char *const worker_passthrough[] = {
    "producer.", "kafka.",          "security.protocol", "sasl.",           "ssl.", "consumer.",
    "admin.",    "offset.storage.", "config.storage.",   "status.storage.", NULL,
};

static const char *const inline_prefix = "connectors.";

/* Worker file keys read by others than the worker table: inline connectors
 * (load_inline) and the providers' declarations (provider.h). */
static const char *const worker_skip[] = {"connectors.", "config.providers.", NULL};

/* The tables of the worker file's section, in the order they load. */
static const struct config_key *const worker_tables[] = {worker_keys, restconf_keys, fleetconf_keys,
                                                         NULL};

const struct config_key *const *const settings_worker_tables = worker_tables;
const char *const *const settings_worker_passthrough = worker_passthrough;
const char *const *const settings_worker_skip = worker_skip;

/* Connect: a connector that sets its own converter configures it fully. */
static int resolve_converter(const struct config_section *w, const struct config_section *c,
                             bool value, struct converter *out, char *errbuf, size_t errlen)
{
	const struct worker_conf *wc = settings_worker(w);
	const struct connector_conf *cc = settings_connector(c);
	const char *conv_key = value ? "value.converter" : "key.converter";
	const char *own = value ? cc->value_converter : cc->key_converter;
	const struct config_section *from = own != NULL ? c : w;
	const char *cls = own != NULL ? own : value ? wc->value_converter : wc->key_converter;
	bool schemas = own != NULL ? (value ? cc->value_schemas : cc->key_schemas)
	                           : (value ? wc->value_schemas : wc->key_schemas);

	if (convert_resolve(cls, schemas, out) != 0) {
		snprintf(errbuf, errlen,
		         "%s: %s: unknown converter '%s' (JsonConverter, "
		         "StringConverter or ByteArrayConverter)",
		         config_where(from, conv_key), conv_key, cls);
		return SETTINGS_ERR;
	}
	return 0;
}

static int finish_connector(struct settings *s, char *errbuf, size_t errlen)
{
	struct connector_settings *c = &s->connectors[s->nconnectors];
	int rc;

	c->name = settings_connector(c->cfg)->name;
	for (size_t i = 0; i < s->nconnectors; i++) {
		if (strcmp(s->connectors[i].name, c->name) == 0) {
			snprintf(errbuf, errlen, "%s: connector name '%s' is used twice",
			         config_where(c->cfg, "name"), c->name);
			return SETTINGS_ERR;
		}
	}
	if (resolve_converter(s->worker, c->cfg, false, &c->key_conv, errbuf, errlen) ||
	    resolve_converter(s->worker, c->cfg, true, &c->value_conv, errbuf, errlen))
		return SETTINGS_ERR;
	rc = transform_chain_parse(c->cfg, &c->chain, errbuf, errlen);
	if (rc != 0)
		return rc == TRANSFORM_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	if (c->ops->value_kind == VALUE_STRUCT && c->value_conv.kind == CONV_BYTEARRAY) {
		/* Connect fails the task at the first record; found here, no
		 * restart loop and --check says so. */
		const struct config_section *from =
		    settings_connector(c->cfg)->value_converter != NULL ? c->cfg : s->worker;

		snprintf(errbuf, errlen,
		         "%s: value.converter: ByteArrayConverter cannot write the "
		         "rows of connector '%s' (they are structs); use JsonConverter or "
		         "StringConverter",
		         config_where(from, "value.converter"), c->name);
		return SETTINGS_ERR;
	}
	s->nconnectors++;
	return 0;
}

/* Makes room for one more connector, zeroed, at s->connectors[nconnectors]
 * (where a connector that fails halfway is left for settings_destroy).
 * Returns 0 or -1 (out of memory). */
static int room(struct settings *s)
{
	size_t cap = s->capconnectors ? 2 * s->capconnectors : 8;
	struct connector_settings *c;

	if (s->nconnectors < s->capconnectors)
		return 0;
	c = realloc(s->connectors, cap * sizeof(*c));
	if (c == NULL)
		return -1;
	memset(c + s->capconnectors, 0, (cap - s->capconnectors) * sizeof(*c));
	s->connectors = c;
	s->capconnectors = cap;
	return 0;
}

/* Loads one connector from p: keys under prefix (inline) or all keys (its own
 * file). name_from_prefix is the inline name, or NULL. */
static int load_connector(struct settings *s, const struct props *p, const char *prefix,
                          const char *name_from_prefix, char *errbuf, size_t errlen)
{
	struct connector_settings *c;
	char key[256];
	const char *cls;
	const struct config_key *tables[2] = {connector_keys, NULL};
	const char *presets[] = {"name", name_from_prefix, NULL};
	int rc;
	struct config_spec spec = {.prefix = prefix,
	                           .tables = tables,
	                           .ntables = 2,
	                           .passthrough = transform_config_prefixes,
	                           .presets = name_from_prefix ? presets : NULL,
	                           .presets_where = props_name(p)};

	if (room(s) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", props_name(p));
		return SETTINGS_ERR_NOMEM;
	}
	c = &s->connectors[s->nconnectors];
	snprintf(key, sizeof(key), "%sconnector.class", prefix);
	cls = props_get(p, key);
	if (cls == NULL) {
		snprintf(errbuf, errlen, "%s: missing required property '%s'", props_name(p), key);
		return SETTINGS_ERR;
	}
	while (*cls == ' ' || *cls == '\t')
		cls++;
	c->ops = source_find(cls);
	if (c->ops == NULL) {
		char known[256];

		source_class_names(known, sizeof(known));
		snprintf(errbuf, errlen, "%s: %s: unknown connector class '%s' (known: %s)",
		         props_name(p), key, cls, known);
		return SETTINGS_ERR;
	}
	tables[1] = c->ops->config_keys;
	if (name_from_prefix != NULL) {
		/* The inline form names the connector by its prefix. */
		snprintf(key, sizeof(key), "%sname", prefix);
		if (props_get(p, key) != NULL) {
			snprintf(errbuf, errlen,
			         "%s: %s: an inline connector is named by its "
			         "prefix; remove this key",
			         props_name(p), key);
			return SETTINGS_ERR;
		}
	}
	if ((c->file = strdup(props_name(p))) == NULL || (c->prefix = strdup(prefix)) == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", props_name(p));
		return SETTINGS_ERR_NOMEM;
	}
	if ((rc = config_section_load(p, &spec, &c->cfg, errbuf, errlen)) != 0)
		return rc == CONFIG_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	if (config_section_keep(c->cfg, connector_keys, sizeof(struct connector_conf)) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", props_name(p));
		return SETTINGS_ERR_NOMEM;
	}
	if (settings_connector(c->cfg)->boundary == SETTINGS_BOUNDARY_CONNECTOR) {
		/* Connect's connector-defined boundaries: no skiff source defines any. */
		snprintf(errbuf, errlen,
		         "%s: transaction.boundary=connector: no skiff source defines transaction "
		         "boundaries; use poll or interval",
		         config_where(c->cfg, "transaction.boundary"));
		return SETTINGS_ERR;
	}
	return finish_connector(s, errbuf, errlen);
}

/* Collects the distinct inline connector names of the worker file, in order
 * of first appearance, and loads each. */
static int load_inline(struct settings *s, const struct props *w, char *errbuf, size_t errlen)
{
	size_t plen = strlen(inline_prefix), first = s->nconnectors;
	int rc;

	for (size_t i = 0; i < props_count(w); i++) {
		const char *key = props_key(w, i), *dot;
		char name[128], prefix[192];
		bool seen = false;

		if (strncmp(key, inline_prefix, plen) != 0)
			continue;
		dot = strchr(key + plen, '.');
		if (dot == NULL || dot == key + plen ||
		    (size_t)(dot - key - plen) >= sizeof(name)) {
			snprintf(errbuf, errlen, "%s:%d: '%s' is not connectors.<name>.<property>",
			         props_name(w), props_line(w, i), key);
			return SETTINGS_ERR;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(dot - key - plen), key + plen);
		for (size_t c = first; c < s->nconnectors && !seen; c++)
			seen = strcmp(s->connectors[c].name, name) == 0;
		if (seen)
			continue;
		snprintf(prefix, sizeof(prefix), "%s%s.", inline_prefix, name);
		if ((rc = load_connector(s, w, prefix, name, errbuf, errlen)) != 0)
			return rc;
	}
	return 0;
}

static void free_connector(struct connector_settings *c)
{
	config_section_destroy(c->cfg);
	transform_chain_destroy(c->chain);
	free(c->file);
	free(c->prefix);
	memset(c, 0, sizeof(*c));
}

/* Notes that layer's entry name may not replace c, the connector of its
 * name below it. Returns 0 or SETTINGS_ERR_NOMEM. */
static int refuse(struct settings *s, enum connlayer_kind layer, const char *name,
                  const struct connector_settings *c, char *errbuf, size_t errlen)
{
	struct settings_refusal *grown = realloc(s->refusals, (s->nrefusals + 1) * sizeof(*grown));
	const char *from =
	    c->layer == CONNLAYER_FILES ? c->file : connlayer_path(s->layers[c->layer]);
	char why[1024];

	if (grown == NULL)
		goto nomem;
	s->refusals = grown;
	/* Only the fleet's layer may be refused (the REST API's replaces). */
	snprintf(why, sizeof(why),
	         "connector %s: %s configuration is refused: a connector of that name comes from "
	         "%s (%s), which %s may replace only with fleet.allow.replace.local=true",
	         name, layer == CONNLAYER_FLEET ? "the fleet's" : "a layer's",
	         connlayer_who(c->layer), from != NULL ? from : "not kept", connlayer_who(layer));
	grown[s->nrefusals] = (struct settings_refusal){layer, strdup(name), strdup(why)};
	if (grown[s->nrefusals].name == NULL || grown[s->nrefusals].why == NULL) {
		free(grown[s->nrefusals].name);
		free(grown[s->nrefusals].why);
		goto nomem;
	}
	s->nrefusals++;
	return 0;
nomem:
	snprintf(errbuf, errlen, "out of memory");
	return SETTINGS_ERR_NOMEM;
}

/* Lays layer's connectors over those loaded so far: an entry replaces the
 * connector of its name (or adds one), a deletion removes it, unless the
 * layer may not replace it (connlayer_replaces): then it is refused. */
static int lay(struct settings *s, enum connlayer_kind layer, char *errbuf, size_t errlen)
{
	const struct connlayer *l = s->layers[layer];
	int rc;

	for (size_t i = 0; i < connlayer_count(l); i++) {
		const char *name = connlayer_name(l, i);
		struct props *p = connlayer_props(l, i);
		bool over = false, refused = false;
		enum connlayer_kind under = CONNLAYER_FILES;

		for (size_t j = 0; j < s->nconnectors && !refused; j++) {
			if (strcmp(s->connectors[j].name, name) != 0)
				continue;
			if (!connlayer_replaces(l)) {
				if ((rc = refuse(s, layer, name, &s->connectors[j], errbuf,
				                 errlen)) != 0)
					return rc;
				refused = true;
				break;
			}
			over = true;
			under = s->connectors[j].layer;
			free_connector(&s->connectors[j]);
			memmove(&s->connectors[j], &s->connectors[j + 1],
			        (s->nconnectors - j - 1) * sizeof(s->connectors[0]));
			memset(&s->connectors[--s->nconnectors], 0, sizeof(s->connectors[0]));
			break;
		}
		if (p == NULL || refused)
			continue;
		/* ${env:..}, ${file:..} as in the files, with the worker's providers. */
		if ((rc = providers_resolve(s->providers, p, errbuf, errlen)) != 0)
			return rc == PROVIDER_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
		if ((rc = load_connector(s, p, "", NULL, errbuf, errlen)) != 0)
			return rc;
		s->connectors[s->nconnectors - 1].layer = layer;
		s->connectors[s->nconnectors - 1].over = over;
		s->connectors[s->nconnectors - 1].under = under;
	}
	return 0;
}

/* A file, a topic or both; a created topic's sizes are -1 or positive. */
static int check_offset_store(const struct config_section *w, const char *path, char *errbuf,
                              size_t errlen)
{
	const struct worker_conf *wc = settings_worker(w);
	const char *f = wc->offset_file, *t = wc->offset_topic;
	const struct {
		const char *key;
		int64_t n;
	} sizes[] = {{"offset.storage.partitions", wc->offset_partitions},
	             {"offset.storage.replication.factor", wc->offset_rf}};

	if ((f == NULL || *f == '\0') && (t == NULL || *t == '\0')) {
		snprintf(errbuf, errlen,
		         "%s: missing required property 'offset.storage.file.filename' (or "
		         "offset.storage.topic, or both)",
		         path);
		return SETTINGS_ERR;
	}
	if (wc->eos == SETTINGS_EOS_ENABLED && (t == NULL || *t == '\0')) {
		/* The offsets go in the records' transaction: they need a topic. */
		snprintf(errbuf, errlen,
		         "%s: exactly.once.source.support=enabled needs offset.storage.topic: "
		         "records and their offsets are committed in one Kafka transaction, "
		         "which a local file cannot join",
		         config_where(w, "exactly.once.source.support"));
		return SETTINGS_ERR;
	}
	for (size_t i = 0; i < 2; i++)
		if (sizes[i].n == 0) {
			snprintf(errbuf, errlen, "%s: %s=0: give -1 (the broker's default) or more",
			         config_where(w, sizes[i].key), sizes[i].key);
			return SETTINGS_ERR;
		}
	return 0;
}

int settings_load(char *const *paths, size_t n, struct settings *out, char *errbuf, size_t errlen)
{
	return settings_load_with(paths, n, NULL, NULL, out, errbuf, errlen);
}

void settings_guard(struct settings *s, enum connlayer_kind layer, const struct source_guard *g)
{
	s->guards[layer] = g;
	for (size_t i = 0; i < s->nconnectors; i++)
		if (s->connectors[i].layer == layer)
			s->connectors[i].guard = g;
}

int settings_load_with(char *const *paths, size_t n, struct connlayer **layers,
                       const struct source_guard *const *guards, struct settings *out, char *errbuf,
                       size_t errlen)
{
	struct rest_settings *keys = NULL;
	struct config_spec spec = {.prefix = "",
	                           .tables = worker_tables,
	                           .ntables = sizeof(worker_tables) / sizeof(worker_tables[0]) - 1,
	                           .passthrough = worker_passthrough,
	                           .skip = worker_skip};
	int rc;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; layers != NULL && k < CONNLAYER_KINDS; k++)
		out->layers[k] = layers[k];
	for (size_t k = 0; guards != NULL && k < CONNLAYER_KINDS; k++)
		out->guards[k] = guards[k];
	if (n == 0) {
		snprintf(errbuf, errlen, "give one worker file and the connector files");
		return SETTINGS_ERR;
	}
	out->files = calloc(n, sizeof(*out->files));
	if (out->files == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SETTINGS_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = props_load_file(paths[i], &out->files[i], errbuf, errlen)) != 0)
			return rc == PROPS_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
		out->nfiles++;
	}
	/* Connect: the worker declares the providers; every file's values use them. */
	rc = providers_new(out->files[0], &out->providers, errbuf, errlen);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = providers_resolve(out->providers, out->files[i], errbuf, errlen);
	if (rc != 0)
		return rc == PROVIDER_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	if ((rc = config_section_load(out->files[0], &spec, &out->worker, errbuf, errlen)) != 0)
		return rc == CONFIG_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	if (config_section_keep(out->worker, worker_keys, sizeof(struct worker_conf)) != 0 ||
	    config_section_keep(out->worker, restconf_keys, sizeof(struct restconf_conf)) != 0 ||
	    config_section_keep(out->worker, fleetconf_keys, sizeof(struct fleet_conf)) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", paths[0]);
		return SETTINGS_ERR_NOMEM;
	}
	if (wireprops_check(out->worker, errbuf, errlen) != 0 ||
	    check_offset_store(out->worker, paths[0], errbuf, errlen) != 0 ||
	    fleetconf_check(out->worker, settings_worker(out->worker)->device_id, errbuf, errlen) !=
	        0)
		return SETTINGS_ERR;
	/* The REST keys' forms (the files they name: rest_check). */
	if ((keys = malloc(sizeof(*keys))) == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", paths[0]);
		return SETTINGS_ERR_NOMEM;
	}
	if (restconf_read(out->worker, keys, errbuf, errlen) != 0) {
		free(keys);
		return SETTINGS_ERR;
	}
	free(keys);
	for (size_t i = 1; i < n; i++)
		if ((rc = load_connector(out, out->files[i], "", NULL, errbuf, errlen)) != 0)
			return rc;
	if ((rc = load_inline(out, out->files[0], errbuf, errlen)) != 0)
		return rc;
	/* The fleet's over the files, the REST API's over both. */
	for (enum connlayer_kind k = CONNLAYER_FLEET; k < CONNLAYER_KINDS; k++) {
		if (out->layers[k] == NULL &&
		    (rc = connlayer_load(k, settings_worker(out->worker)->offset_file,
		                         &out->layers[k], errbuf, errlen)) != 0)
			return rc == CONNLAYER_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
		/* The device's last word, as its worker file says it now (at a
		 * start, a SIGHUP, a change alike). */
		if (k == CONNLAYER_FLEET)
			connlayer_set_replaces(out->layers[k],
			                       fleetconf_conf(out->worker)->allow.replace_local);
		if ((rc = lay(out, k, errbuf, errlen)) != 0)
			return rc;
	}
	/* Each connector its layer's guard, from its first read on. */
	for (enum connlayer_kind k = CONNLAYER_FILES; k < CONNLAYER_KINDS; k++)
		settings_guard(out, k, out->guards[k]);
	/* With the REST API or the fleet on, connectors may come from them
	 * alone (a device the fleet steers starts with none). */
	if (out->nconnectors == 0 && !settings_remote_connectors(out->worker)) {
		snprintf(errbuf, errlen,
		         "%s: no connector: give connector files after the worker "
		         "file, or declare connectors.<name>.connector.class=... in it",
		         paths[0]);
		return SETTINGS_ERR;
	}
	return 0;
}

bool settings_remote_connectors(const struct config_section *worker)
{
	return restconf_conf(worker)->listeners.n > 0 || fleetconf_conf(worker)->enabled;
}

bool settings_fleet_steered(const struct config_section *worker)
{
	return fleetconf_conf(worker)->enabled;
}

int settings_load_client(const char *path, const char *bootstrap, const char *const *defaults,
                         struct config_section **out, char *errbuf, size_t errlen)
{
	const struct config_key *tables[] = {worker_keys, restconf_keys, fleetconf_keys};
	const char *const skip[] = {inline_prefix, "config.providers.", NULL};
	struct config_spec spec = {.prefix = "",
	                           .tables = tables,
	                           .ntables = 3,
	                           .passthrough = worker_passthrough,
	                           .skip = skip};
	struct props *p = NULL;
	struct config_section *w = NULL;
	int rc;

	*out = NULL;
	rc =
	    path != NULL ? props_load_file(path, &p, errbuf, errlen) : props_new("--bootstrap", &p);
	if (rc != 0) {
		if (path == NULL)
			snprintf(errbuf, errlen, "out of memory");
		return rc == PROPS_ERR_NOMEM || path == NULL ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	}
	for (const char *const *kv = defaults; kv != NULL && kv[0] != NULL; kv += 2)
		if (props_get(p, kv[0]) == NULL && props_add(p, kv[0], kv[1], 0) != 0) {
			props_destroy(p);
			snprintf(errbuf, errlen, "out of memory");
			return SETTINGS_ERR_NOMEM;
		}
	rc = config_section_load(p, &spec, &w, errbuf, errlen);
	props_destroy(p);
	if (rc != 0)
		return rc == CONFIG_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
	if (bootstrap != NULL && (rc = config_section_set(w, "bootstrap.servers", bootstrap,
	                                                  "--bootstrap", errbuf, errlen)) != 0)
		goto fail;
	if (config_section_keep(w, worker_keys, sizeof(struct worker_conf)) != 0 ||
	    config_section_keep(w, restconf_keys, sizeof(struct restconf_conf)) != 0 ||
	    config_section_keep(w, fleetconf_keys, sizeof(struct fleet_conf)) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", path != NULL ? path : "--bootstrap");
		rc = CONFIG_ERR_NOMEM;
		goto fail;
	}
	if (wireprops_check(w, errbuf, errlen) != 0) {
		rc = CONFIG_ERR;
		goto fail;
	}
	*out = w;
	return 0;
fail:
	config_section_destroy(w);
	return rc == CONFIG_ERR_NOMEM ? SETTINGS_ERR_NOMEM : SETTINGS_ERR;
}

const struct settings_refusal *settings_refused(const struct settings *s, enum connlayer_kind layer,
                                                const char *name)
{
	for (size_t i = 0; i < s->nrefusals; i++)
		if (s->refusals[i].layer == layer && strcmp(s->refusals[i].name, name) == 0)
			return &s->refusals[i];
	return NULL;
}

int settings_check_connector(const struct config_section *worker, const struct props *p,
                             char *errbuf, size_t errlen)
{
	struct settings *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", props_name(p));
		return SETTINGS_ERR_NOMEM;
	}
	/* Only read through: the worker stays the caller's. */
	s->worker = (struct config_section *)(uintptr_t)worker;
	rc = load_connector(s, p, "", NULL, errbuf, errlen);
	s->worker = NULL;
	settings_destroy(s);
	free(s);
	return rc;
}

static void log_section_notices(const struct config_section *c)
{
	for (size_t i = 0; c != NULL && i < config_notice_count(c); i++)
		log_notice("%s", config_notice(c, i));
}

/* The fleet's keys: ignored without fleet.enabled, as Connect's inert keys
 * were before it (fleetconf.h). */
static void log_fleet_notices(const struct config_section *w)
{
	char line[1536];
	size_t cursor = 0;
	bool warn;

	while (fleetconf_next_notice(w, &cursor, &warn, line, sizeof(line)))
		if (warn)
			log_warn("%s", line);
		else
			log_notice("%s", line);
}

void settings_log_notices(const struct settings *s)
{
	for (size_t i = 0; i < providers_notice_count(s->providers); i++)
		log_notice("%s", providers_notice(s->providers, i));
	log_section_notices(s->worker);
	log_fleet_notices(s->worker);
	for (size_t i = 0; i < config_passthrough_count(s->worker); i++) {
		const char *k = config_passthrough_key(s->worker, i);

		if (strncmp(k, "consumer.", 9) == 0 || strncmp(k, "admin.", 6) == 0)
			log_notice(
			    "%s: %s configures a Connect client skiff does not have; ignored",
			    config_passthrough_where(s->worker, i), k);
	}
	for (enum connlayer_kind k = CONNLAYER_FLEET; k < CONNLAYER_KINDS; k++) {
		const struct connlayer *l = s->layers[k];

		for (size_t i = 0; i < connlayer_count(l); i++)
			if (connlayer_props(l, i) == NULL &&
			    settings_refused(s, k, connlayer_name(l, i)) == NULL)
				log_notice("connector %s: deleted through %s (%s): not started",
				           connlayer_name(l, i), connlayer_who(k),
				           connlayer_path(l) ? connlayer_path(l) : "not kept");
	}
	for (size_t i = 0; i < s->nrefusals; i++)
		log_warn("%s", s->refusals[i].why);
	for (size_t i = 0; i < s->nconnectors; i++) {
		const struct connector_settings *c = &s->connectors[i];
		const char *path = connlayer_path(s->layers[c->layer]);

		if (c->layer != CONNLAYER_FILES)
			log_notice("connector %s: its configuration is %s (%s)%s", c->name,
			           c->layer == CONNLAYER_REST ? "the REST API's" : "the fleet's",
			           path != NULL ? path : "not kept",
			           !c->over                      ? ""
			           : c->under == CONNLAYER_FLEET ? ", over the fleet's one"
			                                         : ", over the files' one");
		log_section_notices(s->connectors[i].cfg);
		if (settings_connector(s->connectors[i].cfg)->tasks_max > 1)
			log_notice("%s: tasks.max > 1: skiff runs one task per connector",
			           config_where(s->connectors[i].cfg, "tasks.max"));
	}
}

static void print_table_values(const struct config_section *c, const struct config_key *t,
                               const char *indent, bool only_set, FILE *fp)
{
	for (; t->name != NULL; t++) {
		const char *v;

		if ((t->flags & CFG_INERT) || (only_set && !config_is_set(c, t->name)))
			continue;
		v = config_shown(c, t->name);
		if (v != NULL)
			fprintf(fp, "%s%s=%s\n", indent, t->name, v);
	}
}

void settings_print(const struct settings *s, FILE *fp)
{
	providers_print(s->providers, fp);
	fprintf(fp, "# worker (%s)\n", props_name(s->files[0]));
	print_table_values(s->worker, worker_keys, "", false, fp);
	print_table_values(s->worker, restconf_keys, "", true, fp);
	if (fleetconf_conf(s->worker)->enabled)
		print_table_values(s->worker, fleetconf_keys, "", false, fp);
	for (size_t i = 0; i < config_passthrough_count(s->worker); i++)
		fprintf(fp, "%s=%s\n", config_passthrough_key(s->worker, i),
		        config_passthrough_shown(s->worker, i));
	for (size_t i = 0; i < s->nconnectors; i++) {
		const struct connector_settings *c = &s->connectors[i];

		fprintf(fp, "# connector %s (%s%s source; key %s%s, value %s%s)\n", c->name,
		        c->layer == CONNLAYER_REST    ? "REST API, "
		        : c->layer == CONNLAYER_FLEET ? "fleet, "
		                                      : "",
		        c->ops->kind, convert_class_name(&c->key_conv),
		        c->key_conv.kind == CONV_JSON && !c->key_conv.schemas_enable
		            ? " without schemas"
		            : "",
		        convert_class_name(&c->value_conv),
		        c->value_conv.kind == CONV_JSON && !c->value_conv.schemas_enable
		            ? " without schemas"
		            : "");
		print_table_values(c->cfg, connector_keys, "  ", true, fp);
		print_table_values(c->cfg, c->ops->config_keys, "  ", false, fp);
		transform_chain_print(c->chain, "  ", fp);
	}
}

/* Keys the tables do not hold, by their shape, for --help-config. */
static const char *const worker_patterns[][2] = {
    {"producer.*, kafka.*",
     "librdkafka's properties, passed through with the prefix stripped and validated by "
     "librdkafka (an unknown one is an error naming file and line)."},
    {"security.protocol, sasl.*, ssl.*", "Passed to librdkafka as they are."},
    {"config.storage.<config>, status.storage.<config>",
     "With fleet.enabled: topic configs of a created config (status) topic, as "
     "offset.storage.<config> are the offsets topic's; both stay compacted. Without it: "
     "ignored, with a notice."},
    {"connectors.<name>.<property>", "A connector declared inline, in the worker file."},
    {"config.providers.<name>.class", "Class of a provider named in config.providers."},
    {"config.providers.<name>.param.allowlist.pattern",
     "EnvVarConfigProvider: only variables whose name this regular expression matches."},
    {"config.providers.<name>.param.allowed.paths",
     "File-, DirectoryConfigProvider: comma-separated absolute paths outside which "
     "nothing is read."},
};

/* A section of the document: its id and title, then the table's keys. */
static cJSON *help_section(cJSON *sections, const char *id, const char *title,
                           const struct config_key *table)
{
	cJSON *sec = cJSON_CreateObject();

	if (sec == NULL || !cJSON_AddItemToArray(sections, sec)) {
		cJSON_Delete(sec);
		return NULL;
	}
	if (cJSON_AddStringToObject(sec, "id", id) == NULL ||
	    cJSON_AddStringToObject(sec, "title", title) == NULL ||
	    config_table_doc(table, sec) != 0)
		return NULL;
	return sec;
}

/* The worker section's keys by shape; the first holds skiff's producer
 * defaults (sink_kafka.c's, so that they cannot drift from the doc). */
static int help_patterns(cJSON *worker)
{
	cJSON *arr = cJSON_AddArrayToObject(worker, "patterns");

	if (arr == NULL)
		return SETTINGS_ERR_NOMEM;
	for (size_t i = 0; i < sizeof(worker_patterns) / sizeof(worker_patterns[0]); i++) {
		cJSON *p = cJSON_CreateObject(), *defs;
		const char *key, *value;

		if (p == NULL || !cJSON_AddItemToArray(arr, p)) {
			cJSON_Delete(p);
			return SETTINGS_ERR_NOMEM;
		}
		if (cJSON_AddStringToObject(p, "name", worker_patterns[i][0]) == NULL ||
		    cJSON_AddStringToObject(p, "doc", worker_patterns[i][1]) == NULL)
			return SETTINGS_ERR_NOMEM;
		if (i != 0)
			continue;
		if ((defs = cJSON_AddObjectToObject(p, "defaults")) == NULL)
			return SETTINGS_ERR_NOMEM;
		for (size_t d = 0; (key = sink_default(d, &value)) != NULL; d++)
			if (cJSON_AddStringToObject(defs, key, value) == NULL)
				return SETTINGS_ERR_NOMEM;
	}
	return 0;
}

/* One section per registered source, with its connector.class values. */
static int help_sources(cJSON *sections)
{
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		const struct source_ops *ops = source_registry[i];
		char title[256];
		cJSON *sec, *classes;

		snprintf(title, sizeof(title), "Connector %s (connector.class=%s)", ops->kind,
		         ops->classes[0]);
		sec = help_section(sections, "source", title, ops->config_keys);
		if (sec == NULL || cJSON_AddStringToObject(sec, "kind", ops->kind) == NULL ||
		    (classes = cJSON_AddArrayToObject(sec, "classes")) == NULL)
			return SETTINGS_ERR_NOMEM;
		for (const char *const *c = ops->classes; *c != NULL; c++) {
			cJSON *s = cJSON_CreateString(*c);

			if (s == NULL || !cJSON_AddItemToArray(classes, s)) {
				cJSON_Delete(s);
				return SETTINGS_ERR_NOMEM;
			}
		}
	}
	return 0;
}

int settings_help_doc(struct cJSON **out)
{
	cJSON *doc = cJSON_CreateObject(), *sections, *worker;

	*out = NULL;
	if (doc == NULL || cJSON_AddStringToObject(doc, "format", "skiff-help-config") == NULL ||
	    cJSON_AddNumberToObject(doc, "version", 1) == NULL ||
	    (sections = cJSON_AddArrayToObject(doc, "sections")) == NULL)
		goto nomem;
	worker = help_section(sections, "worker",
	                      "Worker properties (connect-standalone.properties)", worker_keys);
	if (worker == NULL || help_patterns(worker) != 0 ||
	    help_section(sections, "rest", "The REST API (worker properties)", restconf_keys) ==
	        NULL ||
	    help_section(sections, "fleet", "The fleet (worker properties)", fleetconf_keys) ==
	        NULL ||
	    help_section(sections, "connector", "Every connector", connector_keys) == NULL ||
	    help_sources(sections) != 0 || transform_help_doc(doc) != 0)
		goto nomem;
	*out = doc;
	return 0;
nomem:
	cJSON_Delete(doc);
	return SETTINGS_ERR_NOMEM;
}

void settings_destroy(struct settings *s)
{
	for (size_t i = 0; i < s->nconnectors; i++)
		free_connector(&s->connectors[i]);
	if (s->nconnectors < s->capconnectors) /* half-loaded */
		free_connector(&s->connectors[s->nconnectors]);
	free(s->connectors);
	for (size_t k = 0; k < CONNLAYER_KINDS; k++)
		connlayer_destroy(s->layers[k]);
	for (size_t i = 0; i < s->nrefusals; i++) {
		free(s->refusals[i].name);
		free(s->refusals[i].why);
	}
	free(s->refusals);
	config_section_destroy(s->worker);
	providers_destroy(s->providers);
	for (size_t i = 0; i < s->nfiles; i++)
		props_destroy(s->files[i]);
	free(s->files);
	memset(s, 0, sizeof(*s));
}
