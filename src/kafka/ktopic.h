/* ktopic: the offsets topic as the cluster holds it: created when
 * missing (cleanup.policy=compact, offset.storage.partitions,
 * offset.storage.replication.factor, every other offset.storage.X as topic
 * config X), and an existing one checked to be compacted only, as Connect's
 * KafkaOffsetBackingStore checks it (a topic that deletes forgets offsets:
 * a restart then re-sends or skips records). Through librdkafka's admin API
 * on the caller's client; blocks up to timeout_ms per request. Never logs. */
#ifndef SKIFF_KTOPIC_H
#define SKIFF_KTOPIC_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

struct config_section;

/* With create: creates topic unless it exists. Then reads the existing
 * topic's cleanup.policy: anything but "compact" alone is refused. A missing
 * topic (without create), or a cluster that does not say (no
 * DescribeConfigs permission, no answer), passes: what cannot be seen is not
 * refused, as Connect does. Returns 0, or OFFSETS_ERR_CONFIG (a refused
 * setting or policy: errbuf names the topic, the policy and the fix) or
 * OFFSETS_ERR_IO (no answer to the create) with errbuf. */
int ktopic_ensure(rd_kafka_t *rk, const struct config_section *w, const char *topic, int timeout_ms,
                  bool create, char *errbuf, size_t errlen);

/* Whether err says the cluster was not reached (timed out, no connection,
 * no broker, name not resolved), which says nothing of the topic. */
bool ktopic_unreachable(rd_kafka_resp_err_t err);

/* One writer per offsets topic on this device, also with the topic alone:
 * binds the abstract socket @skiff-offsets-<hash of bootstrap.servers>-<hash
 * of topic> (lockfile_abstract: no rm or tmpfiles cleaner removes it), then
 * takes the lock file /run/lock/<same name>.lock (lockfile.h; /tmp without
 * /run/lock). Returns 0 with both descriptors in fds, to keep open while
 * writing, or OFFSETS_ERR_LOCKED (errbuf names the other skiff's pid) or
 * OFFSETS_ERR_IO, fds -1. */
int ktopic_lock(const struct config_section *w, const char *topic, int fds[2], char *errbuf,
                size_t errlen);

#endif
