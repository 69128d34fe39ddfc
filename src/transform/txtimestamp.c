/* txtimestamp: TimestampConverter$Key/$Value, as Connect 3.9's: a field (or
 * the whole key or value) holding a timestamp as a string (read and
 * written with format, a SimpleDateFormat pattern in UTC: txdate.h), a
 * Unix time (an int64 in unix.precision), or a Connect Date, Time or
 * Timestamp, converted to target.type. What the value is comes from its
 * schema (Timestamp, Date, Time by name, else string or int64), or without
 * one from the value (a string, or an integer as Unix time). A string that
 * does not match the pattern fails the record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transform/txdate.h"
#include "transform/txops.h"
#include "util/buf.h"

#define PURPOSE "converting timestamp formats"
#define LOGICAL "org.apache.kafka.connect.data."
#define MS_PER_DAY 86400000LL

enum tstype { T_STRING, T_UNIX, T_DATE, T_TIME, T_TIMESTAMP };
static const char *const tstype_names[] = {"string", "unix", "Date", "Time", "Timestamp"};

enum precision { P_SECONDS, P_MILLIS, P_MICROS, P_NANOS };
static const char *const precision_names[] = {"seconds", "milliseconds", "microseconds",
                                              "nanoseconds"};

struct tsconv {
	bool key, replace_null;
	const char *field;  /* "" for the whole value */
	const char *format; /* NULL: none */
	enum tstype target;
	enum precision precision;
};

