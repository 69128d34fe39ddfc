#include "testlib.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

int testlib_failures;
int testlib_checks;

const char *testlib_tmpdir(void)
{
	static char dir[256];
	const char *base = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/skiff-unit-XXXXXX", base ? base : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	return dir;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

void testlib_rmtree(const char *dir)
{
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void testlib_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0) {
		perror(path);
		exit(2);
	}
}

int testlib_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, testlib_checks, testlib_failures);
	return testlib_failures ? 1 : 0;
}
