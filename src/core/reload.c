/* reload: SIGHUP re-reads the configuration files given on the
 * command line and applies what changed, without giving up the promise that
 * an offset advances only past records Kafka acknowledged.
 *
 * - A configuration that does not load (settings_load) or that a source's
 *   check refuses is refused as a whole: the error is logged and the running
 *   configuration stays.
 * - The producer's keys (producer.*, kafka.*, security.protocol, ssl.*,
 *   sasl.*) make a new producer (supervisor_rebuild: made first, so a key
 *   librdkafka refuses refuses the reload; then drained, flushed, swapped).
 *   The new worker section goes live; the old one is kept until exit, as
 *   whatever read a string from it may still hold it.
 * - Other worker keys that need a new store or client (bootstrap.servers,
 *   offset.storage.*, listeners, bandwidth.max.bytes.per.second) are refused,
 *   naming the key: "restart skiff" (a restart drains and flushes too). A
 *   typo in bootstrap.servers would otherwise silently stop delivery.
 * - log.level and offset.flush.*.ms apply at once.
 * - A connector whose settings are equal is not touched. A changed or
 *   removed one stops reading; every record in flight is waited for (at most
 *   offset.flush.timeout.ms), the offsets are written, and its source is
 *   closed: what was acknowledged is stored, what was not is read again. A
 *   changed one then opens with its new settings from the stored offsets, an
 *   added one opens.
 * - A reload is refused as a whole when any connector of it cannot open:
 *   the connectors go back to the configuration before (the same drain, so
 *   nothing is lost), and a new producer is made only once they all opened
 *   (its settings tried first, without a swap).
 *
 * The REST API's POST /connectors, PUT and PATCH .../config and DELETE
 * /connectors/{name} go the same way (worker_reload_change): the change is
 * laid over the files as the kept REST connectors are (restconns.h), the
 * whole configuration reloaded, and the change kept only once applied.
 *
 * The settings a source was opened from stay alive as long as the source:
 * an unchanged connector keeps its section objects (they are moved into the
 * new settings). Main thread only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/eos.h"
#include "config/config.h"
#include "core/log.h"
#include "offsets/offsets.h"
#include "config/props.h"
#include "control/notify.h"
#include "control/rest.h"
#include "control/restconns.h"
#include "config/settings.h"
#include "kafka/sink_kafka.h"
#include "core/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Worker keys a reload may change (the rest need a restart). Converters are
 * here because they reach connectors through their resolved converters. */
static const char *const reloadable[] = {
    "log.level",
    "offset.flush.interval.ms",
    "offset.flush.timeout.ms",
    "key.converter",
    "value.converter",
    "health.",
    NULL,
};

/* reloadable, and the worker keys only the producer reads. */
static const char *const with_producer[] = {
    "log.level",
    "offset.flush.interval.ms",
    "offset.flush.timeout.ms",
    "key.converter",
    "value.converter",
    "health.",
    "producer.",
    "kafka.",
    "security.protocol",
    "ssl.",
    "sasl.",
    NULL,
};

enum plan { KEEP, CHANGE, REMOVE };

/* What a reload does with each slot k < n (the slots before it): plan[k],
 * target[k] its connector's index in the new settings (-1: none), cs_idx[k]
 * its index in the live ones, taken[k] whether a connector keeps or takes
 * it; placed[j]: connector j of the new settings has a slot. Sized when the
 * reload begins, so that nothing fails once it changes anything. */
struct slots {
	size_t n;
	enum plan *plan;
	int *target, *cs_idx;
	bool *taken, *placed;
};

static void slots_free(struct slots *sl)
{
	free(sl->plan);
	free(sl->target);
	free(sl->cs_idx);
	free(sl->taken);
	free(sl->placed);
}

/* Returns 0 or -1 (out of memory, sl freed). */
static int slots_alloc(struct slots *sl, size_t nslots, size_t nnext)
{
	size_t n = nslots > 0 ? nslots : 1, m = nnext > 0 ? nnext : 1;

	sl->n = nslots;
	sl->plan = calloc(n, sizeof(*sl->plan));
	sl->target = calloc(n, sizeof(*sl->target));
	sl->cs_idx = calloc(n, sizeof(*sl->cs_idx));
	sl->taken = calloc(n, sizeof(*sl->taken));
	sl->placed = calloc(m, sizeof(*sl->placed));
	if (sl->plan != NULL && sl->target != NULL && sl->cs_idx != NULL && sl->taken != NULL &&
	    sl->placed != NULL)
		return 0;
	slots_free(sl);
	return -1;
}

