/* txinsert: InsertField$Key/$Value, as Connect's InsertField: static,
 * topic, partition, offset and timestamp fields appended to a struct (with
 * a schema) or a map (without), in that order. A null key or value passes
 * unchanged. A field spec "name!" makes the field required, "name" and
 * "name?" optional. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"

#define PURPOSE "field insertion"

struct spec {
	char *name; /* NULL: not inserted */
	bool optional;
};

struct insert {
	bool key;
	struct spec topic, partition, offset, timestamp, stat;
	const char *static_value; /* the conf's; lives as long as the chain */
};

static int parse_spec(const struct txconf *c, const char *key, struct spec *s)
{
	const char *v = txconf_get(c, key);
	size_t n;

	if (v == NULL || *v == '\0')
		return 0;
	n = strlen(v);
	s->optional = v[n - 1] != '!';
	if (v[n - 1] == '!' || v[n - 1] == '?')
		n--;
	s->name = strndup(v, n);
	return s->name != NULL ? 0 : TX_ERR_NOMEM;
}

static void insert_free(void *ctx)
{
	struct insert *t = ctx;

	if (t == NULL)
		return;
	free(t->topic.name);
	free(t->partition.name);
	free(t->offset.name);
	free(t->timestamp.name);
	free(t->stat.name);
	free(t);
}

static int insert_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct insert *t = calloc(1, sizeof(*t));

	(void)errbuf, (void)errlen;
	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	t->static_value = txconf_get(c, "static.value");
	if (parse_spec(c, "topic.field", &t->topic) ||
	    parse_spec(c, "partition.field", &t->partition) ||
	    parse_spec(c, "offset.field", &t->offset) ||
	    parse_spec(c, "timestamp.field", &t->timestamp) ||
	    parse_spec(c, "static.field", &t->stat))
		return TX_ERR_NOMEM;
	return 0;
}

static cJSON *timestamp_schema(bool optional)
{
	cJSON *s = txschema_new("int64", optional);

	if (s != NULL && (cJSON_AddStringToObject(
	                      s, "name", "org.apache.kafka.connect.data.Timestamp") == NULL ||
	                  cJSON_AddNumberToObject(s, "version", 1) == NULL)) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* Adds the inserted fields' schemas to s, in Connect's order. */
static int add_fields(const struct insert *t, cJSON *s)
{
	if (t->topic.name &&
	    txschema_add_field(s, t->topic.name, txschema_new("string", t->topic.optional)))
		return -1;
	if (t->partition.name &&
	    txschema_add_field(s, t->partition.name, txschema_new("int32", t->partition.optional)))
		return -1;
	if (t->offset.name &&
	    txschema_add_field(s, t->offset.name, txschema_new("int64", t->offset.optional)))
		return -1;
	if (t->timestamp.name &&
	    txschema_add_field(s, t->timestamp.name, timestamp_schema(t->timestamp.optional)))
		return -1;
	if (t->stat.name &&
	    txschema_add_field(s, t->stat.name, txschema_new("string", t->stat.optional)))
		return -1;
	return 0;
}

/* Puts the inserted values into payload p (a struct's or a map's). */
static int add_values(const struct insert *t, const struct txrec *r, cJSON *p)
{
	cJSON *v;

	if (t->topic.name) {
		cJSON_DeleteItemFromObjectCaseSensitive(p, t->topic.name);
		if (cJSON_AddStringToObject(p, t->topic.name, r->topic) == NULL)
			return -1;
	}
	/* A source record has no Kafka partition or offset yet: Connect
	 * leaves the partition null and refuses the offset (below). */
	if (t->timestamp.name && r->timestamp_ms != 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(p, t->timestamp.name);
		if ((v = txvalue_new_int(r->timestamp_ms)) == NULL)
			return -1;
		cJSON_AddItemToObject(p, t->timestamp.name, v);
	}
	if (t->stat.name) {
		cJSON_DeleteItemFromObjectCaseSensitive(p, t->stat.name);
		v = t->static_value ? cJSON_CreateString(t->static_value) : cJSON_CreateNull();
		if (v == NULL)
			return -1;
		cJSON_AddItemToObject(p, t->stat.name, v);
	}
	return 0;
}

static int insert_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct insert *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;
	cJSON *schema = NULL, *f;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (txrec_is_null(d))
		return TX_OK;
	if (t->offset.name) {
		snprintf(errbuf, errlen,
		         "Only SinkRecord supported for [" PURPOSE "], found: "
		         "org.apache.kafka.connect.source.SourceRecord");
		return TX_ERR;
	}
	if (d->schema == NULL && !cJSON_IsObject(d->payload)) {
		snprintf(errbuf, errlen,
		         "Only Map objects supported in absence of schema for [" PURPOSE
		         "], found: %s",
		         txschema_java_class(NULL, d->payload));
		return TX_ERR;
	}
	if (d->schema != NULL && strcmp(txschema_type(d->schema), "struct") != 0) {
		snprintf(errbuf, errlen,
		         "Only Struct objects supported for [" PURPOSE "], found: %s",
		         txschema_java_class(d->schema, d->payload));
		return TX_ERR;
	}
	if (d->schema != NULL) {
		if ((schema = txschema_struct_from(d->schema)) == NULL)
			return TX_ERR_NOMEM;
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
		{
			cJSON *c = cJSON_Duplicate(f, true);

			if (c == NULL)
				goto nomem;
			cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(schema, "fields"), c);
		}
		if (add_fields(t, schema) != 0)
			goto nomem;
		cJSON_Delete(d->schema);
		d->schema = schema;
	}
	return add_values(t, r, d->payload) == 0 ? TX_OK : TX_ERR_NOMEM;
nomem:
	cJSON_Delete(schema);
	return TX_ERR_NOMEM;
}

const struct tx_ops txinsert_field_ops = {
    .name = "InsertField",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Adds fields to a struct key or value (a line must be hoisted first).",
    .props = "static.field, static.value, topic.field, timestamp.field, partition.field "
             "(null at a source), offset.field (refused at a source, as Connect does); "
             "NAME! required, NAME or NAME? optional",
    .init = insert_init,
    .apply = insert_apply,
    .free = insert_free,
};
