/* source_journald: the systemd journal as a source connector
 * (connector.class=journald), read through libsystemd's sd-journal.
 *
 * One source partition per connector: {"journal":"<machine id>"} for the
 * system's journal, {"journal":"<journal.directory>"} for a directory. Its
 * offset is {"cursor":"<sd-journal cursor of the last entry committed>"}
 * ("" before the first entry); the cursors that records stand for live in a
 * bounded ring (source_journald.h says how, and the bound).
 *
 * Why nothing is lost or repeated beyond a batch:
 * - A record's offset names the cursor of an entry at or before it; the
 *   worker commits the offset of the last record of the acked prefix, so a
 *   restart seeks to a cursor whose entry, and every one before, Kafka has.
 * - At start the committed cursor is sought and the first entry found is
 *   tested against it: the same entry was shipped and is skipped; any other
 *   entry means the committed one is gone (vacuumed while skiff was stopped
 *   or behind, or no longer matching journal.matches): reading resumes at
 *   the oldest entry still there after it, and the gap is counted
 *   (entries_vacuumed_unread, by journal sequence numbers) and logged.
 * - An entry becomes a record only once sd_journal_next() has moved onto it;
 *   a batch's offsets are fixed before the worker sees it.
 *
 * Waking: sd-journal's descriptor (inotify on the journal files) is handed
 * to the loop; poll() calls sd_journal_process() and reads what is new. An
 * idle journal costs nothing. */
#include "config.h"
#include "log.h"
#include "source.h"
#include "source_journald.h"
#include "stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#define FULL_RETRY_MS 100 /* ring full: look again soon, a flush frees it */
#define BATCH_MAX 1024    /* entries per poll at most (the worker asks for as many) */
#define TRUNC_FIELD "_SKIFF_TRUNCATED=1" /* marks an entry cut to journal.max.entry.bytes */

struct jsrc {
	struct source_env *env;
	sd_journal *j;
	int fd;
	struct partition *part;
	char *topic;
	bool message_only;
	struct jring *ring;
	char *resume;     /* committed cursor, until the first entry is tested */
	bool full;        /* the last poll found the ring full */
	bool anchor_due;  /* read.from=end on a first start: store where it begins */
	size_t max_entry; /* journal.max.entry.bytes */
	bool skip_big;    /* journal.max.entry.policy=skip */
	cJSON **built;    /* this batch's payloads and schemas, freed next poll */
	size_t nbuilt;
	char **texts; /* this batch's MESSAGE copies (journal.value=message) */
	size_t ntexts;
};

static const char *const journald_classes[] = {
    "journald",
    "JournaldSource",
    "skiff.journald.JournaldSourceConnector",
    NULL,
};

static const struct config_key journald_keys[] = {
    {"topic", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED, "The topic entries are sent to."},
    {"journal.directory", CFG_STRING, NULL, 0, 0, NULL, 0,
     "Read the journal files in this directory instead of the system's journal."},
    {"journal.matches", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Comma-separated FIELD=value terms, as journalctl takes them: terms of different "
     "fields must all hold, terms of one field any; a lone + between terms means OR "
     "(e.g. _SYSTEMD_UNIT=a.service,PRIORITY=3,+,_SYSTEMD_UNIT=b.service). Values cannot "
     "hold a comma."},
    {"journal.priority.max", CFG_INT, "7", 0, 7, NULL, 0,
     "Only entries with a PRIORITY of at most this (0 emerg .. 7 debug), ANDed with "
     "journal.matches as journalctl -p does; 7 ships every entry, with or without "
     "PRIORITY."},
    {"journal.value", CFG_ENUM, "fields", 0, 0, "fields|message", 0,
     "The record value: every field of the entry as a struct (text fields as strings, "
     "others as bytes), or MESSAGE alone as a string (for StringConverter)."},
    {"read.from", CFG_ENUM, "beginning", 0, 0, "beginning|end", 0,
     "Where a first start (no stored cursor) reads from: the oldest entry of the journal, "
     "or only entries written from now on."},
    {"journal.max.entry.bytes", CFG_INT, "524288", 1024, 64 * 1024 * 1024, NULL, 0,
     "Most bytes of field data (names, '=' and values) one entry ships; keep it well below "
     "the producer's message.max.bytes (base64 and JSON escaping make the record larger)."},
    {"journal.max.entry.policy", CFG_ENUM, "truncate", 0, 0, "truncate|skip", 0,
     "What a larger entry becomes: its longest values cut until it fits, marked with the "
     "field _SKIFF_TRUNCATED=1 and the header skiff.truncated=1 (entries_truncated), or "
     "skipped (entries_skipped)."},
    {NULL, 0, NULL, 0, 0, NULL, 0, NULL},
};

