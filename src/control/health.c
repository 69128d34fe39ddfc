/* health: the verdict and the computed gauges (health.h). Main loop only. */
#include "control/health.h"

#include "control/backlog.h"
#include "control/pmetrics.h"
#include "core/loop.h"
#include "core/query.h"
#include "core/stats.h"
#include "offsets/offsets.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

struct health {
	const struct query *q;
	struct pmetrics *pm;
	struct backlog *bl;
	uint64_t *sent_bytes, *queue_depth, *brokers, *brokers_up, *rss, *cpu;
};

const char *health_strerror(int rc)
{
	switch (rc) {
	case HEALTH_OK:
		return "ok";
	case HEALTH_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown health error";
	}
}

int health_check(const struct query *q, char *msg, size_t len)
{
	int64_t now = loop_now_ms(), oldest = 0;
	size_t nconns = q->ops->connectors(q->ctx), nparts = q->ops->partitions(q->ctx);
	struct query_part op = {0};
	struct query_producer pr;
	struct query_flush fl;

	for (size_t i = 0; i < nconns; i++) {
		struct query_conn c;

		q->ops->connector(q->ctx, i, &c);
		if (c.state == QUERY_FAILED) {
			snprintf(msg, len, "connector %s FAILED: %s", c.name,
			         c.trace ? c.trace : "(no reason kept)");
			return -1;
		}
	}
	q->ops->flush(q->ctx, &fl);
	if (fl.last != 0) {
		snprintf(msg, len, "the last offset write failed: %s (the log says more)",
		         offsets_strerror(fl.last));
		return -1;
	}
	for (size_t i = 0; i < nparts; i++) {
		struct query_part p;

		q->ops->partition(q->ctx, i, now, &p);
		if (p.waited_ms > oldest) {
			oldest = p.waited_ms;
			op = p;
		}
	}
	if (op.key != NULL && oldest > fl.ack_timeout) {
		snprintf(msg, len,
		         "a record of %s has waited %lld ms for Kafka's acknowledgement "
		         "(health.ack.timeout.ms=%lld)",
		         op.key, (long long)oldest, (long long)fl.ack_timeout);
		return -1;
	}
	q->ops->producer(q->ctx, &pr);
	snprintf(msg, len, "%zu connector%s; %d records in flight, the oldest waiting %lld ms",
	         nconns, nconns == 1 ? "" : "s", pr.in_flight, (long long)oldest);
	return 0;
}

int health_new(const struct query *q, struct health **out)
{
	static const struct stats_desc d[] = {
	    {"producer_sent", STATS_COUNTER,
	     "bytes written to the brokers' sockets: after compression, framing included "
	     "(librdkafka tx_bytes)",
	     STATS_F_BYTES},
	    {"producer_queue_depth", STATS_GAUGE, "records and requests in the producer queue", 0},
	    {"kafka_brokers", STATS_GAUGE, "brokers of the cluster the producer knows", 0},
	    {"kafka_brokers_up", STATS_GAUGE, "brokers the producer has a connection up to", 0},
	    {"process_resident_memory", STATS_GAUGE, "resident memory of the process",
	     STATS_F_BYTES},
	    {"process_cpu", STATS_COUNTER, "CPU time of the process, user and system", STATS_F_MS},
	};
	struct health *h = calloc(1, sizeof(*h));
	uint64_t **cells[sizeof(d) / sizeof(d[0])];

	*out = NULL;
	if (h == NULL)
		return HEALTH_ERR_NOMEM;
	h->q = q;
	cells[0] = &h->sent_bytes;
	cells[1] = &h->queue_depth;
	cells[2] = &h->brokers;
	cells[3] = &h->brokers_up;
	cells[4] = &h->rss;
	cells[5] = &h->cpu;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (stats_register(q->ops->stats(q->ctx), &d[i], NULL, cells[i], NULL) != 0)
			goto nomem;
	if (pmetrics_new(q, &h->pm) != 0 || backlog_new(q, h->pm, &h->bl) != 0)
		goto nomem;
	*out = h;
	return HEALTH_OK;
nomem:
	health_destroy(h);
	return HEALTH_ERR_NOMEM;
}

void health_destroy(struct health *h)
{
	if (h == NULL)
		return;
	backlog_destroy(h->bl);
	pmetrics_destroy(h->pm);
	free(h);
}

void health_refresh_process(struct health *h)
{
	struct rusage ru;
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) == 2 && rss > 0)
			*h->rss = (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		*h->cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		          (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

void health_refresh(struct health *h)
{
	static const struct stats_desc state = {"connector_state", STATS_GAUGE,
	                                        "0 running, 1 paused, 2 stopped, 3 failed", 0};
	const struct query *q = h->q;
	struct stats *st = q->ops->stats(q->ctx);
	int64_t now = loop_now_ms();
	size_t n = q->ops->connectors(q->ctx);
	struct query_producer pr;

	pmetrics_refresh(h->pm, now);
	for (size_t i = 0; i < n; i++) {
		struct query_conn c;
		struct stats_labels l;
		const char *s;
		uint64_t *g;

		q->ops->connector(q->ctx, i, &c);
		l = (struct stats_labels){.connector = c.name};
		s = query_state_rest(&c);
		if (stats_register(st, &state, &l, &g, NULL) == 0)
			*g = s[0] == 'R' ? 0 : s[0] == 'P' ? 1 : s[0] == 'S' ? 2 : 3;
	}
	q->ops->producer(q->ctx, &pr);
	*h->sent_bytes = pr.sent_before + pr.stats.wire_bytes;
	*h->queue_depth = pr.stats.queue_depth;
	*h->brokers = pr.stats.brokers;
	*h->brokers_up = pr.stats.brokers_up;
	health_refresh_process(h);
	backlog_refresh(h->bl, now);
}

int health_backlog(const struct health *h, size_t i, enum source_unit *unit, uint64_t *n)
{
	return backlog_of(h->bl, i, unit, n);
}
