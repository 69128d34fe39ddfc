/* offsets_file: the crash-safe local file backend of the offset store.
 *
 * On disk, one JSON document and a newline:
 *   {"format":"skiff-offsets","version":1,"generation":42,"offsets":[
 *    {"key":["conn",{"filename":"f"}],"value":{"position":12}}],"crc32c":"e3069283"}
 * (on one line). The checksum is the CRC-32C, as 8 lowercase hex digits, of
 * every byte before ,"crc32c":" -- so the file must end with exactly
 * ,"crc32c":"xxxxxxxx"}\n. Keys and values are embedded JSON, written as the
 * store holds them (validated and compacted by offsets_put); load cuts each
 * one's exact text out of the document (cJSON would round integers above
 * 2^53) and hands it to offsets_load_entry, which validates and compacts it. Future versions keep
 * this envelope (trailer, "format", "version") so that this one can say "written by a newer skiff".
 *
 * Generations: "path" holds the newest, "path.prev" the one before; see
 * atomicfile.c for the crash windows. Load reads both and takes the valid one
 * with the highest generation, so each window is covered:
 *   - torn or partial path.tmp: ignored and removed;
 *   - path missing (between the two renames), prev valid: prev;
 *   - path torn, empty, bit-flipped, garbage: CRC or parse fails, prev;
 *   - path and prev both valid: the higher generation.
 * After loading from prev (path bad or missing) the next write does not
 * rotate path into prev, which would replace the last good generation with
 * the bad file; it renames the new file straight over path.
 *
 * The journal (offsets_log.h): a write whose base is at path appends the
 * entries that changed to "path.log" (fsynced): its bytes follow what changed.
 * A compaction (the write above, of the whole store as a new generation, then
 * the log removed) comes first, after loading from prev or past an unapplied
 * tail of the log, after a failed append, when the log reaches 4x the base,
 * and at close. Load applies the log's records of the chosen base over it.
 *
 * The store deleted under a running skiff (a state directory removed by
 * hand, a cleaner, a remounted card): each write, and offsets_verify between
 * writes, first checks that the directory, the base file and the log are
 * those it wrote (device and inode). A missing directory fails the write,
 * saying so (offsets_last_flush_ok 0, /health unhealthy, reading pauses after
 * three), and appends never go to an unlinked log; once the directory is
 * back (or another file is in place) the next write is a compaction, the
 * whole store, after taking the lock file again, and its note says what
 * happened.
 *
 * One writer: a held store is also locked by an abstract socket named after
 * the store's canonical path (realpath of its directory, and its name),
 * which no rm removes: the lock files went with a deleted directory, and a
 * second skiff started on the directory made again ran beside the first.
 * Abstract names are per network namespace; skiffs in two namespaces sharing
 * one directory see only the lock files. */
#include "offsets/offsets_file.h"

#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "util/atomicfile.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/lockfile.h"
#include "util/num.h"
#include "offsets/offsets_log.h"
#include "offsets/offsets_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define FORMAT_NAME "skiff-offsets"
#define FORMAT_VERSION 1
#define TRAILER_KEY ",\"crc32c\":\""
#define TRAILER_KEY_LEN (sizeof(TRAILER_KEY) - 1)
#define TRAILER_LEN (TRAILER_KEY_LEN + 8 + 3) /* key, 8 hex digits, "}\n */
#define READ_MAX ((size_t)OFFSETS_MAX_BYTES + 64 * 1024)
#define MAX_GENERATION 9007199254740992.0 /* 2^53: exact as a JSON number */
#define WHY_LEN 320

/* A file or directory as this process last wrote or found it. */
struct place {
	bool known;
	dev_t dev;
	ino_t ino;
};

struct filectx {
	char *path;
	char *prev;
	char *dir;         /* the directory that holds path */
	bool path_current; /* path holds the generation in memory: rotate it */
	/* Held stores (offsets_open_file_held): the abstract socket of the
	 * store's canonical path, "path.lock", and flocks on the files at path
	 * and prev, so that another skiff is refused even when the lock file
	 * was deleted. -1 when not held. */
	bool hold;
	int sockfd, lockfd, held_cur, held_prev;
	/* The directory and the base file at path as last written or loaded,
	 * to notice them deleted or replaced (check_place). */
	struct place dir_at, base_at;
	/* The journal (offsets_log.h) over the base file at path, of generation
	 * base_gen (0: none yet) and base_len bytes. compact: the next write
	 * rewrites the base (the log's tail is unknown, or path is not the
	 * base the log is over). */
	struct offsets_log *log;
	uint64_t base_gen;
	size_t base_len;
	bool compact;
	bool loaded;           /* file_load succeeded */
	uint64_t max_gen;      /* the highest generation loaded or written */
	int64_t compact_bytes; /* SKIFF_OFFSETS_COMPACT_BYTES, -1: unset */
};

