/* sqclock: the rows a wrong clock hides from the timestamp modes.
 *
 * A row is read once its timestamp is below now - timestamp.delay.interval.ms
 * and above the offset. Two kinds of rows are never read that way:
 * - a row stamped in the future (a clock set to 2099): it waits for its
 *   date. skiff_ts() counts, as the batch query converts every row of the
 *   table anyway, the rows after now: the gauge rows_in_future of the table,
 *   and a warning naming one (at most once a minute) while there are any.
 * - a row stamped behind the offset although it is new (a board without an
 *   RTC writes 1970 until NTP answers): the offset has passed it. Where the
 *   table has a key that grows with each new row (the incrementing column of
 *   timestamp+incrementing, the rowid in timestamp mode) each batch first
 *   looks at the rows whose key is above the largest it looked at (an index
 *   range: only the new rows), and delivers those behind the position at
 *   once, out of timestamp order, with the position as their offset (it does
 *   not move back): the counter rows_behind_offset and a warning naming the
 *   row (at most once a minute). The JDBC connector skips them.
 *
 * The largest key looked at starts at the offset's incrementing value
 * (timestamp+incrementing), or at its "rowid_seen" (timestamp mode: each
 * record's offset keeps, beside Connect's members, the largest rowid looked
 * at when it was read, its own for a row delivered behind), so a row stamped
 * behind the offset while skiff was stopped is found after a restart. An
 * offset without it (Connect's, one set by hand) and a first start without
 * offset (every row is read in order anyway) start at the largest key there
 * is, said in a warning for the former. For the same reason, in timestamp+incrementing
 * the position's id moves up to a row behind it when no unread row lies
 * between (none stamped with the position's timestamp, whose rows the batch
 * query reads by id): the offset then says the row was sent, and a restart
 * does not send it again (a clock set back an hour makes every row of that
 * hour one of these). Where such a row does lie between (equal timestamps
 * split across batches), and for writers whose ids and timestamps disagree
 * in order, a row read before a restart whose id is above the offset's and
 * whose timestamp is below it is taken for a hidden one and sent again. A
 * view or a query without a key: only the rows in the future are seen. */
#include "sources/sqlite/sqclock.h"

#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqrows.h"
#include "util/clock.h"

#include "core/log.h"
#include "core/source.h"
#include "core/stats.h"

#include <stdio.h>
#include <string.h>

#define WARN_EVERY_MS 60000

static const struct stats_desc future_desc = {
    .name = "rows_in_future",
    .type = STATS_GAUGE,
    .flags = STATS_F_LOG,
    .help = "rows of the table whose timestamp is after now (at its last query): each "
            "waits for its time"};
static const struct stats_desc behind_desc = {
    .name = "rows_behind_offset",
    .type = STATS_COUNTER,
    .flags = STATS_F_LOG,
    .help = "new rows whose timestamp was behind the offset: delivered out of "
            "timestamp order"};

static const char *tname(const struct sqtable *t)
{
	return t->name ? t->name : "query";
}

static void stat(struct sqsrc *s, struct sqtable *t, const struct stats_desc *d, uint64_t n)
{
	if (s->env->partition_stat != NULL)
		s->env->partition_stat(s->env, t->part, d, n);
	else if (d->type == STATS_COUNTER)
		s->env->count(s->env, d->name, n);
}

