/* worker_reload: SIGHUP re-reads the configuration files given on the
 * command line and applies what changed, without giving up the promise that
 * an offset advances only past records Kafka acknowledged.
 *
 * - A configuration that does not load (settings_load) or that a source's
 *   check refuses is refused as a whole: the error is logged and the running
 *   configuration stays.
 * - The producer's keys (producer.*, kafka.*, security.protocol, ssl.*,
 *   sasl.*) make a new producer (worker_sink_rebuild: made first, so a key
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
 *   added one opens. A changed one whose new settings cannot be opened is
 *   reopened with its previous ones.
 *
 * The settings a source was opened from stay alive as long as the source:
 * an unchanged connector keeps its section objects (they are moved into the
 * new settings). Main thread only. */
#include "worker.h"
#include "worker_private.h"

#include "config.h"
#include "log.h"
#include "settings.h"
#include "source.h"

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
 * will open. Returns 0, or -1 after logging why the reload is refused. */
static int check_new(const struct worker *w, const struct settings *next)
{
	char why[1024];

	for (size_t j = 0; j < next->nconnectors; j++) {
		const struct connector_settings *n = &next->connectors[j];
		int i = find_connector(w->live, n->name);

		if (n->ops->check == NULL || (i >= 0 && same_connector(&w->live->connectors[i], n)))
			continue;
		if (n->ops->check(n->cfg, n->name, why, sizeof(why)) == SOURCE_ERR_CONFIG) {
			log_error("reload refused: connector %s: %s; the running configuration "
			          "stays",
			          n->name, why);
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
		worker_conn_close(w, c);
		return;
	}
	c->stopped = true;
	c->config_error = true;
	c->trace = strdup(why); /* NULL: FAILED without the text */
}

/* Opens connector j of the live settings in slot c; when that fails and
 * old (its previous settings) is given, reopens with those (moved back into
 * the live settings). */
static void start_conn(struct worker *w, struct conn *c, int j, struct connector_settings *old)
{
	struct connector_settings *cs = &w->live->connectors[j];
	char why[1024];

	if (worker_conn_open(w, c, cs, why, sizeof(why)) == 0) {
		log_notice("connector %s: %s", cs->name,
		           old ? "restarted with its new settings" : "started");
		return;
	}
	log_error("connector %s: cannot start with the new settings: %s", cs->name, why);
	if (old == NULL) {
		failed(w, c, why);
		return;
	}
	worker_conn_close(w, c);
	swap_cs(cs, old);
	if (worker_conn_open(w, c, cs, why, sizeof(why)) == 0) {
		log_notice("connector %s: runs on with its previous settings", cs->name);
		return;
	}
	log_error("connector %s: cannot reopen with its previous settings either: %s", cs->name,
	          why);
	failed(w, c, why);
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
	return worker_conn_slot(w);
}

/* log.level (unless --log-level was given), the flush timings and the
 * health bound. */
static void apply_worker_keys(struct worker *w, const struct config_section *nw)
{
	const char *lv = config_str(nw, "log.level");
	enum log_level level = LOG_INFO;

	if (!w->cli_log_level && (lv == NULL || log_level_parse(lv, &level) == 0) &&
	    level != log_get_level()) {
		log_notice("log level: %s", lv != NULL ? lv : "info (log.level unset)");
		log_set_level(level);
	}
	w->flush_interval = config_int(nw, "offset.flush.interval.ms");
	w->flush_timeout = config_int(nw, "offset.flush.timeout.ms");
	w->health_ack_ms = config_int(nw, "health.ack.timeout.ms");
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
		worker_conn_close(w, c);
	}
}

static void apply(struct worker *w, struct settings *next, bool new_producer, struct slots *sl)
{
	struct config_section *ws;
	struct settings t;
	int left;

	if (plan_conns(w, next, sl) && (left = worker_drain_and_flush(w)) > 0)
		log_warn(
		    "reload: %d records still unacknowledged after offset.flush.timeout.ms=%lld; "
		    "those of connectors that stop are read again from the stored offset",
		    left, (long long)w->flush_timeout);
	stop_conns(w, next, sl);
	apply_worker_keys(w, next->worker);
	/* The new settings go live; the producer keeps the worker section it
	 * was built from (equal but for the reloadable keys). A new producer
	 * was built from the new one: that goes live, and the old one is
	 * retired (kept until exit). */
	t = *w->live;
	*w->live = *next;
	*next = t;
	ws = w->live->worker;
	if (new_producer) {
		worker_sink_retire(w, next->worker);
		next->worker = NULL;
	} else {
		w->live->worker = next->worker;
		next->worker = ws;
	}
	for (size_t k = 0; k < sl->n; k++) {
		int j = sl->target[k];

		if (j < 0 || (w->conns[k]->removed && sl->plan[k] != CHANGE))
			continue;
		sl->placed[j] = true;
		if (sl->plan[k] == KEEP)
			w->conns[k]->cs = &w->live->connectors[j];
		else
			start_conn(w, w->conns[k], j, &next->connectors[sl->cs_idx[k]]);
	}
	for (size_t j = 0; j < w->live->nconnectors; j++) {
		struct conn *c = sl->placed[j] ? NULL : free_slot(w, sl);

		if (c != NULL)
			start_conn(w, c, (int)j, NULL);
		else if (!sl->placed[j])
			log_error("connector %s: not started: out of memory",
			          w->live->connectors[j].name);
	}
}

void worker_reload(struct worker *w)
{
	struct settings *next;
	struct slots sl;
	bool planned = false;
	char why[2048];
	const char *key;

	if (w->live == NULL) {
		log_notice("SIGHUP: no configuration files to reload; ignored");
		return;
	}
	log_notice("SIGHUP: reloading the configuration");
	worker_notify(w, "RELOADING=1");
	next = calloc(1, sizeof(*next));
	if (next == NULL) {
		log_error("reload refused: out of memory; the running configuration stays");
		goto out;
	}
	if (settings_load(w->paths, w->npaths, next, why, sizeof(why)) != 0) {
		log_error("reload refused: %s; the running configuration stays", why);
		goto out;
	}
	key = config_section_diff(w->live->worker, next->worker, with_producer);
	if (key != NULL) {
		log_error("reload refused: %s changed, which needs a new offset store or client: "
		          "restart skiff to apply it (systemctl restart skiff); the running "
		          "configuration stays",
		          key);
		goto out;
	}
	if (check_new(w, next) != 0)
		goto out;
	if (slots_alloc(&sl, w->nconns, next->nconnectors) != 0) {
		log_error("reload refused: out of memory; the running configuration stays");
		goto out;
	}
	planned = true;
	key = config_section_diff(w->live->worker, next->worker, reloadable);
	if (key != NULL) {
		snprintf(why, sizeof(why), "SIGHUP (%s changed)", key);
		if (worker_sink_rebuild(w, next->worker, why) != 0) {
			log_error("reload refused: the new producer settings do not load; the "
			          "running configuration stays");
			goto out;
		}
	}
	settings_log_notices(next);
	apply(w, next, key != NULL, &sl);
	if (key != NULL && worker_sink_rewatch(w) != 0)
		log_error("reload: out of memory: the new TLS files are not watched");
	log_notice("reload done");
out:
	if (planned)
		slots_free(&sl);
	if (next != NULL)
		settings_destroy(next);
	free(next);
	worker_notify(w, "READY=1");
}

void worker_reload_setup(struct worker *w, struct settings *s, char *const *paths, size_t n,
                         bool cli_log_level)
{
	w->live = s;
	w->paths = paths;
	w->npaths = n;
	w->cli_log_level = cli_log_level;
}
