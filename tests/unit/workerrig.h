/* workerrig: a real worker around a scripted source and fake producers
 * (sinkfake.c), shared by the white-box unit tests of the worker's parts
 * (test_connectors, test_eos, test_pipeline, test_supervisor), which drive
 * its turns and look inside it through core/worker_private.h.
 *
 * The worker runs one connector, p, from a properties file the rig writes
 * in a fresh directory. Its source is a script: records 1..total of one
 * partition {"f":"a"} (stored under WORKERRIG_KEY), at most 4 a poll, each
 * the string "line N" to topic t with the offset {"position":N}. The
 * producers are sinkfakes, made by workerrig_open_sink and kept in
 * workerrig_sinks. Linked into a test by its test_<module>.cmake.
 *
 * Main thread only, one rig at a time: the script and the producers made
 * are this file's state, as neither source_ops.open nor a sink_open_fn
 * carries a pointer of the test's. */
#ifndef SKIFF_WORKERRIG_H
#define SKIFF_WORKERRIG_H

#include "config/settings.h"
#include "core/sink.h"
#include "sinkfake.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct offsets;
struct partition;
struct source_guard;
struct stats;
struct worker;

/* The offsets key of the script's one partition. */
#define WORKERRIG_KEY "[\"p\",{\"f\":\"a\"}]"

#define WORKERRIG_FAKES 8 /* producers made at most between two resets */

/* The scripted source: what it has and what it was asked. A test may raise
 * total while the worker runs; the source then reads on. */
struct workerrig_script {
	int total;  /* records it has */
	int next;   /* the next it gives (1-based) */
	int opens;  /* calls of open */
	int polls;  /* calls of poll */
	int closes; /* calls of close with its context (worker_destroy closes a
	             * stopped connector's source with NULL: not counted) */
	/* the source's own: its partition (the worker's) and the values it
	 * handed out, a ring that outlives the records in one poll */
	struct partition *part;
	char lines[64][16];
};

/* The producers workerrig_open_sink made, in the order made. Each is
 * borrowed: sink_destroy of its sink frees it, done by whoever holds it (a
 * worker, a supervisor). A test sets capacity or refuse_next before the
 * open they are for, and may zero the whole to count afresh
 * (workerrig_up does). */
struct workerrig_sinks {
	struct sinkfake *made[WORKERRIG_FAKES];
	int n;
	uint32_t capacity; /* in-flight cap of those made next (0: none) */
	bool refuse_next;  /* the next open fails, as a bad property would */
};
extern struct workerrig_sinks workerrig_sinks;

/* What workerrig_up builds. */
struct workerrig_conf {
	int records;                      /* the script's total */
	uint32_t capacity;                /* the producer's in-flight cap (0: none) */
	const char *worker;               /* more worker keys ("key=value\n" each), NULL: none */
	const char *connector;            /* more keys of connector p, NULL: none */
	bool file_source;                 /* p is the file source itself, not the script */
	const struct source_guard *guard; /* p's run-time guard (NULL: none) */
};

/* A running worker and what it was built from. s, o, st and wk are the
 * rig's, freed by workerrig_down; the worker borrows o and st. */
struct workerrig {
	struct settings s;
	struct offsets *o;          /* the file store named in s */
	struct stats *st;           /* the worker's registry */
	struct worker *wk;          /* started on o */
	struct conn *c;             /* connector p (borrowed from wk) */
	struct sinkfake *fake;      /* the producer wk was made with (borrowed from wk;
	                             * a supervisor_rebuild frees it, and the new one
	                             * is the last of workerrig_sinks.made) */
	struct workerrig_script sc; /* p's source (readable after down) */
};

/* Writes the properties files in a fresh directory and loads them into *s
 * (freed by settings_destroy), CHECKing the load: a worker section
 * (bootstrap.servers=127.0.0.1:1, offset.storage.file.filename in that
 * directory, StringConverter values, offset.flush.interval.ms=1,
 * offset.flush.timeout.ms=200, then worker_keys, whose keys given again
 * win) and connector p (FileStreamSource to topic t, then connector_keys).
 * NULL: no more keys. */
void workerrig_settings(struct settings *s, const char *worker_keys, const char *connector_keys);

/* A sink_open_fn (core/sink.h): a sinkfake reporting to cb(cb_ctx, ...),
 * added to workerrig_sinks; *out is its sink, freed by sink_destroy.
 * SINK_ERR_CONFIG when refuse_next was set (which it clears),
 * SINK_ERR_NOMEM out of memory or past WORKERRIG_FAKES; errbuf says why. */
int workerrig_open_sink(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
                        struct sink **out, char *errbuf, size_t errlen);

/* Builds *r as conf says (settings, store, stats, the script as p's
 * source, a worker made with workerrig_open_sink) and starts the worker,
 * CHECKing each step; zeroes workerrig_sinks first. Release with
 * workerrig_down. */
void workerrig_up(struct workerrig *r, const struct workerrig_conf *conf);

/* Destroys the worker (which closes the source), the registry, the store
 * and the settings. r->sc stays readable. */
void workerrig_down(struct workerrig *r);

/* One turn of the worker, a little over offset.flush.interval.ms after the
 * last (a flush is due when something moved), that does not sleep in the
 * loop: the newest producer's descriptor is made readable, as a reading
 * paused waits on nothing else. Returns worker_turn's answer. */
int workerrig_turn(struct workerrig *r);

/* Runs n turns; returns the first exit code (0: none). */
int workerrig_turns(struct workerrig *r, int n);

/* Removes every directory the rig made; at the end of main. */
void workerrig_cleanup(void);

#endif
