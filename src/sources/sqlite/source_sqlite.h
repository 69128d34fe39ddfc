/* source_sqlite: the polling connector (Confluent's JdbcSourceConnector on a
 * SQLite database). This header holds the connector's state, struct sqsrc
 * and its tables (struct sqtable), which the modules below act on; each
 * module declares its functions in its own header, and a file includes the
 * headers of what it calls:
 *
 *   source_sqlite.c  config, lifecycle, scheduling, offsets (the ops table)
 *   sqdb.c           the database connection: open, replaced, busy back-off
 *   sqlts.c          timestamps: parsing and the skiff_ts() SQL function
 *   sqvalue.c        row values to Connect payloads and schemas
 *   sqseen.c         row fingerprints: the last timestamp's group, the last ids
 *   sqlayout.c       a table's columns and the SQL that reads it
 *   sqquery.c        running one bounded batch
 *   sqrows.c         a table's rows read and not yet handed out
 *   sqclock.c        the rows a wrong clock hides from the timestamp modes
 *   sqreuse.c        incrementing ids reused under skiff (checked each query)
 *   sqguard.c        paths that are not files, the system calls SQLite may
 *                    make for skiff, journal mode, --check's env
 *   sqvfs.c          the read-only VFS every database is opened through
 *   squri.c          the file behind an SQLite URI
 *   sqbacklog.c      the rows still unread (incrementing mode)
 *   sqcheck.c        offsets a person sends (KIP-875), checked
 *   sqlitelib.c      SQLite itself, loaded when first needed
 *
 * Each file exports only functions named after it (sqlts.c: sqlts_*). The
 * types they share keep short names (struct sqtable, struct sqcol, SQ_*)
 * and sit in the header of the file that defines their meaning.
 *
 * Everything here runs on the main loop. */
#ifndef SKIFF_SOURCE_SQLITE_H
#define SKIFF_SOURCE_SQLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config/config.h"
#include "convert/convert.h"
#include "core/source.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqseen.h"
#include "sources/sqlite/sqvalue.h"
#include "util/buf.h"
#include "util/err.h"

struct partition;
struct source_env;

/* mode=, in the order of its choices. */
enum sqmode { SQ_BULK, SQ_INCREMENTING, SQ_TIMESTAMP, SQ_TS_INC };

/* The connector's keys (source_sqlite.c's table), bound once. */
struct sqlite_conf {
	const char *url, *query, *topic_prefix, *inc_name, *timezone;
	enum sqmode mode;
	struct config_list whitelist, include_list, ts_names, key_names;
	int64_t ts_initial, delay_ms, poll_ms, batch_max;
	bool ts_initial_given, validate_non_null;
};

/* The source's table (source_sqlite.c). */
extern const struct config_key source_sqlite_keys[];

/* Binds cfg (a connector section of this source's keys) into *out, whose
 * strings and lists cfg owns. Main loop, at open and check. */
static inline void source_sqlite_conf(const struct config_section *cfg, struct sqlite_conf *out)
{
	config_section_bind(cfg, source_sqlite_keys, out);
}

/* A row read and converted, waiting to be handed to the worker: a tree, or
 * (env->json_values, json_keys) text in its table's buffer. */
struct sqrow {
	cJSON *value, *key; /* owned until emitted; NULL when text */
	const cJSON *vschema, *kschema;
	const char *vjson, *kjson;   /* text: the schemas as the converter writes them */
	size_t vat, vlen, kat, klen; /* text: where in the table's text */
	/* v[0] the id, v[1] the timestamp, v[2] bulk: the pass's start; in
	 * timestamp mode 1 when v[3] holds the largest rowid the clock's check
	 * had looked at (the offset's "rowid_seen", sqclock.c). */
	struct src_offset off;
};

/* timestamp mode: the offset member, beside Connect's, holding the largest
 * rowid the clock's check had looked at when the record was read. */
#define SQ_ROWID_SEEN "rowid_seen"

/* The most text a table's rows of one query hold: the batch stops adding
 * rows at a few MB, so this only bounds one huge row (key and value). */
#define SQ_TEXT_MAX ((size_t)2 * CONVERT_MAX_BYTES)

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

/* The connector. */
struct sqsrc {
	struct source_env *env;
	enum sqmode mode;
	char *path; /* database file (or URI when uri) */
	char *file; /* the file to watch: path, or the URI's file */
	bool uri;
	char *query;    /* NULL in table mode */
	char *inc_name; /* "" for the rowid */
	size_t nts;
	char **ts_names;
	size_t nkeys;
	char **key_names;
	bool validate_non_null;
	bool has_initial;
	int64_t initial_ms;
	int64_t delay_ms, poll_ms;
	size_t batch_max;

	struct sqtable *tables;
	size_t ntables;
	size_t rr; /* next table to consider first */

	sqlite3 *db;
	sqlite3_stmt *begin, *commit, *rollback, *schema_version;
	uint64_t dev, ino;
	bool missing_warned;
	bool empty_warned;     /* the path is an empty file */
	bool irregular_warned; /* the path is a FIFO, directory or device */
	int64_t retry_at;      /* monotonic ms; 0 none */
	int64_t backoff_ms;    /* while the database is busy */
	int64_t busy_since;    /* monotonic ms of the first busy answer; 0 none */
	bool busy_warned;

	cJSON **owned; /* payloads and keys of the last poll */
	size_t nowned, capowned;
	struct sqvalue_stats stats;
	struct sqlts_clock clock; /* what skiff_ts() counts (sqclock.c) */
	char *pending;            /* an error to report at the next poll */
	bool pending_config;      /* it is the data's or the configuration's: exit 78 */
};

/* How long one attempt waits for a lock inside SQLite (source_sqlite.c). */
#define SQ_BUSY_TIMEOUT_MS 100

/* Results of sqquery_fill besides a count >= 0. */
enum {
	SQ_ERR = -1,
	SQ_BUSY = -2,
	SQ_MISSING = -3,
	SQ_CONFIG = -4, /* a person must act */
	SQ_NOMEM = -5,  /* out of memory: a restart may pass */
	SQ_STALE = -6,  /* the files changed under the read (sqvfs_check): dropped */
};

#endif