enum state { MISSING, BAD, NEWER, VALID };

/* One stored generation while loading. */
struct cand {
	const char *name;
	enum state state;
	char *data;
	size_t len;
	int nentries; /* of a VALID one */
	uint64_t generation;
	char why[WHY_LEN];
};

/* Checks the trailer and the CRC of the bytes before it. */
static int check_crc(const char *d, size_t len, char *why, size_t whylen)
{
	const char *t;
	uint32_t stored = 0, computed;

	if (len < TRAILER_LEN + 1)
		goto torn;
	t = d + len - TRAILER_LEN;
	if (memcmp(t, TRAILER_KEY, TRAILER_KEY_LEN) != 0 ||
	    memcmp(t + TRAILER_KEY_LEN + 8, "\"}\n", 3) != 0)
		goto torn;
	for (size_t i = 0; i < 8; i++) {
		char c = t[TRAILER_KEY_LEN + i];
		/* Lower case only: the writer never produces upper case. */
		int v = c >= 'A' && c <= 'F' ? -1 : num_hex_digit(c);

		if (v < 0) {
			snprintf(why, whylen, "malformed checksum");
			return -1;
		}
		stored = stored << 4 | (uint32_t)v;
	}
	computed = crc32c(0, d, len - TRAILER_LEN);
	if (stored != computed) {
		snprintf(why, whylen,
		         "checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32
		         "): torn or damaged",
		         stored, computed);
		return -1;
	}
	return 0;
torn:
	snprintf(why, whylen, "no checksum at the end (torn, or not a skiff offsets file)");
	return -1;
}

/* A JSON number that is a whole number in [min, max]. */
static bool whole(const cJSON *j, double min, double max)
{
	return cJSON_IsNumber(j) && j->valuedouble >= min && j->valuedouble <= max &&
	       floor(j->valuedouble) == j->valuedouble;
}

enum { FORMAT, VERSION, GENERATION };

/* Checks format, version, generation and the shape of every entry, the
 * document parsed piece by piece (offsets_scan.h). */
static enum state check_doc(struct cand *c)
{
	static const char *const names[] = {"format", "version", "generation"};
	struct offsets_scan sc;
	const cJSON *fmt, *ver, *gen;
	enum state st = BAD;

	if (!offsets_scan(c->data, c->len, names, 3, false, &sc)) {
		cJSON *j = cJSON_ParseWithLength(c->data, c->len); /* not an object? */

		snprintf(c->why, sizeof(c->why),
		         j != NULL ? "not a skiff offsets file (no \"format\":\"%s\")"
		                   : "checksum matches but the JSON does not parse",
		         FORMAT_NAME);
		cJSON_Delete(j);
		return BAD;
	}
	fmt = sc.member[FORMAT];
	ver = sc.member[VERSION];
	gen = sc.member[GENERATION];
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT_NAME) != 0) {
		snprintf(c->why, sizeof(c->why), "not a skiff offsets file (no \"format\":\"%s\")",
		         FORMAT_NAME);
	} else if (whole(ver, FORMAT_VERSION + 1, INT32_MAX)) {
		snprintf(
		    c->why, sizeof(c->why),
		    "written by a newer skiff (format version %d; this skiff reads version %d)",
		    (int)ver->valuedouble, FORMAT_VERSION);
		st = NEWER;
	} else if (!whole(ver, FORMAT_VERSION, FORMAT_VERSION)) {
		snprintf(c->why, sizeof(c->why), "bad format version");
	} else if (!whole(gen, 1, MAX_GENERATION) || !sc.has_offsets) {
		snprintf(c->why, sizeof(c->why), "bad or missing \"generation\" or \"offsets\"");
	} else if (sc.bad >= 0) {
		snprintf(c->why, sizeof(c->why),
		         sc.why == OFFSETS_SCAN_BAD_KEY
		             ? "entry %d: key is not [\"connector\",{partition}]"
		             : "entry %d: value is not an object",
		         sc.bad);
	} else if (sc.nentries > OFFSETS_MAX_ENTRIES) {
		snprintf(c->why, sizeof(c->why), "%d entries, more than %d", sc.nentries,
		         OFFSETS_MAX_ENTRIES);
	} else {
		c->generation = (uint64_t)gen->valuedouble;
		c->nentries = sc.nentries;
		st = VALID;
	}
	offsets_scan_free(&sc);
	return st;
}

/* Judges a file's bytes: checksum first, then JSON, then content. */
static enum state check_bytes(struct cand *c)
{
	const unsigned char *u = (const unsigned char *)c->data;

