/* tailplan: where a stream without files resumes - at start, after an idle
 * close, after its last file was let go - decided from its stored place and
 * what was observed of the path's family. Pure (tailplan.h).
 *
 * Offset safety. Every record of a stream goes to the stream's one source
 * partition, and records are produced in chain order: all of chain[0] before
 * anything of chain[1] (one exception, late writes: see tailstream.c). The
 * worker commits the offset of the last record of the contiguous
 * acknowledged prefix, so the committed offset (F, p) - file identity F =
 * dev+ino+birth time+fingerprint, position p - always means: every byte of
 * every file before F in the stream's order, and F's bytes before p, are in
 * Kafka; nothing after it is known to be. While a rotated file is being
 * finished, records of it and of its successor may both be in flight; the
 * committed offset then names the rotated file until its last record is
 * acknowledged, and the successor only after that.
 *
 * A restart (or a reopen) with (F, p) therefore does exactly what the
 * branches below say, each beside its point (tailplan_case, replaced,
 * moved). Files before F are never read again and F's first p bytes are
 * never read again, so duplicates are bounded by the records in flight at a
 * crash. A file is lost only when it was deleted before skiff could finish
 * it while skiff was not holding it open, which is counted (the losses of a
 * plan: gone_loss, generation_loss) - unless its end is known to be where
 * skiff had read to: a file closed while idle (max.open.files) at its end,
 * every write to it heard since and none was (tailobs_set.idle_known).
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
 * at the rotated one. With it the restart is one of the cases below: F is
 * found by identity among the rotated siblings and read from its start,
 * and read.from=end is not taken again (lines written while skiff was
 * stopped are read).
 *
 * Compressed and moved rotations. The siblings are those in the path's
 * directory and in rotated.dirs (olddir). A compressed sibling (.gz, .zst,
 * .xz: tailz.h) is read as its uncompressed bytes, and positions and
 * fingerprints count those, so F compressed since (another inode) is found
 * by its fingerprint and read from p; it is complete (done at its end).
 * logrotate compresses oldest first, so every numbered compressed sibling is
 * older than every uncompressed one, and compressed siblings are born (made)
 * in rotation order: after a compressed F come the compressed siblings born
 * after it, then the uncompressed ones born after F's floor, the
 * uncompressed file read before F (all of them when it is not known):
 * logrotate's NAME-YYYYMMDDHH.backup is never compressed, so one older than
 * F's original stays uncompressed beside it (the plan's floor). F's offset
 * carries the floor's birth ("after"). After an uncompressed F, compressed
 * siblings only when F itself is gone: those born after F's compressed copy
 * (found by its first bytes), else after F's birth - or when F is a
 * .backup: those born and written after F's birth (a compressed file's
 * mtime is its original's: logrotate and gzip, xz, zstd copy it; a
 * compressor that does not makes the older file beside the .backup read
 * again, never skipped). A compressed file whose first bytes begin an
 * uncompressed sibling (or the file at the path) is still being written by
 * logrotate and is skipped: the original is read. F held open while it is
 * compressed and deleted is read to its end through its descriptor, as any
 * deleted file. A compressed file cut short or corrupt ends where its data
 * ends (counted: compressed_cut_short). The siblings after the files a
 * plan opens are the chain's to find (tailchain_extend*); the plan says
 * after what. */
#include "sources/file/tailplan.h"

#include <string.h>

bool tailplan_same_file(const struct tailid *id, const struct tailpos *p)
{
	/* dev+ino alone is not enough: ext4 hands a deleted file's inode to
	 * the next file created. */
	if (!p->has_id)
		return true;
	if (id->dev != p->dev || id->ino != p->ino)
		return false;
	return !p->has_born || !id->has_btime || id->born == p->born;
}

/* F's bytes from p on, by what o saw: at least p long, F's first bytes. */
static bool place_matches(const struct tailobs *o, const struct tailpos *p)
{
	return o->size >= p->pos && o->fp_match;
}

