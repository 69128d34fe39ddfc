/* sqlayout: a table's columns and the SQL that reads it (sqlayout.c). Main loop only. */
#ifndef SKIFF_SQLAYOUT_H
#define SKIFF_SQLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqsrc;
struct sqtable;

/* Rows without a position (validate.non.null=false, a view, a query), as
 * sqlayout_nulls counts them; part of struct sqtable (nulls). */
struct sqnulls {
	/* count(*) of NULL ids, of NULL timestamps, between the rowids ?1 and ?2
	 * where there is a rowid (max_sql its largest); built with the layout */
	char *sql[2], *max_sql;
	int64_t n[2];       /* counted so far */
	int64_t counted_ms; /* no rowid: monotonic ms of the last count; 0: at the next query */
	int64_t rowid;      /* rowid: the largest counted ... */
	bool ranged;        /* ... once there is one */
};

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

#endif