	if (c->len == 0) {
		snprintf(c->why, sizeof(c->why), "empty");
		return BAD;
	}
	if (c->len >= 2 && u[0] == 0xAC && u[1] == 0xED) {
		snprintf(c->why, sizeof(c->why),
		         "is a Kafka Connect (Java-serialized) offsets file; skiff cannot read it: "
		         "move it away and convert it with `skiff offsets import FILE ...`");
		return BAD;
	}
	if (check_crc(c->data, c->len, c->why, sizeof(c->why)) != 0)
		return BAD;
	if (memchr(c->data, '\0', c->len) != NULL) {
		snprintf(c->why, sizeof(c->why), "contains a NUL byte");
		return BAD;
	}
	return check_doc(c);
}

/* Reads and judges one generation. Returns 0 (c->state says how it went), or
 * OFFSETS_ERR_IO / OFFSETS_ERR_NOMEM when the file could not be read. */
static int examine(struct cand *c, char *errbuf, size_t errlen)
{
	int rc = atomicfile_read(c->name, READ_MAX, &c->data, &c->len, c->why, sizeof(c->why));

	if (rc == ATOMICFILE_ERR_NOENT) {
		c->state = MISSING;
		snprintf(c->why, sizeof(c->why), "not found");
		return 0;
	}
	if (rc == ATOMICFILE_ERR_TOOBIG) {
		c->state = BAD;
		snprintf(c->why, sizeof(c->why), "too large (over %zu bytes)", READ_MAX);
		return 0;
	}
	if (rc != 0) {
		snprintf(errbuf, errlen, "offset store: %s", c->why);
		return rc == ATOMICFILE_ERR_NOMEM ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_IO;
	}
	c->state = check_bytes(c);
	return 0;
}

/* ---- raw walking: the exact text of each key and value ----
 * cJSON rounds integers above 2^53, so entries are cut out of the document
 * text itself. Only used on text cJSON has already parsed: structure is
 * known to be valid; whitespace is what cJSON skips (bytes up to 32). */

static const char *ws(const char *p)
{
	while (*p != '\0' && (unsigned char)*p <= 32)
		p++;
	return p;
}

