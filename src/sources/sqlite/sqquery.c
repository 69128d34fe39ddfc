/* sqquery: one bounded batch of a table.
 *
 * Every batch is one short read transaction: BEGIN, check the schema
 * version, step at most room (+1) rows of a LIMITed statement, reset it,
 * COMMIT. Nothing stays open between polls, so writers are never held up by
 * a reader waiting on Kafka and the WAL can always be checkpointed. */
#include "sources/sqlite/sqquery.h"

#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqclock.h"
#include "sources/sqlite/sqlayout.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqreuse.h"
#include "sources/sqlite/sqrows.h"
#include "sources/sqlite/sqseen.h"
#include "sources/sqlite/sqvfs.h"
#include "util/clock.h"

#include "core/log.h"
#include "core/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Stop adding rows to a batch once their values reach this many bytes: the
 * producer queue's default (2 MiB), so rows of 100 KB blobs hold no more
 * rendered text than the queue can take at once; rows of ordinary size reach
 * the batch's row limit long before. */
#define BATCH_BYTES (2u << 20)

/* ---- one batch ------------------------------------------------------------- */

static int step_simple(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc;
}

static void bind_position(struct sqsrc *s, struct sqtable *t, size_t limit, int64_t now_ns)
{
	sqlite3_stmt *st = t->stmt;
	int64_t a = 0, b = 0;

	switch (s->mode) {
	case SQ_BULK:
		a = t->bulk_pos;
		b = t->bulk_pos == INT64_MIN ? 0 : t->bulk_pos;
		break;
	case SQ_INCREMENTING:
		a = t->inc;
		break;
	case SQ_TIMESTAMP:
		a = t->ts;
		b = t->rid;
		if (!t->keyset && (t->group.ts != t->ts || t->group.rows == 0)) {
			/* Nothing of group ts is remembered (a restart): it was read
			 * completely, start after it. */
			a = t->ts == INT64_MAX ? t->ts : t->ts + 1;
		} else if (!t->keyset) {
			/* Read group ts again; the rows read before are skipped. */
			limit += t->group.rows;
			sqseen_group_new_pass(&t->group);
		}
		break;
	case SQ_TS_INC:
		a = t->ts;
		b = t->inc;
		break;
	}
	sqlite3_reset(st);
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, b);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, now_ns - s->delay_ms * 1000000);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)limit);
}

/* What a row costs in memory, roughly: its text and blob bytes (asking a
 * number its size would make SQLite render it as text) plus cJSON's nodes. */
static size_t row_bytes(sqlite3_stmt *st, size_t ncols)
{
	size_t n = 0;

	for (size_t i = 0; i < ncols; i++) {
		int t = sqlite3_column_type(st, (int)i);

		n += 96 + (t == SQLITE_TEXT || t == SQLITE_BLOB
		               ? (size_t)sqlite3_column_bytes(st, (int)i) * 2
		               : 0);
	}
	return n;
}

/* Timestamp mode: a record's offset is its timestamp only when no later row
 * shares it; otherwise the last timestamp read completely, so a restart from
 * any acknowledged record re-reads the rest of its group and loses nothing. */
static void ts_offsets(struct sqtable *t, size_t from, bool peek, int64_t peek_ts)
{
	struct sqrow *r = t->rows.v;
	size_t n = t->rows.n;

	for (size_t i = from; i < n; i++) {
		int64_t ts = r[i].off.v[1];
		bool split = i + 1 < n ? r[i + 1].off.v[1] == ts : peek && peek_ts == ts;

		if (!split)
			t->done_ts = ts;
		r[i].off.v[1] = t->done_ts;
	}
}

struct run {
	size_t limit;
	size_t behind;   /* the rows at the head of t's buffer from sqclock_behind */
	uint64_t future; /* rows after now, counted by skiff_ts() during the query */
	bool peek;
	int64_t peek_ts;
	size_t bytes;
	int rc;
	char bad[400]; /* a row that stops the batch */
	bool config;   /* ... which a person must fix (not a passing error) */
	/* Incrementing: fingerprints of the rows that may be the query's last
	 * SQRING_N, row i's at [i % SQRING_N] when printed[] holds i + 1. */
	struct sqprint print[SQRING_N];
	size_t printed[SQRING_N];
};

