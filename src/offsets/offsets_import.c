/* offsets_import: Connect standalone's Java-serialized offsets file; see
 * offsets_import.h. The stream, as ObjectOutputStream writes the HashMap:
 *   AC ED 00 05                          magic, version
 *   73 72 <utf "java.util.HashMap"> <u8 serialVersionUID> <flags 03>
 *      <u2 nfields> {<type> <utf name>}  loadFactor F, threshold I
 *      78 70                             end of annotations, no superclass
 *   <the primitive fields' values>       4 + 4 bytes
 *   77 08 <s4 buckets> <s4 size>         block data of HashMap.writeObject
 *   size x (key, value)                  each 75 <class "[B"> <s4 len> bytes,
 *                                        or 70 (null), or 71 <handle>
 *   78                                   end of block data
 * The "[B" class is described once (72 ...) and referred to (71 <handle>)
 * after. */
#include "offsets/offsets_import.h"

#include "util/jsonint.h"
#include "offsets/offsets.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILE (OFFSETS_MAX_BYTES + 65536u)
#define HANDLE_BASE 0x7E0000u
#define MAX_HANDLES 1048576u

enum {
	TC_NULL = 0x70,
	TC_REFERENCE = 0x71,
	TC_CLASSDESC = 0x72,
	TC_OBJECT = 0x73,
	TC_ARRAY = 0x75,
	TC_BLOCKDATA = 0x77,
	TC_ENDBLOCKDATA = 0x78,
};

/* A byte array's span in the file, by handle (0 for other objects). */
struct span {
	size_t off, len;
	bool array;
};

struct reader {
	const unsigned char *p;
	size_t len, pos;
	struct span *handles;
	size_t nhandles, cap;
	bool bad;
	char why[160];
};

static void fail(struct reader *r, const char *what)
{
	if (!r->bad)
		snprintf(r->why, sizeof(r->why), "byte %zu: %s", r->pos, what);
	r->bad = true;
}

static uint64_t take(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->pos < n) {
		fail(r, "the file ends early");
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[r->pos++];
	return v;
}

static void expect(struct reader *r, unsigned byte, const char *what)
{
	if (take(r, 1) != byte && !r->bad) {
		r->pos--;
		fail(r, what);
	}
}

/* Registers the next handle (an array's span, or another object). */
static void new_handle(struct reader *r, bool array, size_t off, size_t len)
{
	if (r->nhandles == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct span *h = cap <= MAX_HANDLES ? realloc(r->handles, cap * sizeof(*h)) : NULL;

		if (h == NULL) {
			fail(r, "out of memory or too many objects");
			return;
		}
		r->handles = h;
		r->cap = cap;
	}
	r->handles[r->nhandles++] = (struct span){.off = off, .len = len, .array = array};
}

/* A modified-UTF-8 string (u2 length): compared with want, or skipped. */
static bool utf_is(struct reader *r, const char *want)
{
	size_t n = (size_t)take(r, 2), at = r->pos;

	if (r->bad || r->len - r->pos < n) {
		fail(r, "the file ends early");
		return false;
	}
	r->pos += n;
	return want == NULL || (strlen(want) == n && memcmp(r->p + at, want, n) == 0);
}

/* A class description named name with primitive fields only; adds their
 * sizes to *fields. */
static void class_desc(struct reader *r, const char *name, size_t *fields)
{
	static const char types[] = "BCDFIJSZ";
	static const unsigned char size[] = {1, 2, 8, 4, 4, 8, 2, 1};
	size_t n;

	expect(r, TC_CLASSDESC, "expected a class description");
	if (!utf_is(r, name))
		fail(r, name[0] == '[' ? "expected byte[] keys and values"
		                       : "expected a java.util.HashMap");
	(void)take(r, 8); /* serialVersionUID */
	(void)take(r, 1); /* flags */
	new_handle(r, false, 0, 0);
	n = (size_t)take(r, 2);
	for (size_t i = 0; i < n && !r->bad; i++) {
		const char *t = strchr(types, (int)take(r, 1));

		if (t == NULL || *t == '\0') {
			fail(r, "a field that is not a primitive");
			return;
		}
		*fields += size[t - types];
		(void)utf_is(r, NULL);
	}
	expect(r, TC_ENDBLOCKDATA, "expected the end of the class annotations");
	expect(r, TC_NULL, "expected no superclass");
}

