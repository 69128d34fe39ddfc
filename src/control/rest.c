/* rest: the HTTP server of the REST API (rest.h), libmicrohttpd in skiff's
 * loop.
 *
 * One libmicrohttpd daemon per listener (Connect's listeners and
 * admin.listeners URLs), each without a thread of its own ("external
 * select" mode, with its epoll set): its epoll descriptor is watched by the
 * loop, and its own deadline (connection timeouts) is a loop timer, re-armed
 * after every MHD_run. Requests are answered within the turn that completes
 * them, from the worker's state, so no lock is needed anywhere.
 *
 * https listeners: libmicrohttpd runs the TLS (GnuTLS) but takes each
 * handshake's certificate and key from resttls.c through its certificate
 * callback, and each connection's client check from a GnuTLS verify
 * function set when it is accepted: so Connect's PKCS#12 and PEM keystores
 * serve, ssl.client.auth=required refuses a client without a good
 * certificate in the handshake (libmicrohttpd alone only asks for one), and
 * a certificate replaced on disk serves the next connection without a
 * restart (watched as the producer's are, kafka/supervisor.c).
 *
 * Bounds, so that slow or hostile clients cost little, never keep a
 * prober out and never stop the pipeline (restconf.h's keys):
 * - rest.max.connections served at once per listener. One more is not
 *   refused: it evicts the connection that has waited longest without a
 *   complete request, from the address that holds the most (so 300
 *   slowloris connections from 40 addresses cannot keep /health out, and a
 *   prober is never refused because its own address is busy: a cap per
 *   address refused local probes and 61,201 of 75,663 requests of 50 local
 *   clients). Counted are the connections neither cut nor closed by their
 *   clients (libmicrohttpd frees those a run or two later: counted, they
 *   made 50 local clients evict each other); an idle keep-alive connection
 *   goes first; a connection whose request is whole, read or still in its
 *   socket (libmicrohttpd accepts in a run before it reads), is never
 *   evicted (make_room). libmicrohttpd's own limit is EVICT_MARGIN above,
 *   for the connections accepted before the evicted ones are freed and for
 *   whole requests beyond the cap; past it, clients wait in the kernel's
 *   accept queue, none is refused.
 * - rest.request.timeout.ms for a whole request and its reply, counted from
 *   the accept or the end of the connection's previous request: a slowloris
 *   client sending a byte a second is never silent, so a silence timeout
 *   alone lets it hold its slot for as long as it likes; and
 *   rest.idle.timeout.ms of silence. A request whose head has arrived whole
 *   when the time is found up (in the turn that would read it) is answered,
 *   its reply given the time a request has: the keep-alive client that
 *   sends as the time passes got a close with no reply (cut_slow).
 * - REST_CONN_MEMORY bytes per connection for the request line and headers
 *   (more: 431/414 from libmicrohttpd).
 * - One /metrics page for the requests that come while it is being sent
 *   (REST_SHARE_MS): a page of 3,000 file partitions is 3.8 MB, and 60
 *   clients that asked for it and read nothing held 60 copies (RSS from
 *   16 to 186 MB), and as many renders held the loop.
 * - rest.max.body.bytes of body: a larger Content-Length is answered 413 at
 *   once (libmicrohttpd then reads no more), a chunked body as soon as it
 *   passes the limit. libmicrohttpd queues no reply in the middle of a body,
 *   so that one is written on the socket (or the TLS session) here, and the
 *   rest of the body is read and dropped until the connection is cut
 *   (LINGER_MS later, or first when room is needed).
 * Each turn runs libmicrohttpd until it has nothing more to do (within
 * RUN_BUDGET_MS): it reads a buffer per connection per run, and a 1 MB body
 * waited a second per buffer for the next timer. */
#include "control/rest.h"

#include "config/config.h"
#include "util/filewatch.h"
#include "control/gnutlslib.h"
#include "core/log.h"
#include "core/loop.h"
#include "control/mhdlib.h"
#include "util/num.h"
#include "control/restauth.h"
#include "control/restconf.h"
#include "control/resttls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define REST_CONN_MEMORY (32u * 1024)
#define REST_IDLE_RUN_MS 1000
#define EVICT_MARGIN 16
/* How much of a socket's unread bytes is looked at for a whole request head
 * (a larger head is taken for a part). */
#define PEEK_BYTES 4096
#define RUN_BUDGET_MS 20
/* Quiet time after the last change to a TLS file before it is read again. */
#define TLS_SETTLE_MS 1000
/* At most one line a minute about TLS clients refused. */
#define REFUSED_LOG_MS 60000

/* libmicrohttpd and GnuTLS, loaded by the first rest_open() (mhdlib.h,
 * gnutlslib.h). */
static const struct mhdlib *mhd;
static const struct gnutlslib *gnutls;

struct server;

/* One open connection of a server. */
struct slot {
	struct server *s;
	struct MHD_Connection *conn;
	int fd;
	int64_t since;           /* loop time its current request began */
	bool cut;                /* shut down: libmicrohttpd frees it soon */
	bool answering;          /* a reply is queued on it */
	bool waiting;            /* suspended until rest_changed */
	bool in_request;         /* its request's head is in (a body may follow) */
	bool served;             /* it had a reply: between requests it is idle */
	bool spared;             /* kept past rest.request.timeout.ms, its request whole */
	bool lingering;          /* its 413 written midway: kept LINGER_MS for its client */
	unsigned char addr[16];  /* the client's address (IPv4 mapped) */
	struct resttls_gen *gen; /* https: the certificates it was accepted under */
};

