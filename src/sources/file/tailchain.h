/* tailchain: a stream's chain of open files - the internals of tailstream,
 * shared by tailstream.c (following, reading, resuming) and tailchain.c
 * (opening files into the chain, finding what comes next, letting go), which
 * calls nothing of tailstream.c. Include only from those two files; the
 * offset-safety argument is at the top of tailplan.c. Main loop only. */
#ifndef SKIFF_TAILCHAIN_H
#define SKIFF_TAILCHAIN_H

#include "sources/file/tailscan.h"
#include "sources/file/tailstream.h"
#include "util/err.h"

/* Rotated files a look may open beyond max.held.files before the budget
 * lets go of the oldest deleted ones (tailstream_drop_first): one listing's
 * worth, so that a file about to be deleted is opened first. */
#define HELD_SLACK 16
#define LINGER_MAX 8 /* let-go files watched for late writes */
#define LINGER_POLL_MS 200
/* The arguments naming a stream's rotated.dirs for tailscan_*. */
#define ROTATED_DIRS(s) (s)->c->rotated_dirs, (s)->c->nrotated_dirs
struct link {
	struct tailfile *tf;
	int64_t seen_size;   /* size at the last look, -1 before */
	int64_t max_size;    /* largest size seen since it was opened */
	uint64_t peek_fp;    /* fingerprint of its first peek_len bytes at open, */
	int64_t peek_len;    /* to find its copy if it is truncated before it is read */
	int64_t added_ns;    /* wall clock when opened, or last found truncated */
	int64_t added_ms;    /* clock_mono_ms then: tells a wall clock stepped back */
	bool started;        /* read at least once */
	int64_t quiet_since; /* ms when it was last seen growing */
	int64_t moved_at;    /* ms when it was seen not to be at the path, -1 */
	bool copy;           /* a copytruncate copy: complete, done at its end */
	bool final;          /* let go at the next end: the partial line ships */
	bool linger;         /* let go early (its successor has bytes): late writes */
	/* Let go, read to its end, and kept open (among the lingering ones)
	 * while records of it may still wait for Kafka (tailchain_in_flight):
	 * a stop names it and counts what it loses (tailstream_stop), and the
	 * held list keeps it. No longer read. */
	bool waiting;
	/* A copytruncate copy: the mark of the generation of the file at the
	 * path it copies (one reference), which the offsets of the lines read
	 * from that file before its truncation name; NULL otherwise. */
	struct tailmark *gen;
	bool has_floor;      /* a compressed file: floor is known */
	struct tailid floor; /* ... the uncompressed file read before it */
	/* Held (tailctx.held_files): no longer the file at the path; gone:
	 * deleted since (its link count 0), gone_size bytes of disk that only
	 * skiff's descriptor keeps (tailctx.held_bytes). */
	bool held, gone;
	int64_t gone_size;
	/* The file at the path: copies of it heard made (a rotated name
	 * created in its directory: logrotate copytruncate's copy) less the
	 * copies skiff opened after its truncations; more heard than opened
	 * when copies were deleted before skiff looked (tailstream.c). */
	int32_t copies_owed;
};

/* One for every file watched, open or not: 232 bytes and its path, in one
 * allocation (its flags one byte, its bools bits: 20,000 streams). */
struct tailstream {
	struct tailctx *c;
	const char *dir; /* tailchain_dir */
	struct partition *part;
	struct link *chain; /* [0, n) of cap, grown as needed (chain_room) */
	uint32_t n, cap;
	struct link *linger;         /* [0, nlinger): let go, watched for rotate.wait.ms;
	                              * LINGER_MAX allocated while there are any */
	struct tailscan_entry *pend; /* rotated files the chain had no room for */
	uint32_t nlinger, npend;
	struct src_offset last_off; /* after the last line of the chain (holds its ref) */
	struct tailpos saved;       /* where to go on when n == 0 */
	/* Closed while idle (suspended): saved is its place, saved.dev and .ino
	 * its file, whose size and mtime were these then (one fstat; size -1:
	 * compare as changed). */
	int64_t idle_size, idle_mtime;
	struct tailid *unreadable; /* the stored offset's file, compressed since
	                            * and damaged: counted at resume, not read
	                            * again (NULL: none) */
	int64_t wd_dev, wd_ino;    /* the inode wd watches (watched last, wd -1) */
	int64_t deadline;
	int wd;            /* the watch on chain[0], -1: none */
	uint8_t flags;     /* TAILSTREAM_* */
	bool resolved : 1; /* the committed offset was read */
	bool ready : 1;
	bool moved : 1; /* the path no longer names chain[n-1] */
	bool missing_logged : 1;
	bool irregular_logged : 1; /* the path names a FIFO, directory or device */
	bool no_room : 1;          /* could not open for max.open.files */
	bool suspended : 1;        /* closed while idle (tailstream_suspend) */
	bool wd_direct : 1;        /* wd's file named by path itself when watched, on
	                            * a file system inotify hears (tailscan.h) */
	bool idle_heard : 1;       /* suspended, and every write to its file since
	                            * heard: none was (tailstream_suspend) */
	char path[];
};
_Static_assert(sizeof(struct tailstream) == 232, "the size its comment claims");

