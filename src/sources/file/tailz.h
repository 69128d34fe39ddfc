/* tailz: a compressed rotated file read as the bytes it holds.
 *
 * logrotate's `compress` (without `delaycompress`) replaces app.log.1 with
 * app.log.1.gz right after the rotation, possibly before skiff finished it.
 * The file source reads such a file like any other: positions count
 * uncompressed bytes, and the fingerprint (tailid.h) is that of its first
 * uncompressed bytes, so an offset stored while the file was plain still
 * names it once compressed.
 *
 * The reader only goes forward: a read at an offset drops the bytes before
 * it (decompressing and discarding up to it). Memory is bounded: the codec's
 * state (gzip 32 KiB window; zstd and xz as large as the file's dictionary,
 * capped: TAILZ_DICT_MAX), one input buffer, and one output window of a size
 * set at open, allocated at the first read and freed by tailz_free. The
 * first TAILZ_HEAD bytes are decoded at open and kept (to recognise the
 * file). Each compressed stream is decoded once, output discarded, before
 * any of its bytes are read out, so that a stream that fails its check
 * (gzip CRC32 and length, xz's check, zstd's frame checksum when written)
 * or is cut short yields none of its bytes: tailz_read's data ends before
 * it, tailz_error says why. Formats: gzip (always), zstd and xz when built with them
 * (SKIFF_HAVE_ZSTD, SKIFF_HAVE_LZMA). Leaf module: no logging. Main loop. */
#ifndef SKIFF_TAILZ_H
#define SKIFF_TAILZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/file/tailid.h"

#define TAILZ_HEAD TAILID_FP_MAX
#define TAILZ_DICT_MAX (64u << 20) /* larger zstd/xz dictionaries are refused */

enum tailz_format { TAILZ_NONE = 0, TAILZ_GZIP, TAILZ_ZSTD, TAILZ_XZ };

enum {
	TAILZ_ERR = -1,       /* the file could not be read */
	TAILZ_ERR_NOMEM = -2, /* out of memory */
	TAILZ_ERR_DATA = -3,  /* not valid compressed data */
	TAILZ_ERR_SHORT = -4, /* the data ends inside a compressed stream: cut short,
	                       * or still being written */
	TAILZ_ERR_LIMIT = -5, /* its dictionary is over TAILZ_DICT_MAX */
};

const char *tailz_strerror(int code);

/* True when path ends in an extension of a format this build reads
 * (.gz, and .zst or .xz when built with them). */
bool tailz_named(const char *path);

/* The format of the open file fd by its first bytes, TAILZ_NONE when none
 * this build reads. Uses pread: fd's offset is not moved. */
enum tailz_format tailz_detect(int fd);

struct tailz;

/* Starts reading fd (not owned: the caller closes it after tailz_free) in
 * format f, reads at most window (>= 4096) bytes per tailz_read, and decodes
 * the head. Returns 0 and *out (tailz_free), or TAILZ_ERR*. A head cut short
 * is not an error here: tailz_read reports it where it matters. */
int tailz_open(int fd, enum tailz_format f, size_t window, struct tailz **out);

/* As tailz_open, but no stream is verified before its bytes are read out:
 * the bytes of one cut short (a copy gzip is still writing) up to where it
 * ends. To compare such a copy with its source only, never to ship. */
int tailz_open_unverified(int fd, enum tailz_format f, size_t window, struct tailz **out);

/* The first min(size, TAILZ_HEAD) uncompressed bytes (owned by z). */
const void *tailz_head(const struct tailz *z, size_t *len);

/* Copies the uncompressed bytes from off on into dst: min(len, window)
 * bytes, fewer only at the end of the data (*at_end set). off must not be
 * before the off of the previous call (else the file is decoded again from
 * its start). Returns 0 or TAILZ_ERR* (the bytes before the error were
 * returned by earlier calls). */
int tailz_read(struct tailz *z, int64_t off, void *dst, size_t len, size_t *got, bool *at_end);

/* The uncompressed size once the end was read, else -1. */
int64_t tailz_size(const struct tailz *z);

/* The uncompressed size: tailz_size once known, else for gzip what its
 * trailer says (the last member's length mod 2^32: at least a lower
 * bound for a file logrotate compressed), else -1. One pread. */
int64_t tailz_size_hint(const struct tailz *z);
/* Why the data ended early (TAILZ_ERR_DATA, _SHORT, _LIMIT), or 0: the
 * stream that failed was not read out at all. */
int tailz_error(const struct tailz *z);

/* Frees z (not its fd). Accepts NULL. */
void tailz_free(struct tailz *z);

#endif
