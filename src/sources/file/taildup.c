/* taildup: the same file named twice (see taildup.h). */
#include "taildup.h"

#include "log.h"
#include "tailid.h"

#include <stdlib.h>
#include <string.h>

struct alias {
	char *path;
	int64_t dev, ino; /* the file it named when it was said */
};

struct taildup {
	struct source_env *env;
	char **paths; /* tailed */
	size_t npaths;
	struct alias *aliases; /* skipped, already said */
	size_t naliases;
	struct taildup *next;
};

static struct taildup *all; /* every connector's register */

struct taildup *taildup_new(struct source_env *env)
{
	struct taildup *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->env = env;
	d->next = all;
	all = d;
	return d;
}

/* The path of d that names the file id now, or NULL. */
static const char *naming(const struct taildup *d, const struct tailid *id)
{
	struct tailid other;

	for (size_t i = 0; i < d->npaths; i++)
		if (tailid_of_path(d->paths[i], &other) == 0 && tailid_same(&other, id))
			return d->paths[i];
	return NULL;
}

static struct alias *find_alias(struct taildup *d, const char *path)
{
	for (size_t i = 0; i < d->naliases; i++)
		if (strcmp(d->aliases[i].path, path) == 0)
			return &d->aliases[i];
	return NULL;
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
	struct tailid id;
	const char *first;
	char **grown, *copy;

	if (tailid_of_path(path, &id) == 0 && id.regular) {
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
	grown = realloc(d->paths, (d->npaths + 1) * sizeof(*grown));
	if (grown == NULL || (copy = strdup(path)) == NULL) {
		if (grown != NULL)
			d->paths = grown;
		return false;
	}
	d->paths = grown;
	d->paths[d->npaths++] = copy;
	return false;
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
	for (size_t i = 0; i < d->npaths; i++)
		free(d->paths[i]);
	for (size_t i = 0; i < d->naliases; i++)
		free(d->aliases[i].path);
	free(d->paths);
	free(d->aliases);
	free(d);
}
