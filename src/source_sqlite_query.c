/* source_sqlite_query: one bounded batch of a table.
 *
 * Every batch is one short read transaction: BEGIN, check the schema
 * version, step at most room (+1) rows of a LIMITed statement, reset it,
 * COMMIT. Nothing stays open between polls, so writers are never held up by
 * a reader waiting on Kafka and the WAL can always be checkpointed. */
#include "source_sqlite.h"

#include "log.h"
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stop adding rows to a batch once their values reach this many bytes. */
#define BATCH_BYTES (8u << 20)

bool sqbusy(int rc)
{
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static bool busy(int rc)
{
	return sqbusy(rc);
}

/* ---- one batch ------------------------------------------------------------- */

static int step_simple(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc;
}

static bool own(struct sqsrc *s, cJSON *o)
{
	if (s->nowned == s->capowned) {
		size_t cap = s->capowned ? s->capowned * 2 : 256;
		cJSON **g = realloc(s->owned, cap * sizeof(*g));

		if (g == NULL)
			return false;
		s->owned = g;
		s->capowned = cap;
	}
	s->owned[s->nowned++] = o;
	return true;
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
		if (!t->keyset && t->rid == INT64_MAX) {
			/* The group of ts is complete: start after it. */
			a = t->ts == INT64_MAX ? t->ts : t->ts + 1;
			b = 0;
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

/* Warns when the table's largest id is below the position: the database was
 * replaced, or rows were deleted and their ids are being reused (declare the
 * key INTEGER PRIMARY KEY AUTOINCREMENT to rule that out). Rows at or below
 * the position are not read; the offset does not move. */
static void check_ahead(struct sqsrc *s, struct sqtable *t)
{
	sqlite3_stmt *st = NULL;
	int64_t max;

	if (t->max_sql == NULL || t->inc == INT64_MIN || t->warned_ahead)
		return;
	t->warned_ahead = true;
	if (sqlite3_prepare_v2(s->db, t->max_sql, -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	    (max = sqlite3_column_int64(st, 0)) < t->inc) {
		s->env->log(s->env, LOG_WARN,
			    "%s: the largest id is %lld but the stored offset is %lld: rows with "
			    "ids up to %lld will not be read (the database was replaced, or rows "
			    "were deleted and their ids reused; remove this connector's offset to "
			    "read the table again)",
			    t->name ? t->name : "query", (long long)max, (long long)t->inc,
			    (long long)t->inc);
		s->env->count(s->env, "offset_ahead_of_table", 1);
	}
	sqlite3_finalize(st);
}

/* Appends a record for the current row of t->stmt. */
static int add_record(struct sqsrc *s, struct sqtable *t, struct source_batch *b)
{
	struct record *r = &b->records[b->n];
	const cJSON *vs = NULL, *ks = NULL;
	cJSON *v, *k = NULL;

	v = sqvalue_row(t->stmt, t->cols, t->val_idx, t->ncols, t->name, &t->vschemas, &vs,
			&s->stats);
	if (v == NULL || !own(s, v)) {
		cJSON_Delete(v);
		return -1;
	}
	if (t->nkeys > 0) {
		k = sqvalue_row(t->stmt, t->cols, t->key_idx, t->nkeys, NULL, &t->kschemas, &ks,
				&s->stats);
		if (k == NULL || !own(s, k)) {
			cJSON_Delete(k);
			return -1;
		}
	}
	memset(r, 0, sizeof(*r));
	r->part = t->part;
	r->topic = t->topic;
	r->value = (struct record_value){.kind = VALUE_STRUCT, .payload = v, .schema = vs};
	if (k != NULL)
		r->key = (struct record_value){.kind = VALUE_STRUCT, .payload = k, .schema = ks};
	else
		r->key.kind = VALUE_NULL;
	b->n++;
	return 0;
}

static size_t row_bytes(sqlite3_stmt *st, size_t ncols)
{
	size_t n = 0;

	/* Only text and blobs: asking a number its size in bytes makes SQLite
	 * render it as text. */
	for (size_t i = 0; i < ncols; i++) {
		int t = sqlite3_column_type(st, (int)i);

		n += 8 + (t == SQLITE_TEXT || t == SQLITE_BLOB
				  ? (size_t)sqlite3_column_bytes(st, (int)i)
				  : 0);
	}
	return n;
}

/* Timestamp mode: a record's offset is its timestamp only when no later row
 * shares it; otherwise the last timestamp read completely, so a restart from
 * any acknowledged record re-reads the rest of its group and loses nothing. */
static void ts_offsets(struct sqtable *t, struct record *r, size_t n, bool peek, int64_t peek_ts)
{
	for (size_t i = 0; i < n; i++) {
		int64_t ts = r[i].offset.v[1];
		bool split = i + 1 < n ? r[i + 1].offset.v[1] == ts : peek && peek_ts == ts;

		if (!split)
			t->done_ts = ts;
		r[i].offset.v[1] = t->done_ts;
	}
}

struct run {
	size_t first, n, limit;
	bool peek;
	int64_t peek_ts;
	size_t bytes;
	int rc;
	char bad[160]; /* a row that stops the batch */
};

/* Steps the statement, adding up to run->limit records; one more row, when
 * there is one, is only peeked at. */
static int read_rows(struct sqsrc *s, struct sqtable *t, struct source_batch *b, struct run *u)
{
	while ((u->rc = sqlite3_step(t->stmt)) == SQLITE_ROW) {
		struct record *r;

		if (u->n == u->limit) {
			u->peek = true;
			if (t->ts_col >= 0)
				u->peek_ts = sqlite3_column_int64(t->stmt, t->ts_col);
			break;
		}
		if (t->inc_col >= 0 && sqlite3_column_type(t->stmt, t->inc_col) != SQLITE_INTEGER) {
			snprintf(u->bad, sizeof(u->bad),
				 "a row's incrementing column holds %s, not an integer: "
				 "skiff cannot order it; fix the row or the column",
				 sqlite3_column_type(t->stmt, t->inc_col) == SQLITE_NULL ? "NULL"
											 : "a non-integer");
			break;
		}
		if (add_record(s, t, b) != 0)
			return -1;
		r = &b->records[b->n - 1];
		if (t->inc_col >= 0)
			r->offset.v[0] = sqlite3_column_int64(t->stmt, t->inc_col);
		if (t->ts_col >= 0)
			r->offset.v[1] = sqlite3_column_int64(t->stmt, t->ts_col);
		if (s->mode == SQ_BULK)
			r->offset.v[2] = t->bulk_ms;
		if (t->rid_col >= 0)
			t->rid = t->bulk_pos = sqlite3_column_int64(t->stmt, t->rid_col);
		u->n++;
		u->bytes += row_bytes(t->stmt, t->ncols);
		if (u->bytes >= BATCH_BYTES && u->n < u->limit)
			u->limit = u->n; /* the next row is only peeked at */
	}
	return 0;
}

/* Moves t's position past the rows of this batch. */
static void advance(struct sqsrc *s, struct sqtable *t, struct source_batch *b, struct run *u)
{
	struct record *r = &b->records[u->first];
	const struct record *last = &r[u->n - 1];

	switch (s->mode) {
	case SQ_BULK:
		if (t->rid_col < 0)
			t->bulk_pos = (t->bulk_pos == INT64_MIN ? 0 : t->bulk_pos) + (int64_t)u->n;
		break;
	case SQ_INCREMENTING:
		t->inc = last->offset.v[0];
		break;
	case SQ_TS_INC:
		t->inc = last->offset.v[0];
		t->ts = last->offset.v[1];
		break;
	case SQ_TIMESTAMP:
		if (!t->keyset) {
			/* rid counts the rows of group ts already read. */
			size_t same = 0;

			while (same < u->n && r[u->n - 1 - same].offset.v[1] == last->offset.v[1])
				same++;
			if (last->offset.v[1] == t->ts && t->rid != INT64_MAX)
				t->rid += (int64_t)u->n;
			else
				t->rid = (int64_t)same;
		}
		t->ts = last->offset.v[1];
		ts_offsets(t, r, u->n, u->peek, u->peek_ts);
		break;
	}
}

int sqtable_batch(struct sqsrc *s, struct sqtable *t, struct source_batch *b, size_t room,
		  int64_t now_ns, bool *more, char *errbuf, size_t errlen)
{
	struct run u = {.first = b->n, .limit = room};
	int rc, version;

	*more = false;
	rc = step_simple(s->begin);
	if (rc != SQLITE_DONE)
		return busy(rc) ? SQ_BUSY : (snprintf(errbuf, errlen, "BEGIN: %s",
						      sqlite3_errmsg(s->db)), SQ_ERR);
	rc = sqlite3_step(s->schema_version);
	version = sqlite3_column_int(s->schema_version, 0);
	sqlite3_reset(s->schema_version);
	if (rc != SQLITE_ROW) {
		rc = busy(rc) ? SQ_BUSY : (snprintf(errbuf, errlen, "%s: %s", s->path,
						    sqlite3_errmsg(s->db)), SQ_ERR);
		goto out;
	}
	if (t->laid_out && version != t->schema_version) {
		s->env->log(s->env, LOG_INFO, "%s: the database schema changed: reading its "
			    "columns again", t->name ? t->name : "query");
		s->env->count(s->env, "schema_changes", 1);
	}
	if ((!t->laid_out || version != t->schema_version) &&
	    (rc = sqtable_lay_out(s, t, version, errbuf, errlen)) != 0)
		goto out;
	check_ahead(s, t);
	bind_position(s, t, s->mode == SQ_TIMESTAMP ? room + 1 : room, now_ns);
	if (read_rows(s, t, b, &u) != 0) {
		snprintf(errbuf, errlen, "out of memory");
		rc = SQ_ERR;
		goto out;
	}
	if (u.rc != SQLITE_ROW && u.rc != SQLITE_DONE) {
		if (u.n == 0) {
			rc = busy(u.rc) ? SQ_BUSY : SQ_ERR;
			snprintf(errbuf, errlen, "%s: %s", t->name ? t->name : "query",
				 sqlite3_errmsg(s->db));
			goto out;
		}
		snprintf(u.bad, sizeof(u.bad), "%s", sqlite3_errmsg(s->db));
	}
	if (u.bad[0] != '\0' && s->pending == NULL) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s: %s", t->name ? t->name : "query", u.bad);
		s->pending = strdup(msg);
	}
	if (u.n > 0)
		advance(s, t, b, &u);
	*more = u.peek || (s->mode != SQ_TIMESTAMP && u.n == u.limit && u.bad[0] == '\0');
	rc = (int)u.n;
out:
	if (t->stmt != NULL)
		sqlite3_reset(t->stmt);
	if (step_simple(s->commit) != SQLITE_DONE)
		step_simple(s->rollback);
	return rc;
}
