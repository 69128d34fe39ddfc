/* tailstream: one source partition of the file source, i.e. one path and the
 * succession of files that path names over time.
 *
 * A stream reads a chain of open files in order: the file it is reading
 * (chain[0]), then files waiting behind it (rotated files found in between,
 * then the file now at the path). Only chain[0] is read; the others are held
 * open so that a rotation followed by a deletion loses nothing. chain[0] is
 * let go only when it no longer is the file at the path, was read to its
 * end, and either its successor has bytes (the writer moved on) or it has
 * been quiet for rotate.wait.ms; then its partial last line, if any, ships.
 * Let go because its successor has bytes, it stays open ("lingers") until
 * quiet for rotate.wait.ms, and late writes to it still ship.
 *
 * Where a stream resumes (at start, after an idle close, after its last
 * file was let go) is decided from a struct tailpos - the committed offset,
 * or the place kept in memory - and what tailprobe observes, by tailplan
 * (pure; its top has the offset-safety argument), and applied here. Main
 * loop only. */
#ifndef SKIFF_TAILSTREAM_H
#define SKIFF_TAILSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hash.h"
#include "core/source.h"
#include "sources/file/tailfile.h"
#include "sources/file/tailpos.h"

struct tailstream;
struct tailnotice;
struct tailnotice_ops;
struct tailheld;

/* What the streams of one connector share. Filled by the connector. */
struct tailctx {
	struct source_env *env;
	/* The connector's path guard: every file its streams open passes it
	 * (guard.env: env, set at open). */
	struct tailguard guard;
	size_t max_line;
	enum tailfile_policy policy;
	int64_t rotate_wait_ms;
	/* rotated.dirs: where else rotated files are (logrotate's olddir),
	 * owned by the connector. */
	const char *const *rotated_dirs;
	size_t nrotated_dirs;
	/* How changes are heard (watch.mode), chosen at open; nstate is the
	 * backend's, owned by the connector. */
	const struct tailnotice_ops *notice;
	struct tailnotice *nstate;
	size_t nopen, max_open;
	/* The held-file budget (max.held.files, max.held.bytes): the files of
	 * the chains no longer at their path, held open until read, and the
	 * bytes of those deleted since, which only skiff's descriptors keep on
	 * disk. Kept by tailchain; a look opens at most HELD_SLACK files past
	 * max_held_files, and the connector then lets go of the oldest
	 * deleted ones while past either (tailstream_drop_first). */
	size_t held_files, max_held_files;
	int64_t held_bytes, max_held_bytes;
	/* The held files as a kill -9 would leave them (tailheld.h), owned by
	 * the connector; NULL: no state directory to keep them in. */
	struct tailheld *heldset;
	/* Closes some idle stream other than except to free a descriptor;
	 * returns 0 when one was freed. */
	int (*make_room)(void *opaque, const struct tailstream *except);
	/* True when a stream other than except watches wd. */
	bool (*wd_shared)(void *opaque, int wd, const struct tailstream *except);
	void *opaque;
	/* The marks (tailpos.h) of the lines tailstream_read handed out since
	 * tailctx_release: a line's offset must stay valid until the next poll
	 * even when its file is closed meanwhile. At most one per read of a
	 * file, so no more than the lines of one poll. */
	struct src_ref **held;
	size_t nheld, capheld;
	/* The streams' directories, each once (tailstream_dir): most files of
	 * a glob share one. */
	char **dirs;
	size_t ndirs, capdirs;
	struct hash dirindex;
};

/* Gives back the marks held for the lines handed out so far (at the start
 * of a poll: the worker holds what it keeps). */
void tailctx_release(struct tailctx *c);

/* tailctx_release, and frees what c allocated (not c). */
void tailctx_fini(struct tailctx *c);

enum {
	TAILSTREAM_FROM_END = 1 << 0, /* read.from=end applies (found at start-up) */
	TAILSTREAM_HISTORY = 1 << 1,  /* rotated siblings are read first when new */
	TAILSTREAM_QUIET = 1 << 2,    /* no "does not exist" warning (glob match) */
};