/* Timestamp mode without a rowid: whether the current row was read before
 * (skip it), and else remembers it in the group of its timestamp. Returns 1
 * to skip, 0 to buffer the row, SQSEEN_ERR_NOMEM, or SQSEEN_ERR_FULL with
 * u->bad when the group is too large to remember. */
static int in_group(struct sqtable *t, struct run *u, bool peek)
{
	int64_t ts = sqlite3_column_int64(t->stmt, t->ts_col);
	struct sqprint p;
	char when[40];
	int rc;

	if (ts == SQLTS_BAD)
		return 0; /* stops the batch below; never part of a group */
	sqseen_print(t->stmt, t->ncols, &p);
	if (ts == t->group.ts && sqseen_group_seen(&t->group, &p))
		return 1;
	if (peek)
		return 0;
	if (ts != t->group.ts)
		sqseen_group_reset(&t->group, ts);
	if ((rc = sqseen_group_add(&t->group, &p)) != SQSEEN_ERR_FULL)
		return rc;
	sqlts_format(ts, when, sizeof(when));
	snprintf(u->bad, sizeof(u->bad),
	         "more than %d rows share the timestamp %s: without a rowid (a view, a "
	         "WITHOUT ROWID table, a query) skiff cannot tell more of them apart; use "
	         "mode=timestamp+incrementing with a unique increasing column, or finer "
	         "timestamps",
	         SQGROUP_MAX, when);
	return SQSEEN_ERR_FULL;
}

/* The current row of t->stmt, whose timestamp skiff_ts() could not read
 * (SQLTS_BAD), for the message that stops the connector: its rowid (or id),
 * the column and the value, with why. */
static void bad_row(const struct sqsrc *s, const struct sqtable *t, char *buf, size_t len)
{
	sqlite3_stmt *st = t->stmt;
	char err[400] = "no readable value";
	char id[64] = "a row without a rowid";
	const char *col = s->ts_names[0];

	if (t->rid_col >= 0)
		snprintf(id, sizeof(id), "rowid %lld",
		         (long long)sqlite3_column_int64(st, t->rid_col));
	else if (t->inc_col >= 0)
		snprintf(id, sizeof(id), "%s %lld", s->inc_name[0] ? s->inc_name : "id",
		         (long long)sqlite3_column_int64(st, t->inc_col));
	/* The first non-NULL of the timestamp columns is what COALESCE took. */
	for (size_t i = 0; i < s->nts; i++) {
		int64_t ns;
		size_t c = 0;

		while (c < t->ncols && strcasecmp(t->cols[c].name, s->ts_names[i]) != 0)
			c++;
		if (c == t->ncols || sqlite3_column_type(st, (int)c) == SQLITE_NULL)
			continue;
		col = t->cols[c].name;
		if (sqlts_from_value(sqlite3_column_value(st, (int)c), &ns, err, sizeof(err)) == 0)
			snprintf(err, sizeof(err),
			         "?"); /* changed since skiff_ts() ran: cannot be */
		break;
	}
	snprintf(buf, len,
	         "%s: timestamp column %s: %s. Rows are read in timestamp order and this one "
	         "has no place in it: fix the value",
	         id, col, err);
}

/* Steps the statement, buffering up to run->limit rows; one more row, when
 * there is one, is only peeked at. */
