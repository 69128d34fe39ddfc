/* sqreuse: incrementing ids that come back.
 *
 * Incrementing mode reads rows with an id above the last one read. SQLite
 * hands out an id again when it is not AUTOINCREMENT and the rows above it
 * are gone (DELETE FROM t, deleting the newest rows), when the table is
 * dropped and created, when VACUUM renumbers an implicit rowid, and any id
 * starts again in a database file replaced under skiff. New rows would then
 * sit at or below the position and never be read.
 *
 * So before each query, in the same read transaction, skiff checks the row it
 * read last. An AUTOINCREMENT table whose sqlite_sequence is not below the
 * position never reuses an id: nothing to do. Otherwise, an empty table may
 * start its ids again: read it from the start. A largest id below the
 * position, or the last row read changed under its id, means ids are handed
 * out again: skiff reads again after the newest of the last SQRING_N ids read
 * whose row is unchanged, or from the start when none is (the table was
 * emptied and filled, or replaced). The last row read deleted while larger
 * ids exist is no reuse: SQLite hands out ids above the largest. Rows above
 * the point read again come twice (a row only updated under the last id
 * read, the rows VACUUM renumbered); nothing new is skipped. After a restart
 * nothing is remembered: an AUTOINCREMENT sequence below the stored offset
 * (dropped and created, another file) is read from its start; otherwise a
 * largest id below the stored offset is only reported. */
#include "sources/sqlite/sqreuse.h"

#include "sources/sqlite/sqerr.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"
#include "sources/sqlite/sqseen.h"
#include "util/clock.h"

#include "core/log.h"
#include "core/source.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static const char *tname(const struct sqtable *t)
{
	return t->name ? t->name : "query";
}

/* The statement sql in *st, prepared at its first use in a layout (each
 * query checks: compiling it every time cost more than running it); it
 * lives until sqreuse_drop() (the layout goes). Returns an SQLite result code. */
static int kept(struct sqsrc *s, sqlite3_stmt **st, const char *sql)
{
	if (*st != NULL)
		return SQLITE_OK;
	return sqlite3_prepare_v3(s->conn.db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

/* The largest id: 1 with *max, 0 when the table is empty, SQ_BUSY or SQ_ERR. */
static int max_id(struct sqsrc *s, struct sqtable *t, int64_t *max)
{
	int rc = kept(s, &t->reuse.max_stmt, t->max_sql);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(t->reuse.max_stmt);
	if (rc == SQLITE_ROW) {
		*max = sqlite3_column_int64(t->reuse.max_stmt, 0);
		rc = sqlite3_column_type(t->reuse.max_stmt, 0) == SQLITE_NULL ? 0 : 1;
	} else {
		rc = sqlitelib_busy(rc) ? SQ_BUSY : SQ_ERR;
	}
	sqlite3_reset(t->reuse.max_stmt);
	return rc;
}

/* An AUTOINCREMENT table whose sequence (sqlite_sequence) is not below the
 * position: SQLite never hands out an id at or below it, whatever was
 * deleted. False when the sequence restarted (DROP/CREATE, another file). */
static bool sequence_intact(struct sqsrc *s, struct sqtable *t)
{
	sqlite3_stmt *st;
	bool ok = false;

	if (!t->reuse.autoinc || t->name == NULL ||
	    kept(s, &t->reuse.seq_stmt, "SELECT seq FROM sqlite_sequence WHERE name = ?1") !=
	        SQLITE_OK)
		return false;
	st = t->reuse.seq_stmt;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) >= t->inc;
	sqlite3_reset(st);
	return ok;
}

/* Whether the row at id still has fingerprint p over its first ncols
 * columns (added columns do not count): 1 yes, 0 no (changed, or gone when
 * *gone), SQ_BUSY, SQ_ERR. */
static int unchanged(struct sqsrc *s, struct sqtable *t, int64_t id, const struct sqprint *p,
                     size_t ncols, bool *gone)
{
	struct sqprint now;
	int rc = kept(s, &t->reuse.at_stmt, t->at_sql);
	sqlite3_stmt *st = t->reuse.at_stmt;

	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		rc = sqlite3_step(st);
	}
	if (rc == SQLITE_ROW && (size_t)sqlite3_column_count(st) < ncols) {
		rc = 1; /* a column was dropped: cannot tell, assume unchanged */
	} else if (rc == SQLITE_ROW) {
		sqseen_print(st, ncols, &now);
		rc = now.a == p->a && now.b == p->b;
	} else {
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0
		     : sqlitelib_busy(rc)                  ? SQ_BUSY
		                                           : SQ_ERR;
	}
	*gone = rc == 0 && sqlite3_data_count(st) == 0;
	sqlite3_reset(st);
	return rc;
}

int sqreuse_print(struct sqsrc *s, struct sqtable *t, int64_t id, struct sqprint *p)
{
	int rc = t->at_sql != NULL ? kept(s, &t->reuse.at_stmt, t->at_sql) : SQLITE_MISUSE;

	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(t->reuse.at_stmt, 1, id);
		rc = sqlite3_step(t->reuse.at_stmt);
	}
	if (rc == SQLITE_ROW && (size_t)sqlite3_column_count(t->reuse.at_stmt) >= t->ncols)
		sqseen_print(t->reuse.at_stmt, t->ncols, p);
	else
		rc = SQLITE_ERROR;
	sqlite3_reset(t->reuse.at_stmt);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The newest id read whose row is unchanged (*id), 1; 0 when none is. */
