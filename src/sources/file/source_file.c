/* source_file: the tailing connector (Kafka Connect's FileStreamSource, grown
 * into a log shipper).
 *
 * Follows one file (`file`, Connect's key) or every file that glob patterns
 * match (`files`, minus `files.exclude`); files that appear later are picked
 * up without a restart. Each path is a stream (tailstream.c) and its own
 * source partition {"filename": <path as configured or matched>}, with the
 * offset {"position":N,"dev":D,"ino":I,"fp":H,"fplen":L,"born":B} (and
 * "tail":T past the first KiB, tailpos.h): Connect reads "position"
 * alone; the rest tells the file it belongs to, so a rotated, truncated,
 * replaced or reused-inode file is recognised (tailstream.c has the
 * rotation algorithm, tailplan.c where an offset resumes and the
 * offset-safety argument).
 *
 * Change detection (inotify, rescans, which streams a poll looks at):
 * tailwatch.c.
 *
 * Memory is bounded: one poll arena (max.line.bytes plus 256 KiB) shared by
 * every file, at most max.open.files descriptors (and inotify watches) for
 * files followed at once (idle ones are closed, heard through their
 * directory's watch, and reopened by identity on their next event), and
 * the rotated files held until read are at most max.held.files (a stream's
 * chain: tailstream.c). A file watched but not open costs its stream (248
 * bytes), its partition, metrics and offset in the worker: about 1.3 KB in
 * all (tests/bench/bench_many.py), whatever max.open.files is. */
#include "config/config.h"
#include "sources/file/filesrc.h"
#include "sources/file/source_file.h"
#include "sources/file/tailnotice.h"
#include "sources/file/tailwatch.h"
#include "core/log.h"
#include "core/source.h"
#include "core/stats.h"
#include "sources/file/tailcheck.h"
#include "sources/file/taildup.h"
#include "sources/file/tailheld.h"
#include "sources/file/tailindex.h"
#include "sources/file/tailmulti.h"
#include "sources/file/tailstream.h"
#include "util/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_EXTRA (256 * 1024)
#define MAX_LINES 1024
#define OFFSET_TEXT 24

static const char *const file_classes[] = {
    "FileStreamSource",
    "FileStreamSourceConnector",
    "org.apache.kafka.connect.file.FileStreamSourceConnector",
    NULL,
};