/* "what: why" for an sd-journal error r (negative errno). */
static void sderr(char *errbuf, size_t errlen, const char *what, int r)
{
	snprintf(errbuf, errlen, "journal: %s: %s", what, strerror(-r));
}

static void free_batch(struct jsrc *s)
{
	for (size_t i = 0; i < s->nbuilt; i++)
		cJSON_Delete(s->built[i]);
	for (size_t i = 0; i < s->ntexts; i++)
		free(s->texts[i]);
	s->nbuilt = s->ntexts = 0;
}

static void journald_close(void *ctx)
{
	struct jsrc *s = ctx;

	if (s == NULL)
		return;
	free_batch(s);
	free(s->built);
	free(s->texts);
	if (s->j != NULL)
		sd_journal_close(s->j);
	jring_free(s->ring);
	free(s->resume);
	free(s->topic);
	free(s);
}

/* Adds journal.matches and journal.priority.max to j. Returns 0 or -1 with
 * errbuf naming the term. */
static int add_matches(sd_journal *j, const struct config_section *cfg, char *errbuf, size_t errlen)
{
	size_t n = config_list_len(cfg, "journal.matches");
	int64_t prio = config_int(cfg, "journal.priority.max");
	char term[16];
	int r;

	for (size_t i = 0; i < n; i++) {
		const char *t = config_list_item(cfg, "journal.matches", i);

		r = strcmp(t, "+") == 0 ? sd_journal_add_disjunction(j)
		                        : sd_journal_add_match(j, t, 0);
		if (r < 0) {
			snprintf(errbuf, errlen,
			         "%s: journal.matches: '%s' is not a FIELD=value "
			         "term (upper-case field name) or +: %s",
			         config_where(cfg, "journal.matches"), t, strerror(-r));
			return -1;
		}
	}
	if (prio == 7)
		return 0;
	/* As journalctl -p: (the matches) AND (PRIORITY=0 OR ... OR =max). */
	if (n > 0 && (r = sd_journal_add_conjunction(j)) < 0)
		goto fail;
	for (int64_t p = 0; p <= prio; p++) {
		snprintf(term, sizeof(term), "PRIORITY=%d", (int)p);
		if ((r = sd_journal_add_match(j, term, 0)) < 0)
			goto fail;
	}
	return 0;
fail:
	sderr(errbuf, errlen, "adding the priority match", r);
	return -1;
}

/* Opens the journal cfg names, with its matches. Returns 0, or -1 with
 * errbuf. */
static int open_journal(const struct config_section *cfg, sd_journal **out, char *errbuf,
                        size_t errlen)
{
	const char *dir = config_str(cfg, "journal.directory");
	sd_journal *j = NULL;
	int r;

	*out = NULL;
	r = dir != NULL ? sd_journal_open_directory(&j, dir, 0)
	                : sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
	if (r < 0) {
		snprintf(errbuf, errlen, "%s: journal%s%s: cannot open: %s",
		         config_where(cfg, dir != NULL ? "journal.directory" : "topic"),
		         dir != NULL ? " directory " : "", dir != NULL ? dir : "", strerror(-r));
		return -1;
	}
	if (add_matches(j, cfg, errbuf, errlen) != 0) {
		sd_journal_close(j);
		return -1;
	}
	*out = j;
	return 0;
}

