/* convert: Connect's JsonConverter, StringConverter and ByteArrayConverter.
 *
 * What Connect writes was settled against the real converters (Kafka 3.9.1,
 * Jackson 2.16, JDK 17) by tests/convert/compare.sh; the rules below are the
 * ones it found. */
#include "convert/convert.h"
#include "util/buf.h"

#include "convert/javafmt.h"
#include "core/source.h"
#include "util/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

static const struct {
	enum converter_kind kind;
	const char *full, *simple, *alias;
} classes[] = {
    {CONV_JSON, "org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json"},
    {CONV_STRING, "org.apache.kafka.connect.storage.StringConverter", "StringConverter", "String"},
    {CONV_BYTEARRAY, "org.apache.kafka.connect.converters.ByteArrayConverter", "ByteArrayConverter",
     "ByteArray"},
};

int convert_resolve(const char *class_name, bool schemas_enable, struct converter *out)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcmp(class_name, classes[i].full) == 0 ||
		    strcmp(class_name, classes[i].simple) == 0 ||
		    strcmp(class_name, classes[i].alias) == 0) {
			out->kind = classes[i].kind;
			out->schemas_enable = schemas_enable;
			return 0;
		}
	}
	return -1;
}

const char *convert_class_name(const struct converter *c)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (classes[i].kind == c->kind)
			return classes[i].full;
	}
	return "?";
}

/* ---- JSON strings as Jackson writes them ------------------------------- */

static const char hex[] = "0123456789ABCDEF";

static char *put_unit(char *d, unsigned u)
{
	d[0] = '\\';
	d[1] = 'u';
	d[2] = hex[u >> 12 & 15];
	d[3] = hex[u >> 8 & 15];
	d[4] = hex[u >> 4 & 15];
	d[5] = hex[u & 15];
	return d + 6;
}

size_t convert_json_string_max(size_t len)
{
	/* Worst case: every byte becomes \u00XX (6); a 4-byte sequence becomes
	 * a surrogate pair (12), an invalid byte U+FFFD (3). */
	return len * 6 + 2;
}

/* An ASCII character Jackson escapes: " \ and the controls; DEL is not. */
static char *json_escape(char *d, unsigned char c)
{
	static const char from[] = "\"\\\b\f\n\r\t", to[] = "\"\\bfnrt";
	const char *at = c != '\0' ? strchr(from, c) : NULL;

	if (at == NULL)
		return put_unit(d, c);
	d[0] = '\\';
	d[1] = to[at - from];
	return d + 2;
}

/* The number of bytes at the start of s (len bytes) that JSON takes as
 * they are: ASCII other than the controls, " and \. Eight bytes a word (the
 * zero-byte tests of "Bit Twiddling Hacks"; a word with any byte to look at
 * goes byte by byte). */
static size_t plain_run(const unsigned char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	size_t i = 0;
	uint64_t w, q, b;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		if (((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) &
		     high) != 0)
			break;
	}
	while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
}

/* One character of s that plain_run() stopped at, as JSON at d. Returns the
 * end of what it wrote; *used is the number of bytes of s it took. */
static char *json_char(char *d, const unsigned char *s, size_t len, size_t *used,
                       uint64_t *replaced)
{
	size_t n, skip;

	*used = 1;
	if (s[0] < 0x80)
		return json_escape(d, s[0]);
	n = utf8_seq(s, len, &skip);
	if (n == 0) {
		memcpy(d, UTF8_REPLACEMENT, 3);
		*used = skip;
		(*replaced)++;
		return d + 3;
	}
	*used = n;
	if (n == 4) {
		/* Jackson writes a Java string's UTF-16 units: outside the BMP, a
		 * surrogate pair, which it escapes. */
		unsigned long cp = (unsigned long)(s[0] & 0x07) << 18 |
		                   (unsigned long)(s[1] & 0x3F) << 12 |
		                   (unsigned long)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);

		cp -= 0x10000;
		d = put_unit(d, 0xD800 + (unsigned)(cp >> 10));
		return put_unit(d, 0xDC00 + (unsigned)(cp & 0x3FF));
	}
	memcpy(d, s, n);
	return d + n;
}

