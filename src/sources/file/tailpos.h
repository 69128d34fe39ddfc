/* tailpos: the file source's offset value, parsed and rendered.
 *
 *   {"position":N,"dev":D,"ino":I,"fp":H,"fplen":L,"tail":T,"born":B,"after":A,
 *    "finished":1,"seen":S}
 *
 * position: the byte after the last line Kafka acknowledged (Connect reads it
 * alone); dev, ino: the file's identity; fp: FNV-1a 64 of its first fplen =
 * min(position, 1024) bytes, as a signed integer; tail (only when position
 * > 1024): a hash of the TAILPOS_TAIL bytes before position (tailpos_tail),
 * so that a file found by its first bytes (files sharing a banner longer than
 * fp's) is known to hold the bytes read up to position; born: the file's
 * birth time in ns (statx btime, or its mtime when opened where the file
 * system keeps no birth time), to order rotated files when the file itself
 * is gone; after (only for a compressed file): the birth of the
 * uncompressed file skiff read before it - its own birth is when it was
 * compressed, so it cannot tell which uncompressed siblings are older -
 * or TAILPOS_AFTER_UNKNOWN when that is not known (every uncompressed
 * sibling may be newer). So an offset with born and no after names an
 * uncompressed file: the siblings born before it are older, read already
 * (those of skiff before issue 22 may name a compressed file too);
 * finished (only when 1): skiff had read the file to its end and let go of
 * it at position (tailstream), so not finding it loses nothing (also
 * written by a stop that found the file deleted and counted what it held,
 * or nothing at the path of a file let go of or counted gone at a start:
 * tailstream_stop); seen (only from a stop, with records read past the
 * position unacknowledged or unread bytes): the file's size then, so that
 * a restart that finds it gone counts the bytes it held past the position.
 * Connect's FileStreamSourceTask reads "position" alone and ignores the
 * rest; the next acknowledged offset is written without "seen".
 * Integers are written with snprintf and read with jsonint, exactly. Leaf
 * module. */
#ifndef SKIFF_TAILPOS_H
#define SKIFF_TAILPOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/source.h"
#include "util/err.h"

/* "after" of a compressed file read without knowing the uncompressed file
 * before it: the earliest time, so every uncompressed sibling is later. */
#define TAILPOS_AFTER_UNKNOWN 1

/* How many bytes before the position "tail" hashes (fewer: none). */
#define TAILPOS_TAIL 64

/* A place in a file: a committed offset, or where a closed stream stopped. */
struct tailpos {
	int64_t pos, dev, ino, born;
	int64_t after; /* when has_after: see "after" above */
	int64_t seen;  /* when has_seen: see "seen" above */
	uint64_t fp;
	uint64_t tail;     /* when has_tail */
	int32_t fplen;     /* <= TAILID_FP_MAX */
	bool known : 1;    /* there is a place at all */
	bool has_id : 1;   /* dev and ino */
	bool has_fp : 1;   /* fp and fplen */
	bool has_tail : 1; /* tail (position > TAILID_FP_MAX) */
	bool has_born : 1;
	bool has_after : 1;
	bool has_seen : 1;
	bool finished : 1; /* read to its end and let go: not finding it loses nothing */
};

/* What a file's offsets carry beyond their four integers (src_offset.v =
 * position, dev, ino, and fp up to position TAILID_FP_MAX, tail past it):
 * the file's birth key, its fp once it has TAILID_FP_MAX bytes, and where
 * skiff let go of it. One per open of a file (tailfile; a new one when it
 * is read again from 0), shared by the file and by every offset naming it
 * through src_ref, so it lives while any offset does: 48 bytes per file,
 * not per record. */
struct tailmark {
	struct src_ref ref;
	int64_t born;  /* tailid.born: ns, > 0 */
	int64_t after; /* a compressed file: "after" above, ns; 0 not compressed */
	int64_t done;  /* the position skiff let go of the file at, -1 while read */
	uint64_t fp;   /* when fp_full: the hash of its first TAILID_FP_MAX bytes */
	bool fp_full;
};

/* The "tail" of the len bytes before a position, bytes[0..len) (len <
 * TAILPOS_TAIL: those the file holds): FNV-1a 64 over little-endian 8-byte
 * words, then over the bytes left (len % 8) one at a time. */
uint64_t tailpos_tail(const void *bytes, size_t len);

/* The module's error codes (util/err.h). */
enum {
	TAILPOS_OK = 0,
	TAILPOS_ERR = -1,       /* no usable position */
	TAILPOS_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a TAILPOS_* code. */
const char *tailpos_strerror(int rc);

/* A mark for a file born at born (after 0, done -1), holding one reference.
 * Returns 0 and *out (src_ref_drop), or TAILPOS_ERR_NOMEM. */
int tailmark_new(int64_t born, struct tailmark **out);

/* The mark off refers to (NULL: none). */
struct tailmark *tailmark_of(const struct src_offset *off);

/* Parses an offset value ({"position":N,"dev":..}; Connect's {"position":N}
 * alone too). Returns 0, or -1 when json has no usable position. */
int tailpos_parse(const char *json, struct tailpos *out);

/* Renders off as the offset value JSON into buf: its four integers, fplen
 * (past TAILID_FP_MAX: v[3] as tail, fp from its mark when fp_full), and
 * from its mark (when it has one) born, and "finished":1 when the file
 * was let go at exactly off's position. Returns the length, or -1 when buf
 * is too small. Also its mark's after, when set. */
int tailpos_format(const struct src_offset *off, char *buf, size_t len);

#endif
