/* tailplan: where a stream without files resumes, decided - a stored place
 * and what was observed of the path's family in, the files to open (with
 * their positions and how), the losses to count and the place to keep out.
 * Pure: no descriptor, no environment, no clock, no log; the observing (I/O)
 * and the applying (the chain, the log, the counters) are tailstream's. The
 * offset-safety argument is at the top of tailplan.c, beside the branches
 * that implement it. Leaf module. */
#ifndef SKIFF_TAILPLAN_H
#define SKIFF_TAILPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/file/tailheld.h"
#include "sources/file/tailid.h"
#include "sources/file/tailpos.h"

/* Flags of tailplan_resume (those of tailstream_new that matter to it). */
enum {
	TAILPLAN_HISTORY = 1u << 0,  /* a path first seen reads its rotated history first */
	TAILPLAN_FROM_END = 1u << 1, /* read.from=end for a path first seen */
};

/* One file of the path's family as observed for the stored place p: the
 * checks are those of p, made where the file was opened. */
struct tailobs {
	bool found;  /* there (and, for those found by a search, found) */
	bool has_id; /* id is known (a stat or the open succeeded) */
	struct tailid id;
	int64_t size;    /* bytes (uncompressed: those it decodes to, up to p's position) */
	bool fp_match;   /* its first bytes are p's (true when p has no fp) */
	bool opens;      /* it opens at p's position */
	bool cut_short;  /* compressed, its data ending before p's position */
	bool tail_match; /* it holds p's tail before p's position (true when p has none) */
};

/* What tailplan_resume is given: the file at the path (live), and the
 * candidates a search among the rotated siblings found (tailobs.found
 * false: none, or not looked for because an earlier one serves). */
struct tailobs_set {
	struct tailobs live;  /* the file at the path (opened: fp, tail checked) */
	struct tailobs copy;  /* p's file shrank or changed: its copy by first bytes */
	struct tailobs moved; /* the sibling with p's inode */
	struct tailobs z;     /* p's file compressed since, by first bytes, born after p's */
	struct tailobs undec; /* the oldest compressed file born after p's, decoding to nothing */
	int64_t held_seen;    /* the held set's size of p's file (tailheld_size_of), -1 */
	/* p's file was closed while idle (max.open.files) at p, idle_end bytes
	 * long then, and every write to it since would have been heard (none
	 * was): found gone, it held nothing past idle_end. */
	int64_t idle_end;
	bool idle_known;
};

/* What happened to the stored place's file. */
enum tailplan_case {
	TAILPLAN_NEW,      /* no place: the path's file (or its history) from the start */
	TAILPLAN_WAIT,     /* finished, nothing at the path yet: nothing to do */
	TAILPLAN_AT_PATH,  /* F at the path: resume at p */
	TAILPLAN_REPLACED, /* F at the path, shorter or with other bytes: its copy */
	TAILPLAN_MOVED,    /* the path names another file, or none: find F */
};

/* Which observed file an open names. */
enum tailplan_file {
	TAILPLAN_PATH,       /* the path */
	TAILPLAN_COPY,       /* tailobs_set.copy */
	TAILPLAN_MOVED_FILE, /* tailobs_set.moved */
	TAILPLAN_Z,          /* tailobs_set.z */
};

/* A loss to log and count (the messages are tailstream's). */
enum tailplan_loss {
	TAILPLAN_LOSS_NONE,
	TAILPLAN_GONE_AT_STOP,  /* F gone, a stop saw its size: bytes [pos, seen) */
	TAILPLAN_GONE_HELD,     /* F gone, the held set saw its size: bytes [pos, seen) */
	TAILPLAN_GONE_UNKNOWN,  /* F gone, its bytes not known: the file */
	TAILPLAN_GONE_IDLE,     /* F gone while closed idle: bytes [pos, idle_end) */
	TAILPLAN_GEN_TRUNCATED, /* F's generation gone with its copy: bytes [pos, seen) */
	TAILPLAN_GEN_GONE,      /* F's generation gone with its copy, bytes not known */
	TAILPLAN_UNDECODABLE,   /* F compressed since, not one byte decodes */
};

