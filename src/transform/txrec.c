/* txrec: a record in Connect's data model while transforms run (txrec.h). */
#include "transform/txrec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "transform/txops.h"

int txrec_load(struct txrec *t, const struct record *r)
{
	memset(t, 0, sizeof(*t));
	t->key.src = &r->key;
	t->value.src = &r->value;
	t->timestamp_ms = r->timestamp_ms;
	if (txrec_set_topic(t, r->topic ? r->topic : "") != 0)
		return -1;
	for (size_t i = 0; i < r->nheaders; i++)
		if (txrec_add_header(t, r->headers[i].name, r->headers[i].value,
		                     r->headers[i].len) != 0)
			return -1;
	return 0;
}

/* A line as Connect holds it: a STRING schema and the decoded text. */
static int take_line(struct txdata *d)
{
	uint64_t replaced = 0;

	d->schema = txschema_new("string", false);
	d->payload = convert_string_item(d->src->bytes, d->src->len, &replaced);
	return d->schema != NULL && d->payload != NULL ? 0 : -1;
}

int txrec_take(struct txdata *d)
{
	if (d->taken)
		return 0;
	d->taken = true;
	switch (d->src->kind) {
	case VALUE_NULL:
		return 0;
	case VALUE_STRING:
		return take_line(d);
	case VALUE_JSON:
		return -1; /* never here: a source hands it only when no transform runs */
	case VALUE_STRUCT:
		if (d->src->schema != NULL &&
		    (d->schema = cJSON_Duplicate(d->src->schema, true)) == NULL)
			return -1;
		if (d->src->payload != NULL &&
		    (d->payload = cJSON_Duplicate(d->src->payload, true)) == NULL)
			return -1;
		return 0;
	}
	return 0;
}

void txrec_set(struct txdata *d, cJSON *schema, cJSON *payload)
{
	cJSON_Delete(d->schema);
	cJSON_Delete(d->payload);
	d->taken = true;
	d->schema = schema;
	d->payload = payload;
}

int txrec_finish(struct txdata *d, cJSON *schema, cJSON *payload, int rc)
{
	if (rc == 0) {
		txrec_set(d, schema, payload);
		return 0;
	}
	cJSON_Delete(schema);
	cJSON_Delete(payload);
	return rc;
}

bool txrec_is_null(const struct txdata *d)
{
	if (!d->taken)
		return d->src->kind == VALUE_NULL;
	return d->payload == NULL || cJSON_IsNull(d->payload);
}

int txrec_add_header(struct txrec *t, const char *name, const char *value, size_t len)
{
	struct txheader *h;

	if (t->nheaders == TXREC_MAX_HEADERS)
		return TXREC_ERR_HEADERS;
	h = &t->headers[t->nheaders];
	h->name = strdup(name);
	h->value = value != NULL ? malloc(len + 1) : NULL;
	h->len = len;
	if (h->name == NULL || (value != NULL && h->value == NULL)) {
		free(h->name);
		free(h->value);
		return TXREC_ERR_NOMEM;
	}
	if (value != NULL) {
		memcpy(h->value, value, len);
		h->value[len] = '\0';
	}
	t->nheaders++;
	return TXREC_OK;
}

void txrec_remove_header(struct txrec *t, size_t i)
{
	free(t->headers[i].name);
	free(t->headers[i].value);
	memmove(&t->headers[i], &t->headers[i + 1], (t->nheaders - i - 1) * sizeof(t->headers[0]));
	t->nheaders--;
}

int txrec_set_topic(struct txrec *t, const char *topic)
{
	char *n = strdup(topic);

	if (n == NULL)
		return -1;
	free(t->topic);
	t->topic = n;
	return 0;
}

static struct record_value view_data(const struct txdata *d)
{
	if (!d->taken)
		return *d->src;
	if (d->schema == NULL && d->payload == NULL)
		return (struct record_value){.kind = VALUE_NULL};
	return (struct record_value){
	    .kind = VALUE_STRUCT, .payload = d->payload, .schema = d->schema};
}

void txrec_view(const struct txrec *t, struct record *out, struct record_header *hdr, size_t *nhdr)
{
	out->topic = t->topic;
	out->key = view_data(&t->key);
	out->value = view_data(&t->value);
	out->timestamp_ms = t->timestamp_ms;
	for (size_t i = 0; i < t->nheaders; i++)
		hdr[i] = (struct record_header){t->headers[i].name, t->headers[i].value,
		                                t->headers[i].len};
	*nhdr = t->nheaders;
}

void txrec_release(struct txrec *t)
{
	free(t->topic);
	cJSON_Delete(t->key.schema);
	cJSON_Delete(t->key.payload);
	cJSON_Delete(t->value.schema);
	cJSON_Delete(t->value.payload);
	for (size_t i = 0; i < t->nheaders; i++) {
		free(t->headers[i].name);
		free(t->headers[i].value);
	}
	memset(t, 0, sizeof(*t));
}

/* ---- schemas --------------------------------------------------------------- */

