/* sqclock: the rows a wrong clock hides from the timestamp modes (sqclock.c). Main loop only. */
#ifndef SKIFF_SQCLOCK_H
#define SKIFF_SQCLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "sources/sqlite/sqlitelib.h"

struct sqsrc;

/* A table's state of the clock's check; part of struct sqtable (clock). Its
 * SQL is the layout's (sqtable.h); its statements are prepared at first use
 * in a layout and finalized with it (sqclock_drop). */
struct sqclock {
	sqlite3_stmt *stmt, *gap_stmt;
	int64_t key;  /* the largest key looked at */
	bool ready;   /* key is set (from the offset, or the table) */
	bool checked; /* ... and checked against this layout's table */
	bool unknown; /* timestamp: the stored offset held no rowid_seen */
	int64_t behind_warned_ms, future_warned_ms; /* monotonic ms of the last warnings */
	uint64_t behind_unwarned;                   /* rows behind since the last warning */
};
struct sqtable;

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

/* Finalizes c's statements and forgets that its key was checked against the
 * layout (the layout is dropped). */
void sqclock_drop(struct sqclock *c);

#endif
