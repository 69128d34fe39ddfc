/* source_journald: the systemd journal as a source connector
 * (connector.class=journald), read through libsystemd's sd-journal.
 *
 * One source partition per connector: {"journal":"<machine id>"} for the
 * system's journal, {"journal":"<journal.directory>"} for a directory. Its
 * offset is {"cursor":"<cursor of the last entry committed>","seqnums":
 * {"<sequence-number id>":<the last sequence number committed>,...}}; the
 * offsets that records stand for are refcounted texts (jpos.h says how,
 * and the bounds). An offset of {"cursor":...} alone (skiff before the
 * seqnums) still loads: what sd-journal orders up to its cursor counts as
 * read.
 *
 * Why nothing is lost or repeated beyond a batch:
 * - sd-journal's order is a merge: by sequence number within one
 *   sequence-number id, by clock across ids; a file of another id whose
 *   clock is behind sorts before entries already read. So where reading
 *   stands is kept per id (struct jpos): an entry was read iff its sequence
 *   number is at most its id's. Within an id sequence numbers only grow.
 * - A record's offset names the position after an entry at or before it;
 *   the worker commits the offset of the last record of the acked prefix,
 *   so every entry at or below a committed (id, seqnum) is in Kafka.
 * - At start, and whenever sd-journal says its set of files changed (a file
 *   added or removed), reading goes back to the head and passes over every
 *   entry at or below its id's position: nothing is read twice, and an
 *   older-clock file is read wherever it sorts.
 * - The first pass after a start, and each pass after the set of files
 *   changed, finds each id's entry: when it is gone (vacuumed while skiff
 *   was stopped, or running but behind) the first one after it tells how
 *   many were removed unread (entries_vacuumed_unread, logged).
 * - An entry becomes a record only once sd_journal_next() has moved onto it;
 *   a batch's offsets are fixed before the worker sees it.
 *
 * Waking: sd-journal's descriptor (inotify on the journal files) is handed
 * to the loop; poll() calls sd_journal_process() and reads what is new. An
 * idle journal costs nothing; a changed set of files costs one pass over
 * the journal's entry headers. */
#include "util/clock.h"
#include "config/config.h"
#include "core/device.h"
#include "core/log.h"
#include "sources/journald/journallib.h"
#include "core/source.h"
#include "sources/journald/jpos.h"
#include "sources/journald/jentry.h"
#include "sources/journald/jsrc.h"
#include "core/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FULL_RETRY_MS 100         /* texts held at their bound: look again soon, acks free them */
#define PASS_MAX (64 * BATCH_MAX) /* entries passed over in one poll at most */

static const char *const journald_classes[] = {
    "journald",
    "JournaldSource",
    "skiff.journald.JournaldSourceConnector",
    NULL,
};

/* journal.value=, read.from= and journal.max.entry.policy=, in the order of
 * their choices. */
enum jvalue { JVALUE_FIELDS, JVALUE_MESSAGE };
enum jfrom { JFROM_BEGINNING, JFROM_END };
enum jpolicy { JPOLICY_TRUNCATE, JPOLICY_SKIP };

/* The connector's keys, bound once at open (and at --check). */
struct journald_conf {
	const char *topic, *directory;
	struct config_list matches;
	int64_t priority_max, max_entry;
	bool max_entry_given;
	enum jvalue value;
	enum jfrom read_from;
	enum jpolicy policy;
};

