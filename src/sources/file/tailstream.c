/* tailstream: a path and the succession of files it names.
 *
 * Offset safety: the committed offset (F, p), and what a restart, a reopen
 * or a stream whose last file was let go does with it, are argued at the
 * top of tailplan.c, beside the branches that decide; this file observes
 * (tailprobe) and applies their plan (resume). What follows holds while
 * files are open.
 *
 * While running - reading or not: the worker watches a source while
 * reading pauses (source_ops.watch) - the chain holds every file from F on
 * open, so a rotated file deleted right away is still read to its end.
 * Holding costs a descriptor and, once the file is deleted, its disk: the
 * connector's held files have a budget (max.held.files, max.held.bytes).
 * Past it, the oldest held file that was deleted is let go unread, from
 * the front of its chain: what it still held is counted to the byte and
 * line (tailstream_drop_first), the stream goes on with the next file, and
 * what it holds stays contiguous. A held file still on disk is never let
 * go; files past the budget then wait unopened and are listed at every
 * look: one deleted before skiff could open it is named in a warning and
 * counted (files_gone_unread, its bytes as listed). A file renamed between
 * a listing and its open is looked for again in a new listing.
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
 * A file let go while records of it may still wait for Kafka (the
 * producer queue during an outage: tailchain_in_flight) stays open among
 * the lingering ones, no longer read ("waiting"), until no unacknowledged
 * record names it or the committed offset passes it: a stop names it with
 * the bytes it drops and counts them once it is deleted, and the held list
 * keeps it. A copytruncate copy waits too while the records read from the
 * file at the path before its truncation do (they name that file, whose
 * position now counts the next generation: link.gen).
 *
 * A file that shrinks, or whose first bytes change, under skiff
 * (copytruncate) is followed by its copy: the rotated sibling with its
 * fingerprint (of the bytes read, or of the bytes it held when it was
 * opened) is read from the position, then the file again from 0. What the
 * writer added between logrotate's copy and its truncation exists nowhere
 * any more: counted in bytes_unread_lost. */
#include "sources/file/tailstream.h"
#include "util/clock.h"

#include "core/log.h"
#include "sources/file/tailchain.h"
#include "sources/file/tailheld.h"
#include "sources/file/tailnotice.h"
#include "sources/file/tailplan.h"
#include "sources/file/tailprobe.h"
#include "sources/file/tailscan.h"
#include "sources/file/tailz.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- resuming: observe, plan (tailplan.c), apply ------------------------ */

/* Logs what of s was lost ("<path>: what", a warning) and counts it:
 * bytes_unread_lost when bytes > 0, else files_gone_unread. */
static void lost(struct tailstream *s, const char *what, int64_t bytes)
{
	struct source_env *env = s->c->env;

	env->log(env, LOG_WARN, "%s: %s", s->path, what);
	if (bytes > 0)
		env->count(env, "bytes_unread_lost", (uint64_t)bytes);
	else
		env->count(env, "files_gone_unread", 1);
}

/* Logs and counts the loss a plan names, for the stored place p. */
static void plan_loss(struct tailstream *s, const struct tailpos *p, const struct tailplan *pl,
                      const char *undec)
{
	struct source_env *env = s->c->env;
	int64_t bytes = pl->lost_to - pl->lost_from;
	char what[256];

	switch (pl->loss) {
	case TAILPLAN_LOSS_NONE:
		return;
	case TAILPLAN_GEN_TRUNCATED:
		env->log(env, LOG_WARN,
		         "%s: the content of the stored offset's file (inode %lld) was truncated "
		         "while skiff was stopped and its copy is gone: bytes %lld to %lld were "
		         "not read (counted in bytes_unread_lost and files_gone_unread), nor "
		         "whatever was written to it after them",
		         s->path, (long long)p->ino, (long long)pl->lost_from,
		         (long long)pl->lost_to);
		break;
	case TAILPLAN_GEN_GONE:
		lost(s,
		     "the rest of the file it replaced is gone (its copy too): counted in "
		     "files_gone_unread",
		     0);
		return;
	case TAILPLAN_GONE_AT_STOP:
		env->log(
		    env, LOG_WARN,
		    "%s: the file of the stored offset (inode %lld) is gone: the %lld bytes it "
		    "held after byte %lld at the last stop were not read (counted in "
		    "bytes_unread_lost and files_gone_unread), nor whatever was written to it "
		    "since",
		    s->path, (long long)p->ino, (long long)bytes, (long long)p->pos);
		break;
	case TAILPLAN_GONE_UNKNOWN:
		snprintf(what, sizeof(what),
		         "the file of the stored offset (inode %lld) is gone: "
		         "whatever it held after byte %lld was not read",
		         (long long)p->ino, (long long)p->pos);
		lost(s, what, 0);
		return;
	case TAILPLAN_GONE_IDLE:
		env->log(env, LOG_WARN,
		         "%s: the file of the stored offset (inode %lld), closed while idle "
		         "(max.open.files), is gone: the %lld bytes of its unfinished last line "
		         "after byte %lld were not read (counted in bytes_unread_lost and "
		         "files_gone_unread)",
		         s->path, (long long)p->ino, (long long)bytes, (long long)p->pos);
		break;
	case TAILPLAN_GONE_HELD:
		env->log(env, LOG_WARN,
		         "%s: the file of the stored offset (inode %lld, held when skiff stopped, "
		         "%lld bytes when last seen) is gone: at least %lld bytes after byte %lld "
		         "were not read (counted in bytes_unread_lost and files_gone_unread)",
		         s->path, (long long)p->ino, (long long)pl->lost_to, (long long)bytes,
		         (long long)p->pos);
		break;
	case TAILPLAN_UNDECODABLE:
		env->log(env, LOG_WARN,
		         "%s: %s, the oldest file compressed after the stored offset's, "
		         "cannot be decoded (empty, or damaged from its first bytes): the "
		         "file of the stored offset after byte %lld is lost (counted in "
		         "compressed_cut_short)",
		         s->path, undec, (long long)p->pos);
		env->count(env, "compressed_cut_short", 1);
		return;
	}
	env->count(env, "bytes_unread_lost", (uint64_t)bytes);
	env->count(env, "files_gone_unread", 1);
}

/* Remembers id as the stored offset's file found damaged (s->unreadable). */
static void set_unreadable(struct tailstream *s, const struct tailid *id)
{
	if (s->unreadable == NULL)
		s->unreadable = malloc(sizeof(*s->unreadable));
	if (s->unreadable != NULL)
		*s->unreadable = *id;
}

/* Says that path, found for p by its first bytes, lacks the bytes before
 * p's position that p's tail hashes: a newer file. */
static void note_newer(struct tailstream *s, const struct tailpos *p, const char *path)
{
	s->c->env->log(s->c->env, LOG_INFO,
	               "%s: %s starts like the file of the stored offset but does not hold "
	               "the bytes before its position %lld: a newer file",
	               s->path, path, (long long)p->pos);
}