static int find_connector(const struct settings *s, const char *name)
{
	for (size_t j = 0; j < s->nconnectors; j++)
		if (strcmp(s->connectors[j].name, name) == 0)
			return (int)j;
	return -1;
}

static bool same_connector(const struct connector_settings *a, const struct connector_settings *b)
{
	return a->ops == b->ops && a->key_conv.kind == b->key_conv.kind &&
	       a->key_conv.schemas_enable == b->key_conv.schemas_enable &&
	       a->value_conv.kind == b->value_conv.kind &&
	       a->value_conv.schemas_enable == b->value_conv.schemas_enable &&
	       config_section_diff(a->cfg, b->cfg, NULL) == NULL;
}

static void swap_cs(struct connector_settings *a, struct connector_settings *b)
{
	struct connector_settings t = *a;

	*a = *b;
	*b = t;
}

/* The sources' own checks (a database's tables) for the connectors that
 * will open. Returns 0, or -1 with why. */
static int check_new(const struct worker *w, const struct settings *next, char *why, size_t len)
{
	char err[1024];

	for (size_t j = 0; j < next->nconnectors; j++) {
		const struct connector_settings *n = &next->connectors[j];
		int i = find_connector(w->live, n->name);

		if (n->ops->check == NULL || (i >= 0 && same_connector(&w->live->connectors[i], n)))
			continue;
		if (n->ops->check(n->cfg, n->name, err, sizeof(err)) == SOURCE_ERR_CONFIG) {
			snprintf(why, len, "connector %s: %s", n->name, err);
			return -1;
		}
	}
	return 0;
}

/* Which connector each running slot becomes: KEEP (same settings), CHANGE
 * or REMOVE, and its target in next. Returns whether any stops. */
static bool plan_conns(const struct worker *w, const struct settings *next, struct slots *sl)
{
	bool stops = false;

	for (size_t k = 0; k < sl->n; k++) {
		const struct conn *c = w->conns[k];
		int t = c->removed ? -1 : find_connector(next, c->cs->name);

		sl->target[k] = t;
		sl->plan[k] = t < 0                                         ? REMOVE
		              : same_connector(c->cs, &next->connectors[t]) ? KEEP
		                                                            : CHANGE;
		stops |= !c->removed && sl->plan[k] != KEEP;
	}
	return stops;
}

/* Slot c, whose source did not open, stays as connector cs FAILED with why
 * as its trace: listed by /connectors, /health and `skiff status` unhealthy,
 * polling nothing until a reload that changes it or a restart. Only out of
 * memory before its counters existed (no records array) leaves the slot
 * free. */
static void failed(struct worker *w, struct conn *c, const char *why)
{
	if (c->records == NULL) {
		connector_close(c, CLOSE_ABANDON);
		return;
	}
	c->stopped = true;
	c->config_error = true;
	c->trace = strdup(why); /* NULL: FAILED without the text */
}

/* Opens connector j of the live settings in slot c (changed: it ran with
 * other settings before). Returns 0, or -1 with why (c then FAILED). */
static int start_conn(struct worker *w, struct conn *c, int j, bool changed, char *why, size_t len)
{
	struct connector_settings *cs = &w->live->connectors[j];

	/* An added connector's offsets in the topic were not read at start. */
	if (!changed && offsets_adopt(w->offsets, cs->name, why, len) != 0) {
		log_error("connector %s: not started: its offsets cannot be read: %s", cs->name,
		          why);
		failed(w, c, why);
		return -1;
	}
	if (!changed && why[0] != '\0')
		log_warn("%s", why);
	if (connector_open(w, c, cs, OPEN_NEW, why, len) == 0) {
		log_notice("connector %s: %s", cs->name,
		           changed ? "restarted with its new settings" : "started");
		return 0;
	}
	failed(w, c, why);
	return -1;
}

/* A free slot for an added connector, marked taken: a tombstone among the
 * slots sl plans, or a new one after every slot. NULL when memory is short. */
static struct conn *free_slot(struct worker *w, struct slots *sl)
{
	for (size_t k = 0; k < sl->n; k++)
		if (w->conns[k]->removed && !sl->taken[k]) {
			sl->taken[k] = true;
			return w->conns[k];
		}
	return connectors_slot(w);
}

/* log.level (unless --log-level was given), the flush timings and the
 * health bound. */
