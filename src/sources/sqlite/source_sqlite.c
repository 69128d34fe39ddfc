/* source_sqlite: the polling connector, configured like Confluent's
 * JdbcSourceConnector on a jdbc:sqlite: URL.
 *
 * Modes: bulk (the whole table every poll.interval.ms), incrementing (rows
 * with an id above the offset), timestamp (rows whose timestamp is above the
 * offset and below now - timestamp.delay.interval.ms) and
 * timestamp+incrementing (ordered by (timestamp, id)). One source partition
 * per table ({"protocol":"1","table":T}; bulk {"table":T}) or for the query
 * ({"query":"query"}); offsets as the JDBC connector writes them.
 *
 * This file: the config table, the schedule of the tables and the offsets.
 * The database connection and its busy back-off are in sqdb.c, the SQL in
 * sqquery.c. */
#include "sources/sqlite/source_sqlite.h"
#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"

#include "sources/sqlite/sqbacklog.h"
#include "sources/sqlite/sqcheck.h"
#include "sources/sqlite/sqdb.h"
#include "sources/sqlite/sqguard.h"
#include "sources/sqlite/sqlayout.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqquery.h"
#include "sources/sqlite/sqrows.h"
#include "sources/sqlite/sqseen.h"
#include "sources/sqlite/squri.h"
#include "sources/sqlite/sqvalue.h"
#include "util/clock.h"

#include "config/config.h"
#include "util/jsonint.h"
#include "core/log.h"
#include "core/source.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const sqlite_classes[] = {
    "JdbcSourceConnector",
    "JdbcSource",
    "io.confluent.connect.jdbc.JdbcSourceConnector",
    "sqlite",
    NULL,
};

