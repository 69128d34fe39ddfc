/* convert: Connect's JsonConverter, StringConverter and ByteArrayConverter. */
#include "convert.h"

#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static const struct {
	enum converter_kind kind;
	const char *full, *simple, *alias;
} classes[] = {
	{CONV_JSON, "org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json"},
	{CONV_STRING, "org.apache.kafka.connect.storage.StringConverter", "StringConverter",
	 "String"},
	{CONV_BYTEARRAY, "org.apache.kafka.connect.converters.ByteArrayConverter",
	 "ByteArrayConverter", "ByteArray"},
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

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid; on
 * invalid, *skip is the length of the maximal subpart to replace with one
 * U+FFFD (Unicode's recommended practice, which Java's decoder follows). */
static size_t utf8_seq(const unsigned char *s, size_t avail, size_t *skip)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xBF;
	size_t need;

	*skip = 1;
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF)
		need = 2;
	else if (b >= 0xE0 && b <= 0xEF)
		need = 3;
	else if (b >= 0xF0 && b <= 0xF4)
		need = 4;
	else
		return 0;
	if (b == 0xE0)
		lo = 0xA0;
	else if (b == 0xED)
		hi = 0x9F;
	else if (b == 0xF0)
		lo = 0x90;
	else if (b == 0xF4)
		hi = 0x8F;
	for (size_t i = 1; i < need; i++) {
		if (i >= avail || s[i] < lo || s[i] > hi) {
			*skip = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	return need;
}

size_t convert_json_string_max(size_t len)
{
	/* Worst case: every byte becomes \u00XX (6) or U+FFFD (3). */
	return len * 6 + 2;
}

size_t convert_json_string(char *dst, const char *src, size_t len, uint64_t *replaced)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;

	*d++ = '"';
	while (i < len) {
		unsigned char c = s[i];
		size_t n, skip, run = i;

		/* The common case: a run of printable ASCII, copied at once. */
		while (run < len && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			memcpy(d, s + i, run - i);
			d += run - i;
			i = run;
			continue;
		}
		if (c < 0x80) {
			*d++ = '\\';
			switch (c) {
			case '"': *d++ = '"'; break;
			case '\\': *d++ = '\\'; break;
			case '\b': *d++ = 'b'; break;
			case '\f': *d++ = 'f'; break;
			case '\n': *d++ = 'n'; break;
			case '\r': *d++ = 'r'; break;
			case '\t': *d++ = 't'; break;
			default:
				memcpy(d, "u00", 3);
				d[3] = hex[c >> 4];
				d[4] = hex[c & 15];
				d += 5;
			}
			i++;
			continue;
		}
		n = utf8_seq(s + i, len - i, &skip);
		if (n == 0) {
			memcpy(d, "\xEF\xBF\xBD", 3);
			d += 3;
			i += skip;
			(*replaced)++;
			continue;
		}
		memcpy(d, s + i, n);
		d += n;
		i += n;
	}
	*d++ = '"';
	return (size_t)(d - dst);
}

static const char string_envelope[] = "{\"schema\":{\"type\":\"string\",\"optional\":false},"
				      "\"payload\":";

static int json_string(const struct converter *c, const struct record_value *v, char **out,
		       size_t *len, uint64_t *replaced)
{
	size_t pre = c->schemas_enable ? sizeof(string_envelope) - 1 : 0;
	char *buf = malloc(pre + convert_json_string_max(v->len) + 1), *shrunk;

	if (buf == NULL)
		return -1;
	memcpy(buf, string_envelope, pre);
	*len = pre + convert_json_string(buf + pre, v->bytes, v->len, replaced);
	if (c->schemas_enable)
		buf[(*len)++] = '}';
	/* The buffer sits in the producer queue until acknowledged: give back
	 * the worst-case room escaping did not use. */
	shrunk = realloc(buf, *len);
	*out = shrunk ? shrunk : buf;
	return 0;
}

static int json_struct(const struct converter *c, const struct record_value *v, char **out,
		       size_t *len)
{
	char *text = NULL;

	if (c->schemas_enable) {
		cJSON *env = cJSON_CreateObject();

		/* Borrow the source's schema and payload: references, not copies. */
		if (env == NULL ||
		    !cJSON_AddItemToObject(env, "schema", cJSON_CreateObjectReference(v->schema->child)) ||
		    !cJSON_AddItemToObject(env, "payload", cJSON_CreateObjectReference(v->payload->child))) {
			cJSON_Delete(env);
			return -1;
		}
		text = cJSON_PrintUnformatted(env);
		cJSON_Delete(env);
	} else {
		text = cJSON_PrintUnformatted(v->payload);
	}
	if (text == NULL)
		return -1;
	*out = text;
	*len = strlen(text);
	return 0;
}

/* Connect's Struct.toString(): Struct{a=1,b=x}, null fields left out. */
static int string_struct(const struct record_value *v, char **out, size_t *len)
{
	size_t cap = 64, n = 0;
	char *buf = malloc(cap);
	const cJSON *f;

	if (buf == NULL)
		return -1;
	n = (size_t)snprintf(buf, cap, "Struct{");
	cJSON_ArrayForEach(f, v->payload)
	{
		char *txt = cJSON_IsString(f) ? NULL : cJSON_PrintUnformatted(f);
		const char *val = cJSON_IsString(f) ? f->valuestring : txt;
		size_t need = strlen(f->string) + (val ? strlen(val) : 0) + 4;
		char *grown;

		if (cJSON_IsNull(f) || val == NULL) {
			free(txt);
			continue;
		}
		if (n + need >= cap) {
			cap = (n + need) * 2;
			grown = realloc(buf, cap);
			if (grown == NULL) {
				free(txt);
				free(buf);
				return -1;
			}
			buf = grown;
		}
		n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", n > 7 ? "," : "", f->string, val);
		free(txt);
	}
	buf[n++] = '}';
	*out = buf;
	*len = n;
	return 0;
}

static int copy_bytes(const struct record_value *v, char **out, size_t *len)
{
	char *buf = malloc(v->len ? v->len : 1);

	if (buf == NULL)
		return -1;
	memcpy(buf, v->bytes, v->len);
	*out = buf;
	*len = v->len;
	return 0;
}

int convert_value(const struct converter *c, const struct record_value *v, char **out,
		  size_t *len, uint64_t *replaced)
{
	*out = NULL;
	*len = 0;
	if (v->kind == VALUE_NULL)
		return 0;
	switch (c->kind) {
	case CONV_JSON:
		if (v->kind == VALUE_STRING)
			return json_string(c, v, out, len, replaced);
		return json_struct(c, v, out, len);
	case CONV_STRING:
		if (v->kind == VALUE_STRING)
			return copy_bytes(v, out, len);
		return string_struct(v, out, len);
	case CONV_BYTEARRAY:
		if (v->kind == VALUE_STRING)
			return copy_bytes(v, out, len);
		return -1;
	}
	return -1;
}