/* What a connection's socket holds that libmicrohttpd has not read yet. */
enum unread {
	UNREAD_NONE,  /* nothing */
	UNREAD_PART,  /* bytes, not a whole request head (or https: opaque) */
	UNREAD_WHOLE, /* a request head to its blank line */
	UNREAD_GONE,  /* nothing, and the client closed or reset it */
};

/* One connection make_room may let go, and what its socket holds. */
struct candidate {
	struct slot *sl;
	enum unread u;
};

/* One listener: one libmicrohttpd daemon. */
struct pending;

struct server {
	struct rest *r;
	struct rest_listener spec;
	struct MHD_Daemon *d;
	struct loop_fd *watch;
	struct loop_timer *timer;
	struct resttls *tls; /* https: r->tls[its role] */
	char worker_id[320];
	/* What it lets in (rest.h), and the host names a Host may give. */
	struct rest_policy policy;
	char names[4][256];
	const char *name_ptrs[4];
	struct pending *waiting; /* requests whose reply comes later */
	struct slot *open;       /* nopen slots: rest.max.connections + EVICT_MARGIN */
	size_t nopen, live;
	/* make_room's room, nopen each: a full listener is when it is needed */
	struct pollfd *pfds;
	struct candidate *cand;
	struct slot **pick;
	/* TLS clients refused: the first logged, then once a minute with the
	 * number since (anyone who reaches the port can make them). */
	int64_t refused_at;
	unsigned refused;
};

/* Files read again when they change: the TLS files of one role (main or
 * admin), the JAAS and credentials files. */
struct watched {
	struct filewatch *fw;
	struct loop_fd *watch;
	struct loop_timer *settle;
	void (*reload)(struct rest *r, void *what, const char *path);
	struct rest *r;
	void *what;
};

/* A /metrics page and the responses that send it (REST_SHARE_MS). */
struct page {
	struct rest *r;
	char *body;
	size_t len;
	int64_t at;    /* loop time it was rendered */
	unsigned refs; /* responses reading it, and r->page's own */
};

struct rest {
	struct loop *loop;
	const struct rest_ops *ops;
	void *ctx;
	struct rest_settings cfg;
	struct resttls *tls[2];
	struct restauth *auth; /* rest.extension.classes: BasicAuthSecurityRestExtension */
	struct watched tw[2], aw;
	struct server servers[REST_MAX_LISTENERS];
	size_t nservers;
	struct page *page; /* the last /metrics page, while it is being sent */
};

/* One request while its body arrives, and while its reply is waited for
 * (a connector change: suspended until rest_changed). */
struct pending {
	char *body;
	size_t len;
	bool refused; /* the 413 was written in the middle of the body */
	struct server *s;
	struct MHD_Connection *conn;
	bool suspended, ready;
	struct rest_reply reply;
	struct pending *next; /* in s->waiting */
};

static unsigned connections(const struct server *s)
{
	const union MHD_DaemonInfo *i =
	    mhd->get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i != NULL ? i->num_connections : 0;
}

static void cut(struct slot *sl, const char *why)
{
	log_debug("rest: %s:%s: a connection closed: %s", sl->s->spec.host, sl->s->spec.port, why);
	shutdown(sl->fd, SHUT_RDWR);
	sl->cut = true;
}

static enum unread unread(const struct server *s, const struct slot *sl)
{
	char buf[PEEK_BYTES];
	ssize_t n = recv(sl->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);

	if (n == 0)
		return UNREAD_GONE;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? UNREAD_NONE
		                                                                 : UNREAD_GONE;
	if (s->tls == NULL && memmem(buf, (size_t)n, "\r\n\r\n", 4) != NULL)
		return UNREAD_WHOLE;
	return UNREAD_PART;
}

/* Cuts each connection that has spent rest.request.timeout.ms on one
 * request and its reply: shutdown(2) on its socket, which libmicrohttpd
 * then sees end and closes (the descriptor stays its own). Not one whose
 * request head has just arrived whole, unread: this run reads it; once per
 * request, so that no client keeps a slot by sending heads libmicrohttpd
 * does not read. */
static void cut_slow(struct server *s)
{
	int64_t now = loop_now_ms(), limit = s->r->cfg.request_ms;

	for (size_t i = 0; i < s->nopen; i++) {
		struct slot *sl = &s->open[i];

		if (sl->conn == NULL || sl->cut || sl->waiting || now - sl->since < limit)
			continue;
		if (!sl->answering && !sl->spared && unread(s, sl) == UNREAD_WHOLE) {
			sl->spared = true;
			sl->since = now;
			continue;
		}
		cut(sl, "rest.request.timeout.ms passed on one request");
	}
}

/* A free slot of s, or NULL. */
static struct slot *free_slot(struct server *s)
{
	for (size_t i = 0; i < s->nopen; i++)
		if (s->open[i].conn == NULL)
			return &s->open[i];
	return NULL;
}

static int by_addr(const void *a, const void *b)
{
	const struct slot *x = *(const struct slot *const *)a, *y = *(const struct slot *const *)b;
	int c = memcmp(x->addr, y->addr, sizeof(x->addr));

	return c != 0 ? c : x->since < y->since ? -1 : x->since > y->since;
}

/* Of the n connections in c (sorted here), the one on its current request
 * the longest from the address holding the most, or NULL. */
static struct slot *most_held(struct slot **c, size_t n)
{
	struct slot *best = NULL;
	size_t run_len = 0, best_len = 0;

