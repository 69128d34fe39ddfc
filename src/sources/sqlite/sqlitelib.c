/* sqlitelib: SQLite resolved at run time (sqlitelib.h). */
#define SQLITELIB_TABLE
#include "sources/sqlite/sqlitelib.h"

#include "util/dynlib.h"

#include <stdio.h>
#include <stdlib.h>

struct sqlitelib sqlitelib_table;
bool sqlitelib_loaded;

#define SQLITELIB_SYM(fn) {offsetof(struct sqlitelib, fn), #fn},
static const struct dynlib_sym syms[] = {SQLITELIB_FUNCS(SQLITELIB_SYM)};

int sqlitelib_load(const char *who, char *errbuf, size_t errlen)
{
	char why[400];

	if (sqlitelib_loaded)
		return 0;
	if (dynlib_load(SKIFF_SQLITE_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &sqlitelib_table,
	                why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "%s: %s: a SQLite source needs it (Debian: libsqlite3-0)",
		         who, why);
		return -1;
	}
	sqlitelib_loaded = true;
	return 0;
}

void sqlitelib_need(void)
{
	char why[512];

	if (sqlitelib_load("skiff", why, sizeof(why)) != 0) {
		/* Only a caller that skipped the source's open gets here. */
		fprintf(stderr, "%s\n", why);
		exit(78);
	}
}
