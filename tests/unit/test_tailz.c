/* tailz: reading gzip (and zstd, xz when built) as uncompressed bytes,
 * forward, from any position, in a bounded window; cut-short and corrupt
 * data end the bytes with the reason. */
#include "sources/file/tailz.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifdef SKIFF_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef SKIFF_HAVE_LZMA
#include <lzma.h>
#endif

#define WINDOW 8192

static char *plain;
static size_t plain_len;

static void make_plain(void)
{
	size_t cap = 2000000, n = 0;

	plain = malloc(cap);
	for (int i = 0; n + 100 < cap; i++)
		n +=
		    (size_t)snprintf(plain + n, cap - n, "%08d line with some text %d\n", i, i * 7);
	plain_len = n;
}

static size_t gz_bytes(const void *src, size_t len, unsigned char *out, size_t cap)
{
	z_stream zs = {0};

	deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	CHECK_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
	deflateEnd(&zs);
	return cap - zs.avail_out;
}

static int open_bytes(const char *name, const void *data, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", testlib_tmpdir(), name);
	testlib_write_file(path, data, len);
	return open(path, O_RDONLY);
}

/* Reads all of z from off in steps that consume part of what came back,
 * as the line reader does, and compares with plain[off..]. */
static void read_all(struct tailz *z, int64_t off, int want_err)
{
	char *buf = malloc(WINDOW * 2);
	int64_t pos = off;
	bool end = false;
	unsigned k = 1;

	while (!end) {
		size_t got = 0;

		CHECK_INT(tailz_read(z, pos, buf, WINDOW * 2, &got, &end), 0);
		CHECK(got <= WINDOW);
		CHECK(got == WINDOW || end);
		CHECK(memcmp(buf, plain + pos, got) == 0);
		if (got == 0)
			break;
		pos += end ? (int64_t)got : (int64_t)(got / (1 + k++ % 3)) + 1;
	}
	CHECK_INT(tailz_error(z), want_err);
	if (want_err == 0) {
		CHECK_INT(pos, plain_len);
		CHECK_INT(tailz_size(z), plain_len);
	}
	free(buf);
}

static void check_format(const char *name, const unsigned char *data, size_t len,
                         enum tailz_format f)
{
	int fd = open_bytes(name, data, len);
	struct tailz *z = NULL;
	const void *head;
	size_t hlen;
	size_t got;
	bool end;
	char b[64];

	CHECK(tailz_named(name));
	CHECK_INT(tailz_detect(fd), f);
	CHECK_INT(tailz_open(fd, f, WINDOW, &z), 0);
	head = tailz_head(z, &hlen);
	CHECK_INT(hlen, TAILZ_HEAD);
	CHECK(memcmp(head, plain, hlen) == 0);
	read_all(z, 0, 0);
	/* backwards: decoded again from the start */
	CHECK_INT(tailz_read(z, 100, b, sizeof(b), &got, &end), 0);
	CHECK_INT(got, sizeof(b));
	CHECK(memcmp(b, plain + 100, got) == 0);
	tailz_free(z);
	/* from a stored position: decoded and discarded up to it */
	CHECK_INT(tailz_open(fd, f, WINDOW, &z), 0);
	read_all(z, 1234567, 0);
	/* past the end: nothing, at the end */
	CHECK_INT(tailz_read(z, (int64_t)plain_len + 10, b, sizeof(b), &got, &end), 0);
	CHECK_INT(got, 0);
	CHECK(end);
	tailz_free(z);
	close(fd);
}

/* A damaged file: exactly plain[0..good) comes out (the streams before the
 * damaged one), then the end with err. */
static void check_damaged(const char *name, const unsigned char *data, size_t len,
                          enum tailz_format f, size_t good, int err)
{
	int fd = open_bytes(name, data, len);
	char *buf = malloc(WINDOW);
	struct tailz *z = NULL;
	int64_t pos = 0;
	bool end = false;
	size_t got = 1;

	CHECK_INT(tailz_open(fd, f, WINDOW, &z), 0);
	while (!end && got > 0) {
		CHECK_INT(tailz_read(z, pos, buf, WINDOW, &got, &end), 0);
		CHECK(pos + (int64_t)got <= (int64_t)good);
		CHECK(memcmp(buf, plain + pos, got) == 0);
		pos += (int64_t)got;
	}
	CHECK_INT(pos, good);
	CHECK_INT(tailz_error(z), err);
	CHECK_INT(tailz_size(z), -1);
	tailz_free(z);
	close(fd);
	free(buf);
}

