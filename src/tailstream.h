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
 * file was let go) is decided by one function from a struct tailpos: the
 * committed offset, or the place kept in memory. See tailstream.c for the
 * offset-safety argument. Main loop only. */
#ifndef SKIFF_TAILSTREAM_H
#define SKIFF_TAILSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"
#include "tailfile.h"
#include "tailpos.h"

#define TAILSTREAM_BORN_SLOTS 4096

struct tailstream;

/* What the streams of one connector share. Filled by the connector. */
struct tailctx {
	struct source_env *env;
	size_t max_line;
	enum tailfile_policy policy;
	int64_t rotate_wait_ms;
	int ifd; /* inotify descriptor, -1 in poll mode */
	size_t nopen, max_open;
	/* Closes some idle stream other than except to free a descriptor;
	 * returns 0 when one was freed. */
	int (*make_room)(void *opaque, const struct tailstream *except);
	/* True when a stream other than except watches wd. */
	bool (*wd_shared)(void *opaque, int wd, const struct tailstream *except);
	void *opaque;
	/* Birth keys of recently opened files, and where they were let go
	 * (-1 while open), for offset_json (direct-mapped). */
	struct {
		int64_t dev, ino, born, done;
	} born[TAILSTREAM_BORN_SLOTS];
};

/* The birth key recorded for a file opened recently, or -1. */
int64_t tailctx_born(const struct tailctx *c, int64_t dev, int64_t ino);

/* Renders off as the offset value JSON (tailpos_format) into buf, with the
 * file's birth key and "finished":1 when the file was let go at exactly that
 * position (then not finding it at a restart loses nothing). Returns the
 * length, or -1 when buf is too small. */
int tailctx_offset_json(const struct tailctx *c, const struct src_offset *off, char *buf,
			size_t len);

enum {
	TAILSTREAM_FROM_END = 1 << 0, /* read.from=end applies (found at start-up) */
	TAILSTREAM_HISTORY = 1 << 1,  /* rotated siblings are read first when new */
	TAILSTREAM_QUIET = 1 << 2,    /* no "does not exist" warning (glob match) */
};

/* Creates a stream for path (copied) and partition part. Returns NULL when
 * out of memory. Nothing is opened until tailstream_check. */
struct tailstream *tailstream_new(struct tailctx *c, const char *path, struct partition *part,
				  unsigned flags);

/* Looks at the disk: opens or resumes the stream when it has no file,
 * notices rotation and growth otherwise. Marks it ready when it should be
 * read. Cannot fail: a file that cannot be opened or followed yet is logged
 * once by the stream and looked at again (no room for another open file: in
 * 200 ms), so nothing here stops the connector. */
void tailstream_check(struct tailstream *s, int64_t now);

/* Reads lines of the stream into out[0..max) (pointing into buf). Returns 1
 * when stopped early (more to read now), 0 when caught up, -1 on an error
 * that stops the connector (errbuf). */
int tailstream_read(struct tailstream *s, struct tailbuf *buf, struct tailline *out, size_t max,
		    size_t *n, int64_t now, char *errbuf, size_t errlen);

/* Monotonic ms when the stream wants a check without any event (waiting for
 * a rotated file to go quiet), or -1. */
int64_t tailstream_deadline(const struct tailstream *s);

/* Closes an idle stream's file, keeping its place: true when it did. */
bool tailstream_suspend(struct tailstream *s);
/* True when tailstream_suspend would close a file. */
bool tailstream_idle(const struct tailstream *s);
int64_t tailstream_last_active(const struct tailstream *s);

bool tailstream_ready(const struct tailstream *s);
void tailstream_set_ready(struct tailstream *s);
/* The inotify watch on the file being read, -1 when none. */
int tailstream_wd(const struct tailstream *s);
const char *tailstream_path(const struct tailstream *s);
const char *tailstream_dir(const struct tailstream *s);
const char *tailstream_base(const struct tailstream *s);
struct partition *tailstream_partition(const struct tailstream *s);
/* Open descriptors held (the chain's length). */
size_t tailstream_open_files(const struct tailstream *s);

/* Closes every file and frees. Accepts NULL. */
void tailstream_free(struct tailstream *s);

#endif
