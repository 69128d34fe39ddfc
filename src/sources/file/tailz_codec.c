/* tailz_codec: gzip through zlib; zstd and xz when the build has them. */
#include "sources/file/tailz_codec.h"

#include <stdlib.h>
#include <zlib.h>

#ifdef SKIFF_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif
#ifdef SKIFF_HAVE_LZMA
#include <lzma.h>
#endif

/* ---- gzip --------------------------------------------------------------- */

static int gz_init(void **state)
{
	z_stream *zs = calloc(1, sizeof(*zs));

	*state = NULL;
	if (zs == NULL)
		return TAILZ_ERR_NOMEM;
	if (inflateInit2(zs, 15 + 16) != Z_OK) { /* 15 + 16: gzip framing only */
		free(zs);
		return TAILZ_ERR_NOMEM;
	}
	*state = zs;
	return 0;
}

static int gz_step(void *state, const uint8_t **in, size_t *inlen, uint8_t *out, size_t outlen,
                   size_t *made)
{
	z_stream *zs = state;
	int rc;

	zs->next_in = (Bytef *)*in;
	zs->avail_in = (uInt)*inlen;
	zs->next_out = out;
	zs->avail_out = (uInt)outlen;
	rc = inflate(zs, Z_NO_FLUSH);
	*made = outlen - zs->avail_out;
	*in = zs->next_in;
	*inlen = zs->avail_in;
	if (rc == Z_STREAM_END)
		return 1;
	if (rc == Z_OK || rc == Z_BUF_ERROR)
		return 0;
	return rc == Z_MEM_ERROR ? TAILZ_ERR_NOMEM : TAILZ_ERR_DATA;
}

static void gz_end(void *state)
{
	if (state == NULL)
		return;
	inflateEnd(state);
	free(state);
}

static const unsigned char gz_magic[] = {0x1f, 0x8b};
static const struct tailz_codec gz = {TAILZ_GZIP, ".gz",   gz_magic, sizeof(gz_magic),
                                      gz_init,    gz_step, gz_end};

/* ---- zstd --------------------------------------------------------------- */

#ifdef SKIFF_HAVE_ZSTD
static int zst_init(void **state)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();

	*state = d;
	if (d == NULL)
		return TAILZ_ERR_NOMEM;
	/* A window over TAILZ_DICT_MAX is refused rather than allocated. */
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 26);
	return 0;
}

static int zst_step(void *state, const uint8_t **in, size_t *inlen, uint8_t *out, size_t outlen,
                    size_t *made)
{
	ZSTD_inBuffer ib = {*in, *inlen, 0};
	ZSTD_outBuffer ob = {out, outlen, 0};
	size_t r = ZSTD_decompressStream(state, &ob, &ib);

	*made = ob.pos;
	*in += ib.pos;
	*inlen -= ib.pos;
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? TAILZ_ERR_NOMEM
		       : ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge
		           ? TAILZ_ERR_LIMIT
		           : TAILZ_ERR_DATA;
	return r == 0 ? 1 : 0; /* 0: the frame is decoded and flushed */
}

static void zst_end(void *state)
{
	ZSTD_freeDCtx(state);
}

static const unsigned char zst_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
static const struct tailz_codec zst = {TAILZ_ZSTD, ".zst",   zst_magic, sizeof(zst_magic),
                                       zst_init,   zst_step, zst_end};
#endif

/* ---- xz ----------------------------------------------------------------- */

#ifdef SKIFF_HAVE_LZMA
static int xz_init(void **state)
{
	lzma_stream *ls = malloc(sizeof(*ls));

	*state = NULL;
	if (ls == NULL)
		return TAILZ_ERR_NOMEM;
	*ls = (lzma_stream)LZMA_STREAM_INIT;
	/* The memory limit bounds the dictionary: xz -9 needs ~65 MiB. */
	if (lzma_stream_decoder(ls, TAILZ_DICT_MAX + (4u << 20), 0) != LZMA_OK) {
		free(ls);
		return TAILZ_ERR_NOMEM;
	}
	*state = ls;
	return 0;
}

static int xz_step(void *state, const uint8_t **in, size_t *inlen, uint8_t *out, size_t outlen,
                   size_t *made)
{
	lzma_stream *ls = state;
	lzma_ret rc;

	ls->next_in = *in;
	ls->avail_in = *inlen;
	ls->next_out = out;
	ls->avail_out = outlen;
	rc = lzma_code(ls, LZMA_RUN);
	*made = outlen - ls->avail_out;
	*in = ls->next_in;
	*inlen = ls->avail_in;
	if (rc == LZMA_STREAM_END)
		return 1;
	if (rc == LZMA_OK || rc == LZMA_BUF_ERROR)
		return 0;
	return rc == LZMA_MEM_ERROR        ? TAILZ_ERR_NOMEM
	       : rc == LZMA_MEMLIMIT_ERROR ? TAILZ_ERR_LIMIT
	                                   : TAILZ_ERR_DATA;
}

static void xz_end(void *state)
{
	if (state == NULL)
		return;
	lzma_end(state);
	free(state);
}

static const unsigned char xz_magic[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
static const struct tailz_codec xz = {TAILZ_XZ, ".xz",   xz_magic, sizeof(xz_magic),
                                      xz_init,  xz_step, xz_end};
#endif

const struct tailz_codec *const tailz_codecs[] = {
    &gz,
#ifdef SKIFF_HAVE_ZSTD
    &zst,
#endif
#ifdef SKIFF_HAVE_LZMA
    &xz,
#endif
    NULL,
};