	qsort(c, n, sizeof(*c), by_addr);
	for (size_t i = 0; i < n; i++) {
		run_len = i > 0 && memcmp(c[i]->addr, c[i - 1]->addr, sizeof(c[i]->addr)) == 0
		              ? run_len + 1
		              : 1;
		/* Sorted by time within an address: its oldest starts the run. */
		if (run_len > best_len) {
			best_len = run_len;
			best = c[i - run_len + 1];
		}
	}
	return best;
}

/* The connection to evict for newcomer, of make_room's n candidates: never
 * one whose whole request waits in its socket. One whose 413 is written
 * first (kept only so that its client reads it rather than a reset: ten
 * 50 MB senders refused at once held a listener for a second, and a new
 * client was evicted); then an idle keep-alive connection (its client has
 * had its reply; a byte of its next request makes it no longer idle), the
 * longest idle; then, from the address holding the most, the one on its
 * current request the longest; and only when every other connection has a
 * reply on the way, one of those (clients that never read their replies
 * must not keep /health out for rest.request.timeout.ms). */
static struct slot *victim(struct server *s, const struct slot *newcomer,
                           const struct candidate *cand, size_t n)
{
	struct slot *idle = NULL, *done = NULL;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct slot *sl = cand[i].sl;

		if (sl->cut)
			continue;
		if (sl->lingering) {
			if (done == NULL || sl->since < done->since)
				done = sl;
			continue;
		}
		if (cand[i].u == UNREAD_WHOLE)
			continue;
		if (sl->served && !sl->in_request && cand[i].u == UNREAD_NONE &&
		    (idle == NULL || sl->since < idle->since))
			idle = sl;
		s->pick[k++] = sl;
	}
	if (done != NULL || idle != NULL)
		return done != NULL ? done : idle;
	if (k == 0)
		for (size_t i = 0; i < s->nopen; i++) {
			struct slot *sl = &s->open[i];

			if (sl->conn != NULL && sl != newcomer && !sl->cut && !sl->waiting &&
			    sl->answering)
				s->pick[k++] = sl;
		}
	return most_held(s->pick, k);
}

/* newcomer took the listener over rest.max.connections: the connections
 * their clients closed are cut (libmicrohttpd would free them a run or two
 * later; until then they were counted, and 50 local clients evicted each
 * other), and if the others, not cut, are still too many, one is evicted.
 * One poll(2) tells which sockets hold anything to look at. */
static void make_room(struct server *s, struct slot *newcomer)
{
	size_t held = 0, n = 0;
	bool polled;

	for (size_t i = 0; i < s->nopen; i++) {
		struct slot *sl = &s->open[i];

		if (sl->conn == NULL || sl->cut)
			continue;
		held++;
		if (sl == newcomer || sl->waiting || (sl->answering && !sl->lingering))
			continue;
		s->pfds[n] = (struct pollfd){.fd = sl->fd, .events = POLLIN | POLLRDHUP};
		s->cand[n++] = (struct candidate){.sl = sl};
	}
	if (held <= (size_t)s->r->cfg.max_connections)
		return;
	polled = poll(s->pfds, (nfds_t)n, 0) >= 0;
	for (size_t i = 0; i < n; i++) {
		struct candidate *c = &s->cand[i];

		c->u = polled && s->pfds[i].revents == 0 ? UNREAD_NONE : unread(s, c->sl);
		if (c->u == UNREAD_GONE) {
			cut(c->sl, "closed by its client");
			held--;
		}
	}
	if (held > (size_t)s->r->cfg.max_connections) {
		struct slot *v = victim(s, newcomer, s->cand, n);

		if (v != NULL)
			cut(v, "evicted by a new connection (rest.max.connections)");
	}
}