static int newest_unchanged(struct sqsrc *s, struct sqtable *t, int64_t *id)
{
	for (size_t k = 0; k < sqseen_ring_len(&t->ring); k++) {
		const struct sqprint *p;
		size_t ncols;
		bool gone;
		int rc;

		sqseen_ring_get(&t->ring, k, id, &p, &ncols);
		if ((rc = unchanged(s, t, *id, p, ncols, &gone)) != 0)
			return rc;
	}
	return 0;
}

/* After a restart: nothing remembered to compare, so only say it. */
static void report_ahead(struct sqsrc *s, struct sqtable *t, int64_t max)
{
	if (max >= t->inc || t->warned_ahead)
		return;
	t->warned_ahead = true;
	s->env->log(s->env, LOG_WARN,
	            "%s: the largest id is %lld but the stored offset is %lld: rows with "
	            "ids up to %lld will not be read (the database was replaced, or rows "
	            "were deleted and their ids reused while skiff was stopped; remove this "
	            "connector's offset to read the table again)",
	            tname(t), (long long)max, (long long)t->inc, (long long)t->inc);
	s->env->count(s->env, "offset_ahead_of_table", 1);
}

/* Logs a reuse and counts it: a warning at most once a minute per table
 * (a queue emptied on every read would say it each time), else a notice. */
static void say(struct sqsrc *s, struct sqtable *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(struct sqsrc *s, struct sqtable *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int64_t now;

	now = clock_mono_ms();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->env->log(s->env,
	            t->reuse.warned_ms == 0 || now - t->reuse.warned_ms >= 60000 ? LOG_WARN
	                                                                         : LOG_NOTICE,
	            "%s: %s", tname(t), msg);
	if (t->reuse.warned_ms == 0 || now - t->reuse.warned_ms >= 60000)
		t->reuse.warned_ms = now;
	s->env->count(s->env, "ids_reused", 1);
}

static void moved_back(struct sqsrc *s, struct sqtable *t, int64_t max, int found, int64_t to)
{
	char where[64];

	if (found)
		snprintf(where, sizeof(where), "reading again after id %lld", (long long)to);
	else
		snprintf(where, sizeof(where), "reading the new ids from their start");
	say(s, t,
	    "ids already read are in use again (largest id now %lld, last read %lld, whose "
	    "row %s): rows were deleted and their ids reused, the table was replaced, or "
	    "VACUUM renumbered the rowid; %s",
	    (long long)max, (long long)t->inc, max < t->inc ? "is gone" : "changed", where);
	t->inc = found ? to : INT64_MIN;
	while (sqseen_ring_len(&t->ring) > 0) {
		const struct sqprint *p;
		size_t ncols;
		int64_t id;

		sqseen_ring_get(&t->ring, 0, &id, &p, &ncols);
		if (found && id <= to)
			break;
		sqseen_ring_drop_newest(&t->ring);
	}
}

void sqreuse_drop(struct sqreuse *r)
{
	sqlite3_finalize(r->max_stmt);
	sqlite3_finalize(r->at_stmt);
	sqlite3_finalize(r->seq_stmt);
	r->max_stmt = r->at_stmt = r->seq_stmt = NULL;
}

int sqreuse_check(struct sqsrc *s, struct sqtable *t)
{
	const struct sqprint *p;
	size_t ncols;
	int64_t max = INT64_MIN, last, to = INT64_MIN;
	bool gone = false;
	int rc;

	if (s->mode != SQ_INCREMENTING || t->max_sql == NULL || t->inc == INT64_MIN)
		return 0;
	if ((rc = max_id(s, t, &max)) < 0)
		return rc == SQ_BUSY ? SQ_BUSY : 0;
	if (t->reuse.autoinc && sequence_intact(s, t))
		return 0; /* rows deleted or updated, no id reused */
	if (t->reuse.autoinc && sqseen_ring_len(&t->ring) == 0) {
		/* Nothing remembered (a restart), but the sequence tells. */
		say(s, t,
		    "its AUTOINCREMENT sequence is below the stored offset %lld: the table was "
		    "dropped and created, or the database replaced; reading its ids from their "
		    "start",
		    (long long)t->inc);
		t->inc = INT64_MIN;
		return 0;
	}
	if (sqseen_ring_len(&t->ring) == 0) {
		if (rc == 1)
			report_ahead(s, t, max);
		return 0;
	}
	if (rc == 0) {
		say(s, t,
		    "the table is empty now, ids up to %lld were read: its ids may start "
		    "again; reading the new ids from their start",
		    (long long)t->inc);
		t->inc = INT64_MIN;
		sqseen_ring_clear(&t->ring);
		return 0;
	}
	/* Below the largest id no new id is handed out: the last row read
	 * unchanged, or deleted, means no reuse. */
	sqseen_ring_get(&t->ring, 0, &last, &p, &ncols);
	if (max >= t->inc && ((rc = unchanged(s, t, last, p, ncols, &gone)) != 0 || gone))
		return rc == SQ_BUSY ? SQ_BUSY : 0;
	if ((rc = newest_unchanged(s, t, &to)) < 0)
		return rc == SQ_BUSY ? SQ_BUSY : 0;
	moved_back(s, t, max, rc, to);
	return 0;
}
