/* offsets_log: the journal of the file backend; see offsets_log.h. */
#include "offsets/offsets_log.h"

#include "util/atomicfile.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/jsonspan.h"
#include "util/num.h"
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "offsets/offsets_scan.h"
#include "util/rstr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define LOG_VERSION 1
#define CRC_TAIL 10 /* \t, 8 hex digits, \n */
/* The longest log replay reads: compaction keeps it near 4x the store. */
#define LOG_READ_MAX ((size_t)OFFSETS_MAX_BYTES * 5)
#define WHY_LEN 256

struct offsets_log {
	char *name;
	int fd; /* open for appending, -1 */
	uint64_t size;
	/* The shadow: what the log or the base last made durable, the store's
	 * own strings held (util/rstr.h), not copies: an idle file's key and
	 * value are one string each, whether 20 or 20,000 of them. */
	struct hash index; /* key -> position in keys/vals */
	const char **keys, **vals;
	size_t n, cap;
};

int offsets_log_new(const char *path, struct offsets_log **out)
{
	struct offsets_log *lg = calloc(1, sizeof(*lg));

	*out = NULL;
	if (lg == NULL || asprintf(&lg->name, "%s.log", path) < 0) {
		free(lg);
		return OFFSETS_ERR_NOMEM;
	}
	lg->fd = -1;
	hash_init(&lg->index);
	*out = lg;
	return 0;
}

static void shadow_clear(struct offsets_log *lg)
{
	for (size_t i = 0; i < lg->n; i++) {
		rstr_drop(lg->keys[i]);
		rstr_drop(lg->vals[i]);
	}
	lg->n = 0;
	hash_clear(&lg->index);
}

void offsets_log_free(struct offsets_log *lg)
{
	if (lg == NULL)
		return;
	if (lg->fd >= 0)
		close(lg->fd);
	shadow_clear(lg);
	hash_free(&lg->index);
	free((void *)lg->keys);
	free((void *)lg->vals);
	free(lg->name);
	free(lg);
}

uint64_t offsets_log_size(const struct offsets_log *lg)
{
	return lg->size;
}

/* ---- the shadow ---------------------------------------------------------- */

/* Adds key with val to the shadow: the store's strings (offsets_key,
 * offsets_value), held. */
static int shadow_add(struct offsets_log *lg, const char *key, const char *val)
{
	if (lg->n == lg->cap) {
		size_t cap = lg->cap ? lg->cap * 2 : 16;
		const char **keys = realloc((void *)lg->keys, cap * sizeof(*keys)), **vals;

		if (keys == NULL)
			return OFFSETS_ERR_NOMEM;
		lg->keys = keys;
		if ((vals = realloc((void *)lg->vals, cap * sizeof(*vals))) == NULL)
			return OFFSETS_ERR_NOMEM;
		lg->vals = vals;
		lg->cap = cap;
	}
	if (hash_put(&lg->index, key, lg->n) != 0)
		return OFFSETS_ERR_NOMEM;
	lg->keys[lg->n] = rstr_hold(key);
	lg->vals[lg->n++] = rstr_hold(val);
	return 0;
}

int offsets_log_reset(struct offsets_log *lg, const struct offsets *o)
{
	shadow_clear(lg);
	for (size_t i = 0; i < offsets_count(o); i++)
		if (shadow_add(lg, offsets_key(o, i), offsets_value(o, i)) != 0) {
			shadow_clear(lg);
			return OFFSETS_ERR_NOMEM;
		}
	return 0;
}

size_t offsets_log_shadow_count(const struct offsets_log *lg)
{
	return lg->n;
}

const char *offsets_log_shadow_key(const void *lg, size_t i)
{
	return ((const struct offsets_log *)lg)->keys[i];
}

const char *offsets_log_shadow_value(const void *lg, size_t i)
{
	return ((const struct offsets_log *)lg)->vals[i];
}

/* The shadow's value for key, or NULL. */
static const char *shadow_get(const struct offsets_log *lg, const char *key)
{
	size_t i;

	return hash_get(&lg->index, key, &i) ? lg->vals[i] : NULL;
}

/* ---- replay -------------------------------------------------------------- */

/* A whole number in [min, max]. */
static bool whole(const cJSON *j, double min, double max)
{
	return cJSON_IsNumber(j) && j->valuedouble >= min && j->valuedouble <= max &&
	       floor(j->valuedouble) == j->valuedouble;
}

/* Checks the CRC of the line [p, p+len) (without its newline). */
static bool crc_ok(const char *p, size_t len)
{
	uint32_t stored = 0;

	if (len < CRC_TAIL || p[len - 9] != '\t')
		return false;
	for (size_t i = len - 8; i < len; i++) {
		int v = p[i] >= 'A' && p[i] <= 'F' ? -1 : num_hex_digit(p[i]);

		if (v < 0)
			return false;
		stored = stored << 4 | (uint32_t)v;
	}
	return crc32c(0, p, len - 9) == stored;
}