/* Opens the files of pl's opens whose file is `which` (all: -1) into the
 * chain, in order. Returns the last tailchain_add_as code. */
static int plan_open(struct tailstream *s, const struct tailpos *p, const struct tailplan *pl,
                     const struct tailprobe *pr, int which)
{
	struct tailid want = {.dev = p->dev, .ino = p->ino};
	int rc = TAILCHAIN_ERR;

	for (size_t i = 0; i < pl->nopen; i++) {
		const struct tailplan_open *o = &pl->open[i];
		const char *path = o->file == TAILPLAN_COPY         ? pr->copy
		                   : o->file == TAILPLAN_MOVED_FILE ? pr->moved
		                   : o->file == TAILPLAN_Z          ? pr->z
		                                                    : s->path;
		const struct tailid *expect = !o->expect                       ? NULL
		                              : o->file == TAILPLAN_MOVED_FILE ? &want
		                                                               : &pr->obs.z.id;

		if (which >= 0 && (int)o->file != which)
			continue;
		rc = tailchain_add_as(s, s->n, path, o->pos, o->copy, o->need_room, expect);
	}
	return rc;
}

/* A plan for a path first seen: opened, read.from=end taken, anchored. */
static void apply_new(struct tailstream *s, const struct tailpos *p, const struct tailplan *pl,
                      const struct tailprobe *pr)
{
	struct tailfile *tf;
	struct src_offset at;

	if (pl->extend == TAILPLAN_EXTEND_HISTORY)
		tailchain_extend(s, &(struct tailid){.born = INT64_MIN, .mtime = INT64_MIN});
	plan_open(s, p, pl, pr, -1);
	if (s->n > 0 && pl->from_end) {
		tf = s->chain[0].tf;
		if (tailfile_start_at_end(tf) == 0 && tailfile_pos(tf) > 0)
			s->c->env->log(s->c->env, LOG_INFO,
			               "%s: read.from=end: starting at byte %lld", s->path,
			               (long long)tailfile_pos(tf));
	}
	/* The anchor: where reading starts, stored as the partition's offset
	 * when none was ever committed (see the top of tailplan.c). */
	if (s->n == 0 || s->c->env->anchor == NULL)
		return;
	at = tailchain_offset(s);
	s->c->env->anchor(s->c->env, s->part, &at);
}

/* A plan for F at the path, shorter or with other bytes: its copy. */
static void apply_replaced(struct tailstream *s, const struct tailpos *p, const struct tailplan *pl,
                           const struct tailprobe *pr)
{
	if (plan_open(s, p, pl, pr, TAILPLAN_Z) == TAILCHAIN_CUT_SHORT && pl->unreadable)
		set_unreadable(s, &pr->obs.z.id); /* logged and counted */
	if (pl->z_newer)
		note_newer(s, p, pr->z);
	s->c->env->count(
	    s->c->env, strncmp(pl->why, "truncated", 9) == 0 ? "truncations" : "fingerprint_resets",
	    1);
	s->c->env->log(s->c->env, LOG_WARN, "%s was %s while it was not being read: %s", s->path,
	               pl->why,
	               pl->finishing ? "finishing its rotated copy first"
	                             : "reading the copies made after it, then it from the start");
	if (pl->copy_newer)
		note_newer(s, p, pr->copy);
	plan_loss(s, p, pl, NULL);
	plan_open(s, p, pl, pr, TAILPLAN_COPY);
	if (s->n == 0 && pl->has_after)
		tailchain_extend(s, &pl->after);
	if (s->n > 0) {
		tailchain_extend(s, tailfile_id(s->chain[0].tf)); /* later copies, then the path */
		if (!tailchain_has(s, &(struct tailid){.dev = p->dev, .ino = p->ino}))
			tailchain_add(s, s->n, s->path, 0, false, false);
	}
	if (s->n == 0)
		tailchain_add(s, 0, s->path, 0, false, false);
}

/* A plan for a path that names another file than F, or none: F where
 * rotation put it, compressed since, or gone; then what came after it. */
