/* tailchain: opening files into a stream's chain, finding what comes next
 * (rotated siblings, the file at the path), letting go; the marks (tailpos.h)
 * of the lines handed out, held until the next poll. See tailchain.h, and
 * tailplan.c for the safety argument. */
#include "sources/file/tailchain.h"
#include "sources/file/tailnotice.h"
#include "util/clock.h"

#include "core/log.h"
#include "sources/file/tailz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the marks of lines handed out ------------------------------------- */

int tailchain_hold(struct tailctx *c, struct src_ref *r)
{
	if (r == NULL || (c->nheld > 0 && c->held[c->nheld - 1] == r))
		return 0; /* the lines of one read share their file's mark */
	if (c->nheld == c->capheld) {
		size_t cap = c->capheld ? c->capheld * 2 : 16;
		struct src_ref **grown = realloc(c->held, cap * sizeof(*grown));

		if (grown == NULL)
			return TAILSTREAM_ERR_NOMEM;
		c->held = grown;
		c->capheld = cap;
	}
	c->held[c->nheld++] = src_ref_hold(r);
	return 0;
}

void tailctx_release(struct tailctx *c)
{
	for (size_t i = 0; i < c->nheld; i++)
		src_ref_drop(c->held[i]);
	c->nheld = 0;
}

void tailctx_fini(struct tailctx *c)
{
	tailctx_release(c);
	free(c->held);
	c->held = NULL;
	c->capheld = 0;
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	hash_free(&c->dirindex);
	c->dirs = NULL;
	c->ndirs = c->capdirs = 0;
}

const char *tailchain_dir(struct tailctx *c, const char *path)
{
	char *dir = tailscan_dirname(path), **grown;
	size_t i;

	if (dir == NULL)
		return NULL;
	if (hash_get(&c->dirindex, dir, &i)) {
		free(dir);
		return c->dirs[i];
	}
	if (c->ndirs == c->capdirs) {
		size_t cap = c->capdirs ? c->capdirs * 2 : 4;

		if ((grown = realloc(c->dirs, cap * sizeof(*grown))) == NULL) {
			free(dir);
			return NULL;
		}
		c->dirs = grown;
		c->capdirs = cap;
	}
	if (hash_put(&c->dirindex, dir, c->ndirs) != 0) {
		free(dir);
		return NULL;
	}
	c->dirs[c->ndirs++] = dir;
	return dir;
}

void tailchain_release(struct tailstream *s)
{
	if (s->n == 0) {
		free(s->chain);
		s->chain = NULL;
		s->cap = 0;
	}
	if (s->nlinger == 0) {
		free(s->linger);
		s->linger = NULL;
	}
}

/* ---- the chain ---------------------------------------------------------- */

static void watch(struct tailstream *s)
{
	struct tailctx *c = s->c;
	const struct tailid *id;
	char proc[64];
	int wd;

	if (!c->notice->hears || s->n == 0)
		return;
	id = tailfile_id(s->chain[0].tf);
	if (s->wd >= 0 && s->wd_dev == id->dev && s->wd_ino == id->ino)
		return; /* watched already */
	/* By descriptor: the file may no longer have its old name. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tailfile_fd(s->chain[0].tf));
	wd = c->notice->watch_file(c->nstate, proc);
	if (wd != s->wd && s->wd >= 0 && !c->wd_shared(c->opaque, s->wd, s))
		c->notice->unwatch(c->nstate, s->wd);
	s->wd = wd;
	s->wd_dev = id->dev;
	s->wd_ino = id->ino;
	/* Once per watch: whether a rescan may leave the file to its events. */
	s->wd_direct = wd >= 0 && tailscan_file_watchable(s->path, tailfile_fd(s->chain[0].tf));
}

void tailchain_unwatch(struct tailstream *s)
{
	struct tailctx *c = s->c;

	if (s->wd >= 0 && !c->wd_shared(c->opaque, s->wd, s))
		c->notice->unwatch(c->nstate, s->wd);
	s->wd = -1; /* wd_dev, wd_ino and wd_direct still tell what it was */
}

bool tailchain_unchanged(const struct tailstream *s)
{
	struct tailid live;

	if (s->n != 0 || !s->suspended || !s->saved.known)
		return false;
	return tailid_of_path(s->path, &live) == 0 && live.dev == s->saved.dev &&
	       live.ino == s->saved.ino && live.size == s->idle_size && live.mtime == s->idle_mtime;
}