/* One entry's key and value as written in a record (value "null": removed). */
struct span {
	const char *k, *v;
	size_t klen, vlen;
};

/* Cuts the entries out of the record text [p, p+len), as written (cJSON
 * would round integers above 2^53): *out (free()), *n of them, which must be
 * as many as cJSON counted (want). Returns 0, OFFSETS_ERR_ARG when the text
 * cannot be cut so (whitespace cJSON skips and jsonspan does not, say), or
 * OFFSETS_ERR_NOMEM. */
static int cut(const char *p, size_t len, int want, struct span **out, size_t *n)
{
	const char *arr, *e;
	size_t alen, elen, cur = 0;
	struct span *sp = calloc((size_t)want + 1, sizeof(*sp));

	*out = sp;
	*n = 0;
	if (sp == NULL)
		return OFFSETS_ERR_NOMEM;
	if (!jsonspan_member(p, len, "offsets", &arr, &alen))
		return OFFSETS_ERR_ARG;
	while (jsonspan_array_next(arr, alen, &cur, &e, &elen)) {
		if (*n == (size_t)want ||
		    !jsonspan_member(e, elen, "key", &sp[*n].k, &sp[*n].klen) ||
		    !jsonspan_member(e, elen, "value", &sp[*n].v, &sp[*n].vlen))
			return OFFSETS_ERR_ARG;
		(*n)++;
	}
	return *n == (size_t)want ? 0 : OFFSETS_ERR_ARG;
}

/* Applies the cut entries, all of them (a failure here is the store's:
 * out of memory or over its limits). */
static int apply(struct offsets *o, const struct span *sp, size_t n)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool null = sp[i].vlen == 4 && memcmp(sp[i].v, "null", 4) == 0;
		char *ks = strndup(sp[i].k, sp[i].klen),
		     *vs = null ? NULL : strndup(sp[i].v, sp[i].vlen);

		rc = ks == NULL || (vs == NULL && !null) ? OFFSETS_ERR_NOMEM
		                                         : offsets_load_record(o, ks, vs);
		free(ks);
		free(vs);
	}
	return rc;
}

enum verdict { APPLY, SKIP, STOP, NEWER };

enum { LOG, BASE, GENERATION };

/* Judges one complete line (without its newline), parsed piece by piece
 * (offsets_scan.h): a record of 20,000 offsets is 20 MB as one tree. Every
 * entry's shape is checked before any is applied: a record is applied
 * whole or not at all. */
static enum verdict judge(const char *p, size_t len, uint64_t base, uint64_t last, uint64_t *gen,
                          int *entries)
{
	static const char *const names[] = {"log", "base", "generation"};
	struct offsets_scan sc;
	const cJSON *ver, *b, *g;
	enum verdict v = STOP;

	if (!crc_ok(p, len) || memchr(p, '\0', len) != NULL ||
	    !offsets_scan(p, len - 9, names, 3, true, &sc))
		return STOP;
	ver = sc.member[LOG];
	b = sc.member[BASE];
	g = sc.member[GENERATION];
	if (whole(ver, LOG_VERSION + 1, INT32_MAX))
		v = NEWER;
	else if (whole(ver, LOG_VERSION, LOG_VERSION) && whole(b, 1, 9007199254740992.0) &&
	         whole(g, 1, 9007199254740992.0) && sc.has_offsets && sc.bad < 0 &&
	         sc.nentries <= OFFSETS_MAX_ENTRIES) {
		*gen = (uint64_t)g->valuedouble;
		*entries = sc.nentries;
		v = (uint64_t)b->valuedouble != base ? SKIP : *gen > last ? APPLY : STOP;
	}
	offsets_scan_free(&sc);
	return v;
}

/* Walks the log's bytes; see offsets_log_replay. */
static int walk(const char *d, size_t len, struct offsets *o, uint64_t base, uint64_t *generation,
                size_t *ignored, char *why, size_t whylen)
{
	size_t at = 0, applied_end = 0;
	uint64_t last = base, gen = 0;
	int rc = 0, line = 0;

	while (at < len) {
		const char *nl = memchr(d + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (d + at)) : 0;
		int want = 0;
		enum verdict v = nl ? judge(d + at, n, base, last, &gen, &want) : STOP;
		struct span *sp = NULL;
		size_t ns = 0;

		line++;
		if (v == NEWER) {
			snprintf(why, whylen,
			         "written by a newer skiff (a log version above %d); "
			         "run a skiff that reads it",
			         LOG_VERSION);
			return OFFSETS_ERR_CORRUPT;
		}
		if (v == APPLY && (rc = cut(d + at, n - 9, want, &sp, &ns)) != 0) {
			free(sp);
			if (rc != OFFSETS_ERR_ARG)
				return rc;
			v = STOP;
		}
		if (v == STOP) {
			if (nl != NULL)
				snprintf(why, whylen, "record %d is damaged or out of order", line);
			break;
		}
		if (v == APPLY) {
			rc = apply(o, sp, ns);
			free(sp);
			if (rc != 0) {
				snprintf(why, whylen, "record %d: %s", line, offsets_strerror(rc));
				return rc == OFFSETS_ERR_NOMEM ? rc : OFFSETS_ERR_CORRUPT;
			}
			last = gen;
			applied_end = at + n + 1;
		}
		at += n + 1;
	}
	*generation = last;
	*ignored = len - applied_end;
	return 0;
}

