/* mhdlib: libmicrohttpd resolved at run time (mhdlib.h). */
#include "control/mhdlib.h"

#include "util/dynlib.h"

static struct mhdlib table;
static int loaded;

#define ENTRY(field)                                                                               \
	{                                                                                          \
		offsetof(struct mhdlib, field), "MHD_" #field                                      \
	}

static const struct dynlib_sym entries[] = {
    ENTRY(start_daemon),
    ENTRY(stop_daemon),
    ENTRY(run),
    ENTRY(get_timeout),
    ENTRY(get_daemon_info),
    ENTRY(get_connection_info),
    ENTRY(get_connection_values),
    ENTRY(create_response_from_buffer),
    ENTRY(create_response_from_callback),
    ENTRY(add_response_header),
    ENTRY(queue_response),
    ENTRY(destroy_response),
    ENTRY(lookup_connection_value),
    ENTRY(suspend_connection),
    ENTRY(resume_connection),
};

int mhdlib_get(const struct mhdlib **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	if (!loaded) {
		if (dynlib_load(SKIFF_MHD_SONAME, entries, sizeof(entries) / sizeof(entries[0]),
		                &table, errbuf, errlen) != 0)
			return -1;
		loaded = 1;
	}
	*out = &table;
	return 0;
}
