/* Unit tests of props: one test per rule of java.util.Properties.load and per
 * error. tests/props/compare.sh checks the same rules against the JVM. */
#include "config/props.h"
#include "testlib.h"

#include <stdlib.h>

static char err[256];

/* Loads a string (its length by strlen) named "t.properties". */
static struct props *load(const char *s)
{
	struct props *p = NULL;

	err[0] = '\0';
	if (props_load_mem("t.properties", s, strlen(s), &p, err, sizeof(err)) != 0)
		return NULL;
	return p;
}

/* The value of key in s, or "(error)" / "(absent)"; static storage. */
static const char *get(const char *s, const char *key)
{
	static char res[256];
	struct props *p = load(s);
	const char *v;

	if (p == NULL)
		return "(error)";
	v = props_get(p, key);
	snprintf(res, sizeof(res), "%s", v ? v : "(absent)");
	props_destroy(p);
	return res;
}

/* The error text for len bytes at s, or "(loaded)". */
static const char *error_of(const char *s, size_t len)
{
	struct props *p = (struct props *)1;

	err[0] = '\0';
	if (props_load_mem("t.properties", s, len, &p, err, sizeof(err)) == 0) {
		props_destroy(p);
		return "(loaded)";
	}
	CHECK(p == NULL);
	return err;
}

#define ERR(lit) error_of(lit, sizeof(lit) - 1)

static size_t count(const char *s)
{
	struct props *p = load(s);
	size_t n = p ? props_count(p) : (size_t)-1;

	props_destroy(p);
	return n;
}

static void test_separators(void)
{
	CHECK_STR(get("k=v\n", "k"), "v");
	CHECK_STR(get("k:v\n", "k"), "v");
	CHECK_STR(get("k v\n", "k"), "v");
	CHECK_STR(get("k\tv\n", "k"), "v");
	CHECK_STR(get("k\fv\n", "k"), "v");
	CHECK_STR(get("k \t\f= \t\fv\n", "k"), "v");
	CHECK_STR(get("k = = v\n", "k"), "= v");
	CHECK_STR(get("k:=v\n", "k"), "=v");
	CHECK_STR(get("k=:v\n", "k"), ":v");
	CHECK_STR(get("k  v = w\n", "k"), "v = w");
	CHECK_STR(get("k : v:w  \n", "k"), "v:w  ");
	CHECK_STR(get("url=jdbc:sqlite:/x?a=b\n", "url"), "jdbc:sqlite:/x?a=b");
}

static void test_escaped_separators_in_keys(void)
{
	CHECK_STR(get("a\\=b=1\n", "a=b"), "1");
	CHECK_STR(get("a\\:b=2\n", "a:b"), "2");
	CHECK_STR(get("a\\ b=3\n", "a b"), "3");
	CHECK_STR(get("a\\\\=4\n", "a\\"), "4");
	CHECK_STR(get("a\\\\\\=b=5\n", "a\\=b"), "5");
	CHECK_STR(get("\\ lead=6\n", " lead"), "6");
}

static void test_empty_key_and_value(void)
{
	CHECK_STR(get("=v\n", ""), "v");
	CHECK_STR(get("  :v\n", ""), "v");
	CHECK_STR(get("bare\n", "bare"), "");
	CHECK_STR(get("k=\n", "k"), "");
	CHECK_STR(get("k   \n", "k"), "");
	CHECK_STR(get("k =  \t\n", "k"), "");
}

static void test_comments(void)
{
	CHECK_INT(count("# c\n! c\n   # c\n\t\f! c\n"), 0);
	CHECK_STR(get("a=b#c\n", "a"), "b#c");
	CHECK_STR(get("a #b\n", "a"), "#b");
	CHECK_STR(get("#=x\n", ""), "(absent)");
	/* a comment is not decoded, so a bad escape in it is harmless */
	CHECK_STR(get("# \\uZZZZ\nk=v\n", "k"), "v");
	/* a comment never continues, however many backslashes it ends in */
	CHECK_STR(get("# c \\\nk=v\n", "k"), "v");
	CHECK_STR(get("! c \\\\\\\nk=v\n", "k"), "v");
	CHECK_STR(get("#no newline", "#no"), "(absent)");
}

