/* jsrc: the journald connector's state, shared by its two files that need
 * libsystemd (source_journald.c: positions and polling; jentry.c: an entry
 * as a record). Include only from them. */
#ifndef SKIFF_JSRC_H
#define SKIFF_JSRC_H

#include "core/source.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include "sources/journald/journallib.h"

/* sd-journal.h brings <syslog.h>, whose LOG_INFO (6), LOG_NOTICE and
 * LOG_DEBUG macros hid log.h's levels of the same names: the source's info
 * lines were asked for at a level never printed. */
#undef LOG_INFO
#undef LOG_NOTICE
#undef LOG_DEBUG

#define BATCH_MAX 1024 /* entries per poll at most (the worker asks for as many) */
#define TRUNC_FIELD "_SKIFF_TRUNCATED=1" /* marks an entry cut to journal.max.entry.bytes */

struct jsrc {
	struct source_env *env;
	sd_journal *j;
	int fd;
	struct partition *part;
	char *topic;
	bool message_only;
	struct jpos_texts *held; /* the account of the offset texts (jpos.h) */
	struct src_ref *pos;     /* the offset text after the last batch (jpos_text): ours */
	struct src_ref *prev;    /* the one before, which that batch's other records name:
	                          * held until the next poll, as records are */
	struct jpos *sent;       /* per id, the last entry made a record (or passed) */
	bool settling;           /* the first pass after a start: find each stored id */
	bool rechecking;         /* a pass from the head after the set of files changed:
	                          * find each id's position again (note_gap) */
	char main_id[33];        /* the id of the committed cursor ("" when none) */
	uint64_t main_seq;       /* and its sequence number */
	uint64_t shipped;        /* records made in the first pass */
	uint64_t passed_over;    /* entries passed over in it (read before) */
	int64_t opened_ms;       /* when it began (clock_mono_ms) */
	char *legacy_stop;       /* an old {"cursor"} offset: entries before this pass */
	bool legacy_incl;        /* and this one too */
	bool full;               /* the last poll found JPOS_TEXTS_BYTES held */
	bool anchor_due;         /* read.from=end on a first start: store where it begins */
	size_t max_entry;        /* journal.max.entry.bytes */
	bool skip_big;           /* journal.max.entry.policy=skip */
	cJSON **built;           /* this batch's payloads and schemas, freed next poll */
	size_t nbuilt;
	char **texts; /* this batch's MESSAGE copies (journal.value=message) */
	size_t ntexts;
};

#endif
