/* offsets: the offset store. An in-memory map from Connect's offset key to its
 * offset value, both compact JSON text, e.g.
 *   ["app-log",{"filename":"/var/log/app.log"}]  ->  {"position":1234}
 * persisted by a backend (struct offset_backend_ops): the crash-safe local file
 * (offsets_file.c) today, a compacted Kafka topic later.
 *
 * Only the worker writes to the store, and only offsets of records Kafka has
 * acknowledged. Keys and values are canonicalised on load (re-printed with
 * cJSON_PrintUnformatted) so string equality is JSON equality for the text the
 * worker itself produces with cJSON_PrintUnformatted.
 *
 * Leaf module: it never logs; errors come back as "what: why" in errbuf.
 * Called from the main loop only. */
#ifndef SKIFF_OFFSETS_H
#define SKIFF_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest number of entries a store holds; offsets_put beyond it fails. */
#define OFFSETS_MAX_ENTRIES 65536

/* Error codes (negative returns). */
enum {
	OFFSETS_ERR_IO = -1,      /* a read, write, fsync, rename failed: transient */
	OFFSETS_ERR_CORRUPT = -2, /* every stored generation is unreadable: refuse to start */
	OFFSETS_ERR_FULL = -3,    /* OFFSETS_MAX_ENTRIES reached */
	OFFSETS_ERR_NOMEM = -4,
	OFFSETS_ERR_ARG = -5, /* key or value is not valid compact JSON */
};

struct offsets;

/* Statistics for logs and the status report. */
struct offsets_stats {
	uint64_t generation;     /* generation of the last durable write (or of what was loaded) */
	uint64_t flushes;        /* successful durable writes */
	uint64_t flush_failures; /* failed writes (old generation left in place) */
	uint64_t skipped_clean;  /* flushes skipped because nothing changed */
	int loaded_from_prev;    /* 1 when load fell back to the previous generation */
};

/* Opens the file-backed store at path and loads it: the newest valid of
 * "path" and "path.prev" wins; stale "path.tmp*" files are removed. Neither
 * present: an empty store. Present but all unreadable: OFFSETS_ERR_CORRUPT
 * with errbuf naming each file and what is wrong, and what the user can do.
 * On success *out is owned by the caller (offsets_destroy). */
int offsets_open_file(const char *path, struct offsets **out, char *errbuf, size_t errlen);

/* The stored value for key, or NULL. Owned by the store; valid until the next
 * offsets_put of that key or offsets_destroy. */
const char *offsets_get(const struct offsets *o, const char *key);

/* Sets key to value (both copied). Marks the store dirty only when the value
 * changed. Returns 0 or a negative OFFSETS_ERR_*. */
int offsets_put(struct offsets *o, const char *key, const char *value);

/* True when a put changed something since the last successful flush. */
bool offsets_dirty(const struct offsets *o);

/* Writes the store durably when dirty (a no-op returning 0 when clean: an idle
 * skiff writes nothing). On failure the previous durable generation stays in
 * place, the store stays dirty, and the next call writes a fresh temp file. */
int offsets_flush(struct offsets *o, char *errbuf, size_t errlen);

/* Iteration, in insertion order: number of entries, i-th key and value. */
size_t offsets_count(const struct offsets *o);
const char *offsets_key(const struct offsets *o, size_t i);
const char *offsets_value(const struct offsets *o, size_t i);

void offsets_stats(const struct offsets *o, struct offsets_stats *out);

/* Short text for an OFFSETS_ERR_* code. */
const char *offsets_strerror(int err);

/* Frees the store without flushing. Accepts NULL. */
void offsets_destroy(struct offsets *o);

/* ---- backends ----------------------------------------------------------
 * A backend persists the whole map. load fills the store with offsets_put
 * semantics (it calls offsets_load_entry); store writes every entry. */
struct offset_backend_ops {
	const char *name;
	int (*load)(void *ctx, struct offsets *o, uint64_t *generation, int *from_prev,
		    char *errbuf, size_t errlen);
	int (*store)(void *ctx, const struct offsets *o, uint64_t generation, char *errbuf,
		     size_t errlen);
	void (*close)(void *ctx);
};

/* For backends: adds an entry during load without marking the store dirty. */
int offsets_load_entry(struct offsets *o, const char *key, const char *value);

#endif