/* The characters of convert_json_string() without its quotes: runs of plain
 * bytes copied whole. */
static char *json_chars(char *d, const char *src, size_t len, uint64_t *replaced)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, run, used;

	while (i < len) {
		run = plain_run(s + i, len - i);
		memcpy(d, s + i, run);
		d += run;
		i += run;
		if (i < len) {
			d = json_char(d, s + i, len - i, &used, replaced);
			i += used;
		}
	}
	return d;
}

size_t convert_json_string(char *dst, const char *src, size_t len, uint64_t *replaced)
{
	char *d = dst;

	*d++ = '"';
	d = json_chars(d, src, len, replaced);
	*d++ = '"';
	return (size_t)(d - dst);
}

/* A payload string is a C string in which C0 80 stands for U+0000 (see
 * convert_string_item). Returns the length of the run before the next one
 * (all of s when none); *nul tells whether one follows it. */
static size_t run_to_nul(const char *s, bool *nul)
{
	const char *at = strstr(s, "\xC0\x80");

	*nul = at != NULL;
	return at != NULL ? (size_t)(at - s) : strlen(s);
}

cJSON *convert_string_item(const char *text, size_t len, uint64_t *replaced)
{
	const unsigned char *s = (const unsigned char *)text;
	char *buf, *o;
	size_t i = 0, n, skip;
	cJSON *item;

	if (memchr(text, '\0', len) == NULL && utf8_valid(text, len) && text[len] == '\0')
		return cJSON_CreateString(text);
	/* Each byte becomes at most three: U+FFFD for one invalid byte. */
	if ((buf = malloc(len * 3 + 1)) == NULL)
		return NULL;
	for (o = buf; i < len; i += n) {
		n = utf8_seq(s + i, len - i, &skip);
		if (n == 0) {
			memcpy(o, UTF8_REPLACEMENT, 3);
			o += 3;
			n = skip;
			(*replaced)++;
		} else if (s[i] == '\0') {
			memcpy(o, "\xC0\x80", 2);
			o += 2;
		} else {
			memcpy(o, s + i, n);
			o += n;
		}
	}
	*o = '\0';
	item = cJSON_CreateString(buf);
	free(buf);
	return item;
}

/* ---- output -------------------------------------------------------------
 * Every converter writes into a util/buf capped at CONVERT_MAX_BYTES. */

static void put_json_string(struct buf *o, const char *s, size_t n, uint64_t *replaced)
{
	char *d = buf_room(o, convert_json_string_max(n));

	if (d != NULL)
		buf_commit(o, convert_json_string(d, s, n, replaced));
}

/* The text of a Java String made from n bytes of s: invalid UTF-8 replaced;
 * well-formed runs copied whole. */
static void put_java_text(struct buf *o, const char *s, size_t n, uint64_t *replaced)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, ok, skip;

	while (i < n) {
		ok = utf8_valid_prefix(s + i, n - i);
		buf_add(o, s + i, ok);
		i += ok;
		if (i < n) {
			(void)utf8_seq(u + i, n - i, &skip);
			buf_add(o, UTF8_REPLACEMENT, 3);
			(*replaced)++;
			i += skip;
		}
	}
}

/* A payload's C string as JSON: C0 80 is U+0000 (convert_string_item). */
static void put_json_cstring(struct buf *o, const char *s, uint64_t *replaced)
{
	size_t n;
	bool nul = true;
	char *d;

	buf_addz(o, "\"");
	while (nul) {
		n = run_to_nul(s, &nul);
		if ((d = buf_room(o, convert_json_string_max(n))) != NULL)
			buf_commit(o, (size_t)(json_chars(d, s, n, replaced) - d));
		buf_addz(o, nul ? "\\u0000" : "\"");
		s += n + (nul ? 2 : 0);
	}
}