/* What tailchain_add_as returns (util/err.h). */
enum {
	TAILCHAIN_OK = 0,
	TAILCHAIN_ERR = -1,       /* cannot be opened, or shorter than pos (logged) */
	TAILCHAIN_MOVED = -2,     /* another file, or none, at the path by now */
	TAILCHAIN_CUT_SHORT = -3, /* compressed, its data ending before pos (logged) */
};

/* A short text for a TAILCHAIN_* code. */
const char *tailchain_strerror(int rc);

/* True when a file of the chain is the inode id. */
bool tailchain_has(const struct tailstream *s, const struct tailid *id);

/* Opens path into the chain at index at, starting at pos. expect: the file
 * a listing found there (NULL: any), since a rotation may rename files
 * between a listing and the open. copy: a copytruncate copy (done at its
 * end). need_room: fail rather than exceed max.open.files. Returns
 * TAILCHAIN_OK, TAILCHAIN_MOVED when the path names another file than
 * expect, or nothing, by now (logrotate renaming it: list again),
 * TAILCHAIN_CUT_SHORT (logged, counted in compressed_cut_short) when it is
 * compressed and its data ends early before pos, or TAILCHAIN_ERR (logged)
 * when it cannot be opened or is shorter than pos. */
int tailchain_add_as(struct tailstream *s, size_t at, const char *path, int64_t pos, bool copy,
                     bool need_room, const struct tailid *expect);
/* tailchain_add_as with any file at path. */
int tailchain_add(struct tailstream *s, size_t at, const char *path, int64_t pos, bool copy,
                  bool need_room);

/* Appends the rotated siblings of the path born after `after` (all when
 * NULL), oldest first, then the file now at the path, skipping files already
 * in the chain. Nothing when the chain's last file is still at the path. */
void tailchain_extend(struct tailstream *s, const struct tailid *after);

/* tailchain_extend() with an empty chain and `after` a compressed file
 * whose floor (tailchain_set_floor) is floor. */
void tailchain_extend_z(struct tailstream *s, const struct tailid *after,
                        const struct tailid *floor);

/* Notes that chain[i], a compressed file, holds lines written after those
 * of floor, an uncompressed file: its own birth is when it was compressed,
 * so only floor tells which uncompressed siblings are older than it (a
 * .backup logrotate never compresses). Its offsets carry floor's birth. */
void tailchain_set_floor(struct tailstream *s, size_t i, const struct tailid *floor);

/* The offset after everything the chain has handed out: chain[0]'s place,
 * or the end of the last file let go. Its ref is borrowed from the chain. */
struct src_offset tailchain_offset(const struct tailstream *s);

/* Holds r until tailctx_release (the mark of lines handed out). Returns 0
 * or TAILSTREAM_ERR_NOMEM. */
int tailchain_hold(struct tailctx *c, struct src_ref *r);

/* True when s is suspended and its path still names the file it was
 * suspended on, with the same size and mtime: a rescan need not open it
 * (nor read its fingerprint) again. A stat, no open. */
bool tailchain_unchanged(const struct tailstream *s);

/* Removes the inotify watch of s's file (unless another stream shares it):
 * a file closed while idle is heard through its directory's watch, so that
 * watches, and the inodes each one pins in the kernel, do not grow with
 * the files (tailstream_suspend). */
void tailchain_unwatch(struct tailstream *s);

/* Lets go of chain[0], which was read to its end: closes it, or keeps it
 * lingering (link.linger) for late writes, or, may_wait, waiting
 * (link.waiting) while records of it may be unacknowledged. */
void tailchain_pop(struct tailstream *s, bool may_wait);

/* True when l's file holds the bytes offset p names: p's file (its dev,
 * inode and birth) or a copytruncate copy of it (l->copy), at least
 * p->pos bytes long, its first bytes and those before p->pos (fp, tail)
 * those p names. The file at the path truncated since holds another
 * generation: not the one p names. */
bool tailchain_holds(const struct link *l, const struct tailpos *p);

/* True when records of l, let go, may still be unacknowledged: its mark
 * is referenced by more than the file and the stream's last offset (by
 * records in flight, lines handed out, the partition's acknowledged
 * offset), and the committed offset does not name it at its end. */
bool tailchain_in_flight(const struct tailstream *s, const struct link *l);

/* Closes l, a link of s's chain or a lingering one, and gives back what it
 * held (a descriptor; its place in the held-file budget). The caller
 * removes it from its array. */
void tailchain_close(struct tailstream *s, struct link *l);

/* Brings the held-file budget (tailctx.held_*) up to date for s: the files
 * of its chain no longer at the path, and those lingering, are held, and
 * those deleted since (a fstat of each held file not known deleted yet)
 * count their bytes. */
void tailchain_look_held(struct tailstream *s);

/* Frees the chain's array when no file is in it, and the lingering files'
 * when none lingers: a stream without open files keeps none (20,000 files,
 * 256 open: 1.4 KB each was mostly these). */
void tailchain_release(struct tailstream *s);

/* The directory of path, kept once in c for every stream in it; NULL
 * when out of memory. */
const char *tailchain_dir(struct tailctx *c, const char *path);

#endif
