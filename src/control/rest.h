/* rest: Kafka Connect's REST API, the part that fits one device, with
 * /metrics and /health, served by libmicrohttpd inside skiff's own poll loop.
 *
 * Two halves. rest_api.c turns one request (method, path, query, the
 * headers that matter, body) into a reply, through a const struct rest_ops
 * the worker fills: it never touches a socket, so tests and the fuzzer call
 * rest_route() directly. It holds the policy too: which Host and Origin a
 * request may carry, its credentials (restauth.h), its body's type. rest.c
 * is the server: libmicrohttpd without a thread of its own (its epoll
 * descriptor and its timeout registered with loop.h), TLS (resttls.h), and
 * the bounds on connections, request memory, body size and time.
 *
 * The paths, status codes and JSON shapes are Connect's (3.9, checked
 * against a real standalone worker by tests/e2e/test_rest.py, which lists
 * the differences that remain): tools written for Connect work unchanged.
 * Values of secret-looking keys are served as "[hidden]" (config_display),
 * as --check prints them.
 *
 * Main loop only. Error convention: util/err.h. */
#ifndef SKIFF_REST_H
#define SKIFF_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "offsets/offsets_doc.h"
#include "util/err.h"

struct config_section;
struct loop;
struct restauth;

enum {
	REST_OK = 0,
	REST_ERR = -1,          /* failed, a retry may pass (500) */
	REST_ERR_NOMEM = -2,    /* out of memory (500; rest_open: exit 75) */
	REST_ERR_CONFIG = -3,   /* rest_open: a bad listeners value (exit 78) */
	REST_ERR_STATE = -4,    /* not in this state (409 or 400, as Connect) */
	REST_ERR_ARG = -5,      /* a request body the operation refuses (400) */
	REST_ERR_SOURCE = -6,   /* the source refuses it (500, as a connector's exception) */
	REST_ERR_NOTFOUND = -7, /* no such connector (any more) (404) */
};

/* rest_route's "the reply comes later" (a connector created, changed or
 * deleted: applied as a reload is, rest_changed gives the outcome). */
#define REST_PENDING 1

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

/* A connector created, replaced, patched or deleted through the API. */
enum rest_change_op { REST_CREATE, REST_PUT, REST_PATCH, REST_DELETE };

struct rest_change {
	enum rest_change_op op;
	const char *name;
	/* REST_CREATE, REST_PUT: the whole configuration, name included;
	 * REST_PATCH: the keys to set (strings) or remove (null); values are
	 * strings. NULL for REST_DELETE. */
	const cJSON *config;
	/* REST_CREATE: KIP-980's initial_state (RUNNING, PAUSED, STOPPED). */
	const char *initial_state;
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
	 * REST_ERR_STATE. REST_ERR_SOURCE for an entry the source refuses,
	 * REST_ERR_ARG for one the store refuses (then none is applied);
	 * REST_ERR when the write failed; errbuf says why. */
	int (*alter_offsets)(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
	                     char *errbuf, size_t errlen);
	/* 0 healthy or -1, with a one-line message either way. */
	int (*health)(void *ctx, char *msg, size_t len);
	/* Prometheus text, malloc'd (caller frees), or NULL: out of memory. */
	char *(*metrics)(void *ctx);
	/* The Kafka cluster id, malloc'd, or NULL when not known yet. */
	char *(*cluster_id)(void *ctx);
	/* Calls fn for each topic connector i produced to since it started or
	 * its topics were last reset (Connect's active topics). */
	void (*topics)(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg);
	void (*reset_topics)(void *ctx, size_t i);
	/* skiff's log level, as log4j names it (ERROR, WARN, NOTICE, INFO,
	 * DEBUG), and when the API last set it (epoch ms; 0: never). */
	void (*logger)(void *ctx, const char **level, int64_t *modified);
	/* Sets it from a log4j level (any case; TRACE and ALL mean DEBUG,
	 * FATAL and OFF mean ERROR): 0, or REST_ERR_ARG for an unknown one. */
	int (*set_logger)(void *ctx, const char *level);
	/* Connect's plugin list ([{"class","type","version"}]), all kinds or
	 * connectors only; NULL: out of memory. */
	cJSON *(*plugins)(void *ctx, bool connectors_only);
	/* A plugin's ConfigKeyInfo array: 0 and *out, REST_ERR_NOTFOUND or
	 * REST_ERR_NOMEM. */
	int (*plugin_config)(void *ctx, const char *plugin, cJSON **out);
	/* Connect's ConfigInfos of config (an object of strings) for plugin:
	 * 0 and *out, REST_ERR_NOTFOUND (no such connector class),
	 * REST_ERR_ARG (config names another), each with errbuf, or
	 * REST_ERR_NOMEM. */
	int (*validate)(void *ctx, const char *plugin, const cJSON *config, cJSON **out,
	                char *errbuf, size_t errlen);
	/* Starts a change (rest.h's struct rest_change, copied as needed):
	 * REST_PENDING, and later rest_changed(waiter, ...); or at once
	 * REST_ERR_STATE (another change is being applied), REST_ERR_ARG (a
	 * refusal found at once, errbuf), REST_ERR_NOTFOUND, REST_ERR_NOMEM.
	 * NULL: connectors cannot be changed at run time. */
	int (*change)(void *ctx, const struct rest_change *ch, void *waiter, char *errbuf,
	              size_t errlen);
};

