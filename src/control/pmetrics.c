/* pmetrics: a partition's series (pmetrics.h).
 *
 * A partition counts its records (produced, acked, bytes read, the last
 * acknowledgement) in itself, a few integers, whatever its number. Its
 * series in the registry (the seven skiff_partition_* of /metrics) exist
 * only for the metrics.partition.limit most active partitions, picked
 * again at each export: those with records in flight first, then by their
 * last acknowledgement, the ones shown already before others of the same
 * rank. A glob of 20,000 files would otherwise be 140,000 series (more
 * than a fleet's Prometheus wants from one device) and 0.25 KB per file
 * that never goes. The connector's own counters (records, losses) are
 * exact whatever is shown. Main loop only. */
#include "control/pmetrics.h"

#include "core/query.h"
#include "core/stats.h"
#include "offsets/offsets_doc.h"

#include <stdlib.h>
#include <string.h>

enum { S_PRODUCED, S_ACKED, S_READ, S_IN_FLIGHT, S_OLDEST_AGE, S_LAST_ACK, NSERIES };

static const struct stats_desc series_desc[NSERIES] = {
    [S_PRODUCED] = {"partition_records_produced", STATS_COUNTER, "records handed to the producer",
                    0},
    [S_ACKED] = {"partition_records_acked", STATS_COUNTER, "records Kafka acknowledged", 0},
    [S_READ] = {"partition_read", STATS_COUNTER,
                "bytes of the values read (a line without its newline; a row as converted)",
                STATS_F_BYTES},
    [S_IN_FLIGHT] = {"partition_records_in_flight", STATS_GAUGE,
                     "records waiting for Kafka's "
                     "acknowledgement",
                     0},
    [S_OLDEST_AGE] = {"partition_oldest_unacked_age", STATS_GAUGE,
                      "how long the oldest unacknowledged record has waited (since it became "
                      "the oldest)",
                      STATS_F_MS},
    [S_LAST_ACK] = {"partition_last_ack", STATS_GAUGE, "when Kafka last acknowledged a record",
                    STATS_F_EPOCH_MS},
};

static const struct stats_desc backlog_desc[] = {
    [SOURCE_UNIT_BYTES] = {"partition_backlog", STATS_GAUGE,
                           "bytes the source knows are still unread (after its read position)",
                           STATS_F_BYTES},
    [SOURCE_UNIT_ROWS] = {"partition_backlog_rows", STATS_GAUGE,
                          "rows the source knows are still unread (after the last one read)", 0},
};

struct pseries {
	struct stats *stats; /* the registry they are in */
	uint64_t *h[NSERIES];
	/* The backlog gauge, registered when the source first tells it, in
	 * unit backlog_unit; hidden while unknown. */
	uint64_t *backlog;
	enum source_unit backlog_unit;
	bool backlog_put, backlog_hidden;
};

struct pmetrics {
	const struct query *q;
};

const char *pmetrics_strerror(int rc)
{
	switch (rc) {
	case PMETRICS_OK:
		return "ok";
	case PMETRICS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown pmetrics error";
	}
}

int pmetrics_new(const struct query *q, struct pmetrics **out)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return PMETRICS_ERR_NOMEM;
	(*out)->q = q;
	return PMETRICS_OK;
}

void pmetrics_destroy(struct pmetrics *pm)
{
	free(pm);
}

/* The labels of p's series: its connector, and the source partition (the
 * second element of its key) copied into *json (free it). Returns 0 or
 * PMETRICS_ERR_NOMEM. */
static int series_labels(const struct pmetrics *pm, const struct query_part *p,
                         struct stats_labels *l, char **json)
{
	struct query_conn c;
	const char *part;
	size_t plen;

	pm->q->ops->connector(pm->q->ctx, p->conn, &c);
	*l = (struct stats_labels){.connector = c.name};
	(void)offsets_doc_own_key(p->key, l->connector, &part, &plen);
	if ((*json = strndup(part, plen)) == NULL)
		return PMETRICS_ERR_NOMEM;
	l->partition = *json;
	return PMETRICS_OK;
}