static void note_address(struct slot *sl)
{
	const union MHD_ConnectionInfo *ci =
	    mhd->get_connection_info(sl->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	memset(sl->addr, 0, sizeof(sl->addr));
	if (sa != NULL && sa->sa_family == AF_INET) {
		sl->addr[10] = sl->addr[11] = 0xff;
		memcpy(sl->addr + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		memcpy(sl->addr, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	}
}

/* The slot of a connection (its socket context), or NULL. */
static struct slot *slot_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    mhd->get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* GnuTLS, in a handshake: the certificate and key of the connection's
 * generation. */
static int on_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                   const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                   gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	struct MHD_Connection *conn = gnutls->gnutls_session_get_ptr(session);
	struct slot *sl = conn != NULL ? slot_of(conn) : NULL;

	if (sl == NULL || sl->gen == NULL)
		return -1;
	resttls_gen_cert(sl->gen, pcert, pcert_length, privkey);
	return 0;
}

/* Logs a TLS client refused for why, folded: a client that makes a
 * thousand handshakes a second would otherwise write a thousand lines a
 * second to the journal (and make journald drop skiff's other lines). */
static void log_refused(struct server *s, const char *why)
{
	int64_t now = loop_now_ms();

	if (s->refused_at != 0 && now - s->refused_at < REFUSED_LOG_MS) {
		s->refused++;
		return;
	}
	if (s->refused > 0)
		log_info("rest: %s:%s: TLS client refused: %s (and %u more since the last of "
		         "these lines)",
		         s->spec.host, s->spec.port, why, s->refused);
	else
		log_info("rest: %s:%s: TLS client refused: %s", s->spec.host, s->spec.port, why);
	s->refused_at = now;
	s->refused = 0;
}

/* GnuTLS, once the client's certificate arrived: it must chain to the
 * truststore (ssl.client.auth). Non-zero ends the handshake. */
static int on_verify(gnutls_session_t session)
{
	struct MHD_Connection *conn = gnutls->gnutls_session_get_ptr(session);
	struct slot *sl = conn != NULL ? slot_of(conn) : NULL;
	const gnutls_datum_t *chain;
	unsigned n = 0;
	char why[256];

	if (sl == NULL || sl->gen == NULL)
		return -1;
	chain = gnutls->gnutls_certificate_get_peers(session, &n);
	if ((chain == NULL || n == 0) && !resttls_requires_client(sl->s->tls))
		return 0;
	if (resttls_gen_verify(sl->gen, chain, chain ? n : 0, why, sizeof(why)) != 0) {
		log_refused(sl->s, why);
		return -1;
	}
	return 0;
}

/* An https connection before its handshake: its generation, and the
 * client certificate asked for (ssl.client.auth). */
static void start_tls(struct slot *sl)
{
	const union MHD_ConnectionInfo *ci =
	    mhd->get_connection_info(sl->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t session = ci != NULL ? ci->tls_session : NULL;

	sl->gen = resttls_current(sl->s->tls);
	if (session == NULL || !resttls_requests_client(sl->s->tls))
		return;
	/* REQUEST even when one is required: under REQUIRE, GnuTLS ends a
	 * handshake without a certificate itself, before on_verify, and the
	 * log never says why the client was refused. on_verify refuses it. */
	gnutls->gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
	gnutls->gnutls_session_set_verify_function(session, on_verify);
}

/* A request on a connection that ssl.client.auth=required let in has its
 * certificate: on_verify refused it otherwise, this makes sure. */
static bool client_vouched(struct server *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	unsigned n = 0;

	if (s->tls == NULL || !resttls_requires_client(s->tls))
		return true;
	ci = mhd->get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci != NULL && ci->tls_session != NULL &&
	    gnutls->gnutls_certificate_get_peers(ci->tls_session, &n) != NULL && n > 0)
		return true;
	log_refused(s, "no client certificate");
	return false;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct server *s = cls;
	struct slot *sl = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (sl != NULL) {
			resttls_gen_unref(sl->gen);
			memset(sl, 0, sizeof(*sl));
			s->live--;
		}
		return;
	}
	ci = mhd->get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	/* No free slot cannot happen (libmicrohttpd's limit is the same). */
	if (ci == NULL || (sl = free_slot(s)) == NULL)
		return;
	*socket_context = sl;
	sl->s = s;
	sl->conn = conn;
	sl->fd = ci->connect_fd;
	sl->since = loop_now_ms();
	note_address(sl);
	if (s->tls != NULL)
		start_tls(sl);
	if (++s->live > (size_t)s->r->cfg.max_connections)
		make_room(s, sl);
}

/* Runs libmicrohttpd, then re-arms the timer at its next deadline. At the
 * connection limit it takes the listening socket out of its epoll set and
 * puts it back only in a run after a connection was freed: so it runs again
 * while connections come and go, and while any is open a timer ensures a
 * run at least every REST_IDLE_RUN_MS. An idle server sets no timer. */
static void run(struct server *s)
{
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned before;
	int64_t due = -1, start = loop_now_ms();

	/* A closed connection is freed in the run after the one that saw it
	 * close, and a run reads one buffer per connection: go on while
	 * libmicrohttpd has more to do at once, and until two runs in a row
	 * changed no count, within RUN_BUDGET_MS (the pipeline's turn). */
	cut_slow(s);
	for (int i = 0, still = 0; i < 4096 && loop_now_ms() - start < RUN_BUDGET_MS; i++) {
		before = connections(s);
		mhd->run(s->d);
		still = connections(s) == before ? still + 1 : 0;
		if (still >= 2 && (mhd->get_timeout(s->d, &ms) != MHD_YES || ms > 0))
			break;
	}
	if (mhd->get_timeout(s->d, &ms) == MHD_YES)
		due = ms < REST_IDLE_RUN_MS ? (int64_t)ms : REST_IDLE_RUN_MS;
	else if (connections(s) > 0)
		due = REST_IDLE_RUN_MS;
	loop_timer_set(s->timer, due >= 0 ? loop_now_ms() + due : -1, 0);
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
	if (strcmp(key, "expand") == 0)
		req->expand_any = true;
	if (strcmp(key, "connectorsOnly") == 0)
		req->connectors_only = value == NULL || strcasecmp(value, "false") != 0;
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

/* A response is done with pg (libmicrohttpd's free callback), or r lets
 * go of it. */
static void page_unref(void *cls)
{
	struct page *pg = cls;

	pg->refs--;
	if (pg->refs == 1 && pg->r->page == pg) {
		/* Sent to every reader: the next request renders anew. */
		pg->r->page = NULL;
		pg->refs = 0;
	}
	if (pg->refs == 0) {
		free(pg->body);
		free(pg);
	}
}

/* r lets go of its page (its readers keep it until they are done). */
static void page_drop(struct rest *r)
{
	struct page *pg = r->page;

	r->page = NULL;
	if (pg != NULL)
		page_unref(pg);
}

static ssize_t page_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct page *pg = cls;
	size_t n = pg->len - (size_t)pos < max ? pg->len - (size_t)pos : max;

	if (pos >= pg->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	memcpy(buf, pg->body + pos, n);
	return (ssize_t)n;
}

/* Whether a /metrics page young enough to share is held (REST_SHARE_MS). */
static bool page_at_hand(const struct rest *r)
{
	return r->page != NULL && loop_now_ms() - r->page->at < REST_SHARE_MS;
}

/* A response that sends r's page, or for REST_SHARED_NEW the reply's body
 * made r's page first (NULL: out of memory). Each reader holds a reference,
 * r->page one more, dropped when the last reader is done. */
static struct MHD_Response *shared_response(struct rest *r, struct rest_reply *rep)
{
	struct MHD_Response *resp;
	struct page *pg;

	if (rep->shared == REST_SHARED_NEW) {
		if ((pg = calloc(1, sizeof(*pg))) == NULL)
			return NULL;
		*pg = (struct page){
		    .r = r, .body = rep->body, .len = rep->len, .at = loop_now_ms(), .refs = 1};
		rep->body = NULL;
		page_drop(r);
		r->page = pg;
	}
	if ((pg = r->page) == NULL)
		return NULL;
	resp = mhd->create_response_from_callback(pg->len, 64 * 1024, page_read, pg, page_unref);
	if (resp != NULL)
		pg->refs++;
	return resp;
}

static enum MHD_Result send_reply(struct rest *r, struct MHD_Connection *conn,
                                  struct rest_reply *rep)
{
	struct MHD_Response *resp;
	struct slot *sl;
	enum MHD_Result ok;

	if (rep->shared != REST_SHARED_NONE && rep->status == 200)
		resp = shared_response(r, rep);
	else
		resp = mhd->create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		rest_reply_free(rep);
		return MHD_NO; /* closes the connection */
	}
	if (rep->shared == REST_SHARED_NONE || rep->status != 200)
		rep->body = NULL; /* the response frees it */
	if (rep->content_type != NULL)
		mhd->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rep->content_type);
	for (size_t i = 0; i < rep->nheaders; i++)
		mhd->add_response_header(resp, rep->headers[i].name, rep->headers[i].value);
	ok = mhd->queue_response(conn, rep->status, resp);
	mhd->destroy_response(resp);
	rest_reply_free(rep);
	if (ok == MHD_YES && (sl = slot_of(conn)) != NULL)
		sl->answering = true;
	return ok;
}

