/* fleetconf: the fleet's worker keys (fleetconf.h). */
#include "fleet/fleetconf.h"

#include "config/config.h"
#include "util/num.h"

#include <stdio.h>
#include <string.h>

#define INT_MAX32 2147483647

/* Connect's built-in transforms and predicates that skiff implements
 * (transform/txregistry.c; test_fleetconf holds the two lists together). */
#define TX "org.apache.kafka.connect.transforms."
#define PRED TX "predicates."
/* ", " between items and the longest names first: the man page breaks
 * lines there and its last line keeps a closing parenthesis. */
#define DEFAULT_TRANSFORMS                                                                         \
	PRED "TopicNameMatches"                                                                    \
	     ", " PRED "HasHeaderKey"                                                              \
	     ", " PRED "RecordIsTombstone"                                                         \
	     ", " TX "InsertField"                                                                 \
	     ", " TX "InsertHeader"                                                                \
	     ", " TX "ReplaceField"                                                                \
	     ", " TX "MaskField"                                                                   \
	     ", " TX "ValueToKey"                                                                  \
	     ", " TX "ExtractField"                                                                \
	     ", " TX "HoistField"                                                                  \
	     ", " TX "Filter"                                                                      \
	     ", " TX "RegexRouter"                                                                 \
	     ", " TX "TimestampRouter"                                                             \
	     ", " TX "DropHeaders"                                                                 \
	     ", " TX "HeaderFrom"                                                                  \
	     ", " TX "SetSchemaMetadata"                                                           \
	     ", " TX "Cast"                                                                        \
	     ", " TX "Flatten"                                                                     \
	     ", " TX "TimestampConverter"

#define ALLOW(k, t, def, m, doc)                                                                   \
	{                                                                                          \
		"fleet.allow." k, t, def, 0, 0, NULL, 0, doc,                                      \
		    CFG_FIELD(struct fleet_conf, allow.m)                                          \
	}

