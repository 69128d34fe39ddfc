/* tailfile: reading one open file line by line. */
#include "sources/file/tailfile.h"

#include "sources/file/tailz.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tailfile_strerror(int rc)
{
	switch (rc) {
	case TAILFILE_OK:
		return "ok";
	case TAILFILE_MORE:
		return "more to read";
	case TAILFILE_ERR_NOMEM:
		return "out of memory";
	case TAILFILE_ERR_NOENT:
		return "no such file";
	case TAILFILE_ERR_NOTREG:
		return "not a regular file";
	case TAILFILE_ERR_PSEUDO:
		return "not a log (a pseudo file)";
	case TAILFILE_ERR_SHORT:
		return "shorter than what was read from it";
	case TAILFILE_ERR_REFUSED:
		return "outside what the connector may read";
	default:
		return "a system call failed";
	}
}

/* The code for a system call's errno e, its text in errbuf (may be NULL). */
static int code_of(int e, char *errbuf, size_t errlen)
{
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s", strerror(e));
	return e == ENOMEM ? TAILFILE_ERR_NOMEM : e == ENOENT ? TAILFILE_ERR_NOENT : TAILFILE_ERR;
}

struct tailfile {
	int fd;
	char *path;
	struct tailid id;
	struct tailmark *mark; /* what its offsets carry besides v[]: one reference */
	struct tailz *z;       /* a compressed file: read through it, NULL else */
	size_t max_line;
	enum tailfile_policy policy;
	int64_t pos;     /* first byte not consumed */
	int64_t end;     /* tailfile_end */
	int64_t fp_len;  /* = min(pos, TAILID_FP_MAX) */
	uint64_t fp;     /* hash of the first fp_len bytes */
	bool discarding; /* dropping the rest of a truncated or skipped line */
	bool in_long;    /* inside a line already counted as too long */
	/* The bytes just before pos, as read: tailfile_still_there compares
	 * them with the file before reading on from pos. */
	unsigned char last[TAILFILE_LAST];
	size_t last_len;
};

/* The bytes of a plain file read at once: what a poll uses (MAX_LINES lines
 * of a typical log), not the whole arena, whose rest would be read again at
 * the next poll. A chunk without a whole line is read again at full room. */
#define READ_CHUNK (64 * 1024)

/* One pread's worth of bytes: region[0..got) holds the file from base. */
struct chunk {
	const char *region;
	size_t got, scan;
	int64_t base;
	bool at_eof, final;
};

/* True when fd, a regular file of size 0, reads a byte and still has size
 * 0: its bytes are made up at each read. A writer appending meanwhile makes
 * the second look see its bytes. */
static bool reads_past_size(int fd)
{
	struct stat st;
	char b;

	return pread(fd, &b, 1, 0) == 1 && fstat(fd, &st) == 0 && st.st_size == 0;
}

/* A file named and made like a compressed one (app.log.1.gz) is read
 * through tailz: its positions count uncompressed bytes. Returns 0,
 * TAILFILE_ERR_NOMEM or TAILFILE_ERR. */
static int open_compressed(struct tailfile *tf, int fd, const char *path, size_t max_line)
{
	enum tailz_format f = tailz_named(path) ? tailz_detect(fd) : TAILZ_NONE;
	int rc;

	if (f == TAILZ_NONE)
		return 0;
	/* Room for a whole line and its terminator in one read. */
	rc = tailz_open(fd, f, max_line + 2 + 65536, &tf->z);
	return rc == 0 ? TAILFILE_OK : rc == TAILZ_ERR_NOMEM ? TAILFILE_ERR_NOMEM : TAILFILE_ERR;
}

/* pread, or the uncompressed bytes of a compressed file: len bytes, fewer
 * at the end (*at_end) or for a compressed file's window. */
