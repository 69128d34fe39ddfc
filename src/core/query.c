/* query: the worker as the control interfaces see it (core/query.h), its
 * views filled from the pieces of the worker its host names (struct
 * query_host). The one file of core/ a control client reaches, and only
 * through host_query_ops. Main loop only. */
#include "core/query.h"

#include "config/settings.h"
#include "control/rest.h"
#include "core/active_topics.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/connectors.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/pipeline.h"
#include "core/reload.h"
#include "kafka/supervisor.h"

#include <stdio.h>

/* A reload leaves a removed connector's slot as a tombstone (the loop holds
 * pointers into the array): the query counts and indexes live ones. */
static size_t connectors(void *ctx)
{
	const struct query_host *h = ctx;
	size_t n = 0;

	for (size_t i = 0; i < connectors_count(h->conns); i++)
		n += !connectors_at(h->conns, i)->removed;
	return n;
}

/* The i-th live connector; i < connectors(h). */
static struct conn *live(struct query_host *h, size_t i)
{
	for (size_t k = 0; k < connectors_count(h->conns); k++)
		if (!connectors_at(h->conns, k)->removed && i-- == 0)
			return connectors_at(h->conns, k);
	return NULL;
}

/* c's index among the live connectors. */
static size_t index_of(const struct query_host *h, const struct conn *c)
{
	size_t n = 0;

	for (size_t k = 0; k < connectors_count(h->conns) && connectors_at(h->conns, k) != c; k++)
		n += !connectors_at(h->conns, k)->removed;
	return n;
}

static enum query_state state(const struct conn *c)
{
	if (c->stopped)
		return QUERY_FAILED;
	switch (c->run) {
	case CONN_PAUSED:
		return QUERY_PAUSED;
	case CONN_STOPPING:
		return QUERY_STOPPING;
	case CONN_STOPPED:
		return QUERY_STOPPED;
	case CONN_RUNNING:
		break;
	}
	return QUERY_RUNNING;
}

static void connector(void *ctx, size_t i, struct query_conn *out)
{
	const struct conn *c = live(ctx, i);

	*out = (struct query_conn){
	    .name = c->cs->name,
	    .state = state(c),
	    .restarting = c->restarting,
	    .stop_paused = c->stop_paused,
	    .trace = c->trace,
	    .produced = *c->produced,
	    .acked = *c->acked,
	    .failed = *c->failed,
	    .last_ack_ms = c->last_ack_ms,
	    .classes = c->cs->ops->classes,
	    .cfg = c->cs->cfg,
	};
}

static size_t partitions(void *ctx)
{
	return partitions_count(((struct query_host *)ctx)->parts);
}

static void view(const struct query_host *h, struct partition *p, int64_t now,
                 struct query_part *out)
{
	partition_head(p, now);
	*out = (struct query_part){
	    .key = p->key,
	    .conn = index_of(h, p->conn),
	    .produced = p->produced,
	    .acked = p->acked,
	    .read_bytes = p->read_bytes,
	    .in_flight = partition_inflight(p),
	    .waited_ms = partition_waited(p, now),
	    .last_ack_ms = p->last_ack_ms,
	    .shown = &p->series,
	};
}

static void partition(void *ctx, size_t i, int64_t now, struct query_part *out)
{
	struct query_host *h = ctx;

	view(h, partitions_at(h->parts, i), now, out);
}

static void flush(void *ctx, struct query_flush *out)
{
	const struct query_host *h = ctx;

	out->last = commits_last(h->commits, &out->last_ms);
	out->failures_in_row = (int)commits_failures(h->commits);
	h->ops->limits(h->ctx, &out->ack_timeout, &out->part_limit);
}

static void producer(void *ctx, struct query_producer *out)
{
	const struct query_host *h = ctx;
	const struct sink *sink = h->sup != NULL ? supervisor_sink(h->sup) : NULL;

	*out = (struct query_producer){.last_ack_ms = pipeline_last_ack_ms(h->pipe)};
	if (sink == NULL)
		return;
	out->sent_before = supervisor_sent_before(h->sup);
	sink_stats(sink, &out->stats);
	out->in_flight = sink_in_flight(sink);
}

static struct stats *stats(void *ctx)
{
	return ((struct query_host *)ctx)->stats;
}

/* What a source's backlog put carries over to the query's. */
struct backlog_arg {
	struct query_host *h;
	query_backlog_fn put;
	void *arg;
};

static void put_backlog(void *arg, struct partition *p, enum source_unit u, uint64_t n)
{
	struct backlog_arg *a = arg;
	struct query_part v;

	if (p == NULL)
		return;
	view(a->h, p, loop_now_ms(), &v);
	a->put(a->arg, &v, u, n);
}

