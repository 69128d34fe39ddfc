/* sqbacklog: how many rows of each table are still unread
 * (source_ops.backlog), in incrementing mode: SELECT count(*) of the rows
 * whose id is above the last id read. On the rowid, an INTEGER PRIMARY KEY
 * or an indexed column that is a range scan of the rows counted, about two
 * VM steps a row. It runs only when metrics or the status are read, and
 * within a budget of VM steps (a progress handler) so that a table without
 * an index, or a huge backlog, never stalls the loop: past the budget, or
 * while the database is locked (no waiting), the backlog is unknown and not
 * put. The timestamp modes and bulk are unknown: counting rows above a
 * timestamp would scan the table. */
#include "sources/sqlite/sqbacklog.h"

#include "sources/sqlite/sqsrc.h"
#include "sources/sqlite/sqtable.h"

/* ~2 M rows counted through an index; ~25 ms on a PC, a few times that on
 * a Raspberry Pi. */
#define BUDGET_STEPS 4000000
#define STEPS_PER_CALL 1000

static int over_budget(void *arg)
{
	int *calls = arg;

	return ++*calls > BUDGET_STEPS / STEPS_PER_CALL;
}

/* The rows of t above its position: 0 and *n, or -1 when not known now. */
static int count_rows(struct sqsrc *s, struct sqtable *t, uint64_t *n)
{
	sqlite3_stmt *st = NULL;
	int calls = 0, rc;

	if (sqlite3_prepare_v2(s->conn.db, t->count_sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, t->inc);
	sqlite3_busy_timeout(s->conn.db, 0);
	sqlite3_progress_handler(s->conn.db, STEPS_PER_CALL, over_budget, &calls);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_progress_handler(s->conn.db, 0, NULL, NULL);
	sqlite3_busy_timeout(s->conn.db, SQ_BUSY_TIMEOUT_MS);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

void sqbacklog_count(void *ctx,
                     void (*put)(void *arg, struct partition *p, enum source_unit u, uint64_t n),
                     void *arg)
{
	struct sqsrc *s = ctx;
	uint64_t n;

	if (s->mode != SQ_INCREMENTING || s->conn.db == NULL)
		return;
	for (size_t i = 0; i < s->ntables; i++) {
		struct sqtable *t = &s->tables[i];

		if (t->part != NULL && t->started && t->count_sql != NULL &&
		    count_rows(s, t, &n) == 0)
			put(arg, t->part, SOURCE_UNIT_ROWS, n);
	}
}