static ssize_t read_at(const struct tailfile *tf, void *dst, size_t len, int64_t off, bool *at_end)
{
	size_t got = 0;
	ssize_t n;
	int rc;

	if (tf->z == NULL) {
		n = pread(tf->fd, dst, len, off);
		*at_end = n >= 0 && (size_t)n < len;
		return n;
	}
	rc = tailz_read(tf->z, off, dst, len, &got, at_end);
	if (rc != 0)
		errno = rc == TAILZ_ERR_NOMEM ? ENOMEM : EIO;
	return rc == 0 ? (ssize_t)got : -1;
}

/* tailfile_start for a compressed file: the fingerprint from its head, the
 * bytes before pos by decoding up to there. */
static int start_compressed(struct tailfile *tf, int64_t pos, int64_t n, size_t k)
{
	size_t hlen;
	const void *head = tailz_head(tf->z, &hlen);
	bool end;

	if ((int64_t)hlen < n || read_at(tf, tf->last, k, pos - (int64_t)k, &end) != (ssize_t)k)
		return -1;
	tf->fp = tailid_fp_update(TAILID_FP_EMPTY, head, (size_t)n);
	return 0;
}

/* Where fd really is, into real (size PATH_MAX): the link
 * /proc/self/fd/<fd> names, less the " (deleted)" of a file unlinked since
 * it opened; without /proc, realpath(path) when it still names fd's file.
 * Returns 0, or -1 when it cannot be told (then the guard refuses). */
static int real_path_of(int fd, const char *path, char *real)
{
	static const char deleted[] = " (deleted)";
	char link[32];
	struct stat st, at;
	ssize_t n;
	size_t dl = sizeof(deleted) - 1;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, PATH_MAX - 1);
	if (n > 0 && n < PATH_MAX - 1) {
		real[n] = '\0';
		if ((size_t)n > dl && strcmp(real + n - dl, deleted) == 0 && fstat(fd, &st) == 0 &&
		    st.st_nlink == 0)
			real[n - (ssize_t)dl] = '\0';
		return real[0] == '/' ? 0 : -1;
	}
	if (realpath(path, real) == NULL || fstat(fd, &st) != 0 || stat(real, &at) != 0 ||
	    st.st_dev != at.st_dev || st.st_ino != at.st_ino)
		return -1;
	return 0;
}

/* g's check of fd, opened at path: 0 (allowed, or no guard) or
 * TAILFILE_ERR_REFUSED, the first refusal's reason kept in g->why. */
static int guard_check(struct tailguard *g, int fd, const char *path, char *errbuf, size_t errlen)
{
	char real[PATH_MAX], why[512];

	if (g == NULL || g->env == NULL || g->env->allow_path == NULL)
		return 0;
	if (real_path_of(fd, path, real) != 0) {
		snprintf(real, sizeof(real), "%s", "an unknown path");
		snprintf(why, sizeof(why), "%s", "which cannot be checked (no /proc/self/fd)");
	} else if (g->env->allow_path(g->env, real, why, sizeof(why)) == 0) {
		return 0;
	}
	if (!g->refused && strcmp(path, real) == 0)
		snprintf(g->why, sizeof(g->why), "file %.300s is %.500s", path, why);
	else if (!g->refused)
		snprintf(g->why, sizeof(g->why), "file %.250s resolves to %.250s, %.500s", path,
		         real, why);
	g->refused = true;
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s", tailfile_strerror(TAILFILE_ERR_REFUSED));
	return TAILFILE_ERR_REFUSED;
}

int tailfile_open(struct tailguard *g, const char *path, size_t max_line,
                  enum tailfile_policy policy, struct tailfile **out, char *errbuf, size_t errlen)
{
	struct tailfile *tf = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int err;

