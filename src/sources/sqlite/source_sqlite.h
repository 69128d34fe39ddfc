/* source_sqlite: the polling connector (Confluent's JdbcSourceConnector on a
 * SQLite database). Internal header shared by its files:
 *
 *   source_sqlite.c  config, lifecycle, scheduling, offsets (the ops table)
 *   sqdb.c           the database connection: open, replaced, busy back-off
 *   sqlts.c          timestamps: parsing and the skiff_ts() SQL function
 *   sqvalue.c        row values to Connect payloads and schemas
 *   sqseen.c         row fingerprints: the last timestamp's group, the last ids
 *   sqlayout.c       a table's columns and the SQL that reads it
 *   sqquery.c        running one bounded batch
 *   sqrows.c         a table's rows read and not yet handed out
 *   sqreuse.c        incrementing ids reused under skiff (checked each query)
 *   sqguard.c        paths that are not files, the system calls SQLite may
 *                    make for skiff, journal mode, --check's env
 *   sqvfs.c          the read-only VFS every database is opened through
 *   squri.c          the file behind an SQLite URI
 *   sqbacklog.c      the rows still unread (incrementing mode)
 *
 * Each file exports only functions named after it (sqlts.c: sqlts_*); below,
 * one section per file. The types they share keep short names (struct
 * sqtable, struct sqcol, SQ_*) and sit in the section of the file that
 * defines their meaning; the connector's section holds the table and its
 * state, which every later section uses.
 *
 * Everything here runs on the main loop. */
#ifndef SKIFF_SOURCE_SQLITE_H
#define SKIFF_SOURCE_SQLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include "sources/sqlite/sqlitelib.h"

#include "util/buf.h"
#include "util/err.h"
#include "convert/convert.h"
#include "core/source.h"

struct source_env;
struct source_batch;
struct partition;

/* ---- timestamps (sqlts.c) ------------------------------------------------ */

/* Nanoseconds since 1970-01-01T00:00:00Z; int64 covers 1677-09-21 to
 * 2262-04-11. */
#define SQLTS_NONE INT64_MIN
/* What skiff_ts() returns for a value it cannot read: after every instant
 * (no conversion yields it), so the rows before it are read first. */
#define SQLTS_BAD INT64_MAX
#define SQLTS_BAD_SQL "9223372036854775807"

/* Parses an ISO-8601 text timestamp:
 *   YYYY-MM-DD
 *   YYYY-MM-DD[T ]HH:MM[:SS[.fraction]][zone]
 * zone: Z | z | [+-]HH | [+-]HHMM | [+-]HH:MM, optionally after spaces;
 * no zone means UTC. Up to 9 fraction digits count, more are ignored.
 * Surrounding spaces are allowed. Returns 0 and *ns, or -1 with why (a
 * static string). */
int sqlts_parse_text(const char *s, size_t len, int64_t *ns, const char **why);

/* Converts a number to ns. A Julian day (2299160.5 to 2816787.5, what
 * julianday() returns) is one; an integer YYYYMMDDhhmmss or YYYYMMDD (from
 * 19000101) is that UTC time; else an epoch number whose unit follows the
 * magnitude: |v| < 1e11 seconds, < 1e14 milliseconds, < 1e17 microseconds,
 * else nanoseconds. Returns 0, or -1 when out of range. */
int sqlts_from_int(int64_t v, int64_t *ns);
int sqlts_from_real(double v, int64_t *ns);

/* Converts one SQLite value (INTEGER, REAL or TEXT; not NULL) to ns.
 * Returns 0, or -1 with a message in errbuf naming the value. */
int sqlts_from_value(sqlite3_value *v, int64_t *ns, char *errbuf, size_t errlen);

/* What skiff_ts() counts as it converts: the values after `after` (the
 * timestamp modes' query computes it once for every row of the table, so
 * n is then the rows in the future). Reset by the caller. */
struct sqlts_clock {
	int64_t after;
	uint64_t n;
};

/* Registers skiff_ts(x) on db: x as ns since the epoch, NULL for NULL,
 * SQLTS_BAD for anything else; counting into clk (NULL: not). clk lives
 * as long as db. Returns an SQLite result code. */
int sqlts_register(sqlite3 *db, struct sqlts_clock *clk);