const struct config_key fleetconf_keys[] = {
    {"fleet.enabled", CFG_BOOL, "false", 0, 0, NULL, 0,
     "skiff's own: steer this device through Kafka topics (docs/fleet.md): read its "
     "connectors from config.storage.topic and its groups' topics, write its statuses to "
     "status.storage.topic. Off, those Connect keys are accepted and ignored as before, so "
     "a Connect distributed worker file never makes skiff read a Connect cluster's "
     "configurations nor write over its statuses.",
     CFG_FIELD(struct fleet_conf, enabled)},
    {"config.storage.topic", CFG_STRING, "skiff.config.{device}", 0, 0, NULL, 0,
     "With fleet.enabled: the topic this device reads its connectors from, in Connect's "
     "records (one partition, compacted; created when missing). {device} is this "
     "device's name (device.id); without it every device reading the topic runs the same "
     "connectors (a warning). Without fleet.enabled: ignored, with a notice.",
     CFG_FIELD(struct fleet_conf, config_topic)},
    {"status.storage.topic", CFG_STRING, "skiff.status.{device}", 0, 0, NULL, 0,
     "With fleet.enabled: the topic this device writes its connectors' statuses, its "
     "heartbeat and the outcome of each configuration to (compacted; created when "
     "missing). It must hold {device}: Connect's status keys name no device. May name "
     "the same topic as config.storage.topic (the device can then rewrite its own "
     "configuration). Without fleet.enabled: ignored, with a notice.",
     CFG_FIELD(struct fleet_conf, status_topic)},
    {"config.storage.replication.factor", CFG_INT, "3", -1, INT_MAX32, NULL, 0,
     "With fleet.enabled: replication factor of a created config topic (and group "
     "topics); -1: the broker's default. Connect's default is 3 too.",
     CFG_FIELD(struct fleet_conf, config_replication_factor)},
    {"status.storage.replication.factor", CFG_INT, "3", -1, INT_MAX32, NULL, 0,
     "With fleet.enabled: replication factor of a created status topic; -1: the broker's "
     "default. Connect's default is 3 too.",
     CFG_FIELD(struct fleet_conf, status_replication_factor)},
    {"status.storage.partitions", CFG_INT, "1", -1, INT_MAX32, NULL, 0,
     "With fleet.enabled: partitions of a created status topic; -1: the broker's "
     "default. 1, not Connect's 5: Connect's status topic is shared by a cluster's "
     "workers, a skiff status topic is one device's, a few records an hour, and 10,000 "
     "devices at 5 would be 50,000 partitions for nothing.",
     CFG_FIELD(struct fleet_conf, status_partitions)},
    {"fleet.groups", CFG_LIST, NULL, 0, 0, NULL, 0,
     "The groups this device belongs to (letters, digits and '-'), by its own word: it "
     "reads each group's topic (fleet.group.topic). Its own config topic wins over "
     "them, and a later group over an earlier one, per connector. At most 64.",
     CFG_FIELD(struct fleet_conf, groups)},
    {"fleet.group.topic", CFG_STRING, "skiff.config.group.{group}", 0, 0, NULL, 0,
     "The config topic of a group of fleet.groups: {group} is its name (required).",
     CFG_FIELD(struct fleet_conf, group_topic)},
    {"fleet.heartbeat.interval.ms", CFG_INT, "300000", 1000, INT_MAX32, NULL, 0,
     "How often the device writes its heartbeat (health, version, loss counters, backlog) "
     "to its status topic: 12 records an hour at the default. `skiff fleet status` calls "
     "a device stale after two intervals without one.",
     CFG_FIELD(struct fleet_conf, heartbeat_interval_ms)},
    {"fleet.fetch.wait.max.ms", CFG_INT, "55000", 0, INT_MAX32, NULL, 0,
     "The config topic's long poll: how long the broker holds a fetch that has nothing "
     "new (a record ends the wait at once). librdkafka's 500 costs an idle device 1.4 "
     "MB an hour, 55000 about 13 KB. Must stay under kafka.socket.timeout.ms (60000) "
     "minus 1000.",
     CFG_FIELD(struct fleet_conf, fetch_wait_max_ms)},
    ALLOW("connector.classes", CFG_LIST, NULL, connector_classes,
          "Connector classes a remote configuration may name (Connect's aliases, e.g. "
          "FileStreamSource, count as their class). Empty: none."),
    ALLOW("files", CFG_LIST, NULL, files,
          "Globs of the paths a remote file source may read (file, its globs, "
          "rotated.dirs); a remote glob only within one of them. Empty: none."),
    ALLOW("databases", CFG_LIST, NULL, databases,
          "Globs of the SQLite databases a remote configuration may name. Empty: none."),
    ALLOW("journals", CFG_BOOL, "false", journals,
          "Whether a remote configuration may make a journald source."),
    ALLOW("topics", CFG_LIST, NULL, topics,
          "Globs of the topics a remote connector's records may go to, after its "
          "transforms (checked per record for computed topics). Empty: none."),
    ALLOW("transforms", CFG_LIST, DEFAULT_TRANSFORMS, transforms,
          "Transform and predicate classes a remote configuration may name; by default "
          "Connect's built-in ones that skiff implements."),
    ALLOW("producer", CFG_BOOL, "false", producer,
          "Whether a remote configuration may set producer.override.* (never the keys that "
          "name another cluster or its security: bootstrap.servers, security.*, sasl.*, "
          "ssl.*)."),
    ALLOW("providers", CFG_LIST, NULL, providers,
          "The ${provider:path} references a remote value may hold "
          "(e.g. file:/etc/skiff/fleet-secrets.properties); any other ${ is refused before "
          "it is resolved. Empty: none."),
    ALLOW("replace.local", CFG_BOOL, "false", replace_local,
          "Whether a remote configuration or target state may replace or steer a connector "
          "the local files define."),
    ALLOW("log.level", CFG_BOOL, "false", log_level,
          "Whether Connect's logger-cluster-* records may change the log level."),
    CFG_END,
};

const char *fleetconf_strerror(int err)
{
	switch (err) {
	case FLEETCONF_OK:
		return "ok";
	case FLEETCONF_ERR:
		return "the fleet's configuration is wrong";
	case FLEETCONF_ERR_NAME:
		return "not a name a topic can hold ([A-Za-z0-9-], at most 200 characters)";
	case FLEETCONF_ERR_TOOLONG:
		return "the topic name is longer than Kafka's 249 characters";
	case FLEETCONF_ERR_OVERFLOW:
		return "the topic name does not fit the buffer";
	default:
		return "unknown fleetconf error";
	}
}

int fleetconf_name_check(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > FLEETCONF_NAME_MAX)
		return FLEETCONF_ERR_NAME;
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != n)
		return FLEETCONF_ERR_NAME;
	return FLEETCONF_OK;
}

