/* offsets_doc: KIP-875's offsets document; see offsets_doc.h. */
#include "offsets/offsets_doc.h"

#include "util/jsonspan.h"
#include "offsets/offsets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char offsets_doc_shape[] = "the body must be {\"offsets\":[{\"partition\":"
                                 "{...},\"offset\":{...}},...]} (an offset may be null)";

/* The length of the JSON string token at s (from its opening quote to its
 * closing one, inclusive), or 0. */
static size_t string_token(const char *s)
{
	size_t i = 1;

	if (s[0] != '"')
		return 0;
	for (; s[i] != '\0' && s[i] != '"'; i++)
		if (s[i] == '\\' && s[i + 1] != '\0')
			i++;
	return s[i] == '"' ? i + 1 : 0;
}

bool offsets_doc_own_key(const char *key, const char *name, const char **part, size_t *plen)
{
	size_t n = key[0] == '[' ? string_token(key + 1) : 0, klen = strlen(key);
	char *tok;
	cJSON *j;
	bool mine;

	if (n == 0 || key[1 + n] != ',' || key[klen - 1] != ']')
		return false;
	tok = strndup(key + 1, n);
	j = tok != NULL ? cJSON_Parse(tok) : NULL;
	mine = cJSON_IsString(j) && strcmp(j->valuestring, name) == 0;
	cJSON_Delete(j);
	free(tok);
	*part = key + 2 + n;
	*plen = klen - 3 - n;
	return mine;
}

static int cmp_member(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string != NULL ? x->string : "", y->string != NULL ? y->string : "");
}

/* A copy of partition with its members in name order (NULL when memory is
 * short): every source writes its partition's members so ({"protocol",
 * "table"}), and Connect compares partitions as maps, so a person's
 * {"table","protocol"} is the same partition, not another key. */
static cJSON *in_order(const cJSON *partition)
{
	cJSON *copy = cJSON_Duplicate(partition, true), **m = NULL, *c;
	size_t n = 0, k = 0;

	if (!cJSON_IsObject(copy))
		return copy;
	n = (size_t)cJSON_GetArraySize(copy);
	if (n < 2 || (m = calloc(n, sizeof(*m))) == NULL)
		return n < 2 ? copy : (cJSON_Delete(copy), NULL);
	cJSON_ArrayForEach(c, copy) m[k++] = c;
	qsort(m, n, sizeof(*m), cmp_member);
	for (k = 0; k < n; k++) {
		m[k]->prev = k > 0 ? m[k - 1] : m[n - 1]; /* cJSON: the head's prev is the tail */
		m[k]->next = k + 1 < n ? m[k + 1] : NULL;
	}
	copy->child = m[0];
	free(m);
	return copy;
}

/* partition's text with its members in name order (malloc'd), or NULL. */
static char *partition_text(const cJSON *partition)
{
	cJSON *o = in_order(partition);
	char *text = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	return text;
}

char *offsets_doc_key(const char *name, const cJSON *partition)
{
	cJSON *arr = cJSON_CreateArray();
	char *key = NULL;

	if (arr != NULL && cJSON_AddItemToArray(arr, cJSON_CreateString(name)) &&
	    cJSON_AddItemToArray(arr, in_order(partition)))
		key = cJSON_PrintUnformatted(arr);
	cJSON_Delete(arr);
	return key;
}

/* Built as text from the stored text: integers beyond 2^53 stay exact. */
int offsets_doc_print(const struct offsets *o, const char *name, char **json)
{
	size_t cap = 64, len = 0;
	char *out = malloc(cap);

	*json = NULL;
	if (out == NULL)
		return OFFSETS_DOC_ERR_NOMEM;
	len = (size_t)snprintf(out, cap, "{\"offsets\":[");
	for (size_t k = 0; k < offsets_count(o); k++) {
		const char *part, *val = offsets_value(o, k);
		size_t plen, need;
		char *grown;

		if (!offsets_doc_own_key(offsets_key(o, k), name, &part, &plen))
			continue;
		need = len + plen + strlen(val) + 40;
		if (need > cap) {
			grown = realloc(out, cap = need * 2);
			if (grown == NULL) {
				free(out);
				return OFFSETS_DOC_ERR_NOMEM;
			}
			out = grown;
		}
		len +=
		    (size_t)snprintf(out + len, cap - len, "%s{\"partition\":%.*s,\"offset\":%s}",
		                     out[len - 1] == '[' ? "" : ",", (int)plen, part, val);
	}
	snprintf(out + len, cap - len, "]}");
	*json = out;
	return 0;
}