	*out = NULL;
	if (fd < 0)
		return code_of(errno, errbuf, errlen);
	if ((err = guard_check(g, fd, path, errbuf, errlen)) != 0) {
		close(fd);
		return err;
	}
	tf = calloc(1, sizeof(*tf));
	if (tf == NULL || (tf->path = strdup(path)) == NULL) {
		err = code_of(ENOMEM, errbuf, errlen);
		goto fail;
	}
	if (tailid_of_fd(fd, &tf->id) != 0) {
		err = code_of(errno, errbuf, errlen);
		goto fail;
	}
	if (!tf->id.regular) {
		err = tf->id.pseudo ? TAILFILE_ERR_PSEUDO : TAILFILE_ERR_NOTREG;
		snprintf(errbuf, errlen, "%s", tailfile_strerror(err));
		goto fail;
	}
	if (tf->id.size == 0 && reads_past_size(fd)) {
		err = TAILFILE_ERR_PSEUDO; /* a pseudo file elsewhere (FUSE, ...) */
		snprintf(errbuf, errlen, "%s", tailfile_strerror(err));
		goto fail;
	}
	if ((err = open_compressed(tf, fd, path, max_line)) != 0) {
		snprintf(errbuf, errlen, "%s", strerror(err == TAILFILE_ERR_NOMEM ? ENOMEM : EIO));
		goto fail;
	}
	if (tailmark_new(tf->id.born, &tf->mark) != 0) {
		err = code_of(ENOMEM, errbuf, errlen);
		goto fail;
	}
	if (tf->z != NULL) /* until tailchain_set_floor knows better */
		tf->mark->after = TAILPOS_AFTER_UNKNOWN;
	tf->fd = fd;
	tf->max_line = max_line;
	tf->policy = policy;
	tf->fp = TAILID_FP_EMPTY;
	tf->end = -1;
	*out = tf;
	return 0;
fail:
	if (tf != NULL) {
		tailz_free(tf->z);
		free(tf->path);
	}
	free(tf);
	close(fd);
	return err;
}

int tailfile_start(struct tailfile *tf, int64_t pos)
{
	int64_t n = pos < TAILID_FP_MAX ? pos : TAILID_FP_MAX;
	size_t k = pos < TAILFILE_LAST ? (size_t)pos : TAILFILE_LAST;
	uint64_t fp;

	if (tf->z != NULL) {
		if (pos < 0 || start_compressed(tf, pos, n, k) != 0)
			return -1;
		fp = tf->fp;
	} else if (pos < 0 || tailfile_size(tf) < pos || tailid_fp_file(tf->fd, n, &fp) != 0 ||
	           pread(tf->fd, tf->last, k, pos - (int64_t)k) != (ssize_t)k)
		return -1;
	tf->pos = pos;
	tf->end = -1;
	tf->fp_len = n;
	tf->fp = fp;
	tf->last_len = k;
	if (n == TAILID_FP_MAX) {
		tf->mark->fp = fp;
		tf->mark->fp_full = true;
	}
	tf->discarding = tf->in_long = false;
	return 0;
}

int tailfile_start_at_end(struct tailfile *tf)
{
	char tail[4096];
	int64_t size = tailfile_size(tf), from;
	ssize_t got;

	if (size <= 0)
		return tailfile_start(tf, 0);
	from = size > (int64_t)sizeof(tail) ? size - (int64_t)sizeof(tail) : 0;
	got = pread(tf->fd, tail, (size_t)(size - from), from);
	if (got <= 0)
		return -1;
	for (ssize_t i = got; i > 0; i--)
		if (tail[i - 1] == '\n' || tail[i - 1] == '\r')
			return tailfile_start(tf, from + i);
	/* No terminator in the last 4 KiB: a line longer than that is being
	 * written; start at the end rather than ship old bytes. */
	return tailfile_start(tf, size);
}

bool tailfile_matches(const struct tailfile *tf, uint64_t fp, int64_t fplen)
{
	uint64_t h;
	size_t hlen;
	const void *head;

	if (tf->z != NULL) {
		head = tailz_head(tf->z, &hlen);
		return fplen >= 0 && (int64_t)hlen >= fplen &&
		       tailid_fp_update(TAILID_FP_EMPTY, head, (size_t)fplen) == fp;
	}
	return tailid_fp_file(tf->fd, fplen, &h) == 0 && h == fp;
}