struct sqsrc;
struct sqtable;
/* Describes the current row of t->stmt, whose timestamp is SQLTS_BAD: its
 * rowid (or id), the column and the value, with why skiff cannot read it. */
void sqlts_bad_row(const struct sqsrc *s, const struct sqtable *t, char *buf, size_t len);

/* Java's Timestamp split: getTime() (ms, floored) and getNanos(). */
int64_t sqlts_ms(int64_t ns);
int64_t sqlts_nanos(int64_t ns);
/* The reverse: ms + nanos-of-second to ns; -1 when out of range. */
int sqlts_join(int64_t ms, int64_t nanos, int64_t *ns);

/* Renders ns as "YYYY-MM-DDTHH:MM:SS.fffffffffZ" into buf (>= 40 bytes). */
void sqlts_format(int64_t ns, char *buf, size_t len);

/* ---- values (sqvalue.c) -------------------------------------------------- */

/* What a declared column type says, by SQLite's affinity rules, plus the
 * Connect logical type it asks for. */
enum sqcol_kind {
	SQCOL_INTEGER, /* INT affinity */
	SQCOL_TEXT,    /* CHAR, CLOB, TEXT */
	SQCOL_BLOB,    /* BLOB, or no declared type */
	SQCOL_REAL,    /* REAL, FLOA, DOUB */
	SQCOL_NUMERIC, /* everything else */
};

enum sqcol_logical {
	SQLOG_NONE,
	SQLOG_TIMESTAMP, /* DATETIME, TIMESTAMP */
	SQLOG_DATE,      /* DATE */
	SQLOG_BOOLEAN,   /* BOOL, BOOLEAN */
};

struct sqcol {
	char *name;
	/* Optional (NULL: rendered per row): the name as a JSON member's key,
	 * "name": as JsonConverter writes it, key_len bytes, and the invalid
	 * UTF-8 sequences replaced in it (counted again for every row, as
	 * rendering it per row would). From sqvalue_col_key(); owned. */
	char *key;
	size_t key_len;
	uint64_t key_replaced;
	enum sqcol_kind kind;
	enum sqcol_logical logical;
	bool declared; /* has a declared type */
	bool optional;
};

/* Renders c->name into c->key (once per table layout: every row of the
 * table writes the same key). Returns 0, or -1 when memory is short. */
int sqvalue_col_key(struct sqcol *c);

/* Classifies a declared type (NULL or "" for none). */
void sqvalue_classify(const char *decltype, enum sqcol_kind *kind, enum sqcol_logical *logical);

/* The Connect struct schemas one table produced, one per distinct set of
 * field types (SQLite typing is per value, so a column may carry an integer
 * in one row and text in the next). Owned by the table; a schema stays valid
 * until sqvalue_schemas_clear(). */
struct sqschemas {
	struct sqschema_entry *v;
	size_t n, cap;
};

/* Counters the value code bumps, reported through env->count by the caller. */
struct sqvalue_stats {
	uint64_t utf8_replaced;
	uint64_t ts_unparsed;
};

/* Builds the payload object of one row: fields idx[0..n-1] of stmt (column
 * indexes), described by cols[idx[i]]. *schema is a schema from cache
 * (struct name: name, or none when NULL). Returns the payload (caller frees
 * with cJSON_Delete) or NULL on allocation failure. */
cJSON *sqvalue_row(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                   const char *name, struct sqschemas *cache, const cJSON **schema,
                   struct sqvalue_stats *st);

/* sqvalue_row() as text: appends to out the payload JsonConverter writes
 * for that row, the same bytes, without building the tree; *schema_json is
 * the converter's rendering of its schema, from cache. Returns 0, or -1 when
 * memory is short or out is full (out as it was). */
int sqvalue_row_json(sqlite3_stmt *stmt, const struct sqcol *cols, const size_t *idx, size_t n,
                     const char *name, struct sqschemas *cache, struct buf *out,
                     const char **schema_json, struct sqvalue_stats *st);

void sqvalue_schemas_clear(struct sqschemas *c);
/* The converter's rendering of schema, a schema of c (NULL if not one). */
const char *sqvalue_schemas_json(const struct sqschemas *c, const cJSON *schema);
/* True when the cache holds so many variants it should be cleared (between
 * polls only: records point to its schemas). */
