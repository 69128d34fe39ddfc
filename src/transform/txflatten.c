/* txflatten: Flatten$Key/$Value, as Connect 3.9's: nested structs (with a
 * schema) or maps (without) become one level of fields named by joining
 * the names on the way down with delimiter ("." unless set): {a:{b:1}} is
 * {"a.b":1}. A field is optional when it or any struct above it is; its
 * default is its own, or the one the struct above gives it. Arrays are kept
 * as they are; a map inside a struct with a schema fails, as two fields that
 * flatten to one name do. A null key or value passes unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"

#define PURPOSE "flattening"
#define NAME_MAX_LEN 4096

struct flatten {
	bool key;
	const char *delimiter;
};

static int flatten_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct flatten *t = calloc(1, sizeof(*t));

	(void)errbuf, (void)errlen;
	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	/* A string property: set but empty is the empty delimiter. */
	t->delimiter = txconf_get(c, "delimiter") ? txconf_get(c, "delimiter") : ".";
	return 0;
}

/* prefix + delimiter + name (name alone at the top) into out. */
static int join(const struct flatten *t, const char *prefix, const char *name, char *out,
                char *errbuf, size_t errlen)
{
	int n = *prefix ? snprintf(out, NAME_MAX_LEN, "%s%s%s", prefix, t->delimiter, name)
	                : snprintf(out, NAME_MAX_LEN, "%s", name);

	if (n < 0 || n >= NAME_MAX_LEN) {
		snprintf(errbuf, errlen, "a flattened field name longer than %d bytes",
		         NAME_MAX_LEN - 1);
		return TX_ERR;
	}
	return 0;
}

static bool kept_whole(const char *type)
{
	return strcmp(type, "struct") != 0 && strcmp(type, "map") != 0 && *type != '\0';
}

/* The flattened field's schema: fs's type and basics (copySchemaBasics),
 * optional, default. */
static cJSON *leaf_schema(const cJSON *fs, bool optional, const cJSON *def)
{
	static const char *const basics[] = {"name", "version", "doc", "parameters"};
	cJSON *s = txschema_new(txschema_str(fs, "type"), optional), *m;

	for (size_t i = 0; s != NULL && i < sizeof(basics) / sizeof(basics[0]); i++) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(fs, basics[i]);

		if (b == NULL || cJSON_IsNull(b))
			continue;
		if ((m = cJSON_Duplicate(b, true)) == NULL)
			goto fail;
		cJSON_AddItemToObject(s, basics[i], m);
	}
	/* An array's element schema is not a basic: Connect's copy has none. */
	if (s != NULL && strcmp(txschema_type(fs), "array") == 0 &&
	    cJSON_AddNullToObject(s, "items") == NULL)
		goto fail;
	if (s != NULL && def != NULL && !cJSON_IsNull(def)) {
		if ((m = cJSON_Duplicate(def, true)) == NULL)
			goto fail;
		cJSON_AddItemToObject(s, "default", m);
	}
	return s;
fail:
	cJSON_Delete(s);
	return NULL;
}

/* A field kept whole (not a struct): its schema into out_s, and its value
 * fv (the struct it is in being there: has_value) into out_v. */
static int leaf(const cJSON *f, const char *name, bool opt, const cJSON *def, bool has_value,
                const cJSON *fv, cJSON *out_s, cJSON *out_v, char *errbuf, size_t errlen)
{
	const char *type = txschema_type(f);
	cJSON *c;

	if (!kept_whole(type)) {
		snprintf(errbuf, errlen,
		         "Flatten transformation does not support %s for record with schemas "
		         "(for field %s).",
		         strcmp(type, "map") == 0 ? "MAP" : type, name);
		return TX_ERR;
	}
	if (txschema_field(out_s, name) != NULL) {
		snprintf(errbuf, errlen, "Cannot create field because of field name duplication %s",
		         name);
		return TX_ERR;
	}
	if (txschema_add_field(out_s, name, leaf_schema(f, opt, def)) != 0)
		return TX_ERR_NOMEM;
	if (!has_value)
		return 0;
	if ((fv == NULL || cJSON_IsNull(fv)) && !opt) {
		snprintf(errbuf, errlen,
		         "Invalid value: null used for required field: \"%s\", schema type: %s",
		         name, txschema_str(f, "type"));
		return TX_ERR;
	}
	if (fv == NULL || cJSON_IsNull(fv))
		return 0;
	if ((c = cJSON_Duplicate(fv, true)) == NULL)
		return TX_ERR_NOMEM;
	cJSON_AddItemToObject(out_v, name, c);
	return 0;
}

/* buildUpdatedSchema and buildWithSchema in one walk: the fields of struct
 * schema s (payload v, NULL for null; parent_def the default the struct
 * above gives) into out_s and out_v. */
