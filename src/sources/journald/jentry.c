/* jentry: a journal entry as a record. */
#include "sources/journald/jentry.h"

#include "sources/journald/journallib.h"
#include "sources/journald/jfields.h"
#include "sources/journald/jsrc.h"
#include "core/stats.h"

#include <stdlib.h>
#include <string.h>

/* The current entry's field data with every value cut to cap bytes. */
static size_t entry_size(struct jsrc *s, size_t cap)
{
	size_t len, name, total = 0;
	const void *d;
	const char *eq;

	SD_JOURNAL_FOREACH_DATA(s->j, d, len)
	{
		eq = memchr(d, '=', len);
		name = eq != NULL ? (size_t)(eq - (const char *)d) + 1 : len;
		total += name + (len - name < cap ? len - name : cap);
	}
	return total;
}

/* The longest value the current entry may keep so that its field data fit
 * journal.max.entry.bytes: SIZE_MAX when it fits whole. Short fields (the
 * unit, the pid) stay whole; only the longest are cut. */
static size_t entry_cap(struct jsrc *s)
{
	size_t lo = 0, hi = s->max_entry, mid;

	if (s->message_only) {
		const void *d;
		size_t len;

		return sd_journal_get_data(s->j, "MESSAGE", &d, &len) >= 0 && len >= 8 &&
		               len - 8 > s->max_entry
		           ? s->max_entry
		           : SIZE_MAX;
	}
	if (entry_size(s, SIZE_MAX) <= s->max_entry)
		return SIZE_MAX;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (entry_size(s, mid) <= s->max_entry)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* One datum with its value cut to cap (jfields_cut), into the struct. */
static int add_datum(cJSON *payload, cJSON *fields, const char *d, size_t len, size_t cap)
{
	const char *eq = memchr(d, '=', len);
	size_t name;

	if (cap != SIZE_MAX && eq != NULL) {
		name = (size_t)(eq - d) + 1;
		len = name + jfields_cut(eq + 1, len - name, cap);
	}
	return jfields_add(payload, fields, d, len);
}

/* The current entry as rec's value, values cut to cap and marked
 * _SKIFF_TRUNCATED=1 unless cap is SIZE_MAX. Returns JENTRY_OK or
 * JENTRY_ERR_NOMEM. */
static int build_value(struct jsrc *s, struct record *rec, size_t cap)
{
	cJSON *fields = NULL, *payload = cJSON_CreateObject(), *schema = jfields_schema(&fields);
	uint64_t repeated = 0, bad = 0, t;
	sd_id128_t boot;
	const void *d;
	size_t len;
	int r;

	if (payload == NULL || schema == NULL)
		goto nomem;
	s->built[s->nbuilt++] = payload;
	s->built[s->nbuilt++] = schema;
	SD_JOURNAL_FOREACH_DATA(s->j, d, len)
	{
		r = add_datum(payload, fields, d, len, cap);
		if (r == JFIELDS_ERR_NOMEM)
			return JENTRY_ERR_NOMEM;
		repeated += r == JFIELDS_REPEATED;
		bad += r == JFIELDS_ERR_MALFORMED;
	}
	if (cap != SIZE_MAX &&
	    jfields_add(payload, fields, TRUNC_FIELD, strlen(TRUNC_FIELD)) == JFIELDS_ERR_NOMEM)
		return JENTRY_ERR_NOMEM;
	if (sd_journal_get_realtime_usec(s->j, &t) >= 0 &&
	    jfields_add_time(payload, fields, "__REALTIME_TIMESTAMP", t) != 0)
		return JENTRY_ERR_NOMEM;
	if (sd_journal_get_monotonic_usec(s->j, &t, &boot) >= 0 &&
	    jfields_add_time(payload, fields, "__MONOTONIC_TIMESTAMP", t) != 0)
		return JENTRY_ERR_NOMEM;
	if (repeated > 0)
		s->env->count(s->env, "journal_fields_repeated", repeated);
	if (bad > 0)
		s->env->count(s->env, "journal_data_malformed", bad);
	rec->value =
	    (struct record_value){.kind = VALUE_STRUCT, .payload = payload, .schema = schema};
	return JENTRY_OK;
nomem:
	cJSON_Delete(payload);
	cJSON_Delete(schema);
	return JENTRY_ERR_NOMEM;
}

/* MESSAGE alone as rec's value (null when the entry has none), cut to
 * cap. */
static int build_message(struct jsrc *s, struct record *rec, size_t cap)
{
	const void *d;
	size_t len;
	char *copy;

	if (sd_journal_get_data(s->j, "MESSAGE", &d, &len) < 0 || len < 8) {
		rec->value = (struct record_value){.kind = VALUE_NULL};
		return JENTRY_OK;
	}
	len = 8 + jfields_cut((const char *)d + 8, len - 8, cap);
	if ((copy = malloc(len - 8 + 1)) == NULL)
		return JENTRY_ERR_NOMEM;
	memcpy(copy, (const char *)d + 8, len - 8);
	copy[len - 8] = '\0';
	s->texts[s->ntexts++] = copy;
	rec->value = (struct record_value){.kind = VALUE_STRING, .bytes = copy, .len = len - 8};
	return JENTRY_OK;
}

int jentry_record(struct jsrc *s, struct record *rec, struct src_ref *pos)
{
	size_t cap = entry_cap(s);
	uint64_t usec = 0;

	if (cap != SIZE_MAX && s->skip_big) {
		s->env->count(s->env, "entries_skipped", 1);
		return JENTRY_SKIPPED;
	}
	memset(rec, 0, sizeof(*rec));
	if (cap != SIZE_MAX) {
		s->env->count(s->env, "entries_truncated", 1);
		rec->headers[rec->nheaders++] = (struct record_header){"skiff.truncated", "1", 1};
	}
	rec->part = s->part;
	rec->topic = s->topic;
	rec->offset.ref = pos;
	rec->key = (struct record_value){.kind = VALUE_NULL};
	if (sd_journal_get_realtime_usec(s->j, &usec) >= 0)
		rec->timestamp_ms = (int64_t)(usec / 1000);
	return s->message_only ? build_message(s, rec, cap) : build_value(s, rec, cap);
}

const char *jentry_strerror(int err)
{
	switch (err) {
	case JENTRY_OK:
		return "no error";
	case JENTRY_SKIPPED:
		return "entry skipped";
	case JENTRY_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}
