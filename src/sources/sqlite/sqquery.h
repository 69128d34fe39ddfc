/* sqquery: one bounded batch of a table, in one short read transaction (sqquery.c). Main loop
 * only. */
#ifndef SKIFF_SQQUERY_H
#define SKIFF_SQQUERY_H

#include <stddef.h>

struct sqsrc;
struct sqtable;

/* Runs t's query in one short read transaction and buffers its rows (at most
 * batch.max.rows, and a few MB), with their offsets; t's buffer must be
 * empty. Now is the wall clock once the read's snapshot is taken. Returns the number of rows,
 * SQ_BUSY (nothing read: retry later), SQ_MISSING (no such table: warned, retry later), SQ_STALE
 * with errbuf (the application changed the files under the read: nothing kept, t's position as
 * before; reopen, retry) or SQ_ERR, SQ_CONFIG or SQ_NOMEM with errbuf. The read transaction is over
 * when this returns. */
int sqquery_fill(struct sqsrc *s, struct sqtable *t, char *errbuf, size_t errlen);

#endif
