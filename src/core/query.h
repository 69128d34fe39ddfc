/* query: the pipeline as the control interfaces see it (control/: the REST
 * API, the status socket, systemd's notifications, the metrics). A const
 * ops table and a context: read-only views of the connectors, their
 * partitions, the offset flushes and the producer, and the few named
 * commands a person may give (a connector's pause/resume/stop/restart,
 * KIP-875's offset edits, a connector change). A control client sees the
 * worker through this and nothing else, so it can be tested over a fake
 * (tests/unit/queryfake.c) and no control file includes the worker's
 * private header.
 *
 * The worker fills it (host_query_ops over a struct query_host,
 * core/query.c). Connector indexes count live connectors only (a reload's
 * tombstones are skipped), 0..connectors-1, as the REST API numbers them;
 * they and every string a view borrows stay valid until the loop turns
 * again. Main loop only. */
#ifndef SKIFF_QUERY_H
#define SKIFF_QUERY_H

#include "config/connlayer.h"
#include "core/sink.h"
#include "core/source.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config_section;
struct connector_settings;
struct offsets_doc_entry;
struct rest_change;
struct stats;
struct pseries; /* control/pmetrics.c: a partition's series, when shown */

/* A connector's state as a person sees it. */
enum query_state {
	QUERY_RUNNING,
	QUERY_PAUSED,
	QUERY_STOPPING, /* stopped by a person; records in flight still acknowledge */
	QUERY_STOPPED,  /* its source closed, its offsets in the store */
	QUERY_FAILED,   /* failed for good, until a restart */
};

struct query_conn {
	const char *name;
	enum query_state state;
	bool restarting;                  /* a restart: stopping (or FAILED), then opened again */
	bool stop_paused;                 /* QUERY_STOPPING: it was paused before */
	const char *trace;                /* QUERY_FAILED: why; NULL: no reason kept */
	uint64_t produced, acked, failed; /* records, since the start */
	int64_t last_ack_ms;              /* loop_now_ms() of its last acknowledgement, 0: none */
	const char *const *classes;       /* its plugin's class names, NULL-terminated */
	const struct config_section *cfg; /* its configuration, for GET .../config */
};

struct query_part {
	const char *key; /* ["connector",{partition map}] */
	size_t conn;     /* its connector's index */
	uint64_t produced, acked, read_bytes;
	uint32_t in_flight;  /* records waiting for Kafka's acknowledgement */
	int64_t waited_ms;   /* how long the oldest of them has waited, at now */
	int64_t last_ack_ms; /* the wall clock's ms of the last acknowledgement, 0: none */
	/* Where control keeps the partition's series (control/pmetrics.c);
	 * NULL there: not shown. The partition never reads it; the worker
	 * hands it to pmetrics_unshow when the partition goes. */
	struct pseries **shown;
};

/* The offset flush, and the limits the worker's section sets for control
 * (both change with a reload). */
struct query_flush {
	int last;            /* 0, or the offsets_* code of the last write's failure */
	int64_t last_ms;     /* loop_now_ms() when the last write completed, 0: never */
	int failures_in_row; /* 3 pause reading */
	int64_t ack_timeout; /* health.ack.timeout.ms */
	size_t part_limit;   /* metrics.partition.limit */
};

struct query_producer {
	struct sink_stats stats;
	uint64_t sent_before; /* bytes the producers before this one sent */
	int in_flight;        /* records waiting for a delivery report */
	int64_t last_ack_ms;  /* loop_now_ms() of the last acknowledgement, 0: none */
};

/* A partition's backlog as its source tells it (query_ops.backlog): p is
 * the partition's view (valid during the call), n in unit. */
typedef void (*query_backlog_fn)(void *arg, const struct query_part *p, enum source_unit unit,
                                 uint64_t n);

/* What a person may ask of one connector. */
enum query_command {
	QUERY_PAUSE,
	QUERY_RESUME,
	QUERY_STOP,
	QUERY_RESTART,
};

