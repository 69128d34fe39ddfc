/* tailcheck: a KIP-875 offset for the file source, checked (tailcheck.h). */
#include "tailcheck.h"

#include "config.h"
#include "jsonint.h"
#include "source.h"
#include "tailid.h"
#include "tailpos.h"
#include "tailscan.h"

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
static bool follows(const struct config_section *cfg, const char *path)
{
	const char *file = config_str(cfg, "file"), *base = strrchr(path, '/');
	size_t n = config_list_len(cfg, "files");
	bool match = false;

	if (file != NULL && file[0] != '\0')
		return strcmp(file, path) == 0;
	for (size_t i = 0; i < n && !match; i++) {
		const char *p = config_list_item(cfg, "files", i);

		match = strcmp(p, path) == 0 || fnmatch(p, path, FNM_PATHNAME) == 0;
	}
	base = base != NULL ? base + 1 : path;
	n = config_list_len(cfg, "files.exclude");
	for (size_t i = 0; i < n && match; i++) {
		const char *x = config_list_item(cfg, "files.exclude", i);

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
	int rc = 0;

	if (!cJSON_IsString(f) || cJSON_GetArraySize(p) != 1) {
		snprintf(errbuf, errlen,
		         "Partition objects should contain the key 'filename' (a string) and "
		         "nothing else");
		rc = SOURCE_ERR_CONFIG;
	} else if (!follows(cfg, f->valuestring)) {
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
	static const char *const ids[] = {"dev",  "ino",  "fp",    "fplen",
	                                  "tail", "born", "after", "finished"};
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
			         "after, finished)",
			         m->string);
			rc = SOURCE_ERR_CONFIG;
		}
	}
	cJSON_Delete(o);
	return rc;
}

/* ---- reach: where a position set lies ------------------------------------ */

/* How far from a position inside a line its start and the next are looked
 * for (a REST request waits on it). */
#define LINE_LOOK (64 * 1024)

/* The file a position is set in: its path (malloc'd) and what it is. */
struct target {
	char *path;
	struct tailid id;
	const struct tailpos *named; /* the identity that named it, NULL: none */
	bool moved;                  /* not the file at the path: rotated since */
};

/* Whether id is the file p names: dev and inode, and the birth where both
 * know it (tailresume's rule: ext4 gives a deleted file's inode away). */
static bool names(const struct tailpos *p, const struct tailid *id)
{
	return p->dev == id->dev && p->ino == id->ino &&
	       (!p->has_born || !id->has_btime || id->born == p->born);
}

/* The rotated.dirs of cfg as tailscan takes them (malloc'd array of
 * pointers into cfg), or NULL (none, or out of memory: *n 0). */
static const char **rotated_dirs(const struct config_section *cfg, size_t *n)
{
	size_t len = config_list_len(cfg, "rotated.dirs");
	const char **d = len > 0 ? calloc(len, sizeof(*d)) : NULL;

	*n = d != NULL ? len : 0;
	for (size_t i = 0; i < *n; i++)
		d[i] = config_list_item(cfg, "rotated.dirs", i);
	return d;
}

static bool compressed_name(const char *path, const char *other)
{
	const char *b = strrchr(path, '/'), *o = strrchr(other, '/');

	return tailid_rotated_name(b ? b + 1 : path, o ? o + 1 : other) == TAILID_COMPRESSED;
}

/* Finds the file identity p names (rotated since: where the rotation put
 * it) into *t. Returns 0 (found, or gone: t->path NULL), or
 * SOURCE_ERR_CONFIG with errbuf when it was compressed since. */
static int find_named(const struct config_section *cfg, const char *path, const struct tailpos *p,
                      struct target *t, char *errbuf, size_t errlen)
{
	size_t nd;
	const char **dirs = rotated_dirs(cfg, &nd);
	char *f = tailscan_find_moved(path, dirs, nd, p->dev, p->ino);
	int rc = 0;