bool tailchain_has(const struct tailstream *s, const struct tailid *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (tailid_same(tailfile_id(s->chain[i].tf), id))
			return true;
	return false;
}

/* Notes what an opened file holds, so that a copytruncate that empties it
 * before skiff gets to read it can still be told from the copy. */
static void peek(struct link *l)
{
	int64_t size = tailfile_size(l->tf);

	l->max_size = size;
	l->peek_len = size < TAILID_FP_MAX ? size : TAILID_FP_MAX;
	if (l->peek_len < 0 || tailid_fp_file(tailfile_fd(l->tf), l->peek_len, &l->peek_fp) != 0)
		l->peek_len = 0;
	l->added_ns = clock_wall_ns();
	l->added_ms = clock_mono_ms();
}

/* The most links a chain holds: the held-file budget and its slack, and the
 * file at the path. */
static size_t chain_max(const struct tailstream *s)
{
	return s->c->max_held_files + HELD_SLACK + 1;
}

/* Makes room for one more link in the chain: grows it up to chain_max.
 * Returns 0, or -1 when it is full (or out of memory). */
static int chain_room(struct tailstream *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4;
	struct link *grown;

	if (s->n < s->cap)
		return 0;
	if (s->cap >= chain_max(s))
		return -1;
	if (cap > chain_max(s))
		cap = chain_max(s);
	if ((grown = realloc(s->chain, cap * sizeof(*grown))) == NULL)
		return -1;
	s->chain = grown;
	s->cap = cap;
	return 0;
}

static void note_irregular(struct tailstream *s, bool pseudo);

/* ---- the held-file budget ------------------------------------------------ */

static void hold(struct tailstream *s, struct link *l)
{
	if (!l->held)
		s->c->held_files++;
	l->held = true;
}

static void unhold(struct tailstream *s, struct link *l)
{
	if (l->held)
		s->c->held_files--;
	if (l->gone)
		s->c->held_bytes -= l->gone_size;
	l->held = l->gone = false;
	l->gone_size = 0;
}

void tailchain_close(struct tailstream *s, struct link *l)
{
	unhold(s, l);
	if (l->gen != NULL)
		src_ref_drop(&l->gen->ref);
	l->gen = NULL;
	tailfile_close(l->tf);
	l->tf = NULL;
	s->c->nopen--;
}

/* Notes that l, held, was deleted since (a fstat, until it is). */
static void look_gone(struct tailstream *s, struct link *l)
{
	struct stat st;

	if (!l->held || l->gone || fstat(tailfile_fd(l->tf), &st) != 0 || st.st_nlink > 0)
		return;
	l->gone = true;
	l->gone_size = (int64_t)st.st_size;
	s->c->held_bytes += l->gone_size;
}

void tailchain_look_held(struct tailstream *s)
{
	for (size_t i = 0; i < s->n; i++) {
		/* Every file before the last one was rotated away; the last one
		 * when the path names another file or none. */
		if (i + 1 < s->n || s->moved)
			hold(s, &s->chain[i]);
		look_gone(s, &s->chain[i]);
	}
	for (size_t i = 0; i < s->nlinger; i++)
		look_gone(s, &s->linger[i]);
}

/* True when one more rotated file may be opened into s's chain: the
 * held-file budget and its slack have room (tailchain.h). */
static bool held_room(const struct tailstream *s)
{
	return s->n + 1 < chain_max(s) && s->c->held_files < s->c->max_held_files + HELD_SLACK;
}

/* Says why the compressed file tf at path cannot be read from pos on, and
 * what it decodes to: a stream that does not verify (cut short) yields
 * none of its bytes to skiff, though gunzip writes them out. */
static void warn_cut_short(struct tailstream *s, const char *path, const struct tailfile *tf,
                           int64_t pos)
{
	/* Bounded: a warning does not decode a huge file to its end. */
	int64_t cap = pos + (64 << 20), n = tailscan_zdecoded(path, cap);
	const char *why = tailfile_broken(tf);

	s->c->env->log(
	    s->c->env, LOG_WARN,
	    "%s: %s: it decodes to %s%lld bytes%s; the position to read it from is %lld: "
	    "nothing more of it can be read (counted in compressed_cut_short)",
	    path, why != NULL ? why : "its uncompressed data ends early",
	    n >= cap ? "at least " : "", (long long)n,
	    why != NULL ? ", but a stream is read only once its check passes" : "", (long long)pos);
	s->c->env->count(s->c->env, "compressed_cut_short", 1);
}

