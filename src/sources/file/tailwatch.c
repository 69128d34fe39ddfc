/* tailwatch: the file source's streams and what looks at them - inotify
 * watches and events, rescans and globs, the index of streams a poll looks
 * at. Private to the file source (filesrc.h); main loop only.
 *
 * Change detection: one backend (tailnotice.h, chosen by watch.mode at open)
 * watching the directories of the streams (names appearing, disappearing,
 * renamed) and the file each stream holds open (growth, rename, deletion),
 * plus a slow rescan; with watch.mode=poll the backend hears nothing and
 * stat polling every poll.interval.ms does the work instead. Watches do
 * not grow with the files: beyond max.open.files a file closed while idle
 * loses its own watch, and its directory's watch hears writes to its files
 * from then on (struct dirwatch.writes). An idle connector wakes only for
 * the rescan, which costs what the watches do not cover: it globs only
 * patterns whose directory is not watched, and looks (a stat) only at the
 * streams that are not quiet (tailstream_quiet: an idle file watched by
 * itself or, closed, by its directory, in a watched directory, both on a
 * local file system, no symlink on the way). Every FULL_EVERY-th rescan,
 * after an inotify queue overflow, and after a watched directory went away,
 * it globs and looks at every stream as before: the safety net for what
 * inotify cannot hear (writes through mmap, a symlink's target directory).
 * Between those, nothing walks every stream (tailindex): an event finds its
 * streams by watch or by name, and a poll, its deadline and a rescan look
 * only at the streams marked when something acted on them, until they are
 * settled again. */
#include "sources/file/tailwatch.h"
#include "sources/file/tailnotice.h"
#include "config/config.h"
#include "util/hash.h"
#include "core/log.h"
#include "sources/file/taildup.h"
#include "sources/file/tailheld.h"
#include "sources/file/tailindex.h"
#include "sources/file/tailmulti.h"
#include "sources/file/tailscan.h"
#include "sources/file/tailstream.h"
#include "util/clock.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FULL_EVERY 30 /* rescans: one in 30 looks at every file */

/* ---- streams and watches ----------------------------------------------- */

static void watch_dir(struct filesrc *f, const char *dir)
{
	struct dirwatch *grown;
	int wd;

	if (!f->ctx.notice->hears || hash_get(&f->dirnames, dir, &(size_t){0}))
		return;
	wd = f->ctx.notice->watch_dir(f->ctx.nstate, dir, false);
	if (wd < 0) {
		if (errno != ENOENT)
			f->env->log(f->env, LOG_WARN,
			            "%s: cannot watch this directory (%s): relying "
			            "on the %lld ms rescan",
			            dir, strerror(errno), (long long)f->rescan_ms);
		return;
	}
	grown = realloc(f->dirs, (f->ndirs + 1) * sizeof(*grown));
	if (grown == NULL)
		return;
	f->dirs = grown;
	f->dirs[f->ndirs].wd = wd;
	f->dirs[f->ndirs].writes = false;
	f->dirs[f->ndirs].direct = tailscan_dir_watchable(dir);
	if ((f->dirs[f->ndirs].dir = strdup(dir)) == NULL)
		return;
	if (hash_put(&f->dirnames, f->dirs[f->ndirs].dir, f->ndirs) != 0) {
		free(f->dirs[f->ndirs].dir);
		return; /* the watch stays, unused: its events are ignored */
	}
	f->ndirs++;
}

/* True when dir is watched, and its watch hears every name change in it
 * (and, when writes, every write to its files). */
static bool dir_watched(const struct filesrc *f, const char *dir, bool writes)
{
	size_t i;

	return hash_get(&f->dirnames, dir, &i) && f->dirs[i].wd >= 0 && f->dirs[i].direct &&
	       (!writes || f->dirs[i].writes);
}

/* Makes dir's watch hear writes to its files (IN_MODIFY), for the streams
 * closed while idle: beyond max.open.files, one watch per directory, not
 * one per file (each pins an inode in the kernel, and a Raspberry Pi
 * allows 8,192 or so). Directories with no stream closed never hear
 * writes: writes of files skiff does not tail do not wake it. */
static void hear_writes(struct filesrc *f, const char *dir)
{
	size_t i;
	struct dirwatch *d;
	int wd;

	if (!hash_get(&f->dirnames, dir, &i) || (d = &f->dirs[i])->writes || d->wd < 0)
		return;
	d->writes = true;
	/* The same directory: the same watch, its mask replaced. */
	if ((wd = f->ctx.notice->watch_dir(f->ctx.nstate, d->dir, true)) != d->wd) {
		if (wd >= 0)
			f->ctx.notice->unwatch(f->ctx.nstate, wd); /* another one now: gone */
		d->writes = false;
		d->wd = -1; /* watched again at the next rescan, in full */
	}
}

