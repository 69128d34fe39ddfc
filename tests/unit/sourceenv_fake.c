/* sourceenv_fake: the shared fake source_env of the source unit tests (see
 * sourceenv_fake.h). */
#include "sourceenv_fake.h"

#include "core/stats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sourceenv_fake *sourceenv_fake_of(struct source_env *env)
{
	return env->opaque;
}

size_t sourceenv_fake_index(const struct partition *p)
{
	return (size_t)((uintptr_t)p - 1);
}

static struct partition *f_partition(struct source_env *env, const char *json)
{
	struct sourceenv_fake *f = env->opaque;

	for (size_t i = 0; i < f->nparts; i++)
		if (strcmp(f->parts[i], json) == 0) {
			f->made[i] = 1;
			return (struct partition *)(uintptr_t)(i + 1);
		}
	if (f->nparts == SOURCEENV_FAKE_PARTS || (f->parts[f->nparts] = strdup(json)) == NULL)
		return NULL;
	f->made[f->nparts] = 1;
	return (struct partition *)(uintptr_t)(++f->nparts);
}

/* source_env.stored: every partition with an offset, made or not. */
static void f_stored(struct source_env *env, void (*fn)(void *arg, const char *, const char *),
                     void *arg)
{
	struct sourceenv_fake *f = env->opaque;

	for (size_t i = 0; i < f->nparts; i++)
		if (f->committed[i] != NULL)
			fn(arg, f->parts[i], f->committed[i]);
}

long sourceenv_fake_store(struct sourceenv_fake *f, const char *partition_json, const char *json)
{
	size_t i = f->nparts;

	if (i == SOURCEENV_FAKE_PARTS || (f->parts[i] = strdup(partition_json)) == NULL)
		return -1;
	f->made[i] = 0;
	f->committed[i] = strdup(json);
	f->nparts++;
	return (long)i;
}

size_t sourceenv_fake_made(const struct sourceenv_fake *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nparts; i++)
		n += f->made[i];
	return n;
}

static const char *f_committed(struct source_env *env, struct partition *p)
{
	struct sourceenv_fake *f = env->opaque;

	return f->committed[sourceenv_fake_index(p)];
}

static void add(struct sourceenv_fake *f, const char *name, uint64_t n)
{
	for (size_t i = 0; i < f->ncounts; i++)
		if (strcmp(f->cnames[i], name) == 0) {
			f->cvals[i] += n;
			return;
		}
	if (f->ncounts < SOURCEENV_FAKE_COUNTERS) {
		f->cnames[f->ncounts] = name;
		f->cvals[f->ncounts++] = n;
	}
}

static void f_count(struct source_env *env, const char *name, uint64_t n)
{
	struct sourceenv_fake *f = env->opaque;
	size_t used = strlen(f->counts);

	add(f, name, n);
	snprintf(f->counts + used, sizeof(f->counts) - used, "%s+%llu ", name,
	         (unsigned long long)n);
}

/* Partition stats as counters of their own name (a gauge holds its last value). */
static void f_partition_stat(struct source_env *env, struct partition *p,
                             const struct stats_desc *d, uint64_t n)
{
	struct sourceenv_fake *f = env->opaque;

	(void)p;
	if (d->type == STATS_GAUGE)
		for (size_t i = 0; i < f->ncounts; i++)
			if (strcmp(f->cnames[i], d->name) == 0)
				f->cvals[i] = 0;
	add(f, d->name, n);
}

static void f_log(struct source_env *env, int level, const char *fmt, ...)
{
	struct sourceenv_fake *f = env->opaque;
	size_t used = strlen(f->logged);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->lastlog, sizeof(f->lastlog), fmt, ap);
	va_end(ap);
	f->nlogs++;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "  log: %s\n", f->lastlog);
	if ((f->log_only < 0 || level == f->log_only) && used + 2 < sizeof(f->logged))
		snprintf(f->logged + used, sizeof(f->logged) - used, "%s%s%s\n",
		         f->log_bare ? "" : env->connector, f->log_bare ? "" : ": ", f->lastlog);
	if (f->on_log != NULL)
		f->on_log(f, f->lastlog);
}

void sourceenv_fake_init(struct sourceenv_fake *f, const char *connector)
{
	memset(f, 0, sizeof(*f));
	f->log_only = -1;
	f->env = (struct source_env){.opaque = f,
	                             .connector = connector,
	                             .partition = f_partition,
	                             .committed = f_committed,
	                             .stored = f_stored,
	                             .count = f_count,
	                             .partition_stat = f_partition_stat,
	                             .log = f_log};
}

void sourceenv_fake_free(struct sourceenv_fake *f)
{
	for (size_t i = 0; i < f->nparts; i++) {
		free(f->parts[i]);
		free(f->committed[i]);
		f->parts[i] = f->committed[i] = NULL;
	}
	f->nparts = 0;
}

void sourceenv_fake_take(struct sourceenv_fake *f, struct partition *p, char *json)
{
	size_t i = sourceenv_fake_index(p);

	free(f->committed[i]);
	f->committed[i] = json;
}

void sourceenv_fake_set(struct sourceenv_fake *f, struct partition *p, const char *json)
{
	sourceenv_fake_take(f, p, json != NULL ? strdup(json) : NULL);
}

uint64_t sourceenv_fake_counted(const struct sourceenv_fake *f, const char *name)
{
	for (size_t i = 0; i < f->ncounts; i++)
		if (strcmp(f->cnames[i], name) == 0)
			return f->cvals[i];
	return 0;
}
