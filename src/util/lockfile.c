#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int lockfile_acquire(const char *path, char *errbuf, size_t errlen)
{
	char lock[4096];
	int fd;

	if ((size_t)snprintf(lock, sizeof(lock), "%s.lock", path) >= sizeof(lock)) {
		snprintf(errbuf, errlen, "%s: path too long", path);
		return LOCKFILE_ERR;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(errbuf, errlen, "%s: %s", lock, strerror(errno));
		return LOCKFILE_ERR;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int held = errno == EWOULDBLOCK;

		snprintf(errbuf, errlen, "%s: %s", lock,
		         held ? "another skiff is running with this offset file" : strerror(errno));
		close(fd);
		return held ? LOCKFILE_HELD : LOCKFILE_ERR;
	}
	return fd;
}
