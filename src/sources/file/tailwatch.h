/* tailwatch: the file source's streams and what looks at them - inotify
 * watches and events, rescans and globs, and the index (tailindex) of the
 * streams a poll looks at. Private to the file source: include only from
 * source_file.c and tailwatch.c. Main loop only. */
#ifndef SKIFF_TAILWATCH_H
#define SKIFF_TAILWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "sources/file/filesrc.h"

/* Creates the streams named literally (file, or patterns without
 * wildcards), watches the directories of the globs and expands them.
 * file: the file key (when not globbing); from_end: read.from=end. Returns 0, or -1 when a stream
 * could not be added (out of memory, or no source partition: logged). */
int tailwatch_initial_streams(struct filesrc *f, const char *file, bool from_end);

/* Reads the inotify events queued (none in poll mode) and marks the
 * streams they concern. */
void tailwatch_drain(struct filesrc *f, int64_t now);

/* What is due at now: the rescan, the poll-mode stat poll, a glob, and a
 * look (tailstream_check) at the marked streams that need one. */
void tailwatch_housekeeping(struct filesrc *f, int64_t now);

/* Stream i was acted on: polls look at it until it is settled, and its
 * events find it under the file watch it has now. */
void tailwatch_touch(struct filesrc *f, size_t i);

/* Unmarks the settled streams (nothing but an event or a full look can give
 * them work). Returns true when a marked one is ready. */
bool tailwatch_unmark_settled(struct filesrc *f);

/* Keeps the held-file budget (tailctx.held_*, max.held.files and
 * max.held.bytes): while past it, lets go of the oldest deleted file a
 * stream holds, unread and counted (tailstream_drop_first); then sets the
 * held_files and held_bytes gauges. At the end of a poll or a watch. */
void tailwatch_budget(struct filesrc *f);

/* For tests: how many streams the looks of tailwatch_housekeeping and the
 * walks of the open list (make_room, the room for waiting streams) went
 * through since the start. It must not grow with the streams that only
 * wait for a descriptor. */
extern size_t tailwatch_visits;

/* tailctx.make_room (opaque: the filesrc): suspends the idle stream other
 * than except least recently active. Returns 0, or -1 when none could be. */
int tailwatch_make_room(void *opaque, const struct tailstream *except);

/* The stream of path (tailstream_path), or NULL: an index look-up. */
struct tailstream *tailwatch_stream(const struct filesrc *f, const char *path);

/* tailctx.wd_shared (opaque: the filesrc): true when a stream other than
 * except watches wd. */
bool tailwatch_wd_shared(void *opaque, int wd, const struct tailstream *except);

#endif
