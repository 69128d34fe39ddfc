/* Unit tests of tailindex: streams found by name and by watch descriptor,
 * watches moving and shared, the marked set; checked against a plain model
 * through many random moves (the removal of wd slots shifts entries). */
#include "sources/file/tailindex.h"
#include "testlib.h"

#include <stdlib.h>

#define N 3000

static int model[N]; /* each stream's wd in the model */

/* The streams of wd, counted through the index, each checked to hold it. */
static size_t count_wd(const struct tailindex *x, int wd)
{
	size_t n = 0;

	for (long i = tailindex_wd_first(x, wd); i != TAILINDEX_NONE && n <= N;
	     i = tailindex_wd_next(x, (size_t)i)) {
		CHECK(model[i] == wd);
		n++;
	}
	return n;
}

static void names(void)
{
	struct tailindex *x = NULL;
	long i;

	CHECK_INT(tailindex_new(&x), TAILINDEX_OK);
	CHECK(tailindex_add(x, 0, "/var/log", "a.log", "/var/log/a.log") == 0);
	CHECK(tailindex_add(x, 1, "/var/log", "b.log", "/var/log/b.log") == 0);
	/* another path, same name */
	CHECK(tailindex_add(x, 2, "/var/log", "a.log", "/var/log/./a.log") == 0);
	CHECK(tailindex_add(x, 5, "/x", "y", "/x/y") == TAILINDEX_ERR_NOMEM); /* not the next */
	CHECK(tailindex_name_first(x, "/var/log", "b.log") == 1);
	CHECK(tailindex_name_next(x, 1) == TAILINDEX_NONE);
	i = tailindex_name_first(x, "/var/log", "a.log");
	CHECK(i == 0 || i == 2);
	CHECK(tailindex_name_next(x, (size_t)i) == 2 - i);
	CHECK(tailindex_name_next(x, (size_t)(2 - i)) == TAILINDEX_NONE);
	CHECK(tailindex_name_first(x, "/var", "log/a.log") != TAILINDEX_NONE); /* one key */
	CHECK(tailindex_name_first(x, "/var/log", "c.log") == TAILINDEX_NONE);
	/* Added streams start marked. */
	CHECK(tailindex_nmarked(x) == 3);
	tailindex_unmark_at(x, 0);
	CHECK(tailindex_nmarked(x) == 2);
	CHECK(tailindex_marked(x, 0) == 2); /* the last took its place */
	tailindex_mark(x, 2);
	CHECK(tailindex_nmarked(x) == 2);
	tailindex_mark(x, 0);
	CHECK(tailindex_nmarked(x) == 3 && tailindex_marked(x, 2) == 0);
	tailindex_free(x);
}

static void watches(void)
{
	struct tailindex *x = NULL;
	unsigned seed = 7;

	CHECK_INT(tailindex_new(&x), TAILINDEX_OK);
	for (size_t i = 0; i < N; i++) {
		CHECK(tailindex_add(x, i, "/d", "f", "d/f") == 0);
		model[i] = -1;
	}
	CHECK(tailindex_wd_first(x, 3) == TAILINDEX_NONE);
	/* Random moves among few wds (shared chains) and many (slots added
	 * and removed, probes shifted back). */
	for (int round = 0; round < 200000; round++) {
		size_t i = (size_t)(rand_r(&seed) % N);
		int r = (int)(rand_r(&seed) % 5000) - 1;
		/* Multiples of 65536 share a home slot: long probes to shift. */
		int wd = round < 100000 ? r % 50 : r < 0 ? -1 : r % 2 ? r : (r % 64) * 65536;

		CHECK(tailindex_wd(x, i, wd) == 0);
		model[i] = wd;
		CHECK(tailindex_wd_is(x, i, wd));
	}
	for (int wd = 0; wd < 64 * 65536; wd = wd + 1 < 5000 ? wd + 1 : (wd / 65536 + 1) * 65536) {
		size_t want = 0;

		for (size_t i = 0; i < N; i++)
			want += model[i] == wd;
		CHECK(count_wd(x, wd) == want);
	}
	for (size_t i = 0; i < N; i++)
		CHECK(tailindex_wd(x, i, -1) == 0);
	for (int wd = 0; wd < 64 * 65536; wd = wd + 1 < 5000 ? wd + 1 : (wd / 65536 + 1) * 65536)
		CHECK(tailindex_wd_first(x, wd) == TAILINDEX_NONE);
	tailindex_free(x);
	tailindex_free(NULL);
}

int main(void)
{
	names();
	watches();
	return testlib_done("test_tailindex");
}
