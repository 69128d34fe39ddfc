/* lockfile: one skiff per offset file. Two processes writing the same store
 * would each commit offsets the other never acknowledged. */
#ifndef SKIFF_LOCKFILE_H
#define SKIFF_LOCKFILE_H

#include <stddef.h>

/* Takes an exclusive, non-blocking flock(2) on "<path>.lock" (created if
 * missing) and returns its descriptor, to keep open for the life of the
 * process (the kernel drops the lock at exit, even after SIGKILL). Returns -1
 * with errbuf when the file cannot be opened or another process holds it. */
int lockfile_acquire(const char *path, char *errbuf, size_t errlen);

#endif
