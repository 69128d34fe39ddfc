/* Unit tests of tailscan's watch predicates: when a rescan may leave a
 * directory or a file to its inotify watches; and of the search for a
 * compressed file by its first bytes while logrotate renames .N.gz. */
#include "sources/file/tailscan.h"
#include "testlib.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static char zdir[PATH_MAX];

/* zdir/name holds text gzip'd. */
static void put_gz(const char *name, const char *text)
{
	char p[PATH_MAX + 64];
	gzFile g;

	snprintf(p, sizeof(p), "%s/%s", zdir, name);
	g = gzopen(p, "wb");
	CHECK(g != NULL);
	CHECK(gzwrite(g, text, (unsigned)strlen(text)) == (int)strlen(text));
	CHECK(gzclose(g) == Z_OK);
	nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL); /* births apart */
}

static void mv(const char *from, const char *to)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64];

	snprintf(a, sizeof(a), "%s/%s", zdir, from);
	snprintf(b, sizeof(b), "%s/%s", zdir, to);
	CHECK(rename(a, b) == 0);
}

static int hook_calls, hook_renames;

/* logrotate's rotation with compress, between the search's listing and its
 * opens: .2.gz -> .3.gz, .1.gz -> .2.gz, a new .1.gz (hook_renames times). */
static void rotate_hook(void *opaque)
{
	(void)opaque;
	if (hook_calls++ >= hook_renames)
		return;
	mv("z.log.2.gz", "z.log.3.gz");
	mv("z.log.1.gz", "z.log.2.gz");
	put_gz("z.log.1.gz", "c1\nc2\n");
}

/* The offset's file F (z.log.2.gz, "f1..."), G after it (z.log.1.gz): a
 * rotation between the listing and the opens moves F to .3.gz and G to
 * .2.gz. F is found at .3.gz (before: .2.gz opened as G, fingerprint
 * mismatch, F not found: "the file of the stored offset is gone"). */
static void check_find_compressed_raced(void)
{
	char log[PATH_MAX + 16], *found;
	const char *f = "f1\nf2\n";
	uint64_t fp = tailid_fp_update(TAILID_FP_EMPTY, f, 3);
	struct tailid id = {0}, want;

	snprintf(zdir, sizeof(zdir), "%s/z", testlib_tmpdir());
	CHECK(mkdir(zdir, 0755) == 0);
	snprintf(log, sizeof(log), "%s/z.log", zdir);
	put_gz("z.log.2.gz", f);
	put_gz("z.log.1.gz", "g1\ng2\n");
	testlib_write_file(log, "h1\n", 3);

	hook_calls = 0;
	hook_renames = 1;
	tailscan_set_listed_hook(rotate_hook, NULL);
	found = tailscan_find_compressed(log, NULL, 0, fp, 3, INT64_MIN, &id);
	CHECK(found != NULL && strstr(found, "/z.log.3.gz") != NULL);
	CHECK(tailid_of_path(found != NULL ? found : log, &want) == 0 && tailid_same(&id, &want));
	CHECK_INT(hook_calls, 2); /* listed again once */
	free(found);

	/* Renamed under every listing: bounded, and not found. */
	hook_calls = 0;
	hook_renames = 100;
	found = tailscan_find_compressed(log, NULL, 0, fp, 3, INT64_MIN, &id);
	CHECK(found == NULL);
	CHECK_INT(hook_calls, TAILSCAN_RELIST_TRIES);
	free(found);

	/* Really gone: one listing, nothing raced it. */
	hook_calls = 0;
	hook_renames = 0;
	CHECK(tailscan_find_compressed(log, NULL, 0, fp + 1, 3, INT64_MIN, &id) == NULL);
	CHECK_INT(hook_calls, 1);
	tailscan_set_listed_hook(NULL, NULL);
}

/* Whether zdir/zname is a copy of (decodes to the first bytes of) text. */
static bool zprefix(const char *zname, const char *text)
{
	char p[PATH_MAX + 64], z[PATH_MAX + 64];
	bool r;
	int fd;

	snprintf(p, sizeof(p), "%s/plain", zdir);
	snprintf(z, sizeof(z), "%s/%s", zdir, zname);
	testlib_write_file(p, text, strlen(text));
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	r = tailscan_zprefix(z, fd);
	close(fd);
	return r;
}

/* Files that start with one banner, longer than a fingerprint, are not
 * copies of each other (a hostile tester: app.log.1.gz taken for a copy of
 * app.log being compressed was skipped for good). */
static void check_zprefix_banner(void)
{
	char banner[1200] = "", a[2000], b[2000], z[PATH_MAX + 64];
	FILE *f;
	long n = 0;

	for (int i = 0; i < 10; i++)
		snprintf(banner + strlen(banner), sizeof(banner) - strlen(banner),
		         "BANNER %0100d\n", 0);
	CHECK_INT((int)strlen(banner), 1080);
	snprintf(a, sizeof(a), "%sY 50\nY 51\nY 52\n", banner);
	snprintf(b, sizeof(b), "%sZ 200\n", banner);
	snprintf(zdir, sizeof(zdir), "%s/zp", testlib_tmpdir());
	CHECK(mkdir(zdir, 0755) == 0);
	put_gz("a.gz", a);
	CHECK(zprefix("a.gz", a));                              /* its copy, complete */
	CHECK(!zprefix("a.gz", b));                             /* same banner, other lines */
	CHECK(!zprefix("a.gz", banner));                        /* decodes to more than it holds */
	CHECK(zprefix("a.gz", strcat(strcpy(b, a), "Y 53\n"))); /* its source grew */
	/* Cut short (gzip still writing it): a prefix of its source all the same. */
	snprintf(z, sizeof(z), "%s/a.gz", zdir);
	CHECK((f = fopen(z, "r+")) != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 20);
	fclose(f);
	CHECK(truncate(z, n - 12) == 0);
	CHECK(zprefix("a.gz", a));
	CHECK(!zprefix("a.gz", banner));
}

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
	check_find_compressed_raced();
	check_zprefix_banner();
	return testlib_done("tailscan");
}
