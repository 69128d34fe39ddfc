/* tailheld: the held set on disk (tailheld.h has the format and what it is
 * for). Why it is safe: the set only ever adds to what is counted lost at a
 * start, never moves an offset or skips a file; a file is counted only when
 * it is found nowhere, and for no more bytes than it had when last seen past
 * the stored position, so a stale or missing set counts less, never more. */
#include "sources/file/tailheld.h"

#include "util/atomicfile.h"
#include "util/buf.h"
#include "util/crc32c.h"
#include "util/num.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "skiff-held 1\n"
#define MIN_INTERVAL_MS 10
/* A line is at most two escaped paths (3 bytes a byte) and seven integers. */
#define FILE_MAX(cap) (64 + (cap) * (2 * 3 * 4096 + 160))

struct ent {
	char *stream, *name;
	struct tailheld_file f; /* f.name is name */
	bool loaded;            /* from the last run, not taken yet */
	bool stale;             /* not put again yet in this snapshot */
	bool kept;              /* no longer held; its lines may not be acknowledged yet */
};

struct tailheld {
	char *path;
	int64_t interval, last; /* last: ms of the last snapshot, INT64_MIN: none */
	size_t cap;
	struct ent *e;
	size_t n, nalloc;
	uint32_t written; /* crc of the content on disk, when on_disk */
	bool on_disk;     /* a file is there (maybe not one we wrote) */
	bool whole;       /* the snapshot under way has every file put */
};

const char *tailheld_strerror(int err)
{
	switch (err) {
	case 0:
		return "no error";
	case TAILHELD_ERR_IO:
		return "input/output error";
	case TAILHELD_ERR_CORRUPT:
		return "not a whole held set";
	case TAILHELD_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}

int tailheld_new(const char *path, int64_t interval_ms, size_t cap, struct tailheld **out)
{
	struct tailheld *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL || (h->path = strdup(path)) == NULL) {
		free(h);
		return TAILHELD_ERR_NOMEM;
	}
	h->interval = interval_ms < MIN_INTERVAL_MS ? MIN_INTERVAL_MS : interval_ms;
	h->last = INT64_MIN;
	h->cap = cap;
	*out = h;
	return 0;
}

static void ent_free(struct ent *e)
{
	free(e->stream);
	free(e->name);
}

void tailheld_free(struct tailheld *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->n; i++)
		ent_free(&h->e[i]);
	free(h->e);
	free(h->path);
	free(h);
}

const char *tailheld_path(const struct tailheld *h)
{
	return h->path;
}

/* Appends a copy of f for stream. Returns 0 or TAILHELD_ERR_NOMEM. */
static int add(struct tailheld *h, const char *stream, const struct tailheld_file *f, bool loaded)
{
	struct ent *e;

	if (h->n == h->nalloc) {
		size_t cap = h->nalloc ? h->nalloc * 2 : 8;
		struct ent *grown = realloc(h->e, cap * sizeof(*grown));

		if (grown == NULL)
			return TAILHELD_ERR_NOMEM;
		h->e = grown;
		h->nalloc = cap;
	}
	e = &h->e[h->n];
	*e = (struct ent){.f = *f, .loaded = loaded};
	e->stream = strdup(stream);
	e->name = strdup(f->name != NULL ? f->name : "");
	if (e->stream == NULL || e->name == NULL) {
		ent_free(e);
		return TAILHELD_ERR_NOMEM;
	}
	e->f.name = e->name;
	h->n++;
	return 0;
}

/* ---- the text ------------------------------------------------------------ */

static bool plain(unsigned char c)
{
	return c > 0x20 && c != 0x7f && c != '%';
}

static void put_escaped(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (plain(*p)) {
			buf_addc(b, (char)*p);
		} else {
			buf_addc(b, '%');
			buf_addc(b, hex[*p >> 4]);
			buf_addc(b, hex[*p & 15]);
		}
	}
}

/* Unescapes s in place. Returns 0, or -1 when an escape is malformed or
 * names a NUL. */
