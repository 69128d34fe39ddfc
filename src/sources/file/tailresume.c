/* tailresume: where a stream without files resumes - at start, after an
 * idle close, after its last file was let go - from its committed offset
 * or the place kept in memory (struct tailpos): the file of the offset
 * found at the path, among its rotated or compressed siblings, or gone.
 * The cases and the offset-safety argument are at the top of
 * tailstream.c. Private to tailstream (tailchain.h). Main loop only. */
#include "sources/file/tailresume.h"

#include "core/log.h"
#include "sources/file/tailchain.h"
#include "sources/file/tailheld.h"
#include "sources/file/tailscan.h"
#include "sources/file/tailz.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resuming ----------------------------------------------------------- */

/* True when id may be the file p names: the same dev and inode and, where
 * both know it, the same birth time. dev+ino alone is not enough: ext4 hands
 * a deleted file's inode to the next file created. */
static bool same_file(const struct tailid *id, const struct tailpos *p)
{
	if (!p->has_id)
		return true;
	if (id->dev != p->dev || id->ino != p->ino)
		return false;
	return !p->has_born || !id->has_btime || id->born == p->born;
}

static bool place_matches(struct tailfile *tf, const struct tailpos *p)
{
	return tailfile_size(tf) >= p->pos && (!p->has_fp || tailfile_matches(tf, p->fp, p->fplen));
}

/* Logs what of s was lost and counts it: bytes_unread_lost when bytes > 0,
 * else files_gone_unread. */
void tailresume_lost(struct tailstream *s, const char *what, int64_t bytes)
{
	struct source_env *env = s->c->env;

	env->log(env, LOG_WARN, "%s: %s", s->path, what);
	if (bytes > 0)
		env->count(env, "bytes_unread_lost", (uint64_t)bytes);
	else
		env->count(env, "files_gone_unread", 1);
}

/* True when chain[0], path found for p by its first bytes and opened at p's
 * position, does not hold the bytes before it that p's tail hashes: its
 * first bytes only are p's (a banner every file starts with), it is a newer
 * file. Then it is closed (the chain left empty) and logged. */
static bool tail_differs(struct tailstream *s, const struct tailpos *p, const char *path)
{
	if (!p->has_tail || tailfile_v3(s->chain[0].tf) == (int64_t)p->tail)
		return false;
	s->c->env->log(s->c->env, LOG_INFO,
	               "%s: %s starts like the file of the stored offset but does not hold "
	               "the bytes before its position %lld: a newer file",
	               s->path, path, (long long)p->pos);
	tailchain_close(s, &s->chain[0]);
	s->n = 0;
	return true;
}

/* Defined further down, with resume_compressed and resume_floor. */
static char *add_compressed(struct tailstream *s, const struct tailpos *p, int64_t born, int *rc,
                            struct tailid *id);
static void set_unreadable(struct tailstream *s, const struct tailid *id);

/* The generation of p's file (same inode: copytruncate) that held p's
 * position is gone, its copy with it: what it held past the position is
 * counted when a stop saw its size ("seen") or the held set did, else only
 * the file (its bytes not known). Named in one warning. What is read after
 * it (the newer copies, the path) is never counted. */
static void generation_gone(struct tailstream *s, const struct tailpos *p)
{
	struct source_env *env = s->c->env;
	int64_t seen = s->c->heldset != NULL && p->has_id
	                   ? tailheld_size_of(s->c->heldset, s->path, p->dev, p->ino,
	                                      p->has_born ? p->born : 0)
	                   : -1;

	if (p->finished)
		return;
	if (p->has_seen && p->seen > seen)
		seen = p->seen;
	if (seen > p->pos) {
		env->log(env, LOG_WARN,
		         "%s: the content of the stored offset's file (inode %lld) was truncated "
		         "while skiff was stopped and its copy is gone: bytes %lld to %lld were "
		         "not read (counted in bytes_unread_lost and files_gone_unread), nor "
		         "whatever was written to it after them",
		         s->path, (long long)p->ino, (long long)p->pos, (long long)seen);
		env->count(env, "bytes_unread_lost", (uint64_t)(seen - p->pos));
		env->count(env, "files_gone_unread", 1);
		return;
	}
	tailresume_lost(s,
	                "the rest of the file it replaced is gone (its copy too): counted in "
	                "files_gone_unread",
	                0);
}

