/* sqtable: one polled table or the query, a source partition: its layout (sqlayout.c), the
 * position this process has read (sqquery.c), and the state of the modules that act on one
 * table. Main loop only. */
#ifndef SKIFF_SQTABLE_H
#define SKIFF_SQTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/sqlite/sqclock.h"
#include "sources/sqlite/sqlayout.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqreuse.h"
#include "sources/sqlite/sqrows.h"
#include "sources/sqlite/sqseen.h"
#include "sources/sqlite/sqvalue.h"

struct partition;
struct sqcol;

/* timestamp mode: the offset member, beside Connect's, holding the largest
 * rowid the clock's check had looked at when the record was read. */
#define SQ_ROWID_SEEN "rowid_seen"

/* One polled table or the query: a source partition. */
struct sqtable {
	char *name; /* the table as configured; NULL for the query */
	char *topic;
	struct partition *part;

	/* Layout, rebuilt when the database schema changes. */
	bool laid_out;
	int schema_version;
	struct sqcol *cols; /* output columns, [0, ncols) of stmt */
	size_t ncols;
	size_t *val_idx; /* 0..ncols-1 */
	size_t *key_idx;
	size_t nkeys;
	int inc_col; /* stmt column of the incrementing value, -1 none */
	int ts_col;  /* stmt column of skiff_ts(...), -1 none */
	int rid_col; /* stmt column of the rowid, -1 none */
	bool keyset; /* timestamp mode pages equal timestamps by rowid (else by group) */
	sqlite3_stmt *stmt;
	char *max_sql;   /* incrementing: SELECT max(id), for the replaced-database check */
	char *count_sql; /* incrementing: SELECT count(*) above ?1, for the backlog */
	char *at_sql;    /* incrementing: SELECT * of the row at an id (sqreuse) */
	/* Timestamp modes: the SQL of the clock's check (sqclock.c); clock_sql and
	 * clock_max_sql only where a key grows with each new row, clock_gap_sql
	 * only in timestamp+incrementing. */
	char *clock_sql, *clock_max_sql, *clock_gap_sql, *future_sql;
	char *newest_sql; /* not bulk: the newest row (sqcheck_reach) */

	/* Position: what this process has read (not what Kafka acknowledged). */
	bool started;    /* position initialised from the committed offset */
	int64_t inc;     /* incrementing: last id read; timestamp+incrementing: its id */
	int64_t ts;      /* last timestamp read (ns) */
	int64_t rid;     /* timestamp: rowid of the last row read, or rows of group ts read */
	int64_t done_ts; /* timestamp: every row with a timestamp <= done_ts was read */
	int64_t bulk_ms; /* bulk: wall-clock ms the current pass started; 0 between passes */
	int64_t bulk_pos;
	int64_t next_due; /* monotonic ms */
	bool warned_missing, warned_ahead, warned_slow, warned_reusable;
	struct sqgroup group; /* timestamp without keyset: rows of group ts read */
	struct sqring ring;   /* incrementing: the last ids read */
	bool warned_keyless;  /* timestamp without a rowid: said at the first layout */

	/* Each module's own state of this table. */
	struct sqreuse reuse; /* incrementing: ids reused (sqreuse.c) */
	struct sqclock clock; /* timestamp modes: the rows the clock hides (sqclock.c) */
	struct sqnulls nulls; /* rows without a position (sqlayout_nulls) */
	struct sqrows rows;   /* the rows of the last query, not yet handed out (sqrows.c) */

	struct sqschemas vschemas, kschemas;
};

#endif
