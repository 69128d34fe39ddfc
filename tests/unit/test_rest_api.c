/* Unit tests for rest_api.c, the socket-free core: Connect's paths, status
 * codes and bodies over a fake worker of two connectors (a running "a", a
 * stopped "b"), each answer as a real Connect 3.9.1 standalone gives it
 * (tests/e2e/test_rest.py compares the two servers end to end). */
#include "control/rest.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"a", "b"};
static const char *const states[] = {"RUNNING", "STOPPED"};
static int changes, altered;
static const char *level = "INFO";

static size_t f_count(void *ctx)
{
	return 2;
}

static void f_connector(void *ctx, size_t i, struct rest_connector *out)
{
	out->name = names[i];
	out->state = states[i];
	out->trace = NULL;
	snprintf(out->task_class, sizeof(out->task_class), "x.YTask");
}

static bool f_config_next(void *ctx, size_t i, size_t *cur, const char **k, const char **v)
{
	static const char *const keys[] = {"name", "connector.class", "topic"};
	static const char *const vals[] = {"", "FileStreamSource", "t"};

	if (*cur >= 3)
		return false;
	*k = keys[*cur];
	*v = *cur == 0 ? names[i] : vals[*cur];
	(*cur)++;
	return true;
}

static int f_control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	return 0;
}

static int f_offsets(void *ctx, size_t i, char **json)
{
	*json = strdup("{\"offsets\":[]}");
	return 0;
}

static int f_alter(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n, char *errbuf,
                   size_t errlen)
{
	if (n > 0 && e[0].olen > 2 && strstr(e[0].offset, "-5") != NULL) {
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset should be "
		         "a non-negative value");
		return REST_ERR_SOURCE;
	}
	altered++;
	return 0;
}

static int f_health(void *ctx, char *msg, size_t len)
{
	snprintf(msg, len, "fine");
	return 0;
}

static int rendered;

static char *f_metrics(void *ctx)
{
	rendered++;
	return strdup("x 1\n");
}

static char *f_cluster_id(void *ctx)
{
	return strdup("c1");
}

static void f_topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	fn(arg, "zeta");
	fn(arg, "alpha");
}

static void f_reset(void *ctx, size_t i)
{
}

static void f_logger(void *ctx, const char **lv, int64_t *modified)
{
	*lv = level;
	*modified = 0;
}

static int f_set_logger(void *ctx, const char *lv)
{
	if (strcmp(lv, "DEBUG") != 0)
		return REST_ERR_ARG;
	level = "DEBUG";
	return 0;
}

static cJSON *f_plugins(void *ctx, bool only)
{
	return cJSON_CreateArray();
}

static int f_plugin_config(void *ctx, const char *plugin, cJSON **out)
{
	if (strcmp(plugin, "FileStreamSource") != 0)
		return REST_ERR_NOTFOUND;
	*out = cJSON_CreateArray();
	return 0;
}

static int f_validate(void *ctx, const char *plugin, const cJSON *config, cJSON **out, char *errbuf,
                      size_t errlen)
{
	snprintf(errbuf, errlen, "Failed to find any class ... %s", plugin);
	return REST_ERR_NOTFOUND;
}

static int f_change(void *ctx, const struct rest_change *ch, void *waiter, char *errbuf,
                    size_t errlen)
{
	changes++;
	return REST_PENDING;
}

static const struct rest_ops ops = {
    .count = f_count,
    .connector = f_connector,
    .config_next = f_config_next,
    .control = f_control,
    .offsets = f_offsets,
    .alter_offsets = f_alter,
    .health = f_health,
    .metrics = f_metrics,
    .cluster_id = f_cluster_id,
    .topics = f_topics,
    .reset_topics = f_reset,
    .logger = f_logger,
    .set_logger = f_set_logger,
    .plugins = f_plugins,
    .plugin_config = f_plugin_config,
    .validate = f_validate,
    .change = f_change,
};

static struct rest_reply rep;

/* Routes one request; returns rest_route's code, the reply in rep. */
static int go(const char *method, const char *path, const char *body, const char *ctype)
{
	struct rest_request req = {.method = method,
	                           .path = path,
	                           .serve = REST_SERVE_API | REST_SERVE_ADMIN,
	                           .worker_id = "127.0.0.1:8083",
	                           .connectors_only = true,
	                           .body = body ? body : "",
	                           .len = body ? strlen(body) : 0,
	                           .has_body = body != NULL,
	                           .content_type = ctype};

	rest_reply_free(&rep);
	return rest_route(&ops, NULL, &req, &rep);
}