const char *tailchain_strerror(int rc)
{
	switch (rc) {
	case TAILCHAIN_OK:
		return "ok";
	case TAILCHAIN_MOVED:
		return "renamed since it was listed";
	case TAILCHAIN_CUT_SHORT:
		return "compressed, its data ending before the position";
	default:
		return "cannot be opened, or shorter than the position";
	}
}

/* Opens path into the chain at index at, starting at pos. expect: the file
 * a listing found there (NULL: any), since a rotation may rename files
 * between a listing and the open. Returns 0, -2 when the path names another
 * file than expect, or nothing, by now (logrotate renaming it: list again),
 * -3 when it is compressed and damaged before pos (logged, counted), or -1
 * (logged) when it cannot be opened or is shorter than pos. */
int tailchain_add_as(struct tailstream *s, size_t at, const char *path, int64_t pos, bool copy,
                     bool need_room, const struct tailid *expect)
{
	struct tailctx *c = s->c;
	struct tailfile *tf = NULL;
	bool short_of_pos;
	char why[256];
	int rc;

	if (at > s->n)
		return TAILCHAIN_ERR;
	if (c->nopen >= c->max_open && c->make_room(c->opaque, s) != 0 && need_room) {
		s->no_room = true; /* tailstream_check retries soon */
		return TAILCHAIN_ERR;
	}
	/* Only now: a stream waiting for a descriptor keeps no chain. */
	if (chain_room(s) != 0)
		return TAILCHAIN_ERR;
	rc = tailfile_open(&c->guard, path, c->max_line, c->policy, &tf, why, sizeof(why));
	if (expect != NULL &&
	    (rc == TAILFILE_ERR_NOENT || (rc == 0 && !tailid_same(tailfile_id(tf), expect)))) {
		tailfile_close(tf);
		return TAILCHAIN_MOVED;
	}
	short_of_pos = rc == 0 && tailfile_start(tf, pos) != 0;
	if (short_of_pos && tailfile_compressed(tf)) {
		/* Found by its first bytes: it is the file, damaged before pos. */
		warn_cut_short(s, path, tf, pos);
		tailfile_close(tf);
		return TAILCHAIN_CUT_SHORT;
	}
	if (short_of_pos) {
		/* Not the file the position was taken in: a newer file that got
		 * its inode (ext4 reuses them at once), or it was truncated. */
		c->env->log(c->env, LOG_WARN,
		            "%s: holds %lld bytes, fewer than the position %lld "
		            "to read it from: not the file expected (its inode reused by a newer "
		            "file, or truncated): skipped",
		            path, (long long)tailfile_size(tf), (long long)pos);
		tailfile_close(tf);
		return TAILCHAIN_ERR;
	}
	if (rc != 0) {
		if ((rc == TAILFILE_ERR_NOTREG || rc == TAILFILE_ERR_PSEUDO) &&
		    strcmp(path, s->path) == 0)
			note_irregular(s, rc == TAILFILE_ERR_PSEUDO);
		else if (rc != TAILFILE_ERR_NOENT && rc != TAILFILE_ERR_REFUSED)
			c->env->log(c->env, LOG_WARN, "%s: %s", path,
			            why); /* refused: the poll fails */
		tailfile_close(tf);
		return TAILCHAIN_ERR;
	}
	if (strcmp(path, s->path) == 0)
		s->irregular_logged = false; /* a log again: say it if that changes */
	memmove(&s->chain[at + 1], &s->chain[at], (s->n - at) * sizeof(s->chain[0]));
	/* A compressed file is complete, like a copy: done at its end. */
	s->chain[at] = (struct link){
	    .tf = tf, .seen_size = -1, .moved_at = -1, .copy = copy || tailfile_compressed(tf)};
	if (!tailfile_compressed(tf))
		peek(&s->chain[at]);
	s->n++;
	c->nopen++;
	if (strcmp(path, s->path) != 0)
		hold(s, &s->chain[at]); /* a rotated file, a copy: not at the path */
	if (at == 0)
		watch(s);
	if (strcmp(path, s->path) == 0)
		/* reopening after an idle close is routine beyond max.open.files */
		c->env->log(c->env, s->suspended ? LOG_DEBUG : LOG_INFO,
		            "reading %s from byte %lld", path, (long long)pos);
	else
		c->env->log(c->env, LOG_INFO, "reading %s from byte %lld (%s of %s)", path,
		            (long long)pos,
		            tailfile_compressed(tf) ? "compressed"
		            : copy                  ? "copy"
		                                    : "rotated",
		            s->path);
	return TAILCHAIN_OK;
}

