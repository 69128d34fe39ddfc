/* source_file: the tailing connector (Kafka Connect's FileStreamSource).
 *
 * Reads complete lines of one file and follows it as it grows. A line ends at
 * "\n", "\r\n" or a lone "\r" (FileStreamSourceTask's rule); the terminator is
 * not part of the record, every other byte passes through unchanged. A
 * trailing partial line waits for its terminator.
 *
 * Source partition {"filename": <file as configured>}; offset
 * {"position": <byte offset of the next unread line>, "dev": D, "ino": I}.
 * Connect reads "position" alone; dev and ino let a restart tell the same file
 * from a replaced one, so a position is never applied to another file.
 *
 * Growth is waited for with inotify on the file and its directory, plus a slow
 * rescan timer (for file systems where inotify is silent): an idle file costs
 * no reads and no wake-ups beyond the rescan. */
#include "config.h"
#include "log.h"
#include "jsonint.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define READ_CHUNK (64 * 1024)

enum long_policy { LONG_SPLIT, LONG_TRUNCATE, LONG_SKIP };

struct filesrc {
	struct source_env *env;
	struct partition *part;
	char *path;
	char *topic;
	size_t batch_max;
	size_t max_line;
	enum long_policy policy;
	int64_t rescan_ms;
	int64_t next_rescan;

	int ifd;      /* inotify */
	int wd_file;  /* watch on the open file, -1 when none */
	int fd;       /* the open file, -1 while waiting for it */
	dev_t dev;
	ino_t ino;
	bool missing_logged;

	char *buf;    /* bytes read, from file offset base */
	size_t cap;
	size_t len;   /* bytes in buf */
	size_t scan;  /* bytes of buf consumed by records */
	int64_t base; /* file offset of buf[0] */
	bool discarding;   /* dropping the rest of an over-long line */
	bool in_long_line; /* inside a line already counted as too long */
	bool resumed;      /* the committed offset was applied once */
	bool eof;        /* last read returned 0 and nothing woke us since */
};

static const char *const file_classes[] = {
	"FileStreamSource",
	"FileStreamSourceConnector",
	"org.apache.kafka.connect.file.FileStreamSourceConnector",
	NULL,
};

static const struct config_key file_keys[] = {
	{"file", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED, "The file to tail."},
	{"topic", CFG_STRING, NULL, 0, 0, NULL, CFG_REQUIRED, "The topic lines are sent to."},
	{"batch.size", CFG_INT, "2000", 1, 100000, NULL, 0,
	 "Most lines read in one poll of the file (Connect's batch.size)."},
	{"max.line.bytes", CFG_INT, "524288", 16, 64 * 1024 * 1024, NULL, 0,
	 "Longest line shipped as one record; keep it below the producer's message.max.bytes."},
	{"max.line.policy", CFG_ENUM, "split", 0, 0, "split|truncate|skip", 0,
	 "What a longer line becomes: split into records of max.line.bytes, truncated, or skipped "
	 "(counted either way)."},
	{"rescan.interval.ms", CFG_INT, "10000", 100, 3600000, NULL, 0,
	 "How often the file is checked without an inotify event (rotation, NFS)."},
	{NULL, 0, NULL, 0, 0, NULL, 0, NULL},
};

static void close_file(struct filesrc *f)
{
	if (f->wd_file >= 0)
		inotify_rm_watch(f->ifd, f->wd_file);
	f->wd_file = -1;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->len = f->scan = 0;
	f->discarding = f->in_long_line = false;
}

/* Parses the committed offset; returns the position to resume from for a file
 * with identity (dev, ino) and size, or 0 when the offset is for another file
 * or beyond the end (the file was truncated or replaced while skiff was
 * stopped). */