/* Query flags: ?expand=status&expand=info; POST .../restart's
 * ?includeTasks=true&onlyFailed=true (KIP-745). */
enum { REST_EXPAND_STATUS = 1, REST_EXPAND_INFO = 2 };
enum { REST_INCLUDE_TASKS = 1, REST_ONLY_FAILED = 2 };

/* What a listener serves: the API (listeners), /admin (admin.listeners, or
 * the listeners when admin.listeners is unset), or both. */
enum { REST_SERVE_API = 1, REST_SERVE_ADMIN = 2 };

/* What a listener lets in (restconf.h's keys, resolved by rest.c). NULL in
 * a request: no check at all (unit tests). */
struct rest_policy {
	const struct restauth *auth; /* NULL: no authentication */
	bool https;
	const char *port;         /* the listener's port, as a Host header gives it */
	const char *const *names; /* host names a Host header may name (IPs always may) */
	size_t nnames;
	const char *allow_origin;  /* access.control.allow.origin ("", "*" or a list) */
	const char *allow_methods; /* access.control.allow.methods ("": GET,POST,HEAD) */
};

struct rest_request {
	const char *method, *path;
	unsigned serve;       /* REST_SERVE_* */
	unsigned expand;      /* REST_EXPAND_* from ?expand=status&expand=info */
	bool expand_any;      /* an expand parameter was given (even an unknown one) */
	unsigned restart;     /* REST_INCLUDE_TASKS, REST_ONLY_FAILED */
	bool connectors_only; /* ?connectorsOnly= (default true) */
	/* Headers, NULL when absent. */
	const char *host, *origin, *content_type, *authorization;
	const char *acr_method; /* Access-Control-Request-Method (a CORS preflight) */
	bool has_body;          /* a body was sent (Content-Length > 0, or chunked) */
	const char *body;       /* may hold NUL bytes; len counts them */
	size_t len;
	const char *worker_id; /* "host:port", as Connect names its workers */
	const struct rest_policy *policy;
	void *waiter; /* rest.c's handle for a reply that comes later */
	/* rest.c holds a /metrics page rendered less than REST_SHARE_MS ago
	 * that is still being sent: GET /metrics answers REST_SHARED_LAST
	 * instead of rendering another. */
	bool metrics_at_hand;
};

/* How long a /metrics page may serve the requests that come while it is
 * still being sent to others: a page of 3,000 file partitions is 3.8 MB,
 * and each slow reader held its own copy (60 of them: 186 MB of RSS). */
#define REST_SHARE_MS 1000

/* A header beside Content-Type. */
struct rest_header {
	const char *name, *value; /* static or owned by the reply (value_owned) */
};

#define REST_REPLY_HEADERS 6

struct rest_reply {
	unsigned status;          /* HTTP status */
	const char *content_type; /* static; NULL: none (as Jersey's own errors) */
	char *body;               /* malloc'd (rest_reply_free), may be NULL: empty */
	size_t len;
	struct rest_header headers[REST_REPLY_HEADERS];
	size_t nheaders;
	char *owned;     /* a header value malloc'd for this reply */
	unsigned shared; /* REST_SHARED_* (GET /metrics) */
};

/* A reply of GET /metrics: NONE, another reply; NEW, body is a page the
 * requests that come while it is sent may share; LAST, no body: send the
 * page rest.c holds (rest_request.metrics_at_hand). */
enum { REST_SHARED_NONE, REST_SHARED_NEW, REST_SHARED_LAST };

/* Routes req through ops to *out (always filled: errors are replies, in
 * Connect's {"error_code":N,"message":".."} shape). Returns 0,
 * REST_PENDING (out untouched: the reply comes through rest_changed), or
 * REST_ERR_NOMEM when not even the error reply could be made (out->body
 * NULL, status 500). */
int rest_route(const struct rest_ops *ops, void *ctx, const struct rest_request *req,
               struct rest_reply *out);

/* The reply to a change once applied (rc 0) or refused (rc: REST_ERR_ARG
 * 400, REST_ERR_NOTFOUND 404, REST_ERR_STATE 409, else 500; why: the
 * reason), as Connect gives it: 201 or 200 with the connector's info, or
 * 204 for a delete. created: a REST_PUT made a new connector. Returns 0 or
 * REST_ERR_NOMEM (out: a bare 500). */
int rest_change_reply(const struct rest_ops *ops, void *ctx, enum rest_change_op op,
                      const char *name, bool created, int rc, const char *why,
                      const char *worker_id, struct rest_reply *out);

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
 * keystores, truststores and credentials. Returns 0, REST_ERR_CONFIG or
 * REST_ERR_NOMEM with errbuf. */
int rest_check(const struct config_section *worker, char *errbuf, size_t errlen);

/* The outcome of a change rest_ops.change took (waiter: the one it was
 * given): the request's reply, sent now (rest_change_reply's arguments).
 * Main loop, outside of rest_route. */
void rest_changed(void *waiter, enum rest_change_op op, const char *name, bool created, int rc,
                  const char *why);

/* Stops the server and its connections (a change still pending is
 * answered 500: not applied). Accepts NULL. */
void rest_destroy(struct rest *r);

const char *rest_strerror(int err);

#endif
