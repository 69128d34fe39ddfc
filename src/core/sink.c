/* sink: calls through a producer's ops (core/sink.h). */
#include "core/sink.h"

int sink_produce(struct sink *s, const struct sink_record *r, void *token, char *errbuf,
                 size_t errlen)
{
	return s->ops->produce(s->ctx, r, token, errbuf, errlen);
}

void sink_poll(struct sink *s)
{
	s->ops->poll(s->ctx);
}

int sink_fd(const struct sink *s)
{
	return s->ops->fd(s->ctx);
}

int sink_in_flight(const struct sink *s)
{
	return s->ops->in_flight(s->ctx);
}

uint32_t sink_queue_capacity(const struct sink *s)
{
	return s->ops->queue_capacity(s->ctx);
}

size_t sink_message_max(const struct sink *s)
{
	return s->ops->message_max(s->ctx);
}

int sink_fatal(struct sink *s, char *errbuf, size_t errlen)
{
	return s->ops->fatal(s->ctx, errbuf, errlen);
}

int sink_txn(struct sink *s, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen)
{
	return s->ops->txn(s->ctx, op, timeout_ms, errbuf, errlen);
}

bool sink_fenced(struct sink *s, char *id, size_t idlen, int64_t *timeout_ms)
{
	return s->ops->fenced(s->ctx, id, idlen, timeout_ms);
}

int sink_reachable(struct sink *s, int timeout_ms, char *errbuf, size_t errlen)
{
	return s->ops->reachable(s->ctx, timeout_ms, errbuf, errlen);
}

void sink_stats(const struct sink *s, struct sink_stats *out)
{
	s->ops->stats(s->ctx, out);
}

char *sink_cluster_id(struct sink *s)
{
	return s->ops->cluster_id(s->ctx);
}

const char *sink_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case SINK_ERR:
		return "producer failure";
	case SINK_QUEUE_FULL:
		return "producer queue full";
	case SINK_ERR_CONFIG:
		return "not possible as configured";
	case SINK_ERR_NOMEM:
		return "out of memory";
	case SINK_TXN_PENDING:
		return "pending (call again to resume)";
	default:
		return "unknown producer error";
	}
}

void sink_destroy(struct sink *s)
{
	if (s != NULL)
		s->ops->destroy(s->ctx);
}
