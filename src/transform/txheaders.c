/* txheaders: InsertHeader, DropHeaders and HeaderFrom$Key/$Value, as
 * Connect's. Header values are written as Connect's default header
 * converter (SimpleHeaderConverter) writes them: a string as its UTF-8, a
 * number or boolean as its Java text, null as a null header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert/javafmt.h"
#include "transform/txops.h"

/* ---- InsertHeader ---------------------------------------------------------- */

struct insert_header {
	const char *name, *literal; /* the conf's */
};

static int ih_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct insert_header *t = calloc(1, sizeof(*t));

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	if (txconf_require(c, "header", &t->name, errbuf, errlen) != 0)
		return TX_ERR;
	t->literal = txconf_get(c, "value.literal");
	if (t->literal == NULL)
		return txconf_error(c, "value.literal", errbuf, errlen,
		                    "missing required property");
	return 0;
}

static int ih_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct insert_header *t = ctx;
	int rc = txrec_add_header(r, t->name, t->literal, strlen(t->literal));

	if (rc == TXREC_ERR_HEADERS)
		snprintf(errbuf, errlen, "more than %d headers", TXREC_MAX_HEADERS);
	return rc == TXREC_OK ? TX_OK : rc == TXREC_ERR_NOMEM ? TX_ERR_NOMEM : TX_ERR;
}

const struct tx_ops txheaders_insert_ops = {
    .name = "InsertHeader",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Adds a header with a literal value.",
    .props = "header, value.literal",
    .init = ih_init,
    .apply = ih_apply,
    .free = free,
};

/* ---- DropHeaders ----------------------------------------------------------- */

static int dh_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	const char *v;

	*ctx = NULL;
	if (txconf_require(c, "headers", &v, errbuf, errlen) != 0)
		return TX_ERR;
	*ctx = (void *)v;
	return 0;
}

static int dh_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	(void)errbuf, (void)errlen;
	for (size_t i = r->nheaders; i-- > 0;)
		if (txconf_list_has(ctx, r->headers[i].name))
			txrec_remove_header(r, i);
	return TX_OK;
}

static void no_free(void *ctx)
{
	(void)ctx;
}

const struct tx_ops txheaders_drop_ops = {
    .name = "DropHeaders",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Removes every header of the names listed.",
    .props = "headers",
    .init = dh_init,
    .apply = dh_apply,
    .free = no_free,
};

/* ---- HeaderFrom ------------------------------------------------------------ */

struct header_from {
	bool key, move;
	const char *fields, *headers;
};

static int hf_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct header_from *t = calloc(1, sizeof(*t));
	const char *op, *it;
	size_t nf = 0, nh = 0;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	if (txconf_require(c, "fields", &t->fields, errbuf, errlen) ||
	    txconf_require(c, "headers", &t->headers, errbuf, errlen) ||
	    txconf_require(c, "operation", &op, errbuf, errlen))
		return TX_ERR;
	if (strcasecmp(op, "move") != 0 && strcasecmp(op, "copy") != 0)
		return txconf_error(c, "operation", errbuf, errlen, "'%s' is not move or copy", op);
	t->move = strcasecmp(op, "move") == 0;
	while (txconf_list_item(t->fields, nf, &it) > 0)
		nf++;
	while (txconf_list_item(t->headers, nh, &it) > 0)
		nh++;
	if (nf != nh)
		return txconf_error(c, "headers", errbuf, errlen,
		                    "'fields' config must have the same number of elements as "
		                    "'headers' config.");
	return 0;
}

/* The header bytes SimpleHeaderConverter writes for a field value. Returns
 * 0 and *out (malloc'd; NULL for null), or TX_ERR for a type skiff does not
 * write. */