static void backlog(void *ctx, size_t i, query_backlog_fn put, void *arg)
{
	struct backlog_arg a = {ctx, put, arg};
	const struct conn *c = live(ctx, i);

	if (c->ctx != NULL && c->cs->ops->backlog != NULL)
		c->cs->ops->backlog(c->ctx, put_backlog, &a);
}

static void bandwidth(void *ctx, char *buf, size_t len)
{
	supervisor_summary(((struct query_host *)ctx)->sup, buf, len);
}

/* The connector state machine is core/connectors.c's; this names its
 * answers as the REST API does. */
static int command(void *ctx, size_t i, enum query_command cmd, char *errbuf, size_t errlen)
{
	struct conn *c = live(ctx, i);
	int rc;

	switch (cmd) {
	case QUERY_RESTART:
		connector_restart(c);
		return 0;
	case QUERY_PAUSE:
		rc = connector_pause(c, errbuf, errlen);
		break;
	case QUERY_RESUME:
		rc = connector_resume(c, errbuf, errlen);
		break;
	default:
		rc = connector_stop(c, errbuf, errlen);
		break;
	}
	return rc == 0 ? 0 : rc == CONNECTORS_ERR_STATE ? REST_ERR_STATE : REST_ERR;
}

/* KIP-875: the stored offsets (core/commits.c). */
static int offsets(void *ctx, size_t i, char **json)
{
	struct query_host *h = ctx;

	return commits_print(h->commits, live(h, i)->cs->name, json) == 0 ? 0 : REST_ERR_NOMEM;
}

/* KIP-875's edit: only while the connector is STOPPED, as Connect. */
static int alter_offsets(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
                         char *errbuf, size_t errlen)
{
	struct query_host *h = ctx;
	struct conn *c = live(h, i);
	const char *name = c->cs->name;
	bool deferred = false;
	int rc;

	if (c->run != CONN_STOPPED || c->stopped) {
		snprintf(errbuf, errlen,
		         "Connectors must be in the STOPPED state before their "
		         "offsets can be modified. This can be done for the specified connector by "
		         "issuing a 'PUT' request to the '/connectors/%s/stop' endpoint",
		         name);
		return REST_ERR_STATE;
	}
	rc = commits_alter(h->commits, c->cs, e, n, errbuf, errlen);
	if (rc == 0) {
		log_notice("connector %s: offsets %s (REST API)", name, e ? "altered" : "reset");
		rc = commits_write_now(h->commits, &deferred, errbuf, errlen);
	}
	if (deferred)
		h->ops->flush_soon(h->ctx); /* the flush timer writes it */
	return rc == 0                    ? 0
	       : rc == COMMITS_ERR_SOURCE ? REST_ERR_SOURCE
	       : rc == COMMITS_ERR_NOMEM  ? REST_ERR_NOMEM
	       : rc == COMMITS_ERR_WRITE  ? REST_ERR
	                                  : REST_ERR_ARG;
}

static void topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	active_topics_each(live(ctx, i)->topics, fn, arg);
}

static void forget_topics(void *ctx, size_t i)
{
	connector_forget_topics(live(ctx, i));
}

static int change(void *ctx, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen)
{
	return reload_change(((struct query_host *)ctx)->reload, rc, waiter, errbuf, errlen);
}

static int layer_change(void *ctx, const struct query_change *ch, char *errbuf, size_t errlen)
{
	return reload_layer_change(((struct query_host *)ctx)->reload, ch, errbuf, errlen);
}

static uint64_t state_epoch(void *ctx)
{
	return connectors_epoch(((struct query_host *)ctx)->conns);
}

static char *cluster_id(void *ctx)
{
	return sink_cluster_id(supervisor_sink(((struct query_host *)ctx)->sup));
}

static const struct config_section *worker_config(void *ctx)
{
	const struct query_host *h = ctx;

	return h->ops->worker_config(h->ctx);
}

const struct query_ops host_query_ops = {
    .connectors = connectors,
    .connector = connector,
    .partitions = partitions,
    .partition = partition,
    .flush = flush,
    .producer = producer,
    .stats = stats,
    .backlog = backlog,
    .bandwidth = bandwidth,
    .command = command,
    .topics = topics,
    .forget_topics = forget_topics,
    .offsets = offsets,
    .alter_offsets = alter_offsets,
    .change = change,
    .layer_change = layer_change,
    .state_epoch = state_epoch,
    .cluster_id = cluster_id,
    .worker_config = worker_config,
};
