/* rest: the HTTP server of the REST API (rest.h), libmicrohttpd in skiff's
 * loop.
 *
 * libmicrohttpd runs without a thread of its own ("external select" mode,
 * with its epoll set): its epoll descriptor is watched by the loop, and its
 * own deadline (connection timeouts) is a loop timer, re-armed after every
 * MHD_run. Requests are answered within the turn that completes them, from
 * the worker's state, so no lock is needed anywhere.
 *
 * Bounds, so that a hostile or broken client costs little and never stops
 * the pipeline: REST_CONNECTIONS connections at once (more are refused at
 * accept), REST_CONN_MEMORY bytes per connection for the request line and
 * headers (more: 431/413 from libmicrohttpd), REST_MAX_BODY for a body
 * (more: 413), REST_TIMEOUT_S of silence before a connection is closed, and
 * REST_REQUEST_MS for a whole request and its reply, counted from the
 * accept or the end of the connection's previous request: a slowloris
 * client sending a byte a second is never silent, so the silence timeout
 * alone let 32 of them hold every slot for as long as they liked. And at
 * most REST_PER_IP connections from one address, so that one client
 * cannot take every slot even for that long. */
#include "rest.h"

#include "config.h"
#include "log.h"
#include "loop.h"
#include "mhdlib.h"
#include "num.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define REST_CONNECTIONS 32
#define REST_CONN_MEMORY (32u * 1024)
#define REST_TIMEOUT_S 10
#define REST_IDLE_RUN_MS 1000
#define REST_REQUEST_MS 4000
#define REST_PER_IP 8

/* libmicrohttpd, loaded by the first rest_open() (mhdlib.h). */
static const struct mhdlib *mhd;

struct rest {
	struct MHD_Daemon *d;
	struct loop *loop;
	struct loop_fd *watch;
	struct loop_timer *timer;
	const struct rest_ops *ops;
	void *ctx;
	char worker_id[320];
	/* The open connections: since when each has been on its current
	 * request (loop time), and whether it was cut. */
	struct {
		struct MHD_Connection *conn;
		int fd;
		int64_t since;
		bool cut;
	} open[REST_CONNECTIONS];
};

/* One request while its body arrives. */
struct pending {
	char *body;
	size_t len;
	bool toobig;
};

static unsigned connections(struct rest *r)
{
	const union MHD_DaemonInfo *i =
	    mhd->get_daemon_info(r->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i != NULL ? i->num_connections : 0;
}

/* Cuts each connection that has spent REST_REQUEST_MS on one request:
 * shutdown(2) on its socket, which libmicrohttpd then sees end and closes
 * (the descriptor stays its own). */
static void cut_slow(struct rest *r)
{
	int64_t now = loop_now_ms();

	for (size_t i = 0; i < REST_CONNECTIONS; i++) {
		if (r->open[i].conn == NULL || r->open[i].cut ||
		    now - r->open[i].since < REST_REQUEST_MS)
			continue;
		log_debug("rest: a connection took over %d ms for one request: closed",
		          REST_REQUEST_MS);
		shutdown(r->open[i].fd, SHUT_RDWR);
		r->open[i].cut = true;
	}
}

/* The slot of conn, or of a free one when conn is NULL; -1 if none. */
static int slot_of(struct rest *r, const struct MHD_Connection *conn)
{
	for (int i = 0; i < REST_CONNECTIONS; i++)
		if (r->open[i].conn == conn)
			return i;
	return -1;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct rest *r = cls;
	const union MHD_ConnectionInfo *ci;
	int i;

	(void)socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if ((i = slot_of(r, conn)) >= 0)
			r->open[i].conn = NULL;
		return;
	}
	ci = mhd->get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	/* No free slot cannot happen (the connection limit is the same). */
	if (ci == NULL || (i = slot_of(r, NULL)) < 0)
		return;
	r->open[i].conn = conn;
	r->open[i].fd = ci->connect_fd;
	r->open[i].since = loop_now_ms();
	r->open[i].cut = false;
}

/* Runs libmicrohttpd, then re-arms the timer at its next deadline. At the
 * connection limit it takes the listening socket out of its epoll set and
 * puts it back only in a run after a connection was freed: so it runs again
 * while connections come and go, and while any is open a timer ensures a
 * run at least every REST_IDLE_RUN_MS. An idle server sets no timer. */