/* The partition: the directory as configured, or the machine id. */
static int find_partition(struct jsrc *s, const struct config_section *cfg, char *errbuf,
                          size_t errlen)
{
	const char *dir = config_str(cfg, "journal.directory");
	char id[SD_ID128_STRING_MAX];
	cJSON *map = cJSON_CreateObject();
	char *json = NULL;
	sd_id128_t m;
	int r;

	if (dir == NULL) {
		if ((r = sd_id128_get_machine(&m)) < 0) {
			sderr(errbuf, errlen, "machine id (/etc/machine-id)", r);
			cJSON_Delete(map);
			return -1;
		}
		sd_id128_to_string(m, id);
	}
	if (map != NULL && cJSON_AddStringToObject(map, "journal", dir != NULL ? dir : id) != NULL)
		json = cJSON_PrintUnformatted(map);
	cJSON_Delete(map);
	s->part = json != NULL ? s->env->partition(s->env, json) : NULL;
	free(json);
	if (s->part == NULL) {
		snprintf(errbuf, errlen, "journal: out of memory or too many partitions");
		return -1;
	}
	return 0;
}

/* The committed cursor: a malloc'd string ("" before the first entry), or
 * NULL with *none when nothing was committed. -1 on a malformed offset. */
static int committed_cursor(struct jsrc *s, char **out, char *errbuf, size_t errlen)
{
	const char *json = s->env->committed(s->env, s->part);
	cJSON *o, *c;

	*out = NULL;
	if (json == NULL)
		return 0;
	o = cJSON_Parse(json);
	c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	if (cJSON_IsString(c))
		*out = strdup(c->valuestring);
	cJSON_Delete(o);
	if (!cJSON_IsString(c)) {
		snprintf(errbuf, errlen, "journal: stored offset %s has no \"cursor\"", json);
		return -1;
	}
	return *out != NULL ? 0 : -2;
}

/* Positions the journal for a first start (read.from) and returns the
 * ring's first cursor: the entry read.from=end starts after, or "". */
static int first_position(struct jsrc *s, bool from_end, char **first)
{
	int r;

	*first = NULL;
	if (!from_end) {
		r = sd_journal_seek_head(s->j);
		*first = strdup("");
		return r < 0 ? r : *first != NULL ? 0 : -ENOMEM;
	}
	if ((r = sd_journal_seek_tail(s->j)) < 0 || (r = sd_journal_previous(s->j)) < 0)
		return r;
	if (r == 0) /* empty: everything from now on is new */
		*first = strdup("");
	else if ((r = sd_journal_get_cursor(s->j, first)) < 0)
		return r;
	return *first != NULL ? 0 : -ENOMEM;
}

/* Seeks the committed cursor (or read.from on a first start) and starts
 * the ring. */
static int position(struct jsrc *s, const struct config_section *cfg, char *errbuf, size_t errlen)
{
	char *cur = NULL, *first = NULL;
	int r = committed_cursor(s, &cur, errbuf, errlen);

	if (r == -1)
		return -1;
	if (r == 0 && cur != NULL && cur[0] != '\0') {
		if ((r = sd_journal_seek_cursor(s->j, cur)) < 0) {
			snprintf(errbuf, errlen, "journal: stored cursor '%s': %s", cur,
			         strerror(-r));
			free(cur);
			return -1;
		}
		s->resume = cur;
		first = strdup(cur);
	} else if (r == 0 && cur != NULL) {
		free(cur);
		r = sd_journal_seek_head(s->j);
		first = strdup("");
	} else if (r == 0) {
		s->anchor_due = strcmp(config_str(cfg, "read.from"), "end") == 0;
		r = first_position(s, s->anchor_due, &first);
		if (r == 0 && first != NULL && s->anchor_due)
			s->env->log(s->env, LOG_INFO, "journal: read.from=end: starting after %s",
			            first[0] != '\0' ? first : "nothing (the journal is empty)");
	}
	if (r < 0 || first == NULL) {
		free(first);
		sderr(errbuf, errlen, "positioning", r < 0 ? r : -ENOMEM);
		return -1;
	}
	s->ring = jring_new(first);
	free(first);
	if (s->ring == NULL) {
		snprintf(errbuf, errlen, "journal: out of memory");
		return -1;
	}
	return 0;
}

