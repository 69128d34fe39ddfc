/* txshape: the transforms that reshape a key or value as a whole, as
 * Connect's: ValueToKey, ExtractField$Key/$Value, HoistField$Key/$Value and
 * SetSchemaMetadata$Key/$Value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"

struct shape {
	bool key;
	const char *field;   /* ExtractField, HoistField; ValueToKey's list */
	const char *name;    /* SetSchemaMetadata: schema.name, or NULL */
	const char *version; /* SetSchemaMetadata: schema.version, or NULL */
};

static int field_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen,
                      const char *prop)
{
	struct shape *t = calloc(1, sizeof(*t));

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	return txconf_require(c, prop, &t->field, errbuf, errlen) == 0 ? 0 : TX_ERR;
}

static int one_field_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	return field_init(c, ctx, errbuf, errlen, "field");
}

static int fields_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	return field_init(c, ctx, errbuf, errlen, "fields");
}

/* ---- ValueToKey ------------------------------------------------------------ */

static int vk_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct shape *t = ctx;
	cJSON *schema = NULL, *payload = NULL, *v;
	const char *it;
	size_t n;
	int rc;

	if ((rc = txrec_require_struct(&r->value, "copying fields from value to key", errbuf,
	                               errlen)) != 0)
		return rc;
	if ((schema = txschema_new("struct", false)) == NULL ||
	    cJSON_AddArrayToObject(schema, "fields") == NULL ||
	    (payload = cJSON_CreateObject()) == NULL)
		goto nomem;
	for (size_t i = 0; (n = txconf_list_item(t->field, i, &it)) > 0; i++) {
		char name[256];
		const cJSON *fs;

		snprintf(name, sizeof(name), "%.*s", (int)n, it);
		if ((fs = txschema_field(r->value.schema, name)) == NULL) {
			snprintf(errbuf, errlen, "Field does not exist: %s", name);
			cJSON_Delete(schema);
			cJSON_Delete(payload);
			return TX_ERR;
		}
		if (txschema_add_field(schema, name, txschema_of_field(fs)) != 0)
			goto nomem;
		v = cJSON_GetObjectItemCaseSensitive(r->value.payload, name);
		if (v != NULL && (v = cJSON_Duplicate(v, true)) == NULL)
			goto nomem;
		if (v != NULL)
			cJSON_AddItemToObject(payload, name, v);
	}
	txrec_set(&r->key, schema, payload);
	return TX_OK;
nomem:
	cJSON_Delete(schema);
	cJSON_Delete(payload);
	return TX_ERR_NOMEM;
}

const struct tx_ops txshape_value_to_key_ops = {
    .name = "ValueToKey",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Makes the key a struct of fields copied from the struct value.",
    .props = "fields",
    .init = fields_init,
    .apply = vk_apply,
    .free = free,
};

/* ---- ExtractField ---------------------------------------------------------- */

static int ef_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct shape *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	const cJSON *fs;
	cJSON *schema, *v = NULL;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (d->schema == NULL) {
		/* Without a schema: a map, or null. */
		if (txrec_is_null(d))
			return TX_OK;
		if (!cJSON_IsObject(d->payload)) {
			snprintf(errbuf, errlen,
			         "Only Map objects supported in absence of schema for [field "
			         "extraction], "
			         "found: %s",
			         txschema_java_class(NULL, d->payload));
			return TX_ERR;
		}
		v = cJSON_DetachItemFromObjectCaseSensitive(d->payload, t->field);
		txrec_set(d, NULL, v);
		return TX_OK;
	}
	if (strcmp(txschema_type(d->schema), "struct") != 0 ||
	    (!txrec_is_null(d) && !cJSON_IsObject(d->payload))) {
		snprintf(errbuf, errlen,
		         "Only Struct objects supported for [field extraction], found: %s",
		         txschema_java_class(d->schema, d->payload));
		return TX_ERR;
	}
	if ((fs = txschema_field(d->schema, t->field)) == NULL) {
		snprintf(errbuf, errlen, "Unknown field: %s", t->field);
		return TX_ERR;
	}
	if ((schema = txschema_of_field(fs)) == NULL)
		return TX_ERR_NOMEM;
	if (!txrec_is_null(d))
		v = cJSON_DetachItemFromObjectCaseSensitive(d->payload, t->field);
	txrec_set(d, schema, v);
	return TX_OK;
}