/* A payload's C string as the Java String's text: C0 80 is a NUL byte. */
static void put_java_cstring(struct buf *o, const char *s, uint64_t *replaced)
{
	size_t n;
	bool nul = true;

	while (nul) {
		n = run_to_nul(s, &nul);
		put_java_text(o, s, n, replaced);
		buf_add(o, "", nul ? 1 : 0);
		s += n + (nul ? 2 : 0);
	}
}

/* An integer member: raw JSON text is exact; a cJSON number only below 2^53.
 * Returns 0 and *v, or -1 when v holds no integer. */
static int int_value(const cJSON *j, long long *v)
{
	char *end;

	if (cJSON_IsRaw(j) && j->valuestring != NULL) {
		*v = strtoll(j->valuestring, &end, 10);
		return end != j->valuestring && *end == '\0' ? 0 : -1;
	}
	if (cJSON_IsNumber(j) && j->valuedouble == floor(j->valuedouble) &&
	    j->valuedouble >= -9223372036854775808.0 && j->valuedouble < 9223372036854775808.0) {
		*v = (long long)j->valuedouble;
		return 0;
	}
	return -1;
}

/* Double.toString / Float.toString and Date.toString, from javafmt. */
static void put_java_number(struct buf *o, double d, bool is_float)
{
	char buf[JAVAFMT_NUMBER_MAX];

	buf_add(o, buf, javafmt_number(d, is_float, buf, sizeof(buf)));
}

static void put_java_date(struct buf *o, long long ms)
{
	char buf[JAVAFMT_DATE_MAX];

	buf_add(o, buf, javafmt_date(ms, buf, sizeof(buf)));
}

/* ---- Connect schemas --------------------------------------------------- */

static const char *member_str(const cJSON *schema, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(schema, key);

	return cJSON_IsString(j) ? j->valuestring : "";
}

/* The schema's type as JsonConverter names it; Schema.Type's own names for
 * the floating types (float32, float64) are taken for "float", "double". */
static const char *type_of(const cJSON *schema)
{
	const char *t = member_str(schema, "type");

	if (strcmp(t, "float64") == 0)
		return "double";
	if (strcmp(t, "float32") == 0)
		return "float";
	return t;
}

/* What a schema's type means for writing a value: one look at its "type"
 * per value (rows are many; the schema's members are searched by name). */
enum vkind { VK_OTHER, VK_INT, VK_FLOAT, VK_DOUBLE, VK_STRUCT, VK_LIST };

static enum vkind vkind(const cJSON *schema)
{
	static const struct {
		const char *name;
		enum vkind kind;
	} kinds[] = {{"int8", VK_INT},      {"int16", VK_INT},   {"int32", VK_INT},
	             {"int64", VK_INT},     {"float", VK_FLOAT}, {"double", VK_DOUBLE},
	             {"struct", VK_STRUCT}, {"array", VK_LIST},  {"map", VK_LIST}};
	const char *t = type_of(schema);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (t[0] == kinds[i].name[0] && strcmp(t, kinds[i].name) == 0)
			return kinds[i].kind;
	return VK_OTHER;
}

/* Timestamp, Date or Time: a java.util.Date in a Struct. Returns 0 and *ms
 * since the epoch, or -1 for other schemas. */
static int date_ms(const cJSON *schema, const cJSON *v, long long *ms)
{
	const char *name = member_str(schema, "name");
	const char *pkg = "org.apache.kafka.connect.data.";

	if (strncmp(name, pkg, strlen(pkg)) != 0 || int_value(v, ms) != 0)
		return -1;
	name += strlen(pkg);
	if (strcmp(name, "Date") == 0 && *ms >= -106751991167LL && *ms <= 106751991167LL)
		*ms *= 86400000;
	else if (strcmp(name, "Timestamp") != 0 && strcmp(name, "Time") != 0)
		return -1;
	return 0;
}