/* The file at the path is the file of p, but it shrank or has other first
 * bytes: read its copy from p if one exists (compressed since too), then
 * the copies made after it and the path's file from 0. When p's copy is
 * gone, the copies on disk born after p's file are read oldest first (by
 * logrotate's order every copy older than p's was deleted before it; one
 * truncation without a copy, an application's own, may read an older copy
 * again: a duplicate, never a loss), and what p's file held past the
 * position is counted (generation_gone). */
static void resume_replaced(struct tailstream *s, const struct tailpos *p, const char *why)
{
	int64_t csize = 0, born = p->has_born ? p->born : INT64_MIN;
	char *copy = p->has_fp ? tailscan_find_copy(s->path, ROTATED_DIRS(s), p->fp, p->fplen,
	                                            p->pos, NULL, 0, INT64_MIN, &csize)
	                       : NULL;
	bool broken = false;
	struct tailid zid;
	int rc = TAILCHAIN_ERR;

	if (copy == NULL && p->has_fp) {
		/* Its copy compressed since (logrotate's compress): from p on. */
		copy = add_compressed(s, p, born, &rc, &zid);
		broken = copy != NULL && rc == TAILCHAIN_CUT_SHORT; /* logged and counted */
		if (broken)
			set_unreadable(s, &zid);
	}
	s->c->env->count(
	    s->c->env, strncmp(why, "truncated", 9) == 0 ? "truncations" : "fingerprint_resets", 1);
	s->c->env->log(s->c->env, LOG_WARN, "%s was %s while it was not being read: %s", s->path,
	               why,
	               s->n > 0 || (copy != NULL && !broken)
	                   ? "finishing its rotated copy first"
	                   : "reading the copies made after it, then it from the start");
	if (copy != NULL && rc == TAILCHAIN_ERR &&
	    tailchain_add(s, 0, copy, p->pos, true, false) == 0 && tail_differs(s, p, copy)) {
		/* A copy made after p's file was replaced: p's is gone, this one
		 * is read whole, then the rest. */
		generation_gone(s, p);
		tailchain_add(s, 0, copy, 0, true, false);
	} else if (s->n == 0) {
		if (!broken)
			generation_gone(s, p);
		/* The copies born after p's file, oldest first, then the path.
		 * No identity: p's inode is the path's own. Without a birth
		 * (Connect's offset: a position alone) nothing orders them: the
		 * path alone, as Connect would. */
		if (p->has_born)
			tailchain_extend(
			    s, &(struct tailid){.born = born, .mtime = born, .has_btime = true});
	}
	if (s->n > 0) {
		tailchain_extend(s, tailfile_id(s->chain[0].tf)); /* later copies, then the path */
		if (!tailchain_has(s, &(struct tailid){.dev = p->dev, .ino = p->ino}))
			tailchain_add(s, s->n, s->path, 0, false, false);
	}
	free(copy);
	if (s->n == 0)
		tailchain_add(s, 0, s->path, 0, false, false);
}

/* p's file is not where rotation put it: compressed since (app.log.1.gz,
 * another inode)? Found by its first bytes, it is read from p's position
 * (uncompressed bytes), then what came after it. Also when p says it was
 * finished: the compressed siblings after it are those compressed after it.
 * Not while it is still there uncompressed (logrotate writing the copy).
 * Returns true when it was found but cannot be read from p's position
 * (damaged; logged and counted once, in compressed_cut_short), with *zid
 * its id: what comes after it is read next. */
/* p's file compressed since (tailscan_find_compressed, born at or after
 * born), opened into the chain at 0 from p's position; searched again when
 * a rotation renamed it between the search and the open. Returns its path
 * (malloc'd; NULL: not found), *rc (tailchain_add_as) and *id. */
static char *add_compressed(struct tailstream *s, const struct tailpos *p, int64_t born, int *rc,
                            struct tailid *id)
{
	char *z = NULL;