const char *txschema_str(const cJSON *s, const char *member)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(s, member);

	return cJSON_IsString(j) ? j->valuestring : NULL;
}

const char *txschema_type(const cJSON *s)
{
	const char *t = txschema_str(s, "type");

	if (t == NULL)
		return "";
	if (strcmp(t, "float64") == 0)
		return "double";
	if (strcmp(t, "float32") == 0)
		return "float";
	return t;
}

bool txschema_optional(const cJSON *s)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "optional"));
}

cJSON *txschema_new(const char *type, bool optional)
{
	cJSON *s = cJSON_CreateObject();

	if (s == NULL || cJSON_AddStringToObject(s, "type", type) == NULL ||
	    cJSON_AddBoolToObject(s, "optional", optional) == NULL) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

cJSON *txschema_struct_from(const cJSON *s)
{
	static const char *const basics[] = {"name", "version", "doc", "parameters"};
	cJSON *n = txschema_new("struct", false);

	if (n == NULL || cJSON_AddArrayToObject(n, "fields") == NULL)
		goto fail;
	for (size_t i = 0; i < sizeof(basics) / sizeof(basics[0]); i++) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, basics[i]);
		cJSON *c;

		if (m == NULL || cJSON_IsNull(m))
			continue;
		if ((c = cJSON_Duplicate(m, true)) == NULL)
			goto fail;
		cJSON_AddItemToObject(n, basics[i], c);
	}
	return n;
fail:
	cJSON_Delete(n);
	return NULL;
}

int txschema_add_field(cJSON *s, const char *name, cJSON *fs)
{
	cJSON *fields = cJSON_GetObjectItemCaseSensitive(s, "fields");

	cJSON_DeleteItemFromObjectCaseSensitive(fs, "field");
	if (fields == NULL || cJSON_AddStringToObject(fs, "field", name) == NULL) {
		cJSON_Delete(fs);
		return -1;
	}
	cJSON_AddItemToArray(fields, fs);
	return 0;
}

const cJSON *txschema_field(const cJSON *s, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(s, "fields"))
	{
		const char *n = txschema_str(f, "field");

		if (n != NULL && strcmp(n, name) == 0)
			return f;
	}
	return NULL;
}

cJSON *txschema_of_field(const cJSON *f)
{
	cJSON *c = cJSON_Duplicate(f, true);

	cJSON_DeleteItemFromObjectCaseSensitive(c, "field");
	return c;
}

const char *txschema_java_class(const cJSON *s, const cJSON *p)
{
	static const struct {
		const char *type, *cls;
	} map[] = {
	    {"struct", "org.apache.kafka.connect.data.Struct"},
	    {"string", "java.lang.String"},
	    {"int8", "java.lang.Byte"},
	    {"int16", "java.lang.Short"},
	    {"int32", "java.lang.Integer"},
	    {"int64", "java.lang.Long"},
	    {"float", "java.lang.Float"},
	    {"double", "java.lang.Double"},
	    {"boolean", "java.lang.Boolean"},
	    {"bytes", "[B"},
	    {"array", "java.util.ArrayList"},
	    {"map", "java.util.HashMap"},
	};
	const char *t = txschema_type(s);

	if (p == NULL || cJSON_IsNull(p))
		return "null";
	if (txschema_str(s, "name") != NULL &&
	    strncmp(txschema_str(s, "name"), "org.apache.kafka.connect.data.", 30) == 0 &&
	    strcmp(t, "bytes") != 0)
		return "java.util.Date";
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].type, t) == 0)
			return map[i].cls;
	if (cJSON_IsString(p))
		return "java.lang.String";
	if (cJSON_IsObject(p))
		return "java.util.HashMap";
	return "java.lang.Object";
}

int txvalue_int(const cJSON *p, int64_t *v)
{
	char *end;

	if (cJSON_IsRaw(p) && p->valuestring != NULL) {
		long long x = strtoll(p->valuestring, &end, 10);

		if (end == p->valuestring || *end != '\0')
			return -1;
		*v = x;
		return 0;
	}
	if (cJSON_IsNumber(p) && p->valuedouble == floor(p->valuedouble) &&
	    fabs(p->valuedouble) < 9223372036854775807.0) {
		*v = (int64_t)p->valuedouble;
		return 0;
	}
	return -1;
}

cJSON *txvalue_new_int(int64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRId64, v);
	return cJSON_CreateRaw(num);
}

int txrec_require_struct(struct txdata *d, const char *purpose, char *errbuf, size_t errlen)
{
	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (d->schema != NULL && strcmp(txschema_type(d->schema), "struct") == 0 &&
	    cJSON_IsObject(d->payload))
		return 0;
	snprintf(errbuf, errlen, "Only Struct objects supported for [%s], found: %s", purpose,
	         txschema_java_class(d->schema, d->payload));
	return TX_ERR;
}

const char *txrec_strerror(int err)
{
	switch (err) {
	case TXREC_OK:
		return "no error";
	case TXREC_ERR_NOMEM:
		return "out of memory";
	case TXREC_ERR_HEADERS:
		return "too many headers";
	default:
		return "unknown error";
	}
}