	if (f != NULL && (tailid_of_path(f, &t->id) != 0 || !names(p, &t->id))) {
		free(f);
		f = NULL;
	}
	if (f == NULL && p->has_fp)
		f = tailscan_find_compressed(path, dirs, nd, p->fp, p->fplen,
		                             p->has_born ? p->born : INT64_MIN, NULL);
	if (f != NULL && compressed_name(path, f)) {
		snprintf(
		    errbuf, errlen,
		    "%s: the file of the stored offset (inode %lld) was rotated and compressed "
		    "since: it is %s now, where a new position cannot be checked; leave the "
		    "position as it is (skiff finishes %s from there), or set a position in "
		    "the file now at the path with \"dev\" and \"ino\" of that file",
		    path, (long long)p->ino, f, f);
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

static ssize_t read_at(int fd, void *buf, size_t len, int64_t at)
{
	ssize_t got;

	do
		got = pread(fd, buf, len, (off_t)at);
	while (got < 0 && errno == EINTR);
	return got;
}

/* True when pos (0 < pos <= size) starts a line: the byte before ends one
 * ("\n", or a "\r" not followed by "\n", as tailfile reads lines). A "\r"
 * that ends a file still written (not final) ends no line yet: tailfile
 * waits for the next byte, and a "\n" would make "\r\n" one line end. */
static bool line_start(int fd, int64_t pos, int64_t size, bool final)
{
	unsigned char b[2] = {0, 0};
	ssize_t got = read_at(fd, b, pos < size ? 2 : 1, pos - 1);

	if (got < 1)
		return false;
	if (b[0] == '\r' && pos == size)
		return final;
	return b[0] == '\n' || (b[0] == '\r' && (got < 2 || b[1] != '\n'));
}

/* Where the line holding pos starts and where the next one does, each
 * looked for within LINE_LOOK bytes (-1: farther; *next -2: the file ends
 * first, the line end is not written yet). A "\r" right before pos with
 * "\n" at pos is half of one line end, not the end of a line. */
static void line_bounds(int fd, int64_t pos, int64_t *start, int64_t *next)
{
	static char buf[LINE_LOOK + 1];
	int64_t from = pos > LINE_LOOK ? pos - LINE_LOOK : 0;
	ssize_t got = read_at(fd, buf, (size_t)(pos - from) + 1, from);
	ssize_t before = got > pos - from ? (ssize_t)(pos - from) : got;

	*start = from == 0 ? 0 : -1;
	for (ssize_t i = before; i-- > 0;)
		if (buf[i] == '\n' || (buf[i] == '\r' && (i + 1 >= got || buf[i + 1] != '\n'))) {
			*start = from + i + 1;
			break;
		}
	got = read_at(fd, buf, sizeof(buf), pos);
	*next = got >= 0 && (size_t)got < sizeof(buf) ? -2 : -1;
	for (ssize_t i = 0; i < got; i++)
		if (buf[i] == '\n' || buf[i] == '\r') {
			*next = pos + i + 1 + (buf[i] == '\r' && i + 1 < got && buf[i + 1] == '\n');
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

/* Refuses a position past the end of t's file, or inside a line. */
static int check_place(const struct target *t, int fd, int64_t pos, char *errbuf, size_t errlen)
{
	int64_t start, next;
	char a[80], b[80];

	if (pos > t->id.size) {
		snprintf(
		    errbuf, errlen,
		    "%s holds %lld bytes, fewer than the position %lld: skiff would take it as "
		    "truncated and read it again from its start",
		    t->path, (long long)t->id.size, (long long)pos);
		return SOURCE_ERR_CONFIG;
	}
	if (pos == 0 || line_start(fd, pos, t->id.size, t->moved))
		return 0;
	line_bounds(fd, pos == t->id.size ? pos - 1 : pos, &start, &next);
	if (pos == t->id.size) {
		snprintf(errbuf, errlen,
		         "%s: the position %lld follows the \"\\r\" that ends the file (its line "
		         "%s): the next byte is not written yet, and a \"\\n\" (\"\\r\\n\", one "
		         "line end) would be sent as an empty record; set the position once it is "
		         "written",
		         t->path, (long long)pos, at_byte(a, sizeof(a), start, "before"));
		return SOURCE_ERR_CONFIG;
	}
	snprintf(errbuf, errlen,
	         "%s: the position %lld is inside a line (that line %s, the next %s): skiff "
	         "would send the rest of the line as a record; set a position where a line "
	         "starts",
	         t->path, (long long)pos, at_byte(a, sizeof(a), start, "before"),
	         at_byte(b, sizeof(b), next, "after"));
	return SOURCE_ERR_CONFIG;
}

/* The offset skiff itself would store at pos in t's file, into buf. */
static int refreshed(const struct target *t, int fd, int64_t pos, char *buf, size_t len)
{
	unsigned char tail[TAILPOS_TAIL];
	int64_t fplen = pos < TAILID_FP_MAX ? pos : TAILID_FP_MAX;
	struct tailmark m = {.born = t->named && t->named->has_born ? t->named->born : t->id.born,
	                     .done = -1};
	struct src_offset off = {.v = {pos, t->id.dev, t->id.ino, 0}, .ref = &m.ref};
	uint64_t fp;

	if (tailid_fp_file(fd, fplen, &fp) != 0)
		return -1;
	m.fp = fp;
	m.fp_full = pos > TAILID_FP_MAX;
	off.v[3] = (int64_t)fp;
	if (pos > TAILID_FP_MAX) {
		if (read_at(fd, tail, sizeof(tail), pos - TAILPOS_TAIL) != (ssize_t)sizeof(tail))
			return -1;
		off.v[3] = (int64_t)tailpos_tail(tail, sizeof(tail));
	}
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

int tailcheck_reach(const struct config_section *cfg, const char *partition, const char *offset,
                    const char *stored, bool bounded, char **settled, char *errbuf, size_t errlen)
{
	cJSON *part = cJSON_Parse(partition);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(part, "filename");
	struct tailpos p, s = {0}, now;
	struct target t = {0};
	char note[1024] = "", buf[512];
	int fd = -1, rc = 0, n;

	(void)bounded; /* every read below is bounded (LINE_LOOK, a fingerprint) */
	*settled = NULL;
	if (errlen > 0)
		errbuf[0] = '\0';
	if (!cJSON_IsString(f) || tailpos_parse(offset, &p) != 0)
		goto out; /* check_offset's to refuse */
	if (stored != NULL && tailpos_parse(stored, &s) == 0 && same_place(&p, &s))
		goto out; /* nothing changes */
	if (stored == NULL || tailpos_parse(stored, &s) != 0)
		memset(&s, 0, sizeof(s));
	rc = find_target(cfg, f->valuestring, &p, &s, &t, errbuf, errlen, note, sizeof(note));
	if (rc != 0)
		goto out;
	fd = open(t.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || tailid_of_fd(fd, &t.id) != 0) {
		/* Nothing to skip. The identity of a file not there describes
		 * none: kept, its file would count as gone unread at the start. */
		if (p.pos == 0 && !bare(&p) && (*settled = strdup("{\"position\":0}")) == NULL) {
			snprintf(errbuf, errlen, "out of memory");
			rc = SOURCE_ERR_NOMEM;
		} else if (p.pos == 0 && !bare(&p)) {
			snprintf(errbuf, errlen,
			         "%s is not there: the position 0 is stored alone (the next file "
			         "at the path is read from its start)",
			         t.path);
		}
		if (p.pos == 0)
			goto out;
		snprintf(errbuf, errlen,
		         "%s: %s: a position (%lld) in it would be taken as a truncation when it "
		         "appears, and the file read from its start",
		         t.path, strerror(errno), (long long)p.pos);
		rc = SOURCE_ERR_CONFIG;
		goto out;
	}
	if ((rc = check_place(&t, fd, p.pos, errbuf, errlen)) != 0) {
		/* Inside a line: what --force stores is still this file at that
		 * position; the old position's tail would read it from 0. */
		if (p.pos <= t.id.size && refreshed(&t, fd, p.pos, buf, sizeof(buf)) > 0)
			*settled = strdup(buf);
		goto out;
	}
	n = refreshed(&t, fd, p.pos, buf, sizeof(buf));
	if (n < 0) {
		snprintf(errbuf, errlen, "%s: the bytes before the position cannot be read: %s",
		         t.path, strerror(errno));
		rc = SOURCE_ERR_CONFIG;
	} else if (bare(&p) && !t.moved) {
		snprintf(errbuf, errlen, "%s", note); /* resumed in the path's file as sent */
	} else if (tailpos_parse(buf, &now) == 0 && !same_place(&p, &now) &&
	           (*settled = strdup(buf)) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		rc = SOURCE_ERR_NOMEM;
	} else {
		snprintf(errbuf, errlen, "%s", note);
	}
out:
	if (fd >= 0)
		close(fd);
	free(t.path);
	cJSON_Delete(part);
	return rc;
}