	*rc = TAILCHAIN_MOVED;
	for (int tries = 0; *rc == TAILCHAIN_MOVED && tries < TAILSCAN_RELIST_TRIES; tries++) {
		free(z);
		z = tailscan_find_compressed(s->path, ROTATED_DIRS(s), p->fp, p->fplen, born, id);
		*rc =
		    z != NULL ? tailchain_add_as(s, 0, z, p->pos, true, false, id) : TAILCHAIN_ERR;
	}
	if (*rc == TAILCHAIN_MOVED) {
		free(z); /* renamed under every search: not found */
		z = NULL;
	}
	if (*rc == 0 && tail_differs(s, p, z)) {
		free(z);
		z = NULL;
	}
	return z;
}

static bool resume_compressed(struct tailstream *s, const struct tailpos *p, struct tailid *zid)
{
	char *plain =
	    p->has_id ? tailscan_find_moved(s->path, ROTATED_DIRS(s), p->dev, p->ino) : NULL;
	int64_t born = p->has_born ? p->born : INT64_MIN;
	struct tailid id;
	char *z = NULL;
	bool broken = false, gone;
	int rc = TAILCHAIN_ERR;

	/* Its inode given to a newer file does not make it still there. */
	gone = plain == NULL || tailid_of_path(plain, &id) != 0 || !same_file(&id, p);
	if (gone)
		z = add_compressed(s, p, born, &rc, zid);
	if (z != NULL) {
		if (rc == 0)
			s->c->env->log(s->c->env, LOG_INFO,
			               "%s: the file of the stored offset was compressed "
			               "since: finishing %s",
			               s->path, z);
		broken = rc == TAILCHAIN_CUT_SHORT;
	} else if (gone && !p->finished &&
	           (z = tailscan_find_undecodable(s->path, ROTATED_DIRS(s), born, zid)) != NULL) {
		/* Not one byte decodes: by logrotate's order, its copy. */
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s: %s, the oldest file compressed after the stored offset's, "
		               "cannot be decoded (empty, or damaged from its first bytes): the "
		               "file of the stored offset after byte %lld is lost (counted in "
		               "compressed_cut_short)",
		               s->path, z, (long long)p->pos);
		s->c->env->count(s->c->env, "compressed_cut_short", 1);
		broken = true;
	}
	free(plain);
	free(z);
	return broken;
}

/* p's file is gone. Whether it held more than the position is unknowable
 * now, unless a clean stop saw it on disk ("seen", tailpos.h) or the held
 * set saw it (tailheld.h): then at least its size then less the position
 * was lost. */
static void offset_file_gone(struct tailstream *s, const struct tailpos *p)
{
	struct source_env *env = s->c->env;
	int64_t seen = s->c->heldset != NULL && p->has_id
	                   ? tailheld_size_of(s->c->heldset, s->path, p->dev, p->ino,
	                                      p->has_born ? p->born : 0)
	                   : -1;
	char what[256];

	/* A stop that saw it on disk wrote its size then ("seen"). */
	if (p->has_seen && p->seen > p->pos && p->seen >= seen) {
		env->log(
		    env, LOG_WARN,
		    "%s: the file of the stored offset (inode %lld) is gone: the %lld bytes it "
		    "held after byte %lld at the last stop were not read (counted in "
		    "bytes_unread_lost and files_gone_unread), nor whatever was written to it "
		    "since",
		    s->path, (long long)p->ino, (long long)(p->seen - p->pos), (long long)p->pos);
		env->count(env, "bytes_unread_lost", (uint64_t)(p->seen - p->pos));
		env->count(env, "files_gone_unread", 1);
		return;
	}
	if (seen <= p->pos) {
		snprintf(what, sizeof(what),
		         "the file of the stored offset (inode %lld) is gone: "
		         "whatever it held after byte %lld was not read",
		         (long long)p->ino, (long long)p->pos);
		tailresume_lost(s, what, 0);
		return;
	}
	env->log(env, LOG_WARN,
	         "%s: the file of the stored offset (inode %lld, held when skiff stopped, %lld "
	         "bytes when last seen) is gone: at least %lld bytes after byte %lld were not "
	         "read (counted in bytes_unread_lost and files_gone_unread)",
	         s->path, (long long)p->ino, (long long)seen, (long long)(seen - p->pos),
	         (long long)p->pos);
	env->count(env, "bytes_unread_lost", (uint64_t)(seen - p->pos));
	env->count(env, "files_gone_unread", 1);
}

