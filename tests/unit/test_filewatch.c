/* Unit tests for filewatch.c: a file replaced by a rename, and a file that
 * is a symlink into another directory (certs/device.pem ->
 * ../ext/device.pem): its target written over in place, replaced by a
 * rename in that directory, and the link pointed elsewhere, after which the
 * new target's directory is watched too. */
#include "util/filewatch.h"
#include "testlib.h"

#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether fw saw a change of path within two seconds. */
static bool saw(struct filewatch *fw, const char *path)
{
	struct pollfd p = {.fd = filewatch_fd(fw), .events = POLLIN};
	const char *which;

	if (poll(&p, 1, 2000) != 1 || !filewatch_drain(fw))
		return false;
	which = filewatch_changed(fw);
	return which != NULL && strcmp(which, path) == 0;
}

static void replace(const char *dir, const char *name, const char *text)
{
	char tmp[PATH_MAX], dst[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	testlib_write_file(tmp, text, strlen(text));
	CHECK_INT(rename(tmp, dst), 0);
}

static void test_plain_file_renamed_over(void)
{
	const char *d = testlib_tmpdir();
	char path[PATH_MAX], errbuf[256];
	const char *paths[1] = {path};
	struct filewatch *fw;

	snprintf(path, sizeof(path), "%s/device.pem", d);
	testlib_write_file(path, "one", 3);
	CHECK_INT(filewatch_new(paths, 1, &fw, errbuf, sizeof(errbuf)), 0);
	replace(d, "device.pem", "two!");
	CHECK(saw(fw, path));
	CHECK(filewatch_changed(fw) == NULL);
	filewatch_destroy(fw);
}

static void test_symlink_into_another_directory(void)
{
	const char *d = testlib_tmpdir();
	char certs[512], ext[512], ext2[512], link[PATH_MAX], target[PATH_MAX];
	char tmplink[PATH_MAX], errbuf[256];
	const char *paths[1] = {link};
	struct filewatch *fw;
	FILE *f;

	snprintf(certs, sizeof(certs), "%s/certs", d);
	snprintf(ext, sizeof(ext), "%s/ext", d);
	snprintf(ext2, sizeof(ext2), "%s/ext2", d);
	CHECK_INT(mkdir(certs, 0700) | mkdir(ext, 0700) | mkdir(ext2, 0700), 0);
	snprintf(target, sizeof(target), "%s/device.pem", ext);
	snprintf(link, sizeof(link), "%s/device.pem", certs);
	testlib_write_file(target, "one", 3);
	CHECK_INT(symlink("../ext/device.pem", link), 0);
	CHECK_INT(filewatch_new(paths, 1, &fw, errbuf, sizeof(errbuf)), 0);

	/* cp over the target: written in place. */
	f = fopen(target, "a");
	CHECK(f != NULL && fputs(" more", f) >= 0 && fclose(f) == 0);
	CHECK(saw(fw, link));
	/* A new target renamed into ext/. */
	replace(ext, "device.pem", "three");
	CHECK(saw(fw, link));
	/* The link pointed into ext2/ (a new link renamed over it) ... */
	snprintf(target, sizeof(target), "%s/device.pem", ext2);
	testlib_write_file(target, "four", 4);
	snprintf(tmplink, sizeof(tmplink), "%s/.device.pem.new", certs);
	CHECK_INT(symlink("../ext2/device.pem", tmplink), 0);
	CHECK_INT(rename(tmplink, link), 0);
	CHECK(saw(fw, link));
	/* ... then its new target replaced: seen through ext2/'s watch. */
	replace(ext2, "device.pem", "five!");
	CHECK(saw(fw, link));
	filewatch_destroy(fw);
}

int main(void)
{
	test_plain_file_renamed_over();
	test_symlink_into_another_directory();
	return testlib_done("test_filewatch");
}