void pmetrics_unshow(struct pseries **shown, bool keep_registry)
{
	struct pseries *ps = *shown;

	if (ps == NULL)
		return;
	for (size_t i = 0; i < NSERIES && keep_registry; i++)
		stats_remove(ps->stats, ps->h[i]);
	if (keep_registry)
		stats_remove(ps->stats, ps->backlog);
	free(ps);
	*shown = NULL;
}

/* Gives p its series. Returns 0 or PMETRICS_ERR_NOMEM (then not shown). */
static int show(const struct pmetrics *pm, const struct query_part *p)
{
	struct stats_labels l;
	char *json = NULL;
	int rc = 0;

	if ((*p->shown = calloc(1, sizeof(**p->shown))) == NULL ||
	    series_labels(pm, p, &l, &json) != 0) {
		free(*p->shown);
		*p->shown = NULL;
		return PMETRICS_ERR_NOMEM;
	}
	(*p->shown)->stats = pm->q->ops->stats(pm->q->ctx);
	for (size_t i = 0; i < NSERIES && rc == 0; i++)
		rc = stats_register((*p->shown)->stats, &series_desc[i], &l, &(*p->shown)->h[i],
		                    NULL);
	free(json);
	if (rc != 0) {
		pmetrics_unshow(p->shown, true);
		return PMETRICS_ERR_NOMEM;
	}
	return PMETRICS_OK;
}

/* The view of partition i at now. */
static struct query_part at(const struct pmetrics *pm, size_t i, int64_t now)
{
	struct query_part v;

	pm->q->ops->partition(pm->q->ctx, i, now, &v);
	return v;
}

/* True when partition ia is more active than ib (see the top). */
static bool busier(const struct pmetrics *pm, size_t ia, size_t ib, int64_t now)
{
	struct query_part a = at(pm, ia, now), b = at(pm, ib, now);

	if ((a.in_flight > 0) != (b.in_flight > 0))
		return a.in_flight > 0;
	if (a.last_ack_ms != b.last_ack_ms)
		return a.last_ack_ms > b.last_ack_ms;
	if ((*a.shown != NULL) != (*b.shown != NULL))
		return *a.shown != NULL;
	return ia < ib;
}

/* A min-heap of partition indexes, the least active at its root. */
static void sift_down(const struct pmetrics *pm, uint32_t *heap, size_t n, size_t i, int64_t now)
{
	for (;;) {
		size_t l = 2 * i + 1, least = i;

		if (l < n && busier(pm, heap[least], heap[l], now))
			least = l;
		if (l + 1 < n && busier(pm, heap[least], heap[l + 1], now))
			least = l + 1;
		if (least == i)
			return;
		uint32_t t = heap[i];

		heap[i] = heap[least];
		heap[least] = t;
		i = least;
	}
}

/* Marks in chosen[] (n of them) the partitions to show: all when they are
 * no more than the limit, else the limit's most active, kept in a heap of
 * the limit's size (O(n log limit)). Returns 0 or PMETRICS_ERR_NOMEM. */
static int choose(const struct pmetrics *pm, bool *chosen, size_t n, int64_t now)
{
	struct query_flush fl;
	size_t k, m = 0;
	uint32_t *heap;

	pm->q->ops->flush(pm->q->ctx, &fl);
	k = fl.part_limit < n ? fl.part_limit : n;
	for (size_t i = 0; i < n; i++)
		chosen[i] = k == n;
	if (k == n || k == 0)
		return PMETRICS_OK;
	if ((heap = malloc(k * sizeof(*heap))) == NULL)
		return PMETRICS_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		if (m < k) {
			heap[m++] = (uint32_t)i;
			if (m == k)
				for (size_t j = k / 2; j-- > 0;)
					sift_down(pm, heap, k, j, now);
		} else if (busier(pm, i, heap[0], now)) {
			heap[0] = (uint32_t)i;
			sift_down(pm, heap, k, 0, now);
		}
	}
	for (size_t j = 0; j < k; j++)
		chosen[heap[j]] = true;
	free(heap);
	return PMETRICS_OK;
}

