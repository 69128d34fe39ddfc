/* plugins: Connect's /connector-plugins (plugins.h). */
#include "control/plugins.h"

#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "core/source.h"
#include "transform/txops.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const converters[] = {
    "org.apache.kafka.connect.converters.ByteArrayConverter",
    "org.apache.kafka.connect.json.JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter",
    NULL,
};

/* A source's Java class: the first of its names with a package. */
static const char *class_of(const struct source_ops *o)
{
	for (const char *const *c = o->classes; *c != NULL; c++)
		if (strchr(*c, '.') != NULL)
			return *c;
	return o->classes[0];
}

static bool add_plugin(cJSON *arr, const char *cls, const char *type)
{
	cJSON *p = cJSON_CreateObject();

	if (p == NULL || cJSON_AddStringToObject(p, "class", cls) == NULL ||
	    cJSON_AddStringToObject(p, "type", type) == NULL ||
	    cJSON_AddStringToObject(p, "version", SKIFF_VERSION) == NULL ||
	    !cJSON_AddItemToArray(arr, p)) {
		cJSON_Delete(p);
		return false;
	}
	return true;
}

static int by_class(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The transforms (or predicates) as Connect names them, $Key and $Value
 * for those that have both, sorted, into arr. */
static bool add_transforms(cJSON *arr, const struct tx_ops *const *list, const char *type)
{
	char *names[128];
	size_t n = 0;
	bool ok = true;

	for (size_t i = 0; list[i] != NULL && n + 2 <= 128; i++) {
		for (int v = 0; v < (list[i]->variants ? 2 : 1); v++) {
			size_t len = strlen(list[i]->pkg) + strlen(list[i]->name) + 8;

			if ((names[n] = malloc(len)) == NULL) {
				ok = false;
				break;
			}
			snprintf(names[n++], len, "%s.%s%s", list[i]->pkg, list[i]->name,
			         !list[i]->variants ? ""
			         : v == 0           ? "$Key"
			                            : "$Value");
		}
	}
	qsort(names, n, sizeof(names[0]), by_class);
	for (size_t i = 0; i < n; i++) {
		ok = ok && add_plugin(arr, names[i], type);
		free(names[i]);
	}
	return ok;
}

cJSON *plugins_list(bool connectors_only)
{
	cJSON *arr = cJSON_CreateArray();
	const char *sources[16];
	size_t n = 0;
	bool ok = arr != NULL;

	for (size_t i = 0; source_registry[i] != NULL && n < 16; i++)
		sources[n++] = class_of(source_registry[i]);
	qsort(sources, n, sizeof(sources[0]), by_class);
	for (size_t i = 0; i < n && ok; i++)
		ok = add_plugin(arr, sources[i], "source");
	if (ok && !connectors_only) {
		ok = add_transforms(arr, txregistry_transforms, "transformation") &&
		     add_transforms(arr, txregistry_predicates, "predicate");
		for (size_t i = 0; converters[i] != NULL && ok; i++)
			ok = add_plugin(arr, converters[i], "converter");
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* ---- ConfigKeyInfo -------------------------------------------------------- */

static const char *type_of(const struct config_key *k)
{
	switch (k->type) {
	case CFG_INT:
		return k->min >= INT32_MIN && k->max <= INT32_MAX ? "INT" : "LONG";
	case CFG_BOOL:
		return "BOOLEAN";
	case CFG_LIST:
		return "LIST";
	case CFG_CLASS:
		return "CLASS";
	case CFG_STRING:
	case CFG_ENUM:
		break;
	}
	return (k->flags & CFG_SECRET) || config_key_is_secret(k->name) ? "PASSWORD" : "STRING";
}

/* Connect's groups of its ConnectorConfig keys. */
static const char *group_of(const char *name)
{
	if (strncmp(name, "errors.", 7) == 0)
		return "Error Handling";
	if (strcmp(name, "exactly.once.support") == 0 || strncmp(name, "transaction.", 12) == 0)
		return "Exactly Once Support";
	return "Common";
}

/* One key's definition; common: one of every connector's (grouped). */
static cJSON *key_info(const struct config_key *k, bool common, int order)
{
	cJSON *j = cJSON_CreateObject(), *deps = cJSON_CreateArray();
	bool required = (k->flags & CFG_REQUIRED) != 0;

	if (j == NULL || deps == NULL || cJSON_AddStringToObject(j, "name", k->name) == NULL ||
	    cJSON_AddStringToObject(j, "type", type_of(k)) == NULL ||
	    cJSON_AddBoolToObject(j, "required", required) == NULL ||
	    (k->def != NULL ? cJSON_AddStringToObject(j, "default_value", k->def)
	                    : cJSON_AddNullToObject(j, "default_value")) == NULL ||
	    cJSON_AddStringToObject(j, "importance", required ? "HIGH" : "MEDIUM") == NULL ||
	    cJSON_AddStringToObject(j, "documentation", k->doc) == NULL ||
	    (common ? cJSON_AddStringToObject(j, "group", group_of(k->name))
	            : cJSON_AddNullToObject(j, "group")) == NULL ||
	    cJSON_AddStringToObject(j, "width", "NONE") == NULL ||
	    cJSON_AddStringToObject(j, "display_name", k->name) == NULL ||
	    !cJSON_AddItemToObject(j, "dependents", deps) ||
	    cJSON_AddNumberToObject(j, "order", common ? order : -1) == NULL) {
		cJSON_Delete(j);
		if (j == NULL)
			cJSON_Delete(deps);
		return NULL;
	}
	return j;
}

/* The keys of table (inert ones left out: they mean nothing here), each
 * through fn into arr. */
static bool each_key(const struct config_key *table, bool common, cJSON *arr, int *order,
                     bool (*fn)(cJSON *arr, const struct config_key *k, cJSON *info, void *arg),
                     void *arg)
{
	for (const struct config_key *k = table; k->name != NULL; k++) {
		if (k->flags & CFG_INERT)
			continue;
		if (!fn(arr, k, key_info(k, common, ++*order), arg))
			return false;
	}
	return true;
}

static bool append(cJSON *arr, const struct config_key *k, cJSON *info, void *arg)
{
	if (info == NULL || !cJSON_AddItemToArray(arr, info)) {
		cJSON_Delete(info);
		return false;
	}
	return true;
}

int plugins_config(const char *plugin, cJSON **out)
{
	const struct source_ops *o = source_find(plugin);
	cJSON *arr;
	int order = 0;

	*out = NULL;
	if (o == NULL)
		return PLUGINS_ERR_UNKNOWN;
	arr = cJSON_CreateArray();
	if (arr == NULL || !each_key(o->config_keys, false, arr, &order, append, NULL) ||
	    !each_key(settings_connector_keys, true, arr, &order, append, NULL)) {
		cJSON_Delete(arr);
		return PLUGINS_ERR_NOMEM;
	}
	*out = arr;
	return 0;
}

/* ---- config/validate ------------------------------------------------------ */

#define MAX_KEYS 512

/* What validate found: each key of the configuration (line i + 1 of the
 * props it is loaded from) and its errors. */
struct found {
	const cJSON *config;
	const char *keys[MAX_KEYS];
	cJSON *errors[MAX_KEYS]; /* arrays, or NULL */
	bool dropped[MAX_KEYS];  /* left out of the next try */
	size_t n;
	cJSON *missing; /* {"key": "message"} for required keys not given */
};

static int note(struct found *f, size_t i, const char *msg)
{
	cJSON *s = cJSON_CreateString(msg);

	if (s == NULL || (f->errors[i] == NULL && (f->errors[i] = cJSON_CreateArray()) == NULL)) {
		cJSON_Delete(s);
		return PLUGINS_ERR_NOMEM;
	}
	cJSON_AddItemToArray(f->errors[i], s);
	f->dropped[i] = true;
	return 0;
}

/* Loads the keys not dropped yet; on a refusal notes it against its key
 * (the line it came from, or the required key it names). Returns 0 when the
 * load passes, 1 when it noted an error (try again), -1 when it cannot tell
 * which key is wrong (error noted against connector.class), or
 * PLUGINS_ERR_NOMEM. */
static int try_load(const struct config_section *worker, struct found *f, const char *filler)
{
	struct props *p = NULL;
	char err[1024], *at;
	const char *msg;
	long line;
	int rc;

	if (props_new("validate", &p) != 0)
		return PLUGINS_ERR_NOMEM;
	for (size_t i = 0; i < f->n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->config, f->keys[i]);

		if (!f->dropped[i] && props_add(p, f->keys[i], v->valuestring, (int)i + 1) != 0)
			goto nomem;
	}
	for (const cJSON *m = f->missing ? f->missing->child : NULL; m != NULL; m = m->next)
		if (props_add(p, m->string, filler, 0) != 0)
			goto nomem;
	rc = settings_check_connector(worker, p, err, sizeof(err));
	props_destroy(p);
	if (rc == 0)
		return 0;
	if (rc == SETTINGS_ERR_NOMEM)
		return PLUGINS_ERR_NOMEM;
	if (strncmp(err, "validate:", 9) == 0 && (line = strtol(err + 9, &at, 10)) > 0 &&
	    (size_t)line <= f->n && *at == ':') {
		msg = at + 1 + strspn(at + 1, " ");
		return note(f, (size_t)line - 1, msg) == 0 ? 1 : PLUGINS_ERR_NOMEM;
	}
	if ((at = strstr(err, "missing required property '")) != NULL) {
		char key[256];

		at += strlen("missing required property '");
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(at, "'"), at);
		snprintf(err, sizeof(err),
		         "Missing required configuration \"%s\" which has no "
		         "default value.",
		         key);
		if (cJSON_GetObjectItemCaseSensitive(f->missing, key) != NULL)
			return -1;
		return cJSON_AddStringToObject(f->missing, key, err) != NULL ? 1
		                                                             : PLUGINS_ERR_NOMEM;
	}
	return -1;
nomem:
	props_destroy(p);
	return PLUGINS_ERR_NOMEM;
}

/* {"definition":..,"value":{"name","value","recommended_values","errors",
 * "visible"}}. */
static cJSON *config_info(cJSON *def, const char *name, const char *value, cJSON *errors)
{
	cJSON *j = cJSON_CreateObject(), *v = cJSON_CreateObject();

	if (errors == NULL)
		errors = cJSON_CreateArray();
	if (j == NULL || v == NULL || def == NULL || errors == NULL ||
	    !cJSON_AddItemToObject(j, "definition", def) ||
	    cJSON_AddStringToObject(v, "name", name) == NULL ||
	    (value != NULL ? cJSON_AddStringToObject(v, "value", value)
	                   : cJSON_AddNullToObject(v, "value")) == NULL ||
	    cJSON_AddArrayToObject(v, "recommended_values") == NULL ||
	    !cJSON_AddItemToObject(v, "errors", errors) ||
	    cJSON_AddBoolToObject(v, "visible", true) == NULL ||
	    !cJSON_AddItemToObject(j, "value", v)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

struct infos {
	struct found *f;
	cJSON *groups;
	int errors;
};

static bool add_info(cJSON *arr, const struct config_key *k, cJSON *def, void *arg)
{
	struct infos *in = arg;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in->f->config, k->name);
	const cJSON *miss = cJSON_GetObjectItemCaseSensitive(in->f->missing, k->name);
	cJSON *errors = NULL, *info;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(def, "group");
	const char *value = cJSON_IsString(v) ? v->valuestring : k->def;

	for (size_t i = 0; i < in->f->n; i++)
		if (strcmp(in->f->keys[i], k->name) == 0) {
			errors = in->f->errors[i];
			in->f->errors[i] = NULL;
		}
	if (miss != NULL && errors == NULL && (errors = cJSON_CreateArray()) != NULL)
		cJSON_AddItemToArray(errors, cJSON_CreateString(miss->valuestring));
	in->errors += cJSON_GetArraySize(errors);
	if (cJSON_IsString(g)) {
		bool seen = false;

		for (const cJSON *e = in->groups->child; e != NULL && !seen; e = e->next)
			seen = strcmp(e->valuestring, g->valuestring) == 0;
		if (!seen)
			cJSON_AddItemToArray(in->groups, cJSON_CreateString(g->valuestring));
	}
	/* A secret's value is not served back, as Connect serves "[hidden]". */
	info = config_info(def, k->name,
	                   value != NULL ? config_display(k->name, value, k->flags) : NULL, errors);
	return info != NULL && cJSON_AddItemToArray(arr, info);
}

/* Keys no table has: an entry of their own, with their error. */
static bool add_unknown(cJSON *arr, struct infos *in)
{
	for (size_t i = 0; i < in->f->n; i++) {
		struct config_key k = {in->f->keys[i],
		                       CFG_STRING,
		                       NULL,
		                       0,
		                       0,
		                       NULL,
		                       0,
		                       "Not a property of this connector.",
		                       CFG_NOFIELD};
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(in->f->config, k.name);
		cJSON *info;

		if (in->f->errors[i] == NULL)
			continue;
		in->errors += cJSON_GetArraySize(in->f->errors[i]);
		info =
		    config_info(key_info(&k, false, -1), k.name, v->valuestring, in->f->errors[i]);
		in->f->errors[i] = NULL;
		if (info == NULL || !cJSON_AddItemToArray(arr, info))
			return false;
	}
	return true;
}

static int find_errors(const struct config_section *worker, struct found *f)
{
	int rc = 1;

	for (size_t tries = 0; rc == 1 && tries < f->n + 16; tries++)
		rc = try_load(worker, f, "x");
	if (rc == -1) {
		/* Not one key's: the connector's as a whole (a converter that
		 * cannot write its records, a transform chain). */
		char err[1024];
		struct props *p = NULL;

		if (props_new("validate", &p) != 0)
			return PLUGINS_ERR_NOMEM;
		for (size_t i = 0; i < f->n; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->config, f->keys[i]);

			if (!f->dropped[i] &&
			    props_add(p, f->keys[i], v->valuestring, (int)i + 1) != 0) {
				props_destroy(p);
				return PLUGINS_ERR_NOMEM;
			}
		}
		rc = settings_check_connector(worker, p, err, sizeof(err));
		props_destroy(p);
		for (size_t i = 0; rc != 0 && i < f->n; i++)
			if (strcmp(f->keys[i], "connector.class") == 0)
				return note(f, i, err);
	}
	return rc < 0 ? rc : 0;
}

int plugins_validate(const struct config_section *worker, const char *plugin, const cJSON *config,
                     cJSON **out, char *errbuf, size_t errlen)
{
	const struct source_ops *o = source_find(plugin);
	const cJSON *cls = cJSON_GetObjectItemCaseSensitive(config, "connector.class");
	struct found *f = calloc(1, sizeof(*f));
	struct infos in = {.f = f};
	cJSON *j = NULL, *configs;
	int order = 0, rc = PLUGINS_ERR_NOMEM;

	*out = NULL;
	if (f == NULL)
		return rc;
	if (o == NULL) {
		char known[512] = "";

		for (size_t i = 0; source_registry[i] != NULL; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			         i ? ", " : "", class_of(source_registry[i]));
		snprintf(
		    errbuf, errlen,
		    "Failed to find any class that implements Connector and which name matches "
		    "%.300s, available connectors are: %s",
		    plugin, known);
		free(f);
		return PLUGINS_ERR_UNKNOWN;
	}
	if (cJSON_IsString(cls) && source_find(cls->valuestring) != o) {
		snprintf(errbuf, errlen,
		         "Included connector type %.300s does not match request type %.300s",
		         cls->valuestring, plugin);
		free(f);
		return PLUGINS_ERR_MISMATCH;
	}
	f->config = config;
	for (const cJSON *e = config->child; e != NULL && f->n < MAX_KEYS; e = e->next)
		if (cJSON_IsString(e) && strcmp(e->string, "connector.class") != 0)
			f->keys[f->n++] = e->string;
	/* The plugin of the path is the class validated. */
	if (f->n < MAX_KEYS)
		f->keys[f->n++] = "connector.class";
	f->missing = cJSON_CreateObject();
	in.groups = cJSON_CreateArray();
	j = cJSON_CreateObject();
	configs = cJSON_CreateArray();
	if (f->missing == NULL || in.groups == NULL || j == NULL || configs == NULL)
		goto out;
	{
		/* connector.class is the plugin's, whatever the body said. */
		cJSON *copy = cJSON_Duplicate(config, true);

		if (copy == NULL)
			goto out;
		cJSON_DeleteItemFromObjectCaseSensitive(copy, "connector.class");
		if (cJSON_AddStringToObject(copy, "connector.class", plugin) == NULL) {
			cJSON_Delete(copy);
			goto out;
		}
		f->config = copy;
		rc = find_errors(worker, f);
		if (rc == 0 &&
		    (!each_key(settings_connector_keys, true, configs, &order, add_info, &in) ||
		     !each_key(o->config_keys, false, configs, &order, add_info, &in) ||
		     !add_unknown(configs, &in)))
			rc = PLUGINS_ERR_NOMEM;
		f->config = config;
		cJSON_Delete(copy);
	}
	if (rc != 0 || cJSON_AddStringToObject(j, "name", plugin) == NULL ||
	    cJSON_AddNumberToObject(j, "error_count", in.errors) == NULL ||
	    !cJSON_AddItemToObject(j, "groups", in.groups)) {
		rc = PLUGINS_ERR_NOMEM;
		goto out;
	}
	in.groups = NULL;
	if (!cJSON_AddItemToObject(j, "configs", configs)) {
		configs = NULL;
		goto out;
	}
	configs = NULL;
	*out = j;
	j = NULL;
	rc = 0;
out:
	for (size_t i = 0; i < f->n; i++)
		cJSON_Delete(f->errors[i]);
	cJSON_Delete(f->missing);
	cJSON_Delete(in.groups);
	cJSON_Delete(configs);
	cJSON_Delete(j);
	free(f);
	return rc;
}
