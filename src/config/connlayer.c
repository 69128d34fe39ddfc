/* restconns: the REST API's connectors, kept (restconns.h). */
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

struct restconns {
	char *path;
	struct entry *e;
	size_t n;
};

/* config (an object of strings) as properties, key k at line k + 1. */
static int to_props(const char *name, const cJSON *config, struct props **out)
{
	char pname[600];
	int line = 0;

	snprintf(pname, sizeof(pname), "REST connector %.500s", name);
	if (props_new(pname, out) != 0)
		return RESTCONNS_ERR_NOMEM;
	for (const cJSON *kv = config->child; kv != NULL; kv = kv->next)
		if (props_add(*out, kv->string, kv->valuestring, ++line) != 0) {
			props_destroy(*out);
			*out = NULL;
			return RESTCONNS_ERR_NOMEM;
		}
	return 0;
}

/* Appends name's entry (config taken; NULL: deleted). */
static int add(struct restconns *rc, const char *name, cJSON *config)
{
	struct entry *grown = realloc(rc->e, (rc->n + 1) * sizeof(*grown)), *e;

	if (grown == NULL) {
		cJSON_Delete(config);
		return RESTCONNS_ERR_NOMEM;
	}
	rc->e = grown;
	e = &rc->e[rc->n];
	*e = (struct entry){.name = strdup(name), .config = config};
	if (e->name == NULL || (config != NULL && to_props(name, config, &e->props) != 0)) {
		free(e->name);
		cJSON_Delete(config);
		props_destroy(e->props);
		return RESTCONNS_ERR_NOMEM;
	}
	rc->n++;
	return 0;
}

/* add() of a copy of config (NULL: a deletion). */
static int add_copy(struct restconns *rc, const char *name, const cJSON *config)
{
	cJSON *copy = config != NULL ? cJSON_Duplicate(config, true) : NULL;

	if (config != NULL && copy == NULL)
		return RESTCONNS_ERR_NOMEM;
	return add(rc, name, copy);
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

static int parse(struct restconns *rc, const char *text, size_t len, char *errbuf, size_t errlen)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "connectors");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "format");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
	int rc_ = 0;

	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "skiff-rest-connectors") != 0 ||
	    !cJSON_IsNumber(ver) || ver->valuedouble != 1 || !cJSON_IsArray(list))
		goto bad;
	for (const cJSON *it = list->child; it != NULL && rc_ == 0; it = it->next) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *config = cJSON_GetObjectItemCaseSensitive(it, "config");
		const cJSON *deleted = cJSON_GetObjectItemCaseSensitive(it, "deleted");

		if (!cJSON_IsString(name) || name->valuestring[0] == '\0' ||
		    restconns_find(rc, name->valuestring) >= 0)
			goto bad;
		if (cJSON_IsTrue(deleted) && config == NULL) {
			rc_ = add(rc, name->valuestring, NULL);
		} else if (all_strings(config)) {
			cJSON *copy = cJSON_Duplicate(config, true);

			rc_ = copy != NULL ? add(rc, name->valuestring, copy) : RESTCONNS_ERR_NOMEM;
		} else {
			goto bad;
		}
	}
	cJSON_Delete(doc);
	if (rc_ == RESTCONNS_ERR_NOMEM)
		snprintf(errbuf, errlen, "%s: out of memory", rc->path);
	return rc_;
bad:
	cJSON_Delete(doc);
	snprintf(errbuf, errlen,
	         "%s: not a file of the REST API's connectors (skiff-rest-connectors version 1); "
	         "move it away to start without them",
	         rc->path);
	return RESTCONNS_ERR_FORMAT;
}

int restconns_load(const char *offsets_file, struct restconns **out, char *errbuf, size_t errlen)
{
	struct restconns *rc = calloc(1, sizeof(*rc));
	const char *slash = offsets_file ? strrchr(offsets_file, '/') : NULL;
	char *text = NULL;
	size_t len = 0, dirlen;
	int r;

	*out = NULL;
	if (rc == NULL)
		return RESTCONNS_ERR_NOMEM;
	if (offsets_file != NULL && offsets_file[0] != '\0') {
		dirlen = slash ? (size_t)(slash - offsets_file) + 1 : 0;
		rc->path = malloc(dirlen + sizeof(RESTCONNS_FILE));
		if (rc->path == NULL) {
			free(rc);
			return RESTCONNS_ERR_NOMEM;
		}
		memcpy(rc->path, offsets_file, dirlen);
		memcpy(rc->path + dirlen, RESTCONNS_FILE, sizeof(RESTCONNS_FILE));
		r = atomicfile_read(rc->path, MAX_FILE_BYTES, &text, &len, errbuf, errlen);
		if (r == ATOMICFILE_ERR_NOMEM || (r != 0 && r != ATOMICFILE_ERR_NOENT)) {
			restconns_destroy(rc);
			return r == ATOMICFILE_ERR_NOMEM ? RESTCONNS_ERR_NOMEM : RESTCONNS_ERR_IO;
		}
		if (r == 0) {
			r = parse(rc, text, len, errbuf, errlen);
			free(text);
			if (r != 0) {
				restconns_destroy(rc);
				return r;
			}
		}
	}
	*out = rc;
	return 0;
}

