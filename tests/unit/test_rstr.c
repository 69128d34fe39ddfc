/* test_rstr: shared immutable strings (src/util/rstr.c). Under ASan a
 * reference too few is a use after free, one too many a leak. */
#include "util/rstr.h"
#include "testlib.h"

#include <string.h>

static void test_shared(void)
{
	char *s = rstr_new("{\"position\":12}", 15);
	const char *t;

	CHECK(s != NULL);
	CHECK(strcmp(s, "{\"position\":12}") == 0);
	t = rstr_hold(s);
	CHECK(t == s);
	rstr_drop(s);
	CHECK(strcmp(t, "{\"position\":12}") == 0); /* the second owner's still */
	rstr_drop(t);
	rstr_drop(NULL);
}

static void test_filled_later(void)
{
	char *s = rstr_new(NULL, 3);

	CHECK(s != NULL);
	memcpy(s, "abc", 3);
	CHECK(strcmp(s, "abc") == 0);
	CHECK(strlen(s) == 3);
	rstr_drop(s);
	s = rstr_new("", 0);
	CHECK(s != NULL && s[0] == '\0');
	rstr_drop(s);
}

int main(void)
{
	test_shared();
	test_filled_later();
	return testlib_done("test_rstr");
}
