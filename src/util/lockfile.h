/* lockfile: one skiff per offset file. Two processes writing the same store
 * would each commit offsets the other never acknowledged. */
#ifndef SKIFF_LOCKFILE_H
#define SKIFF_LOCKFILE_H

#include <stddef.h>

#include "util/err.h"

enum {
	LOCKFILE_OK = 0,
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

/* A lock that no rm can remove and no tmpfiles cleaner can age out: binds
 * the Linux abstract-namespace AF_UNIX socket "@name" (no file; the kernel
 * releases it when the process dies, even after SIGKILL) and listens on it.
 * Returns its descriptor, to keep open while holding the lock, or
 * LOCKFILE_HELD (errbuf names the holder's pid, from SO_PEERCRED, and
 * "running with <what>") or LOCKFILE_ERR. Abstract names are per network
 * namespace: processes in different ones do not see each other's. */
int lockfile_abstract(const char *name, const char *what, char *errbuf, size_t errlen);

#endif
