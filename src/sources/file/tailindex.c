/* tailindex: see tailindex.h. Names go through hash.h (one key per name,
 * the streams of a name chained by index); watch descriptors through a
 * small open-addressing table of its own, from wd to the first stream of
 * its chain, whose empty chains are removed (wds are not reused soon, so
 * keeping them would grow the table with every rotation). */
#include "sources/file/tailindex.h"
#include "util/hash.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOWD INT_MIN /* an empty slot */

struct wdslot {
	int wd;
	int32_t head;
};

struct tailindex {
	struct hash names; /* dir/base -> the first stream of the name */
	/* The names copied (a path that is not dir/base): the rest are the
	 * streams' paths, no copy and no slot per file. */
	char **own;
	size_t nown, owncap;
	/* 32-bit indexes: 20 bytes a stream, not 36 (20,000 of them). */
	int32_t *next_name; /* [i]: the next stream of that name */
	int *wd;            /* [i]: its watch, -1 none */
	int32_t *next_wd;   /* [i]: the next stream of that watch */
	int32_t *pos;       /* [i]: its place in marked, -1: not marked */
	uint32_t *marked;
	size_t nmarked;
	size_t n, cap;
	struct wdslot *slots; /* nslots: 0 or a power of two, at least 2 * nwd */
	size_t nslots, nwd;
};

const char *tailindex_strerror(int rc)
{
	return rc == TAILINDEX_OK ? "ok" : rc == TAILINDEX_ERR_NOMEM ? "out of memory" : "failed";
}

int tailindex_new(struct tailindex **out)
{
	struct tailindex *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (x == NULL)
		return TAILINDEX_ERR_NOMEM;
	hash_init(&x->names);
	*out = x;
	return TAILINDEX_OK;
}

void tailindex_free(struct tailindex *x)
{
	if (x == NULL)
		return;
	for (size_t i = 0; i < x->nown; i++)
		free(x->own[i]);
	hash_free(&x->names);
	free(x->own);
	free(x->next_name);
	free(x->wd);
	free(x->next_wd);
	free(x->pos);
	free(x->marked);
	free(x->slots);
	free(x);
}

/* dir/base, malloc'd, or NULL. */
static char *join(const char *dir, const char *base)
{
	size_t len = strlen(dir) + strlen(base) + 2;
	char *k = malloc(len);

	if (k != NULL)
		snprintf(k, len, "%s/%s", dir, base);
	return k;
}

static int grow(struct tailindex *x)
{
	size_t cap = x->cap ? x->cap * 2 : 64;
	void *p;

#define GROW(field)                                                                                \
	do {                                                                                       \
		if ((p = realloc(x->field, cap * sizeof(*x->field))) == NULL)                      \
			return TAILINDEX_ERR_NOMEM;                                                \
		x->field = p;                                                                      \
	} while (0)
	GROW(next_name);
	GROW(wd);
	GROW(next_wd);
	GROW(pos);
	GROW(marked);
#undef GROW
	x->cap = cap;
	return 0;
}

/* True when path reads dir/base. */
static bool reads(const char *path, const char *dir, const char *base)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/' && strcmp(path + n + 1, base) == 0;
}

int tailindex_add(struct tailindex *x, size_t i, const char *dir, const char *base,
                  const char *path)
{
	size_t head;
	char *own = NULL;
	const char *k = path;

	if (i != x->n || i >= INT32_MAX || (x->n == x->cap && grow(x) != 0))
		return TAILINDEX_ERR_NOMEM;
	/* The path itself when it is dir/base (a glob's match always is): no
	 * copy per file. */
	if (!reads(path, dir, base)) {
		if (x->nown == x->owncap) {
			size_t cap = x->owncap ? x->owncap * 2 : 8;
			char **grown = realloc(x->own, cap * sizeof(*grown));

			if (grown == NULL)
				return TAILINDEX_ERR_NOMEM;
			x->own = grown;
			x->owncap = cap;
		}
		if ((k = own = join(dir, base)) == NULL)
			return TAILINDEX_ERR_NOMEM;
	}
	if (hash_get(&x->names, k, &head)) {
		/* A second stream of the name: after the first, in its chain. */
		x->next_name[i] = x->next_name[head];
		x->next_name[head] = (int32_t)i;
	} else if (hash_put(&x->names, k, i) != 0) {
		free(own);
		return TAILINDEX_ERR_NOMEM;
	} else {
		x->next_name[i] = TAILINDEX_NONE;
	}
	if (own != NULL)
		x->own[x->nown++] = own;
	x->wd[i] = -1;
	x->next_wd[i] = TAILINDEX_NONE;
	x->pos[i] = -1;
	x->n++;
	tailindex_mark(x, i);
	return 0;
}

