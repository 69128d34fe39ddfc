/* txfields: ReplaceField$Key/$Value and MaskField$Key/$Value, as Connect's,
 * on a struct with a schema. A null key or value passes unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"

/* ---- ReplaceField ---------------------------------------------------------- */

struct replace {
	bool key;
	const char *exclude, *include, *renames; /* the conf's lists, or "" */
};

/* The i-th rename "from:to" of t; returns 0 when there is none. */
static int rename_item(const char *renames, size_t i, const char **from, size_t *fl,
                       const char **to, size_t *tl)
{
	const char *it, *colon;
	size_t n = txconf_list_item(renames, i, &it);

	if (n == 0)
		return 0;
	colon = memchr(it, ':', n);
	if (colon == NULL || memchr(colon + 1, ':', n - (size_t)(colon + 1 - it)) != NULL)
		return -1;
	*from = it;
	*fl = (size_t)(colon - it);
	*to = colon + 1;
	*tl = n - *fl - 1;
	return 1;
}

static int rf_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct replace *t = calloc(1, sizeof(*t));
	const char *f, *to, *it;
	size_t fl, tl, n;
	int rc;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	/* Connect still reads the names it had before 3.0 (blacklist,
	 * whitelist) when the new ones are not set. */
	t->exclude =
	    txconf_get(c, "exclude") ? txconf_get(c, "exclude") : txconf_get(c, "blacklist");
	t->include =
	    txconf_get(c, "include") ? txconf_get(c, "include") : txconf_get(c, "whitelist");
	t->renames = txconf_get(c, "renames");
	t->exclude = t->exclude ? t->exclude : "";
	t->include = t->include ? t->include : "";
	t->renames = t->renames ? t->renames : "";
	for (size_t i = 0; (rc = rename_item(t->renames, i, &f, &fl, &to, &tl)) != 0; i++) {
		if (rc < 0) {
			n = txconf_list_item(t->renames, i, &it);
			return txconf_error(c, "renames", errbuf, errlen,
			                    "Invalid rename mapping: %.*s", (int)n, it);
		}
	}
	return 0;
}

static bool kept(const struct replace *t, const char *name)
{
	const char *it;

	return !txconf_list_has(t->exclude, name) &&
	       (txconf_list_item(t->include, 0, &it) == 0 || txconf_list_has(t->include, name));
}

/* The new name of field name (name itself when not renamed), in out. */
static void renamed(const struct replace *t, const char *name, char *out, size_t len)
{
	const char *f, *to;
	size_t fl, tl;

	snprintf(out, len, "%s", name);
	for (size_t i = 0; rename_item(t->renames, i, &f, &fl, &to, &tl) > 0; i++)
		if (fl == strlen(name) && memcmp(f, name, fl) == 0)
			snprintf(out, len, "%.*s", (int)tl, to);
}

static int rf_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct replace *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	cJSON *schema = NULL, *payload = NULL, *f;
	int rc;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (txrec_is_null(d))
		return TX_OK;
	if ((rc = txrec_require_struct(d, "field replacement", errbuf, errlen)) != 0)
		return rc;
	if ((schema = txschema_struct_from(d->schema)) == NULL ||
	    (payload = cJSON_CreateObject()) == NULL)
		goto nomem;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
	{
		const char *name = txschema_str(f, "field");
		char to[256];
		cJSON *v;

		if (name == NULL || !kept(t, name))
			continue;
		renamed(t, name, to, sizeof(to));
		if (txschema_add_field(schema, to, txschema_of_field(f)) != 0)
			goto nomem;
		if ((v = cJSON_DetachItemFromObjectCaseSensitive(d->payload, name)) != NULL)
			cJSON_AddItemToObject(payload, to, v);
	}
	return txrec_finish(d, schema, payload, TX_OK);
nomem:
	return txrec_finish(d, schema, payload, TX_ERR_NOMEM);
}

const struct tx_ops txfields_replace_ops = {
    .name = "ReplaceField",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Keeps, drops and renames fields of a struct key or value.",
    .props = "exclude (or blacklist), include (or whitelist), renames=from:to,...",
    .init = rf_init,
    .apply = rf_apply,
    .free = free,
};

