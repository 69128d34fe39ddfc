/* sqcheck: whether an offset a person sends (KIP-875, REST PATCH) is one the
 * SQLite source would use, checked against the connector's configuration. */
#include "core/source.h"
#include "sources/sqlite/sqcheck.h"

#include "sources/sqlite/source_sqlite.h"
#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqlts.h"

#include "config/config.h"
#include "util/jsonint.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Whether name is one of the configured tables. */
static bool configured_table(const struct sqlite_conf *c, const char *name)
{
	const struct config_list *l = c->include_list.n ? &c->include_list : &c->whitelist;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], name) == 0)
			return true;
	return false;
}

/* The partition the source writes for this configuration: {"query":"query"},
 * {"table":T} (bulk) or {"protocol":"1","table":T}. */
static bool partition_ok(const struct sqlite_conf *c, const cJSON *p, bool bulk)
{
	const char *query = c->query;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "table");
	const cJSON *proto = cJSON_GetObjectItemCaseSensitive(p, "protocol");

	if (!cJSON_IsObject(p))
		return false;
	if (query != NULL && query[0] != '\0') {
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(p, "query");

		return cJSON_GetArraySize(p) == 1 && cJSON_IsString(q) &&
		       strcmp(q->valuestring, "query") == 0;
	}
	if (!cJSON_IsString(t) || !configured_table(c, t->valuestring))
		return false;
	if (bulk)
		return cJSON_GetArraySize(p) == 1;
	return cJSON_GetArraySize(p) == 2 && cJSON_IsString(proto) &&
	       strcmp(proto->valuestring, "1") == 0;
}

/* Each member an exact integer, the mode's members present, nothing else
 * but, in timestamp mode, skiff's own rowid_seen (any integer: rowids may be
 * negative). */
static bool offset_ok(enum sqmode mode, const char *offset)
{
	static const char *const keys[] = {"incrementing", "timestamp", "timestamp_nanos"};
	bool inc = mode == SQ_INCREMENTING || mode == SQ_TS_INC;
	bool ts = mode == SQ_TIMESTAMP || mode == SQ_TS_INC;
	cJSON *o = cJSON_Parse(offset);
	int64_t v;
	int found = 0;
	bool ok = cJSON_IsObject(o);

	for (size_t i = 0; ok && i < sizeof(keys) / sizeof(keys[0]); i++) {
		bool want = i == 0 ? inc : ts;

		if (cJSON_GetObjectItemCaseSensitive(o, keys[i]) == NULL) {
			ok = !want || i == 2; /* the nanos are optional */
			continue;
		}
		ok = want && jsonint_get(offset, keys[i], &v) == 0 && v >= 0;
		found++;
	}
	if (ok && !inc && cJSON_GetObjectItemCaseSensitive(o, SQ_ROWID_SEEN) != NULL) {
		ok = jsonint_get(offset, SQ_ROWID_SEEN, &v) == 0;
		found++;
	}
	ok = ok && found == cJSON_GetArraySize(o);
	cJSON_Delete(o);
	return ok;
}

int sqcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                   char *errbuf, size_t errlen)
{
	struct sqlite_conf c;
	bool bulk;
	cJSON *p = cJSON_Parse(partition);
	bool part;

	source_sqlite_conf(cfg, &c);
	bulk = c.mode == SQ_BULK;
	part = partition_ok(&c, p, bulk);

	cJSON_Delete(p);
	if (!part) {
		snprintf(errbuf, errlen,
		         "the partition %s is not one of this connector's: {\"protocol\":\"1\","
		         "\"table\":<a configured table>} ({\"table\":…} in bulk mode), or "
		         "{\"query\":\"query\"} with query=",
		         partition);
		return SOURCE_ERR_CONFIG;
	}
	if (bulk) {
		snprintf(errbuf, errlen,
		         "mode=bulk keeps no offset: only null (a reset) can be stored");
		return SOURCE_ERR_CONFIG;
	}
	if (!offset_ok(c.mode, offset)) {
		snprintf(
		    errbuf, errlen,
		    "the offset for mode=%s holds %s as non-negative integers (and nothing else)",
		    c.mode == SQ_INCREMENTING ? "incrementing"
		    : c.mode == SQ_TIMESTAMP  ? "timestamp"
		                              : "timestamp+incrementing",
		    c.mode == SQ_INCREMENTING ? "\"incrementing\""
		    : c.mode == SQ_TIMESTAMP
		        ? "\"timestamp\" (ms), optionally \"timestamp_nanos\" and skiff's "
		          "\"" SQ_ROWID_SEEN "\" (any integer)"
		        : "\"incrementing\", \"timestamp\" and optionally \"timestamp_nanos\"");
		return SOURCE_ERR_CONFIG;
	}
	return 0;
}