const struct config_key source_file_keys[] = {
    {"file", CFG_STRING, NULL, 0, 0, NULL, 0,
     "The file to tail (Connect's key). Exactly one of file and files is required.",
     CFG_FIELD(struct file_conf, file)},
    {"files", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Comma-separated glob patterns (* ? [..] {a,b}) of files to tail; each file is its own "
     "source partition. New matches are picked up without a restart. A match that is the "
     "rotated copy of another match (app.log.1 beside app.log) is read as that file's "
     "history, not on its own.",
     CFG_FIELD(struct file_conf, files)},
    {"rotated.dirs", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Directories where rotated files are besides the log's own (logrotate's olddir): "
     "searched for the rotated and compressed files of every path, at a restart and while "
     "running.",
     CFG_FIELD(struct file_conf, rotated_dirs)},
    {"files.exclude", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Comma-separated glob patterns of files not to tail: matched against the whole path "
     "when they hold a '/', else against the file name (e.g. *.gz).",
     CFG_FIELD(struct file_conf, excludes)},
    {"topic", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED, "The topic lines are sent to.",
     CFG_FIELD(struct file_conf, topic)},
    {"batch.size", CFG_INT, "2000", 1, 100000, NULL, 0,
     "Most lines read in one poll (Connect's batch.size).",
     CFG_FIELD(struct file_conf, batch_size)},
    {"read.from", CFG_ENUM, "beginning", 0, 0, "beginning|end", 0,
     "Where a file without a stored offset that exists at start-up is read from: its "
     "beginning (as Connect does) or its end (only lines written from now on). Files that "
     "appear later are always read from their beginning.",
     CFG_FIELD(struct file_conf, read_from)},
    {"max.open.files", CFG_INT, "256", 1, 65536, NULL, 0,
     "Most files held open at once, each with a descriptor and an inotify watch. Beyond it, "
     "idle files are closed: their place is kept (a few hundred bytes), their directory's "
     "watch hears their writes, and one that changes is reopened, by identity. Rotated "
     "files waiting to be read are held besides, up to max.held.files.",
     CFG_FIELD(struct file_conf, max_open)},
    {"max.held.files", CFG_INT, "512", 0, 65536, NULL, 0,
     "Most rotated files held open at once, all streams of the connector together: a file "
     "is opened as soon as it is rotated, while Kafka is away too, so that logrotate "
     "deleting it loses nothing, and kept until read (and rotate.wait.ms after, for late "
     "writes). Past it, the oldest one deleted since is let go: what it still held is "
     "counted (bytes_unread_lost, lines_unread_lost, files_gone_unread) and the file "
     "named; one still on disk is never let go, newer ones wait unopened. A look may open "
     "up to 16 more first.",
     CFG_FIELD(struct file_conf, max_held_files)},
    {"max.held.bytes", CFG_INT, "268435456", 0, INT64_C(1) << 40, NULL, 0,
     "Most bytes of disk the held rotated files deleted since may take, all streams of "
     "the connector together (only skiff's descriptors keep them): past it, the oldest is "
     "let go, counted and named as past max.held.files. 256 MiB.",
     CFG_FIELD(struct file_conf, max_held_bytes)},
    {"max.line.bytes", CFG_INT, "524288", 16, 64 * 1024 * 1024, NULL, 0,
     "Longest line shipped as one record. Unset, at most what surely fits the producer's "
     "message.max.bytes once converted: (message.max.bytes - 16384) / 6 with JsonConverter "
     "(163936 by default), / 3 with StringConverter (327872), else 524288.",
     CFG_FIELD_SET(struct file_conf, max_line, max_line_given)},
    {"max.line.policy", CFG_ENUM, "split", 0, 0, "split|truncate|skip", 0,
     "What a longer line becomes: split into records of at most max.line.bytes (each cut "
     "before a UTF-8 character, never inside one), truncated to max.line.bytes, or skipped. "
     "Counted either way (lines_split, lines_truncated, lines_skipped).",
     CFG_FIELD(struct file_conf, policy)},
    {"rotate.wait.ms", CFG_INT, "5000", 0, 3600000, NULL, 0,
     "A file rotated away or deleted is still read until this long has passed since skiff "
     "noticed and since its last write (writers that have not reopened yet); then it is "
     "closed and its partial last line, if any, ships as a line (partial_lines_shipped).",
     CFG_FIELD(struct file_conf, rotate_wait_ms)},
    {"watch.mode", CFG_ENUM, "inotify", 0, 0, "inotify|poll", 0,
     "How changes are noticed: inotify (local file systems), or stat polling every "
     "poll.interval.ms (NFS, CIFS, some overlay and FUSE file systems).",
     CFG_FIELD(struct file_conf, watch)},
    {"poll.interval.ms", CFG_INT, "1000", 10, 3600000, NULL, 0,
     "With watch.mode=poll: how often every file is checked for growth and rotation.",
     CFG_FIELD(struct file_conf, poll_ms)},
    {"rescan.interval.ms", CFG_INT, "10000", 100, 3600000, NULL, 0,
     "How often globs whose directory is not watched are expanded again and files no "
     "inotify watch covers are checked without an event; every 30th rescan expands and "
     "checks everything (a safety net for what inotify cannot hear).",
     CFG_FIELD(struct file_conf, rescan_ms)},
    {"record.key", CFG_ENUM, "none", 0, 0, "none|path", 0,
     "The record key: none (null, as Connect), or the path of the stream (keeps each file "
     "in one Kafka partition of a multi-partition topic).",
     CFG_FIELD(struct file_conf, key)},
    {"header.path", CFG_STRING, "", 0, 0, NULL, 0,
     "Name of a record header carrying the path of the stream (e.g. log.file.path); empty: "
     "no header.",
     CFG_FIELD(struct file_conf, header_path)},
    {"header.offset", CFG_STRING, "", 0, 0, NULL, 0,
     "Name of a record header carrying the byte offset of the line in its file, as decimal "
     "text (e.g. log.offset); empty: no header.",
     CFG_FIELD(struct file_conf, header_offset)},
    {"multiline.pattern", CFG_STRING, "", 0, 0, NULL, 0,
     "A POSIX extended regex that groups lines into multi-line records (stack traces, "
     "wrapped JSON), as Filebeat's multiline.pattern; empty: each line is a record. A "
     "record ships once complete, with the offset after its last line.",
     CFG_FIELD(struct file_conf, multi_pattern)},
    {"multiline.negate", CFG_BOOL, "false", 0, 0, NULL, 0,
     "true: a line matches when the pattern does not find a match in it.",
     CFG_FIELD(struct file_conf, multi_negate)},
    {"multiline.match", CFG_ENUM, "after", 0, 0, "after|before", 0,
     "after: a matching line continues the record before it, any other line starts a "
     "record; before: a matching line is continued by the next line, any other line ends "
     "the record.",
     CFG_FIELD(struct file_conf, multi_match)},
    {"multiline.max.lines", CFG_INT, "500", 1, 1000000, NULL, 0,
     "Most lines in one record; a longer group ships in records of this many lines "
     "(multiline_max_lines counts each cut).",
     CFG_FIELD(struct file_conf, multi_max_lines)},
    {"multiline.max.bytes", CFG_INT, "524288", 16, 64 * 1024 * 1024, NULL, 0,
     "Most bytes in one record (lines joined by \\n); a larger group ships in several "
     "records (multiline_max_bytes counts each cut). At least max.line.bytes; unset, at most "
     "what surely fits the producer's message.max.bytes once converted, as max.line.bytes.",
     CFG_FIELD_SET(struct file_conf, multi_max_bytes, multi_max_bytes_given)},
    {"multiline.timeout.ms", CFG_INT, "5000", 10, 3600000, NULL, 0,
     "A record that no line was added to for this long ships as it stands (the last "
     "record of a quiet file; multiline_timeouts).",
     CFG_FIELD(struct file_conf, multi_timeout_ms)},
    CFG_END,
};

/* ---- records -------------------------------------------------------------- */

static void emit(struct filesrc *f, struct tailstream *s, const struct tailline *l,
                 struct source_batch *b)
{
	struct record *r = &b->records[b->n];
	const char *path = tailstream_path(s);