static void test_continuation(void)
{
	CHECK_STR(get("k=one \\\n   two\\\n\t\f three\n", "k"), "one twothree");
	CHECK_STR(get("sp\\\n  lit = v\n", "split"), "v");
	/* a continuation line starting with # or ! is not a comment */
	CHECK_STR(get("k=a \\\n#b\n", "k"), "a #b");
	CHECK_STR(get("k=a \\\n   !b\n", "k"), "a !b");
	/* an even number of backslashes is escaped backslashes, no continuation */
	CHECK_STR(get("k=a\\\\\nn=1\n", "k"), "a\\");
	CHECK_STR(get("k=a\\\\\\\n b\n", "k"), "a\\b");
	/* a blank or whitespace-only line ends the logical line */
	CHECK_STR(get("k=a\\\n\nb=c\n", "k"), "a");
	CHECK_STR(get("k=a\\\n \t\nb=c\n", "b"), "c");
	/* a trailing backslash at the end of the input is dropped */
	CHECK_STR(get("k=v\\", "k"), "v");
	CHECK_STR(get("k=v\\\n", "k"), "v");
}

/* Java quirks kept on purpose (compare.sh has them in the corpus). */
static void test_java_quirks(void)
{
	/* a lone "\" at the very end is an entry with an empty key... */
	CHECK_STR(get("k=v\n\\", ""), "");
	CHECK_STR(get("k=v\n\\\n", ""), "");
	/* ...but not when anything, even blanks, follows */
	CHECK_INT(count("k=v\n\\\n  "), 1);
	CHECK_INT(count("\\\n\nk=v\n"), 1);
	/* after a lone "\" the logical line is still empty: # starts a comment */
	CHECK_INT(count("\\\n#hidden=1\nshown=2\n"), 1);
	/* a UTF-8 byte order mark is part of the first key, as in Java */
	CHECK_STR(get("\xEF\xBB\xBFk=v\n", "\xEF\xBB\xBFk"), "v");
}

static void test_line_endings(void)
{
	struct props *p = load("a=1\rb=2\r\nc=3\\\r\n  x\\\r  y\n\r\n\rd=4");

	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK_INT(props_count(p), 4);
	CHECK_STR(props_get(p, "c"), "3xy");
	CHECK_STR(props_get(p, "d"), "4");
	CHECK_INT(props_line(p, 0), 1);
	CHECK_INT(props_line(p, 1), 2);
	CHECK_INT(props_line(p, 2), 3);
	CHECK_INT(props_line(p, 3), 8);
	props_destroy(p);
}

static void test_escapes(void)
{
	CHECK_STR(get("k=\\t\\n\\r\\f\\b\\z\\\\\\\"\n", "k"), "\t\n\r\fbz\\\"");
	CHECK_STR(get("k=\\ \\ x\n", "k"), "  x");
	CHECK_STR(get("\\u0041\\u0062=\\u00e9\\u00C9\n", "Ab"), "\xC3\xA9\xC3\x89");
	CHECK_STR(get("k=\\u20AC\\uFFFF\n", "k"), "\xE2\x82\xAC\xEF\xBF\xBF");
	CHECK_STR(get("k=\\u007F\\u0080\\u07FF\\u0800\n", "k"), "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80");
	CHECK_STR(get("a\\u003db=1\n", "a=b"), "1");
	/* an escape may straddle a continuation */
	CHECK_STR(get("k=\\u00\\\n  41\n", "k"), "A");
}

static void test_unicode(void)
{
	CHECK_STR(get("caf\xC3\xA9=cr\xC3\xA8me\n", "caf\xC3\xA9"), "cr\xC3\xA8me");
	CHECK_STR(get("k=\xF0\x9F\x98\x80\n", "k"), "\xF0\x9F\x98\x80");
	CHECK_STR(get("k=\\uD83D\\uDE00\n", "k"), "\xF0\x9F\x98\x80");
	CHECK_STR(get("k=\\udbff\\udfff\n", "k"), "\xF4\x8F\xBF\xBF");
	CHECK_STR(get("k=\\uD800\\uDC00\n", "k"), "\xF0\x90\x80\x80");
	CHECK_STR(get("k=\\uD83D\\\n   \\uDE00\n", "k"), "\xF0\x9F\x98\x80");
	/* U+00A0 and U+3000 are not separators */
	CHECK_STR(get("a\xC2\xA0"
	              "b=1\n",
	              "a\xC2\xA0"
	              "b"),
	          "1");
}