int offsets_log_replay(struct offsets_log *lg, struct offsets *o, uint64_t base,
                       uint64_t *generation, size_t *ignored, char *why, size_t whylen)
{
	char *data = NULL, rwhy[WHY_LEN];
	size_t len = 0;
	int rc = atomicfile_read(lg->name, LOG_READ_MAX, &data, &len, rwhy, sizeof(rwhy));

	*ignored = 0;
	*why = '\0';
	lg->size = 0;
	if (rc == ATOMICFILE_ERR_NOENT)
		return 0;
	if (rc != 0) {
		snprintf(why, whylen, "offset store %s: %s", lg->name, rwhy);
		return rc == ATOMICFILE_ERR_NOMEM ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_IO;
	}
	lg->size = len;
	*rwhy = '\0';
	rc = walk(data, len, o, base, generation, ignored, rwhy, sizeof(rwhy));
	if (rc != 0)
		snprintf(why, whylen, "offset store %s: %s", lg->name, rwhy);
	else if (*rwhy != '\0')
		snprintf(why, whylen, "%s", rwhy);
	free(data);
	return rc;
}

/* ---- append -------------------------------------------------------------- */

/* Appends s (n bytes) to the record being built in *buf. */
static int put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = (*len + n + 1) * 2;
		char *b = realloc(*buf, c);

		if (b == NULL)
			return OFFSETS_ERR_NOMEM;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	return 0;
}

static int put_entry(char **buf, size_t *len, size_t *cap, bool *first, const char *k,
                     const char *v)
{
	int rc = put(buf, len, cap, *first ? "{\"key\":" : ",{\"key\":", *first ? 7 : 8);

	*first = false;
	if (rc == 0)
		rc = put(buf, len, cap, k, strlen(k));
	if (rc == 0)
		rc = put(buf, len, cap, ",\"value\":", 9);
	if (rc == 0)
		rc = put(buf, len, cap, v, strlen(v));
	return rc == 0 ? put(buf, len, cap, "}", 1) : rc;
}

/* The entries of o to compare with the shadow: *idx[0..*n) when o knows
 * what changed since it was last written (offsets_changed) and that fits
 * the shadow - as many entries as the shadow holds plus those of the list
 * it does not, so none was removed - else NULL: all of them. */
static const uint32_t *changed_only(const struct offsets_log *lg, const struct offsets *o,
                                    size_t *n)
{
	const uint32_t *idx;
	size_t added = 0, at;

	if (!offsets_changed(o, &idx, n))
		return NULL;
	for (size_t k = 0; k < *n; k++)
		added += !hash_get(&lg->index, offsets_key(o, idx[k]), &at);
	return lg->n + added == offsets_count(o) ? idx : NULL;
}

/* The record of what o changed since the shadow, into *buf (free()): from
 * o's list of changes (changed_only) when it has one, so that a flush costs
 * what changed, not the store; else comparing every entry. */
static int build(const struct offsets_log *lg, const struct offsets *o, uint64_t base, uint64_t gen,
                 char **buf, size_t *len)
{
	size_t cap = 0, present = 0, nchg = 0;
	const uint32_t *chg = changed_only(lg, o, &nchg);
	bool first = true;
	char head[96], tail[16];
	int rc, hl = snprintf(head, sizeof(head),
	                      "{\"log\":%d,\"base\":%" PRIu64 ",\"generation\":%" PRIu64
	                      ",\"offsets\":[",
	                      LOG_VERSION, base, gen);

	*buf = NULL;
	*len = 0;
	rc = put(buf, len, &cap, head, (size_t)hl);
	for (size_t j = 0; rc == 0 && j < (chg != NULL ? nchg : offsets_count(o)); j++) {
		size_t i = chg != NULL ? chg[j] : j;
		const char *k = offsets_key(o, i), *v = offsets_value(o, i),
		           *was = shadow_get(lg, k);

		present += was != NULL;
		if (was == NULL || (was != v && strcmp(was, v) != 0))
			rc = put_entry(buf, len, &cap, &first, k, v);
	}
	/* Keys gone since (a KIP-875 reset): null. Looked for only when some
	 * are (with a list of changes, none is: changed_only). */
	for (size_t i = 0; rc == 0 && chg == NULL && present < lg->n && i < lg->n; i++)
		if (offsets_get(o, lg->keys[i]) == NULL)
			rc = put_entry(buf, len, &cap, &first, lg->keys[i], "null");
	if (rc == 0)
		rc = put(buf, len, &cap, "]}", 2);
	if (rc == 0) {
		snprintf(tail, sizeof(tail), "\t%08" PRIx32 "\n", crc32c(0, *buf, *len));
		rc = put(buf, len, &cap, tail, CRC_TAIL);
	}
	return rc;
}

