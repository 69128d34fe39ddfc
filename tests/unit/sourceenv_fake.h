/* sourceenv_fake: the one fake of the worker's side of a source (struct
 * source_env, core/source.h) that unit tests of sources share: partitions
 * by their JSON, a committed offset per partition, counters by name, and
 * the lines logged, all inspectable. Linked into a test by its
 * test_<module>.cmake. Main thread only; no worker, no Kafka. */
#ifndef SKIFF_SOURCEENV_FAKE_H
#define SKIFF_SOURCEENV_FAKE_H

#include "core/source.h"

#include <stddef.h>
#include <stdint.h>

/* partitions at most (more: partition() is NULL): a file source has one a
 * file, and test_tailwatch 1,000 files */
#define SOURCEENV_FAKE_PARTS 1024
#define SOURCEENV_FAKE_COUNTERS 16 /* counter names at most (more are not kept) */

struct sourceenv_fake {
	struct source_env env;                 /* hand &f->env to the source */
	char *parts[SOURCEENV_FAKE_PARTS];     /* partition JSON, owned */
	char *committed[SOURCEENV_FAKE_PARTS]; /* committed offset JSON or NULL, owned */
	size_t nparts;
	/* made[i]: partition() handed parts[i] out (sourceenv_fake_store puts
	 * one in without) */
	unsigned char made[SOURCEENV_FAKE_PARTS];
	const char *cnames[SOURCEENV_FAKE_COUNTERS]; /* the source's (static) names */
	uint64_t cvals[SOURCEENV_FAKE_COUNTERS];
	size_t ncounts;
	/* Every count() call in order, "name+n " each, while there is room; a
	 * test empties it (counts[0] = '\0') to look at what comes next. */
	char counts[512];
	char lastlog[1024]; /* the last line logged */
	int nlogs;          /* lines logged */
	/* The lines logged (of level log_only, when it is not -1), each
	 * "<connector>: line\n" (without the connector when log_bare), while
	 * there is room; a test empties it (logged[0] = '\0') to look at what
	 * comes next. */
	char logged[4096];
	int log_only; /* -1 (the default): every level */
	int log_bare;
	/* Optional: called with each line as it is logged (from inside the
	 * source's call). */
	void (*on_log)(struct sourceenv_fake *f, const char *line);
};

/* An empty environment for a connector named connector (static string). */
void sourceenv_fake_init(struct sourceenv_fake *f, const char *connector);

/* Frees the partitions' and committed offsets' copies. */
void sourceenv_fake_free(struct sourceenv_fake *f);

/* The fake that env belongs to. */
struct sourceenv_fake *sourceenv_fake_of(struct source_env *env);

/* The index of partition p (as partition() handed it out). */
size_t sourceenv_fake_index(const struct partition *p);

/* Sets p's committed offset to a copy of json (NULL: none), as the worker
 * does once the records before it are acknowledged. */
void sourceenv_fake_set(struct sourceenv_fake *f, struct partition *p, const char *json);

/* Stores json as the offset of the partition partition_json (both copied)
 * as a restart finds it: stored() lists it, committed() gives it once the
 * source asks for the partition; no handle is made (made[] stays 0).
 * Returns its index, or -1 when full. */
long sourceenv_fake_store(struct sourceenv_fake *f, const char *partition_json, const char *json);

/* How many partitions the source asked for (partition()). */
size_t sourceenv_fake_made(const struct sourceenv_fake *f);

/* Takes json (malloc'd, e.g. from offset_json) as p's committed offset. */
void sourceenv_fake_take(struct sourceenv_fake *f, struct partition *p, char *json);

/* The total counted under name (count() and partition_stat(); a gauge
 * holds its last value); 0 when never counted. */
uint64_t sourceenv_fake_counted(const struct sourceenv_fake *f, const char *name);

#endif
