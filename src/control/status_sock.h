/* status_sock: the unix socket `skiff status` reads (skiff.sock in the
 * state directory), served from the loop: whoever connects gets a short
 * human summary of the pipeline, seen through its query (core/query.h),
 * and the connection is closed; the first line says "healthy" or
 * "UNHEALTHY: why". cli/status_cli.c is the reading side. Main loop only;
 * error convention: util/err.h. */
#ifndef SKIFF_STATUS_SOCK_H
#define SKIFF_STATUS_SOCK_H

#include "util/err.h"

#include <stddef.h>

struct loop;
struct query;
struct health;
struct status_sock;

enum {
	STATUS_SOCK_OK = 0,
	STATUS_SOCK_ERR_NOMEM = -2, /* out of memory */
};

/* A short text for a STATUS_SOCK_* code. */
const char *status_sock_strerror(int rc);

/* The socket's path for the offsets file offsets_file: skiff.sock in its
 * directory, into out. Returns 0, or -1 when it does not fit. */
int status_sock_path(const char *offsets_file, char *out, size_t len);

/* Serves the summary on the socket next to offsets_file (NULL: the offsets
 * topic alone, no socket; a socket that cannot be made is logged, not
 * fatal). l, q and h (the verdict and the gauges it refreshes) are
 * borrowed and must outlive it. Returns STATUS_SOCK_OK and *out
 * (status_sock_close), or STATUS_SOCK_ERR_NOMEM. */
int status_sock_open(struct loop *l, const struct query *q, struct health *h,
                     const char *offsets_file, struct status_sock **out);

/* Closes and removes the socket, frees d. Accepts NULL. */
void status_sock_close(struct status_sock *d);

#endif