int tailchain_add(struct tailstream *s, size_t at, const char *path, int64_t pos, bool copy,
                  bool need_room)
{
	return tailchain_add_as(s, at, path, pos, copy, need_room, NULL);
}

/* Says once, until a file is read at the path again, that the path names
 * something that is not a log: a FIFO, directory or device, or a pseudo file
 * (/proc, /sys: made up at each read, so it has no history to follow and a
 * position in it means nothing; reading it again and again would ship the
 * same lines for ever). It is skipped until a regular file is there. */
static void note_irregular(struct tailstream *s, bool pseudo)
{
	if (s->irregular_logged)
		return;
	if (pseudo)
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s is not a log: a file of /proc, /sys or the like, made up at "
		               "each read (size 0 or fixed, yet it reads bytes): skipped",
		               s->path);
	else
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s is not a regular file (a FIFO, directory or device): skipped "
		               "until a regular file appears there",
		               s->path);
	s->c->env->count(s->c->env, "paths_not_regular", 1);
	s->irregular_logged = true;
}

static bool listed(const struct tailscan_entry *fam, size_t nfam, const struct tailid *id)
{
	for (size_t i = 0; i < nfam; i++)
		if (tailid_same(&fam[i].id, id) && tailid_cmp_age(&fam[i].id, id) == 0)
			return true;
	return false;
}

/* Rotated files the chain had no room for at the last listing and that are
 * gone from this one (fam) without having been opened: deleted unread.
 * Says so, naming each, counts them (their bytes as listed: a rotated file
 * is not written to; a compressed one's uncompressed bytes are not known),
 * and keeps the new waiting list. */
static void note_pending(struct tailstream *s, struct tailscan_entry *fam, size_t nfam, size_t from)
{
	size_t keep = 0;

	for (size_t i = 0; i < s->npend; i++) {
		const struct tailscan_entry *e = &s->pend[i];
		bool z = tailz_named(e->path);

		if (listed(fam, nfam, &e->id) || tailchain_has(s, &e->id))
			continue;
		s->c->env->log(s->c->env, LOG_WARN,
		               "%s: rotated file %s was deleted before skiff could open it (the "
		               "held files were past max.held.files=%zu): %s%lld bytes lost, "
		               "counted in bytes_unread_lost and files_gone_unread",
		               s->path, e->path, s->c->max_held_files,
		               z ? "its uncompressed bytes are not known; compressed, " : "",
		               z ? 0LL : (long long)e->id.size);
		if (!z && e->id.size > 0)
			s->c->env->count(s->c->env, "bytes_unread_lost", (uint64_t)e->id.size);
		s->c->env->count(s->c->env, "files_gone_unread", 1);
	}
	tailscan_free(s->pend, s->npend);
	s->pend = NULL;
	s->npend = 0;
	for (size_t i = from; i < nfam; i++)
		if (fam[i].kind == TAILID_ROTATED && !tailchain_has(s, &fam[i].id))
			keep++;
	if (keep == 0 || (s->pend = calloc(keep, sizeof(*s->pend))) == NULL)
		return;
	for (size_t i = from; i < nfam; i++) {
		if (fam[i].kind != TAILID_ROTATED || tailchain_has(s, &fam[i].id))
			continue;
		s->pend[s->npend++] = fam[i];
		fam[i].path = NULL; /* owned by s->pend now */
	}
}

/* ---- compressed rotations ------------------------------------------------
 * logrotate compresses rotated files oldest first, each right after its
 * rotation (or one rotation later: delaycompress), so every numbered
 * compressed sibling is older than every uncompressed one, and compressed
 * siblings are born (compressed) in the order they were rotated. A file's
 * compressed copy is recognised by its first uncompressed bytes. One
 * uncompressed sibling is older all the same: app.log-YYYYMMDDHH.backup,
 * which logrotate makes of a file a writer recreated at the path between
 * its rename and its create, and never rotates or compresses; so after a
 * compressed file come the uncompressed siblings born after its floor
 * (tailchain_set_floor), when that is known. */

