/* sqseen: what this process already read, where a position alone
 * cannot say it.
 *
 * Rows are told apart by a fingerprint: 128 bits over the type and bytes of
 * each column. Two uses:
 *
 * - The group of the last timestamp read (timestamp mode on a view, a WITHOUT
 *   ROWID table or a query: no rowid to page equal timestamps by). Each query
 *   reads that group again from its start and skips as many rows of each
 *   fingerprint as were read before; a row committed later with the same
 *   timestamp is new wherever it sorts, so nothing shifts a window and nothing
 *   is skipped or repeated. Identical rows are counted, not merged. The set is
 *   bounded (SQGROUP_MAX rows); a larger group is refused by the caller.
 *
 * - The last ids read in incrementing mode, with their rows' fingerprints, so
 *   a reused id (rows deleted and inserted again, a table dropped and created,
 *   VACUUM renumbering, a replaced file) shows as a row that changed or
 *   vanished under an id already read.
 *
 * Collisions: two distinct rows of one group collide with probability about
 * n^2 / 2^129, far below any other failure. */
#include "sources/sqlite/sqseen.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* Two lanes of a murmur3-style block mix, fed the same 8-byte words. */
static void feed(struct sqprint *p, uint64_t k)
{
	uint64_t k1 = rotl(k * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
	uint64_t k2 = rotl(k * 0x4cf5ad432745937fULL, 33) * 0x87c37b91114253d5ULL;

	p->a = rotl(p->a ^ k1, 27) * 5 + 0x52dce729;
	p->b = rotl(p->b ^ k2, 31) * 5 + 0x38495ab5;
}

static void feed_bytes(struct sqprint *p, const unsigned char *s, size_t n)
{
	feed(p, (uint64_t)n);
	while (n > 0) {
		uint64_t k = 0;
		size_t m = n < 8 ? n : 8;

		memcpy(&k, s, m);
		feed(p, k);
		s += m;
		n -= m;
	}
}

void sqseen_print(sqlite3_stmt *st, size_t ncols, struct sqprint *p)
{
	p->a = 0x9368e53c2f6af274ULL;
	p->b = 0x586dcd208f7cd3fdULL;
	for (size_t i = 0; i < ncols; i++) {
		int c = (int)i, type = sqlite3_column_type(st, c);
		double d;
		uint64_t bits;

		feed(p, (uint64_t)type);
		switch (type) {
		case SQLITE_INTEGER:
			feed(p, (uint64_t)sqlite3_column_int64(st, c));
			break;
		case SQLITE_FLOAT:
			d = sqlite3_column_double(st, c);
			memcpy(&bits, &d, sizeof(bits));
			feed(p, bits);
			break;
		case SQLITE_TEXT:
			feed_bytes(p, sqlite3_column_text(st, c),
			           (size_t)sqlite3_column_bytes(st, c));
			break;
		case SQLITE_BLOB:
			feed_bytes(p, sqlite3_column_blob(st, c),
			           (size_t)sqlite3_column_bytes(st, c));
			break;
		default:
			break;
		}
	}
	p->a = fmix(p->a ^ (uint64_t)ncols);
	p->b = fmix(p->b + p->a);
	p->a = fmix(p->a + p->b);
}

/* ---- the group of the last timestamp ---------------------------------------- */

struct sqgroup_entry {
	struct sqprint p;
	uint32_t sent; /* rows with this fingerprint read so far; 0: free slot */
	uint32_t seen; /* of those, met again by the current query */
};

static struct sqgroup_entry *slot(const struct sqgroup *g, const struct sqprint *p)
{
	size_t mask = g->cap - 1, i = (size_t)p->a & mask;

	while (g->v[i].sent != 0 && (g->v[i].p.a != p->a || g->v[i].p.b != p->b))
		i = (i + 1) & mask;
	return &g->v[i];
}

void sqseen_group_reset(struct sqgroup *g, int64_t ts)
{
	/* Called for each new timestamp, often each row: a table grown for a
	 * large group is given back rather than cleared every time. */
	if (g->cap > 1024) {
		free(g->v);
		g->v = NULL;
		g->cap = 0;
	} else if (g->n > 0) {
		memset(g->v, 0, g->cap * sizeof(*g->v));
	}
	g->n = g->rows = 0;
	g->ts = ts;
}

void sqseen_group_new_pass(struct sqgroup *g)
{
	for (size_t i = 0; i < g->cap && g->n > 0; i++)
		g->v[i].seen = 0;
}

bool sqseen_group_seen(struct sqgroup *g, const struct sqprint *p)
{
	struct sqgroup_entry *e;

	if (g->n == 0)
		return false;
	e = slot(g, p);
	if (e->sent == 0 || e->seen >= e->sent)
		return false;
	e->seen++;
	return true;
}

static int grow(struct sqgroup *g)
{
	size_t cap = g->cap ? g->cap * 2 : 256;
	struct sqgroup_entry *old = g->v, *v = calloc(cap, sizeof(*v));
	size_t oldcap = g->cap;

	if (v == NULL)
		return -1;
	g->v = v;
	g->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].sent != 0)
			*slot(g, &old[i].p) = old[i];
	free(old);
	return 0;
}

int sqseen_group_add(struct sqgroup *g, const struct sqprint *p)
{
	struct sqgroup_entry *e;

	if (g->rows >= SQGROUP_MAX)
		return SQSEEN_ERR_FULL;
	if ((g->n + 1) * 2 > g->cap && grow(g) != 0)
		return SQSEEN_ERR_NOMEM;
	e = slot(g, p);
	if (e->sent == 0) {
		e->p = *p;
		g->n++;
	}
	e->sent++;
	e->seen++;
	g->rows++;
	return SQSEEN_OK;
}

bool sqseen_group_full(const struct sqgroup *g)
{
	return g->rows >= SQGROUP_MAX;
}

void sqseen_group_free(struct sqgroup *g)
{
	free(g->v);
	g->v = NULL;
	g->cap = g->n = g->rows = 0;
}

/* ---- the last ids read ------------------------------------------------------- */

void sqseen_ring_push(struct sqring *r, int64_t id, const struct sqprint *p, size_t ncols)
{
	size_t i = (r->head + r->n) % SQRING_N;

	if (r->n == SQRING_N)
		r->head = (r->head + 1) % SQRING_N;
	else
		r->n++;
	r->id[i] = id;
	r->p[i] = *p;
	r->ncols[i] = ncols;
}

size_t sqseen_ring_len(const struct sqring *r)
{
	return r->n;
}

void sqseen_ring_get(const struct sqring *r, size_t k, int64_t *id, const struct sqprint **p,
                     size_t *ncols)
{
	size_t i = (r->head + r->n - 1 - k) % SQRING_N;

	*id = r->id[i];
	*p = &r->p[i];
	*ncols = r->ncols[i];
}

void sqseen_ring_drop_newest(struct sqring *r)
{
	if (r->n > 0)
		r->n--;
}

void sqseen_ring_clear(struct sqring *r)
{
	r->n = r->head = 0;
}

const char *sqseen_strerror(int err)
{
	switch (err) {
	case SQSEEN_OK:
		return "no error";
	case SQSEEN_ERR_FULL:
		return "too many rows share one timestamp";
	case SQSEEN_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}
