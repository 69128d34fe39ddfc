/* stats: the metric registry; see stats.h.
 *
 * Metrics are allocated one by one (a handle must not move when the table
 * grows) and listed in a growable array of pointers. Lookup is by two
 * indexes (hash.h): name and labels, and the first metric of each name (its
 * type and help are the name's). It runs when a metric is registered, never
 * when it is counted, but 10,000 files register 60,000 metrics: a linear scan
 * made that minutes of CPU. Metrics are never removed, only retired. */
#include "stats.h"

#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metric {
	uint64_t value; /* first: the handle points here */
	struct stats_desc desc;
	char *connector;
	char *partition;
	char *key;    /* name and labels: the bykey index's */
	char *name;   /* a copy of desc.name: the byname index's */
	bool retired; /* its connector was closed: not listed until registered again */
};

struct stats {
	struct metric **m;
	size_t n, cap;
	struct hash bykey, byname;
};

int stats_new(struct stats **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? 0 : STATS_ERR_NOMEM;
}

static void metric_free(struct metric *m)
{
	if (m == NULL)
		return;
	free(m->connector);
	free(m->partition);
	free(m->key);
	free(m->name);
	free(m);
}

void stats_destroy(struct stats *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		metric_free(s->m[i]);
	free(s->m);
	hash_free(&s->bykey);
	hash_free(&s->byname);
	free(s);
}

/* The bykey index's key of a name and labels (malloc'd), or NULL. A label
 * absent and one empty differ; \x1f separates (JSON and names have none). */
static char *make_key(const char *name, const char *conn, const char *part)
{
	char *k = NULL;

	if (asprintf(&k, "%s\x1f%c%s\x1f%c%s", name, conn ? '=' : '-', conn ? conn : "",
	             part ? '=' : '-', part ? part : "") < 0)
		return NULL;
	return k;
}

/* The metric with key (-1: none); *conflict when d's name is registered
 * with another type or help. */
static long find(const struct stats *s, const struct stats_desc *d, const char *key, bool *conflict)
{
	size_t i;

	*conflict = false;
	if (hash_get(&s->byname, d->name, &i) &&
	    (s->m[i]->desc.type != d->type || strcmp(s->m[i]->desc.help, d->help) != 0)) {
		*conflict = true;
		return -1;
	}
	return hash_get(&s->bykey, key, &i) ? (long)i : -1;
}

static char *copy(const char *s, bool *failed)
{
	char *c;

	if (s == NULL)
		return NULL;
	c = strdup(s);
	*failed |= c == NULL;
	return c;
}

/* Appends a new metric (key: make_key's, taken over); its index is
 * s->n - 1. */
static int append(struct stats *s, const struct stats_desc *d, const char *conn, const char *part,
                  char *key)
{
	struct metric *m = calloc(1, sizeof(*m));
	bool failed = m == NULL, first = !hash_get(&s->byname, d->name, &(size_t){0});

	if (m == NULL)
		free(key);
	if (m != NULL) {
		m->desc = *d;
		m->key = key;
		m->connector = copy(conn, &failed);
		m->partition = copy(part, &failed);
		m->name = copy(d->name, &failed);
	}
	if (!failed && s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct metric **grown = realloc(s->m, cap * sizeof(*grown));

		failed = grown == NULL;
		if (grown != NULL) {
			s->m = grown;
			s->cap = cap;
		}
	}
	if (!failed && hash_put(&s->bykey, m->key, s->n) != 0)
		failed = true;
	if (!failed && first && hash_put(&s->byname, m->name, s->n) != 0) {
		/* Not indexed by name: index it nowhere (hash_clear, re-add). */
		hash_clear(&s->bykey);
		for (size_t i = 0; i < s->n; i++)
			(void)hash_put(&s->bykey, s->m[i]->key, i); /* had room */
		failed = true;
	}
	if (failed) {
		metric_free(m);
		return STATS_ERR_NOMEM;
	}
	s->m[s->n++] = m;
	return 0;
}

int stats_register(struct stats *s, const struct stats_desc *d, const struct stats_labels *labels,
                   uint64_t **value, size_t *index)
{
	const char *conn = labels ? labels->connector : NULL;
	const char *part = labels ? labels->partition : NULL;
	char *key = make_key(d->name, conn, part);
	bool conflict;
	long i;
	int rc;

	*value = NULL;
	if (key == NULL)
		return STATS_ERR_NOMEM;
	i = find(s, d, key, &conflict);
	if (conflict || i >= 0)
		free(key);
	if (conflict)
		return STATS_ERR_CONFLICT;
	if (i < 0) {
		rc = append(s, d, conn, part, key);
		if (rc != 0)
			return rc;
		i = (long)s->n - 1;
	}
	s->m[i]->retired = false;
	*value = &s->m[i]->value;
	if (index != NULL)
		*index = (size_t)i;
	return 0;
}

bool stats_next(const struct stats *s, size_t *cursor, struct stats_view *v)
{
	const struct metric *m;

	while (*cursor < s->n && s->m[*cursor]->retired)
		(*cursor)++;
	if (*cursor >= s->n)
		return false;
	m = s->m[*cursor];
	*v = (struct stats_view){.index = *cursor,
	                         .desc = &m->desc,
	                         .connector = m->connector,
	                         .partition = m->partition,
	                         .value = m->value};
	(*cursor)++;
	return true;
}

void stats_retire(struct stats *s, const char *connector)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i]->connector != NULL && strcmp(s->m[i]->connector, connector) == 0)
			s->m[i]->retired = true;
}

void stats_hide(uint64_t *h)
{
	/* The handle points at the metric's first member. */
	struct metric *m = (struct metric *)(void *)h;

	m->retired = true;
}

size_t stats_count(const struct stats *s)
{
	return s->n;
}

const char *stats_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case STATS_ERR_NOMEM:
		return "out of memory";
	case STATS_ERR_CONFLICT:
		return "metric name registered twice with different type or help";
	default:
		return "unknown stats error";
	}
}