static int read_rows(struct sqsrc *s, struct sqtable *t, struct run *u)
{
	bool grouped = s->mode == SQ_TIMESTAMP && !t->keyset;

	while ((u->rc = sqlite3_step(t->stmt)) == SQLITE_ROW) {
		struct sqrow *r;
		size_t text0;
		int g = grouped ? in_group(t, u, t->rows.n == u->limit) : 0;

		if (g == 1)
			continue;
		if (g == SQSEEN_ERR_FULL)
			break;
		if (g == SQSEEN_ERR_NOMEM)
			return -1;
		if (t->rows.n < u->limit && t->ts_col >= 0 &&
		    sqlite3_column_int64(t->stmt, t->ts_col) == SQLTS_BAD) {
			bad_row(s, t, u->bad, sizeof(u->bad));
			u->config = true;
			break;
		}
		if (t->rows.n == u->limit) {
			u->peek = true;
			if (t->ts_col >= 0)
				u->peek_ts = sqlite3_column_int64(t->stmt, t->ts_col);
			break;
		}
		if (t->inc_col >= 0 && sqlite3_column_type(t->stmt, t->inc_col) != SQLITE_INTEGER) {
			snprintf(u->bad, sizeof(u->bad),
			         "a row's incrementing column holds %s, not an integer: "
			         "skiff cannot order it; fix the row or the column",
			         sqlite3_column_type(t->stmt, t->inc_col) == SQLITE_NULL
			             ? "NULL"
			             : "a non-integer");
			u->config = true;
			break;
		}
		text0 = buf_len(&t->rows.text);
		if ((r = sqrows_add(s, t, t->stmt)) == NULL)
			return -1;
		if (t->inc_col >= 0)
			r->off.v[0] = sqlite3_column_int64(t->stmt, t->inc_col);
		if (s->mode == SQ_INCREMENTING && t->rows.n + SQRING_N > u->limit) {
			/* Only the last ids go into the ring (ring_tail). */
			sqseen_print(t->stmt, t->ncols, &u->print[(t->rows.n - 1) % SQRING_N]);
			u->printed[(t->rows.n - 1) % SQRING_N] = t->rows.n;
		}
		if (t->ts_col >= 0)
			r->off.v[1] = sqlite3_column_int64(t->stmt, t->ts_col);
		if (s->mode == SQ_TIMESTAMP && t->clock_sql != NULL) {
			/* Every rowid up to it was looked at (sqclock.c). */
			r->off.v[2] = 1;
			r->off.v[3] = t->clock.key;
		}
		if (s->mode == SQ_BULK)
			r->off.v[2] = t->bulk_ms;
		if (t->rid_col >= 0)
			t->rid = t->bulk_pos = sqlite3_column_int64(t->stmt, t->rid_col);
		/* Rendered rows weigh what they hold; trees are estimated. */
		u->bytes += s->env->json_values ? buf_len(&t->rows.text) - text0 + 64
		                                : row_bytes(t->stmt, t->ncols);
		if (u->bytes >= BATCH_BYTES && t->rows.n < u->limit)
			u->limit = t->rows.n; /* the next row is only peeked at */
	}
	return 0;
}

/* Incrementing: the last SQRING_N rows of the query into t's ring, in
 * order. A query that stopped short of its limit did not fingerprint them
 * as it read: they are read again by id, in the same transaction. A row
 * that cannot be is left out (the ring then offers fewer places to go back
 * to, never a wrong one). */
static void ring_tail(struct sqsrc *s, struct sqtable *t, const struct run *u)
{
	size_t from = t->rows.n > SQRING_N ? t->rows.n - SQRING_N : 0;

	for (size_t i = from; i < t->rows.n; i++) {
		const struct sqprint *p = &u->print[i % SQRING_N];
		int64_t id = t->rows.v[i].off.v[0];
		struct sqprint again;

		if (u->printed[i % SQRING_N] != i + 1) {
			if (sqreuse_print(s, t, id, &again) != 0)
				continue;
			p = &again;
		}
		sqseen_ring_push(&t->ring, id, p, t->ncols);
	}
}