static void apply_worker_keys(struct worker *w, const struct config_section *nw)
{
	const struct worker_conf *wc = settings_worker(nw);
	enum log_level level = wc->log_level >= 0 ? (enum log_level)wc->log_level : LOG_INFO;

	if (!w->cli_log_level && level != log_get_level()) {
		const char *lv = config_shown(nw, "log.level");

		log_notice("log level: %s", lv != NULL ? lv : "info (log.level unset)");
		log_set_level(level);
	}
	w->flush_interval = wc->flush_interval_ms;
	w->flush_timeout = wc->flush_timeout_ms;
	w->health_ack_ms = wc->health_ack_timeout_ms;
	w->part_limit = (size_t)wc->metrics_partition_limit;
	w->next_flush = loop_now_ms() + w->flush_interval;
}

/* Stops the connectors that change or go (after the drain), and moves the
 * settings of those that stay into next. Fills sl's cs_idx and taken. */
static void stop_conns(struct worker *w, struct settings *next, struct slots *sl)
{
	for (size_t k = 0; k < sl->n; k++) {
		struct conn *c = w->conns[k];

		if (c->removed)
			continue;
		sl->cs_idx[k] = (int)(c->cs - w->live->connectors);
		if (sl->plan[k] != REMOVE)
			sl->taken[k] = true;
		if (sl->plan[k] == KEEP) {
			swap_cs(&next->connectors[sl->target[k]],
			        &w->live->connectors[sl->cs_idx[k]]);
			continue;
		}
		log_notice("connector %s: %s", c->cs->name,
		           sl->plan[k] == REMOVE ? "removed"
		                                 : "stopped to restart with new settings");
		connector_close(c, CLOSE_ABANDON);
	}
}

/* Swaps a's and b's connectors and what they were read from (all but the
 * worker section). */
static void swap_connectors(struct settings *a, struct settings *b)
{
	struct config_section *wa = a->worker, *wb = b->worker;
	struct settings t = *a;

	*a = *b;
	*b = t;
	a->worker = wa;
	b->worker = wb;
}

/* Moves next's connectors in: those that change or go stop (after the
 * drain), the live ones go into next, and those that change or come open.
 * Returns how many could not open (why: the first one's reason), or -1 with
 * nothing changed when memory is short for the plan. */
static int switch_connectors(struct worker *w, struct settings *next, char *why, size_t len)
{
	struct slots sl;
	char err[1024];
	int left, bad = 0;

	if (slots_alloc(&sl, w->nconns, next->nconnectors) != 0) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (plan_conns(w, next, &sl) && (left = worker_drain_and_flush(w)) > 0)
		log_warn(
		    "reload: %d records still unacknowledged after offset.flush.timeout.ms=%lld; "
		    "those of connectors that stop are read again from the stored offset",
		    left, (long long)w->flush_timeout);
	stop_conns(w, next, &sl);
	swap_connectors(w->live, next);
	for (size_t k = 0; k < sl.n; k++) {
		int j = sl.target[k];

		if (j < 0 || (w->conns[k]->removed && sl.plan[k] != CHANGE))
			continue;
		sl.placed[j] = true;
		if (sl.plan[k] == KEEP)
			w->conns[k]->cs = &w->live->connectors[j];
		else if (start_conn(w, w->conns[k], j, true, err, sizeof(err)) != 0 && bad++ == 0)
			snprintf(why, len, "%s", err);
	}
	for (size_t j = 0; j < w->live->nconnectors; j++) {
		struct conn *c = sl.placed[j] ? NULL : free_slot(w, &sl);

		if (c != NULL) {
			if (start_conn(w, c, (int)j, false, err, sizeof(err)) != 0 && bad++ == 0)
				snprintf(why, len, "%s", err);
		} else if (!sl.placed[j] && bad++ == 0) {
			snprintf(why, len, "connector %s: not started: out of memory",
			         w->live->connectors[j].name);
		}
	}
	slots_free(&sl);
	return bad;
}

/* The worker section's part: the new one goes live with a new producer
 * (the old one kept until exit), or stays next's; the reloadable keys
 * apply either way. */
static void switch_worker(struct worker *w, struct settings *next, const char *producer_key)
{
	char why[256];

	apply_worker_keys(w, next->worker);
	if (producer_key == NULL)
		return;
	supervisor_retire(w->sup, w->live->worker);
	w->live->worker = next->worker;
	next->worker = NULL;
	snprintf(why, sizeof(why), "SIGHUP (%s changed)", producer_key);
	if (supervisor_rebuild(w->sup, w->live->worker, why) != 0)
		log_error("reload: the new producer could not be made after all; the running one "
		          "goes on");
	else if (supervisor_rewatch(w->sup) != 0)
		log_error("reload: out of memory: the new TLS files are not watched");
}

static void no_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
}