bool tailfile_tail_at(const struct tailfile *tf, int64_t pos, uint64_t tail)
{
	unsigned char b[TAILPOS_TAIL];
	bool end;

	return pos >= TAILPOS_TAIL &&
	       read_at(tf, b, sizeof(b), pos - TAILPOS_TAIL, &end) == (ssize_t)sizeof(b) &&
	       tailpos_tail(b, sizeof(b)) == tail;
}

bool tailfile_still_there(const struct tailfile *tf)
{
	unsigned char now[TAILFILE_LAST];
	ssize_t got;

	if (tf->last_len == 0 || tf->z != NULL)
		return true; /* a compressed file is not written to */
	do
		got = pread(tf->fd, now, tf->last_len, tf->pos - (int64_t)tf->last_len);
	while (got < 0 && errno == EINTR);
	/* A read error is not a truncation: the read that follows reports it. */
	return got < 0 || ((size_t)got == tf->last_len && memcmp(now, tf->last, tf->last_len) == 0);
}

void tailfile_last(const struct tailfile *tf, const void **bytes, size_t *len)
{
	*bytes = tf->last;
	*len = tf->last_len;
}

void tailfile_rewind(struct tailfile *tf)
{
	struct tailmark *m;

	/* The offsets of lines read before carry the old fp in their mark. */
	if (tailmark_new(tf->mark->born, &m) == 0) {
		m->after = tf->mark->after;
		src_ref_drop(&tf->mark->ref);
		tf->mark = m;
	} else {
		tf->mark->fp_full = false; /* those offsets then go without fp */
	}
	tf->pos = 0;
	tf->end = -1;
	tf->fp_len = 0;
	tf->fp = TAILID_FP_EMPTY;
	tf->last_len = 0;
	tf->discarding = tf->in_long = false;
}

/* Consumes c->region up to `to`, keeping the fingerprint current. */
static void advance(struct tailfile *tf, struct chunk *c, size_t to)
{
	int64_t end = c->base + (int64_t)to;

	if (tf->fp_len < TAILID_FP_MAX && tf->fp_len < end) {
		int64_t upto = end < TAILID_FP_MAX ? end : TAILID_FP_MAX;

		tf->fp = tailid_fp_update(tf->fp, c->region + (tf->fp_len - c->base),
		                          (size_t)(upto - tf->fp_len));
		tf->fp_len = upto;
		if (upto == TAILID_FP_MAX && !tf->mark->fp_full) {
			tf->mark->fp = tf->fp;
			tf->mark->fp_full = true;
		}
	}
	c->scan = to;
	tf->pos = end;
}

_Static_assert(TAILFILE_LAST >= TAILPOS_TAIL, "tf->last holds the bytes a tail hashes");

/* The tail (tailpos.h) of the bytes before c->base + c->scan: those kept
 * from before c (tf->last), then c's. */
static uint64_t chunk_tail(const struct tailfile *tf, const struct chunk *c)
{
	unsigned char b[TAILPOS_TAIL];
	size_t k = c->scan, m;

	if (k >= TAILPOS_TAIL)
		return tailpos_tail(c->region + k - TAILPOS_TAIL, TAILPOS_TAIL);
	/* Hashed by words: the two pieces are joined first. */
	m = tf->last_len < TAILPOS_TAIL - k ? tf->last_len : TAILPOS_TAIL - k;
	memcpy(b, tf->last + tf->last_len - m, m);
	memcpy(b + m, c->region, k);
	return tailpos_tail(b, m + k);
}

static void emit(struct tailfile *tf, const struct chunk *c, struct tailline *l, size_t from,
                 size_t len)
{
	l->bytes = c->region + from;
	l->len = len;
	l->start = c->base + (int64_t)from;
	l->after.v[0] = tf->pos;
	l->after.v[1] = tf->id.dev;
	l->after.v[2] = tf->id.ino;
	l->after.v[3] = (int64_t)(tf->pos > TAILID_FP_MAX ? chunk_tail(tf, c) : tf->fp);
	l->after.ref = &tf->mark->ref;
}

/* Finds the end of the line at region[from]: 1 with *eol and *next, or 0
 * when incomplete. A trailing "\r" waits for the next byte ("\r\n"?) unless
 * the file is final. */