static int fsync_dir(const char *name)
{
	char *slash = strrchr(name, '/');
	char *dir = slash == NULL   ? strdup(".")
	            : slash == name ? strdup("/")
	                            : strndup(name, (size_t)(slash - name));
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, rc = -1;

	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	free(dir);
	return rc;
}

/* Opens the log for appending; *created when this made the file. */
static int open_log(struct offsets_log *lg, bool *created)
{
	*created = false;
	if (lg->fd >= 0)
		return 0;
	/* 0600 as the store itself: it reveals paths and positions. */
	lg->fd = open(lg->name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (lg->fd >= 0) {
		*created = true;
		lg->size = 0;
		return 0;
	}
	if (errno == EEXIST)
		lg->fd = open(lg->name, O_WRONLY | O_APPEND | O_CLOEXEC);
	return lg->fd >= 0 ? 0 : -1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Makes the shadow what the record just written (build) says: the
 * entries of o's list of changes when build used it, else all. */
static int shadow_update(struct offsets_log *lg, const struct offsets *o)
{
	size_t nchg = 0;
	const uint32_t *chg = changed_only(lg, o, &nchg);

	for (size_t j = 0; j < (chg != NULL ? nchg : offsets_count(o)); j++) {
		size_t i = chg != NULL ? chg[j] : j, at;
		const char *k = offsets_key(o, i), *v = offsets_value(o, i);

		if (!hash_get(&lg->index, k, &at)) {
			if (shadow_add(lg, k, v) != 0)
				return OFFSETS_ERR_NOMEM;
			continue;
		}
		if (lg->vals[at] == v)
			continue;
		rstr_drop(lg->vals[at]);
		lg->vals[at] = rstr_hold(v);
	}
	return lg->n != offsets_count(o) ? offsets_log_reset(lg, o) : 0;
}

int offsets_log_append(struct offsets_log *lg, const struct offsets *o, uint64_t base, uint64_t gen,
                       char *errbuf, size_t errlen)
{
	char *rec = NULL;
	const char *step = "open";
	size_t len = 0;
	bool created = false;
	int rc = build(lg, o, base, gen, &rec, &len);

	if (rc != 0) {
		snprintf(errbuf, errlen, "offset store %s: out of memory", lg->name);
		goto out;
	}
	rc = OFFSETS_ERR_IO;
	if (open_log(lg, &created) != 0)
		goto fail;
	step = "write";
	if (write_all(lg->fd, rec, len) != 0)
		goto fail;
	step = "fsync";
	if (fsync(lg->fd) != 0)
		goto fail;
	lg->size += len;
	step = "fsync directory of";
	if (created && fsync_dir(lg->name) != 0)
		goto fail;
	rc = shadow_update(lg, o);
	if (rc != 0)
		snprintf(errbuf, errlen, "offset store %s: out of memory", lg->name);
	goto out;
fail:
	snprintf(errbuf, errlen, "%s %s: %s", step, lg->name, strerror(errno));
	/* The tail is unknown now (after a failed fsync the kernel may have
	 * dropped the pages): never append behind it. */
	if (lg->fd >= 0)
		close(lg->fd);
	lg->fd = -1;
out:
	free(rec);
	return rc;
}

bool offsets_log_moved(const struct offsets_log *lg)
{
	struct stat at, held;

	if (stat(lg->name, &at) != 0)
		return lg->fd >= 0 || lg->size > 0; /* gone, with records in it */
	if (lg->fd < 0)
		return false;
	return fstat(lg->fd, &held) != 0 || held.st_nlink == 0 || held.st_dev != at.st_dev ||
	       held.st_ino != at.st_ino;
}

int offsets_log_drop(struct offsets_log *lg, char *errbuf, size_t errlen)
{
	if (lg->fd >= 0)
		close(lg->fd);
	lg->fd = -1;
	lg->size = 0;
	if (unlink(lg->name) != 0 && errno != ENOENT) {
		snprintf(errbuf, errlen, "unlink %s: %s", lg->name, strerror(errno));
		return OFFSETS_ERR_IO;
	}
	return 0;
}