static const struct config_key journald_keys[] = {
    {"topic", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED, "The topic entries are sent to.",
     CFG_FIELD(struct journald_conf, topic)},
    {"journal.directory", CFG_STRING, NULL, 0, 0, NULL, 0,
     "Read the journal files in this directory instead of the system's journal.",
     CFG_FIELD(struct journald_conf, directory)},
    {"journal.matches", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Comma-separated FIELD=value terms, as journalctl takes them: terms of different "
     "fields must all hold, terms of one field any; a lone + between terms means OR "
     "(e.g. _SYSTEMD_UNIT=a.service,PRIORITY=3,+,_SYSTEMD_UNIT=b.service). Values cannot "
     "hold a comma.",
     CFG_FIELD(struct journald_conf, matches)},
    {"journal.priority.max", CFG_INT, "7", 0, 7, NULL, 0,
     "Only entries with a PRIORITY of at most this (0 emerg .. 7 debug), ANDed with "
     "journal.matches as journalctl -p does; 7 ships every entry, with or without "
     "PRIORITY.",
     CFG_FIELD(struct journald_conf, priority_max)},
    {"journal.value", CFG_ENUM, "fields", 0, 0, "fields|message", 0,
     "The record value: every field of the entry as a struct (text fields as strings, "
     "others as bytes), or MESSAGE alone as a string (for StringConverter).",
     CFG_FIELD(struct journald_conf, value)},
    {"read.from", CFG_ENUM, "beginning", 0, 0, "beginning|end", 0,
     "Where a first start (no stored cursor) reads from: the oldest entry of the journal, "
     "or only entries written from now on.",
     CFG_FIELD(struct journald_conf, read_from)},
    {"journal.max.entry.bytes", CFG_INT, "524288", 1024, 64 * 1024 * 1024, NULL, 0,
     "Most bytes of field data (names, '=' and values) one entry ships. Unset, at most what "
     "surely fits the producer's message.max.bytes once converted, as the file source's "
     "max.line.bytes (163936 with JsonConverter by default).",
     CFG_FIELD_SET(struct journald_conf, max_entry, max_entry_given)},
    {"journal.max.entry.policy", CFG_ENUM, "truncate", 0, 0, "truncate|skip", 0,
     "What a larger entry becomes: its longest values cut until it fits, marked with the "
     "field _SKIFF_TRUNCATED=1 and the header skiff.truncated=1 (entries_truncated), or "
     "skipped (entries_skipped).",
     CFG_FIELD(struct journald_conf, policy)},
    CFG_END,
};

/* The helpers of this file speak sd-journal's language: 0 (or a count), or
 * the negative errno an sd_journal_* call returned. What fails on skiff's
 * side gets a name of its own, below every errno (Linux's stay above
 * -4096), so that it passes through them and sderr says either. */
enum jsrc_err {
	JSRC_ERR_NOMEM = -4097,  /* out of memory */
	JSRC_ERR_CURSOR = -4098, /* a cursor without the sequence number jpos reads */
};

/* "what: why" for an error r of sd-journal (a negative errno) or of ours. */
static void sderr(char *errbuf, size_t errlen, const char *what, int r)
{
	const char *why = r == JSRC_ERR_NOMEM    ? "out of memory"
	                  : r == JSRC_ERR_CURSOR ? "a cursor without a sequence number"
	                                         : strerror(-r);

	snprintf(errbuf, errlen, "journal: %s: %s", what, why);
}

static void free_batch(struct jsrc *s)
{
	for (size_t i = 0; i < s->nbuilt; i++)
		cJSON_Delete(s->built[i]);
	for (size_t i = 0; i < s->ntexts; i++)
		free(s->texts[i]);
	s->nbuilt = s->ntexts = 0;
	src_ref_drop(s->prev); /* the worker holds its own where it needs one */
	s->prev = NULL;
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
	src_ref_drop(s->pos);
	jpos_texts_free(s->held);
	jpos_free(s->sent);
	free(s->legacy_stop);
	free(s->topic);
	free(s);
}

/* Adds journal.matches and journal.priority.max to j. Returns 0 or -1 with
 * errbuf naming the term. */