/* Moves t's position past the rows just buffered. */
static void advance(struct sqsrc *s, struct sqtable *t, struct run *u)
{
	const struct sqrow *last = &t->rows.v[t->rows.n - 1];
	size_t n = t->rows.n;

	switch (s->mode) {
	case SQ_BULK:
		if (t->rid_col < 0)
			t->bulk_pos = (t->bulk_pos == INT64_MIN ? 0 : t->bulk_pos) + (int64_t)n;
		break;
	case SQ_INCREMENTING:
		t->inc = last->off.v[0];
		break;
	case SQ_TS_INC:
		t->inc = last->off.v[0];
		t->ts = last->off.v[1];
		break;
	case SQ_TIMESTAMP:
		if (n == u->behind)
			break; /* only rows behind: the position stays */
		t->ts = last->off.v[1];
		ts_offsets(t, u->behind, u->peek, u->peek_ts);
		break;
	}
}

/* The timestamp modes order rows by an instant SQLite cannot index, so each
 * query reads the whole table: say so once when that is slow and the table
 * has a backlog, with what helps. */
static void slow_hint(struct sqsrc *s, struct sqtable *t, int64_t ms)
{
	if (t->ts_col < 0 || !t->rows.more || ms < 100 || t->warned_slow)
		return;
	t->warned_slow = true;
	s->env->log(s->env, LOG_NOTICE,
	            "%s: a query took %lld ms for %zu rows: timestamp modes read the whole "
	            "table on every query; to catch up faster raise batch.max.rows, or use "
	            "mode=incrementing where rows are only inserted",
	            t->name ? t->name : "query", (long long)ms, t->rows.n);
}

static int begin(struct sqsrc *s, struct sqtable *t, int *version, char *errbuf, size_t errlen)
{
	int rc = step_simple(s->conn.begin);

	if (rc == SQLITE_DONE) {
		rc = sqlite3_step(s->conn.schema_version);
		*version = sqlite3_column_int(s->conn.schema_version, 0);
		sqlite3_reset(s->conn.schema_version);
		if (rc == SQLITE_ROW)
			return 0;
	}
	if (sqlitelib_busy(rc))
		return SQ_BUSY;
	snprintf(errbuf, errlen, "%s: %s", s->path, sqlite3_errmsg(s->conn.db));
	return SQ_ERR;
}

/* The position of t a query may move, to put back when its read is dropped. */
struct saved {
	int64_t inc, ts, rid, done_ts, bulk_pos, clock_key;
	struct sqring ring;
};

static void save(const struct sqtable *t, struct saved *v)
{
	*v = (struct saved){.inc = t->inc,
	                    .ts = t->ts,
	                    .rid = t->rid,
	                    .done_ts = t->done_ts,
	                    .bulk_pos = t->bulk_pos,
	                    .clock_key = t->clock.key,
	                    .ring = t->ring};
}

static void restore(struct sqsrc *s, struct sqtable *t, const struct saved *v)
{
	t->inc = v->inc;
	t->ts = v->ts;
	t->rid = v->rid;
	t->done_ts = v->done_ts;
	t->bulk_pos = v->bulk_pos;
	t->clock.key = v->clock_key;
	t->ring = v->ring;
	if (s->mode == SQ_TIMESTAMP && !t->keyset) {
		/* The group may hold rows of the dropped read: start after the
		 * last group read completely (its rows again, as a restart). */
		sqseen_group_reset(&t->group, SQLTS_NONE);
		t->ts = t->done_ts;
	}
	/* The layout may have been read under it too. */
	sqlayout_drop(t);
}

/* Everything the query reads, in the open read transaction: the schema,
 * reused ids, the rows. Returns 0 or an SQ_ code with errbuf. */