void tailchain_set_floor(struct tailstream *s, size_t i, const struct tailid *floor)
{
	struct link *l = &s->chain[i];

	if (floor->born == INT64_MIN || !tailfile_compressed(l->tf))
		return; /* "everything": no file; or not compressed after all */
	l->floor = *floor;
	l->has_floor = true;
	tailfile_mark(l->tf)->after = floor->born;
}

/* The floor of the compressed files found after the chain's last file (or
 * `after`, with floor `given`, when the chain is empty): the last file's
 * own, or the last file itself when it is not compressed. */
static bool floor_of_next(const struct tailstream *s, const struct tailid *given,
                          struct tailid *out)
{
	const struct link *t = s->n > 0 ? &s->chain[s->n - 1] : NULL;

	if (t == NULL && given != NULL)
		*out = *given;
	else if (t != NULL && tailfile_compressed(t->tf))
		*out = t->floor;
	else if (t != NULL)
		*out = *tailfile_id(t->tf);
	return t == NULL ? given != NULL : !tailfile_compressed(t->tf) || t->has_floor;
}

/* True when no compressed sibling was born after fam[i]. */
static bool newest_compressed(const struct tailscan_entry *fam, size_t nfam, size_t i)
{
	for (size_t j = 0; j < nfam; j++)
		if (fam[j].kind == TAILID_COMPRESSED && tailid_cmp_age(&fam[j].id, &fam[i].id) > 0)
			return false;
	return true;
}

/* True when the compressed file zpath decodes to the first bytes of path. */
static bool copy_of(const char *zpath, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool copy = fd >= 0 && tailscan_zprefix(zpath, fd);

	if (fd >= 0)
		close(fd);
	return copy;
}

/* True when fam[i], compressed, is a copy logrotate is still writing: an
 * uncompressed sibling, or the file at the path, starts with its bytes
 * (all of them: files that start with one banner longer than the head
 * are not copies of each other).
 * One that is damaged is not (a copy being written is a prefix of valid
 * data): it takes its place in the chain, where reading it says why it
 * could not be read. One with no byte to compare is only while it is the
 * newest compressed file and an uncompressed rotated file remains (its
 * source, not deleted until it is written). */
static bool compressing(const struct tailstream *s, const struct tailscan_entry *fam, size_t nfam,
                        size_t i)
{
	unsigned char zh[TAILZ_HEAD], ph[TAILZ_HEAD];
	int zerr, perr;
	ssize_t zl = tailscan_head(fam[i].path, zh, &zerr), pl;

	if (zl < 0)
		return true; /* gone, or unreadable: nothing to read either way */
	if (zerr == TAILZ_ERR_DATA || zerr == TAILZ_ERR_LIMIT ||
	    (zl == 0 && !newest_compressed(fam, nfam, i)))
		return false;
	for (size_t j = 0; j <= nfam; j++) {
		const char *p = j < nfam ? fam[j].path : s->path;

		if ((j < nfam && fam[j].kind != TAILID_ROTATED) || (j == nfam && zl == 0))
			continue;
		if ((pl = tailscan_head(p, ph, &perr)) >= zl && (zl > 0 || pl > 0) &&
		    memcmp(zh, ph, (size_t)zl) == 0 && (zl == 0 || copy_of(fam[i].path, p)))
			return true;
	}
	return false;
}

/* True when path is logrotate's NAME-YYYYMMDDHH.backup (tailid_rotated_name). */
static bool backup_named(const char *path)
{
	size_t n = strlen(path);

	return n > 7 && strcmp(path + n - 7, ".backup") == 0;
}

/* The birth time after which compressed siblings come after `after`, the
 * last file of the chain (or, chain empty, the birth of the offset's file):
 * INT64_MAX for none (it is still uncompressed on disk, so all compressed
 * ones are older), else the birth of its compressed copy, found by its first
 * bytes, or its own birth when it was deleted uncompressed. *written: the
 * compressed siblings must also have been written after that time (their
 * mtime, which logrotate and gzip, xz, zstd copy from the original): `after`
 * is a .backup, which logrotate never compresses, so the files rotated after
 * it are compressed beside it - and so is the one it was made beside, older
 * (issue 22: 3,925 lines of the file after a .backup skipped at a restart). */