/* Creates a stream for path (copied) and partition part. Returns 0 and *out
 * (tailstream_free), or TAILSTREAM_ERR_NOMEM (*out NULL). Nothing is opened
 * until tailstream_check. */
int tailstream_new(struct tailctx *c, const char *path, struct partition *part, unsigned flags,
                   struct tailstream **out);

/* Takes json (an offset value, copied as parsed) as s's place instead of
 * its committed offset, before its first look: what the source let go of
 * already and stores at the stop (a path under a glob found gone at the
 * start, its file counted then: a file coming to the path later must not
 * count it again). The last run's held set is not looked at for s: that
 * look took its files already. */
void tailstream_preset(struct tailstream *s, const char *json);

/* Looks at the disk: opens or resumes the stream when it has no file,
 * notices rotation and growth otherwise. Marks it ready when it should be
 * read. Cannot fail: a file that cannot be opened or followed yet is logged
 * once by the stream and looked at again (no room for another open file: in
 * 200 ms), so nothing here stops the connector. */
void tailstream_check(struct tailstream *s, int64_t now);

/* While reading pauses, what a read would notice first: the file at the
 * path truncated (logrotate copytruncate). Its copy, and the copies made
 * after it, are opened into the chain then, before logrotate deletes them,
 * and read from where reading stopped once it resumes; without a copy,
 * the bytes seen in the file are counted lost. A fstat, and the fingerprint
 * checks of a read. */
void tailstream_look(struct tailstream *s);

/* Notes that a copy of s's file was made (its directory's watch heard a
 * rotated name of it created: logrotate copytruncate), for the next
 * truncation: copies made and deleted before skiff looked are counted
 * (files_gone_unread). */
void tailstream_copy_made(struct tailstream *s);

