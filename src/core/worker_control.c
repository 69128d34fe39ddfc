/* worker_control: the worker as the REST API sees and steers it (rest.h,
 * worker.h): connector states, pause/resume/stop (through
 * core/connectors.c, which keeps their promise), KIP-875 offsets, health,
 * and the metrics computed at export time. Main loop only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "config/config.h"
#include "core/connectors.h"
#include "core/log.h"
#include "control/health.h"
#include "control/metrics.h"
#include "offsets/offsets.h"
#include "offsets/offsets_doc.h"
#include "control/plugins.h"
#include "control/rest.h"
#include "core/sink.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int64_t worker_epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct loop *worker_loop(struct worker *w)
{
	return w->loop;
}

/* ---- a partition's counts and active topics ------------------------------ */

void worker_control_partition(struct partition *p)
{
	(void)p; /* nothing counted yet, nothing shown */
}

/* Most topics kept per connector for GET .../topics: a RegexRouter or
 * TimestampRouter can name one per day for ever. */
#define MAX_TOPICS 256

/* Notes topic among c's active topics (Connect's, for GET .../topics). */
static void note_topic(struct conn *c, const char *topic)
{
	char **grown, *copy;

	if (c->ntopics > 0 && strcmp(c->topics[c->last_topic], topic) == 0)
		return; /* the usual case: the topic of the record before */
	for (size_t i = 0; i < c->ntopics; i++)
		if (strcmp(c->topics[i], topic) == 0) {
			c->last_topic = i;
			return;
		}
	if (c->ntopics == MAX_TOPICS) {
		return; /* GET .../topics lists the first MAX_TOPICS */
	}
	grown = realloc(c->topics, (c->ntopics + 1) * sizeof(*grown));
	if (grown == NULL)
		return;
	c->topics = grown;
	if ((copy = strdup(topic)) == NULL)
		return;
	c->last_topic = c->ntopics;
	c->topics[c->ntopics++] = copy;
}

void worker_control_produced(const struct record *r, const char *topic, size_t vlen)
{
	struct partition *p = r->part;

	p->produced++;
	p->read_bytes += r->value.kind == VALUE_STRING ? r->value.len : vlen;
	partition_head(p, p->conn->w->turn_ms);
	note_topic(p->conn, topic);
}

void worker_control_forget(struct conn *c)
{
	for (size_t i = 0; i < c->ntopics; i++)
		free(c->topics[i]);
	free(c->topics);
	c->topics = NULL;
	c->ntopics = c->last_topic = 0;
}

/* A reload leaves a removed connector's slot as a tombstone (the loop holds
 * pointers into the array): everything here counts and indexes live ones. */
static size_t live_count(const struct worker *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nconns; i++)
		n += !w->conns[i]->removed;
	return n;
}

/* The i-th live connector; i < live_count(w). */
static struct conn *live(struct worker *w, size_t i)
{
	for (size_t k = 0; k < w->nconns; k++)
		if (!w->conns[k]->removed && i-- == 0)
			return w->conns[k];
	return NULL;
}

static const char *state_name(const struct conn *c)
{
	if (c->restarting)
		return "RESTARTING";
	if (c->stopped)
		return "FAILED";
	switch (c->run) {
	case CONN_PAUSED:
		return "PAUSED";
	case CONN_STOPPING:
		/* Not STOPPED before it is: offsets can be changed only then,
		 * and a script polls the status for it (Connect too shows the
		 * old state until the stop completes). */
		return c->stop_paused ? "PAUSED" : "RUNNING";
	case CONN_STOPPED:
		return "STOPPED";
	case CONN_RUNNING:
		break;
	}
	return "RUNNING";
}

/* ---- pause, resume, stop, restart (core/connectors.c) ------------------------ */

void worker_control_acked(struct partition *p, bool ok)
{
	if (ok) {
		p->acked++;
		p->last_ack_ms = p->conn->w->turn_epoch_ms;
	}
	connector_acked(p);
}

static int control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	struct conn *c = live(ctx, i);
	int rc;

	switch (a) {
	case REST_RESTART:
		connector_restart(c);
		return 0;
	case REST_PAUSE:
		rc = connector_pause(c, errbuf, errlen);
		break;
	case REST_RESUME:
		rc = connector_resume(c, errbuf, errlen);
		break;
	default:
		rc = connector_stop(c, errbuf, errlen);
		break;
	}
	return rc == 0 ? 0 : rc == CONNECTORS_ERR_STATE ? REST_ERR_STATE : REST_ERR;
}

/* ---- offsets (KIP-875) ----------------------------------------------------- */

static int get_offsets(void *ctx, size_t i, char **json)
{
	struct worker *w = ctx;

	return offsets_doc_print(w->offsets, live(w, i)->cs->name, json) == 0 ? 0 : REST_ERR_NOMEM;
}