static int64_t compressed_since(const struct tailstream *s, const struct tailscan_entry *fam,
                                size_t nfam, const struct tailid *after, const struct tailid *live,
                                bool *written)
{
	unsigned char h[TAILZ_HEAD], zh[TAILZ_HEAD];
	const struct tailfile *last = s->n > 0 ? s->chain[s->n - 1].tf : NULL;
	ssize_t len;
	int zerr;

	*written = false;
	if (last != NULL && tailfile_compressed(last))
		return after->born;
	/* Held open, its inode is its own; else its birth tells it from a
	 * newer file given the same inode. */
	if (live != NULL && tailid_same(live, after) &&
	    (last != NULL || tailid_cmp_age(live, after) == 0))
		return INT64_MAX;
	for (size_t i = 0; i < nfam; i++)
		if (fam[i].kind == TAILID_ROTATED && tailid_same(&fam[i].id, after) &&
		    (last != NULL || tailid_cmp_age(&fam[i].id, after) == 0)) {
			if (!backup_named(fam[i].path))
				return INT64_MAX;
			*written = true;
			return after->born;
		}
	if (last == NULL || (len = pread(tailfile_fd(last), h, sizeof(h), 0)) < 0)
		return after->born; /* gone: the offset's copy was looked for at resume */
	for (size_t i = 0; i < nfam; i++)
		if (fam[i].kind == TAILID_COMPRESSED && fam[i].id.born >= after->born &&
		    tailscan_head(fam[i].path, zh, &zerr) == len &&
		    memcmp(h, zh, (size_t)len) == 0 &&
		    tailscan_zprefix(fam[i].path, tailfile_fd(last)))
			return fam[i].id.born;
	return after->born;
}

/* Whether fam[i] goes into the chain after `after` in this pass (0: the
 * compressed siblings born after zsince, and written after it when written
 * (compressed_since); 1: the uncompressed ones). */
static bool next_in_pass(const struct tailstream *s, const struct tailscan_entry *fam, size_t nfam,
                         size_t i, int pass, const struct tailid *after, int64_t zsince,
                         bool written, const struct tailid *live)
{
	const struct tailscan_entry *e = &fam[i];

	if (tailchain_has(s, &e->id) || (live != NULL && tailid_same(&e->id, live)))
		return false;
	if (s->unreadable != NULL && tailid_same(&e->id, s->unreadable) &&
	    tailid_cmp_age(&e->id, s->unreadable) == 0)
		return false;
	if (pass == 0)
		return e->kind == TAILID_COMPRESSED && tailz_named(e->path) &&
		       e->id.born > zsince && (!written || e->id.mtime > zsince) &&
		       !compressing(s, fam, nfam, i);
	if (e->kind != TAILID_ROTATED)
		return false;
	/* After a compressed file, the uncompressed siblings born after its
	 * floor; all of them when that is not known. */
	if (s->n > 0 && tailfile_compressed(s->chain[s->n - 1].tf))
		return !s->chain[s->n - 1].has_floor ||
		       tailid_cmp_age(&e->id, &s->chain[s->n - 1].floor) > 0;
	return tailid_cmp_age(&e->id, after) > 0;
}

/* Appends e to the chain; floor: its floor (a compressed file), or NULL.
 * Returns 0, or -1 when e was renamed since the listing. */
static int add_next(struct tailstream *s, const struct tailscan_entry *e,
                    const struct tailid *floor)
{
	int rc = tailchain_add_as(s, s->n, e->path, 0, false, false, &e->id);

	if (rc == 0 && floor != NULL)
		tailchain_set_floor(s, s->n - 1, floor);
	return rc == TAILCHAIN_MOVED ? -1 : 0;
}

/* One listing's worth of tailchain_extend_z(). Returns 0, or -1 when a file
 * was renamed between the listing and its open (the caller lists again). */