/* p as a file's identity and birth (ns), for ordering. */
static struct tailid born_at(const struct tailpos *p, int64_t born)
{
	return (struct tailid){
	    .born = born, .mtime = born, .has_btime = true, .dev = p->dev, .ino = p->ino};
}

/* chain[0], a compressed file found for p: its floor (tailchain_set_floor)
 * is p's file when p named its uncompressed original, else the floor p
 * carries ("after") when it named the compressed file itself. */
static void resume_floor(struct tailstream *s, const struct tailpos *p)
{
	const struct tailid *id;
	struct tailid floor;
	bool itself;

	if (s->n == 0)
		return;
	id = tailfile_id(s->chain[0].tf);
	itself = p->has_id && id->dev == p->dev && id->ino == p->ino;
	floor = born_at(p, itself ? p->after : p->born);
	if (itself ? p->has_after && p->after != TAILPOS_AFTER_UNKNOWN : p->has_born)
		tailchain_set_floor(s, 0, &floor);
}

/* Remembers id as the stored offset's file found damaged (s->unreadable). */
static void set_unreadable(struct tailstream *s, const struct tailid *id)
{
	if (s->unreadable == NULL)
		s->unreadable = malloc(sizeof(*s->unreadable));
	if (s->unreadable != NULL)
		*s->unreadable = *id;
}

/* The floor of the compressed siblings found after p's file when it is gone
 * (tailchain_extend_z): after p named a compressed file, the one it carries
 * (none: every uncompressed sibling may be newer); after an uncompressed
 * one, the file itself, by its birth (after): the uncompressed siblings born
 * before it were read before it - logrotate's .backup of its rename race,
 * never compressed, found after a newer .gz (issue 22: ~20 lines shipped
 * twice at a restart). Without a birth (Connect's offsets) none. */
static const struct tailid *gone_floor(const struct tailpos *p, const struct tailid *after,
                                       const struct tailid *floor)
{
	if (p->has_after)
		return p->after != TAILPOS_AFTER_UNKNOWN ? floor : NULL;
	return p->has_born ? after : NULL;
}

/* The path names another file, or nothing: find p's file where rotation put
 * it, then what came after it. */
static void resume_moved(struct tailstream *s, const struct tailpos *p, bool reused)
{
	/* A file already finished needs no finding: it only orders the rest.
	 * Its inode given to the file now at the path: it is gone. */
	char *moved = p->has_id && !p->finished && !reused
	                  ? tailscan_find_moved(s->path, ROTATED_DIRS(s), p->dev, p->ino)
	                  : NULL;
	struct tailid after = born_at(p, p->born), floor = born_at(p, p->after);
	struct tailid want = {.dev = p->dev, .ino = p->ino}, id, zid;

	if (moved != NULL && tailid_of_path(moved, &id) == 0 && !same_file(&id, p)) {
		/* ext4 gave the deleted file's inode to a newer one. */
		s->c->env->log(s->c->env, LOG_INFO,
		               "%s: %s has the stored offset's inode but was "
		               "born later: a newer file, not the one of the offset",
		               s->path, moved);
		free(moved);
		moved = NULL;
	}
	if (moved != NULL &&
	    tailchain_add_as(s, 0, moved, p->pos, false, false, &want) == TAILCHAIN_MOVED) {
		free(moved); /* renamed again meanwhile */
		moved = tailscan_find_moved(s->path, ROTATED_DIRS(s), p->dev, p->ino);
		if (moved != NULL)
			tailchain_add_as(s, 0, moved, p->pos, false, false, &want);
	}
	if (s->n > 0 &&
	    !(same_file(tailfile_id(s->chain[0].tf), p) && place_matches(s->chain[0].tf, p))) {
		s->c->env->count(s->c->env, "fingerprint_resets", 1);
		tailchain_close(s, &s->chain[0]);
		s->n = 0;
	}
	free(moved);
	if (s->n == 0 && p->has_fp && resume_compressed(s, p, &zid))
		/* Counted: the rest comes after it. Out of memory, it is read
		 * again, and found damaged again. */
		set_unreadable(s, &zid);
	else if (s->n == 0 && !p->finished && (p->has_id || p->pos > 0)) {
		/* A position 0 alone (Connect's, or an operator's) names no
		 * file that was ever read: nothing of one can be lost. */
		if (reused) /* its inode given to the file now at the path */
			s->c->env->count(s->c->env, "fingerprint_resets", 1);
		offset_file_gone(s, p);
	}
	resume_floor(s, p);
	tailchain_extend_z(s, s->n > 0 ? NULL : (p->has_born ? &after : NULL),
	                   gone_floor(p, &after, &floor));
}

