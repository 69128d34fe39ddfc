/* connectors: the connector slots and each connector's lifecycle. One
 * place opens a connector's source (connector_open: at start, at a reload,
 * at a restart, after a new producer) and one closes it (connector_close:
 * keeping its acknowledged prefix at a stop or restart, abandoning it at a
 * removal or at exit); the REST API's pause, resume, stop and restart are
 * its state machine. Main loop only; connector_acked and
 * connectors_committed run from a delivery report or an exactly-once
 * commit, on the same thread. */
#ifndef SKIFF_CONNECTORS_H
#define SKIFF_CONNECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct acks;
struct commits;
struct conn;
struct connector_settings;
struct connectors;
struct loop;
struct partition;
struct partitions;
struct pipeline;
struct record;
struct stats;

/* What a person asked of a connector through the REST API. */
enum conn_run {
	CONN_RUNNING,
	CONN_PAUSED,   /* no reading; records in flight still acknowledge */
	CONN_STOPPING, /* as paused, until its records in flight are acknowledged */
	CONN_STOPPED,  /* its source closed, its offsets in the store */
};

/* How connector_open finds the slot. */
enum connector_open_how {
	OPEN_NEW,        /* a fresh slot (or one connector_close(CLOSE_ABANDON) freed):
	                  * its source env, batch and counters are made and registered */
	OPEN_REGISTERED, /* a slot connector_close(CLOSE_KEEP_PREFIX) closed: its env,
	                  * batch, counters and events stay as they are (/metrics
	                  * keeps its series), only the source opens again */
};

/* What connector_close does with the records of the connector. */
enum connector_close_how {
	CLOSE_KEEP_PREFIX, /* stop, restart: the acknowledged prefix of each of its
	                    * partitions goes to the store (core/commits.c; written
	                    * at the next flush, due at once) before the source
	                    * closes; the slot keeps its counters for a reopen */
	CLOSE_ABANDON,     /* reload removal, new producer, exit: nothing stored
	                    * (acknowledgements still coming advance nothing), its
	                    * counters retired, everything freed: the slot is a
	                    * tombstone (removed) until an OPEN_NEW */
};

/* Named results of the REST commands. */
enum {
	CONNECTORS_ERR_STATE = -2, /* FAILED or restarting: only a restart helps */
	CONNECTORS_ERR_OPEN = -3,  /* its source did not open again (errbuf: why) */
	CONNECTORS_ERR_NOMEM = -4, /* out of memory */
};

/* Short text for a CONNECTORS_ERR_* code. */
const char *connectors_strerror(int err);

/* What connectors.c calls of the rest of the worker, filled by worker.c
 * (so that nothing here calls what calls it back); ctx is
 * connectors_conf.ctx. */
struct connector_hooks {
	/* The source's side of the worker (core/source_env.c): its env, its
	 * counters and deadline (0 or WORKER_ERR_NOMEM), freeing both, and the
	 * log exporter (what closing a source lost). */
	void (*source_env)(void *ctx, struct conn *c);
	int (*source_register)(struct conn *c);
	void (*source_free)(struct conn *c);
	void (*log_counters)(void *ctx);
	/* A partition's series go (control/pmetrics.c). */
	void (*unshow)(struct partition *p);
	/* Exactly-once: the open transaction holds offsets of c the store lacks
	 * (eos_holds); commit it at the end of this turn
	 * (eos_commit_soon). */
	bool (*txn_holds)(void *ctx, const struct conn *c);
	void (*txn_commit_soon)(void *ctx);
	/* A stop put offsets into the store: the next flush is due now. */
	void (*flush_soon)(void *ctx);
};

/* What the connectors work with, all the worker's and borrowed for the
 * set's life: the loop (a source's watches and deadline), the registry (its
 * counters), the partition table and the commits (its offsets), the
 * record path (its clocks); rest: the REST API listens (it may add a
 * connector: none at all is no exit); ctx: the hooks' (the worker). */
struct connectors_conf {
	struct loop *loop;
	struct stats *stats;
	struct partitions *parts;
	struct commits *commits;
	const struct pipeline *pipe; /* the turn's clocks, stamping acks and heads */
	const struct connector_hooks *hooks;
	void *ctx;
	bool rest; /* the REST API or the fleet may add connectors: none is no exit */
	/* The fleet steers the device: every connector failed is no exit either
	 * (Connect's distributed worker stays up so; the fleet repairs or
	 * removes them, and sees them FAILED in the status topic). */
	bool steered;
};

/* The connector slots (struct connectors, opaque): each slot its own
 * allocation (the loop holds pointers to them), as many as the settings
 * ever had (a removed connector's slot stays, a tombstone, for a reload to
 * reuse), bounded by memory only. connectors_new returns 0 or
 * CONNECTORS_ERR_NOMEM; the worker owns the set (connectors_destroy). */