static int add_matches(sd_journal *j, const struct config_section *cfg,
                       const struct journald_conf *c, char *errbuf, size_t errlen)
{
	size_t n = c->matches.n;
	int64_t prio = c->priority_max;
	char term[16];
	int r;

	for (size_t i = 0; i < n; i++) {
		const char *t = c->matches.items[i];

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
static int open_journal(const struct config_section *cfg, const struct journald_conf *c,
                        sd_journal **out, char *errbuf, size_t errlen)
{
	const char *dir = c->directory;
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
	if (add_matches(j, cfg, c, errbuf, errlen) != 0) {
		sd_journal_close(j);
		return -1;
	}
	*out = j;
	return 0;
}

/* The partition: the directory as configured, or the machine id as
 * journald names the local journal; without one (an empty or missing
 * /etc/machine-id), this device's name (device.h: device.id, or the id kept
 * beside the offset file). */
static int find_partition(struct jsrc *s, const struct journald_conf *c, char *errbuf,
                          size_t errlen)
{
	const char *dir = c->directory;
	char id[DEVICE_NAME_MAX];
	cJSON *map = cJSON_CreateObject();
	char *json = NULL;
	sd_id128_t m;

	if (dir == NULL && sd_id128_get_machine(&m) >= 0) {
		sd_id128_to_string(m, id);
	} else if (dir == NULL && device_name(NULL, id, sizeof(id)) == DEVICE_NONE) {
		char why[1024];

		device_missing(why, sizeof(why));
		snprintf(errbuf, errlen,
		         "journal: the local journal's partition is named by the machine id, "
		         "and %s; or set journal.directory",
		         why);
		cJSON_Delete(map);
		return -1;
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

/* The current entry's sequence-number id and sequence number. Returns 0,
 * a negative errno or JSRC_ERR_CURSOR. */
static int entry_seqnum(struct jsrc *s, char id[33], uint64_t *n)
{
	char *c = NULL;
	int r = sd_journal_get_cursor(s->j, &c);

	if (r < 0)
		return r;
	r = jpos_cursor_seqnum(c, id, n) == 0 ? 0 : JSRC_ERR_CURSOR;
	free(c);
	return r;
}

/* Marks (id, n) as read: the entry was made a record, or passed. */
static void advance(struct jsrc *s, const char *id, uint64_t n)
{
	char dropped[33];

	if (jpos_set(s->sent, id, n, dropped) == 1) {
		s->env->count(s->env, "journal_seqnum_ids_dropped", 1);
		s->env->log(s->env, LOG_WARN,
		            "journal: more than %d sequence-number ids in the journal: "
		            "forgetting %s, the one read least recently (its entries still in the "
		            "journal will be "
		            "read again)",
		            JPOS_IDS_MAX, dropped);
	}
	jpos_flag(s->sent, id, JPOS_SEEN | JPOS_SETTLED);
}

/* The committed offset into s->sent; *out its cursor (malloc'd, "" before
 * the first entry), or NULL when nothing was committed. *legacy when it
 * has no "seqnums" (skiff before them). Returns 0, -1 on a malformed
 * offset (errbuf), or JSRC_ERR_NOMEM (for sderr). */
static int committed(struct jsrc *s, char **out, bool *legacy, char *errbuf, size_t errlen)
{
	const char *json = s->env->committed(s->env, s->part);
	cJSON *o, *c, *m;
	int rc = -1;

	*out = NULL;
	if (json == NULL)
		return 0;
	o = cJSON_Parse(json);
	c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	m = cJSON_GetObjectItemCaseSensitive(o, "seqnums");
	*legacy = m == NULL;
	if (cJSON_IsString(c) && (m == NULL || jpos_load(s->sent, m) == 0))
		rc = (*out = strdup(c->valuestring)) != NULL ? 0 : JSRC_ERR_NOMEM;
	cJSON_Delete(o);
	if (rc == -1)
		snprintf(errbuf, errlen,
		         "journal: stored offset %s is not {\"cursor\": <string>, \"seqnums\": "
		         "{<32 hex digits>: <integer>, ...}}",
		         json);
	if (rc == 0 && jpos_cursor_seqnum(*out, s->main_id, &s->main_seq) != 0)
		s->main_id[0] = '\0';
	if (rc == 0 && *legacy && s->main_id[0] != '\0') {
		char none[33];

		jpos_set(s->sent, s->main_id, s->main_seq, none); /* the map is empty */
	}
	return rc;
}

/* An old offset names only a cursor: the entries sd-journal orders up to it
 * were read. Finds the entry reading stops passing at: the cursor's own
 * (passed too), or the first after it when it is gone, or the tail when
 * nothing follows. Returns 0 or a negative errno. */
static int legacy_stop(struct jsrc *s, const char *cur)
{
	int r = sd_journal_seek_cursor(s->j, cur);

	if (r >= 0)
		r = sd_journal_next(s->j);
	if (r > 0) {
		s->legacy_incl = sd_journal_test_cursor(s->j, cur) > 0;
	} else if (r == 0) {
		s->legacy_incl = true;
		if ((r = sd_journal_seek_tail(s->j)) >= 0)
			r = sd_journal_previous(s->j);
	}
	if (r > 0)
		r = sd_journal_get_cursor(s->j, &s->legacy_stop);
	return r < 0 ? r : 0;
}

/* read.from=end on a first start: every entry there is now counts as read
 * (s->sent), and *first is the cursor of the last ("" when empty). Returns 0,
 * a negative errno, JSRC_ERR_CURSOR or JSRC_ERR_NOMEM. */
static int pass_all(struct jsrc *s, char **first)
{
	char id[33];
	uint64_t n;
	int r;

	*first = NULL;
	if ((r = sd_journal_seek_head(s->j)) < 0)
		return r;
	while ((r = sd_journal_next(s->j)) > 0) {
		if ((r = entry_seqnum(s, id, &n)) < 0)
			return r;
		advance(s, id, n);
	}
	if (r < 0 || (r = sd_journal_seek_tail(s->j)) < 0 || (r = sd_journal_previous(s->j)) < 0)
		return r;
	if (r == 0)
		*first = strdup("");
	else if ((r = sd_journal_get_cursor(s->j, first)) < 0)
		return r;
	return *first != NULL ? 0 : JSRC_ERR_NOMEM;
}

/* Positions the journal for the committed offset (or read.from on a first
 * start), and the offset text records name until the first batch. */
static int position(struct jsrc *s, const struct journald_conf *c, char *errbuf, size_t errlen)
{
	char *cur = NULL, *first = NULL;
	bool legacy = false;
	int r = committed(s, &cur, &legacy, errbuf, errlen);

	if (r == -1)
		return -1;
	if (r == 0 && cur != NULL) {
		if (legacy && cur[0] != '\0' && (r = legacy_stop(s, cur)) < 0) {
			snprintf(errbuf, errlen, "journal: stored cursor '%s': %s", cur,
			         strerror(-r));
			free(cur);
			return -1;
		}
		s->settling = true;
		s->opened_ms = clock_mono_ms();
		r = sd_journal_seek_head(s->j);
		first = jpos_json(s->sent, cur);
		free(cur);
	} else if (r == 0) {
		s->anchor_due = c->read_from == JFROM_END;
		r = s->anchor_due ? pass_all(s, &cur) : sd_journal_seek_head(s->j);
		first = r >= 0 ? jpos_json(s->sent, cur != NULL ? cur : "") : NULL;
		if (first != NULL && s->anchor_due)
			s->env->log(s->env, LOG_INFO, "journal: read.from=end: starting after %s",
			            cur[0] != '\0' ? cur : "nothing (the journal is empty)");
		free(cur);
	}
	if (r < 0 || first == NULL) {
		free(first);
		sderr(errbuf, errlen, "positioning", r < 0 ? r : JSRC_ERR_NOMEM);
		return -1;
	}
	r = jpos_texts_new(&s->held);
	if (r == JPOS_OK)
		r = jpos_text_new(s->held, first, &s->pos);
	free(first);
	if (r != JPOS_OK) {
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
    {.name = "journal_seqnum_ids_dropped",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "sequence-number ids forgotten beyond 64 (their entries may be read again)"},
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
	struct journald_conf c;
	int r;

	*ctx = NULL;
	config_section_bind(cfg, journald_keys, &c);
	if (s == NULL)
		goto nomem;
	s->env = env;
	s->fd = -1;
	if (source_counters(env, journald_counters,
	                    sizeof(journald_counters) / sizeof(journald_counters[0])))
		goto nomem;
	s->message_only = c.value == JVALUE_MESSAGE;
	s->max_entry = (size_t)c.max_entry;
	/* Unset: no more than surely fits one record once converted (an entry
	 * of quotes or control characters is 2 to 6 times larger as JSON). */
	if (!c.max_entry_given && env->value_bytes_max > 0 && env->value_bytes_max < s->max_entry)
		s->max_entry = env->value_bytes_max < 1024 ? 1024 : env->value_bytes_max;
	s->skip_big = c.policy == JPOLICY_SKIP;
	s->topic = strdup(c.topic);
	s->built = calloc(2 * (size_t)BATCH_MAX, sizeof(*s->built));
	s->texts = calloc(BATCH_MAX, sizeof(*s->texts));
	if (s->topic == NULL || s->built == NULL || s->texts == NULL || jpos_new(&s->sent) != 0)
		goto nomem;
	if (journallib_load(config_where(cfg, "connector.class"), errbuf, errlen) != 0 ||
	    open_journal(cfg, &c, &s->j, errbuf, errlen) != 0 ||
	    find_partition(s, &c, errbuf, errlen) != 0 || position(s, &c, errbuf, errlen) != 0)
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

/* The first entry of a stored id after its stored position v is n > v:
 * the entry at v is gone. Counts and logs the entries between. */
static void note_gap(struct jsrc *s, const char *id, uint64_t v, uint64_t n)
{
	if (n <= v + 1)
		return;
	s->env->count(s->env, "entries_vacuumed_unread", n - v - 1);
	s->env->log(s->env, LOG_WARN,
	            "journal: the entry at the stored cursor is gone (vacuumed or rotated away "
	            "while skiff was stopped or behind): %llu entries (sequence numbers %llu "
	            "to %llu) of sequence %s were removed unread; resuming at the oldest "
	            "entry still there",
	            (unsigned long long)(n - v - 1), (unsigned long long)v + 1,
	            (unsigned long long)n - 1, id);
}

/* The first pass after a start reached the end: the committed cursor's id
 * without a single entry at or after its position had all of them removed
 * (a journal recreated: an unknown number unread), and ids no longer in the
 * journal are forgotten. */
static void settled(struct jsrc *s)
{
	size_t gone;

	s->settling = false;
	s->env->log(s->env, LOG_INFO,
	            "journal: first pass from the head done in %lld ms: %llu entries read "
	            "before passed over, %llu new",
	            (long long)(clock_mono_ms() - s->opened_ms), (unsigned long long)s->passed_over,
	            (unsigned long long)s->shipped);
	free(s->legacy_stop); /* the stop entry went during the pass */
	s->legacy_stop = NULL;
	if (s->main_id[0] != '\0' && !(jpos_flags(s->sent, s->main_id) & JPOS_SETTLED) &&
	    s->shipped > 0) {
		s->env->count(s->env, "journal_cursor_lost", 1);
		s->env->log(s->env, LOG_WARN,
		            "journal: the entry at the stored cursor (sequence number %llu of "
		            "%s) is gone and nothing of its sequence is left (the journal was "
		            "recreated or vacuumed): an unknown number of entries may have "
		            "been removed unread",
		            (unsigned long long)s->main_seq, s->main_id);
	}
	if ((gone = jpos_sweep(s->sent, JPOS_SEEN)) > 0)
		s->env->log(s->env, LOG_INFO,
		            "journal: %zu sequence-number ids of the stored offset are no "
		            "longer in the journal: forgotten",
		            gone);
}

/* A pass from the head after the set of files changed reached the end:
 * ids with no entry met in it are no longer in the journal (vacuumed): they
 * are forgotten, so that only ids still there count against JPOS_IDS_MAX. */
static void rechecked(struct jsrc *s)
{
	size_t gone;

	s->rechecking = false;
	if ((gone = jpos_sweep(s->sent, JPOS_SEEN)) > 0)
		s->env->log(s->env, LOG_INFO,
		            "journal: %zu sequence-number ids are no longer in the journal: "
		            "forgotten",
		            gone);
}

/* In the first pass after a start from an old {"cursor"} offset: true when
 * (id, n) is ordered up to that cursor (read then), and marked read. */
static bool legacy_passed(struct jsrc *s, const char *id, uint64_t n)
{
	uint64_t v = 0;
	bool known = jpos_get(s->sent, id, &v);

	if (sd_journal_test_cursor(s->j, s->legacy_stop) > 0) {
		free(s->legacy_stop);
		s->legacy_stop = NULL;
		if (!s->legacy_incl)
			return false;
	}
	if (!known || n > v)
		advance(s, id, n);
	else if (n == v)
		jpos_flag(s->sent, id, JPOS_SEEN | JPOS_SETTLED);
	else
		jpos_flag(s->sent, id, JPOS_SEEN);
	return true;
}

/* True when the current entry (id, n) was read before: its id's position
 * is at or past n. The first pass also settles each stored id at its first
 * entry at or past its position (note_gap). */
static bool passed(struct jsrc *s, const char *id, uint64_t n)
{
	uint64_t v = 0;
	bool known = jpos_get(s->sent, id, &v);

	if (s->legacy_stop != NULL && legacy_passed(s, id, n))
		return true;
	if (!known)
		return false;
	if ((s->settling || s->rechecking) && n >= v && !(jpos_flags(s->sent, id) & JPOS_SETTLED)) {
		jpos_flag(s->sent, id, JPOS_SETTLED);
		note_gap(s, id, v, n);
	}
	jpos_flag(s->sent, id, JPOS_SEEN);
	return n <= v;
}

/* Moves to the next entry not read before and marks it read: 1, 0 at the
 * end, 2 when PASS_MAX entries were passed over (more to come), or a
 * negative errno or JSRC_ERR_CURSOR. */
static int next_entry(struct jsrc *s, size_t *passes)
{
	char id[33];
	uint64_t n;
	int r;

	for (;;) {
		if ((r = sd_journal_next(s->j)) == 0 && s->settling)
			settled(s);
		if (r == 0 && s->rechecking)
			rechecked(s);
		if (r <= 0)
			return r;
		if ((r = entry_seqnum(s, id, &n)) < 0)
			return r;
		if (!passed(s, id, n))
			break;
		s->passed_over += s->settling;
		if (++*passes >= PASS_MAX)
			return 2;
	}
	advance(s, id, n);
	s->shipped += s->settling;
	return 1;
}

/* Fixes the batch's offsets: its last record stands for the position after
 * the entry the journal is at. */
static int seal_batch(struct jsrc *s, struct source_batch *batch, char *errbuf, size_t errlen)
{
	char *cur = NULL, *text;
	struct src_ref *pos = NULL;
	int r = sd_journal_get_cursor(s->j, &cur);

	if (r < 0) {
		sderr(errbuf, errlen, "cursor", r);
		return SOURCE_ERR;
	}
	text = jpos_json(s->sent, cur);
	free(cur);
	r = text != NULL ? jpos_text_new(s->held, text, &pos) : JPOS_ERR_NOMEM;
	free(text);
	if (r != JPOS_OK) {
		snprintf(errbuf, errlen, "journal: out of memory");
		return SOURCE_ERR;
	}
	/* The batch's other records name s->pos: held until the next poll. */
	s->prev = s->pos;
	s->pos = pos;
	batch->records[batch->n - 1].offset.ref = pos;
	return 0;
}

/* The set of files changed: back to the head. A file removed may have
 * held entries not read yet (vacuumed while skiff was behind): the pass
 * finds each id's position again, as the first pass after a start does.
 * Returns 0 or a negative errno. */
static int rescan(struct jsrc *s)
{
	if (!s->settling) {
		jpos_unflag(s->sent, JPOS_SEEN | JPOS_SETTLED);
		s->rechecking = true;
	}
	return sd_journal_seek_head(s->j);
}

static int journald_poll(void *ctx, struct source_batch *batch, int64_t now_ms, char *errbuf,
                         size_t errlen)
{
	struct jsrc *s = ctx;
	size_t max = batch->max < BATCH_MAX ? batch->max : BATCH_MAX;
	struct src_ref *before = s->pos;
	size_t seen = 0, passes = 0;
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
			s->env->anchor(s->env, s->part, &(struct src_offset){.ref = s->pos});
	}
	if ((s->full = jpos_texts_bytes(s->held) >= JPOS_TEXTS_BYTES))
		return 0; /* acknowledgements free them (jpos.h) */
	if ((r = sd_journal_process(s->j)) < 0) {
		sderr(errbuf, errlen, "processing changes", r);
		return SOURCE_ERR;
	}
	/* A file added (or removed): its entries may sort anywhere, before
	 * those read already (an older clock). Back to the head; what was read
	 * is passed over by its sequence number. */
	if (r == SD_JOURNAL_INVALIDATE && (r = rescan(s)) < 0) {
		sderr(errbuf, errlen, "seeking the head", r);
		return SOURCE_ERR;
	}
	/* seen bounds a poll also when every entry is skipped by the size
	 * policy; passes, when the entries were read before. */
	while (seen < max && (r = next_entry(s, &passes)) == 1) {
		seen++;
		b = jentry_record(s, &batch->records[batch->n], before);
		if (b < 0) {
			snprintf(errbuf, errlen, "journal: %s", jentry_strerror(b));
			return SOURCE_ERR;
		}
		batch->n += b == JENTRY_OK;
	}
	if (r < 0) {
		sderr(errbuf, errlen, "reading the next entry", r);
		return SOURCE_ERR;
	}
	batch->more = seen == max || r == 2;
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

	/* Local files are watched by inotify: no deadline. On network file
	 * systems sd-journal asks to be looked at every 250 ms. */
	if (s->full)
		return FULL_RETRY_MS;
	if (sd_journal_get_timeout(s->j, &t) < 0 || t == UINT64_MAX)
		return -1;
	ms = (int64_t)(t / 1000) - now_ms;
	return ms < 0 ? 0 : ms;
}

static char *journald_offset_json(void *ctx, const struct src_offset *off)
{
	const char *text = jpos_text(off->ref); /* needs no ctx: refs outlive it */

	(void)ctx;
	return text != NULL ? strdup(text) : NULL;
}

/* KIP-875: {"cursor": <string>, "seqnums": {...}} (seqnums optional, as
 * older skiffs wrote it) is what open() reads back. */
static int journald_check_offset(const struct config_section *cfg, const char *partition,
                                 const char *offset, char *errbuf, size_t errlen)
{
	cJSON *o = cJSON_Parse(offset);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "seqnums");
	struct jpos *p = NULL;
	bool ok = jpos_new(&p) == JPOS_OK &&
	          cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "cursor")) &&
	          cJSON_GetArraySize(o) == 1 + (m != NULL) && (m == NULL || jpos_load(p, m) == 0);

	(void)cfg;
	(void)partition;
	cJSON_Delete(o);
	jpos_free(p);
	if (ok)
		return 0;
	snprintf(errbuf, errlen,
	         "the journald source's offset is {\"cursor\": <a journal cursor string>, "
	         "\"seqnums\": {<sequence-number id, 32 hex digits>: <sequence number>, ...}} "
	         "(seqnums optional, at most %d)",
	         JPOS_IDS_MAX);
	return SOURCE_ERR_CONFIG;
}

/* source_ops.check_reach: a cursor sd-journal would not take is refused
 * (the connector failed at its resume); a cursor changed beside the stored
 * offset's seqnums (a GET -> PATCH with a new "cursor") is stored alone:
 * by those seqnums every entry up to the old position counts as read, so a
 * rewind would send nothing again. A cursor alone means what sd-journal
 * orders up to it was read (an older skiff's offset). */
static int journald_check_reach(const struct config_section *cfg, const char *partition,
                                const char *offset, const char *stored, bool bounded,
                                char **settled, char *errbuf, size_t errlen)
{
	cJSON *o = cJSON_Parse(offset), *s = stored != NULL ? cJSON_Parse(stored) : NULL;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "seqnums");
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "cursor");
	const cJSON *sm = cJSON_GetObjectItemCaseSensitive(s, "seqnums");
	char id[33];
	uint64_t seq;
	int rc = 0;

	(void)cfg;
	(void)partition;
	(void)bounded;
	*settled = NULL;
	if (errlen > 0)
		errbuf[0] = '\0';
	if (!cJSON_IsString(c)) {
		rc = 0; /* check_offset's to refuse */
	} else if (c->valuestring[0] != '\0' && jpos_cursor_seqnum(c->valuestring, id, &seq) != 0) {
		snprintf(
		    errbuf, errlen,
		    "the cursor '%.300s' is not a journal cursor (\"s=<32 hex digits>;i=<hex>;"
		    "...\", as journalctl --show-cursor prints one): sd-journal would refuse it "
		    "when the connector resumes",
		    c->valuestring);
		rc = SOURCE_ERR_CONFIG;
	} else if (m != NULL && cJSON_IsString(sc) &&
	           strcmp(sc->valuestring, c->valuestring) != 0 && cJSON_Compare(m, sm, true)) {
		cJSON *alone = cJSON_CreateObject();

		if (alone != NULL &&
		    cJSON_AddStringToObject(alone, "cursor", c->valuestring) != NULL)
			*settled = cJSON_PrintUnformatted(alone);
		cJSON_Delete(alone);
		if (*settled == NULL) {
			snprintf(errbuf, errlen, "out of memory");
			rc = SOURCE_ERR_NOMEM;
		} else {
			snprintf(errbuf, errlen,
			         "the cursor changed beside the stored seqnums: stored alone, what "
			         "sd-journal orders up to it counts as read");
		}
	}
	cJSON_Delete(o);
	cJSON_Delete(s);
	return rc;
}