enum tailplan_case tailplan_case(const struct tailpos *p, const struct tailobs *live,
                                 const char **why, bool *reused)
{
	bool shrank, same, rewritten;

	*why = NULL;
	*reused = false;
	if (!p->known)
		return TAILPLAN_NEW;
	/* A place skiff let go of at its end: nothing new at the path yet. */
	if (!live->found && p->finished)
		return TAILPLAN_WAIT;
	/* F's inode given to a newer file now at the path: not a loss by
	 * itself (F may be rotated, compressed, or finished); counted only
	 * when F is gone. */
	*reused = live->found && p->has_id && live->id.dev == p->dev && live->id.ino == p->ino &&
	          !tailplan_same_file(&live->id, p);
	if (!live->found || *reused || !tailplan_same_file(&live->id, p))
		return TAILPLAN_MOVED;
	/* F is still at the path (same inode and birth time, same
	 * fingerprint, size >= p): resume at p. Its first KiB and length are
	 * no proof when every file starts with the same banner: copytruncate,
	 * then as many bytes again - the bytes before p (its tail) must be
	 * F's too. */
	shrank = live->size < p->pos;
	same = place_matches(live, p);
	rewritten = same && p->has_tail && !live->tail_match;
	if (same && !rewritten)
		return TAILPLAN_AT_PATH;
	*why = shrank      ? "truncated"
	       : rewritten ? "truncated and written past its position again"
	                   : "replaced";
	return TAILPLAN_REPLACED;
}

static void add_open(struct tailplan *out, enum tailplan_file file, int64_t pos, bool copy,
                     bool need_room, bool expect)
{
	if (out->nopen < TAILPLAN_MAX_OPEN)
		out->open[out->nopen++] = (struct tailplan_open){.file = file,
		                                                 .pos = pos,
		                                                 .copy = copy,
		                                                 .need_room = need_room,
		                                                 .expect = expect};
}

/* p as a file's identity and birth (ns), for ordering. */
static struct tailid born_at(const struct tailpos *p, int64_t born)
{
	return (struct tailid){
	    .born = born, .mtime = born, .has_btime = true, .dev = p->dev, .ino = p->ino};
}

/* The generation of F (same inode: copytruncate) that held p is gone, its
 * copy with it: what it held past p is counted when a stop saw its size
 * ("seen") or the held set did, else only the file (its bytes not known).
 * What is read after it (the newer copies, the path) is never counted. */
static void generation_loss(const struct tailpos *p, int64_t held_seen, struct tailplan *out)
{
	int64_t seen = held_seen;

	if (p->finished)
		return;
	if (p->has_seen && p->seen > seen)
		seen = p->seen;
	if (seen > p->pos) {
		out->loss = TAILPLAN_GEN_TRUNCATED;
		out->lost_from = p->pos;
		out->lost_to = seen;
	} else {
		out->loss = TAILPLAN_GEN_GONE;
	}
}

/* F is gone. Whether it held more than p is unknowable now, unless a clean
 * stop saw it on disk ("seen", tailpos.h) or the held set saw it
 * (tailheld.h): then at least its size then less p was lost; or F was
 * closed while idle with every write to it heard since (idle_known): then
 * exactly its size then less p. */
static void gone_loss(const struct tailpos *p, const struct tailobs_set *obs, struct tailplan *out)
{
	int64_t held_seen = obs->held_seen;

	/* Closed while idle at its end, no write heard since: nothing came
	 * after that end (a partial last line before it is lost). */
	if (obs->idle_known) {
		if (obs->idle_end > p->pos) {
			out->loss = TAILPLAN_GONE_IDLE;
			out->lost_from = p->pos;
			out->lost_to = obs->idle_end;
		}
		return;
	}
	if (p->has_seen && p->seen > p->pos && p->seen >= held_seen) {
		out->loss = TAILPLAN_GONE_AT_STOP;
		out->lost_from = p->pos;
		out->lost_to = p->seen;
	} else if (held_seen <= p->pos) {
		out->loss = TAILPLAN_GONE_UNKNOWN;
	} else {
		out->loss = TAILPLAN_GONE_HELD;
		out->lost_from = p->pos;
		out->lost_to = held_seen;
	}
}

/* F is at the path but shorter than p or with other first bytes (or other
 * bytes before p): copytruncate, truncation. Its copy among the path's
 * rotated siblings, with F's fingerprint, is read from p (compressed since
 * too), then the newer copies, then the path's file from 0. A copy made
 * after F's generation was replaced (F's first bytes, not its tail): F's is
 * gone (counted), this one is read whole. No copy: F's generation is gone
 * (counted), and the copies on disk born after F are read oldest first (by
 * logrotate's order every copy older than F's was deleted before it; one
 * truncation without a copy, an application's own, may read an older copy
 * again: a duplicate, never a loss), then the path's file from 0. */
