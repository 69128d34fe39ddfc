/* connlayer: connectors laid over the files', kept (connlayer.h). */
#include "config/connlayer.h"

#include "util/atomicfile.h"
#include "config/props.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Configurations of a few KiB each: this only bounds a damaged file. */
#define MAX_FILE_BYTES (16 * 1024 * 1024)

struct entry {
	char *name;
	cJSON *config;       /* NULL: deleted */
	struct props *props; /* config as properties, NULL with it */
};

/* Each kind's file, format, and what its entries are called. */
static const struct kind {
	const char *file, *format, *who, *whose, *entry;
	bool replaces;
} kinds[CONNLAYER_KINDS] = {
    [CONNLAYER_FILES] = {NULL, NULL, "the configuration files", NULL, NULL, true},
    [CONNLAYER_FLEET] = {CONNLAYER_FLEET_FILE, "skiff-fleet-connectors", "the fleet", "the fleet's",
                         "fleet connector", false},
    [CONNLAYER_REST] = {CONNLAYER_REST_FILE, "skiff-rest-connectors", "the REST API",
                        "the REST API's", "REST connector", true},
};

struct connlayer {
	enum connlayer_kind kind;
	bool replaces;
	char *path;
	struct entry *e;
	size_t n;
};

/* config (an object of strings) as properties, key k at line k + 1. */
static int to_props(const struct connlayer *l, const char *name, const cJSON *config,
                    struct props **out)
{
	char pname[600];
	int line = 0;

	snprintf(pname, sizeof(pname), "%s %.500s", kinds[l->kind].entry, name);
	if (props_new(pname, out) != 0)
		return CONNLAYER_ERR_NOMEM;
	for (const cJSON *kv = config->child; kv != NULL; kv = kv->next)
		if (props_add(*out, kv->string, kv->valuestring, ++line) != 0) {
			props_destroy(*out);
			*out = NULL;
			return CONNLAYER_ERR_NOMEM;
		}
	return 0;
}

/* Appends name's entry (config taken; NULL: deleted). */
static int add(struct connlayer *l, const char *name, cJSON *config)
{
	struct entry *grown = realloc(l->e, (l->n + 1) * sizeof(*grown)), *e;

	if (grown == NULL) {
		cJSON_Delete(config);
		return CONNLAYER_ERR_NOMEM;
	}
	l->e = grown;
	e = &l->e[l->n];
	*e = (struct entry){.name = strdup(name), .config = config};
	if (e->name == NULL || (config != NULL && to_props(l, name, config, &e->props) != 0)) {
		free(e->name);
		cJSON_Delete(config);
		props_destroy(e->props);
		return CONNLAYER_ERR_NOMEM;
	}
	l->n++;
	return 0;
}

/* add() of a copy of config (NULL: a deletion). */
static int add_copy(struct connlayer *l, const char *name, const cJSON *config)
{
	cJSON *copy = config != NULL ? cJSON_Duplicate(config, true) : NULL;

	if (config != NULL && copy == NULL)
		return CONNLAYER_ERR_NOMEM;
	return add(l, name, copy);
}

static bool all_strings(const cJSON *o)
{
	if (!cJSON_IsObject(o))
		return false;
	for (const cJSON *kv = o->child; kv != NULL; kv = kv->next)
		if (!cJSON_IsString(kv) || kv->string == NULL)
			return false;
	return true;
}

static int parse(struct connlayer *l, const char *text, size_t len, char *errbuf, size_t errlen)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "connectors");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "format");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
	int rc = 0;

	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, kinds[l->kind].format) != 0 ||
	    !cJSON_IsNumber(ver) || ver->valuedouble != 1 || !cJSON_IsArray(list))
		goto bad;
	for (const cJSON *it = list->child; it != NULL && rc == 0; it = it->next) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *config = cJSON_GetObjectItemCaseSensitive(it, "config");
		const cJSON *deleted = cJSON_GetObjectItemCaseSensitive(it, "deleted");

		if (!cJSON_IsString(name) || name->valuestring[0] == '\0' ||
		    connlayer_find(l, name->valuestring) >= 0)
			goto bad;
		if (cJSON_IsTrue(deleted) && config == NULL) {
			rc = add(l, name->valuestring, NULL);
		} else if (all_strings(config)) {
			cJSON *copy = cJSON_Duplicate(config, true);

			rc = copy != NULL ? add(l, name->valuestring, copy) : CONNLAYER_ERR_NOMEM;
		} else {
			goto bad;
		}
	}
	cJSON_Delete(doc);
	if (rc == CONNLAYER_ERR_NOMEM)
		snprintf(errbuf, errlen, "%s: out of memory", l->path);
	return rc;
bad:
	cJSON_Delete(doc);
	snprintf(errbuf, errlen,
	         "%s: not a file of %s connectors (%s version 1); move it away to start "
	         "without them",
	         l->path, kinds[l->kind].whose, kinds[l->kind].format);
	return CONNLAYER_ERR_FORMAT;
}

