/* tailnotice: the inotify backend reports what tailwatch's handlers act on
 * (names in a directory, writes, a watched directory moved or deleted) as
 * tailnotice bits; the poll backend hears nothing, waits on no descriptor,
 * and asks for a stat pass each period. */
#include "sources/file/tailnotice.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SEEN 16

struct seen {
	size_t n;
	int h[MAX_SEEN];
	char name[MAX_SEEN][64];
	unsigned what[MAX_SEEN];
};

static void collect(void *arg, int h, const char *name, unsigned what)
{
	struct seen *s = arg;

	if (s->n == MAX_SEEN)
		return;
	s->h[s->n] = h;
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name != NULL ? name : "");
	s->what[s->n++] = what;
}

/* The bits of every change seen on handle h with name name, or'ed. */
static unsigned seen_on(const struct seen *s, int h, const char *name)
{
	unsigned what = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->h[i] == h && strcmp(s->name[i], name) == 0)
			what |= s->what[i];
	return what;
}

static void test_inotify_dir(void)
{
	const struct tailnotice_ops *ops = &tailnotice_inotify;
	struct tailnotice *n = NULL;
	struct seen s = {0};
	struct pollfd pfd[2];
	char dir[512], path[600], moved[600], err[128];
	int h, h2;

	snprintf(dir, sizeof(dir), "%s/d", testlib_tmpdir());
	CHECK(mkdir(dir, 0700) == 0);
	CHECK_INT(ops->open(&n, 500, err, sizeof(err)), TAILNOTICE_OK);
	CHECK(ops->hears);
	CHECK_INT(ops->fds(n, pfd, 2), 1);
	CHECK(pfd[0].fd >= 0 && pfd[0].events == POLLIN);
	CHECK_INT(ops->deadline(n), -1);
	h = ops->watch_dir(n, dir, false);
	CHECK(h >= 0);
	snprintf(path, sizeof(path), "%s/app.log", dir);
	testlib_write_file(path, "a\n", 2);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "app.log") & TAILNOTICE_NAME_IN);
	CHECK(seen_on(&s, h, "app.log") & TAILNOTICE_CREATED);
	CHECK(!(seen_on(&s, h, "app.log") & TAILNOTICE_WRITE)); /* writes not asked for */

	/* Watching writes too: the same handle, the mask replaced. */
	h2 = ops->watch_dir(n, dir, true);
	CHECK_INT(h2, h);
	s.n = 0;
	testlib_write_file(path, "b\n", 2);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "app.log") & TAILNOTICE_WRITE);

	/* A rename into the directory is a name in, not a creation. */
	snprintf(moved, sizeof(moved), "%s/app.log.1", dir);
	s.n = 0;
	CHECK(rename(path, moved) == 0 && rename(moved, path) == 0);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "app.log") & TAILNOTICE_NAME_IN);
	CHECK(!(seen_on(&s, h, "app.log") & TAILNOTICE_CREATED));

	/* The directory itself deleted: its watch is gone, without a name. */
	s.n = 0;
	CHECK(unlink(path) == 0 && rmdir(dir) == 0);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "") & TAILNOTICE_GONE);
	CHECK(seen_on(&s, h, "") & TAILNOTICE_DROPPED);
	ops->close(n);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

static void test_inotify_file(void)
{
	const struct tailnotice_ops *ops = &tailnotice_inotify;
	struct tailnotice *n = NULL;
	struct seen s = {0};
	char tmp[256], path[600], other[600], proc[64], err[128];
	int fd, h;

	snprintf(tmp, sizeof(tmp), "%s", testlib_tmpdir());
	snprintf(path, sizeof(path), "%s/f.log", tmp);
	snprintf(other, sizeof(other), "%s/f.log.1", tmp);
	testlib_write_file(path, "a\n", 2);
	CHECK_INT(ops->open(&n, 500, err, sizeof(err)), TAILNOTICE_OK);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	h = ops->watch_file(n, proc);
	CHECK(h >= 0);
	testlib_write_file(path, "b\n", 2);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "") & TAILNOTICE_WRITE);
	s.n = 0;
	CHECK(rename(path, other) == 0);
	ops->drain(n, 0, collect, &s);
	CHECK(seen_on(&s, h, "") & TAILNOTICE_MOVED);
	CHECK(!(seen_on(&s, h, "") & TAILNOTICE_GONE));
	/* Unwatched: its end is reported, then nothing more. */
	s.n = 0;
	ops->unwatch(n, h);
	testlib_write_file(other, "c\n", 2);
	ops->drain(n, 0, collect, &s);
	CHECK_INT(seen_on(&s, h, ""), TAILNOTICE_DROPPED);
	close(fd);
	ops->close(n);
	ops->close(NULL);
	unlink(other);
	rmdir(tmp);
}

static void test_poll(void)
{
	const struct tailnotice_ops *ops = &tailnotice_poll;
	struct tailnotice *n = NULL;
	struct seen s = {0};
	struct pollfd pfd[1];
	char err[128];
	const char *tmp = testlib_tmpdir();

	CHECK_INT(ops->open(&n, 500, err, sizeof(err)), TAILNOTICE_OK);
	CHECK(!ops->hears);
	CHECK_INT(ops->fds(n, pfd, 1), 0);
	CHECK_INT(ops->watch_dir(n, tmp, true), -1);
	CHECK_INT(ops->watch_file(n, tmp), -1);
	ops->unwatch(n, 3);
	/* A stat pass at the first drain, then one each 500 ms. */
	CHECK_INT(ops->deadline(n), 0);
	ops->drain(n, 1000, collect, &s);
	CHECK_INT((long long)s.n, 1);
	CHECK_INT(s.h[0], -1);
	CHECK_INT(s.what[0], TAILNOTICE_PASS);
	CHECK_INT(ops->deadline(n), 1500);
	ops->drain(n, 1499, collect, &s);
	CHECK_INT((long long)s.n, 1);
	ops->drain(n, 1500, collect, &s);
	CHECK_INT((long long)s.n, 2);
	CHECK_INT(ops->deadline(n), 2000);
	ops->close(n);
	ops->close(NULL);
	rmdir(tmp);
}

int main(void)
{
	test_inotify_dir();
	test_inotify_file();
	test_poll();
	return testlib_done("test_tailnotice");
}
