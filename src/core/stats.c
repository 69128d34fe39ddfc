/* stats: the metric registry; see stats.h.
 *
 * A metric is 16 bytes: its value, the index of its description and of its
 * pair of labels. Descriptions (one per name, type, help and flags), label
 * strings (a connector's name, a partition's JSON) and pairs of them are
 * kept once each, however many metrics share them: a file source registers
 * seven metrics per file, all labelled with the same partition, and 20,000
 * files made 140,000 copies of their paths (2.5 KB per file; 0.25 KB now). Metrics live
 * in chunks that never move (a handle points at a value), listed in
 * registration order. Lookup at registration is by the name and the two
 * labels' indexes, in an open-addressing table of metric indexes; counting
 * never looks anything up. A metric is retired (hidden, its value kept) or,
 * for series that come and go (a source partition's, shown only while it
 * is among the most active: control/pmetrics.c), removed: its place is taken
 * by the next metric registered, and a label string no metric uses any
 * more is freed, so that a registry whose series come and go does not grow
 * with the partitions it ever showed. */
#include "core/stats.h"

#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 256 /* metrics per chunk */
#define NOLABEL 0 /* a label index: 0 none, else 1 + index in strs */
#define MAX_DESCS (1u << 30)

struct metric {
	uint64_t value;  /* first: the handle points here; removed: the next free + 1 */
	uint32_t labels; /* index in pairs */
	uint32_t desc : 30;
	uint32_t retired : 1; /* its connector was closed: not listed until registered again */
	uint32_t removed : 1; /* stats_remove: free for the next metric (retired too) */
};

/* A metric's labels: indexes of label strings (NOLABEL: none). */
struct pair {
	uint32_t conn, part;
};

_Static_assert(sizeof(struct metric) == 16, "a metric is 16 bytes (see the top of this file)");

/* A description, and the index of the first description of its name (the
 * name's type and help). */
struct descrec {
	struct stats_desc d;
	uint32_t name;
};

struct stats {
	struct metric **chunks; /* n metrics, CHUNK per chunk */
	size_t n, nchunks;
	struct descrec **descs; /* each allocated alone: views point at them */
	size_t ndescs, capdescs;
	struct hash byname; /* name -> its first description */
	char **strs;        /* label strings, each once; NULL: free */
	uint32_t *refs;     /* live metrics naming strs[i]; free: the next free + 1 */
	size_t nstrs, capstrs;
	uint32_t freestr; /* a free index in strs + 1, 0: none */
	struct hash bystr;
	struct pair *pairs; /* pairs of labels, each once */
	size_t npairs, cappairs;
	uint32_t *pslots; /* pair index + 1, 0 empty; at most 3/4 full */
	size_t npslots;
	uint32_t *slots; /* metric index + 1, 0 empty; at most 3/4 full */
	size_t nslots;
	uint32_t freemetric; /* a removed metric's index + 1, 0: none */
};

int stats_new(struct stats **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? 0 : STATS_ERR_NOMEM;
}

void stats_destroy(struct stats *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	for (size_t i = 0; i < s->ndescs; i++)
		free(s->descs[i]);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]); /* NULL: free */
	free(s->chunks);
	free(s->descs);
	free(s->strs);
	free(s->refs);
	free(s->pairs);
	free(s->pslots);
	free(s->slots);
	hash_free(&s->byname);
	hash_free(&s->bystr);
	free(s);
}

static struct metric *at(const struct stats *s, size_t i)
{
	return &s->chunks[i / CHUNK][i % CHUNK];
}

static int grow_array(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap * 2 : 16;
	void *grown;

	if (n < *cap)
		return 0;
	if ((grown = realloc(*p, c * size)) == NULL)
		return STATS_ERR_NOMEM;
	*p = grown;
	*cap = c;
	return 0;
}

/* The index of label string str (NOLABEL for NULL), added when new.
 * Returns 0 or STATS_ERR_NOMEM. */
static int label(struct stats *s, const char *str, uint32_t *out)
{
	size_t i;
	char *copy;

	*out = NOLABEL;
	if (str == NULL)
		return 0;
	if (hash_get(&s->bystr, str, &i)) {
		*out = (uint32_t)i + 1;
		return 0;
	}
	if (s->freestr == 0) {
		size_t cap = s->capstrs;
		uint32_t *refs;

		if (s->nstrs == UINT32_MAX - 1 ||
		    grow_array(&s->strs, &s->capstrs, s->nstrs, sizeof(*s->strs)) != 0)
			return STATS_ERR_NOMEM;
		if (s->capstrs != cap) {
			if ((refs = realloc(s->refs, s->capstrs * sizeof(*refs))) == NULL) {
				s->capstrs = cap; /* strs has room to spare: harmless */
				return STATS_ERR_NOMEM;
			}
			s->refs = refs;
		}
	}
	i = s->freestr != 0 ? s->freestr - 1 : s->nstrs;
	if ((copy = strdup(str)) == NULL)
		return STATS_ERR_NOMEM;
	if (hash_put(&s->bystr, copy, i) != 0) {
		free(copy);
		return STATS_ERR_NOMEM;
	}
	if (s->freestr != 0)
		s->freestr = s->refs[i];
	else
		s->nstrs++;
	s->strs[i] = copy;
	s->refs[i] = 0;
	*out = (uint32_t)i + 1;
	return 0;
}

