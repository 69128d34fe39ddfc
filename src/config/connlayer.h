/* connlayer: connectors laid over the configuration files' ones, each layer
 * kept in a file of its own so that it survives a restart (Connect's
 * standalone worker forgets what its REST API made).
 *
 * The configuration files stay the user's: skiff never rewrites them. What
 * the control clients decided is kept apart, beside the offsets file
 * (offset.storage.file.filename; with the offsets topic alone there is no
 * such directory and the changes last until a restart), one file a layer:
 *
 *   CONNLAYER_FLEET  fleet-connectors.json  the fleet's (fleet/, through
 *                                           its configuration topics)
 *   CONNLAYER_REST   rest-connectors.json   POST /connectors, PUT and
 *                                           PATCH .../config, DELETE
 *
 * Loading the configuration (settings.c) lays them over the files'
 * connectors in that order, files < fleet < REST: the person at the device
 * has the last word. An entry replaces the connector of its name, a
 * deletion removes it; a layer whose policy does not allow replacing
 * (connlayer_replaces: the fleet's, unless fleet.allow.replace.local) has
 * an entry naming a connector of a layer below it refused. Per connector
 * name, its whole configuration as the client gave it (values as written,
 * ${provider:...} references unresolved), or "deleted":
 *
 * {"format":"skiff-rest-connectors","version":1,"connectors":[
 *   {"name":"extra","config":{"name":"extra","connector.class":..}},
 *   {"name":"old","deleted":true}]}
 *
 * ("skiff-fleet-connectors" for the fleet's) written as offsets are
 * (util/atomicfile.h: temp file, fsync, rename, fsync of the directory),
 * mode 0600: configurations may hold passwords.
 *
 * Leaf module. Error convention: util/err.h. */
#ifndef SKIFF_CONNLAYER_H
#define SKIFF_CONNLAYER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct props;

enum {
	CONNLAYER_OK = 0,
	CONNLAYER_ERR_IO = -1,     /* the file cannot be read or written */
	CONNLAYER_ERR_NOMEM = -2,  /* out of memory */
	CONNLAYER_ERR_FORMAT = -3, /* the file is not this format */
};

/* Where a connector's configuration comes from, in the order the layers
 * are laid: a later one wins over an earlier one. CONNLAYER_FILES is the
 * configuration files themselves (no struct connlayer). */
enum connlayer_kind { CONNLAYER_FILES, CONNLAYER_FLEET, CONNLAYER_REST, CONNLAYER_KINDS };

/* The files' names, beside the offsets file. */
#define CONNLAYER_FLEET_FILE "fleet-connectors.json"
#define CONNLAYER_REST_FILE "rest-connectors.json"

struct connlayer;

/* Layer kind's store beside offsets_file (NULL: none; the store then stays
 * in memory), read when it exists; kind is CONNLAYER_FLEET or
 * CONNLAYER_REST. Its policy starts as the kind's (connlayer_replaces).
 * Returns 0 and *out (connlayer_destroy), or a CONNLAYER_ERR_* code with
 * errbuf "path: why". */
int connlayer_load(enum connlayer_kind kind, const char *offsets_file, struct connlayer **out,
                   char *errbuf, size_t errlen);

/* Who gives a kind's connectors, as a log line names them ("the REST API",
 * "the fleet", "the configuration files"). */
const char *connlayer_who(enum connlayer_kind kind);

enum connlayer_kind connlayer_kind(const struct connlayer *l);

/* Whether an entry may replace (or delete) a connector a layer below gives:
 * always for the REST API's, for the fleet's only when set (by default
 * not; settings.c sets it from fleet.allow.replace.local at each load).
 * Kept by connlayer_with's copies. */
bool connlayer_replaces(const struct connlayer *l);
void connlayer_set_replaces(struct connlayer *l, bool replaces);

size_t connlayer_count(const struct connlayer *l);
const char *connlayer_name(const struct connlayer *l, size_t i);

/* Entry i's configuration as a .properties set (named "REST connector
 * NAME" or "fleet connector NAME", key k at line k + 1), or NULL for a
 * deletion. Owned by l; the loader resolves its config provider references
 * in it (the JSON kept stays as written). */
struct props *connlayer_props(const struct connlayer *l, size_t i);

/* Entry i's configuration (an object of strings), or NULL for a deletion.
 * Owned by l. */
const cJSON *connlayer_config(const struct connlayer *l, size_t i);

/* The index of name's entry, or -1. */
long connlayer_find(const struct connlayer *l, const char *name);

/* A copy of l (its kind, file and policy) where name's entry is config (an
 * object of strings, copied), a deletion (config NULL), or gone (drop);
 * name NULL: a plain copy. Returns 0 and *out, or CONNLAYER_ERR_NOMEM. */
int connlayer_with(const struct connlayer *l, const char *name, const cJSON *config, bool drop,
                   struct connlayer **out);

/* Writes l to its file (nothing without one). Returns 0 or
 * CONNLAYER_ERR_IO / CONNLAYER_ERR_NOMEM with errbuf. */
int connlayer_save(const struct connlayer *l, char *errbuf, size_t errlen);

/* The file, or NULL when the store is not kept. */
const char *connlayer_path(const struct connlayer *l);

/* Accepts NULL. */
void connlayer_destroy(struct connlayer *l);

#endif
