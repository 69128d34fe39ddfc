/* reload: SIGHUP and the control clients' connector changes (the REST
 * API's, a fleet's: each aimed at a layer, config/connlayer.h) applied to the
 * running worker (what a reload may change, and how it keeps the promise
 * that an offset advances only past acknowledged records: core/reload.c's
 * header comment, docs/operations.md "Reload").
 *
 * The reload owns the configuration it may replace (the live settings, the
 * files they were read from, whether --log-level was given) and the one
 * pending change. It reaches the worker only through struct
 * reload_ops, which core/worker.c fills: the drain, the connector slots,
 * the worker section's timings, exactly-once's boundary, systemd's status.
 * The producer (kafka/supervisor.h), the offset store and the query
 * (core/query.h, for a created connector's initial state) it calls
 * directly: none of them calls back. Main loop only. */
#ifndef SKIFF_RELOAD_H
#define SKIFF_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

struct connector_settings;
struct offsets;
struct query;
struct query_change;
struct reload;
struct rest_change;
struct settings;
struct supervisor;
struct worker_conf;

/* What a reload asks of the worker. Slots are the worker's connector slots
 * by index, tombstones (removed connectors) included; an index stays valid
 * for the life of the worker. */
struct reload_ops {
	/* Runs the loop, nothing read, until nothing is in flight, then writes
	 * the offsets (each wait at most offset.flush.timeout.ms); with
	 * exactly-once the open transaction commits first. Returns the records
	 * still in flight. */
	int (*drain_and_flush)(void *ctx);
	/* The worker section wc's flush timings and health bound apply now. */
	void (*apply)(void *ctx, const struct worker_conf *wc);
	/* Exactly-once: the boundary the connectors ask for after a reload. */
	void (*eos_reload)(void *ctx);
	/* systemd's state: "RELOADING=1", "READY=1". */
	void (*notify)(void *ctx, const char *state);
	size_t (*slots)(void *ctx);
	/* Slot k's connector settings, NULL for a tombstone. */
	const struct connector_settings *(*slot)(void *ctx, size_t k);
	/* Slot k runs on unchanged with cs (its settings, moved). */
	void (*rebind)(void *ctx, size_t k, const struct connector_settings *cs);
	/* A new slot after the others: its index, or -1 when memory is short. */
	long (*add)(void *ctx);
	/* Opens cs in slot k from the stored offsets: 0, or -1 with why, the
	 * slot then FAILED with why as its trace (or a tombstone again when
	 * memory was short before its counters existed). */
	int (*open)(void *ctx, size_t k, const struct connector_settings *cs, char *why,
	            size_t len);
	/* Slot k, not opened, stays FAILED with why (as open's failure). */
	void (*fail)(void *ctx, size_t k, const char *why);
	/* Closes slot k abandoning its records in flight: a tombstone. */
	void (*close)(void *ctx, size_t k);
	/* A change was taken: the loop's next turn must not sleep, so that
	 * reload_turn applies it (one taken at a turn's end would else wait
	 * for whatever wakes an idle skiff next). */
	void (*soon)(void *ctx);
};

/* What the worker gives the reload, all borrowed and alive as long as it. */
struct reload_env {
	const struct reload_ops *ops;
	void *ctx;
	struct supervisor *sup;    /* the producer: a new one when its keys change */
	const struct query *query; /* a created connector's initial_state */
	const bool *draining;      /* the worker drains: a REST change is refused */
};

/* Makes *out, with no configuration to reload until reload_setup. Returns
 * 0, or -1 when memory is short. Free with reload_destroy. */
int reload_new(const struct reload_env *env, struct reload **out);

/* Lets SIGHUP and the REST API's changes reload: s is the settings the
 * worker runs (replaced in place by a reload), paths (n) the files they
 * were read from, o the loaded store (an added connector's offsets are
 * adopted into it); all borrowed, outliving r. cli_log_level: --log-level
 * was given and wins over log.level. */
void reload_setup(struct reload *r, struct settings *s, struct offsets *o, char *const *paths,
                  size_t n, bool cli_log_level);

/* SIGHUP came: reload at the end of the turn (reload_turn). */
void reload_ask(struct reload *r);

/* At the end of a turn (not while the worker stops): the reload SIGHUP
 * asked for, then the REST change taken, each applied as a whole or
 * refused with the running configuration kept. */
void reload_turn(struct reload *r);

/* The REST API's connector change (query_ops.change): taken now, applied
 * by reload_turn, answered then through rest_changed. Returns REST_PENDING,
 * or a REST_ERR_* code with errbuf (no configuration files, another change
 * or a drain under way, memory). */
int reload_change(struct reload *r, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen);

/* A control client's change (query_ops.layer_change, core/query.h): taken
 * now, applied by reload_turn as the REST API's are (one path), its outcome
 * given to ch->done then. Returns REST_PENDING, or a REST_ERR_* code with
 * errbuf (as reload_change; done not called). */
int reload_layer_change(struct reload *r, const struct query_change *ch, char *errbuf,
                        size_t errlen);

/* Frees r and a change not yet applied, unanswered (its client, the REST
 * server or another, is destroyed first and forgets it). Accepts NULL. */
void reload_destroy(struct reload *r);

#endif