size_t restconns_count(const struct restconns *rc)
{
	return rc != NULL ? rc->n : 0;
}

const char *restconns_name(const struct restconns *rc, size_t i)
{
	return rc->e[i].name;
}

struct props *restconns_props(const struct restconns *rc, size_t i)
{
	return rc->e[i].props;
}

const cJSON *restconns_config(const struct restconns *rc, size_t i)
{
	return rc->e[i].config;
}

long restconns_find(const struct restconns *rc, const char *name)
{
	for (size_t i = 0; rc != NULL && i < rc->n; i++)
		if (strcmp(rc->e[i].name, name) == 0)
			return (long)i;
	return -1;
}

int restconns_with(const struct restconns *rc, const char *name, const cJSON *config, bool drop,
                   struct restconns **out)
{
	struct restconns *c = calloc(1, sizeof(*c));
	bool placed = false;
	int r = 0;

	*out = NULL;
	if (c == NULL || (rc->path != NULL && (c->path = strdup(rc->path)) == NULL)) {
		free(c);
		return RESTCONNS_ERR_NOMEM;
	}
	/* Its place kept: the order of the file is the order of creation. */
	for (size_t i = 0; i < rc->n && r == 0; i++) {
		const cJSON *cfg = rc->e[i].config;

		if (name != NULL && strcmp(rc->e[i].name, name) == 0) {
			placed = true;
			if (drop)
				continue;
			cfg = config;
		}
		r = add_copy(c, rc->e[i].name, cfg);
	}
	if (r == 0 && name != NULL && !placed && !drop)
		r = add_copy(c, name, config);
	if (r != 0) {
		restconns_destroy(c);
		return RESTCONNS_ERR_NOMEM;
	}
	*out = c;
	return 0;
}

int restconns_save(const struct restconns *rc, char *errbuf, size_t errlen)
{
	cJSON *doc, *list;
	char *text;
	int r = RESTCONNS_ERR_NOMEM;

	if (rc->path == NULL)
		return 0;
	doc = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(doc, "connectors");
	if (doc == NULL || list == NULL ||
	    cJSON_AddStringToObject(doc, "format", "skiff-rest-connectors") == NULL ||
	    cJSON_AddNumberToObject(doc, "version", 1) == NULL)
		goto out;
	for (size_t i = 0; i < rc->n; i++) {
		cJSON *e = cJSON_CreateObject();

		if (e == NULL || !cJSON_AddItemToArray(list, e) ||
		    cJSON_AddStringToObject(e, "name", rc->e[i].name) == NULL)
			goto out;
		if (rc->e[i].config == NULL
		        ? cJSON_AddTrueToObject(e, "deleted") == NULL
		        : !cJSON_AddItemToObject(e, "config",
		                                 cJSON_Duplicate(rc->e[i].config, true)))
			goto out;
	}
	text = cJSON_Print(doc);
	if (text == NULL)
		goto out;
	r = atomicfile_write(rc->path, text, strlen(text), errbuf, errlen);
	free(text);
	r = r == 0 ? 0 : r == ATOMICFILE_ERR_NOMEM ? RESTCONNS_ERR_NOMEM : RESTCONNS_ERR_IO;
out:
	if (r == RESTCONNS_ERR_NOMEM)
		snprintf(errbuf, errlen, "%s: out of memory", rc->path);
	cJSON_Delete(doc);
	return r;
}

const char *restconns_path(const struct restconns *rc)
{
	return rc->path;
}

void restconns_destroy(struct restconns *rc)
{
	if (rc == NULL)
		return;
	for (size_t i = 0; i < rc->n; i++) {
		free(rc->e[i].name);
		cJSON_Delete(rc->e[i].config);
		props_destroy(rc->e[i].props);
	}
	free(rc->e);
	free(rc->path);
	free(rc);
}
