/* Unit tests for util/atomicfile: replacement, generations, bounded reads and
 * the error messages. Failures here come from the real file system (a
 * directory where a file should be, a missing directory); injected fsync,
 * write, rename and close failures are in test_offsets.c, whose build wraps
 * those calls. */
#include "testlib.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *in_dir(const char *name)
{
	static char bufs[4][512];
	static int n;
	char *b = bufs[n++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Returns the content of path (static storage) or "(error)". */
static const char *slurp(const char *path)
{
	static char out[256];
	char err[256];
	char *d = NULL;
	size_t len = 0;

	if (atomicfile_read(path, 1000, &d, &len, err, sizeof(err)) != 0)
		return "(error)";
	snprintf(out, sizeof(out), "%s", d);
	free(d);
	return out;
}

static void test_write_and_read(void)
{
	const char *p = in_dir("a");
	char err[256] = "";
	struct stat st;
	char *d = NULL;
	size_t len = 99;

	CHECK_INT(atomicfile_write(p, "hello\n", 6, err, sizeof(err)), 0);
	CHECK_STR(slurp(p), "hello\n");
	CHECK(!exists(in_dir("a.tmp")));
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600); /* private: paths, positions */
	CHECK_INT(atomicfile_write(p, "", 0, err, sizeof(err)), 0);
	CHECK_INT(atomicfile_read(p, 10, &d, &len, err, sizeof(err)), 0);
	CHECK(d != NULL && len == 0 && d[0] == '\0');
	free(d);
}

static void test_generations(void)
{
	const char *p = in_dir("g"), *prev = in_dir("g.prev");
	char err[256] = "";
	int done = -1;

	CHECK_INT(atomicfile_replace(p, prev, "one", 3, &done, err, sizeof(err)), 0);
	CHECK_INT(done, ATOMICFILE_REPLACED); /* nothing to rotate yet */
	CHECK(!exists(prev));
	CHECK_INT(atomicfile_replace(p, prev, "two", 3, &done, err, sizeof(err)), 0);
	CHECK_INT(done, ATOMICFILE_ROTATED | ATOMICFILE_REPLACED);
	CHECK_STR(slurp(p), "two");
	CHECK_STR(slurp(prev), "one");
	CHECK_INT(atomicfile_replace(p, prev, "three", 5, &done, err, sizeof(err)), 0);
	CHECK_STR(slurp(p), "three");
	CHECK_STR(slurp(prev), "two");
}

static void test_stale_tmp(void)
{
	const char *p = in_dir("s"), *tmp = in_dir("s.tmp");
	char err[256] = "";

	testlib_write_file(tmp, "junk", 4);
	chmod(tmp, 0444);
	CHECK_INT(atomicfile_write(p, "new", 3, err, sizeof(err)), 0);
	CHECK_STR(slurp(p), "new");
	CHECK(!exists(tmp));

	testlib_write_file(tmp, "junk", 4);
	CHECK_INT(atomicfile_remove_tmp(p, err, sizeof(err)), 0);
	CHECK(!exists(tmp));
	CHECK_INT(atomicfile_remove_tmp(p, err, sizeof(err)), 0); /* none: fine */

	/* A stale temp name that cannot be removed: the write fails, and says so. */
	CHECK(mkdir(tmp, 0755) == 0);
	CHECK_INT(atomicfile_write(p, "newer", 5, err, sizeof(err)), ATOMICFILE_ERR_IO);
	CHECK(strstr(err, "remove stale") != NULL && strstr(err, tmp) != NULL);
	CHECK(strstr(err, strerror(EISDIR)) != NULL);
	CHECK_STR(slurp(p), "new");
	CHECK_INT(atomicfile_remove_tmp(p, err, sizeof(err)), ATOMICFILE_ERR_IO);
	rmdir(tmp);
}

static void test_errors(void)
{
	char missing[512], isdir[512], err[256] = "", want[600];
	int done = -1;

	snprintf(missing, sizeof(missing), "%s", in_dir("nodir/x"));
	snprintf(isdir, sizeof(isdir), "%s", in_dir("d"));

	CHECK_INT(atomicfile_write(missing, "x", 1, err, sizeof(err)), ATOMICFILE_ERR_IO);
	snprintf(want, sizeof(want), "open directory %s: %s", in_dir("nodir"), strerror(ENOENT));
	CHECK_STR(err, want);

	/* Renaming a file over a directory fails after the temp file was
	 * written: it must be removed and the step named. */
	CHECK(mkdir(isdir, 0755) == 0);
	CHECK_INT(atomicfile_replace(isdir, NULL, "x", 1, &done, err, sizeof(err)),
	          ATOMICFILE_ERR_IO);
	CHECK_INT(done, 0);
	CHECK(strncmp(err, "rename ", 7) == 0 && strstr(err, in_dir("d.tmp")) != NULL);
	CHECK(!exists(in_dir("d.tmp")));

	CHECK_INT(atomicfile_check_dir(in_dir("a"), err, sizeof(err)), 0);
	CHECK_INT(atomicfile_check_dir(missing, err, sizeof(err)), ATOMICFILE_ERR_NOENT);
	CHECK(strstr(err, in_dir("nodir")) != NULL);
	CHECK_INT(atomicfile_check_dir(in_dir("a/x"), err, sizeof(err)), ATOMICFILE_ERR_IO);
	CHECK(strstr(err, strerror(ENOTDIR)) != NULL);
}

static void test_read_errors(void)
{
	char err[256] = "", *d = NULL;
	size_t len = 0;

	CHECK_INT(atomicfile_read(in_dir("none"), 10, &d, &len, err, sizeof(err)),
	          ATOMICFILE_ERR_NOENT);
	CHECK(d == NULL);
	testlib_write_file(in_dir("big"), "0123456789x", 11);
	CHECK_INT(atomicfile_read(in_dir("big"), 10, &d, &len, err, sizeof(err)),
	          ATOMICFILE_ERR_TOOBIG);
	CHECK(strstr(err, "too large") != NULL);
	CHECK_INT(atomicfile_read(in_dir("big"), 11, &d, &len, err, sizeof(err)), 0);
	CHECK(len == 11 && d != NULL && strcmp(d, "0123456789x") == 0);
	free(d);
	CHECK_INT(atomicfile_read(in_dir("d"), 10, &d, &len, err, sizeof(err)), ATOMICFILE_ERR_IO);
	CHECK(strstr(err, strerror(EISDIR)) != NULL && strstr(err, in_dir("d")) != NULL);
	CHECK_INT(atomicfile_read("/dev/null", 10, &d, &len, err, sizeof(err)), ATOMICFILE_ERR_IO);
	CHECK(strstr(err, "not a regular file") != NULL);
}

static void test_relative_path(void)
{
	char err[256] = "", cwd[512];

	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	CHECK_INT(atomicfile_replace("rel", "rel.prev", "r", 1, NULL, err, sizeof(err)), 0);
	CHECK_STR(slurp("rel"), "r");
	CHECK_INT(atomicfile_check_dir("rel", err, sizeof(err)), 0);
	CHECK(chdir(cwd) == 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	test_write_and_read();
	test_generations();
	test_stale_tmp();
	test_errors();
	test_read_errors();
	test_relative_path();
	testlib_rmtree(dir);
	return testlib_done("test_atomicfile");
}