static int64_t resume_position(struct filesrc *f, const struct stat *st)
{
	const char *json = f->env->committed(f->env, f->part);
	int64_t p = 0, dev, ino;

	if (json == NULL || jsonint_get(json, "position", &p) != 0 || p < 0)
		return 0;
	if (jsonint_get(json, "dev", &dev) == 0 && jsonint_get(json, "ino", &ino) == 0 &&
	    ((dev_t)dev != st->st_dev || (ino_t)ino != st->st_ino)) {
		f->env->log(f->env, LOG_WARN,
			    "%s is another file than the one the stored offset is for "
			    "(replaced while skiff was stopped): reading it from the start",
			    f->path);
		f->env->count(f->env, "files_replaced_while_stopped", 1);
		return 0;
	}
	if (p > st->st_size) {
		f->env->log(f->env, LOG_WARN,
			    "%s is shorter (%lld bytes) than the stored position %lld "
			    "(truncated while skiff was stopped): reading it from the start",
			    f->path, (long long)st->st_size, (long long)p);
		f->env->count(f->env, "truncations", 1);
		return 0;
	}
	return p;
}

/* Opens the file at f->path. Returns 1 when open, 0 when it does not exist
 * (yet), -1 on an error worth stopping for (errbuf). */
static int open_file(struct filesrc *f, bool resume, char *errbuf, size_t errlen)
{
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT) {
			if (!f->missing_logged)
				f->env->log(f->env, LOG_WARN, "%s does not exist (yet): waiting for it",
					    f->path);
			f->missing_logged = true;
			return 0;
		}
		f->env->log(f->env, LOG_WARN, "%s: %s; retrying", f->path, strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(errbuf, errlen, "%s: not a regular file", f->path);
		close(fd);
		return -1;
	}
	f->missing_logged = false;
	f->resumed = true;
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->base = resume ? resume_position(f, &st) : 0;
	f->len = f->scan = 0;
	f->eof = false;
	if (f->base > 0 && lseek(fd, f->base, SEEK_SET) != f->base) {
		snprintf(errbuf, errlen, "%s: seek to %lld: %s", f->path, (long long)f->base,
			 strerror(errno));
		close_file(f);
		return -1;
	}
	f->wd_file = inotify_add_watch(f->ifd, f->path,
				       IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF);
	f->env->log(f->env, LOG_INFO, "reading %s from byte %lld", f->path, (long long)f->base);
	return 1;
}

static void emit(struct filesrc *f, struct source_batch *b, const char *line, size_t len,
		 size_t end)
{
	struct record *r = &b->records[b->n++];

	memset(r, 0, sizeof(*r));
	r->part = f->part;
	r->topic = f->topic;
	r->key.kind = VALUE_NULL;
	r->value.kind = VALUE_STRING;
	r->value.bytes = line;
	r->value.len = len;
	r->offset.v[0] = f->base + (int64_t)end;
	r->offset.v[1] = (int64_t)f->dev;
	r->offset.v[2] = (int64_t)f->ino;
}

/* Finds the end of the line starting at buf[from]: returns 1 with *eol (first
 * terminator byte) and *next (first byte after it), or 0 when incomplete. */
static int find_eol(const struct filesrc *f, size_t from, size_t *eol, size_t *next)
{
	for (size_t i = from; i < f->len; i++) {
		char c = f->buf[i];

		if (c == '\n') {
			*eol = i;
			*next = i + 1;
			return 1;
		}
		if (c == '\r') {
			if (i + 1 >= f->len)
				return 0; /* "\r\n" or a lone "\r"? wait for the next byte */
			*eol = i;
			*next = f->buf[i + 1] == '\n' ? i + 2 : i + 1;
			return 1;
		}
	}
	return 0;
}

/* Handles a line longer than max_line at buf[scan]; complete says whether its
 * terminator is in the buffer (then next is the byte after it). */
static void long_line(struct filesrc *f, struct source_batch *b, bool complete, size_t next)
{
	size_t end = f->scan + f->max_line;

	if (!f->in_long_line)
		f->env->count(f->env,
			      f->policy == LONG_SPLIT  ? "lines_split"
			      : f->policy == LONG_SKIP ? "lines_skipped"
						       : "lines_truncated",
			      1);
	f->in_long_line = true;
	if (f->policy == LONG_SPLIT) {
		emit(f, b, f->buf + f->scan, f->max_line, end);
		f->scan = end;
		return;
	}
	if (f->policy == LONG_TRUNCATE)
		emit(f, b, f->buf + f->scan, f->max_line, complete ? next : end);
	if (complete) {
		f->scan = next;
		f->in_long_line = false;
	} else {
		f->scan = f->len;
		f->discarding = true;
	}
}

