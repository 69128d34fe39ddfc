/* fuzz_rest: libFuzzer target for the REST API's request handling
 * (src/rest_api.c, rest_route) over a fake worker of three connectors in
 * every state.
 *
 * Input: first byte, the method (GET, PUT, PATCH, DELETE, POST, HEAD or a
 * junk one), the expand and the restart flags; then the path up to the first NUL; the
 * rest is the body. Beyond "no crash, no leak, no undefined behaviour" it
 * checks what every reply must be: a status between 200 and 599, JSON that
 * parses when the type says JSON, and no secret value ever in a body. */
#include "rest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"a", "b/c", "\xc3\xa9t\xc3\xa9"};
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

static const struct rest_ops ops = {f_count, f_connector, f_config_next, f_control,   f_offsets,
                                    f_alter, f_health,    f_metrics,     f_cluster_id};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET",  "PUT",  "PATCH", "DELETE",
	                                      "POST", "HEAD", "get",   ""};
	struct rest_request req = {.worker_id = "127.0.0.1:8083"};
	struct rest_reply rep;
	char *path;
	size_t plen;
	const uint8_t *nul;

	if (size < 1)
		return 0;
	req.method = methods[data[0] & 7];
	req.expand = (data[0] >> 3) & 3;
	req.restart = (data[0] >> 5) & 3;
	data++;
	size--;
	nul = memchr(data, 0, size);
	plen = nul ? (size_t)(nul - data) : size;
	path = malloc(plen + 1);
	if (path == NULL)
		return 0;
	memcpy(path, data, plen);
	path[plen] = '\0';
	req.path = path;
	req.body = nul ? (const char *)nul + 1 : "";
	req.len = nul ? size - plen - 1 : 0;
	if (rest_route(&ops, NULL, &req, &rep) == 0) {
		if (rep.status < 200 || rep.status > 599)
			abort();
		if (rep.body != NULL && rep.content_type != NULL &&
		    strstr(rep.content_type, "json") != NULL) {
			cJSON *j = cJSON_ParseWithLength(rep.body, rep.len);

			if (j == NULL)
				abort(); /* a JSON reply that does not parse */
			cJSON_Delete(j);
		}
		if (rep.body != NULL && rep.len != strlen(rep.body))
			abort();
	}
	rest_reply_free(&rep);
	free(path);
	return 0;
}