/* True when a glob of every pattern would find nothing that the watches of
 * their directories have not announced (a name appearing sets glob_due). */
static bool globs_watched(const struct filesrc *f)
{
	bool ok = true;

	for (size_t i = 0; ok && i < f->npat; i++) {
		char *dir;

		if (strpbrk(f->patterns[i], "*?[{") == NULL)
			continue; /* a stream of its own */
		dir = tailscan_dirname(f->patterns[i]);
		ok = dir != NULL && strpbrk(dir, "*?[{") == NULL && dir_watched(f, dir, false);
		free(dir);
	}
	return ok;
}

/* Watches again the directories whose watch went away (deleted, moved):
 * what happened in them meanwhile calls for a full look. */
static void rewatch_dirs(struct filesrc *f)
{
	for (size_t i = 0; i < f->ndirs; i++) {
		struct dirwatch *d = &f->dirs[i];

		if (d->wd >= 0 ||
		    (d->wd = f->ctx.notice->watch_dir(f->ctx.nstate, d->dir, d->writes)) < 0)
			continue;
		d->direct = tailscan_dir_watchable(d->dir);
		f->check_all = f->glob_due = true;
	}
}

/* The periodic rescan: what it looks at (see the top of this file). */
static void rescan(struct filesrc *f)
{
	if (!f->ctx.notice->hears || ++f->rescans % FULL_EVERY == 0) {
		f->check_all = f->glob_due = true;
		return;
	}
	rewatch_dirs(f);
	if (f->check_all)
		return; /* a directory came back: rewatch_dirs asked for a full look */
	f->check_unquiet = true;
	if (!globs_watched(f))
		f->glob_due = true;
}

/* The stream of path, found by its name (dir/base) in the index: the
 * streams of one name are few, and a path is one of them or none. */
static struct tailstream *find_stream(const struct filesrc *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int len = slash == NULL   ? snprintf(dir, sizeof(dir), ".")
	          : slash == path ? snprintf(dir, sizeof(dir), "/")
	                          : snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);

	if (len < 0 || (size_t)len >= sizeof(dir))
		return NULL;
	for (long i = tailindex_name_first(f->idx, dir, slash ? slash + 1 : path);
	     i != TAILINDEX_NONE; i = tailindex_name_next(f->idx, (size_t)i))
		if (strcmp(tailstream_path(f->streams[i]), path) == 0)
			return f->streams[i];
	return NULL;
}

/* ---- the open list ---------------------------------------------------------
 * The streams holding a file open, least recently acted on first: where
 * make_room looks for an idle one to close, without walking every stream
 * (20,000 files opened through a budget of 256 would be 20,000 walks of
 * 20,000). */

static void open_unlink(struct filesrc *f, uint32_t i)
{
	struct openlink *l = &f->open[i];

	if (!l->in)
		return;
	if (l->prev != FILESRC_NONE)
		f->open[l->prev].next = l->next;
	else
		f->open_head = l->next;
	if (l->next != FILESRC_NONE)
		f->open[l->next].prev = l->prev;
	else
		f->open_tail = l->prev;
	l->prev = l->next = FILESRC_NONE;
	l->in = false;
}

static void open_append(struct filesrc *f, uint32_t i)
{
	struct openlink *l = &f->open[i];

	l->prev = f->open_tail;
	l->next = FILESRC_NONE;
	l->in = true;
	if (f->open_tail != FILESRC_NONE)
		f->open[f->open_tail].next = i;
	else
		f->open_head = i;
	f->open_tail = i;
}

/* Stream i was acted on: a poll looks at it until it is settled, and its
 * events find it under the file watch it has now. */
void tailwatch_touch(struct filesrc *f, size_t i)
{
	tailindex_mark(f->idx, i);
	(void)tailindex_wd(f->idx, i, tailstream_wd(f->streams[i])); /* if not: stays marked */
	/* Only a stream acted on can have become idle, or closed its files:
	 * room may have been made since the open list was last walked. */
	if (f->open[i].in || tailstream_open_files(f->streams[i]) > 0)
		f->room_maybe = true;
	open_unlink(f, (uint32_t)i);
	if (tailstream_open_files(f->streams[i]) > 0)
		open_append(f, (uint32_t)i); /* the most recent */
}

