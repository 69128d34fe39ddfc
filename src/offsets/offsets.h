/* offsets: the offset store. An in-memory map from Connect's offset key to its
 * offset value, both compact JSON text, e.g.
 *   ["app-log",{"filename":"/var/log/app.log"}]  ->  {"position":1234}
 * persisted by a backend: the crash-safe local file (offsets_file.h), a
 * compacted Kafka topic (offsets_kafka.h), opened by offsets_factory.h. This
 * header is the store's users' (the worker, the CLI, the tools); what the
 * backends implement and call is offsets_store.h, so a user never sees the
 * load and write-completion calls that only a backend may make.
 *
 * Only the worker writes to the store, and only offsets of records Kafka has
 * acknowledged. Keys and values are canonicalised on put and on load by
 * removing the whitespace between tokens, every token kept byte for byte, so
 * string equality is JSON equality for compact text such as the worker's
 * (cJSON_PrintUnformatted keys, snprintf values). Not re-printed with cJSON:
 * cJSON holds numbers as double and would round integers above 2^53 (SQLite
 * rowids, inode numbers) that the sources read back exactly (jsonint.h).
 *
 * Writes are asynchronous (offsets_write): a write starts with the map as it
 * is and completes once, through a callback; the file backend completes
 * before offsets_write returns (after its fsyncs), a Kafka topic backend will
 * complete when the broker acknowledges the offset records. Puts go on while
 * a write is in flight.
 *
 * Leaf module: it never logs; errors come back as "what: why" in errbuf or in
 * the completion (util/err.h). Called from the main loop only. */
#ifndef SKIFF_OFFSETS_H
#define SKIFF_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Largest number of entries a store holds; offsets_put beyond it fails. */
#define OFFSETS_MAX_ENTRIES 65536

/* Largest total text a store holds: the lengths of every key and value plus
 * 32 bytes per entry (which covers the file format's per-entry framing).
 * offsets_put beyond it fails with OFFSETS_ERR_FULL, so a store can always be
 * written as a file that load accepts (it reads up to this plus 64 KiB). */
#define OFFSETS_MAX_BYTES (16u * 1024 * 1024)

/* Error codes (negative returns). */
enum {
	OFFSETS_OK = 0,
	OFFSETS_ERR_IO = -1,      /* a read, write, fsync, rename failed: transient */
	OFFSETS_ERR_CORRUPT = -2, /* every stored generation is unreadable: refuse to start */
	OFFSETS_ERR_FULL = -3,    /* OFFSETS_MAX_ENTRIES reached */
	OFFSETS_ERR_NOMEM = -4,
	OFFSETS_ERR_ARG = -5,    /* key or value is not valid compact JSON */
	OFFSETS_ERR_LOCKED = -6, /* another process holds the store: transient */
	OFFSETS_ERR_NODIR = -7,  /* the store's directory does not exist: a person must act */
	OFFSETS_ERR_BUSY = -8,   /* a write is in flight: start the next one after it completes */
	/* Not a failure (as EINPROGRESS from connect(2)): a backend's store
	 * started the write, which completes later (offsets_write_done). */
	OFFSETS_INPROGRESS = -9,
	OFFSETS_ERR_CONFIG = -10, /* settings that cannot work: a person must act */
};

struct offsets;
struct stats;

/* Statistics for logs and the status report. */
struct offsets_stats {
	uint64_t generation;     /* generation of the last durable write (or of what was loaded) */
	uint64_t flushes;        /* successful durable writes */
	uint64_t flush_failures; /* failed writes (old generation left in place) */
	uint64_t skipped_clean;  /* flushes skipped because nothing changed */
	int loaded_from_prev;    /* 1 when load fell back to the previous generation */
};

/* The stored value for key, or NULL. Owned by the store; valid until the next
 * offsets_put of that key or offsets_destroy. A key that is not stored as
 * given is looked up again canonicalised (invalid JSON: NULL). */
const char *offsets_get(const struct offsets *o, const char *key);

/* Sets key to value (both copied). Marks the store dirty only when the value
 * changed. Returns 0 or a negative OFFSETS_ERR_*: OFFSETS_ERR_ARG unless key
 * is a JSON array [string, object] and value a JSON object (anything else
 * would be written to a file that load refuses); OFFSETS_ERR_FULL beyond
 * OFFSETS_MAX_ENTRIES or OFFSETS_MAX_BYTES. Input is stored canonicalised
 * (see the top), so put and get also accept text with whitespace. An
 * unchanged value costs a hash lookup and a strcmp; only a new key or a
 * changed value is parsed. */
int offsets_put(struct offsets *o, const char *key, const char *value);

/* The store's own string of key (util/rstr.h: rstr_hold keeps it), found
 * as offsets_get finds it, or NULL when key has no entry. */
const char *offsets_key_of(const struct offsets *o, const char *key);

/* offsets_put with key a shared string (util/rstr.h): when it is already
 * canonical (the worker's keys are), a new entry keeps a reference to it
 * instead of a copy (one copy of each partition's key, not two). */
int offsets_put_shared(struct offsets *o, const char *key, const char *value);