static int walk(const struct flatten *t, const cJSON *s, const cJSON *v, const char *prefix,
                bool optional, const cJSON *parent_def, cJSON *out_s, cJSON *out_v, char *errbuf,
                size_t errlen)
{
	const cJSON *f;
	char name[NAME_MAX_LEN];
	int rc;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(s, "fields"))
	{
		const char *fname = txschema_str(f, "field"), *type = txschema_type(f);
		const cJSON *def = cJSON_GetObjectItemCaseSensitive(f, "default"), *fv = NULL;
		bool opt = optional || txschema_optional(f);

		if (fname == NULL)
			continue;
		if ((rc = join(t, prefix, fname, name, errbuf, errlen)) != 0)
			return rc;
		if ((def == NULL || cJSON_IsNull(def)) && cJSON_IsObject(parent_def))
			def = cJSON_GetObjectItemCaseSensitive(parent_def, fname);
		if (v != NULL)
			fv = cJSON_GetObjectItemCaseSensitive(v, fname);
		/* Struct.get(): a null field is its default. */
		if (v != NULL && (fv == NULL || cJSON_IsNull(fv)))
			fv = cJSON_GetObjectItemCaseSensitive(f, "default");
		if (strcmp(type, "struct") == 0) {
			if ((rc = walk(t, f, cJSON_IsObject(fv) ? fv : NULL, name, opt, def, out_s,
			               out_v, errbuf, errlen)) != 0)
				return rc;
			continue;
		}
		if ((rc = leaf(f, name, opt, def, v != NULL, fv, out_s, out_v, errbuf, errlen)) !=
		    0)
			return rc;
	}
	return 0;
}

static int with_schema(const struct flatten *t, struct txdata *d, char *errbuf, size_t errlen)
{
	cJSON *schema = NULL, *payload = NULL;
	int rc;

	if (strcmp(txschema_type(d->schema), "struct") != 0 || !cJSON_IsObject(d->payload)) {
		snprintf(errbuf, errlen,
		         "Only Struct objects supported for [" PURPOSE "], found: %s",
		         txschema_java_class(d->schema, d->payload));
		return TX_ERR;
	}
	if ((schema = txschema_struct_from(d->schema)) == NULL ||
	    (payload = cJSON_CreateObject()) == NULL) {
		rc = TX_ERR_NOMEM;
		goto fail;
	}
	rc = walk(t, d->schema, d->payload, "", txschema_optional(d->schema),
	          cJSON_GetObjectItemCaseSensitive(d->schema, "default"), schema, payload, errbuf,
	          errlen);
	if (rc != 0)
		goto fail;
	rc = TX_OK;
fail:
	return txrec_finish(d, schema, payload, rc);
}

/* applySchemaless: the entries of map m into out, nested maps flattened. */
static int flat_map(const struct flatten *t, cJSON *m, const char *prefix, cJSON *out, char *errbuf,
                    size_t errlen)
{
	cJSON *e, *next;
	char name[NAME_MAX_LEN];
	int rc;

	for (e = m->child; e != NULL; e = next) {
		next = e->next;
		if ((rc = join(t, prefix, e->string, name, errbuf, errlen)) != 0)
			return rc;
		if (cJSON_IsObject(e)) {
			if ((rc = flat_map(t, e, name, out, errbuf, errlen)) != 0)
				return rc;
			continue;
		}
		cJSON_DetachItemViaPointer(m, e);
		/* LinkedHashMap.put of a name already there: the value changes,
		 * the place does not. */
		if (cJSON_GetObjectItemCaseSensitive(out, name) != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(out, name, e);
		else
			cJSON_AddItemToObject(out, name, e);
	}
	return 0;
}

static int schemaless(const struct flatten *t, struct txdata *d, char *errbuf, size_t errlen)
{
	cJSON *out;
	int rc;

	if (!cJSON_IsObject(d->payload)) {
		snprintf(errbuf, errlen,
		         "Only Map objects supported in absence of schema for [" PURPOSE
		         "], found: %s",
		         txschema_java_class(NULL, d->payload));
		return TX_ERR;
	}
	if ((out = cJSON_CreateObject()) == NULL)
		return TX_ERR_NOMEM;
	if ((rc = flat_map(t, d->payload, "", out, errbuf, errlen)) != 0) {
		cJSON_Delete(out);
		return rc;
	}
	txrec_set(d, NULL, out);
	return TX_OK;
}

static int flatten_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct flatten *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (txrec_is_null(d))
		return TX_OK;
	if (d->schema == NULL)
		return schemaless(t, d, errbuf, errlen);
	return with_schema(t, d, errbuf, errlen);
}

const struct tx_ops txflatten_ops = {
    .name = "Flatten",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Flattens nested structs (or maps) into one level, names joined by delimiter.",
    .props = "delimiter (.)",
    .init = flatten_init,
    .apply = flatten_apply,
    .free = free,
};