/* A double in JSON: Jackson writes what JSON cannot carry as a string. */
static void put_json_double(struct buf *o, double d, bool is_float)
{
	bool quote = isnan(d) || isinf(d);

	buf_addz(o, quote ? "\"" : "");
	put_java_number(o, is_float ? (double)(float)d : d, is_float);
	buf_addz(o, quote ? "\"" : "");
}

static void put_any(struct buf *o, const cJSON *v, uint64_t *replaced);

static void put_members(struct buf *o, const cJSON *v, bool names, uint64_t *replaced)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, v)
	{
		if (c != v->child)
			buf_addz(o, ",");
		if (names) {
			put_json_string(o, c->string, strlen(c->string), replaced);
			buf_addz(o, ":");
		}
		put_any(o, c, replaced);
	}
}

/* Plain JSON, as Jackson writes it, for values without a schema. */
static void put_any(struct buf *o, const cJSON *v, uint64_t *replaced)
{
	long long i;
	char buf[32];

	if (cJSON_IsRaw(v)) {
		buf_addz(o, v->valuestring);
	} else if (cJSON_IsString(v)) {
		put_json_cstring(o, v->valuestring, replaced);
	} else if (cJSON_IsNumber(v) && fabs(v->valuedouble) < 9007199254740992.0 &&
	           int_value(v, &i) == 0) {
		buf_add(o, buf, (size_t)snprintf(buf, sizeof(buf), "%lld", i));
	} else if (cJSON_IsNumber(v)) {
		put_json_double(o, v->valuedouble, false);
	} else if (cJSON_IsArray(v)) {
		buf_addz(o, "[");
		put_members(o, v, false, replaced);
		buf_addz(o, "]");
	} else if (cJSON_IsObject(v)) {
		buf_addz(o, "{");
		put_members(o, v, true, replaced);
		buf_addz(o, "}");
	} else {
		buf_addz(o, cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : "null");
	}
}

static void put_json(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced);

/* Connect's schema members, in the order asJsonSchema() puts them. */
static const char *const schema_order[] = {
    "type", "items",   "keys", "values",     "fields",  "optional",
    "name", "version", "doc",  "parameters", "default", "field",
};
#define NORDER (sizeof(schema_order) / sizeof(schema_order[0]))

static void put_schema(struct buf *o, const cJSON *s, uint64_t *replaced);

static void put_schema_member(struct buf *o, const cJSON *s, const cJSON *m, uint64_t *replaced)
{
	const char *k = m->string;
	const cJSON *f;

	put_json_string(o, k, strlen(k), replaced);
	buf_addz(o, ":");
	if (strcmp(k, "type") == 0 && cJSON_IsString(m)) {
		put_json_string(o, type_of(s), strlen(type_of(s)), replaced);
	} else if (strcmp(k, "items") == 0 || strcmp(k, "keys") == 0 || strcmp(k, "values") == 0) {
		put_schema(o, m, replaced);
	} else if (strcmp(k, "default") == 0) {
		put_json(o, s, m, replaced);
	} else if (strcmp(k, "fields") == 0 && cJSON_IsArray(m)) {
		buf_addz(o, "[");
		cJSON_ArrayForEach(f, m)
		{
			buf_addz(o, f == m->child ? "" : ",");
			put_schema(o, f, replaced);
		}
		buf_addz(o, "]");
	} else {
		put_any(o, m, replaced);
	}
}

/* A schema as JsonConverter.asJsonSchema() writes it: its members in
 * Connect's order, whatever the order the source built them in; "optional"
 * always present; members Connect does not know last, as given. */
static void put_schema(struct buf *o, const cJSON *s, uint64_t *replaced)
{
	const cJSON *m;
	bool first = true;

	if (!cJSON_IsObject(s)) {
		put_any(o, s, replaced);
		return;
	}
	buf_addz(o, "{");
	for (size_t k = 0; k <= NORDER; k++) {
		if (k < NORDER && strcmp(schema_order[k], "optional") == 0 &&
		    cJSON_GetObjectItemCaseSensitive(s, "optional") == NULL) {
			buf_addz(o, first ? "\"optional\":false" : ",\"optional\":false");
			first = false;
		}
		cJSON_ArrayForEach(m, s)
		{
			size_t at = 0;

			while (at < NORDER && strcmp(m->string, schema_order[at]) != 0)
				at++;
			if (at != k)
				continue;
			buf_addz(o, first ? "" : ",");
			first = false;
			put_schema_member(o, s, m, replaced);
		}
	}
	buf_addz(o, "}");
}

