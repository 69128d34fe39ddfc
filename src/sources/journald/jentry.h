/* jentry: a journal entry as a record: its value built per journal.value,
 * cut to journal.max.entry.bytes or skipped (jentry.c). Main loop only. */
#ifndef SKIFF_JENTRY_H
#define SKIFF_JENTRY_H

#include "util/err.h"

struct jsrc;
struct record;
struct src_ref;

/* Results of jentry_record (util/err.h). */
enum jentry_err {
	JENTRY_OK = 0,
	JENTRY_SKIPPED = 1,    /* not a failure: the size policy skipped the entry */
	JENTRY_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a jentry_err code; never NULL. */
const char *jentry_strerror(int err);

/* The entry the journal is at as rec, its offset referring to pos: its value
 * built per journal.value, cut to journal.max.entry.bytes (or skipped, by
 * the policy). The value's memory is s's until the next poll. Returns
 * JENTRY_OK, JENTRY_SKIPPED, or JENTRY_ERR_NOMEM. Main loop. */
int jentry_record(struct jsrc *s, struct record *rec, struct src_ref *pos);

#endif
