/* tolerance: errors.tolerance and errors.log.*, Connect's error handling
 * for a source connector, decoded once per connector when it opens (no
 * configuration lookup per record). A leaf: it decides, counts and logs;
 * the record path (core/pipeline.c) acknowledges what it skips. Main loop
 * only. */
#ifndef SKIFF_TOLERANCE_H
#define SKIFF_TOLERANCE_H

#include <stdbool.h>
#include <stdint.h>

struct config_section;
struct record;

/* One connector's errors.* keys, and its records_skipped counter. A value
 * inside the connector's slot; nothing to free. */
struct tolerance {
	bool all;          /* errors.tolerance=all (else none) */
	bool log;          /* errors.log.enable */
	bool log_messages; /* errors.log.include.messages */
	uint64_t *skipped; /* records_skipped, registered with the connector's
	                    * counters (stats handle; NULL until then) */
};

/* Decodes the errors.* keys of a connector section cfg into *t; leaves
 * t->skipped as it is. */
void tolerance_init(struct tolerance *t, const struct config_section *cfg);

/* A transform or converter failed on r (why: what and why) of connector
 * name. With errors.tolerance=all: counts it and logs it as errors.log.*
 * say, and returns true (the caller then takes r as done: its offset may
 * move past it); else returns false, nothing counted (the caller stops the
 * connector). */
bool tolerance_record(struct tolerance *t, const char *name, const struct record *r,
                      const char *why);

/* A delivery report says Kafka refused a record of partition key of
 * connector name for good (reason: librdkafka's). With
 * errors.tolerance=all: counts and logs it and returns true (the caller
 * takes the record as done); else false. */
bool tolerance_refusal(struct tolerance *t, const char *name, const char *key, const char *reason);

#endif