static void load_committed(struct tailstream *s)
{
	const char *json = s->c->env->committed(s->c->env, s->part);

	s->resolved = true;
	if (json != NULL && tailpos_parse(json, &s->saved) != 0)
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s: stored offset %s has no position: "
		               "treating the file as new",
		               s->path, json);
}

/* Stores where reading starts as the partition's offset, when none was
 * ever committed (the anchor: see the top of tailstream.c). */
static void anchor(struct tailstream *s)
{
	struct src_offset at;

	if (s->n == 0 || s->c->env->anchor == NULL)
		return;
	at = tailchain_offset(s);
	s->c->env->anchor(s->c->env, s->part, &at);
}

/* First sight of a path with no stored place. */
static void resume_new(struct tailstream *s)
{
	struct tailfile *tf;

	if ((s->flags & TAILSTREAM_HISTORY) && !(s->flags & TAILSTREAM_FROM_END))
		tailchain_extend(s, &(struct tailid){.born = INT64_MIN, .mtime = INT64_MIN});
	else
		tailchain_add(s, 0, s->path, 0, false, true);
	if (s->n > 0 && (s->flags & TAILSTREAM_FROM_END)) {
		tf = s->chain[0].tf;
		if (tailfile_start_at_end(tf) == 0 && tailfile_pos(tf) > 0)
			s->c->env->log(s->c->env, LOG_INFO,
			               "%s: read.from=end: starting at byte %lld", s->path,
			               (long long)tailfile_pos(tf));
	}
	anchor(s);
}

static void resume(struct tailstream *s, struct tailpos *used);

/* ---- the held set of the last run ---------------------------------------- */

/* True when f, a file of the held set, is on disk: by its inode (and birth)
 * where rotation put it, or compressed since, by its first bytes. */
static bool held_on_disk(const struct tailstream *s, const struct tailheld_file *f)
{
	struct tailid id;
	char *found;
	bool there = false;

	/* Its inode alone is no proof: ext4 gives it to the next file made
	 * (the compressed copy of another). */
	found = tailscan_find_moved(s->path, ROTATED_DIRS(s), f->dev, f->ino);
	if (found != NULL && tailid_of_path(found, &id) == 0)
		there = !id.has_btime || id.born == f->born;
	free(found);
	if (!there && f->fplen > 0 && !tailz_named(f->name)) {
		found = tailscan_find_compressed(s->path, ROTATED_DIRS(s), f->fp, f->fplen, f->born,
		                                 NULL);
		there = found != NULL;
		free(found);
	}
	return there;
}

/* The index of the first file of f[0..n) that comes after p's file, n when
 * none is known to: those after p's own file in the set's order, else those
 * born after it. Without p's identity and birth, or with p naming a
 * compressed file (born when compressed), the order is not known: none. */
static size_t held_after(const struct tailheld_file *f, size_t n, const struct tailpos *p)
{
	for (size_t i = 0; i < n; i++)
		if (p->has_id && f[i].dev == p->dev && f[i].ino == p->ino &&
		    (!p->has_born || f[i].born == p->born))
			return i + 1;
	if (!p->has_born || p->has_after)
		return n;
	for (size_t i = 0; i < n; i++)
		if (f[i].born > p->born)
			return i;
	return n;
}

/* At the first resume: the files the last run held for s (tailheld.h)
 * that come after the stored offset's file p and are found nowhere now
 * were deleted while skiff was not running: each is named, its bytes when
 * last seen counted as lost (at least: more may have been written to it
 * after), its lines not known. The stored offset's own file is counted
 * where it is found gone (offset_file_gone). */
