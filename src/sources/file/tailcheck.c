/* tailcheck: a KIP-875 offset for the file source, checked (tailcheck.h). */
#include "sources/file/tailcheck.h"

#include "config/config.h"
#include "sources/file/source_file.h"
#include "util/jsonint.h"
#include "core/source.h"
#include "sources/file/tailid.h"
#include "sources/file/tailpos.h"
#include "sources/file/tailscan.h"
#include "sources/file/tailz.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether cfg's connector follows path, or would once it exists. */
static bool follows(const struct file_conf *c, const char *path)
{
	const char *file = c->file, *base = strrchr(path, '/');
	size_t n = c->files.n;
	bool match = false;

	if (file != NULL && file[0] != '\0')
		return strcmp(file, path) == 0;
	for (size_t i = 0; i < n && !match; i++) {
		const char *p = c->files.items[i];

		match = strcmp(p, path) == 0 || fnmatch(p, path, FNM_PATHNAME) == 0;
	}
	base = base != NULL ? base + 1 : path;
	n = c->excludes.n;
	for (size_t i = 0; i < n && match; i++) {
		const char *x = c->excludes.items[i];

		match = fnmatch(x, strchr(x, '/') ? path : base,
		                strchr(x, '/') ? FNM_PATHNAME : 0) != 0;
	}
	return match;
}

static int check_partition(const struct config_section *cfg, const char *partition, char *errbuf,
                           size_t errlen)
{
	cJSON *p = cJSON_Parse(partition);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "filename");
	struct file_conf c;
	int rc = 0;

	source_file_conf(cfg, &c);
	if (!cJSON_IsString(f) || cJSON_GetArraySize(p) != 1) {
		snprintf(errbuf, errlen,
		         "Partition objects should contain the key 'filename' (a string) and "
		         "nothing else");
		rc = SOURCE_ERR_CONFIG;
	} else if (!follows(&c, f->valuestring)) {
		snprintf(errbuf, errlen,
		         "the partition's 'filename' %.300s is not a file this connector reads "
		         "(its file or files setting)",
		         f->valuestring);
		rc = SOURCE_ERR_FOREIGN;
	}
	cJSON_Delete(p);
	return rc;
}

int tailcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                     char *errbuf, size_t errlen)
{
	static const char *const ids[] = {"dev",  "ino",   "fp",       "fplen", "tail",
	                                  "born", "after", "finished", "seen"};
	cJSON *o = cJSON_Parse(offset);
	const cJSON *m;
	int64_t v;
	int rc = check_partition(cfg, partition, errbuf, errlen);

	if (rc == 0 && jsonint_get(offset, "position", &v) != 0) {
		/* Connect's words; a number that Java would read as a Long only
		 * as written otherwise gets the reason too. */
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset is expected to be a Long "
		         "value%s",
		         cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "position"))
		             ? " (an integer, written without a fraction or exponent)"
		             : "");
		rc = SOURCE_ERR_CONFIG;
	} else if (rc == 0 && v < 0) {
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset should be a non-negative "
		         "value");
		rc = SOURCE_ERR_CONFIG;
	}
	cJSON_ArrayForEach(m, o)
	{
		bool known = strcmp(m->string, "position") == 0;

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]) && !known && rc == 0; i++) {
			if (strcmp(m->string, ids[i]) != 0)
				continue;
			known = true;
			if (jsonint_get(offset, ids[i], &v) != 0) {
				snprintf(errbuf, errlen,
				         "The value for the '%s' key in the offset is expected to "
				         "be a Long value",
				         ids[i]);
				rc = SOURCE_ERR_CONFIG;
			}
		}
		if (!known && rc == 0) {
			snprintf(errbuf, errlen,
			         "unknown key '%.100s' in the offset (the file source's offset is "
			         "'position' and optionally dev, ino, fp, fplen, tail, born, "
			         "after, finished, seen)",
			         m->string);
			rc = SOURCE_ERR_CONFIG;
		}
	}
	cJSON_Delete(o);
	return rc;
}

