/* tailfile: one open file being read line by line.
 *
 * A line ends at "\n", "\r\n" or a lone "\r" (FileStreamSourceTask's rule);
 * the terminator is not part of the line, every other byte passes through
 * unchanged (NUL, invalid UTF-8). The reader keeps no bytes between reads:
 * its state is the position of the first byte not yet consumed, so a
 * trailing partial line is simply read again next time (bounded by
 * max_line), and an idle open file costs a descriptor and ~100 bytes.
 *
 * Lines are read into a caller-owned arena (struct tailbuf) that lives for one
 * poll of the source: the lines handed out point into it. Each line comes with
 * the offset after it: position, dev, ino and the fingerprint of the first
 * min(position, TAILID_FP_MAX) bytes (tailid.h), kept up to date as lines are
 * consumed. Leaf module: no logging; events worth counting come back in
 * struct tailfile_stats. Main loop only. */
#ifndef SKIFF_TAILFILE_H
#define SKIFF_TAILFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/source.h"
#include "sources/file/tailid.h"
#include "sources/file/tailpos.h"
#include "util/err.h"

/* Bytes before the position a reader remembers (tailfile_still_there). */
#define TAILFILE_LAST 64

enum tailfile_policy { TAILFILE_SPLIT, TAILFILE_TRUNCATE, TAILFILE_SKIP };

/* The poll arena: lines point into mem[0..used). */
struct tailbuf {
	char *mem;
	size_t cap, used;
};

struct tailline {
	const char *bytes;
	size_t len;
	int64_t start; /* file offset of the line's first byte */
	/* {position after it, dev, ino, fingerprint} and the file's mark (a
	 * reference the file holds: hold one to keep it past tailfile_close). */
	struct src_offset after;
};

struct tailfile_stats {
	uint64_t split, truncated, skipped, partial;
};

/* Results of tailfile_read, and the module's error codes (util/err.h). */
enum {
	TAILFILE_EOF = 0,          /* everything there was read (a partial line may wait) */
	TAILFILE_MORE = 1,         /* stopped early: out[] or the arena is full */
	TAILFILE_OK = 0,           /* tailfile_open and the like: done */
	TAILFILE_ERR = -1,         /* a system call failed (errbuf: strerror) */
	TAILFILE_ERR_NOMEM = -2,   /* out of memory */
	TAILFILE_ERR_NOENT = -3,   /* no file at the path */
	TAILFILE_ERR_NOTREG = -4,  /* not a regular file (a FIFO, directory, device) */
	TAILFILE_ERR_PSEUDO = -5,  /* a pseudo file: its bytes made up at each read */
	TAILFILE_ERR_SHORT = -6,   /* shorter than what was read from it before */
	TAILFILE_ERR_REFUSED = -7, /* its real path is one the guard refuses */
};

/* A connector's path guard (source_env.allow_path) as tailfile_open applies
 * it: every file opened is checked by where it really is (the link
 * /proc/self/fd/N names: symlinks and ".." resolved, whichever path led
 * there - the path, a glob's match, a rotated copy, a compressed one, one
 * in rotated.dirs) before a byte of it is read. A refused file is closed
 * unread; the first refusal is kept for the connector to fail with. Owned
 * by the connector (struct tailctx). */
struct tailguard {
	struct source_env *env; /* NULL, or no env->allow_path: no guard */
	bool refused;           /* a file was refused: why says which and why */
	char why[1024];         /* "file P resolves to R, outside fleet.allow.files (...)" */
};

/* A short text for a TAILFILE_* code. */
const char *tailfile_strerror(int rc);

struct tailfile;

/* Opens path read-only (following symlinks), checked by g (NULL: no
 * guard). Returns 0 and *out (caller owns:
 * tailfile_close), or TAILFILE_ERR_REFUSED when g refuses where it really
 * is (g->why says), TAILFILE_ERR_NOENT when nothing is at path,
 * TAILFILE_ERR_NOTREG when it is not a regular file, TAILFILE_ERR_PSEUDO when
 * it is a pseudo file whose bytes are made up at each read (/proc, /sys:
 * tailid's pseudo, or size 0 yet it reads bytes): not a log,
 * TAILFILE_ERR_NOMEM, or TAILFILE_ERR; errbuf gets why (strerror, without the
 * path). The position is 0 until tailfile_start. */
int tailfile_open(struct tailguard *g, const char *path, size_t max_line,
                  enum tailfile_policy policy, struct tailfile **out, char *errbuf, size_t errlen);

/* Starts reading at pos (<= size), recomputing the fingerprint from the file.
 * Returns 0, or -1 when the file is shorter than pos. */
int tailfile_start(struct tailfile *tf, int64_t pos);