	memset(r, 0, sizeof(*r));
	r->part = tailstream_partition(s);
	r->topic = f->topic;
	r->key.kind = VALUE_NULL;
	if (f->key == KEY_PATH)
		r->key =
		    (struct record_value){.kind = VALUE_STRING, .bytes = path, .len = strlen(path)};
	r->value = (struct record_value){.kind = VALUE_STRING, .bytes = l->bytes, .len = l->len};
	r->offset = l->after;
	r->timestamp_ms = f->read_ms;
	if (f->hdr_path != NULL)
		r->headers[r->nheaders++] = (struct record_header){f->hdr_path, path, strlen(path)};
	if (f->hdr_offset != NULL) {
		char *t = f->offtext + b->n * OFFSET_TEXT;
		int len = snprintf(t, OFFSET_TEXT, "%lld", (long long)l->start);

		r->headers[r->nheaders++] = (struct record_header){f->hdr_offset, t, (size_t)len};
	}
	b->n++;
}

/* True when the poll has room to read one more stream: with multi-line
 * records, a record for each line it may read plus the one waiting, and
 * their bytes (tailmulti_feed). */
static bool room(const struct filesrc *f, const struct source_batch *b)
{
	if (f->multi == NULL)
		return b->n < b->max;
	return b->n + 1 < b->max &&
	       f->recbuf.cap - f->recbuf.used >=
	           f->multi_max_bytes + (f->buf.cap - f->buf.used) + (b->max - b->n);
}

/* Groups the n lines just read from streams[k] (none: a record may time
 * out) into multi-line records and adds those complete to the batch. */
static int group(struct filesrc *f, size_t k, size_t n, struct source_batch *b, int64_t now,
                 char *errbuf, size_t errlen)
{
	struct tailmulti_stats st = {0};
	size_t nrec = 0;
	int rc = tailmulti_feed(f->groups[k], f->lines, n, now, &f->recbuf, f->recs, &nrec, &st);

	for (size_t i = 0; i < nrec; i++)
		emit(f, f->streams[k], &f->recs[i], b);
	if (st.max_lines)
		f->env->count(f->env, "multiline_max_lines", st.max_lines);
	if (st.max_bytes)
		f->env->count(f->env, "multiline_max_bytes", st.max_bytes);
	if (st.timeouts)
		f->env->count(f->env, "multiline_timeouts", st.timeouts);
	if (rc == 0)
		return 0;
	snprintf(errbuf, errlen, "%s: out of memory", tailstream_path(f->streams[k]));
	return SOURCE_ERR_NOMEM;
}

/* Reads stream k into the batch. Returns 1 when it has more now, 0,
 * SOURCE_ERR or SOURCE_ERR_NOMEM. */
static int read_stream(struct filesrc *f, size_t k, struct source_batch *b, int64_t now,
                       char *errbuf, size_t errlen)
{
	struct tailstream *s = f->streams[k];
	struct tailmulti *m = f->groups != NULL ? f->groups[k] : NULL;
	size_t n = 0, max = b->max - b->n - (m != NULL ? 1 : 0);
	int rc = 0;

	if (!tailstream_ready(s)) {
		int64_t due = m != NULL ? tailmulti_deadline(m) : -1;

		return due >= 0 && now >= due ? group(f, k, 0, b, now, errbuf, errlen) : 0;
	}
	if (tailstream_open_files(s) == 0)
		tailstream_check(s, now); /* closed while idle, or waiting for its file */
	rc = tailstream_read(s, &f->buf, f->lines, max, &n, now, errbuf, errlen);
	if (m != NULL && group(f, k, n, b, now, errbuf, errlen) != 0)
		return SOURCE_ERR_NOMEM;
	for (size_t i = 0; m == NULL && i < n; i++)
		emit(f, s, &f->lines[i], b);
	if (rc == TAILSTREAM_ERR_NOMEM)
		return SOURCE_ERR_NOMEM;
	return rc < 0 ? SOURCE_ERR : rc;
}

/* ---- the held set on disk (tailheld.h) ----------------------------------- */

/* tailheld_end's passed: whether the committed offset of stream is past
 * f, a file let go (read to its end): the offset names f at its size or
 * finished, or a file born after it (an uncompressed one: a compressed
 * file's birth is when it was compressed). Unknown order: not past. */
static bool held_passed(void *arg, const char *stream, const struct tailheld_file *f)
{
	struct filesrc *fs = arg;
	struct tailstream *s = tailwatch_stream(fs, stream);
	const char *json;
	struct tailpos p;

	if (s == NULL)
		return true; /* no longer followed: nothing to compare at a start */
	json = fs->env->committed(fs->env, tailstream_partition(s));
	if (json == NULL || tailpos_parse(json, &p) != 0 || !p.known)
		return false;
	if (p.has_id && p.dev == f->dev && p.ino == f->ino && (!p.has_born || p.born == f->born))
		return p.finished || (f->size >= 0 && p.pos >= f->size);
	return p.has_id && p.has_born && !p.has_after && p.born > f->born;
}

/* Writes the held set when due (at most every offset.flush.interval.ms, only
 * when it changed), or now when closing. A failure is said once until a
 * write succeeds: the offsets, and reading, do not depend on it. */