/* True when text holds a NUL character: a byte, or a "\u0000" escape in a
 * string (a C string ends there: "app.log\u0000x" would be stored as
 * "app.log"). */
static bool has_nul(const char *text, size_t len)
{
	bool in_string = false;

	if (memchr(text, '\0', len) != NULL)
		return true;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '"') {
			in_string = !in_string;
		} else if (in_string && text[i] == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len &&
			    strncmp(text + i + 2, "0000", 4) == 0)
				return true;
			i++;
		}
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Refuses a partition named twice among v[0..n) (which one would win is a
 * guess: Connect takes the last, silently). Returns 0,
 * OFFSETS_DOC_ERR_VALUE with errbuf, or OFFSETS_DOC_ERR_NOMEM. */
static int once_each(const struct offsets_doc_entry *v, size_t n, char *errbuf, size_t errlen)
{
	char **p = calloc(n + 1, sizeof(*p));
	int rc = p != NULL ? 0 : OFFSETS_DOC_ERR_NOMEM;

	for (size_t k = 0; k < n && rc == 0; k++)
		if ((p[k] = partition_text(v[k].partition)) == NULL)
			rc = OFFSETS_DOC_ERR_NOMEM;
	if (rc == 0)
		qsort(p, n, sizeof(*p), cmp_str);
	for (size_t k = 1; k < n && rc == 0; k++)
		if (strcmp(p[k - 1], p[k]) == 0) {
			snprintf(
			    errbuf, errlen,
			    "the partition %.300s is named twice: which of its offsets is meant "
			    "is not clear (send it once)",
			    p[k]);
			rc = OFFSETS_DOC_ERR_VALUE;
		}
	for (size_t k = 0; k < n && p != NULL; k++)
		free(p[k]);
	free(p);
	return rc;
}

/* The name of a member that j, or an object inside it, holds twice (JSON
 * leaves it open which one counts: skiff's readers take the first, cJSON's
 * and Jackson's the last), or NULL. */
static const char *twice_in(const cJSON *j)
{
	const cJSON *a, *b;
	const char *t;

	cJSON_ArrayForEach(a, j)
	{
		if ((t = twice_in(a)) != NULL)
			return t;
		if (!cJSON_IsObject(j))
			continue;
		for (b = a->next; b != NULL; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return a->string;
	}
	return NULL;
}

int offsets_doc_entries(const char *text, size_t len, const cJSON *j,
                        struct offsets_doc_entry **out, size_t *n, char *errbuf, size_t errlen)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "offsets"), *e;
	const char *raw, *el, *off, *dup;
	size_t rlen, ellen, olen, cur = 0, k = 0;
	struct offsets_doc_entry *v;
	int rc;

	if (errlen > 0)
		errbuf[0] = '\0';
	while (len > 0 && (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r'))
		text++, len--;
	/* The raw key must be "offsets" too: a key spelt with escapes is
	 * refused rather than read differently by the two. */
	if (!cJSON_IsArray(arr) || !jsonspan_member(text, len, "offsets", &raw, &rlen))
		return OFFSETS_DOC_ERR_SHAPE;
	if (has_nul(text, len)) {
		snprintf(errbuf, errlen,
		         "a string holds \\u0000 (NUL), which no file name, table or offset holds: "
		         "it would be stored cut short there");
		return OFFSETS_DOC_ERR_VALUE;
	}
	*n = (size_t)cJSON_GetArraySize(arr);
	if ((v = calloc(*n + 1, sizeof(*v))) == NULL)
		return OFFSETS_DOC_ERR_NOMEM;
	cJSON_ArrayForEach(e, arr)
	{
		const cJSON *part = cJSON_GetObjectItemCaseSensitive(e, "partition");
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "offset");

		if (!jsonspan_array_next(raw, rlen, &cur, &el, &ellen) || !cJSON_IsObject(part) ||
		    !(cJSON_IsObject(o) || cJSON_IsNull(o)) ||
		    !jsonspan_member(el, ellen, "offset", &off, &olen)) {
			free(v);
			return OFFSETS_DOC_ERR_SHAPE;
		}
		if ((dup = twice_in(part)) != NULL || (dup = twice_in(o)) != NULL) {
			snprintf(errbuf, errlen,
			         "the member \"%.100s\" is named twice in %s: which of its values "
			         "is meant is not clear (send it once)",
			         dup, twice_in(part) != NULL ? "a partition" : "an offset");
			free(v);
			return OFFSETS_DOC_ERR_VALUE;
		}
		v[k].partition = part;
		v[k].offset = cJSON_IsObject(o) ? off : NULL;
		v[k++].olen = olen;
	}
	if ((rc = once_each(v, k, errbuf, errlen)) != 0) {
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}
