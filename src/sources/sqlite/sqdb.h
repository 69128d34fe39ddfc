/* sqdb: the connection to the database file: open, replaced, busy back-off (sqdb.c). Main loop
 * only. */
#ifndef SKIFF_SQDB_H
#define SKIFF_SQDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqsrc;

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