/* Moves complete lines of buf into the batch. */
static void extract(struct filesrc *f, struct source_batch *b)
{
	while (b->n < b->max) {
		size_t eol = 0, next = 0;
		bool complete = find_eol(f, f->scan, &eol, &next);
		size_t len = (complete ? eol : f->len) - f->scan;

		if (f->discarding) {
			/* The rest of a line already truncated or skipped. */
			if (!complete) {
				f->scan = f->len;
				return;
			}
			f->discarding = f->in_long_line = false;
			f->scan = next;
		} else if (len > f->max_line) {
			long_line(f, b, complete, next);
		} else if (complete) {
			emit(f, b, f->buf + f->scan, len, next);
			f->scan = next;
			f->in_long_line = false;
		} else {
			return; /* a partial line: wait for its terminator */
		}
	}
}

/* Drops consumed bytes so the buffer has room; records of the previous poll
 * are no longer referenced when this runs. */
static void compact(struct filesrc *f)
{
	if (f->scan == 0)
		return;
	memmove(f->buf, f->buf + f->scan, f->len - f->scan);
	f->base += (int64_t)f->scan;
	f->len -= f->scan;
	f->scan = 0;
}

/* Checks, at end of file, whether the path now names another file or the
 * file shrank. Returns 1 when the reader was reset to a new file or offset. */
static int check_replaced(struct filesrc *f, char *errbuf, size_t errlen)
{
	struct stat path_st, fd_st;

	if (fstat(f->fd, &fd_st) == 0 && fd_st.st_size < f->base + (int64_t)f->len) {
		f->env->log(f->env, LOG_WARN, "%s was truncated to %lld bytes: reading it again from the start",
			    f->path, (long long)fd_st.st_size);
		f->env->count(f->env, "truncations", 1);
		if (lseek(f->fd, 0, SEEK_SET) != 0)
			return -1;
		f->base = 0;
		f->len = f->scan = 0;
		f->discarding = false;
		return 1;
	}
	if (stat(f->path, &path_st) == 0 && path_st.st_dev == f->dev && path_st.st_ino == f->ino)
		return 0;
	/* Rotated or deleted: everything up to EOF of the old file was read. */
	if (f->len > f->scan) {
		f->env->log(f->env, LOG_WARN, "%s was rotated or deleted with a partial last line of %zu bytes: it is not shipped",
			    f->path, f->len - f->scan);
		f->env->count(f->env, "partial_lines_dropped", 1);
	}
	f->env->log(f->env, LOG_INFO, "%s was rotated or deleted: following the new file", f->path);
	close_file(f);
	return open_file(f, false, errbuf, errlen) < 0 ? -1 : 1;
}

static void drain_inotify(struct filesrc *f)
{
	char evbuf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(f->ifd, evbuf, sizeof(evbuf)) > 0)
		f->eof = false;
}

static int file_poll(void *ctx, struct source_batch *b, int64_t now_ms, char *errbuf,
		     size_t errlen)
{
	struct filesrc *f = ctx;
	int rc;

	b->n = 0;
	b->more = false;
	drain_inotify(f);
	if (now_ms >= f->next_rescan) {
		f->next_rescan = now_ms + f->rescan_ms;
		f->eof = false;
	}
	if (b->max > f->batch_max)
		b->max = f->batch_max;
	if (f->fd < 0) {
		rc = open_file(f, !f->resumed, errbuf, errlen);
		if (rc <= 0)
			return rc < 0 ? SOURCE_ERR : 0;
	}
	compact(f);
	while (b->n < b->max) {
		ssize_t got;

		extract(f, b);
		if (b->n == b->max)
			break;
		if (f->eof)
			return 0;
		got = read(f->fd, f->buf + f->len, f->cap - f->len);
		if (got < 0 && errno != EINTR && errno != EAGAIN) {
			snprintf(errbuf, errlen, "%s: read: %s", f->path, strerror(errno));
			return SOURCE_ERR;
		}
		if (got > 0) {
			f->len += (size_t)got;
			continue;
		}
		if (got == 0) {
			rc = check_replaced(f, errbuf, errlen);
			if (rc < 0)
				return SOURCE_ERR;
			if (rc == 0 || f->fd < 0)
				f->eof = true;
			if (b->n > 0 && rc > 0)
				break; /* records point into the old buffer contents */
		}
	}
	b->more = b->n == b->max || !f->eof;
	return 0;
}

