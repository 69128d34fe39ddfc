/* tailscan: finding files on disk for the file source.
 *
 * Glob expansion with excludes, the rotated siblings ("family") of a stream's
 * path, the search for a file by inode in a directory (a file rotated away
 * under a name skiff may not know), and for a copytruncate copy by
 * fingerprint. Every listing is bounded
 * (TAILSCAN_MAX_ENTRIES). Leaf module: no logging. Main loop only. */
#ifndef SKIFF_TAILSCAN_H
#define SKIFF_TAILSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sources/file/tailid.h"

/* Most paths one glob expansion or one family listing returns. */
#define TAILSCAN_MAX_ENTRIES 65536

struct tailscan_entry {
	char *path; /* malloc'd */
	struct tailid id;
	enum tailid_rotated kind;
};

/* Expands each pattern of patterns[0..n) with glob(3) (braces allowed) and
 * calls fn(opaque, path) for every match that is not excluded: an exclude
 * with a '/' is matched against the whole path, one without against the
 * file name (fnmatch). Directories and other non-regular files (after
 * following symlinks) are left out. Returns the number of matches, or -1 when
 * a pattern could not be read (out of memory or a read error). */
int tailscan_glob(const char *const *patterns, size_t n, const char *const *excludes, size_t nex,
                  void (*fn)(void *opaque, const char *path), void *opaque);

/* True when an exclude of excludes[0..nex) leaves path out (as tailscan_glob). */
bool tailscan_excluded(const char *path, const char *const *excludes, size_t nex);

/* True when path matches one of patterns (fnmatch, FNM_PATHNAME). */
bool tailscan_matches(const char *path, const char *const *patterns, size_t n);

/* True when path is the rotated copy of another path that patterns match
 * (app.log.1 when app.log matches): such a file is history of that stream,
 * not a stream of its own. */
bool tailscan_is_history(const char *path, const char *const *patterns, size_t n);

/* Lists the rotated siblings of path (tailid_rotated_name) in its directory
 * and in dirs[0..ndirs) (rotated.dirs: logrotate's olddir; one that does not
 * exist holds none), regular files only, oldest first (tailid_cmp_age).
 * Returns 0 with *out (free with tailscan_free) and *n, or -1 (errno). */
int tailscan_family(const char *path, const char *const *dirs, size_t ndirs,
                    struct tailscan_entry **out, size_t *n);

/* Reads the first min(size, TAILZ_HEAD) bytes of path into buf (TAILZ_HEAD
 * bytes): uncompressed when it is a compressed file (tailz.h). Returns the
 * length, or -1; *zerr: why a compressed file's data ended within them
 * (tailz_error; TAILZ_ERR_SHORT for an empty one with a compressed name), or 0. */
ssize_t tailscan_head(const char *path, unsigned char *buf, int *zerr);

/* Most uncompressed bytes tailscan_zprefix compares. */
#define TAILSCAN_ZPREFIX_MAX (1u << 20)

/* True when the uncompressed bytes of the compressed file zpath (all of
 * them, or its first TAILSCAN_ZPREFIX_MAX) are the first bytes of the file
 * open as fd: zpath may be a copy of it, complete or still being written.
 * Their first bytes alike are no proof: files often start with the same
 * header, longer than a fingerprint. Uses pread: fd's offset is not moved. */
bool tailscan_zprefix(const char *zpath, int fd);

/* How many bytes the compressed file zpath decodes to, its streams not
 * verified (what gunzip writes of one cut short), counting no further than
 * max; -1 when it cannot be read as compressed. For a warning. */
int64_t tailscan_zdecoded(const char *zpath, int64_t max);

/* Most listings a search makes when renames race it (a rotation moving
 * .N.gz to .N+1.gz between the listing and the opens). */
#define TAILSCAN_RELIST_TRIES 5

/* The oldest compressed rotated sibling of path (tailscan_family) born at
 * or after born_after (ns) whose first fplen uncompressed bytes hash to fp:
 * the file of an offset, compressed since. Each file is checked as the
 * file listed under its name; the family is listed again (at most
 * TAILSCAN_RELIST_TRIES times) when a rename raced the search and nothing
 * was found. Returns its path (malloc'd) and *id (when not NULL: the file
 * listed, for tailchain_add_as), or NULL. */
char *tailscan_find_compressed(const char *path, const char *const *dirs, size_t ndirs, uint64_t fp,
                               int64_t fplen, int64_t born_after, struct tailid *id);

/* Test seam: fn(opaque) runs after each listing of a search by first bytes
 * (tailscan_find_compressed), before its files are opened; NULL: none. */
void tailscan_set_listed_hook(void (*fn)(void *opaque), void *opaque);

/* The oldest compressed rotated sibling of path born at or after born_after
 * (ns) when not one byte of it decodes (empty, or damaged from its first
 * bytes): the file of an offset, compressed since and unreadable, when it
 * cannot be found by its first bytes. Returns its path (malloc'd) and *id,
 * or NULL (none, or the oldest decodes). */
char *tailscan_find_undecodable(const char *path, const char *const *dirs, size_t ndirs,
                                int64_t born_after, struct tailid *id);

void tailscan_free(struct tailscan_entry *e, size_t n);

/* Finds a regular file with inode ino on device dev among the entries of
 * dir. Returns its path (malloc'd, caller frees) or NULL. */
char *tailscan_find_inode(const char *dir, int64_t dev, int64_t ino);

/* Finds the file with inode ino on dev in path's directory, in dirs[0..ndirs)
 * or, when path is a symlink, in its target's: where a rotation moved it.
 * Returns its path (malloc'd) or NULL. */
char *tailscan_find_moved(const char *path, const char *const *dirs, size_t ndirs, int64_t dev,
                          int64_t ino);

/* The newest uncompressed rotated sibling of path (tailscan_family) whose first fplen
 * bytes hash to fp, that holds at least min_size bytes, the last_len (<= 256,
 * 0: not checked) bytes before min_size equal to last, and was born at or
 * after born_after (ns): a copy of the file made by copytruncate. Returns its
 * path (malloc'd) and *size, or NULL. */
char *tailscan_find_copy(const char *path, const char *const *dirs, size_t ndirs, uint64_t fp,
                         int64_t fplen, int64_t min_size, const void *last, size_t last_len,
                         int64_t born_after, int64_t *size);

/* True when inotify reports every change to the file system of fd (a file
 * or a directory): false for network and FUSE file systems, whose files
 * change behind the kernel's back, and when fstatfs fails. */
bool tailscan_notifies(int fd);

/* True when dir is absolute and its own real path (no symlink, "." or ".."
 * on the way) on a file system tailscan_notifies trusts: a watch on dir
 * hears every name that appears in it or leaves it. */
bool tailscan_dir_watchable(const char *dir);

/* True when path itself (not a symlink) names the regular file open as fd,
 * on a file system tailscan_notifies trusts: a watch on fd and one on the
 * path's directory hear every change to what path names. */
bool tailscan_file_watchable(const char *path, int fd);

/* dirname(path) as a malloc'd string, or NULL. */
char *tailscan_dirname(const char *path);

#endif