static int extend_once(struct tailstream *s, const struct tailid *after, const struct tailid *given)
{
	struct tailscan_entry *fam = NULL;
	struct tailid live;
	bool exists = tailid_of_path(s->path, &live) == 0, has_live = exists && live.regular;
	size_t nfam = 0, first_out = SIZE_MAX;
	int rc = 0;

	s->moved = false;
	if (exists && !live.regular)
		note_irregular(s, live.pseudo);
	if (s->n > 0 && has_live && tailid_same(tailfile_id(s->chain[s->n - 1].tf), &live))
		return 0;
	if (s->n > 0)
		after = tailfile_id(s->chain[s->n - 1].tf);
	if (after != NULL && tailscan_family(s->path, ROTATED_DIRS(s), &fam, &nfam) == 0) {
		const struct tailid *lv = has_live ? &live : NULL;
		bool written;
		int64_t zsince = compressed_since(s, fam, nfam, after, lv, &written);
		bool z_out = false;
		struct tailid from = *after; /* the chain grows: its last file changes */
		struct tailid floor;
		bool has_floor = floor_of_next(s, given, &floor);

		for (int pass = 0; pass < 2 && !z_out; pass++)
			for (size_t i = 0; i < nfam && rc == 0; i++) {
				if (!next_in_pass(s, fam, nfam, i, pass, &from, zsince, written,
				                  lv))
					continue;
				if (!held_room(s) && first_out == SIZE_MAX)
					first_out = i; /* the rest once the chain has room */
				else if (first_out == SIZE_MAX)
					rc = add_next(s, &fam[i],
					              pass == 0 && has_floor ? &floor : NULL);
				if (pass == 0 && first_out != SIZE_MAX)
					z_out = true; /* compressed ones first: the rest later */
			}
		if (z_out)
			first_out = nfam;
		if (rc == 0)
			note_pending(s, fam, nfam, first_out < nfam ? first_out : nfam);
	}
	tailscan_free(fam, nfam);
	/* The file at the path comes after every rotated file: never before
	 * one that did not fit. */
	if (rc == 0 && first_out == SIZE_MAX && has_live && !tailchain_has(s, &live) &&
	    s->n + 1 < chain_max(s) &&
	    tailchain_add_as(s, s->n, s->path, 0, false, false, &live) == TAILCHAIN_MOVED)
		rc = -1;
	if (s->n > 0 && !(has_live && tailid_same(tailfile_id(s->chain[s->n - 1].tf), &live)))
		s->moved = true; /* more to find later, or the path is gone */
	return rc;
}

/* Appends the rotated siblings of the path born after `after` (all when
 * NULL), oldest first, then the file now at the path, skipping files already
 * in the chain. Nothing when the chain's last file is still at the path. */
void tailchain_extend(struct tailstream *s, const struct tailid *after)
{
	tailchain_extend_z(s, after, NULL);
}

void tailchain_extend_z(struct tailstream *s, const struct tailid *after,
                        const struct tailid *floor)
{
	size_t had = s->n;

	for (int tries = 0; tries < 5 && extend_once(s, after, floor) != 0; tries++)
		; /* renamed under us: list again */
	/* The file that was at the path until now may still be written to by
	 * a writer that has not reopened yet: rotate.wait.ms from now. Rotated
	 * files found by listing were moved earlier: their mtime alone says. */
	for (size_t i = 0; i < s->n; i++)
		if (s->chain[i].moved_at < 0 && (s->moved || i + 1 < s->n))
			s->chain[i].moved_at = i < had ? clock_mono_ms() : 0;
	tailchain_look_held(s);
}

/* The offset after everything the chain has handed out: chain[0]'s place,
 * or the end of the last file let go. */
struct src_offset tailchain_offset(const struct tailstream *s)
{
	const struct tailfile *tf = s->n > 0 ? s->chain[0].tf : NULL;

	if (tf == NULL)
		return s->last_off;
	return (struct src_offset){
	    .v = {tailfile_pos(tf), tailfile_id(tf)->dev, tailfile_id(tf)->ino, tailfile_v3(tf)},
	    .ref = &tailfile_mark(tf)->ref};
}

bool tailchain_holds(const struct link *l, const struct tailpos *p)
{
	const struct tailid *id = tailfile_id(l->tf);
	bool same = p->has_id && id->dev == p->dev && id->ino == p->ino &&
	            (!p->has_born || id->born == p->born);
	int64_t size = tailfile_size(l->tf);

	if (!p->known || (!same && (!l->copy || !p->has_fp || p->fplen == 0)))
		return false;
	if (size >= 0 && size < p->pos)
		return false;
	if (p->has_fp && p->fplen > 0 && !tailfile_matches(l->tf, p->fp, p->fplen))
		return false;
	return !p->has_tail || tailfile_tail_at(l->tf, p->pos, p->tail);
}

/* True when m is referenced by more than base and what the stream holds. */
static bool named(const struct tailstream *s, const struct tailmark *m, uint32_t base)
{
	return m->ref.refs > base + (s->last_off.ref == &m->ref);
}