/* The end of the JSON value at p. */
static const char *skip(const char *p)
{
	int depth = 0;

	do {
		if (*p == '"') {
			for (p++; *p != '\0' && *p != '"'; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			p += *p != '\0';
		} else if (*p == '{' || *p == '[') {
			depth++, p++;
		} else if (*p == '}' || *p == ']') {
			depth--, p++;
		} else if (depth == 0) {
			while ((unsigned char)*p > 32 && strchr(",:}]", *p) == NULL)
				p++;
		} else {
			p++;
		}
	} while (depth > 0 && *p != '\0');
	return p;
}

/* The value of member name (no escapes in it) of the object at p, or NULL. */
static const char *member(const char *p, const char *name)
{
	size_t n = strlen(name);

	p = ws(p);
	if (*p != '{')
		return NULL;
	for (p = ws(p + 1); *p == '"'; p = ws(p)) {
		const char *k = p, *v;

		p = skip(k);
		v = ws(ws(p) + 1); /* past the colon */
		if ((size_t)(p - k) == n + 2 && memcmp(k + 1, name, n) == 0)
			return v;
		p = ws(skip(v));
		p += *p == ',';
	}
	return NULL;
}

/* Loads one entry (the object at p). On failure c->why says why. */
static int load_one(struct cand *c, struct offsets *o, const char *p, int i)
{
	const char *kp = member(p, "key"), *vp = member(p, "value");
	char *k = NULL, *v = NULL;
	int rc;

	if (kp == NULL || vp == NULL) {
		snprintf(c->why, sizeof(c->why), "entry %d: unexpected layout", i);
		return OFFSETS_ERR_ARG;
	}
	k = strndup(kp, (size_t)(skip(kp) - kp));
	v = strndup(vp, (size_t)(skip(vp) - vp));
	rc = k && v ? offsets_load_entry(o, k, v) : OFFSETS_ERR_NOMEM;
	if (rc == OFFSETS_ERR_ARG) /* the shape was checked: a second copy of a key */
		snprintf(c->why, sizeof(c->why), "entry %d: duplicate key %s", i, k);
	else if (rc == OFFSETS_ERR_FULL)
		snprintf(c->why, sizeof(c->why), "more than %u bytes of offsets",
		         OFFSETS_MAX_BYTES);
	free(k);
	free(v);
	return rc;
}

/* Loads c's entries into o. Returns 0, OFFSETS_ERR_NOMEM, or another negative
 * code with c->why set (the generation is then unusable). */
static int fill(struct cand *c, struct offsets *o)
{
	const char *p = member(c->data, "offsets");
	int i = 0, rc;

	if (p == NULL || *p != '[')
		goto layout;
	for (p = ws(p + 1); *p == '{'; i++) {
		rc = load_one(c, o, p, i);
		if (rc != 0)
			return rc;
		p = ws(skip(p));
		if (*p == ',')
			p = ws(p + 1);
	}
	if (*p == ']' && i == c->nentries)
		return 0;
layout: /* cJSON and the walk disagree: escaped member names, for one */
	snprintf(c->why, sizeof(c->why), "unexpected layout of \"offsets\"");
	return OFFSETS_ERR_ARG;
}

/* Fills o from the newest valid candidate, falling back to the other one.
 * Returns the index used, -1 for none, or OFFSETS_ERR_NOMEM. */
static int choose(struct cand *c, struct offsets *o)
{
	int first =
	    c[0].state == VALID && (c[1].state != VALID || c[0].generation >= c[1].generation) ? 0
	                                                                                       : 1;

	for (int k = 0; k < 2; k++) {
		int i = k == 0 ? first : 1 - first;
		int rc;

		if (c[i].state != VALID)
			continue;
		rc = fill(&c[i], o);
		if (rc == 0)
			return i;
		offsets_load_reset(o);
		if (rc == OFFSETS_ERR_NOMEM)
			return rc;
		c[i].state = BAD;
	}
	return -1;
}

static const char advice[] =
    "Refusing to start: starting from the beginning would duplicate and from the end "
    "would lose records. Inspect or restore the file; to deliberately start over, "
    "delete both.";

/* Any file from a newer skiff stops the load (see offsets.h). */
static int refuse_newer(const struct cand *c, char *errbuf, size_t errlen)
{
	for (int i = 0; i < 2; i++) {
		if (c[i].state != NEWER)
			continue;
		snprintf(errbuf, errlen,
		         "offset store %s: %s. Refusing to start: run a skiff that reads it; or, "
		         "to fall back to %s (re-sending the records since), move it away.",
		         c[i].name, c[i].why, c[1 - i].name);
		return OFFSETS_ERR_CORRUPT;
	}
	return 0;
}

/* The directory of path (malloc'd), or NULL when memory is short. */
static char *dir_of(const char *path)
{
	char *copy = strdup(path), *dir = copy != NULL ? strdup(dirname(copy)) : NULL;

	free(copy);
	return dir;
}

/* Notes what is at path now (nothing: unknown). */
static void remember(struct place *p, const char *path)
{
	struct stat st;

	p->known = stat(path, &st) == 0;
	p->dev = p->known ? st.st_dev : 0;
	p->ino = p->known ? st.st_ino : 0;
}

/* Whether path is still what p remembers. */
static bool same(const struct place *p, const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == p->dev && st.st_ino == p->ino;
}

enum { PLACE_OK, PLACE_MOVED, PLACE_NO_DIR };

/* Whether the store is where this process wrote it. PLACE_NO_DIR: the
 * directory is gone (nothing can be written); PLACE_MOVED: the directory,
 * the base file or the log was deleted or replaced (the next write must be
 * whole). why says which. */
static int check_place(const struct filectx *ctx, char *why, size_t len)
{
	struct stat st;
	int rc = stat(ctx->dir, &st);

	if (rc != 0 && errno == ENOENT) {
		snprintf(why, len, "its directory %s was deleted", ctx->dir);
		return PLACE_NO_DIR;
	}
	if (rc != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, len, "its directory %s cannot be used (%s)", ctx->dir,
		         strerror(rc != 0 ? errno : ENOTDIR));
		return PLACE_NO_DIR;
	}
	if (ctx->dir_at.known && !same(&ctx->dir_at, ctx->dir)) {
		snprintf(why, len, "its directory %s was deleted and made again", ctx->dir);
		return PLACE_MOVED;
	}
	if (ctx->base_at.known && !same(&ctx->base_at, ctx->path)) {
		snprintf(why, len, "%s was deleted or replaced", ctx->path);
		return PLACE_MOVED;
	}
	if (offsets_log_moved(ctx->log)) {
		snprintf(why, len, "%s.log was deleted or replaced", ctx->path);
		return PLACE_MOVED;
	}
	return PLACE_OK;
}

/* Takes "path.lock" again when the one held was deleted (with its
 * directory): before anything is written there, no other skiff may hold
 * it (one in another network namespace, which saw no socket of ours). */
static int relock(struct filectx *ctx, char *errbuf, size_t errlen)
{
	char lock[PATH_MAX + 8];
	struct stat held;
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", ctx->path);
	if (ctx->lockfd < 0 || (fstat(ctx->lockfd, &held) == 0 && held.st_nlink > 0 &&
	                        same(&(struct place){true, held.st_dev, held.st_ino}, lock)))
		return 0;
	fd = lockfile_acquire(ctx->path, errbuf, errlen);
	if (fd < 0)
		return fd == LOCKFILE_HELD ? OFFSETS_ERR_LOCKED : OFFSETS_ERR_IO;
	close(ctx->lockfd);
	ctx->lockfd = fd;
	return 0;
}

