/* dynlib: a shared library loaded at run time into a table of functions.
 *
 * skiff links only what every configuration uses. A library that one kind
 * of source or the REST API needs (libmicrohttpd, SQLite, libsystemd) is
 * dlopen()ed by its versioned soname when first needed, and its functions
 * are called through a table the caller owns (mhdlib.h, sqlitelib.h,
 * journallib.h): a process that never needs it never maps its pages.
 *
 * Main loop only (not thread-safe). Error convention: util/err.h. */
#ifndef SKIFF_DYNLIB_H
#define SKIFF_DYNLIB_H

#include <stddef.h>

/* One function of the table: where it goes, and its symbol's name. */
struct dynlib_sym {
	size_t at; /* offsetof() the function pointer in the table */
	const char *name;
};

/* dlopen()s soname (RTLD_NOW | RTLD_LOCAL) and stores the address of each of
 * syms[0..n) at table + syms[i].at. Returns 0 (the library then stays
 * loaded until exit), or -1 with errbuf "SONAME: why" (it cannot be loaded,
 * or lacks a function), the library closed and the table partly written:
 * the caller keeps the table unused until a call returned 0. */
int dynlib_load(const char *soname, const struct dynlib_sym *syms, size_t n, void *table,
                char *errbuf, size_t errlen);

#endif
