/* offsets_kafka: the offset store of the worker's offset.storage.* settings.
 * A file alone (offset.storage.file.filename), as Connect's standalone mode;
 * a compacted Kafka topic alone (offset.storage.topic), as its distributed
 * mode; or both: the file is the fast local truth, the topic a replica that
 * restores it when the state directory is lost (docs/offsets.md).
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
 * it gone fails, and the next creates it compacted (offsets_ktopic.h).
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

/* Opens and loads the store the worker's settings name; hold: this process
 * will write it (the file's lock, offsets_open_file_held). With hold it
 * creates the topic when missing (without, a missing topic reads as empty) (cleanup.policy=compact,
 * offset.storage.partitions, offset.storage.replication.factor, other offset.storage.X as topic
 * configs X). Errors as offsets_open_file, and OFFSETS_ERR_IO when the topic cannot be read within
 * offset.flush.timeout.ms x 6 (at least 10 s) and there is no file to start from (with one, the
 * file alone is loaded and *from_prev-style warning given: offsets_stats loaded_from_prev),
 * OFFSETS_ERR_CONFIG when the cluster refuses the topic or its settings, when the topic is not
 * compacted only, or when another device wrote a key of a connector of s (offsets_fleet.h). With
 * hold, also the topic's own lock (offsets_ktopic_lock: one writer per topic and
 * bootstrap.servers on this device, with or without the file): OFFSETS_ERR_LOCKED naming the
 * other skiff's pid. s is borrowed for the store's life. */
int offsets_open_store(const struct settings *s, bool hold, struct offsets **out, char *errbuf,
                       size_t errlen);

/* Runs between taking the store's locks and reading its topic: 0, or an
 * OFFSETS_ERR_* code with errbuf "what: why". */
typedef int (*offsets_fence_fn)(void *arg, char *errbuf, size_t errlen);

/* offsets_open_store with hold, calling fence(arg) once the locks are taken
 * and the file is loaded, before the topic is read (not without a topic):
 * exactly-once fences every other instance of its transactional.id there,
 * so that none commits after the read. Its failure fails the open. */
int offsets_open_store_fenced(const struct settings *s, offsets_fence_fn fence, void *arg,
                              struct offsets **out, char *errbuf, size_t errlen);

#endif
