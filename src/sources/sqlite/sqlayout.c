/* sqlayout: what a table (or the query) looks like, and the SQL
 * that reads it.
 *
 * The columns come from the statement itself (SELECT *), their NOT NULL and
 * primary key flags from pragma table_info. The mode's columns are checked
 * here: they exist, have a fitting declared type, and are NOT NULL when
 * validate.non.null says so.
 *
 * Configuration values become SQL only as quoted identifiers (table and
 * column names, quotes doubled); the user's query is SQL by definition and is
 * wrapped as a subquery. Positions are bound as parameters. */
#include "sources/sqlite/sqlayout.h"

#include "sources/sqlite/sqclock.h"
#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqreuse.h"
#include "sources/sqlite/sqvalue.h"

#include "util/buf.h"
#include "util/clock.h"
#include "core/log.h"
#include "core/source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const rowid_names[] = {"rowid", "_rowid_", "oid"};

/* ---- building SQL: a util/buf, capped at SQL_MAX_BYTES ------------------ */

/* SQLite's own default SQLITE_MAX_SQL_LENGTH: longer text it refuses. */
#define SQL_MAX_BYTES 1000000

static void sql_init(struct buf *b)
{
	buf_init(b, SQL_MAX_BYTES);
}

static void sb_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void sb_ident(struct buf *b, const char *name)
{
	buf_add(b, "\"", 1);
	for (const char *p = name; *p != '\0'; p++) {
		if (*p == '"')
			buf_add(b, "\"\"", 2);
		else
			buf_add(b, p, 1);
	}
	buf_add(b, "\"", 1);
}

/* Appends each string up to a NULL. */
static void sb_all(struct buf *b, ...)
{
	va_list ap;
	const char *p;

	va_start(ap, b);
	while ((p = va_arg(ap, const char *)) != NULL)
		sb_str(b, p);
	va_end(ap);
}

char *sqlayout_quote(const char *name)
{
	struct buf b;
	char *q;

	sql_init(&b);
	sb_ident(&b, name);
	return buf_take(&b, &q, NULL) == 0 ? q : NULL;
}

/* ---- layout ---------------------------------------------------------------- */

struct tinfo {
	char *name;
	bool notnull, pk, alias;
};

struct lay {
	struct sqsrc *s;
	struct sqtable *t;
	bool is_view;
	struct tinfo *ti;
	size_t nti;
	const char *rowid; /* usable rowid name, NULL when none */
	const char *alias; /* INTEGER PRIMARY KEY column, NULL when none */
	char *inc_expr;    /* quoted column or rowid name */
	bool inc_declared; /* inc is a declared column (may hold non-integers) */
	char *ts_expr;
	char *ts_raw; /* the column, or COALESCE of the columns */
	char *errbuf;
	size_t errlen;
};

static void sb_src(struct buf *b, struct lay *l)
{
	if (l->t->name != NULL) {
		sb_ident(b, l->t->name);
	} else {
		sb_str(b, "(");
		sb_str(b, l->s->query);
		sb_str(b, ")");
	}
}

static int fail(struct lay *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct lay *l, const char *fmt, ...)
{
	va_list ap;
	int n = l->t->name ? snprintf(l->errbuf, l->errlen, "table %s: ", l->t->name)
	                   : snprintf(l->errbuf, l->errlen, "query: ");

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < l->errlen)
		vsnprintf(l->errbuf + n, l->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return SQ_CONFIG;
}

/* An SQL error (a syntax error, no such column) is the configuration's; others
 * (corrupt, I/O, not a database) may pass. */
static int sql_fail(struct lay *l, const char *what)
{
	int rc = sqlite3_errcode(l->s->conn.db) == SQLITE_ERROR ? SQ_CONFIG : SQ_ERR;

	fail(l, "%s: %s", what, sqlite3_errmsg(l->s->conn.db));
	return rc;
}

static int oom(struct lay *l)
{
	fail(l, "out of memory");
	return SQ_NOMEM;
}

/* Lists the database's tables for a message. */
static void list_tables(sqlite3 *db, char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;
	size_t o = 0;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db,
	                       "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND "
	                       "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 20",
	                       -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW && o + 1 < len) {
		int n = snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
		                 (const char *)sqlite3_column_text(st, 0));

		if (n < 0)
			break;
		o += (size_t)n;
	}
	sqlite3_finalize(st);
	if (o == 0)
		snprintf(buf, len, "none");
}