/* ---- MaskField ------------------------------------------------------------- */

struct mask {
	bool key;
	const char *fields, *replacement; /* replacement NULL: the type's empty value */
};

static int mf_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct mask *t = calloc(1, sizeof(*t));

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	if (txconf_require(c, "fields", &t->fields, errbuf, errlen) != 0)
		return TX_ERR;
	t->replacement = txconf_get(c, "replacement");
	if (t->replacement != NULL && *t->replacement == '\0')
		return txconf_error(c, "replacement", errbuf, errlen, "String must be non-empty");
	return 0;
}

/* The empty value Connect masks a field of schema fs with. */
static cJSON *empty_value(const cJSON *fs)
{
	const char *t = txschema_type(fs);

	if (strcmp(t, "boolean") == 0)
		return cJSON_CreateFalse();
	if (strcmp(t, "string") == 0)
		return cJSON_CreateString("");
	if (strcmp(t, "float") == 0 || strcmp(t, "double") == 0)
		return cJSON_CreateNumber(0);
	if (strncmp(t, "int", 3) == 0)
		return txvalue_new_int(0);
	if (strcmp(t, "array") == 0)
		return cJSON_CreateArray();
	if (strcmp(t, "map") == 0 || strcmp(t, "struct") == 0)
		return cJSON_CreateObject();
	return NULL;
}

/* The replacement text as a value of fs's type. */
static int replaced_value(const struct mask *t, const cJSON *fs, cJSON **out, char *errbuf,
                          size_t errlen)
{
	const char *ty = txschema_type(fs);
	char *end;

	*out = NULL;
	if (strcmp(ty, "string") == 0) {
		*out = cJSON_CreateString(t->replacement);
	} else if (strncmp(ty, "int", 3) == 0 && txschema_str(fs, "name") == NULL) {
		long long v = strtoll(t->replacement, &end, 10);

		if (*end != '\0' || end == t->replacement) {
			snprintf(errbuf, errlen, "Unable to convert %s (%s) to number",
			         t->replacement, txschema_java_class(fs, fs));
			return TX_ERR;
		}
		*out = txvalue_new_int(v);
	} else if (strcmp(ty, "float") == 0 || strcmp(ty, "double") == 0) {
		double v = strtod(t->replacement, &end);

		if (*end != '\0' || end == t->replacement) {
			snprintf(errbuf, errlen, "Unable to convert %s (%s) to number",
			         t->replacement, txschema_java_class(fs, fs));
			return TX_ERR;
		}
		*out = cJSON_CreateNumber(v);
	} else {
		snprintf(errbuf, errlen, "Cannot mask value of type %s with custom replacement.",
		         txschema_java_class(fs, fs));
		return TX_ERR;
	}
	return *out != NULL ? 0 : TX_ERR_NOMEM;
}

static int mf_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct mask *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	const cJSON *fs;
	int rc;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (txrec_is_null(d))
		return TX_OK;
	if ((rc = txrec_require_struct(d, "mask fields", errbuf, errlen)) != 0)
		return rc;
	/* Connect walks the schema's fields: a listed name the schema does
	 * not have is no error. */
	cJSON_ArrayForEach(fs, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
	{
		const char *name = txschema_str(fs, "field");
		cJSON *v = NULL, *old;

		if (name == NULL || !txconf_list_has(t->fields, name))
			continue;
		old = cJSON_GetObjectItemCaseSensitive(d->payload, name);
		if (old == NULL || cJSON_IsNull(old))
			continue;
		if (t->replacement != NULL && (rc = replaced_value(t, fs, &v, errbuf, errlen)) != 0)
			return rc;
		if (t->replacement == NULL && (v = empty_value(fs)) == NULL) {
			snprintf(errbuf, errlen, "Cannot mask value of type: %s",
			         txschema_java_class(fs, old));
			return TX_ERR;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(d->payload, name, v);
	}
	return TX_OK;
}

const struct tx_ops txfields_mask_ops = {
    .name = "MaskField",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Replaces fields of a struct with their type's empty value, or a replacement.",
    .props = "fields, replacement (optional; for string and numeric fields)",
    .init = mf_init,
    .apply = mf_apply,
    .free = free,
};
