/* lockfile: one skiff per offset file. Two processes writing the same store
 * would each commit offsets the other never acknowledged. */
#ifndef SKIFF_LOCKFILE_H
#define SKIFF_LOCKFILE_H

#include <stddef.h>

enum {
	LOCKFILE_ERR = -1,  /* cannot be opened or locked */
	LOCKFILE_HELD = -2, /* another process holds it */
};

/* Takes an exclusive, non-blocking flock(2) on "<path>.lock" (created if
 * missing, 0600) and returns its descriptor, to keep open for the life of the
 * process (the kernel drops the lock at exit, even after SIGKILL). Returns
 * LOCKFILE_ERR or LOCKFILE_HELD with errbuf. */
int lockfile_acquire(const char *path, char *errbuf, size_t errlen);

/* lockfile_acquire, the refusal saying "running with <what>" (lockfile_acquire's
 * what: "this offset file"). */
int lockfile_acquire_for(const char *path, const char *what, char *errbuf, size_t errlen);

#endif