static void apply_moved(struct tailstream *s, const struct tailpos *p, const struct tailplan *pl,
                        const struct tailprobe *pr)
{
	struct source_env *env = s->c->env;

	if (pl->moved_born_later)
		env->log(env, LOG_INFO,
		         "%s: %s has the stored offset's inode but was "
		         "born later: a newer file, not the one of the offset",
		         s->path, pr->moved);
	plan_open(s, p, pl, pr, TAILPLAN_MOVED_FILE);
	if (s->n == 0 && plan_open(s, p, pl, pr, TAILPLAN_Z) == TAILCHAIN_CUT_SHORT &&
	    pl->unreadable)
		set_unreadable(s, &pr->obs.z.id);
	if (pl->z_newer)
		note_newer(s, p, pr->z);
	if (pl->z_finishing && s->n > 0)
		env->log(env, LOG_INFO,
		         "%s: the file of the stored offset was compressed "
		         "since: finishing %s",
		         s->path, pr->z);
	if (pl->unreadable_undec)
		set_unreadable(s, &pr->obs.undec.id);
	if (pl->fingerprint_resets > 0)
		env->count(env, "fingerprint_resets", (uint64_t)pl->fingerprint_resets);
	if (s->n == 0)
		plan_loss(s, p, pl, pr->undec);
	if (s->n > 0 && pl->has_floor)
		tailchain_set_floor(s, 0, &pl->floor);
	tailchain_extend_z(s, s->n > 0 || !pl->has_after ? NULL : &pl->after,
	                   pl->has_zfloor ? &pl->zfloor : NULL);
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

void tailstream_preset(struct tailstream *s, const char *json)
{
	struct tailpos p;

	if (s->resolved || tailpos_parse(json, &p) != 0)
		return;
	s->saved = p;
	s->resolved = true;
}

/* Gives s, which has no file open (s->n == 0), its files: observes the
 * path's family for its stored place, plans (tailplan_resume) and applies.
 * *used: the place resumed from. */
static void resume(struct tailstream *s, struct tailpos *used)
{
	struct tailprobe_where w = {.path = s->path,
	                            .dirs = s->c->rotated_dirs,
	                            .ndirs = s->c->nrotated_dirs,
	                            .max_line = s->c->max_line,
	                            .policy = s->c->policy,
	                            .guard = &s->c->guard};
	struct tailprobe pr = {0};
	struct tailplan pl;
	struct tailpos p;
	const char *why;
	bool reused;
	unsigned flags = ((s->flags & TAILSTREAM_HISTORY) ? TAILPLAN_HISTORY : 0) |
	                 ((s->flags & TAILSTREAM_FROM_END) ? TAILPLAN_FROM_END : 0);

	if (!s->resolved)
		load_committed(s);
	p = s->saved;
	*used = p;
	pr.obs.held_seen = -1;
	if (p.known) {
		tailprobe_live(&w, &p, &pr);
		tailprobe_family(&w, &p, tailplan_case(&p, &pr.obs.live, &why, &reused), &pr);
		if (s->c->heldset != NULL && p.has_id)
			pr.obs.held_seen = tailheld_size_of(s->c->heldset, s->path, p.dev, p.ino,
			                                    p.has_born ? p.born : 0);
	}
	/* Closed while idle at p, every write heard since: its end is known. */
	pr.obs.idle_known = s->suspended && s->idle_heard && s->idle_size >= p.pos;
	pr.obs.idle_end = s->idle_size;
	tailplan_resume(&p, &pr.obs, flags, &pl);
	if (pl.reused)
		s->c->env->log(s->c->env, LOG_INFO,
		               "%s: the stored offset's inode now belongs to a "
		               "newer file: looking for its rotated files",
		               s->path);
	switch (pl.kind) {
	case TAILPLAN_NEW:
		apply_new(s, &p, &pl, &pr);
		s->flags &= (uint8_t)~TAILSTREAM_FROM_END;
		goto out;
	case TAILPLAN_WAIT:
		goto out; /* nothing new at the path yet */
	case TAILPLAN_AT_PATH:
		plan_open(s, &p, &pl, &pr, -1);
		break;
	case TAILPLAN_REPLACED:
		apply_replaced(s, &p, &pl, &pr);
		break;
	case TAILPLAN_MOVED:
		apply_moved(s, &p, &pl, &pr);
		break;
	}
	if (s->n == 0 && s->no_room)
		goto out; /* the same place, once a descriptor is free */
	s->suspended = false;
	tailplan_saved(&p, s->n > 0, &s->saved);
out:
	tailprobe_free(&pr);
}

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

/* At the first resume: the files the last run held for s (tailheld.h)
 * that come after the stored offset's file p and are found nowhere now
 * were deleted while skiff was not running: each is named, its bytes when
 * last seen counted as lost (at least: more may have been written to it
 * after), its lines not known. The stored offset's own file is counted
 * where it is found gone (tailplan's gone_loss). */
static void settle_held(struct tailstream *s, const struct tailpos *p)
{
	struct source_env *env = s->c->env;
	struct tailheld_file *f = NULL;
	size_t n = 0;

	if (s->c->heldset == NULL || tailheld_take(s->c->heldset, s->path, &f, &n) != 0)
		return;
	for (size_t i = p->known ? tailplan_held_after(f, n, p) : n; i < n; i++) {
		if (held_on_disk(s, &f[i]))
			continue;
		/* The stored offset's file opened compressed (born after it):
		 * counted where it is found gone, not twice. */
		if (tailz_named(f[i].name) && tailplan_held_is_place(&f[i], p))
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

/* Gives a stream without files its files; at the first resume settles the
 * held set of the last run. */
static void resume_files(struct tailstream *s)
{
	bool first = !s->resolved;
	struct tailpos p = {0};

	resume(s, &p);
	if (first)
		settle_held(s, &p);
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

/* True when the compressed file z is plain compressed under its name
 * (app.log.1.gz beside app.log.1): gzip still writing it. */
static bool compressing(const char *z, const struct tailscan_entry *fam, size_t nfam)
{
	for (size_t i = 0; i < nfam; i++) {
		size_t len = strlen(fam[i].path);

		if (fam[i].kind == TAILID_ROTATED && strncmp(z, fam[i].path, len) == 0 &&
		    z[len] == '.' && strchr(z + len + 1, '.') == NULL &&
		    strchr(z + len + 1, '/') == NULL)
			return true;
	}
	return false;
}

/* True when the compressed file z holds the bytes of a file the chain
 * holds uncompressed (a copy opened before gzip replaced it): not a newer
 * copy. The file at the path (last) is not a copy. */
static bool compresses_held(const struct tailstream *s, const char *z)
{
	for (size_t i = 0; i + 1 < s->n; i++)
		if (!tailfile_compressed(s->chain[i].tf) && tailfile_size(s->chain[i].tf) > 0 &&
		    tailscan_zprefix(z, tailfile_fd(s->chain[i].tf)))
			return true;
	return false;
}

/* True when path's first len bytes (uncompressed) hash to fp. */
static bool head_is(const char *path, uint64_t fp, int64_t len)
{
	unsigned char head[TAILZ_HEAD];
	int zerr;

	return len > 0 && tailscan_head(path, head, &zerr) >= len &&
	       tailid_fp_update(TAILID_FP_EMPTY, head, (size_t)len) == fp;
}

/* True when e, a sibling, holds the first bytes of the file open as fd as
 * it is now, and no more: a copy of it logrotate is making (or made) for a
 * truncation still to come. */
static bool copy_of_now(const struct tailscan_entry *e, int fd)
{
	unsigned char a[4096], b[4096];
	int cfd;
	int64_t off = 0;
	bool same = true;

	if (e->kind == TAILID_COMPRESSED)
		return tailscan_zprefix(e->path, fd);
	if (e->id.size <= 0 || (cfd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return false;
	while (same && off < e->id.size) {
		ssize_t got = pread(cfd, a, sizeof(a), off);

		same = got > 0 && pread(fd, b, (size_t)got, off) == got &&
		       memcmp(a, b, (size_t)got) == 0;
		off += got > 0 ? got : 0;
	}
	close(cfd);
	return same;
}

/* Puts the path's rotated siblings born after *after before chain[at], the
 * truncated file: the copies later copytruncates made while skiff was not
 * looking, oldest first. after is the copy found (chain[at - 1]; copy_fd
 * its descriptor when it is not compressed, else -1). With logrotate
 * compress and no delaycompress they are compressed at once, so compressed
 * ones are taken too - but not one gzip is still writing beside its
 * original (the original is), nor the copy found compressed since (its
 * bytes begin with the copy's), nor one the chain holds uncompressed.
 * Returns how many it put. */
static size_t newer_copies(struct tailstream *s, size_t at, const struct tailid *after, int copy_fd)
{
	struct tailscan_entry *fam = NULL;
	size_t nfam = 0, put = 0;

	if (tailscan_family(s->path, ROTATED_DIRS(s), &fam, &nfam) != 0)
		return 0;
	for (size_t i = 0; i < nfam; i++) {
		struct tailscan_entry *e = &fam[i];

		if (e->kind == TAILID_NOT_ROTATED || tailchain_has(s, &e->id) ||
		    tailid_cmp_age(&e->id, after) <= 0)
			continue;
		if (e->kind == TAILID_COMPRESSED &&
		    (compressing(e->path, fam, nfam) ||
		     (copy_fd >= 0 && tailscan_zprefix(e->path, copy_fd)) ||
		     compresses_held(s, e->path)))
			continue;
		if (tailchain_add_as(s, at, e->path, 0, true, false, &e->id) == 0) {
			at++;
			put++;
		}
	}
	tailscan_free(fam, nfam);
	return put;
}

/* No copy holds what skiff saw of chain[at], the truncated file: puts
 * before it the copies written since the last truncation seen (since_ns:
 * by their mtime, which a compressed file keeps from its original - so not
 * the copies of earlier truncations that logrotate compressed since), oldest
 * first: the copies later copytruncates made while skiff was not looking.
 * Not one gzip is still writing beside its original, nor one the chain
 * holds uncompressed, nor one of the file as it is now (a copy under way
 * for a truncation to come). The oldest, when its first bytes are skiff's
 * (own_fp, own_len) and it is shorter than pos, is this truncation's copy,
 * which skiff read past (the copytruncate window read before the
 * truncation): not taken, *own set. Returns how many it put. */
static size_t copies_since(struct tailstream *s, size_t at, int64_t since_ns, uint64_t own_fp,
                           int64_t own_len, int64_t pos, bool *own)
{
	int fd = tailfile_fd(s->chain[at].tf);
	struct tailscan_entry *fam = NULL;
	size_t nfam = 0, put = 0;
	bool oldest = true;

	if (tailscan_family(s->path, ROTATED_DIRS(s), &fam, &nfam) != 0)
		return 0;
	for (size_t i = 0; i < nfam; i++) {
		struct tailscan_entry *e = &fam[i];

		if (e->kind == TAILID_NOT_ROTATED || tailchain_has(s, &e->id) ||
		    e->id.mtime <= since_ns)
			continue;
		if (e->kind == TAILID_COMPRESSED &&
		    (compressing(e->path, fam, nfam) || compresses_held(s, e->path)))
			continue;
		if (copy_of_now(e, fd))
			continue;
		if (oldest && head_is(e->path, own_fp, own_len) &&
		    (e->kind == TAILID_COMPRESSED ? tailscan_zdecoded(e->path, pos) < pos
		                                  : e->id.size < pos)) {
			*own = true;
			oldest = false;
			continue;
		}
		oldest = false;
		if (tailchain_add_as(s, at, e->path, 0, true, false, &e->id) == 0) {
			at++;
			put++;
		}
	}
	tailscan_free(fam, nfam);
	return put;
}

/* l->added_ns on the wall clock as it reads now: earlier by as much as the
 * clock was stepped back since (NTP correcting a board's clock, an operator's
 * date -s), told by the monotonic clock, which does not jump. Files written
 * after such a step are stamped before added_ns, and "made since" would miss
 * every copy logrotate made then: read neither the copy of this truncation
 * nor those after it (hostile finding h22b). Copies of earlier truncations
 * made within the step before it may then be read again: duplicates, not a
 * loss. Under a second is the clocks' own jitter. */
static int64_t added_since(const struct link *l)
{
	int64_t back = l->added_ns + (clock_mono_ms() - l->added_ms) * 1000000 - clock_wall_ns();

	return back > 1000000000 ? l->added_ns - back : l->added_ns;
}

/* Counts and names the copies of the file at the path (chain[n - 1], just
 * truncated at pos) that were made and deleted before skiff looked: at
 * least one, or as many as its directory's watch heard made beyond the
 * `later` copies that are still on disk (read, after the one gone). The
 * first held what skiff saw in the file, `seen` bytes from pos: counted
 * as lost, at least; the bytes of the others are not known. */
static void gone_copies(struct tailstream *s, int64_t pos, int64_t seen, size_t later)
{
	struct link *l = &s->chain[s->n - 1];
	struct source_env *env = s->c->env;
	int32_t gone = l->copies_owed - (int32_t)later;

	if (gone < 1)
		gone = 1;
	env->log(env, LOG_WARN,
	         "%s was truncated at byte %lld, and its copy deleted before skiff could "
	         "open it (%zu made after it still on disk are read): at least %lld bytes lost "
	         "(counted in bytes_unread_lost and files_gone_unread)",
	         s->path, (long long)pos, later, (long long)(seen > 0 ? seen : 0));
	for (int32_t i = 1; i < gone; i++)
		env->log(env, LOG_WARN,
		         "%s was truncated again, and that copy deleted before skiff could open it "
		         "too (heard made, never seen): its bytes unknown (counted in "
		         "files_gone_unread)",
		         s->path);
	if (seen > 0)
		env->count(env, "bytes_unread_lost", (uint64_t)seen);
	env->count(env, "files_gone_unread", (uint64_t)gone);
	l->copies_owed -= gone;
}

/* chain[k] shrank below its position, or its first bytes or those before
 * its position changed (see replaced): finish its copy, if logrotate made
 * one, and the copies made after it, then read it again from 0. The copy is
 * the one that holds the bytes read up to the position. k is 0 (the file
 * being read), or the file at the path behind rotated files or copies not
 * read yet (tailstream_look: reading paused). */
static void truncated(struct tailstream *s, size_t k, int64_t size)
{
	struct link *l = &s->chain[k];
	struct tailfile *tf = l->tf;
	int64_t pos = tailfile_pos(tf), fplen = pos < TAILID_FP_MAX ? pos : TAILID_FP_MAX;
	int64_t csize = 0, before = l->max_size > pos ? l->max_size : pos;
	uint64_t fp = tailfile_fp(tf);
	const void *last;
	size_t last_len;
	bool alone = k + 1 == s->n;
	struct tailid zid;
	const struct tailid *expect = NULL;
	int64_t since = added_since(l);
	size_t taken = 0;
	bool own = false; /* its copy is there, but skiff read past its end */
	struct tailmark *gen;
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
	                          fplen > 0 ? INT64_MIN : since, &csize);
	/* logrotate compress without delaycompress: the copy was compressed at
	 * once. Made since this file was opened or last truncated (its first
	 * bytes are no proof when every copy starts with one banner). */
	if (copy == NULL && fplen > 0 &&
	    (copy = tailscan_find_compressed(s->path, ROTATED_DIRS(s), fp, fplen, since, &zid)) !=
	        NULL) {
		expect = &zid;
		/* Bytes, not its compressed size; unknown: count nothing lost. */
		if ((csize = tailscan_zdecoded(copy, before)) < 0)
			csize = before;
	}
	s->c->env->count(s->c->env, "truncations", 1);
	gen = tailfile_mark(tf);
	src_ref_hold(&gen->ref); /* what the offsets read before name: the copy's */
	tailfile_rewind(tf);
	l->added_ns = clock_wall_ns();
	l->added_ms = clock_mono_ms();
	/* size may predate the truncation (measured before its bytes were found
	 * changed): taken as the new size, it would make the file seem truncated
	 * again at 0, and its copy be read twice. */
	if ((size = tailfile_size(tf)) < 0)
		size = 0;
	l->seen_size = l->max_size = size;
	/* Its first bytes now, to know its next copy by - and to notice the
	 * next truncation at all: one before the next look, the file grown
	 * past this size again, would otherwise go unseen with its copies. */
	l->peek_len = size < TAILID_FP_MAX ? size : TAILID_FP_MAX;
	if (l->peek_len > 0 && tailid_fp_file(tailfile_fd(tf), l->peek_len, &l->peek_fp) != 0)
		l->peek_len = 0;
	if (copy != NULL && tailchain_add_as(s, k, copy, pos, true, false, expect) == 0) {
		const struct tailfile *ctf = s->chain[k].tf;

		s->chain[k].gen = gen;
		gen = NULL;

		s->c->env->log(s->c->env, LOG_INFO,
		               "%s was truncated at byte %lld: finishing "
		               "its copy %s, then reading it from the start",
		               s->path, (long long)pos, copy);
		before = before > csize ? before - csize : 0;
		taken = 1;
		if (alone)
			taken += newer_copies(s, k + 1, tailfile_id(ctf),
			                      tailfile_compressed(ctf) ? -1 : tailfile_fd(ctf));
	} else if (alone && (taken = copies_since(s, k, since, fp, fplen, pos, &own)) > 0 &&
	           fplen > 0 && !own) {
		/* Copies made since the last truncation seen, but none holds
		 * what skiff saw in the file: its copy was made, then deleted
		 * (rotate N) while skiff was not looking (starved, stopped).
		 * The later ones are read; the one gone is counted. */
		gone_copies(s, pos, before - pos, taken);
		before = 0;
	} else if (alone && !own && s->chain[s->n - 1].copies_owed > (int32_t)taken) {
		/* No copy on disk holds anything after the last one read, but
		 * the watch heard copies made: all deleted unseen. */
		gone_copies(s, pos, before - pos, taken);
		before = 0;
	} else {
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s was truncated at byte %lld: reading it "
		               "from the start",
		               s->path, (long long)pos);
		before -= pos;
	}
	k = alone ? s->n - 1 : k + taken; /* the truncated file, moved */
	l = &s->chain[k];
	l->copies_owed -= (int32_t)taken + own;
	if (before > 0)
		lost(s,
		     "bytes written just before a truncation were not read (the copytruncate "
		     "window)",
		     before);
	if (gen != NULL)
		src_ref_drop(&gen->ref);
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
		truncated(s, 0, size);
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
		tailchain_pop(s, true);
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

		if (l->waiting && tailchain_in_flight(s, l)) {
			i++; /* read: kept only for a stop while its records wait */
			continue;
		}
		if (l->waiting)
			goto close;
		if (size != l->seen_size) {
			l->seen_size = size;
			l->quiet_since = now;
		}
		if (*n >= max)
			return 1;
		if (size > pos || done)
			rc = tailfile_read(l->tf, buf, out + *n, max - *n, &got, done, st, NULL, 0);
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
		/* Quiet: no more late writes. Its records may still wait for
		 * Kafka: then it waits too (link.waiting). */
		if (rc >= 0 && (l->waiting = tailchain_in_flight(s, l))) {
			i++;
			continue;
		}
	close:
		tailchain_close(s, l);
		memmove(&s->linger[i], &s->linger[i + 1], (s->nlinger - i - 1) * sizeof(*l));
		s->nlinger--;
	}
	tailchain_release(s);
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
	if (s->n == 0 && s->nlinger == 0)
		return 0; /* a deadline set by its check (no descriptor free) stands */
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
			truncated(s, 0, size);

		rc = tailfile_read(s->chain[0].tf, buf, out + *n, max - *n, &got, s->chain[0].final,
		                   &st, errbuf, errlen);
		if (got > 0 && tailchain_hold(s->c, out[*n].after.ref) != 0) {
			snprintf(errbuf, errlen, "%s: out of memory", s->path);
			count_stats(s, &st);
			return TAILSTREAM_ERR_NOMEM;
		}
		*n += got;
		if (rc < 0) {
			count_stats(s, &st);
			return rc == TAILFILE_ERR_NOMEM ? TAILSTREAM_ERR_NOMEM : TAILSTREAM_ERR;
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
		resume_files(s);
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
		tailchain_release(s); /* nothing opened: nothing kept */
	} else {
		refresh(s);
	}
	tailchain_look_held(s);
	if (s->n > 0)
		s->ready = true;
}

void tailstream_look(struct tailstream *s)
{
	struct link *l;
	int64_t size;

	/* Only the file at the path is copied and truncated by logrotate: a
	 * copy, or a file rotated away, is not the file it copies. */
	if (s->n == 0 || s->moved || (l = &s->chain[s->n - 1])->copy || l->final ||
	    (size = tailfile_size(l->tf)) < 0)
		return;
	if (replaced(l, size)) {
		truncated(s, s->n - 1, size);
		return;
	}
	if (size > l->max_size)
		l->max_size = size; /* what a truncation would lose without a copy */
	/* Not read yet: its first bytes as they grow, to know its copy by. */
	if (l->peek_len < TAILID_FP_MAX && size > l->peek_len && tailfile_pos(l->tf) == 0) {
		int64_t len = size < TAILID_FP_MAX ? size : TAILID_FP_MAX;

		if (tailid_fp_file(tailfile_fd(l->tf), len, &l->peek_fp) == 0)
			l->peek_len = len;
		else
			l->peek_len = 0;
	}
}

/* l's loss was counted: the held set (tailheld.h) must not count it again. */
static void forget_held(struct tailstream *s, const struct link *l)
{
	const struct tailid *id = tailfile_id(l->tf);

	if (s->c->heldset != NULL)
		tailheld_forget(s->c->heldset, s->path, id->dev, id->ino, id->born);
}

void tailstream_copy_made(struct tailstream *s)
{
	if (s->n > 0 && !s->moved)
		s->chain[s->n - 1].copies_owed++;
}

/* The lingering file that was deleted since, oldest first; -1: none. */
static long gone_lingering(const struct tailstream *s)
{
	for (size_t i = 0; i < s->nlinger; i++)
		if (s->linger[i].gone)
			return (long)i;
	return -1;
}

bool tailstream_first_gone(const struct tailstream *s, int64_t *born)
{
	long k = gone_lingering(s);
	const struct link *l = k >= 0 ? &s->linger[k] : s->n > 0 ? &s->chain[0] : NULL;

	if (l == NULL || !l->gone)
		return false;
	*born = tailfile_id(l->tf)->born;
	return true;
}

/* Closes lingering file k, deleted since, for the budget: late writes to it
 * that were not read (a writer that has not reopened) are counted lost. */
static void drop_lingering(struct tailstream *s, size_t k, const char *why)
{
	struct link *l = &s->linger[k];
	struct source_env *env = s->c->env;
	int64_t from = tailfile_pos(l->tf);
	uint64_t bytes = 0, lines = 0;
	int rc = tailfile_skip_rest(l->tf, &bytes, &lines);

	if (bytes > 0 || rc != 0) {
		env->log(env, LOG_WARN,
		         "%s: let go of rotated file inode %lld (opened as %s, deleted since), "
		         "kept open for late writes, because %s: %llu bytes, %llu lines written "
		         "to it after byte %lld lost (counted in bytes_unread_lost, "
		         "lines_unread_lost and files_gone_unread)",
		         s->path, (long long)tailfile_id(l->tf)->ino, tailfile_path(l->tf), why,
		         (unsigned long long)bytes, (unsigned long long)lines, (long long)from);
		env->count(env, "bytes_unread_lost", bytes);
		env->count(env, "lines_unread_lost", lines);
		env->count(env, "files_gone_unread", 1);
		forget_held(s, l);
	}
	tailchain_close(s, l);
	memmove(&s->linger[k], &s->linger[k + 1], (s->nlinger - k - 1) * sizeof(*l));
	s->nlinger--;
}

void tailstream_drop_first(struct tailstream *s, const char *why)
{
	long k = gone_lingering(s);
	struct link *l = &s->chain[0];
	struct source_env *env = s->c->env;

	if (k >= 0) {
		drop_lingering(s, (size_t)k, why);
		return;
	}
	int64_t from = tailfile_pos(l->tf);
	uint64_t bytes = 0, lines = 0;
	int rc = tailfile_skip_rest(l->tf, &bytes, &lines);

	if (bytes == 0 && rc == 0) {
		/* Read to its end already (waiting for late writes): no loss. */
		env->log(
		    env, LOG_INFO,
		    "%s: let go of rotated file inode %lld (opened as %s), read to its end: %s",
		    s->path, (long long)tailfile_id(l->tf)->ino, tailfile_path(l->tf), why);
	} else {
		env->log(env, LOG_WARN,
		         "%s: let go of rotated file inode %lld (opened as %s, deleted since) "
		         "unread from byte %lld, because %s: %llu bytes, %llu lines lost%s "
		         "(counted in bytes_unread_lost, lines_unread_lost and files_gone_unread)",
		         s->path, (long long)tailfile_id(l->tf)->ino, tailfile_path(l->tf),
		         (long long)from, why, (unsigned long long)bytes, (unsigned long long)lines,
		         rc != 0 ? " and more: it could not be read to its end" : "");
		if (bytes > 0)
			env->count(env, "bytes_unread_lost", bytes);
		if (lines > 0)
			env->count(env, "lines_unread_lost", lines);
		env->count(env, "files_gone_unread", 1);
		forget_held(s, l);
	}
	l->linger = false;
	tailchain_pop(s, false); /* for the budget: closed, not kept waiting */
	s->ready = s->n > 0;
}

/* ---- the rest ------------------------------------------------------------ */

const char *tailstream_strerror(int rc)
{
	switch (rc) {
	case TAILSTREAM_OK:
		return "ok";
	case TAILSTREAM_ERR_NOMEM:
		return "out of memory";
	default:
		return "a read failed";
	}
}

int tailstream_new(struct tailctx *c, const char *path, struct partition *part, unsigned flags,
                   struct tailstream **out)
{
	size_t len = strlen(path);
	struct tailstream *s = calloc(1, sizeof(*s) + len + 1);

	*out = NULL;
	if (s == NULL)
		return TAILSTREAM_ERR_NOMEM;
	memcpy(s->path, path, len + 1);
	s->c = c;
	s->part = part;
	s->flags = (uint8_t)flags;
	s->wd = -1;
	s->deadline = -1;
	s->dir = tailchain_dir(c, path);
	if (s->dir == NULL) {
		tailstream_free(s);
		return TAILSTREAM_ERR_NOMEM;
	}
	*out = s;
	return TAILSTREAM_OK;
}

bool tailstream_idle(const struct tailstream *s)
{
	const struct link *l = s->chain;
	int64_t end;

	if (s->n != 1 || s->nlinger > 0 || s->moved || l->copy || l->final)
		return false;
	/* Idle only when the last read reached the file's end and nothing was
	 * written since: an event may be on its way, and a file closed now
	 * would be taken as unchanged by every later look (tailchain_unchanged),
	 * its lines never read. A partial line no longer than a line may wait. */
	end = tailfile_end(l->tf);
	return end >= 0 && end <= tailfile_pos(l->tf) + (int64_t)s->c->max_line &&
	       tailfile_size(l->tf) == end;
}

bool tailstream_suspend(struct tailstream *s, bool heard)
{
	struct tailfile *tf;
	const struct tailid *id;
	struct tailid now;

	if (!tailstream_idle(s))
		return false;
	tf = s->chain[0].tf;
	id = tailfile_id(tf);
	/* What a later look compares with: the file as its last read saw it
	 * end (one fstat, so that size and mtime belong together). */
	if (tailid_of_fd(tailfile_fd(tf), &now) != 0 || now.size != tailfile_end(tf))
		return false;
	s->idle_size = now.size;
	s->idle_mtime = now.mtime;
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
	/* Growth is heard through the directory's watch, which the caller made
	 * hear writes before this (tailwatch_make_room): a write wakes the
	 * stream, which reopens. */
	tailchain_unwatch(s);
	tailchain_close(s, &s->chain[0]);
	s->n = 0;
	s->suspended = true;
	/* Heard only where inotify hears this file by its path. */
	s->idle_heard = heard && s->c->notice->hears && s->wd_direct && s->wd_dev == s->saved.dev &&
	                s->wd_ino == s->saved.ino;
	tailchain_release(s);
	return true;
}

void tailstream_unheard(struct tailstream *s)
{
	s->idle_heard = false;
}

int64_t tailstream_deadline(const struct tailstream *s)
{
	return s->deadline;
}

bool tailstream_ready(const struct tailstream *s)
{
	return s->ready;
}

bool tailstream_waiting(const struct tailstream *s)
{
	return s->n == 0 && s->no_room && s->nlinger == 0;
}

bool tailstream_spent(const struct tailstream *s)
{
	return s->resolved && s->n == 0 && s->nlinger == 0 && s->npend == 0 && !s->no_room;
}

void tailstream_set_ready(struct tailstream *s)
{
	s->ready = true;
}

bool tailstream_quiet(const struct tailstream *s)
{
	const struct tailid *id;

	if (!s->c->notice->hears || !s->wd_direct || s->deadline >= 0 || s->nlinger > 0)
		return false;
	/* Closed while idle: the file it was closed on, as last watched. */
	if (s->n == 0)
		return s->suspended && !s->no_room && s->saved.known && s->idle_size >= 0 &&
		       s->saved.dev == s->wd_dev && s->saved.ino == s->wd_ino;
	if (s->wd < 0 || !tailstream_idle(s) || s->ready)
		return false;
	id = tailfile_id(s->chain[0].tf);
	return id->dev == s->wd_dev && id->ino == s->wd_ino;
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
	const char *slash = strrchr(s->path, '/');

	return slash ? slash + 1 : s->path;
}

struct partition *tailstream_partition(const struct tailstream *s)
{
	return s->part;
}

size_t tailstream_open_files(const struct tailstream *s)
{
	return s->n;
}

/* True when l, deleted since, left a compressed copy (logrotate compress
 * without delaycompress): the next start reads that copy after the stored
 * offset's file (resume), so closing l loses nothing. */
static bool compressed_since(const struct tailstream *s, const struct link *l,
                             const struct stat *st)
{
	int64_t fplen = st->st_size < TAILID_FP_MAX ? st->st_size : TAILID_FP_MAX;
	uint64_t fp;
	char *z;

	if (tailfile_compressed(l->tf) || fplen == 0 ||
	    tailid_fp_file(tailfile_fd(l->tf), fplen, &fp) != 0)
		return false;
	z = tailscan_find_compressed(s->path, ROTATED_DIRS(s), fp, fplen, tailfile_id(l->tf)->born,
	                             NULL);
	free(z);
	return z != NULL;
}

/* Counts and names the held files closing s loses: deleted since they were
 * rotated, with bytes skiff has not read. Closed, they are gone; a restart
 * finds only the stored offset's file missing (files_gone_unread, bytes
 * unknown), so each is read through to its end here (a compressed one
 * decompressed) and what it still held counted to the byte and line. A
 * stop while Kafka is away closes every file rotated during the outage this
 * way. */
static void note_closing(struct tailstream *s)
{
	struct source_env *env = s->c->env;

	for (size_t i = 0; i < s->n + s->nlinger; i++) {
		struct link *l = i < s->n ? &s->chain[i] : &s->linger[i - s->n];
		struct stat st;
		int64_t pos = tailfile_pos(l->tf);
		uint64_t bytes = 0, lines = 0;
		int rc;

		if (!l->held || fstat(tailfile_fd(l->tf), &st) != 0 || st.st_nlink > 0 ||
		    (!tailfile_compressed(l->tf) && st.st_size <= pos) ||
		    compressed_since(s, l, &st))
			continue;
		rc = tailfile_skip_rest(l->tf, &bytes, &lines);
		if (bytes == 0 && rc == 0)
			continue;
		env->log(env, LOG_WARN,
		         "%s: closing rotated file inode %lld (opened as %s, deleted since) "
		         "unread from byte %lld%s: %llu bytes, %llu lines lost%s (counted in "
		         "bytes_unread_lost, lines_unread_lost and files_gone_unread)",
		         s->path, (long long)tailfile_id(l->tf)->ino, tailfile_path(l->tf),
		         (long long)pos,
		         tailfile_compressed(l->tf) ? " of its uncompressed bytes" : "",
		         (unsigned long long)bytes, (unsigned long long)lines,
		         rc != 0 ? " and more: it could not be read to its end" : "");
		env->count(env, "bytes_unread_lost", bytes);
		env->count(env, "lines_unread_lost", lines);
		env->count(env, "files_gone_unread", 1);
	}
}

/* Puts link l of s into h (tailstream_held_files). */
static int put_held(const struct tailstream *s, const struct link *l, struct tailheld *h,
                    bool closing)
{
	const struct tailid *id = tailfile_id(l->tf);
	struct tailheld_file f = {.dev = id->dev,
	                          .ino = id->ino,
	                          .born = id->born,
	                          .size = -1,
	                          .name = tailfile_path(l->tf)};
	struct stat st;

	/* A stop counts a deleted file itself, unless its compressed copy is
	 * on disk ("read again at the next start"): that one stays, or the
	 * copy deleted while skiff is stopped would be lost unsaid (hostile
	 * finding h22b: 1,000 lines). */
	if (fstat(tailfile_fd(l->tf), &st) != 0 ||
	    (closing && st.st_nlink == 0 && !compressed_since(s, l, &st)))
		return 0;
	if (tailfile_compressed(l->tf)) {
		/* A compressed file stays one: found again by its inode. Its
		 * size and first bytes uncompressed, so that gone it is counted
		 * (hostile finding h22c: its 76,000 bytes were not), and not
		 * when it is the stored offset's file (settle_held). */
		f.size = tailfile_compressed_size(l->tf, &f.fp, &f.fplen);
	} else {
		f.size = (int64_t)st.st_size;
		f.fplen = f.size < TAILID_FP_MAX ? f.size : TAILID_FP_MAX;
		if (l->peek_len == f.fplen)
			f.fp = l->peek_fp;
		else if (tailid_fp_file(tailfile_fd(l->tf), f.fplen, &f.fp) != 0)
			f.fplen = 0;
	}
	return tailheld_put(h, s->path, &f);
}

int tailstream_held_files(const struct tailstream *s, struct tailheld *h, bool closing)
{
	bool any = s->nlinger > 0;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < s->nlinger; i++)
		rc = put_held(s, &s->linger[i], h, closing);
	for (size_t i = 0; rc == 0 && i < s->n; i++) {
		any = any || s->chain[i].held;
		/* Behind held files, the file at the path too: rotated and
		 * deleted while skiff is not running, its bytes are lost. */
		if (s->chain[i].held || (any && i + 1 == s->n))
			rc = put_held(s, &s->chain[i], h, closing);
	}
	return rc;
}

/* The open files of s in read order: those lingering (let go early,
 * oldest first), then the chain. */
static struct link *link_at(struct tailstream *s, size_t i)
{
	return i < s->nlinger ? &s->linger[i] : &s->chain[i - s->nlinger];
}

/* json, a compact object of integers, with member name set to v (any
 * member of that name left out, the new one last). malloc'd; NULL: no
 * memory. */
static char *with_member(const char *json, const char *name, int64_t v)
{
	size_t len = strlen(json), nlen = strlen(name), n = 0;
	char *out = malloc(len + nlen + 32);
	const char *p = json;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		if ((*p == '{' || *p == ',') && p[1] == '"' && strncmp(p + 2, name, nlen) == 0 &&
		    p[2 + nlen] == '"' && p[3 + nlen] == ':') {
			const char *e = p + 4 + nlen;

			while (*e != '\0' && *e != ',' && *e != '}')
				e++;
			if (*p == '{') {
				out[n++] = '{';
				e += *e == ',';
			}
			p = e;
			continue;
		}
		out[n++] = *p++;
	}
	while (n > 0 && out[n - 1] != '}')
		n--;
	if (n == 0) {
		free(out);
		return NULL;
	}
	n--; /* the closing brace */
	snprintf(out + n, len + nlen + 32 - n, "%s\"%s\":%lld}", n > 1 ? "," : "", name,
	         (long long)v);
	return out;
}

/* tailstream_stop for l, whose bytes [from, its position) were read and
 * not acknowledged (none when from is at or past it). Returns 1 when l was
 * deleted (no compressed copy on disk) and what it held from `from` on was
 * counted here, 0 when it is on disk (*size: its size) or a compressed
 * copy is, -1 when it cannot tell. */
static int stop_file(struct tailstream *s, struct link *l, int64_t from, int64_t *size)
{
	struct source_env *env = s->c->env;
	int64_t to = tailfile_pos(l->tf);
	int64_t read = to > from ? to - from : 0;
	uint64_t bytes = 0, lines = 0, before = 0;
	bool unknown = false;
	struct stat st;
	int rc;

	*size = -1;
	if (fstat(tailfile_fd(l->tf), &st) != 0)
		return -1;
	*size = st.st_size;
	if (st.st_nlink > 0 || compressed_since(s, l, &st)) {
		if (read > 0)
			env->log(env, LOG_WARN,
			         "%s: read but not acknowledged at this stop: %s (inode %lld) from "
			         "byte %lld to %lld: %s, read again at the next start",
			         s->path, tailfile_path(l->tf), (long long)tailfile_id(l->tf)->ino,
			         (long long)from, (long long)to,
			         st.st_nlink > 0 ? "on disk"
			                         : "deleted since, its compressed copy on disk");
		return 0;
	}
	if (read > 0 && tailfile_lines_between(l->tf, from, to, &before) != 0)
		unknown = true;
	rc = tailfile_skip_rest(l->tf, &bytes, &lines);
	bytes += (uint64_t)read;
	lines += before;
	if (bytes == 0 && rc == 0)
		return 1;
	env->log(
	    env, LOG_WARN,
	    "%s: %s at this stop: %s (inode %lld) from byte %lld to %lld, deleted since: "
	    "%llu bytes, %llu lines lost%s%s (counted in bytes_unread_lost, "
	    "lines_unread_lost and files_gone_unread)",
	    s->path, read > 0 ? "read but not acknowledged" : "not read", tailfile_path(l->tf),
	    (long long)tailfile_id(l->tf)->ino, (long long)from, (long long)(read > 0 ? to : from),
	    (unsigned long long)bytes, (unsigned long long)lines,
	    unknown ? " (and those of the bytes read before: they could not be read again)" : "",
	    rc != 0 ? " and more: it could not be read to its end" : "");
	env->count(env, "bytes_unread_lost", bytes);
	env->count(env, "lines_unread_lost", lines);
	env->count(env, "files_gone_unread", 1);
	return 1;
}

/* tailstream_stop for s holding no file (tailstream_spent), p parsed from
 * json: json with "finished" when s let go of p's very place (read to its
 * end, or found gone at a start and counted) and nothing is at the path
 * now, so that the next start neither looks for that file nor counts it
 * again (a path under a glob that is gone for good would otherwise be
 * counted at every start). NULL: keep json. With a file at the path,
 * nothing changes: one let go there may still get late writes, which a
 * start reads from its rotated name. */
static char *stop_spent(const struct tailstream *s, const char *json, const struct tailpos *p)
{
	const struct tailpos *q = &s->saved;
	struct stat st;

	if (!q->known || !q->finished || !q->has_id || p->finished || !p->has_id ||
	    p->dev != q->dev || p->ino != q->ino || p->pos != q->pos ||
	    (p->has_born && q->has_born && p->born != q->born))
		return NULL;
	if (stat(s->path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return NULL;
	return with_member(json, "finished", 1);
}

char *tailstream_stop(struct tailstream *s, const char *json)
{
	size_t total = s->n + s->nlinger, k = 0;
	bool found = false;
	struct tailpos p;
	int64_t size = -1;
	int gone = -1;

	if (json == NULL || tailpos_parse(json, &p) != 0)
		return NULL;
	if (total == 0)
		return tailstream_spent(s) ? stop_spent(s, json, &p) : NULL;
	/* The file holding the offset's bytes: its own, or after a
	 * copytruncate its copy (the file at the path, same inode, holds a
	 * later generation: its position and size say nothing of this one). */
	for (size_t i = 0; i < total && !found; i++) {
		if (tailchain_holds(link_at(s, i), &p)) {
			k = i;
			found = true;
		}
	}
	/* Not open: skiff let go of the offset's file, and every open file
	 * comes after it (nothing of them acknowledged) but those let go whose
	 * records were all acknowledged. */
	for (size_t i = found ? k : 0; i < total; i++) {
		struct link *l = link_at(s, i);
		int64_t sz = -1;
		int r;

		if (i < s->nlinger && !(found && i == k) && !tailchain_in_flight(s, l))
			continue;
		r = stop_file(s, l, found && i == k ? p.pos : 0, &sz);
		if (found && i == k) {
			gone = r;
			size = sz;
		}
	}
	if (gone == 1 && !p.finished)
		return with_member(json, "finished", 1);
	/* "seen": the size of the generation the offset names, its copy's
	 * when the file at the path was truncated since. */
	if (gone == 0 && !tailfile_compressed(link_at(s, k)->tf) && size > p.pos &&
	    !(p.has_seen && p.seen == size))
		return with_member(json, "seen", size);
	return NULL;
}

void tailstream_free(struct tailstream *s)
{
	if (s == NULL)
		return;
	note_closing(s);
	for (size_t i = 0; i < s->n; i++)
		tailchain_close(s, &s->chain[i]);
	for (size_t i = 0; i < s->nlinger; i++)
		tailchain_close(s, &s->linger[i]);
	src_ref_drop(s->last_off.ref);
	tailscan_free(s->pend, s->npend);
	free(s->chain);
	free(s->linger);
	free(s->unreadable);
	free(s);
}

/* ---- the backlog --------------------------------------------------------- */

/* The bytes of l after its position; false when not known (a compressed
 * file not read to its end: its uncompressed size is not known yet). */
static bool link_left(const struct link *l, uint64_t *left)
{
	int64_t size = tailfile_size(l->tf), pos = tailfile_pos(l->tf);

	if (size == INT64_MAX)
		return false;
	if (size < 0)
		size = l->seen_size; /* fstat failed: the size last seen */
	*left += size > pos ? (uint64_t)(size - pos) : 0;
	return true;
}

bool tailstream_backlog(const struct tailstream *s, uint64_t *bytes)
{
	*bytes = 0;
	if (!s->resolved || (s->n == 0 && s->no_room))
		return false;
	if (s->n == 0 && s->suspended) {
		*bytes = (uint64_t)(s->idle_size - s->saved.pos);
		return true;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!link_left(&s->chain[i], bytes))
			return false;
	for (size_t i = 0; i < s->nlinger; i++)
		if (!link_left(&s->linger[i], bytes))
			return false;
	for (size_t i = 0; i < s->npend; i++) {
		if (tailz_named(s->pend[i].path))
			return false;
		*bytes += s->pend[i].id.size > 0 ? (uint64_t)s->pend[i].id.size : 0;
	}
	return true;
}
