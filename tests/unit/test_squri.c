/* squri: the file behind an SQLite URI, as SQLite reads it. */
#include "sources/sqlite/squri.h"
#include "testlib.h"

#include <stdlib.h>

static void ok(const char *uri, const char *want)
{
	char err[256] = "";
	char *got = squri_file(uri, err, sizeof(err));

	CHECK_STR(got, want);
	if (got == NULL)
		fprintf(stderr, "  %s: %s\n", uri, err);
	free(got);
}

static void bad(const char *uri, const char *why)
{
	char err[256] = "";
	char *got = squri_file(uri, err, sizeof(err));

	CHECK(got == NULL);
	CHECK(strstr(err, why) != NULL);
	free(got);
}

int main(void)
{
	ok("file:/var/lib/app.db", "/var/lib/app.db");
	ok("file:/var/lib/app.db?mode=ro&cache=private", "/var/lib/app.db");
	ok("file:///var/lib/app.db?mode=ro", "/var/lib/app.db");
	ok("file://localhost/var/lib/app.db", "/var/lib/app.db");
	ok("file:data/app.db#frag", "data/app.db");
	ok("file:/tmp/a%20b%3Fc.db?immutable=1", "/tmp/a b?c.db");
	bad("file://otherhost/app.db", "authority");
	bad("file::memory:", "name a database file");
	bad("file:/x.db?mode=memory", "name a database file");
	bad("file:?mode=ro", "name a database file");
	bad("file:/a%2.db", "escape");
	bad("file:/a%00.db", "escape");
	/* skiff's read-only VFS is not to be replaced (sqvfs.c). */
	bad("file:/x.db?vfs=unix", "vfs= is not allowed");
	bad("file:/x.db?mode=ro&v%66s=unix-none", "vfs= is not allowed");
	ok("file:/x.db?mode=ro&vfsx=1#vfs=unix", "/x.db");
	return testlib_done("test_squri");
}
