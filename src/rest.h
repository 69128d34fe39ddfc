/* rest: Kafka Connect's REST API, the part that fits one device, with
 * /metrics and /health, served by libmicrohttpd inside skiff's own poll loop.
 *
 * Two halves. rest_api.c routes one request (method, path, query, body) to
 * a reply, through a const struct rest_ops the worker fills: it never
 * touches a socket, so tests and the fuzzer call rest_route() directly.
 * rest.c is the server: libmicrohttpd without a thread of its own (its epoll
 * descriptor and its timeout registered with loop.h), bounded in
 * connections, request memory, body size and time.
 *
 * The paths and JSON shapes are Connect's (3.9, checked against a real
 * standalone worker by tests/e2e/test_rest.py): tools written for Connect
 * work unchanged. Values of secret-looking keys are served as "[hidden]"
 * (config_display), as --check prints them.
 *
 * Main loop only. Error convention: util/err.h. */
#ifndef SKIFF_REST_H
#define SKIFF_REST_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "offsets_doc.h"

struct config_section;
struct loop;

enum {
	REST_ERR = -1,        /* failed, a retry may pass (500) */
	REST_ERR_NOMEM = -2,  /* out of memory (500; rest_open: exit 75) */
	REST_ERR_CONFIG = -3, /* rest_open: a bad listeners value (exit 78) */
	REST_ERR_STATE = -4,  /* not in this state (409 or 400, as Connect) */
	REST_ERR_ARG = -5,    /* a request body the operation refuses (400) */
};

/* Largest request body read (PATCH offsets); beyond it 413. */
#define REST_MAX_BODY (256u * 1024)

/* REST_RESTART: stop (records in flight answered, offsets stored, source
 * closed) and open again from the stored offsets, in the state it had; a
 * FAILED connector runs again. Completes later (state RESTARTING). */
enum rest_action { REST_PAUSE, REST_RESUME, REST_STOP, REST_RESTART };

/* One connector as the API shows it; strings owned by the provider, valid
 * until the next call into it. */
struct rest_connector {
	const char *name;
	const char *state;    /* RUNNING, PAUSED, STOPPED, FAILED or RESTARTING */
	const char *trace;    /* FAILED: why; else NULL */
	char task_class[160]; /* its task's Java class, as Connect's task config shows it */
};

/* One entry of a KIP-875 PATCH: struct offsets_doc_entry (offsets_doc.h). */

/* What the API serves, filled by the worker (worker_rest_ops). Every
 * function is called on the main loop, from inside rest_route. i is a
 * connector index below count(). */
struct rest_ops {
	size_t (*count)(void *ctx);
	void (*connector)(void *ctx, size_t i, struct rest_connector *out);
	/* The connector's configuration as the files gave it, secrets masked:
	 * as config_next_set (config.h). */
	bool (*config_next)(void *ctx, size_t i, size_t *cursor, const char **key,
	                    const char **shown);
	/* Pause, resume, stop or restart: 0, REST_ERR_STATE (errbuf: why),
	 * REST_ERR. */
	int (*control)(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen);
	/* The stored offsets as KIP-875's {"offsets":[{"partition":{..},
	 * "offset":{..}},..]}: 0 and *json (malloc'd, caller frees) or
	 * REST_ERR_NOMEM. */
	int (*offsets)(void *ctx, size_t i, char **json);
	/* KIP-875: e[0..n-1] are the entries of a PATCH's "offsets" array,
	 * NULL for DELETE (resets all). Only while STOPPED: else
	 * REST_ERR_STATE. REST_ERR_ARG for an entry the source or the store
	 * refuses (then none is applied); REST_ERR when the write failed;
	 * errbuf says why. */
	int (*alter_offsets)(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
	                     char *errbuf, size_t errlen);
	/* 0 healthy or -1, with a one-line message either way. */
	int (*health)(void *ctx, char *msg, size_t len);
	/* Prometheus text, malloc'd (caller frees), or NULL: out of memory. */
	char *(*metrics)(void *ctx);
	/* The Kafka cluster id, malloc'd, or NULL when not known yet. */
	char *(*cluster_id)(void *ctx);
};

/* Query flags: ?expand=status&expand=info; POST .../restart's
 * ?includeTasks=true&onlyFailed=true (KIP-745). */
enum { REST_EXPAND_STATUS = 1, REST_EXPAND_INFO = 2 };
enum { REST_INCLUDE_TASKS = 1, REST_ONLY_FAILED = 2 };

/* What a listener serves: the API (listeners), /admin (admin.listeners, or
 * the listeners when admin.listeners is unset), or both. */
enum { REST_SERVE_API = 1, REST_SERVE_ADMIN = 2 };

struct rest_request {
	const char *method, *path;
	unsigned serve;   /* REST_SERVE_* */
	unsigned expand;  /* REST_EXPAND_* from ?expand=status&expand=info */
	unsigned restart; /* REST_INCLUDE_TASKS, REST_ONLY_FAILED */
	const char *body; /* may hold NUL bytes; len counts them */
	size_t len;
	const char *worker_id; /* "host:port", as Connect names its workers */
};

struct rest_reply {
	unsigned status;          /* HTTP status */
	const char *content_type; /* static */
	char *body;               /* malloc'd (rest_reply_free), may be NULL: empty */
	size_t len;
};

/* Routes req through ops to *out (always filled: errors are replies, in
 * Connect's {"error_code":N,"message":".."} shape). Returns 0, or
 * REST_ERR_NOMEM when not even the error reply could be made (out->body
 * NULL, status 500). */
int rest_route(const struct rest_ops *ops, void *ctx, const struct rest_request *req,
               struct rest_reply *out);

void rest_reply_free(struct rest_reply *r);

struct rest;

/* Starts a server on each of the worker's `listeners` and `admin.listeners`
 * URLs (restconf.h: http or https://HOST:PORT; empty HOST: every interface,
 * as Connect) and registers them with l. Returns 0 and *out (rest_destroy,
 * before l goes), 0 and *out NULL when listeners is unset (the API is off),
 * or REST_ERR_CONFIG / REST_ERR (cannot bind) / REST_ERR_NOMEM with errbuf
 * "file:line: why". */
int rest_open(const struct config_section *worker, struct loop *l, const struct rest_ops *ops,
              void *ctx, struct rest **out, char *errbuf, size_t errlen);

/* What rest_open would refuse before it binds (--check): the keys, the
 * keystores and truststores. Returns 0, REST_ERR_CONFIG or REST_ERR_NOMEM
 * with errbuf. */
int rest_check(const struct config_section *worker, char *errbuf, size_t errlen);

/* Stops the server and its connections. Accepts NULL. */
void rest_destroy(struct rest *r);

const char *rest_strerror(int err);

#endif
