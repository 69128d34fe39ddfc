/* tailheld: the held set of one file source connector, kept on disk beside
 * the offsets, so that what a kill -9, a power cut or the OOM killer takes
 * with it is counted at the next start instead of lost unseen.
 *
 * While Kafka is away the connector holds rotated files open until it can
 * read them (tailchain: the descriptor keeps a deleted file's bytes). Those
 * descriptors die with the process. The held set names each held file,
 * each file let go whose lines may not be acknowledged yet, and the file at
 * the path behind held files - the stream (path) it belongs to, its
 * identity (device, inode, birth, the fingerprint of its first bytes), the
 * name it was opened by and its size when last seen - in reading order per
 * stream. At the next start each
 * stream compares the set with what it finds on disk (tailstream.c's resume): a file
 * found under any name, compressed too, is read as usual; one found nowhere
 * is gone, and at least size − position of it (the stored offset's position
 * for its file, 0 for the files after it) was lost: counted and named.
 *
 * The file (PATH, e.g. /var/lib/skiff/offsets.state-NAME) is text:
 *
 *   skiff-held 1
 *   F <dev> <ino> <born> <size> <fp> <fplen> <stream> <name>
 *   ...
 *   end <crc32c of every byte before this line, 8 hex digits>
 *
 * integers in base 10 (fp as a signed 64-bit integer, as in the offsets),
 * <stream> and <name> with every byte below 0x21, 0x7f and '%' written as
 * %XX. It is replaced as the offsets file is (atomicfile: PATH.tmp, fsync,
 * rename, fsync of the directory), at most once per interval and only when
 * its content changed; an empty set is no file (removed). At most cap files
 * (max.held.files and a look's slack). Leaf module: no logging. Main loop
 * only. */
#ifndef SKIFF_TAILHELD_H
#define SKIFF_TAILHELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tailheld;

/* A file of the set. */
struct tailheld_file {
	int64_t dev, ino, born;
	int64_t size;     /* bytes when last seen; -1: not known (compressed) */
	uint64_t fp;      /* FNV-1a 64 of its first fplen bytes (tailid.h) */
	int64_t fplen;    /* 0: none */
	const char *name; /* the name it was opened by */
};

enum {
	TAILHELD_ERR_IO = -1,      /* could not read or write (errbuf says) */
	TAILHELD_ERR_CORRUPT = -2, /* the file is not a whole held set (errbuf: where) */
	TAILHELD_ERR_NOMEM = -3,
};

/* What went wrong, for a log line. */
const char *tailheld_strerror(int err);

/* A set kept at path (copied), written at most every interval_ms, of at
 * most cap files. Returns 0 and *out (tailheld_free), or TAILHELD_ERR_NOMEM.
 * Nothing is read or written yet. */
int tailheld_new(const char *path, int64_t interval_ms, size_t cap, struct tailheld **out);

/* Frees h. Accepts NULL. Writes nothing. */
void tailheld_free(struct tailheld *h);

/* The path of h's file. */
const char *tailheld_path(const struct tailheld *h);

/* Reads the set a previous run left (none: 0, nothing loaded). Its files
 * wait for tailheld_take. On TAILHELD_ERR_CORRUPT or _IO nothing is
 * loaded (errbuf says why; the file is replaced at the next write). */
int tailheld_load(struct tailheld *h, char *errbuf, size_t errlen);

/* Hands over the files loaded for stream, in reading order, removing them
 * from what is loaded: *out (the caller frees it with tailheld_files_free)
 * and *n. Returns 0 or TAILHELD_ERR_NOMEM (nothing handed over). */
int tailheld_take(struct tailheld *h, const char *stream, struct tailheld_file **out, size_t *n);
void tailheld_files_free(struct tailheld_file *f, size_t n);

/* The stream of a file loaded and not taken yet, the first in the set's
 * order whose stream has_stream(arg, stream) says has no stream of the
 * connector, or NULL: a start that found no file for a stream of the last
 * run (a glob match gone whole) still settles its held files. The string
 * is h's: valid until h changes. */
const char *tailheld_untaken(const struct tailheld *h,
                             bool (*has_stream)(void *arg, const char *stream), void *arg);

/* The size last seen of the loaded file of stream with inode dev/ino born
 * at born (0: any birth), or -1: for the stored offset's own file when it
 * is gone (tailstream.c's resume). Leaves it loaded. */
int64_t tailheld_size_of(const struct tailheld *h, const char *stream, int64_t dev, int64_t ino,
                         int64_t born);

/* True when a snapshot is due at now (ms, monotonic): holding (files held
 * now) or anything in the set, and interval_ms since the last one. */
bool tailheld_due(const struct tailheld *h, int64_t now, bool holding);

/* Ms from now until the next snapshot may be taken when one is wanted
 * (holding, or anything in the set), else -1. */
int64_t tailheld_deadline(const struct tailheld *h, int64_t now, bool holding);

/* A snapshot: tailheld_begin, tailheld_put for every file held now (each
 * stream's in reading order; one already in the set keeps its place, a new
 * one goes after), tailheld_end. Files loaded and not taken yet are kept.
 * put returns 0, or TAILHELD_ERR_NOMEM (the snapshot is then incomplete:
 * nothing is written until a whole one). Past cap files, the rest is left
 * out. */
void tailheld_begin(struct tailheld *h, int64_t now);
int tailheld_put(struct tailheld *h, const char *stream, const struct tailheld_file *f);
/* Ends the snapshot and writes the file when its content changed (an empty
 * set: removes it). A file of the set not put again was let go, read to
 * its end, while its lines may not be acknowledged yet (a kill -9 loses
 * them with the file): it stays, in its place, until passed(arg, stream,
 * file) says the stream's committed offset is past it (passed NULL: at
 * once), or the set is past cap (the oldest go first). closing: a clean
 * stop, whose own accounting covers what it drops: every file not put
 * again goes. Returns 0, or TAILHELD_ERR_IO / _NOMEM with errbuf (the next
 * snapshot tries again). */
int tailheld_end(struct tailheld *h, bool closing,
                 bool (*passed)(void *arg, const char *stream, const struct tailheld_file *f),
                 void *arg, char *errbuf, size_t errlen);

/* Removes the file dev/ino born at born (0: any) of stream from the set:
 * its loss was counted while running (the held-file budget let go of it),
 * so it must not stay as a file let go whose lines may be lost. (A kill -9
 * before the next snapshot still finds it in the file: counted again at
 * the start, within one interval.) */
void tailheld_forget(struct tailheld *h, const char *stream, int64_t dev, int64_t ino,
                     int64_t born);

#endif
