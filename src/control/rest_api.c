/* rest_api: one request to one reply, Connect's paths and shapes (rest.h).
 * No sockets here: rest.c hands requests in, the fuzzer too.
 *
 * A request goes through the steps Connect's server (Jetty, then Jersey)
 * takes, in its order, so that each refusal is Connect's: the Host and
 * Origin of a browser (restguard.h; skiff's own, before anything), a CORS
 * preflight (access.control.allow.*), the path (404) and method (405) among
 * the routes below, the body's type (415), the credentials (401,
 * BasicAuthSecurityRestExtension, restauth.h), then the route itself. HEAD
 * is a GET without a body; OPTIONS lists the route's methods (Jersey's). */
#include "control/rest.h"

#include "config/config.h"
#include "control/restauth.h"
#include "control/restguard.h"
#include "util/text.h"
#include "util/utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef SKIFF_COMMIT
#define SKIFF_COMMIT "unknown"
#endif

static const char *const json_type = "application/json";

/* ---- replies ---------------------------------------------------------------- */

static void reply_text(struct rest_reply *out, unsigned status, const char *type, char *body)
{
	free(out->body);
	out->status = status;
	out->content_type = type;
	out->body = body;
	out->len = body != NULL ? strlen(body) : 0;
}

/* Replies j (taken) as JSON; out of memory: 500 without a body. */
static int reply_json(struct rest_reply *out, unsigned status, cJSON *j)
{
	char *text = j != NULL ? cJSON_PrintUnformatted(j) : NULL;

	cJSON_Delete(j);
	if (text == NULL) {
		reply_text(out, 500, json_type, NULL);
		return REST_ERR_NOMEM;
	}
	reply_text(out, status, json_type, text);
	return 0;
}

static cJSON *error_doc(unsigned status, const char *message)
{
	cJSON *j = cJSON_CreateObject();

	if (j != NULL && (cJSON_AddNumberToObject(j, "error_code", status) == NULL ||
	                  cJSON_AddStringToObject(j, "message", message) == NULL)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

/* Connect's error shape: {"error_code":404,"message":"..."}. */
static int reply_error(struct rest_reply *out, unsigned status, const char *message)
{
	return reply_json(out, status, error_doc(status, message));
}

/* Jersey's own refusals (no route, no method, wrong media type) carry the
 * same body without a Content-Type. */
static int reply_jersey(struct rest_reply *out, unsigned status)
{
	char msg[64];
	int rc;

	snprintf(msg, sizeof(msg), "HTTP %u %s", status,
	         status == 404   ? "Not Found"
	         : status == 405 ? "Method Not Allowed"
	                         : "Unsupported Media Type");
	rc = reply_error(out, status, msg);
	if (rc == 0)
		out->content_type = NULL;
	return rc;
}

static int reply_message(struct rest_reply *out, const char *message)
{
	cJSON *j = cJSON_CreateObject();

	if (j != NULL && cJSON_AddStringToObject(j, "message", message) == NULL) {
		cJSON_Delete(j);
		j = NULL;
	}
	return reply_json(out, 200, j);
}

static void add_header(struct rest_reply *out, const char *name, const char *value)
{
	if (out->nheaders < REST_REPLY_HEADERS)
		out->headers[out->nheaders++] = (struct rest_header){name, value};
}

/* ---- the routes --------------------------------------------------------------- */

enum { M_GET = 1, M_POST = 2, M_PUT = 4, M_PATCH = 8, M_DELETE = 16 };

enum route_id {
	R_ROOT,
	R_HEALTH,
	R_METRICS,
	R_CONNECTORS,
	R_CONNECTOR,
	R_CONFIG,
	R_STATUS,
	R_RESTART,
	R_PAUSE,
	R_RESUME,
	R_STOP,
	R_TASKS,
	R_TASKS_CONFIG,
	R_TASK_STATUS,
	R_TASK_RESTART,
	R_TOPICS,
	R_TOPICS_RESET,
	R_OFFSETS,
	R_PLUGINS,
	R_PLUGIN_CONFIG,
	R_VALIDATE,
	R_LOGGERS,
	R_LOGGER,
};

/* A path of segments, "*" standing for one (a connector, task, plugin or
 * logger name). */
static const struct route {
	enum route_id id;
	const char *path;
	unsigned methods;
	unsigned serve;
} routes[] = {
    {R_ROOT, "", M_GET, REST_SERVE_API},
    {R_HEALTH, "health", M_GET, REST_SERVE_API},
    {R_METRICS, "metrics", M_GET, REST_SERVE_API},
    {R_CONNECTORS, "connectors", M_GET | M_POST, REST_SERVE_API},
    {R_CONNECTOR, "connectors/*", M_GET | M_DELETE, REST_SERVE_API},
    {R_CONFIG, "connectors/*/config", M_GET | M_PUT | M_PATCH, REST_SERVE_API},
    {R_STATUS, "connectors/*/status", M_GET, REST_SERVE_API},
    {R_RESTART, "connectors/*/restart", M_POST, REST_SERVE_API},
    {R_PAUSE, "connectors/*/pause", M_PUT, REST_SERVE_API},
    {R_RESUME, "connectors/*/resume", M_PUT, REST_SERVE_API},
    {R_STOP, "connectors/*/stop", M_PUT, REST_SERVE_API},
    {R_TASKS, "connectors/*/tasks", M_GET, REST_SERVE_API},
    {R_TASKS_CONFIG, "connectors/*/tasks-config", M_GET, REST_SERVE_API},
    {R_TASK_STATUS, "connectors/*/tasks/*/status", M_GET, REST_SERVE_API},
    {R_TASK_RESTART, "connectors/*/tasks/*/restart", M_POST, REST_SERVE_API},
    {R_TOPICS, "connectors/*/topics", M_GET, REST_SERVE_API},
    {R_TOPICS_RESET, "connectors/*/topics/reset", M_PUT, REST_SERVE_API},
    {R_OFFSETS, "connectors/*/offsets", M_GET | M_PATCH | M_DELETE, REST_SERVE_API},
    {R_PLUGINS, "connector-plugins", M_GET, REST_SERVE_API},
    {R_PLUGIN_CONFIG, "connector-plugins/*/config", M_GET, REST_SERVE_API},
    {R_VALIDATE, "connector-plugins/*/config/validate", M_PUT, REST_SERVE_API},
    {R_LOGGERS, "admin/loggers", M_GET, REST_SERVE_ADMIN},
    {R_LOGGER, "admin/loggers/*", M_GET | M_PUT, REST_SERVE_ADMIN},
};

#define MAX_SEGMENTS 6
#define MAX_ARGS 2

/* The request being routed, with what routing found out. */
struct ctx {
	const struct rest_ops *ops;
	void *pctx;
	const struct rest_request *req;
	struct rest_reply *out;
	const struct route *route;
	unsigned method; /* M_*; HEAD is M_GET */
	const char *arg[MAX_ARGS];
	size_t arglen[MAX_ARGS];
	char name[512]; /* arg[0], NUL-terminated */
};

static unsigned method_bit(const char *m)
{
	static const struct {
		const char *name;
		unsigned bit;
	} ms[] = {{"GET", M_GET}, {"HEAD", M_GET},    {"POST", M_POST},
	          {"PUT", M_PUT}, {"PATCH", M_PATCH}, {"DELETE", M_DELETE}};

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		if (strcmp(m, ms[i].name) == 0)
			return ms[i].bit;
	return 0;
}

/* Whether path (after its leading '/', segments split by '/'; one
 * trailing '/' allowed, as Jersey) matches the route's; fills c->arg. */
static bool matches(const char *pattern, const char *path, struct ctx *c)
{
	size_t nargs = 0;

	for (;;) {
		size_t pl = strcspn(pattern, "/"), sl = strcspn(path, "/");

		if (pl == 1 && pattern[0] == '*') {
			if (sl == 0 || nargs == MAX_ARGS)
				return false;
			c->arg[nargs] = path;
			c->arglen[nargs++] = sl;
		} else if (pl != sl || memcmp(pattern, path, pl) != 0) {
			return false;
		}
		pattern += pl;
		path += sl;
		if (*pattern == '\0')
			return *path == '\0' || (path[0] == '/' && path[1] == '\0');
		if (*path == '\0')
			return false;
		pattern++;
		path++;
	}
}

/* The route of req's path on this listener, or NULL (404). */
static const struct route *find_route(struct ctx *c)
{
	const char *p = c->req->path;

	if (p[0] != '/' && p[0] != '\0')
		return NULL;
	if (p[0] == '/')
		p++;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((routes[i].serve & c->req->serve) && matches(routes[i].path, p, c))
			return &routes[i];
	return NULL;
}

/* Jersey's OPTIONS: 200, Allow the route's methods with HEAD and OPTIONS. */
static int options(struct ctx *c)
{
	static const struct {
		unsigned bit;
		const char *name;
	} order[] = {{M_POST, "POST"},
	             {M_PUT, "PUT"},
	             {M_PATCH, "PATCH"},
	             {M_DELETE, "DELETE"},
	             {M_GET, "GET"}};
	char allow[96] = "HEAD", body[128] = "HEAD";
	char *text;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(c->route->methods & order[i].bit))
			continue;
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), ",%s",
		         order[i].name);
		snprintf(body + strlen(body), sizeof(body) - strlen(body), ", %s", order[i].name);
	}
	strncat(allow, ",OPTIONS", sizeof(allow) - strlen(allow) - 1);
	strncat(body, ", OPTIONS", sizeof(body) - strlen(body) - 1);
	text = strdup(body);
	c->out->owned = strdup(allow);
	if (text == NULL || c->out->owned == NULL) {
		free(text);
		return reply_error(c->out, 500, "out of memory");
	}
	reply_text(c->out, 200, "text/plain", text);
	add_header(c->out, "Allow", c->out->owned);
	return 0;
}

