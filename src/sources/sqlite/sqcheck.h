/* sqcheck: whether an offset a person sends (KIP-875) is one the SQLite source would use
 * (sqcheck.c). Main loop only. */
#ifndef SKIFF_SQCHECK_H
#define SKIFF_SQCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config_section;
struct sqsrc;
struct sqtable;

/* KIP-875: 0 when offset (text as sent) for partition (cJSON's compact text) is
 * one this connector would use — its partition shape and table or query, the
 * mode's members as non-negative exact integers and nothing else — else
 * SOURCE_ERR_CONFIG with errbuf in Connect's manner. No ctx: the connector is
 * stopped. */
int sqcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                   char *errbuf, size_t errlen);

/* The position in an offset of the JDBC connector's shape: "incrementing"
 * into *inc, "timestamp" (ms) and "timestamp_nanos" into *ns; has_* say
 * which were there. Returns 0, or -1 when the timestamp is out of range. */
int sqcheck_position(const char *offset, bool *has_inc, int64_t *inc, bool *has_ts, int64_t *ns);

/* Whether offset lies within t's rows: compares it with t's newest row
 * (t->newest_sql, in the open read transaction of s). Returns 0, SQ_BUSY,
 * or SQ_CONFIG with errbuf naming the newest value ("table t: its newest id
 * is 100, below ..."), SQ_ERR with errbuf when it cannot tell. */
int sqcheck_newest(struct sqsrc *s, struct sqtable *t, const char *offset, char *errbuf,
                   size_t errlen);

#endif