/* One key or value: a byte[] (its span), a reference to one, or null. */
static bool byte_array(struct reader *r, struct span *out)
{
	uint64_t c = take(r, 1), h, n;
	size_t fields = 0;

	if (c == TC_NULL)
		return false;
	if (c == TC_REFERENCE) {
		h = take(r, 4) - HANDLE_BASE;
		if (h >= r->nhandles || !r->handles[h].array)
			fail(r, "a reference to something that is not a byte[]");
		else
			*out = r->handles[h];
		return !r->bad;
	}
	if (c != TC_ARRAY) {
		r->pos--;
		fail(r, "expected a byte[]");
		return false;
	}
	if (r->len > r->pos && r->p[r->pos] == TC_REFERENCE)
		(void)take(r, 1 + 4); /* the "[B" class described before */
	else
		class_desc(r, "[B", &fields);
	n = take(r, 4);
	if (!r->bad && (n > INT32_MAX || r->len - r->pos < n))
		fail(r, "a byte[] longer than the file");
	*out = (struct span){.off = r->pos, .len = (size_t)n, .array = true};
	new_handle(r, true, out->off, out->len);
	r->pos += r->bad ? 0 : (size_t)n;
	return !r->bad;
}

/* The stream's header up to the map's size. */
static size_t map_header(struct reader *r)
{
	size_t fields = 0, size;

	if (take(r, 2) != 0xACED || take(r, 2) != 5) {
		r->pos = 0;
		fail(r, "not a Java serialization stream (AC ED 00 05)");
	}
	expect(r, TC_OBJECT, "expected an object");
	class_desc(r, "java.util.HashMap", &fields);
	new_handle(r, false, 0, 0); /* the map */
	(void)take(r, fields);
	expect(r, TC_BLOCKDATA, "expected HashMap's block data");
	expect(r, 8, "expected 8 bytes of block data");
	(void)take(r, 4); /* buckets */
	size = (size_t)take(r, 4);
	if (!r->bad && size > OFFSETS_MAX_ENTRIES)
		fail(r, "more entries than the offset store holds");
	return r->bad ? 0 : size;
}

static char *text(const struct reader *r, const struct span *s)
{
	if (memchr(r->p + s->off, '\0', s->len) != NULL)
		return NULL;
	return strndup((const char *)r->p + s->off, s->len);
}

/* Hands one entry to fn; 0 or what fn returned (errbuf filled). */
static int hand(struct reader *r, const struct span *k, const struct span *v, offsets_import_fn fn,
                void *arg, const char *path, char *errbuf, size_t errlen)
{
	char *key = text(r, k), *val = v != NULL ? text(r, v) : NULL;
	int rc = OFFSETS_ERR_ARG;

	if (key != NULL && (v == NULL || val != NULL))
		rc = fn(arg, key, val, k->off, errbuf, errlen);
	else
		snprintf(errbuf, errlen,
		         "%s: the entry at byte %zu: a key or value with a NUL byte", path, k->off);
	free(key);
	free(val);
	return rc;
}

static int import(struct reader *r, offsets_import_fn fn, void *arg, const char *path,
                  size_t *count, char *errbuf, size_t errlen)
{
	size_t size = map_header(r);
	int rc = 0;

	for (size_t i = 0; i < size && !r->bad && rc == 0; i++) {
		struct span k, v;
		bool has_v;

		if (!byte_array(r, &k)) {
			fail(r, "a null or unreadable key");
			break;
		}
		has_v = byte_array(r, &v);
		if (!r->bad)
			rc = hand(r, &k, has_v ? &v : NULL, fn, arg, path, errbuf, errlen);
		*count += rc == 0 && !r->bad;
	}
	expect(r, TC_ENDBLOCKDATA, "expected the end of the map");
	if (rc == 0 && r->bad) {
		snprintf(errbuf, errlen, "%s: not a Kafka Connect offsets file skiff reads: %s",
		         path, r->why);
		rc = OFFSETS_ERR_CORRUPT;
	}
	return rc;
}