/* ---- values: JsonConverter's payload ----------------------------------- */

static void put_json_struct(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	const cJSON *f, *fields = cJSON_GetObjectItemCaseSensitive(schema, "fields");
	const cJSON *m = v->child;

	buf_addz(o, "{");
	cJSON_ArrayForEach(f, fields)
	{
		const char *name = member_str(f, "field");

		buf_addz(o, f == fields->child ? "" : ",");
		put_json_string(o, name, strlen(name), replaced);
		buf_addz(o, ":");
		/* A payload built in the schema's order has its member next. */
		if (m == NULL || m->string == NULL || strcmp(m->string, name) != 0)
			m = cJSON_GetObjectItemCaseSensitive(v, name);
		put_json(o, f, m, replaced);
		m = m != NULL ? m->next : NULL;
	}
	buf_addz(o, "}");
}

/* An array, or a map: an object when its keys are strings, else an array of
 * [key, value] pairs (the payload's shape says which). */
static void put_json_list(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
	const cJSON *keys = cJSON_GetObjectItemCaseSensitive(schema, "keys");
	const cJSON *values = cJSON_GetObjectItemCaseSensitive(schema, "values");
	const cJSON *c;

	buf_addz(o, cJSON_IsObject(v) ? "{" : "[");
	cJSON_ArrayForEach(c, v)
	{
		buf_addz(o, c == v->child ? "" : ",");
		if (cJSON_IsObject(v)) {
			put_json_string(o, c->string, strlen(c->string), replaced);
			buf_addz(o, ":");
			put_json(o, values, c, replaced);
		} else if (items == NULL && cJSON_GetArraySize(c) == 2) {
			buf_addz(o, "[");
			put_json(o, keys, cJSON_GetArrayItem(c, 0), replaced);
			buf_addz(o, ",");
			put_json(o, values, cJSON_GetArrayItem(c, 1), replaced);
			buf_addz(o, "]");
		} else {
			put_json(o, items, c, replaced);
		}
	}
	buf_addz(o, cJSON_IsObject(v) ? "}" : "]");
}

/* v (NULL when absent) as JsonConverter.convertToJson() writes it for schema:
 * a null takes the schema's default (replace.null.with.default=true). */
static void put_json(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	enum vkind k = vkind(schema);
	const cJSON *def;
	long long i;
	char num[JAVAFMT_LONG_MAX];

	if (v == NULL || cJSON_IsNull(v)) {
		def = cJSON_GetObjectItemCaseSensitive(schema, "default");
		if (def != NULL && !cJSON_IsNull(def))
			put_json(o, schema, def, replaced);
		else
			buf_addz(o, "null");
	} else if (k == VK_INT && int_value(v, &i) == 0) {
		buf_add(o, num, javafmt_long(i, num));
	} else if ((k == VK_FLOAT || k == VK_DOUBLE) && cJSON_IsNumber(v)) {
		put_json_double(o, v->valuedouble, k == VK_FLOAT);
	} else if (k == VK_STRUCT && cJSON_IsObject(v)) {
		put_json_struct(o, schema, v, replaced);
	} else if (k == VK_LIST && (cJSON_IsArray(v) || cJSON_IsObject(v))) {
		put_json_list(o, schema, v, replaced);
	} else {
		put_any(o, v, replaced);
	}
}

/* ---- values: Struct.toString() for StringConverter --------------------- */

static void put_text(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced);