int connectors_new(const struct connectors_conf *conf, struct connectors **out);

/* The ack slots of the producer (borrowed; a new producer brings new
 * ones): the slots a closing connector's records in flight are abandoned
 * from. */
void connectors_set_acks(struct connectors *set, struct acks *acks);

/* How many slots the set has, tombstones included; the slot at i (i below
 * the count), the set's: valid until connectors_destroy. */
size_t connectors_count(const struct connectors *set);
struct conn *connectors_at(const struct connectors *set, size_t i);

/* A new slot, zeroed but for its set, at the end of the set
 * (its index: the count before), or NULL when memory is short. The set owns
 * it (freed by connectors_destroy); the loop may hold pointers to it. */
struct conn *connectors_slot(struct connectors *set);

/* Opens connector cs in slot c, as how says (OPEN_REGISTERED: cs is c's
 * own): env, batch, counters, tolerance, then the source from the stored
 * offsets; the batch starts empty and the source is read at once. Returns
 * 0, or WORKER_ERR_NOMEM (memory; a restart may pass), WORKER_ERR_CONFIG
 * (the source refused its settings) or WORKER_ERR (the source's transient
 * failure), with errbuf "connector X: why". After OPEN_NEW failed with
 * memory short before its counters existed, c has no batch (records NULL):
 * close it with CLOSE_ABANDON. */
int connector_open(struct conn *c, const struct connector_settings *cs, enum connector_open_how how,
                   char *errbuf, size_t errlen);

/* Closes c's source (once: c's ctx is NULL after) and lets go of its
 * partitions, as how says. A slot no connector opened in becomes a
 * tombstone. */
void connector_close(struct conn *c, enum connector_close_how how);

/* Stops c for good (FAILED, why shown as its trace): its committed offsets
 * stay short of the failed record; logged once. config: no restart fixes
 * the cause (exit 78 once no connector runs). A REST restart clears it. */
void connector_fail(struct conn *c, bool config, const char *why);

/* c's source could not open (why: what and why, logged by the caller): c
 * stays FAILED with why as its trace, polling nothing until a restart or a
 * reload that changes it; config as connector_fail's. A slot whose
 * counters were never made (out of memory before them, or nothing opened
 * in it) becomes a tombstone instead. */
void connector_fail_open(struct conn *c, bool config, const char *why);

/* A count bumped whenever a connector's state or trace changes (run,
 * restarting, stop_paused, FAILED and its trace), a connector is opened, or
 * a slot is added or becomes a tombstone; never by records, acknowledgements
 * or flushes. core/query.h's state_epoch. */
uint64_t connectors_epoch(const struct connectors *set);

/* 0 while a connector runs; once none does, WORKER_EXIT_CONFIG when each
 * stopped for a reason no restart fixes, else WORKER_EXIT_TEMPFAIL. None at
 * all runs on while the REST API listens (it may add one). */
int connectors_exit_code(const struct connectors *set);

/* The REST API's commands (Connect's semantics). pause: no more reading,
 * records in flight acknowledge; resume: reading again; stop: as pause,
 * then once nothing of c is in flight its prefix is stored and its source
 * closed (STOPPED); restart: a stop, then an open from the stored offsets
 * in the state c had (a failed one runs; a stopped one stays stopped).
 * pause and resume of a STOPPED connector open it again first. Each
 * returns 0, CONNECTORS_ERR_STATE (c FAILED or restarting) or
 * CONNECTORS_ERR_OPEN, with errbuf saying why; restart cannot fail (a
 * source that does not open leaves c FAILED with the reason). */
int connector_pause(struct conn *c, char *errbuf, size_t errlen);
int connector_resume(struct conn *c, char *errbuf, size_t errlen);
int connector_stop(struct conn *c, char *errbuf, size_t errlen);
void connector_restart(struct conn *c);

/* A delivery report of a record of p was counted (acks_done; ok: Kafka
 * acknowledged it, which p counts): completes the stop of p's connector
 * once nothing of it is in flight. p may be freed by it. */
void connector_acked(struct partition *p, bool ok);

/* r went to the producer, to topic (vlen: its value's bytes as
 * converted): counted in its partition, topic among its connector's active
 * ones (Connect's GET .../topics). */
void connector_produced(const struct record *r, const char *topic, size_t vlen);

/* Forgets c's active topics (its source closes, or the REST API resets
 * them). */
void connector_forget_topics(struct conn *c);

/* An exactly-once transaction committed: completes the stops that waited
 * for it to carry their connectors' offsets. */
void connectors_committed(struct connectors *set);

/* At exit: closes every connector (CLOSE_ABANDON) and frees the slots and
 * the set. */
void connectors_destroy(struct connectors *set);

#endif