static int one_of(const struct txconf *c, const char *key, const char *def,
                  const char *const *names, int n, int *out, char *errbuf, size_t errlen)
{
	const char *v = txconf_get(c, key);

	if (v == NULL && def == NULL)
		return txconf_error(c, key, errbuf, errlen,
		                    "Missing required configuration \"%s\" which has no default "
		                    "value.",
		                    key);
	for (int i = 0; i < n; i++) {
		if (strcmp(v ? v : def, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	{
		char list[128] = "";
		size_t at = 0;

		for (int i = 0; i < n; i++)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "",
			                       names[i]);
		return txconf_error(
		    c, key, errbuf, errlen,
		    "Invalid value %s for configuration %s: String must be one of: %s", v, key,
		    list);
	}
}

static int ts_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct tsconv *t = calloc(1, sizeof(*t));
	const char *rn;
	char why[256];
	int v = 0;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	t->field = txconf_get(c, "field") ? txconf_get(c, "field") : "";
	t->format = txconf_get(c, "format");
	if (t->format != NULL && strspn(t->format, " \t\r\n") == strlen(t->format))
		t->format = NULL; /* Utils.isBlank */
	if (one_of(c, "target.type", NULL, tstype_names, 5, &v, errbuf, errlen) != 0)
		return TX_ERR;
	t->target = (enum tstype)v;
	if (one_of(c, "unix.precision", "milliseconds", precision_names, 4, &v, errbuf, errlen))
		return TX_ERR;
	t->precision = (enum precision)v;
	rn = txconf_get(c, "replace.null.with.default");
	if (rn != NULL && strcasecmp(rn, "true") != 0 && strcasecmp(rn, "false") != 0)
		return txconf_error(c, "replace.null.with.default", errbuf, errlen,
		                    "Expected value to be either true or false");
	t->replace_null = rn == NULL || strcasecmp(rn, "true") == 0;
	if (t->target == T_STRING && t->format == NULL)
		return txconf_error(c, "format", errbuf, errlen,
		                    "TimestampConverter requires format option to be specified "
		                    "when using string timestamps");
	if (t->format != NULL && txdate_check(t->format, why, sizeof(why)) != 0)
		return txconf_error(c, "format", errbuf, errlen,
		                    "TimestampConverter requires a SimpleDateFormat-compatible "
		                    "pattern for string timestamps: %s: %s",
		                    t->format, why);
	return 0;
}

/* The target type's schema (typeSchema). */
static cJSON *type_schema(enum tstype ty, bool optional)
{
	static const char *const types[] = {"string", "int64", "int32", "int32", "int64"};
	cJSON *s = txschema_new(types[ty], optional);

	if (s == NULL || ty <= T_UNIX)
		return s;
	if (cJSON_AddStringToObject(s, "name",
	                            ty == T_DATE   ? LOGICAL "Date"
	                            : ty == T_TIME ? LOGICAL "Time"
	                                           : LOGICAL "Timestamp") == NULL ||
	    cJSON_AddNumberToObject(s, "version", 1) == NULL) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* timestampTypeFromSchema. */
static int type_from_schema(const cJSON *s, enum tstype *out, char *errbuf, size_t errlen)
{
	const char *name = txschema_str(s, "name"), *ty = txschema_type(s);

	if (name != NULL && strcmp(name, LOGICAL "Timestamp") == 0)
		*out = T_TIMESTAMP;
	else if (name != NULL && strcmp(name, LOGICAL "Date") == 0)
		*out = T_DATE;
	else if (name != NULL && strcmp(name, LOGICAL "Time") == 0)
		*out = T_TIME;
	else if (strcmp(ty, "string") == 0)
		*out = T_STRING;
	else if (strcmp(ty, "int64") == 0)
		*out = T_UNIX;
	else {
		snprintf(errbuf, errlen,
		         "Schema %s does not correspond to a known timestamp type format", ty);
		return TX_ERR;
	}
	return 0;
}

static int64_t sat_mul(int64_t v, int64_t m)
{
	if (v > INT64_MAX / m)
		return INT64_MAX;
	if (v < INT64_MIN / m)
		return INT64_MIN;
	return v * m;
}

/* toRaw: v of type from as ms since the epoch. */
static int to_ms(const struct tsconv *t, enum tstype from, const cJSON *v, int64_t *ms,
                 char *errbuf, size_t errlen)
{
	int64_t i;

	if (from == T_STRING) {
		if (!cJSON_IsString(v)) {
			snprintf(errbuf, errlen, "Expected string timestamp to be a String");
			return TX_ERR;
		}
		if (t->format == NULL) {
			snprintf(errbuf, errlen, "no format to parse a string timestamp with");
			return TX_ERR;
		}
		if (txdate_parse(t->format, v->valuestring, ms) != 0) {
			snprintf(
			    errbuf, errlen,
			    "Could not parse timestamp: value (%s) does not match pattern (%s)",
			    v->valuestring, t->format);
			return TX_ERR;
		}
		return 0;
	}
	if (txvalue_int(v, &i) != 0) {
		snprintf(errbuf, errlen, "Expected %s timestamp to be an integer",
		         tstype_names[from]);
		return TX_ERR;
	}
	if (from == T_DATE)
		*ms = sat_mul(i, MS_PER_DAY);
	else if (from != T_UNIX || t->precision == P_MILLIS)
		*ms = i;
	else
		*ms = t->precision == P_SECONDS  ? sat_mul(i, 1000)
		      : t->precision == P_MICROS ? i / 1000
		                                 : i / 1000000;
	return 0;
}

static int64_t floormod(int64_t a, int64_t b)
{
	int64_t r = a % b;

	return r < 0 ? r + b : r;
}

/* toType: ms as the target type. */
static cJSON *from_ms(const struct tsconv *t, int64_t ms)
{
	struct buf o;
	char *text = NULL;
	cJSON *r;

	switch (t->target) {
	case T_STRING:
		buf_init(&o, 1024);
		txdate_format(t->format, ms, true, &o);
		if (buf_take(&o, &text, NULL) != 0)
			return NULL;
		r = cJSON_CreateString(text);
		free(text);
		return r;
	case T_UNIX:
		return txvalue_new_int(t->precision == P_SECONDS  ? ms / 1000
		                       : t->precision == P_MILLIS ? ms
		                       : t->precision == P_MICROS ? sat_mul(ms, 1000)
		                                                  : sat_mul(ms, 1000000));
	case T_DATE:
		return txvalue_new_int((ms - floormod(ms, MS_PER_DAY)) / MS_PER_DAY);
	case T_TIME:
		return txvalue_new_int(floormod(ms, MS_PER_DAY));
	default:
		return txvalue_new_int(ms);
	}
}

/* convertTimestamp: v (NULL or null: null) of type from, in *out. */
static int convert(const struct tsconv *t, enum tstype from, const cJSON *v, cJSON **out,
                   char *errbuf, size_t errlen)
{
	int64_t ms;
	int rc;

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if ((rc = to_ms(t, from, v, &ms, errbuf, errlen)) != 0)
		return rc;
	return (*out = from_ms(t, ms)) != NULL ? 0 : TX_ERR_NOMEM;
}

/* inferTimestampType, for a value without a schema. */
static int infer(const cJSON *v, enum tstype *out, char *errbuf, size_t errlen)
{
	int64_t i;

	if (cJSON_IsString(v))
		*out = T_STRING;
	else if (txvalue_int(v, &i) == 0)
		*out = T_UNIX;
	else {
		snprintf(errbuf, errlen,
		         "TimestampConverter does not support %s objects as timestamps",
		         txschema_java_class(NULL, v));
		return TX_ERR;
	}
	return 0;
}

static int schemaless(const struct tsconv *t, struct txdata *d, char *errbuf, size_t errlen)
{
	const cJSON *old = d->payload;
	enum tstype from;
	cJSON *v;
	int rc;

	if (*t->field != '\0' && !txrec_is_null(d)) {
		if (!cJSON_IsObject(d->payload)) {
			snprintf(errbuf, errlen,
			         "Only Map objects supported in absence of schema for [" PURPOSE
			         "], found: %s",
			         txschema_java_class(NULL, d->payload));
			return TX_ERR;
		}
		old = cJSON_GetObjectItemCaseSensitive(d->payload, t->field);
	}
	v = NULL;
	if (old != NULL && !cJSON_IsNull(old) &&
	    ((rc = infer(old, &from, errbuf, errlen)) != 0 ||
	     (rc = convert(t, from, old, &v, errbuf, errlen)) != 0))
		return rc;
	if (*t->field == '\0' || txrec_is_null(d)) {
		txrec_set(d, NULL, v);
		return TX_OK;
	}
	if (v == NULL && (v = cJSON_CreateNull()) == NULL)
		return TX_ERR_NOMEM;
	/* HashMap.put: a name already there keeps its place. */
	if (old != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(d->payload, t->field, v);
	else
		cJSON_AddItemToObject(d->payload, t->field, v);
	return TX_OK;
}

static int whole(const struct tsconv *t, struct txdata *d, char *errbuf, size_t errlen)
{
	enum tstype from;
	cJSON *s, *v;
	int rc;

	if ((rc = type_from_schema(d->schema, &from, errbuf, errlen)) != 0 ||
	    (rc = convert(t, from, d->payload, &v, errbuf, errlen)) != 0)
		return rc;
	if ((s = type_schema(t->target, txschema_optional(d->schema))) == NULL) {
		cJSON_Delete(v);
		return TX_ERR_NOMEM;
	}
	txrec_set(d, s, v);
	return TX_OK;
}

/* The new schema of field f: the target's for the converted field. */
static cJSON *field_schema(const struct tsconv *t, const cJSON *f)
{
	if (strcmp(txschema_str(f, "field"), t->field) == 0)
		return type_schema(t->target, txschema_optional(f));
	return txschema_of_field(f);
}

/* One field of the struct into schema and payload. */
static int one_field(const struct tsconv *t, const cJSON *f, const cJSON *old, cJSON *schema,
                     cJSON *payload, char *errbuf, size_t errlen)
{
	const char *name = txschema_str(f, "field");
	bool ours = strcmp(name, t->field) == 0;
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(f, "default");
	enum tstype from;
	cJSON *fs, *v = NULL;
	int rc = 0;

	if (t->replace_null && (old == NULL || cJSON_IsNull(old)) && def != NULL)
		old = def;
	if ((fs = field_schema(t, f)) == NULL)
		return TX_ERR_NOMEM;
	if (ours && ((rc = type_from_schema(f, &from, errbuf, errlen)) != 0 ||
	             (rc = convert(t, from, old, &v, errbuf, errlen)) != 0))
		goto fail;
	if (!ours && old != NULL && !cJSON_IsNull(old) &&
	    (v = cJSON_Duplicate(old, true)) == NULL) {
		rc = TX_ERR_NOMEM;
		goto fail;
	}
	if (v == NULL && !txschema_optional(fs)) {
		snprintf(errbuf, errlen,
		         "Invalid value: null used for required field: \"%s\", schema type: %s",
		         name, txschema_str(fs, "type"));
		rc = TX_ERR;
		goto fail;
	}
	if (txschema_add_field(schema, name, fs) != 0) {
		cJSON_Delete(v);
		return TX_ERR_NOMEM;
	}
	if (v != NULL)
		cJSON_AddItemToObject(payload, name, v);
	return 0;
fail:
	cJSON_Delete(fs);
	return rc;
}

static int in_struct(const struct tsconv *t, struct txdata *d, char *errbuf, size_t errlen)
{
	cJSON *schema = NULL, *payload = NULL;
	const cJSON *f;
	bool null = txrec_is_null(d);
	int rc = TX_ERR_NOMEM;

	if (strcmp(txschema_type(d->schema), "struct") != 0 ||
	    (!null && !cJSON_IsObject(d->payload))) {
		snprintf(errbuf, errlen,
		         "Only Struct objects supported for [" PURPOSE "], found: %s",
		         txschema_java_class(d->schema, d->payload));
		return TX_ERR;
	}
	if ((schema = txschema_struct_from(d->schema)) == NULL ||
	    (payload = cJSON_CreateObject()) == NULL)
		goto fail;
	if (txschema_optional(d->schema))
		cJSON_ReplaceItemInObjectCaseSensitive(schema, "optional", cJSON_CreateTrue());
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
	{
		const char *name = txschema_str(f, "field");

		if (name == NULL)
			continue;
		/* A null struct gets the new schema; no field is converted. */
		if (null)
			rc = txschema_add_field(schema, name, field_schema(t, f)) != 0
			         ? TX_ERR_NOMEM
			         : 0;
		else
			rc = one_field(t, f, cJSON_GetObjectItemCaseSensitive(d->payload, name),
			               schema, payload, errbuf, errlen);
		if (rc != 0)
			goto fail;
	}
	if (null) {
		cJSON_Delete(payload);
		payload = NULL;
	}
	rc = TX_OK;
fail:
	return txrec_finish(d, schema, payload, rc);
}

static int ts_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct tsconv *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (d->schema == NULL)
		return schemaless(t, d, errbuf, errlen);
	if (*t->field == '\0')
		return whole(t, d, errbuf, errlen);
	return in_struct(t, d, errbuf, errlen);
}

const struct tx_ops txtimestamp_ops = {
    .name = "TimestampConverter",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Converts a timestamp field (or the whole value) between a string, Unix time "
           "and Connect's Date, Time and Timestamp.",
    .props = "field (empty: the whole value), target.type=string|unix|Date|Time|Timestamp, "
             "format (SimpleDateFormat, UTC; letters yMdHkKhmsSaEZX), unix.precision "
             "(milliseconds; seconds, microseconds, nanoseconds), replace.null.with.default",
    .init = ts_init,
    .apply = ts_apply,
    .free = free,
};
