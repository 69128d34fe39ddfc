/* hash: an index from string keys to positions in an array the caller keeps
 * (open addressing, linear probing, at most three quarters full; FNV-1a).
 *
 * Callers keep their entries in insertion order in their own array (props,
 * the offset map: both list entries in the order they came) and use this to
 * find one by key in O(1). The index stores the key pointer, not a copy: a
 * key must stay valid, and unchanged, while it is indexed. hash_del removes
 * one key (the rest move back into the gap: no tombstones); hash_clear all.
 *
 * The struct is declared here so that it can be embedded; its fields are the
 * module's. Single-threaded per index. Error convention: util/err.h. */
#ifndef SKIFF_HASH_H
#define SKIFF_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	HASH_OK = 0,
	HASH_ERR_NOMEM = -2,
};

struct hash_slot; /* hash.c */

struct hash {
	struct hash_slot *slots;
	size_t nslots; /* 0 or a power of two, at least 4/3 of n */
	size_t n;
};

/* FNV-1a of the C string s. */
uint64_t hash_str(const char *s);

/* Sets h up empty, allocating nothing. */
void hash_init(struct hash *h);

/* Frees the slots; h is empty again. Accepts a zeroed or freed h. */
void hash_free(struct hash *h);

/* Forgets every key, keeping the allocation. */
void hash_clear(struct hash *h);

/* Indexes key (not yet present: the caller looked) at position idx (at most
 * UINT32_MAX). key is kept, not copied. Returns 0 or HASH_ERR_NOMEM (h
 * unchanged; also for an idx past UINT32_MAX). */
int hash_put(struct hash *h, const char *key, size_t idx);

/* Removes key: true when it was indexed (at *idx, when idx is not NULL),
 * false when not. Never allocates. */
bool hash_del(struct hash *h, const char *key, size_t *idx);

/* Finds key: true and *idx, or false. */
bool hash_get(const struct hash *h, const char *key, size_t *idx);

/* Number of keys indexed. */
size_t hash_count(const struct hash *h);

/* Short text for a HASH_ERR_* code. */
const char *hash_strerror(int err);

#endif
