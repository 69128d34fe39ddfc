/* offsetsfake: shared by the offset store's unit tests; see offsetsfake.c.
 * The wrappers count into w and fail on the one-shot knobs set there. */
#ifndef SKIFF_OFFSETSFAKE_H
#define SKIFF_OFFSETSFAKE_H

#include "offsets/offsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __real_close(int fd);
int __wrap_close(int fd);
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);

struct wrapstate {
	int opens, creates, writes, fsyncs, renames; /* calls seen */
	const char *eacces;                          /* open of this path fails with EACCES */
	int create_errno;     /* one-shot: the next O_CREAT|O_EXCL open fails */
	int write_errno;      /* one-shot: the next write fails */
	int fsync_file_errno; /* one-shot: the next fsync of a regular file fails */
	int fsync_dir_errno;  /* one-shot: the next fsync of a directory fails */
	int close_errno;      /* one-shot: the temp file's close fails (after closing) */
	int rename_nth;       /* the nth rename from now fails with EIO */
	int choppy;           /* writes: at most 7 bytes, EINTR every other call */
	int tmp_fd;           /* descriptor of the temp file being written */
	int failed_fd;        /* descriptor whose fsync failed, until closed */
	int fsync_retried;    /* fsyncs of failed_fd: must stay 0 */
};
extern struct wrapstate w;

#define KEY "[\"conn\",{\"filename\":\"f\"}]"
#define VAL_A "{\"position\":1}"
#define VAL_B "{\"position\":2}"
#define VAL_C "{\"position\":3}"

/* The file a first flush of KEY = VAL_A writes (its CRC computed apart). */
#define DOC_GEN1                                                                                   \
	"{\"format\":\"skiff-offsets\",\"version\":1,\"generation\":1,\"offsets\":[{\"key\":"      \
	"[\"conn\",{\"filename\":\"f\"}],\"value\":{\"position\":1}}],\"crc32c\":\"7f283dff\"}\n"

extern char base[256], dir[300];
extern char path[400], prev[410], tmp[410];
extern char err[1024];

enum verdict { RIGHT, OTHER, REFUSED, WRONG };

void fresh(void);
int exists(const char *p);
char *slurp(const char *p, size_t *len);
void write_doc(const char *p, const char *body);
struct offsets *open_ok(void);
uint64_t gen_of(const struct offsets *o);
uint64_t put_flush(struct offsets *o, const char *value);
void two_generations(void);
enum verdict verdict(void);
char *make_big(size_t size);

/* The key fill puts. */
#define FILL_KEY "[\"big\",{}]"

/* Fills the store o up to OFFSETS_MAX_BYTES but a little, under FILL_KEY:
 * a new key no longer fits (CHECKed). */
void fill(struct offsets *o);

#endif