/* ---- an offset against the table's newest row ------------------------------- */

int sqcheck_position(const char *offset, bool *has_inc, int64_t *inc, bool *has_ts, int64_t *ns)
{
	int64_t ms = 0, nanos = 0;

	*has_inc = jsonint_get(offset, "incrementing", inc) == 0;
	*has_ts = jsonint_get(offset, "timestamp", &ms) == 0;
	if (*has_ts && jsonint_get(offset, "timestamp_nanos", &nanos) != 0)
		nanos = ((ms % 1000) + 1000) % 1000 * 1000000;
	return *has_ts && sqlts_join(ms, nanos, ns) != 0 ? -1 : 0;
}

static const char *tname(const struct sqtable *t)
{
	return t->name ? t->name : "query";
}

/* The newest row: *n columns of it (0: the table is empty), SQ_BUSY or
 * SQ_ERR; *v its timestamp or id, *k its id, *kmax the largest id. */
static int newest(struct sqsrc *s, struct sqtable *t, int64_t *v, int64_t *k, int64_t *kmax, int *n)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->conn.db, t->newest_sql, -1, &st, NULL);

	*n = 0;
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*v = sqlite3_column_int64(st, 0);
		*k = sqlite3_column_count(st) > 1 ? sqlite3_column_int64(st, 1) : 0;
		*kmax = sqlite3_column_count(st) > 2 ? sqlite3_column_int64(st, 2) : *k;
		*n = sqlite3_column_count(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	return sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
}

int sqcheck_newest(struct sqsrc *s, struct sqtable *t, const char *offset, char *errbuf,
                   size_t errlen)
{
	bool has_inc, has_ts;
	int64_t inc = 0, ns = 0, v = 0, k = 0, kmax = 0;
	char when[40], at[40];
	int n, rc;

	if (sqcheck_position(offset, &has_inc, &inc, &has_ts, &ns) != 0 || t->newest_sql == NULL)
		return 0; /* check_offset refused it, or bulk */
	if ((rc = newest(s, t, &v, &k, &kmax, &n)) != 0) {
		snprintf(errbuf, errlen, "table %s: its newest row cannot be read: %s", tname(t),
		         sqlite3_errmsg(s->conn.db));
		return rc;
	}
	sqlts_format(ns, at, sizeof(at));
	if (s->mode == SQ_INCREMENTING && (n == 0 ? inc > 0 : inc > v)) {
		if (n == 0)
			snprintf(
			    errbuf, errlen,
			    "%s %s is empty: the offset's incrementing %lld would skip the rows "
			    "with ids up to %lld when they come",
			    t->name ? "table" : "the", tname(t), (long long)inc, (long long)inc);
		else
			snprintf(
			    errbuf, errlen,
			    "%s %s: its newest id is %lld, below the offset's incrementing %lld: "
			    "the rows with ids %lld to %lld would be skipped when they come",
			    t->name ? "table" : "the", tname(t), (long long)v, (long long)inc,
			    (long long)v + 1, (long long)inc);
		return SQ_CONFIG;
	}
	if (s->mode == SQ_INCREMENTING)
		return 0;
	if (n == 0) {
		snprintf(
		    errbuf, errlen,
		    "%s %s has no row with a timestamp: the offset's timestamp %lld (%s) would "
		    "skip the rows stamped up to then when they come",
		    t->name ? "table" : "the", tname(t), (long long)sqlts_ms(ns), at);
		return SQ_CONFIG;
	}
	sqlts_format(v, when, sizeof(when));
	if (s->mode == SQ_TIMESTAMP && ns > v) {
		snprintf(errbuf, errlen,
		         "%s %s: its newest timestamp is %s (%lld), before the offset's %lld (%s): "
		         "the rows stamped between would be skipped when they come",
		         t->name ? "table" : "the", tname(t), when, (long long)sqlts_ms(v),
		         (long long)sqlts_ms(ns), at);
		return SQ_CONFIG;
	}
	/* At the newest timestamp, ids up to the largest one: the position of a
	 * row delivered behind the offset (sqclock.c) is taken as it is given. */
	if (s->mode == SQ_TS_INC && (ns > v || (ns == v && inc > kmax))) {
		snprintf(errbuf, errlen,
		         "%s %s: its newest row is at %s (%lld) with id %lld (largest id %lld), "
		         "before the offset's timestamp %lld (%s) and incrementing %lld: the rows "
		         "between would be skipped when they come",
		         t->name ? "table" : "the", tname(t), when, (long long)sqlts_ms(v),
		         (long long)k, (long long)kmax, (long long)sqlts_ms(ns), at,
		         (long long)inc);
		return SQ_CONFIG;
	}
	return 0;
}