/* ---- the waiting queue -----------------------------------------------------
 * The streams waiting for a descriptor (tailstream_waiting) with nothing
 * else due leave the marked streams for this queue, and come back to them,
 * ready, first come first served, as descriptors become free or open
 * streams idle (issue 22: 20,000 files through max.open.files=256 had each
 * of the ~19,700 waiting streams retried every turn, each retry a walk of
 * the open list: a second of CPU in five with the broker away). Their
 * events still find them (the index) and a full look still looks at them:
 * a rotation while they wait is seen. */

static void wait_push(struct filesrc *f, uint32_t i)
{
	struct openlink *l = &f->open[i];

	if (l->queued)
		return;
	l->queued = true;
	l->wnext = FILESRC_NONE;
	if (f->wait_tail != FILESRC_NONE)
		f->open[f->wait_tail].wnext = i;
	else
		f->wait_head = i;
	f->wait_tail = i;
}

/* The first stream queued, or FILESRC_NONE. One that no longer waits (an
 * event or a full look opened it) simply leaves. */
static uint32_t wait_pop(struct filesrc *f)
{
	uint32_t i = f->wait_head;

	if (i == FILESRC_NONE)
		return i;
	f->wait_head = f->open[i].wnext;
	if (f->wait_head == FILESRC_NONE)
		f->wait_tail = FILESRC_NONE;
	f->open[i].queued = false;
	return i;
}

/* True when stream i only waits for a descriptor: the queue holds it, no
 * poll need look at it. */
static bool parks(const struct filesrc *f, size_t i)
{
	return tailstream_waiting(f->streams[i]) &&
	       (f->groups == NULL || f->groups[i] == NULL || tailmulti_deadline(f->groups[i]) < 0);
}

size_t tailwatch_visits; /* tests: streams looked at by walks and turns */

/* How many waiting streams can get a descriptor now: those free below
 * max.open.files, and the idle open streams make_room can close. A walk of
 * the open list (at most max.open.files and the few a rotation adds), and
 * only when an open stream was acted on since the last walk found none. */
static size_t rooms(struct filesrc *f)
{
	size_t n = f->ctx.nopen < f->ctx.max_open ? f->ctx.max_open - f->ctx.nopen : 0, idle = 0;

	if (!f->room_maybe)
		return n;
	for (uint32_t i = f->open_head; i != FILESRC_NONE; i = f->open[i].next) {
		tailwatch_visits++;
		idle += tailstream_idle(f->streams[i]);
	}
	f->room_maybe = idle > 0;
	return n + idle;
}

/* Makes as many queued streams ready and marked as rooms() finds, first
 * queued first: the next look (tailwatch_housekeeping) or poll opens them.
 * Returns how many. */
static size_t serve_waiting(struct filesrc *f)
{
	size_t room, served = 0;
	uint32_t i;

	if (f->wait_head == FILESRC_NONE || (room = rooms(f)) == 0)
		return 0;
	while (served < room && (i = wait_pop(f)) != FILESRC_NONE) {
		if (!tailstream_waiting(f->streams[i]))
			continue; /* opened since (an event, a full look) */
		tailstream_set_ready(f->streams[i]);
		tailindex_mark(f->idx, i);
		served++;
	}
	return served;
}

/* True when a rescan need not look at stream i: tailstream_quiet, its
 * directory watched (and hearing writes, for a stream with no file open),
 * and its events found through the index. */
static bool quiet(const struct filesrc *f, size_t i)
{
	const struct tailstream *s = f->streams[i];

	return tailstream_quiet(s) &&
	       dir_watched(f, tailstream_dir(s), tailstream_open_files(s) == 0) &&
	       tailindex_wd_is(f->idx, i, tailstream_wd(s));
}

/* True when nothing but an event (found through the index) or a full look
 * can give stream i work: no poll need look at it. */
static bool settled(const struct filesrc *f, size_t i)
{
	const struct tailstream *s = f->streams[i];

	return !tailstream_ready(s) && tailstream_deadline(s) < 0 &&
	       (f->groups == NULL || f->groups[i] == NULL ||
	        tailmulti_deadline(f->groups[i]) < 0) &&
	       quiet(f, i);
}