const struct config_key source_sqlite_keys[] = {
    {"connection.url", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED,
     "The database: jdbc:sqlite:/path/to/file.db, jdbc:sqlite:file:...?... (an SQLite URI) "
     "or a plain path. Opened read-only.",
     CFG_FIELD(struct sqlite_conf, url)},
    {"mode", CFG_ENUM, NULL, 0, 0, "bulk|incrementing|timestamp|timestamp+incrementing",
     CFG_REQUIRED,
     "bulk: the whole table each poll; incrementing: new rows by a strictly increasing "
     "id; timestamp: new and changed rows by a timestamp column; timestamp+incrementing: "
     "by (timestamp, id).",
     CFG_FIELD(struct sqlite_conf, mode)},
    {"table.whitelist", CFG_LIST, "", 0, 0, NULL, 0,
     "Tables to copy, comma-separated; one source partition and one topic each.",
     CFG_FIELD(struct sqlite_conf, whitelist)},
    {"table.include.list", CFG_LIST, "", 0, 0, NULL, 0, "The newer name of table.whitelist.",
     CFG_FIELD(struct sqlite_conf, include_list)},
    {"query", CFG_STRING, "", 0, 0, NULL, 0,
     "A SELECT to copy instead of tables; skiff wraps it as a subquery, so it may have its "
     "own WHERE.",
     CFG_FIELD(struct sqlite_conf, query)},
    {"topic.prefix", CFG_STRING, NULL, 0, 0, NULL, 0,
     "Topic = prefix + table name; for a query, the topic itself. Required (may be empty "
     "with tables).",
     CFG_FIELD(struct sqlite_conf, topic_prefix)},
    {"incrementing.column.name", CFG_STRING, "", 0, 0, NULL, 0,
     "The strictly increasing integer column; empty: the INTEGER PRIMARY KEY, or the rowid.",
     CFG_FIELD(struct sqlite_conf, inc_name)},
    {"timestamp.column.name", CFG_LIST, "", 0, 0, NULL, 0,
     "Timestamp column(s); several are combined with COALESCE. ISO-8601 text or epoch "
     "numbers.",
     CFG_FIELD(struct sqlite_conf, ts_names)},
    {"timestamp.initial", CFG_INT, NULL, -1, INT64_MAX, NULL, 0,
     "Epoch ms to start timestamp modes from when there is no offset; -1: now. Unset: "
     "everything.",
     CFG_FIELD_SET(struct sqlite_conf, ts_initial, ts_initial_given)},
    {"timestamp.delay.interval.ms", CFG_INT, "0", 0, 1000000000000LL, NULL, 0,
     "Rows are read only once their timestamp is this much older than now, so late "
     "commits with earlier timestamps are not skipped.",
     CFG_FIELD(struct sqlite_conf, delay_ms)},
    {"poll.interval.ms", CFG_INT, "5000", 1, INT32_MAX, NULL, 0,
     "How often each table is queried for new rows.", CFG_FIELD(struct sqlite_conf, poll_ms)},
    {"batch.max.rows", CFG_INT, "1000", 1, INT32_MAX, NULL, 0,
     "Most rows read in one query (one short read transaction).",
     CFG_FIELD(struct sqlite_conf, batch_max)},
    {"validate.non.null", CFG_BOOL, "true", 0, 0, NULL, 0,
     "Refuse nullable incrementing/timestamp columns (a NULL row is never read).",
     CFG_FIELD(struct sqlite_conf, validate_non_null)},
    {"key.column.name", CFG_LIST, "", 0, 0, NULL, 0,
     "Columns that form the record key, as a struct (what transforms=ValueToKey with "
     "fields=... makes); empty: null keys.",
     CFG_FIELD(struct sqlite_conf, key_names)},
    {"db.timezone", CFG_STRING, "UTC", 0, 0, NULL, 0,
     "Zone of timestamps stored without one. Only UTC is supported.",
     CFG_FIELD(struct sqlite_conf, timezone)},
    {"connection.user", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Not used by SQLite.",
     CFG_NOFIELD},
    {"connection.password", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT | CFG_SECRET,
     "Not used by SQLite.", CFG_NOFIELD},
    {"connection.attempts", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Not used: skiff waits for a missing or locked database.", CFG_NOFIELD},
    {"connection.backoff.ms", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Not used: skiff backs off on its own.", CFG_NOFIELD},
    {"dialect.name", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Always SQLite.", CFG_NOFIELD},
    {"numeric.mapping", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Not used: SQLite values carry their own type.", CFG_NOFIELD},
    {"numeric.precision.mapping", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Not used.",
     CFG_NOFIELD},
    {"catalog.pattern", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Not used.", CFG_NOFIELD},
    {"schema.pattern", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Not used.", CFG_NOFIELD},
    {"table.types", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "Tables and views are read.",
     CFG_NOFIELD},
    {"table.poll.interval.ms", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Not used: the table list is fixed.", CFG_NOFIELD},
    {"quote.sql.identifiers", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Identifiers are always quoted.", CFG_NOFIELD},
    {"transaction.isolation.mode", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "SQLite reads are serializable.", CFG_NOFIELD},
    {"query.retry.attempts", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,
     "Not used: a busy database is retried until it answers.", CFG_NOFIELD},
    CFG_END,
};

/* ---- positions and offsets ------------------------------------------------ */

/* Where t starts when nothing was committed. */
static void initial_position(struct sqsrc *s, struct sqtable *t)
{
	t->inc = INT64_MIN;
	t->ts = t->done_ts = SQLTS_NONE;
	t->rid = INT64_MAX; /* the group of ts is complete */
	if (s->has_initial && s->initial_ms == -1)
		t->ts = t->done_ts = clock_wall_ns() - s->delay_ms * 1000000;
	else if (s->has_initial &&
	         __builtin_mul_overflow(s->initial_ms, (int64_t)1000000, &t->ts) == 0)
		t->done_ts = t->ts;
}

/* Applies the committed offset of t. Returns 0, or -1 when it is unusable. */
static int resume(struct sqsrc *s, struct sqtable *t, char *errbuf, size_t errlen)
{
	const char *json = s->env->committed(s->env, t->part);
	int64_t inc = 0, ns = 0, seen = 0;
	bool has_inc, has_ts;

	initial_position(s, t);
	t->started = true;
	if (json == NULL || s->mode == SQ_BULK)
		return 0;
	if (sqcheck_position(json, &has_inc, &inc, &has_ts, &ns) != 0) {
		snprintf(errbuf, errlen, "%s: stored offset %s: timestamp out of range",
		         t->name ? t->name : "query", json);
		return -1;
	}
	if ((s->mode == SQ_INCREMENTING && !has_inc) || (s->mode != SQ_INCREMENTING && !has_ts)) {
		s->env->log(s->env, LOG_WARN,
		            "%s: the stored offset %s does not fit mode %s: starting as if there "
		            "were none",
		            t->name ? t->name : "query", json,
		            s->mode == SQ_INCREMENTING ? "incrementing" : "timestamp");
		s->env->count(s->env, "offsets_ignored", 1);
		return 0;
	}
	if (has_inc)
		t->inc = inc;
	if (has_ts && s->mode != SQ_INCREMENTING)
		t->ts = t->done_ts = ns;
	/* The ids above the offset's are new to the clock's check (sqclock.c). */
	if (has_inc && s->mode == SQ_TS_INC) {
		t->clock.key = inc;
		t->clock.ready = true;
	}
	/* timestamp: the rowids above the one skiff's offset keeps are new. An
	 * offset without it (Connect's, or one a person set) says nothing of
	 * the rows written meanwhile: sqclock.c says so. */
	if (s->mode == SQ_TIMESTAMP && jsonint_get(json, SQ_ROWID_SEEN, &seen) == 0) {
		t->clock.key = seen;
		t->clock.ready = true;
	} else if (s->mode == SQ_TIMESTAMP)
		t->clock.unknown = true;
	return 0;
}

static char *sqlite_offset_json(void *ctx, const struct src_offset *off)
{
	struct sqsrc *s = ctx;
	char buf[200];
	int64_t ns = off->v[1];
	int n;

	/* Key order as Connect writes the JDBC connector's HashMap. */
	switch (s->mode) {
	case SQ_BULK:
		snprintf(buf, sizeof(buf), "{\"polling.timestamp\":%lld}", (long long)off->v[2]);
		break;
	case SQ_INCREMENTING:
		snprintf(buf, sizeof(buf), "{\"incrementing\":%lld}", (long long)off->v[0]);
		break;
	case SQ_TIMESTAMP:
		/* skiff's member last, after Connect's (which Connect reads alone;
		 * the offsets topic's value leaves it out, offsets_kvalue.c). */
		n = snprintf(buf, sizeof(buf), "{\"timestamp_nanos\":%lld,\"timestamp\":%lld",
		             (long long)sqlts_nanos(ns), (long long)sqlts_ms(ns));
		if (off->v[2] == 1 && n > 0 && (size_t)n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - (size_t)n,
			              ",\"" SQ_ROWID_SEEN "\":%lld", (long long)off->v[3]);
		if (n > 0 && (size_t)n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - (size_t)n, "}");
		break;
	case SQ_TS_INC:
		snprintf(buf, sizeof(buf),
		         "{\"timestamp_nanos\":%lld,\"incrementing\":%lld,\"timestamp\":%lld}",
		         (long long)sqlts_nanos(ns), (long long)off->v[0], (long long)sqlts_ms(ns));
		break;
	}
	return strdup(buf);
}

/* ---- polling -------------------------------------------------------------- */

static void release(struct sqsrc *s)
{
	for (size_t i = 0; i < s->nowned; i++)
		cJSON_Delete(s->owned[i]);
	s->nowned = 0;
}

static void report_stats(struct sqsrc *s)
{
	struct sqvalue_stats *st = &s->stats;

	if (st->utf8_replaced)
		s->env->count(s->env, "utf8_replaced", st->utf8_replaced);
	if (st->ts_unparsed)
		s->env->count(s->env, "timestamps_unparsed", st->ts_unparsed);
	memset(st, 0, sizeof(*st));
}

/* Queries t for new rows. Returns 0, 1 when the database is busy, or
 * SOURCE_ERR, SOURCE_ERR_CONFIG (a person must fix it), SOURCE_ERR_NOMEM. */
static int fill_table(struct sqsrc *s, struct sqtable *t, int64_t now, char *errbuf, size_t errlen)
{
	int rc;

	if (s->mode == SQ_BULK && t->bulk_ms == 0) {
		t->bulk_ms = clock_wall_ns() / 1000000;
		t->bulk_pos = INT64_MIN;
	}
	/* No record of an earlier poll points to a schema any more. */
	if (t->laid_out &&
	    (sqvalue_schemas_full(&t->vschemas) || sqvalue_schemas_full(&t->kschemas)))
		sqlayout_drop(t);
	rc = sqquery_fill(s, t, errbuf, errlen);
	if (rc == SQ_BUSY) {
		sqdb_busy(s, now);
		return 1;
	}
	if (rc == SQ_STALE) {
		/* Rare (the application closed its database during the read):
		 * the next look at the files reopens or waits (sqdb_ensure). */
		s->env->log(s->env, LOG_NOTICE, "%s: %s during a read: reading again", s->path,
		            errbuf);
		s->env->count(s->env, "database_reads_dropped", 1);
		s->conn.retry_at = now + SQ_BUSY_TIMEOUT_MS;
		errbuf[0] = '\0';
		return 1;
	}
	if (rc == SQ_ERR || rc == SQ_CONFIG || rc == SQ_NOMEM)
		return rc == SQ_CONFIG  ? SOURCE_ERR_CONFIG
		       : rc == SQ_NOMEM ? SOURCE_ERR_NOMEM
		                        : SOURCE_ERR;
	sqdb_answer(s, now);
	if (rc == SQ_MISSING)
		t->rows.more = false;
	else if (s->mode == SQ_BULK && !t->rows.more)
		t->bulk_ms = 0; /* the pass is complete */
	return 0;
}

static bool any_buffered(const struct sqsrc *s)
{
	for (size_t i = 0; i < s->ntables; i++)
		if (sqrows_buffered(&s->tables[i]))
			return true;
	return false;
}

/* Hands out buffered rows first; queries due tables while there is room.
 * Returns 0 or a SOURCE_ERR* code. */
static int fill_batch(struct sqsrc *s, struct source_batch *b, size_t limit, int64_t now,
                      char *errbuf, size_t errlen)
{
	bool opened = false, may_query = s->conn.retry_at == 0 || now >= s->conn.retry_at;

	if (may_query)
		s->conn.retry_at = 0;
	for (size_t k = 0; k < s->ntables && b->n < limit; k++) {
		struct sqtable *t = &s->tables[(s->rr + k) % s->ntables];
		int rc;

		if (!sqrows_buffered(t)) {
			if (!may_query || t->next_due > now)
				continue;
			if (!opened) {
				/* Re-opening a replaced database must wait until no
				 * buffered row points into the old layouts. */
				rc = sqdb_ensure(s, now, !any_buffered(s), errbuf, errlen);
				if (rc != 0)
					return rc < 0 ? SOURCE_ERR : 0;
				opened = true;
			}
			rc = fill_table(s, t, now, errbuf, errlen);
			if (rc < 0)
				return rc;
			if (rc > 0)
				return 0; /* busy: back off */
		}
		sqrows_emit(s, t, b, limit - b->n);
		t->next_due = sqrows_buffered(t) || t->rows.more ? now : now + s->poll_ms;
	}
	return 0;
}

static int sqlite_poll(void *ctx, struct source_batch *b, int64_t now, char *errbuf, size_t errlen)
{
	struct sqsrc *s = ctx;
	size_t limit = b->max < s->batch_max ? b->max : s->batch_max;
	int rc = 0;

	release(s);
	b->n = 0;
	b->more = false;
	if (s->pending != NULL && !any_buffered(s)) {
		snprintf(errbuf, errlen, "%s", s->pending);
		return s->pending_config ? SOURCE_ERR_CONFIG : SOURCE_ERR;
	}
	rc = fill_batch(s, b, limit, now, errbuf, errlen);
	s->rr = (s->rr + 1) % s->ntables;
	report_stats(s);
	for (size_t i = 0; i < s->ntables && rc == 0; i++)
		b->more = b->more || sqrows_buffered(&s->tables[i]) ||
		          (s->conn.retry_at == 0 && s->tables[i].next_due <= now);
	return rc;
}

static int sqlite_pollfds(void *ctx, struct pollfd *fds, int max)
{
	(void)ctx;
	(void)fds;
	(void)max;
	return 0;
}

static int64_t sqlite_timeout(void *ctx, int64_t now)
{
	struct sqsrc *s = ctx;
	int64_t due = INT64_MAX;

	if (any_buffered(s))
		return 0;
	if (s->conn.retry_at != 0)
		return s->conn.retry_at > now ? s->conn.retry_at - now : 0;
	for (size_t i = 0; i < s->ntables; i++)
		if (s->tables[i].next_due < due)
			due = s->tables[i].next_due;
	return due > now ? due - now : 0;
}

/* ---- set-up --------------------------------------------------------------- */

static void sqlite_close(void *ctx)
{
	struct sqsrc *s = ctx;

	if (s == NULL)
		return;
	release(s);
	for (size_t i = 0; i < s->ntables; i++)
		sqrows_drop(&s->tables[i]);
	sqdb_close(s);
	for (size_t i = 0; i < s->ntables; i++) {
		sqseen_group_free(&s->tables[i].group);
		sqrows_free(&s->tables[i]);
		free(s->tables[i].name);
		free(s->tables[i].topic);
	}
	for (size_t i = 0; i < s->nts; i++)
		free(s->ts_names[i]);
	for (size_t i = 0; i < s->nkeys; i++)
		free(s->key_names[i]);
	free(s->ts_names);
	free(s->key_names);
	free(s->tables);
	free(s->owned);
	free(s->path);
	free(s->file);
	free(s->inc_name);
	free(s->query);
	free(s->pending);
	free(s);
}

/* What connection.url opens: *p and *len, the path or SQLite URI after
 * "jdbc:sqlite:" (sqlite-jdbc's "?key=value" settings after a plain path
 * left out), *uri whether it is a URI. Returns 0, or -1 with errbuf. */
static int url_target(const char *url, const char **p, size_t *len, bool *uri, char *errbuf,
                      size_t errlen)
{
	const char *t = url;

	if (strncmp(t, "jdbc:sqlite:", 12) == 0)
		t += 12;
	else if (strncmp(t, "jdbc:", 5) == 0) {
		snprintf(errbuf, errlen,
		         "connection.url: %s: skiff reads SQLite databases only "
		         "(jdbc:sqlite:/path/to/file.db)",
		         url);
		return -1;
	}
	if (*t == '\0' || strcmp(t, ":memory:") == 0 || strncmp(t, ":resource:", 10) == 0) {
		snprintf(errbuf, errlen, "connection.url: %s: name a database file", url);
		return -1;
	}
	*uri = strncmp(t, "file:", 5) == 0;
	*p = t;
	*len = *uri ? strlen(t) : strcspn(t, "?");
	return 0;
}

/* connection.url to a file name (or an SQLite URI). */
static int parse_url(struct sqsrc *s, const char *url, char *errbuf, size_t errlen)
{
	const char *p;
	size_t len;

	if (url_target(url, &p, &len, &s->uri, errbuf, errlen) != 0)
		return -1;
	/* sqlite-jdbc takes "?key=value" settings after a path: none apply to a
	 * read-only reader. */
	if (p[len] == '?')
		s->env->log(s->env, LOG_NOTICE, "connection.url: ignoring the settings after '?'");
	s->path = strndup(p, len);
	if (s->path == NULL || (!s->uri && (s->file = strdup(s->path)) == NULL)) {
		snprintf(errbuf, errlen, "sqlite source: out of memory");
		return -1;
	}
	/* A URI's file is watched like a plain path: deleted, replaced. */
	if (s->uri && (s->file = squri_file(s->path, errbuf, errlen)) == NULL)
		return -1;
	return 0;
}

static bool topic_ok(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > 249 || strcmp(t, ".") == 0 || strcmp(t, "..") == 0)
		return false;
	return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static char **copy_list(const struct config_list *l, size_t *n)
{
	char **v = calloc(l->n + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; v != NULL && i < l->n; i++) {
		v[i] = strdup(l->items[i]);
		if (v[i] == NULL)
			return v;
		*n = i + 1;
	}
	return v;
}

static int partition_of(struct sqsrc *s, struct sqtable *t)
{
	cJSON *o = cJSON_CreateObject();
	char *json = NULL;

	if (o != NULL && t->name == NULL)
		cJSON_AddStringToObject(o, "query", "query");
	else if (o != NULL && s->mode == SQ_BULK)
		cJSON_AddStringToObject(o, "table", t->name);
	else if (o != NULL && cJSON_AddStringToObject(o, "protocol", "1") != NULL)
		cJSON_AddStringToObject(o, "table", t->name);
	if (o != NULL)
		json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (json != NULL)
		t->part = s->env->partition(s->env, json);
	free(json);
	return t->part != NULL ? 0 : -1;
}

/* Sets up the tables (or the query) of the configuration. Returns 0,
 * SOURCE_ERR_NOMEM, or SOURCE_ERR_CONFIG with errbuf. */
static int add_tables(struct sqsrc *s, const struct config_section *cfg,
                      const struct sqlite_conf *c, char *errbuf, size_t errlen)
{
	bool include = c->include_list.n > 0;
	const char *key = include ? "table.include.list" : "table.whitelist";
	const struct config_list *list = include ? &c->include_list : &c->whitelist;
	const char *prefix = c->topic_prefix;
	size_t n = s->query ? 1 : list->n;

	s->tables = calloc(n, sizeof(*s->tables));
	if (s->tables == NULL)
		return SOURCE_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		struct sqtable *t = &s->tables[i];
		size_t plen = strlen(prefix);
		const char *name = s->query ? "" : list->items[i];

		for (size_t j = 0; j < i; j++) {
			if (strcasecmp(s->tables[j].name, name) == 0) {
				snprintf(errbuf, errlen, "%s: %s: table %s is listed twice",
				         config_where(cfg, key), key, name);
				return SOURCE_ERR_CONFIG;
			}
		}
		s->ntables++;
		buf_init(&t->rows.text, SQ_TEXT_MAX);
		t->name = s->query ? NULL : strdup(name);
		t->topic = malloc(plen + strlen(name) + 1);
		if ((s->query == NULL && t->name == NULL) || t->topic == NULL)
			return SOURCE_ERR_NOMEM;
		memcpy(t->topic, prefix, plen);
		memcpy(t->topic + plen, name, strlen(name) + 1);
		if (!topic_ok(t->topic)) {
			snprintf(errbuf, errlen,
			         "%s: topic '%s' (topic.prefix%s) is not a valid "
			         "Kafka topic name (letters, digits, '.', '_', '-'; at most 249)",
			         config_where(cfg, "topic.prefix"), t->topic,
			         s->query ? "" : " + table name");
			return SOURCE_ERR_CONFIG;
		}
		if (partition_of(s, t) != 0)
			return SOURCE_ERR_NOMEM;
		if (resume(s, t, errbuf, errlen) != 0)
			return SOURCE_ERR_CONFIG;
	}
	return 0;
}

/* The checks the loader cannot make: which keys go together. */
static int check_config(const struct config_section *cfg, const struct sqlite_conf *c, char *errbuf,
                        size_t errlen)
{
	enum sqmode mode = c->mode;
	bool tables = c->whitelist.n > 0 || c->include_list.n > 0;
	bool query = c->query[0] != '\0';
	const char *tz = c->timezone;
	const char *why = NULL, *key = "mode";

	if (c->whitelist.n && c->include_list.n)
		why = "set table.include.list or table.whitelist, not both",
		key = "table.whitelist";
	else if (tables && query)
		why = "set table.whitelist (or table.include.list) or query, not both",
		key = "query";
	else if (!tables && !query)
		why = "set table.whitelist (or table.include.list) or query";
	else if (c->topic_prefix == NULL)
		why = "topic.prefix is required (with tables it may be empty: the topic is then "
		      "the table name)";
	else if (query && c->topic_prefix[0] == '\0')
		why = "topic.prefix is the topic of a query: it must not be empty",
		key = "topic.prefix";
	else if ((mode == SQ_INCREMENTING || mode == SQ_TS_INC) && query && c->inc_name[0] == '\0')
		why = "a query has no rowid: set incrementing.column.name";
	else if ((mode == SQ_TIMESTAMP || mode == SQ_TS_INC) && c->ts_names.n == 0)
		why = "mode timestamp needs timestamp.column.name";
	else if (strcasecmp(tz, "UTC") != 0 && strcasecmp(tz, "Etc/UTC") != 0 &&
	         strcasecmp(tz, "GMT") != 0 && strcasecmp(tz, "Z") != 0)
		why = "db.timezone: only UTC is supported (store timestamps with a zone, or in "
		      "UTC)",
		key = "db.timezone";
	if (why == NULL)
		return 0;
	snprintf(errbuf, errlen, "%s: %s", config_where(cfg, key), why);
	return -1;
}

static char *trimmed_query(const char *q)
{
	size_t len = strlen(q);

	while (len > 0 && (q[len - 1] == ';' || q[len - 1] == ' ' || q[len - 1] == '\t' ||
	                   q[len - 1] == '\n' || q[len - 1] == '\r'))
		len--;
	return strndup(q, len);
}

/* Every counter this source keeps, registered at open (source_counters). */
static const struct stats_desc sqlite_counters[] = {
    {.name = "database_missing",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "times the database file was found missing (waiting for it)"},
    {.name = "database_reopened",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "times the database file was replaced and opened again"},
    {.name = "database_reads_dropped",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "reads dropped and done again: the application changed the database's files "
             "under them (closed its last connection, switched the journal mode)"},
    {.name = "database_busy",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "polls that found the database locked"},
    {.name = "database_not_wal",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "polls of a database in rollback-journal mode under a timestamp mode"},
    {.name = "paths_not_regular",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "paths that name no regular file (a FIFO, directory or device)"},
    {.name = "offsets_ignored",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "stored offsets that did not fit the mode (started as if none)"},
    {.name = "utf8_replaced",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "invalid UTF-8 sequences in TEXT values replaced with U+FFFD"},
    {.name = "timestamps_unparsed",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "timestamp values that could not be read as a time"},
    {.name = "tables_missing",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "polls that found a configured table missing"},
    {.name = "rows_without_position",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "rows with NULL in the incrementing or timestamp column: never read"},
    {.name = "schema_changes",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "schema changes seen (columns read again)"},
    {.name = "offset_ahead_of_table",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "stored ids ahead of the table's largest id"},
    {.name = "ids_reused",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "ids SQLite handed out again after the rows were deleted"},
};

static int sqlite_open(const struct config_section *cfg, struct source_env *env, void **ctx,
                       char *errbuf, size_t errlen)
{
	struct sqsrc *s = calloc(1, sizeof(*s));
	struct sqlite_conf c;
	int rc;

	*ctx = NULL;
	source_sqlite_conf(cfg, &c);
	if (s == NULL)
		goto nomem;
	s->env = env;
	if (source_counters(env, sqlite_counters,
	                    sizeof(sqlite_counters) / sizeof(sqlite_counters[0])))
		goto nomem;
	s->mode = c.mode;
	if (check_config(cfg, &c, errbuf, errlen) != 0 ||
	    sqlitelib_load(config_where(cfg, "connector.class"), errbuf, errlen) != 0 ||
	    parse_url(s, c.url, errbuf, errlen) != 0)
		goto fail;
	if (c.query[0] != '\0' && (s->query = trimmed_query(c.query)) == NULL)
		goto nomem;
	s->inc_name = strdup(c.inc_name);
	s->ts_names = copy_list(&c.ts_names, &s->nts);
	s->key_names = copy_list(&c.key_names, &s->nkeys);
	if (s->inc_name == NULL || s->ts_names == NULL || s->key_names == NULL ||
	    s->nts != c.ts_names.n || s->nkeys != c.key_names.n)
		goto nomem;
	s->validate_non_null = c.validate_non_null;
	s->has_initial = c.ts_initial_given;
	s->initial_ms = s->has_initial ? c.ts_initial : 0;
	s->delay_ms = c.delay_ms;
	s->poll_ms = c.poll_ms;
	s->batch_max = (size_t)c.batch_max;
	rc = add_tables(s, cfg, &c, errbuf, errlen);
	if (rc == SOURCE_ERR_NOMEM)
		goto nomem;
	if (rc != 0)
		goto fail;
	*ctx = s;
	return 0;
nomem:
	snprintf(errbuf, errlen, "sqlite source: out of memory");
	sqlite_close(s);
	return SOURCE_ERR_NOMEM;
fail:
	sqlite_close(s);
	return -1; /* from open(): a configuration error */
}

/* Lays out every table in its own read transaction, as the first poll
 * would. Returns 0 or an SQ_ code; a missing table or a lock is logged. */
static int check_tables(struct sqsrc *s, char *errbuf, size_t errlen)
{
	int rc = 0;

	errbuf[0] = '\0';
	for (size_t i = 0; rc == 0 && i < s->ntables; i++) {
		rc = sqlite3_step(s->conn.begin);
		sqlite3_reset(s->conn.begin);
		if (rc == SQLITE_DONE)
			rc = sqlayout_build(s, &s->tables[i], 0, errbuf, errlen);
		else if (sqlitelib_busy(rc))
			rc = SQ_BUSY;
		else
			rc = SQ_ERR;
		if (rc == SQ_ERR && errbuf[0] == '\0')
			snprintf(errbuf, errlen, "%s: %s", s->path, sqlite3_errmsg(s->conn.db));
		if (sqlite3_step(s->conn.commit) != SQLITE_DONE)
			sqlite3_step(s->conn.rollback);
		sqlite3_reset(s->conn.commit);
		sqlite3_reset(s->conn.rollback);
		if (rc == SQ_BUSY)
			s->env->log(s->env, LOG_NOTICE, "%s is locked: its tables were not checked",
			            s->path);
		if (rc == SQ_MISSING || rc == SQ_BUSY)
			rc = 0;
	}
	return rc;
}

/* --check: open()'s checks, then, when the database is there, each table's
 * columns and statement. A database or table that is not there yet is
 * waited for at run time: logged, not an error. */
static int sqlite_check(const struct config_section *cfg, const char *name, char *errbuf,
                        size_t errlen)
{
	struct source_env env;
	struct sqsrc *s = NULL;
	void *ctx = NULL;
	int rc;

	sqguard_check_env(&env, name, false);
	rc = sqlite_open(cfg, &env, &ctx, errbuf, errlen);
	if (rc != 0)
		return rc == SOURCE_ERR_NOMEM ? rc : SOURCE_ERR_CONFIG;
	s = ctx;
	rc = sqdb_ensure(s, 0, true, errbuf, errlen);
	if (rc == 0)
		rc = check_tables(s, errbuf, errlen);
	sqlite_close(s);
	return rc == 0 || rc == 1 ? 0
	       : rc == SQ_CONFIG  ? SOURCE_ERR_CONFIG
	       : rc == SQ_NOMEM   ? SOURCE_ERR_NOMEM
	                          : SOURCE_ERR;
}

/* The table (or the query) partition names, or NULL. */
static struct sqtable *table_of(struct sqsrc *s, const char *partition)
{
	cJSON *p = cJSON_Parse(partition);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "table");
	struct sqtable *t = NULL;

	for (size_t i = 0; i < s->ntables && t == NULL; i++)
		if (cJSON_IsString(name) ? s->tables[i].name != NULL &&
		                               strcmp(s->tables[i].name, name->valuestring) == 0
		                         : s->tables[i].name == NULL)
			t = &s->tables[i];
	cJSON_Delete(p);
	return t;
}

/* The most VM steps a check from the main loop (REST) may take: tens of
 * milliseconds on a PC; a timestamp mode reads the whole table. */
#define REACH_BUDGET_STEPS 20000000
#define REACH_STEPS_PER_CALL 10000

static int reach_over(void *arg)
{
	int *calls = arg;

	return ++*calls > REACH_BUDGET_STEPS / REACH_STEPS_PER_CALL;
}

/* Compares offset with the newest row of its table, in one read
 * transaction of a connection of its own. Returns an SQ_ code. */
static int reach(struct sqsrc *s, struct sqtable *t, const char *offset, bool bounded, char *errbuf,
                 size_t errlen)
{
	int rc, calls = 0;

	rc = sqdb_ensure(s, 0, true, errbuf, errlen);
	if (rc != 0) {
		if (rc > 0)
			snprintf(errbuf, errlen, "%s is not there (or is not a database yet)",
			         s->path);
		return SQ_ERR;
	}
	if (bounded)
		sqlite3_progress_handler(s->conn.db, REACH_STEPS_PER_CALL, reach_over, &calls);
	rc = sqlite3_step(s->conn.begin);
	sqlite3_reset(s->conn.begin);
	if (rc != SQLITE_DONE)
		rc = sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
	else if ((rc = sqlayout_build(s, t, 0, errbuf, errlen)) == 0)
		rc = sqcheck_newest(s, t, offset, errbuf, errlen);
	if (rc == SQ_ERR && calls > REACH_BUDGET_STEPS / REACH_STEPS_PER_CALL)
		snprintf(errbuf, errlen, "%s %s is too large to read within a REST request",
		         t->name ? "table" : "the", t->name ? t->name : "query");
	if (sqlite3_step(s->conn.commit) != SQLITE_DONE)
		sqlite3_step(s->conn.rollback);
	sqlite3_reset(s->conn.commit);
	sqlite3_reset(s->conn.rollback);
	sqlite3_progress_handler(s->conn.db, 0, NULL, NULL);
	return rc;
}

/* The offset to store when "timestamp" (ms) was changed from stored's and
 * "timestamp_nanos" was not (a GET body with a new timestamp): the nanos
 * of the new millisecond (malloc'd), or NULL to store it as sent. The
 * nanos replace the sub-second part of the ms (the JDBC connector's
 * Timestamp.setNanos), so the old ones moved the instant back into the old
 * position's second fraction: a rewind to .410 read from .900. skiff's
 * rowid_seen, when sent, is kept as sent (dropped, the restart would look
 * for rows stamped behind the offset from the largest rowid then only). */
static char *nanos_refreshed(const char *offset, const char *stored)
{
	int64_t ms, ns, sms, sns, inc, sub, seen;
	bool has_inc = jsonint_get(offset, "incrementing", &inc) == 0;
	bool has_seen = jsonint_get(offset, SQ_ROWID_SEEN, &seen) == 0;
	char buf[200];
	int n;

	if (stored == NULL || jsonint_get(offset, "timestamp", &ms) != 0 ||
	    jsonint_get(offset, "timestamp_nanos", &ns) != 0 ||
	    jsonint_get(stored, "timestamp", &sms) != 0 ||
	    jsonint_get(stored, "timestamp_nanos", &sns) != 0 || ms == sms || ns != sns)
		return NULL;
	sub = (ms % 1000 + 1000) % 1000 * 1000000;
	if (ns / 1000000 == sub / 1000000)
		return NULL;
	if (has_inc) /* Connect's key order, skiff's member last */
		n = snprintf(buf, sizeof(buf),
		             "{\"timestamp_nanos\":%lld,\"incrementing\":%lld,\"timestamp\":%lld",
		             (long long)sub, (long long)inc, (long long)ms);
	else
		n = snprintf(buf, sizeof(buf), "{\"timestamp_nanos\":%lld,\"timestamp\":%lld",
		             (long long)sub, (long long)ms);
	if (has_seen && n > 0 && (size_t)n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ",\"" SQ_ROWID_SEEN "\":%lld",
		              (long long)seen);
	if (n <= 0 || (size_t)n + 1 >= sizeof(buf))
		return NULL;
	snprintf(buf + n, sizeof(buf) - (size_t)n, "}");
	return strdup(buf);
}

/* source_ops.check_reach: an offset past the newest row is refused, and so
 * is one that cannot be checked (its database or table missing, locked). A
 * row offset names everything it means: stored aside, stored as sent, but
 * for the nanos of a changed timestamp (nanos_refreshed). */
static int sqlite_check_reach(const struct config_section *cfg, const char *partition,
                              const char *offset, const char *stored, bool bounded, char **settled,
                              char *errbuf, size_t errlen)
{
	struct source_env env;
	struct sqtable *t;
	char why[512] = "";
	void *ctx = NULL;
	int rc;

	*settled = nanos_refreshed(offset, stored);
	if (errlen > 0)
		errbuf[0] = '\0';
	sqguard_check_env(&env, "offsets", true);
	if (sqlite_open(cfg, &env, &ctx, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "the offset cannot be checked: %s", why);
		return SOURCE_ERR_CONFIG;
	}
	t = table_of(ctx, partition);
	rc = t != NULL ? reach(ctx, t, *settled ? *settled : offset, bounded, why, sizeof(why)) : 0;
	if (rc == SQ_CONFIG)
		snprintf(errbuf, errlen, "%s", why);
	else if (rc == SQ_MISSING)
		snprintf(errbuf, errlen,
		         "table %s does not exist: the offset cannot be checked against its rows",
		         t->name ? t->name : "?");
	else if (rc == SQ_BUSY)
		snprintf(errbuf, errlen,
		         "the database is locked: the offset cannot be checked against the rows of "
		         "%s %s now",
		         t->name ? "table" : "the", t->name ? t->name : "query");
	else if (rc != 0)
		snprintf(errbuf, errlen,
		         "the offset cannot be checked against the rows of %s %s: %s",
		         t->name ? "table" : "the", t->name ? t->name : "query", why);
	else if (*settled != NULL)
		snprintf(errbuf, errlen,
		         "table %s: \"timestamp_nanos\" stored as the new timestamp's sub-second "
		         "part: %s",
		         t != NULL && t->name ? t->name : "query", *settled);
	sqlite_close(ctx);
	return rc == 0 ? 0 : SOURCE_ERR_CONFIG;
}

/* ---- what a configuration names (source_ops.resources) -------------------- */

/* What each key names; every row of source_sqlite_keys is here. */
static const struct source_key_names sqlite_key_names[] = {
    {"connection.url", SOURCE_RES_DATABASE},
    {"mode", SOURCE_RES_NONE},
    {"table.whitelist", SOURCE_RES_TOPIC}, /* topic.prefix + each table */
    {"table.include.list", SOURCE_RES_TOPIC},
    {"query", SOURCE_RES_NONE}, /* read from the database named above */
    {"topic.prefix", SOURCE_RES_TOPIC},
    {"incrementing.column.name", SOURCE_RES_NONE},
    {"timestamp.column.name", SOURCE_RES_NONE},
    {"timestamp.initial", SOURCE_RES_NONE},
    {"timestamp.delay.interval.ms", SOURCE_RES_NONE},
    {"poll.interval.ms", SOURCE_RES_NONE},
    {"batch.max.rows", SOURCE_RES_NONE},
    {"validate.non.null", SOURCE_RES_NONE},
    {"key.column.name", SOURCE_RES_NONE},
    {"db.timezone", SOURCE_RES_NONE},
    {"connection.user", SOURCE_RES_NONE}, /* the rest: inert */
    {"connection.password", SOURCE_RES_NONE},
    {"connection.attempts", SOURCE_RES_NONE},
    {"connection.backoff.ms", SOURCE_RES_NONE},
    {"dialect.name", SOURCE_RES_NONE},
    {"numeric.mapping", SOURCE_RES_NONE},
    {"numeric.precision.mapping", SOURCE_RES_NONE},
    {"catalog.pattern", SOURCE_RES_NONE},
    {"schema.pattern", SOURCE_RES_NONE},
    {"table.types", SOURCE_RES_NONE},
    {"table.poll.interval.ms", SOURCE_RES_NONE},
    {"quote.sql.identifiers", SOURCE_RES_NONE},
    {"transaction.isolation.mode", SOURCE_RES_NONE},
    {"query.retry.attempts", SOURCE_RES_NONE},
    {NULL, SOURCE_RES_NONE},
};

/* The database file (the file behind a URI) and the topics: topic.prefix
 * for a query, topic.prefix + each table's name for tables (add_tables). */
static int sqlite_resources(const struct config_section *cfg,
                            void (*put)(void *arg, enum source_resource kind, const char *what),
                            void *arg, char *errbuf, size_t errlen)
{
	struct sqlite_conf c;
	const struct config_list *list;
	const char *p, *prefix;
	char *file, *path;
	size_t len;
	bool uri;

	source_sqlite_conf(cfg, &c);
	if (url_target(c.url, &p, &len, &uri, errbuf, errlen) != 0)
		return SOURCE_ERR_CONFIG;
	if ((path = strndup(p, len)) == NULL)
		goto nomem;
	file = uri ? squri_file(path, errbuf, errlen) : path;
	if (file == NULL) {
		free(path);
		return SOURCE_ERR_CONFIG;
	}
	put(arg, SOURCE_RES_DATABASE, file);
	if (file != path)
		free(file);
	free(path);
	prefix = c.topic_prefix != NULL ? c.topic_prefix : "";
	if (c.query[0] != '\0') {
		put(arg, SOURCE_RES_TOPIC, prefix);
		return 0;
	}
	list = c.include_list.n > 0 ? &c.include_list : &c.whitelist;
	for (size_t i = 0; i < list->n; i++) {
		size_t plen = strlen(prefix), tlen = strlen(list->items[i]);
		char *topic = malloc(plen + tlen + 1);

		if (topic == NULL)
			goto nomem;
		memcpy(topic, prefix, plen);
		memcpy(topic + plen, list->items[i], tlen + 1);
		put(arg, SOURCE_RES_TOPIC, topic);
		free(topic);
	}
	return 0;
nomem:
	snprintf(errbuf, errlen, "sqlite source: out of memory");
	return SOURCE_ERR_NOMEM;
}

const struct source_ops source_sqlite_ops = {
    .kind = "sqlite",
    .classes = sqlite_classes,
    .config_keys = source_sqlite_keys,
    .config_size = sizeof(struct sqlite_conf),
    .value_kind = VALUE_STRUCT,
    .open = sqlite_open,
    .check = sqlite_check,
    .check_offset = sqcheck_offset,
    .check_reach = sqlite_check_reach,
    .poll = sqlite_poll,
    .pollfds = sqlite_pollfds,
    .timeout_ms = sqlite_timeout,
    .offset_json = sqlite_offset_json,
    .backlog = sqbacklog_count,
    .resources = sqlite_resources,
    .key_names = sqlite_key_names,
    .close = sqlite_close,
};
