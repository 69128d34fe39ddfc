/* buf: a growable byte buffer that carries its own maximum (curl's dynbuf).
 *
 * A buffer is set up with buf_init(b, max) and grows on demand up to max
 * bytes of content (a terminating NUL, when one is asked for, does not
 * count). Hitting the maximum is BUF_ERR_TOOBIG and running out of memory
 * BUF_ERR_NOMEM: both are returned to the caller, which decides (an error
 * naming the file, a counted truncation), never a crash or a silent drop.
 *
 * The first error sticks: later writes are refused with the same code and
 * the content stays what it was before the write that failed, so a writer
 * that emits many pieces may check once, at the end (buf_err, buf_take).
 *
 * The struct is declared here so that a buffer can live on the stack or
 * inside another struct on the hot path (the converters write every record
 * through one); its fields are the module's: use the functions.
 *
 * Ownership: the buffer owns its bytes until buf_take hands them over or
 * buf_free releases them. Any thread, one buffer at a time. Error
 * convention: util/err.h. */
#ifndef SKIFF_BUF_H
#define SKIFF_BUF_H

#include <stddef.h>
#include <string.h>

#include "util/err.h"

enum {
	BUF_OK = 0,
	BUF_ERR_NOMEM = -2,
	BUF_ERR_TOOBIG = -3, /* the content would pass the buffer's maximum */
};

struct buf {
	char *p;
	size_t len, cap, max;
	int err; /* the first error, 0 while none */
};

/* Sets b up empty, allocating nothing yet; max is the most content bytes it
 * will hold. */
void buf_init(struct buf *b, size_t max);

/* Frees b's bytes and sets it up empty again, its maximum kept; the
 * sticky error is cleared. */
void buf_free(struct buf *b);

/* Empties b, keeping its allocation and clearing the sticky error. */
void buf_reset(struct buf *b);

/* The slow path of buf_room: grows b for n more bytes. */
char *buf_grow(struct buf *b, size_t n);

/* Room for n more bytes at the end, or NULL (the error is then in
 * buf_err). Write at most n bytes there, then buf_commit what was written;
 * the room is valid until the next call that may grow b. */
static inline char *buf_room(struct buf *b, size_t n)
{
	if (b->err == 0 && b->cap - b->len > n)
		return b->p + b->len;
	return buf_grow(b, n);
}

/* Counts n bytes written into buf_room's space as content. */
static inline void buf_commit(struct buf *b, size_t n)
{
	b->len += n;
}

/* Appends n bytes of s. Returns 0, BUF_ERR_NOMEM or BUF_ERR_TOOBIG. */
static inline int buf_add(struct buf *b, const void *s, size_t n)
{
	char *d = buf_room(b, n);

	if (d == NULL)
		return b->err;
	memcpy(d, s, n);
	b->len += n;
	return 0;
}

/* Appends the C string s (without its NUL). */
static inline int buf_addz(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

/* Appends one byte. */
static inline int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

/* Appends printf output. Returns 0 or an error as buf_add. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The content (not NUL-terminated unless buf_cstr made it so; NULL while
 * nothing was ever written), its length, and the sticky error (0: none). */
static inline const char *buf_ptr(const struct buf *b)
{
	return b->p;
}

static inline size_t buf_len(const struct buf *b)
{
	return b->len;
}

static inline int buf_err(const struct buf *b)
{
	return b->err;
}

/* Drops content past n bytes (n <= buf_len). */
static inline void buf_truncate(struct buf *b, size_t n)
{
	if (n < b->len)
		b->len = n;
}

/* The content as a NUL-terminated string (the NUL not counted in buf_len),
 * owned by b, or NULL with buf_err set. */
const char *buf_cstr(struct buf *b);

/* Hands the content over, NUL-terminated (the NUL not counted in *len):
 * *out is malloc'd, the caller frees it, and b is set up empty again. A
 * buffer much larger than its content is shrunk first (the bytes may be held
 * for long). Returns 0, or the sticky error (b freed, *out NULL). len may be
 * NULL. */
int buf_take(struct buf *b, char **out, size_t *len);

/* Short text for a BUF_ERR_* code. */
const char *buf_strerror(int err);

#endif
