/* tailstream: a path and the succession of files it names.
 *
 * Offset safety. Every record of a stream goes to the stream's one source
 * partition, and records are produced in chain order: all of chain[0] before
 * anything of chain[1] (one exception, late writes, below). The worker
 * commits the offset of the last record of the contiguous acknowledged
 * prefix, so the committed offset (F, p) - file identity F =
 * dev+ino+birth time+fingerprint, position p - always means: every byte of
 * every file before F in the stream's order, and F's bytes before p, are in
 * Kafka; nothing after it is known to be. While a rotated file is being
 * finished, records of it and of its successor may both be in flight; the
 * committed offset then names the rotated file until its last record is
 * acknowledged, and the successor only after that.
 *
 * A restart (or a reopen) with (F, p) therefore does exactly this:
 *   - F is still at the path (same inode and birth time, same fingerprint,
 *     size >= p): resume at p.
 *   - F is at the path but shorter than p or with other first bytes
 *     (copytruncate, truncation): look among the path's rotated siblings
 *     for a copy with F's fingerprint and read it from p, then the newer
 *     copies, then the path's file from 0. No copy: count the loss, read the
 *     path's file from 0.
 *   - The path names another file (or a newer file got F's inode: its birth
 *     time differs) or nothing: find F by inode in the path's directory (and
 *     its target's), verify its birth time and fingerprint, read it from p;
 *     then the rotated siblings born after F, oldest first (several
 *     rotations while stopped); then the path's file from 0. F not found
 *     (deleted while stopped): count it, and continue with the siblings born
 *     after the birth time stored in the offset. An offset that skiff wrote
 *     after letting go of F at p says so ("finished"): F is then not looked
 *     for, and its absence loses nothing and is not reported.
 * Files before F are never read again and F's first p bytes are never read
 * again, so duplicates are bounded by the records in flight at a crash.
 *
 * Anchors. A stream that starts reading a file while its partition has no
 * committed offset (a new path, a new file under a glob, read.from=end)
 * first stores where it starts, (F, 0) or (F, the end), through
 * env->anchor; the worker writes it at once, the anchors of one turn in one
 * write. It is the position before any record of the partition, so it
 * passes no unacknowledged record and the invariant holds; it is stored
 * only where no offset is, so it never moves one back, and an idle skiff
 * with stored offsets writes nothing. Without it, lines read but never
 * acknowledged (a broker down, then a stop or a crash before the first
 * flush) were lost when the file was rotated before the next start: with
 * no offset the restart read the path's new file from 0 and never looked
 * at the rotated one. With it the restart is one of the cases above: F is
 * found by identity among the rotated siblings and read from its start,
 * and read.from=end is not taken again (lines written while skiff was
 * stopped are read).
 *
 * A file is lost only when it was deleted before skiff could finish it while
 * skiff was not holding it open, which is counted.
 *
 * Compressed and moved rotations. The siblings are those in the path's
 * directory and in rotated.dirs (olddir). A compressed sibling (.gz, .zst,
 * .xz: tailz.h) is read as its uncompressed bytes, and positions and
 * fingerprints count those, so F compressed since (another inode) is found
 * by its fingerprint and read from p; it is complete (done at its end).
 * logrotate compresses oldest first, so every numbered compressed sibling is
 * older than every uncompressed one, and compressed siblings are born (made)
 * in rotation order: after a compressed F come the compressed siblings born
 * after it, then the uncompressed ones born after F's floor, the uncompressed
 * file read before F (all of them when it is not known): logrotate's
 * NAME-YYYYMMDDHH.backup is never compressed, so one older than F's original
 * stays uncompressed beside it (tailchain_set_floor). F's offset carries the
 * floor's birth ("after"). After an uncompressed F, compressed
 * siblings only when F itself is gone: those born after F's compressed copy
 * (found by its first bytes), else after F's birth. A compressed file whose
 * first bytes begin an uncompressed sibling (or the file at the path) is
 * still being written by logrotate and is skipped: the original is read. F
 * held open while it is compressed and deleted is read to its end through
 * its descriptor, as any deleted file. A compressed file cut short or corrupt
 * ends where its data ends (counted: compressed_cut_short).
 *
 * While running, the chain holds every file from F on open (up to
 * CHAIN_MAX), so a rotated file deleted right away is still read to its
 * end. Files beyond CHAIN_MAX wait unopened and are listed at every look:
 * one deleted before skiff could open it is named in a warning and counted
 * (files_gone_unread). A file renamed between a listing and its open is
 * looked for again in a new listing.
 *
 * A rotated file at its end is let go as soon as a later file has bytes
 * (the writer moved on), else once it has been quiet for rotate.wait.ms.
 * Let go early, it stays open ("lingers") until it has been quiet for
 * rotate.wait.ms: lines written to it meanwhile (a writer that has not
 * reopened yet, or one of several) are the one exception to chain order.
 * They ship after what the chain handed out so far, carrying the chain's
 * current offset (late_lines): that offset already covers them, so a crash
 * - not a clean stop - while they are in flight loses them, as a stop
 * before they are written does (as for any write to a file skiff let go).
 * The files of the chain stay in order and are never affected.
 *
 * A file that shrinks, or whose first bytes change, under skiff
 * (copytruncate) is followed by its copy: the rotated sibling with its
 * fingerprint (of the bytes read, or of the bytes it held when it was
 * opened) is read from the position, then the file again from 0. What the
 * writer added between logrotate's copy and its truncation exists nowhere
 * any more: counted in bytes_unread_lost. */
