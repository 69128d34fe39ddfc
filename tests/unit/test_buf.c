/* test_buf: the capped growable buffer (src/util/buf.c). */
#include "util/buf.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static void test_add_and_take(void)
{
	struct buf b;
	char *out = NULL;
	size_t len = 0;

	buf_init(&b, 1000);
	CHECK(buf_ptr(&b) == NULL);
	CHECK_INT(buf_len(&b), 0);
	CHECK_INT(buf_addz(&b, "hello"), 0);
	CHECK_INT(buf_addc(&b, ' '), 0);
	CHECK_INT(buf_add(&b, "world!!", 5), 0);
	CHECK_INT(buf_len(&b), 11);
	CHECK_STR(buf_cstr(&b), "hello world");
	CHECK_INT(buf_printf(&b, ", %d%s", 42, "x"), 0);
	CHECK_STR(buf_cstr(&b), "hello world, 42x");
	buf_truncate(&b, 5);
	CHECK_STR(buf_cstr(&b), "hello");
	CHECK_INT(buf_take(&b, &out, &len), 0);
	CHECK_STR(out, "hello");
	CHECK_INT(len, 5);
	CHECK(buf_ptr(&b) == NULL); /* handed over: b is empty again */
	CHECK_INT(buf_len(&b), 0);
	free(out);
	buf_free(&b);
}

/* Content up to max exactly fits; one byte more is BUF_ERR_TOOBIG, the
 * content is kept as it was and the error sticks until a reset. */
static void test_cap(void)
{
	struct buf b;
	char *out = (char *)1;

	buf_init(&b, 10);
	CHECK_INT(buf_add(&b, "0123456789", 10), 0);
	CHECK_INT(buf_addc(&b, 'x'), BUF_ERR_TOOBIG);
	CHECK_INT(buf_err(&b), BUF_ERR_TOOBIG);
	CHECK_INT(buf_len(&b), 10);
	CHECK_INT(buf_addc(&b, 'y'), BUF_ERR_TOOBIG); /* sticky */
	CHECK(buf_cstr(&b) == NULL);
	buf_reset(&b);
	CHECK_INT(buf_err(&b), 0);
	CHECK_INT(buf_addz(&b, "abc"), 0);
	CHECK_STR(buf_cstr(&b), "abc");
	/* A write that does not fit is refused whole, not cut. */
	CHECK_INT(buf_add(&b, "12345678", 8), BUF_ERR_TOOBIG);
	CHECK_INT(buf_len(&b), 3);
	CHECK_INT(buf_take(&b, &out, NULL), BUF_ERR_TOOBIG);
	CHECK(out == NULL);
	CHECK(buf_ptr(&b) == NULL); /* freed */

	buf_init(&b, 10);
	CHECK_INT(buf_printf(&b, "%s", "01234567890"), BUF_ERR_TOOBIG);
	CHECK_INT(buf_len(&b), 0);
	buf_reset(&b);
	CHECK_INT(buf_printf(&b, "%s", "0123456789"), 0);
	CHECK_STR(buf_cstr(&b), "0123456789");
	buf_free(&b);

	/* A huge request is refused without an allocation attempt. */
	buf_init(&b, 100);
	CHECK(buf_room(&b, (size_t)-1) == NULL);
	CHECK_INT(buf_err(&b), BUF_ERR_TOOBIG);
	buf_free(&b);

	/* max 0: only the empty string. */
	buf_init(&b, 0);
	CHECK_STR(buf_cstr(&b), "");
	CHECK_INT(buf_addc(&b, 'a'), BUF_ERR_TOOBIG);
	buf_free(&b);
}

/* Growth past many doublings keeps every byte; room/commit write in place. */
static void test_grow_and_room(void)
{
	struct buf b;
	char *d;
	int ok = 1;

	buf_init(&b, 1 << 20);
	for (int i = 0; i < 100000; i++)
		if (buf_addc(&b, (char)('a' + i % 26)) != 0)
			ok = 0;
	CHECK(ok);
	CHECK_INT(buf_len(&b), 100000);
	for (size_t i = 0; i < buf_len(&b); i++)
		if (buf_ptr(&b)[i] != (char)('a' + i % 26))
			ok = 0;
	CHECK(ok);
	buf_reset(&b);
	d = buf_room(&b, 3);
	CHECK(d != NULL);
	memcpy(d, "xy", 2);
	buf_commit(&b, 2);
	CHECK_STR(buf_cstr(&b), "xy");
	/* printf longer than the room left takes the slow path. */
	CHECK_INT(buf_printf(&b, "%0500d", 7), 0);
	CHECK_INT(buf_len(&b), 502);
	CHECK(buf_cstr(&b)[501] == '7');
	buf_free(&b);
}

static void test_strerror(void)
{
	CHECK_STR(buf_strerror(BUF_ERR_NOMEM), "out of memory");
	CHECK_STR(buf_strerror(BUF_ERR_TOOBIG), "too large");
	CHECK(buf_strerror(12345) != NULL);
}

int main(void)
{
	test_add_and_take();
	test_cap();
	test_grow_and_room();
	test_strerror();
	return testlib_done("test_buf");
}