/* Struct{a=1,b=x}: fields in schema order, null fields left out. */
static void put_text_struct(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	const cJSON *f, *fields = cJSON_GetObjectItemCaseSensitive(schema, "fields");
	bool first = true;

	buf_addz(o, "Struct{");
	cJSON_ArrayForEach(f, fields)
	{
		const char *name = member_str(f, "field");
		const cJSON *fv = cJSON_GetObjectItemCaseSensitive(v, name);

		if (fv == NULL || cJSON_IsNull(fv))
			continue;
		buf_addz(o, first ? "" : ",");
		first = false;
		buf_addz(o, name);
		buf_addz(o, "=");
		put_text(o, f, fv, replaced);
	}
	buf_addz(o, "}");
}

/* A List's or Map's toString(): [a, b] and {k=v, k=v}. */
static void put_text_list(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
	const cJSON *values = cJSON_GetObjectItemCaseSensitive(schema, "values");
	const cJSON *c;

	buf_addz(o, cJSON_IsObject(v) ? "{" : "[");
	cJSON_ArrayForEach(c, v)
	{
		buf_addz(o, c == v->child ? "" : ", ");
		if (cJSON_IsObject(v)) {
			put_java_text(o, c->string, strlen(c->string), replaced);
			buf_addz(o, "=");
		}
		put_text(o, cJSON_IsObject(v) ? values : items, c, replaced);
	}
	buf_addz(o, cJSON_IsObject(v) ? "}" : "]");
}

/* v as String.valueOf() prints the Java object Connect holds for it. */
static void put_text(struct buf *o, const cJSON *schema, const cJSON *v, uint64_t *replaced)
{
	enum vkind k = vkind(schema);
	long long i;
	char num[JAVAFMT_LONG_MAX];

	if (date_ms(schema, v, &i) == 0) {
		put_java_date(o, i);
	} else if (k == VK_INT && int_value(v, &i) == 0) {
		buf_add(o, num, javafmt_long(i, num));
	} else if ((k == VK_FLOAT || k == VK_DOUBLE) && cJSON_IsNumber(v)) {
		put_java_number(o, v->valuedouble, k == VK_FLOAT);
	} else if (cJSON_IsString(v)) {
		/* For bytes, the base64 text: Connect prints a byte[]'s
		 * identity hash ("[B@1b6d3586"), which nobody can reproduce. */
		put_java_cstring(o, v->valuestring, replaced);
	} else if (k == VK_STRUCT && cJSON_IsObject(v)) {
		put_text_struct(o, schema, v, replaced);
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		put_text_list(o, schema, v, replaced);
	} else {
		put_any(o, v, replaced);
	}
}

/* ---- converters -------------------------------------------------------- */

static const char string_envelope[] = "{\"schema\":{\"type\":\"string\",\"optional\":false},"
                                      "\"payload\":";

/* JsonConverter's bytes for v, appended to o. */
static void json_render(const struct converter *c, const struct record_value *v, struct buf *o,
                        uint64_t *replaced)
{
	if (c->schemas_enable && v->kind == VALUE_STRING) {
		buf_addz(o, string_envelope);
	} else if (c->schemas_enable && v->schema_json != NULL) {
		buf_addz(o, "{\"schema\":");
		buf_addz(o, v->schema_json);
		buf_addz(o, ",\"payload\":");
	} else if (c->schemas_enable) {
		buf_addz(o, "{\"schema\":");
		put_schema(o, v->schema, replaced);
		buf_addz(o, ",\"payload\":");
	}
	if (v->kind == VALUE_STRING &&
	    plain_run((const unsigned char *)v->bytes, v->len) == v->len) {
		/* The common line: nothing to escape, copied whole. */
		buf_addz(o, "\"");
		buf_add(o, v->bytes, v->len);
		buf_addz(o, "\"");
	} else if (v->kind == VALUE_STRING) {
		put_json_string(o, v->bytes, v->len, replaced);
	} else if (v->kind == VALUE_JSON) {
		buf_add(o, v->bytes, v->len);
	} else {
		put_json(o, v->schema, v->payload, replaced);
	}
	if (c->schemas_enable)
		buf_addz(o, "}");
}