static void settle_held(struct tailstream *s, const struct tailpos *p)
{
	struct source_env *env = s->c->env;
	struct tailheld_file *f = NULL;
	size_t n = 0;

	if (s->c->heldset == NULL || tailheld_take(s->c->heldset, s->path, &f, &n) != 0)
		return;
	for (size_t i = p->known ? held_after(f, n, p) : n; i < n; i++) {
		if (held_on_disk(s, &f[i]))
			continue;
		/* The stored offset's file opened compressed (born after it):
		 * counted where it is found gone (offset_file_gone), not twice. */
		if (tailz_named(f[i].name) && f[i].fplen > 0 && p->has_fp &&
		    f[i].fplen == p->fplen && f[i].fp == p->fp)
			continue;
		if (f[i].size > 0) {
			env->log(
			    env, LOG_WARN,
			    "%s: rotated file inode %lld (opened as %s), held when skiff stopped, "
			    "is gone: at least %lld bytes lost, its size when last seen (counted "
			    "in bytes_unread_lost and files_gone_unread; its lines not known)",
			    s->path, (long long)f[i].ino, f[i].name, (long long)f[i].size);
			env->count(env, "bytes_unread_lost", (uint64_t)f[i].size);
		} else {
			env->log(
			    env, LOG_WARN,
			    "%s: rotated file inode %lld (opened as %s), held when skiff stopped, "
			    "is gone unread (counted in files_gone_unread; its bytes not known)",
			    s->path, (long long)f[i].ino, f[i].name);
		}
		env->count(env, "files_gone_unread", 1);
	}
	tailheld_files_free(f, n);
}

/* Gives a stream without files its files (see the top of tailstream.c). */
void tailresume_resume(struct tailstream *s)
{
	bool first = !s->resolved;
	struct tailpos p = {0};

	resume(s, &p);
	if (first)
		settle_held(s, &p);
}

static void resume(struct tailstream *s, struct tailpos *used)
{
	struct tailpos p;
	struct tailfile *live = NULL;
	bool first = !s->resolved, reused;

	if (first)
		load_committed(s);
	p = s->saved;
	*used = p;
	if (!p.known) {
		resume_new(s);
		s->flags &= (uint8_t)~TAILSTREAM_FROM_END;
		return;
	}
	if (tailfile_open(s->path, 1, 0, &live, NULL, 0) != 0 && p.finished)
		return; /* nothing new at the path yet */
	reused = live != NULL && p.has_id && tailfile_id(live)->dev == p.dev &&
	         tailfile_id(live)->ino == p.ino && !same_file(tailfile_id(live), &p);
	/* Not a loss by itself: its file may be rotated or compressed (read
	 * from the position), or finished; counted only when it is gone. */
	if (reused)
		s->c->env->log(s->c->env, LOG_INFO,
		               "%s: the stored offset's inode now belongs to a "
		               "newer file: looking for its rotated files",
		               s->path);
	if (live != NULL && !reused && same_file(tailfile_id(live), &p)) {
		bool shrank = tailfile_size(live) < p.pos, same = place_matches(live, &p);
		/* Its first KiB and length are no proof when every file starts
		 * with the same banner: copytruncate, then as many bytes again. */
		bool rewritten = same && p.has_tail && !tailfile_tail_at(live, p.pos, p.tail);

		tailfile_close(live);
		if (same && !rewritten)
			tailchain_add(s, 0, s->path, p.pos, false, true);
		else
			resume_replaced(s, &p,
			                shrank ? "truncated"
			                : rewritten
			                    ? "truncated and written past its position again"
			                    : "replaced");
	} else {
		tailfile_close(live);
		resume_moved(s, &p, reused);
	}
	if (s->n == 0 && s->no_room)
		return; /* the same place, once a descriptor is free */
	s->suspended = false;
	if (s->n > 0 || !p.finished)
		s->saved = (struct tailpos){.known = true,
		                            .finished = true,
		                            .pos = p.pos,
		                            .has_id = p.has_id,
		                            .dev = p.dev,
		                            .ino = p.ino,
		                            .has_born = p.has_born,
		                            .born = p.born,
		                            .has_after = p.has_after,
		                            .after = p.after};
	if (s->n > 0)
		s->saved.known = false; /* the chain holds the place now */
}