/* A metric names label l (NOLABEL: nothing) once more (n 1) or once
 * less (n -1); the last one frees the string. */
static void label_ref(struct stats *s, uint32_t l, int n)
{
	char *str;

	if (l == NOLABEL)
		return;
	if (n > 0 || --s->refs[l - 1] > 0) {
		s->refs[l - 1] += n > 0;
		return;
	}
	str = s->strs[l - 1];
	(void)hash_del(&s->bystr, str, NULL);
	free(str);
	s->strs[l - 1] = NULL;
	s->refs[l - 1] = s->freestr;
	s->freestr = l;
}

static const char *label_str(const struct stats *s, uint32_t l)
{
	return l == NOLABEL ? NULL : s->strs[l - 1];
}

/* The index of description d, added when new. Returns 0,
 * STATS_ERR_CONFLICT when d's name has another type or help, or
 * STATS_ERR_NOMEM. */
static int describe(struct stats *s, const struct stats_desc *d, uint32_t *out)
{
	struct descrec *r;
	size_t first;
	bool named = hash_get(&s->byname, d->name, &first);

	if (named &&
	    (s->descs[first]->d.type != d->type || strcmp(s->descs[first]->d.help, d->help) != 0))
		return STATS_ERR_CONFLICT;
	for (size_t i = named ? first : s->ndescs; i < s->ndescs; i++) {
		const struct stats_desc *e = &s->descs[i]->d;

		if (strcmp(e->name, d->name) == 0 && e->flags == d->flags) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (s->ndescs == MAX_DESCS ||
	    grow_array(&s->descs, &s->capdescs, s->ndescs, sizeof(*s->descs)) != 0 ||
	    (r = malloc(sizeof(*r))) == NULL)
		return STATS_ERR_NOMEM;
	r->d = *d;
	r->name = named ? (uint32_t)first : (uint32_t)s->ndescs;
	if (!named && hash_put(&s->byname, d->name, s->ndescs) != 0) {
		free(r);
		return STATS_ERR_NOMEM;
	}
	s->descs[s->ndescs] = r;
	*out = (uint32_t)s->ndescs++;
	return 0;
}

static size_t mix(uint64_t a, uint64_t b, size_t nslots)
{
	uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ b;

	h *= 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h >> 17) & (nslots - 1);
}

static void place_pair(struct stats *s, uint32_t i)
{
	size_t k = mix(s->pairs[i].conn, s->pairs[i].part, s->npslots);

	while (s->pslots[k] != 0)
		k = (k + 1) & (s->npslots - 1);
	s->pslots[k] = i + 1;
}

/* The index of the pair (conn, part), added when new. Returns 0 or
 * STATS_ERR_NOMEM. */
static int pair(struct stats *s, uint32_t conn, uint32_t part, uint32_t *out)
{
	for (size_t k = s->npslots ? mix(conn, part, s->npslots) : 0;
	     s->npslots > 0 && s->pslots[k] != 0; k = (k + 1) & (s->npslots - 1)) {
		const struct pair *p = &s->pairs[s->pslots[k] - 1];

		if (p->conn == conn && p->part == part) {
			*out = s->pslots[k] - 1;
			return 0;
		}
	}
	if (s->npairs == UINT32_MAX - 1 ||
	    grow_array(&s->pairs, &s->cappairs, s->npairs, sizeof(*s->pairs)) != 0)
		return STATS_ERR_NOMEM;
	if ((s->npairs + 1) * 4 > s->npslots * 3) {
		size_t n = s->npslots ? s->npslots * 2 : 64;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (slots == NULL)
			return STATS_ERR_NOMEM;
		free(s->pslots);
		s->pslots = slots;
		s->npslots = n;
		for (uint32_t i = 0; i < s->npairs; i++)
			place_pair(s, i);
	}
	s->pairs[s->npairs] = (struct pair){conn, part};
	place_pair(s, (uint32_t)s->npairs);
	*out = (uint32_t)s->npairs++;
	return 0;
}

/* The metric of name (a description index's name) and labels, or -1. */
static long find(const struct stats *s, uint32_t name, uint32_t labels)
{
	if (s->nslots == 0)
		return -1;
	for (size_t k = mix(name, labels, s->nslots); s->slots[k] != 0;
	     k = (k + 1) & (s->nslots - 1)) {
		const struct metric *m = at(s, s->slots[k] - 1);

		if (s->descs[m->desc]->name == name && m->labels == labels)
			return (long)s->slots[k] - 1;
	}
	return -1;
}

static void place(struct stats *s, size_t i)
{
	const struct metric *m = at(s, i);
	size_t k = mix(s->descs[m->desc]->name, m->labels, s->nslots);

	while (s->slots[k] != 0)
		k = (k + 1) & (s->nslots - 1);
	s->slots[k] = (uint32_t)i + 1;
}