static void run(struct rest *r)
{
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned before;
	int64_t due = -1;

	/* A closed connection is freed in the run after the one that saw it
	 * close: stop once two runs in a row changed nothing. */
	cut_slow(r);
	for (int i = 0, still = 0; i < 64 && still < 2; i++) {
		before = connections(r);
		mhd->run(r->d);
		still = connections(r) == before ? still + 1 : 0;
	}
	if (mhd->get_timeout(r->d, &ms) == MHD_YES)
		due = ms < REST_IDLE_RUN_MS ? (int64_t)ms : REST_IDLE_RUN_MS;
	else if (connections(r) > 0)
		due = REST_IDLE_RUN_MS;
	loop_timer_set(r->timer, due >= 0 ? loop_now_ms() + due : -1, 0);
}

static void on_ready(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	run(arg);
}

static void on_due(struct loop *l, struct loop_timer *t, void *arg)
{
	run(arg);
}

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
	struct rest_request *req = cls;
	/* JAX-RS reads a Boolean as Java's Boolean.valueOf: "true" in any case. */
	bool yes = value != NULL && strcasecmp(value, "true") == 0;

	(void)kind;
	if (strcmp(key, "expand") == 0 && value != NULL) {
		if (strcmp(value, "status") == 0)
			req->expand |= REST_EXPAND_STATUS;
		else if (strcmp(value, "info") == 0)
			req->expand |= REST_EXPAND_INFO;
	} else if (strcmp(key, "includeTasks") == 0) {
		req->restart = yes ? req->restart | REST_INCLUDE_TASKS
		                   : req->restart & ~(unsigned)REST_INCLUDE_TASKS;
	} else if (strcmp(key, "onlyFailed") == 0) {
		req->restart = yes ? req->restart | REST_ONLY_FAILED
		                   : req->restart & ~(unsigned)REST_ONLY_FAILED;
	}
	return MHD_YES;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct rest_reply *rep)
{
	struct MHD_Response *resp =
	    mhd->create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (resp == NULL) {
		rest_reply_free(rep);
		return MHD_NO; /* closes the connection */
	}
	rep->body = NULL; /* the response frees it */
	if (rep->content_type != NULL)
		mhd->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rep->content_type);
	ok = mhd->queue_response(conn, rep->status, resp);
	mhd->destroy_response(resp);
	return ok;
}

/* Appends a chunk of the body, up to REST_MAX_BODY. */
static bool take_body(struct pending *p, const char *data, size_t n)
{
	char *grown;

	if (p->toobig || n > REST_MAX_BODY - p->len) {
		p->toobig = true;
		return true;
	}
	grown = realloc(p->body, p->len + n + 1);
	if (grown == NULL)
		return false;
	memcpy(grown + p->len, data, n);
	p->len += n;
	grown[p->len] = '\0';
	p->body = grown;
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
	struct rest *r = cls;
	struct pending *p = *state;
	struct rest_request req = {.method = method, .path = url, .worker_id = r->worker_id};
	struct rest_reply rep = {0};

	if (p == NULL) {
		/* The headers are in; the body (if any) follows in later calls. */
		p = calloc(1, sizeof(*p));
		*state = p;
		return p != NULL ? MHD_YES : MHD_NO;
	}
	if (*upload_size > 0) {
		bool ok = take_body(p, upload, *upload_size);

		*upload_size = 0;
		return ok ? MHD_YES : MHD_NO;
	}
	if (p->toobig) {
		rep = (struct rest_reply){.status = 413, .content_type = "application/json"};
		rep.body = strdup("{\"error_code\":413,\"message\":\"request body too large\"}");
		rep.len = rep.body != NULL ? strlen(rep.body) : 0;
		return send_reply(conn, &rep);
	}
	mhd->get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, &req);
	req.body = p->body != NULL ? p->body : "";
	req.len = p->len;
	(void)rest_route(r->ops, r->ctx, &req, &rep);
	return send_reply(conn, &rep);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode why)
{
	struct rest *r = cls;
	struct pending *p = *state;
	int i = slot_of(r, conn);

	/* The next request on this connection has its own time. */
	if (i >= 0)
		r->open[i].since = loop_now_ms();
	if (p != NULL) {
		free(p->body);
		free(p);
	}
	*state = NULL;
}

__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_debug("rest: %s", line);
}

/* Splits "http://HOST:PORT" (HOST may be empty or [v6]) into host and port.
 * Returns 0 or REST_ERR_CONFIG with errbuf. */