/* How the chain goes on after the files opened (tailchain_extend*). */
enum tailplan_extend {
	TAILPLAN_EXTEND_NONE,
	TAILPLAN_EXTEND_HISTORY,  /* every rotated sibling, oldest first, then the path */
	TAILPLAN_EXTEND_REPLACED, /* after the first file (or after p's birth when none
	                           * opened and born is set), then the path's file */
	TAILPLAN_EXTEND_MOVED,    /* tailchain_extend_z: after (when none opened), floor */
};

#define TAILPLAN_MAX_OPEN 2

struct tailplan_open {
	enum tailplan_file file;
	int64_t pos;
	bool copy;      /* a copytruncate copy: done at its end */
	bool need_room; /* fail rather than exceed max.open.files */
	bool expect;    /* opened only if it is still the file observed */
};

struct tailplan {
	enum tailplan_case kind;
	/* REPLACED: "truncated", "truncated and written past its position
	 * again" or "replaced"; counted in truncations for the first two,
	 * fingerprint_resets for the last. finishing: the warning says a
	 * copy is finished first. */
	const char *why;
	bool finishing;
	bool reused;            /* MOVED: p's inode now names a newer file at the path */
	bool moved_born_later;  /* MOVED: the file with p's inode was born later */
	bool copy_newer;        /* the copy found starts like p's but lacks its tail */
	bool z_newer;           /* the compressed file found likewise */
	bool z_finishing;       /* MOVED: F compressed since, read from p */
	int fingerprint_resets; /* to count beyond `why`'s */
	struct tailplan_open open[TAILPLAN_MAX_OPEN];
	size_t nopen;
	enum tailplan_loss loss;
	int64_t lost_from, lost_to; /* the bytes of loss, where it has bytes */
	bool unreadable;            /* the compressed file (z, or undec) is damaged:
	                             * remember it (tailstream.unreadable) */
	bool unreadable_undec;      /* ... it is undec, found undecodable */
	bool from_end;              /* NEW: start at the end of the path's file */
	bool anchor;                /* NEW: store where reading starts */
	enum tailplan_extend extend;
	bool has_after; /* EXTEND_REPLACED, _MOVED: when nothing opened */
	struct tailid after;
	bool has_floor; /* the first file opened is compressed: its floor */
	struct tailid floor;
	bool has_zfloor; /* EXTEND_MOVED: the floor of the compressed ones */
	struct tailid zfloor;
};

/* True when id may be the file p names: the same dev and inode and, where
 * both know it, the same birth time. */
bool tailplan_same_file(const struct tailid *id, const struct tailpos *p);

/* Decides where a stream with stored place p (p->known false: none)
 * resumes, from obs (only obs->live is read for NEW and AT_PATH) and flags
 * (TAILPLAN_*). Fills *out. */
void tailplan_resume(const struct tailpos *p, const struct tailobs_set *obs, unsigned flags,
                     struct tailplan *out);

/* The case alone: what tailplan_resume decides first, from the file at the
 * path (live) - so that the observing looks only where the case needs. */
enum tailplan_case tailplan_case(const struct tailpos *p, const struct tailobs *live,
                                 const char **why, bool *reused);

/* The place kept once p was resumed (opened: a file is in the chain now):
 * p as finished (it only orders what follows) when something was opened or
 * p was not finished; unchanged otherwise. Returns true when *saved was
 * set; saved->known is false when opened (the chain holds the place). */
bool tailplan_saved(const struct tailpos *p, bool opened, struct tailpos *saved);

/* The index of the first of the held files f[0..n) (the last run's, in
 * reading order) that comes after p's file, n when none is known to: those
 * after p's own file in the set's order, else those born after it. Without
 * p's identity and birth, or with p naming a compressed file (born when
 * compressed), the order is not known: none. */
size_t tailplan_held_after(const struct tailheld_file *f, size_t n, const struct tailpos *p);

/* True when f, a held file found nowhere now, is p's file opened
 * compressed (born after it): counted where p's file is found gone, not
 * twice. */
bool tailplan_held_is_place(const struct tailheld_file *f, const struct tailpos *p);

#endif
