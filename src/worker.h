/* worker: the one loop. Polls the sources, converts and produces their
 * records, serves delivery reports, advances offsets over each partition's
 * contiguous acknowledged prefix, and flushes them every
 * offset.flush.interval.ms when they changed.
 *
 * Everything is a descriptor or a timer around one poll(2): the sources'
 * descriptors (inotify) and deadlines, librdkafka's main queue (through a
 * pipe), the flush timer, and a self-pipe the signal handlers write to. */
#ifndef SKIFF_WORKER_H
#define SKIFF_WORKER_H

#include <stddef.h>

struct settings;
struct offsets;

/* Exit codes for supervisors (sysexits.h). */
enum {
	WORKER_EXIT_OK = 0,
	WORKER_EXIT_TEMPFAIL = 75, /* transient: restart me */
	WORKER_EXIT_CONFIG = 78,   /* configuration or offset store: a person must act */
};

struct worker;

/* Creates the producer and opens every connector of s; offsets (borrowed,
 * must outlive the worker) is the loaded store. Returns 0 and *out
 * (worker_destroy), or a WORKER_EXIT_* code with errbuf. */
int worker_new(const struct settings *s, struct offsets *offsets, struct worker **out,
	       char *errbuf, size_t errlen);

/* Runs until SIGTERM/SIGINT arrive on sigfd (the signal number as one byte),
 * or no connector can go on. Returns a WORKER_EXIT_* code. */
int worker_run(struct worker *w, int sigfd);

/* Closes the sources and the producer (nothing undelivered is committed).
 * Accepts NULL. */
void worker_destroy(struct worker *w);

#endif
