/* rest_worker: the REST API's view of the pipeline (rest.h's rest_ops,
 * worker_rest_ops in core/worker.h), over its query (core/query.h): the
 * connectors and their configuration, their states and the commands that
 * change them, KIP-875's offsets, health, metrics, the active topics, the
 * plugins, the root logger, and connector changes. ctx is the worker,
 * which this file sees only as worker_query() and worker_health() give
 * it. Main loop only. */
#include "control/rest.h"

#include "config/config.h"
#include "control/health.h"
#include "control/metrics.h"
#include "control/plugins.h"
#include "core/log.h"
#include "core/query.h"
#include "core/stats.h"
#include "core/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The pipeline's query of the worker ctx. */
static const struct query *query(void *ctx)
{
	return worker_query(ctx);
}

static size_t count(void *ctx)
{
	const struct query *q = query(ctx);

	return q->ops->connectors(q->ctx);
}

static void connector(void *ctx, size_t i, struct rest_connector *out)
{
	const struct query *q = query(ctx);
	struct query_conn c;

	q->ops->connector(q->ctx, i, &c);
	out->name = c.name;
	out->state = query_state_rest(&c);
	out->trace = c.state == QUERY_FAILED ? (c.trace ? c.trace : "") : NULL;
	/* Connect's pairs: a.b.XConnector runs a.b.XTask. */
	snprintf(out->task_class, sizeof(out->task_class), "%s", c.classes[0]);
	for (const char *const *k = c.classes; *k != NULL; k++) {
		size_t n = strlen(*k);

		if (strchr(*k, '.') != NULL && n > 9 && strcmp(*k + n - 9, "Connector") == 0) {
			snprintf(out->task_class, sizeof(out->task_class), "%.*sTask", (int)(n - 9),
			         *k);
			break;
		}
	}
}

static bool config_next(void *ctx, size_t i, size_t *cursor, const char **key, const char **shown)
{
	const struct query *q = query(ctx);
	struct query_conn c;

	q->ops->connector(q->ctx, i, &c);
	return config_next_set(c.cfg, cursor, key, shown);
}

static int control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	static const enum query_command cmds[] = {
	    [REST_PAUSE] = QUERY_PAUSE,
	    [REST_RESUME] = QUERY_RESUME,
	    [REST_STOP] = QUERY_STOP,
	    [REST_RESTART] = QUERY_RESTART,
	};
	const struct query *q = query(ctx);

	return q->ops->command(q->ctx, i, cmds[a], errbuf, errlen);
}

static int get_offsets(void *ctx, size_t i, char **json)
{
	const struct query *q = query(ctx);

	return q->ops->offsets(q->ctx, i, json);
}

static int alter_offsets(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
                         char *errbuf, size_t errlen)
{
	const struct query *q = query(ctx);

	return q->ops->alter_offsets(q->ctx, i, e, n, errbuf, errlen);
}

static int health(void *ctx, char *msg, size_t len)
{
	return health_check(query(ctx), msg, len);
}

static char *metrics(void *ctx)
{
	const struct query *q = query(ctx);
	char *text = NULL;
	size_t len;

	health_refresh(worker_health(ctx));
	return metrics_render(q->ops->stats(q->ctx), &text, &len) == 0 ? text : NULL;
}

static char *cluster_id(void *ctx)
{
	const struct query *q = query(ctx);

	return q->ops->cluster_id(q->ctx);
}

static void topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	const struct query *q = query(ctx);

	q->ops->topics(q->ctx, i, fn, arg);
}

static void reset_topics(void *ctx, size_t i)
{
	const struct query *q = query(ctx);

	q->ops->forget_topics(q->ctx, i);
}

static cJSON *plugins(void *ctx, bool connectors_only)
{
	return plugins_list(connectors_only);
}

static int plugin_config(void *ctx, const char *plugin, cJSON **out)
{
	int rc = plugins_config(plugin, out);

	return rc == 0 ? 0 : rc == PLUGINS_ERR_UNKNOWN ? REST_ERR_NOTFOUND : REST_ERR_NOMEM;
}

static int validate(void *ctx, const char *plugin, const cJSON *config, cJSON **out, char *errbuf,
                    size_t errlen)
{
	const struct query *q = query(ctx);
	int rc =
	    plugins_validate(q->ops->worker_config(q->ctx), plugin, config, out, errbuf, errlen);

	return rc == 0                      ? 0
	       : rc == PLUGINS_ERR_UNKNOWN  ? REST_ERR_NOTFOUND
	       : rc == PLUGINS_ERR_MISMATCH ? REST_ERR_ARG
	                                    : REST_ERR_NOMEM;
}

static int change(void *ctx, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen)
{
	const struct query *q = query(ctx);

	return q->ops->change(q->ctx, rc, waiter, errbuf, errlen);
}

/* log4j's names of skiff's levels (log.h's order). */
static const char *const log4j_names[] = {"ERROR", "WARN", "NOTICE", "INFO", "DEBUG"};

/* When PUT /admin/loggers/root last set the level (epoch ms, 0: never):
 * process-wide, as the level it dates is (log.c). */
static int64_t logger_modified;

static void logger(void *ctx, const char **level, int64_t *modified)
{
	*level = log4j_names[log_get_level()];
	*modified = logger_modified;
}

/* The wall clock in ms, for timestamps a person reads. */
static int64_t epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_logger(void *ctx, const char *level)
{
	static const struct {
		const char *name;
		enum log_level level;
	} levels[] = {{"OFF", LOG_ERROR},   {"FATAL", LOG_ERROR},   {"ERROR", LOG_ERROR},
	              {"WARN", LOG_WARN},   {"NOTICE", LOG_NOTICE}, {"INFO", LOG_INFO},
	              {"DEBUG", LOG_DEBUG}, {"TRACE", LOG_DEBUG},   {"ALL", LOG_DEBUG}};

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcasecmp(level, levels[i].name) != 0)
			continue;
		log_notice("log level: %s (REST API, PUT /admin/loggers/root: until a reload or "
		           "restart)",
		           log4j_names[levels[i].level]);
		log_set_level(levels[i].level);
		logger_modified = epoch_ms();
		return 0;
	}
	return REST_ERR_ARG;
}

const struct rest_ops worker_rest_ops = {
    .count = count,
    .connector = connector,
    .config_next = config_next,
    .control = control,
    .offsets = get_offsets,
    .alter_offsets = alter_offsets,
    .health = health,
    .metrics = metrics,
    .cluster_id = cluster_id,
    .topics = topics,
    .reset_topics = reset_topics,
    .logger = logger,
    .set_logger = set_logger,
    .plugins = plugins,
    .plugin_config = plugin_config,
    .validate = validate,
    .change = change,
};
