/* Unit tests for offsets_import.c: Connect standalone's Java-serialized
 * offsets file, built here byte by byte as ObjectOutputStream writes a
 * HashMap<byte[],byte[]> (the end-to-end test imports a file a real Connect
 * wrote); every truncation and every flipped byte is refused or read without
 * a crash. */
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "offsets/offsets_import.h"
#include "testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int nop_load(void *ctx, struct offsets *o, uint64_t *gen, int *from_prev, char *e, size_t el)
{
	*gen = 0;
	*from_prev = 0;
	return 0;
}

static int nop_store(void *ctx, const struct offsets *o, uint64_t gen, char *e, size_t el)
{
	return 0;
}

static void nop_close(void *ctx)
{
}

static const struct offset_backend_ops nop_ops = {
    .name = "nop", .load = nop_load, .store = nop_store, .close = nop_close};

struct out {
	unsigned char b[4096];
	size_t n;
};

static void put(struct out *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void u8(struct out *o, unsigned v)
{
	o->b[o->n++] = (unsigned char)v;
}

static void u16(struct out *o, unsigned v)
{
	u8(o, v >> 8);
	u8(o, v & 0xff);
}

static void u32(struct out *o, uint32_t v)
{
	u16(o, v >> 16);
	u16(o, v & 0xffff);
}

static void utf(struct out *o, const char *s)
{
	u16(o, (unsigned)strlen(s));
	put(o, s, strlen(s));
}

/* A byte[]: the first describes the class "[B", the rest refer to it
 * (handle 2: the map's class is 0, the map 1). */
static void array(struct out *o, const char *s, int *first)
{
	static const unsigned char suid[] = {0xAC, 0xF3, 0x17, 0xF8, 0x06, 0x08, 0x54, 0xE0};

	u8(o, 0x75);
	if (*first) {
		u8(o, 0x72);
		utf(o, "[B");
		put(o, suid, 8);
		u8(o, 0x02);
		u16(o, 0);
		u8(o, 0x78);
		u8(o, 0x70);
		*first = 0;
	} else {
		u8(o, 0x71);
		u32(o, 0x7E0002);
	}
	u32(o, (uint32_t)strlen(s));
	put(o, s, strlen(s));
}

/* {K1: V1, K2: null, K3: V1 again (a reference to V1's array)}. */
static void build(struct out *o)
{
	static const unsigned char suid[] = {0x05, 0x07, 0xDA, 0xC1, 0xC3, 0x16, 0x60, 0xD1};
	int first = 1;

	o->n = 0;
	u16(o, 0xACED);
	u16(o, 5);
	u8(o, 0x73);
	u8(o, 0x72);
	utf(o, "java.util.HashMap");
	put(o, suid, 8);
	u8(o, 0x03);
	u16(o, 2);
	u8(o, 'F');
	utf(o, "loadFactor");
	u8(o, 'I');
	utf(o, "threshold");
	u8(o, 0x78);
	u8(o, 0x70);
	u32(o, 0x3F400000); /* 0.75f */
	u32(o, 12);
	u8(o, 0x77);
	u8(o, 8);
	u32(o, 16);
	u32(o, 3);
	array(o, "[\"a\",{\"filename\":\"/var/log/a.log\"}]", &first);
	array(o, "{\"position\":1234}", &first); /* handle 4 */
	array(o, "[\"a\",{\"filename\":\"/var/log/b.log\"}]", &first);
	u8(o, 0x70);
	array(o, "[\"b\",{\"filename\":\"/var/log/c.log\"}]", &first);
	u8(o, 0x71);
	u32(o, 0x7E0004);
	u8(o, 0x78);
}

/* offsets_import_fn: puts each entry as it comes. */
static int put_entry(void *arg, const char *key, const char *value, size_t at, char *err,
                     size_t errlen)
{
	int rc = value != NULL ? offsets_put(arg, key, value) : offsets_remove(arg, key);

	if (rc != 0)
		snprintf(err, errlen, "byte %zu: %s", at, offsets_strerror(rc));
	return rc;
}

static int import_bytes(const char *path, const struct out *o, size_t n, struct offsets **st,
                        size_t *count, char *err, size_t errlen)
{
	testlib_write_file(path, o->b, n);
	CHECK_INT(offsets_open(&nop_ops, NULL, st, err, errlen), 0);
	return offsets_import_connect(path, put_entry, *st, count, err, errlen);
}

static void test_reads_connects_map(const char *path)
{
	struct out o;
	struct offsets *st = NULL;
	char err[1024];
	size_t count = 0;

	build(&o);
	CHECK_INT(import_bytes(path, &o, o.n, &st, &count, err, sizeof(err)), 0);
	CHECK_INT(count, 3);
	CHECK_INT(offsets_count(st), 2);
	CHECK_STR(offsets_get(st, "[\"a\",{\"filename\":\"/var/log/a.log\"}]"),
	          "{\"position\":1234}");
	CHECK(offsets_get(st, "[\"a\",{\"filename\":\"/var/log/b.log\"}]") == NULL);
	CHECK_STR(offsets_get(st, "[\"b\",{\"filename\":\"/var/log/c.log\"}]"),
	          "{\"position\":1234}");
	CHECK(offsets_dirty(st));
	offsets_destroy(st);
}

static void test_truncated_and_flipped(const char *path)
{
	struct out o, bad;
	struct offsets *st = NULL;
	char err[1024];
	size_t count;
	int rc;

	build(&o);
	for (size_t n = 0; n < o.n; n++) {
		rc = import_bytes(path, &o, n, &st, &count, err, sizeof(err));
		CHECK_INT(rc, OFFSETS_ERR_CORRUPT);
		CHECK(strstr(err, path) != NULL && strstr(err, "byte ") != NULL);
		offsets_destroy(st);
	}
	for (size_t i = 0; i < o.n; i++) {
		bad = o;
		bad.b[i] ^= 0xFF;
		rc = import_bytes(path, &bad, bad.n, &st, &count, err, sizeof(err));
		/* Refused, or (a flipped byte inside a key's or value's text, or
		 * in a field skiff skips) read: never anything else. */
		CHECK(rc == 0 || rc == OFFSETS_ERR_CORRUPT || rc == OFFSETS_ERR_ARG);
		offsets_destroy(st);
	}
	bad.n = 0;
	put(&bad, "{\"format\":\"skiff-offsets\"}", 26);
	rc = import_bytes(path, &bad, bad.n, &st, &count, err, sizeof(err));
	CHECK_INT(rc, OFFSETS_ERR_CORRUPT);
	CHECK(strstr(err, "AC ED 00 05") != NULL);
	offsets_destroy(st);
}

static int64_t bytes_at(const char *path, int64_t chars, char *err, size_t errlen, int *rc)
{
	int64_t b = -1;

	*rc = offsets_import_position(path, 0, chars, &b, err, errlen);
	return b;
}

/* Connect's position counts Java chars: é and CJK one each (2 and 3
 * bytes), an emoji two (4 bytes), a malformed byte one (U+FFFD). */
static void test_position_in_chars(const char *path)
{
	static const char text[] = "a\xC3\xA9\n"         /* a é: 4 bytes, 3 chars */
	                           "\xF0\x9F\x9A\x80\n"  /* an emoji: 5 bytes, 3 chars */
	                           "\xE6\x97\xA5\xFF\n"; /* CJK, a bad byte: 5 bytes, 3 chars */
	char err[512];
	int rc;

	testlib_write_file(path, text, strlen(text));
	CHECK_INT(bytes_at(path, 3, err, sizeof(err), &rc), 4);
	CHECK_INT(bytes_at(path, 6, err, sizeof(err), &rc), 9);
	CHECK_INT(bytes_at(path, 9, err, sizeof(err), &rc), 14);
	CHECK_INT(rc, 0);
	CHECK_INT(bytes_at(path, 4, err, sizeof(err), &rc) >= 0, 1);
	CHECK_INT(rc, OFFSETS_ERR_ARG); /* inside the emoji's pair */
	CHECK(strstr(err, path) != NULL && strstr(err, "inside a character") != NULL);
	(void)bytes_at(path, 10, err, sizeof(err), &rc);
	CHECK_INT(rc, OFFSETS_ERR_ARG);
	CHECK(strstr(err, path) != NULL && strstr(err, "holds 9 characters") != NULL);
	CHECK(strstr(err, "14 bytes") != NULL && strstr(err, "position 10 characters") != NULL);
	unlink(path);
	(void)bytes_at(path, 3, err, sizeof(err), &rc);
	CHECK_INT(rc, OFFSETS_ERR_ARG);
	CHECK(strstr(err, path) != NULL && strstr(err, "No such file") != NULL);
	CHECK_INT(bytes_at(path, 0, err, sizeof(err), &rc), 0);
	CHECK_INT(rc, 0);
}

/* A task that started at a byte position (skiff's, or its own earlier
 * one) skips it in bytes and counts chars from there: its value is
 * from + chars. A value below from was set by hand: bytes. */
static void test_value_from_a_start(const char *path)
{
	static const char text[] = "a\xC3\xA9\n"         /* 4 bytes, 3 chars */
	                           "\xF0\x9F\x9A\x80\n"; /* 5 bytes, 3 chars */
	char out[64], err[512];
	int64_t b = -1;

	testlib_write_file(path, text, strlen(text));
	CHECK_INT(offsets_import_position(path, 4, 3, &b, err, sizeof(err)), 0);
	CHECK_INT(b, 9);
	CHECK_INT(
	    offsets_import_value(path, 4, "{\"position\":7}", out, sizeof(out), err, sizeof(err)),
	    0);
	CHECK_STR(out, "{\"position\":9}");
	CHECK_INT(
	    offsets_import_value(path, 0, "{\"position\":6}", out, sizeof(out), err, sizeof(err)),
	    0);
	CHECK_STR(out, "{\"position\":9}");
	CHECK_INT(
	    offsets_import_value(path, 9, "{\"position\":4}", out, sizeof(out), err, sizeof(err)),
	    0);
	CHECK_STR(out, "{\"position\":4}");
	CHECK_INT(
	    offsets_import_value(path, 4, "{\"position\":8}", out, sizeof(out), err, sizeof(err)),
	    OFFSETS_ERR_ARG);
	CHECK(strstr(err, "from byte 4") != NULL);
	CHECK_INT(offsets_import_value(path, 0, "{\"pos\":8}", out, sizeof(out), err, sizeof(err)),
	          OFFSETS_ERR_ARG);
	unlink(path);
}

/* The start of the line holding a byte, as FileStreamSource splits lines:
 * \n, \r\n (a position between the two is inside the terminator) or a
 * lone \r; a file without a line end before the byte starts at 0. */
static void test_line_start(const char *path)
{
	static const char text[] = "ab\n"   /* 0-2 */
	                           "cd\r\n" /* 3-6 */
	                           "ef\r"   /* 7-9 */
	                           "gh";    /* 10-11, no end */
	char err[512];
	int64_t at = -1;

	testlib_write_file(path, text, strlen(text));
	for (int64_t pos = 0; pos <= 12; pos++) {
		static const int64_t want[] = {0, 0, 0, 3, 3, 3, 3, 7, 7, 7, 10, 10, 10};

		CHECK_INT(offsets_import_line_start(path, pos, &at, err, sizeof(err)), 0);
		CHECK_INT(at, want[pos]);
	}
	testlib_write_file(path, "no line end", 11);
	CHECK_INT(offsets_import_line_start(path, 5, &at, err, sizeof(err)), 0);
	CHECK_INT(at, 0);
	unlink(path);
	CHECK_INT(offsets_import_line_start(path, 5, &at, err, sizeof(err)), OFFSETS_ERR_IO);
	CHECK(strstr(err, path) != NULL);
	CHECK_INT(offsets_import_line_start(path, 0, &at, err, sizeof(err)), 0);
	CHECK_INT(at, 0);
}

int main(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/connect.offsets", testlib_tmpdir());
	test_reads_connects_map(path);
	test_truncated_and_flipped(path);
	test_position_in_chars(path);
	test_value_from_a_start(path);
	test_line_start(path);
	unlink(path);
	return testlib_done("test_offsets_import");
}