static int header_text(const cJSON *fs, const cJSON *v, char **out, char *errbuf, size_t errlen)
{
	const char *t = txschema_type(fs);
	char num[JAVAFMT_NUMBER_MAX];
	int64_t i;

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (txschema_str(fs, "name") == NULL && strncmp(t, "int", 3) == 0 &&
	    txvalue_int(v, &i) == 0) {
		snprintf(num, sizeof(num), "%lld", (long long)i);
		*out = strdup(num);
	} else if ((strcmp(t, "float") == 0 || strcmp(t, "double") == 0) && cJSON_IsNumber(v)) {
		num[javafmt_number(v->valuedouble, t[0] == 'f', num, sizeof(num) - 1)] = '\0';
		*out = strdup(num);
	} else if (strcmp(t, "boolean") == 0) {
		*out = strdup(cJSON_IsTrue(v) ? "true" : "false");
	} else if (strcmp(t, "string") == 0 && cJSON_IsString(v)) {
		*out = strdup(v->valuestring);
	} else {
		snprintf(errbuf, errlen, "skiff does not write a %s%s%s field as a header",
		         txschema_str(fs, "name") ? txschema_str(fs, "name") : "", t[0] ? " " : "",
		         t);
		return TX_ERR;
	}
	return *out != NULL ? 0 : TX_ERR_NOMEM;
}

/* The schema of d without the fields listed in t->fields. */
static int drop_fields(const struct header_from *t, struct txdata *d)
{
	cJSON *s = txschema_struct_from(d->schema), *f;

	if (s == NULL)
		return TX_ERR_NOMEM;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
	{
		const char *name = txschema_str(f, "field");
		cJSON *c;

		if (name == NULL || txconf_list_has(t->fields, name)) {
			if (name != NULL)
				cJSON_DeleteItemFromObjectCaseSensitive(d->payload, name);
			continue;
		}
		if ((c = cJSON_Duplicate(f, true)) == NULL) {
			cJSON_Delete(s);
			return TX_ERR_NOMEM;
		}
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(s, "fields"), c);
	}
	cJSON_Delete(d->schema);
	d->schema = s;
	return TX_OK;
}

static int hf_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct header_from *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	const char *fname, *hname;
	size_t fl, hl;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (d->schema == NULL || strcmp(txschema_type(d->schema), "struct") != 0 ||
	    !cJSON_IsObject(d->payload)) {
		snprintf(errbuf, errlen, "Only Struct objects supported for [header %s], found: %s",
		         t->move ? "move" : "copy", txschema_java_class(d->schema, d->payload));
		return TX_ERR;
	}
	for (size_t i = 0; (fl = txconf_list_item(t->fields, i, &fname)) > 0; i++) {
		char field[256], header[256], *text;
		const cJSON *fs;
		int rc;

		hl = txconf_list_item(t->headers, i, &hname);
		snprintf(field, sizeof(field), "%.*s", (int)fl, fname);
		snprintf(header, sizeof(header), "%.*s", (int)hl, hname);
		if ((fs = txschema_field(d->schema, field)) == NULL) {
			snprintf(errbuf, errlen, "%s is not a valid field name", field);
			return TX_ERR;
		}
		rc = header_text(fs, cJSON_GetObjectItemCaseSensitive(d->payload, field), &text,
		                 errbuf, errlen);
		if (rc != 0)
			return rc;
		rc = txrec_add_header(r, header, text, text ? strlen(text) : 0);
		free(text);
		if (rc != 0)
			return rc == TXREC_ERR_NOMEM
			           ? TX_ERR_NOMEM
			           : (snprintf(errbuf, errlen, "more than %d headers",
			                       TXREC_MAX_HEADERS),
			              TX_ERR);
	}
	return t->move ? drop_fields(t, d) : TX_OK;
}

const struct tx_ops txheaders_from_ops = {
    .name = "HeaderFrom",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Copies or moves fields of a struct key or value into headers.",
    .props = "fields, headers (as many), operation=copy|move",
    .init = hf_init,
    .apply = hf_apply,
    .free = free,
};