/* Every counter this source keeps, registered at open (source_counters). */
static const struct stats_desc journald_counters[] = {
    {.name = "entries_vacuumed_unread",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "journal entries vacuumed before skiff read them"},
    {.name = "journal_cursor_lost",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "stored cursors of another journal sequence (the journal was recreated)"},
    {.name = "journal_fields_repeated",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "fields repeated within an entry (the first value kept)"},
    {.name = "journal_data_malformed",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "journal fields without a name=value form (skipped)"},
    {.name = "entries_truncated",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "entries larger than journal.max.entry.bytes, shipped cut to it"},
    {.name = "entries_skipped",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "entries larger than journal.max.entry.bytes, not shipped (policy skip)"},
};

static int journald_open(const struct config_section *cfg, struct source_env *env, void **ctx,
                         char *errbuf, size_t errlen)
{
	struct jsrc *s = calloc(1, sizeof(*s));
	int r;

	*ctx = NULL;
	if (s == NULL)
		goto nomem;
	s->env = env;
	s->fd = -1;
	if (source_counters(env, journald_counters,
	                    sizeof(journald_counters) / sizeof(journald_counters[0])))
		goto nomem;
	s->message_only = strcmp(config_str(cfg, "journal.value"), "message") == 0;
	s->max_entry = (size_t)config_int(cfg, "journal.max.entry.bytes");
	s->skip_big = strcmp(config_str(cfg, "journal.max.entry.policy"), "skip") == 0;
	s->topic = strdup(config_str(cfg, "topic"));
	s->built = calloc(2 * (size_t)BATCH_MAX, sizeof(*s->built));
	s->texts = calloc(BATCH_MAX, sizeof(*s->texts));
	if (s->topic == NULL || s->built == NULL || s->texts == NULL)
		goto nomem;
	if (open_journal(cfg, &s->j, errbuf, errlen) != 0 ||
	    find_partition(s, cfg, errbuf, errlen) != 0 || position(s, cfg, errbuf, errlen) != 0)
		goto fail;
	/* sd-journal decompresses a field only up to this (64 KiB by default,
	 * silently short): one byte more than the bound shows what exceeds it. */
	if ((r = sd_journal_set_data_threshold(s->j, s->max_entry + 1)) < 0) {
		sderr(errbuf, errlen, "setting the data threshold", r);
		goto fail;
	}
	s->fd = sd_journal_get_fd(s->j);
	if (s->fd < 0) {
		sderr(errbuf, errlen, "watching for new entries", s->fd);
		goto fail;
	}
	*ctx = s;
	return 0;
nomem:
	snprintf(errbuf, errlen, "journal: out of memory");
fail:
	journald_close(s);
	return -1;
}

/* The stored cursor's entry is not the first one found: count and log the
 * gap between them. */
static void note_gap(struct jsrc *s)
{
	char *now = NULL, id_old[33], id_now[33];
	uint64_t old = 0, cur = 0;

	if (sd_journal_get_cursor(s->j, &now) < 0)
		now = NULL;
	if (now != NULL && jcursor_seqnum(s->resume, id_old, &old) == 0 &&
	    jcursor_seqnum(now, id_now, &cur) == 0 && strcmp(id_old, id_now) == 0) {
		if (cur > old + 1) {
			s->env->count(s->env, "entries_vacuumed_unread", cur - old - 1);
			s->env->log(s->env, LOG_WARN,
			            "journal: the entry at the stored cursor is gone (vacuumed or "
			            "rotated away while skiff was stopped or behind): %llu entries "
			            "(sequence numbers %llu to %llu) were removed unread; resuming "
			            "at the oldest entry still there (%s)",
			            (unsigned long long)(cur - old - 1),
			            (unsigned long long)old + 1, (unsigned long long)cur - 1, now);
		}
	} else {
		s->env->count(s->env, "journal_cursor_lost", 1);
		s->env->log(s->env, LOG_WARN,
		            "journal: the entry at the stored cursor %s is gone and the journal "
		            "now holds another sequence (%s): an unknown number of entries may "
		            "have been removed unread; resuming at the oldest entry after it",
		            s->resume, now != NULL ? now : "?");
	}
	free(now);
}

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
 * _SKIFF_TRUNCATED=1 unless cap is SIZE_MAX. Returns 0, or -2 when memory
 * is short. */
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
		if (r == -2)
			return -2;
		repeated += r == 1;
		bad += r == -1;
	}
	if (cap != SIZE_MAX && jfields_add(payload, fields, TRUNC_FIELD, strlen(TRUNC_FIELD)) == -2)
		return -2;
	if (sd_journal_get_realtime_usec(s->j, &t) >= 0 &&
	    jfields_add_time(payload, fields, "__REALTIME_TIMESTAMP", t) != 0)
		return -2;
	if (sd_journal_get_monotonic_usec(s->j, &t, &boot) >= 0 &&
	    jfields_add_time(payload, fields, "__MONOTONIC_TIMESTAMP", t) != 0)
		return -2;
	if (repeated > 0)
		s->env->count(s->env, "journal_fields_repeated", repeated);
	if (bad > 0)
		s->env->count(s->env, "journal_data_malformed", bad);
	rec->value =
	    (struct record_value){.kind = VALUE_STRUCT, .payload = payload, .schema = schema};
	return 0;
