/* test_javafmt: Java's text for integers, against snprintf's "%lld". */
#include "convert/javafmt.h"
#include "testlib.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static void test_long(void)
{
	const long long cases[] = {0,         1,         -1,           9, 10, -10, 1234567890123LL,
	                           LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
	char out[JAVAFMT_LONG_MAX + 1], want[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = javafmt_long(cases[i], out);

		out[n] = '\0';
		snprintf(want, sizeof(want), "%lld", cases[i]);
		CHECK_STR(out, want);
	}
}

int main(void)
{
	test_long();
	return testlib_done("test_javafmt");
}