static void held_snapshot(struct filesrc *f, int64_t now, bool closing)
{
	struct tailheld *h = f->ctx.heldset;
	char err[512];
	int rc = 0;

	if (h == NULL || (!closing && !tailheld_due(h, now, f->ctx.held_files > 0)))
		return;
	tailheld_begin(h, now);
	for (size_t i = 0; rc == 0 && i < f->nstreams; i++)
		rc = tailstream_held_files(f->streams[i], h, closing);
	if (rc == 0)
		rc = tailheld_end(h, closing, held_passed, f, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s: out of memory", tailheld_path(h));
	if (rc != 0 && !f->held_warned)
		f->env->log(f->env, LOG_WARN,
		            "cannot keep the held rotated files' list: %s (a kill -9 now would "
		            "leave files it loses uncounted; the offsets are not affected)",
		            err);
	f->held_warned = rc != 0;
}

/* The next rescan, or the watch backend's next pass when sooner. */
static int64_t next_due(const struct filesrc *f)
{
	int64_t d = f->ctx.notice->deadline(f->ctx.nstate);

	return d >= 0 && d < f->next_rescan ? d : f->next_rescan;
}

/* The ms until held_snapshot wants a turn, earlier than t (absolute). */
static int64_t held_due(const struct filesrc *f, int64_t now, int64_t t)
{
	int64_t d = f->ctx.heldset != NULL
	                ? tailheld_deadline(f->ctx.heldset, now, f->ctx.held_files > 0)
	                : -1;

	return d >= 0 && now + d < t ? now + d : t;
}

/* Opens the held set beside the offsets and reads what the last run left
 * (tailheld.h). A set that cannot be read is said, naming its file, and
 * never stops the connector: only what it would have counted is lost. */
static int held_open(struct filesrc *f)
{
	char err[512];
	int rc;

	if (f->env->state_file == NULL)
		return 0;
	if (tailheld_new(f->env->state_file, f->env->state_interval_ms, f->ctx.max_held_files + 64,
	                 &f->ctx.heldset) != 0)
		return -1;
	rc = tailheld_load(f->ctx.heldset, err, sizeof(err));
	if (rc == TAILHELD_ERR_NOMEM)
		return -1;
	if (rc != 0)
		f->env->log(f->env, LOG_WARN,
		            "the list of rotated files held when skiff last stopped cannot be read "
		            "(%s): those deleted since, if any, are not counted; it is written "
		            "again (the offsets are not affected)",
		            err);
	return 0;
}

/* The path guard refused a file some open met (tailfile.h's struct
 * tailguard; opens happen in watch() too): counted, and the connector
 * fails with the reason, nothing of this poll shipped (its offsets stay
 * before it). Returns SOURCE_ERR_CONFIG then, else 0. */
static int guard_refused(struct filesrc *f, struct source_batch *b, char *errbuf, size_t errlen)
{
	if (!f->ctx.guard.refused)
		return 0;
	b->n = 0;
	f->env->count(f->env, "files_refused", 1);
	snprintf(errbuf, errlen, "%s", f->ctx.guard.why);
	return SOURCE_ERR_CONFIG;
}

static int file_poll(void *ctx, struct source_batch *b, int64_t now, char *errbuf, size_t errlen)
{
	struct filesrc *f = ctx;
	bool more = false;
	size_t i, n;

	b->n = 0;
	/* With multi-line records, one more: a record waiting since an earlier
	 * poll may complete beside batch.size lines (batch.size=1 would never
	 * read a line while one waits). */
	if (b->max > f->batch_max + (f->multi != NULL))
		b->max = f->batch_max + (f->multi != NULL);
	if (b->max > MAX_LINES)
		b->max = MAX_LINES;
	/* The previous batch's lines are no longer referenced: the worker
	 * holds the offsets it keeps. */
	tailctx_release(&f->ctx);
	f->buf.used = f->recbuf.used = 0;
	/* FileStreamSourceTask stamps each record with the time it read it
	 * (System.currentTimeMillis()): TimestampRouter and InsertField's
	 * timestamp.field see it, and it is the record's CreateTime. One
	 * clock read a poll, not a record. */
	f->read_ms = clock_wall_ns() / 1000000;
	tailwatch_drain(f, now);
	tailwatch_housekeeping(f, now);
	if (guard_refused(f, b, errbuf, errlen) != 0)
		return SOURCE_ERR_CONFIG;
	f->started = true;
	/* Only marked streams can have lines or a record due (settled()). */
	n = tailindex_nmarked(f->idx);
	for (i = 0; i < n; i++) {
		size_t k = tailindex_marked(f->idx, (f->rr + i) % n);
		int rc;

		if (!room(f, b)) {
			more = true;
			break;
		}
		rc = read_stream(f, k, b, now, errbuf, errlen);
		tailwatch_touch(f, k);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			more = true;
			if (f->buf.cap - f->buf.used < f->ctx.max_line + 2)
				break; /* the arena is full: the rest next time */
		}
	}
	if (n > 0)
		f->rr = (f->rr + i) % n;
	if (guard_refused(f, b, errbuf, errlen) != 0)
		return SOURCE_ERR_CONFIG;
	b->more = tailwatch_unmark_settled(f) || more || b->n == b->max;
	tailwatch_budget(f);
	held_snapshot(f, now, false);
	return 0;
}

/* source_ops.watch: what a poll does but reading - inotify events, rescans,
 * globs, rotations noticed and their files opened - and the held-file
 * budget. */