/* The placeholder tmpl holds ({device} or {group}), or NULL. */
static const char *placeholder(const char *tmpl, const char **at)
{
	static const char *const names[] = {"{device}", "{group}"};

	for (size_t i = 0; i < 2; i++)
		if ((*at = strstr(tmpl, names[i])) != NULL)
			return names[i];
	return NULL;
}

int fleetconf_topic(const char *tmpl, const char *name, char *buf, size_t len)
{
	size_t used = 0, nlen = strlen(name);
	const char *p = tmpl, *at, *ph;

	if (len == 0)
		return FLEETCONF_ERR_OVERFLOW;
	while ((ph = placeholder(p, &at)) != NULL) {
		size_t lit = (size_t)(at - p);

		if (used + lit + nlen >= len)
			return FLEETCONF_ERR_OVERFLOW;
		memcpy(buf + used, p, lit);
		memcpy(buf + used + lit, name, nlen);
		used += lit + nlen;
		p = at + strlen(ph);
	}
	if (used + strlen(p) >= len)
		return FLEETCONF_ERR_OVERFLOW;
	memcpy(buf + used, p, strlen(p) + 1);
	used += strlen(p);
	if (used > FLEETCONF_TOPIC_MAX)
		return FLEETCONF_ERR_TOOLONG;
	return FLEETCONF_OK;
}

/* Kafka's topic characters, with the placeholders. */
static int check_template(const struct config_section *w, const char *key, const char *tmpl,
                          const char *need, const char *refuse, char *errbuf, size_t errlen)
{
	const char *p = tmpl, *at, *ph;

	if (need != NULL && strstr(tmpl, need) == NULL) {
		snprintf(errbuf, errlen,
		         "%s: %s=%s must hold %s: %s, or every device writes the same keys "
		         "into one topic",
		         config_where(w, key), key, tmpl, need,
		         strcmp(need, "{group}") == 0 ? "each group needs a topic of its own"
		                                      : "Connect's status keys name no device");
		return FLEETCONF_ERR;
	}
	if (strstr(tmpl, refuse) != NULL) {
		snprintf(errbuf, errlen, "%s: %s=%s: %s has no meaning here", config_where(w, key),
		         key, tmpl, refuse);
		return FLEETCONF_ERR;
	}
	while (*p != '\0') {
		size_t ok = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                      "0123456789._-");

		p += ok;
		if (*p == '\0')
			break;
		if ((ph = placeholder(p, &at)) != NULL && at == p) {
			p += strlen(ph);
			continue;
		}
		snprintf(errbuf, errlen,
		         "%s: %s=%s: '%c' cannot be in a topic name (letters, digits, '.', '_', "
		         "'-', and %s)",
		         config_where(w, key), key, tmpl, *p,
		         refuse[1] == 'd' ? "{group}" : "{device}");
		return FLEETCONF_ERR;
	}
	if (*tmpl == '\0') {
		snprintf(errbuf, errlen, "%s: %s is empty", config_where(w, key), key);
		return FLEETCONF_ERR;
	}
	return FLEETCONF_OK;
}

/* The name check, said for key. */
static int check_name(const struct config_section *w, const char *key, const char *what,
                      const char *name, char *errbuf, size_t errlen)
{
	if (fleetconf_name_check(name) == FLEETCONF_OK)
		return FLEETCONF_OK;
	snprintf(errbuf, errlen,
	         "%s: %s=%.210s%s: with fleet.enabled %s names a topic, so it may hold only "
	         "letters, digits and '-' (not '.' nor '_': Kafka takes topics that differ only "
	         "by those as one), at most %d characters",
	         config_where(w, key), key, name, strlen(name) > 210 ? "..." : "", what,
	         FLEETCONF_NAME_MAX);
	return FLEETCONF_ERR_NAME;
}

/* One template expanded with name fits Kafka's 249. */
static int check_length(const struct config_section *w, const char *key, const char *tmpl,
                        const char *name, const char *whose, char *errbuf, size_t errlen)
{
	char topic[FLEETCONF_TOPIC_MAX + 2];

	if (fleetconf_topic(tmpl, name, topic, sizeof(topic)) == FLEETCONF_OK)
		return FLEETCONF_OK;
	snprintf(errbuf, errlen,
	         "%s: %s=%s: with %s the topic name is longer than Kafka's %d characters",
	         config_where(w, key), key, tmpl, whose, FLEETCONF_TOPIC_MAX);
	return FLEETCONF_ERR;
}

/* The templates expanded: with device.id, or a machine id's 32 hex digits;
 * the group topic with each group. */