static void test_duplicates_and_order(void)
{
	struct props *p = load("b=1\na=2\nb=3\nc\n\\u0062=4\n");

	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK_INT(props_count(p), 3);
	CHECK_STR(props_key(p, 0), "b");
	CHECK_STR(props_value(p, 0), "4");
	CHECK_INT(props_line(p, 0), 5);
	CHECK_STR(props_key(p, 1), "a");
	CHECK_INT(props_line(p, 1), 2);
	CHECK_STR(props_key(p, 2), "c");
	CHECK_STR(props_value(p, 2), "");
	CHECK(props_key(p, 3) == NULL);
	CHECK(props_get(p, "d") == NULL);
	CHECK_STR(props_name(p), "t.properties");
	props_destroy(p);
}

static void test_line_numbers(void)
{
	struct props *p = load("# c\n\n  k1 = a\\\n  b\\\n  c\n\n\\\n\nk2\\\n=v\n");

	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK_STR(props_get(p, "k1"), "abc");
	CHECK_INT(props_line(p, 0), 3);
	CHECK_STR(props_get(p, "k2"), "v");
	CHECK_INT(props_line(p, 1), 9);
	props_destroy(p);
}

static void test_many_keys(void)
{
	size_t n = 20000, i, len = 0;
	char *s = malloc(n * 24), key[32];
	struct props *p;

	if (s == NULL)
		return;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, 24, "key%zu=%zu\n", i % 15000, i);
	p = load(s);
	free(s);
	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK_INT(props_count(p), 15000);
	snprintf(key, sizeof(key), "key%d", 14999);
	CHECK_STR(props_get(p, key), "14999");
	CHECK_STR(props_get(p, "key7"), "15007");
	CHECK_STR(props_key(p, 7), "key7");
	CHECK_INT(props_line(p, 7), 15008);
	CHECK(props_get(p, "key15000") == NULL);
	props_destroy(p);
}

static void test_empty_inputs(void)
{
	struct props *p = NULL;

	CHECK_INT(props_load_mem("e", NULL, 0, &p, err, sizeof(err)), 0);
	CHECK(p != NULL && props_count(p) == 0 && props_get(p, "k") == NULL);
	props_destroy(p);
	CHECK_INT(count("   \n\t\n\f\n \r\n"), 0);
	props_destroy(NULL);
}

static void test_errors(void)
{
	CHECK_STR(ERR("a=1\nb=\xC3\n"), "t.properties:2: invalid UTF-8");
	CHECK_STR(ERR("a=1\r\n\r\n# caf\xE9\n"), "t.properties:3: invalid UTF-8");
	CHECK_STR(ERR("a=\xC0\xAF"), "t.properties:1: invalid UTF-8");
	CHECK_STR(ERR("a=\xED\xA0\x80"), "t.properties:1: invalid UTF-8");
	CHECK_STR(ERR("a=\xF4\x90\x80\x80"), "t.properties:1: invalid UTF-8");
	CHECK_STR(ERR("a=\xE6\x97"), "t.properties:1: invalid UTF-8");
	CHECK_STR(ERR("a=\\u12\n"), "t.properties:1: malformed \\uxxxx encoding");
	CHECK_STR(ERR("\n\\uXYZW=1\n"), "t.properties:2: malformed \\uxxxx encoding");
	CHECK_STR(ERR("\\u00=xy\n"), "t.properties:1: malformed \\uxxxx encoding");
	CHECK_STR(ERR("a=x \\\n y \\\n \\u00G1\n"), "t.properties:3: malformed \\uxxxx encoding");
	CHECK_STR(ERR("a=\\u"), "t.properties:1: malformed \\uxxxx encoding");
	CHECK_STR(ERR("a=\\uD83D\n"), "t.properties:1: unpaired surrogate \\uD83D");
	CHECK_STR(ERR("a=\\uD83Dx\n"), "t.properties:1: unpaired surrogate \\uD83D");
	CHECK_STR(ERR("a=\\uDE00\\uD83D\n"), "t.properties:1: unpaired surrogate \\uDE00");
	CHECK_STR(ERR("a=\\uD83D\\\n\\uD83D\\\n\\uDE00\n"),
	          "t.properties:1: unpaired surrogate \\uD83D");
	/* replaced by a later line or not, a bad entry is an error */
	CHECK_STR(ERR("a=\\uDE00\na=ok\n"), "t.properties:1: unpaired surrogate \\uDE00");
	CHECK_STR(ERR("a=x\\u0000\n"), "t.properties:1: NUL character (\\u0000) not supported");
	CHECK_STR(ERR("a=x\0y\n"), "t.properties:1: NUL character not supported");
	CHECK_STR(ERR("# \0\na=b\n"), "(loaded)");
}