#include "tailstream.h"
#include "clock.h"

#include "log.h"
#include "tailchain.h"
#include "tailscan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

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

static void lost(struct tailstream *s, const char *what, int64_t bytes)
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
	tailfile_close(s->chain[0].tf);
	s->c->nopen--;
	s->n = 0;
	return true;
}

/* The file at the path is the file of p, but it shrank or has other first
 * bytes: read its copy from p if one exists, then the path's file from 0. */
static void resume_replaced(struct tailstream *s, const struct tailpos *p, const char *why)
{
	int64_t csize = 0;
	char *copy = p->has_fp ? tailscan_find_copy(s->path, ROTATED_DIRS(s), p->fp, p->fplen,
	                                            p->pos, NULL, 0, INT64_MIN, &csize)
	                       : NULL;

	s->c->env->count(
	    s->c->env, strncmp(why, "truncated", 9) == 0 ? "truncations" : "fingerprint_resets", 1);
	s->c->env->log(s->c->env, LOG_WARN, "%s was %s while it was not being read: %s", s->path,
	               why,
	               copy ? "finishing its rotated copy first" : "reading it from the start");
	if (copy != NULL && tailchain_add(s, 0, copy, p->pos, true, false) == 0 &&
	    tail_differs(s, p, copy)) {
		/* A copy made after p's file was replaced: p's is gone, this one
		 * is read whole (failing that, the path alone). */
		if (!p->finished)
			lost(s,
			     "the rest of the file it replaced is gone: counted in "
			     "files_gone_unread",
			     0);
		tailchain_add(s, 0, copy, 0, true, false);
	} else if (s->n == 0 && !p->finished) {
		lost(s, "the rest of the file it replaced is gone: counted in files_gone_unread",
		     0);
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

	*rc = -2;
	for (int tries = 0; *rc == -2 && tries < TAILSCAN_RELIST_TRIES; tries++) {
		free(z);
		z = tailscan_find_compressed(s->path, ROTATED_DIRS(s), p->fp, p->fplen, born, id);
		*rc = z != NULL ? tailchain_add_as(s, 0, z, p->pos, true, false, id) : -1;
	}
	if (*rc == -2) {
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
	int rc = -1;

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
		broken = rc == -3;
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
	if (itself ? p->has_after : p->has_born)
		tailchain_set_floor(s, 0, &floor);
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
	if (moved != NULL && tailchain_add_as(s, 0, moved, p->pos, false, false, &want) == -2) {
		free(moved); /* renamed again meanwhile */
		moved = tailscan_find_moved(s->path, ROTATED_DIRS(s), p->dev, p->ino);
		if (moved != NULL)
			tailchain_add_as(s, 0, moved, p->pos, false, false, &want);
	}
	if (s->n > 0 &&
	    !(same_file(tailfile_id(s->chain[0].tf), p) && place_matches(s->chain[0].tf, p))) {
		s->c->env->count(s->c->env, "fingerprint_resets", 1);
		tailfile_close(s->chain[0].tf);
		s->c->nopen--;
		s->n = 0;
	}
	free(moved);
	if (s->n == 0 && p->has_fp && resume_compressed(s, p, &zid))
		s->unreadable = zid; /* counted: the rest comes after it */
	else if (s->n == 0 && !p->finished) {
		char what[160];

		/* Whether it held more than the position is unknowable now. */
		snprintf(what, sizeof(what),
		         "the file of the stored offset (inode %lld) is gone: "
		         "whatever it held after byte %lld was not read",
		         (long long)p->ino, (long long)p->pos);
		if (reused) /* its inode given to the file now at the path */
			s->c->env->count(s->c->env, "fingerprint_resets", 1);
		lost(s, what, 0);
	}
	resume_floor(s, p);
	tailchain_extend_z(s, s->n > 0 ? NULL : (p->has_born ? &after : NULL),
	                   p->has_after ? &floor : NULL);
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
 * ever committed (the anchor: see the top of this file). */
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

/* Gives a stream without files its files (see the top of this file). */
static void resume(struct tailstream *s)
{
	struct tailpos p;
	struct tailfile *live = NULL;
	bool first = !s->resolved, reused;

	if (first)
		load_committed(s);
	p = s->saved;
	if (!p.known) {
		resume_new(s);
		s->flags &= ~(unsigned)TAILSTREAM_FROM_END;
		return;
	}
	if (tailfile_open(s->path, 1, 0, &live) != 0 && p.finished)
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

/* ---- following ---------------------------------------------------------- */

/* Notices a rotation: the path names another file than the chain's last. */
static void refresh(struct tailstream *s)
{
	struct tailid live;

	if (s->n == 0)
		return;
	if (tailid_of_path(s->path, &live) != 0 ||
	    !tailid_same(&live, tailfile_id(s->chain[s->n - 1].tf)) || s->moved)
		tailchain_extend(s, NULL);
}

/* Puts the path's rotated siblings born after chain[0], a copy, before
 * chain[at], the truncated file: the copies later copytruncates made while
 * skiff was not reading, oldest first. */
static void newer_copies(struct tailstream *s, size_t at)
{
	struct tailscan_entry *fam = NULL;
	size_t nfam = 0;

	if (tailscan_family(s->path, ROTATED_DIRS(s), &fam, &nfam) != 0)
		return;
	for (size_t i = 0; i < nfam; i++)
		if (fam[i].kind == TAILID_ROTATED && !tailchain_has(s, &fam[i].id) &&
		    tailid_cmp_age(&fam[i].id, tailfile_id(s->chain[0].tf)) > 0 &&
		    tailchain_add_as(s, at, fam[i].path, 0, true, false, &fam[i].id) == 0)
			at++;
	tailscan_free(fam, nfam);
}

/* chain[0] shrank below its position, or its first bytes or those before
 * its position changed (see replaced): finish its copy, if logrotate made
 * one, and the copies made after it, then read it again from 0. The copy is
 * the one that holds the bytes read up to the position. */
static void truncated(struct tailstream *s, int64_t size)
{
	struct link *l = &s->chain[0];
	struct tailfile *tf = l->tf;
	int64_t pos = tailfile_pos(tf), fplen = pos < TAILID_FP_MAX ? pos : TAILID_FP_MAX;
	int64_t csize = 0, before = l->max_size > pos ? l->max_size : pos;
	uint64_t fp = tailfile_fp(tf);
	const void *last;
	size_t last_len;
	bool alone = s->n == 1;
	char *copy;

	if (l->peek_len > fplen) {
		fp = l->peek_fp; /* it held more than skiff had read when it was opened */
		fplen = l->peek_len;
	}
	tailfile_last(tf, &last, &last_len);
	/* With nothing to recognise the copy by (the file was empty when it was
	 * opened, or nothing was read since the last truncation), only a copy
	 * made since then will do: an older one was read already. */
	copy = tailscan_find_copy(s->path, ROTATED_DIRS(s), fp, fplen, pos, last, last_len,
	                          fplen > 0 ? INT64_MIN : l->added_ns, &csize);
	s->c->env->count(s->c->env, "truncations", 1);
	tailfile_rewind(tf);
	l->added_ns = clock_wall_ns();
	/* size may predate the truncation (measured before its bytes were found
	 * changed): taken as the new size, it would make the file seem truncated
	 * again at 0, and its copy be read twice. */
	if ((size = tailfile_size(tf)) < 0)
		size = 0;
	l->seen_size = l->max_size = size;
	l->peek_len = 0;
	if (copy != NULL && tailchain_add(s, 0, copy, pos, true, false) == 0) {
		s->c->env->log(s->c->env, LOG_INFO,
		               "%s was truncated at byte %lld: finishing "
		               "its copy %s, then reading it from the start",
		               s->path, (long long)pos, copy);
		before = before > csize ? before - csize : 0;
		if (alone)
			newer_copies(s, 1);
	} else {
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s was truncated at byte %lld: reading it "
		               "from the start",
		               s->path, (long long)pos);
		before -= pos;
	}
	if (before > 0)
		lost(s,
		     "bytes written just before a truncation were not read (the copytruncate "
		     "window)",
		     before);
	free(copy);
}

/* For how long l's file has not been written to, in ms: by its mtime, or
 * since skiff last saw it grow, whichever is longer. */
static int64_t quiet_ms(const struct link *l, int64_t now)
{
	struct tailid id;
	int64_t seen = now - l->quiet_since, by_mtime = 0;

	if (tailid_of_fd(tailfile_fd(l->tf), &id) == 0)
		by_mtime = (clock_wall_ns() - id.mtime) / 1000000;
	return by_mtime > seen ? by_mtime : seen;
}

/* True when l's file shrank, or its first bytes, or the bytes just before
 * the position, are no longer those skiff read or saw when it opened it:
 * truncated (copytruncate) or rewritten, possibly past the position. */
static bool replaced(const struct link *l, int64_t size)
{
	int64_t pos = tailfile_pos(l->tf), fplen = pos < TAILID_FP_MAX ? pos : TAILID_FP_MAX;

	if (l->copy)
		return false;
	if (size < pos || size < l->max_size)
		return true;
	if (fplen > 0 && !tailfile_matches(l->tf, tailfile_fp(l->tf), fplen))
		return true;
	if (!tailfile_still_there(l->tf))
		return true; /* truncated, then written past the position again */
	return l->peek_len > fplen && !tailfile_matches(l->tf, l->peek_fp, l->peek_len);
}

/* How long l, rotated away or deleted, may still be written to, in ms (<= 0:
 * no longer): rotate.wait.ms since skiff noticed, and since its last write
 * by its mtime (so files queued behind a busy one do not each wait in turn)
 * or, when the clocks disagree, as seen from here. A writer that has not
 * reopened yet, or one of several, may still add lines to it until then. */
static int64_t wait_left(const struct tailstream *s, const struct link *l, int64_t now)
{
	int64_t wait = s->c->rotate_wait_ms - quiet_ms(l, now);

	if (wait < s->c->rotate_wait_ms - (now - l->moved_at))
		wait = s->c->rotate_wait_ms - (now - l->moved_at);
	return wait;
}

/* True when a file after chain[0] has bytes skiff has not read: the writer
 * moved on to it. */
static bool successor_has_bytes(const struct tailstream *s)
{
	for (size_t i = 1; i < s->n; i++)
		if (tailfile_size(s->chain[i].tf) > tailfile_pos(s->chain[i].tf))
			return true;
	return false;
}

/* At the end of chain[0]: decides whether it is done. Returns 1 to read on
 * (a final read, or the next file), 0 to wait. */
static int at_end(struct tailstream *s, int64_t now)
{
	struct link *l = &s->chain[0];
	int64_t size = tailfile_size(l->tf), wait;

	if (size >= 0 && replaced(l, size)) {
		truncated(s, size);
		return 1;
	}
	if (size > l->max_size)
		l->max_size = size;
	if (size != l->seen_size) {
		l->seen_size = size;
		l->quiet_since = now;
	}
	if (l->final || l->copy) {
		if (!l->final) {
			l->final = true; /* a copy is complete: its partial line ships */
			return 1;
		}
		tailchain_pop(s);
		return s->n > 0;
	}
	if (s->n == 1)
		refresh(s);
	if (s->n == 1 && !s->moved)
		return 0;
	/* Rotated away or deleted: let go once nobody writes to it any more
	 * (wait_left), or at once when a later file has bytes: the writer moved
	 * on, and waiting would only hold up the files behind it, which
	 * rotations may delete meanwhile. It then lingers, open, for late
	 * writes until wait_left says so (read_lingering). */
	if (l->moved_at < 0)
		l->moved_at = now;
	wait = wait_left(s, l, now);
	if (wait <= 0 || successor_has_bytes(s)) {
		l->final = true;
		l->linger = wait > 0;
		return 1;
	}
	/* The files behind it are not watched: look at them again soon. */
	s->deadline = now + (s->n > 1 && wait > LINGER_POLL_MS ? LINGER_POLL_MS : wait);
	return 0;
}

static void count_stats(struct tailstream *s, const struct tailfile_stats *st)
{
	struct source_env *env = s->c->env;

	if (st->split)
		env->count(env, "lines_split", st->split);
	if (st->truncated)
		env->count(env, "lines_truncated", st->truncated);
	if (st->skipped)
		env->count(env, "lines_skipped", st->skipped);
	if (st->partial)
		env->count(env, "partial_lines_shipped", st->partial);
}

/* Reads late writes to the files let go early into out[*n..max): they ship
 * after everything the chain handed out so far, with the chain's offset (see
 * the top of this file). Closes each once wait_left says it is quiet, after
 * a final read. Returns 1 when out is full, 0, or TAILSTREAM_ERR_NOMEM. */
static int read_lingering(struct tailstream *s, struct tailbuf *buf, struct tailline *out,
                          size_t max, size_t *n, int64_t now, struct tailfile_stats *st)
{
	struct src_offset at = tailchain_offset(s);
	size_t i = 0;

	while (i < s->nlinger) {
		struct link *l = &s->linger[i];
		int64_t size = tailfile_size(l->tf), pos = tailfile_pos(l->tf);
		bool done = size < pos || wait_left(s, l, now) <= 0;
		size_t got = 0;
		int rc = TAILFILE_EOF;

		if (size != l->seen_size) {
			l->seen_size = size;
			l->quiet_since = now;
		}
		if (*n >= max)
			return 1;
		if (size > pos || done)
			rc = tailfile_read(l->tf, buf, out + *n, max - *n, &got, done, st);
		for (size_t k = 0; k < got; k++)
			out[*n + k].after = at;
		if (got > 0 && tailchain_hold(s->c, at.ref) != 0)
			return TAILSTREAM_ERR_NOMEM;
		if (got > 0)
			s->c->env->count(s->c->env, "late_lines", got);
		*n += got;
		if (rc == TAILFILE_MORE)
			return 1;
		if (!done && rc >= 0) {
			i++;
			continue;
		}
		tailfile_close(l->tf);
		s->c->nopen--;
		memmove(&s->linger[i], &s->linger[i + 1], (s->nlinger - i - 1) * sizeof(*l));
		s->nlinger--;
	}
	return 0;
}

/* The deadline at which lingering files want another look. */
static void linger_deadline(struct tailstream *s, int64_t now)
{
	if (s->nlinger > 0 && (s->deadline < 0 || s->deadline > now + LINGER_POLL_MS))
		s->deadline = now + LINGER_POLL_MS;
}

int tailstream_read(struct tailstream *s, struct tailbuf *buf, struct tailline *out, size_t max,
                    size_t *n, int64_t now, char *errbuf, size_t errlen)
{
	struct tailfile_stats st = {0};
	int rc = 0;

	*n = 0;
	s->ready = false;
	s->deadline = -1;
	if (s->nlinger > 0 && (rc = read_lingering(s, buf, out, max, n, now, &st)) != 0) {
		count_stats(s, &st);
		s->ready = rc == 1;
		if (rc < 0)
			snprintf(errbuf, errlen, "%s: out of memory", s->path);
		return rc;
	}
	if (s->n == 0) {
		count_stats(s, &st);
		linger_deadline(s, now);
		return 0;
	}
	while (s->n > 0 && *n < max) {
		size_t got = 0;

		/* Before reading on at its position: is it still the file read up
		 * to there? Emptied while it waited in the chain, or truncated and
		 * written past the position while skiff was not reading (a full
		 * producer queue, a pause), it would ship a fragment and skip
		 * what its copies hold. */
		int64_t size = tailfile_size(s->chain[0].tf);

		s->chain[0].started = true;
		if (size >= 0 && replaced(&s->chain[0], size))
			truncated(s, size);

		rc = tailfile_read(s->chain[0].tf, buf, out + *n, max - *n, &got, s->chain[0].final,
		                   &st);
		if (got > 0 && tailchain_hold(s->c, out[*n].after.ref) != 0) {
			snprintf(errbuf, errlen, "%s: out of memory", s->path);
			count_stats(s, &st);
			return TAILSTREAM_ERR_NOMEM;
		}
		*n += got;
		if (got > 0)
			s->last_active = now;
		if (rc < 0) {
			snprintf(errbuf, errlen, "%s: read: %s", tailfile_path(s->chain[0].tf),
			         strerror(-rc));
			count_stats(s, &st);
			return rc == -ENOMEM ? TAILSTREAM_ERR_NOMEM : TAILSTREAM_ERR;
		}
		if (rc == TAILFILE_MORE)
			break;
		/* At the end of chain[0]: done with it, or wait. Lines of the next
		 * file may follow in the same batch: they come after it in order. */
		if (!at_end(s, now)) {
			rc = 0;
			break;
		}
		rc = TAILFILE_MORE;
	}
	count_stats(s, &st);
	linger_deadline(s, now);
	s->ready = rc == TAILFILE_MORE && s->n > 0;
	return s->ready ? 1 : 0;
}

void tailstream_check(struct tailstream *s, int64_t now)
{
	if (tailchain_unchanged(s))
		return; /* idle and untouched: no open, no fingerprint read */
	if (s->n == 0) {
		s->no_room = false;
		resume(s);
		if (s->no_room)
			s->deadline = now + 200;
		if (s->n == 0 && !s->missing_logged && !(s->flags & TAILSTREAM_QUIET) &&
		    !s->saved.known && !s->irregular_logged) {
			s->c->env->log(s->c->env, LOG_WARN,
			               "%s does not exist (yet): waiting for it", s->path);
			s->missing_logged = true;
		}
		if (s->n > 0)
			s->missing_logged = false;
	} else {
		refresh(s);
	}
	if (s->n > 0)
		s->ready = true;
}

/* ---- the rest ------------------------------------------------------------ */

struct tailstream *tailstream_new(struct tailctx *c, const char *path, struct partition *part,
                                  unsigned flags)
{
	struct tailstream *s = calloc(1, sizeof(*s));
	const char *slash;

	if (s == NULL)
		return NULL;
	s->c = c;
	s->part = part;
	s->flags = flags;
	s->wd = -1;
	s->deadline = -1;
	s->path = strdup(path);
	s->dir = tailscan_dirname(path);
	if (s->path == NULL || s->dir == NULL) {
		tailstream_free(s);
		return NULL;
	}
	slash = strrchr(s->path, '/');
	s->base = slash ? slash + 1 : s->path;
	return s;
}

bool tailstream_idle(const struct tailstream *s)
{
	const struct link *l = s->chain;

	if (s->n != 1 || s->nlinger > 0 || s->moved || l->copy || l->final || l->seen_size < 0 ||
	    l->seen_size > tailfile_pos(l->tf) + (int64_t)s->c->max_line)
		return false;
	/* Marked ready (an event, a rescan) but nothing new: idle all the same. */
	return !s->ready || tailfile_size(l->tf) == l->seen_size;
}

bool tailstream_suspend(struct tailstream *s)
{
	struct tailfile *tf;
	const struct tailid *id;

	if (!tailstream_idle(s))
		return false;
	tf = s->chain[0].tf;
	id = tailfile_id(tf);
	s->saved = (struct tailpos){.known = true,
	                            .has_id = true,
	                            .has_fp = true,
	                            .has_born = true,
	                            .pos = tailfile_pos(tf),
	                            .dev = id->dev,
	                            .ino = id->ino,
	                            .fp = tailfile_fp(tf),
	                            .born = id->born};
	s->saved.fplen = s->saved.pos < TAILID_FP_MAX ? s->saved.pos : TAILID_FP_MAX;
	if (tailid_of_fd(tailfile_fd(tf), &s->idle_id) != 0)
		s->idle_id.size = -1; /* never matches: the next check opens it */
	s->idle_left =
	    s->chain[0].seen_size > s->saved.pos ? s->chain[0].seen_size - s->saved.pos : 0;
	/* The inotify watch stays: growth wakes the stream, which reopens. */
	tailfile_close(tf);
	s->c->nopen--;
	s->n = 0;
	s->suspended = true;
	return true;
}

int64_t tailstream_deadline(const struct tailstream *s)
{
	return s->deadline;
}

int64_t tailstream_last_active(const struct tailstream *s)
{
	return s->last_active;
}

bool tailstream_ready(const struct tailstream *s)
{
	return s->ready;
}

void tailstream_set_ready(struct tailstream *s)
{
	s->ready = true;
}

bool tailstream_quiet(const struct tailstream *s)
{
	return tailchain_quiet(s);
}

int tailstream_wd(const struct tailstream *s)
{
	return s->wd;
}

const char *tailstream_path(const struct tailstream *s)
{
	return s->path;
}

const char *tailstream_dir(const struct tailstream *s)
{
	return s->dir;
}

const char *tailstream_base(const struct tailstream *s)
{
	return s->base;
}

struct partition *tailstream_partition(const struct tailstream *s)
{
	return s->part;
}

size_t tailstream_open_files(const struct tailstream *s)
{
	return s->n;
}

void tailstream_free(struct tailstream *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		tailfile_close(s->chain[i].tf);
		s->c->nopen--;
	}
	for (size_t i = 0; i < s->nlinger; i++) {
		tailfile_close(s->linger[i].tf);
		s->c->nopen--;
	}
	src_ref_drop(s->last_off.ref);
	tailscan_free(s->pend, s->npend);
	free(s->chain);
	free(s->path);
	free(s->dir);
	free(s);
}
