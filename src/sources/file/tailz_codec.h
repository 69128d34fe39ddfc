/* tailz_codec: the decompressors tailz reads with, one const ops table per
 * format. Include only from tailz.c and tailz_codec.c. */
#ifndef SKIFF_TAILZ_CODEC_H
#define SKIFF_TAILZ_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sources/file/tailz.h"

struct tailz_codec {
	enum tailz_format format;
	const char *ext; /* ".gz" */
	const unsigned char *magic;
	size_t magic_len;
	/* Creates a state for one compressed stream (a gzip member, a zstd
	 * frame, an xz stream). Returns 0 or TAILZ_ERR_NOMEM. */
	int (*init)(void **state);
	/* Decodes from *in (advanced, *inlen decreased) into out[0..outlen)
	 * and sets *made. Returns 0, 1 when the stream ended, or TAILZ_ERR*. */
	int (*step)(void *state, const uint8_t **in, size_t *inlen, uint8_t *out, size_t outlen,
	            size_t *made);
	void (*end)(void *state); /* accepts NULL */
};

/* The codecs this build has, NULL-terminated. */
extern const struct tailz_codec *const tailz_codecs[];

#endif
