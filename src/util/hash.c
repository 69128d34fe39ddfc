/* hash: see hash.h. A slot keeps 32 bits of the key's hash beside the
 * pointer, so a probe compares strings only when they match and growing
 * never hashes a key again; 16 bytes a slot, and up to three quarters of
 * them used (an index of 20,000 paths is 0.5 MB at 32,768 slots; it was
 * 1.5 MB at 65,536 slots of 24 bytes). Linear probing at that load costs
 * about 2.5 probes a hit, 8.5 a miss. */
#include "util/hash.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_SLOTS 16

struct hash_slot {
	const char *key; /* NULL: empty */
	uint32_t h;      /* the low bits of hash_str */
	uint32_t idx;
};

uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void hash_init(struct hash *h)
{
	*h = (struct hash){0};
}

void hash_free(struct hash *h)
{
	free(h->slots);
	hash_init(h);
}

void hash_clear(struct hash *h)
{
	if (h->slots != NULL)
		memset(h->slots, 0, h->nslots * sizeof(*h->slots));
	h->n = 0;
}

static void place(struct hash_slot *slots, size_t nslots, const struct hash_slot *s)
{
	size_t mask = nslots - 1, i = s->h & mask;

	while (slots[i].key != NULL)
		i = (i + 1) & mask;
	slots[i] = *s;
}

static int grow(struct hash *h)
{
	size_t nslots = h->nslots ? h->nslots * 2 : FIRST_SLOTS;
	struct hash_slot *slots;

	if (nslots < h->nslots || nslots > SIZE_MAX / sizeof(*slots))
		return HASH_ERR_NOMEM;
	slots = calloc(nslots, sizeof(*slots));
	if (slots == NULL)
		return HASH_ERR_NOMEM;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->slots[i].key != NULL)
			place(slots, nslots, &h->slots[i]);
	free(h->slots);
	h->slots = slots;
	h->nslots = nslots;
	return 0;
}

int hash_put(struct hash *h, const char *key, size_t idx)
{
	struct hash_slot s = {key, (uint32_t)hash_str(key), (uint32_t)idx};

	if (idx > UINT32_MAX || ((h->n + 1) * 4 > h->nslots * 3 && grow(h) != 0))
		return HASH_ERR_NOMEM;
	place(h->slots, h->nslots, &s);
	h->n++;
	return 0;
}

bool hash_get(const struct hash *h, const char *key, size_t *idx)
{
	uint32_t hv;
	size_t mask, i;

	if (h->n == 0)
		return false;
	hv = (uint32_t)hash_str(key);
	mask = h->nslots - 1;
	for (i = hv & mask; h->slots[i].key != NULL; i = (i + 1) & mask) {
		if (h->slots[i].h == hv && strcmp(h->slots[i].key, key) == 0) {
			*idx = h->slots[i].idx;
			return true;
		}
	}
	return false;
}

bool hash_del(struct hash *h, const char *key, size_t *idx)
{
	uint32_t hv;
	size_t mask, i, j;

	if (h->n == 0)
		return false;
	hv = (uint32_t)hash_str(key);
	mask = h->nslots - 1;
	for (i = hv & mask; h->slots[i].key != NULL; i = (i + 1) & mask)
		if (h->slots[i].h == hv && strcmp(h->slots[i].key, key) == 0)
			break;
	if (h->slots[i].key == NULL)
		return false;
	if (idx != NULL)
		*idx = h->slots[i].idx;
	/* Backward shift: each key after the gap, up to an empty slot, moves
	 * into it unless that would put it before its home slot. */
	for (j = (i + 1) & mask; h->slots[j].key != NULL; j = (j + 1) & mask) {
		size_t home = h->slots[j].h & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	h->slots[i] = (struct hash_slot){0};
	h->n--;
	return true;
}

size_t hash_count(const struct hash *h)
{
	return h->n;
}

const char *hash_strerror(int err)
{
	switch (err) {
	case 0:
		return "no error";
	case HASH_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}