/* Connect has no limit; skiff's refusal, in Connect's error shape. */
static const char too_large[] = "{\"error_code\":413,\"message\":\"the request body is "
                                "larger than rest.max.body.bytes\"}";
/* How long a connection refused in the middle of its body may still send
 * (read and dropped), so that the client reads the 413, not a reset. */
#define LINGER_MS 1000

/* Appends a chunk of the body (the limit checked by the caller). */
static bool take_body(struct pending *p, const char *data, size_t n)
{
	char *grown = realloc(p->body, p->len + n + 1);

	if (grown == NULL)
		return false;
	memcpy(grown + p->len, data, n);
	p->len += n;
	grown[p->len] = '\0';
	p->body = grown;
	return true;
}

static enum MHD_Result refuse_now(struct server *s, struct MHD_Connection *conn)
{
	struct rest_reply rep = {.status = 413, .content_type = "application/json"};

	rep.body = strdup(too_large);
	rep.len = rep.body != NULL ? strlen(rep.body) : 0;
	return send_reply(s->r, conn, &rep);
}

/* A body passed the limit in its middle, where libmicrohttpd queues no
 * reply: the 413 goes straight on the wire (the reply is small: it fits the
 * socket's buffer), the rest of the body is dropped as it comes, and the
 * connection is cut LINGER_MS later. */
static void refuse_midway(struct server *s, struct MHD_Connection *conn, struct pending *p)
{
	struct slot *sl = slot_of(conn);
	char reply[512];
	int n = snprintf(reply, sizeof(reply),
	                 "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n"
	                 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                 strlen(too_large), too_large);

	p->refused = true;
	if (sl == NULL)
		return;
	if (s->tls != NULL) {
		const union MHD_ConnectionInfo *ci =
		    mhd->get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);

		if (ci != NULL && ci->tls_session != NULL)
			(void)gnutls->gnutls_record_send(ci->tls_session, reply, (size_t)n);
	} else {
		(void)send(sl->fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	sl->answering = sl->lingering = true;
	sl->since = loop_now_ms() - s->r->cfg.request_ms + LINGER_MS;
}

/* Whether the request's Content-Length is over the limit. */
static bool announced_too_large(const struct server *s, struct MHD_Connection *conn)
{
	const char *cl = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	int64_t n;

	return cl != NULL && (num_parse_i64(cl, 0, INT64_MAX, &n) != 0 || n > s->r->cfg.max_body);
}

/* The request's headers and query into req. */
static void read_request(struct server *s, struct MHD_Connection *conn, struct rest_request *req)
{
	const char *cl = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	const char *te = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");

	req->host = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	req->origin = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	req->content_type = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	req->authorization = mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	req->acr_method =
	    mhd->lookup_connection_value(conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
	req->has_body = (cl != NULL && strspn(cl, "0 \t") < strlen(cl)) || te != NULL;
	req->connectors_only = true;
	mhd->get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, req);
	req->policy = &s->policy;
	req->metrics_at_hand = page_at_hand(s->r);
	req->serve = s->spec.admin ? REST_SERVE_ADMIN : REST_SERVE_API;
	if (!s->spec.admin && !s->r->cfg.admin_apart && !s->r->cfg.admin_off)
		req->serve |= REST_SERVE_ADMIN;
}

/* Waits for rest_changed: the connection is suspended (libmicrohttpd
 * neither reads it nor times it out) until then. */
static enum MHD_Result wait_reply(struct server *s, struct MHD_Connection *conn, struct pending *p)
{
	struct slot *sl = slot_of(conn);

	p->s = s;
	p->conn = conn;
	p->suspended = true;
	p->next = s->waiting;
	s->waiting = p;
	if (sl != NULL)
		sl->waiting = true; /* not slow: it waits for skiff */
	mhd->suspend_connection(conn);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
	struct server *s = cls;
	struct pending *p = *state;
	struct rest_request req = {.method = method, .path = url, .worker_id = s->worker_id};
	struct rest_reply rep = {0};
	int rc;

	if (p == NULL) {
		struct slot *sl = slot_of(conn);

		/* The headers are in; the body (if any) follows in later calls,
		 * unless it is refused now (libmicrohttpd then reads no more of
		 * it). */
		if (sl != NULL)
			sl->in_request = true;
		if (!client_vouched(s, conn))
			return MHD_NO;
		p = calloc(1, sizeof(*p));
		*state = p;
		if (p != NULL && announced_too_large(s, conn))
			return refuse_now(s, conn);
		return p != NULL ? MHD_YES : MHD_NO;
	}
	if (p->ready) {
		p->ready = false;
		return send_reply(s->r, conn, &p->reply);
	}
	if (*upload_size > 0) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (p->refused)
			return MHD_YES;
		if (n > (size_t)s->r->cfg.max_body - p->len) {
			refuse_midway(s, conn, p);
			return MHD_YES;
		}
		return take_body(p, upload, n) ? MHD_YES : MHD_NO;
	}
	if (p->refused)
		return MHD_NO; /* its 413 is sent: close */
	read_request(s, conn, &req);
	req.body = p->body != NULL ? p->body : "";
	req.len = p->len;
	req.waiter = p;
	rc = rest_route(s->r->ops, s->r->ctx, &req, &rep);
	if (rc == REST_PENDING)
		return wait_reply(s, conn, p);
	return send_reply(s->r, conn, &rep);
}

