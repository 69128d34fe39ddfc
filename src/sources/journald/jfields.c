/* jfields: a journal entry's data as a Connect struct; see
 * jfields.h. */
#include "sources/journald/jfields.h"

#include "util/text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 64 /* journald refuses longer field names */

cJSON *jfields_schema(cJSON **fields)
{
	cJSON *s = cJSON_CreateObject();

	if (s == NULL || cJSON_AddStringToObject(s, "type", "struct") == NULL ||
	    (*fields = cJSON_AddArrayToObject(s, "fields")) == NULL ||
	    cJSON_AddBoolToObject(s, "optional", false) == NULL ||
	    cJSON_AddStringToObject(s, "name", "skiff.journal.Entry") == NULL) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* Appends {"type":type,"optional":true,"field":name} to fields. */
static int add_field(cJSON *fields, const char *name, const char *type)
{
	cJSON *f = cJSON_CreateObject();

	if (f == NULL || cJSON_AddStringToObject(f, "type", type) == NULL ||
	    cJSON_AddBoolToObject(f, "optional", true) == NULL ||
	    cJSON_AddStringToObject(f, "field", name) == NULL) {
		cJSON_Delete(f);
		return JFIELDS_ERR_NOMEM;
	}
	cJSON_AddItemToArray(fields, f);
	return JFIELDS_OK;
}

/* The value as a payload item: a string, or the base64 of bytes. */
static cJSON *value_item(const char *v, size_t len, bool *text)
{
	cJSON *item;
	char *s;

	*text = text_is_utf8(v, len);
	s = *text ? strndup(v, len) : text_base64(v, len);
	if (s == NULL)
		return NULL;
	item = cJSON_CreateString(s);
	free(s);
	return item;
}

int jfields_add(cJSON *payload, cJSON *fields, const void *data, size_t len)
{
	const char *d = data, *eq = memchr(d, '=', len);
	char name[NAME_MAX_LEN + 1];
	size_t nlen;
	cJSON *item;
	bool text;

	if (eq == NULL || eq == d || (nlen = (size_t)(eq - d)) > NAME_MAX_LEN)
		return JFIELDS_ERR_MALFORMED;
	memcpy(name, d, nlen);
	name[nlen] = '\0';
	if (cJSON_GetObjectItemCaseSensitive(payload, name) != NULL)
		return JFIELDS_REPEATED;
	item = value_item(eq + 1, len - nlen - 1, &text);
	if (item == NULL)
		return JFIELDS_ERR_NOMEM;
	if (add_field(fields, name, text ? "string" : "bytes") != 0) {
		cJSON_Delete(item);
		return JFIELDS_ERR_NOMEM;
	}
	cJSON_AddItemToObject(payload, name, item);
	return JFIELDS_OK;
}

int jfields_add_time(cJSON *payload, cJSON *fields, const char *name, uint64_t usec)
{
	char num[24];
	cJSON *item;

	snprintf(num, sizeof(num), "%" PRIu64, usec);
	item = cJSON_CreateRaw(num); /* exact beyond 2^53 */
	if (item == NULL)
		return JFIELDS_ERR_NOMEM;
	if (add_field(fields, name, "int64") != 0) {
		cJSON_Delete(item);
		return JFIELDS_ERR_NOMEM;
	}
	cJSON_AddItemToObject(payload, name, item);
	return JFIELDS_OK;
}

size_t jfields_cut(const char *v, size_t len, size_t cap)
{
	size_t n = cap;

	if (len <= cap)
		return len;
	/* v[n] is the first byte dropped: a continuation byte means the cut
	 * falls inside a character. Binary data may have no start byte near. */
	while (n > 0 && cap - n < 3 && ((unsigned char)v[n] & 0xC0) == 0x80)
		n--;
	return ((unsigned char)v[n] & 0xC0) == 0x80 ? cap : n;
}

const char *jfields_strerror(int err)
{
	switch (err) {
	case JFIELDS_OK:
		return "no error";
	case JFIELDS_REPEATED:
		return "repeated field";
	case JFIELDS_ERR_MALFORMED:
		return "malformed datum";
	case JFIELDS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}
