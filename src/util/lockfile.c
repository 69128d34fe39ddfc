#include "util/lockfile.h"

#include "util/num.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The pid the holder wrote into the lock file, or 0. */
static int64_t holder(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int64_t pid = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return num_parse_i64(buf, 1, INT32_MAX, &pid) == 0 ? pid : 0;
}

/* Writes our pid, for the message of the next one refused. */
static void note_holder(int fd)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		/* Only the message of a refused second skiff loses the pid. */
	}
}

int lockfile_acquire(const char *path, char *errbuf, size_t errlen)
{
	return lockfile_acquire_for(path, "this offset file", errbuf, errlen);
}

int lockfile_acquire_for(const char *path, const char *what, char *errbuf, size_t errlen)
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
		int64_t pid = held ? holder(fd) : 0;

		if (pid > 0)
			snprintf(errbuf, errlen, "%s: another skiff (pid %lld) is running with %s",
			         lock, (long long)pid, what);
		else
			snprintf(errbuf, errlen, "%s: %s%s", lock,
			         held ? "another skiff is running with " : strerror(errno),
			         held ? what : "");
		close(fd);
		return held ? LOCKFILE_HELD : LOCKFILE_ERR;
	}
	note_holder(fd);
	return fd;
}

/* The pid of the process listening on the abstract socket addr, or 0 (its
 * backlog full, or it died meanwhile). */
static int64_t listener(const struct sockaddr_un *addr, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct ucred cred = {0};
	socklen_t clen = sizeof(cred);
	int64_t pid = 0;

	if (fd < 0)
		return 0;
	if (connect(fd, (const struct sockaddr *)addr, len) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		pid = cred.pid;
	close(fd);
	return pid;
}

int lockfile_abstract(const char *name, const char *what, char *errbuf, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	int fd, held;
	int64_t pid;

	if (n + 1 > sizeof(addr.sun_path)) {
		snprintf(errbuf, errlen, "@%.64s...: name too long (%zu bytes, at most %zu)", name,
		         n, sizeof(addr.sun_path) - 1);
		return LOCKFILE_ERR;
	}
	memcpy(addr.sun_path + 1, name, n); /* sun_path[0] == '\0': abstract */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(errbuf, errlen, "@%s: socket: %s", name, strerror(errno));
		return LOCKFILE_ERR;
	}
	/* listen: a refused second one connects to learn our pid (SO_PEERCRED). */
	if (bind(fd, (const struct sockaddr *)&addr, len) == 0 && listen(fd, 8) == 0)
		return fd;
	held = errno == EADDRINUSE;
	close(fd);
	if (!held) {
		snprintf(errbuf, errlen, "@%s: %s", name, strerror(errno));
		return LOCKFILE_ERR;
	}
	pid = listener(&addr, len);
	if (pid > 0)
		snprintf(errbuf, errlen, "@%s: another skiff (pid %lld) is running with %s", name,
		         (long long)pid, what);
	else
		snprintf(errbuf, errlen, "@%s: another skiff is running with %s", name, what);
	return LOCKFILE_HELD;
}