static void test_gzip(void)
{
	size_t cap = plain_len + 4096, len, first;
	unsigned char *gz = malloc(cap * 2);

	len = gz_bytes(plain, plain_len, gz, cap);
	check_format("app.log.1.gz", gz, len, TAILZ_GZIP);

	/* cut short: not one byte of the member, then the end with
	 * TAILZ_ERR_SHORT (its lines would ship before the cut shows) */
	check_damaged("short.gz", gz, len - 1000, TAILZ_GZIP, 0, TAILZ_ERR_SHORT);

	/* one byte changed in the middle: nothing of it (no garbage either) */
	gz[len / 2] ^= 0xff;
	check_damaged("bad.gz", gz, len, TAILZ_GZIP, 0, TAILZ_ERR_DATA);

	/* two members (gzip a >> x.gz; gzip b >> x.gz) read as one */
	len = gz_bytes(plain, 500000, gz, cap);
	first = len;
	len += gz_bytes(plain + 500000, plain_len - 500000, gz + len, cap * 2 - len);
	check_format("two.gz", gz, len, TAILZ_GZIP);
	/* the second damaged: exactly the first member's bytes */
	gz[first + (len - first) / 2] ^= 0x01;
	check_damaged("two-bad.gz", gz, len, TAILZ_GZIP, 500000, TAILZ_ERR_DATA);
	free(gz);
}

static void test_detect(void)
{
	int fd = open_bytes("plain.log", "hello\n", 6);

	CHECK_INT(tailz_detect(fd), TAILZ_NONE);
	close(fd);
	CHECK(!tailz_named("app.log.1"));
	CHECK(!tailz_named("app.log.1.bz2"));
	CHECK(tailz_named("app.log.1.gz"));
}

static void test_small(void)
{
	unsigned char gz[256];
	size_t len = gz_bytes("a\nb", 3, gz, sizeof(gz));
	int fd = open_bytes("small.gz", gz, len);
	struct tailz *z = NULL;
	size_t hlen = 0, got = 0;
	bool end = false;
	char b[16];

	CHECK_INT(tailz_open(fd, TAILZ_GZIP, WINDOW, &z), 0);
	tailz_head(z, &hlen);
	CHECK_INT(hlen, 3);
	CHECK_INT(tailz_read(z, 2, b, sizeof(b), &got, &end), 0);
	CHECK_INT(got, 1);
	CHECK(end && b[0] == 'b');
	tailz_free(z);
	close(fd);
}

#ifdef SKIFF_HAVE_ZSTD
static void test_zstd(void)
{
	size_t cap = ZSTD_compressBound(plain_len);
	unsigned char *out = malloc(cap);
	size_t len = ZSTD_compress(out, cap, plain, plain_len, 3);

	CHECK(!ZSTD_isError(len));
	check_format("app.log.1.zst", out, len, TAILZ_ZSTD);
	/* ZSTD_compress writes no frame checksum: a cut is caught by the
	 * format's structure */
	check_damaged("short.zst", out, len - 100, TAILZ_ZSTD, 0, TAILZ_ERR_SHORT);
	/* with a frame checksum (zstd --check, the CLI's default), one changed
	 * byte of the content is caught before any of it comes out */
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	len = ZSTD_compress2(cc, out, cap, plain, plain_len);
	CHECK(!ZSTD_isError(len));
	ZSTD_freeCCtx(cc);
	out[len / 2] ^= 0x01;
	check_damaged("bad.zst", out, len, TAILZ_ZSTD, 0, TAILZ_ERR_DATA);
	free(out);
}
#endif

#ifdef SKIFF_HAVE_LZMA
static void test_xz(void)
{
	size_t cap = plain_len + 65536, len = 0;
	unsigned char *out = malloc(cap);

	CHECK_INT(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)plain,
	                                  plain_len, out, &len, cap),
	          LZMA_OK);
	check_format("app.log.1.xz", out, len, TAILZ_XZ);
	check_damaged("short.xz", out, len - 100, TAILZ_XZ, 0, TAILZ_ERR_SHORT);
	out[len / 2] ^= 0x01; /* the CRC64 check, or the structure, catches it */
	check_damaged("bad.xz", out, len, TAILZ_XZ, 0, TAILZ_ERR_DATA);
	free(out);
}
#endif

int main(void)
{
	make_plain();
	test_detect();
	test_small();
	test_gzip();
#ifdef SKIFF_HAVE_ZSTD
	test_zstd();
#endif
#ifdef SKIFF_HAVE_LZMA
	test_xz();
#endif
	free(plain);
	return testlib_done("tailz");
}