static int unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r != '\0'; r++) {
		int hi, lo;

		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		if ((hi = num_hex_digit(r[1])) < 0 || (lo = num_hex_digit(r[2])) < 0 ||
		    hi * 16 + lo == 0)
			return -1;
		*w++ = (char)(hi * 16 + lo);
		r += 2;
	}
	*w = '\0';
	return 0;
}

static int render(const struct tailheld *h, struct buf *b)
{
	buf_addz(b, MAGIC);
	for (size_t i = 0; i < h->n; i++) {
		const struct tailheld_file *f = &h->e[i].f;

		buf_printf(b, "F %lld %lld %lld %lld %lld %lld ", (long long)f->dev,
		           (long long)f->ino, (long long)f->born, (long long)f->size,
		           (long long)(int64_t)f->fp, (long long)f->fplen);
		put_escaped(b, h->e[i].stream);
		buf_addc(b, ' ');
		put_escaped(b, h->e[i].name);
		buf_addc(b, '\n');
	}
	if (buf_err(b) == 0)
		buf_printf(b, "end %08x\n", (unsigned)crc32c(0, buf_ptr(b), buf_len(b)));
	return buf_err(b) != 0 ? TAILHELD_ERR_NOMEM : 0;
}

/* Splits line at spaces into at most max fields. Returns how many. */
static size_t fields(char *line, char **out, size_t max)
{
	size_t n = 0;
	char *p = line;

	while (n < max && *p != '\0') {
		out[n++] = p;
		while (*p != '\0' && *p != ' ')
			p++;
		if (*p == ' ')
			*p++ = '\0';
	}
	return *p == '\0' ? n : max + 1;
}

/* Parses one "F ..." line into h (loaded). */
static int parse_line(struct tailheld *h, char *line)
{
	char *v[9];
	int64_t n[6];
	struct tailheld_file f;

	if (fields(line, v, 9) != 9 || strcmp(v[0], "F") != 0)
		return TAILHELD_ERR_CORRUPT;
	for (size_t i = 0; i < 6; i++)
		if (num_parse_i64(v[1 + i], INT64_MIN, INT64_MAX, &n[i]) != 0)
			return TAILHELD_ERR_CORRUPT;
	if (unescape(v[7]) != 0 || unescape(v[8]) != 0 || v[7][0] == '\0')
		return TAILHELD_ERR_CORRUPT;
	f = (struct tailheld_file){.dev = n[0],
	                           .ino = n[1],
	                           .born = n[2],
	                           .size = n[3],
	                           .fp = (uint64_t)n[4],
	                           .fplen = n[5],
	                           .name = v[8]};
	return add(h, v[7], &f, true);
}

/* Parses the text data[0..len) into h. */
static int parse(struct tailheld *h, char *data, size_t len, char *errbuf, size_t errlen)
{
	char *end, *p, *nl;
	unsigned long crc;
	size_t lineno = 1;
	int rc;

	/* The last line: "end XXXXXXXX\n", the crc of everything before it. */
	if (len < sizeof(MAGIC) - 1 + 13 || data[len - 1] != '\n' ||
	    strncmp(data, MAGIC, sizeof(MAGIC) - 1) != 0) {
		snprintf(errbuf, errlen, "%s: no header or cut short", h->path);
		return TAILHELD_ERR_CORRUPT;
	}
	end = data + len - 13;
	if (strncmp(end, "end ", 4) != 0 || (end != data && end[-1] != '\n')) {
		snprintf(errbuf, errlen, "%s: cut short (no end line)", h->path);
		return TAILHELD_ERR_CORRUPT;
	}
	end[12] = '\0';
	crc = strtoul(end + 4, &p, 16);
	if (p != end + 12 || crc != crc32c(0, data, (size_t)(end - data))) {
		snprintf(errbuf, errlen, "%s: its checksum does not match its content", h->path);
		return TAILHELD_ERR_CORRUPT;
	}
	*end = '\0';
	for (p = data + sizeof(MAGIC) - 1; *p != '\0'; p = nl + 1) {
		lineno++;
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		*nl = '\0';
		if ((rc = parse_line(h, p)) != 0) {
			snprintf(errbuf, errlen, "%s:%zu: %s", h->path, lineno,
			         rc == TAILHELD_ERR_NOMEM ? "out of memory"
			                                  : "not a held file's line");
			return rc;
		}
	}
	return 0;
}

