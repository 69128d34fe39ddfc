/* fleet: the device's fleet loop client (issue 28, docs/fleet.md). It owns
 * the fleet's Kafka link (kafka/fleetlink.h), its applied store
 * (fleet/fleetstore.h) and its reducer (fleet/fleetstate.h), and turns:
 *
 *   - records of the device's config topic and its groups' into connector
 *     changes through core/query.h: a configuration as a change of the
 *     fleet's layer (query_ops.layer_change, CONNLAYER_FLEET), a target
 *     state or a restart as a command (query_ops.command). Once every
 *     topic's snapshot is read and no step runs, it plans against the store
 *     and runs the plan's steps ONE AT A TIME, the next from the previous
 *     one's done. A configuration passes fleetallow's pass 1 on the record
 *     as the topic holds it (nothing resolved) before any change is asked,
 *     and pass 2 on the loaded connector as the change's vet. Once a step
 *     is done the store is saved (generation + 1, the connector's source)
 *     and skiff-outcome-<name> says APPLIED, or REFUSED with the reason; a
 *     refusal is remembered by (topic id, offset) and not reported again,
 *     also after a restart;
 *   - connector states into Connect's status records (status-connector-X,
 *     status-task-X-0; worker_id the device, generation the store's), sent
 *     from a turn hook when query_ops.state_epoch moved and only for the
 *     connectors whose state or trace changed; tombstones for a connector
 *     gone (the keys published are kept in the store, so a restart still
 *     tombstones them);
 *   - a heartbeat (skiff-heartbeat) every fleet.heartbeat.interval.ms: the
 *     health verdict, the last acknowledgement, the loss counters, the
 *     backlog and the resident memory, read from the query and the stats
 *     registry by name. No other timer: an idle fleet wakes only for it.
 *
 * Topic ids: the link gives none with librdkafka 2.0.2. A topic's id then
 * is its marker's (skiff-topic-id, "skiff-topic-id:<uuid>", fleetstate.h),
 * or "topic:<name>" before any marker, kept in the store with the offset
 * applied up to. A topic deleted and made again is told by another marker,
 * or by a snapshot end below the offset applied up to: the topic then gets
 * an id of the fleet's own ("topic:<name>@<random>"). Either way what the
 * old topic gave is kept and reported (logged once, a REPORT outcome per
 * connector), and refusals under the old id skip nothing of the new.
 *
 * Main loop only. Error convention: util/err.h. */
#ifndef SKIFF_FLEET_H
#define SKIFF_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct config_section;
struct fleet;
struct fleet_conf;
struct fleetlink_ops;
struct health;
struct loop;
struct query;
struct stats;

enum {
	FLEET_OK = 0,
	FLEET_ERR = -1,        /* the link could not open (a restart may pass) */
	FLEET_ERR_NOMEM = -2,  /* out of memory */
	FLEET_ERR_CONFIG = -3, /* a device or group name, a topic: a person must act (exit 78) */
	FLEET_ERR_STORE = -4,  /* fleet-state.json damaged or newer, or unwritable (exit 78) */
};

/* A short text for a FLEET_* code; never NULL. */
const char *fleet_strerror(int err);

/* What the fleet is given; every pointer borrowed for the fleet's life. */
struct fleet_params {
	struct loop *loop;
	const struct query *query;          /* the pipeline (changes, commands, states) */
	struct stats *stats;                /* the registry the heartbeat reads */
	struct health *health;              /* refreshes its RSS (control/health.h); may be NULL */
	const struct fleet_conf *conf;      /* the worker's fleet.* keys (fleetconf_conf) */
	const char *device;                 /* the device's resolved name (core/device.h) */
	const char *offsets_file;           /* the store lives beside it; NULL: in memory */
	const struct fleetlink_ops *link;   /* fleetlink_kafka_ops, or a test's */
	const struct config_section *kafka; /* connection settings for the link; may be NULL */
};

/* Opens the fleet: checks the device's name (fleetconf_name_check), loads
 * the store and counts a start in its generation, opens the link on the
 * device's config topic and its groups' and registers its descriptor, the
 * turn hook and the heartbeat timer with p->loop. Returns 0 and *out
 * (fleet_close), or FLEET_ERR_CONFIG, FLEET_ERR_STORE (the caller exits 78),
 * FLEET_ERR or FLEET_ERR_NOMEM with errbuf saying why. */
int fleet_open(const struct fleet_params *p, struct fleet **out, char *errbuf, size_t errlen);

/* What the fleet did since its open, for tests and `skiff status`. */
struct fleet_counts {
	uint64_t steps;    /* steps started */
	uint64_t applied;  /* outcomes APPLIED */
	uint64_t refused;  /* outcomes REFUSED */
	uint64_t statuses; /* Connect status records sent (tombstones included) */
	uint64_t heartbeats;
	uint64_t errors;    /* a send, a save or a record the fleet could not take (logged) */
	uint64_t recreated; /* config topics found recreated (logged) */
};
void fleet_counts(const struct fleet *f, struct fleet_counts *out);

/* True while a step waits for its done. */
bool fleet_busy(const struct fleet *f);

/* Unregisters everything and frees f. While a step runs (fleet_busy), f
 * is freed by that step's done, which then does nothing more: the query
 * must still call it once (a reload's done always comes). Accepts NULL. */
void fleet_close(struct fleet *f);

#endif