static char *partition_json(const char *path)
{
	cJSON *o = cJSON_CreateObject();
	char *s = NULL;

	if (o != NULL && cJSON_AddStringToObject(o, "filename", path) != NULL)
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* The partition of path, made on first use; NULL (said once) when out of
 * memory or partitions. */
static struct partition *part_of(struct filesrc *f, const char *path)
{
	char *pjson = partition_json(path);
	struct partition *part = pjson ? f->env->partition(f->env, pjson) : NULL;

	free(pjson);
	if (part == NULL && !f->partitions_full_logged) {
		f->env->log(f->env, LOG_ERROR,
		            "%s: no source partition for it (out of memory "
		            "or the partition limit): not tailed",
		            path);
		f->partitions_full_logged = true;
	}
	return part;
}

/* Makes room for one more stream. Returns 0, or -1 when out of memory. */
static int grow_streams(struct filesrc *f)
{
	size_t ncap = f->cap ? f->cap * 2 : 16;
	struct tailstream **grown;
	struct tailmulti **groups;
	struct openlink *open;

	if (f->nstreams < f->cap)
		return 0;
	if ((grown = realloc(f->streams, ncap * sizeof(*grown))) == NULL)
		return -1;
	f->streams = grown;
	if (f->multi != NULL) {
		if ((groups = realloc(f->groups, ncap * sizeof(*groups))) == NULL)
			return -1;
		f->groups = groups;
	}
	if ((open = realloc(f->open, ncap * sizeof(*open))) == NULL)
		return -1;
	f->open = open;
	f->cap = ncap;
	return 0;
}

/* Puts s, a stream just made for a path taildup_skip just recorded, among
 * the streams: indexed, its directory watched, ready. Takes s over (freed
 * on failure). Returns 0, or -1 when out of memory. */
static int adopt(struct filesrc *f, struct tailstream *s)
{
	if (grow_streams(f) != 0)
		goto fail;
	f->open[f->nstreams] =
	    (struct openlink){FILESRC_NONE, FILESRC_NONE, FILESRC_NONE, false, false};
	if (f->multi != NULL && tailmulti_new(f->multi, &f->groups[f->nstreams]) != 0)
		goto fail;
	if (tailindex_add(f->idx, f->nstreams, tailstream_dir(s), tailstream_base(s),
	                  tailstream_path(s)) != 0) {
		if (f->multi != NULL)
			tailmulti_free(f->groups[f->nstreams]);
		goto fail;
	}
	f->streams[f->nstreams++] = s;
	taildup_adopt(f->dup, tailstream_path(s)); /* one copy of the path, not two */
	watch_dir(f, tailstream_dir(s));
	tailstream_set_ready(s);
	return 0;
fail:
	tailstream_free(s);
	return -1;
}

/* Adds a stream for path, unless another path names the same file
 * (taildup). Returns 0, or -1 when out of memory or partitions. */
static int add_stream(struct filesrc *f, const char *path, unsigned flags)
{
	struct partition *part;
	struct tailstream *s;

	if (taildup_skip(f->dup, path))
		return 0;
	if ((part = part_of(f, path)) == NULL || grow_streams(f) != 0 ||
	    tailstream_new(&f->ctx, path, part, flags, &s) != 0)
		return -1;
	for (size_t i = 0; i < f->nsettled; i++)
		if (f->settled[i].part == part)
			tailstream_preset(s, f->settled[i].json); /* found gone at the start */
	return adopt(f, s);
}

static unsigned stream_flags(const struct filesrc *f, const char *path, bool quiet, bool from_end)
{
	char probe[4096];
	unsigned flags = quiet ? TAILSTREAM_QUIET : 0;

	if (from_end && !f->started)
		flags |= TAILSTREAM_FROM_END;
	/* Do the patterns match this file's rotated names? Then they are its
	 * history, read first when the file is new. */
	if (f->globbing && snprintf(probe, sizeof(probe), "%s.1", path) < (int)sizeof(probe) &&
	    tailscan_matches(probe, (const char *const *)f->patterns, f->npat))
		flags |= TAILSTREAM_HISTORY;
	return flags;
}

struct glob_ctx {
	struct filesrc *f;
	bool from_end;
};

static void on_match(void *opaque, const char *path)
{
	struct glob_ctx *g = opaque;
	struct filesrc *f = g->f;

	if (find_stream(f, path) != NULL ||
	    tailscan_is_history(path, (const char *const *)f->patterns, f->npat))
		return;
	add_stream(f, path, stream_flags(f, path, true, g->from_end));
}

static void expand_globs(struct filesrc *f, bool from_end)
{
	struct glob_ctx g = {.f = f, .from_end = from_end};
	int rc;

	f->glob_due = false;
	if (!f->globbing)
		return;
	taildup_pass(f->dup, true);
	rc = tailscan_glob((const char *const *)f->patterns, f->npat,
	                   (const char *const *)f->excludes, f->nex, on_match, &g);
	taildup_pass(f->dup, false);
	if (rc < 0)
		f->env->log(f->env, LOG_WARN,
		            "files: a pattern could not be expanded (%s); "
		            "retrying at the next rescan",
		            strerror(errno));
}

/* ---- callbacks for the streams ------------------------------------------ */

/* tailctx.make_room: suspends the idle stream least recently acted on. A
 * walk of the open list: as long as the streams holding files, at most
 * max.open.files and the few a rotation adds, whatever the number of
 * files watched. */
int tailwatch_make_room(void *opaque, const struct tailstream *except)
{
	struct filesrc *f = opaque;
	uint32_t i = f->open_head, next;

	/* None idle at the last walk, and none acted on since: none now. */
	if (!f->room_maybe)
		return -1;
	for (; i != FILESRC_NONE; i = next) {
		struct tailstream *s = f->streams[i];

		tailwatch_visits++;
		next = f->open[i].next;
		if (tailstream_open_files(s) == 0) {
			open_unlink(f, i); /* closed since it was listed */
			continue;
		}
		if (s == except || !tailstream_idle(s))
			continue;
		/* Before the file's own watch goes: a write in between is heard. */
		hear_writes(f, tailstream_dir(s));
		if (tailstream_suspend(s, dir_watched(f, tailstream_dir(s), true))) {
			tailwatch_touch(f, i);
			return 0;
		}
	}
	if (except == NULL || tailstream_open_files(except) == 0)
		f->room_maybe = false; /* (except, idle, may be another's room) */
	return -1;
}

/* Stream i as a candidate of drop_oldest: *v when its first deleted file
 * is older than *oldest. */
static void older_gone(const struct filesrc *f, size_t i, size_t *v, int64_t *oldest)
{
	int64_t born;

	if (tailstream_first_gone(f->streams[i], &born) && (*v == f->nstreams || born < *oldest)) {
		*v = i;
		*oldest = born;
	}
}

/* Lets go of the oldest deleted file a stream holds (tailstream_first_gone),
 * saying why. Returns 0, or -1 when no stream holds one. Only streams with
 * files open can: those of the open list (touch follows every operation on
 * a stream) and the marked ones (a watch's look may have opened a copy
 * since their last touch) - not the idle ones, however many (issue 22:
 * every stream was asked, each time the budget was over). */
static int drop_oldest(struct filesrc *f)
{
	const struct tailctx *c = &f->ctx;
	size_t v = f->nstreams;
	int64_t oldest = INT64_MAX;
	char why[160];

	for (uint32_t i = f->open_head; i != FILESRC_NONE; i = f->open[i].next)
		older_gone(f, i, &v, &oldest);
	for (size_t k = 0; k < tailindex_nmarked(f->idx); k++)
		older_gone(f, tailindex_marked(f->idx, k), &v, &oldest);
	if (v == f->nstreams)
		return -1;
	if (c->held_files > c->max_held_files)
		snprintf(why, sizeof(why),
		         "%zu rotated files are held, more than max.held.files=%zu", c->held_files,
		         c->max_held_files);
	else
		snprintf(why, sizeof(why),
		         "deleted files held take %lld bytes, more than max.held.bytes=%lld",
		         (long long)c->held_bytes, (long long)c->max_held_bytes);
	tailstream_drop_first(f->streams[v], why);
	tailwatch_touch(f, v);
	return 0;
}

void tailwatch_budget(struct filesrc *f)
{
	struct tailctx *c = &f->ctx;

	while ((c->held_files > c->max_held_files || c->held_bytes > c->max_held_bytes) &&
	       drop_oldest(f) == 0)
		;
	if (f->env->set != NULL) {
		f->env->set(f->env, "held_files", c->held_files);
		f->env->set(f->env, "held_bytes", (uint64_t)c->held_bytes);
	}
}

/* tailctx.wd_shared. */
bool tailwatch_wd_shared(void *opaque, int wd, const struct tailstream *except)
{
	struct filesrc *f = opaque;

	/* The index is current for every stream but the one asking (touch
	 * follows each operation on a stream). */
	for (long i = tailindex_wd_first(f->idx, wd); i != TAILINDEX_NONE;
	     i = tailindex_wd_next(f->idx, (size_t)i))
		if (f->streams[i] != except && tailstream_wd(f->streams[i]) == wd)
			return true;
	return false;
}

/* ---- events --------------------------------------------------------------- */

/* name, created in dir, is a rotated name of a stream's file (app.log.1 of
 * app.log; not a compressed one, which gzip makes of a copy already
 * heard): a copy made, most likely by logrotate copytruncate. Each such
 * stream is told, so that copies made and deleted before it looks are
 * counted (tailstream_copy_made). */
static void note_copy_made(struct filesrc *f, const char *dir, const char *name)
{
	char base[NAME_MAX + 1];
	size_t len = strlen(name);

	if (len > NAME_MAX)
		return;
	for (size_t i = len; i-- > 1;) {
		if (i + 1 >= len || strchr(".-_", name[i]) == NULL ||
		    !isdigit((unsigned char)name[i + 1]))
			continue;
		memcpy(base, name, i);
		base[i] = '\0';
		if (tailid_rotated_name(base, name) != TAILID_ROTATED)
			continue;
		for (long k = tailindex_name_first(f->idx, dir, base); k != TAILINDEX_NONE;
		     k = tailindex_name_next(f->idx, (size_t)k))
			tailstream_copy_made(f->streams[k]);
	}
}

/* Changes may have gone unheard (an overflow, a directory's watch lost): no
 * file closed while idle can vouch for its end any more. Rare: a walk. */
static void unheard_all(struct filesrc *f)
{
	for (size_t i = 0; i < f->nstreams; i++)
		if (tailstream_open_files(f->streams[i]) == 0)
			tailstream_unheard(f->streams[i]);
}

static void on_dir_event(struct filesrc *f, struct dirwatch *d, const char *name, unsigned what,
                         int64_t now)
{
	const char *dir = d->dir;

	if (what & (TAILNOTICE_MOVED | TAILNOTICE_GONE | TAILNOTICE_DROPPED)) {
		/* Its name may name another directory now, or none. */
		if (what & TAILNOTICE_MOVED)
			f->ctx.notice->unwatch(f->ctx.nstate, d->wd);
		d->wd = -1;
		f->check_all = f->glob_due = true;
		unheard_all(f);
		return;
	}
	if (name == NULL)
		return;
	if (what & TAILNOTICE_NAME_IN)
		f->glob_due = true;
	if ((what & TAILNOTICE_CREATED) && !(what & TAILNOTICE_ISDIR))
		note_copy_made(f, dir, name);
	for (long i = tailindex_name_first(f->idx, dir, name); i != TAILINDEX_NONE;
	     i = tailindex_name_next(f->idx, (size_t)i)) {
		struct tailstream *s = f->streams[i];

		/* A write (d->writes): to a file closed while idle, which the
		 * check reopens; one open is read, as for its own watch's. */
		if ((what & TAILNOTICE_WRITE) && tailstream_open_files(s) == 0)
			tailstream_unheard(s); /* found gone by the check: the write lost */
		if (!(what & TAILNOTICE_WRITE) || tailstream_open_files(s) == 0)
			tailstream_check(s, now);
		else
			tailstream_set_ready(s);
		tailwatch_touch(f, (size_t)i);
	}
}

/* The context of a drain: tailnotice_fn has room for one pointer. */
struct draining {
	struct filesrc *f;
	int64_t now;
};

/* tailnotice_fn: one change heard. */
static void on_event(void *arg, int h, const char *name, unsigned what)
{
	struct filesrc *f = ((struct draining *)arg)->f;
	int64_t now = ((struct draining *)arg)->now;

	if (what & TAILNOTICE_PASS) {
		f->check_all = true;
		return;
	}
	if (what & TAILNOTICE_OVERFLOW) {
		f->env->count(f->env, "inotify_overflows", 1);
		f->check_all = f->glob_due = true;
		unheard_all(f);
		return;
	}
	for (size_t i = 0; i < f->ndirs; i++) {
		if (f->dirs[i].wd == h) {
			on_dir_event(f, &f->dirs[i], name, what, now);
			return;
		}
	}
	for (long i = tailindex_wd_first(f->idx, h), next; i != TAILINDEX_NONE; i = next) {
		struct tailstream *s = f->streams[i];

		/* The check may watch another file: i leaves this chain. */
		next = tailindex_wd_next(f->idx, (size_t)i);
		if (tailstream_open_files(s) == 0 ||
		    (what & (TAILNOTICE_MOVED | TAILNOTICE_GONE | TAILNOTICE_ATTRIB)))
			tailstream_check(s, now);
		tailstream_set_ready(s);
		tailwatch_touch(f, (size_t)i);
	}
}

/* Handles every change the backend heard (none in poll mode). */
void tailwatch_drain(struct filesrc *f, int64_t now)
{
	struct draining dr = {f, now};

	f->ctx.notice->drain(f->ctx.nstate, now, on_event, &dr);
}

/* Rescans and timers: what is due at now. */
void tailwatch_housekeeping(struct filesrc *f, int64_t now)
{
	if (now >= f->next_rescan) {
		f->next_rescan = now + f->rescan_ms;
		rescan(f);
	}
	if (f->glob_due)
		expand_globs(f, false);
	if (f->check_all)
		for (size_t i = 0; i < f->nstreams; i++)
			tailwatch_touch(f, i); /* a full look: every stream */
	serve_waiting(f);
	/* The unmarked streams are settled: a look would find nothing. */
	for (size_t k = 0; k < tailindex_nmarked(f->idx);) {
		size_t i = tailindex_marked(f->idx, k);
		struct tailstream *s = f->streams[i];
		int64_t d = tailstream_deadline(s);
		bool look = f->check_all || (f->check_unquiet && !quiet(f, i));

		tailwatch_visits++;
		if (look || (tailstream_ready(s) && tailstream_open_files(s) == 0))
			tailstream_check(s, now);
		else if (d >= 0 && now >= d && !parks(f, i))
			tailstream_set_ready(s);
		tailwatch_touch(f, i);
		if (parks(f, i)) {
			wait_push(f, (uint32_t)i);
			tailindex_unmark_at(f->idx, k); /* the last one comes to k */
		} else {
			k++;
		}
	}
	f->check_all = f->check_unquiet = false;
}

/* Unmarks the settled streams and those the waiting queue holds, and makes
 * as many waiting streams ready as can get a descriptor now: the next poll
 * opens and reads them (at start-up, 20,000 new files go through
 * max.open.files in turns of that many, one poll each, not one turn per
 * 200 ms retry). Returns true when a marked one is ready. */
bool tailwatch_unmark_settled(struct filesrc *f)
{
	bool ready = serve_waiting(f) > 0;

	for (size_t k = 0; k < tailindex_nmarked(f->idx);) {
		size_t i = tailindex_marked(f->idx, k);
		struct tailstream *s = f->streams[i];

		ready = ready || tailstream_ready(s);
		if (parks(f, i) && !tailstream_ready(s))
			wait_push(f, (uint32_t)i);
		if (f->open[i].queued || settled(f, i))
			tailindex_unmark_at(f->idx, k); /* the last one comes to k */
		else
			k++;
	}
	return ready;
}

/* Creates the streams named literally (file, or patterns without wildcards)
 * and expands the globs. */
static bool has_stream(void *arg, const char *path)
{
	return find_stream(arg, path) != NULL;
}

/* Whether path is one the connector follows: its file, or a match of its
 * patterns left in by its excludes. */
static bool follows(const struct filesrc *f, const char *path)
{
	return f->globbing && tailscan_matches(path, (const char *const *)f->patterns, f->npat) &&
	       !tailscan_excluded(path, (const char *const *)f->excludes, f->nex) &&
	       !tailscan_is_history(path, (const char *const *)f->patterns, f->npat);
}

/* The streams of the last run's held set that no file found at the start
 * names (tailheld.h): a glob match gone whole while skiff was not running.
 * One the connector still follows gets its stream, whose first resume
 * counts and names what rotation deleted; one it no longer follows (its
 * configuration changed) leaves the set, said, or the set would be kept
 * for good. */
static int settle_untaken(struct filesrc *f)
{
	struct tailheld *h = f->ctx.heldset;
	struct tailheld_file *files;
	const char *stream;
	size_t n;

	while (h != NULL && (stream = tailheld_untaken(h, has_stream, f)) != NULL) {
		if (follows(f, stream)) {
			if (add_stream(f, stream, stream_flags(f, stream, true, false)) != 0)
				return -1;
			continue;
		}
		f->env->log(f->env, LOG_WARN,
		            "%s: rotated files were held for it when skiff stopped, but this "
		            "connector no longer follows it: those deleted since are not counted",
		            stream);
		if (tailheld_take(h, stream, &files, &n) != 0)
			return -1;
		tailheld_files_free(files, n);
	}
	return 0;
}

/* ---- stored offsets of paths gone -------------------------------------- */

/* The paths of the connector's stored offsets to resume at the start. */
struct vanished {
	const struct filesrc *f;
	char **paths;
	size_t n, cap;
	bool nomem;
};

/* source_env.stored: keeps path when the patterns follow it, no stream
 * has it, nothing is at it, and its offset is not one let go at its end
 * ("finished": nothing of it to read or count) - no I/O but one stat for
 * the rest, and a parse of each offset. */
static void on_stored(void *arg, const char *partition_json, const char *offset_json)
{
	struct vanished *v = arg;
	cJSON *m = NULL;
	const cJSON *name;
	struct tailpos p;
	struct stat st;
	char **grown;

	if (v->nomem || tailpos_parse(offset_json, &p) != 0 || p.finished)
		return;
	m = cJSON_Parse(partition_json);
	name = cJSON_GetObjectItemCaseSensitive(m, "filename");
	if (!cJSON_IsString(name) || !follows(v->f, name->valuestring) ||
	    find_stream(v->f, name->valuestring) != NULL || stat(name->valuestring, &st) == 0 ||
	    (errno != ENOENT && errno != ENOTDIR))
		goto out;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;

		if ((grown = realloc(v->paths, cap * sizeof(*grown))) == NULL) {
			v->nomem = true;
			goto out;
		}
		v->paths = grown;
		v->cap = cap;
	}
	if ((v->paths[v->n] = strdup(name->valuestring)) == NULL)
		v->nomem = true;
	else
		v->n++;
out:
	cJSON_Delete(m);
}