static int parse_listener(const char *url, const char *where, char *host, size_t hlen, char *port,
                          size_t plen, char *errbuf, size_t errlen)
{
	const char *h, *colon;
	int64_t n;

	if (strncmp(url, "http://", 7) != 0) {
		snprintf(errbuf, errlen,
		         "%s: listeners: '%s': only http://HOST:PORT is served "
		         "(for https, put a TLS proxy in front)",
		         where, url);
		return REST_ERR_CONFIG;
	}
	h = url + 7;
	if (*h == '[') {
		colon = strchr(h, ']');
		colon = colon != NULL && colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = strrchr(h, ':');
	}
	if (colon == NULL || num_parse_i64(colon + 1, 0, 65535, &n) != 0 ||
	    (size_t)(colon - h) >= hlen) {
		snprintf(errbuf, errlen, "%s: listeners: '%s' is not http://HOST:PORT", where, url);
		return REST_ERR_CONFIG;
	}
	if (*h == '[')
		snprintf(host, hlen, "%.*s", (int)(colon - h - 2), h + 1);
	else
		snprintf(host, hlen, "%.*s", (int)(colon - h), h);
	snprintf(port, plen, "%lld", (long long)n);
	return 0;
}

static int start(struct rest *r, const struct addrinfo *ai, char *errbuf, size_t errlen)
{
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	r->d = mhd->start_daemon(
	    flags, 0, NULL, NULL, on_request, r, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)REST_CONNECTIONS,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REST_CONN_MEMORY,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REST_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, r, MHD_OPTION_NOTIFY_CONNECTION, on_connection, r,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)REST_PER_IP, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, r, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u, MHD_OPTION_END);
	return r->d != NULL ? 0 : REST_ERR;
}

int rest_open(const struct config_section *worker, struct loop *l, const struct rest_ops *ops,
              void *ctx, struct rest **out, char *errbuf, size_t errlen)
{
	const char *where = config_where(worker, "listeners");
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	struct rest *r = NULL;
	char host[256], port[8], lib[256];
	const union MHD_DaemonInfo *info;
	int rc;

	*out = NULL;
	if (config_list_len(worker, "listeners") == 0)
		return 0;
	if (config_list_len(worker, "listeners") > 1) {
		snprintf(errbuf, errlen, "%s: listeners: skiff serves one listener", where);
		return REST_ERR_CONFIG;
	}
	rc = parse_listener(config_list_item(worker, "listeners", 0), where, host, sizeof(host),
	                    port, sizeof(port), errbuf, errlen);
	if (rc != 0)
		return rc;
	/* Without the library the API cannot be served: a person must install
	 * it (or unset listeners), so it is a configuration error. */
	if (mhdlib_get(&mhd, lib, sizeof(lib)) != 0) {
		snprintf(errbuf, errlen, "%s: listeners: the REST API needs %s", where, lib);
		return REST_ERR_CONFIG;
	}
	if (getaddrinfo(host[0] ? host : NULL, port, &hints, &ai) != 0 || ai == NULL) {
		snprintf(errbuf, errlen, "%s: listeners: cannot resolve '%s'", where, host);
		return REST_ERR_CONFIG;
	}
	rc = REST_ERR_NOMEM;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto out;
	r->loop = l;
	r->ops = ops;
	r->ctx = ctx;
	snprintf(r->worker_id, sizeof(r->worker_id), "%s:%s", host[0] ? host : "0.0.0.0", port);
	if (start(r, ai, errbuf, errlen) != 0) {
		snprintf(errbuf, errlen,
		         "%s: listeners: cannot listen on %s:%s (in use, or not an "
		         "address of this host)",
		         where, host[0] ? host : "*", port);
		rc = REST_ERR;
		goto out;
	}
	info = mhd->get_daemon_info(r->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || loop_fd_add(l, info->epoll_fd, POLLIN, on_ready, r, &r->watch) != 0 ||
	    loop_timer_add(l, -1, 0, on_due, r, &r->timer) != 0) {
		snprintf(errbuf, errlen, "rest: out of memory");
		goto out;
	}
	run(r);
	*out = r;
	r = NULL;
	rc = 0;
out:
	freeaddrinfo(ai);
	rest_destroy(r);
	return rc;
}

void rest_destroy(struct rest *r)
{
	if (r == NULL)
		return;
	loop_fd_del(r->loop, r->watch);
	loop_timer_del(r->loop, r->timer);
	if (r->d != NULL)
		mhd->stop_daemon(r->d);
	free(r);
}
