/* sqerr: the results the SQLite source's modules share besides a count or 0: a query's outcome
 * travels from whichever module met it (sqdb, sqlayout, sqreuse, sqclock, sqcheck) up through
 * sqquery_fill to the source. */
#ifndef SKIFF_SQERR_H
#define SKIFF_SQERR_H

#include "util/err.h"

/* Results of sqquery_fill besides a count >= 0. */
enum {
	SQ_ERR = -1,
	SQ_BUSY = -2,
	SQ_MISSING = -3,
	SQ_CONFIG = -4, /* a person must act */
	SQ_NOMEM = -5,  /* out of memory: a restart may pass */
	SQ_STALE = -6,  /* the files changed under the read (sqvfs_check): dropped */
};

#endif