void rest_changed(void *waiter, enum rest_change_op op, const char *name, bool created, int rc,
                  const char *why)
{
	struct pending *p = waiter, **at;
	struct server *s = p->s;
	struct slot *sl;

	for (at = &s->waiting; *at != NULL && *at != p; at = &(*at)->next)
		;
	if (*at == NULL)
		return; /* answered already (rest_destroy) */
	*at = p->next;
	(void)rest_change_reply(s->r->ops, s->r->ctx, op, name, created, rc, why, s->worker_id,
	                        &p->reply);
	p->ready = true;
	p->suspended = false;
	if ((sl = slot_of(p->conn)) != NULL) {
		sl->waiting = false;
		sl->since = loop_now_ms();
	}
	mhd->resume_connection(p->conn);
	run(s);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode why)
{
	struct pending *p = *state;
	struct slot *sl = slot_of(conn);

	/* The next request on this connection has its own time. */
	if (sl != NULL) {
		sl->since = loop_now_ms();
		sl->answering = sl->waiting = sl->in_request = sl->spared = sl->lingering = false;
		sl->served = true;
	}
	if (p != NULL) {
		rest_reply_free(&p->reply);
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

static int start(struct server *s, const struct addrinfo *ai)
{
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (s->tls != NULL)
		flags |= MHD_USE_TLS;
	flags |= MHD_ALLOW_SUSPEND_RESUME;
	int64_t idle_s = (s->r->cfg.idle_ms + 999) / 1000;

	s->nopen = (size_t)s->r->cfg.max_connections + EVICT_MARGIN;
	s->open = calloc(s->nopen, sizeof(*s->open));
	s->pfds = calloc(s->nopen, sizeof(*s->pfds));
	s->cand = calloc(s->nopen, sizeof(*s->cand));
	s->pick = calloc(s->nopen, sizeof(*s->pick));
	if (s->open == NULL || s->pfds == NULL || s->cand == NULL || s->pick == NULL)
		return REST_ERR_NOMEM;
	s->d = mhd->start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->nopen, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)REST_CONN_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)idle_s,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
	    s->tls != NULL ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, on_cert,
	    MHD_OPTION_HTTPS_PRIORITIES, s->tls != NULL ? resttls_priorities(s->tls) : NULL,
	    MHD_OPTION_END);
	return s->d != NULL ? 0 : REST_ERR;
}

/* dst (a host name's room, 256 bytes) = name + suffix, cut to fit. */
static void name_copy(char *dst, const char *name, const char *suffix)
{
	size_t n = strnlen(name, 248), m = strlen(suffix);

	memcpy(dst, name, n);
	memcpy(dst + n, suffix, m + 1);
}

/* What s lets in: Connect's BasicAuthSecurityRestExtension guards the
 * listeners, not admin.listeners (its filter is registered with the main
 * resources only); and the names a Host header may give besides IP
 * addresses and localhost. */
static void set_policy(struct rest *r, struct server *s)
{
	unsigned char ip[16];
	char host[256];
	size_t n = 0;

	if (gethostname(host, sizeof(host)) == 0 && host[0] != '\0') {
		host[sizeof(host) - 1] = '\0';
		name_copy(s->names[n++], host, "");
		/* Avahi's name for it on the local network. */
		if (strchr(host, '.') == NULL)
			name_copy(s->names[n++], host, ".local");
	}
	if (s->spec.host[0] != '\0' && inet_pton(AF_INET, s->spec.host, ip) != 1 &&
	    inet_pton(AF_INET6, s->spec.host, ip) != 1)
		name_copy(s->names[n++], s->spec.host, "");
	if (r->cfg.advertised_host != NULL && n < 4)
		name_copy(s->names[n++], r->cfg.advertised_host, "");
	for (size_t i = 0; i < n; i++)
		s->name_ptrs[i] = s->names[i];
	s->policy = (struct rest_policy){
	    .auth = s->spec.admin ? NULL : r->auth,
	    .https = s->spec.https,
	    .port = s->spec.port,
	    .names = s->name_ptrs,
	    .nnames = n,
	    .allow_origin = r->cfg.allow_origin,
	    .allow_methods = r->cfg.allow_methods,
	};
}

