/* tailz: a compressed rotated file read forward as its uncompressed bytes,
 * through a window of bounded size (see tailz.h). */
#include "sources/file/tailz.h"

#include "sources/file/tailz_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IN_CAP (64 * 1024)

struct tailz {
	int fd;
	const struct tailz_codec *codec;
	bool checking;      /* verify each stream before decoding it for the reader */
	int64_t checked_to; /* the compressed bytes before this are verified streams */
	void *st;           /* codec state, NULL when not reading */
	bool stream_done;   /* the codec's stream ended: another may follow */
	uint8_t *in;        /* IN_CAP bytes of compressed input */
	const uint8_t *inp;
	size_t inlen;
	int64_t inpos; /* the next compressed byte to read */
	bool in_eof;
	uint8_t *win; /* uncompressed bytes [wstart, wstart + wlen) */
	size_t cap, wlen;
	int64_t wstart;
	bool end; /* the data ended (cleanly, or at err) */
	int err;  /* why the data ended early: TAILZ_ERR_DATA, _SHORT, _LIMIT */
	int64_t size;
	unsigned char head[TAILZ_HEAD];
	size_t head_len;
};

const char *tailz_strerror(int code)
{
	switch (code) {
	case 0:
		return "no error";
	case TAILZ_ERR_NOMEM:
		return "out of memory";
	case TAILZ_ERR_DATA:
		return "not valid compressed data";
	case TAILZ_ERR_SHORT:
		return "the compressed data ends early (cut short, or still being written)";
	case TAILZ_ERR_LIMIT:
		return "its dictionary needs more memory than allowed (64 MiB)";
	default:
		return "read error";
	}
}

static const struct tailz_codec *codec_of(enum tailz_format f)
{
	for (size_t i = 0; tailz_codecs[i] != NULL; i++)
		if (tailz_codecs[i]->format == f)
			return tailz_codecs[i];
	return NULL;
}

bool tailz_named(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; tailz_codecs[i] != NULL; i++) {
		size_t e = strlen(tailz_codecs[i]->ext);

		if (n > e && strcmp(path + n - e, tailz_codecs[i]->ext) == 0)
			return true;
	}
	return false;
}

enum tailz_format tailz_detect(int fd)
{
	unsigned char b[8];
	ssize_t got = pread(fd, b, sizeof(b), 0);

	for (size_t i = 0; got > 0 && tailz_codecs[i] != NULL; i++)
		if ((size_t)got >= tailz_codecs[i]->magic_len &&
		    memcmp(b, tailz_codecs[i]->magic, tailz_codecs[i]->magic_len) == 0)
			return tailz_codecs[i]->format;
	return TAILZ_NONE;
}

static int begin_stream(struct tailz *z);

/* Back to the first byte: the codec state and buffers are allocated here,
 * at the first read, not at open. Returns 0 or TAILZ_ERR_NOMEM. */
static int restart(struct tailz *z)
{
	z->codec->end(z->st);
	z->st = NULL;
	if (z->in == NULL && (z->in = malloc(IN_CAP)) == NULL)
		return TAILZ_ERR_NOMEM;
	if (z->win == NULL && (z->win = malloc(z->cap)) == NULL)
		return TAILZ_ERR_NOMEM;
	z->inlen = 0;
	z->inpos = 0;
	z->in_eof = z->stream_done = z->end = false;
	z->err = 0;
	z->wstart = 0;
	z->wlen = 0;
	return begin_stream(z);
}

/* The end of the data: clean (err 0) or early. */
static void ended(struct tailz *z, int err)
{
	z->end = true;
	z->err = err;
	z->size = z->wstart + (int64_t)z->wlen;
	z->codec->end(z->st); /* what it held is no longer needed */
	z->st = NULL;
}

/* Reads the next compressed bytes at *pos into buf; *got 0 at the end. */
static int pread_in(int fd, uint8_t *buf, int64_t *pos, size_t *got)
{
	ssize_t n;

	do
		n = pread(fd, buf, IN_CAP, *pos);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return TAILZ_ERR;
	*pos += n;
	*got = (size_t)n;
	return 0;
}

