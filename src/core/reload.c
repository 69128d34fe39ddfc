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
 * The control clients' connector changes go the same way, one at a time:
 * the REST API's POST /connectors, PUT and PATCH .../config and DELETE
 * /connectors/{name} (reload_change), a fleet's (reload_layer_change, with
 * its vet and done callbacks). Each is aimed at a layer
 * (config/connlayer.h: files < fleet < REST API), taken at once and applied
 * by reload_turn: its layer with the change laid over the files as at
 * start, the whole configuration reloaded (a layer's policy and the
 * client's vet may refuse it, before anything stops), the change kept in
 * its layer's file only once applied, and the client answered (done, or
 * the REST API's waiter) from that one path.
 *
 * The settings a source was opened from stay alive as long as the source:
 * an unchanged connector keeps its section objects (they are moved into the
 * new settings). The worker is reached through reload_ops only
 * (core/reload.h). Main thread only. */
#include "core/reload.h"

#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "control/rest.h"
#include "config/connlayer.h"
#include "core/log.h"
#include "core/query.h"
#include "core/source.h"
#include "fleet/fleetconf.h"
#include "kafka/sink_kafka.h"
#include "kafka/supervisor.h"
#include "offsets/offsets.h"

#include <cjson/cJSON.h>

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

/* The first worker key that differs between a and b but those of ignore,
 * and but the fleet's while fleet.enabled is off on both sides: they mean
 * nothing then, as when Connect's config.storage.* and status.storage.*
 * were inert keys (a Connect worker file's change needs no restart). */
static const char *worker_diff(const struct config_section *a, const struct config_section *b,
                               const char *const *ignore)
{
	const char *list[32];
	size_t n = 0;

	while (ignore[n] != NULL && n < sizeof(list) / sizeof(list[0]) - 4) {
		list[n] = ignore[n];
		n++;
	}
	if (!fleetconf_conf(a)->enabled && !fleetconf_conf(b)->enabled) {
		list[n++] = "fleet.";
		list[n++] = "config.storage.";
		list[n++] = "status.storage.";
	}
	list[n] = NULL;
	return config_section_diff(a, b, list);
}

/* A connector change a control client asked for (reload_change and
 * reload_layer_change take it, reload_turn applies it), aimed at a layer. */
struct change {
	bool asked;
	enum connlayer_kind layer;
	int op; /* enum rest_change_op (a client's PUT and DELETE are REST_PUT, REST_DELETE) */
	char *name;
	cJSON *config; /* REST_CREATE, REST_PUT: whole; REST_PATCH: the patch */
	char *initial_state;
	query_vet_fn vet;
	query_done_fn done; /* NULL: the REST API's, answered through rest_changed */
	void *arg;          /* vet's and done's */
	void *waiter;       /* rest.c's, for rest_changed */
};

struct reload {
	struct reload_env env;
	const struct reload_ops *ops; /* env.ops */
	void *ctx;                    /* env.ctx */
	struct settings *live;        /* the settings a reload replaces; NULL: no reload */
	struct offsets *offsets;      /* the store: an added connector's offsets */
	char *const *paths;           /* the configuration files */
	size_t npaths;
	bool cli_log_level;    /* --log-level was given: it wins over log.level */
	bool asked;            /* SIGHUP arrived: reload at the end of this turn */
	int64_t flush_timeout; /* offset.flush.timeout.ms as applied, for the log */
	struct change change;
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
static int check_new(const struct reload *r, const struct settings *next, char *why, size_t len)
{
	char err[1024];

	for (size_t j = 0; j < next->nconnectors; j++) {
		const struct connector_settings *n = &next->connectors[j];
		int i = find_connector(r->live, n->name);

		if (n->ops->check == NULL || (i >= 0 && same_connector(&r->live->connectors[i], n)))
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
static bool plan_conns(const struct reload *r, const struct settings *next, struct slots *sl)
{
	bool stops = false;

	for (size_t k = 0; k < sl->n; k++) {
		const struct connector_settings *cs = r->ops->slot(r->ctx, k);
		int t = cs == NULL ? -1 : find_connector(next, cs->name);

		sl->target[k] = t;
		sl->plan[k] = t < 0                                      ? REMOVE
		              : same_connector(cs, &next->connectors[t]) ? KEEP
		                                                         : CHANGE;
		stops |= cs != NULL && sl->plan[k] != KEEP;
	}
	return stops;
}

/* Opens connector j of the live settings in slot k (changed: it ran with
 * other settings before). Returns 0, or -1 with why (the slot then FAILED,
 * reload_ops.open). */
static int start_conn(struct reload *r, size_t k, int j, bool changed, char *why, size_t len)
{
	struct connector_settings *cs = &r->live->connectors[j];

	/* An added connector's offsets in the topic were not read at start. */
	if (!changed && offsets_adopt(r->offsets, cs->name, why, len) != 0) {
		log_error("connector %s: not started: its offsets cannot be read: %s", cs->name,
		          why);
		r->ops->fail(r->ctx, k, why);
		return -1;
	}
	if (!changed && why[0] != '\0')
		log_warn("%s", why);
	if (r->ops->open(r->ctx, k, cs, why, len) != 0)
		return -1;
	log_notice("connector %s: %s", cs->name,
	           changed ? "restarted with its new settings" : "started");
	return 0;
}

/* A free slot for an added connector, marked taken: a tombstone among the
 * slots sl plans, or a new one after every slot. -1 when memory is short. */
static long free_slot(struct reload *r, struct slots *sl)
{
	for (size_t k = 0; k < sl->n; k++)
		if (r->ops->slot(r->ctx, k) == NULL && !sl->taken[k]) {
			sl->taken[k] = true;
			return (long)k;
		}
	return r->ops->add(r->ctx);
}

/* log.level (unless --log-level was given), the flush timings and the
 * health bound. */
static void apply_worker_keys(struct reload *r, const struct config_section *nw)
{
	const struct worker_conf *wc = settings_worker(nw);
	enum log_level level = wc->log_level >= 0 ? (enum log_level)wc->log_level : LOG_INFO;

	if (!r->cli_log_level && level != log_get_level()) {
		const char *lv = config_shown(nw, "log.level");

		log_notice("log level: %s", lv != NULL ? lv : "info (log.level unset)");
		log_set_level(level);
	}
	r->flush_timeout = wc->flush_timeout_ms;
	r->ops->apply(r->ctx, wc);
}

/* Stops the connectors that change or go (after the drain), and moves the
 * settings of those that stay into next. Fills sl's cs_idx and taken. */
static void stop_conns(struct reload *r, struct settings *next, struct slots *sl)
{
	for (size_t k = 0; k < sl->n; k++) {
		const struct connector_settings *cs = r->ops->slot(r->ctx, k);

		if (cs == NULL)
			continue;
		sl->cs_idx[k] = (int)(cs - r->live->connectors);
		if (sl->plan[k] != REMOVE)
			sl->taken[k] = true;
		if (sl->plan[k] == KEEP) {
			swap_cs(&next->connectors[sl->target[k]],
			        &r->live->connectors[sl->cs_idx[k]]);
			continue;
		}
		log_notice("connector %s: %s", cs->name,
		           sl->plan[k] == REMOVE ? "removed"
		                                 : "stopped to restart with new settings");
		r->ops->close(r->ctx, k);
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
static int switch_connectors(struct reload *r, struct settings *next, char *why, size_t len)
{
	struct slots sl;
	char err[1024];
	int left, bad = 0;

	if (slots_alloc(&sl, r->ops->slots(r->ctx), next->nconnectors) != 0) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (plan_conns(r, next, &sl) && (left = r->ops->drain_and_flush(r->ctx)) > 0)
		log_warn(
		    "reload: %d records still unacknowledged after offset.flush.timeout.ms=%lld; "
		    "those of connectors that stop are read again from the stored offset",
		    left, (long long)r->flush_timeout);
	stop_conns(r, next, &sl);
	swap_connectors(r->live, next);
	for (size_t k = 0; k < sl.n; k++) {
		int j = sl.target[k];

		if (j < 0 || (r->ops->slot(r->ctx, k) == NULL && sl.plan[k] != CHANGE))
			continue;
		sl.placed[j] = true;
		if (sl.plan[k] == KEEP)
			r->ops->rebind(r->ctx, k, &r->live->connectors[j]);
		else if (start_conn(r, k, j, true, err, sizeof(err)) != 0 && bad++ == 0)
			snprintf(why, len, "%s", err);
	}
	for (size_t j = 0; j < r->live->nconnectors; j++) {
		long k = sl.placed[j] ? -1 : free_slot(r, &sl);

		if (k >= 0) {
			if (start_conn(r, (size_t)k, (int)j, false, err, sizeof(err)) != 0 &&
			    bad++ == 0)
				snprintf(why, len, "%s", err);
		} else if (!sl.placed[j] && bad++ == 0) {
			snprintf(why, len, "connector %s: not started: out of memory",
			         r->live->connectors[j].name);
		}
	}
	slots_free(&sl);
	return bad;
}

/* The worker section's part: the new one goes live with a new producer
 * (the old one kept until exit), or stays next's; the reloadable keys
 * apply either way. */
static void switch_worker(struct reload *r, struct settings *next, const char *producer_key)
{
	char why[256];

	apply_worker_keys(r, next->worker);
	if (producer_key == NULL)
		return;
	supervisor_retire(r->env.sup, r->live->worker);
	r->live->worker = next->worker;
	next->worker = NULL;
	snprintf(why, sizeof(why), "SIGHUP (%s changed)", producer_key);
	if (supervisor_rebuild(r->env.sup, r->live->worker, why) != 0)
		log_error("reload: the new producer could not be made after all; the running one "
		          "goes on");
	else if (supervisor_rewatch(r->env.sup) != 0)
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

/* The live layers (kept or not) into layers, copies; layer kind's with
 * name's entry config (NULL: a deletion), or dropped (drop; name NULL:
 * none changed). Returns 0, or -1 (out of memory, none made). */
static int copy_layers(const struct reload *r, struct connlayer **layers, enum connlayer_kind kind,
                       const char *name, const cJSON *config, bool drop)
{
	memset(layers, 0, CONNLAYER_KINDS * sizeof(*layers));
	for (enum connlayer_kind k = CONNLAYER_FLEET; k < CONNLAYER_KINDS; k++) {
		const struct connlayer *l = r->live->layers[k];
		bool mine = k == kind && name != NULL;

		if (l == NULL ||
		    connlayer_with(l, mine ? name : NULL, config, mine && drop, &layers[k]) == 0)
			continue;
		for (size_t j = 0; j < CONNLAYER_KINDS; j++)
			connlayer_destroy(layers[j]);
		return -1;
	}
	return 0;
}

/* What a change's layer may not do, and its client's vet, on next (the
 * settings it leaves). Returns 0, or -1 with why: refused. */
static int vet_change(const struct change *ch, const struct settings *next, char *why, size_t len)
{
	const struct settings_refusal *no = settings_refused(next, ch->layer, ch->name);
	int j = find_connector(next, ch->name);
	const struct connector_settings *cs = j >= 0 ? &next->connectors[j] : NULL;
	const char *path;

	if (no != NULL) {
		snprintf(why, len, "%s", no->why);
		return -1;
	}
	/* A layer above gives it, or deleted it: the change would be laid
	 * under that. */
	for (enum connlayer_kind k = ch->layer + 1; k < CONNLAYER_KINDS; k++) {
		long at = connlayer_find(next->layers[k], ch->name);

		if (at < 0 || connlayer_replaces(next->layers[ch->layer]))
			continue;
		path = connlayer_path(next->layers[k]);
		snprintf(
		    why, len,
		    "connector %s: the change is refused: %s %s a connector of that name (%s), "
		    "which %s may override only with fleet.allow.replace.local=true",
		    ch->name, connlayer_who(k),
		    connlayer_config(next->layers[k], (size_t)at) != NULL ? "gives" : "deleted",
		    path != NULL ? path : "not kept", connlayer_who(ch->layer));
		return -1;
	}
	if (ch->vet == NULL || cs == NULL || cs->layer != ch->layer || ch->op == REST_DELETE)
		return 0;
	why[0] = '\0';
	if (ch->vet(ch->arg, cs, why, len) == 0)
		return 0;
	if (why[0] == '\0')
		snprintf(why, len, "connector %s: refused by %s", ch->name,
		         connlayer_who(ch->layer));
	return -1;
}

/* Loads the configuration with layers (CONNLAYER_KINDS of them, each taken;
 * NULL: the one kept beside the offsets file) and applies it as a whole;
 * ch: the change it is for (vet_change), NULL for SIGHUP's. Returns 0, or
 * -1 with why: refused, the running configuration stays. */
static int reload(struct reload *r, struct connlayer **layers, const struct change *ch, char *why,
                  size_t len)
{
	struct settings *next = calloc(1, sizeof(*next));
	const char *key;
	int rc = -1;

	if (next == NULL) {
		for (size_t k = 0; k < CONNLAYER_KINDS; k++)
			connlayer_destroy(layers[k]);
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (settings_load_with(r->paths, r->npaths, layers, r->live->guards, next, why, len) != 0)
		goto out;
	key = worker_diff(r->live->worker, next->worker, with_producer);
	if (key != NULL) {
		snprintf(why, len,
		         "%s changed, which needs a new offset store or client: restart skiff to "
		         "apply it (systemctl restart skiff)",
		         key);
		goto out;
	}
	if (check_new(r, next, why, len) != 0)
		goto out;
	if (ch != NULL && vet_change(ch, next, why, len) != 0)
		goto out;
	key = worker_diff(r->live->worker, next->worker, reloadable);
	if (key != NULL && try_producer(next, why, len) != 0)
		goto out;
	settings_log_notices(next);
	rc = switch_connectors(r, next, why, len);
	if (rc < 0)
		goto out; /* nothing changed */
	if (rc > 0) {
		char again[1024] = "";

		rc = -1;
		/* Back to the connectors before: next holds them now. */
		if (switch_connectors(r, next, again, sizeof(again)) != 0)
			log_error("reload: a connector cannot reopen with its previous settings "
			          "either: %s",
			          again);
		goto out;
	}
	switch_worker(r, next, key);
	r->ops->eos_reload(r->ctx);
	rc = 0;
out:
	settings_destroy(next);
	free(next);
	return rc;
}

/* SIGHUP's reload. */
static void reload_files(struct reload *r)
{
	struct connlayer *layers[CONNLAYER_KINDS];
	char why[2048];

	if (r->live == NULL) {
		log_notice("SIGHUP: no configuration files to reload; ignored");
		return;
	}
	log_notice("SIGHUP: reloading the configuration");
	r->ops->notify(r->ctx, "RELOADING=1");
	/* The layers' connectors as they run (kept or not): the fleet's and
	 * the REST API's stay over the files. */
	if (copy_layers(r, layers, CONNLAYER_FILES, NULL, NULL, false) != 0)
		log_error("reload refused: out of memory; the running configuration stays");
	else if (reload(r, layers, NULL, why, sizeof(why)) != 0)
		log_error("reload refused: %s; the running configuration stays", why);
	else
		log_notice("reload done");
	r->ops->notify(r->ctx, "READY=1");
}

/* ---- the control clients' changes ------------------------------------------ */

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
 * unresolved): its layer's entry, else its keys read again from its file.
 * Returns a new object of strings, or NULL (out of memory, or the file is
 * unreadable now: why). */
static cJSON *written_config(const struct reload *r, const struct connector_settings *cs, char *why,
                             size_t len)
{
	const struct connlayer *l = r->live->layers[cs->layer];
	long at = connlayer_find(l, cs->name);
	size_t plen;
	struct props *p = NULL;
	cJSON *j;

	if (cs->layer != CONNLAYER_FILES && at >= 0)
		return cJSON_Duplicate(connlayer_config(l, (size_t)at), true);
	plen = strlen(cs->prefix);
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
static int changed_config(const struct reload *r, const struct change *ch, cJSON **out, char *why,
                          size_t len)
{
	int i = find_connector(r->live, ch->name);

	*out = NULL;
	if (ch->op == REST_DELETE)
		return 0;
	if (ch->op != REST_PATCH) {
		*out = cJSON_Duplicate(ch->config, true);
	} else if (i >= 0 &&
	           (*out = written_config(r, &r->live->connectors[i], why, len)) != NULL) {
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

/* KIP-980's initial_state of a connector just created, through the query
 * as the REST API would ask it. */
static void initial_state(const struct reload *r, const char *name, const char *state)
{
	const struct query *q = r->env.query;
	char why[512];

	if (state == NULL || strcmp(state, "RUNNING") == 0)
		return;
	for (size_t i = 0; i < q->ops->connectors(q->ctx); i++) {
		struct query_conn qc;

		q->ops->connector(q->ctx, i, &qc);
		if (strcmp(qc.name, name) == 0)
			(void)q->ops->command(
			    q->ctx, i, strcmp(state, "PAUSED") == 0 ? QUERY_PAUSE : QUERY_STOP, why,
			    sizeof(why));
	}
}

static void change_clear(struct change *ch)
{
	free(ch->name);
	cJSON_Delete(ch->config);
	free(ch->initial_state);
	memset(ch, 0, sizeof(*ch));
}

/* Whether a layer below layer gives live connector i (-1: none): its
 * deletion is then kept as "deleted", or that one would come back. */
static bool given_below(const struct reload *r, enum connlayer_kind layer, int i)
{
	const struct connector_settings *cs = i >= 0 ? &r->live->connectors[i] : NULL;

	if (cs == NULL)
		return false;
	if (cs->layer < layer)
		return true;
	return cs->over && (cs->layer == layer || cs->under < layer);
}

/* The change's outcome to its client: its done, or the REST API's reply. */
static void answer(const struct change *ch, bool created, int rc, const char *why)
{
	if (ch->done != NULL)
		ch->done(ch->arg, rc, why);
	else
		rest_changed(ch->waiter, ch->op, ch->name, created, rc, why);
}

/* Keeps the change in its layer's file, now that it applies. Returns 0 or
 * REST_ERR with why. */
static int keep_change(const struct reload *r, const struct change *ch, bool created, char *why,
                       size_t len)
{
	const struct connlayer *l = r->live->layers[ch->layer];
	const char *by = ch->layer == CONNLAYER_REST ? "the REST API" : connlayer_who(ch->layer);

	if (connlayer_path(l) == NULL) {
		log_warn("connector %s: changed through %s until a restart: with "
		         "offset.storage.topic alone there is no state directory to keep it in",
		         ch->name, by);
	} else if (connlayer_save(l, why, len) != 0) {
		log_error("connector %s: changed, but the change could not be kept: %s; it lasts "
		          "until a restart",
		          ch->name, why);
		return REST_ERR;
	} else {
		log_notice("connector %s: %s; kept in %s", ch->name,
		           ch->op == REST_DELETE ? "deleted"
		           : created             ? "created"
		                                 : "changed",
		           connlayer_path(l));
	}
	return 0;
}

/* Applies r->change as a reload (the live layers, the change's own with
 * the change) and answers its client. SIGHUP's path: the same loading,
 * refusals, drain and offsets. */
static void apply_change(struct reload *r)
{
	/* Taken out first: the answer lets the next change in at once. */
	struct change taken = r->change, *ch = &taken;
	struct connlayer *layers[CONNLAYER_KINDS];
	const char *by = ch->layer == CONNLAYER_REST ? "REST API" : connlayer_who(ch->layer);
	cJSON *config = NULL;
	int i, rc = REST_ERR_NOMEM;
	bool created, drop;
	char why[2048] = "";

	memset(&r->change, 0, sizeof(r->change));
	i = find_connector(r->live, ch->name);
	created = ch->op == REST_CREATE || (ch->op == REST_PUT && i < 0);
	/* A deletion of a connector only this layer gave drops its entry. */
	drop = ch->op == REST_DELETE && !given_below(r, ch->layer, i);

	log_notice("connector %s: %s (%s)", ch->name,
	           ch->op == REST_DELETE ? "deleting"
	           : created             ? "creating"
	                                 : "changing its configuration",
	           by);
	r->ops->notify(r->ctx, "RELOADING=1");
	if (changed_config(r, ch, &config, why, sizeof(why)) != 0) {
		rc = why[0] && strcmp(why, "out of memory") != 0 ? REST_ERR : REST_ERR_NOMEM;
		goto out;
	}
	if (copy_layers(r, layers, ch->layer, ch->name, config, drop) != 0) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	if (reload(r, layers, ch, why, sizeof(why)) != 0) {
		log_error(
		    "connector %s: the change is refused: %s; the running configuration stays",
		    ch->name, why);
		if (ch->done == NULL)
			invalid(why, sizeof(why));
		rc = REST_ERR_ARG;
		goto out;
	}
	why[0] = '\0';
	if (created)
		initial_state(r, ch->name, ch->initial_state);
	rc = keep_change(r, ch, created, why, sizeof(why));
out:
	cJSON_Delete(config);
	r->ops->notify(r->ctx, "READY=1");
	answer(ch, created, rc, why);
	change_clear(ch);
}

/* Whether a change can be taken now: 0, or REST_ERR_STATE with errbuf. */
static int can_take(const struct reload *r, char *errbuf, size_t errlen)
{
	if (r->live == NULL) {
		snprintf(errbuf, errlen,
		         "this skiff was started without configuration files to "
		         "change");
		return REST_ERR_STATE;
	}
	if (r->change.asked || *r->env.draining) {
		snprintf(
		    errbuf, errlen,
		    "Cannot complete request momentarily due to stale configuration (typically "
		    "caused by a concurrent config change)");
		return REST_ERR_STATE;
	}
	return 0;
}

/* Copies what ch's strings and config are into r->change and marks it
 * asked (REST_PENDING), or clears it (REST_ERR_NOMEM with errbuf). */
static int take(struct reload *r, const char *name, const cJSON *config, const char *state,
                char *errbuf, size_t errlen)
{
	struct change *ch = &r->change;

	ch->name = strdup(name);
	ch->config = config != NULL ? cJSON_Duplicate(config, true) : NULL;
	ch->initial_state = state != NULL ? strdup(state) : NULL;
	if (ch->name == NULL || (config != NULL && ch->config == NULL) ||
	    (state != NULL && ch->initial_state == NULL)) {
		change_clear(ch);
		snprintf(errbuf, errlen, "out of memory");
		return REST_ERR_NOMEM;
	}
	ch->asked = true;
	r->ops->soon(r->ctx);
	return REST_PENDING;
}

/* core/reload.h */
int reload_change(struct reload *r, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen)
{
	int code = can_take(r, errbuf, errlen);

	if (code != 0)
		return code;
	r->change = (struct change){.layer = CONNLAYER_REST, .op = rc->op, .waiter = waiter};
	return take(r, rc->name, rc->config, rc->initial_state, errbuf, errlen);
}

/* core/reload.h */
int reload_layer_change(struct reload *r, const struct query_change *qc, char *errbuf,
                        size_t errlen)
{
	int code = can_take(r, errbuf, errlen);

	if (code != 0)
		return code;
	if (qc->layer != CONNLAYER_FLEET && qc->layer != CONNLAYER_REST) {
		snprintf(errbuf, errlen, "connector %s: no such layer to change", qc->name);
		return REST_ERR_ARG;
	}
	r->change = (struct change){
	    .layer = qc->layer,
	    .op = qc->op == QUERY_CHANGE_DELETE ? REST_DELETE : REST_PUT,
	    .vet = qc->vet,
	    .done = qc->done,
	    .arg = qc->arg,
	};
	return take(r, qc->name, qc->op == QUERY_CHANGE_DELETE ? NULL : qc->config,
	            qc->initial_state, errbuf, errlen);
}

void reload_ask(struct reload *r)
{
	r->asked = true;
}

void reload_turn(struct reload *r)
{
	if (r->asked) {
		r->asked = false;
		reload_files(r);
	}
	if (r->change.asked) {
		r->change.asked = false;
		apply_change(r);
	}
}

int reload_new(const struct reload_env *env, struct reload **out)
{
	struct reload *r = calloc(1, sizeof(*r));

	*out = r;
	if (r == NULL)
		return -1;
	r->env = *env;
	r->ops = env->ops;
	r->ctx = env->ctx;
	return 0;
}

void reload_setup(struct reload *r, struct settings *s, struct offsets *o, char *const *paths,
                  size_t n, bool cli_log_level)
{
	r->live = s;
	r->offsets = o;
	r->paths = paths;
	r->npaths = n;
	r->cli_log_level = cli_log_level;
	r->flush_timeout = settings_worker(s->worker)->flush_timeout_ms;
}

void reload_destroy(struct reload *r)
{
	if (r == NULL)
		return;
	/* A client's change taken but never applied (the worker stopped in the
	 * turn that took it: reload_turn runs only while it goes on): its done
	 * still comes once, so a client closed while it waited is freed. The
	 * REST API's (no done) has no reply to send any more. */
	if (r->change.asked && r->change.done != NULL)
		r->change.done(r->change.arg, REST_ERR_STATE,
		               "skiff stopped before the change could apply");
	change_clear(&r->change);
	free(r);
}