static int find_eol(const struct chunk *c, size_t from, size_t *eol, size_t *next)
{
	const char *p = c->region + from;
	size_t left = c->got - from;
	const char *nl = memchr(p, '\n', left), *cr = memchr(p, '\r', nl ? (size_t)(nl - p) : left);

	if (cr != NULL) {
		size_t i = (size_t)(cr - c->region);

		if (i + 1 >= c->got && !(c->at_eof && c->final))
			return 0;
		*eol = i;
		*next = i + 1 < c->got && c->region[i + 1] == '\n' ? i + 2 : i + 1;
		return 1;
	}
	if (nl == NULL)
		return 0;
	*eol = (size_t)(nl - c->region);
	*next = *eol + 1;
	return 1;
}

/* A line longer than max_line starts at c->scan. Returns 1 when a line was
 * written to *l. */
static int long_line(struct tailfile *tf, struct chunk *c, struct tailline *l, bool complete,
                     size_t next, struct tailfile_stats *st)
{
	size_t from = c->scan;

	if (!tf->in_long) {
		if (tf->policy == TAILFILE_SPLIT)
			st->split++;
		else if (tf->policy == TAILFILE_SKIP)
			st->skipped++;
		else
			st->truncated++;
	}
	tf->in_long = true;
	if (tf->policy == TAILFILE_SPLIT) {
		/* Never inside a character: a converter would make U+FFFD of
		 * both halves. The next piece starts where this one ends. */
		size_t cut = utf8_cut(c->region + from, c->got - from, tf->max_line);

		advance(tf, c, from + cut);
		emit(tf, c, l, from, cut);
		return 1;
	}
	/* truncate or skip: drop the rest of the line, here and in later reads */
	advance(tf, c, complete ? next : c->got);
	tf->discarding = !complete;
	if (complete)
		tf->in_long = false;
	if (tf->policy == TAILFILE_SKIP)
		return 0;
	/* What is kept ends before a character the limit would cut. */
	emit(tf, c, l, from, utf8_cut(c->region + from, c->got - from, tf->max_line));
	return 1;
}

/* Keeps the last TAILFILE_LAST bytes consumed: those of c up to c->scan after
 * those kept before. */
static void keep_last(struct tailfile *tf, const struct chunk *c)
{
	size_t k = c->scan, keep;

	if (k >= TAILFILE_LAST) {
		memcpy(tf->last, c->region + k - TAILFILE_LAST, TAILFILE_LAST);
		tf->last_len = TAILFILE_LAST;
		return;
	}
	keep = tf->last_len + k > TAILFILE_LAST ? TAILFILE_LAST - k : tf->last_len;
	memmove(tf->last, tf->last + tf->last_len - keep, keep);
	memcpy(tf->last + keep, c->region, k);
	tf->last_len = keep + k;
}

/* Moves the lines of c into out; returns how many. */
static size_t extract(struct tailfile *tf, struct chunk *c, struct tailline *out, size_t max,
                      struct tailfile_stats *st)
{
	size_t n = 0;

	while (n < max && c->scan < c->got) {
		size_t eol = 0, next = 0;
		bool complete = find_eol(c, c->scan, &eol, &next);
		size_t from = c->scan, len = (complete ? eol : c->got) - from;

		if (tf->discarding) {
			advance(tf, c, complete ? next : c->got);
			tf->discarding = !complete;
			tf->in_long = !complete;
		} else if (len > tf->max_line) {
			n += (size_t)long_line(tf, c, &out[n], complete, next, st);
		} else if (complete) {
			advance(tf, c, next);
			emit(tf, c, &out[n++], from, len);
			tf->in_long = false;
		} else if (c->at_eof && c->final) {
			/* the file will not grow: its partial last line is a line */
			advance(tf, c, c->got);
			emit(tf, c, &out[n++], from, len);
			tf->in_long = false;
			st->partial++;
		} else {
			break; /* a partial line: wait for its terminator */
		}
	}
	return n;
}