void pmetrics_refresh(struct pmetrics *pm, int64_t now)
{
	size_t n = pm->q->ops->partitions(pm->q->ctx);
	bool *chosen = calloc(n ? n : 1, sizeof(*chosen));

	/* Out of memory: the same ones as before, their values as they were. */
	if (chosen == NULL || choose(pm, chosen, n, now) != 0) {
		free(chosen);
		return;
	}
	/* Those no longer chosen lose their series first, so that the
	 * registry never holds more than the limit's. */
	for (size_t i = 0; i < n; i++)
		if (!chosen[i])
			pmetrics_unshow(at(pm, i, now).shown, true);
	for (size_t i = 0; i < n; i++) {
		struct query_part p = at(pm, i, now);
		uint64_t **h;

		if (!chosen[i] || (*p.shown == NULL && show(pm, &p) != 0))
			continue;
		h = (*p.shown)->h;
		*h[S_PRODUCED] = p.produced;
		*h[S_ACKED] = p.acked;
		*h[S_READ] = p.read_bytes;
		*h[S_IN_FLIGHT] = p.in_flight;
		*h[S_OLDEST_AGE] = (uint64_t)p.waited_ms;
		*h[S_LAST_ACK] = (uint64_t)p.last_ack_ms;
	}
	free(chosen);
}

/* Registers p's backlog gauge in unit u, or shows it again; hides the
 * gauge of another unit. Labelled like p's other series. Returns 0 or
 * PMETRICS_ERR_NOMEM. */
static int backlog_gauge(const struct pmetrics *pm, const struct query_part *p, enum source_unit u)
{
	struct pseries *ps = *p->shown;
	struct stats_labels l;
	char *json;
	int rc;

	if (ps->backlog != NULL && ps->backlog_unit != u && !ps->backlog_hidden)
		stats_hide(ps->backlog);
	if (series_labels(pm, p, &l, &json) != 0)
		return PMETRICS_ERR_NOMEM;
	rc = stats_register(ps->stats, &backlog_desc[u], &l, &ps->backlog, NULL);
	free(json);
	if (rc != 0) {
		ps->backlog = NULL;
		return PMETRICS_ERR_NOMEM;
	}
	ps->backlog_unit = u;
	ps->backlog_hidden = false;
	return PMETRICS_OK;
}

void pmetrics_backlog_begin(struct pmetrics *pm, int64_t now)
{
	size_t n = pm->q->ops->partitions(pm->q->ctx);

	for (size_t i = 0; i < n; i++) {
		struct pseries *ps = *at(pm, i, now).shown;

		if (ps != NULL)
			ps->backlog_put = false;
	}
}

void pmetrics_backlog_put(struct pmetrics *pm, const struct query_part *p, enum source_unit u,
                          uint64_t n)
{
	struct pseries *ps = *p->shown;

	if (ps == NULL || (unsigned)u >= sizeof(backlog_desc) / sizeof(backlog_desc[0]))
		return;
	if ((ps->backlog == NULL || ps->backlog_hidden || ps->backlog_unit != u) &&
	    backlog_gauge(pm, p, u) != 0)
		return; /* unknown: the registry is out of memory */
	*ps->backlog = n;
	ps->backlog_put = true;
}

void pmetrics_backlog_end(struct pmetrics *pm, int64_t now)
{
	size_t n = pm->q->ops->partitions(pm->q->ctx);

	for (size_t i = 0; i < n; i++) {
		struct pseries *ps = *at(pm, i, now).shown;

		if (ps != NULL && ps->backlog != NULL && !ps->backlog_put && !ps->backlog_hidden) {
			stats_hide(ps->backlog);
			ps->backlog_hidden = true;
		}
	}
}
