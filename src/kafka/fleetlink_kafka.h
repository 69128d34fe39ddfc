/* fleetlink_kafka: the fleet link (kafka/fleetlink.h) with librdkafka, the
 * fleet's only librdkafka user. */
#ifndef SKIFF_FLEETLINK_KAFKA_H
#define SKIFF_FLEETLINK_KAFKA_H

#include "kafka/fleetlink.h"

#include <librdkafka/rdkafka.h>

/* The ops for fleetlink_open (late: nothing at open waits for the
 * cluster). Its open builds both clients; its poll then goes through the
 * start: creates the status topic (and create_config) when asked
 * (kafka/ktopic.h, status.storage.X / config.storage.X as topic configs)
 * and checks them, each request answering on the link's descriptor and
 * sent again while the cluster does not answer, then asks the topics' ends
 * and assigns them. */
extern const struct fleetlink_ops fleetlink_kafka_ops;

/* Which of librdkafka's clients fleetlink_kafka_conf builds: the reader of
 * the snapshots at start (a short fetch.wait.max.ms, FLEETLINK_SNAPSHOT_WAIT_MS),
 * the long-polling one that follows it once every snapshot ended, the
 * status producer. */
enum fleetlink_client { FLEETLINK_SNAPSHOT, FLEETLINK_CONSUMER, FLEETLINK_PRODUCER };

/* The snapshot reader's fetch.wait.max.ms (librdkafka's default 500 is its
 * cost only while snapshots are read, a second or so at start). */
#define FLEETLINK_SNAPSHOT_WAIT_MS 500

/* The property set of one of the link's clients (for fleetlink_kafka_ops,
 * and for tests of it): the worker's connection settings, then the
 * fleet's: fetch.wait.max.ms (the long poll, checked below
 * socket.timeout.ms - 1000; FLEETLINK_SNAPSHOT_WAIT_MS for the snapshot),
 * topic.metadata.refresh.interval.ms=600000 and metadata.max.age.ms=1800000
 * (librdkafka 2.0.2 sends a Metadata request every second with a refresh of
 * 800000-1200000, its derived max age overflowing), group.id
 * skiff-fleet-<device> (librdkafka's assign() wants one; nothing commits);
 * the producer acks=all and idempotent. Returns 0 and *out (the caller's),
 * or FLEETLINK_ERR_CONFIG with errbuf. */
int fleetlink_kafka_conf(const struct fleetlink_conf *c, enum fleetlink_client which,
                         rd_kafka_conf_t **out, char *errbuf, size_t errlen);

#endif
