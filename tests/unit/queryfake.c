/* queryfake: see queryfake.h. */
#include "queryfake.h"

#include "control/rest.h"

#include <stdio.h>
#include <string.h>

static size_t connectors(void *ctx)
{
	return ((struct queryfake *)ctx)->nconns;
}

static void connector(void *ctx, size_t i, struct query_conn *out)
{
	*out = ((struct queryfake *)ctx)->conns[i];
}

static size_t partitions(void *ctx)
{
	return ((struct queryfake *)ctx)->nparts;
}

static void partition(void *ctx, size_t i, int64_t now, struct query_part *out)
{
	(void)now;
	*out = ((struct queryfake *)ctx)->parts[i];
}

static void flush(void *ctx, struct query_flush *out)
{
	*out = ((struct queryfake *)ctx)->flush;
}

static void producer(void *ctx, struct query_producer *out)
{
	*out = ((struct queryfake *)ctx)->producer;
}

static struct stats *stats(void *ctx)
{
	return ((struct queryfake *)ctx)->stats;
}

static void backlog(void *ctx, size_t i, query_backlog_fn put, void *arg)
{
	struct queryfake *f = ctx;

	for (size_t k = 0; k < f->nparts; k++)
		if (f->parts[k].conn == i && f->backlog_known[k])
			put(arg, &f->parts[k], f->backlog_unit[k], f->backlog[k]);
}

static void bandwidth(void *ctx, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ((struct queryfake *)ctx)->bandwidth);
}

static int command(void *ctx, size_t i, enum query_command cmd, char *errbuf, size_t errlen)
{
	struct queryfake *f = ctx;

	f->command_conn = i;
	f->command_cmd = (int)cmd;
	if (f->command_rc != 0)
		snprintf(errbuf, errlen, "refused by the fake");
	return f->command_rc;
}

static int layer_change(void *ctx, const struct query_change *ch, char *errbuf, size_t errlen)
{
	struct queryfake *f = ctx;

	f->changes++;
	f->change = *ch;
	snprintf(f->change_name, sizeof(f->change_name), "%s", ch->name);
	if (f->change_rc != 0) {
		snprintf(errbuf, errlen, "refused by the fake");
		return f->change_rc;
	}
	return REST_PENDING;
}

static uint64_t state_epoch(void *ctx)
{
	return ((struct queryfake *)ctx)->epoch;
}

static const struct query_ops ops = {
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
    .layer_change = layer_change,
    .state_epoch = state_epoch,
};

void queryfake_init(struct queryfake *f, struct stats *st)
{
	memset(f, 0, sizeof(*f));
	f->q = (struct query){&ops, f};
	f->stats = st;
	f->command_cmd = -1;
	f->flush.ack_timeout = 60000;
	f->flush.part_limit = 1000;
}

size_t queryfake_conn(struct queryfake *f, const char *name)
{
	static const char *const classes[] = {"FileStreamSource", NULL};
	size_t i = f->nconns++;

	f->conns[i] = (struct query_conn){.name = name, .state = QUERY_RUNNING, .classes = classes};
	return i;
}

size_t queryfake_part(struct queryfake *f, size_t conn, const char *key)
{
	size_t i = f->nparts++;

	f->parts[i] = (struct query_part){.key = key, .conn = conn, .shown = &f->shown[i]};
	return i;
}