/* Binds listener spec as server s and registers it with the loop. Returns
 * 0, REST_ERR (cannot bind), REST_ERR_CONFIG (cannot resolve) or
 * REST_ERR_NOMEM, with errbuf. */
static int open_server(struct rest *r, struct server *s, const struct rest_listener *spec,
                       char *errbuf, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	const union MHD_DaemonInfo *info;
	const char *key = spec->admin ? "admin.listeners" : "listeners";
	int rc;

	s->r = r;
	s->spec = *spec;
	s->tls = spec->https ? r->tls[spec->admin ? REST_TLS_ADMIN : REST_TLS_MAIN] : NULL;
	set_policy(r, s);
	snprintf(s->worker_id, sizeof(s->worker_id), "%s:%s",
	         spec->host[0] ? spec->host : "0.0.0.0", spec->port);
	if (getaddrinfo(spec->host[0] ? spec->host : NULL, spec->port, &hints, &ai) != 0 ||
	    ai == NULL) {
		snprintf(errbuf, errlen, "%s: %s: cannot resolve '%s'", spec->where, key,
		         spec->host);
		return REST_ERR_CONFIG;
	}
	rc = start(s, ai);
	freeaddrinfo(ai);
	if (rc == REST_ERR_NOMEM) {
		snprintf(errbuf, errlen, "rest: out of memory");
		return rc;
	}
	if (rc != 0) {
		snprintf(errbuf, errlen,
		         "%s: %s: cannot listen on %s:%s (in use, or not an address of this host)",
		         spec->where, key, spec->host[0] ? spec->host : "*", spec->port);
		return REST_ERR;
	}
	info = mhd->get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL ||
	    loop_fd_add(r->loop, info->epoll_fd, POLLIN, on_ready, s, &s->watch) != 0 ||
	    loop_timer_add(r->loop, -1, 0, on_due, s, &s->timer) != 0) {
		snprintf(errbuf, errlen, "rest: out of memory");
		return REST_ERR_NOMEM;
	}
	log_notice("rest: serving %s on %s://%s:%s%s", spec->admin ? "/admin" : "the REST API",
	           spec->https ? "https" : "http", spec->host[0] ? spec->host : "*", spec->port,
	           s->tls != NULL && resttls_requires_client(s->tls)
	               ? " (client certificates required)"
	               : "");
	run(s);
	return 0;
}

/* ---- files changed on disk ------------------------------------------------ */

static void tls_changed(struct rest *r, void *what, const char *path)
{
	char why[1536];

	if (resttls_reload(what, why, sizeof(why)) != 0) {
		log_error("rest: %s changed, and cannot be used: %s; the https listeners go on "
		          "with the certificate they had",
		          path, why);
		return;
	}
	log_notice("rest: %s changed: new https connections get the new certificate", path);
}

static void auth_changed(struct rest *r, void *what, const char *path)
{
	char why[1536];

	if (restauth_reload(what, why, sizeof(why)) != 0) {
		log_error("rest: %s changed, and cannot be used: %s; the users read before stay",
		          path, why);
		return;
	}
	log_notice("rest: %s changed: %zu user%s", path, restauth_users(what),
	           restauth_users(what) == 1 ? "" : "s");
}

static void on_settled(struct loop *l, struct loop_timer *t, void *arg)
{
	struct watched *w = arg;
	const char *path = filewatch_changed(w->fw);

	if (path != NULL)
		w->reload(w->r, w->what, path);
}

static void on_watch_fd(struct loop *l, struct loop_fd *fdw, int fd, int revents, void *arg)
{
	struct watched *w = arg;

	if (filewatch_drain(w->fw))
		loop_timer_set(w->settle, loop_now_ms() + TLS_SETTLE_MS, 0);
}

static int watch(struct rest *r, struct watched *w, const char **paths, size_t n,
                 void (*reload)(struct rest *, void *, const char *), void *what)
{
	char why[1024];
	int rc;

	w->r = r;
	w->reload = reload;
	w->what = what;
	if (n == 0)
		return 0;
	rc = filewatch_new(paths, n, &w->fw, why, sizeof(why));
	if (rc == FILEWATCH_ERR_NOMEM)
		return REST_ERR_NOMEM;
	if (rc != 0) {
		log_warn("rest: %s: a change will not be seen until skiff restarts", why);
		return 0;
	}
	if (loop_fd_add(r->loop, filewatch_fd(w->fw), POLLIN, on_watch_fd, w, &w->watch) != 0 ||
	    loop_timer_add(r->loop, -1, 0, on_settled, w, &w->settle) != 0)
		return REST_ERR_NOMEM;
	return 0;
}

static void unwatch(struct rest *r, struct watched *w)
{
	loop_fd_del(r->loop, w->watch);
	loop_timer_del(r->loop, w->settle);
	filewatch_destroy(w->fw);
}

/* ---- open, check, destroy ----------------------------------------------------- */

