/* sqlayout: a table's columns and the SQL that reads it (sqlayout.c). Main loop only. */
#ifndef SKIFF_SQLAYOUT_H
#define SKIFF_SQLAYOUT_H

#include <stddef.h>

struct sqsrc;
struct sqtable;

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
