/* rest_api: one request to one reply, Connect's paths and shapes (rest.h).
 * No sockets here: rest.c hands requests in, the fuzzer too. */
#include "rest.h"

#include "jsonspan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SKIFF_COMMIT
#define SKIFF_COMMIT "unknown"
#endif

static const char *const json_type = "application/json";

/* The request being routed, with what routing found out. */
struct ctx {
	const struct rest_ops *ops;
	void *pctx;
	const struct rest_request *req;
	struct rest_reply *out;
};

static void reply_text(struct rest_reply *out, unsigned status, const char *type, char *body)
{
	rest_reply_free(out);
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

/* Connect's error shape: {"error_code":404,"message":"..."}. */
static int reply_error(struct rest_reply *out, unsigned status, const char *message)
{
	cJSON *j = cJSON_CreateObject();

	if (j != NULL && (cJSON_AddNumberToObject(j, "error_code", status) == NULL ||
	                  cJSON_AddStringToObject(j, "message", message) == NULL)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return reply_json(out, status, j);
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
static cJSON *state_json(const struct ctx *c, const struct rest_connector *rc, bool task)
{
	cJSON *j = cJSON_CreateObject();
	bool ok = j != NULL;

	if (ok && task)
		ok = cJSON_AddNumberToObject(j, "id", 0) != NULL;
	ok = ok && cJSON_AddStringToObject(j, "state", rc->state) != NULL &&
	     cJSON_AddStringToObject(j, "worker_id", c->req->worker_id) != NULL;
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
	return connector_doc(&rc, "connector", state_json(c, &rc, false),
	                     stopped(&rc) ? NULL : state_json(c, &rc, true));
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

static cJSON *info_json(const struct ctx *c, size_t i)
{
	struct rest_connector rc;

	c->ops->connector(c->pctx, i, &rc);
	return connector_doc(&rc, "config", config_json(c, i),
	                     stopped(&rc) ? NULL : task_id(rc.name));
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
	    !add(t, "config", config_json(c, i)) ||
	    cJSON_AddStringToObject(cJSON_GetObjectItem(t, "config"), "task.class",
	                            rc.task_class) == NULL) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* ---- routes --------------------------------------------------------------- */

static int list_connectors(const struct ctx *c)
{
	unsigned ex = c->req->expand;
	size_t n = c->ops->count(c->pctx);
	cJSON *j = ex ? cJSON_CreateObject() : cJSON_CreateArray();

	for (size_t i = 0; i < n && j != NULL; i++) {
		struct rest_connector rc;
		cJSON *e;
		bool ok = true;

		c->ops->connector(c->pctx, i, &rc);
		if (!ex) {
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
	char *text = c->ops->metrics(c->pctx);

	if (text == NULL)
		return reply_error(c->out, 500, "out of memory");
	reply_text(c->out, 200, "text/plain; version=0.0.4; charset=utf-8", text);
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
	reply_text(c->out, a == REST_STOP || a == REST_RESTART ? 204 : 202, json_type, NULL);
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
	return reply_json(c->out, 202,
	                  connector_doc(&rc, "connector", state_json(c, &rc, false),
	                                stopped(&rc) ? NULL : state_json(c, &rc, true)));
}

/* /connectors/{name}/tasks/{id}/{status|restart}: the one task is 0, and a
 * stopped connector has none (Connect's 404s). */
static int task_route(const struct ctx *c, size_t i, const char *rest)
{
	struct rest_connector rc;
	const char *m = c->req->method;
	char msg[320];

	c->ops->connector(c->pctx, i, &rc);
	if (strncmp(rest, "0/", 2) != 0 || stopped(&rc)) {
		size_t n = strcspn(rest, "/");

		snprintf(msg, sizeof(msg), "No status found for task %s-%.*s", rc.name,
		         (int)(n > 20 ? 20 : n), rest);
		return reply_error(c->out, 404, msg);
	}
	if (strcmp(rest + 2, "status") == 0)
		return strcmp(m, "GET") == 0
		           ? reply_json(c->out, 200, state_json(c, &rc, true))
		           : reply_error(c->out, 405, "HTTP 405 Method Not Allowed");
	if (strcmp(rest + 2, "restart") == 0)
		return strcmp(m, "POST") == 0
		           ? control(c, i, REST_RESTART)
		           : reply_error(c->out, 405, "HTTP 405 Method Not Allowed");
	return reply_error(c->out, 404, "HTTP 404 Not Found");
}

static int get_offsets(const struct ctx *c, size_t i)
{
	char *json = NULL;

	if (c->ops->offsets(c->pctx, i, &json) != 0)
		return reply_error(c->out, 500, "out of memory");
	reply_text(c->out, 200, json_type, json);
	return 0;
}

/* The entries of a PATCH body (offsets_doc_entries). Returns 0, or -1
 * (not that shape: 400) or REST_ERR_NOMEM. */
static int patch_entries(const char *text, size_t len, const cJSON *j,
                         struct offsets_doc_entry **out, size_t *n)
{
	int rc = offsets_doc_entries(text, len, j, out, n);

	return rc == OFFSETS_DOC_ERR_NOMEM ? REST_ERR_NOMEM : rc != 0 ? -1 : 0;
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
		rc = body != NULL ? patch_entries(c->req->body, c->req->len, body, &e, &n) : -1;
		if (rc != 0) {
			cJSON_Delete(body);
			return rc == REST_ERR_NOMEM ? reply_error(c->out, 500, "out of memory")
			                            : reply_error(c->out, 400, offsets_doc_shape);
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

static bool is(const char *method, const char *want)
{
	return strcmp(method, want) == 0;
}

/* /connectors/{name}[/{sub}]: rest is what follows "/connectors/". */
static int connector_route(const struct ctx *c, const char *rest)
{
	const char *slash = strchr(rest, '/'), *sub = slash ? slash + 1 : "";
	size_t nlen = slash ? (size_t)(slash - rest) : strlen(rest);
	size_t n = c->ops->count(c->pctx), i;
	const char *m = c->req->method;
	char msg[320];

	for (i = 0; i < n; i++) {
		struct rest_connector rc;

		c->ops->connector(c->pctx, i, &rc);
		if (strlen(rc.name) == nlen && memcmp(rc.name, rest, nlen) == 0)
			break;
	}
	if (i == n) {
		snprintf(msg, sizeof(msg), "Connector %.*s not found",
		         (int)(nlen > 200 ? 200 : nlen), rest);
		return reply_error(c->out, 404, msg);
	}
	if (*sub == '\0' && is(m, "GET"))
		return reply_json(c->out, 200, info_json(c, i));
	if (strcmp(sub, "config") == 0 && is(m, "GET"))
		return reply_json(c->out, 200, config_json(c, i));
	if (strcmp(sub, "status") == 0 && is(m, "GET"))
		return reply_json(c->out, 200, status_json(c, i));
	if (strcmp(sub, "tasks") == 0 && is(m, "GET"))
		return reply_json(c->out, 200, tasks_json(c, i));
	if (strcmp(sub, "pause") == 0 && is(m, "PUT"))
		return control(c, i, REST_PAUSE);
	if (strcmp(sub, "resume") == 0 && is(m, "PUT"))
		return control(c, i, REST_RESUME);
	if (strcmp(sub, "stop") == 0 && is(m, "PUT"))
		return control(c, i, REST_STOP);
	if (strcmp(sub, "offsets") == 0 && is(m, "GET"))
		return get_offsets(c, i);
	if (strcmp(sub, "offsets") == 0 && (is(m, "PATCH") || is(m, "DELETE")))
		return alter_offsets(c, i, is(m, "DELETE"));
	if (strcmp(sub, "restart") == 0 && is(m, "POST"))
		return restart(c, i);
	if (strncmp(sub, "tasks/", 6) == 0)
		return task_route(c, i, sub + 6);
	if (*sub == '\0' || strcmp(sub, "config") == 0 || strcmp(sub, "status") == 0 ||
	    strcmp(sub, "tasks") == 0 || strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0 ||
	    strcmp(sub, "stop") == 0 || strcmp(sub, "offsets") == 0 || strcmp(sub, "restart") == 0)
		return reply_error(c->out, 405, "HTTP 405 Method Not Allowed");
	return reply_error(c->out, 404, "HTTP 404 Not Found");
}

int rest_route(const struct rest_ops *ops, void *pctx, const struct rest_request *req,
               struct rest_reply *out)
{
	struct ctx c = {ops, pctx, req, out};
	const char *p = req->path;
	size_t len = strlen(p);
	bool get = is(req->method, "GET");
	int rc;

	*out = (struct rest_reply){0};
	if (strcmp(p, "/") == 0 || strcmp(p, "") == 0)
		rc = get ? root(&c) : reply_error(out, 405, "HTTP 405 Method Not Allowed");
	else if (strcmp(p, "/health") == 0)
		rc = get ? health(&c) : reply_error(out, 405, "HTTP 405 Method Not Allowed");
	else if (strcmp(p, "/metrics") == 0)
		rc = get ? metrics(&c) : reply_error(out, 405, "HTTP 405 Method Not Allowed");
	else if (strcmp(p, "/connectors") == 0 || strcmp(p, "/connectors/") == 0)
		rc = get ? list_connectors(&c)
		         : reply_error(out, 405, "HTTP 405 Method Not Allowed");
	else if (strncmp(p, "/connectors/", 12) == 0 && p[len - 1] != '/')
		rc = connector_route(&c, p + 12);
	else
		rc = reply_error(out, 404, "HTTP 404 Not Found");
	return out->status == 500 && out->body == NULL ? REST_ERR_NOMEM : rc;
}

void rest_reply_free(struct rest_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
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
	default:
		return "unknown REST error";
	}
}