/* Keeps what the stop stores for part, whose stream s was let go: its
 * offset with "finished" (tailstream_stop). Returns 0 or -1. */
static int settle(struct filesrc *f, struct tailstream *s, struct partition *part)
{
	const char *was = f->env->committed(f->env, part);
	struct settled e = {part, NULL, tailstream_stop(s, was)};
	struct settled *grown;

	if (e.json == NULL)
		return 0;
	e.was = strdup(was);
	if (e.was != NULL && f->nsettled == f->capsettled) {
		size_t cap = f->capsettled ? 2 * f->capsettled : 16;

		grown = realloc(f->settled, cap * sizeof(*grown));
		if (grown != NULL) {
			f->settled = grown;
			f->capsettled = cap;
		}
	}
	if (e.was == NULL || f->nsettled == f->capsettled) {
		free(e.was);
		free(e.json);
		return -1;
	}
	f->settled[f->nsettled++] = e;
	return 0;
}

/* Resumes the stored offset of path, gone from disk, as file= resumes it
 * (tailplan): a rotated copy found by identity is read from the position
 * (then the stream stays, as a match's does), a file gone is counted and
 * named. A stream left with nothing to read is let go at once. Returns 0,
 * or -1 when out of memory (no partition left for it: said, and 0). */
static int resume_vanished(struct filesrc *f, const char *path, int64_t now)
{
	struct partition *part = part_of(f, path);
	struct tailstream *s = NULL;
	int rc;

	if (part == NULL)
		return 0; /* the partition limit (said): the other offsets still count */
	if (tailstream_new(&f->ctx, path, part, TAILSTREAM_QUIET, &s) != 0)
		return -1;
	tailstream_check(s, now);
	if (!tailstream_spent(s)) {
		if (taildup_skip(f->dup, path)) {
			tailstream_free(s); /* a file came to it meanwhile, another's */
			return 0;
		}
		if (adopt(f, s) != 0)
			return -1;
		tailwatch_touch(f, f->nstreams - 1);
		return 0;
	}
	rc = settle(f, s, part);
	tailstream_free(s);
	return rc;
}