enum {
	TAILSTREAM_OK = 0,
	TAILSTREAM_ERR = -1,       /* a read failed: stops the connector */
	TAILSTREAM_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a TAILSTREAM_ERR* code. */
const char *tailstream_strerror(int rc);

/* Reads lines of the stream into out[0..max) (pointing into buf; their
 * offsets' marks held in the tailctx until tailctx_release). Returns 1 when
 * stopped early (more to read now), 0 when caught up, or TAILSTREAM_ERR*
 * with errbuf. */
int tailstream_read(struct tailstream *s, struct tailbuf *buf, struct tailline *out, size_t max,
                    size_t *n, int64_t now, char *errbuf, size_t errlen);

/* Monotonic ms when the stream wants a check without any event (waiting for
 * a rotated file to go quiet), or -1. */
int64_t tailstream_deadline(const struct tailstream *s);

/* Closes an idle stream's file, keeping its place: true when it did.
 * heard: the caller hears every write to the file from now on (its
 * directory's watch) and tells of each (tailstream_unheard), so that the
 * file found deleted while closed is known to have held nothing past the
 * end it had now: not counted lost. */
bool tailstream_suspend(struct tailstream *s, bool heard);
/* A write to s's file was heard while it was closed idle, or changes may
 * have gone unheard (an inotify overflow, a directory's watch lost): the
 * file found gone is counted as one whose end is not known. */
void tailstream_unheard(struct tailstream *s);
/* True when tailstream_suspend would close a file. */
bool tailstream_idle(const struct tailstream *s);

bool tailstream_ready(const struct tailstream *s);
/* True when s has no file open because no descriptor was free for it
 * (max.open.files), nor a lingering file to read: it waits for one
 * (tailstream_check again). */
bool tailstream_waiting(const struct tailstream *s);
void tailstream_set_ready(struct tailstream *s);
/* True when s, looked at (tailstream_check) at least once, holds no file
 * and waits for none: nothing open or lingering, no rotated file listed
 * unopened, no descriptor awaited. Only a file appearing at its path can
 * give it work again. */
bool tailstream_spent(const struct tailstream *s);
/* True when a rescan need not look at s: nothing but an inotify event on its
 * file (or on its directory, whose watch the caller checks) can give it
 * work: it is idle (suspended, or one file read to its end, nothing
 * lingering, no deadline), and its one file is watched (was, when
 * suspended) and was named by the path itself on a file system inotify
 * hears. Never with watch.mode=poll. */
bool tailstream_quiet(const struct tailstream *s);
/* The inotify watch on the file being read, -1 when none. */
int tailstream_wd(const struct tailstream *s);
const char *tailstream_path(const struct tailstream *s);
const char *tailstream_dir(const struct tailstream *s);
const char *tailstream_base(const struct tailstream *s);
struct partition *tailstream_partition(const struct tailstream *s);
/* The backlog (source_ops.backlog): the bytes after the read position in
 * the file being read, the files after it and those lingering (their sizes
 * by fstat of the open descriptors), and the rotated files waiting unopened
 * (their sizes at the last listing); nothing is opened or read for it. A
 * file suspended while idle counts what was after its position then.
 * False when unknown: a compressed file not read to its end (its
 * uncompressed size is not known before), no descriptor free for the
 * stream, or the stream not started yet. */
bool tailstream_backlog(const struct tailstream *s, uint64_t *bytes);

/* Open descriptors held (the chain's length). */
size_t tailstream_open_files(const struct tailstream *s);

/* True when s holds a file, deleted since it was rotated, that the
 * held-file budget may let go of: one read to its end and lingering for
 * late writes, else the file it reads (chain[0]); *born is its birth time
 * (tailid.born): the budget lets go of the oldest first. */
bool tailstream_first_gone(const struct tailstream *s, int64_t *born);

/* Lets go of that file, because the held files are past their budget
 * (why: which, for the warning): its bytes after the position and their
 * lines are counted lost (bytes_unread_lost, lines_unread_lost,
 * files_gone_unread) and the file is named in a warning (nothing when it
 * was read to its end); the stream goes on with the file after it. Only
 * when tailstream_first_gone; call between checks and reads, never from
 * inside one. */
void tailstream_drop_first(struct tailstream *s, const char *why);

/* Puts the files s holds (lingering ones and those let go whose records
 * still wait, then those of its chain no longer at the path, in reading
 * order, and behind them the file at the path) into h's snapshot
 * (tailheld_put).
 * closing: leaves out those deleted since, which closing s counts
 * (tailstream_free). A fstat of each, a read of its first KiB when opened
 * shorter. Returns 0 or TAILHELD_ERR_NOMEM. */
int tailstream_held_files(const struct tailstream *s, struct tailheld *h, bool closing);

/* At a stop (source_ops.stopping), json s's committed offset (the
 * acknowledged prefix; NULL: none): what s read past it is dropped. For
 * each open file from the one holding the offset's bytes on (its own, or
 * after a copytruncate its copy; files let go whose records still wait
 * included, link.waiting) holding such bytes, says whether the
 * next start reads them again (on disk, or a compressed copy of it is) or
 * not: deleted since, it is read through now and counted lost, those
 * bytes and the rest (bytes_unread_lost, lines_unread_lost,
 * files_gone_unread), and closing it counts nothing more. Returns the
 * offset to store instead (malloc'd; NULL: keep json): json with "seen"
 * (the file's size now) when the offset's file is on disk with bytes past
 * the position, or "finished" when it was deleted and counted here, so
 * that the restart counts it once (tailpos.h). s holding no file
 * (tailstream_spent) and nothing at its path: json with "finished" when s
 * let go of json's place (read to its end, or found gone at a start and
 * counted), so that the next start does not look for it nor count it
 * again. */
char *tailstream_stop(struct tailstream *s, const char *json);

/* Closes every file and frees. Accepts NULL. */
void tailstream_free(struct tailstream *s);

#endif