static int refill(struct tailz *z)
{
	int rc = pread_in(z->fd, z->in, &z->inpos, &z->inlen);

	z->inp = z->in;
	z->in_eof = rc == 0 && z->inlen == 0;
	return rc;
}

/* Decodes the stream that starts at compressed byte from to its end,
 * output discarded, with its own input buffer: the codec checks what the
 * stream carries (gzip CRC32 and length, xz's check, zstd's frame checksum
 * when written). Returns 0 and *to (just after the stream), TAILZ_ERR_DATA
 * / _SHORT / _LIMIT when it does not verify, or TAILZ_ERR / _NOMEM. */
static int verify(const struct tailz *z, int64_t from, int64_t *to)
{
	uint8_t *in = malloc(IN_CAP), *out = malloc(IN_CAP);
	const uint8_t *p = in, *before;
	size_t len = 0, made;
	int64_t pos = from;
	void *st = NULL;
	bool eof = false;
	int rc = in != NULL && out != NULL ? z->codec->init(&st) : TAILZ_ERR_NOMEM;

	while (rc == 0) {
		if (len == 0 && !eof) {
			if ((rc = pread_in(z->fd, in, &pos, &len)) != 0)
				break;
			p = in;
			eof = len == 0;
		}
		before = p;
		made = 0;
		rc = z->codec->step(st, &p, &len, out, IN_CAP, &made);
		if (rc == 1) {
			*to = pos - (int64_t)len;
			rc = 0;
			break;
		}
		if (rc == 0 && made == 0 && p == before && (eof || len > 0))
			rc = eof ? TAILZ_ERR_SHORT : TAILZ_ERR_DATA; /* no progress */
	}
	z->codec->end(st);
	free(in);
	free(out);
	return rc;
}

/* Starts decoding the stream at the current compressed position, once it
 * has verified: a stream that does not is not decoded at all, so none of
 * its bytes reach the reader (the data ends before it). Returns 0 or
 * TAILZ_ERR / TAILZ_ERR_NOMEM. */
static int begin_stream(struct tailz *z)
{
	int64_t at = z->inpos - (int64_t)z->inlen, to = 0;
	int rc;

	if (z->checking && at >= z->checked_to) {
		rc = verify(z, at, &to);
		if (rc == TAILZ_ERR || rc == TAILZ_ERR_NOMEM)
			return rc;
		if (rc != 0) {
			ended(z, rc);
			return 0;
		}
		z->checked_to = to;
	}
	return z->codec->init(&z->st);
}

/* One codec step into the free part of the window. Returns 0 or TAILZ_ERR
 * / TAILZ_ERR_NOMEM; a data error ends the data. */
static int step(struct tailz *z)
{
	const uint8_t *before;
	size_t made = 0;
	int rc;

	if (z->inlen == 0 && !z->in_eof && (rc = refill(z)) != 0)
		return rc;
	if (z->stream_done) {
		if (z->inlen == 0) {
			ended(z, 0);
			return 0;
		}
		z->codec->end(z->st); /* concatenated streams (gzip members) */
		z->st = NULL;
		z->stream_done = false;
		if ((rc = begin_stream(z)) != 0 || z->end)
			return rc;
	}
	before = z->inp;
	rc = z->codec->step(z->st, &z->inp, &z->inlen, z->win + z->wlen, z->cap - z->wlen, &made);
	z->wlen += made;
	if (rc == 1)
		z->stream_done = true;
	else if (rc == TAILZ_ERR_NOMEM)
		return rc;
	else if (rc < 0)
		ended(z, rc);
	else if (made == 0 && z->inp == before && z->in_eof)
		ended(z, TAILZ_ERR_SHORT);
	else if (made == 0 && z->inp == before && z->inlen > 0)
		ended(z, TAILZ_ERR_DATA); /* no progress on input it has */
	return 0;
}

