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

/* What a tailed path named when last looked at, and in which pass. */
struct seen {
	struct tailid id;
	bool ok; /* it named a regular file */
	unsigned pass;
};

struct taildup {
	struct source_env *env;
	char **paths;      /* tailed */
	struct seen *seen; /* one per path */
	size_t npaths;
	unsigned pass; /* taildup_pass */
	bool in_pass;
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

void taildup_pass(struct taildup *d, bool on)
{
	d->pass += on;
	d->in_pass = on;
}

/* The path of d that names the file id now, or NULL; within a pass, as
 * looked up once in it (taildup_pass). */
static const char *naming(const struct taildup *d, const struct tailid *id)
{
	for (size_t i = 0; i < d->npaths; i++) {
		struct seen *s = &d->seen[i];

		if (!d->in_pass || s->pass != d->pass) {
			s->ok = tailid_of_path(d->paths[i], &s->id) == 0;
			s->pass = d->pass;
		}
		if (s->ok && tailid_same(&s->id, id))
			return d->paths[i];
	}
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
	struct tailid id = {0};
	const char *first;
	char **grown, *copy;
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
	grown = realloc(d->paths, (d->npaths + 1) * sizeof(*grown));
	if (grown != NULL)
		d->paths = grown;
	seen = realloc(d->seen, (d->npaths + 1) * sizeof(*seen));
	if (seen != NULL)
		d->seen = seen;
	if (grown == NULL || seen == NULL || (copy = strdup(path)) == NULL)
		return false;
	d->seen[d->npaths] = (struct seen){.id = id, .ok = known, .pass = d->pass};
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
	free(d->seen);
	free(d->aliases);
	free(d);
}
