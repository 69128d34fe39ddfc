/* tailmulti: the lines of one file stream grouped into multi-line records (a
 * Java stack trace, a JSON document wrapped over several lines), by
 * Filebeat's rules:
 *
 *   a line "matches" when multiline.pattern (a POSIX extended regex) finds a
 *   match in it, or, with negate, when it finds none.
 *   match=after:  a matching line continues the record before it; any other
 *                 line starts a record. (negate=false, ^[[:space:]]: indented
 *                 lines belong to the line above; negate=true, ^[0-9]{4}-: a
 *                 timestamp starts a record, everything else belongs to it.)
 *   match=before: a matching line is continued by the line after it; any
 *                 other line ends the record.
 *
 * The lines of a record are joined with "\n" (their terminators dropped, as
 * for single lines). A record is handed out only once complete, with the
 * offset after its last line, so a committed offset always falls between
 * two records: a restart reads the next record from its first line, never
 * a part of one twice and never a fragment. A record is complete when a line
 * says so (the next record's first line with match=after, its last line with
 * match=before), when the next line is not the bytes right after it in the
 * same file (a rotation, a truncation: a record never spans two files), when
 * max_lines or max_bytes would be exceeded (it ships as it stands, the rest
 * goes on as the next record: nothing is dropped, the cut is counted), or
 * when no line was added for timeout_ms (the last record of a quiet file).
 * Every boundary but the timeout depends on the file's bytes alone, so a
 * restart finds the same records. A timeout depends on when lines came: a
 * restart keeps a timeout cut once the record before it is committed (the
 * next record then starts at its continuation line, as it did), but one
 * still in flight at a crash is read again with its late continuation
 * lines, as one larger record.
 *
 * Memory: a stream's record being assembled is copied out of the poll arena
 * (it outlives the poll) into a buffer that grows up to max_bytes and is
 * freed again after a large record. Leaf module: no logging, events come back
 * in struct tailmulti_stats. Main loop only. */
#ifndef SKIFF_TAILMULTI_H
#define SKIFF_TAILMULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/file/tailfile.h"

struct tailmulti_opts {
	const char *pattern; /* POSIX extended regex */
	bool negate;
	bool before;        /* match=before (else after) */
	size_t max_lines;   /* >= 1 */
	size_t max_bytes;   /* >= the longest line the reader hands out */
	int64_t timeout_ms; /* > 0 */
};

/* Events of one tailmulti_feed, for the connector to count. */
struct tailmulti_stats {
	uint64_t max_lines, max_bytes; /* records cut at a cap */
	uint64_t timeouts;             /* records completed by timeout_ms */
};

enum {
	TAILMULTI_ERR = -1,       /* the pattern does not compile */
	TAILMULTI_ERR_NOMEM = -2, /* out of memory */
};

/* A connector's rules: the compiled pattern and the limits. */
struct tailmulti_rules;
/* One stream's record being assembled. */
struct tailmulti;

/* Compiles o->pattern (copied). Returns 0 and *out (tailmulti_rules_free), or
 * TAILMULTI_ERR with errbuf "multiline.pattern: <regerror's reason>", or
 * TAILMULTI_ERR_NOMEM. */
int tailmulti_rules_new(const struct tailmulti_opts *o, struct tailmulti_rules **out, char *errbuf,
                        size_t errlen);
/* Accepts NULL. Every tailmulti made with r must be freed first. */
void tailmulti_rules_free(struct tailmulti_rules *r);

/* A stream's grouper following r (borrowed: outlives it). Returns 0 and
 * *out (tailmulti_free), or TAILMULTI_ERR_NOMEM. */
int tailmulti_new(struct tailmulti_rules *r, struct tailmulti **out);

/* Groups the lines in[0..n) (read in this order from one stream at now,
 * monotonic ms) into the records they complete: out[0..*nout), at most n+1
 * of them (n when n > 0), their bytes copied into buf (it needs room for
 * max_bytes plus the bytes of in and one separator per line; the caller
 * checks). With n == 0, completes the record waiting since timeout_ms.
 * out's offsets hold references that m keeps until its next feed or free
 * (like the poll's lines, they outlive the poll that made them until the
 * next one). Returns 0, or TAILMULTI_ERR_NOMEM (the connector stops;
 * out[0..*nout) are complete records all the same). */
int tailmulti_feed(struct tailmulti *m, const struct tailline *in, size_t n, int64_t now,
                   struct tailbuf *buf, struct tailline *out, size_t *nout,
                   struct tailmulti_stats *st);

/* Monotonic ms at which the record waiting in m times out, or -1 when none
 * waits. */
int64_t tailmulti_deadline(const struct tailmulti *m);

/* Drops the waiting record (it was not shipped: its offset was never handed
 * out, so a restart reads it again) and every reference held. Accepts NULL. */
void tailmulti_free(struct tailmulti *m);

#endif
