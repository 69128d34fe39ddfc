/* txcast: Cast$Key/$Value, as Connect 3.9's: fields of a struct (or map), or
 * the whole key or value, cast to int8..int64, float32, float64, boolean or
 * string, with Java's conversions: a number narrowed as Java's byteValue(),
 * intValue() ... do (wrapping, a floating value truncated and saturated), a
 * string parsed as Integer.parseInt, Double.parseDouble, Boolean.parseBoolean
 * do ("abc" to a number fails: "Value (abc) was out of range for requested
 * data type"), a number written as Long.toString or Double.toString, a
 * Timestamp, Date or Time as Values.dateFormatFor writes it (in the local
 * time zone, as a JVM's default), bytes as base64. Structs, arrays and maps
 * do not cast; bytes cast to string only. A Decimal is refused (Connect casts
 * its BigDecimal; skiff holds its bytes only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert/javafmt.h"
#include "transform/txdate.h"
#include "transform/txops.h"
#include "util/buf.h"

#define PURPOSE "cast types"
#define MAX_CASTS 64
#define SUPPORTED_IN "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
#define SUPPORTED_OUT "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"

/* Connect's output types, and their names in a schema. */
enum ctype { C_INT8, C_INT16, C_INT32, C_INT64, C_FLOAT32, C_FLOAT64, C_BOOLEAN, C_STRING };
static const char *const ctype_names[] = {"int8",  "int16",  "int32",   "int64",
                                          "float", "double", "boolean", "string"};
static const char *const spec_names[] = {"INT8",    "INT16",   "INT32",   "INT64",
                                         "FLOAT32", "FLOAT64", "BOOLEAN", "STRING"};

struct cast {
	bool key, replace_null;
	bool whole;
	enum ctype whole_type;
	size_t n;
	char *names[MAX_CASTS];
	enum ctype types[MAX_CASTS];
};

static void cast_free(void *ctx)
{
	struct cast *t = ctx;

	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t);
}