/* The statement sql in *st, kept until sqclock_drop() (the layout goes). */
static int kept(struct sqsrc *s, sqlite3_stmt **st, const char *sql)
{
	if (*st != NULL)
		return SQLITE_OK;
	return sqlite3_prepare_v3(s->conn.db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

/* The largest key looked at: set once (or again when the keys restarted in
 * a file replaced under skiff). Returns 0 or SQ_BUSY/SQ_ERR. */
static int start(struct sqsrc *s, struct sqtable *t)
{
	sqlite3_stmt *st = NULL;
	int64_t max = INT64_MIN;
	int rc;

	rc = sqlite3_prepare_v2(s->conn.db, t->clock_max_sql, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) == SQLITE_INTEGER)
			max = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
	if (!t->clock.ready && t->clock.unknown)
		s->env->log(s->env, LOG_WARN,
		            "table %s: the stored offset holds no " SQ_ROWID_SEEN
		            " (written by Kafka Connect, or set by hand): a row stamped behind the "
		            "offset that was written while skiff was stopped cannot be told from "
		            "the rows read before; new rows behind the offset are looked for from "
		            "the largest rowid now, %lld",
		            tname(t), (long long)max);
	t->clock.unknown = false;
	if (!t->clock.ready)
		t->clock.key = max;
	else if (max < t->clock.key)
		t->clock.key = INT64_MIN; /* a new sequence: all of it is new */
	t->clock.ready = true;
	t->clock.checked = true;
	return 0;
}

/* The current row of the clock statement is behind the position (ts, key):
 * the batch query will never return it. */
static bool behind(const struct sqsrc *s, const struct sqtable *t, int64_t ts, int64_t key)
{
	int64_t pts = t->ts, pkey = s->mode == SQ_TS_INC ? t->inc : t->rid;

	if (pts == SQLTS_NONE)
		return false;
	return ts < pts || (ts == pts && key <= pkey);
}

/* timestamp+incrementing: whether no row the batch query has yet to read
 * lies between the position's id and key, that is, none with the position's
 * timestamp: then the position's id may move to key. Returns 1, 0, or
 * SQ_BUSY/SQ_ERR. */
static int nothing_between(struct sqsrc *s, struct sqtable *t, int64_t key)
{
	int rc;

	if ((rc = kept(s, &t->clock.gap_stmt, t->clock_gap_sql)) != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
	sqlite3_bind_int64(t->clock.gap_stmt, 1, t->inc);
	sqlite3_bind_int64(t->clock.gap_stmt, 2, key);
	sqlite3_bind_int64(t->clock.gap_stmt, 3, t->ts);
	rc = sqlite3_step(t->clock.gap_stmt);
	sqlite3_reset(t->clock.gap_stmt);
	if (rc == SQLITE_DONE)
		return 1;
	if (rc == SQLITE_ROW)
		return 0;
	return sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
}

static void warn_behind(struct sqsrc *s, struct sqtable *t, int64_t key, int64_t ts, int64_t now)
{
	char when[40], pos[40];

	t->clock.behind_unwarned++;
	if (t->clock.behind_warned_ms != 0 && now - t->clock.behind_warned_ms < WARN_EVERY_MS)
		return;
	sqlts_format(ts, when, sizeof(when));
	sqlts_format(s->mode == SQ_TS_INC ? t->ts : t->done_ts, pos, sizeof(pos));
	s->env->log(s->env, LOG_WARN,
	            "table %s: the row with %s %lld has the timestamp %s, behind the offset "
	            "(%s), although it is new (a clock that was wrong when it was written?): "
	            "delivered now, out of timestamp order (rows like it since the last warning: "
	            "%llu; rows_behind_offset)",
	            tname(t), s->mode == SQ_TS_INC ? "id" : "rowid", (long long)key, when, pos,
	            (unsigned long long)t->clock.behind_unwarned);
	t->clock.behind_warned_ms = now;
	t->clock.behind_unwarned = 0;
}

void sqclock_drop(struct sqclock *c)
{
	sqlite3_finalize(c->stmt);
	sqlite3_finalize(c->gap_stmt);
	c->stmt = c->gap_stmt = NULL;
	c->checked = false;
}

int sqclock_behind(struct sqsrc *s, struct sqtable *t, size_t room)
{
	int64_t now = clock_mono_ms();
	size_t added = 0;
	bool between = false; /* an unread row lies between the position and a key */
	int rc;

	if (t->clock_sql == NULL || room == 0)
		return 0;
	if (!t->clock.checked && (rc = start(s, t)) != 0)
		return rc;
	if ((rc = kept(s, &t->clock.stmt, t->clock_sql)) != SQLITE_OK)
		return sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
	sqlite3_bind_int64(t->clock.stmt, 1, t->clock.key);
	sqlite3_bind_int64(t->clock.stmt, 2, (sqlite3_int64)room);
	while ((rc = sqlite3_step(t->clock.stmt)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(t->clock.stmt, (int)t->ncols);
		int64_t ts = sqlite3_column_int64(t->clock.stmt, (int)t->ncols + 1);
		struct sqrow *r;

		if (sqlite3_column_type(t->clock.stmt, (int)t->ncols) != SQLITE_INTEGER)
			break; /* not a key (the batch query stops at such a row) */
		t->clock.key = key;
		if (sqlite3_column_type(t->clock.stmt, (int)t->ncols + 1) != SQLITE_INTEGER ||
		    ts == SQLTS_BAD || !behind(s, t, ts, key))
			continue;
		if (s->mode == SQ_TS_INC && t->clock_gap_sql != NULL && !between && key > t->inc) {
			if ((rc = nothing_between(s, t, key)) < 0) {
				sqlite3_reset(t->clock.stmt);
				return rc;
			}
			if (rc == 1)
				t->inc = key;
			else
				between = true; /* and for every larger key */
		}
		if ((r = sqrows_add(s, t, t->clock.stmt)) == NULL) {
			sqlite3_reset(t->clock.stmt);
			return SQ_NOMEM;
		}
		/* Its offset is the position: the offset never moves back. */
		r->off.v[0] = t->inc;
		r->off.v[1] = s->mode == SQ_TS_INC ? t->ts : t->done_ts;
		if (s->mode == SQ_TIMESTAMP) {
			/* The rowids up to its own were looked at: a restart
			 * from it does not send it again. */
			r->off.v[2] = 1;
			r->off.v[3] = key;
		}
		added++;
		stat(s, t, &behind_desc, 1);
		warn_behind(s, t, key, ts, now);
	}
	sqlite3_reset(t->clock.stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE && sqlitelib_busy(rc))
		return SQ_BUSY;
	return (int)added;
}

void sqclock_future(struct sqsrc *s, struct sqtable *t, uint64_t n)
{
	int64_t now = clock_mono_ms();
	sqlite3_stmt *st = NULL;
	char when[40] = "?", which[64] = "";

	stat(s, t, &future_desc, n);
	if (n == 0 ||
	    (t->clock.future_warned_ms != 0 && now - t->clock.future_warned_ms < WARN_EVERY_MS))
		return;
	t->clock.future_warned_ms = now;
	/* One of them, by name (a scan, at most once a minute). */
	if (t->future_sql != NULL &&
	    sqlite3_prepare_v2(s->conn.db, t->future_sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, s->clock.after);
		if (sqlite3_step(st) == SQLITE_ROW) {
			sqlts_format(sqlite3_column_int64(st, 0), when, sizeof(when));
			if (sqlite3_column_count(st) > 1)
				snprintf(which, sizeof(which), "the row with %s %lld, ",
				         s->mode == SQ_TS_INC ? "id" : "rowid",
				         (long long)sqlite3_column_int64(st, 1));
		}
	}
	sqlite3_finalize(st);
	s->env->log(s->env, LOG_WARN,
	            "table %s: %llu rows have a timestamp after now (e.g. %sat %s; a clock that "
	            "was wrong when they were written?): each is read only when its time comes "
	            "(rows_in_future)",
	            tname(t), (unsigned long long)n, which, when);
}