char *convert_schema_json(const cJSON *schema)
{
	struct buf o;
	uint64_t replaced = 0;
	char *text = NULL;

	buf_init(&o, CONVERT_MAX_BYTES);
	put_schema(&o, schema, &replaced);
	return buf_take(&o, &text, NULL) == 0 ? text : NULL; /* NUL-terminated */
}

/* StringConverter: the UTF-8 of the Java String, which for a line is the
 * line itself unless it held invalid UTF-8; appended to o. */
static void string_render(const struct record_value *v, struct buf *o, uint64_t *replaced)
{
	if (v->kind == VALUE_STRING)
		put_java_text(o, v->bytes, v->len, replaced);
	else
		put_text(o, v->schema, v->payload, replaced);
}

/* True when c writes v as null: a null value, and for StringConverter a
 * null payload whatever its schema. */
static bool is_null(const struct converter *c, const struct record_value *v)
{
	return v->kind == VALUE_NULL || (c->kind == CONV_STRING && v->kind == VALUE_STRUCT &&
	                                 (v->payload == NULL || cJSON_IsNull(v->payload)));
}

/* True when v's own bytes are what c writes for it. */
static bool as_is(const struct converter *c, const struct record_value *v)
{
	if ((v->kind != VALUE_STRING && v->kind != VALUE_JSON) || v->len > CONVERT_MAX_BYTES)
		return false;
	if (v->kind == VALUE_JSON)
		return c->kind == CONV_JSON && !c->schemas_enable;
	return c->kind == CONV_BYTEARRAY ||
	       (c->kind == CONV_STRING && utf8_valid_prefix(v->bytes, v->len) == v->len);
}

/* Appends what c writes for v (not null, not as_is) to o. Returns 0 or a
 * CONVERT_ERR_*. */
static int render(const struct converter *c, const struct record_value *v, struct buf *o,
                  uint64_t *replaced)
{
	if (c->kind == CONV_JSON)
		json_render(c, v, o, replaced);
	else if (c->kind == CONV_STRING && v->kind != VALUE_JSON)
		string_render(v, o, replaced);
	else
		/* Connect rejects a STRING value here (DataException); skiff
		 * passes a line's bytes through unchanged, on purpose (as_is).
		 * VALUE_JSON is for JsonConverter only (source.h). */
		return CONVERT_ERR_SHAPE;
	return buf_err(o) == 0 ? 0 : CONVERT_ERR_NOMEM;
}

int convert_value(const struct converter *c, const struct record_value *v, char **out, size_t *len,
                  uint64_t *replaced)
{
	struct buf o;
	int rc;

	*out = NULL;
	*len = 0;
	if (is_null(c, v))
		return 0;
	buf_init(&o, CONVERT_MAX_BYTES);
	if (as_is(c, v)) {
		/* One allocation of the exact size: buf would grow by doubling. */
		if ((*out = malloc(v->len + 1)) == NULL)
			return CONVERT_ERR_NOMEM;
		memcpy(*out, v->bytes, v->len);
		*len = v->len;
		return 0;
	}
	/* buf_take shrinks a buffer much larger than its content: librdkafka
	 * may hold it queued for long. */
	if ((rc = render(c, v, &o, replaced)) != 0 || buf_take(&o, out, len) != 0) {
		buf_free(&o);
		return rc != 0 ? rc : CONVERT_ERR_NOMEM;
	}
	return 0;
}

int convert_value_view(const struct converter *c, const struct record_value *v, struct buf *scratch,
                       const char **out, size_t *len, uint64_t *replaced)
{
	int rc;

	*out = NULL;
	*len = 0;
	if (is_null(c, v))
		return 0;
	if (as_is(c, v)) {
		*out = v->bytes;
		*len = v->len;
		return 0;
	}
	buf_reset(scratch);
	if ((rc = render(c, v, scratch, replaced)) != 0)
		return rc;
	*out = buf_ptr(scratch);
	*len = buf_len(scratch);
	return 0;
}