static int file_pollfds(void *ctx, struct pollfd *fds, int max)
{
	struct filesrc *f = ctx;

	if (max < 1)
		return 0;
	fds[0] = (struct pollfd){.fd = f->ifd, .events = POLLIN};
	return 1;
}

static int64_t file_timeout(void *ctx, int64_t now_ms)
{
	struct filesrc *f = ctx;

	return f->next_rescan > now_ms ? f->next_rescan - now_ms : 0;
}

static char *file_offset_json(void *ctx, const struct src_offset *off)
{
	char buf[128];

	(void)ctx;
	snprintf(buf, sizeof(buf), "{\"position\":%lld,\"dev\":%lld,\"ino\":%lld}",
		 (long long)off->v[0], (long long)off->v[1], (long long)off->v[2]);
	return strdup(buf);
}

static void file_close(void *ctx)
{
	struct filesrc *f = ctx;

	if (f == NULL)
		return;
	close_file(f);
	if (f->ifd >= 0)
		close(f->ifd);
	free(f->buf);
	free(f->path);
	free(f->topic);
	free(f);
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

static int watch_dir(struct filesrc *f, char *errbuf, size_t errlen)
{
	char *copy = strdup(f->path);
	int wd = -1;

	if (copy != NULL)
		wd = inotify_add_watch(f->ifd, dirname(copy), IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR);
	if (wd < 0)
		f->env->log(f->env, LOG_WARN, "%s: cannot watch its directory (%s): relying on the %lld ms rescan",
			    f->path, copy ? strerror(errno) : "out of memory", (long long)f->rescan_ms);
	free(copy);
	(void)errbuf;
	(void)errlen;
	return 0;
}

static int file_open(const struct config_section *cfg, struct source_env *env, void **ctx,
		     char *errbuf, size_t errlen)
{
	struct filesrc *f = calloc(1, sizeof(*f));
	const char *pol = config_str(cfg, "max.line.policy");
	char *pjson = NULL;

	*ctx = NULL;
	if (f == NULL)
		goto nomem;
	f->env = env;
	f->fd = f->ifd = f->wd_file = -1;
	f->path = strdup(config_str(cfg, "file"));
	f->topic = strdup(config_str(cfg, "topic"));
	f->batch_max = (size_t)config_int(cfg, "batch.size");
	f->max_line = (size_t)config_int(cfg, "max.line.bytes");
	f->policy = strcmp(pol, "skip") == 0 ? LONG_SKIP : strcmp(pol, "truncate") == 0 ? LONG_TRUNCATE : LONG_SPLIT;
	f->rescan_ms = config_int(cfg, "rescan.interval.ms");
	f->cap = f->max_line + READ_CHUNK;
	f->buf = malloc(f->cap);
	if (f->path == NULL || f->topic == NULL || f->buf == NULL)
		goto nomem;
	f->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f->ifd < 0) {
		snprintf(errbuf, errlen, "%s: inotify: %s", f->path, strerror(errno));
		goto fail;
	}
	watch_dir(f, errbuf, errlen);
	pjson = partition_json(f->path);
	if (pjson == NULL || (f->part = env->partition(env, pjson)) == NULL)
		goto nomem;
	free(pjson);
	*ctx = f;
	return 0;
nomem:
	snprintf(errbuf, errlen, "file source: out of memory");
fail:
	free(pjson);
	file_close(f);
	return -1;
}

const struct source_ops source_file_ops = {
	.kind = "file",
	.classes = file_classes,
	.config_keys = file_keys,
	.open = file_open,
	.poll = file_poll,
	.pollfds = file_pollfds,
	.timeout_ms = file_timeout,
	.offset_json = file_offset_json,
	.close = file_close,
};
