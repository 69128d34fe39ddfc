/* journallib: libsystemd's sd-journal resolved at run time (journallib.h). */
#define JOURNALLIB_TABLE
#include "sources/journald/journallib.h"

#include "util/dynlib.h"

#include <stdio.h>
#include <stdlib.h>

struct journallib journallib_table;
bool journallib_loaded;

#define JOURNALLIB_SYM(fn) {offsetof(struct journallib, fn), #fn},
static const struct dynlib_sym syms[] = {JOURNALLIB_FUNCS(JOURNALLIB_SYM)};

int journallib_load(const char *who, char *errbuf, size_t errlen)
{
	char why[400];

	if (journallib_loaded)
		return 0;
	if (dynlib_load(SKIFF_SYSTEMD_SONAME, syms, sizeof(syms) / sizeof(syms[0]),
	                &journallib_table, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "%s: %s: a journald source needs it (Debian: libsystemd0)",
		         who, why);
		return -1;
	}
	journallib_loaded = true;
	return 0;
}

void journallib_need(void)
{
	char why[512];

	if (journallib_load("skiff", why, sizeof(why)) != 0) {
		/* Only a caller that skipped the source's open gets here. */
		fprintf(stderr, "%s\n", why);
		exit(78);
	}
}
