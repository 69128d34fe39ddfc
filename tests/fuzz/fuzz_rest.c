/* fuzz_rest: libFuzzer target for the REST API's request handling
 * (src/control/rest_api.c, rest_route) over a fake worker of three connectors in
 * every state.
 *
 * Input: first byte, the method (GET, PUT, PATCH, DELETE, POST, HEAD,
 * OPTIONS or a junk one), the expand and the restart flags; second byte,
 * which headers and policy follow; then NUL-separated the path, the Host,
 * Origin, Content-Type and Authorization values; the rest is the body.
 * Beyond "no crash, no leak, no undefined behaviour" it checks what every
 * reply must be: a status between 200 and 599, JSON that parses when the
 * type says JSON (but Connect's 401 text), a body whose length is its
 * text's. A change the worker takes is answered through rest_change_reply. */
#include "control/rest.h"
#include "util/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"a", "b/c", "\xc3\xa9t\xff"};
static const char *const states[] = {"RUNNING", "STOPPED", "FAILED"};
static int stopped_ok;

static size_t f_count(void *ctx)
{
	return 3;
}

static void f_connector(void *ctx, size_t i, struct rest_connector *out)
{
	out->name = names[i];
	out->state = states[i];
	out->trace = i == 2 ? "boom \"quoted\"\n\tat here" : NULL;
	snprintf(out->task_class, sizeof(out->task_class), "x.y.Task");
}

static bool f_config_next(void *ctx, size_t i, size_t *cur, const char **k, const char **v)
{
	static const char *const keys[] = {"name", "connection.password", "topic"};

	if (*cur >= 3)
		return false;
	*k = keys[*cur];
	*v = *cur == 1 ? "[hidden]" : names[i];
	(*cur)++;
	return true;
}

static int f_control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	if (i == 2) {
		snprintf(errbuf, errlen, "connector failed");
		return REST_ERR_STATE;
	}
	return 0;
}

static int f_offsets(void *ctx, size_t i, char **json)
{
	*json = strdup("{\"offsets\":[{\"partition\":{\"f\":1},\"offset\":{\"p\":2}}]}");
	return *json ? 0 : REST_ERR_NOMEM;
}

static int f_alter(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n, char *errbuf,
                   size_t errlen)
{
	if (i != 1) {
		snprintf(errbuf, errlen, "not stopped");
		return REST_ERR_STATE;
	}
	for (size_t k = 0; k < n; k++) {
		if (!cJSON_IsObject(e[k].partition) ||
		    (e[k].offset != NULL && (e[k].olen < 2 || e[k].offset[0] != '{' ||
		                             e[k].offset[e[k].olen - 1] != '}'))) {
			abort(); /* rest_api hands on objects only */
		}
	}
	stopped_ok++;
	return 0;
}

static int f_health(void *ctx, char *msg, size_t len)
{
	snprintf(msg, len, "fine");
	return 0;
}

static char *f_metrics(void *ctx)
{
	return strdup("skiff_x_total 1\n");
}

static char *f_cluster_id(void *ctx)
{
	return NULL;
}

static void f_topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	fn(arg, "b");
	fn(arg, "a");
}

static void f_reset(void *ctx, size_t i)
{
}

static void f_logger(void *ctx, const char **level, int64_t *modified)
{
	*level = "INFO";
	*modified = 0;
}

static int f_set_logger(void *ctx, const char *level)
{
	return strcmp(level, "DEBUG") == 0 ? 0 : REST_ERR_ARG;
}

static cJSON *f_plugins(void *ctx, bool connectors_only)
{
	return cJSON_Parse("[{\"class\":\"x.Y\",\"type\":\"source\",\"version\":\"1\"}]");
}

static int f_plugin_config(void *ctx, const char *plugin, cJSON **out)
{
	if (strcmp(plugin, "x.Y") != 0)
		return REST_ERR_NOTFOUND;
	*out = cJSON_CreateArray();
	return *out ? 0 : REST_ERR_NOMEM;
}