static int check_lengths(const struct config_section *w, const struct fleet_conf *c,
                         const char *device_id, char *errbuf, size_t errlen)
{
	const char *name = device_id != NULL ? device_id : "0123456789abcdef0123456789abcdef";
	const char *whose = device_id != NULL ? "device.id" : "a machine id (32 characters)";

	if (check_length(w, "config.storage.topic", c->config_topic, name, whose, errbuf, errlen) ||
	    check_length(w, "status.storage.topic", c->status_topic, name, whose, errbuf, errlen))
		return FLEETCONF_ERR;
	for (size_t i = 0; i < c->groups.n; i++)
		if (check_length(w, "fleet.group.topic", c->group_topic, c->groups.items[i],
		                 "a group of fleet.groups", errbuf, errlen) != 0)
			return FLEETCONF_ERR;
	return FLEETCONF_OK;
}

/* The status topic and the config topic are compacted, the config topic
 * has one partition: Connect's rules for its own. */
static int check_topic_configs(const struct config_section *w, char *errbuf, size_t errlen)
{
	static const char *const prefixes[] = {"config.storage.", "status.storage."};

	for (size_t k = 0; k < 2; k++) {
		size_t cursor = 0;
		const char *key, *value, *where;

		while (fleetconf_topic_config(w, (enum fleetconf_topic)k, &cursor, &key, &value,
		                              &where)) {
			if (strcmp(key, "cleanup.policy") == 0 && strcmp(value, "compact") != 0) {
				snprintf(
				    errbuf, errlen,
				    "%s: %s%s=%s: the topic must be compacted (its last record "
				    "per key is its state), never deleted",
				    where, prefixes[k], key, value);
				return FLEETCONF_ERR;
			}
			if (strcmp(key, "partitions") == 0 ||
			    strcmp(key, "replication.factor") == 0 || strcmp(key, "topic") == 0) {
				snprintf(errbuf, errlen, "%s: %s%s: not a topic config%s", where,
				         prefixes[k], key,
				         k == 0 && strcmp(key, "partitions") == 0
				             ? " (the config topic has one partition: its order is "
				               "its meaning)"
				             : "");
				return FLEETCONF_ERR;
			}
		}
	}
	return FLEETCONF_OK;
}

/* socket.timeout.ms of the fleet's clients: kafka.socket.timeout.ms, else
 * librdkafka's 60000. */
static int64_t socket_timeout(const struct config_section *w, const char **where)
{
	int64_t v;

	for (size_t i = 0; i < config_passthrough_count(w); i++)
		if (strcmp(config_passthrough_key(w, i), "kafka.socket.timeout.ms") == 0 &&
		    num_parse_i64(config_passthrough_value(w, i), 0, INT64_MAX, &v) == 0) {
			*where = config_passthrough_where(w, i);
			return v;
		}
	*where = NULL;
	return 60000;
}

