/* stats: the metric registry; see stats.h.
 *
 * Metrics are allocated one by one (a handle must not move when the table
 * grows) and listed in a growable array of pointers. Lookup is a linear
 * scan: it runs when a metric is registered, never when it is counted. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

struct metric {
	uint64_t value; /* first: the handle points here */
	struct stats_desc desc;
	char *connector;
	char *partition;
	bool retired; /* its connector was closed: not listed until registered again */
};

struct stats {
	struct metric **m;
	size_t n, cap;
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
	free(m);
}

void stats_destroy(struct stats *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		metric_free(s->m[i]);
	free(s->m);
	free(s);
}

static bool same_label(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

/* The metric with d's name and these labels (-1: none); *conflict when the
 * name is registered with another type or help. */
static long find(const struct stats *s, const struct stats_desc *d, const char *conn,
                 const char *part, bool *conflict)
{
	*conflict = false;
	for (size_t i = 0; i < s->n; i++) {
		const struct metric *m = s->m[i];

		if (strcmp(m->desc.name, d->name) != 0)
			continue;
		if (m->desc.type != d->type || strcmp(m->desc.help, d->help) != 0) {
			*conflict = true;
			return -1;
		}
		if (same_label(m->connector, conn) && same_label(m->partition, part))
			return (long)i;
	}
	return -1;
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

/* Appends a new metric; its index is s->n - 1. */
static int append(struct stats *s, const struct stats_desc *d, const char *conn, const char *part)
{
	struct metric *m = calloc(1, sizeof(*m));
	bool failed = m == NULL;

	if (m != NULL) {
		m->desc = *d;
		m->connector = copy(conn, &failed);
		m->partition = copy(part, &failed);
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
	bool conflict;
	long i = find(s, d, conn, part, &conflict);
	int rc;

	*value = NULL;
	if (conflict)
		return STATS_ERR_CONFLICT;
	if (i < 0) {
		rc = append(s, d, conn, part);
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
