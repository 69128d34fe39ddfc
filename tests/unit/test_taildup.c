/* Unit tests of taildup: one file named twice, in one connector or two. */
#include "sources/file/taildup.h"
#include "sourceenv_fake.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Two connectors' environments (sourceenv_fake.h): a and b. */
static struct sourceenv_fake fa, fb;

int main(void)
{
	char real[512], link[512], other[512], expect[2048];
	struct taildup *a, *b;

	sourceenv_fake_init(&fa, "a");
	sourceenv_fake_init(&fb, "b");
	CHECK_INT(taildup_new(&fa.env, &a), TAILDUP_OK);
	CHECK_INT(taildup_new(&fb.env, &b), TAILDUP_OK);
	snprintf(real, sizeof(real), "%s/real.log", testlib_tmpdir());
	snprintf(link, sizeof(link), "%s/link.log", testlib_tmpdir());
	snprintf(other, sizeof(other), "%s/other.log", testlib_tmpdir());
	testlib_write_file(real, "x\n", 2);
	testlib_write_file(other, "y\n", 2);
	unlink(link);
	CHECK(symlink(real, link) == 0);

	/* One connector: the first path is tailed, the link skipped, said once. */
	CHECK(!taildup_skip(a, real));
	CHECK(taildup_skip(a, link));
	CHECK(taildup_skip(a, link));
	CHECK_INT(sourceenv_fake_counted(&fa, "paths_duplicate"), 1);
	snprintf(expect, sizeof(expect), "a: %s is the same file as %s", link, real);
	CHECK(strstr(fa.logged, expect) != NULL);
	/* A path not there yet is tailed (compared once it exists). */
	CHECK(!taildup_skip(a, "/nonexistent/x.log"));

	/* Kept at the caller's copy (a stream's path): still compared, and
	 * named, by it; within a pass too (the inode index). */
	{
		static char kept[512];
		char link2[512];

		snprintf(kept, sizeof(kept), "%s/kept.log", testlib_tmpdir());
		snprintf(link2, sizeof(link2), "%s/link2.log", testlib_tmpdir());
		testlib_write_file(kept, "k\n", 2);
		unlink(link2);
		CHECK(symlink(kept, link2) == 0);
		{
			char tmp[512];

			snprintf(tmp, sizeof(tmp), "%s", kept);
			CHECK(!taildup_skip(a, tmp));
			taildup_adopt(a, kept);
			memset(tmp, 'x', sizeof(tmp) - 1); /* the copy given is gone */
		}
		fa.logged[0] = '\0';
		taildup_pass(a, true);
		CHECK(taildup_skip(a, link2));
		taildup_pass(a, false);
		snprintf(expect, sizeof(expect), "a: %s is the same file as %s", link2, kept);
		CHECK(strstr(fa.logged, expect) != NULL);
		unlink(link2);
		unlink(kept);
	}

	/* Another connector: tailed too, with a warning naming both. */
	fb.logged[0] = '\0';
	CHECK(!taildup_skip(b, link));
	snprintf(expect, sizeof(expect), "b: %s is also tailed by connector a (as %s)", link, real);
	CHECK(strstr(fb.logged, expect) != NULL);

	/* Within b's pass (a glob), a's paths are looked up through an index
	 * built for the pass (not one walk of a's paths per new path of b):
	 * still named; and dropped at the pass's end, so a later pass sees
	 * what a's paths name then. */
	{
		struct taildup *e = NULL; /* a third, tailing nothing yet */
		char real2[512];

		CHECK_INT(taildup_new(&fb.env, &e), TAILDUP_OK);
		snprintf(real2, sizeof(real2), "%s/real2.log", testlib_tmpdir());
		fb.logged[0] = '\0';
		taildup_pass(e, true);
		CHECK(!taildup_skip(e, real));
		CHECK(!taildup_skip(e, "/nonexistent/y.log"));
		taildup_pass(e, false);
		snprintf(expect, sizeof(expect), "b: %s is also tailed by connector a (as %s)",
		         real, real);
		CHECK(strstr(fb.logged, expect) != NULL);
		/* a's real.log replaced by another file: b's new link to the
		 * old one's successor is not a's. */
		CHECK(rename(real, real2) == 0);
		testlib_write_file(real, "z\n", 2);
		fb.logged[0] = '\0';
		taildup_pass(e, true);
		CHECK(!taildup_skip(e, real2));
		taildup_pass(e, false);
		CHECK(strstr(fb.logged, "also tailed") == NULL);
		fb.logged[0] = '\0';
		taildup_pass(e, true);
		CHECK(!taildup_skip(e, other));
		taildup_pass(e, false);
		CHECK(strstr(fb.logged, "also tailed") == NULL);
		taildup_free(e);
		CHECK(rename(real2, real) == 0); /* a's file back at its path */
	}

	/* The link re-pointed to a file nobody tails: tailed. */
	unlink(link);
	CHECK(symlink(other, link) == 0);
	CHECK(!taildup_skip(a, link));

	/* A pass that starts on an empty register (its first lookup builds an
	 * empty index) and grows it past its first room (the index is kept for
	 * the pass only, and grows with it): the last path, a link to the
	 * first, is still found; a later pass sees the link re-pointed. */
	{
		struct taildup *c = NULL;
		const char *dir = testlib_tmpdir(); /* a new one at each call */
		char p[512], l[512];

		CHECK_INT(taildup_new(&fa.env, &c), TAILDUP_OK);
		taildup_pass(c, true);
		for (int i = 0; i < 40; i++) {
			snprintf(p, sizeof(p), "%s/many%02d.log", dir, i);
			testlib_write_file(p, "m\n", 2);
			CHECK(!taildup_skip(c, p));
		}
		snprintf(p, sizeof(p), "%s/many00.log", dir);
		snprintf(l, sizeof(l), "%s/manylink.log", dir);
		unlink(l);
		CHECK(symlink(p, l) == 0);
		CHECK(taildup_skip(c, l));
		taildup_pass(c, false);
		unlink(l);
		CHECK(symlink(other, l) == 0);
		taildup_pass(c, true);
		CHECK(!taildup_skip(c, l));
		taildup_pass(c, false);
		taildup_free(c);
		unlink(l);
		for (int i = 0; i < 40; i++) {
			snprintf(p, sizeof(p), "%s/many%02d.log", dir, i);
			unlink(p);
		}
	}

	taildup_free(a);
	fb.logged[0] = '\0';
	CHECK(!taildup_skip(b, real));
	CHECK(strstr(fb.logged, "connector a") == NULL); /* a is gone */
	taildup_free(b);
	taildup_free(NULL);
	unlink(link);
	unlink(real);
	unlink(other);
	sourceenv_fake_free(&fa);
	sourceenv_fake_free(&fb);
	return testlib_done("test_taildup");
}