/* Schema.Type.valueOf(name.toUpperCase()), checked as an output type. */
static int type_of(const struct txconf *c, const char *name, size_t len, enum ctype *out,
                   char *errbuf, size_t errlen)
{
	static const char *const other[] = {"BYTES", "ARRAY", "MAP", "STRUCT"};

	for (size_t i = 0; i < sizeof(spec_names) / sizeof(spec_names[0]); i++) {
		if (strlen(spec_names[i]) == len && strncasecmp(spec_names[i], name, len) == 0) {
			*out = (enum ctype)i;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (strlen(other[i]) == len && strncasecmp(other[i], name, len) == 0)
			return txconf_error(c, "spec", errbuf, errlen,
			                    "Cast transformation does not support casting to %s; "
			                    "supported types are " SUPPORTED_OUT,
			                    other[i]);
	return txconf_error(c, "spec", errbuf, errlen, "Invalid type found in casting spec: %.*s",
	                    (int)len, name);
}

static size_t trim(const char **s, size_t n)
{
	while (n > 0 && (**s == ' ' || **s == '\t'))
		(*s)++, n--;
	while (n > 0 && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
		n--;
	return n;
}

/* One item of spec: "field:type", or "type" for the whole value, split as
 * String.split(":") splits (trailing empty parts dropped). */
static int spec_item(struct cast *t, const struct txconf *c, const char *it, size_t n, char *errbuf,
                     size_t errlen)
{
	const char *part[3] = {it, NULL, NULL}, *name = it, *ty;
	size_t len[3] = {n, 0, 0}, np = 1, nl, tl;

	for (size_t i = 0; i < n && np < 3; i++) {
		if (it[i] != ':')
			continue;
		len[np - 1] = (size_t)(it + i - part[np - 1]);
		part[np] = it + i + 1;
		len[np] = n - i - 1;
		np++;
	}
	/* Past the second colon, only more colons: all empty parts. */
	for (size_t i = 0; np == 3 && i < len[2] && part[2][i] == ':'; i++)
		if (i + 1 == len[2])
			len[2] = 0;
	while (np > 1 && len[np - 1] == 0)
		np--;
	if (np > 2)
		return txconf_error(c, "spec", errbuf, errlen, "Invalid rename mapping: %.*s",
		                    (int)n, it);
	if (t->n == MAX_CASTS)
		return txconf_error(c, "spec", errbuf, errlen, "more than %d casts", MAX_CASTS);
	ty = part[np - 1];
	tl = trim(&ty, len[np - 1]);
	if (type_of(c, ty, tl, &t->types[t->n], errbuf, errlen) != 0)
		return TX_ERR;
	if (np == 1) {
		t->whole = true;
		t->whole_type = t->types[t->n];
		return 0;
	}
	nl = trim(&name, len[0]);
	if ((t->names[t->n] = strndup(name, nl)) == NULL)
		return TX_ERR_NOMEM;
	t->n++;
	return 0;
}

static int cast_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct cast *t = calloc(1, sizeof(*t));
	const char *spec, *it, *rn;
	size_t n, items = 0;
	int rc;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->key = c->key;
	rn = txconf_get(c, "replace.null.with.default");
	if (rn != NULL && strcasecmp(rn, "true") != 0 && strcasecmp(rn, "false") != 0)
		return txconf_error(c, "replace.null.with.default", errbuf, errlen,
		                    "Expected value to be either true or false");
	t->replace_null = rn == NULL || strcasecmp(rn, "true") == 0;
	if ((spec = txconf_get(c, "spec")) == NULL)
		return txconf_error(c, "spec", errbuf, errlen,
		                    "Missing required configuration \"spec\" which has no default "
		                    "value.");
	for (; (n = txconf_list_item(spec, items, &it)) > 0; items++)
		if ((rc = spec_item(t, c, it, n, errbuf, errlen)) != 0)
			return rc;
	if (items == 0)
		return txconf_error(c, "spec", errbuf, errlen,
		                    "Must specify at least one field to cast.");
	if (t->whole && items > 1)
		return txconf_error(
		    c, "spec", errbuf, errlen,
		    "Cast transformations that specify a type to cast the entire value "
		    "to may only specify a single cast in their spec");
	return 0;
}

/* ---- one value ------------------------------------------------------------- */

/* What Connect holds for a value: a Java Number (integral or not), Boolean,
 * String, byte[] or java.util.Date. */
struct jval {
	enum { J_INT, J_FLOAT, J_DOUBLE, J_BOOL, J_STRING, J_BYTES, J_DATE } kind;
	int64_t i; /* J_INT, J_DATE (ms) */
	double d;
	bool b;
	const char *s; /* J_STRING; J_BYTES: the base64 */
};

static int unsupported(const char *type, char *errbuf, size_t errlen)
{
	snprintf(errbuf, errlen,
	         "Cast transformation does not support casting from %s; supported types are "
	         "" SUPPORTED_IN,
	         type);
	return TX_ERR;
}

/* The value v of schema s (NULL: inferred from v, as ConnectSchema.schemaType
 * does for JsonConverter's schemaless values) as Java holds it. to_string:
 * the cast is to STRING (a logical type stays a Date). */
static int java_value(const cJSON *s, const cJSON *v, bool to_string, struct jval *j, char *errbuf,
                      size_t errlen)
{
	const char *ty = s ? txschema_type(s) : "", *name = s ? txschema_str(s, "name") : NULL;

	if (s == NULL)
		ty = cJSON_IsBool(v)              ? "boolean"
		     : cJSON_IsString(v)          ? "string"
		     : cJSON_IsObject(v)          ? "map"
		     : cJSON_IsArray(v)           ? "array"
		     : txvalue_int(v, &j->i) == 0 ? "int64"
		                                  : "double";
	if (strcmp(ty, "struct") == 0)
		return unsupported("STRUCT", errbuf, errlen);
	if (strcmp(ty, "array") == 0)
		return unsupported("ARRAY", errbuf, errlen);
	if (strcmp(ty, "map") == 0)
		return unsupported("MAP", errbuf, errlen);
	if (name != NULL && strcmp(name, "org.apache.kafka.connect.data.Decimal") == 0) {
		snprintf(errbuf, errlen, "skiff does not cast a Decimal");
		return TX_ERR;
	}
	if (strcmp(ty, "boolean") == 0 && cJSON_IsBool(v)) {
		j->kind = J_BOOL;
		j->b = cJSON_IsTrue(v);
	} else if ((strcmp(ty, "string") == 0 || strcmp(ty, "bytes") == 0) && cJSON_IsString(v)) {
		j->kind = ty[0] == 's' ? J_STRING : J_BYTES;
		j->s = v->valuestring;
	} else if (strncmp(ty, "int", 3) == 0 && txvalue_int(v, &j->i) == 0) {
		j->kind = J_INT;
		if (to_string && name != NULL &&
		    strncmp(name, "org.apache.kafka.connect.data.", 30) == 0) {
			j->kind = J_DATE;
			/* A Date is days; past 64 bits of ms, the end of time. */
			if (strcmp(name + 30, "Date") == 0 &&
			    __builtin_mul_overflow(j->i, 86400000, &j->i))
				j->i =
				    txvalue_int(v, &j->i) == 0 && j->i < 0 ? INT64_MIN : INT64_MAX;
		}
	} else if ((strcmp(ty, "float") == 0 || strcmp(ty, "double") == 0) &&
	           (cJSON_IsNumber(v) || cJSON_IsRaw(v))) {
		j->kind = ty[0] == 'f' ? J_FLOAT : J_DOUBLE;
		j->d = cJSON_IsRaw(v) ? strtod(v->valuestring, NULL) : v->valuedouble;
	} else {
		snprintf(errbuf, errlen,
		         "Cast transformation was passed a value that does not "
		         "match its schema");
		return TX_ERR;
	}
	return 0;
}

/* Java's (int)d, (long)d: NaN is 0, out of range saturates. */
static int64_t java_d2l(double d, int64_t min, int64_t max)
{
	if (isnan(d))
		return 0;
	if (d <= (double)min)
		return min;
	if (d >= (double)max)
		return max;
	return (int64_t)d;
}

/* Integer.parseInt and kin: an optional sign and decimal digits, in range. */
static int parse_int(const char *s, int64_t min, int64_t max, int64_t *v)
{
	const char *p = s + (*s == '+' || *s == '-');
	char *end;
	long long x;

	if (*p < '0' || *p > '9')
		return -1;
	x = strtoll(s, &end, 10);
	if (*end != '\0' || x < min || x > max || (x == max && strlen(p) > 19))
		return -1;
	*v = x;
	return 0;
}

/* Double.parseDouble: blanks around, a sign, NaN, Infinity, or a decimal
 * (or hexadecimal with p) number with an optional d/f suffix. */
static int parse_double(const char *s, bool single, double *v)
{
	char tmp[128], *end;
	size_t n;
	const char *p;

	while (*s != '\0' && (unsigned char)*s <= ' ')
		s++;
	n = strlen(s);
	while (n > 0 && (unsigned char)s[n - 1] <= ' ')
		n--;
	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	p = tmp + (*tmp == '+' || *tmp == '-');
	if (strcmp(p, "NaN") == 0 || strcmp(p, "Infinity") == 0) {
		*v = *p == 'N' ? NAN : (*tmp == '-' ? -INFINITY : INFINITY);
		return 0;
	}
	if (strchr("fFdD", tmp[n - 1]) != NULL && !(p[0] == '0' && (p[1] | 32) == 'x'))
		tmp[--n] = '\0';
	/* strtod takes what Java does not: inf, nan, a hex number without
	 * its binary exponent, leading blanks after the sign. */
	if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')) ||
	    ((p[0] == '0' && (p[1] | 32) == 'x') && strpbrk(p, "pP") == NULL))
		return -1;
	*v = single ? (double)strtof(tmp, &end) : strtod(tmp, &end);
	return *end == '\0' ? 0 : -1;
}

static const char *java_class(const struct jval *j)
{
	static const char *const names[] = {"java.lang.Long",   "java.lang.Float",
	                                    "java.lang.Double", "java.lang.Boolean",
	                                    "java.lang.String", "[B",
	                                    "java.util.Date"};
	return names[j->kind];
}

/* castToInt8 ... castToInt64. */
static int to_int(const struct jval *j, enum ctype ty, int64_t *out, char *errbuf, size_t errlen)
{
	static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
	static const int64_t hi[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
	int64_t v;

	switch (j->kind) {
	case J_INT:
	case J_DATE:
		v = j->i;
		break;
	case J_FLOAT:
	case J_DOUBLE:
		/* byteValue() and shortValue() narrow (int)d. */
		v = java_d2l(j->d, ty == C_INT64 ? INT64_MIN : INT32_MIN,
		             ty == C_INT64 ? INT64_MAX : INT32_MAX);
		break;
	case J_BOOL:
		v = j->b;
		break;
	case J_STRING:
		if (parse_int(j->s, lo[ty], hi[ty], &v) != 0) {
			snprintf(errbuf, errlen,
			         "Value (%s) was out of range for requested data type", j->s);
			return TX_ERR;
		}
		break;
	default:
		snprintf(errbuf, errlen, "Unexpected type in Cast transformation: class %s",
		         java_class(j));
		return TX_ERR;
	}
	*out = ty == C_INT8    ? (int8_t)v
	       : ty == C_INT16 ? (int16_t)v
	       : ty == C_INT32 ? (int32_t)v
	                       : v;
	return 0;
}

static int to_double(const struct jval *j, bool single, double *out, char *errbuf, size_t errlen)
{
	switch (j->kind) {
	case J_INT:
	case J_DATE:
		*out = single ? (double)(float)j->i : (double)j->i;
		return 0;
	case J_FLOAT:
	case J_DOUBLE:
		*out = single ? (double)(float)j->d : j->d;
		return 0;
	case J_BOOL:
		*out = j->b;
		return 0;
	case J_STRING:
		if (parse_double(j->s, single, out) == 0)
			return 0;
		snprintf(errbuf, errlen, "Value (%s) was out of range for requested data type",
		         j->s);
		return TX_ERR;
	default:
		snprintf(errbuf, errlen, "Unexpected type in Cast transformation: class %s",
		         java_class(j));
		return TX_ERR;
	}
}

/* castToString: value.toString(), a Date as Values.dateFormatFor, bytes as
 * base64 (which skiff already holds). */
static cJSON *to_string(const struct jval *j)
{
	char num[JAVAFMT_NUMBER_MAX];
	struct buf o;
	char *text = NULL;
	cJSON *r;

	switch (j->kind) {
	case J_INT:
		snprintf(num, sizeof(num), "%lld", (long long)j->i);
		return cJSON_CreateString(num);
	case J_FLOAT:
	case J_DOUBLE:
		javafmt_number(j->d, j->kind == J_FLOAT, num, sizeof(num));
		return cJSON_CreateString(num);
	case J_BOOL:
		return cJSON_CreateString(j->b ? "true" : "false");
	case J_STRING:
	case J_BYTES:
		return cJSON_CreateString(j->s);
	case J_DATE:
		break;
	}
	buf_init(&o, 256);
	txdate_format(j->i < 86400000        ? "HH:mm:ss.SSS'Z'"
	              : j->i % 86400000 == 0 ? "yyyy-MM-dd"
	                                     : "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
	              j->i, false, &o);
	if (buf_take(&o, &text, NULL) != 0)
		return NULL;
	r = cJSON_CreateString(text);
	free(text);
	return r;
}

/* A double of a value without a schema: Java's text, so that 5.0 stays 5.0
 * when written without a schema to say it is a double. */
static cJSON *schemaless_double(double d, bool single)
{
	char num[JAVAFMT_NUMBER_MAX];

	if (!isfinite(d))
		return cJSON_CreateNumber(d);
	javafmt_number(d, single, num, sizeof(num));
	return cJSON_CreateRaw(num);
}

/* castValueToType: v (not null) of schema s (NULL: none) cast to ty, in
 * *out (NULL for a null v). Returns 0, TX_ERR or TX_ERR_NOMEM. */
static int cast_value(const cJSON *s, const cJSON *v, enum ctype ty, cJSON **out, char *errbuf,
                      size_t errlen)
{
	struct jval j = {0};
	int64_t i;
	double d;
	int rc;

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if ((rc = java_value(s, v, ty == C_STRING, &j, errbuf, errlen)) != 0)
		return rc;
	if (ty <= C_INT64) {
		if ((rc = to_int(&j, ty, &i, errbuf, errlen)) != 0)
			return rc;
		*out = txvalue_new_int(i);
	} else if (ty == C_FLOAT32 || ty == C_FLOAT64) {
		if ((rc = to_double(&j, ty == C_FLOAT32, &d, errbuf, errlen)) != 0)
			return rc;
		*out = s == NULL ? schemaless_double(d, ty == C_FLOAT32) : cJSON_CreateNumber(d);
	} else if (ty == C_BOOLEAN) {
		if (j.kind == J_BYTES || j.kind == J_DATE) {
			snprintf(errbuf, errlen, "Unexpected type in Cast transformation: class %s",
			         java_class(&j));
			return TX_ERR;
		}
		*out =
		    cJSON_CreateBool(j.kind == J_STRING ? strcasecmp(j.s, "true") == 0
		                     : j.kind == J_BOOL ? j.b
		                     : j.kind == J_INT  ? j.i != 0
		                                        : java_d2l(j.d, INT64_MIN, INT64_MAX) != 0);
	} else {
		*out = to_string(&j);
	}
	return *out != NULL ? 0 : TX_ERR_NOMEM;
}

/* ---- the record ------------------------------------------------------------ */

static const enum ctype *cast_of(const struct cast *t, const char *name)
{
	/* The last setting of a field wins, as in Connect's HashMap. */
	for (size_t i = t->n; i-- > 0;)
		if (strcmp(t->names[i], name) == 0)
			return &t->types[i];
	return NULL;
}

/* The schema of a field (or the whole value) cast to ty from schema fs:
 * a new primitive schema (basics copied for a whole value), optional and
 * default as fs's. */
static int cast_schema(const cJSON *fs, enum ctype ty, bool whole, cJSON **out, char *errbuf,
                       size_t errlen)
{
	static const char *const basics[] = {"name", "version", "doc", "parameters"};
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(fs, "default");
	cJSON *s = txschema_new(ctype_names[ty], txschema_optional(fs)), *dv = NULL, *m;
	int rc;

	*out = NULL;
	for (size_t i = 0; whole && s != NULL && i < 4; i++) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(fs, basics[i]);

		if (b != NULL && !cJSON_IsNull(b)) {
			if ((m = cJSON_Duplicate(b, true)) == NULL)
				goto nomem;
			cJSON_AddItemToObject(s, basics[i], m);
		}
	}
	if (s == NULL)
		return TX_ERR_NOMEM;
	if (def != NULL && !cJSON_IsNull(def)) {
		if ((rc = cast_value(fs, def, ty, &dv, errbuf, errlen)) != 0) {
			cJSON_Delete(s);
			return rc;
		}
		cJSON_AddItemToObject(s, "default", dv);
	}
	*out = s;
	return 0;
nomem:
	cJSON_Delete(s);
	return TX_ERR_NOMEM;
}

static int schemaless(const struct cast *t, struct txdata *d, char *errbuf, size_t errlen)
{
	cJSON *v;
	int rc;

	if (t->whole) {
		if ((rc = cast_value(NULL, d->payload, t->whole_type, &v, errbuf, errlen)) != 0)
			return rc;
		txrec_set(d, NULL, v);
		return TX_OK;
	}
	if (!cJSON_IsObject(d->payload)) {
		snprintf(errbuf, errlen,
		         "Only Map objects supported in absence of schema for [" PURPOSE
		         "], found: %s",
		         txschema_java_class(NULL, d->payload));
		return TX_ERR;
	}
	for (size_t i = 0; i < t->n; i++) {
		const cJSON *old = cJSON_GetObjectItemCaseSensitive(d->payload, t->names[i]);

		if ((rc = cast_value(NULL, old, t->types[i], &v, errbuf, errlen)) != 0)
			return rc;
		if (v == NULL && (v = cJSON_CreateNull()) == NULL)
			return TX_ERR_NOMEM;
		/* HashMap.put: a name already there keeps its place. */
		if (old != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(d->payload, t->names[i], v);
		else
			cJSON_AddItemToObject(d->payload, t->names[i], v);
	}
	return TX_OK;
}

/* One field of the struct: its new schema into schema, its value into
 * payload. */
static int cast_field(const struct cast *t, const cJSON *f, const cJSON *old, cJSON *schema,
                      cJSON *payload, char *errbuf, size_t errlen)
{
	const char *name = txschema_str(f, "field");
	const enum ctype *ty = cast_of(t, name);
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(f, "default");
	cJSON *fs = NULL, *v = NULL;
	int rc;

	if (t->replace_null && (old == NULL || cJSON_IsNull(old)) && def != NULL)
		old = def; /* Struct.get(field) gives the default for a null */
	if (ty != NULL)
		rc = cast_schema(f, *ty, false, &fs, errbuf, errlen);
	else
		rc = (fs = txschema_of_field(f)) != NULL ? 0 : TX_ERR_NOMEM;
	if (rc == 0 && ty != NULL)
		rc = cast_value(f, old, *ty, &v, errbuf, errlen);
	else if (rc == 0 && old != NULL && !cJSON_IsNull(old))
		rc = (v = cJSON_Duplicate(old, true)) != NULL ? 0 : TX_ERR_NOMEM;
	if (rc == 0 && v == NULL && !txschema_optional(fs)) {
		snprintf(errbuf, errlen,
		         "Invalid value: null used for required field: \"%s\", schema type: %s",
		         name, txschema_str(fs, "type"));
		rc = TX_ERR;
	}
	if (rc != 0) {
		cJSON_Delete(fs);
		return rc;
	}
	if (txschema_add_field(schema, name, fs) != 0) {
		cJSON_Delete(v);
		return TX_ERR_NOMEM;
	}
	if (v != NULL)
		cJSON_AddItemToObject(payload, name, v);
	return 0;
}

static int with_schema(const struct cast *t, struct txdata *d, char *errbuf, size_t errlen)
{
	cJSON *schema = NULL, *payload = NULL;
	const cJSON *f, *def = cJSON_GetObjectItemCaseSensitive(d->schema, "default");
	int rc;

	if (t->whole) {
		if ((rc = cast_schema(d->schema, t->whole_type, true, &schema, errbuf, errlen)) !=
		        0 ||
		    (rc = cast_value(d->schema, d->payload, t->whole_type, &payload, errbuf,
		                     errlen)) != 0) {
			cJSON_Delete(schema);
			return rc;
		}
		txrec_set(d, schema, payload);
		return TX_OK;
	}
	if ((rc = txrec_require_struct(d, PURPOSE, errbuf, errlen)) != 0)
		return rc;
	if (def != NULL && !cJSON_IsNull(def))
		return unsupported("STRUCT", errbuf, errlen); /* casting the struct's default */
	if ((schema = txschema_struct_from(d->schema)) == NULL ||
	    (payload = cJSON_CreateObject()) == NULL) {
		rc = TX_ERR_NOMEM;
		goto fail;
	}
	if (txschema_optional(d->schema))
		cJSON_ReplaceItemInObjectCaseSensitive(schema, "optional", cJSON_CreateTrue());
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d->schema, "fields"))
	{
		const char *name = txschema_str(f, "field");

		if (name != NULL &&
		    (rc = cast_field(t, f, cJSON_GetObjectItemCaseSensitive(d->payload, name),
		                     schema, payload, errbuf, errlen)) != 0)
			goto fail;
	}
	rc = TX_OK;
fail:
	return txrec_finish(d, schema, payload, rc);
}

static int cast_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct cast *t = ctx;
	struct txdata *d = t->key ? &r->key : &r->value;

	if (txrec_take(d) != 0)
		return TX_ERR_NOMEM;
	if (txrec_is_null(d))
		return TX_OK;
	if (d->schema == NULL)
		return schemaless(t, d, errbuf, errlen);
	return with_schema(t, d, errbuf, errlen);
}

const struct tx_ops txcast_ops = {
    .name = "Cast",
    .pkg = "org.apache.kafka.connect.transforms",
    .variants = true,
    .doc = "Casts fields of a struct (or the whole key or value) to another primitive type; "
           "a value that does not convert fails the record.",
    .props = "spec=field:type,... or spec=type (int8, int16, int32, int64, float32, float64, "
             "boolean, string), replace.null.with.default (true)",
    .init = cast_init,
    .apply = cast_apply,
    .free = cast_free,
};