nomem:
	cJSON_Delete(payload);
	cJSON_Delete(schema);
	return -2;
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
		return 0;
	}
	len = 8 + jfields_cut((const char *)d + 8, len - 8, cap);
	if ((copy = malloc(len - 8 + 1)) == NULL)
		return -2;
	memcpy(copy, (const char *)d + 8, len - 8);
	copy[len - 8] = '\0';
	s->texts[s->ntexts++] = copy;
	rec->value = (struct record_value){.kind = VALUE_STRING, .bytes = copy, .len = len - 8};
	return 0;
}

/* The current entry as a record carrying the offset seq. Returns 0, 1 when
 * the entry exceeds journal.max.entry.bytes and the policy skips it, or -2
 * when memory is short. */
static int build_record(struct jsrc *s, struct record *rec, int64_t seq)
{
	size_t cap = entry_cap(s);
	uint64_t usec = 0;

	if (cap != SIZE_MAX && s->skip_big) {
		s->env->count(s->env, "entries_skipped", 1);
		return 1;
	}
	memset(rec, 0, sizeof(*rec));
	if (cap != SIZE_MAX) {
		s->env->count(s->env, "entries_truncated", 1);
		rec->headers[rec->nheaders++] = (struct record_header){"skiff.truncated", "1", 1};
	}
	rec->part = s->part;
	rec->topic = s->topic;
	rec->offset.v[0] = seq;
	rec->key = (struct record_value){.kind = VALUE_NULL};
	if (sd_journal_get_realtime_usec(s->j, &usec) >= 0)
		rec->timestamp_ms = (int64_t)(usec / 1000);
	return s->message_only ? build_message(s, rec, cap) : build_value(s, rec, cap);
}

/* Moves to the next entry to ship: 1, 0 at the end, or a negative errno.
 * Skips the entry at the stored cursor once. */
static int next_entry(struct jsrc *s)
{
	int r = sd_journal_next(s->j);

	if (r <= 0 || s->resume == NULL)
		return r;
	if (sd_journal_test_cursor(s->j, s->resume) > 0) {
		r = sd_journal_next(s->j); /* shipped before the stop */
	} else {
		note_gap(s);
	}
	free(s->resume);
	s->resume = NULL;
	return r;
}

/* Fixes the batch's offsets: its last record stands for its own cursor. */
static int seal_batch(struct jsrc *s, struct source_batch *batch, char *errbuf, size_t errlen)
{
	char *cur = NULL;
	int64_t seq;
	int r = sd_journal_get_cursor(s->j, &cur);

	if (r < 0) {
		sderr(errbuf, errlen, "cursor", r);
		return SOURCE_ERR;
	}
	seq = jring_push(s->ring, cur);
	free(cur);
	if (seq < 0) {
		snprintf(errbuf, errlen, "journal: out of memory");
		return SOURCE_ERR;
	}
	batch->records[batch->n - 1].offset.v[0] = seq;
	return 0;
}

