/* ktopic: a compacted topic of skiff's own as the cluster holds it: the
 * offsets topic (offset.storage.topic) and the fleet's status and config
 * topics (status.storage.topic, config.storage.topic). Created when missing
 * (cleanup.policy=compact, the partitions and replication factor given,
 * every other <prefix>X of the worker file as topic config X, as Connect
 * takes offset.storage.X, status.storage.X and config.storage.X), and an
 * existing one checked to be compacted only, as Connect's backing stores
 * check theirs (a topic that deletes forgets: offsets, then a restart re-sends
 * or skips records; configurations, then a device drops connectors).
 * Through librdkafka's admin API on the caller's client; blocks up to
 * timeout_ms per request. Never logs. Error convention: util/err.h.
 *
 * KIP-516 topic ids: librdkafka 2.0.2 (Debian 12's) exposes none (its
 * rd_kafka_metadata_topic_t has no id; DescribeTopics came in 2.3.0), so
 * this module reads none. */
#ifndef SKIFF_KTOPIC_H
#define SKIFF_KTOPIC_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "util/err.h"

struct config_section;

enum ktopic_err {
	KTOPIC_OK = 0,
	KTOPIC_ERR_IO = -1,     /* the cluster did not answer: transient */
	KTOPIC_ERR_CONFIG = -2, /* a refused setting or policy: a person must act */
	KTOPIC_ERR_NOMEM = -3,
	KTOPIC_ERR_LOCKED = -4, /* ktopic_lock: another process writes the topic */
};

/* A short text for a ktopic_err code; never NULL. */
const char *ktopic_strerror(int err);

/* One topic and the words its errors use. Every member is the caller's and
 * must outlive the call. */
struct ktopic_spec {
	const char *topic;      /* its name */
	const char *key;        /* the setting that names it: "offset.storage.topic" */
	const char *prefix;     /* its topic configs' keys: "offset.storage." */
	const char *noun;       /* "offsets": "the offsets topic must be compacted" */
	const char *loses;      /* what deletion does: "the broker deletes offsets and ..." */
	const char *lock_name;  /* ktopic_lock's name: "skiff-offsets" */
	int partitions;         /* at creation */
	int replication_factor; /* at creation; -1: the broker's default */
};

/* With create: creates t->topic unless it exists. Then reads the existing
 * topic's cleanup.policy: anything but "compact" alone is refused. A missing
 * topic (without create), or a cluster that does not say (no
 * DescribeConfigs permission, no answer), passes: what cannot be seen is not
 * refused, as Connect does. Returns 0, or KTOPIC_ERR_CONFIG (a refused
 * setting or policy: errbuf names the topic, the policy and the fix),
 * KTOPIC_ERR_IO (no answer to the create) or KTOPIC_ERR_NOMEM with errbuf.
 * w: the worker section (bootstrap.servers for the errors, the pass-through
 * <prefix>X keys). */
int ktopic_ensure(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                  int timeout_ms, bool create, char *errbuf, size_t errlen);

/* ktopic_ensure in steps that do not wait, for a caller on a loop
 * (kafka/fleetlink_kafka.c): each _post sends its admin request with
 * timeout_ms as its request timeout, its answer to come on q as one event
 * (the caller's to destroy), which the matching _result reads, with
 * errbuf. ktopic_create_post: 0, or KTOPIC_ERR_CONFIG (a pass-through key
 * refused) or KTOPIC_ERR_NOMEM, nothing sent. ktopic_create_result: as
 * ktopic_ensure's creation (ev NULL: no answer came). ktopic_check_result:
 * 0 (compacted only, or the cluster would not say), KTOPIC_ERR_CONFIG (not
 * compacted), or KTOPIC_ERR_IO when the cluster was not reached (which
 * ktopic_ensure lets pass). */
int ktopic_create_post(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                       int timeout_ms, rd_kafka_queue_t *q, char *errbuf, size_t errlen);
int ktopic_create_result(const struct config_section *w, const struct ktopic_spec *t,
                         int timeout_ms, rd_kafka_event_t *ev, char *errbuf, size_t errlen);
int ktopic_check_post(rd_kafka_t *rk, const struct ktopic_spec *t, int timeout_ms,
                      rd_kafka_queue_t *q, char *errbuf, size_t errlen);
int ktopic_check_result(const struct config_section *w, const struct ktopic_spec *t,
                        rd_kafka_event_t *ev, char *errbuf, size_t errlen);

/* Whether err says the cluster was not reached (timed out, no connection,
 * no broker, name not resolved), which says nothing of the topic. */
bool ktopic_unreachable(rd_kafka_resp_err_t err);

/* One writer per topic on this device: binds the abstract socket
 * @<lock_name>-<hash of bootstrap.servers>-<hash of topic>
 * (lockfile_abstract: no rm or tmpfiles cleaner removes it), then takes the
 * lock file /run/lock/<same name>.lock (lockfile.h; /tmp without /run/lock).
 * Returns 0 with both descriptors in fds, to keep open while writing, or
 * KTOPIC_ERR_LOCKED (errbuf names the other skiff's pid) or KTOPIC_ERR_IO,
 * fds -1. */
int ktopic_lock(const struct config_section *w, const struct ktopic_spec *t, int fds[2],
                char *errbuf, size_t errlen);

#endif