const struct tx_ops txshape_extract_ops = {
    .name = "ExtractField",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Replaces a struct (or map) key or value with one of its fields.",
    .props = "field",
    .init = one_field_init,
    .apply = ef_apply,
    .free = free,
};

/* ---- HoistField ------------------------------------------------------------ */

static int hf_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct shape *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	cJSON *schema = NULL, *payload = cJSON_CreateObject();
	cJSON *v;

	if (payload == NULL || txrec_take(d) != 0)
		goto nomem;
	if (d->schema != NULL) {
		if (txrec_is_null(d) && !txschema_optional(d->schema)) {
			snprintf(
			    errbuf, errlen,
			    "Invalid value: null used for required field: \"%s\", schema type: %s",
			    t->field, txschema_str(d->schema, "type"));
			cJSON_Delete(payload);
			return TX_ERR;
		}
		cJSON *inner = d->schema;

		d->schema = NULL;
		if ((schema = txschema_new("struct", false)) == NULL ||
		    cJSON_AddArrayToObject(schema, "fields") == NULL) {
			cJSON_Delete(inner);
			goto nomem;
		}
		if (txschema_add_field(schema, t->field, inner) != 0)
			goto nomem;
	}
	v = d->payload ? d->payload : cJSON_CreateNull();
	if (v == NULL)
		goto nomem;
	d->payload = NULL;
	cJSON_AddItemToObject(payload, t->field, v);
	return txrec_finish(d, schema, payload, TX_OK);
nomem:
	return txrec_finish(d, schema, payload, TX_ERR_NOMEM);
}

const struct tx_ops txshape_hoist_ops = {
    .name = "HoistField",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Wraps the key or value in a struct (or map) of one field: a line becomes "
           "{field: line}.",
    .props = "field",
    .init = one_field_init,
    .apply = hf_apply,
    .free = free,
};

/* ---- SetSchemaMetadata ----------------------------------------------------- */

static int sm_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct shape *t = calloc(1, sizeof(*t));
	char *end;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	t->name = txconf_get(c, "schema.name");
	t->version = txconf_get(c, "schema.version");
	if (t->name != NULL && *t->name == '\0')
		t->name = NULL;
	if (t->version != NULL && *t->version != '\0' &&
	    (strtol(t->version, &end, 10), *end != '\0'))
		return txconf_error(c, "schema.version", errbuf, errlen, "'%s' is not an integer",
		                    t->version);
	if (t->version != NULL && *t->version == '\0')
		t->version = NULL;
	return 0;
}

static int sm_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct shape *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (d->schema == NULL) {
		snprintf(errbuf, errlen, "Schema required for [updating schema metadata]");
		return TX_ERR;
	}
	if (strcmp(txschema_type(d->schema), "struct") != 0) {
		/* Connect 3.9 lists the fields of every schema it renames. */
		snprintf(errbuf, errlen, "Cannot list fields on non-struct type");
		return TX_ERR;
	}
	if (t->name != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(d->schema, "name");
		if (cJSON_AddStringToObject(d->schema, "name", t->name) == NULL)
			return TX_ERR_NOMEM;
	}
	if (t->version != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(d->schema, "version");
		if (cJSON_AddNumberToObject(d->schema, "version",
		                            (double)strtol(t->version, NULL, 10)) == NULL)
			return TX_ERR_NOMEM;
	}
	return TX_OK;
}

const struct tx_ops txshape_set_schema_ops = {
    .name = "SetSchemaMetadata",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Sets the name and/or version of the key's or value's schema.",
    .props = "schema.name, schema.version",
    .init = sm_init,
    .apply = sm_apply,
    .free = free,
};