static int journald_poll(void *ctx, struct source_batch *batch, int64_t now_ms, char *errbuf,
                         size_t errlen)
{
	struct jsrc *s = ctx;
	size_t max = batch->max < BATCH_MAX ? batch->max : BATCH_MAX;
	int64_t before = jring_head(s->ring);
	size_t seen = 0;
	int r = 0, b;

	free_batch(s);
	batch->n = 0;
	batch->more = false;
	if (s->anchor_due) {
		/* read.from=end starts after the tail entry of this moment; with
		 * nothing stored a restart would seek the tail of its own moment
		 * and skip what came in between. beginning needs no anchor: a
		 * restart reads from the head again. */
		s->anchor_due = false;
		if (s->env->anchor != NULL)
			s->env->anchor(s->env, s->part, &(struct src_offset){.v = {0}});
	}
	if ((s->full = jring_full(s->ring)))
		return 0; /* the next offset flush frees a slot (source_journald.h) */
	if ((r = sd_journal_process(s->j)) < 0) {
		sderr(errbuf, errlen, "processing changes", r);
		return SOURCE_ERR;
	}
	/* seen bounds a poll also when every entry is skipped. */
	while (seen < max && (r = next_entry(s)) > 0) {
		seen++;
		b = build_record(s, &batch->records[batch->n], before);
		if (b < 0) {
			snprintf(errbuf, errlen, "journal: out of memory");
			return SOURCE_ERR;
		}
		batch->n += b == 0;
	}
	if (r < 0) {
		sderr(errbuf, errlen, "reading the next entry", r);
		return SOURCE_ERR;
	}
	batch->more = seen == max;
	if (batch->n == 0)
		return 0;
	return seal_batch(s, batch, errbuf, errlen);
}

static int journald_pollfds(void *ctx, struct pollfd *fds, int max)
{
	struct jsrc *s = ctx;

	if (max < 1 || s->full)
		return 0;
	fds[0] = (struct pollfd){.fd = s->fd, .events = (short)sd_journal_get_events(s->j)};
	return 1;
}

static int64_t journald_timeout(void *ctx, int64_t now_ms)
{
	struct jsrc *s = ctx;
	uint64_t t;
	int64_t ms;

	if (s->full)
		return FULL_RETRY_MS;
	/* Local files are watched by inotify: no deadline. On network file
	 * systems sd-journal asks to be looked at every 250 ms. */
	if (sd_journal_get_timeout(s->j, &t) < 0 || t == UINT64_MAX)
		return -1;
	ms = (int64_t)(t / 1000) - now_ms;
	return ms < 0 ? 0 : ms;
}

static char *journald_offset_json(void *ctx, const struct src_offset *off)
{
	struct jsrc *s = ctx;
	const char *cur = jring_get(s->ring, off->v[0]);
	cJSON *o;
	char *json = NULL;

	if (cur == NULL)
		return NULL;
	o = cJSON_CreateObject();
	if (o != NULL && cJSON_AddStringToObject(o, "cursor", cur) != NULL)
		json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return json;
}

/* KIP-875: {"cursor": <string>} is what open() reads back. */
static int journald_check_offset(const struct config_section *cfg, const char *partition,
                                 const char *offset, char *errbuf, size_t errlen)
{
	cJSON *o = cJSON_Parse(offset);
	bool ok = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "cursor")) &&
	          cJSON_GetArraySize(o) == 1;

	(void)cfg;
	(void)partition;
	cJSON_Delete(o);
	if (ok)
		return 0;
	snprintf(errbuf, errlen,
	         "the journald source's offset is {\"cursor\": <a journal cursor string>}");
	return SOURCE_ERR_CONFIG;
}

/* --check: the journal opens and the matches are accepted. */
static int journald_check(const struct config_section *cfg, const char *name, char *errbuf,
                          size_t errlen)
{
	sd_journal *j = NULL;

	if (open_journal(cfg, &j, errbuf, errlen) != 0)
		return SOURCE_ERR_CONFIG;
	sd_journal_close(j);
	return 0;
}

const struct source_ops source_journald_ops = {
    .kind = "journald",
    .classes = journald_classes,
    .config_keys = journald_keys,
    .value_kind = VALUE_STRUCT,
    .open = journald_open,
    .check = journald_check,
    .poll = journald_poll,
    .pollfds = journald_pollfds,
    .timeout_ms = journald_timeout,
    .offset_json = journald_offset_json,
    .check_offset = journald_check_offset,
    .close = journald_close,
};