int offsets_import_connect(const char *path, offsets_import_fn fn, void *arg, size_t *count,
                           char *errbuf, size_t errlen)
{
	struct reader r = {0};
	unsigned char *buf = malloc(MAX_FILE + 1);
	FILE *f = fopen(path, "rb");
	int rc = OFFSETS_ERR_IO;

	*count = 0;
	if (buf == NULL || f == NULL) {
		int err = errno;

		snprintf(errbuf, errlen, "%s: %s", path,
		         buf == NULL ? "out of memory" : strerror(err));
		/* A path missing, or not readable, is a person's to fix, not
		 * something a retry mends. */
		rc = buf == NULL ? OFFSETS_ERR_NOMEM
		     : err == EIO || err == ENOMEM || err == EMFILE || err == ENFILE
		         ? OFFSETS_ERR_IO
		         : OFFSETS_ERR_ARG;
		goto out;
	}
	r.len = fread(buf, 1, MAX_FILE + 1, f);
	r.p = buf;
	if (ferror(f) || r.len > MAX_FILE) {
		snprintf(errbuf, errlen, "%s: %s", path,
		         ferror(f) ? "read error (a directory?)" : "too large");
		rc = ferror(f) && errno != EISDIR ? OFFSETS_ERR_IO : OFFSETS_ERR_ARG;
		goto out;
	}
	rc = import(&r, fn, arg, path, count, errbuf, errlen);
out:
	if (f != NULL)
		fclose(f);
	free(buf);
	free(r.handles);
	return rc;
}

/* How a walk over a file's characters ended (refill, walk). */
enum walk_end {
	WALK_OK = 0,
	WALK_ERR_SYS = -1,   /* a system call failed: errno says why */
	WALK_ERR_SHORT = -2, /* the file ends first */
	WALK_ERR_SPLIT = -3, /* the units end inside a character */
};

/* Refills b from fd so that it holds at least 4 bytes (a whole UTF-8
 * sequence) unless the file ends first. Returns WALK_OK, or WALK_ERR_SYS
 * with errno. */