bool sqvalue_schemas_full(const struct sqschemas *c);

/* ---- what was read (sqseen.c) -------------------------------------------- */

/* A row's fingerprint over the types and bytes of its columns. */
struct sqprint {
	uint64_t a, b;
};

/* Fingerprints columns [0, ncols) of st's current row. */
void sqseen_print(sqlite3_stmt *st, size_t ncols, struct sqprint *p);

/* Most rows of one timestamp the group remembers (at most ~6 MB). */
#define SQGROUP_MAX 100000

/* The rows read so far with timestamp ts, as a multiset of fingerprints.
 * Zero-initialised it is empty; owns its table (sqseen_group_free). */
struct sqgroup {
	int64_t ts;
	struct sqgroup_entry *v;
	size_t cap, n; /* slots, distinct fingerprints */
	size_t rows;   /* rows read of group ts */
};

/* Forgets every row, then tracks group ts. */
void sqseen_group_reset(struct sqgroup *g, int64_t ts);
/* Starts a query that reads the group again. */
void sqseen_group_new_pass(struct sqgroup *g);
/* True when a row with fingerprint p was read before and this query has not
 * yet met that many of them: skip it. */
bool sqseen_group_seen(struct sqgroup *g, const struct sqprint *p);
/* Failures of sqseen_group_add (util/err.h). */
enum sqseen_err {
	SQSEEN_OK = 0,
	SQSEEN_ERR_FULL = -2,  /* SQGROUP_MAX rows remembered already */
	SQSEEN_ERR_NOMEM = -3, /* out of memory */
};
/* A short text for a sqseen_err code; never NULL. */
const char *sqseen_strerror(int err);
/* Records a row read. Returns SQSEEN_OK, SQSEEN_ERR_NOMEM, or
 * SQSEEN_ERR_FULL. */
int sqseen_group_add(struct sqgroup *g, const struct sqprint *p);
bool sqseen_group_full(const struct sqgroup *g);
void sqseen_group_free(struct sqgroup *g);

/* The last SQRING_N ids read with their rows' fingerprints (and how many
 * columns those covered). Zero-initialised it is empty. */
#define SQRING_N 32
struct sqring {
	int64_t id[SQRING_N];
	struct sqprint p[SQRING_N];
	size_t ncols[SQRING_N];
	size_t n, head;
};

void sqseen_ring_push(struct sqring *r, int64_t id, const struct sqprint *p, size_t ncols);
size_t sqseen_ring_len(const struct sqring *r);
/* The k-th newest entry (0: the last id read). */
void sqseen_ring_get(const struct sqring *r, size_t k, int64_t *id, const struct sqprint **p,
                     size_t *ncols);
void sqseen_ring_drop_newest(struct sqring *r);
void sqseen_ring_clear(struct sqring *r);

/* ---- the connector (source_sqlite.c) ------------------------------------- */

enum sqmode { SQ_BULK, SQ_INCREMENTING, SQ_TIMESTAMP, SQ_TS_INC };

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

/* ---- the connection (sqdb.c) --------------------------------------------- */

/* Opens the database when needed and notices when the file was replaced or
 * deleted (a replaced one is re-opened only when may_close: no buffered row
 * points into the old layouts). Returns 0 when open, 1 when waiting for it,
 * -1 with errbuf on error. */
int sqdb_ensure(struct sqsrc *s, int64_t now, bool may_close, char *errbuf, size_t errlen);

/* Closes the database and every table's layout. Accepts a closed one. */
void sqdb_close(struct sqsrc *s);

/* A query found the database locked (schedules the retry, counts it, warns
 * once it lasts), or it answered again (says so after a warning). */
void sqdb_busy(struct sqsrc *s, int64_t now);
void sqdb_answer(struct sqsrc *s, int64_t now);

/* ---- layout (sqlayout.c) ------------------------------------------------- */

/* Reads t's columns, checks the mode's columns and prepares its batch
 * statement. Runs inside a read transaction.
 * Returns 0, SQ_MISSING, SQ_BUSY, SQ_NOMEM, or SQ_ERR or SQ_CONFIG (the
 * mode's columns or the query are wrong) with errbuf. */
int sqlayout_build(struct sqsrc *s, struct sqtable *t, int version, char *errbuf, size_t errlen);