static void replaced(const struct tailpos *p, const struct tailobs_set *obs, struct tailplan *out)
{
	const struct tailobs *c = &obs->copy, *z = &obs->z;
	bool opened = false, broken = false;

	if (c->found) {
		out->finishing = true;
		if (c->opens && c->tail_match) {
			add_open(out, TAILPLAN_COPY, p->pos, true, false, false);
			opened = true;
		} else if (c->opens) {
			/* A copy made after F's generation was replaced. */
			out->copy_newer = true;
			generation_loss(p, obs->held_seen, out);
			add_open(out, TAILPLAN_COPY, 0, true, false, false);
			opened = true;
		}
	} else if (z->found && z->cut_short) {
		/* F's copy compressed since and damaged before p: opening it
		 * says so and counts it (compressed_cut_short); the rest
		 * comes after it. */
		add_open(out, TAILPLAN_Z, p->pos, true, false, true);
		out->unreadable = broken = true;
	} else if (z->found && z->opens && z->tail_match) {
		/* Its copy compressed since (logrotate's compress): from p on. */
		add_open(out, TAILPLAN_Z, p->pos, true, false, true);
		out->finishing = opened = true;
	} else if (z->found && z->opens) {
		out->z_newer = true; /* starts like F, lacks its tail: a newer file */
	} else if (z->found) {
		out->finishing = true; /* found, but it does not open */
	}
	if (!opened) {
		if (!broken)
			generation_loss(p, obs->held_seen, out);
		/* No identity: F's inode is the path's own. Without a birth
		 * (Connect's offset: a position alone) nothing orders the
		 * copies: the path alone, as Connect would. */
		if (p->has_born) {
			out->has_after = true;
			out->after =
			    (struct tailid){.born = p->born, .mtime = p->born, .has_btime = true};
		}
	}
	out->extend = TAILPLAN_EXTEND_REPLACED;
}

/* The path names another file (or a newer file got F's inode: its birth
 * time differs) or nothing: F is found by inode among the path's siblings
 * (its directory, rotated.dirs, a symlink's target's), its birth time and
 * fingerprint verified, and read from p; then the rotated siblings born
 * after F, oldest first (several rotations while stopped); then the path's
 * file from 0. F compressed since (another inode) is found by its first
 * bytes and read from p. F not found (deleted while stopped): counted, and
 * reading goes on with the siblings born after the birth time stored in the
 * offset. An offset that skiff wrote after letting go of F at p says so
 * ("finished"): F is then not looked for, and its absence loses nothing and
 * is not reported. */
static void moved(const struct tailpos *p, const struct tailobs_set *obs, bool reused,
                  struct tailplan *out)
{
	const struct tailobs *m = &obs->moved, *z = &obs->z;
	/* A file already finished needs no finding: it only orders the rest.
	 * Its inode given to the file now at the path: F is gone. */
	bool use_m = p->has_id && !p->finished && !reused && m->found;
	bool opened = false, broken = false, gone;

