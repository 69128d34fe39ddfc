/* tailid: what makes a tailed file the same file.
 *
 * A file is recognised by its device and inode plus a fingerprint: the
 * FNV-1a 64 hash of its first min(position, TAILID_FP_MAX) bytes, i.e. of
 * bytes skiff has already read and that a living log file never rewrites.
 * dev+ino alone is not enough (inodes are reused as soon as a file is
 * deleted); the fingerprint alone is not enough either (files may start alike),
 * but it also finds copies of a file (copytruncate) under another inode.
 * Since the hashed length grows with the position, a file shorter than
 * TAILID_FP_MAX is fingerprinted from its first line on (unlike shippers that
 * ignore files until they reach 1 KiB).
 *
 * Also here: a file's birth key (statx btime, or mtime where the file system
 * keeps no birth time), which orders rotated files, and the names logrotate
 * and friends give rotated files. Leaf module; no logging. */
#ifndef SKIFF_TAILID_H
#define SKIFF_TAILID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a fingerprint covers at most. Stored offsets carry the length they
 * hashed ("fplen"), so changing this never misreads an old offset. */
#define TAILID_FP_MAX 1024

/* The FNV-1a 64 offset basis: the fingerprint of zero bytes. */
#define TAILID_FP_EMPTY UINT64_C(0xcbf29ce484222325)

struct tailid {
	int64_t dev, ino;
	int64_t size;
	int64_t born;  /* ns since the epoch: birth time, else mtime */
	int64_t mtime; /* ns since the epoch */
	bool has_btime;
	bool regular; /* a regular file, and not a pseudo one */
	bool pseudo;  /* a regular file of /proc, /sys or the like: not a log */
};

/* Extends fingerprint h by len bytes of p; returns the new hash. */
uint64_t tailid_fp_update(uint64_t h, const void *p, size_t len);

/* Hashes the first len (<= TAILID_FP_MAX) bytes of the open file fd into *out.
 * Returns 0, or -1 when the file is shorter than len or cannot be read. */
int tailid_fp_file(int fd, int64_t len, uint64_t *out);

/* Fills *id from the open file fd (fstat/statx). Returns 0 or -1 (errno). */
int tailid_of_fd(int fd, struct tailid *id);

/* Fills *id for path, following symlinks. Returns 0 or -1 (errno). */
int tailid_of_path(const char *path, struct tailid *id);

/* True when a and b are the same inode. */
bool tailid_same(const struct tailid *a, const struct tailid *b);

/* Orders two files by birth: the birth times when both have one, else the
 * mtimes. Returns <0, 0, >0 like strcmp. */
int tailid_cmp_age(const struct tailid *a, const struct tailid *b);

enum tailid_rotated {
	TAILID_NOT_ROTATED = 0,
	TAILID_ROTATED = 1,    /* base + a rotation suffix: readable */
	TAILID_COMPRESSED = 2, /* the same, compressed: not readable as lines */
};

/* Whether name (a directory entry) is a rotated copy of the file named base
 * in the same directory: base followed by '.', '-' or '_' and a suffix that
 * starts with a digit and holds only digits and ".-_T:" (app.log.1,
 * app.log-20240131, app.log.2024-01-31T10:00), optionally followed by a
 * compression extension (.gz .bz2 .xz .zst .lz4 .Z .zip), or by ".backup"
 * (logrotate's app.log-2026120100.backup: a file it moved aside). */
enum tailid_rotated tailid_rotated_name(const char *base, const char *name);

#endif
