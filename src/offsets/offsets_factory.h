/* offsets_factory: the offset store the worker's offset.storage.* settings
 * name. A file alone (offset.storage.file.filename, offsets_file.h), as
 * Connect's standalone mode; a compacted Kafka topic alone
 * (offset.storage.topic), as its distributed mode; or both: the file is the
 * fast local truth, the topic a replica that restores it when the state
 * directory is lost (offsets_kafka.h, docs/offsets.md).
 *
 * Called from the main loop only; never logs. */
#ifndef SKIFF_OFFSETS_FACTORY_H
#define SKIFF_OFFSETS_FACTORY_H

#include "offsets/offsets_kafka.h"

#include <stdbool.h>
#include <stddef.h>

struct offsets;
struct settings;

/* Opens and loads the store the worker's settings name; hold: this process
 * will write it (the file's lock, offsets_open_file_held). With hold it
 * creates the topic when missing (without, a missing topic reads as empty) (cleanup.policy=compact,
 * offset.storage.partitions, offset.storage.replication.factor, other offset.storage.X as topic
 * configs X). Errors as offsets_open_file, and OFFSETS_ERR_IO when the topic cannot be read within
 * offset.flush.timeout.ms x 6 (at least 10 s) and there is no file to start from (with one, the
 * file alone is loaded and *from_prev-style warning given: offsets_stats loaded_from_prev),
 * OFFSETS_ERR_CONFIG when the cluster refuses the topic or its settings, when the topic is not
 * compacted only, or when another device wrote a key of a connector of s (offsets_fleet.h). With
 * hold, also the topic's own lock (ktopic_lock: one writer per topic and
 * bootstrap.servers on this device, with or without the file): OFFSETS_ERR_LOCKED naming the
 * other skiff's pid. s is borrowed for the store's life. */
int offsets_open_store(const struct settings *s, bool hold, struct offsets **out, char *errbuf,
                       size_t errlen);

/* offsets_open_store with hold, calling fence(arg) once the locks are taken
 * and the file is loaded, before the topic is read (not without a topic):
 * exactly-once fences every other instance of its transactional.id there,
 * so that none commits after the read. Its failure fails the open. */
int offsets_open_store_fenced(const struct settings *s, offsets_fence_fn fence, void *arg,
                              struct offsets **out, char *errbuf, size_t errlen);

#endif