static const char *body(void)
{
	return rep.body ? rep.body : "";
}

#define EXPECT(m_, p_, st_, text_)                                                                 \
	do {                                                                                       \
		go(m_, p_, NULL, NULL);                                                            \
		CHECK_INT(rep.status, st_);                                                        \
		CHECK_STR(body(), text_);                                                          \
	} while (0)

static void test_paths(void)
{
	/* Jersey's: a trailing slash is the same path; a double one is not. */
	EXPECT("GET", "/connectors/", 200, "[\"a\",\"b\"]");
	EXPECT("GET", "/connectors/a/status/", 200,
	       "{\"name\":\"a\",\"connector\":{\"state\":\"RUNNING\",\"worker_id\":\"127.0.0.1:"
	       "8083\"},"
	       "\"tasks\":[{\"id\":0,\"state\":\"RUNNING\",\"worker_id\":\"127.0.0.1:8083\"}],"
	       "\"type\":\"source\"}");
	EXPECT("GET", "//connectors", 404,
	       "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
	CHECK(rep.content_type == NULL);
	EXPECT("GET", "/connectors/a/tasks/0", 404,
	       "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
	/* Connect's own 404 texts, route by route. */
	EXPECT("GET", "/connectors/nope", 404,
	       "{\"error_code\":404,\"message\":\"Connector nope not found\"}");
	EXPECT("GET", "/connectors/nope/status", 404,
	       "{\"error_code\":404,\"message\":\"No status found for connector nope\"}");
	EXPECT("GET", "/connectors/nope/tasks/0/status", 404,
	       "{\"error_code\":404,\"message\":\"No status found for task nope-0\"}");
	EXPECT("PUT", "/connectors/nope/pause", 404,
	       "{\"error_code\":404,\"message\":\"Unknown connector nope\"}");
	EXPECT("GET", "/connectors/nope/topics", 200, "{\"nope\":{\"topics\":[]}}");
	EXPECT("PUT", "/connectors/nope/topics/reset", 202, "");
	/* Task ids as Java's Integer.valueOf reads them. */
	EXPECT("GET", "/connectors/a/tasks/01/status", 404,
	       "{\"error_code\":404,\"message\":\"No status found for task a-1\"}");
	EXPECT("GET", "/connectors/a/tasks/-1/status", 404,
	       "{\"error_code\":404,\"message\":\"No status found for task a--1\"}");
	EXPECT("GET", "/connectors/a/tasks/+0/status", 200,
	       "{\"id\":0,\"state\":\"RUNNING\",\"worker_id\":\"127.0.0.1:8083\"}");
	EXPECT("GET", "/connectors/a/tasks/x/status", 404,
	       "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
	EXPECT("GET", "/connectors/a/tasks/99999999999/status", 404,
	       "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
	/* Methods. */
	EXPECT("POST", "/", 405,
	       "{\"error_code\":405,\"message\":\"HTTP 405 Method Not Allowed\"}");
	EXPECT("DELETE", "/connectors", 405,
	       "{\"error_code\":405,\"message\":\"HTTP 405 Method Not Allowed\"}");
	EXPECT("PUT", "/connectors/a/restart", 405,
	       "{\"error_code\":405,\"message\":\"HTTP 405 Method Not Allowed\"}");
	/* HEAD is GET without a body (the server sends none); OPTIONS lists. */
	EXPECT("HEAD", "/connectors", 200, "[\"a\",\"b\"]");
	EXPECT("OPTIONS", "/connectors", 200, "HEAD, POST, GET, OPTIONS");
	CHECK_STR(rep.content_type, "text/plain");
	CHECK_INT(rep.nheaders, 1);
	CHECK_STR(rep.headers[0].name, "Allow");
	CHECK_STR(rep.headers[0].value, "HEAD,POST,GET,OPTIONS");
	EXPECT("OPTIONS", "/connectors/a", 200, "HEAD, DELETE, GET, OPTIONS");
	EXPECT("OPTIONS", "/nope", 404, "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
}

static void test_shapes(void)
{
	{
		struct rest_request req = {.method = "GET",
		                           .path = "/connectors",
		                           .serve = REST_SERVE_API,
		                           .worker_id = "w",
		                           .expand_any = true,
		                           .body = ""};

		rest_reply_free(&rep);
		rest_route(&ops, NULL, &req, &rep);
		CHECK_STR(body(), "{\"a\":{},\"b\":{}}"); /* ?expand=bogus */
	}
	EXPECT("GET", "/connectors/a/tasks-config", 200,
	       "{\"a-0\":{\"name\":\"a\",\"connector.class\":\"FileStreamSource\",\"topic\":\"t\","
	       "\"task.class\":\"x.YTask\"}}");
	EXPECT("GET", "/connectors/b/tasks-config", 200, "{}");
	EXPECT("GET", "/connectors/b/tasks", 200, "[]");
	EXPECT("GET", "/connectors/a/topics", 200, "{\"a\":{\"topics\":[\"alpha\",\"zeta\"]}}");
	EXPECT("GET", "/admin/loggers", 200,
	       "{\"root\":{\"level\":\"INFO\",\"last_modified\":null}}");
	EXPECT("GET", "/admin/loggers/org.apache", 404,
	       "{\"error_code\":404,\"message\":\"Logger org.apache not found.\"}");
	go("PUT", "/admin/loggers/root", "{\"level\":\"bogus\"}", "application/json");
	CHECK_INT(rep.status, 404);
	CHECK_STR(body(), "{\"error_code\":404,\"message\":\"invalid log level 'bogus'.\"}");
	go("PUT", "/admin/loggers/root", "{}", "application/json");
	CHECK_INT(rep.status, 400);
	go("PUT", "/admin/loggers/root", "{\"level\":\"DEBUG\"}", "application/json");
	CHECK_STR(body(), "[\"root\"]");
	EXPECT("GET", "/connector-plugins/nope/config", 404,
	       "{\"error_code\":404,\"message\":\"Unknown plugin nope.\"}");
	go("PUT", "/connector-plugins/nope/config/validate", "{\"a\":1}", "application/json");
	CHECK_INT(rep.status, 500);
}

static void test_offsets(void)
{
	int before = altered;

	go("PATCH", "/connectors/b/offsets", "{\"offsets\":[]}", "application/json");
	CHECK_INT(rep.status, 400);
	CHECK_STR(body(), "{\"error_code\":400,\"message\":\"Partitions / offsets need to be "
	                  "provided for an alter offsets request\"}");
	go("PATCH", "/connectors/b/offsets", "{\"offsets\": [", "application/json");
	CHECK_INT(rep.status, 500);
	go("PATCH", "/connectors/b/offsets",
	   "{\"offsets\":[{\"partition\":{\"filename\":\"f\"},\"offset\":{\"position\":-5}}]}",
	   "application/json");
	CHECK_INT(rep.status, 500);
	CHECK_STR(body(),
	          "{\"error_code\":500,\"message\":\"The value for the 'position' key in the "
	          "offset should be a non-negative value\"}");
	go("PATCH", "/connectors/b/offsets", "{\"offsets\":[]}", "text/plain");
	CHECK_INT(rep.status, 415);
	CHECK(rep.content_type == NULL);
	CHECK_INT(altered, before);
	go("PATCH", "/connectors/b/offsets",
	   "{\"offsets\":[{\"partition\":{\"filename\":\"f\"},\"offset\":{\"position\":5}}]}",
	   "application/json");
	CHECK_INT(rep.status, 200);
	CHECK_INT(altered, before + 1);
}

static void test_changes(void)
{
	int before = changes;

	go("POST", "/connectors", "{\"config\":{\"connector.class\":\"X\"}}", "application/json");
	CHECK_INT(rep.status, 400);
	CHECK(strstr(body(), "Invalid value  for configuration name: String may not be empty") !=
	      NULL);
	go("POST", "/connectors", "{\"name\":\"c\",\"config\":{\"file\":\"/f\"}}",
	   "application/json");
	CHECK_INT(rep.status, 400);
	CHECK_STR(body(), "{\"error_code\":400,\"message\":\"Connector config {name=c, file=/f} "
	                  "contains no connector type\"}");
	go("POST", "/connectors",
	   "{\"name\":\"c\",\"config\":{\"connector.class\":\"X\",\"a.password\":\"s3cr3t\"}}",
	   "application/json");
	CHECK_INT(changes, before + 1); /* taken: pending */
	go("POST", "/connectors", "{\"name\":\"c\",\"config\":{\"db.password\":\"s3cr3t\"}}",
	   "application/json");
	CHECK(strstr(body(), "s3cr3t") == NULL); /* Connect prints it; skiff masks it */
	go("POST", "/connectors", "{\"name\":\" a \",\"config\":{\"connector.class\":\"X\"}}",
	   "application/json");
	CHECK_INT(rep.status, 409);
	CHECK_STR(body(), "{\"error_code\":409,\"message\":\"Connector a already exists\"}");
	go("POST", "/connectors",
	   "{\"name\":\"y\",\"config\":{\"connector.class\":\"X\",\"name\":\"z\"}}",
	   "application/json");
	CHECK_INT(rep.status, 400);
	CHECK_STR(body(),
	          "{\"error_code\":400,\"message\":\"Connector name configuration (z) doesn't "
	          "match connector name in the URL (y)\"}");
	go("POST", "/connectors", "{\"name\":\"x/y\",\"config\":{\"connector.class\":\"X\"}}",
	   "application/json");
	CHECK_INT(rep.status, 400);
	go("POST", "/connectors", "{\"name\":", "application/json");
	CHECK_INT(rep.status, 500);
	go("PUT", "/connectors/a/config", "{\"name\":\"other\",\"connector.class\":\"X\"}",
	   "application/json");
	CHECK_INT(rep.status, 400);
	go("PATCH", "/connectors/nope/config", "{\"topic\":\"t\"}", "application/json");
	CHECK_INT(rep.status, 404);
	go("DELETE", "/connectors/nope", NULL, NULL);
	CHECK_INT(rep.status, 404);
	CHECK_INT(changes, before + 1);
	CHECK_INT(go("DELETE", "/connectors/a", NULL, NULL), REST_PENDING);
	CHECK_INT(go("PATCH", "/connectors/a/config", "{\"topic\":null}", "application/json"),
	          REST_PENDING);
	CHECK_INT(go("PUT", "/connectors/new/config", "{\"connector.class\":\"X\",\"n\":5}",
	             "application/json"),
	          REST_PENDING);
	/* The outcome, as Connect answers it. */
	rest_reply_free(&rep);
	CHECK_INT(rest_change_reply(&ops, NULL, REST_PUT, "a", true, 0, NULL, "w", &rep), 0);
	CHECK_INT(rep.status, 201);
	CHECK(strstr(body(), "\"name\":\"a\",\"config\":") != NULL);
	rest_reply_free(&rep);
	rest_change_reply(&ops, NULL, REST_PUT, "a", false, 0, NULL, "w", &rep);
	CHECK_INT(rep.status, 200);
	rest_reply_free(&rep);
	rest_change_reply(&ops, NULL, REST_DELETE, "a", false, 0, NULL, "w", &rep);
	CHECK_INT(rep.status, 204);
	rest_reply_free(&rep);
	rest_change_reply(&ops, NULL, REST_CREATE, "c", false, REST_ERR_ARG, "why", "w", &rep);
	CHECK_INT(rep.status, 400);
	CHECK_STR(body(), "{\"error_code\":400,\"message\":\"why\"}");
}

/* Hostile finding: 60 slow readers of a 3.8 MB /metrics held 60 copies
 * (186 MB of RSS). A page rest.c still sends serves the next requests: no
 * render, no body, the shared one named. */
static void test_metrics_shared(void)
{
	struct rest_request req = {.method = "GET", .path = "/metrics", .serve = REST_SERVE_API};

	rendered = 0;
	EXPECT("GET", "/metrics", 200, "x 1\n");
	CHECK_INT(rep.shared, REST_SHARED_NEW);
	CHECK_INT(rendered, 1);
	req.metrics_at_hand = true;
	rest_reply_free(&rep);
	CHECK_INT(rest_route(&ops, NULL, &req, &rep), 0);
	CHECK_INT(rep.status, 200);
	CHECK_INT(rep.shared, REST_SHARED_LAST);
	CHECK(rep.body == NULL);
	CHECK_STR(rep.content_type, "text/plain; version=0.0.4; charset=utf-8");
	CHECK_INT(rendered, 1);
	/* Other replies are never shared. */
	EXPECT("GET", "/health", 200, "{\"status\":\"healthy\",\"message\":\"fine\"}");
	CHECK_INT(rep.shared, REST_SHARED_NONE);
}

int main(void)
{
	test_paths();
	test_metrics_shared();
	test_shapes();
	test_offsets();
	test_changes();
	rest_reply_free(&rep);
	return testlib_done("rest_api");
}
