/* mhdlib: libmicrohttpd, loaded when the REST API is first opened.
 *
 * libmicrohttpd brings GnuTLS, nettle, p11-kit, gmp, libidn2 and more with
 * it: about 2.5 MB of resident pages in every skiff process, mapped and
 * relocated at start, whether listeners= is set or not. So skiff does not
 * link it: rest.c calls it through this table, filled by dlopen() of the
 * versioned soname (SKIFF_MHD_SONAME, set by the build) the first time a
 * listener is opened. A process without listeners= never maps it.
 *
 * The pointers have the exact types of <microhttpd.h>, so a call through
 * the table is checked by the compiler as a direct call would be.
 *
 * Main loop only (not thread-safe). Error convention: util/err.h. */
#ifndef SKIFF_MHDLIB_H
#define SKIFF_MHDLIB_H

#include <stddef.h>

#include <microhttpd.h>

#ifndef SKIFF_MHD_SONAME
#define SKIFF_MHD_SONAME "libmicrohttpd.so.12"
#endif

/* The libmicrohttpd functions rest.c calls. */
struct mhdlib {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};

/* Loads SKIFF_MHD_SONAME on the first call and resolves the table; later
 * calls return the same table. Sets *out (owned by this module, valid until
 * exit: the library is never unloaded) and returns 0, or returns -1 with
 * errbuf "libmicrohttpd.so.12: why" (the library or one of its functions is
 * missing) and *out NULL. */
int mhdlib_get(const struct mhdlib **out, char *errbuf, size_t errlen);

#endif