/* Whether c's source would use entry e (a reset always passes: junk stored
 * earlier must stay removable, as Connect allows), and it lies within the
 * source's data (check_reach: not past a table's newest row or a file's
 * end, not inside a line; no --force here, `skiff offsets set --force` with
 * skiff stopped). *settled: what check_reach would store instead (NULL: e
 * as sent; caller frees). Returns 0, REST_ERR_SOURCE with errbuf (the
 * source's reason, as Connect's connector throws it), or REST_ERR_NOMEM. */
static int check_one(const struct conn *c, const struct offsets_doc_entry *e, char **settled,
                     char *errbuf, size_t errlen)
{
	char why[1024] = "", *part, *off, *key;
	int rc = 0, src = 0;

	*settled = NULL;
	if (e->offset == NULL || c->cs->ops->check_offset == NULL)
		return 0;
	part = cJSON_PrintUnformatted(e->partition);
	off = strndup(e->offset, e->olen);
	key = offsets_doc_key(c->cs->name, e->partition);
	if (part == NULL || off == NULL || key == NULL)
		rc = REST_ERR_NOMEM;
	else if ((src = c->cs->ops->check_offset(c->cs->cfg, part, off, why, sizeof(why))) ==
	         SOURCE_ERR_FOREIGN)
		src = 0; /* stored, as Connect stores it */
	else if (src == 0 && c->cs->ops->check_reach != NULL)
		src =
		    c->cs->ops->check_reach(c->cs->cfg, part, off, offsets_get(c->w->offsets, key),
		                            true, settled, why, sizeof(why));
	if (src != 0) {
		snprintf(errbuf, errlen, "%s", why);
		rc = REST_ERR_SOURCE;
	} else if (rc == 0 && why[0] != '\0') {
		log_info("connector %s: %s", c->cs->name, why);
	}
	free(part);
	free(off);
	free(key);
	return rc;
}

/* Applies one PATCH entry: an offset is stored as sent (or as settled,
 * when not NULL), null removes. */
static int alter_one(struct worker *w, const char *name, const struct offsets_doc_entry *e,
                     const char *settled, char *errbuf, size_t errlen)
{
	char *key = offsets_doc_key(name, e->partition), *val = NULL;
	int rc = REST_ERR_ARG;

	if (e->offset != NULL)
		val = settled != NULL ? strdup(settled) : strndup(e->offset, e->olen);
	if (key == NULL || (e->offset != NULL && val == NULL))
		rc = REST_ERR_NOMEM;
	else if ((val ? offsets_put(w->offsets, key, val) : offsets_remove(w->offsets, key)) == 0)
		rc = 0;
	if (rc == REST_ERR_ARG)
		snprintf(errbuf, errlen,
		         "the offset store refuses %s (too many partitions or too "
		         "large)",
		         key);
	free(key);
	free(val);
	return rc;
}

static void on_written(void *arg, int rc, const char *why)
{
	int *out = arg;

	*out = rc;
}

/* Writes the store now; the file backend completes before returning. */
static int write_now(struct worker *w, char *errbuf, size_t errlen)
{
	int done = 1; /* not completed yet */

	if (offsets_writing(w->offsets) || offsets_write(w->offsets, on_written, &done) != 0) {
		w->next_flush = loop_now_ms(); /* the flush timer writes it */
		return 0;
	}
	if (done < 0) {
		snprintf(errbuf, errlen,
		         "the offsets were changed in memory but could not be "
		         "written: %s",
		         offsets_strerror(done));
		return REST_ERR;
	}
	return 0;
}