/* Forgets t's layout and statement (schema change, reconnect, close). */
void sqlayout_drop(struct sqtable *t);

/* Where rows without a position can be (validate.non.null=false, a view, a
 * query), counts them in the open read transaction: in a table, the new rows
 * by rowid at every query (an index range); without a rowid, all of them at
 * a new layout and then at most once a minute. Rows found since the last
 * count are counted (rows_without_position) and said in a warning. */
void sqlayout_nulls(struct sqsrc *s, struct sqtable *t);

/* Appends "name" with embedded quotes doubled to a malloc'd buffer. */
char *sqlayout_quote(const char *name);

/* ---- queries (sqquery.c) ------------------------------------------------- */

/* Runs t's query in one short read transaction and buffers its rows (at most
 * batch.max.rows, and a few MB), with their offsets; t's buffer must be
 * empty. Now is the wall clock once the read's snapshot is taken. Returns the number of rows,
 * SQ_BUSY (nothing read: retry later), SQ_MISSING (no such table: warned, retry later), SQ_STALE
 * with errbuf (the application changed the files under the read: nothing kept, t's position as
 * before; reopen, retry) or SQ_ERR, SQ_CONFIG or SQ_NOMEM with errbuf. The read transaction is over
 * when this returns. */
int sqquery_fill(struct sqsrc *s, struct sqtable *t, char *errbuf, size_t errlen);

/* ---- the rows read (sqrows.c) ---------------------------------------------- */

/* Appends the current row of st (t's columns first, as t->stmt has them) to
 * t's buffer, its offset zeroed. NULL when memory is short. */
struct sqrow *sqrows_add(struct sqsrc *s, struct sqtable *t, sqlite3_stmt *st);

/* Hands up to room buffered rows of t to b as records (their payloads are
 * then s's until the next poll). Returns how many. */
size_t sqrows_emit(struct sqsrc *s, struct sqtable *t, struct source_batch *b, size_t room);

/* True while t has buffered rows not yet handed out. */
bool sqrows_buffered(const struct sqtable *t);

/* Frees t's buffered rows (close, and before each query). */
void sqrows_drop(struct sqtable *t);

/* ---- reused ids (sqreuse.c) ---------------------------------------------- */

/* Incrementing mode, inside the read transaction before t's query: when ids
 * t read were reused (a row read changed or vanished, the largest id fell
 * below the position), says so, counts it and moves t's position back to the
 * newest id whose row is unchanged, or to the start of the new sequence.
 * Returns 0 or SQ_BUSY. */
int sqreuse_check(struct sqsrc *s, struct sqtable *t);

/* The fingerprint of t's row at id (sqseen_print over t's columns), read
 * in the open read transaction: for the last ids of a query, whose rows
 * were not fingerprinted as they were read. Returns 0, or -1 when it cannot
 * be read. */
int sqreuse_print(struct sqsrc *s, struct sqtable *t, int64_t id, struct sqprint *p);

/* ---- the clock (sqclock.c) ---------------------------------------------- */

/* Timestamp modes, in the batch's read transaction before its query: adds
 * to t's buffer (at most room) the new rows whose timestamp is behind t's
 * position, which the query will never return, with the position as their
 * offset (in timestamp+incrementing the position's id moves up to the row's
 * when no unread row lies between them); counts and warns. Returns how many, or SQ_BUSY, SQ_ERR,
 * SQ_NOMEM. */
int sqclock_behind(struct sqsrc *s, struct sqtable *t, size_t room);

/* After the batch's query: n rows of t have a timestamp after now (counted
 * by skiff_ts() into s->clock). Sets the gauge and warns, at most once a
 * minute, naming one. */
void sqclock_future(struct sqsrc *s, struct sqtable *t, uint64_t n);

/* ---- guards (sqguard.c) -------------------------------------------------- */

/* Makes SQLite's open(2) of any file never block (a FIFO is refused), and
 * its open for writing, fchmod and unlink fail inside sqguard_enter()'s
 * scope. Once per process, before the first sqlite3_open. */
void sqguard_install(void);

/* The scope of the read-only VFS (sqvfs.c): while entered, the unix VFS
 * cannot open a file for writing or creating, change a file's mode or
 * delete a file. Calls nest. */
void sqguard_enter(void);
void sqguard_leave(void);