/* ---- reach: where a position set lies ------------------------------------ */

/* How far from a position its line's start and the next are looked for (a
 * REST request waits on it). */
#define LINE_LOOK (64 * 1024)

/* How many uncompressed bytes of a compressed file a REST request decodes
 * at most (`bounded`: the main loop waits on it; `skiff offsets set`, with
 * no bound, took 0.14 s for 68.8 MB of log lines, gzip -6, on the x86
 * build machine: a slow ARM board several times that). */
#define Z_BOUNDED (64 * 1024 * 1024)

/* The file a position is set in: its path (malloc'd) and what it is. */
struct target {
	char *path;
	struct tailid id;
	const struct tailpos *named; /* the identity that named it, NULL: none */
	bool moved;                  /* not the file at the path: rotated since */
};

/* The bytes of a file around a position pos, in uncompressed bytes: those
 * before it (from `from`, at most LINE_LOOK) and after it (at most
 * LINE_LOOK + 1: whether a "\r" ends a line, and whether the data ends
 * within the look, are known at its last byte), whether the file is plain
 * or compressed (decoded up to there, tailz: memory is its window and
 * these two buffers, whatever the file's size). */
struct around {
	int64_t pos, from;
	int64_t size; /* the file's size; -1: not known (a compressed file
	               * holding more than pos + nafter bytes) */
	bool past;    /* pos is past the end (size holds the end) */
	bool z;       /* compressed */
	bool far;     /* compressed, and pos too far in to decode within a bound */
	uint64_t fp;  /* of its first min(pos, TAILID_FP_MAX) bytes */
	size_t nbefore, nafter;
	unsigned char before[LINE_LOOK], after[LINE_LOOK + 1];
};

/* Whether id is the file p names: dev and inode, and the birth where both
 * know it (tailplan's rule: ext4 gives a deleted file's inode away). */
static bool names(const struct tailpos *p, const struct tailid *id)
{
	return p->dev == id->dev && p->ino == id->ino &&
	       (!p->has_born || !id->has_btime || id->born == p->born);
}

/* The rotated.dirs of cfg as tailscan takes them (malloc'd array of
 * pointers into cfg), or NULL (none, or out of memory: *n 0). */
static const char **rotated_dirs(const struct config_section *cfg, size_t *n)
{
	struct file_conf c;
	size_t len;

	source_file_conf(cfg, &c);
	len = c.rotated_dirs.n;
	const char **d = len > 0 ? calloc(len, sizeof(*d)) : NULL;

	*n = d != NULL ? len : 0;
	for (size_t i = 0; i < *n; i++)
		d[i] = c.rotated_dirs.items[i];
	return d;
}

/* Finds the file identity p names (rotated since: where the rotation put
 * it, compressed or not) into *t. Returns 0 (found, or gone: t->path NULL),
 * or SOURCE_ERR_CONFIG with errbuf when it was compressed since into a file
 * of which not one byte decodes (where skiff would resume, a loss). */
static int find_named(const struct config_section *cfg, const char *path, const struct tailpos *p,
                      struct target *t, char *errbuf, size_t errlen)
{
	size_t nd;
	const char **dirs = rotated_dirs(cfg, &nd);
	char *f = tailscan_find_moved(path, dirs, nd, p->dev, p->ino);
	int64_t born = p->has_born ? p->born : INT64_MIN;
	int rc = 0;