static int alter_offsets(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
                         char *errbuf, size_t errlen)
{
	struct worker *w = ctx;
	struct conn *c = live(w, i);
	const char *name = c->cs->name, *part;
	size_t plen;
	int rc = 0;

	if (c->run != CONN_STOPPED || c->stopped) {
		snprintf(errbuf, errlen,
		         "Connectors must be in the STOPPED state before their "
		         "offsets can be modified. This can be done for the specified connector by "
		         "issuing a 'PUT' request to the '/connectors/%s/stop' endpoint",
		         name);
		return REST_ERR_STATE;
	}
	if (e == NULL) {
		/* DELETE: every stored partition of this connector. */
		for (size_t k = offsets_count(w->offsets); k-- > 0 && rc == 0;)
			if (offsets_doc_own_key(offsets_key(w->offsets, k), name, &part, &plen))
				rc = offsets_remove(w->offsets, offsets_key(w->offsets, k));
	} else {
		/* All checked before any is stored: a refused PATCH changes
		 * nothing. */
		char **settled = calloc(n, sizeof(*settled));

		rc = settled != NULL ? 0 : REST_ERR_NOMEM;
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = check_one(c, &e[k], &settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = alter_one(w, name, &e[k], settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && settled != NULL; k++)
			free(settled[k]);
		free(settled);
	}
	if (rc == REST_ERR_NOMEM)
		snprintf(errbuf, errlen, "out of memory");
	if (rc != 0)
		return rc == REST_ERR_NOMEM || rc == REST_ERR_SOURCE ? rc : REST_ERR_ARG;
	log_notice("connector %s: offsets %s (REST API)", name, e ? "altered" : "reset");
	return write_now(w, errbuf, errlen);
}

/* ---- the ops table ------------------------------------------------------------ */

static size_t count(void *ctx)
{
	return live_count(ctx);
}

static void connector(void *ctx, size_t i, struct rest_connector *out)
{
	const struct conn *c = live(ctx, i);

	out->name = c->cs->name;
	out->state = state_name(c);
	out->trace = c->stopped ? (c->trace ? c->trace : "") : NULL;
	/* Connect's pairs: a.b.XConnector runs a.b.XTask. */
	snprintf(out->task_class, sizeof(out->task_class), "%s", c->cs->ops->classes[0]);
	for (const char *const *k = c->cs->ops->classes; *k != NULL; k++) {
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
	return config_next_set(live(ctx, i)->cs->cfg, cursor, key, shown);
}

static int health(void *ctx, char *msg, size_t len)
{
	return health_check(&((struct worker *)ctx)->query, msg, len);
}

static char *metrics(void *ctx)
{
	struct worker *w = ctx;
	char *text = NULL;
	size_t len;

	health_refresh(w->health);
	return metrics_render(w->stats, &text, &len) == 0 ? text : NULL;
}

static char *cluster_id(void *ctx)
{
	return sink_cluster_id(((struct worker *)ctx)->sink);
}

static void topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	const struct conn *c = live(ctx, i);

	for (size_t k = 0; k < c->ntopics; k++)
		fn(arg, c->topics[k]);
}

static void reset_topics(void *ctx, size_t i)
{
	worker_control_forget(live(ctx, i));
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
	struct worker *w = ctx;
	int rc = plugins_validate(w->settings->worker, plugin, config, out, errbuf, errlen);

	return rc == 0                      ? 0
	       : rc == PLUGINS_ERR_UNKNOWN  ? REST_ERR_NOTFOUND
	       : rc == PLUGINS_ERR_MISMATCH ? REST_ERR_ARG
	                                    : REST_ERR_NOMEM;
}

void worker_change_clear(struct worker_change *ch)
{
	free(ch->name);
	cJSON_Delete(ch->config);
	free(ch->initial_state);
	memset(ch, 0, sizeof(*ch));
}

/* A connector created, changed or deleted: taken now, applied as a reload
 * at the end of the turn (worker_reload_change), answered then. */
static int change(void *ctx, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen)
{
	struct worker *w = ctx;
	struct worker_change *ch = &w->change;

	if (w->live == NULL) {
		snprintf(errbuf, errlen,
		         "this skiff was started without configuration files to "
		         "change");
		return REST_ERR_STATE;
	}
	if (ch->waiter != NULL || w->reloading) {
		snprintf(
		    errbuf, errlen,
		    "Cannot complete request momentarily due to stale configuration (typically "
		    "caused by a concurrent config change)");
		return REST_ERR_STATE;
	}
	ch->op = rc->op;
	ch->name = strdup(rc->name);
	ch->config = rc->config != NULL ? cJSON_Duplicate(rc->config, true) : NULL;
	ch->initial_state = rc->initial_state != NULL ? strdup(rc->initial_state) : NULL;
	if (ch->name == NULL || (rc->config != NULL && ch->config == NULL) ||
	    (rc->initial_state != NULL && ch->initial_state == NULL)) {
		worker_change_clear(ch);
		snprintf(errbuf, errlen, "out of memory");
		return REST_ERR_NOMEM;
	}
	ch->waiter = waiter;
	ch->asked = true;
	return REST_PENDING;
}

/* log4j's names of skiff's levels (log.h's order). */
static const char *const log4j_names[] = {"ERROR", "WARN", "NOTICE", "INFO", "DEBUG"};

static void logger(void *ctx, const char **level, int64_t *modified)
{
	const struct worker *w = ctx;

	*level = log4j_names[log_get_level()];
	*modified = w->logger_modified;
}

static int set_logger(void *ctx, const char *level)
{
	static const struct {
		const char *name;
		enum log_level level;
	} levels[] = {{"OFF", LOG_ERROR},   {"FATAL", LOG_ERROR},   {"ERROR", LOG_ERROR},
	              {"WARN", LOG_WARN},   {"NOTICE", LOG_NOTICE}, {"INFO", LOG_INFO},
	              {"DEBUG", LOG_DEBUG}, {"TRACE", LOG_DEBUG},   {"ALL", LOG_DEBUG}};
	struct worker *w = ctx;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcasecmp(level, levels[i].name) != 0)
			continue;
		log_notice("log level: %s (REST API, PUT /admin/loggers/root: until a reload or "
		           "restart)",
		           log4j_names[levels[i].level]);
		log_set_level(levels[i].level);
		w->logger_modified = worker_epoch_ms();
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