/* Loads what the https listeners of cfg need. */
static int load_tls(const struct rest_settings *cfg, struct resttls **tls, char *errbuf,
                    size_t errlen)
{
	for (size_t i = 0; i < cfg->nlisteners; i++) {
		const struct rest_listener *l = &cfg->listeners[i];
		enum rest_tls_role role = l->admin ? REST_TLS_ADMIN : REST_TLS_MAIN;
		int rc;

		if (!l->https || tls[role] != NULL)
			continue;
		rc = resttls_new(&cfg->tls[role], &tls[role], errbuf, errlen);
		if (rc != 0)
			return rc == RESTTLS_ERR_NOMEM ? REST_ERR_NOMEM : REST_ERR_CONFIG;
	}
	return 0;
}

/* rest.extension.classes: the JAAS and credentials files. */
static int load_auth(const struct rest_settings *cfg, struct restauth **out, char *errbuf,
                     size_t errlen)
{
	int rc;

	*out = NULL;
	if (!cfg->basic_auth)
		return 0;
	rc = restauth_new(cfg->jaas, cfg->jaas_where, out, errbuf, errlen);
	return rc == 0 ? 0 : rc == RESTAUTH_ERR_NOMEM ? REST_ERR_NOMEM : REST_ERR_CONFIG;
}

int rest_check(const struct config_section *worker, char *errbuf, size_t errlen)
{
	struct rest_settings *cfg = calloc(1, sizeof(*cfg));
	struct resttls *tls[2] = {NULL, NULL};
	struct restauth *auth = NULL;
	int rc = REST_ERR_NOMEM;

	if (cfg == NULL)
		return rc;
	rc = restconf_read(worker, cfg, errbuf, errlen) != 0 ? REST_ERR_CONFIG : 0;
	if (rc == 0)
		rc = load_tls(cfg, tls, errbuf, errlen);
	if (rc == 0)
		rc = load_auth(cfg, &auth, errbuf, errlen);
	resttls_destroy(tls[0]);
	resttls_destroy(tls[1]);
	restauth_destroy(auth);
	free(cfg);
	return rc;
}

int rest_open(const struct config_section *worker, struct loop *l, const struct rest_ops *ops,
              void *ctx, struct rest **out, char *errbuf, size_t errlen)
{
	struct rest *r = calloc(1, sizeof(*r));
	char lib[256];
	int rc = REST_ERR_NOMEM;

	*out = NULL;
	if (r == NULL)
		return rc;
	r->loop = l;
	r->ops = ops;
	r->ctx = ctx;
	rc = REST_ERR_CONFIG;
	if (restconf_read(worker, &r->cfg, errbuf, errlen) != 0)
		goto out;
	if (r->cfg.nlisteners == 0) {
		rc = 0;
		goto out;
	}
	/* Without the library the API cannot be served: a person must install
	 * it (or unset listeners), so it is a configuration error. */
	if (mhdlib_get(&mhd, lib, sizeof(lib)) != 0) {
		snprintf(errbuf, errlen, "%s: listeners: the REST API needs %s",
		         r->cfg.listeners[0].where, lib);
		goto out;
	}
	if ((rc = load_tls(&r->cfg, r->tls, errbuf, errlen)) != 0)
		goto out;
	if ((r->tls[0] != NULL || r->tls[1] != NULL) &&
	    gnutlslib_get(&gnutls, lib, sizeof(lib)) != 0) {
		snprintf(errbuf, errlen, "listeners: https needs %s", lib);
		rc = REST_ERR_CONFIG;
		goto out;
	}
	if ((rc = load_auth(&r->cfg, &r->auth, errbuf, errlen)) != 0)
		goto out;
	for (size_t i = 0; i < 2; i++) {
		const char *paths[4];

		if (r->tls[i] != NULL &&
		    (rc = watch(r, &r->tw[i], paths, resttls_files(r->tls[i], paths, 4),
		                tls_changed, r->tls[i])) != 0)
			goto out;
	}
	if (r->auth != NULL) {
		const char *paths[2];

		if ((rc = watch(r, &r->aw, paths, restauth_files(r->auth, paths, 2), auth_changed,
		                r->auth)) != 0)
			goto out;
		log_notice("rest: HTTP Basic authentication with the %zu user%s of %s",
		           restauth_users(r->auth), restauth_users(r->auth) == 1 ? "" : "s",
		           paths[1]);
	}
	for (size_t i = 0; i < r->cfg.nlisteners; i++) {
		rc = open_server(r, &r->servers[r->nservers], &r->cfg.listeners[i], errbuf, errlen);
		r->nservers++;
		if (rc != 0)
			goto out;
	}
	*out = r;
	r = NULL;
	rc = 0;
out:
	rest_destroy(r);
	return rc;
}

void rest_destroy(struct rest *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nservers; i++) {
		struct server *s = &r->servers[i];

		/* libmicrohttpd stops no daemon with a suspended connection. */
		while (s->waiting != NULL)
			rest_changed(s->waiting, REST_DELETE, "", false, REST_ERR,
			             "skiff is stopping: the change was not applied");
		loop_fd_del(r->loop, s->watch);
		loop_timer_del(r->loop, s->timer);
		if (s->d != NULL)
			mhd->stop_daemon(s->d);
		free(s->open);
		free(s->pfds);
		free(s->cand);
		free(s->pick);
	}
	for (size_t i = 0; i < 2; i++) {
		unwatch(r, &r->tw[i]);
		resttls_destroy(r->tls[i]);
	}
	unwatch(r, &r->aw);
	restauth_destroy(r->auth);
	page_drop(r);
	free(r);
}
