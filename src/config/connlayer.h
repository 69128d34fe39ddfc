/* restconns: the connectors the REST API created, changed or deleted, kept
 * so that they survive a restart (Connect's standalone worker forgets them).
 *
 * The configuration files stay the user's: skiff never rewrites them. What
 * POST /connectors, PUT .../config, PATCH .../config and DELETE
 * /connectors/{name} decided is kept apart, in rest-connectors.json beside
 * the offsets file (offset.storage.file.filename; with the offsets topic
 * alone there is no such directory and the changes last until a restart):
 * per connector name, its whole configuration as the API gave it (values
 * as written, ${provider:...} references unresolved), or "deleted". Loading
 * the configuration (settings.c) lays it over the files' connectors: an
 * entry replaces the connector of its name, a deletion removes it.
 *
 * {"format":"skiff-rest-connectors","version":1,"connectors":[
 *   {"name":"extra","config":{"name":"extra","connector.class":..}},
 *   {"name":"old","deleted":true}]}
 * written as offsets are (util/atomicfile.h: temp file, fsync, rename, fsync
 * of the directory), mode 0600: configurations may hold passwords.
 *
 * Leaf module. Error convention: util/err.h. */
#ifndef SKIFF_RESTCONNS_H
#define SKIFF_RESTCONNS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct props;

enum {
	RESTCONNS_OK = 0,
	RESTCONNS_ERR_IO = -1,     /* the file cannot be read or written */
	RESTCONNS_ERR_NOMEM = -2,  /* out of memory */
	RESTCONNS_ERR_FORMAT = -3, /* the file is not this format */
};

/* The file's name, beside the offsets file. */
#define RESTCONNS_FILE "rest-connectors.json"

struct restconns;

/* The store beside offsets_file (NULL: none; the store then stays in
 * memory), read when it exists. Returns 0 and *out (restconns_destroy), or
 * a RESTCONNS_ERR_* code with errbuf "path: why". */
int restconns_load(const char *offsets_file, struct restconns **out, char *errbuf, size_t errlen);

size_t restconns_count(const struct restconns *rc);
const char *restconns_name(const struct restconns *rc, size_t i);

/* Entry i's configuration as a .properties set (named "REST connector
 * NAME", key k at line k + 1), or NULL for a deletion. Owned by rc; the
 * loader resolves its config provider references in it (the JSON kept
 * stays as written). */
struct props *restconns_props(const struct restconns *rc, size_t i);

/* Entry i's configuration (an object of strings), or NULL for a deletion.
 * Owned by rc. */
const cJSON *restconns_config(const struct restconns *rc, size_t i);

/* The index of name's entry, or -1. */
long restconns_find(const struct restconns *rc, const char *name);

/* A copy of rc where name's entry is config (an object of strings, copied),
 * a deletion (config NULL), or gone (drop); name NULL: a plain copy.
 * Returns 0 and *out, or RESTCONNS_ERR_NOMEM. */
int restconns_with(const struct restconns *rc, const char *name, const cJSON *config, bool drop,
                   struct restconns **out);

/* Writes rc to its file (nothing without one). Returns 0 or
 * RESTCONNS_ERR_IO / RESTCONNS_ERR_NOMEM with errbuf. */
int restconns_save(const struct restconns *rc, char *errbuf, size_t errlen);

/* The file, or NULL when the store is not kept. */
const char *restconns_path(const struct restconns *rc);

/* Accepts NULL. */
void restconns_destroy(struct restconns *rc);

#endif