static int f_validate(void *ctx, const char *plugin, const cJSON *config, cJSON **out, char *errbuf,
                      size_t errlen)
{
	if (!cJSON_IsObject(config))
		abort(); /* rest_api hands on objects only */
	if (strcmp(plugin, "x.Y") != 0) {
		snprintf(errbuf, errlen, "no such plugin");
		return REST_ERR_NOTFOUND;
	}
	*out = cJSON_CreateObject();
	return *out ? 0 : REST_ERR_NOMEM;
}

static int f_change(void *ctx, const struct rest_change *ch, void *waiter, char *errbuf,
                    size_t errlen)
{
	for (const cJSON *e = ch->config ? ch->config->child : NULL; e != NULL; e = e->next)
		if (!cJSON_IsString(e) && !(ch->op == REST_PATCH && cJSON_IsNull(e)))
			abort(); /* values are strings (null: a PATCH's removal) */
	if (ch->name[0] == '\0')
		abort(); /* named */
	if (ch->name[0] == 'x') {
		snprintf(errbuf, errlen, "refused");
		return REST_ERR_ARG;
	}
	return REST_PENDING;
}

static const struct rest_ops ops = {
    f_count,      f_connector, f_config_next,   f_control,  f_offsets, f_alter,
    f_health,     f_metrics,   f_cluster_id,    f_topics,   f_reset,   f_logger,
    f_set_logger, f_plugins,   f_plugin_config, f_validate, f_change};

/* The next NUL-terminated field of *data (NULL when none is left). */
static const char *field(const uint8_t **data, size_t *size)
{
	const uint8_t *nul = memchr(*data, 0, *size);
	const char *f = (const char *)*data;

	if (nul == NULL)
		return NULL;
	*size -= (size_t)(nul - *data) + 1;
	*data = nul + 1;
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET",  "PUT",  "PATCH",   "DELETE",
	                                      "POST", "HEAD", "OPTIONS", "get"};
	static const char *const names_[] = {"gw.example"};
	struct rest_policy policy = {.port = "8083",
	                             .names = names_,
	                             .nnames = 1,
	                             .allow_origin = "http://ok.example,*.lan",
	                             .allow_methods = ""};
	struct rest_request req = {.worker_id = "127.0.0.1:8083", .serve = 3};
	struct rest_reply rep;
	const char *f[5];
	unsigned flags;
	int rc;

	if (size < 2)
		return 0;
	req.method = methods[data[0] & 7];
	req.expand = (data[0] >> 3) & 3;
	req.expand_any = req.expand != 0;
	req.restart = (data[0] >> 5) & 3;
	req.connectors_only = (data[0] >> 7) & 1;
	flags = data[1];
	data += 2;
	size -= 2;
	for (size_t i = 0; i < 5; i++)
		f[i] = field(&data, &size);
	if (f[0] == NULL)
		return 0;
	req.path = f[0];
	if (flags & 1) {
		req.policy = &policy;
		policy.https = flags & 2;
	}
	req.host = flags & 4 ? f[1] : NULL;
	req.origin = flags & 8 ? f[2] : NULL;
	req.content_type = flags & 16 ? f[3] : NULL;
	req.authorization = flags & 32 ? f[4] : NULL;
	req.acr_method = flags & 64 ? "PUT" : NULL;
	req.body = (const char *)data;
	req.len = size;
	req.has_body = size > 0;
	rc = rest_route(&ops, NULL, &req, &rep);
	if (rc == REST_PENDING)
		rc = rest_change_reply(&ops, NULL, REST_CREATE, "a", false,
		                       flags & 128 ? 0 : REST_ERR_ARG, "why", req.worker_id, &rep);
	if (rc == 0) {
		if (rep.status < 200 || rep.status > 599)
			abort();
		if (rep.body != NULL && rep.content_type != NULL &&
		    strstr(rep.content_type, "json") != NULL && rep.status != 401) {
			cJSON *j = cJSON_ParseWithLength(rep.body, rep.len);

			if (j == NULL)
				abort(); /* a JSON reply that does not parse */
			cJSON_Delete(j);
		}
		if (rep.body != NULL && rep.len != strlen(rep.body))
			abort();
		if (rep.body != NULL && !utf8_valid(rep.body, rep.len))
			abort(); /* every reply is UTF-8 */
	}
	rest_reply_free(&rep);
	return 0;
}