/* Removes key (Connect's offset reset, KIP-875) and marks the store dirty
 * when it was there. Returns 0 (also when it was not) or OFFSETS_ERR_ARG
 * for a key that is not valid JSON. */
int offsets_remove(struct offsets *o, const char *key);

/* True when a put changed something since the last successful flush. */
bool offsets_dirty(const struct offsets *o);

/* The completion of offsets_write: rc 0 (the generation is durable) or a
 * negative OFFSETS_ERR_* with why ("what: why", valid during the call only).
 * With rc 0, why is NULL or something a person should hear (the store had
 * been deleted under skiff and was written whole again). Called exactly
 * once per started write, on the main loop. */
typedef void (*offsets_done_fn)(void *arg, int rc, const char *why);

/* Starts a durable write of the map as it is now and returns 0: done(arg, ..)
 * follows exactly once (for the file backend, before offsets_write returns).
 * A clean store writes nothing and completes at once with rc 0 (an idle skiff
 * writes nothing). OFFSETS_ERR_BUSY while a write is in flight (done is not
 * called). A put that changes a value while the write is in flight keeps the
 * store dirty after it completes. Failures as offsets_flush. */
int offsets_write(struct offsets *o, offsets_done_fn done, void *arg);

/* Asks the backend whether what it stored is still where it put it (the
 * file: its directory and files not deleted or replaced under skiff, e.g. a
 * state directory removed by hand); when not, marks the store dirty, so
 * that the next write puts it all back, or fails saying why while it
 * cannot. A few stat(2) calls; a no-op for a backend without the check.
 * Main loop, between writes. */
void offsets_verify(struct offsets *o);

/* A generation above every one written or loaded so far, for offset records
 * written outside the store (the exactly-once transaction's); the store's
 * later writes take higher ones. */
uint64_t offsets_next_generation(struct offsets *o);

/* Tells the backend that key's value, as put last, was written outside the
 * store (an exactly-once transaction's offset record, generation gen from
 * offsets_next_generation, skiff.device device): a backend that writes only
 * what changed (the offsets topic) does not write it again; the file still
 * does. No-op for a key not stored. */
void offsets_written_outside(struct offsets *o, const char *key, uint64_t gen, const char *device);

/* True from offsets_write until its completion. */
bool offsets_writing(const struct offsets *o);

/* Moves the store's statistics into the registry st (offsets_generation,
 * offsets_flushes, offsets_flush_failures, offsets_flushes_skipped,
 * offsets_loaded_from_prev), where they are counted from now on;
 * offsets_stats() keeps reading them. st must outlive the store. Returns 0 or
 * OFFSETS_ERR_NOMEM (the store then keeps counting on its own). */
int offsets_register_stats(struct offsets *o, struct stats *st);

/* offsets_write for a backend that completes at once (the file): writes the
 * store durably when dirty (a no-op returning 0 when clean: an idle
 * skiff writes nothing). On failure the previous durable generation stays in
 * place, the store stays dirty, and the next call writes a fresh temp file.
 * A failed directory fsync, after the new file was renamed into place, is
 * also a failure: the new generation may or may not survive a power cut, so
 * the store stays dirty and the next call writes (and fsyncs) it again. Every
 * attempt takes a new generation number, so stored numbers can skip. With a
 * backend that completes later it returns OFFSETS_INPROGRESS: the write goes
 * on without a completion callback (offsets_write has one). After a write
 * that returned 0, errbuf is "" or a note (see offsets_done_fn). */
int offsets_flush(struct offsets *o, char *errbuf, size_t errlen);

/* Iteration, in insertion order: number of entries, i-th key and value.
 * Keys and values are shared strings (util/rstr.h): rstr_hold keeps one
 * past the entry's next change or removal (the journal's shadow does). */
size_t offsets_count(const struct offsets *o);
const char *offsets_key(const struct offsets *o, size_t i);
const char *offsets_value(const struct offsets *o, size_t i);

void offsets_stats(const struct offsets *o, struct offsets_stats *out);

/* Short text for an OFFSETS_ERR_* code. */
const char *offsets_strerror(int err);

/* Frees the store without flushing. Accepts NULL. */
void offsets_destroy(struct offsets *o);

/* Takes the stored offsets of connector, which was not running when the
 * store was loaded (a reload added it), from a backend that loads only the
 * running connectors' keys (the offsets topic: ops->adopt), by the load's
 * rules. Returns 0 (also for a backend that loads every key), or an
 * OFFSETS_ERR_* with errbuf (the store goes on as it was); errbuf may also
 * hold a warning on 0 ("" when none). Blocks for a read of the topic: the
 * main loop, at a reload. */
int offsets_adopt(struct offsets *o, const char *connector, char *errbuf, size_t errlen);

/* The backend's descriptor to watch (ops->fd), or -1. */
int offsets_fd(const struct offsets *o);

/* Serves the backend's completions (ops->poll); a no-op for the file. */
void offsets_poll(struct offsets *o);

/* The load's note ("" for none) and in *warn whether it is a warning. */
const char *offsets_load_said(const struct offsets *o, bool *warn);

#endif
