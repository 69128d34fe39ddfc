/* sqclock: the rows a wrong clock hides from the timestamp modes (sqclock.c). Main loop only. */
#ifndef SKIFF_SQCLOCK_H
#define SKIFF_SQCLOCK_H

#include <stddef.h>
#include <stdint.h>

struct sqsrc;
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

#endif