/* The stored offsets of this connector whose paths the patterns match but
 * that are not on disk: a file rotated away or deleted while skiff was not
 * running, with no file at its path again (else the glob found it). Each
 * is resumed (resume_vanished). Kafka Connect never drops a stored offset,
 * nor does skiff: a glob of dated files keeps one for every file it ever
 * read. Those let go at their end cost a parse at each start and nothing
 * after; the others a stat and the look of file= (its directory listed)
 * at the first start after they went, and nothing after: that start
 * stores them as let go at the stop. */
static int take_vanished(struct filesrc *f, int64_t now)
{
	struct vanished v = {.f = f};
	int rc = 0;

	if (!f->globbing || f->env->stored == NULL)
		return 0;
	f->env->stored(f->env, on_stored, &v);
	for (size_t i = 0; i < v.n; i++) {
		if (rc == 0)
			rc = resume_vanished(f, v.paths[i], now);
		free(v.paths[i]);
	}
	free(v.paths);
	return v.nomem ? -1 : rc;
}

int tailwatch_initial_streams(struct filesrc *f, const char *file, bool from_end)
{
	if (!f->globbing) {
		if (add_stream(f, file, stream_flags(f, file, false, from_end)) != 0)
			return -1;
		return settle_untaken(f);
	}
	for (size_t i = 0; i < f->npat; i++) {
		const char *p = f->patterns[i];

		if (strpbrk(p, "*?[{") == NULL && find_stream(f, p) == NULL &&
		    add_stream(f, p, stream_flags(f, p, false, from_end)) != 0)
			return -1;
		if (strpbrk(p, "*?[{") != NULL) {
			char *dir = tailscan_dirname(p);

			if (dir != NULL && strpbrk(dir, "*?[{") == NULL)
				watch_dir(f, dir); /* new matches are seen at once */
			free(dir);
		}
	}
	expand_globs(f, from_end);
	if (take_vanished(f, clock_mono_ms()) != 0)
		return -1;
	return settle_untaken(f);
}

struct tailstream *tailwatch_stream(const struct filesrc *f, const char *path)
{
	return find_stream(f, path);
}