bool tailchain_in_flight(const struct tailstream *s, const struct link *l)
{
	struct source_env *env = s->c->env;
	const char *json;
	struct tailpos p;

	/* A copy's bytes are also named by the offsets of the file it copies,
	 * read before its truncation: that generation's mark. */
	if (!named(s, tailfile_mark(l->tf), 1) && (l->gen == NULL || !named(s, l->gen, 1)))
		return false;
	json = env->committed(env, s->part);
	if (json == NULL || tailpos_parse(json, &p) != 0 || !tailchain_holds(l, &p))
		return true;
	return !p.finished && p.pos < tailfile_pos(l->tf);
}

/* Keeps l, let go early, open for late writes (see tailstream_read), or
 * waiting for its records' acknowledgements; when all LINGER_MAX places
 * are taken the oldest is closed. */
static void keep_lingering(struct tailstream *s, struct link *l)
{
	if (s->linger == NULL && (s->linger = malloc(LINGER_MAX * sizeof(*s->linger))) == NULL) {
		tailchain_close(s, l); /* out of memory: let go for good */
		return;
	}
	if (s->nlinger == LINGER_MAX) {
		tailchain_close(s, &s->linger[0]);
		memmove(&s->linger[0], &s->linger[1], (LINGER_MAX - 1) * sizeof(s->linger[0]));
		s->nlinger--;
	}
	hold(s, l); /* not at the path: its disk counts while it is open */
	s->linger[s->nlinger++] = *l;
}

/* Says why a compressed file let go at end could not be read past it, and
 * counts it, when it could not: its data ended early, or it is empty
 * (app.log.1.gz of 0 bytes: its compressed data is missing). */
static void note_broken(struct tailstream *s, const struct tailfile *tf, int64_t end)
{
	const char *why = tailfile_broken(tf);

	if (why == NULL && end == 0 && !tailfile_compressed(tf) && tailz_named(tailfile_path(tf)))
		why = tailz_strerror(TAILZ_ERR_SHORT);
	if (why == NULL)
		return;
	s->c->env->log(s->c->env, LOG_WARN,
	               "%s: %s: %s: nothing after byte %lld could be read (counted in "
	               "compressed_cut_short)",
	               s->path, tailfile_path(tf), why, (long long)end);
	s->c->env->count(s->c->env, "compressed_cut_short", 1);
}

/* Lets go of chain[0], which was read to its end. */
void tailchain_pop(struct tailstream *s, bool may_wait)
{
	struct link *l = &s->chain[0];
	const struct tailid *id = tailfile_id(l->tf);
	int64_t end = tailfile_pos(l->tf);

	if (s->n == 1)
		tailchain_extend(s, NULL); /* whatever came after it, before it is gone */
	s->saved = (struct tailpos){.known = true,
	                            .has_id = true,
	                            .has_born = true,
	                            .has_after = tailfile_compressed(l->tf),
	                            .finished = true,
	                            .pos = tailfile_pos(l->tf),
	                            .dev = id->dev,
	                            .ino = id->ino,
	                            .born = id->born,
	                            .after = l->has_floor ? l->floor.born : TAILPOS_AFTER_UNKNOWN};
	s->c->env->log(s->c->env, LOG_INFO, "%s: finished %s at byte %lld", s->path,
	               tailfile_path(l->tf), (long long)end);
	note_broken(s, l->tf, end);
	src_ref_drop(s->last_off.ref);
	s->last_off = tailchain_offset(s);
	src_ref_hold(s->last_off.ref); /* the mark outlives the file */
	tailfile_mark(l->tf)->done = end;
	/* Not lingering, it waits while its records may: a stop during an
	 * outage must still name it, and count it once deleted (issue 22: one
	 * file a stop, 3,987 lines lost uncounted with create rotation). */
	l->waiting = !(l->linger && s->n > 1) && may_wait && tailchain_in_flight(s, l);
	if ((l->linger && s->n > 1) || l->waiting) {
		keep_lingering(s, l);
	} else {
		tailchain_close(s, l);
	}
	memmove(&s->chain[0], &s->chain[1], (s->n - 1) * sizeof(s->chain[0]));
	s->n--;
	tailchain_release(s);
	if (s->n > 0)
		watch(s);
	else if (s->wd >= 0 && !s->c->wd_shared(s->c->opaque, s->wd, s)) {
		s->c->notice->unwatch(s->c->nstate, s->wd);
		s->wd = -1;
	}
}