int tailfile_read(struct tailfile *tf, struct tailbuf *buf, struct tailline *out, size_t max,
                  size_t *n, bool final, struct tailfile_stats *st, char *errbuf, size_t errlen)
{
	bool whole = tf->z != NULL; /* a compressed file's window: as it was */

	*n = 0;
	for (;;) {
		size_t room = buf->cap - buf->used;
		struct chunk c = {.region = buf->mem + buf->used, .base = tf->pos, .final = final};
		size_t want = !whole && room > READ_CHUNK ? READ_CHUNK : room;
		ssize_t got;
		bool at_eof;

		if (*n >= max || room < tf->max_line + 2)
			return TAILFILE_MORE;
		got = read_at(tf, buf->mem + buf->used, want, tf->pos, &at_eof);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			snprintf(errbuf, errlen, "%s: read: %s", tf->path, strerror(e));
			return code_of(e, NULL, 0);
		}
		if (got == 0) {
			tf->end = tf->pos;
			return TAILFILE_EOF;
		}
		c.got = (size_t)got;
		c.at_eof = at_eof;
		*n += extract(tf, &c, out + *n, max - *n, st);
		/* Stopped by max before the end, the bytes left may hold whole
		 * lines: the end is not reached (tailstream_idle would close the
		 * file with them unread). */
		if (at_eof)
			tf->end = c.scan < c.got && *n >= max ? -1 : c.base + (int64_t)c.got;
		keep_last(tf, &c);
		buf->used += c.scan; /* bytes after scan are read again next time */
		/* No whole line in a chunk: read all the room (it holds one). */
		whole = whole || c.scan == 0;
		if (c.scan < c.got && (*n >= max || c.at_eof))
			return *n >= max ? TAILFILE_MORE : TAILFILE_EOF;
		if (c.at_eof)
			return TAILFILE_EOF;
	}
}

/* The line terminators in b[0..len) ("\r\n" one, as a lone "\r" is), *cr
 * carrying a "\r" that ended the bytes before. */
static uint64_t terminators(const char *b, size_t len, bool *cr)
{
	uint64_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (b[i] == '\n' && !*cr)
			n++;
		else if (b[i] == '\r')
			n++;
		*cr = b[i] == '\r';
	}
	return n;
}

int tailfile_skip_rest(struct tailfile *tf, uint64_t *bytes, uint64_t *lines)
{
	char b[16384];
	/* A "\r" before the position ended its line alone: a "\n" after it
	 * ends an empty one, as tailfile_read would read it. */
	bool at_end = false, cr = false, open_line = false;

	*bytes = *lines = 0;
	while (!at_end) {
		ssize_t got = read_at(tf, b, sizeof(b), tf->pos, &at_end);
		struct chunk c = {.region = b, .base = tf->pos};

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return code_of(errno, NULL, 0);
		if (got == 0)
			break;
		*lines += terminators(b, (size_t)got, &cr);
		open_line = b[got - 1] != '\n' && b[got - 1] != '\r';
		c.got = (size_t)got;
		advance(tf, &c, c.got); /* the fingerprint and the bytes before */
		keep_last(tf, &c);      /* the position stay those of the file */
		*bytes += (uint64_t)got;
	}
	*lines += open_line ? 1 : 0;
	tf->discarding = tf->in_long = false;
	return 0;
}

/* tailfile_lines_between for a compressed file: its reader only goes
 * forward, so a second one, decoding from its start (pread: tf's reader
 * is not disturbed). */