/* Room for metric n: a chunk, and the index at most three quarters full. */
static int room(struct stats *s)
{
	if (s->n % CHUNK == 0 && s->n / CHUNK == s->nchunks) {
		struct metric **grown = realloc(s->chunks, (s->nchunks + 1) * sizeof(*grown));

		if (grown == NULL)
			return STATS_ERR_NOMEM;
		s->chunks = grown;
		if ((s->chunks[s->nchunks] = calloc(CHUNK, sizeof(struct metric))) == NULL)
			return STATS_ERR_NOMEM;
		s->nchunks++;
	}
	if ((s->n + 1) * 4 > s->nslots * 3) {
		size_t n = s->nslots ? s->nslots * 2 : 64;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (slots == NULL)
			return STATS_ERR_NOMEM;
		free(s->slots);
		s->slots = slots;
		s->nslots = n;
		for (size_t i = 0; i < s->n; i++)
			place(s, i);
	}
	return 0;
}

int stats_register(struct stats *s, const struct stats_desc *d, const struct stats_labels *labels,
                   uint64_t **value, size_t *index)
{
	uint32_t desc, conn, part, lp;
	struct metric *m;
	long i;
	int rc;

	*value = NULL;
	if ((rc = describe(s, d, &desc)) != 0 ||
	    (rc = label(s, labels ? labels->connector : NULL, &conn)) != 0 ||
	    (rc = label(s, labels ? labels->partition : NULL, &part)) != 0 ||
	    (rc = pair(s, conn, part, &lp)) != 0)
		return rc;
	i = find(s, s->descs[desc]->name, lp);
	if (i < 0) {
		/* A removed metric's place first: the index has room for it. */
		if (s->freemetric != 0) {
			i = (long)s->freemetric - 1;
			s->freemetric = (uint32_t)at(s, (size_t)i)->value;
		} else if (s->n >= UINT32_MAX - 1 || (rc = room(s)) != 0) {
			return rc != 0 ? rc : STATS_ERR_NOMEM;
		} else {
			i = (long)s->n++;
		}
		*at(s, (size_t)i) = (struct metric){.desc = desc, .labels = lp};
		place(s, (size_t)i);
		label_ref(s, conn, 1);
		label_ref(s, part, 1);
	}
	m = at(s, (size_t)i);
	m->retired = 0;
	*value = &m->value;
	if (index != NULL)
		*index = (size_t)i;
	return 0;
}

bool stats_next(const struct stats *s, size_t *cursor, struct stats_view *v)
{
	const struct metric *m;

	while (*cursor < s->n && at(s, *cursor)->retired)
		(*cursor)++;
	if (*cursor >= s->n)
		return false;
	m = at(s, *cursor);
	*v = (struct stats_view){.index = *cursor,
	                         .desc = &s->descs[m->desc]->d,
	                         .connector = label_str(s, s->pairs[m->labels].conn),
	                         .partition = label_str(s, s->pairs[m->labels].part),
	                         .value = m->value};
	(*cursor)++;
	return true;
}

void stats_retire(struct stats *s, const char *connector)
{
	size_t l;

	if (!hash_get(&s->bystr, connector, &l))
		return; /* no metric has it */
	for (size_t i = 0; i < s->n; i++)
		if (s->pairs[at(s, i)->labels].conn == (uint32_t)l + 1)
			at(s, i)->retired = 1;
}

/* Takes metric i out of the lookup table: the metrics after it in its run
 * of slots move back into the gap unless that would put one before its home
 * slot (no tombstones). */
static void unplace(struct stats *s, size_t i)
{
	size_t mask = s->nslots - 1, k, j;

	for (k = mix(s->descs[at(s, i)->desc]->name, at(s, i)->labels, s->nslots);
	     s->slots[k] != i + 1; k = (k + 1) & mask)
		;
	for (j = (k + 1) & mask; s->slots[j] != 0; j = (j + 1) & mask) {
		const struct metric *m = at(s, s->slots[j] - 1);
		size_t home = mix(s->descs[m->desc]->name, m->labels, s->nslots);

		if (((j - home) & mask) >= ((j - k) & mask)) {
			s->slots[k] = s->slots[j];
			k = j;
		}
	}
	s->slots[k] = 0;
}

void stats_remove(struct stats *s, uint64_t *h)
{
	struct metric *m = (struct metric *)(void *)h;
	long i;

	if (h == NULL || m->removed)
		return;
	i = find(s, s->descs[m->desc]->name, m->labels);
	if (i < 0 || at(s, (size_t)i) != m)
		return; /* not one of s's */
	unplace(s, (size_t)i);
	label_ref(s, s->pairs[m->labels].conn, -1);
	label_ref(s, s->pairs[m->labels].part, -1);
	*m = (struct metric){.value = s->freemetric, .retired = 1, .removed = 1};
	s->freemetric = (uint32_t)i + 1;
}

void stats_hide(uint64_t *h)
{
	/* The handle points at the metric's first member. */
	struct metric *m = (struct metric *)(void *)h;

	m->retired = 1;
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