static int read_batch(struct sqsrc *s, struct sqtable *t, struct run *u, char *errbuf,
                      size_t errlen)
{
	int64_t now_ns;
	int rc, version = 0;

	if ((rc = begin(s, t, &version, errbuf, errlen)) != 0)
		return rc;
	/* Now is read once the snapshot is taken: begin() may have waited for
	 * a writer's lock (a rollback journal), and a row that writer stamped
	 * and committed meanwhile is not in the future. */
	now_ns = clock_wall_ns();
	if (t->laid_out && version != t->schema_version) {
		s->env->log(s->env, LOG_INFO,
		            "%s: the database schema changed: reading its "
		            "columns again",
		            t->name ? t->name : "query");
		s->env->count(s->env, "schema_changes", 1);
	}
	if ((!t->laid_out || version != t->schema_version) &&
	    (rc = sqlayout_build(s, t, version, errbuf, errlen)) != 0)
		return rc;
	if ((rc = sqreuse_check(s, t)) != 0)
		return rc;
	sqlayout_nulls(s, t);
	if ((rc = sqclock_behind(s, t, u->limit)) < 0) {
		snprintf(errbuf, errlen, "%s: %s", t->name ? t->name : "query",
		         rc == SQ_NOMEM ? "out of memory" : sqlite3_errmsg(s->conn.db));
		return rc;
	}
	u->behind = (size_t)rc;
	if (u->behind == u->limit) {
		u->peek = true; /* the batch is full: the query next time */
		return 0;
	}
	bind_position(s, t, s->mode == SQ_TIMESTAMP ? u->limit + 1 : u->limit, now_ns);
	s->clock = (struct sqlts_clock){.after = now_ns};
	if (read_rows(s, t, u) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", t->name ? t->name : "query");
		return SQ_NOMEM;
	}
	u->future = s->clock.n;
	if (u->rc != SQLITE_ROW && u->rc != SQLITE_DONE) {
		if (t->rows.n == 0) {
			snprintf(errbuf, errlen, "%s: %s", t->name ? t->name : "query",
			         sqlite3_errmsg(s->conn.db));
			return sqlitelib_busy(u->rc) ? SQ_BUSY : SQ_ERR;
		}
		snprintf(u->bad, sizeof(u->bad), "%s", sqlite3_errmsg(s->conn.db));
	}
	if (t->rows.n > 0 && s->mode == SQ_INCREMENTING)
		ring_tail(s, t, u);
	return 0;
}

int sqquery_fill(struct sqsrc *s, struct sqtable *t, char *errbuf, size_t errlen)
{
	struct run u = {.limit = s->batch_max};
	struct sqvfs_mark mark;
	struct saved was;
	char why[200];
	int rc;
	int64_t t0 = clock_mono_ms();

	sqrows_drop(t);
	t->rows.more = false;
	save(t, &was);
	sqvfs_mark(s->conn.db, &mark);
	rc = read_batch(s, t, &u, errbuf, errlen);
	/* Whatever the read found (an error, a bad row, rows), it counts only
	 * if nothing changed the files under it (sqvfs.c). */
	if (rc != SQ_BUSY && rc != SQ_NOMEM &&
	    sqvfs_check(s->conn.db, &mark, why, sizeof(why)) != SQVFS_SOUND) {
		restore(s, t, &was);
		snprintf(errbuf, errlen, "%s", why);
		rc = SQ_STALE;
		goto out;
	}
	if (rc != 0)
		goto out;
	if (u.bad[0] != '\0' && s->pending == NULL) {
		char msg[640];

		snprintf(msg, sizeof(msg), "%s%s: %s", t->name ? "table " : "",
		         t->name ? t->name : "query", u.bad);
		s->pending = strdup(msg);
		s->pending_config = u.config;
	}
	if (t->rows.n > 0)
		advance(s, t, &u);
	if (t->ts_col >= 0 && u.behind < u.limit)
		sqclock_future(s, t, u.future);
	t->rows.more =
	    u.peek || (s->mode != SQ_TIMESTAMP && t->rows.n == u.limit && u.bad[0] == '\0');
	slow_hint(s, t, clock_mono_ms() - t0);
	rc = (int)t->rows.n;
out:
	if (t->stmt != NULL)
		sqlite3_reset(t->stmt);
	if (step_simple(s->conn.commit) != SQLITE_DONE)
		step_simple(s->conn.rollback);
	if (rc < 0)
		sqrows_drop(t);
	return rc;
}
