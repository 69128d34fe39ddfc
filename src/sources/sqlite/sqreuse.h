/* sqreuse: incrementing ids reused under skiff (checked at each query) (sqreuse.c). Main loop
 * only. */
#ifndef SKIFF_SQREUSE_H
#define SKIFF_SQREUSE_H

#include <stdint.h>

#include <stdbool.h>

#include "sources/sqlite/sqlitelib.h"

struct sqprint;
struct sqsrc;
struct sqtable;

/* A table's state of the check; part of struct sqtable (reuse). Its SQL is
 * the layout's; its statements are prepared at first use in a layout and
 * finalized with it (sqreuse_drop). */
struct sqreuse {
	sqlite3_stmt *max_stmt, *at_stmt, *seq_stmt;
	bool autoinc;      /* an INTEGER PRIMARY KEY AUTOINCREMENT */
	int64_t warned_ms; /* monotonic ms of the last warning of reused ids */
};

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

/* Finalizes r's statements (the layout is dropped). */
void sqreuse_drop(struct sqreuse *r);

#endif