/* ---- shapes -------------------------------------------------------------- */

static cJSON *config_json(const struct ctx *c, size_t i)
{
	cJSON *j = cJSON_CreateObject();
	const char *k, *v;
	size_t cur = 0;

	while (j != NULL && c->ops->config_next(c->pctx, i, &cur, &k, &v)) {
		if (cJSON_AddStringToObject(j, k, v) == NULL) {
			cJSON_Delete(j);
			return NULL;
		}
	}
	return j;
}

/* A state object: {"state":..,"worker_id":..} plus "id" for a task and
 * "trace" when it failed. */
static cJSON *state_json(const char *worker_id, const struct rest_connector *rc, bool task)
{
	cJSON *j = cJSON_CreateObject();
	bool ok = j != NULL;

	if (ok && task)
		ok = cJSON_AddNumberToObject(j, "id", 0) != NULL;
	ok = ok && cJSON_AddStringToObject(j, "state", rc->state) != NULL &&
	     cJSON_AddStringToObject(j, "worker_id", worker_id) != NULL;
	if (ok && rc->trace != NULL)
		ok = cJSON_AddStringToObject(j, "trace", rc->trace) != NULL;
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static bool stopped(const struct rest_connector *rc)
{
	return strcmp(rc->state, "STOPPED") == 0;
}

/* Adds item to obj under key (array when key is NULL); false when either
 * is missing (out of memory). Takes item. */
static bool add(cJSON *obj, const char *key, cJSON *item)
{
	if (obj == NULL || item == NULL) {
		cJSON_Delete(item);
		return false;
	}
	if (key == NULL)
		return cJSON_AddItemToArray(obj, item);
	return cJSON_AddItemToObject(obj, key, item);
}

/* Connect's shape of a connector's status and info: {"name", key: val,
 * "tasks": [task], "type": "source"}, with no task for a stopped connector
 * (KIP-875). Takes val and task in every case (NULL: out of memory). */
static cJSON *connector_doc(const struct rest_connector *rc, const char *key, cJSON *val,
                            cJSON *task)
{
	cJSON *j = cJSON_CreateObject(), *tasks = cJSON_CreateArray();
	bool ok =
	    j != NULL && tasks != NULL && cJSON_AddStringToObject(j, "name", rc->name) != NULL;

	ok = add(ok ? j : NULL, key, val);
	if (stopped(rc))
		cJSON_Delete(task);
	else
		ok = add(ok ? tasks : NULL, NULL, task);
	ok = add(ok ? j : NULL, "tasks", tasks);
	ok = ok && cJSON_AddStringToObject(j, "type", "source") != NULL;
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static cJSON *status_json(const struct ctx *c, size_t i)
{
	struct rest_connector rc;

	c->ops->connector(c->pctx, i, &rc);
	return connector_doc(&rc, "connector", state_json(c->req->worker_id, &rc, false),
	                     stopped(&rc) ? NULL : state_json(c->req->worker_id, &rc, true));
}

static cJSON *task_id(const char *name)
{
	cJSON *j = cJSON_CreateObject();

	if (j != NULL && (cJSON_AddStringToObject(j, "connector", name) == NULL ||
	                  cJSON_AddNumberToObject(j, "task", 0) == NULL)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static cJSON *info_of(const struct rest_ops *ops, void *pctx, size_t i)
{
	struct ctx c = {.ops = ops, .pctx = pctx};
	struct rest_connector rc;

	ops->connector(pctx, i, &rc);
	return connector_doc(&rc, "config", config_json(&c, i),
	                     stopped(&rc) ? NULL : task_id(rc.name));
}

static cJSON *info_json(const struct ctx *c, size_t i)
{
	return info_of(c->ops, c->pctx, i);
}

/* The task's configuration: the connector's with task.class. */
static cJSON *task_config(const struct ctx *c, size_t i, const struct rest_connector *rc)
{
	cJSON *j = config_json(c, i);

	if (j != NULL && cJSON_AddStringToObject(j, "task.class", rc->task_class) == NULL) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static cJSON *tasks_json(const struct ctx *c, size_t i)
{
	struct rest_connector rc;
	cJSON *arr = cJSON_CreateArray(), *t;

	c->ops->connector(c->pctx, i, &rc);
	if (arr == NULL || stopped(&rc))
		return arr;
	t = cJSON_CreateObject();
	if (!add(arr, NULL, t) || !add(t, "id", task_id(rc.name)) ||
	    !add(t, "config", task_config(c, i, &rc))) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* GET /connectors/{name}/tasks-config: {"name-0": {config}} (deprecated in
 * Connect 3.7, still served). */
static cJSON *tasks_config_json(const struct ctx *c, size_t i)
{
	struct rest_connector rc;
	cJSON *j = cJSON_CreateObject();
	char key[600];

	c->ops->connector(c->pctx, i, &rc);
	if (j == NULL || stopped(&rc))
		return j;
	snprintf(key, sizeof(key), "%s-0", rc.name);
	if (!add(j, key, task_config(c, i, &rc))) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* ---- routes --------------------------------------------------------------- */

static int list_connectors(const struct ctx *c)
{
	unsigned ex = c->req->expand;
	size_t n = c->ops->count(c->pctx);
	cJSON *j = c->req->expand_any ? cJSON_CreateObject() : cJSON_CreateArray();

	for (size_t i = 0; i < n && j != NULL; i++) {
		struct rest_connector rc;
		cJSON *e;
		bool ok = true;

		c->ops->connector(c->pctx, i, &rc);
		if (!c->req->expand_any) {
			ok = add(j, NULL, cJSON_CreateString(rc.name));
		} else {
			e = cJSON_CreateObject();
			ok = add(j, rc.name, e);
			if (ok && (ex & REST_EXPAND_STATUS))
				ok = add(e, "status", status_json(c, i));
			if (ok && (ex & REST_EXPAND_INFO))
				ok = add(e, "info", info_json(c, i));
		}
		if (!ok) {
			cJSON_Delete(j);
			j = NULL;
		}
	}
	return reply_json(c->out, 200, j);
}

static int root(const struct ctx *c)
{
	cJSON *j = cJSON_CreateObject();
	char *id = c->ops->cluster_id(c->pctx);
	bool ok = j != NULL && cJSON_AddStringToObject(j, "version", SKIFF_VERSION) != NULL &&
	          cJSON_AddStringToObject(j, "commit", SKIFF_COMMIT) != NULL;

	/* Connect always knows it (it reads its topics); skiff may not yet. */
	ok = ok && (id != NULL ? cJSON_AddStringToObject(j, "kafka_cluster_id", id)
	                       : cJSON_AddNullToObject(j, "kafka_cluster_id")) != NULL;
	free(id);
	if (!ok) {
		cJSON_Delete(j);
		j = NULL;
	}
	return reply_json(c->out, 200, j);
}

/* KIP-1017: 200 healthy, 503 unhealthy, {"status":..,"message":..}. */
static int health(const struct ctx *c)
{
	char msg[512] = "";
	int rc = c->ops->health(c->pctx, msg, sizeof(msg));
	cJSON *j = cJSON_CreateObject();

	if (j != NULL &&
	    (cJSON_AddStringToObject(j, "status", rc == 0 ? "healthy" : "unhealthy") == NULL ||
	     cJSON_AddStringToObject(j, "message", msg) == NULL)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return reply_json(c->out, rc == 0 ? 200 : 503, j);
}

static int metrics(const struct ctx *c)
{
	static const char type[] = "text/plain; version=0.0.4; charset=utf-8";
	char *text;

	if (c->req->metrics_at_hand) {
		reply_text(c->out, 200, type, NULL);
		c->out->shared = REST_SHARED_LAST;
		return 0;
	}
	if ((text = c->ops->metrics(c->pctx)) == NULL)
		return reply_error(c->out, 500, "out of memory");
	reply_text(c->out, 200, type, text);
	c->out->shared = REST_SHARED_NEW;
	return 0;
}

static int control(const struct ctx *c, size_t i, enum rest_action a)
{
	char why[512] = "";
	int rc = c->ops->control(c->pctx, i, a, why, sizeof(why));

	if (rc == REST_ERR_STATE)
		return reply_error(c->out, 409, why);
	if (rc != 0)
		return reply_error(c->out, 500, why[0] ? why : "failed");
	/* Connect: pause and resume 202 Accepted, stop and restart 204 No Content. */
	reply_text(c->out, a == REST_STOP || a == REST_RESTART ? 204 : 202, NULL, NULL);
	return 0;
}

/* POST /connectors/{name}/restart (KIP-745). skiff's connector and its one
 * task are one unit: whatever the query asks restarts both or neither.
 * Without a query 204 as Connect; with one, 202 and the status with what
 * restarts shown RESTARTING (onlyFailed: only a FAILED one). */
static int restart(const struct ctx *c, size_t i)
{
	struct rest_connector rc;
	bool go;

	if (c->req->restart == 0)
		return control(c, i, REST_RESTART);
	c->ops->connector(c->pctx, i, &rc);
	go = !stopped(&rc) &&
	     (!(c->req->restart & REST_ONLY_FAILED) || strcmp(rc.state, "FAILED") == 0);
	if (go) {
		char why[512] = "";

		if (c->ops->control(c->pctx, i, REST_RESTART, why, sizeof(why)) != 0)
			return reply_error(c->out, 500, why[0] ? why : "failed");
		rc.state = "RESTARTING";
		rc.trace = NULL;
	}
	return reply_json(
	    c->out, 202,
	    connector_doc(&rc, "connector", state_json(c->req->worker_id, &rc, false),
	                  stopped(&rc) ? NULL : state_json(c->req->worker_id, &rc, true)));
}

/* A task id as Java's Integer.valueOf reads it; false: not an int (Jersey
 * then finds no route). */
static bool task_number(const char *s, size_t len, long *out)
{
	char buf[16], *end;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strspn(buf + (buf[0] == '-' || buf[0] == '+'), "0123456789") !=
	        len - (buf[0] == '-' || buf[0] == '+') ||
	    len == (size_t)(buf[0] == '-' || buf[0] == '+'))
		return false;
	errno = 0;
	*out = strtol(buf, &end, 10);
	return errno == 0 && *out >= INT_MIN && *out <= INT_MAX;
}

/* /connectors/{name}/tasks/{id}/{status|restart}: the one task is 0, and a
 * stopped connector has none (Connect's 404s). */
static int task_route(const struct ctx *c, size_t i)
{
	struct rest_connector rc;
	char msg[640];
	long id;

	if (!task_number(c->arg[1], c->arglen[1], &id))
		return reply_error(c->out, 404, "HTTP 404 Not Found"); /* typed JSON, as Jersey's */
	c->ops->connector(c->pctx, i, &rc);
	if (id != 0 || stopped(&rc)) {
		snprintf(msg, sizeof(msg), "No status found for task %s-%ld", rc.name, id);
		return reply_error(c->out, 404, msg);
	}
	if (c->route->id == R_TASK_STATUS)
		return reply_json(c->out, 200, state_json(c->req->worker_id, &rc, true));
	return control(c, i, REST_RESTART);
}

static int get_offsets(const struct ctx *c, size_t i)
{
	char *json = NULL;

	if (c->ops->offsets(c->pctx, i, &json) != 0)
		return reply_error(c->out, 500, "out of memory");
	reply_text(c->out, 200, json_type, json);
	return 0;
}

/* Connect's refusal of a PATCH without entries. */
static const char no_offsets[] =
    "Partitions / offsets need to be provided for an alter offsets request";

/* The entries of a PATCH body (offsets_doc_entries). Returns 0, or a
 * reply already made (rc > 0) or REST_ERR_NOMEM. */
static int patch_entries(const struct ctx *c, const cJSON *j, struct offsets_doc_entry **e,
                         size_t *n)
{
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(j, "offsets");
	char why[512];
	int rc;

	/* Connect's order: no entries is its 400; a body Jackson cannot
	 * read into its shape its 500. */
	if (j == NULL)
		rc = reply_error(c->out, 500, "the request body is not JSON");
	else if (!cJSON_IsObject(j) ||
	         (offs != NULL && !cJSON_IsNull(offs) && !cJSON_IsArray(offs)))
		rc = reply_error(c->out, 400, offsets_doc_shape);
	else if (offs == NULL || cJSON_IsNull(offs) || cJSON_GetArraySize(offs) == 0)
		rc = reply_error(c->out, 400, no_offsets);
	else if ((rc = offsets_doc_entries(c->req->body, c->req->len, j, e, n, why, sizeof(why))) ==
	         0)
		return 0;
	else if (rc == OFFSETS_DOC_ERR_NOMEM)
		return REST_ERR_NOMEM;
	else
		rc =
		    reply_error(c->out, 400, rc == OFFSETS_DOC_ERR_VALUE ? why : offsets_doc_shape);
	return rc == REST_ERR_NOMEM ? REST_ERR_NOMEM : 1;
}

/* PATCH (a KIP-875 body) or DELETE (body ignored). */
static int alter_offsets(const struct ctx *c, size_t i, bool reset)
{
	char why[512] = "";
	cJSON *body = NULL;
	struct offsets_doc_entry *e = NULL;
	size_t n = 0;
	int rc = 0;

	if (!reset) {
		body = cJSON_ParseWithLength(c->req->body, c->req->len);
		rc = patch_entries(c, body, &e, &n);
		if (rc != 0) {
			cJSON_Delete(body);
			return rc > 0 ? 0 : reply_error(c->out, 500, "out of memory");
		}
	}
	rc = c->ops->alter_offsets(c->pctx, i, e, n, why, sizeof(why));
	free(e);
	cJSON_Delete(body);
	if (rc == REST_ERR_STATE || rc == REST_ERR_ARG)
		return reply_error(c->out, 400, why);
	if (rc != 0)
		return reply_error(c->out, 500, why[0] ? why : "failed");
	return reply_message(c->out, reset ? "The offsets for this connector have been reset "
	                                     "successfully"
	                                   : "The offsets for this connector have been altered "
	                                     "successfully");
}

/* ---- topics (Connect's active topics) -------------------------------------- */

static void add_topic(void *arg, const char *topic)
{
	cJSON *arr = arg, *s = cJSON_CreateString(topic);
	int at = 0;

	if (s == NULL)
		return;
	/* Sorted: Connect's set has no order a script could rely on. */
	for (cJSON *e = arr->child; e != NULL && strcmp(e->valuestring, topic) < 0; e = e->next)
		at++;
	cJSON_InsertItemInArray(arr, at, s);
}

/* {"name":{"topics":[...]}}; i < 0: a connector unknown (Connect answers
 * it too, with no topic). */
static int topics(const struct ctx *c, long i)
{
	cJSON *j = cJSON_CreateObject(), *t = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	bool ok = add(t, "topics", arr);

	if (ok && i >= 0 && c->ops->topics != NULL)
		c->ops->topics(c->pctx, (size_t)i, add_topic, arr);
	if (!add(ok ? j : NULL, c->name, ok ? t : NULL)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return reply_json(c->out, 200, j);
}

/* ---- admin/loggers ------------------------------------------------------------ */

static cJSON *logger_json(const struct ctx *c)
{
	const char *level = "INFO";
	int64_t modified = 0;
	cJSON *j = cJSON_CreateObject();

	c->ops->logger(c->pctx, &level, &modified);
	if (j == NULL || cJSON_AddStringToObject(j, "level", level) == NULL ||
	    (modified ? cJSON_AddNumberToObject(j, "last_modified", (double)modified)
	              : cJSON_AddNullToObject(j, "last_modified")) == NULL) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* skiff has one logger, Connect's root. */
static int loggers(const struct ctx *c)
{
	cJSON *j = cJSON_CreateObject(), *arr, *level;
	const cJSON *body;
	char msg[600];

	if (c->route->id == R_LOGGERS) {
		if (!add(j, "root", logger_json(c))) {
			cJSON_Delete(j);
			j = NULL;
		}
		return reply_json(c->out, 200, j);
	}
	cJSON_Delete(j);
	if (strcmp(c->name, "root") != 0) {
		snprintf(msg, sizeof(msg), "Logger %s not found.", c->name);
		return reply_error(c->out, 404, msg);
	}
	if (c->method == M_GET)
		return reply_json(c->out, 200, logger_json(c));
	body = cJSON_ParseWithLength(c->req->body, c->req->len);
	level = cJSON_GetObjectItemCaseSensitive(body, "level");
	if (!cJSON_IsString(level)) {
		cJSON_Delete((cJSON *)body);
		return reply_error(c->out, 400,
		                   "Desired 'level' parameter was not specified in "
		                   "request.");
	}
	if (c->ops->set_logger(c->pctx, level->valuestring) != 0) {
		snprintf(msg, sizeof(msg), "invalid log level '%.200s'.", level->valuestring);
		cJSON_Delete((cJSON *)body);
		return reply_error(c->out, 404, msg);
	}
	cJSON_Delete((cJSON *)body);
	arr = cJSON_CreateArray();
	if (!add(arr, NULL, cJSON_CreateString("root"))) {
		cJSON_Delete(arr);
		arr = NULL;
	}
	return reply_json(c->out, 200, arr);
}

/* ---- connector-plugins -------------------------------------------------------- */

static cJSON *string_config(const struct ctx *c, const cJSON *in, bool keep_null);

static int plugins(const struct ctx *c)
{
	if (c->route->id == R_PLUGINS)
		return reply_json(c->out, 200, c->ops->plugins(c->pctx, c->req->connectors_only));
	if (c->route->id == R_PLUGIN_CONFIG) {
		cJSON *j = NULL;
		char msg[600];
		int rc = c->ops->plugin_config(c->pctx, c->name, &j);

		if (rc == REST_ERR_NOTFOUND) {
			snprintf(msg, sizeof(msg), "Unknown plugin %s.", c->name);
			return reply_error(c->out, 404, msg);
		}
		return rc != 0 ? reply_error(c->out, 500, "out of memory")
		               : reply_json(c->out, 200, j);
	}
	{
		cJSON *body = cJSON_ParseWithLength(c->req->body, c->req->len), *j = NULL;
		char why[1024] = "";
		int rc;

		if (!cJSON_IsObject(body)) {
			cJSON_Delete(body);
			return reply_error(c->out, 500,
			                   "the request body is not a JSON object of "
			                   "configuration keys and values");
		}
		rc = c->ops->validate(c->pctx, c->name, body, &j, why, sizeof(why));
		cJSON_Delete(body);
		/* Connect: an unknown plugin is its lookup's 500, another
		 * connector.class in the body a 400. */
		if (rc == REST_ERR_NOTFOUND || rc == REST_ERR_ARG)
			return reply_error(c->out, rc == REST_ERR_ARG ? 400 : 500, why);
		return rc != 0 ? reply_error(c->out, 500, "out of memory")
		               : reply_json(c->out, 200, j);
	}
}

/* ---- creating, changing and deleting connectors --------------------------- */

/* Connect's "Connector config {name=x, a=b} contains no connector type",
 * secrets masked. */
static int no_class(const struct ctx *c, const char *name, const cJSON *config)
{
	char msg[2048];
	size_t used;

	used = (size_t)snprintf(msg, sizeof(msg), "Connector config {name=%s", name);
	for (const cJSON *e = config->child; e != NULL && used < sizeof(msg); e = e->next) {
		if (strcmp(e->string, "name") == 0)
			continue;
		used += (size_t)snprintf(msg + used, sizeof(msg) - used, ", %s=%s", e->string,
		                         config_display(e->string, e->valuestring, 0));
	}
	if (used < sizeof(msg))
		snprintf(msg + used, sizeof(msg) - used, "} contains no connector type");
	return reply_error(c->out, 400, msg);
}

/* A configuration object with every value a string (numbers and booleans
 * as Jackson turns them into strings; null kept only for a PATCH, where
 * it removes). Returns a new object, or NULL with a reply made. */
static cJSON *string_config(const struct ctx *c, const cJSON *in, bool keep_null)
{
	cJSON *out = cJSON_CreateObject();

	if (!cJSON_IsObject(in)) {
		cJSON_Delete(out);
		reply_error(c->out, 500, "the configuration is not a JSON object of strings");
		return NULL;
	}
	for (const cJSON *e = in->child; e != NULL && out != NULL; e = e->next) {
		cJSON *v = NULL;
		char *num;

		if (cJSON_IsString(e))
			v = cJSON_CreateString(e->valuestring);
		else if (cJSON_IsBool(e))
			v = cJSON_CreateString(cJSON_IsTrue(e) ? "true" : "false");
		else if (cJSON_IsNumber(e) && (num = cJSON_PrintUnformatted(e)) != NULL) {
			v = cJSON_CreateString(num);
			free(num);
		} else if (cJSON_IsNull(e) && keep_null)
			v = cJSON_CreateNull();
		else if (cJSON_IsNull(e))
			continue;
		else {
			cJSON_Delete(out);
			reply_error(c->out, 500, "a configuration value is not a string");
			return NULL;
		}
		if (!add(out, e->string, v)) {
			cJSON_Delete(out);
			out = NULL;
		}
	}
	if (out == NULL)
		reply_error(c->out, 500, "out of memory");
	return out;
}

static int name_mismatch(const struct ctx *c, const char *in_config, const char *name)
{
	char msg[1200];

	snprintf(msg, sizeof(msg),
	         "Connector name configuration (%.500s) doesn't match connector name in the URL "
	         "(%.500s)",
	         in_config, name);
	return reply_error(c->out, 400, msg);
}

/* Connect's checkAndPutConnectorConfigName: the name goes first into the
 * configuration (a different one there is refused). Returns 0 or a reply
 * made (1). */
static int put_name(const struct ctx *c, cJSON *config, const char *name)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(config, "name");
	cJSON *s;

	if (n != NULL && (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)) {
		name_mismatch(c, cJSON_IsString(n) ? n->valuestring : "null", name);
		return 1;
	}
	if (n != NULL)
		return 0;
	if ((s = cJSON_CreateString(name)) == NULL || !cJSON_InsertItemInArray(config, 0, s) ||
	    (s->string = strdup("name")) == NULL) {
		reply_error(c->out, 500, "out of memory");
		return 1;
	}
	return 0;
}

/* A connector name Connect takes (NonEmptyStringWithoutControlChars), and
 * skiff can serve at /connectors/{name} and store: no '/'. */
static int bad_name(const struct ctx *c, const char *name)
{
	char msg[800];

	if (name[0] == '\0') {
		reply_error(c->out, 400,
		            "Connector configuration is invalid and contains the following 1 "
		            "error(s):\nInvalid value  for configuration name: String may not be "
		            "empty\nYou can also find the above list of errors at the endpoint "
		            "`/connector-plugins/{connectorType}/config/validate`");
		return 1;
	}
	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '/') {
			snprintf(
			    msg, sizeof(msg),
			    "Connector configuration is invalid and contains the following 1 "
			    "error(s):\nInvalid value %.300s for configuration name: %s\nYou can "
			    "also find the above list of errors at the endpoint "
			    "`/connector-plugins/{connectorType}/config/validate`",
			    name,
			    *p == '/' ? "a name with '/' cannot be served at /connectors/{name}"
			              : "String may not contain control characters");
			reply_error(c->out, 400, msg);
			return 1;
		}
	}
	return 0;
}

static long find(const struct ctx *c, const char *name)
{
	size_t n = c->ops->count(c->pctx);

	for (size_t i = 0; i < n; i++) {
		struct rest_connector rc;

		c->ops->connector(c->pctx, i, &rc);
		if (strcmp(rc.name, name) == 0)
			return (long)i;
	}
	return -1;
}

/* Hands ch to the worker; the reply comes through rest_changed. */
static int start_change(const struct ctx *c, const struct rest_change *ch)
{
	char why[1024] = "";
	int rc;

	if (c->ops->change == NULL)
		return reply_jersey(c->out, 405);
	rc = c->ops->change(c->pctx, ch, c->req->waiter, why, sizeof(why));
	if (rc == REST_PENDING)
		return REST_PENDING;
	return rest_change_reply(c->ops, c->pctx, ch->op, ch->name, false, rc, why,
	                         c->req->worker_id, c->out);
}

/* POST /connectors: {"name":..,"config":{..},"initial_state":..}. */
static int create(const struct ctx *c)
{
	cJSON *body = cJSON_ParseWithLength(c->req->body, c->req->len), *config = NULL;
	const cJSON *n, *st;
	char name[512];
	struct rest_change ch = {.op = REST_CREATE};
	int rc = 0;

	if (!cJSON_IsObject(body)) {
		rc = reply_error(c->out, 500, "the request body is not a JSON object");
		goto out;
	}
	n = cJSON_GetObjectItemCaseSensitive(body, "name");
	snprintf(name, sizeof(name), "%s", cJSON_IsString(n) ? n->valuestring : "");
	/* Connect trims the name. */
	{
		size_t lead = strspn(name, " \t\r\n"), len = strlen(name);

		while (len > lead && strchr(" \t\r\n", name[len - 1]) != NULL)
			len--;
		memmove(name, name + lead, len - lead);
		name[len - lead] = '\0';
	}
	if (bad_name(c, name))
		goto out;
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "config"))) {
		rc = reply_error(c->out, 400, "the request has no \"config\" object");
		goto out;
	}
	config = string_config(c, cJSON_GetObjectItemCaseSensitive(body, "config"), false);
	if (config == NULL || put_name(c, config, name))
		goto out;
	st = cJSON_GetObjectItemCaseSensitive(body, "initial_state");
	if (st != NULL && !cJSON_IsNull(st)) {
		if (!cJSON_IsString(st) || (strcmp(st->valuestring, "RUNNING") != 0 &&
		                            strcmp(st->valuestring, "PAUSED") != 0 &&
		                            strcmp(st->valuestring, "STOPPED") != 0)) {
			rc =
			    reply_error(c->out, 400, "initial_state is RUNNING, PAUSED or STOPPED");
			goto out;
		}
		ch.initial_state = st->valuestring;
	}
	if (cJSON_GetObjectItemCaseSensitive(config, "connector.class") == NULL) {
		rc = no_class(c, name, config);
		goto out;
	}
	if (find(c, name) >= 0) {
		char msg[600];

		snprintf(msg, sizeof(msg), "Connector %s already exists", name);
		rc = reply_error(c->out, 409, msg);
		goto out;
	}
	ch.name = name;
	ch.config = config;
	rc = start_change(c, &ch);
out:
	cJSON_Delete(config);
	cJSON_Delete(body);
	return rc;
}

/* PUT (replace or create) and PATCH (merge) /connectors/{name}/config. */
static int put_config(const struct ctx *c, long i)
{
	cJSON *body = cJSON_ParseWithLength(c->req->body, c->req->len), *config;
	struct rest_change ch = {.op = c->method == M_PUT ? REST_PUT : REST_PATCH, .name = c->name};
	const cJSON *n;
	int rc = 0;

	if (ch.op == REST_PATCH && i < 0) {
		char msg[600];

		cJSON_Delete(body);
		snprintf(msg, sizeof(msg), "Connector %s not found", c->name);
		return reply_error(c->out, 404, msg);
	}
	config = string_config(c, body, ch.op == REST_PATCH);
	cJSON_Delete(body);
	if (config == NULL)
		return 0;
	n = cJSON_GetObjectItemCaseSensitive(config, "name");
	if (ch.op == REST_PATCH && n != NULL &&
	    (!cJSON_IsString(n) || strcmp(n->valuestring, c->name) != 0))
		rc = name_mismatch(c, cJSON_IsString(n) ? n->valuestring : "null", c->name);
	else if (ch.op == REST_PUT && (bad_name(c, c->name) || put_name(c, config, c->name)))
		rc = 0; /* replied */
	else if (ch.op == REST_PUT &&
	         cJSON_GetObjectItemCaseSensitive(config, "connector.class") == NULL)
		rc = no_class(c, c->name, config);
	else {
		ch.config = config;
		rc = start_change(c, &ch);
	}
	cJSON_Delete(config);
	return rc;
}

/* ---- the connector routes ------------------------------------------------- */

/* Connect's 404 message for an unknown connector, by route. */
static int unknown_connector(const struct ctx *c)
{
	char msg[640];

	switch (c->route->id) {
	case R_STATUS:
		snprintf(msg, sizeof(msg), "No status found for connector %s", c->name);
		break;
	case R_PAUSE:
	case R_RESUME:
	case R_STOP:
		snprintf(msg, sizeof(msg), "Unknown connector %s", c->name);
		break;
	case R_RESTART:
	case R_TASK_RESTART:
		snprintf(msg, sizeof(msg), "Unknown connector: %s", c->name);
		break;
	case R_TASK_STATUS: {
		long id;

		if (!task_number(c->arg[1], c->arglen[1], &id))
			return reply_error(c->out, 404, "HTTP 404 Not Found");
		snprintf(msg, sizeof(msg), "No status found for task %s-%ld", c->name, id);
		break;
	}
	default:
		snprintf(msg, sizeof(msg), "Connector %s not found", c->name);
	}
	return reply_error(c->out, 404, msg);
}

static int connector_route(struct ctx *c)
{
	long i = find(c, c->name);
	unsigned m = c->method;
	struct rest_change del = {.op = REST_DELETE, .name = c->name};

	if (c->route->id == R_TOPICS)
		return topics(c, i);
	if (c->route->id == R_CONFIG && m != M_GET)
		return put_config(c, i);
	if (c->route->id == R_TOPICS_RESET) {
		if (i >= 0 && c->ops->reset_topics != NULL)
			c->ops->reset_topics(c->pctx, (size_t)i);
		reply_text(c->out, 202, NULL, NULL);
		return 0;
	}
	if (i < 0)
		return unknown_connector(c);
	switch (c->route->id) {
	case R_CONNECTOR:
		return m == M_GET ? reply_json(c->out, 200, info_json(c, (size_t)i))
		                  : start_change(c, &del);
	case R_CONFIG:
		return reply_json(c->out, 200, config_json(c, (size_t)i));
	case R_STATUS:
		return reply_json(c->out, 200, status_json(c, (size_t)i));
	case R_TASKS:
		return reply_json(c->out, 200, tasks_json(c, (size_t)i));
	case R_TASKS_CONFIG:
		return reply_json(c->out, 200, tasks_config_json(c, (size_t)i));
	case R_PAUSE:
		return control(c, (size_t)i, REST_PAUSE);
	case R_RESUME:
		return control(c, (size_t)i, REST_RESUME);
	case R_STOP:
		return control(c, (size_t)i, REST_STOP);
	case R_RESTART:
		return restart(c, (size_t)i);
	case R_TASK_STATUS:
	case R_TASK_RESTART:
		return task_route(c, (size_t)i);
	case R_OFFSETS:
		return m == M_GET ? get_offsets(c, (size_t)i)
		                  : alter_offsets(c, (size_t)i, m == M_DELETE);
	default:
		return reply_jersey(c->out, 404);
	}
}

/* ---- the policy ------------------------------------------------------------- */

/* A CORS preflight from a listed origin: Jetty's CrossOriginFilter's
 * answer. */
static int preflight(struct ctx *c)
{
	const struct rest_policy *p = c->req->policy;

	if (!restguard_method_listed(p, c->req->acr_method))
		return reply_error(c->out, 403,
		                   "the method asked for is not in "
		                   "access.control.allow.methods");
	reply_text(c->out, 200, NULL, NULL);
	add_header(c->out, "Access-Control-Allow-Origin", c->req->origin);
	add_header(c->out, "Access-Control-Allow-Methods",
	           p->allow_methods != NULL && p->allow_methods[0] ? p->allow_methods
	                                                           : "GET,POST,HEAD");
	add_header(c->out, "Access-Control-Allow-Headers",
	           "X-Requested-With,Content-Type,Accept,Origin");
	add_header(c->out, "Access-Control-Max-Age", "1800");
	add_header(c->out, "Vary", "Origin");
	return 0;
}

/* The browser checks (restguard.h): 0 to go on, or 1 with a reply made. */
static int browsers(struct ctx *c)
{
	const struct rest_request *r = c->req;
	char msg[700];

	if (!restguard_host_ok(r->policy, r->host)) {
		snprintf(msg, sizeof(msg),
		         "Host '%.200s' is not this listener's: give its IP address, localhost, "
		         "this machine's name or rest.advertised.host.name (a foreign name is how "
		         "a web page reaches a device through DNS rebinding)",
		         r->host);
		reply_error(c->out, 421, msg);
		return 1;
	}
	if (r->policy != NULL && r->origin != NULL && strcmp(r->method, "OPTIONS") == 0 &&
	    r->acr_method != NULL && restguard_origin_listed(r->policy, r->origin)) {
		preflight(c);
		return 1;
	}
	if (!restguard_origin_ok(r->policy, r->origin, r->host)) {
		snprintf(msg, sizeof(msg),
		         "Origin '%.200s' may not use this API: a web page of another site (list "
		         "it in access.control.allow.origin to let it)",
		         r->origin);
		reply_error(c->out, 403, msg);
		return 1;
	}
	return 0;
}

/* A request that would create, change or delete a connector. */
static bool changes(const struct ctx *c)
{
	return (c->route->id == R_CONNECTORS && c->method == M_POST) ||
	       (c->route->id == R_CONNECTOR && c->method == M_DELETE) ||
	       (c->route->id == R_CONFIG && c->method != M_GET);
}

static int dispatch(struct ctx *c)
{
	if (changes(c) && c->ops->change == NULL)
		return reply_jersey(c->out, 405);
	switch (c->route->id) {
	case R_ROOT:
		return root(c);
	case R_HEALTH:
		return health(c);
	case R_METRICS:
		return metrics(c);
	case R_CONNECTORS:
		return c->method == M_GET ? list_connectors(c) : create(c);
	case R_PLUGINS:
	case R_PLUGIN_CONFIG:
	case R_VALIDATE:
		if (c->ops->plugins == NULL)
			return reply_jersey(c->out, 404);
		return plugins(c);
	case R_LOGGERS:
	case R_LOGGER:
		if (c->ops->logger == NULL)
			return reply_jersey(c->out, 404);
		return loggers(c);
	default:
		return connector_route(c);
	}
}

/* A reply is UTF-8, whatever bytes a file name or a trace brought: each
 * malformed sequence is U+FFFD, as Connect's Java strings would show it. */
static void valid_text(struct rest_reply *out)
{
	char *fixed;
	size_t len;

	if (out->body == NULL || utf8_valid(out->body, out->len))
		return;
	if ((fixed = text_utf8_replace(out->body, out->len, &len)) == NULL) {
		reply_error(out, 500, "out of memory");
		return;
	}
	free(out->body);
	out->body = fixed;
	out->len = len;
}

int rest_route(const struct rest_ops *ops, void *pctx, const struct rest_request *req,
               struct rest_reply *out)
{
	struct ctx c = {.ops = ops, .pctx = pctx, .req = req, .out = out};
	bool options_req = strcmp(req->method, "OPTIONS") == 0;
	int rc = 0;

	*out = (struct rest_reply){0};
	if (browsers(&c))
		goto done;
	c.method = method_bit(req->method);
	c.route = find_route(&c);
	if (c.route == NULL) {
		rc = reply_jersey(out, 404);
		goto done;
	}
	if (c.arg[0] != NULL)
		snprintf(c.name, sizeof(c.name), "%.*s",
		         (int)(c.arglen[0] < sizeof(c.name) ? c.arglen[0] : sizeof(c.name) - 1),
		         c.arg[0]);
	if (!options_req && !(c.route->methods & c.method)) {
		rc = reply_jersey(out, 405);
		goto done;
	}
	/* Jersey's resources consume application/json only. */
	if ((req->content_type != NULL || req->has_body) && !restguard_json(req->content_type)) {
		rc = reply_jersey(out, 415);
		goto done;
	}
	if (req->policy != NULL && !restauth_check(req->policy->auth, req->authorization)) {
		char *body = strdup(restauth_refusal);

		if (body == NULL) {
			rc = reply_error(out, 500, "out of memory");
			goto done;
		}
		/* Jersey's content type: its OPTIONS resource produces text. */
		reply_text(out, 401, options_req ? "text/plain" : json_type, body);
		goto done;
	}
	rc = options_req ? options(&c) : dispatch(&c);
	if (rc == REST_PENDING)
		return rc;
done:
	valid_text(out);
	if (req->policy != NULL && req->origin != NULL &&
	    restguard_origin_listed(req->policy, req->origin) && out->nheaders == 0) {
		add_header(out, "Access-Control-Allow-Origin", req->origin);
		add_header(out, "Vary", "Origin");
	}
	return out->status == 500 && out->body == NULL ? REST_ERR_NOMEM : rc;
}

int rest_change_reply(const struct rest_ops *ops, void *ctx, enum rest_change_op op,
                      const char *name, bool created, int rc, const char *why,
                      const char *worker_id, struct rest_reply *out)
{
	size_t n;

	*out = (struct rest_reply){0};
	(void)worker_id;
	if (rc != 0) {
		unsigned status = rc == REST_ERR_ARG        ? 400
		                  : rc == REST_ERR_NOTFOUND ? 404
		                  : rc == REST_ERR_STATE    ? 409
		                                            : 500;

		return reply_error(out, status, why != NULL && why[0] ? why : rest_strerror(rc));
	}
	if (op == REST_DELETE) {
		reply_text(out, 204, NULL, NULL);
		return 0;
	}
	n = ops->count(ctx);
	for (size_t i = 0; i < n; i++) {
		struct rest_connector rc2;
		int r;

		ops->connector(ctx, i, &rc2);
		if (strcmp(rc2.name, name) != 0)
			continue;
		r = reply_json(out, op == REST_CREATE || created ? 201 : 200, info_of(ops, ctx, i));
		valid_text(out);
		return r;
	}
	return reply_error(out, 500, "the connector is gone");
}

void rest_reply_free(struct rest_reply *r)
{
	free(r->body);
	free(r->owned);
	r->body = NULL;
	r->owned = NULL;
	r->len = 0;
	r->nheaders = 0;
}

const char *rest_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case REST_ERR:
		return "failed";
	case REST_ERR_NOMEM:
		return "out of memory";
	case REST_ERR_CONFIG:
		return "configuration error";
	case REST_ERR_STATE:
		return "not in that state";
	case REST_ERR_ARG:
		return "refused";
	case REST_ERR_SOURCE:
		return "the source refuses it";
	case REST_ERR_NOTFOUND:
		return "not found";
	default:
		return "unknown REST error";
	}
}