	if (f != NULL && (tailid_of_path(f, &t->id) != 0 || !names(p, &t->id))) {
		free(f);
		f = NULL;
	}
	if (f == NULL && p->has_fp)
		f = tailscan_find_compressed(path, dirs, nd, p->fp, p->fplen, born, &t->id);
	if (f == NULL && !p->finished &&
	    (f = tailscan_find_undecodable(path, dirs, nd, born, &t->id)) != NULL) {
		snprintf(
		    errbuf, errlen,
		    "%s: the file of the stored offset (inode %lld) was rotated and compressed "
		    "since, and %s, where it would be, cannot be decoded (empty, or damaged "
		    "from its first bytes): a position in it cannot be checked",
		    path, (long long)p->ino, f);
		rc = SOURCE_ERR_CONFIG;
		free(f);
		f = NULL;
	}
	t->path = f;
	t->named = f != NULL ? p : NULL;
	t->moved = f != NULL;
	free(dirs);
	return rc;
}

/* The file an offset set for path means: the one its identity names (the
 * offset's own dev and ino, else the stored offset's), where rotation put
 * it; the path's file when it names none, or one gone. *note says which,
 * when not the path's. */
static int find_target(const struct config_section *cfg, const char *path, const struct tailpos *p,
                       const struct tailpos *s, struct target *t, char *errbuf, size_t errlen,
                       char *note, size_t nlen)
{
	const struct tailpos *who = p->has_id ? p : s->has_id ? s : NULL;
	struct tailid at;
	bool here = tailid_of_path(path, &at) == 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if (who != NULL && !(here && names(who, &at))) {
		if ((rc = find_named(cfg, path, who, t, errbuf, errlen)) != 0)
			return rc;
		if (t->path != NULL) {
			snprintf(note, nlen,
			         "%s: the position is in %s, the file the stored offset names "
			         "(rotated since)",
			         path, t->path);
		} else if (who == p && p->pos > 0 && !p->finished) {
			/* Named by the offset itself (a GET body with a new
			 * position): taken in another file, the position would
			 * skip that file's first bytes, a rewind sending less. */
			snprintf(
			    errbuf, errlen,
			    "%s: the file the offset names (dev %lld, ino %lld) is neither the "
			    "file at the path%s nor where rotation puts it (gone since, or "
			    "another file's identity): the position %lld cannot be taken in "
			    "it; send the position alone "
			    "({\"position\":N}) to set it in the file now at the path, or that "
			    "file's \"dev\" and \"ino\"",
			    path, (long long)p->dev, (long long)p->ino,
			    here ? "" : " (nothing is there)", (long long)p->pos);
			return SOURCE_ERR_CONFIG;
		} else if (!who->finished)
			snprintf(note, nlen,
			         "%s: the file the offset names (inode %lld) is gone: the position "
			         "is in the file now at the path",
			         path, (long long)who->ino);
	}
	if (t->path == NULL) {
		t->path = strdup(path);
		t->id = at;
		t->named = who != NULL && here && names(who, &at) ? who : NULL;
		if (t->path == NULL) {
			snprintf(errbuf, errlen, "out of memory");
			return SOURCE_ERR_NOMEM;
		}
	}
	return 0;
}

/* pread of up to len bytes at `at`, fewer only at the end (or an error:
 * -1). */