static int refill(int fd, unsigned char *b, size_t cap, size_t *at, size_t *have, bool *eof)
{
	ssize_t got;

	if (*have >= 4 || *eof)
		return WALK_OK;
	memmove(b, b + *at, *have);
	*at = 0;
	while (*have < cap && !*eof) {
		got = read(fd, b + *have, cap - *have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return WALK_ERR_SYS;
		*eof = got == 0;
		*have += (size_t)got;
		if (*have >= 4)
			break;
	}
	return WALK_OK;
}

/* Walks fd's UTF-8 from its start over *left UTF-16 units; *bytes: where
 * they end, *left: the units not found. Returns a walk_end (WALK_ERR_SYS
 * with errno). */
static int walk(int fd, int64_t *left, int64_t *bytes)
{
	int64_t chars = *left;
	unsigned char b[65536];
	size_t at = 0, have = 0, n, skip, units;
	bool eof = false;
	int rc;

	*bytes = 0;
	while (chars > 0) {
		if ((rc = refill(fd, b, sizeof(b), &at, &have, &eof)) != WALK_OK)
			return rc;
		if (have == 0)
			return WALK_ERR_SHORT;
		n = utf8_ascii_run((const char *)b + at, have);
		n = (int64_t)n < chars ? n : (size_t)chars;
		units = n;
		if (n == 0) {
			/* A 4-byte sequence is a surrogate pair: two chars; a
			 * malformed one is one U+FFFD, as Java decodes it. */
			n = utf8_seq(b + at, have, &skip);
			units = n == 4 ? 2 : 1;
			n = n != 0 ? n : skip;
			if ((int64_t)units > chars)
				return WALK_ERR_SPLIT;
		}
		chars -= (int64_t)units;
		*left = chars;
		*bytes += (int64_t)n;
		at += n;
		have -= n;
	}
	return WALK_OK;
}

int offsets_import_position(const char *path, int64_t from, int64_t chars, int64_t *bytes,
                            char *errbuf, size_t errlen)
{
	int64_t left = chars, walked = 0;
	int fd = -1, rc = WALK_OK, sys = 0;

	*bytes = from;
	if (chars <= 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = WALK_ERR_SYS;
		sys = errno;
	} else if (from > 0 && lseek(fd, (off_t)from, SEEK_SET) != (off_t)from) {
		rc = WALK_ERR_SYS;
		sys = EIO;
	}
	if (rc == WALK_OK && (rc = walk(fd, &left, &walked)) == WALK_ERR_SYS)
		sys = errno;
	*bytes = from + walked;
	if (rc == WALK_ERR_SHORT)
		snprintf(
		    errbuf, errlen,
		    "%s: holds %lld characters (as Connect counts them, UTF-16 units; %lld "
		    "bytes) from byte %lld, fewer than Connect's position %lld characters: not "
		    "the file Connect read (truncated or replaced since)",
		    path, (long long)(chars - left), (long long)(*bytes - from), (long long)from,
		    (long long)chars);
	else if (rc == WALK_ERR_SPLIT)
		snprintf(errbuf, errlen,
		         "%s: Connect's position %lld ends inside a character (at byte %lld): not "
		         "the file Connect read",
		         path, (long long)(from + chars), (long long)*bytes);
	else if (rc != 0)
		snprintf(errbuf, errlen,
		         "%s: %s: Connect's position %lld counts characters, which only the file "
		         "can turn into bytes",
		         path, strerror(sys), (long long)(from + chars));
	if (fd >= 0)
		close(fd);
	if (rc == WALK_OK)
		return 0;
	return rc == WALK_ERR_SYS && (sys == EIO || sys == ENOMEM) ? OFFSETS_ERR_IO
	                                                           : OFFSETS_ERR_ARG;
}

/* offsets_import.h */
int offsets_import_value(const char *path, int64_t from, const char *value, char *out, size_t len,
                         char *errbuf, size_t errlen)
{
	int64_t pos, bytes;
	int rc;

	if (jsonint_get(value, "position", &pos) != 0 || pos < 0) {
		snprintf(errbuf, errlen, "%s: the offset %.200s has no position", path, value);
		return OFFSETS_ERR_ARG;
	}
	if (pos < from) {
		/* A task only counts up from where it started: this one was set
		 * by hand (KIP-875), and a task skips it in bytes. */
		bytes = pos;
		rc = 0;
	} else {
		rc = offsets_import_position(path, from, pos - from, &bytes, errbuf, errlen);
	}
	if (rc == 0 && (size_t)snprintf(out, len, "{\"position\":%lld}", (long long)bytes) >= len) {
		snprintf(errbuf, errlen, "%s: no room for the position", path);
		rc = OFFSETS_ERR_ARG;
	}
	return rc;
}

/* offsets_import.h */
int offsets_import_line_start(const char *path, int64_t pos, int64_t *start, char *errbuf,
                              size_t errlen)
{
	unsigned char buf[4096];
	int64_t end = pos;
	unsigned char next = 0; /* the byte at pos, 0: none (the end) */
	int fd = -1, sys = 0;   /* sys: the errno of a failure, 0 for none */
	ssize_t n;

	*start = pos;
	if (pos <= 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &next, 1, (off_t)pos) < 0) {
		sys = errno;
		goto out;
	}
	/* From pos back: the first byte that ends a line, but not the \r of a
	 * \r\n that pos splits. */
	while (end > 0) {
		int64_t from = end > (int64_t)sizeof(buf) ? end - (int64_t)sizeof(buf) : 0;

		n = pread(fd, buf, (size_t)(end - from), (off_t)from);
		if (n != (ssize_t)(end - from)) {
			sys = n < 0 ? errno : EIO;
			goto out;
		}
		for (int64_t i = end - from - 1; i >= 0; i--) {
			int64_t at = from + i;
			bool ends =
			    buf[i] == '\n' || (buf[i] == '\r' && !(at == pos - 1 && next == '\n'));

			if (ends) {
				*start = at + 1;
				goto out;
			}
		}
		end = from;
	}
	*start = 0;
out:
	if (sys != 0)
		snprintf(errbuf, errlen, "%s: %s: cannot find the start of the line at byte %lld",
		         path, strerror(sys), (long long)pos);
	if (fd >= 0)
		close(fd);
	return sys == 0 ? 0 : OFFSETS_ERR_IO;
}