/* Starts after the last line terminator of the file (read.from=end): a line
 * being written is shipped whole. Returns 0 or -1. */
int tailfile_start_at_end(struct tailfile *tf);

/* True when the first fplen bytes of the file hash to fp. */
bool tailfile_matches(const struct tailfile *tf, uint64_t fp, int64_t fplen);
/* True when the TAILPOS_TAIL bytes before pos hash to tail (tailpos.h);
 * one read. */
bool tailfile_tail_at(const struct tailfile *tf, int64_t pos, uint64_t tail);

/* True unless the TAILFILE_LAST bytes before the position (fewer near the
 * start) are no longer those read there: the file was truncated and written
 * again past the position. Costs one pread of those bytes. */
bool tailfile_still_there(const struct tailfile *tf);

/* The bytes before the position that tailfile_still_there compares
 * (*bytes owned by tf, valid until its next read, start or rewind). */
void tailfile_last(const struct tailfile *tf, const void **bytes, size_t *len);

/* The fourth integer of an offset at the position (tailpos.h): fp up to
 * TAILID_FP_MAX, the tail of the bytes before the position past it. */
int64_t tailfile_v3(const struct tailfile *tf);

/* Reads from the position into buf (from buf->used on), fills out[0..max-1]
 * and sets *n. final: the file will not grow any more (rotated away and
 * quiet): a trailing partial line is shipped as a line (counted in
 * st->partial). Returns TAILFILE_EOF, TAILFILE_MORE, TAILFILE_ERR_NOMEM or
 * TAILFILE_ERR, with "<path>: read: why" in errbuf. */
int tailfile_read(struct tailfile *tf, struct tailbuf *buf, struct tailline *out, size_t max,
                  size_t *n, bool final, struct tailfile_stats *st, char *errbuf, size_t errlen);

/* The lines ending in the bytes [from, to) of the file, from and to at
 * line starts (read before: a stop counting what was read but not
 * acknowledged), into *lines. Reads them again with pread (a compressed
 * file decoded again from its start, with a reader of its own, freed
 * before returning); the position does not move. Returns 0,
 * TAILFILE_ERR_SHORT when the file is shorter than to, TAILFILE_ERR_NOMEM or
 * TAILFILE_ERR. */
int tailfile_lines_between(const struct tailfile *tf, int64_t from, int64_t to, uint64_t *lines);

/* Moves the position to the end of the file (a compressed file: of its
 * uncompressed bytes) without reading lines out, for a file let go unread:
 * *bytes the bytes passed over, *lines the lines among them (a partial
 * last line counts as one). Reads every byte once, in 16 KiB pieces.
 * Returns 0, or TAILFILE_ERR_NOMEM or TAILFILE_ERR (the counts then say how
 * far it got). */
int tailfile_skip_rest(struct tailfile *tf, uint64_t *bytes, uint64_t *lines);

/* Restarts at 0 after a truncation (the fingerprint starts over). */
void tailfile_rewind(struct tailfile *tf);

/* Accessors. path: as opened, owned by tf. */
const char *tailfile_path(const struct tailfile *tf);
const struct tailid *tailfile_id(const struct tailfile *tf);
int tailfile_fd(const struct tailfile *tf);
int64_t tailfile_pos(const struct tailfile *tf);
uint64_t tailfile_fp(const struct tailfile *tf);
/* The file's mark (born, where it was let go); tf holds it until closed. */
struct tailmark *tailfile_mark(const struct tailfile *tf);
/* Where the file's bytes ended when the last read reached its end: the
 * position plus a partial line waiting for its terminator; -1 before a
 * read reached the end. Lines written after it are not read yet, whatever
 * the size is now. */
int64_t tailfile_end(const struct tailfile *tf);
/* Current size from fstat, or -1. A compressed file's: its uncompressed
 * size once read to the end, INT64_MAX before. */
int64_t tailfile_size(const struct tailfile *tf);
/* For a compressed file: its uncompressed size as far as known
 * (tailz_size_hint), or -1, and the fingerprint of its first
 * min(size, TAILID_FP_MAX) uncompressed bytes into *fp, *fplen (0: not
 * known), as tailid_fp_file gives for the file it was compressed from. */
int64_t tailfile_compressed_size(const struct tailfile *tf, uint64_t *fp, int64_t *fplen);
/* True when the file is compressed (app.log.1.gz: tailz.h), read as its
 * uncompressed bytes; it is complete, never written to. */
bool tailfile_compressed(const struct tailfile *tf);
/* Why a compressed file's data ended early (tailz_strerror), or NULL. */
const char *tailfile_broken(const struct tailfile *tf);

/* Closes the descriptor and frees. Accepts NULL. */
void tailfile_close(struct tailfile *tf);

#endif
