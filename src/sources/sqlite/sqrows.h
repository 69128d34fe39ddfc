/* sqrows: a table's rows read and not yet handed out as records (sqrows.c). Main loop only. */
#ifndef SKIFF_SQROWS_H
#define SKIFF_SQROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/sqlite/sqlitelib.h"

struct source_batch;
struct sqrow;
struct sqsrc;
struct sqtable;

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

#endif