/* Remembers the descriptor of the next open of path (compared as a string)
 * inside the scope; sqguard_captured() returns it (-1: none) and forgets
 * path. path must live until then. */
void sqguard_capture(const char *path);
int sqguard_captured(void);

/* Opens path read-only without blocking: a descriptor, or -1 with errno
 * (ENXIO for a FIFO). The caller closes it. */
int sqguard_open_ro(const char *path);

/* The database path names a FIFO, directory or device: says so once while it
 * lasts, counts it, and schedules the next look. */
void sqguard_irregular(struct sqsrc *s, int64_t now);

/* Timestamp modes on a database in rollback-journal mode: warns that each
 * query holds the writers off while it reads the whole table (WAL does not). */
void sqguard_journal(struct sqsrc *s);

/* Fills env for --check: logs go to the log (quiet: nowhere), nothing is
 * stored. */
void sqguard_check_env(struct source_env *env, const char *connector, bool quiet);

/* ---- the read-only VFS (sqvfs.c) ---------------------------------------- */

#define SQVFS_NAME "skiff-ro"

/* Registers the VFS SQVFS_NAME over the unix VFS (not as the default).
 * Once per process; later calls do nothing. Returns an SQLite result code. */
int sqvfs_register(void);

/* The database file as a read began, for sqvfs_check(). */
struct sqvfs_mark {
	bool known;
	int64_t size, mtime_ns, ctime_ns;
};

/* Records db's file (a connection opened through SQVFS_NAME) before a read
 * transaction. */
void sqvfs_mark(sqlite3 *db, struct sqvfs_mark *m);

/* Whether what db read since m (NULL: before a read, whether db may read at
 * all) can be trusted. In a WAL database skiff holds no lock an application
 * sees (sqvfs.c), so an application that believed itself alone (it closed
 * its last connection, switched the journal mode, took an exclusive lock)
 * may have checkpointed pages under the read. Returns SQVFS_SOUND, or with
 * why: SQVFS_STALE (the application deleted or replaced the -wal, or opened
 * a database that had none, or the file changed under a read without one:
 * drop what was read and open the database again), SQVFS_HELD (another
 * connection holds the file with a write lock: drop what was read and wait).
 * Main loop only. */
enum { SQVFS_SOUND, SQVFS_STALE, SQVFS_HELD };
int sqvfs_check(sqlite3 *db, const struct sqvfs_mark *m, char *why, size_t len);

/* ---- URIs (squri.c) ------------------------------------------------------ */

/* The file an SQLite URI ("file:...") names, malloc'd (caller frees); NULL
 * with errbuf when it names none (in-memory) or is malformed. */
char *squri_file(const char *uri, char *errbuf, size_t errlen);

/* ---- backlog (sqbacklog.c) ----------------------------------------------- */

/* source_ops.backlog: in incrementing mode, the
 * rows of each table above the last id read, counted within a budget. */
void sqbacklog_count(void *ctx,
                     void (*put)(void *arg, struct partition *p, enum source_unit u, uint64_t n),
                     void *arg);

/* ---- sqcheck.c --------------------------------------------------------------
 * KIP-875: 0 when offset (text as sent) for partition (cJSON's compact text) is
 * one this connector would use — its partition shape and table or query, the
 * mode's members as non-negative exact integers and nothing else — else
 * SOURCE_ERR_CONFIG with errbuf in Connect's manner. No ctx: the connector is
 * stopped. */
int sqcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                   char *errbuf, size_t errlen);

/* The position in an offset of the JDBC connector's shape: "incrementing"
 * into *inc, "timestamp" (ms) and "timestamp_nanos" into *ns; has_* say
 * which were there. Returns 0, or -1 when the timestamp is out of range. */
int sqcheck_position(const char *offset, bool *has_inc, int64_t *inc, bool *has_ts, int64_t *ns);

/* Whether offset lies within t's rows: compares it with t's newest row
 * (t->newest_sql, in the open read transaction of s). Returns 0, SQ_BUSY,
 * or SQ_CONFIG with errbuf naming the newest value ("table t: its newest id
 * is 100, below ..."), SQ_ERR with errbuf when it cannot tell. */
int sqcheck_newest(struct sqsrc *s, struct sqtable *t, const char *offset, char *errbuf,
                   size_t errlen);

#endif
