/* sqtable: one polled table or the query, a source partition: its layout (sqlayout.c), the
 * position this process has read (sqquery.c), and the state of the modules that act on one
 * table. Main loop only. */
#ifndef SKIFF_SQTABLE_H
#define SKIFF_SQTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqseen.h"
#include "sources/sqlite/sqvalue.h"
#include "util/buf.h"

struct partition;
struct sqcol;
struct sqrow;

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
	/* sqreuse's statements, prepared at first use in this layout */
	sqlite3_stmt *max_stmt, *at_stmt, *seq_stmt;
	char *max_sql;   /* incrementing: SELECT max(id), for the replaced-database check */
	char *count_sql; /* incrementing: SELECT count(*) above ?1, for the backlog */
	/* Timestamp modes: the clock's statements (sqclock.c); clock_sql and
	 * clock_max_sql only where a key grows with each new row, clock_gap_sql
	 * only in timestamp+incrementing. */
	char *clock_sql, *clock_max_sql, *clock_gap_sql, *future_sql;
	char *newest_sql; /* not bulk: the newest row (sqcheck_reach) */
	/* Rows without a position (validate.non.null=false, a view, a query):
	 * count(*) of NULL ids, of NULL timestamps (sqlayout_nulls), between the
	 * rowids ?1 and ?2 where there is a rowid (nulls_max_sql its largest). */
	char *nulls_sql[2], *nulls_max_sql;
	sqlite3_stmt *clock_stmt, *clock_gap_stmt;

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
	struct sqgroup group;    /* timestamp without keyset: rows of group ts read */
	struct sqring ring;      /* incrementing: the last ids read */
	char *at_sql;            /* incrementing: SELECT * of the row at an id */
	bool autoinc;            /* incrementing: an INTEGER PRIMARY KEY AUTOINCREMENT */
	int64_t reuse_warned_ms; /* monotonic ms of the last warning of reused ids */
	/* The rows the clock hides (sqclock.c). */
	int64_t clock_key;   /* the largest key looked at */
	bool clock_ready;    /* clock_key is set (from the offset, or the table) */
	bool clock_checked;  /* ... and checked against this layout's table */
	bool clock_unknown;  /* timestamp: the stored offset held no rowid_seen */
	bool warned_keyless; /* timestamp without a rowid: said at the first layout */
	int64_t behind_warned_ms, future_warned_ms; /* monotonic ms of the last warnings */
	uint64_t behind_unwarned;                   /* rows behind since the last warning */
	/* Rows without a position (sqlayout_nulls). */
	int64_t nulls[2]; /* counted so far */
	int64_t
	    nulls_counted_ms; /* no rowid: monotonic ms of the last count; 0: at the next query */
	int64_t nulls_rowid;  /* rowid: the largest counted ... */
	bool nulls_ranged;    /* ... once there is one */

	/* The rows of the last query (at most batch.max.rows), handed out over
	 * as many polls as the worker's batches need. */
	struct sqrow *rows;
	size_t nrows, head, caprows;
	struct buf text; /* the rows' payloads rendered as text, SQ_TEXT_MAX */
	bool more;       /* the last query stopped at its limit: more rows wait */

	struct sqschemas vschemas, kschemas;
};

#endif