/* Drops the bytes before off, decoding up to it. */
static int skip_to(struct tailz *z, int64_t off)
{
	int rc;

	while (off > z->wstart + (int64_t)z->wlen && !z->end) {
		z->wstart += (int64_t)z->wlen;
		z->wlen = 0;
		if ((rc = step(z)) != 0)
			return rc;
	}
	if (off >= z->wstart + (int64_t)z->wlen) {
		z->wstart += (int64_t)z->wlen;
		z->wlen = 0;
		return 0;
	}
	if (off > z->wstart) {
		memmove(z->win, z->win + (off - z->wstart), z->wlen - (size_t)(off - z->wstart));
		z->wlen -= (size_t)(off - z->wstart);
		z->wstart = off;
	}
	return 0;
}

int tailz_read(struct tailz *z, int64_t off, void *dst, size_t len, size_t *got, bool *at_end)
{
	size_t want = len < z->cap ? len : z->cap, n;
	int rc;

	*got = 0;
	*at_end = false;
	if ((z->win == NULL || off < z->wstart) && (rc = restart(z)) != 0)
		return rc;
	if ((rc = skip_to(z, off)) != 0)
		return rc;
	while (z->wlen < want && !z->end)
		if ((rc = step(z)) != 0)
			return rc;
	n = off < z->wstart ? 0 : (z->wlen < want ? z->wlen : want);
	memcpy(dst, z->win, n);
	*got = n;
	*at_end = z->end && n == z->wlen;
	return 0;
}

int tailz_open(int fd, enum tailz_format f, size_t window, struct tailz **out)
{
	struct tailz *z = calloc(1, sizeof(*z));
	bool at_end = false;
	int rc = TAILZ_ERR_NOMEM;

	*out = NULL;
	if (z == NULL)
		return rc;
	z->fd = fd;
	z->codec = codec_of(f);
	z->cap = window < 4096 ? 4096 : window;
	z->size = -1;
	if (z->codec == NULL) {
		rc = TAILZ_ERR_DATA;
		goto fail;
	}
	if ((rc = tailz_read(z, 0, z->head, TAILZ_HEAD, &z->head_len, &at_end)) != 0)
		goto fail;
	/* The head only names the file; from now on a stream is verified
	 * before any of its bytes are read out. */
	z->checking = true;
	/* Until it is read, it holds only its head: a chain may hold many. */
	z->codec->end(z->st);
	z->st = NULL;
	free(z->in);
	free(z->win);
	z->in = z->win = NULL;
	*out = z;
	return 0;
fail:
	tailz_free(z);
	return rc;
}

int tailz_open_unverified(int fd, enum tailz_format f, size_t window, struct tailz **out)
{
	int rc = tailz_open(fd, f, window, out);

	if (rc == 0)
		(*out)->checking = false;
	return rc;
}

const void *tailz_head(const struct tailz *z, size_t *len)
{
	*len = z->head_len;
	return z->head;
}

int64_t tailz_size(const struct tailz *z)
{
	return z->end && z->err == 0 ? z->size : -1;
}

int64_t tailz_size_hint(const struct tailz *z)
{
	unsigned char t[4];
	struct stat st;

	if (tailz_size(z) >= 0)
		return tailz_size(z);
	/* gzip's trailer: the last member's length mod 2^32 (RFC 1952), all of
	 * it for the single member logrotate writes, less than all else. */
	if (z->codec->format != TAILZ_GZIP || fstat(z->fd, &st) != 0 || st.st_size < 18 ||
	    pread(z->fd, t, 4, st.st_size - 4) != 4)
		return -1;
	return (int64_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
	                 (uint32_t)t[3] << 24);
}

int tailz_error(const struct tailz *z)
{
	return z->err;
}

void tailz_free(struct tailz *z)
{
	if (z == NULL)
		return;
	if (z->codec != NULL)
		z->codec->end(z->st);
	free(z->in);
	free(z->win);
	free(z);
}
