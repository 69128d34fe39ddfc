/* plugins: Connect's /connector-plugins over what skiff implements: its
 * sources as source connectors, its transforms and predicates, its
 * converters; each connector's keys as Connect's ConfigKeyInfo, and
 * PUT .../config/validate's ConfigInfos, from the config tables (config.h)
 * the loader itself checks with, so that what validate says is what a
 * POST /connectors would get.
 *
 * Pure functions of the tables (and, for validate, the worker section);
 * main loop. Error convention: util/err.h. */
#ifndef SKIFF_PLUGINS_H
#define SKIFF_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct config_section;

enum {
	PLUGINS_OK = 0,
	PLUGINS_ERR_UNKNOWN = -1, /* no such plugin (errbuf says so where there is one) */
	PLUGINS_ERR_NOMEM = -2,
	PLUGINS_ERR_MISMATCH = -3, /* validate: the body's connector.class is another's */
};

/* [{"class","type","version"}], sources first, then (all) transforms,
 * predicates and converters, each kind sorted by class. NULL: out of
 * memory. Caller frees (cJSON_Delete). */
cJSON *plugins_list(bool connectors_only);

/* A connector plugin's ConfigKeyInfo array (its own keys, then those of
 * every connector): 0 and *out (caller frees), PLUGINS_ERR_UNKNOWN, or
 * PLUGINS_ERR_NOMEM. */
int plugins_config(const char *plugin, cJSON **out);

/* Connect's ConfigInfos for config (an object of strings) as connector
 * plugin's, each key's errors as the loader finds them with worker's
 * converters: 0 and *out (caller frees), PLUGINS_ERR_UNKNOWN (no such
 * connector) or PLUGINS_ERR_MISMATCH (config names another) with errbuf,
 * PLUGINS_ERR_NOMEM. */
int plugins_validate(const struct config_section *worker, const char *plugin, const cJSON *config,
                     cJSON **out, char *errbuf, size_t errlen);

#endif
