/* props: the .properties reader. The line splitting and the key/value split
 * are ports of java.util.Properties (LineReader.readLine, load0, loadConvert)
 * so that quirks match Java byte for byte; tests/props/compare.sh checks a
 * corpus against the JVM.
 *
 * All syntax characters are ASCII and UTF-8 never uses ASCII bytes inside a
 * multi-byte sequence, so once the input is known to be valid UTF-8 the Java
 * algorithms can run on bytes unchanged. */
#include "config/props.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/num.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	char *key;
	char *value;
	int line;
	bool secret; /* props_set_value: from a config provider */
};

struct props {
	char *name;
	struct entry *ents; /* in order of first appearance */
	size_t n, cap;
	struct hash index; /* key -> position in ents */
};

/* Where a natural line starts inside the logical line, for error messages. */
struct mark {
	size_t off;
	int line;
};

struct reader {
	const char *name;
	const unsigned char *p, *end;
	int line;     /* natural line of *p */
	bool prev_cr; /* the byte before *p was '\r' (a following '\n' ends no line) */
	/* The logical line, escapes still encoded (Java's lineBuf); never
	 * larger than the input, which is at most PROPS_MAX_FILE_BYTES. */
	struct buf lb;
	struct mark *marks;
	size_t nmarks, capmarks;
	char *errbuf;
	size_t errlen;
	bool nomem; /* the failure was out of memory (PROPS_ERR_NOMEM) */
};

/* The decoded form of a key or value under construction. */
struct out {
	struct buf b;
	unsigned high;  /* a high surrogate from a \u escape waiting for its pair, or 0 */
	size_t high_at; /* its offset in the logical line */
};