/* Locks the file at name if there is one; *fd stays -1 when there is none. */
static int hold_one(const char *name, int *fd, char *errbuf, size_t errlen)
{
	*fd = open(name, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT)
		return 0;
	if (*fd >= 0 && flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK) {
		snprintf(errbuf, errlen,
		         "offset store %s: another skiff is using it (its lock file "
		         "%s.lock may have been removed); stop that skiff first",
		         name, name);
		close(*fd);
		*fd = -1;
		return OFFSETS_ERR_LOCKED;
	}
	snprintf(errbuf, errlen, "offset store %s: cannot lock: %s", name, strerror(errno));
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return OFFSETS_ERR_IO;
}

/* Holds both generations found at load, whatever their state: a second skiff
 * must be refused even while the store is being replaced. A file load found
 * missing is not opened again (the fault suite counts the opens). */
static int hold_existing(struct filectx *ctx, const struct cand *c, char *errbuf, size_t errlen)
{
	int rc = 0;

	if (c[0].state != MISSING)
		rc = hold_one(ctx->path, &ctx->held_cur, errbuf, errlen);
	if (rc == 0 && c[1].state != MISSING)
		rc = hold_one(ctx->prev, &ctx->held_prev, errbuf, errlen);
	return rc;
}

/* Applies the log over the base loaded from c[pick] (see offsets_log.h) and
 * sets up ctx for the writes to come; the rest of file_load's contract. */
static int replay(struct filectx *ctx, struct offsets *o, const struct cand *c, int pick,
                  uint64_t *generation, int *from_prev, char *errbuf, size_t errlen)
{
	char why[WHY_LEN];
	size_t ignored = 0;
	int rc;

	*generation = pick >= 0 ? c[pick].generation : 0;
	*from_prev = pick == 1;
	ctx->path_current = pick == 0;
	ctx->base_gen = pick == 0 ? c[0].generation : 0; /* only path takes appends */
	ctx->base_len = pick >= 0 ? c[pick].len : 0;
	if (pick < 0) { /* a log without its base: a store deleted to start over */
		rc = ctx->hold ? offsets_log_drop(ctx->log, errbuf, errlen) : 0;
		ctx->loaded = rc == 0;
		return rc;
	}
	rc = offsets_log_replay(ctx->log, o, c[pick].generation, generation, &ignored, why,
	                        sizeof(why));
	if (rc != 0) {
		snprintf(errbuf, errlen, "%s", why);
		return rc;
	}
	ctx->max_gen = *generation > c[1 - pick].generation ? *generation : c[1 - pick].generation;
	/* Never append behind a tail that was not applied: it would hide what
	 * follows it. Nor over prev: the next write makes a new base. */
	ctx->compact = pick != 0 || ignored > 0;
	if (pick == 1)
		snprintf(errbuf, errlen,
		         "offset store %s: %s; resumed from %s (generation %" PRIu64
		         "): what was acknowledged after it is sent again",
		         c[0].name, c[0].why, c[1].name, c[1].generation);
	else if (*why != '\0') {
		*from_prev = 1;
		snprintf(errbuf, errlen,
		         "offset store %s.log: %s; resumed from generation %" PRIu64
		         ": what was acknowledged after it is sent again",
		         ctx->path, why, *generation);
	}
	rc = offsets_log_reset(ctx->log, o);
	ctx->loaded = rc == 0;
	return rc;
}

static int file_load(void *vctx, struct offsets *o, uint64_t *generation, int *from_prev,
                     char *errbuf, size_t errlen)
{
	struct filectx *ctx = vctx;
	struct cand c[2] = {{.name = ctx->path}, {.name = ctx->prev}};
	char why[WHY_LEN];
	int rc, pick = -1;

	if ((rc = examine(&c[0], errbuf, errlen)) != 0 ||
	    (rc = examine(&c[1], errbuf, errlen)) != 0)
		goto out;
	if ((rc = refuse_newer(c, errbuf, errlen)) != 0)
		goto out;
	pick = rc = choose(c, o);
	if (rc == OFFSETS_ERR_NOMEM) {
		snprintf(errbuf, errlen, "offset store %s: out of memory", ctx->path);
		goto out;
	}
	rc = 0;
	if (pick < 0 && (c[0].state != MISSING || c[1].state != MISSING)) {
		snprintf(errbuf, errlen, "offset store %s: %s; %s: %s. %s", c[0].name, c[0].why,
		         c[1].name, c[1].why, advice);
		rc = OFFSETS_ERR_CORRUPT;
		goto out;
	}
	if (atomicfile_remove_tmp(ctx->path, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "offset store: %s", why);
		rc = OFFSETS_ERR_IO;
		goto out;
	}
	if (ctx->hold && (rc = hold_existing(ctx, c, errbuf, errlen)) != 0)
		goto out;
	rc = replay(ctx, o, c, pick, generation, from_prev, errbuf, errlen);
	remember(&ctx->dir_at, ctx->dir);
	if (pick == 0)
		remember(&ctx->base_at, ctx->path);
out:
	for (int i = 0; i < 2; i++)
		free(c[i].data);
	return rc;
}