static ssize_t read_at(int fd, void *buf, size_t len, int64_t at)
{
	size_t done = 0;
	ssize_t got = 0;

	while (done < len) {
		got = pread(fd, (char *)buf + done, len - done, (off_t)(at + (int64_t)done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		done += (size_t)got;
	}
	return got < 0 ? -1 : (ssize_t)done;
}

/* a's bytes from the plain file fd of size `size`. Returns 0 or -1 (errno). */
static int around_plain(int fd, int64_t size, struct around *a)
{
	ssize_t got;

	a->size = size;
	a->past = a->pos > size;
	if (a->past)
		return 0;
	got = read_at(fd, a->before, (size_t)(a->pos - a->from), a->from);
	if (got != (ssize_t)(a->pos - a->from))
		return -1;
	a->nbefore = (size_t)got;
	got = read_at(fd, a->after, sizeof(a->after), a->pos);
	if (got < 0)
		return -1;
	a->nafter = (size_t)got;
	return tailid_fp_file(fd, a->pos < TAILID_FP_MAX ? a->pos : TAILID_FP_MAX, &a->fp);
}

/* Up to len uncompressed bytes of z from off into dst (*got), fewer at the
 * end of the data (a stream that fails its check ends it: tailz_error).
 * Returns 0 or TAILZ_ERR*. */
static int z_read(struct tailz *z, int64_t off, unsigned char *dst, size_t len, size_t *got)
{
	bool end = false;
	int rc = 0;

	*got = 0;
	while (*got < len && !end && rc == 0) {
		size_t n = 0;

		rc = tailz_read(z, off + (int64_t)*got, dst + *got, len - *got, &n, &end);
		*got += n;
		if (n == 0)
			end = true;
	}
	return rc;
}

/* a's bytes from the compressed file fd (format f), decoded from its start
 * up to LINE_LOOK + 1 bytes past a->pos; bounded: a->far instead when pos
 * is more than Z_BOUNDED bytes in and the data goes that far. Returns 0,
 * or TAILZ_ERR* (the data before the position damaged: tailz_error's, or
 * the read's). */
static int around_z(int fd, enum tailz_format f, bool bounded, struct around *a)
{
	struct tailz *z = NULL;
	const void *head;
	unsigned char probe;
	size_t got = 0, hlen, want = (size_t)(a->pos - a->from);
	int rc = tailz_open(fd, f, LINE_LOOK, &z);

	if (rc != 0)
		goto out;
	if (bounded && a->pos > Z_BOUNDED) {
		if ((rc = z_read(z, Z_BOUNDED - 1, &probe, 1, &got)) != 0)
			goto out;
		a->far = got == 1;
		if (got == 1 || (rc = tailz_error(z)) != 0)
			goto out;
		a->past = true; /* ends before the bound: past the end */
		a->size = tailz_size(z);
		goto out;
	}
	if ((rc = z_read(z, a->from, a->before, want, &got)) != 0)
		goto out;
	a->nbefore = got;
	if (got < want) {
		rc = tailz_error(z); /* damaged before the position, or past the end */
		a->past = rc == 0;
		a->size = a->from + (int64_t)got;
		goto out;
	}
	/* Damage after the position only ends what is looked at. */
	(void)z_read(z, a->pos, a->after, sizeof(a->after), &a->nafter);
	a->size = a->nafter < sizeof(a->after) ? a->pos + (int64_t)a->nafter : -1;
	head = tailz_head(z, &hlen);
	hlen = hlen < (size_t)TAILID_FP_MAX ? hlen : (size_t)TAILID_FP_MAX;
	if ((int64_t)hlen < (a->pos < TAILID_FP_MAX ? a->pos : TAILID_FP_MAX)) {
		rc = TAILZ_ERR_SHORT;
		goto out;
	}
	a->fp = tailid_fp_update(TAILID_FP_EMPTY, head,
	                         (size_t)(a->pos < TAILID_FP_MAX ? a->pos : TAILID_FP_MAX));
out:
	tailz_free(z);
	return rc;
}

/* Reads the bytes around pos in t's open file fd into a new *out (free).
 * Returns 0, or SOURCE_ERR_CONFIG / SOURCE_ERR_NOMEM with errbuf naming the
 * file when they cannot be read. */
static int around_read(const struct target *t, int fd, int64_t pos, bool bounded,
                       struct around **out, char *errbuf, size_t errlen)
{
	struct around *a = calloc(1, sizeof(*a));
	enum tailz_format f = tailz_named(t->path) ? tailz_detect(fd) : TAILZ_NONE;
	int rc;

	*out = NULL;
	if (a == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SOURCE_ERR_NOMEM;
	}
	a->pos = pos;
	a->from = pos > LINE_LOOK ? pos - LINE_LOOK : 0;
	a->z = f != TAILZ_NONE;
	if (!a->z) {
		if (around_plain(fd, t->id.size, a) != 0) {
			snprintf(errbuf, errlen,
			         "%s: the bytes around the position %lld cannot be read: %s",
			         t->path, (long long)pos, strerror(errno));
			free(a);
			return SOURCE_ERR_CONFIG;
		}
	} else if ((rc = around_z(fd, f, bounded, a)) != 0) {
		snprintf(
		    errbuf, errlen,
		    "%s: its uncompressed bytes up to the position %lld cannot be read (%s): a "
		    "position in it cannot be checked",
		    t->path, (long long)pos, tailz_strerror(rc));
		free(a);
		return rc == TAILZ_ERR_NOMEM ? SOURCE_ERR_NOMEM : SOURCE_ERR_CONFIG;
	}
	*out = a;
	return 0;
}

/* True when a->pos (> 0) starts a line: the byte before ends one ("\n", or
 * a "\r" not followed by "\n", as tailfile reads lines). A "\r" that ends a
 * file still written (not final) ends no line yet: tailfile waits for the
 * next byte, and a "\n" would make "\r\n" one line end. */
static bool line_start(const struct around *a, bool final)
{
	unsigned char b = a->before[a->nbefore - 1];

	if (b == '\r' && a->nafter == 0)
		return final;
	return b == '\n' || (b == '\r' && a->after[0] != '\n');
}

/* Where the line holding a->pos starts and where the next one does, each
 * looked for within LINE_LOOK bytes (-1: farther; *next -2: the data ends
 * first, the line end is not written yet). A "\r" right before a->pos with
 * "\n" at it, or ending a file still written, is (or may be) half of one
 * line end, not the end of a line. */
static void line_bounds(const struct around *a, int64_t *start, int64_t *next)
{
	size_t i = a->nbefore;

	/* Between "\r" and "\n", or after a "\r" that ends the data: the line
	 * that "\r" ends holds the position. */
	if (i > 0 && a->before[i - 1] == '\r' && (a->nafter == 0 || a->after[0] == '\n'))
		i--;
	*start = a->from == 0 ? 0 : -1;
	while (i-- > 0)
		if (a->before[i] == '\n' || a->before[i] == '\r') {
			*start = a->from + (int64_t)i + 1;
			break;
		}
	*next = a->nafter < sizeof(a->after) ? -2 : -1;
	for (i = 0; i < a->nafter; i++)
		if (a->after[i] == '\n' || a->after[i] == '\r') {
			*next =
			    a->pos + (int64_t)i + 1 +
			    (a->after[i] == '\r' && i + 1 < a->nafter && a->after[i + 1] == '\n');
			break;
		}
}

/* "at byte N", or what line_bounds' -1 and -2 mean, into buf. */
static const char *at_byte(char *buf, size_t len, int64_t at, const char *farther)
{
	if (at == -2)
		snprintf(buf, len, "is not written yet");
	else if (at < 0)
		snprintf(buf, len, "%s more than %d bytes %s it",
		         farther[0] == 'b' ? "starts" : "is", LINE_LOOK, farther);
	else
		snprintf(buf, len, "%s byte %lld", farther[0] == 'b' ? "starts at" : "at",
		         (long long)at);
	return buf;
}

/* Refuses a position past the end of t's file, too far in a compressed one
 * to decode (bounded), or inside a line. */
static int check_place(const struct target *t, const struct around *a, char *errbuf, size_t errlen)
{
	int64_t start, next;
	char sw[80], nw[80];

	if (a->far) {
		snprintf(errbuf, errlen,
		         "%s: the position %lld is more than %d MiB into its uncompressed bytes, "
		         "more than a REST request decodes to check it; set it with `skiff offsets "
		         "set` while skiff is stopped",
		         t->path, (long long)a->pos, Z_BOUNDED >> 20);
		return SOURCE_ERR_CONFIG;
	}
	if (a->past) {
		snprintf(
		    errbuf, errlen, "%s holds %lld %sbytes, fewer than the position %lld: %s",
		    t->path, (long long)a->size, a->z ? "uncompressed " : "", (long long)a->pos,
		    a->z ? "no place skiff could resume at"
		         : "skiff would take it as truncated and read it again from its start");
		return SOURCE_ERR_CONFIG;
	}
	/* A file rotated since (a compressed one always) is taken as finished. */
	if (a->pos == 0 || line_start(a, t->moved || a->z))
		return 0;
	line_bounds(a, &start, &next);
	if (a->nafter == 0 && a->before[a->nbefore - 1] == '\r') {
		snprintf(errbuf, errlen,
		         "%s: the position %lld follows the \"\\r\" that ends the file (its line "
		         "%s): the next byte is not written yet, and a \"\\n\" (\"\\r\\n\", one "
		         "line end) would be sent as an empty record; set the position once it is "
		         "written",
		         t->path, (long long)a->pos, at_byte(sw, sizeof(sw), start, "before"));
		return SOURCE_ERR_CONFIG;
	}
	snprintf(errbuf, errlen,
	         "%s: the position %lld is inside a line (that line %s, the next %s%s): skiff "
	         "would send the rest of the line as a record; set a position where a line "
	         "starts",
	         t->path, (long long)a->pos, at_byte(sw, sizeof(sw), start, "before"),
	         at_byte(nw, sizeof(nw), next, "after"), a->z ? "; uncompressed bytes" : "");
	return SOURCE_ERR_CONFIG;
}

/* The offset skiff itself would store at a->pos in t's file, into buf: its
 * identity, and for a compressed file found by its first bytes (the offset
 * named its uncompressed original), the original's birth as "after". */
static int refreshed(const struct target *t, const struct around *a, char *buf, size_t len)
{
	bool itself = t->named != NULL && names(t->named, &t->id);
	struct tailmark m = {.born = itself && t->named->has_born ? t->named->born : t->id.born,
	                     .done = -1};
	struct src_offset off = {.v = {a->pos, t->id.dev, t->id.ino, (int64_t)a->fp},
	                         .ref = &m.ref};

	if (a->z && itself && t->named->has_after)
		m.after = t->named->after;
	else if (a->z && !itself && t->named != NULL && t->named->has_born)
		m.after = t->named->born;
	else if (a->z)
		m.after = TAILPOS_AFTER_UNKNOWN;
	m.fp = a->fp;
	m.fp_full = a->pos > TAILID_FP_MAX;
	if (a->pos > TAILID_FP_MAX)
		off.v[3] =
		    (int64_t)tailpos_tail(a->before + a->nbefore - TAILPOS_TAIL, TAILPOS_TAIL);
	return tailpos_format(&off, buf, len);
}

/* True when a and b say the same (the offset sent back as it is stored). */
static bool same_place(const struct tailpos *a, const struct tailpos *b)
{
	return a->pos == b->pos && a->has_id == b->has_id && a->dev == b->dev && a->ino == b->ino &&
	       a->has_fp == b->has_fp && a->fp == b->fp && a->fplen == b->fplen &&
	       a->has_tail == b->has_tail && a->tail == b->tail && a->has_born == b->has_born &&
	       a->born == b->born && a->has_after == b->has_after && a->after == b->after &&
	       a->finished == b->finished;
}

/* True when p is Connect's offset, a position alone: it names no file but
 * the path's. */
static bool bare(const struct tailpos *p)
{
	return !p->has_id && !p->has_fp && !p->has_tail && !p->has_born && !p->has_after &&
	       !p->finished;
}

/* Checks p in the file it means and refreshes its identity (tailcheck_reach
 * below, past its shortcuts). */
static int reach(const struct config_section *cfg, const char *path, const struct tailpos *p,
                 const struct tailpos *s, bool bounded, char **settled, char *errbuf, size_t errlen)
{
	struct target t = {0};
	struct around *a = NULL;
	struct tailpos now;
	char note[1024] = "", buf[512];
	int fd = -1, rc, n;

	rc = find_target(cfg, path, p, s, &t, errbuf, errlen, note, sizeof(note));
	if (rc != 0)
		goto out;
	fd = open(t.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || tailid_of_fd(fd, &t.id) != 0) {
		/* Nothing to skip. The identity of a file not there describes
		 * none: kept, its file would count as gone unread at the start. */
		if (p->pos == 0 && !bare(p) && (*settled = strdup("{\"position\":0}")) == NULL) {
			snprintf(errbuf, errlen, "out of memory");
			rc = SOURCE_ERR_NOMEM;
		} else if (p->pos == 0 && !bare(p)) {
			snprintf(errbuf, errlen,
			         "%s is not there: the position 0 is stored alone (the next file "
			         "at the path is read from its start)",
			         t.path);
		}
		if (p->pos == 0)
			goto out;
		snprintf(errbuf, errlen,
		         "%s: %s: a position (%lld) in it would be taken as a truncation when it "
		         "appears, and the file read from its start",
		         t.path, strerror(errno), (long long)p->pos);
		rc = SOURCE_ERR_CONFIG;
		goto out;
	}
	if ((rc = around_read(&t, fd, p->pos, bounded, &a, errbuf, errlen)) != 0)
		goto out;
	if ((rc = check_place(&t, a, errbuf, errlen)) != 0) {
		/* Inside a line: what --force stores is still this file at that
		 * position; the old position's tail would read it from 0. */
		if (!a->past && !a->far && refreshed(&t, a, buf, sizeof(buf)) > 0)
			*settled = strdup(buf);
		goto out;
	}
	n = refreshed(&t, a, buf, sizeof(buf));
	if (n < 0) {
		snprintf(errbuf, errlen, "%s: the offset at %lld does not fit its buffer", t.path,
		         (long long)p->pos);
		rc = SOURCE_ERR_CONFIG;
	} else if (bare(p) && !t.moved) {
		snprintf(errbuf, errlen, "%s", note); /* resumed in the path's file as sent */
	} else if (tailpos_parse(buf, &now) == 0 && !same_place(p, &now) &&
	           (*settled = strdup(buf)) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		rc = SOURCE_ERR_NOMEM;
	} else {
		snprintf(errbuf, errlen, "%s", note);
	}
out:
	if (fd >= 0)
		close(fd);
	free(a);
	free(t.path);
	return rc;
}

int tailcheck_reach(const struct config_section *cfg, const char *partition, const char *offset,
                    const char *stored, bool bounded, char **settled, char *errbuf, size_t errlen)
{
	cJSON *part = cJSON_Parse(partition);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(part, "filename");
	struct tailpos p, s = {0};
	bool unchanged;
	int rc = 0;

	*settled = NULL;
	if (errlen > 0)
		errbuf[0] = '\0';
	if (!cJSON_IsString(f) || tailpos_parse(offset, &p) != 0)
		goto out; /* check_offset's to refuse */
	if (stored == NULL || tailpos_parse(stored, &s) != 0)
		memset(&s, 0, sizeof(s));
	if (s.known && same_place(&p, &s))
		goto out; /* nothing changes */
	/* The stored position, in the stored offset's file: what skiff would
	 * do unasked. Checked and refreshed as any, but never refused (the
	 * file damaged, shorter, unreadable since: skiff meets that alike). */
	unchanged = s.known && p.pos == s.pos && (!p.has_id || (p.dev == s.dev && p.ino == s.ino));
	rc = reach(cfg, f->valuestring, &p, &s, bounded, settled, errbuf, errlen);
	if (rc == SOURCE_ERR_CONFIG && unchanged) {
		rc = 0;
		if (errlen > 0)
			errbuf[0] = '\0';
		free(*settled); /* what --force would have stored instead */
		*settled = NULL;
		if (bare(&p) && (*settled = strdup(stored)) == NULL) {
			snprintf(errbuf, errlen, "out of memory");
			rc = SOURCE_ERR_NOMEM;
		}
	}
out:
	cJSON_Delete(part);
	return rc;
}