int fleetconf_check(const struct config_section *w, const char *device_id, char *errbuf,
                    size_t errlen)
{
	const struct fleet_conf *c = fleetconf_conf(w);
	const struct {
		const char *key;
		int64_t n;
	} sizes[] = {{"config.storage.replication.factor", c->config_replication_factor},
	             {"status.storage.replication.factor", c->status_replication_factor},
	             {"status.storage.partitions", c->status_partitions}};
	const char *swhere;
	int64_t stmo;
	int rc;

	if (!c->enabled)
		return FLEETCONF_OK;
	if ((rc = check_template(w, "status.storage.topic", c->status_topic, "{device}", "{group}",
	                         errbuf, errlen)) != 0 ||
	    (rc = check_template(w, "config.storage.topic", c->config_topic, NULL, "{group}",
	                         errbuf, errlen)) != 0 ||
	    (rc = check_template(w, "fleet.group.topic", c->group_topic, "{group}", "{device}",
	                         errbuf, errlen)) != 0)
		return rc;
	if (device_id != NULL &&
	    check_name(w, "device.id", "the device's name", device_id, errbuf, errlen) != 0)
		return FLEETCONF_ERR;
	if (c->groups.n > FLEETCONF_GROUPS_MAX) {
		snprintf(errbuf, errlen, "%s: fleet.groups: %zu groups, at most %d",
		         config_where(w, "fleet.groups"), c->groups.n, FLEETCONF_GROUPS_MAX);
		return FLEETCONF_ERR;
	}
	for (size_t i = 0; i < c->groups.n; i++) {
		if (check_name(w, "fleet.groups", "a group's name", c->groups.items[i], errbuf,
		               errlen) != 0)
			return FLEETCONF_ERR;
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->groups.items[i], c->groups.items[j]) == 0) {
				/* Which of the two would win? Say it once. */
				snprintf(errbuf, errlen, "%s: fleet.groups: %s is listed twice",
				         config_where(w, "fleet.groups"), c->groups.items[i]);
				return FLEETCONF_ERR;
			}
	}
	if (check_lengths(w, c, device_id, errbuf, errlen) != 0)
		return FLEETCONF_ERR;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i].n == 0) {
			snprintf(errbuf, errlen, "%s: %s=0: give -1 (the broker's default) or more",
			         config_where(w, sizes[i].key), sizes[i].key);
			return FLEETCONF_ERR;
		}
	stmo = socket_timeout(w, &swhere);
	if (c->fetch_wait_max_ms >= stmo - 1000) {
		snprintf(errbuf, errlen,
		         "%s: fleet.fetch.wait.max.ms=%lld must be under socket.timeout.ms - 1000 "
		         "(%lld%s%s): a long poll the socket times out drops the connection and "
		         "the requests waiting behind it",
		         config_where(w, "fleet.fetch.wait.max.ms"),
		         (long long)c->fetch_wait_max_ms, (long long)(stmo - 1000),
		         swhere ? ", kafka.socket.timeout.ms at " : "", swhere ? swhere : "");
		return FLEETCONF_ERR;
	}
	return check_topic_configs(w, errbuf, errlen);
}

/* k is one of the table's rows. */
static bool is_row(const char *k)
{
	for (const struct config_key *t = fleetconf_keys; t->name != NULL; t++)
		if (strcmp(t->name, k) == 0)
			return true;
	return false;
}

static bool is_topic_config(const char *k)
{
	return strncmp(k, "config.storage.", 15) == 0 || strncmp(k, "status.storage.", 15) == 0;
}

/* Where pass-through key k was set. */
static const char *pass_where(const struct config_section *w, const char *k)
{
	for (size_t i = 0; i < config_passthrough_count(w); i++)
		if (strcmp(config_passthrough_key(w, i), k) == 0)
			return config_passthrough_where(w, i);
	return "?";
}

bool fleetconf_next_notice(const struct config_section *w, size_t *cursor, bool *warn, char *buf,
                           size_t len)
{
	const struct fleet_conf *c = fleetconf_conf(w);
	const char *k, *shown;
	size_t at;

	*warn = false;
	/* The warning first (cursor 0), then config_next_set's keys
	 * (its cursor + 1). */
	if (*cursor == 0) {
		*cursor = 1;
		if (c->enabled && strstr(c->config_topic, "{device}") == NULL) {
			*warn = true;
			snprintf(buf, len,
			         "%s: config.storage.topic=%s holds no {device}: every device "
			         "reading it runs the same connectors",
			         config_where(w, "config.storage.topic"), c->config_topic);
			return true;
		}
	}
	if (c->enabled)
		return false;
	at = *cursor - 1;
	while (config_next_set(w, &at, &k, &shown)) {
		*cursor = at + 1;
		if (is_topic_config(k)) {
			/* Word for word the notice of an inert key (config.c): a
			 * Connect distributed worker file reads as it did before
			 * fleet.enabled existed. */
			snprintf(
			    buf, len,
			    "%s: %s is a Kafka Connect setting with no meaning for skiff; ignored",
			    is_row(k) ? config_where(w, k) : pass_where(w, k), k);
			return true;
		}
		if (is_row(k) && strcmp(k, "fleet.enabled") != 0) {
			snprintf(buf, len, "%s: %s: ignored without fleet.enabled=true",
			         config_where(w, k), k);
			return true;
		}
	}
	return false;
}

bool fleetconf_topic_config(const struct config_section *w, enum fleetconf_topic which,
                            size_t *cursor, const char **key, const char **value,
                            const char **where)
{
	const char *prefix = which == FLEETCONF_CONFIG ? "config.storage." : "status.storage.";

	while (*cursor < config_passthrough_count(w)) {
		size_t i = (*cursor)++;
		const char *k = config_passthrough_key(w, i);

		if (strncmp(k, prefix, 15) != 0)
			continue;
		*key = k + 15;
		*value = config_passthrough_value(w, i);
		*where = config_passthrough_where(w, i);
		return true;
	}
	return false;
}