int tailheld_load(struct tailheld *h, char *errbuf, size_t errlen)
{
	char *data = NULL;
	size_t len = 0;
	int rc = atomicfile_read(h->path, FILE_MAX(h->cap + 64), &data, &len, errbuf, errlen);

	if (rc == ATOMICFILE_ERR_NOENT)
		return 0;
	h->on_disk = true;
	if (rc != 0)
		return rc == ATOMICFILE_ERR_NOMEM    ? TAILHELD_ERR_NOMEM
		       : rc == ATOMICFILE_ERR_TOOBIG ? TAILHELD_ERR_CORRUPT
		                                     : TAILHELD_ERR_IO;
	rc = parse(h, data, len, errbuf, errlen);
	free(data);
	if (rc != 0) {
		for (size_t i = 0; i < h->n; i++)
			ent_free(&h->e[i]);
		h->n = 0;
	}
	return rc;
}

/* ---- starting ------------------------------------------------------------ */

int tailheld_take(struct tailheld *h, const char *stream, struct tailheld_file **out, size_t *n)
{
	size_t k = 0, w = 0;
	struct tailheld_file *f;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < h->n; i++)
		k += h->e[i].loaded && strcmp(h->e[i].stream, stream) == 0;
	if (k == 0)
		return 0;
	if ((f = calloc(k, sizeof(*f))) == NULL)
		return TAILHELD_ERR_NOMEM;
	k = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (h->e[i].loaded && strcmp(h->e[i].stream, stream) == 0) {
			f[k] = h->e[i].f; /* takes the name */
			k++;
			free(h->e[i].stream);
		} else {
			h->e[w++] = h->e[i];
		}
	}
	h->n = w;
	*out = f;
	*n = k;
	return 0;
}

void tailheld_files_free(struct tailheld_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)f[i].name);
	free(f);
}

const char *tailheld_untaken(const struct tailheld *h,
                             bool (*has_stream)(void *arg, const char *stream), void *arg)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->e[i].loaded && !has_stream(arg, h->e[i].stream))
			return h->e[i].stream;
	return NULL;
}

int64_t tailheld_size_of(const struct tailheld *h, const char *stream, int64_t dev, int64_t ino,
                         int64_t born)
{
	for (size_t i = 0; i < h->n; i++) {
		const struct tailheld_file *f = &h->e[i].f;

		if (h->e[i].loaded && f->dev == dev && f->ino == ino &&
		    (born == 0 || f->born == born) && strcmp(h->e[i].stream, stream) == 0)
			return f->size;
	}
	return -1;
}

/* ---- running ------------------------------------------------------------- */

static bool wanted(const struct tailheld *h, bool holding)
{
	return holding || h->n > 0 || h->on_disk;
}

bool tailheld_due(const struct tailheld *h, int64_t now, bool holding)
{
	return wanted(h, holding) && (h->last == INT64_MIN || now - h->last >= h->interval);
}

int64_t tailheld_deadline(const struct tailheld *h, int64_t now, bool holding)
{
	int64_t at;

	if (!wanted(h, holding))
		return -1;
	at = h->last == INT64_MIN ? now : h->last + h->interval;
	return at > now ? at - now : 0;
}

void tailheld_begin(struct tailheld *h, int64_t now)
{
	for (size_t i = 0; i < h->n; i++)
		h->e[i].stale = !h->e[i].loaded;
	h->last = now;
	h->whole = true;
}

static bool same(const struct ent *e, const char *stream, int64_t dev, int64_t ino, int64_t born)
{
	return !e->loaded && e->f.dev == dev && e->f.ino == ino &&
	       (born == 0 || e->f.born == born) && strcmp(e->stream, stream) == 0;
}

