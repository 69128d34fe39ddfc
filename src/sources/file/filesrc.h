/* filesrc: the state of one file source connector, private to the file
 * source: shared by source_file.c (configuration, polls, records) and
 * tailwatch.c (watches, events, rescans, which streams a poll looks at).
 * Include only from those two files. Main loop only. */
#ifndef SKIFF_FILESRC_H
#define SKIFF_FILESRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"
#include "core/source.h"
#include "sources/file/source_file.h"
#include "sources/file/tailstream.h"

struct taildup;
struct tailindex;
struct tailmulti;
struct tailmulti_rules;

/* A stream's place in the list of streams holding files open, least
 * recently acted on first (tailwatch_make_room), and in the queue of those
 * waiting for a descriptor, first come first served. */
struct openlink {
	uint32_t prev, next; /* FILESRC_NONE: the end */
	uint32_t wnext;      /* the next one waiting; FILESRC_NONE: the last */
	bool in;             /* in the open list */
	bool queued;         /* in the waiting queue */
};

#define FILESRC_NONE UINT32_MAX

struct dirwatch {
	int wd;      /* -1: gone (deleted, moved): watched again at a rescan */
	bool direct; /* tailscan_dir_watchable when watched */
	bool writes; /* it hears writes to its files too (a stream in it was
	              * closed while idle: tailwatch_make_room) */
	char *dir;
};

/* The offset a stop stores for a path found gone at the start and let go
 * then (tailwatch.c): its committed offset then (was) with "finished"
 * (json), stored only if was is still the committed offset (a file that
 * came to the path since has a stream of its own, which moves it). */
struct settled {
	struct partition *part;
	char *was, *json;
};

struct filesrc {
	struct source_env *env;
	struct tailctx ctx;
	char *topic;
	size_t batch_max;
	bool started, globbing;
	int64_t rescan_ms, poll_ms, next_rescan;
	char **patterns, **excludes;
	size_t npat, nex;
	char **rotated_dirs; /* rotated.dirs: f->ctx points at them */
	struct tailstream **streams;
	/* streams[i]'s grouper, NULL: one line a record; the array itself NULL
	 * without multiline.pattern (8 bytes a file: 20,000 NULLs). */
	struct tailmulti **groups;
	size_t nstreams, cap, rr;
	struct openlink *open; /* [i]: streams[i]'s place in the open list */
	uint32_t open_head, open_tail;
	uint32_t wait_head, wait_tail; /* the waiting queue (tailwatch.c) */
	/* An open stream was acted on since a walk of the open list found none
	 * idle: make_room and the waiting queue walk it again only then. */
	bool room_maybe;
	struct tailindex *idx; /* events -> streams; the streams a poll looks at */
	struct taildup *dup;   /* paths naming a file already tailed */
	struct dirwatch *dirs;
	size_t ndirs;
	struct hash dirnames; /* dir -> index in dirs */
	unsigned rescans;
	bool check_all, glob_due;
	bool check_unquiet; /* a rescan: look at the streams not quiet */
	struct tailbuf buf;
	struct tailline *lines;
	char *offtext;
	enum key_mode key;
	char *hdr_path, *hdr_offset;
	bool partitions_full_logged;
	bool held_warned;              /* the held set could not be written (said once) */
	struct tailmulti_rules *multi; /* NULL: no multiline.pattern */
	size_t multi_max_bytes;
	struct tailbuf recbuf; /* the poll's multi-line records */
	struct tailline *recs;
	int64_t read_ms; /* wall clock at this poll: its records' timestamp */
	/* The stored offsets of paths the patterns match that were gone at
	 * the start with nothing left to read: no stream, only what the stop
	 * stores so that the next start costs nothing (one per file counted
	 * gone now; none for an offset let go at its end). */
	struct settled *settled;
	size_t nsettled, capsettled;
};

#endif
