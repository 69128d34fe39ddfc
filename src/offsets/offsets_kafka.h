/* offsets_kafka: the offsets topic backend of the offset store: a compacted
 * Kafka topic alone (offset.storage.topic), as Connect's distributed mode,
 * or beside the file (offset.storage.file.filename, offsets_file.h): the
 * file is the fast local truth, the topic a replica that restores it when
 * the state directory is lost (docs/offsets.md). offsets_factory.h chooses
 * it from the worker's settings.
 *
 * The topic's records are Connect's, byte for byte: key
 * ["<connector>",{partition}] and value {offset} with Connect's members
 * only (compact JSON; the store's whole value in the header skiff.offset:
 * offsets_kvalue.h), a null value (tombstone) for a removed key, partitioned
 * with Java's murmur2 of the key bytes (librdkafka's murmur2_random). Each
 * record also carries headers skiff.generation (the store generation that
 * wrote it) and skiff.device (the device that wrote it: offsets_fleet.h).
 * Written with acks=all; a write completes once every record of it is
 * acknowledged. The producer never has the broker create the topic (a
 * deleted topic comes back with cleanup.policy=delete): a write that finds
 * it gone fails, and the next creates it compacted (kafka/ktopic.h).
 *
 * Load: the file (if any), then the topic read from its start to its end,
 * keeping only the keys of the connectors this skiff runs (offsets_fleet.h);
 * a connector a reload adds has its keys read then (offsets_adopt). Per key
 * the newest record wins, whoever wrote it: the topic's newest record of a
 * key (its partition's order) wins over the file when someone else wrote it
 * (Connect, a Connect tool, another skiff or device: it came after this
 * store's last record of the key), or when this store wrote it with a
 * generation above the file's (the file is missing, or older than the
 * topic: a re-flashed or restored device); else the file's value stands.
 * Both only ever hold acknowledged positions, and every write (the
 * worker's and `skiff offsets set`) takes a generation above both. A
 * FileStreamSource position Connect wrote is turned from characters into
 * bytes from where its task started (offsets_import.h). When the two
 * disagree, the store starts dirty and its first write puts the winner in
 * both. A device writes records only for its own connectors' keys, and a
 * tombstone only for a key removed from the store (a person's reset).
 *
 * Called from the main loop only; never logs. */
#ifndef SKIFF_OFFSETS_KAFKA_H
#define SKIFF_OFFSETS_KAFKA_H

#include <stdbool.h>
#include <stddef.h>

struct offsets;
struct settings;

/* How a write's failure in the topic begins: with the file beside it, the
 * file took that write first (and its generation wins at the next start),
 * while a failure of the file itself names the file. */
#define OFFSETS_KAFKA_TOPIC_ERR "offset.storage.topic "

/* Runs between taking the store's locks and reading its topic: 0, or an
 * OFFSETS_ERR_* code with errbuf "what: why". */
typedef int (*offsets_fence_fn)(void *arg, char *errbuf, size_t errlen);

/* Opens and loads the store of the worker's settings s with the offsets
 * topic (offset.storage.topic, not empty) and the file beside it when
 * offset.storage.file.filename is set; hold and errors as
 * offsets_open_store (offsets_factory.h). fence, when not NULL, runs with
 * arg once the locks are taken and the file is loaded, before the topic is
 * read; its failure fails the open. s is borrowed for the store's life. */
int offsets_open_kafka(const struct settings *s, bool hold, offsets_fence_fn fence, void *arg,
                       struct offsets **out, char *errbuf, size_t errlen);

#endif