int connlayer_load(enum connlayer_kind kind, const char *offsets_file, struct connlayer **out,
                   char *errbuf, size_t errlen)
{
	struct connlayer *l = calloc(1, sizeof(*l));
	const char *slash = offsets_file ? strrchr(offsets_file, '/') : NULL;
	const char *file = kinds[kind].file;
	char *text = NULL;
	size_t len = 0, dirlen;
	int r;

	*out = NULL;
	if (l == NULL)
		return CONNLAYER_ERR_NOMEM;
	l->kind = kind;
	l->replaces = kinds[kind].replaces;
	if (offsets_file != NULL && offsets_file[0] != '\0') {
		dirlen = slash ? (size_t)(slash - offsets_file) + 1 : 0;
		l->path = malloc(dirlen + strlen(file) + 1);
		if (l->path == NULL) {
			free(l);
			return CONNLAYER_ERR_NOMEM;
		}
		memcpy(l->path, offsets_file, dirlen);
		memcpy(l->path + dirlen, file, strlen(file) + 1);
		r = atomicfile_read(l->path, MAX_FILE_BYTES, &text, &len, errbuf, errlen);
		if (r == ATOMICFILE_ERR_NOMEM || (r != 0 && r != ATOMICFILE_ERR_NOENT)) {
			connlayer_destroy(l);
			return r == ATOMICFILE_ERR_NOMEM ? CONNLAYER_ERR_NOMEM : CONNLAYER_ERR_IO;
		}
		if (r == 0) {
			r = parse(l, text, len, errbuf, errlen);
			free(text);
			if (r != 0) {
				connlayer_destroy(l);
				return r;
			}
		}
	}
	*out = l;
	return 0;
}

const char *connlayer_who(enum connlayer_kind kind)
{
	return kinds[kind].who;
}

enum connlayer_kind connlayer_kind(const struct connlayer *l)
{
	return l->kind;
}

bool connlayer_replaces(const struct connlayer *l)
{
	return l != NULL && l->replaces;
}

void connlayer_set_replaces(struct connlayer *l, bool replaces)
{
	l->replaces = replaces;
}

size_t connlayer_count(const struct connlayer *l)
{
	return l != NULL ? l->n : 0;
}

const char *connlayer_name(const struct connlayer *l, size_t i)
{
	return l->e[i].name;
}

struct props *connlayer_props(const struct connlayer *l, size_t i)
{
	return l->e[i].props;
}

const cJSON *connlayer_config(const struct connlayer *l, size_t i)
{
	return l->e[i].config;
}

long connlayer_find(const struct connlayer *l, const char *name)
{
	for (size_t i = 0; l != NULL && i < l->n; i++)
		if (strcmp(l->e[i].name, name) == 0)
			return (long)i;
	return -1;
}

int connlayer_with(const struct connlayer *l, const char *name, const cJSON *config, bool drop,
                   struct connlayer **out)
{
	struct connlayer *c = calloc(1, sizeof(*c));
	bool placed = false;
	int r = 0;

	*out = NULL;
	if (c == NULL || (l->path != NULL && (c->path = strdup(l->path)) == NULL)) {
		free(c);
		return CONNLAYER_ERR_NOMEM;
	}
	c->kind = l->kind;
	c->replaces = l->replaces;
	/* Its place kept: the order of the file is the order of creation. */
	for (size_t i = 0; i < l->n && r == 0; i++) {
		const cJSON *cfg = l->e[i].config;

		if (name != NULL && strcmp(l->e[i].name, name) == 0) {
			placed = true;
			if (drop)
				continue;
			cfg = config;
		}
		r = add_copy(c, l->e[i].name, cfg);
	}
	if (r == 0 && name != NULL && !placed && !drop)
		r = add_copy(c, name, config);
	if (r != 0) {
		connlayer_destroy(c);
		return CONNLAYER_ERR_NOMEM;
	}
	*out = c;
	return 0;
}

int connlayer_save(const struct connlayer *l, char *errbuf, size_t errlen)
{
	cJSON *doc, *list;
	char *text;
	int r = CONNLAYER_ERR_NOMEM;

	if (l->path == NULL)
		return 0;
	doc = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(doc, "connectors");
	if (doc == NULL || list == NULL ||
	    cJSON_AddStringToObject(doc, "format", kinds[l->kind].format) == NULL ||
	    cJSON_AddNumberToObject(doc, "version", 1) == NULL)
		goto out;
	for (size_t i = 0; i < l->n; i++) {
		cJSON *e = cJSON_CreateObject();

		if (e == NULL || !cJSON_AddItemToArray(list, e) ||
		    cJSON_AddStringToObject(e, "name", l->e[i].name) == NULL)
			goto out;
		if (l->e[i].config == NULL
		        ? cJSON_AddTrueToObject(e, "deleted") == NULL
		        : !cJSON_AddItemToObject(e, "config",
		                                 cJSON_Duplicate(l->e[i].config, true)))
			goto out;
	}
	text = cJSON_Print(doc);
	if (text == NULL)
		goto out;
	r = atomicfile_write(l->path, text, strlen(text), errbuf, errlen);
	free(text);
	r = r == 0 ? 0 : r == ATOMICFILE_ERR_NOMEM ? CONNLAYER_ERR_NOMEM : CONNLAYER_ERR_IO;
out:
	if (r == CONNLAYER_ERR_NOMEM)
		snprintf(errbuf, errlen, "%s: out of memory", l->path);
	cJSON_Delete(doc);
	return r;
}

const char *connlayer_path(const struct connlayer *l)
{
	return l != NULL ? l->path : NULL;
}

void connlayer_destroy(struct connlayer *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].name);
		cJSON_Delete(l->e[i].config);
		props_destroy(l->e[i].props);
	}
	free(l->e);
	free(l->path);
	free(l);
}