/* Finds the table. Returns 0, SQ_MISSING or SQ_BUSY/SQ_ERR. */
static int find_table(struct lay *l)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(l->s->conn.db,
	                        "SELECT type FROM sqlite_master WHERE type IN ('table','view') AND "
	                        "name = ?1 COLLATE NOCASE",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(l, "reading the schema");
	sqlite3_bind_text(st, 1, l->t->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		l->is_view = strcmp((const char *)sqlite3_column_text(st, 0), "view") == 0;
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE) {
		if (!l->t->warned_missing) {
			char tables[512];

			list_tables(l->s->conn.db, tables, sizeof(tables));
			l->s->env->log(l->s->env, LOG_WARN,
			               "table %s does not exist in %s (tables there: %s); "
			               "waiting for it",
			               l->t->name, l->s->path, tables);
			l->s->env->count(l->s->env, "tables_missing", 1);
		}
		l->t->warned_missing = true;
		return SQ_MISSING;
	}
	return sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(l, "reading the schema");
}

/* Reads pragma table_info: not-null and primary key flags by column. */
static int table_info(struct lay *l)
{
	sqlite3_stmt *st = NULL;
	int rc, npk = 0;

	rc = sqlite3_prepare_v2(l->s->conn.db,
	                        "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)", -1,
	                        &st, NULL);
	if (rc != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(l, "reading its columns");
	sqlite3_bind_text(st, 1, l->t->name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tinfo *g = realloc(l->ti, (l->nti + 1) * sizeof(*g));
		const char *type = (const char *)sqlite3_column_text(st, 1);

		if (g == NULL)
			break;
		l->ti = g;
		g = &l->ti[l->nti];
		g->name = strdup((const char *)sqlite3_column_text(st, 0));
		if (g->name == NULL)
			break;
		l->nti++;
		g->notnull = sqlite3_column_int(st, 2) != 0;
		g->pk = sqlite3_column_int(st, 3) != 0;
		g->alias = g->pk && type != NULL && strcasecmp(type, "INTEGER") == 0;
		npk += g->pk;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(l, "reading its columns");
	for (size_t i = 0; i < l->nti; i++)
		l->ti[i].alias = l->ti[i].alias && npk == 1;
	return 0;
}

static struct tinfo *tinfo_find(struct lay *l, const char *name)
{
	for (size_t i = 0; i < l->nti; i++)
		if (strcasecmp(l->ti[i].name, name) == 0)
			return &l->ti[i];
	return NULL;
}

/* Picks a name for the rowid that no column shadows, and checks the table
 * has one (not WITHOUT ROWID, not a view). */
static void find_rowid(struct lay *l)
{
	if (l->is_view)
		return;
	for (size_t i = 0; i < sizeof(rowid_names) / sizeof(rowid_names[0]); i++) {
		struct buf b;
		sqlite3_stmt *st = NULL;

		if (tinfo_find(l, rowid_names[i]) != NULL)
			continue;
		sql_init(&b);
		sb_str(&b, "SELECT ");
		sb_str(&b, rowid_names[i]);
		sb_str(&b, " FROM ");
		sb_ident(&b, l->t->name);
		if (buf_cstr(&b) != NULL &&
		    sqlite3_prepare_v2(l->s->conn.db, buf_cstr(&b), -1, &st, NULL) == SQLITE_OK)
			l->rowid = rowid_names[i];
		sqlite3_finalize(st);
		buf_free(&b);
		break;
	}
	for (size_t i = 0; i < l->nti && l->rowid != NULL; i++)
		if (l->ti[i].alias)
			l->alias = l->ti[i].name;
}

/* Prepares "SELECT * FROM src LIMIT 0" and fills t->cols from it. */
static int read_columns(struct lay *l)
{
	struct sqtable *t = l->t;
	struct buf b;
	sqlite3_stmt *st = NULL;
	int rc, n;

	sql_init(&b);
	sb_str(&b, "SELECT * FROM ");
	sb_src(&b, l);
	sb_str(&b, " LIMIT 0");
	if (buf_cstr(&b) == NULL) {
		buf_free(&b);
		return oom(l);
	}
	rc = sqlite3_prepare_v2(l->s->conn.db, buf_cstr(&b), -1, &st, NULL);
	buf_free(&b);
	if (rc != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(l, "preparing it");
	if (sqlite3_bind_parameter_count(st) > 0) {
		sqlite3_finalize(st);
		return fail(l, "it has parameters (?, :name): skiff binds only its own");
	}
	n = sqlite3_column_count(st);
	t->cols = calloc((size_t)n + 1, sizeof(*t->cols));
	t->val_idx = calloc((size_t)n + 1, sizeof(*t->val_idx));
	if (t->cols == NULL || t->val_idx == NULL) {
		sqlite3_finalize(st);
		return oom(l);
	}
	for (int i = 0; i < n; i++) {
		struct sqcol *c = &t->cols[i];
		struct tinfo *ti;

		c->name = strdup(sqlite3_column_name(st, i));
		if (c->name == NULL || sqvalue_col_key(c) != 0) {
			free(c->name);
			c->name = NULL;
			break;
		}
		t->ncols++;
		t->val_idx[i] = (size_t)i;
		sqvalue_classify(sqlite3_column_decltype(st, i), &c->kind, &c->logical);
		c->declared = sqlite3_column_decltype(st, i) != NULL &&
		              *sqlite3_column_decltype(st, i) != '\0';
		ti = t->name ? tinfo_find(l, c->name) : NULL;
		c->optional = ti == NULL || !(ti->notnull || (ti->alias && l->rowid != NULL));
	}
	sqlite3_finalize(st);
	if (t->ncols < (size_t)n)
		return oom(l);
	for (size_t i = 0; i < t->ncols; i++) {
		if (strncmp(t->cols[i].name, "__skiff_", 8) == 0)
			return fail(l, "column %s: names starting __skiff_ are skiff's own",
			            t->cols[i].name);
		for (size_t j = 0; j < i; j++)
			if (strcasecmp(t->cols[i].name, t->cols[j].name) == 0)
				return fail(l,
				            "two columns are named %s: give them distinct "
				            "names (AS) so each becomes one field",
				            t->cols[i].name);
	}
	return 0;
}

static int col_find(const struct sqtable *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcasecmp(t->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int no_column(struct lay *l, const char *what, const char *name)
{
	char have[512];
	size_t o = 0;

	have[0] = '\0';
	for (size_t i = 0; i < l->t->ncols && o + 1 < sizeof(have); i++) {
		int n =
		    snprintf(have + o, sizeof(have) - o, "%s%s", i ? ", " : "", l->t->cols[i].name);

		if (n < 0)
			break;
		o += (size_t)n;
	}
	return fail(l, "%s %s is not one of its columns (%s)", what, name, have);
}

static bool nullable(struct lay *l, const char *name)
{
	struct tinfo *ti = tinfo_find(l, name);

	if (l->t->name == NULL || l->is_view)
		return false; /* a query's or a view's columns cannot be checked */
	return ti != NULL && !ti->notnull && !(ti->alias && l->rowid != NULL);
}

static int resolve_inc(struct lay *l)
{
	struct sqsrc *s = l->s;
	const char *name = s->inc_name;
	int ci;

	if (name[0] == '\0' || (col_find(l->t, name) < 0 && l->rowid != NULL &&
	                        (strcasecmp(name, "rowid") == 0 || strcasecmp(name, "oid") == 0 ||
	                         strcasecmp(name, "_rowid_") == 0))) {
		if (l->alias != NULL) {
			name = l->alias;
		} else if (l->rowid != NULL) {
			l->inc_expr = strdup(l->rowid);
			return l->inc_expr ? 0 : oom(l);
		} else {
			return fail(l,
			            "%s has no rowid (WITHOUT ROWID or a view): set "
			            "incrementing.column.name",
			            l->is_view ? "a view" : "it");
		}
	}
	ci = col_find(l->t, name);
	if (ci < 0)
		return no_column(l, "incrementing.column.name", name);
	if (l->t->cols[ci].kind != SQCOL_INTEGER &&
	    !(l->t->name == NULL && l->t->cols[ci].kind == SQCOL_BLOB))
		return fail(l, "incrementing column %s is not declared as an integer", name);
	if (s->validate_non_null && nullable(l, name))
		return fail(l,
		            "incrementing column %s is nullable: declare it NOT NULL (or "
		            "INTEGER PRIMARY KEY), or set validate.non.null=false",
		            name);
	l->inc_declared = !(l->alias != NULL && strcasecmp(name, l->alias) == 0);
	l->inc_expr = sqlayout_quote(l->t->cols[ci].name);
	return l->inc_expr ? 0 : oom(l);
}

static int resolve_ts(struct lay *l)
{
	struct sqsrc *s = l->s;
	struct buf b, names;
	bool all_nullable = true;
	int rc = 0;

	sql_init(&b);
	sql_init(&names);
	sb_str(&b, s->nts > 1 ? "skiff_ts(COALESCE(" : "skiff_ts(");
	for (size_t i = 0; i < s->nts; i++) {
		int ci = col_find(l->t, s->ts_names[i]);

		if (ci < 0) {
			rc = no_column(l, "timestamp.column.name", s->ts_names[i]);
			goto out;
		}
		if (l->t->cols[ci].kind == SQCOL_BLOB && l->t->cols[ci].declared) {
			rc = fail(l, "timestamp column %s is declared BLOB, not a timestamp",
			          s->ts_names[i]);
			goto out;
		}
		all_nullable = all_nullable && nullable(l, s->ts_names[i]);
		if (i > 0) {
			sb_str(&b, ", ");
			sb_str(&names, ", ");
		}
		sb_ident(&b, l->t->cols[ci].name);
		sb_str(&names, l->t->cols[ci].name);
	}
	sb_str(&b, s->nts > 1 ? "))" : ")");
	if (buf_cstr(&names) == NULL || buf_take(&b, &l->ts_expr, NULL) != 0 ||
	    (l->ts_raw = strndup(l->ts_expr + 9, strlen(l->ts_expr) - 10)) == NULL) {
		rc = oom(l); /* ts_raw: inside skiff_ts() */
		goto out;
	}
	if (s->validate_non_null && l->t->name != NULL && all_nullable) {
		fail(l,
		     "timestamp column%s %s %s nullable: declare %s NOT NULL, or set "
		     "validate.non.null=false",
		     s->nts > 1 ? "s" : "", buf_cstr(&names), s->nts > 1 ? "are all" : "is",
		     s->nts > 1 ? "one" : "it");
		rc = SQ_CONFIG;
	}
out:
	buf_free(&b);
	buf_free(&names);
	return rc;
}

static int resolve_keys(struct lay *l)
{
	struct sqtable *t = l->t;

	t->nkeys = l->s->nkeys;
	t->key_idx = calloc(t->nkeys + 1, sizeof(*t->key_idx));
	if (t->key_idx == NULL)
		return oom(l);
	for (size_t i = 0; i < t->nkeys; i++) {
		int ci = col_find(t, l->s->key_names[i]);

		if (ci < 0)
			return no_column(l, "key.column.name", l->s->key_names[i]);
		t->key_idx[i] = (size_t)ci;
	}
	return 0;
}

static int build_max(struct lay *l)
{
	struct buf b;

	sql_init(&b);
	sb_str(&b, "SELECT max(");
	sb_str(&b, l->inc_expr);
	sb_str(&b, ") FROM ");
	sb_src(&b, l);
	if (buf_take(&b, &l->t->max_sql, NULL) != 0)
		return -1;
	sb_str(&b, "SELECT count(*) FROM ");
	sb_src(&b, l);
	sb_all(&b, " WHERE ", l->inc_expr, " > ?1", NULL);
	if (buf_take(&b, &l->t->count_sql, NULL) != 0)
		return -1;
	sb_str(&b, "SELECT * FROM ");
	sb_src(&b, l);
	sb_all(&b, " WHERE ", l->inc_expr, " = ?1", NULL);
	return buf_take(&b, &l->t->at_sql, NULL) != 0 ? -1 : 0;
}

/* Incrementing mode on the rowid, or on an INTEGER PRIMARY KEY without
 * AUTOINCREMENT: SQLite hands its ids out again. Says so once per table. */
static void warn_reusable(struct lay *l)
{
	struct sqtable *t = l->t;
	sqlite3_stmt *st = NULL;
	bool autoinc = false;

	t->reuse.autoinc = false;
	if (t->name == NULL || l->inc_declared)
		return;
	if (l->alias != NULL &&
	    sqlite3_prepare_v2(l->s->conn.db,
	                       "SELECT sql LIKE '%AUTOINCREMENT%' FROM sqlite_master WHERE type = "
	                       "'table' AND name = ?1 COLLATE NOCASE",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
		autoinc = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) != 0;
	}
	sqlite3_finalize(st);
	t->reuse.autoinc = autoinc;
	if (autoinc || t->warned_reusable)
		return;
	t->warned_reusable = true;
	l->s->env->log(l->s->env, LOG_WARN,
	               "table %s: incrementing column %s is %s: its ids can be reused (after the "
	               "newest rows are deleted%s); skiff notices while it runs and reads again, "
	               "at the cost of duplicates, but not across a restart. Declare it INTEGER "
	               "PRIMARY KEY AUTOINCREMENT, or use a column the application never reuses",
	               t->name, l->alias ? l->alias : l->inc_expr,
	               l->alias ? "an INTEGER PRIMARY KEY without AUTOINCREMENT" : "the rowid",
	               l->alias ? "" : ", and VACUUM renumbers it");
}

#define NULLS_EVERY_MS 60000

/* Without validate.non.null (or for a query or a view, which cannot be
 * checked), the statements that count the rows without a position: NULL ids
 * or timestamps are never read. Returns 0 or -1 (out of memory). */
static int build_nulls(struct lay *l)
{
	const char *what[2] = {l->inc_expr, l->ts_raw};
	struct buf b;

	if (l->s->validate_non_null && l->t->name != NULL && !l->is_view)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (what[i] == NULL)
			continue;
		sql_init(&b);
		sb_all(&b, "SELECT count(*) FROM ", NULL);
		sb_src(&b, l);
		sb_all(&b, " WHERE ", what[i], " IS NULL", NULL);
		if (l->rowid != NULL)
			sb_all(&b, " AND ", l->rowid, " > ?1 AND ", l->rowid, " <= ?2", NULL);
		if (buf_take(&b, &l->t->nulls.sql[i], NULL) != 0)
			return -1;
	}
	l->t->nulls.counted_ms = 0; /* a new layout: count at once */
	if (l->rowid == NULL)
		return 0;
	sql_init(&b);
	sb_all(&b, "SELECT max(", l->rowid, ") FROM ", NULL);
	sb_src(&b, l);
	return buf_take(&b, &l->t->nulls.max_sql, NULL) != 0 ? -1 : 0;
}

/* One count(*) or max() of t, binding the rowids from and to where it has
 * them: the value, INT64_MIN for NULL, -1 when it cannot be read. */
static int64_t count_of(struct sqsrc *s, const char *sql, int64_t from, int64_t to)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	if (sqlite3_prepare_v2(s->conn.db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_bind_parameter_count(st) == 2) {
			sqlite3_bind_int64(st, 1, from);
			sqlite3_bind_int64(st, 2, to);
		}
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_type(st, 0) == SQLITE_NULL ? INT64_MIN
			                                              : sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

void sqlayout_nulls(struct sqsrc *s, struct sqtable *t)
{
	const char *col[2] = {s->inc_name[0] != '\0' ? s->inc_name : "rowid",
	                      s->nts == 1 ? s->ts_names[0] : "(every one named)"};
	int64_t now = clock_mono_ms(), from = INT64_MIN, to = 0;
	bool ranged = t->nulls.max_sql != NULL;

	if (t->nulls.sql[0] == NULL && t->nulls.sql[1] == NULL)
		return;
	if (ranged) {
		/* The rows after the largest rowid counted (all of them where
		 * the rowids went back: another table). */
		to = count_of(s, t->nulls.max_sql, 0, 0);
		if (to == -1 || to == INT64_MIN)
			return;
		if (t->nulls.ranged && to >= t->nulls.rowid)
			from = t->nulls.rowid;
		if (from == to)
			return;
	} else if (t->nulls.counted_ms != 0 && now - t->nulls.counted_ms < NULLS_EVERY_MS) {
		return;
	}
	t->nulls.counted_ms = now;
	for (int i = 0; i < 2; i++) {
		int64_t n, more;

		if (t->nulls.sql[i] == NULL || (n = count_of(s, t->nulls.sql[i], from, to)) < 0)
			continue;
		/* Without a rowid fewer than before means rows deleted. */
		more = ranged ? n : n - t->nulls.n[i];
		t->nulls.n[i] = ranged ? t->nulls.n[i] + n : n;
		if (more <= 0)
			continue;
		s->env->log(s->env, LOG_WARN,
		            "%s: %lld rows have NULL in the %s column %s (%lld since the last "
		            "count): they are never read",
		            t->name ? t->name : "query", (long long)t->nulls.n[i],
		            i == 0 ? "incrementing" : "timestamp", col[i], (long long)more);
		s->env->count(s->env, "rows_without_position", (uint64_t)more);
	}
	if (ranged) {
		t->nulls.rowid = to;
		t->nulls.ranged = true;
	}
}

/* The timestamp modes read from a subquery that computes skiff_ts() once per
 * row (LIMIT -1 keeps SQLite from flattening it into the outer query, where
 * every mention would call it again). */
static void ts_source(struct lay *l, struct buf *b, const char *inc, const char *rid)
{
	sb_all(b, "SELECT * FROM (SELECT *", NULL);
	if (inc != NULL)
		sb_all(b, ", ", inc, " AS \"__skiff_inc\"", NULL);
	sb_all(b, ", ", l->ts_expr, " AS \"__skiff_ts\"", NULL);
	if (rid != NULL)
		sb_all(b, ", ", rid, " AS \"__skiff_rid\"", NULL);
	sb_str(b, " FROM ");
	sb_src(b, l);
	sb_str(b, " LIMIT -1)");
}

/* The clock's statements (sqclock.c) over key, the expression that grows
 * with each new row: the rows above ?1 in key order, with the key and the
 * timestamp after the table's columns; the largest key; one row after ?1;
 * in timestamp+incrementing, one row between the keys ?1 and ?2 stamped ?3
 * (an index range where key is the rowid). */
static int build_clock(struct lay *l, const char *key)
{
	struct sqtable *t = l->t;
	struct buf b;

	sql_init(&b);
	sb_all(&b, "SELECT *, ", key, ", ", l->ts_expr, " FROM ", NULL);
	sb_src(&b, l);
	sb_all(&b, " WHERE ", key, " > ?1 ORDER BY ", key, " LIMIT ?2", NULL);
	if (buf_take(&b, &t->clock_sql, NULL) != 0)
		return -1;
	sb_all(&b, "SELECT max(", key, ") FROM ", NULL);
	sb_src(&b, l);
	if (buf_take(&b, &t->clock_max_sql, NULL) != 0)
		return -1;
	if (l->s->mode == SQ_TS_INC) {
		sb_str(&b, "SELECT 1 FROM ");
		sb_src(&b, l);
		sb_all(&b, " WHERE ", key, " > ?1 AND ", key, " < ?2 AND ", l->ts_expr,
		       " = ?3 LIMIT 1", NULL);
		if (buf_take(&b, &t->clock_gap_sql, NULL) != 0)
			return -1;
	}
	sb_all(&b, "SELECT ", l->ts_expr, ", ", key, " FROM ", NULL);
	sb_src(&b, l);
	sb_all(&b, " WHERE ", l->ts_expr, " > ?1 LIMIT 1", NULL);
	return buf_take(&b, &t->future_sql, NULL) != 0 ? -1 : 0;
}

/* Without a key: only the example of a row in the future. */
static int build_future(struct lay *l)
{
	struct buf b;

	sql_init(&b);
	sb_all(&b, "SELECT ", l->ts_expr, " FROM ", NULL);
	sb_src(&b, l);
	sb_all(&b, " WHERE ", l->ts_expr, " > ?1 LIMIT 1", NULL);
	return buf_take(&b, &l->t->future_sql, NULL) != 0 ? -1 : 0;
}

/* The newest row, for an offset a person sets (sqcheck_reach): the largest
 * id; the latest timestamp; the latest (timestamp, id) and the largest id. */
static int build_newest(struct lay *l)
{
	struct buf b;
	enum sqmode m = l->s->mode;

	sql_init(&b);
	if (m == SQ_INCREMENTING)
		sb_all(&b, "SELECT max(", l->inc_expr, ") FROM ", NULL);
	else if (m == SQ_TS_INC) {
		sb_all(&b, "SELECT v, k, (SELECT max(", l->inc_expr, ") FROM ", NULL);
		sb_src(&b, l);
		sb_all(&b, ") FROM (SELECT ", l->ts_expr, " AS v, ", l->inc_expr, " AS k FROM ",
		       NULL);
	} else
		sb_all(&b, "SELECT v FROM (SELECT ", l->ts_expr, " AS v FROM ", NULL);
	sb_src(&b, l);
	if (m != SQ_INCREMENTING)
		sb_all(&b,
		       " LIMIT -1) WHERE v IS NOT NULL AND v <> " SQLTS_BAD_SQL " ORDER BY v DESC",
		       m == SQ_TS_INC ? ", k DESC" : "", " LIMIT 1", NULL);
	return buf_take(&b, &l->t->newest_sql, NULL) != 0 ? -1 : 0;
}

/* Rows whose timestamp is below the bound ?3, and rows whose timestamp
 * skiff_ts() cannot read (SQLTS_BAD, ordered after every instant): reaching
 * one stops the connector there, after the rows before it. */
#define TS_BELOW "(\"__skiff_ts\" < ?3 OR \"__skiff_ts\" = " SQLTS_BAD_SQL ")"

/* The batch statement of each mode. Parameters: ?1 ?2 the position, ?3 the
 * upper timestamp bound, ?4 the row limit. */
static int build_sql(struct lay *l, struct buf *b)
{
	struct sqtable *t = l->t;
	const char *r = l->rowid, *i = l->inc_expr;
	int next = (int)t->ncols;

	t->inc_col = t->ts_col = t->rid_col = -1;
	t->keyset = r != NULL;
	if (l->s->mode != SQ_BULK && build_newest(l) != 0)
		return oom(l);
	switch (l->s->mode) {
	case SQ_BULK:
		if (r == NULL) {
			sb_str(b, "SELECT * FROM ");
			sb_src(b, l);
			sb_str(b, " LIMIT ?4 OFFSET ?2");
			break;
		}
		t->rid_col = next;
		sb_all(b, "SELECT *, ", r, " FROM ", NULL);
		sb_src(b, l);
		sb_all(b, " WHERE ", r, " > ?1 ORDER BY ", r, " LIMIT ?4", NULL);
		break;
	case SQ_INCREMENTING:
		if (build_max(l) != 0)
			return oom(l);
		t->inc_col = next;
		sb_all(b, "SELECT *, ", i, " FROM ", NULL);
		sb_src(b, l);
		sb_all(b, " WHERE ", i, " > ?1 ORDER BY ", i, " LIMIT ?4", NULL);
		break;
	case SQ_TIMESTAMP:
		if ((r != NULL ? build_clock(l, r) : build_future(l)) != 0)
			return oom(l);
		if (r == NULL && !t->warned_keyless) {
			l->s->env->log(
			    l->s->env, LOG_WARN,
			    "%s%s: mode=timestamp without a rowid (a view, a WITHOUT ROWID table "
			    "or a "
			    "query): a new row stamped behind the offset (a clock that was wrong "
			    "when "
			    "it was written) is never read, and nothing counts it; only rows "
			    "stamped "
			    "in the future are counted. timestamp+incrementing with an id column "
			    "delivers them",
			    t->name ? "table " : "the ", t->name ? t->name : "query");
			t->warned_keyless = true;
		}
		t->ts_col = next++;
		ts_source(l, b, NULL, r);
		if (r != NULL) {
			/* (ts, rowid) > (?1, ?2): equal timestamps page by rowid. */
			t->rid_col = next;
			sb_str(b, " WHERE " TS_BELOW " AND ((\"__skiff_ts\" = ?1 AND "
			          "\"__skiff_rid\" > ?2) OR \"__skiff_ts\" > ?1) "
			          "ORDER BY \"__skiff_ts\", \"__skiff_rid\" LIMIT ?4");
			break;
		}
		/* No rowid: group ?1 is read again and the rows of it already
		 * read are skipped by their fingerprints (sqseen.c). */
		sb_str(b, " WHERE " TS_BELOW " AND \"__skiff_ts\" >= ?1 "
		          "ORDER BY \"__skiff_ts\" LIMIT ?4");
		break;
	case SQ_TS_INC:
		if (build_clock(l, i) != 0)
			return oom(l);
		t->inc_col = next++;
		t->ts_col = next;
		ts_source(l, b, i, NULL);
		/* A NULL id has no place in the order: never read, counted
		 * (validate.non.null=false; sqlayout_nulls), as incrementing's
		 * "> ?1" leaves it. */
		sb_str(b, " WHERE " TS_BELOW " AND \"__skiff_inc\" IS NOT NULL AND "
		          "((\"__skiff_ts\" = ?1 AND \"__skiff_inc\" > ?2) OR \"__skiff_ts\" > ?1) "
		          "ORDER BY \"__skiff_ts\", \"__skiff_inc\" LIMIT ?4");
		break;
	}
	return buf_cstr(b) == NULL ? oom(l) : 0;
}

void sqlayout_drop(struct sqtable *t)
{
	sqlite3_finalize(t->stmt);
	t->stmt = NULL;
	sqreuse_drop(&t->reuse);
	sqclock_drop(&t->clock);
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->cols[i].name);
		free(t->cols[i].key);
	}
	free(t->cols);
	free(t->val_idx);
	free(t->key_idx);
	free(t->max_sql);
	free(t->at_sql);
	free(t->count_sql);
	free(t->clock_sql);
	free(t->clock_max_sql);
	free(t->clock_gap_sql);
	free(t->future_sql);
	free(t->newest_sql);
	free(t->nulls.sql[0]);
	free(t->nulls.sql[1]);
	free(t->nulls.max_sql);
	t->newest_sql = t->nulls.sql[0] = t->nulls.sql[1] = t->nulls.max_sql = NULL;
	t->max_sql = t->at_sql = t->count_sql = NULL;
	t->clock_sql = t->clock_max_sql = t->clock_gap_sql = t->future_sql = NULL;
	t->cols = NULL;
	t->val_idx = t->key_idx = NULL;
	t->ncols = t->nkeys = 0;
	sqvalue_schemas_clear(&t->vschemas);
	sqvalue_schemas_clear(&t->kschemas);
	t->laid_out = false;
}

static void lay_free(struct lay *l)
{
	for (size_t i = 0; i < l->nti; i++)
		free(l->ti[i].name);
	free(l->ti);
	free(l->inc_expr);
	free(l->ts_expr);
	free(l->ts_raw);
}

int sqlayout_build(struct sqsrc *s, struct sqtable *t, int version, char *errbuf, size_t errlen)
{
	struct lay l = {.s = s, .t = t, .errbuf = errbuf, .errlen = errlen};
	struct buf b;
	int rc;

	sql_init(&b);
	sqlayout_drop(t);
	if (t->name != NULL && ((rc = find_table(&l)) != 0 || (rc = table_info(&l)) != 0))
		goto out;
	if (t->name != NULL)
		find_rowid(&l);
	if ((rc = read_columns(&l)) != 0 || (rc = resolve_keys(&l)) != 0)
		goto out;
	if ((s->mode == SQ_INCREMENTING || s->mode == SQ_TS_INC) && (rc = resolve_inc(&l)) != 0)
		goto out;
	if ((s->mode == SQ_TIMESTAMP || s->mode == SQ_TS_INC) && (rc = resolve_ts(&l)) != 0)
		goto out;
	if ((rc = build_sql(&l, &b)) != 0)
		goto out;
	if (s->mode == SQ_INCREMENTING)
		warn_reusable(&l);
	if (build_nulls(&l) != 0) {
		rc = oom(&l);
		goto out;
	}
	rc = sqlite3_prepare_v3(s->conn.db, buf_cstr(&b), -1, SQLITE_PREPARE_PERSISTENT, &t->stmt,
	                        NULL);
	if (rc != SQLITE_OK) {
		rc = sqlitelib_busy(rc) ? SQ_BUSY : sql_fail(&l, "preparing its query");
		goto out;
	}
	s->env->log(s->env, LOG_DEBUG, "%s: %s", t->name ? t->name : "query", buf_cstr(&b));
	t->schema_version = version;
	t->laid_out = true;
	t->warned_missing = false;
	t->warned_ahead = false;
out:
	buf_free(&b);
	lay_free(&l);
	if (rc != 0)
		sqlayout_drop(t);
	return rc;
}