int tailheld_put(struct tailheld *h, const char *stream, const struct tailheld_file *f)
{
	char *name;
	int rc;

	for (size_t i = 0; i < h->n; i++) {
		struct ent *e = &h->e[i];

		if (!same(e, stream, f->dev, f->ino, f->born))
			continue;
		/* Its place in the order stays: held again, or still held. */
		if (strcmp(e->name, f->name) != 0) {
			if ((name = strdup(f->name)) == NULL) {
				h->whole = false;
				return TAILHELD_ERR_NOMEM;
			}
			free(e->name);
			e->name = name;
		}
		e->f = *f;
		e->f.name = e->name;
		e->stale = e->kept = false;
		return 0;
	}
	if (h->n >= h->cap)
		return 0; /* bounded: the oldest are in, a lower bound */
	if ((rc = add(h, stream, f, false)) != 0)
		h->whole = false;
	return rc;
}

void tailheld_forget(struct tailheld *h, const char *stream, int64_t dev, int64_t ino, int64_t born)
{
	size_t w = 0;

	for (size_t i = 0; i < h->n; i++) {
		if (same(&h->e[i], stream, dev, ino, born))
			ent_free(&h->e[i]);
		else
			h->e[w++] = h->e[i];
	}
	h->n = w;
}

/* Ends what the snapshot did not put again: dropped when closing or passed
 * (the committed offset is past it), else kept (kept beyond cap: the
 * oldest dropped). */
static void sweep(struct tailheld *h, bool closing,
                  bool (*passed)(void *arg, const char *stream, const struct tailheld_file *f),
                  void *arg)
{
	size_t w = 0, over = h->n > h->cap ? h->n - h->cap : 0;

	for (size_t i = 0; i < h->n; i++) {
		struct ent *e = &h->e[i];

		if (e->stale &&
		    (closing || over > 0 || passed == NULL || passed(arg, e->stream, &e->f))) {
			over -= over > 0;
			ent_free(e);
			continue;
		}
		if (e->stale)
			e->kept = true;
		e->stale = false;
		h->e[w++] = *e;
	}
	h->n = w;
}

/* Removes the file, and makes that durable (its directory fsynced). */
static int remove_file(struct tailheld *h, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(h->path, '/');
	char dir[4096];
	int fd, rc = 0;

	if (unlink(h->path) != 0 && errno != ENOENT) {
		snprintf(errbuf, errlen, "unlink %s: %s", h->path, strerror(errno));
		return TAILHELD_ERR_IO;
	}
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash == h->path ? 1 : slash - h->path),
		         h->path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		snprintf(errbuf, errlen, "fsync %s: %s", dir, strerror(errno));
		rc = TAILHELD_ERR_IO;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int tailheld_end(struct tailheld *h, bool closing,
                 bool (*passed)(void *arg, const char *stream, const struct tailheld_file *f),
                 void *arg, char *errbuf, size_t errlen)
{
	struct buf b;
	uint32_t crc;
	int rc;

	if (!h->whole) {
		for (size_t i = 0; i < h->n; i++)
			h->e[i].stale = false;
		return 0; /* out of memory mid-way: keep what is on disk */
	}
	sweep(h, closing, passed, arg);
	if (h->n == 0) {
		if (!h->on_disk)
			return 0;
		if ((rc = remove_file(h, errbuf, errlen)) == 0)
			h->on_disk = false;
		return rc;
	}
	buf_init(&b, FILE_MAX(h->n));
	if ((rc = render(h, &b)) != 0) {
		buf_free(&b);
		snprintf(errbuf, errlen, "%s: out of memory", h->path);
		return rc;
	}
	crc = crc32c(0, buf_ptr(&b), buf_len(&b));
	if (!h->on_disk || crc != h->written) {
		/* A failed replacement leaves the last whole set in place. */
		if (atomicfile_write(h->path, buf_ptr(&b), buf_len(&b), errbuf, errlen) != 0) {
			rc = TAILHELD_ERR_IO;
		} else {
			h->on_disk = true;
			h->written = crc;
		}
	}
	buf_free(&b);
	return rc;
}