/* --check: the journal opens and the matches are accepted. */
static int journald_check(const struct config_section *cfg, const char *name, char *errbuf,
                          size_t errlen)
{
	struct journald_conf c;
	sd_journal *j = NULL;

	config_section_bind(cfg, journald_keys, &c);
	if (open_journal(cfg, &c, &j, errbuf, errlen) != 0)
		return SOURCE_ERR_CONFIG;
	sd_journal_close(j);
	return 0;
}

/* ---- what a configuration names (source_ops.resources) -------------------- */

/* What each key names; every row of journald_keys is here. */
static const struct source_key_names journald_key_names[] = {
    {"topic", SOURCE_RES_TOPIC},
    {"journal.directory", SOURCE_RES_JOURNAL},
    {"journal.matches", SOURCE_RES_NONE}, /* only narrows the journal */
    {"journal.priority.max", SOURCE_RES_NONE},
    {"journal.value", SOURCE_RES_NONE},
    {"read.from", SOURCE_RES_NONE},
    {"journal.max.entry.bytes", SOURCE_RES_NONE},
    {"journal.max.entry.policy", SOURCE_RES_NONE},
    {NULL, SOURCE_RES_NONE},
};

static int journald_resources(const struct config_section *cfg,
                              void (*put)(void *arg, enum source_resource kind, const char *what),
                              void *arg, char *errbuf, size_t errlen)
{
	struct journald_conf c;

	(void)errbuf;
	(void)errlen;
	config_section_bind(cfg, journald_keys, &c);
	put(arg, SOURCE_RES_JOURNAL, c.directory != NULL ? c.directory : "");
	if (c.topic != NULL) /* required: always, once loaded */
		put(arg, SOURCE_RES_TOPIC, c.topic);
	return 0;
}

const struct source_ops source_journald_ops = {
    .kind = "journald",
    .classes = journald_classes,
    .config_keys = journald_keys,
    .config_size = sizeof(struct journald_conf),
    .value_kind = VALUE_STRUCT,
    .open = journald_open,
    .check = journald_check,
    .poll = journald_poll,
    .pollfds = journald_pollfds,
    .timeout_ms = journald_timeout,
    .offset_json = journald_offset_json,
    .check_offset = journald_check_offset,
    .check_reach = journald_check_reach,
    .resources = journald_resources,
    .key_names = journald_key_names,
    .close = journald_close,
};
