/* offsets_log: the journal of the file backend (offsets_file.c), "NAME.log":
 * the offsets that changed since the base file NAME was written, so that a
 * flush writes bytes in proportion to what changed rather than the whole
 * store (issue 10: one busy file among 10,000 idle ones).
 *
 * On disk, one line per flush, appended and fsynced:
 *   {"log":1,"base":41,"generation":42,"offsets":[{"key":K,"value":V},...]}\tCRC\n
 * K and V are the store's compact JSON (V is null for a removed key), CRC is
 * the CRC-32C of every byte before the tab as 8 lowercase hex digits.
 * Compact JSON never holds a raw tab or newline, so the framing is
 * unambiguous. "base" is the generation of the base file the record applies
 * to: a record of another base (a log left from before a compaction, a
 * fallback to NAME.prev) is skipped. A record is applied whole or not at all;
 * replay stops at the first record that is torn (no newline: the tail of a
 * write a power cut interrupted), fails its CRC or does not follow the one
 * before (generations strictly increase): what follows it is ignored, never
 * half applied.
 *
 * The log also remembers what it last made durable (a copy of every key and
 * value: the "shadow"), to find what changed. Main loop only; never logs;
 * errors as "what: why" (util/err.h). */
#ifndef SKIFF_OFFSETS_LOG_H
#define SKIFF_OFFSETS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct offsets;
struct offsets_log;

/* The log of the store at path ("path.log"); opens nothing yet. Returns 0 or
 * OFFSETS_ERR_NOMEM. */
int offsets_log_new(const char *path, struct offsets_log **out);

/* Closes the log's descriptor and frees it. Accepts NULL. */
void offsets_log_free(struct offsets_log *lg);

/* Applies, over o (loaded from the base file of generation base), the
 * log's records of that base, in order. *generation: the last applied
 * (unchanged when none). *ignored: bytes after the last applied record that
 * were not applied (a torn tail, damage, records of another base); *why says
 * what stopped the replay when that was not just a torn last line (a
 * complete line that is damaged: what followed it, if anything, is lost).
 * A missing log is an empty one. Returns 0; OFFSETS_ERR_IO when the log
 * cannot be read; OFFSETS_ERR_CORRUPT when a record's "log" version is
 * newer than this skiff's (errbuf says so); OFFSETS_ERR_NOMEM. */
int offsets_log_replay(struct offsets_log *lg, struct offsets *o, uint64_t base,
                       uint64_t *generation, size_t *ignored, char *why, size_t whylen);

/* Makes the shadow what o holds now: after a load, or after o was written
 * whole (a compaction). Returns 0 or OFFSETS_ERR_NOMEM (the shadow is then
 * empty and the caller must compact again). */
int offsets_log_reset(struct offsets_log *lg, const struct offsets *o);

/* Appends one record of generation gen over base holding every entry of o
 * that differs from the shadow, and a null value for each key o no longer
 * holds; fsyncs it (and the directory when this created the file). Returns 0
 * once it is durable, with the shadow updated; or OFFSETS_ERR_IO /
 * OFFSETS_ERR_NOMEM with errbuf ("offset store NAME.log: write: why"): the log's
 * tail is then unknown, so the caller must compact before appending again. */
int offsets_log_append(struct offsets_log *lg, const struct offsets *o, uint64_t base, uint64_t gen,
                       char *errbuf, size_t errlen);

/* Bytes in the log file as this process knows it (read at replay, grown by
 * appends). */
uint64_t offsets_log_size(const struct offsets_log *lg);

/* The shadow (what is durable), as entries 0..count-1: for a compaction
 * that writes what is durable rather than what is in memory. Valid until the
 * next call that changes the log. */
size_t offsets_log_shadow_count(const struct offsets_log *lg);
const char *offsets_log_shadow_key(const void *lg, size_t i);
const char *offsets_log_shadow_value(const void *lg, size_t i);

/* True when the log is no longer where this process knows it: the file it
 * appends to was unlinked or replaced, or the one it read at replay is gone
 * (a state directory deleted under skiff). Its records are then in no file a
 * restart would read: the caller must compact. A few stat(2) calls. */
bool offsets_log_moved(const struct offsets_log *lg);

/* Removes the log file once a compaction made its records part of the base
 * (the directory is not fsynced: a log that comes back holds records of an
 * older base, which replay skips). Returns 0 or OFFSETS_ERR_IO. */
int offsets_log_drop(struct offsets_log *lg, char *errbuf, size_t errlen);

#endif
