/* Unit tests of tailscan's watch predicates: when a rescan may leave a
 * directory or a file to its inotify watches. */
#include "tailscan.h"
#include "testlib.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char dir[PATH_MAX], real[PATH_MAX + 16], link[PATH_MAX + 16], dirlink[PATH_MAX + 16],
	    dotted[PATH_MAX + 16];
	char *r = realpath(testlib_tmpdir(), NULL);
	int fd;

	CHECK(r != NULL);
	snprintf(dir, sizeof(dir), "%s", r != NULL ? r : "/");
	free(r);
	snprintf(real, sizeof(real), "%s/real.log", dir);
	snprintf(link, sizeof(link), "%s/link.log", dir);
	snprintf(dirlink, sizeof(dirlink), "%s/dirlink", dir);
	snprintf(dotted, sizeof(dotted), "%s/.", dir);
	testlib_write_file(real, "x\n", 2);
	unlink(link);
	unlink(dirlink);
	CHECK(symlink(real, link) == 0);
	CHECK(symlink(dir, dirlink) == 0);

	/* A directory: absolute, its own real path, local. */
	CHECK(tailscan_dir_watchable(dir));
	CHECK(!tailscan_dir_watchable(dirlink)); /* a symlink may be re-pointed */
	CHECK(!tailscan_dir_watchable(dotted));
	CHECK(!tailscan_dir_watchable("relative/dir"));
	CHECK(!tailscan_dir_watchable("/nonexistent/dir"));

	/* A file: the path itself names the open file. */
	fd = open(real, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(tailscan_notifies(fd));
	CHECK(tailscan_file_watchable(real, fd));
	CHECK(!tailscan_file_watchable(link, fd)); /* through a symlink */
	unlink(real);
	testlib_write_file(real, "y\n", 2); /* the path names another file now */
	CHECK(!tailscan_file_watchable(real, fd));
	close(fd);
	return testlib_done("tailscan");
}
