/* buf: see buf.h.
 *
 * Invariant: once allocated, cap > len, so one byte past the content is
 * always there for the NUL of buf_cstr and buf_take; and cap <= max + 1, so
 * buf_room's fast path (room for n with a byte to spare) can never pass the
 * maximum without asking. */
#include "util/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FIRST_CAP 64

void buf_init(struct buf *b, size_t max)
{
	*b = (struct buf){.max = max < SIZE_MAX - 1 ? max : SIZE_MAX - 2};
}

void buf_free(struct buf *b)
{
	free(b->p);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
}

char *buf_grow(struct buf *b, size_t n)
{
	size_t need, cap;
	char *grown;

	if (b->err != 0)
		return NULL;
	if (n > b->max - b->len) {
		b->err = BUF_ERR_TOOBIG;
		return NULL;
	}
	need = b->len + n + 1;
	if (need <= b->cap)
		return b->p + b->len;
	cap = b->cap ? b->cap : FIRST_CAP;
	while (cap < need && cap <= SIZE_MAX / 2)
		cap *= 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	if (cap < need)
		cap = need;
	grown = realloc(b->p, cap);
	if (grown == NULL) {
		b->err = BUF_ERR_NOMEM;
		return NULL;
	}
	b->p = grown;
	b->cap = cap;
	return b->p + b->len;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->err == 0 && b->cap > b->len ? b->cap - b->len : 0;
	int n;
	char *d;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (b->err != 0)
		return b->err;
	if (n < 0)
		return b->err = BUF_ERR_NOMEM; /* only for a wide character EILSEQ */
	if ((size_t)n < room) {
		b->len += (size_t)n;
		return 0;
	}
	if ((d = buf_grow(b, (size_t)n)) == NULL)
		return b->err;
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *buf_cstr(struct buf *b)
{
	if (b->p == NULL && buf_grow(b, 0) == NULL)
		return NULL;
	if (b->err != 0)
		return NULL;
	b->p[b->len] = '\0';
	return b->p;
}

int buf_take(struct buf *b, char **out, size_t *len)
{
	int err = buf_cstr(b) == NULL ? b->err : 0;
	char *shrunk;

	*out = NULL;
	if (err != 0) {
		buf_free(b);
		return err;
	}
	if (b->cap - b->len > b->len / 4 + 64) {
		shrunk = realloc(b->p, b->len + 1);
		if (shrunk != NULL)
			b->p = shrunk;
	}
	*out = b->p;
	if (len != NULL)
		*len = b->len;
	b->p = NULL;
	buf_free(b);
	return 0;
}

const char *buf_strerror(int err)
{
	switch (err) {
	case 0:
		return "no error";
	case BUF_ERR_NOMEM:
		return "out of memory";
	case BUF_ERR_TOOBIG:
		return "too large";
	default:
		return "unknown error";
	}
}