static int64_t file_watch(void *ctx, int64_t now)
{
	struct filesrc *f = ctx;
	int64_t t;

	tailwatch_drain(f, now);
	tailwatch_housekeeping(f, now);
	/* A stream an event or a look made ready would be read now: what the
	 * read would notice first, a copytruncate, must not wait for it, or
	 * logrotate deletes the copies before they are opened. */
	for (size_t k = 0; k < tailindex_nmarked(f->idx); k++) {
		struct tailstream *s = f->streams[tailindex_marked(f->idx, k)];

		if (tailstream_ready(s))
			tailstream_look(s);
	}
	tailwatch_budget(f);
	held_snapshot(f, now, false);
	t = next_due(f);
	t = held_due(f, now, t);
	return t > now ? t - now : 0;
}

static int file_pollfds(void *ctx, struct pollfd *fds, int max)
{
	struct filesrc *f = ctx;

	return f->ctx.notice->fds(f->ctx.nstate, fds, max);
}

static int64_t file_timeout(void *ctx, int64_t now_ms)
{
	struct filesrc *f = ctx;
	int64_t t = next_due(f);

	for (size_t k = 0; k < tailindex_nmarked(f->idx); k++) {
		size_t i = tailindex_marked(f->idx, k); /* an unmarked one has no deadline */
		int64_t d = tailstream_deadline(f->streams[i]);
		int64_t g = f->groups != NULL && f->groups[i] != NULL
		                ? tailmulti_deadline(f->groups[i])
		                : -1;

		if (d >= 0 && d < t)
			t = d;
		if (g >= 0 && g < t)
			t = g;
	}
	t = held_due(f, now_ms, t);
	return t > now_ms ? t - now_ms : 0;
}

static void
file_backlog(void *ctx, void (*put)(void *arg, struct partition *p, enum source_unit u, uint64_t n),
             void *arg)
{
	struct filesrc *f = ctx;
	uint64_t bytes;

	for (size_t i = 0; i < f->nstreams; i++)
		if (tailstream_backlog(f->streams[i], &bytes))
			put(arg, tailstream_partition(f->streams[i]), SOURCE_UNIT_BYTES, bytes);
}