	out->reused = reused;
	if (use_m && m->has_id && !tailplan_same_file(&m->id, p)) {
		out->moved_born_later = true; /* ext4 gave F's inode to a newer file */
		use_m = false;
	}
	if (use_m && m->opens && m->has_id && place_matches(m, p)) {
		add_open(out, TAILPLAN_MOVED_FILE, p->pos, false, false, true);
		opened = true;
		/* F itself: its floor is the one p carries (a compressed F). */
		out->has_floor = p->has_after && p->after != TAILPOS_AFTER_UNKNOWN;
		out->floor = born_at(p, p->after);
	} else if (use_m && m->opens) {
		out->fingerprint_resets++; /* F's inode, not F's bytes */
	} else if (use_m) {
		/* Shorter than p, or unreadable: opening it says why. */
		add_open(out, TAILPLAN_MOVED_FILE, p->pos, false, false, true);
	}
	/* Its inode given to a newer file does not make F still there. */
	gone = !m->found || !m->has_id || !tailplan_same_file(&m->id, p);
	if (!opened && p->has_fp && gone) {
		if (z->found && z->cut_short) {
			add_open(out, TAILPLAN_Z, p->pos, true, false, true);
			out->unreadable = broken = true;
		} else if (z->found && z->opens && z->tail_match) {
			/* F compressed since (app.log.1.gz), read from p. Its
			 * floor: F when p named its uncompressed original, else
			 * the floor p carries when it named the compressed file
			 * itself. */
			bool itself = p->has_id && z->id.dev == p->dev && z->id.ino == p->ino;

			add_open(out, TAILPLAN_Z, p->pos, true, false, true);
			out->z_finishing = opened = true;
			out->has_floor = itself ? p->has_after && p->after != TAILPOS_AFTER_UNKNOWN
			                        : p->has_born;
			out->floor = born_at(p, itself ? p->after : p->born);
		} else if (z->found && z->opens) {
			out->z_newer = true;
		}
		if (!opened && !broken && (!z->found || out->z_newer) && !p->finished &&
		    obs->undec.found) {
			/* Not one byte decodes: by logrotate's order, F's copy. */
			out->loss = TAILPLAN_UNDECODABLE;
			out->lost_from = p->pos;
			out->unreadable = out->unreadable_undec = broken = true;
		}
	}
	/* A position 0 alone (Connect's, or an operator's) names no file that
	 * was ever read: nothing of one can be lost. */
	if (!opened && !broken && !p->finished && (p->has_id || p->pos > 0)) {
		if (reused)
			out->fingerprint_resets++;
		gone_loss(p, obs, out);
	}
	/* The siblings after F when nothing was opened: born after F. The
	 * floor of the compressed ones: after p named a compressed file, the
	 * one it carries (none: every uncompressed sibling may be newer);
	 * after an uncompressed one, F itself, by its birth: the uncompressed
	 * siblings born before it were read before it - logrotate's .backup
	 * of its rename race, never compressed, found after a newer .gz (issue
	 * 22: ~20 lines shipped twice at a restart). Without a birth
	 * (Connect's offsets) none. */
	out->extend = TAILPLAN_EXTEND_MOVED;
	if (p->has_born) {
		out->has_after = true;
		out->after = born_at(p, p->born);
	}
	if (p->has_after) {
		out->has_zfloor = p->after != TAILPOS_AFTER_UNKNOWN;
		out->zfloor = born_at(p, p->after);
	} else if (p->has_born) {
		out->has_zfloor = true;
		out->zfloor = born_at(p, p->born);
	}
}

void tailplan_resume(const struct tailpos *p, const struct tailobs_set *obs, unsigned flags,
                     struct tailplan *out)
{
	bool reused;

	memset(out, 0, sizeof(*out));
	out->kind = tailplan_case(p, &obs->live, &out->why, &reused);
	switch (out->kind) {
	case TAILPLAN_NEW:
		/* First sight of a path with no stored place: the path's file
		 * (or its history first), anchored where reading starts. */
		if ((flags & TAILPLAN_HISTORY) && !(flags & TAILPLAN_FROM_END))
			out->extend = TAILPLAN_EXTEND_HISTORY;
		else
			add_open(out, TAILPLAN_PATH, 0, false, true, false);
		out->from_end = (flags & TAILPLAN_FROM_END) != 0;
		out->anchor = true;
		break;
	case TAILPLAN_WAIT:
		break;
	case TAILPLAN_AT_PATH:
		add_open(out, TAILPLAN_PATH, p->pos, false, true, false);
		break;
	case TAILPLAN_REPLACED:
		replaced(p, obs, out);
		break;
	case TAILPLAN_MOVED:
		moved(p, obs, reused, out);
		break;
	}
}

bool tailplan_saved(const struct tailpos *p, bool opened, struct tailpos *saved)
{
	if (!opened && p->finished)
		return false;
	*saved = (struct tailpos){.known = !opened, /* opened: the chain holds the place */
	                          .finished = true,
	                          .pos = p->pos,
	                          .has_id = p->has_id,
	                          .dev = p->dev,
	                          .ino = p->ino,
	                          .has_born = p->has_born,
	                          .born = p->born,
	                          .has_after = p->has_after,
	                          .after = p->after};
	return true;
}

size_t tailplan_held_after(const struct tailheld_file *f, size_t n, const struct tailpos *p)
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

bool tailplan_held_is_place(const struct tailheld_file *f, const struct tailpos *p)
{
	return f->fplen > 0 && p->has_fp && f->fplen == p->fplen && f->fp == p->fp;
}