static void test_limits(void)
{
	size_t big = PROPS_MAX_FILE_BYTES + 1;
	char *s = malloc(big);
	struct props *p = NULL;

	if (s == NULL)
		return;
	memset(s, '#', big);
	CHECK_STR(error_of(s, big), "t.properties: file too large (limit 1048576 bytes)");
	CHECK_STR(error_of(s, big - 1), "(loaded)");
	/* a NULL or empty errbuf is allowed */
	CHECK_INT(props_load_mem("x", "a=\\u", 4, &p, NULL, 0), -1);
	CHECK(p == NULL);
	CHECK_INT(props_load_mem("x", "a=\\u", 4, &p, err, 5), -1);
	CHECK_STR(err, "x:1:");
	free(s);
}

static void test_files(void)
{
	const char *dir = testlib_tmpdir();
	char path[512], big_path[512], missing[512];
	struct props *p = (struct props *)1;
	size_t big = PROPS_MAX_FILE_BYTES + 1;
	char *s = malloc(big);
	const char *text = "# c\nname = local-file-source\ntopic=connect-test\n";

	snprintf(path, sizeof(path), "%s/ok.properties", dir);
	snprintf(big_path, sizeof(big_path), "%s/big.properties", dir);
	snprintf(missing, sizeof(missing), "%s/missing.properties", dir);
	testlib_write_file(path, text, strlen(text));
	CHECK_INT(props_load_file(path, &p, err, sizeof(err)), 0);
	CHECK(p != NULL && props_count(p) == 2);
	if (p != NULL) {
		CHECK_STR(props_get(p, "name"), "local-file-source");
		CHECK_INT(props_line(p, 1), 3);
		CHECK_STR(props_name(p), path);
	}
	props_destroy(p);

	CHECK_INT(props_load_file(missing, &p, err, sizeof(err)), -1);
	CHECK(p == NULL);
	CHECK(strncmp(err, missing, strlen(missing)) == 0);
	CHECK_STR(err + strlen(missing), ": No such file or directory");

	CHECK_INT(props_load_file(dir, &p, err, sizeof(err)), -1);
	CHECK_STR(err + strlen(dir), ": Is a directory");

	if (s != NULL) {
		memset(s, '\n', big);
		testlib_write_file(big_path, s, big);
		CHECK_INT(props_load_file(big_path, &p, err, sizeof(err)), -1);
		CHECK_STR(err + strlen(big_path), ": file too large (limit 1048576 bytes)");
		testlib_write_file(big_path, s, big - 1);
		CHECK_INT(props_load_file(big_path, &p, err, sizeof(err)), 0);
		props_destroy(p);
	}
	free(s);
	remove(path);
	remove(big_path);
	remove(dir);
}

int main(void)
{
	test_separators();
	test_escaped_separators_in_keys();
	test_empty_key_and_value();
	test_comments();
	test_continuation();
	test_java_quirks();
	test_line_endings();
	test_escapes();
	test_unicode();
	test_duplicates_and_order();
	test_line_numbers();
	test_many_keys();
	test_empty_inputs();
	test_errors();
	test_limits();
	test_files();
	return testlib_done("test_props");
}
