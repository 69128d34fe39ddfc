/* taildup: the same file named twice (see taildup.h). */
#include "sources/file/taildup.h"

#include "util/hash.h"
#include "core/log.h"
#include "sources/file/tailid.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct alias {
	char *path;
	int64_t dev, ino; /* the file it named when it was said */
};

/* What a tailed path named when looked at in this pass. */
struct seen {
	int64_t dev, ino;
	bool ok; /* it named a regular file */
};

struct taildup {
	struct source_env *env;
	const char **paths; /* tailed */
	uint8_t *owned;     /* bit i: paths[i] is d's copy (else the caller's: taildup_adopt) */
	size_t npaths, cap;
	unsigned pass; /* taildup_pass */
	bool in_pass;
	/* Within a pass only (freed at its end: 8 bytes a path between passes,
	 * not 40), what each path named at the pass's first lookup, and the
	 * paths by that file (dev, ino): open addressing, slots of path index
	 * + 1 (0: empty), at most half full. Built at the pass's first lookup
	 * (pass idx_pass); seen has room for cap paths. */
	struct seen *seen;
	uint32_t *slots;
	size_t nslots, nindexed;
	unsigned idx_pass;
	struct alias *aliases; /* skipped, already said */
	size_t naliases;
	struct hash aliasidx; /* alias path -> index in aliases: each rescan looks
	                       * up every skipped path (a symlinked directory of
	                       * 20,000 files: 20,000 walks of 20,000 aliases) */
	struct taildup *next;
};

static struct taildup *all; /* every connector's register */
/* The register in a pass (NULL: none): while it is, the others are looked
 * up through an index of their own too, built at their first lookup in
 * the pass and dropped at its end (note_shared). */
static struct taildup *passing;

const char *taildup_strerror(int rc)
{
	switch (rc) {
	case TAILDUP_OK:
		return "ok";
	case TAILDUP_ERR_NOMEM:
		return "out of memory";
	default:
		return "failed";
	}
}

int taildup_new(struct source_env *env, struct taildup **out)
{
	struct taildup *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (d == NULL)
		return TAILDUP_ERR_NOMEM;
	d->env = env;
	hash_init(&d->aliasidx);
	d->next = all;
	all = d;
	*out = d;
	return TAILDUP_OK;
}

/* Drops the pass's index. */
static void unindex(struct taildup *d)
{
	free(d->seen);
	free(d->slots);
	d->seen = NULL;
	d->slots = NULL;
	d->nslots = d->nindexed = 0;
	d->idx_pass = d->pass - 1;
}

void taildup_pass(struct taildup *d, bool on)
{
	d->pass += on;
	d->in_pass = on;
	passing = on ? d : NULL;
	if (!on)
		for (struct taildup *o = all; o != NULL; o = o->next)
			if (o == d || o->seen != NULL)
				unindex(o);
}

static bool owned(const struct taildup *d, size_t i)
{
	return d->owned[i / 8] & (1u << (i % 8));
}

static size_t slot_of(const struct taildup *d, int64_t dev, int64_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;

	return (size_t)(h ^ h >> 29) & (d->nslots - 1);
}

/* Indexes path i (its seen[i] current) when it names a file. Returns 0 or
 * -1 when out of memory (the index is then dropped: lookups walk). */
static int index_put(struct taildup *d, size_t i)
{
	size_t k;

	if (!d->seen[i].ok)
		return 0;
	if ((d->nindexed + 1) * 2 > d->nslots) {
		size_t n = d->nslots ? d->nslots * 2 : 64;
		uint32_t *slots = calloc(n, sizeof(*slots)), *old = d->slots;
		size_t nold = d->nslots;

		if (slots == NULL)
			return -1;
		d->slots = slots;
		d->nslots = n;
		d->nindexed = 0;
		for (size_t j = 0; j < nold; j++)
			if (old[j] != 0)
				(void)index_put(d, old[j] - 1); /* room: n > 2 * nold */
		free(old);
	}
	for (k = slot_of(d, d->seen[i].dev, d->seen[i].ino); d->slots[k] != 0;
	     k = (k + 1) & (d->nslots - 1))
		;
	d->slots[k] = (uint32_t)i + 1;
	d->nindexed++;
	return 0;
}

/* Looks at every tailed path once for this pass and indexes them by the
 * file each names. Returns 0 or -1 when out of memory (no index: lookups
 * walk). */
static int index_pass(struct taildup *d)
{
	struct tailid id;

	unindex(d);
	/* Room for cap paths, at least the first cap's (taildup_skip grows it). */
	if ((d->seen = calloc(d->cap ? d->cap : 16, sizeof(*d->seen))) == NULL)
		return -1;
	d->idx_pass = d->pass;
	for (size_t i = 0; i < d->npaths; i++) {
		struct seen *s = &d->seen[i];

		s->ok = tailid_of_path(d->paths[i], &id) == 0;
		s->dev = s->ok ? id.dev : 0;
		s->ino = s->ok ? id.ino : 0;
		if (index_put(d, i) != 0) {
			unindex(d);
			return -1;
		}
	}
	return 0;
}

/* The path of d that names the file id now, or NULL; within a pass (d's,
 * or another connector's asking about d's paths), as each path was when
 * first looked at in the pass (one statx per path per pass, and one probe
 * per lookup: a glob of 20,000 new files was 20,000 walks of the 20,000
 * tailed, and a second connector's glob of N files N walks of the first
 * one's N). Outside a pass, or without memory for the index, a walk with
 * one statx per path. */
