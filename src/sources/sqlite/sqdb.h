/* sqdb: the connection to the database file: open, replaced, busy back-off (sqdb.c). Main loop
 * only. */
#ifndef SKIFF_SQDB_H
#define SKIFF_SQDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/sqlite/sqlitelib.h"

struct sqsrc;

/* The connection and what this module keeps about the file behind it; part
 * of struct sqsrc (conn). Zero-initialised it is closed. */
struct sqdb {
	sqlite3 *db;
	sqlite3_stmt *begin, *commit, *rollback, *schema_version;
	uint64_t dev, ino; /* the file the connection has open */
	bool missing_warned;
	bool empty_warned;     /* the path is an empty file */
	bool irregular_warned; /* the path is a FIFO, directory or device */
	int64_t retry_at;      /* monotonic ms of the next attempt; 0 none */
	int64_t backoff_ms;    /* while the database is busy */
	int64_t busy_since;    /* monotonic ms of the first busy answer; 0 none */
	bool busy_warned;
};

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

#endif