static void errorf(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void errorf(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

static int oom(struct reader *r)
{
	errorf(r->errbuf, r->errlen, "%s: out of memory", r->name);
	r->nomem = true;
	return -1;
}

/* ---- input validation ---- */

/* Java decodes the whole file, comments included, before parsing; so do we. */
static int check_utf8(const char *name, const unsigned char *s, size_t n, char *errbuf,
                      size_t errlen)
{
	int line = 1;
	size_t i = 0, len, skip;

	while (i < n) {
		/* Java's strict decoder: a malformed sequence is an error. */
		len = utf8_seq(s + i, n - i, &skip);
		if (len == 0) {
			errorf(errbuf, errlen, "%s:%d: invalid UTF-8", name, line);
			return -1;
		}
		if (s[i] == '\r' || (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')))
			line++;
		i += len;
	}
	return 0;
}

/* ---- logical lines (Java's LineReader.readLine) ---- */

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

static bool is_eol(unsigned char c)
{
	return c == '\n' || c == '\r';
}

static unsigned char next_byte(struct reader *r)
{
	unsigned char c = *r->p++;

	if (c == '\r' || (c == '\n' && !r->prev_cr))
		r->line++;
	r->prev_cr = c == '\r';
	return c;
}

/* Consumes a comment up to and including its line terminator. Returns false
 * when the comment runs to the end of the input. */
static bool skip_comment(struct reader *r)
{
	while (r->p < r->end)
		if (is_eol(next_byte(r)))
			return true;
	return false;
}

static int append(struct reader *r, unsigned char c, int line)
{
	/* Content dropped by a bare "\" line or a comment restarts the line. */
	if (buf_len(&r->lb) == 0)
		r->nmarks = 0;
	if (r->nmarks == 0 || r->marks[r->nmarks - 1].line != line) {
		if (r->nmarks == r->capmarks) {
			size_t cap = r->capmarks ? r->capmarks * 2 : 8;
			struct mark *m = realloc(r->marks, cap * sizeof(*m));

			if (m == NULL)
				return oom(r);
			r->marks = m;
			r->capmarks = cap;
		}
		r->marks[r->nmarks].off = buf_len(&r->lb);
		r->marks[r->nmarks++].line = line;
	}
	if (buf_addc(&r->lb, (char)c) != 0)
		return oom(r);
	return 0;
}

/* The natural line holding offset off of the logical line. */
static int line_at(const struct reader *r, size_t off)
{
	size_t i = r->nmarks;

	while (i > 1 && r->marks[i - 1].off > off)
		i--;
	return r->marks[i - 1].line;
}

/* Reads the next logical line into r->lb. Returns 1, 0 at end of input, or -1
 * (out of memory, errbuf set). Like Java, a line ending in an odd number of
 * backslashes continues on the next one and a trailing one at the end of the
 * input is dropped; a blank or comment line ends a continuation. */
static int read_line(struct reader *r)
{
	bool skip_ws = true, appended = false, bs = false, skip_lf = false;

	buf_reset(&r->lb);
	for (;;) {
		int line = r->line;
		unsigned char c;

		if (r->p == r->end)
			break;
		c = next_byte(r);
		if (skip_lf) {
			skip_lf = false;
			if (c == '\n')
				continue;
		}
		if (skip_ws) {
			if (is_blank(c) || (!appended && is_eol(c)))
				continue;
			skip_ws = false;
			appended = false;
		}
		if (buf_len(&r->lb) == 0 && (c == '#' || c == '!')) {
			if (!skip_comment(r))
				return 0;
			skip_ws = true;
			continue;
		}
		if (!is_eol(c)) {
			if (append(r, c, line) != 0)
				return -1;
			bs = c == '\\' ? !bs : false;
			continue;
		}
		if (buf_len(&r->lb) == 0) {
			skip_ws = true;
			continue;
		}
		/* Java returns at once when the terminator is the last byte, so
		 * "\\\n" at the very end is an entry with an empty key. */
		if (!bs || r->p == r->end)
			break;
		buf_truncate(&r->lb, buf_len(&r->lb) - 1);
		skip_ws = appended = true;
		bs = false;
		skip_lf = c == '\r';
	}
	if (buf_len(&r->lb) == 0)
		return 0;
	if (bs)
		buf_truncate(&r->lb, buf_len(&r->lb) - 1);
	return 1;
}

/* ---- key, value and escapes (Java's load0 and loadConvert) ---- */

/* Finds the end of the key and the start of the value in s[0..n). The first
 * unescaped '=', ':' or blank ends the key; blanks around it and one '=' or
 * ':' after blanks are skipped. */
static void split(const char *s, size_t n, size_t *keylen, size_t *vstart)
{
	size_t k, v = n;
	bool sep = false, bs = false;

	for (k = 0; k < n; k++) {
		if (!bs && (s[k] == '=' || s[k] == ':')) {
			v = k + 1;
			sep = true;
			break;
		}
		if (!bs && is_blank((unsigned char)s[k])) {
			v = k + 1;
			break;
		}
		bs = s[k] == '\\' ? !bs : false;
	}
	for (; v < n; v++) {
		if (is_blank((unsigned char)s[v]))
			continue;
		if (sep || (s[v] != '=' && s[v] != ':'))
			break;
		sep = true;
	}
	*keylen = k;
	*vstart = v;
}

static int fail_at(struct reader *r, size_t off, const char *why, unsigned unit)
{
	errorf(r->errbuf, r->errlen, "%s:%d: %s", r->name, line_at(r, off), why);
	if (unit != 0 && r->errbuf != NULL) {
		size_t len = strlen(r->errbuf);

		if (len < r->errlen)
			snprintf(r->errbuf + len, r->errlen - len, " \\u%04X", unit);
	}
	return -1;
}

static int put_utf8(struct reader *r, struct out *o, uint32_t cp)
{
	char s[4];
	int n, i;

	if (cp < 0x80) {
		s[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		s[0] = (char)(0xC0 | cp >> 6);
		n = 2;
	} else if (cp < 0x10000) {
		s[0] = (char)(0xE0 | cp >> 12);
		n = 3;
	} else {
		s[0] = (char)(0xF0 | cp >> 18);
		n = 4;
	}
	for (i = n - 1; i > 0; i--, cp >>= 6)
		s[i] = (char)(0x80 | (cp & 0x3F));
	for (i = 0; i < n; i++)
		if (buf_addc(&o->b, s[i]) != 0)
			return oom(r);
	return 0;
}

/* Adds one UTF-16 code unit from a \u escape at offset at, pairing surrogates.
 * Java keeps lone surrogates and U+0000 in its strings; UTF-8 C strings
 * cannot, so they are errors. */
static int put_unit(struct reader *r, struct out *o, unsigned u, size_t at)
{
	bool low = u >= 0xDC00 && u <= 0xDFFF;

	if (o->high != 0) {
		unsigned high = o->high;

		if (!low)
			return fail_at(r, o->high_at, "unpaired surrogate", high);
		o->high = 0;
		return put_utf8(r, o, 0x10000 + ((uint32_t)(high - 0xD800) << 10) + (u - 0xDC00));
	}
	if (u >= 0xD800 && u <= 0xDBFF) {
		o->high = u;
		o->high_at = at;
		return 0;
	}
	if (low)
		return fail_at(r, at, "unpaired surrogate", u);
	if (u == 0)
		return fail_at(r, at, "NUL character (\\u0000) not supported", 0);
	return put_utf8(r, o, u);
}

/* Adds one byte of the file (or of a "\c" escape) at offset at. */
static int put_byte(struct reader *r, struct out *o, char c, size_t at)
{
	if (o->high != 0)
		return fail_at(r, o->high_at, "unpaired surrogate", o->high);
	if (c == '\0')
		return fail_at(r, at, "NUL character not supported", 0);
	if (buf_addc(&o->b, c) != 0)
		return oom(r);
	return 0;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0, d; i < 4; i++) {
		if ((d = num_hex_digit(s[i])) < 0)
			return -1;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

static char unescape(char c)
{
	switch (c) {
	case 't':
		return '\t';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 'f':
		return '\f';
	default:
		return c;
	}
}

/* Decodes the escapes in r->lb[off, off + n) into a new UTF-8 string *res
 * (caller frees). Returns 0 or -1 with errbuf set. */
static int convert(struct reader *r, size_t off, size_t n, char **res)
{
	struct out o = {.high = 0};
	const char *s = buf_ptr(&r->lb);
	size_t i = off, end = off + n, at;
	unsigned u;
	int rc = -1;

	buf_init(&o.b, PROPS_MAX_FILE_BYTES);
	while (i < end) {
		at = i;
		if (s[i] != '\\') {
			if (put_byte(r, &o, s[i++], at) != 0)
				goto out;
			continue;
		}
		/* read_line never leaves an unescaped '\' last (Java relies on
		 * it too); the test only keeps a broken invariant in bounds. */
		if (++i == end)
			break;
		if (s[i] != 'u') {
			if (put_byte(r, &o, unescape(s[i++]), at) != 0)
				goto out;
			continue;
		}
		if (end - i < 5 || hex4(s + i + 1, &u) != 0) {
			fail_at(r, at, "malformed \\uxxxx encoding", 0);
			goto out;
		}
		i += 5;
		if (put_unit(r, &o, u, at) != 0)
			goto out;
	}
	if (o.high != 0) {
		fail_at(r, o.high_at, "unpaired surrogate", o.high);
		goto out;
	}
	if (buf_take(&o.b, res, NULL) != 0) {
		oom(r);
		goto out;
	}
	rc = 0;
out:
	buf_free(&o.b);
	return rc;
}

/* ---- the table ---- */

/* Makes room for one more entry. */
static int grow(struct props *p)
{
	size_t cap = p->cap ? p->cap * 2 : 16;
	struct entry *ents;

	if (p->n < p->cap)
		return 0;
	ents = realloc(p->ents, cap * sizeof(*ents));
	if (ents == NULL)
		return -1;
	p->ents = ents;
	p->cap = cap;
	return 0;
}

/* Sets key to value, both taken over on success (key is freed when already
 * present). On failure (out of memory) takes nothing. */
static int put(struct props *p, char *key, char *value, int line)
{
	size_t i;
	struct entry *e;

	if (hash_get(&p->index, key, &i)) {
		e = &p->ents[i];
		free(key);
		free(e->value);
	} else {
		if (grow(p) != 0 || hash_put(&p->index, key, p->n) != 0)
			return -1;
		e = &p->ents[p->n++];
		e->key = key;
	}
	e->value = value;
	e->line = line;
	e->secret = false;
	return 0;
}

static int parse_line(struct reader *r, struct props *p)
{
	size_t klen, vstart;
	char *key = NULL, *value = NULL;
	int rc = -1;

	split(buf_ptr(&r->lb), buf_len(&r->lb), &klen, &vstart);
	if (convert(r, 0, klen, &key) != 0 ||
	    convert(r, vstart, buf_len(&r->lb) - vstart, &value) != 0)
		goto out;
	if (put(p, key, value, r->marks[0].line) != 0) {
		oom(r);
		goto out;
	}
	key = value = NULL;
	rc = 0;
out:
	free(key);
	free(value);
	return rc;
}

/* ---- public ---- */

int props_load_mem(const char *name, const char *data, size_t len, struct props **out, char *errbuf,
                   size_t errlen)
{
	struct reader r = {0};
	struct props *p = NULL;
	int rc = PROPS_ERR, got;

	*out = NULL;
	if (len > PROPS_MAX_FILE_BYTES) {
		errorf(errbuf, errlen, "%s: file too large (limit %d bytes)", name,
		       PROPS_MAX_FILE_BYTES);
		goto out;
	}
	if (data == NULL)
		data = "";
	p = calloc(1, sizeof(*p));
	if (p == NULL || (p->name = strdup(name)) == NULL) {
		errorf(errbuf, errlen, "%s: out of memory", name);
		rc = PROPS_ERR_NOMEM;
		goto out;
	}
	if (check_utf8(name, (const unsigned char *)data, len, errbuf, errlen) != 0)
		goto out;
	buf_init(&r.lb, PROPS_MAX_FILE_BYTES);
	r.name = name;
	r.p = (const unsigned char *)data;
	r.end = r.p + len;
	r.line = 1;
	r.errbuf = errbuf;
	r.errlen = errlen;
	while ((got = read_line(&r)) > 0)
		if (parse_line(&r, p) != 0)
			break;
	if (got != 0) {
		rc = r.nomem ? PROPS_ERR_NOMEM : PROPS_ERR;
		goto out;
	}
	*out = p;
	p = NULL;
	rc = 0;
out:
	buf_free(&r.lb);
	free(r.marks);
	props_destroy(p);
	return rc;
}

int props_new(const char *name, struct props **out)
{
	struct props *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (p == NULL || (p->name = strdup(name)) == NULL) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int props_add(struct props *p, const char *key, const char *value, int line)
{
	char *k = strdup(key), *v = strdup(value);

	if (k == NULL || v == NULL || put(p, k, v, line) != 0) {
		free(k);
		free(v);
		return -1;
	}
	return 0;
}

/* Reads at most PROPS_MAX_FILE_BYTES + 1 bytes, whatever st_size claims (a
 * pipe or /proc file has none). */
static int read_all(int fd, const char *path, char **data, size_t *len, char *errbuf, size_t errlen)
{
	size_t cap = 4096, n = 0;
	char *p = NULL, *np;
	ssize_t got;

	for (;;) {
		if (p == NULL || n == cap) {
			cap = p == NULL ? cap : cap * 2;
			if (cap > PROPS_MAX_FILE_BYTES + 1)
				cap = PROPS_MAX_FILE_BYTES + 1;
			np = realloc(p, cap);
			if (np == NULL) {
				errorf(errbuf, errlen, "%s: out of memory", path);
				free(p);
				return PROPS_ERR_NOMEM;
			}
			p = np;
		}
		got = read(fd, p + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			errorf(errbuf, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > PROPS_MAX_FILE_BYTES) {
			errorf(errbuf, errlen, "%s: file too large (limit %d bytes)", path,
			       PROPS_MAX_FILE_BYTES);
			goto fail;
		}
	}
	*data = p;
	*len = n;
	return 0;
fail:
	free(p);
	return PROPS_ERR;
}

int props_load_file(const char *path, struct props **out, char *errbuf, size_t errlen)
{
	char *data = NULL;
	size_t len = 0;
	int fd, rc;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errorf(errbuf, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOMEM ? PROPS_ERR_NOMEM : PROPS_ERR;
	}
	rc = read_all(fd, path, &data, &len, errbuf, errlen);
	if (rc == 0)
		rc = props_load_mem(path, data, len, out, errbuf, errlen);
	close(fd);
	free(data);
	return rc;
}

size_t props_count(const struct props *p)
{
	return p->n;
}

const char *props_key(const struct props *p, size_t i)
{
	return i < p->n ? p->ents[i].key : NULL;
}

const char *props_value(const struct props *p, size_t i)
{
	return i < p->n ? p->ents[i].value : NULL;
}

int props_line(const struct props *p, size_t i)
{
	return i < p->n ? p->ents[i].line : 0;
}

int props_set_value(struct props *p, size_t i, const char *value, bool secret)
{
	char *v = i < p->n ? strdup(value) : NULL;

	if (v == NULL)
		return -1;
	free(p->ents[i].value);
	p->ents[i].value = v;
	p->ents[i].secret = secret;
	return 0;
}

bool props_secret(const struct props *p, size_t i)
{
	return i < p->n && p->ents[i].secret;
}

const char *props_get(const struct props *p, const char *key)
{
	size_t i;

	return hash_get(&p->index, key, &i) ? p->ents[i].value : NULL;
}

const char *props_name(const struct props *p)
{
	return p->name;
}

void props_destroy(struct props *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->ents[i].key);
		free(p->ents[i].value);
	}
	free(p->ents);
	hash_free(&p->index);
	free(p->name);
	free(p);
}
