/* rstr: immutable C strings shared by a reference count.
 *
 * A string made by rstr_new is an ordinary NUL-terminated string to every
 * reader; a hidden count before its first byte lets several owners keep the
 * same bytes instead of a copy each (the offset store and the journal's
 * shadow of what is durable: the same key and, mostly, the same value, for
 * every file of a glob). rstr_hold and rstr_drop take only pointers rstr_new
 * returned; the bytes must not be written once shared. Single-threaded per
 * string (the count is a plain integer). */
#ifndef SKIFF_RSTR_H
#define SKIFF_RSTR_H

#include <stddef.h>

/* A new string of len bytes (copied from s when s is not NULL, else left
 * for the caller to fill before sharing it) and a NUL, one reference.
 * Returns it, or NULL when out of memory. */
char *rstr_new(const char *s, size_t len);

/* One more reference to s; returns s. */
const char *rstr_hold(const char *s);

/* Gives back one reference; frees s with the last. Accepts NULL. */
void rstr_drop(const char *s);

#endif
