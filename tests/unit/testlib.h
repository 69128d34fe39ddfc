/* testlib: a tiny assertion library for the unit tests (one executable per
 * module). Each CHECK failure prints file:line and the expression, and the
 * process exits 1 at the end of main via testlib_done(). */
#ifndef SKIFF_TESTLIB_H
#define SKIFF_TESTLIB_H

#include <stdio.h>
#include <string.h>

extern int testlib_failures;
extern int testlib_checks;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		testlib_checks++;                                                                  \
		if (!(cond)) {                                                                     \
			testlib_failures++;                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		testlib_checks++;                                                                  \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {                             \
			testlib_failures++;                                                        \
			fprintf(                                                                   \
			    stderr, "%s:%d: CHECK_STR failed: %s == %s\n  got:  %s\n  want: %s\n", \
			    __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");   \
		}                                                                                  \
	} while (0)

#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		testlib_checks++;                                                                  \
		if (a_ != b_) {                                                                    \
			testlib_failures++;                                                        \
			fprintf(stderr, "%s:%d: CHECK_INT failed: %s == %s (%lld != %lld)\n",      \
			        __FILE__, __LINE__, #a, #b, a_, b_);                               \
		}                                                                                  \
	} while (0)

/* Makes a fresh temporary directory; returns its path (static storage). */
const char *testlib_tmpdir(void);

/* Removes dir and everything below it, links not followed; what cannot
 * be removed is left (a test's clean-up, never checked). */
void testlib_rmtree(const char *dir);

/* Writes len bytes to path, aborting the test on failure. */
void testlib_write_file(const char *path, const void *data, size_t len);

/* Prints the summary and returns the exit status for main. */
int testlib_done(const char *name);

#endif
