/* mhdlib: libmicrohttpd resolved at run time (mhdlib.h). */
#include "mhdlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static struct mhdlib table;
static void *handle;

/* One entry: where in the table, and the symbol's name. */
#define ENTRY(field)                                                                               \
	{                                                                                          \
		offsetof(struct mhdlib, field), "MHD_" #field                                      \
	}

static const struct {
	size_t at;
	const char *name;
} entries[] = {
    ENTRY(start_daemon),
    ENTRY(stop_daemon),
    ENTRY(run),
    ENTRY(get_timeout),
    ENTRY(get_daemon_info),
    ENTRY(get_connection_info),
    ENTRY(get_connection_values),
    ENTRY(create_response_from_buffer),
    ENTRY(add_response_header),
    ENTRY(queue_response),
    ENTRY(destroy_response),
};

int mhdlib_get(const struct mhdlib **out, char *errbuf, size_t errlen)
{
	struct mhdlib t;
	void *h;

	*out = NULL;
	if (handle != NULL) {
		*out = &table;
		return 0;
	}
	/* RTLD_LOCAL: its symbols stay out of the global scope, where they
	 * could interpose on a later library's. */
	h = dlopen(SKIFF_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(errbuf, errlen, "%s: cannot be loaded: %s", SKIFF_MHD_SONAME, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = dlsym(h, entries[i].name);

		if (fn == NULL) {
			snprintf(errbuf, errlen, "%s: has no %s", SKIFF_MHD_SONAME,
			         entries[i].name);
			dlclose(h);
			return -1;
		}
		/* POSIX guarantees a function pointer survives the round trip
		 * through void *, which dlsym() relies on. */
		memcpy((char *)&t + entries[i].at, &fn, sizeof(fn));
	}
	table = t;
	handle = h;
	*out = &table;
	return 0;
}