static char *file_offset_json(void *ctx, const struct src_offset *off)
{
	char buf[256];

	if (tailpos_format(off, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

/* ---- set-up ----------------------------------------------------------------- */

/* source_ops.stopping: each stream says what of what it read the next
 * start reads again, counts what it cannot, and amends its offset. */
static void file_stopping(void *ctx, void (*put)(void *arg, struct partition *p, const char *json),
                          void *arg)
{
	struct filesrc *f = ctx;

	for (size_t i = 0; i < f->nstreams; i++) {
		struct tailstream *s = f->streams[i];
		struct partition *p = tailstream_partition(s);
		char *json;

		if (p == NULL)
			continue; /* files let go while their records wait count too */
		json = tailstream_stop(s, f->env->committed(f->env, p));
		if (json != NULL)
			put(arg, p, json);
		free(json);
	}
	/* The paths found gone at the start: let go of, once - unless a file
	 * came to one since, whose stream moved its offset. */
	for (size_t i = 0; i < f->nsettled; i++) {
		const struct settled *e = &f->settled[i];
		const char *now = f->env->committed(f->env, e->part);

		if (now != NULL && strcmp(now, e->was) == 0)
			put(arg, e->part, e->json);
	}
}

static void file_close(void *ctx)
{
	struct filesrc *f = ctx;

	if (f == NULL)
		return;
	/* What a next start must know: the held files still on disk (those
	 * deleted since are counted as they close, below). */
	held_snapshot(f, clock_mono_ms(), true);
	taildup_free(f->dup); /* first: it keeps the streams' paths */
	for (size_t i = 0; i < f->nstreams; i++) {
		tailstream_free(f->streams[i]);
		tailmulti_free(f->groups != NULL ? f->groups[i] : NULL);
	}
	hash_free(&f->dirnames);
	tailindex_free(f->idx);
	tailctx_fini(&f->ctx);
	tailheld_free(f->ctx.heldset);
	tailmulti_rules_free(f->multi);
	for (size_t i = 0; i < f->nsettled; i++) {
		free(f->settled[i].was);
		free(f->settled[i].json);
	}
	free(f->settled);
	free(f->streams);
	free(f->groups);
	free(f->open);
	free(f->recbuf.mem);
	free(f->recs);
	for (size_t i = 0; i < f->ndirs; i++)
		free(f->dirs[i].dir);
	free(f->dirs);
	for (size_t i = 0; i < f->npat; i++)
		free(f->patterns[i]);
	for (size_t i = 0; i < f->nex; i++)
		free(f->excludes[i]);
	for (size_t i = 0; i < f->ctx.nrotated_dirs; i++)
		free(f->rotated_dirs[i]);
	free(f->rotated_dirs);
	free(f->patterns);
	free(f->excludes);
	f->ctx.notice->close(f->ctx.nstate);
	free(f->buf.mem);
	free(f->lines);
	free(f->offtext);
	free(f->topic);
	free(f->hdr_path);
	free(f->hdr_offset);
	free(f);
}

static char **copy_list(const struct config_list *l, size_t *n)
{
	char **v = calloc(l->n + 1, sizeof(*v));

	*n = 0;
	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		if ((v[i] = strdup(l->items[i])) == NULL)
			return v; /* *n stays short: the caller sees a NULL */
		*n = i + 1;
	}
	return v;
}

static char *opt_string(const char *v)
{
	return v != NULL && v[0] != '\0' ? strdup(v) : NULL;
}

/* The multiline.* keys of c compiled into *out (NULL when
 * multiline.pattern is empty), with max_line and max_bytes the limits in
 * force (max.line.bytes, multiline.max.bytes: as set, or their defaults for
 * the connector's converter). Returns 0, SOURCE_ERR_CONFIG with errbuf
 * "file:line: why" (a bad pattern, multiline.max.bytes below
 * max.line.bytes), or SOURCE_ERR_NOMEM. Start-up only. */
static int multiline_rules(const struct config_section *cfg, const struct file_conf *c,
                           size_t max_line, size_t max_bytes, struct tailmulti_rules **out,
                           char *errbuf, size_t errlen)
{
	struct tailmulti_opts o = {
	    .pattern = c->multi_pattern,
	    .negate = c->multi_negate,
	    .before = c->multi_match == FILE_MATCH_BEFORE,
	    .max_lines = (size_t)c->multi_max_lines,
	    .max_bytes = max_bytes,
	    .timeout_ms = c->multi_timeout_ms,
	};
	char why[300];
	int rc;

	*out = NULL;
	if (o.pattern[0] == '\0')
		return 0;
	if (o.max_bytes < max_line) {
		snprintf(errbuf, errlen,
		         "%s: multiline.max.bytes=%zu is below max.line.bytes=%zu: a "
		         "record must hold at least one whole line",
		         config_where(cfg, c->multi_max_bytes_given ? "multiline.max.bytes"
		                                                    : "max.line.bytes"),
		         o.max_bytes, max_line);
		return SOURCE_ERR_CONFIG;
	}
	rc = tailmulti_rules_new(&o, out, why, sizeof(why));
	if (rc == TAILMULTI_ERR)
		snprintf(errbuf, errlen, "%s: %s", config_where(cfg, "multiline.pattern"), why);
	return rc == 0 ? 0 : rc == TAILMULTI_ERR ? SOURCE_ERR_CONFIG : SOURCE_ERR_NOMEM;
}

/* --check: what open() would refuse in the multiline.* keys. */
static int file_check(const struct config_section *cfg, const char *name, char *errbuf,
                      size_t errlen)
{
	struct tailmulti_rules *r = NULL;
	struct file_conf c;
	int rc;

	source_file_conf(cfg, &c);
	rc = multiline_rules(cfg, &c, (size_t)c.max_line, (size_t)c.multi_max_bytes, &r, errbuf,
	                     errlen);

	(void)name;
	tailmulti_rules_free(r);
	if (rc == SOURCE_ERR_NOMEM)
		snprintf(errbuf, errlen, "multiline.pattern: out of memory");
	return rc;
}

/* max.line.bytes or multiline.max.bytes (key) as set; by default as large as
 * surely fits one Kafka record after the value converter
 * (source_env.value_bytes_max), at most the table's default: a line of
 * quotes or control characters, which JsonConverter writes 2 to 6 times
 * longer, must not become a record the broker refuses for ever. */
static size_t record_limit(const struct filesrc *f, const struct config_section *cfg,
                           const char *key, int64_t value, bool given)
{
	size_t v = (size_t)value;
	/* Not below the keys' least value, which a line must be allowed. */
	size_t budget = f->env->value_bytes_max > 0 && f->env->value_bytes_max < 16
	                    ? 16
	                    : f->env->value_bytes_max;

	if (!given && budget > 0 && budget < v)
		return budget;
	if (budget > 0 && v > budget)
		f->env->log(f->env, LOG_WARN,
		            "%s: %s=%zu: a record of that many bytes can be more than the "
		            "producer's message.max.bytes once converted (JsonConverter writes a "
		            "control character as 6 bytes); Kafka would refuse it and the "
		            "connector stop there; %zu bytes or fewer always fit",
		            config_where(cfg, key), key, v, budget);
	return v;
}

/* Reads the configuration into f. Returns 0, SOURCE_ERR_CONFIG with errbuf,
 * or SOURCE_ERR_NOMEM. */
static int configure(struct filesrc *f, const struct config_section *cfg, const struct file_conf *c,
                     char *errbuf, size_t errlen)
{
	const char *file = c->file;

	f->topic = strdup(c->topic);
	f->batch_max = (size_t)c->batch_size;
	f->ctx.max_line = record_limit(f, cfg, "max.line.bytes", c->max_line, c->max_line_given);
	f->ctx.policy = c->policy;
	f->ctx.rotate_wait_ms = c->rotate_wait_ms;
	f->ctx.max_open = (size_t)c->max_open;
	f->ctx.max_held_files = (size_t)c->max_held_files;
	f->ctx.max_held_bytes = c->max_held_bytes;
	f->ctx.notice = c->watch == FILE_WATCH_POLL ? &tailnotice_poll : &tailnotice_inotify;
	f->poll_ms = c->poll_ms;
	f->rescan_ms = c->rescan_ms;
	f->key = c->key;
	f->hdr_path = opt_string(c->header_path);
	f->hdr_offset = opt_string(c->header_offset);
	f->patterns = copy_list(&c->files, &f->npat);
	f->excludes = copy_list(&c->excludes, &f->nex);
	f->rotated_dirs = copy_list(&c->rotated_dirs, &f->ctx.nrotated_dirs);
	f->ctx.rotated_dirs = (const char *const *)f->rotated_dirs;
	if (f->rotated_dirs == NULL || f->ctx.nrotated_dirs < c->rotated_dirs.n)
		return SOURCE_ERR_NOMEM;
	if (f->topic == NULL || f->patterns == NULL || f->excludes == NULL ||
	    f->npat < c->files.n || f->nex < c->excludes.n)
		return SOURCE_ERR_NOMEM;
	if ((file != NULL && file[0] != '\0') == (f->npat > 0)) {
		snprintf(errbuf, errlen,
		         "%s: set exactly one of file (one file) and files (glob "
		         "patterns)",
		         config_where(cfg, file != NULL ? "file" : "topic"));
		return SOURCE_ERR_CONFIG;
	}
	f->globbing = f->npat > 0;
	f->multi_max_bytes = record_limit(f, cfg, "multiline.max.bytes", c->multi_max_bytes,
	                                  c->multi_max_bytes_given);
	return multiline_rules(cfg, c, f->ctx.max_line, f->multi_max_bytes, &f->multi, errbuf,
	                       errlen);
}

/* Every counter this source keeps, registered at open (source_counters). */
static const struct stats_desc file_counters[] = {
    {.name = "files_gone_unread",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "files deleted before skiff finished reading them"},
    {.name = "bytes_unread_lost",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "bytes of files deleted before skiff could read them"},
    {.name = "lines_unread_lost",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines of held files let go unread past max.held.files or max.held.bytes, "
             "or closed deleted and unread by a stop"},
    {.name = "held_files",
     .type = STATS_GAUGE,
     .flags = STATS_F_STATUS,
     .help = "rotated files held open, waiting to be read (max.held.files)"},
    {.name = "held_bytes",
     .type = STATS_GAUGE,
     .flags = STATS_F_STATUS,
     .help = "bytes of disk the held files deleted since take (max.held.bytes)"},
    {.name = "held_files_max", .type = STATS_GAUGE, .help = "max.held.files"},
    {.name = "held_bytes_max", .type = STATS_GAUGE, .help = "max.held.bytes"},
    {.name = "truncations",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "files truncated in place (read again from the start)"},
    {.name = "fingerprint_resets",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "files whose first bytes changed: read as a new file"},
    {.name = "partial_lines_shipped",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines shipped without a newline (the file ended there)"},
    {.name = "lines_split",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines longer than max.line.bytes split into records"},
    {.name = "lines_truncated",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines longer than max.line.bytes truncated"},
    {.name = "lines_skipped",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines longer than max.line.bytes skipped"},
    {.name = "late_lines",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "lines written to a rotated file after rotate.wait.ms"},
    {.name = "inotify_overflows",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "inotify queue overflows (every file scanned again)"},
    {.name = "paths_not_regular",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "paths that name no regular file (a FIFO, directory or device)"},
    {.name = "files_refused",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "files whose real path the connector's guard refused (fleet.allow.files): "
             "the connector fails"},
    {.name = "paths_duplicate",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "paths naming a file another path already reads (ignored)"},
    {.name = "compressed_cut_short",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "compressed rotations cut short or corrupt (read to where they end)"},
    {.name = "multiline_max_lines",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "multiline records cut at multiline.max.lines"},
    {.name = "multiline_max_bytes",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "multiline records cut at multiline.max.bytes"},
    {.name = "multiline_timeouts",
     .type = STATS_COUNTER,
     .flags = STATS_F_LOG,
     .help = "multiline records ended by multiline.timeout.ms"},
};

static int file_open(const struct config_section *cfg, struct source_env *env, void **ctx,
                     char *errbuf, size_t errlen)
{
	struct filesrc *f = calloc(1, sizeof(*f));
	struct file_conf c;
	int rc;

	*ctx = NULL;
	source_file_conf(cfg, &c);
	if (f == NULL)
		goto nomem;
	f->env = env;
	f->ctx.env = env;
	f->ctx.guard.env = env;
	f->ctx.notice = &tailnotice_poll; /* until configured: its close takes NULL */
	f->open_head = f->open_tail = FILESRC_NONE;
	f->wait_head = f->wait_tail = FILESRC_NONE;
	f->room_maybe = true;
	f->ctx.opaque = f;
	f->ctx.make_room = tailwatch_make_room;
	f->ctx.wd_shared = tailwatch_wd_shared;
	if (source_counters(env, file_counters, sizeof(file_counters) / sizeof(file_counters[0])))
		goto nomem;
	rc = configure(f, cfg, &c, errbuf, errlen);
	if (rc == SOURCE_ERR_CONFIG)
		goto fail;
	if (rc != 0)
		goto nomem;
	f->buf.cap = f->ctx.max_line + 2 + ARENA_EXTRA;
	f->buf.mem = malloc(f->buf.cap);
	f->lines = calloc(MAX_LINES, sizeof(*f->lines));
	f->offtext = malloc((size_t)MAX_LINES * OFFSET_TEXT);
	if (f->buf.mem == NULL || f->lines == NULL || f->offtext == NULL ||
	    taildup_new(env, &f->dup) != 0 || tailindex_new(&f->idx) != 0)
		goto nomem;
	if (f->multi != NULL) {
		/* The records of one poll: one waiting per stream read (each at
		 * most multiline.max.bytes), the lines read, a separator each. */
		f->recbuf.cap = f->multi_max_bytes + f->buf.cap + MAX_LINES;
		f->recbuf.mem = malloc(f->recbuf.cap);
		f->recs = calloc(MAX_LINES, sizeof(*f->recs));
		if (f->recbuf.mem == NULL || f->recs == NULL)
			goto nomem;
	}
	rc = f->ctx.notice->open(&f->ctx.nstate, f->poll_ms, errbuf, errlen);
	if (rc == TAILNOTICE_ERR_NOMEM)
		goto nomem;
	if (rc != TAILNOTICE_OK)
		goto fail;
	if (held_open(f) != 0)
		goto nomem;
	if (tailwatch_initial_streams(f, c.file, c.read_from == FILE_FROM_END) != 0)
		goto nomem;
	if (env->set != NULL) {
		env->set(env, "held_files_max", f->ctx.max_held_files);
		env->set(env, "held_bytes_max", (uint64_t)f->ctx.max_held_bytes);
	}
	*ctx = f;
	return 0;
nomem:
	snprintf(errbuf, errlen, "file source: out of memory");
	file_close(f);
	return SOURCE_ERR_NOMEM;
fail:
	file_close(f);
	return -1; /* from open(): a configuration error */
}

/* ---- what a configuration names (source_ops.resources) -------------------- */

/* What each key names; every row of source_file_keys is here. */
static const struct source_key_names file_key_names[] = {
    {"file", SOURCE_RES_FILE},
    {"files", SOURCE_RES_FILE_GLOB},
    {"rotated.dirs", SOURCE_RES_FILE_GLOB},
    {"files.exclude", SOURCE_RES_NONE}, /* only narrows files */
    {"topic", SOURCE_RES_TOPIC},
    {"batch.size", SOURCE_RES_NONE},
    {"read.from", SOURCE_RES_NONE},
    {"max.open.files", SOURCE_RES_NONE},
    {"max.held.files", SOURCE_RES_NONE},
    {"max.held.bytes", SOURCE_RES_NONE},
    {"max.line.bytes", SOURCE_RES_NONE},
    {"max.line.policy", SOURCE_RES_NONE},
    {"rotate.wait.ms", SOURCE_RES_NONE},
    {"watch.mode", SOURCE_RES_NONE},
    {"poll.interval.ms", SOURCE_RES_NONE},
    {"rescan.interval.ms", SOURCE_RES_NONE},
    {"record.key", SOURCE_RES_NONE},
    {"header.path", SOURCE_RES_NONE},   /* a header's name */
    {"header.offset", SOURCE_RES_NONE}, /* a header's name */
    {"multiline.pattern", SOURCE_RES_NONE},
    {"multiline.negate", SOURCE_RES_NONE},
    {"multiline.match", SOURCE_RES_NONE},
    {"multiline.max.lines", SOURCE_RES_NONE},
    {"multiline.max.bytes", SOURCE_RES_NONE},
    {"multiline.timeout.ms", SOURCE_RES_NONE},
    {NULL, SOURCE_RES_NONE},
};

/* The files a rotated.dirs entry lets the source open: any in it (the
 * rotated copies of every path are looked for there), as a glob whose
 * directory part is dir taken literally. malloc'd; NULL: out of memory. */
static char *rotated_glob(const char *dir)
{
	size_t n = strlen(dir), at = 0;
	char *g = malloc(2 * n + 3);

	if (g == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strchr("*?[]{}\\", dir[i]) != NULL)
			g[at++] = '\\';
		g[at++] = dir[i];
	}
	memcpy(g + at, "/*", 3);
	return g;
}

static int file_resources(const struct config_section *cfg,
                          void (*put)(void *arg, enum source_resource kind, const char *what),
                          void *arg, char *errbuf, size_t errlen)
{
	struct file_conf c;

	source_file_conf(cfg, &c);
	if (c.file != NULL)
		put(arg, SOURCE_RES_FILE, c.file);
	for (size_t i = 0; i < c.files.n; i++) {
		const char *p = c.files.items[i];

		/* as tailwatch_initial_streams: a pattern without these is a
		 * path, opened as written (a backslash in it is no escape) */
		put(arg, strpbrk(p, "*?[{") != NULL ? SOURCE_RES_FILE_GLOB : SOURCE_RES_FILE, p);
	}
	for (size_t i = 0; i < c.rotated_dirs.n; i++) {
		char *g = rotated_glob(c.rotated_dirs.items[i]);

		if (g == NULL) {
			snprintf(errbuf, errlen, "file source: out of memory");
			return SOURCE_ERR_NOMEM;
		}
		put(arg, SOURCE_RES_FILE_GLOB, g);
		free(g);
	}
	if (c.topic != NULL) /* required: always, once loaded */
		put(arg, SOURCE_RES_TOPIC, c.topic);
	return 0;
}

const struct source_ops source_file_ops = {
    .kind = "file",
    .classes = file_classes,
    .config_keys = source_file_keys,
    .config_size = sizeof(struct file_conf),
    .value_kind = VALUE_STRING,
    .open = file_open,
    .check = file_check,
    .poll = file_poll,
    .watch = file_watch,
    .pollfds = file_pollfds,
    .timeout_ms = file_timeout,
    .offset_json = file_offset_json,
    .backlog = file_backlog,
    .check_offset = tailcheck_offset,
    .check_reach = tailcheck_reach,
    .stopping = file_stopping,
    .resources = file_resources,
    .key_names = file_key_names,
    .close = file_close,
};
