/* fleetallow: the device keeps the last word (issue 28; docs/fleet.md). A
 * connector configuration that comes through the fleet's config topic may
 * name only what the device's own worker file allows in fleet.allow.*
 * (struct fleet_allow_conf, fleet/fleetconf.h); by default nothing, so a
 * compromised topic cannot make a device ship /etc/shadow or send its
 * records to another cluster.
 *
 * Two passes, both before anything changes:
 *   fleetallow_record     the record as the topic holds it, before any
 *                         ${provider:...} is resolved (a reference resolved
 *                         into an InsertField static value would ship the
 *                         secret it names) and before the connector loads:
 *                         references, worker keys, producer overrides, name;
 *   fleetallow_connector  the connector as settings loaded it: its class,
 *                         what its source says it names (source_ops
 *                         .resources: files, globs, databases, the journal,
 *                         topics), its transforms and predicates.
 * And for the records that carry no configuration: fleetallow_local (a
 * connector of the device's own files) and fleetallow_log_level.
 *
 * Paths (and globs) must be absolute and lexically normalised, with no "."
 * or ".." component (nor a glob component that can match one); a remote
 * path or glob is allowed when an allowed glob of as many components covers
 * each of its components: every name the remote component can match, the
 * allowed one matches (`*` covers `*.log` and `[a-z].log`; `?.log` does not
 * cover `*.log`; a remote path of more components than the allowed glob,
 * or fewer, is not covered). Symlinks are not followed here: a path that is
 * a link to outside passes this check; the file source checks where each
 * file it opens really is (a later step of issue 28).
 *
 * A refusal comes back as a named code and a one-line reason naming the
 * connector, what it named, and the key that would allow it with its value:
 *   connector app: file /etc/shadow is outside fleet.allow.files (/var/log/app/app-*.log)
 * Pure: no I/O, no logging. Main loop (the fleet's reload path). */
#ifndef SKIFF_FLEETALLOW_H
#define SKIFF_FLEETALLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "fleet/fleetconf.h"
#include "util/err.h"

struct cJSON;
struct connector_settings;
struct source_guard;

/* Failures (util/err.h): why a configuration was refused. */
enum {
	FLEETALLOW_OK = 0,
	FLEETALLOW_ERR_RECORD = -1,     /* properties not an object of strings */
	FLEETALLOW_ERR_NAME = -2,       /* name is not the connector the record is for */
	FLEETALLOW_ERR_PROVIDER = -3,   /* a ${provider:...} not in fleet.allow.providers */
	FLEETALLOW_ERR_WORKER_KEY = -4, /* a key of the worker file (bootstrap.servers, ssl.*) */
	FLEETALLOW_ERR_PRODUCER = -5,   /* producer.override.* without fleet.allow.producer */
	FLEETALLOW_ERR_CLUSTER = -6,    /* producer.override.* of another cluster: never */
	FLEETALLOW_ERR_CLASS = -7,      /* not in fleet.allow.connector.classes */
	FLEETALLOW_ERR_UNTOLD = -8,     /* the source cannot say what it names */
	FLEETALLOW_ERR_PATH = -9,       /* not absolute, not normalised, a ".." */
	FLEETALLOW_ERR_FILE = -10,      /* outside fleet.allow.files */
	FLEETALLOW_ERR_DATABASE = -11,  /* outside fleet.allow.databases */
	FLEETALLOW_ERR_JOURNAL = -12,   /* a journal without fleet.allow.journals */
	FLEETALLOW_ERR_TOPIC = -13,     /* outside fleet.allow.topics */
	FLEETALLOW_ERR_TRANSFORM = -14, /* a transform or predicate not in fleet.allow.transforms */
	FLEETALLOW_ERR_LOCAL = -15,     /* a local connector without fleet.allow.replace.local */
	FLEETALLOW_ERR_LOG_LEVEL = -16, /* logger-cluster-* without fleet.allow.log.level */
	FLEETALLOW_ERR_NOMEM = -17,
};

/* A short name for code ("outside fleet.allow.files"); static. */
const char *fleetallow_strerror(int code);