static int lines_between_compressed(const struct tailfile *tf, int64_t from, int64_t to,
                                    uint64_t *lines)
{
	char b[16384];
	bool cr = false, at_end = false;
	struct tailz *z = NULL;
	int rc = tailz_open(tf->fd, tailz_detect(tf->fd), sizeof(b), &z);

	while (rc == 0 && from < to) {
		size_t want = to - from < (int64_t)sizeof(b) ? (size_t)(to - from) : sizeof(b),
		       got = 0;

		rc = tailz_read(z, from, b, want, &got, &at_end);
		if (rc == 0 && got == 0)
			rc = TAILZ_ERR_SHORT; /* shorter than what was read from it */
		if (rc == 0) {
			*lines += terminators(b, got, &cr);
			from += (int64_t)got;
		}
	}
	tailz_free(z);
	return rc == 0                 ? TAILFILE_OK
	       : rc == TAILZ_ERR_NOMEM ? TAILFILE_ERR_NOMEM
	       : rc == TAILZ_ERR_SHORT ? TAILFILE_ERR_SHORT
	                               : TAILFILE_ERR;
}

int tailfile_lines_between(const struct tailfile *tf, int64_t from, int64_t to, uint64_t *lines)
{
	char b[16384];
	bool cr = false; /* from starts a line, as tailfile_read read it */

	*lines = 0;
	if (tf->z != NULL)
		return lines_between_compressed(tf, from, to, lines);
	while (from < to) {
		size_t want = to - from < (int64_t)sizeof(b) ? (size_t)(to - from) : sizeof(b);
		ssize_t got = pread(tf->fd, b, want, from);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return code_of(errno, NULL, 0);
		if (got == 0)
			return TAILFILE_ERR_SHORT; /* shorter than what was read from it */
		*lines += terminators(b, (size_t)got, &cr);
		from += got;
	}
	return 0;
}

const char *tailfile_path(const struct tailfile *tf)
{
	return tf->path;
}

const struct tailid *tailfile_id(const struct tailfile *tf)
{
	return &tf->id;
}

int tailfile_fd(const struct tailfile *tf)
{
	return tf->fd;
}

int64_t tailfile_pos(const struct tailfile *tf)
{
	return tf->pos;
}

struct tailmark *tailfile_mark(const struct tailfile *tf)
{
	return tf->mark;
}

int64_t tailfile_v3(const struct tailfile *tf)
{
	size_t k = tf->last_len < TAILPOS_TAIL ? tf->last_len : TAILPOS_TAIL;

	if (tf->pos <= TAILID_FP_MAX)
		return (int64_t)tf->fp;
	return (int64_t)tailpos_tail(tf->last + tf->last_len - k, k);
}

uint64_t tailfile_fp(const struct tailfile *tf)
{
	return tf->fp;
}

int64_t tailfile_end(const struct tailfile *tf)
{
	return tf->end;
}

int64_t tailfile_size(const struct tailfile *tf)
{
	struct stat st;

	if (tf->z != NULL) /* uncompressed: unknown (more) until read to the end */
		return tailz_size(tf->z) >= 0 ? tailz_size(tf->z) : INT64_MAX;
	return fstat(tf->fd, &st) == 0 ? (int64_t)st.st_size : -1;
}

int64_t tailfile_compressed_size(const struct tailfile *tf, uint64_t *fp, int64_t *fplen)
{
	int64_t size = tf->z != NULL ? tailz_size_hint(tf->z) : -1;
	size_t hlen = 0;
	const void *head = size >= 0 ? tailz_head(tf->z, &hlen) : NULL;

	*fp = 0;
	*fplen = 0;
	if (head != NULL && (int64_t)hlen >= (size < TAILID_FP_MAX ? size : TAILID_FP_MAX)) {
		*fplen = size < TAILID_FP_MAX ? size : TAILID_FP_MAX;
		*fp = tailid_fp_update(TAILID_FP_EMPTY, head, (size_t)*fplen);
	}
	return size;
}

bool tailfile_compressed(const struct tailfile *tf)
{
	return tf->z != NULL;
}

const char *tailfile_broken(const struct tailfile *tf)
{
	return tf->z != NULL && tailz_error(tf->z) != 0 ? tailz_strerror(tailz_error(tf->z)) : NULL;
}

void tailfile_close(struct tailfile *tf)
{
	if (tf == NULL)
		return;
	tailz_free(tf->z);
	if (tf->fd >= 0)
		close(tf->fd);
	src_ref_drop(&tf->mark->ref);
	free(tf->path);
	free(tf);
}
