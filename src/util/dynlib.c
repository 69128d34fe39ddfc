/* dynlib: a shared library loaded at run time (dynlib.h). */
#include "util/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int dynlib_load(const char *soname, const struct dynlib_sym *syms, size_t n, void *table,
                char *errbuf, size_t errlen)
{
	/* RTLD_LOCAL: its symbols stay out of the global scope, where they
	 * could interpose on a later library's. */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(errbuf, errlen, "%s: cannot be loaded: %s", soname, dlerror());
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		void *fn = dlsym(h, syms[i].name);

		if (fn == NULL) {
			snprintf(errbuf, errlen, "%s: has no %s", soname, syms[i].name);
			dlclose(h);
			return -1;
		}
		/* POSIX guarantees a function pointer survives the round trip
		 * through void *, which dlsym() relies on. */
		memcpy((char *)table + syms[i].at, &fn, sizeof(fn));
	}
	return 0;
}