static char *append(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define ENTRY_OPEN "{\"key\":"
#define ENTRY_MID ",\"value\":"

/* The entries a base file is built from: the store's, or the log's shadow
 * (what is durable, for the compaction at close). */
struct view {
	const void *src;
	size_t n;
	const char *(*key)(const void *src, size_t i);
	const char *(*value)(const void *src, size_t i);
};

static const char *store_key(const void *src, size_t i)
{
	return offsets_key(src, i);
}

static const char *store_value(const void *src, size_t i)
{
	return offsets_value(src, i);
}

/* Builds the document of v's entries for generation gen into *doc (free()). */
static int build(const struct view *v, uint64_t gen, char **doc, size_t *len)
{
	char head[128], tail[TRAILER_LEN + 1];
	size_t n = v->n, hl, need;
	char *buf, *p;

	hl = (size_t)snprintf(head, sizeof(head),
	                      "{\"format\":\"" FORMAT_NAME
	                      "\",\"version\":%d,\"generation\":%" PRIu64 ",\"offsets\":[",
	                      FORMAT_VERSION, gen);
	need = hl + 1 + TRAILER_LEN;
	for (size_t i = 0; i < n; i++)
		need += strlen(v->key(v->src, i)) + strlen(v->value(v->src, i)) + 18;
	buf = malloc(need + 1);
	if (buf == NULL)
		return OFFSETS_ERR_NOMEM;
	p = append(buf, head, hl);
	for (size_t i = 0; i < n; i++) {
		const char *k = v->key(v->src, i), *val = v->value(v->src, i);

		if (i > 0)
			p = append(p, ",", 1);
		p = append(p, ENTRY_OPEN, sizeof(ENTRY_OPEN) - 1);
		p = append(p, k, strlen(k));
		p = append(p, ENTRY_MID, sizeof(ENTRY_MID) - 1);
		p = append(p, val, strlen(val));
		p = append(p, "}", 1);
	}
	p = append(p, "]", 1);
	snprintf(tail, sizeof(tail), TRAILER_KEY "%08" PRIx32 "\"}\n",
	         crc32c(0, buf, (size_t)(p - buf)));
	p = append(p, tail, TRAILER_LEN);
	*doc = buf;
	*len = (size_t)(p - buf);
	return 0;
}

/* Writes v whole as the base file of generation (the old base becomes prev)
 * and starts an empty log over it; o: the store v views, whose entries the
 * log's shadow becomes (NULL: v is the shadow). */
static int compact(struct filectx *ctx, const struct view *v, const struct offsets *o,
                   uint64_t generation, char *errbuf, size_t errlen)
{
	char *doc = NULL, why[WHY_LEN];
	size_t len = 0;
	int done = 0, held = -1, rc;

	if (build(v, generation, &doc, &len) != 0) {
		snprintf(errbuf, errlen, "offset store %s: out of memory", ctx->path);
		return OFFSETS_ERR_NOMEM;
	}
	rc = atomicfile_replace_held(ctx->path, ctx->path_current ? ctx->prev : NULL, doc, len,
	                             &done, ctx->hold ? &held : NULL, errbuf, errlen);
	if (rc == 0 && ctx->hold) {
		/* The old path file is prev now (or was dropped): keep it locked
		 * until the next generation replaces it. */
		if (ctx->held_prev >= 0)
			close(ctx->held_prev);
		ctx->held_prev = ctx->held_cur;
		ctx->held_cur = held;
	}
	if (done & ATOMICFILE_ROTATED)
		ctx->path_current = false;
	if (done & ATOMICFILE_REPLACED)
		ctx->path_current = true;
	free(doc);
	if (rc != 0)
		return rc == ATOMICFILE_ERR_NOMEM ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_IO;
	remember(&ctx->dir_at, ctx->dir);
	remember(&ctx->base_at, ctx->path);
	ctx->base_gen = generation;
	ctx->base_len = len;
	/* The log's records are in the base now, and a log that survives this
	 * (the unlink failed, or did not reach the disk) holds records of an
	 * older base, which replay skips: not a failure of this write. */
	(void)offsets_log_drop(ctx->log, why, sizeof(why));
	ctx->compact = o != NULL && offsets_log_reset(ctx->log, o) != 0;
	return 0;
}

/* The log's size at which the next write compacts: 4x the base (at least
 * 4 KiB), so that a write costs what changed plus, amortised, a quarter of
 * it again. SKIFF_OFFSETS_COMPACT_BYTES sets another size; 0 makes every
 * write a compaction, as before the log (the fault suites use both). */
static uint64_t compact_at(const struct filectx *ctx)
{
	if (ctx->compact_bytes >= 0)
		return (uint64_t)ctx->compact_bytes;
	return 4 * (uint64_t)(ctx->base_len > 1024 ? ctx->base_len : 1024);
}

/* Before a write: fails while the directory is gone; after anything was
 * deleted or replaced, makes the write whole (*moved, why says what). A
 * held store takes its lock file again first when it was deleted. */
static int before_store(struct filectx *ctx, bool *moved, char *why, size_t whylen, char *errbuf,
                        size_t errlen)
{
	int place = check_place(ctx, why, whylen);

	*moved = place == PLACE_MOVED;
	if (place == PLACE_NO_DIR) {
		ctx->compact = true;
		snprintf(errbuf, errlen,
		         "offset store %s: %s under skiff: nothing can be written until it exists "
		         "again; then the whole store is",
		         ctx->path, why);
		return OFFSETS_ERR_IO;
	}
	if (*moved)
		ctx->compact = true;
	return ctx->hold ? relock(ctx, errbuf, errlen) : 0;
}

static int file_store(void *vctx, const struct offsets *o, uint64_t generation, char *errbuf,
                      size_t errlen)
{
	struct filectx *ctx = vctx;
	char why[WHY_LEN];
	bool moved;
	int rc;

	/* Never write what load refuses: a generation past 2^53 would be read as
	 * damage, and the restart would fall back to the older file. */
	if (generation > (UINT64_C(1) << 53)) {
		snprintf(errbuf, errlen,
		         "offset store %s: generation %" PRIu64 " is past the format's limit of "
		         "2^53 (only a hand-made or damaged file gets there)",
		         ctx->path, generation);
		return OFFSETS_ERR_IO;
	}
	if ((rc = before_store(ctx, &moved, why, sizeof(why), errbuf, errlen)) != 0)
		return rc;
	if (generation > ctx->max_gen)
		ctx->max_gen = generation;
	if (ctx->compact || ctx->base_gen == 0 || compact_at(ctx) == 0 ||
	    offsets_log_size(ctx->log) >= compact_at(ctx)) {
		struct view v = {o, offsets_count(o), store_key, store_value};

		rc = compact(ctx, &v, o, generation, errbuf, errlen);
		if (rc == 0 && moved)
			snprintf(errbuf, errlen,
			         "offset store %s: %s under skiff: written whole again (generation "
			         "%" PRIu64 ")",
			         ctx->path, why, generation);
		return rc;
	}
	rc = offsets_log_append(ctx->log, o, ctx->base_gen, generation, errbuf, errlen);
	ctx->compact = rc != 0;
	return rc;
}

/* At a stop, the process that held the store folds the log into a new
 * base: what is durable (the shadow), not what is in memory, so this is no
 * flush; the next start reads one file, and prev is the base before. A
 * failure leaves the base and the log as they were. */
static void compact_at_close(struct filectx *ctx)
{
	struct view v = {ctx->log, offsets_log_shadow_count(ctx->log), offsets_log_shadow_key,
	                 offsets_log_shadow_value};
	char why[WHY_LEN];

	/* Not after a failed load or append, nor when the shadow could not be
	 * kept (compact set): it may not be what is durable. */
	if (ctx->hold && ctx->loaded && !ctx->compact && ctx->base_gen > 0 &&
	    offsets_log_size(ctx->log) > 0 && ctx->max_gen < (UINT64_C(1) << 53))
		(void)compact(ctx, &v, NULL, ctx->max_gen + 1, why, sizeof(why));
}

static bool file_moved(void *vctx)
{
	char why[WHY_LEN];

	return check_place(vctx, why, sizeof(why)) != PLACE_OK;
}

static void file_close(void *vctx)
{
	struct filectx *ctx = vctx;
	char why[WHY_LEN];

	if (ctx == NULL)
		return;
	/* Not into a directory made again by someone else, nor past a log
	 * that went. */
	if (ctx->loaded && check_place(ctx, why, sizeof(why)) == PLACE_OK)
		compact_at_close(ctx);
	for (int i = 0; i < 4; i++) {
		int fd = i == 0   ? ctx->lockfd
		         : i == 1 ? ctx->held_cur
		         : i == 2 ? ctx->held_prev
		                  : ctx->sockfd;

		if (fd >= 0)
			close(fd);
	}
	offsets_log_free(ctx->log);
	free(ctx->path);
	free(ctx->prev);
	free(ctx->dir);
	free(ctx);
}

static const struct offset_backend_ops file_ops = {
    .name = "file",
    .load = file_load,
    .store = file_store,
    .close = file_close,
    .moved = file_moved,
};

/* The abstract socket of the store's canonical path (see the top): the
 * realpath of its directory, so that two names of one directory (a
 * symlink, "..") are one store, and the file's name. */
static int lock_socket(struct filectx *ctx, char *errbuf, size_t errlen)
{
	char real[PATH_MAX], canon[PATH_MAX + 256], name[64], what[PATH_MAX + 300];
	const char *slash = strrchr(ctx->path, '/');
	const char *base = slash != NULL ? slash + 1 : ctx->path;

	if (realpath(ctx->dir, real) == NULL) {
		snprintf(errbuf, errlen, "offset store %s: directory %s: %s", ctx->path, ctx->dir,
		         strerror(errno));
		return errno == ENOMEM ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_IO;
	}
	snprintf(canon, sizeof(canon), "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
	snprintf(name, sizeof(name), "skiff-offsets-file-%016" PRIx64, hash_str(canon));
	snprintf(what, sizeof(what), "this offset file (%s)", canon);
	ctx->sockfd = lockfile_abstract(name, what, errbuf, errlen);
	if (ctx->sockfd >= 0)
		return 0;
	return ctx->sockfd == LOCKFILE_HELD ? OFFSETS_ERR_LOCKED : OFFSETS_ERR_IO;
}

static int64_t compact_env(void)
{
	const char *e = getenv("SKIFF_OFFSETS_COMPACT_BYTES");
	int64_t v;

	return e != NULL && num_parse_i64(e, 0, INT64_MAX, &v) == 0 ? v : -1;
}

int offsets_file_backend(const char *path, bool hold, const struct offset_backend_ops **ops,
                         void **out, char *errbuf, size_t errlen)
{
	struct filectx *ctx = NULL;
	char why[WHY_LEN];
	int rc;

	*out = NULL;
	if (path == NULL || *path == '\0') {
		snprintf(errbuf, errlen, "offset store: no file name given");
		return OFFSETS_ERR_ARG;
	}
	rc = atomicfile_check_dir(path, why, sizeof(why));
	if (rc != 0) {
		snprintf(errbuf, errlen, "offset store: %s", why);
		return rc == ATOMICFILE_ERR_NOMEM   ? OFFSETS_ERR_NOMEM
		       : rc == ATOMICFILE_ERR_NOENT ? OFFSETS_ERR_NODIR
		                                    : OFFSETS_ERR_IO;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx != NULL)
		ctx->sockfd = ctx->lockfd = ctx->held_cur = ctx->held_prev = -1;
	if (ctx != NULL && asprintf(&ctx->prev, "%s.prev", path) < 0)
		ctx->prev = NULL; /* asprintf leaves it undefined on failure */
	if (ctx != NULL)
		ctx->dir = dir_of(path);
	if (ctx == NULL || ctx->prev == NULL || ctx->dir == NULL ||
	    (ctx->path = strdup(path)) == NULL || offsets_log_new(path, &ctx->log) != 0) {
		file_close(ctx);
		snprintf(errbuf, errlen, "offset store %s: out of memory", path);
		return OFFSETS_ERR_NOMEM;
	}
	ctx->hold = hold;
	ctx->compact_bytes = compact_env();
	if (hold) {
		/* Before loading: no other skiff may write the store after we read it. */
		rc = lock_socket(ctx, errbuf, errlen);
		if (rc == 0) {
			ctx->lockfd = lockfile_acquire(path, errbuf, errlen);
			if (ctx->lockfd < 0)
				rc = ctx->lockfd == LOCKFILE_HELD ? OFFSETS_ERR_LOCKED
				                                  : OFFSETS_ERR_IO;
		}
		if (rc != 0) {
			file_close(ctx);
			return rc;
		}
	}
	*ops = &file_ops;
	*out = ctx;
	return 0;
}

static int open_file(const char *path, bool hold, struct offsets **out, char *errbuf, size_t errlen)
{
	const struct offset_backend_ops *ops;
	void *ctx;
	int rc = offsets_file_backend(path, hold, &ops, &ctx, errbuf, errlen);

	*out = NULL;
	if (rc != 0)
		return rc;
	return offsets_open(ops, ctx, out, errbuf, errlen);
}

int offsets_open_file(const char *path, struct offsets **out, char *errbuf, size_t errlen)
{
	return open_file(path, false, out, errbuf, errlen);
}

int offsets_open_file_held(const char *path, struct offsets **out, char *errbuf, size_t errlen)
{
	return open_file(path, true, out, errbuf, errlen);
}