static const char *naming(struct taildup *d, const struct tailid *id)
{
	struct tailid now;
	bool indexed = d->seen != NULL && d->idx_pass == d->pass;

	if ((d->in_pass || passing != NULL) && (indexed || index_pass(d) == 0)) {
		if (d->nslots == 0)
			return NULL;
		for (size_t k = slot_of(d, id->dev, id->ino); d->slots[k] != 0;
		     k = (k + 1) & (d->nslots - 1)) {
			const struct seen *s = &d->seen[d->slots[k] - 1];

			if (s->dev == id->dev && s->ino == id->ino)
				return d->paths[d->slots[k] - 1];
		}
		return NULL;
	}
	for (size_t i = 0; i < d->npaths; i++)
		if (tailid_of_path(d->paths[i], &now) == 0 && now.dev == id->dev &&
		    now.ino == id->ino)
			return d->paths[i];
	return NULL;
}

static struct alias *find_alias(struct taildup *d, const char *path)
{
	size_t i;

	return hash_get(&d->aliasidx, path, &i) ? &d->aliases[i] : NULL;
}

/* Says once per path and file that path is skipped for first. */
static void note_alias(struct taildup *d, const char *path, const char *first,
                       const struct tailid *id)
{
	struct alias *a = find_alias(d, path), *grown;

	if (a != NULL && a->dev == id->dev && a->ino == id->ino)
		return;
	d->env->log(d->env, LOG_WARN,
	            "%s is the same file as %s (a symlink, hard link or "
	            "overlapping patterns): read once, as %s",
	            path, first, first);
	d->env->count(d->env, "paths_duplicate", 1);
	if (a == NULL) {
		grown = realloc(d->aliases, (d->naliases + 1) * sizeof(*grown));
		if (grown == NULL)
			return;
		d->aliases = grown;
		a = &d->aliases[d->naliases];
		if ((a->path = strdup(path)) == NULL)
			return;
		if (hash_put(&d->aliasidx, a->path, d->naliases) != 0) {
			free(a->path); /* said again next time */
			return;
		}
		d->naliases++;
	}
	a->dev = id->dev;
	a->ino = id->ino;
}

/* Warns when another connector tails the file id. */
static void note_shared(struct taildup *d, const char *path, const struct tailid *id)
{
	for (struct taildup *o = all; o != NULL; o = o->next) {
		const char *theirs = o != d ? naming(o, id) : NULL;

		if (theirs != NULL)
			d->env->log(d->env, LOG_WARN,
			            "%s is also tailed by connector %s (as %s): "
			            "each connector ships its lines, so they reach Kafka twice",
			            path, o->env->connector, theirs);
	}
}

bool taildup_skip(struct taildup *d, const char *path)
{
	struct tailid id = {0};
	const char *first, **grown;
	char *copy;
	uint8_t *bits;
	struct seen *seen;
	bool known = tailid_of_path(path, &id) == 0;

	if (known && id.regular) {
		struct alias *a = find_alias(d, path);

		/* Skipped for that very file before: skipped while it names it,
		 * even after the first path moved on to a newer file (a symlink
		 * re-pointed at rotation), since that path's stream read it. */
		if (a != NULL && a->dev == id.dev && a->ino == id.ino)
			return true;
		if ((first = naming(d, &id)) != NULL) {
			note_alias(d, path, first, &id);
			return true;
		}
		note_shared(d, path, &id);
	}
	/* Not there yet (or not a file): tailed, and compared when it is. */
	if (d->npaths == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;

		if ((grown = realloc((void *)d->paths, cap * sizeof(*grown))) == NULL)
			return false;
		d->paths = grown;
		if ((bits = realloc(d->owned, cap / 8)) == NULL)
			return false;
		memset(bits + d->cap / 8, 0, (cap - d->cap) / 8);
		d->owned = bits;
		if (d->seen != NULL && (seen = realloc(d->seen, cap * sizeof(*seen))) == NULL)
			unindex(d); /* walk for the rest of the pass */
		else if (d->seen != NULL)
			d->seen = seen;
		d->cap = cap;
	}
	if ((copy = strdup(path)) == NULL)
		return false;
	d->owned[d->npaths / 8] |= (uint8_t)(1u << (d->npaths % 8));
	d->paths[d->npaths++] = copy;
	if (d->in_pass && d->idx_pass == d->pass) {
		d->seen[d->npaths - 1] = (struct seen){.dev = id.dev, .ino = id.ino, .ok = known};
		if (index_put(d, d->npaths - 1) != 0)
			unindex(d); /* walk for the rest of the pass */
	}
	return false;
}

void taildup_adopt(struct taildup *d, const char *path)
{
	size_t last = d->npaths - 1;

	if (d->npaths == 0 || !owned(d, last) || strcmp(d->paths[last], path) != 0)
		return;
	free((void *)d->paths[last]);
	d->paths[last] = path;
	d->owned[last / 8] &= (uint8_t) ~(1u << (last % 8));
}

void taildup_free(struct taildup *d)
{
	struct taildup **p = &all;

	if (d == NULL)
		return;
	while (*p != NULL && *p != d)
		p = &(*p)->next;
	if (*p == d)
		*p = d->next;
	if (passing == d)
		passing = NULL;
	for (size_t i = 0; i < d->npaths; i++)
		if (owned(d, i))
			free((void *)d->paths[i]);
	for (size_t i = 0; i < d->naliases; i++)
		free(d->aliases[i].path);
	hash_free(&d->aliasidx);
	free((void *)d->paths);
	free(d->owned);
	free(d->seen);
	free(d->slots);
	free(d->aliases);
	free(d);
}