/* Pass 1: properties, the "properties" object of a connector-<name> record
 * as the config topic holds it (values unresolved; null values allowed,
 * as Connect's schema allows them), for the connector name. Refuses a
 * ${provider:[path:]key} reference fleet.allow.providers does not allow (an
 * item "provider" allows any of that provider's; "provider:glob" those whose
 * path it covers, with no '/' in the key), a worker key (the worker's
 * table, the REST keys, the prefixes the worker file passes to librdkafka or
 * other readers, fleet.*), producer.override.* without fleet.allow.producer
 * and, whatever it says, producer.override.X that points at another cluster
 * or loads code (bootstrap.servers, metadata.broker.list, security.*,
 * sasl.*, ssl.*, enable.ssl.*, plugin.library.paths), and a name other than
 * name. Returns 0, or a FLEETALLOW_ERR_* with the reason in errbuf (the
 * first one found, in the record's order). */
int fleetallow_record(const struct fleet_allow_conf *allow, const char *name,
                      const struct cJSON *properties, char *errbuf, size_t errlen);

/* Pass 2: c, the connector as settings loaded it from the record. Its
 * class (or an alias of the same source: FileStreamSource is
 * org.apache.kafka.connect.file.FileStreamSourceConnector) must be in
 * fleet.allow.connector.classes; every resource its source reports
 * (source_ops.resources; a source without it is refused) must be allowed
 * (files and globs: fleet.allow.files; databases: fleet.allow.databases;
 * the journal: fleet.allow.journals; topics: fleet.allow.topics, globs
 * matched as fnmatch(3) does); every transform and predicate class must
 * match a glob of fleet.allow.transforms (a class without $Key/$Value
 * covers both variants). Returns 0, or the code of the first refusal with
 * its reason in errbuf, followed by "; also needs fleet.allow.X, ..." when
 * more keys would be needed. */
int fleetallow_connector(const struct fleet_allow_conf *allow, const struct connector_settings *c,
                         char *errbuf, size_t errlen);

/* A record about the connector name that the device's own files define
 * (in_files: the caller knows), whatever it asks (a new configuration, a
 * removal, a target state): 0 when in_files is false or
 * fleet.allow.replace.local is true, else FLEETALLOW_ERR_LOCAL with its
 * reason in errbuf. */
int fleetallow_local(const struct fleet_allow_conf *allow, const char *name, bool in_files,
                     char *errbuf, size_t errlen);

/* A logger-cluster-<ns> record (Connect's cluster-wide log level, KIP-976):
 * 0 with fleet.allow.log.level, else FLEETALLOW_ERR_LOG_LEVEL with its
 * reason in errbuf. */
int fleetallow_log_level(const struct fleet_allow_conf *allow, const char *ns, char *errbuf,
                         size_t errlen);

/* Whether path (a literal path, or a glob(3) pattern when glob is true) is
 * allowed by globs (fnmatch(3) patterns with FNM_PATHNAME, absolute ones;
 * others allow nothing). Returns 0 (covered), FLEETALLOW_ERR_PATH with
 * *why ("is not absolute", "has a '..' component", ...: static) when path
 * is not absolute and normalised, or FLEETALLOW_ERR_FILE when outside. For
 * pass 2, and for the file source's check of where an opened file really
 * is. */
int fleetallow_path(const struct config_list *globs, const char *path, bool glob, const char **why);

/* The run-time guard of a connector the fleet made (struct source_guard,
 * core/source.h), for what no check of its configuration can see, made
 * from allow (borrowed: it must outlive the guard):
 *   allow_path   where a file the source opens really is (links and ".."
 *                resolved) must be covered by fleet.allow.files, as
 *                fleetallow_path covers a literal path; strict: a rotated
 *                copy (app.log.1, app.log.2.gz, one in rotated.dirs) is a
 *                file of its own name, allowed only by a glob that matches
 *                it (/var/log/app/app.log* rather than /var/log/app/app.log).
 *                Reason: "outside fleet.allow.files (LIST)";
 *   allow_topic  a record's final topic (a RegexRouter's, a
 *                TimestampRouter's) must match fleet.allow.topics (fnmatch,
 *                as pass 2 matches a configured topic). Reason: "outside
 *                fleet.allow.topics (LIST)".
 * main.c makes it once from the start's worker section and gives it to
 * every connector of the fleet's layer (settings_guard, CONNLAYER_FLEET),
 * at the first load and at each reload after. */
void fleetallow_guard(const struct fleet_allow_conf *allow, struct source_guard *out);

#endif