long tailindex_name_first(const struct tailindex *x, const char *dir, const char *base)
{
	char *k = join(dir, base);
	size_t i;
	bool found = k != NULL && hash_get(&x->names, k, &i);

	free(k);
	return found ? (long)i : TAILINDEX_NONE;
}

long tailindex_name_next(const struct tailindex *x, size_t i)
{
	return x->next_name[i];
}

/* ---- watch descriptors -------------------------------------------------- */

static size_t slot_of(int wd, size_t nslots)
{
	return ((unsigned)wd * 2654435761u) & (nslots - 1);
}

/* The slot holding wd, or the empty slot where it would go. */
static struct wdslot *find(const struct tailindex *x, int wd)
{
	size_t mask = x->nslots - 1, k = slot_of(wd, x->nslots);

	while (x->slots[k].wd != NOWD && x->slots[k].wd != wd)
		k = (k + 1) & mask;
	return &x->slots[k];
}

static int grow_slots(struct tailindex *x)
{
	size_t n = x->nslots ? x->nslots * 2 : 64, old = x->nslots;
	struct wdslot *s = malloc(n * sizeof(*s)), *was = x->slots;

	if (s == NULL)
		return TAILINDEX_ERR_NOMEM;
	for (size_t k = 0; k < n; k++)
		s[k] = (struct wdslot){NOWD, TAILINDEX_NONE};
	x->slots = s;
	x->nslots = n;
	for (size_t k = 0; k < old; k++)
		if (was[k].wd != NOWD)
			*find(x, was[k].wd) = was[k];
	free(was);
	return 0;
}

/* Empties slot e, shifting back the entries after it that probed past it
 * (linear probing's deletion without tombstones). */
static void remove_slot(struct tailindex *x, struct wdslot *e)
{
	size_t mask = x->nslots - 1, hole = (size_t)(e - x->slots), k = hole;

	for (;;) {
		size_t home;

		k = (k + 1) & mask;
		if (x->slots[k].wd == NOWD)
			break;
		home = slot_of(x->slots[k].wd, x->nslots);
		/* Moves back unless its home lies cyclically in (hole, k]. */
		if (hole <= k ? (home <= hole || home > k) : (home <= hole && home > k)) {
			x->slots[hole] = x->slots[k];
			hole = k;
		}
	}
	x->slots[hole] = (struct wdslot){NOWD, TAILINDEX_NONE};
	x->nwd--;
}

static void unlink_wd(struct tailindex *x, size_t i)
{
	struct wdslot *e = find(x, x->wd[i]);
	int32_t *at = &e->head;

	while (*at != TAILINDEX_NONE && *at != (int32_t)i)
		at = &x->next_wd[*at];
	if (*at == (int32_t)i)
		*at = x->next_wd[i];
	if (e->wd != NOWD && e->head == TAILINDEX_NONE)
		remove_slot(x, e);
	x->wd[i] = -1;
}

int tailindex_wd(struct tailindex *x, size_t i, int wd)
{
	struct wdslot *e;

	if (x->wd[i] == wd)
		return 0;
	if (x->wd[i] >= 0)
		unlink_wd(x, i);
	if (wd < 0)
		return 0;
	if (2 * (x->nwd + 1) > x->nslots && grow_slots(x) != 0)
		return TAILINDEX_ERR_NOMEM;
	e = find(x, wd);
	if (e->wd == NOWD) {
		*e = (struct wdslot){wd, TAILINDEX_NONE};
		x->nwd++;
	}
	x->next_wd[i] = e->head;
	e->head = (int32_t)i;
	x->wd[i] = wd;
	return 0;
}

bool tailindex_wd_is(const struct tailindex *x, size_t i, int wd)
{
	return x->wd[i] == wd;
}

long tailindex_wd_first(const struct tailindex *x, int wd)
{
	return wd >= 0 && x->nslots > 0 ? find(x, wd)->head : TAILINDEX_NONE;
}

long tailindex_wd_next(const struct tailindex *x, size_t i)
{
	return x->next_wd[i];
}

/* ---- the marked set ----------------------------------------------------- */

void tailindex_mark(struct tailindex *x, size_t i)
{
	if (x->pos[i] >= 0)
		return;
	x->pos[i] = (int32_t)x->nmarked;
	x->marked[x->nmarked++] = (uint32_t)i; /* room: marked has a place per stream */
}

size_t tailindex_nmarked(const struct tailindex *x)
{
	return x->nmarked;
}

size_t tailindex_marked(const struct tailindex *x, size_t k)
{
	return x->marked[k];
}

void tailindex_unmark_at(struct tailindex *x, size_t k)
{
	size_t i = x->marked[k], last = x->marked[--x->nmarked];

	x->pos[i] = -1;
	if (last != i) {
		x->marked[k] = last;
		x->pos[last] = (int32_t)k;
	}
}
