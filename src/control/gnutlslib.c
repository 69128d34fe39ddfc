/* gnutlslib: GnuTLS resolved at run time (gnutlslib.h). */
#include "control/gnutlslib.h"

#include "util/dynlib.h"

static struct gnutlslib table;
static int loaded;

#define GNUTLSLIB_ENTRY(fn) {offsetof(struct gnutlslib, fn), #fn},
static const struct dynlib_sym entries[] = {
    GNUTLSLIB_FUNCS(GNUTLSLIB_ENTRY){offsetof(struct gnutlslib, free_fn), "gnutls_free"},
};
#undef GNUTLSLIB_ENTRY

int gnutlslib_get(const struct gnutlslib **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	if (!loaded) {
		if (dynlib_load(SKIFF_GNUTLS_SONAME, entries, sizeof(entries) / sizeof(entries[0]),
		                &table, errbuf, errlen) != 0)
			return -1;
		loaded = 1;
	}
	*out = &table;
	return 0;
}