/* Whether next's producer settings load, without making it the producer. */
static int try_producer(const struct settings *next, char *why, size_t len)
{
	struct sink *probe = NULL;
	char err[1024];

	if (sink_open(next->worker, no_delivery, NULL, &probe, err, sizeof(err)) != 0) {
		snprintf(why, len, "the new producer settings do not load: %s", err);
		return -1;
	}
	sink_destroy(probe);
	return 0;
}

/* Loads the configuration with the REST connectors rest (taken; NULL:
 * those kept beside the offsets file) and applies it as a whole. Returns 0,
 * or -1 with why: refused, the running configuration stays. */
static int reload(struct worker *w, struct restconns *rest, char *why, size_t len)
{
	struct settings *next = calloc(1, sizeof(*next));
	const char *key;
	int rc = -1;

	if (next == NULL) {
		restconns_destroy(rest);
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (settings_load_with(w->paths, w->npaths, rest, next, why, len) != 0)
		goto out;
	key = config_section_diff(w->live->worker, next->worker, with_producer);
	if (key != NULL) {
		snprintf(why, len,
		         "%s changed, which needs a new offset store or client: restart skiff to "
		         "apply it (systemctl restart skiff)",
		         key);
		goto out;
	}
	if (check_new(w, next, why, len) != 0)
		goto out;
	key = config_section_diff(w->live->worker, next->worker, reloadable);
	if (key != NULL && try_producer(next, why, len) != 0)
		goto out;
	settings_log_notices(next);
	rc = switch_connectors(w, next, why, len);
	if (rc < 0)
		goto out; /* nothing changed */
	if (rc > 0) {
		char again[1024] = "";

		rc = -1;
		/* Back to the connectors before: next holds them now. */
		if (switch_connectors(w, next, again, sizeof(again)) != 0)
			log_error("reload: a connector cannot reopen with its previous settings "
			          "either: %s",
			          again);
		goto out;
	}
	switch_worker(w, next, key);
	eos_reload(w->eos, w->settings, w->flush_interval);
	rc = 0;
out:
	settings_destroy(next);
	free(next);
	return rc;
}

void worker_reload(struct worker *w)
{
	struct restconns *rest = NULL;
	char why[2048];

	if (w->live == NULL) {
		log_notice("SIGHUP: no configuration files to reload; ignored");
		return;
	}
	log_notice("SIGHUP: reloading the configuration");
	notify_send(w->notify, "RELOADING=1");
	/* The REST API's connectors as they run (kept or not). */
	if (restconns_with(w->live->rest, NULL, NULL, false, &rest) != 0)
		log_error("reload refused: out of memory; the running configuration stays");
	else if (reload(w, rest, why, sizeof(why)) != 0)
		log_error("reload refused: %s; the running configuration stays", why);
	else
		log_notice("reload done");
	notify_send(w->notify, "READY=1");
}

/* ---- the REST API's changes ---------------------------------------------- */

/* Connect's words around a configuration the reload refused. */
static void invalid(char *why, size_t len)
{
	char reason[2048];

	snprintf(reason, sizeof(reason), "%s", why);
	snprintf(
	    why, len,
	    "Connector configuration is invalid and contains the following 1 error(s):\n%.1800s\n"
	    "You can also find the above list of errors at the endpoint "
	    "`/connector-plugins/{connectorType}/config/validate`",
	    reason);
}

/* The configuration of live connector cs as written (provider references
 * unresolved): its kept REST one, else its keys read again from its file.
 * Returns a new object of strings, or NULL (out of memory, or the file is
 * unreadable now: why). */
static cJSON *written_config(const struct worker *w, const struct connector_settings *cs, char *why,
                             size_t len)
{
	long at = restconns_find(w->live->rest, cs->name);
	size_t plen = strlen(cs->prefix);
	struct props *p = NULL;
	cJSON *j;

	if (cs->rest && at >= 0)
		return cJSON_Duplicate(restconns_config(w->live->rest, (size_t)at), true);
	if (props_load_file(cs->file, &p, why, len) != 0)
		return NULL;
	j = cJSON_CreateObject();
	if (j != NULL && plen > 0 && cJSON_AddStringToObject(j, "name", cs->name) == NULL)
		goto nomem;
	for (size_t i = 0; j != NULL && i < props_count(p); i++) {
		const char *k = props_key(p, i);

		if (strncmp(k, cs->prefix, plen) != 0)
			continue;
		if (cJSON_AddStringToObject(j, k + plen, props_value(p, i)) == NULL)
			goto nomem;
	}
	props_destroy(p);
	if (j == NULL)
		snprintf(why, len, "out of memory");
	return j;
nomem:
	props_destroy(p);
	cJSON_Delete(j);
	snprintf(why, len, "out of memory");
	return NULL;
}

/* The whole configuration a change leaves (NULL for a deletion). */
static int changed_config(const struct worker *w, const struct worker_change *ch, cJSON **out,
                          char *why, size_t len)
{
	int i = find_connector(w->live, ch->name);

	*out = NULL;
	if (ch->op == REST_DELETE)
		return 0;
	if (ch->op != REST_PATCH) {
		*out = cJSON_Duplicate(ch->config, true);
	} else if (i >= 0 &&
	           (*out = written_config(w, &w->live->connectors[i], why, len)) != NULL) {
		for (const cJSON *kv = ch->config->child; kv != NULL; kv = kv->next) {
			cJSON_DeleteItemFromObjectCaseSensitive(*out, kv->string);
			if (cJSON_IsString(kv) &&
			    cJSON_AddStringToObject(*out, kv->string, kv->valuestring) == NULL) {
				cJSON_Delete(*out);
				*out = NULL;
				break;
			}
		}
	}
	if (*out == NULL && why[0] == '\0')
		snprintf(why, len, "out of memory");
	return *out != NULL ? 0 : -1;
}

/* KIP-980's initial_state of a connector just created. */
static void initial_state(struct worker *w, const char *name, const char *state)
{
	char why[512];
	size_t n = worker_rest_ops.count(w);

	if (state == NULL || strcmp(state, "RUNNING") == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct rest_connector rc;

		worker_rest_ops.connector(w, i, &rc);
		if (strcmp(rc.name, name) == 0)
			(void)worker_rest_ops.control(
			    w, i, strcmp(state, "PAUSED") == 0 ? REST_PAUSE : REST_STOP, why,
			    sizeof(why));
	}
}

void worker_reload_change(struct worker *w)
{
	/* Taken out first: the reply lets the next change in at once. */
	struct worker_change taken = w->change, *ch = &taken;
	struct restconns *rest = NULL;
	cJSON *config = NULL;
	int i, rc = REST_ERR_NOMEM;
	bool created, drop;
	char why[2048] = "";

	memset(&w->change, 0, sizeof(w->change));
	i = find_connector(w->live, ch->name);
	created = ch->op == REST_CREATE || (ch->op == REST_PUT && i < 0);
	/* A deletion of a connector only the API gave drops its entry; one
	 * of the files' is kept as "deleted", or the files would bring it back. */
	drop = ch->op == REST_DELETE && i >= 0 && w->live->connectors[i].rest &&
	       !w->live->connectors[i].in_files;

	log_notice("connector %s: %s (REST API)", ch->name,
	           ch->op == REST_DELETE ? "deleting"
	           : created             ? "creating"
	                                 : "changing its configuration");
	notify_send(w->notify, "RELOADING=1");
	if (changed_config(w, ch, &config, why, sizeof(why)) != 0) {
		rc = why[0] && strcmp(why, "out of memory") != 0 ? REST_ERR : REST_ERR_NOMEM;
		goto out;
	}
	if (restconns_with(w->live->rest, ch->name, config, drop, &rest) != 0) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	if (reload(w, rest, why, sizeof(why)) != 0) {
		log_error(
		    "connector %s: the change is refused: %s; the running configuration stays",
		    ch->name, why);
		invalid(why, sizeof(why));
		rc = REST_ERR_ARG;
		goto out;
	}
	rc = 0;
	if (ch->op == REST_CREATE)
		initial_state(w, ch->name, ch->initial_state);
	if (restconns_path(w->live->rest) == NULL) {
		log_warn("connector %s: changed through the REST API until a restart: with "
		         "offset.storage.topic alone there is no state directory to keep it in",
		         ch->name);
	} else if (restconns_save(w->live->rest, why, sizeof(why)) != 0) {
		log_error("connector %s: changed, but the change could not be kept: %s; it lasts "
		          "until a restart",
		          ch->name, why);
		rc = REST_ERR;
	} else {
		log_notice("connector %s: %s; kept in %s", ch->name,
		           ch->op == REST_DELETE ? "deleted"
		           : created             ? "created"
		                                 : "changed",
		           restconns_path(w->live->rest));
	}
out:
	cJSON_Delete(config);
	notify_send(w->notify, "READY=1");
	rest_changed(ch->waiter, ch->op, ch->name, created, rc, why);
	worker_change_clear(ch);
}

void worker_reload_setup(struct worker *w, struct settings *s, char *const *paths, size_t n,
                         bool cli_log_level)
{
	w->live = s;
	w->paths = paths;
	w->npaths = n;
	w->cli_log_level = cli_log_level;
}
