/* offsets_scan: documents and records checked piece by piece; see
 * offsets_scan.h. */
#include "offsets/offsets_scan.h"

#include "util/jsonspan.h"

#include <string.h>

/* The index after the whitespace at i (what cJSON skips: bytes up to 32). */
static size_t ws(const char *s, size_t n, size_t i)
{
	while (i < n && (unsigned char)s[i] <= 32)
		i++;
	return i;
}

/* True when [s, s+n) is the whole container whose walk stopped at cursor:
 * nothing but whitespace and the closing bracket after it. */
static bool closed(const char *s, size_t n, size_t cursor, char bracket)
{
	size_t i = ws(s, n, cursor == 0 ? 1 : cursor);

	return i < n && s[i] == bracket && ws(s, n, i + 1) == n;
}

/* The value spanning exactly [s, s+n) (whitespace after it allowed),
 * parsed; NULL when it does not parse or holds more. */
static cJSON *parse(const char *s, size_t n)
{
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(s, n, &end, 0);

	if (j != NULL && (end == NULL || ws(s, n, (size_t)(end - s)) != n)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

/* Checks one entry's shape: an object with "key" ["string",{...}] and
 * "value" an object (or null). */
static enum offsets_scan_bad shape(const cJSON *e, bool null_values)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");

	if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) != 2 ||
	    !cJSON_IsString(cJSON_GetArrayItem(k, 0)) || !cJSON_IsObject(cJSON_GetArrayItem(k, 1)))
		return OFFSETS_SCAN_BAD_KEY;
	if (!cJSON_IsObject(v) && !(null_values && cJSON_IsNull(v)))
		return OFFSETS_SCAN_BAD_VALUE;
	return OFFSETS_SCAN_OK;
}

/* Parses the elements of the array [s, s+n) one at a time. */
static bool entries(const char *s, size_t n, bool null_values, struct offsets_scan *out)
{
	size_t cur = 0, len;
	const char *e;

	while (jsonspan_array_next(s, n, &cur, &e, &len)) {
		cJSON *j = parse(e, len);
		enum offsets_scan_bad why;

		if (j == NULL)
			return false;
		why = cJSON_IsObject(j) ? shape(j, null_values) : OFFSETS_SCAN_BAD_KEY;
		cJSON_Delete(j);
		if (why != OFFSETS_SCAN_OK && out->bad < 0) {
			out->bad = out->nentries;
			out->why = why;
		}
		out->nentries++;
	}
	return closed(s, n, cur, ']');
}

bool offsets_scan(const char *text, size_t n, const char *const *names, size_t nnames,
                  bool null_values, struct offsets_scan *out)
{
	size_t start = ws(text, n, 0), cur = 0, klen, vlen;
	const char *s = text + start, *k, *v;
	bool seen_offsets = false; /* the first "offsets" is the one (as cJSON's) */

	memset(out, 0, sizeof(*out));
	out->bad = -1;
	n -= start;
	if (n == 0 || s[0] != '{')
		return false;
	while (jsonspan_member_next(s, n, &cur, &k, &klen, &v, &vlen)) {
		bool offsets = klen == 7 && memcmp(k, "offsets", 7) == 0 && !seen_offsets;
		cJSON *j = NULL;
		size_t i;

		seen_offsets = seen_offsets || offsets;
		if (offsets && v[0] == '[') {
			out->has_offsets = true;
			if (!entries(v, vlen, null_values, out))
				goto bad;
			continue;
		}
		if ((j = parse(v, vlen)) == NULL)
			goto bad;
		for (i = 0; i < nnames && i < OFFSETS_SCAN_MEMBERS; i++)
			if (strlen(names[i]) == klen && memcmp(names[i], k, klen) == 0)
				break;
		if (i < nnames && i < OFFSETS_SCAN_MEMBERS && out->member[i] == NULL) {
			out->member[i] = j;
			continue;
		}
		cJSON_Delete(j);
	}
	if (closed(s, n, cur, '}'))
		return true;
bad:
	offsets_scan_free(out);
	return false;
}

void offsets_scan_free(struct offsets_scan *out)
{
	for (size_t i = 0; i < OFFSETS_SCAN_MEMBERS; i++) {
		cJSON_Delete(out->member[i]);
		out->member[i] = NULL;
	}
}
