/* utf8: where a long line is cut (utf8_cut). The decoder itself is settled
 * against Java by tests/convert/compare.sh. */
#include "testlib.h"
#include "util/utf8.h"

/* utf8_cut of the string s (its strlen) at max. */
static size_t cut(const char *s, size_t max)
{
	return utf8_cut(s, strlen(s), max);
}

static void test_fits(void)
{
	CHECK_INT(cut("", 16), 0);
	CHECK_INT(cut("abc", 16), 3);
	CHECK_INT(cut("0123456789abcdef", 16), 16);
	CHECK_INT(cut("0123456789abcdefg", 16), 16);
	/* ends in a character cut by the end of the bytes: not ours to cut */
	CHECK_INT(cut("0123456789abcd\xF0\x9F", 16), 16);
}

static void test_straddling(void)
{
	/* U+1F600 with 1, 2 and 3 of its bytes before the cut */
	CHECK_INT(cut("abcdefghijklmno\xF0\x9F\x98\x80z", 16), 15);
	CHECK_INT(cut("abcdefghijklmn\xF0\x9F\x98\x80gh", 16), 14);
	CHECK_INT(cut("abcdefghijklm\xF0\x9F\x98\x80z", 16), 13);
	/* U+20AC, U+00E9 */
	CHECK_INT(cut("abcdefghijklmn\xE2\x82\xACx", 16), 14);
	CHECK_INT(cut("abcdefghijklmno\xE2\x82\xACx", 16), 15);
	CHECK_INT(cut("abcdefghijklmno\xC3\xA9x", 16), 15);
	/* the edges of the second byte's ranges: U+0800, U+D7FF, U+10000,
	 * U+10FFFF */
	CHECK_INT(cut("abcdefghijklmno\xE0\xA0\x80", 16), 15);
	CHECK_INT(cut("abcdefghijklmno\xED\x9F\xBF", 16), 15);
	CHECK_INT(cut("abcdefghijklmno\xF0\x90\x80\x80", 16), 15);
	CHECK_INT(cut("abcdefghijklmno\xF4\x8F\xBF\xBF", 16), 15);
	/* a well-formed prefix across the cut whose end is malformed: still
	 * backed off (the cut never looks past s[max]) */
	CHECK_INT(cut("abcdefghijklmn\xF0\x9F\x98x", 16), 14);
}

static void test_at_a_boundary(void)
{
	/* a character ending exactly at the cut, or starting at it */
	CHECK_INT(cut("abcdefghijkl\xF0\x9F\x98\x80rest", 16), 16);
	CHECK_INT(cut("abcdefghijklmnop\xF0\x9F\x98\x80", 16), 16);
	CHECK_INT(cut("abcdefghijklmn\xC3\xA9\xC3\xA9", 16), 16);
}

static void test_invalid_never_backed_off(void)
{
	CHECK_INT(cut("abcdefghijklmno\xFF\x80\x80", 16), 16);
	CHECK_INT(cut("abcdefghijklm\x80\x80\x80\x80x", 16), 16);  /* no lead */
	CHECK_INT(cut("abcdefghijklmn\xE0\x80\x80zz", 16), 16);    /* overlong */
	CHECK_INT(cut("abcdefghijklmn\xC0\x80\x80zz", 16), 16);    /* C0 */
	CHECK_INT(cut("abcdefghijklmn\xED\xA0\x80zz", 16), 16);    /* surrogate */
	CHECK_INT(cut("abcdefghijklmn\xF0\x80\x80\x80z", 16), 16); /* overlong */
	CHECK_INT(cut("abcdefghijklmn\xF4\x90\x80\x80z", 16), 16); /* > U+10FFFF */
	CHECK_INT(cut("abcdefghijklmn\xF5\x80\x80\x80z", 16), 16);
	CHECK_INT(cut("abcdefghijklmno\xC3x", 16), 16);        /* not continued */
	CHECK_INT(cut("abcdefghijklmn\xE2\x82x", 16), 16);     /* likewise */
	CHECK_INT(cut("abcdefghijklmn\xC3\xA9\xA9z", 16), 16); /* complete before */
	CHECK_INT(cut("abcdefghijklm\xE2\x82\xAC\x80x", 16), 16);
}

static void test_never_to_zero(void)
{
	/* a character at the start longer than max: cut at max, the piece is
	 * never empty */
	CHECK_INT(cut("\xF0\x9F\x98\x80", 2), 2);
	CHECK_INT(cut("\xF0\x9F\x98\x80", 1), 1);
	CHECK_INT(cut("a\xF0\x9F\x98\x80", 2), 1);
}

int main(void)
{
	test_fits();
	test_straddling();
	test_at_a_boundary();
	test_invalid_never_backed_off();
	test_never_to_zero();
	return testlib_done("test_utf8");
}
