/* sink_kafka: the librdkafka producer. Produces records, serves delivery
 * reports on the caller's thread, and never takes a flush for an ack.
 *
 * Defaults (each overridable with producer.* / kafka.* properties):
 * enable.idempotence=true, acks=all, message.timeout.ms=0 (never give up: an
 * edge device may be offline for hours), partitioner=murmur2_random, and a
 * bounded queue (queue.buffering.max.messages / .kbytes). librdkafka's main
 * queue is made readable through a pipe (rd_kafka_queue_io_event_enable), so
 * the worker's poll(2) wakes for delivery reports, logs and errors, and
 * sink_poll() runs the callbacks on the main loop: acks need no locks. */
#ifndef SKIFF_SINK_KAFKA_H
#define SKIFF_SINK_KAFKA_H

#include <stddef.h>

struct config_section;

#include "core/sink.h"

/* skiff's i-th producer default (librdkafka's name and value, applied before
 * the user's producer.* and kafka.* keys): the key, and *value; NULL past the
 * last. Static strings. For --help-config. */
const char *sink_default(size_t i, const char **value);

/* Creates the producer from the worker section (bootstrap.servers, producer.*,
 * kafka.*, security keys), as a struct sink (core/sink.h) whose delivery
 * reports go to cb with cb_ctx. Does not wait for a broker: skiff starts and
 * reads with none reachable. Returns 0 and *out (sink_destroy), or
 * SINK_ERR_CONFIG with "file:line: why" for a bad property, or for limits
 * that contradict each other (a record message.max.bytes allows that the
 * queue could never hold); SINK_ERR_NOMEM; SINK_ERR (no pipe).
 *
 * Its ops: produce copies key, value and headers (RD_KAFKA_MSG_F_COPY: one
 * allocation with librdkafka's own for the message); queue_capacity is
 * queue.buffering.max.messages, message_max message.max.bytes; stats gives
 * the counts of librdkafka's last statistics (every statistics.interval.ms,
 * skiff's default 5000; 0 before the first) and the queue depth now; the
 * transactional.id is "<offset.storage.topic>-<device.id or machine id>";
 * fatal also reports a thread librdkafka could not start; destroy purges
 * everything undelivered without a delivery report. */
int sink_open(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
              struct sink **out, char *errbuf, size_t errlen);

/* The files librdkafka reads once, when the producer is made, that worker
 * section w names (ssl.certificate.location, ssl.key.location,
 * ssl.ca.location but "probe", ssl.keystore.location, ssl.crl.location,
 * bare or as producer.X / kafka.X): at most max of them into out (borrowed
 * from w). Returns how many. A change to any needs a new producer. */
size_t sink_tls_files(const struct config_section *w, const char **out, size_t max);

#endif