/* What a client's change does to its layer's entry of the connector. */
enum query_change_op {
	QUERY_CHANGE_PUT,    /* the whole configuration: creates or replaces it */
	QUERY_CHANGE_DELETE, /* removes the connector (a layer below's is kept off) */
};

/* Inside the reload, on the connector the change leaves, fully resolved
 * (connector class, converters, transforms, ${...} values), before
 * anything stops: 0 lets the change go on; nonzero refuses the whole
 * change with why ("connector X: ..."): the running configuration stays.
 * cs is valid during the call only. Not called for a deletion. */
typedef int (*query_vet_fn)(void *arg, const struct connector_settings *cs, char *why, size_t len);

/* The outcome of a change, once: rc 0, applied (and kept in its layer's
 * file, why ""); REST_ERR_ARG, refused (the configuration does not load,
 * a source refuses it, the layer's policy or vet refuses it: why says
 * which), the running configuration kept; REST_ERR, applied but not kept
 * (its file could not be written: it lasts until a restart); or
 * REST_ERR_NOMEM; or REST_ERR_STATE, never applied: the worker stopped
 * first (from its destruction, where starting another change is
 * pointless). Called from the end of a loop turn (reload_turn), never from
 * inside query_ops.layer_change; it may start the next change. */
typedef void (*query_done_fn)(void *arg, int rc, const char *why);

/* A connector change a control client aims at a layer of the configuration
 * (config/connlayer.h: the fleet's is CONNLAYER_FLEET). A change of the
 * fleet's naming a connector of the files, or one the REST API gives or
 * deleted, is refused with the reason unless the worker file says
 * fleet.allow.replace.local=true (read at the change's own load). Strings
 * and config are copied when the change is taken; arg is the client's,
 * passed to vet and done. */
struct query_change {
	enum connlayer_kind layer; /* CONNLAYER_FLEET or CONNLAYER_REST */
	enum query_change_op op;
	const char *name;
	const cJSON *config; /* QUERY_CHANGE_PUT: an object of strings, name included */
	/* A connector it creates starts so (KIP-980: RUNNING, PAUSED,
	 * STOPPED); NULL: RUNNING. */
	const char *initial_state;
	query_vet_fn vet; /* NULL: none */
	query_done_fn done;
	void *arg;
};

struct query_ops {
	size_t (*connectors)(void *ctx);
	void (*connector)(void *ctx, size_t i, struct query_conn *out);
	size_t (*partitions)(void *ctx);
	/* Partition i's view at now (loop_now_ms()). */
	void (*partition)(void *ctx, size_t i, int64_t now, struct query_part *out);
	void (*flush)(void *ctx, struct query_flush *out);
	void (*producer)(void *ctx, struct query_producer *out);
	/* The registry the pipeline counts in (control adds its series). */
	struct stats *(*stats)(void *ctx);
	/* Asks connector i's open source (if it tells one) for the backlog of
	 * each of its partitions: put once per partition it knows. */
	void (*backlog)(void *ctx, size_t i, query_backlog_fn put, void *arg);
	/* One line on the producer's bandwidth cap for `skiff status` ("" without). */
	void (*bandwidth)(void *ctx, char *buf, size_t len);
	/* The named command on connector i: 0, or a REST_ERR_* code with
	 * errbuf (control/rest.h, the codes the REST API answers with; the
	 * same for the ops below). */
	int (*command)(void *ctx, size_t i, enum query_command cmd, char *errbuf, size_t errlen);
	/* Connector i's active topics (Connect's: produced to since its open
	 * or the last forget_topics), each to fn; and forgetting them. */
	void (*topics)(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg);
	void (*forget_topics)(void *ctx, size_t i);
	/* The stored offsets of connector i as KIP-875's document: 0 and *json
	 * (malloc'd, caller frees) or REST_ERR_NOMEM. */
	int (*offsets)(void *ctx, size_t i, char **json);
	/* KIP-875's edit of connector i's stored offsets (rest_ops.alter_offsets:
	 * e NULL resets all; only while STOPPED). */
	int (*alter_offsets)(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
	                     char *errbuf, size_t errlen);
	/* A connector created, changed or deleted (rest_ops.change): taken now,
	 * applied as a reload at the end of the turn, answered then
	 * (REST_PENDING). */
	int (*change)(void *ctx, const struct rest_change *rc, void *waiter, char *errbuf,
	              size_t errlen);
	/* A control client's change (ch, see struct query_change): taken now,
	 * applied as a reload at the end of the turn (the REST API's change
	 * above and SIGHUP's path: the same validation and refusals, records
	 * in flight waited for and offsets stored, whole or not at all), its
	 * outcome given to ch->done then: REST_PENDING. Or at once, done not
	 * called: REST_ERR_STATE when another change is being applied or the
	 * worker drains (try again at a later turn) or skiff runs without
	 * configuration files, REST_ERR_NOMEM; errbuf says why. */
	int (*layer_change)(void *ctx, const struct query_change *ch, char *errbuf, size_t errlen);
	/* A count bumped whenever a connector's state or trace changes
	 * (query_conn's state, restarting, stop_paused, trace), and when a
	 * connector is added or removed; never otherwise. A client that
	 * publishes states compares it with the last it saw (loop_hook_add:
	 * once a turn) instead of polling on a timer. */
	uint64_t (*state_epoch)(void *ctx);
	/* The Kafka cluster's id (malloc'd, caller frees), NULL when unknown. */
	char *(*cluster_id)(void *ctx);
	/* The worker's section of the configuration (plugins_validate's). */
	const struct config_section *(*worker_config)(void *ctx);
};

struct query {
	const struct query_ops *ops;
	void *ctx;
};

/* ---- the worker's query (core/query.c) -------------------------------- */

struct commits;
struct connectors;
struct partitions;
struct pipeline;
struct reload;
struct supervisor;

/* What stays the worker's, ctx query_host.ctx: the next offset flush is
 * due now (a KIP-875 edit the store could not take at once: the flush
 * timer writes it); health.ack.timeout.ms and metrics.partition.limit, and
 * the worker's section, which a reload may change. */
struct query_host_ops {
	void (*flush_soon)(void *ctx);
	void (*limits)(void *ctx, int64_t *ack_timeout, size_t *part_limit);
	const struct config_section *(*worker_config)(void *ctx);
};

/* The pieces of the worker its query reads and commands, the worker's and
 * borrowed for the host's life: the connector slots, the partition table,
 * the commits (the stored offsets), the record path, the producer's
 * supervisor (NULL: no producer view), the registry and the reload (a
 * connector change). The worker fills it as it makes them. */
struct query_host {
	struct connectors *conns;
	struct partitions *parts;
	struct commits *commits;
	struct pipeline *pipe;
	struct supervisor *sup;
	struct stats *stats;
	struct reload *reload;
	const struct query_host_ops *ops;
	void *ctx;
};

/* The query's views over a host: struct query's ops, ctx a struct
 * query_host. */
extern const struct query_ops host_query_ops;

/* The state's name in the REST API: Connect's, where a stopping connector
 * shows the state it had until the stop completes (offsets can be changed
 * only then, and a script polls the status for it). */
static inline const char *query_state_rest(const struct query_conn *c)
{
	if (c->restarting)
		return "RESTARTING";
	switch (c->state) {
	case QUERY_PAUSED:
		return "PAUSED";
	case QUERY_STOPPING:
		return c->stop_paused ? "PAUSED" : "RUNNING";
	case QUERY_STOPPED:
		return "STOPPED";
	case QUERY_FAILED:
		return "FAILED";
	case QUERY_RUNNING:
		break;
	}
	return "RUNNING";
}

#endif
