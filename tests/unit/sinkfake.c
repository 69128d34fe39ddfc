/* sinkfake: see sinkfake.h. */
#include "sinkfake.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sinkfake {
	struct sink base;
	sink_delivery_fn cb;
	void *cb_ctx;
	uint32_t capacity;
	struct sinkfake_record *recs;
	size_t nrecs, caprecs;
	/* Reports asked for and not yet run: indexes into recs, with results. */
	struct report {
		size_t i;
		enum sink_result res;
		char reason[128];
	} * reports;
	size_t nreports, capreports;
	int in_flight; /* produced with a token, report not yet run */
	int fail_rc;
	char fail_why[128];
	char fatal_why[128];
	int txn_rc, txn_left;
	int txn_calls[SINK_TXN_ABORT + 1];
	int polls;
	int pipefd[2]; /* readable while reports wait: wakes a loop */
};

static char *dup_bytes(const void *p, size_t n)
{
	char *s;

	if (p == NULL)
		return NULL;
	if ((s = malloc(n + 1)) == NULL)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static int produce(void *ctx, const struct sink_record *r, void *token, char *errbuf, size_t errlen)
{
	struct sinkfake *f = ctx;
	struct sinkfake_record *rec;

	if (f->fail_rc != 0) {
		int rc = f->fail_rc;

		f->fail_rc = 0;
		snprintf(errbuf, errlen, "%s", f->fail_why);
		return rc;
	}
	if (f->capacity > 0 && (uint32_t)f->in_flight >= f->capacity)
		return SINK_QUEUE_FULL;
	if (f->nrecs == f->caprecs) {
		f->caprecs = f->caprecs ? 2 * f->caprecs : 16;
		f->recs = realloc(f->recs, f->caprecs * sizeof(*f->recs));
		if (f->recs == NULL)
			abort();
	}
	rec = &f->recs[f->nrecs++];
	memset(rec, 0, sizeof(*rec));
	rec->topic = dup_bytes(r->topic, strlen(r->topic));
	rec->key = dup_bytes(r->key, r->klen);
	rec->value = dup_bytes(r->value, r->vlen);
	rec->klen = r->klen;
	rec->vlen = r->vlen;
	rec->nheaders = r->nheaders;
	rec->token = token;
	if (token != NULL)
		f->in_flight++;
	return 0;
}

static void poll_reports(void *ctx)
{
	struct sinkfake *f = ctx;
	size_t n = f->nreports;
	char drain[64];

	f->polls++;
	while (read(f->pipefd[0], drain, sizeof(drain)) > 0)
		;
	/* A callback may ask for more reports: they wait for the next poll. */
	for (size_t k = 0; k < n; k++) {
		struct report rep = f->reports[k];

		f->in_flight--;
		f->cb(f->cb_ctx, f->recs[rep.i].token, rep.res,
		      rep.res == SINK_DELIVERED ? NULL : rep.reason);
	}
	if (n > 0)
		memmove(f->reports, f->reports + n, (f->nreports - n) * sizeof(*f->reports));
	f->nreports -= n;
	if (f->nreports > 0)
		(void)!write(f->pipefd[1], "1", 1);
}

static int fd(const void *ctx)
{
	const struct sinkfake *f = ctx;

	return f->pipefd[0];
}

static int in_flight(const void *ctx)
{
	const struct sinkfake *f = ctx;

	return f->in_flight;
}

static uint32_t queue_capacity(const void *ctx)
{
	const struct sinkfake *f = ctx;

	return f->capacity > 0 ? f->capacity : 100000;
}

static size_t message_max(const void *ctx)
{
	return 1000000;
}

static int fatal(void *ctx, char *errbuf, size_t errlen)
{
	struct sinkfake *f = ctx;

	if (f->fatal_why[0] == '\0')
		return 0;
	snprintf(errbuf, errlen, "%s", f->fatal_why);
	return SINK_ERR;
}

static int txn(void *ctx, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen)
{
	struct sinkfake *f = ctx;

	f->txn_calls[op]++;
	if (f->txn_left == 0)
		return 0;
	f->txn_left--;
	snprintf(errbuf, errlen, "transaction: fake answer %d", f->txn_rc);
	return f->txn_rc;
}

static bool fenced(void *ctx, char *id, size_t idlen, int64_t *timeout_ms)
{
	return false;
}

static int reachable(void *ctx, int timeout_ms, char *errbuf, size_t errlen)
{
	return 0;
}

static void stats(const void *ctx, struct sink_stats *out)
{
	const struct sinkfake *f = ctx;

	memset(out, 0, sizeof(*out));
	out->queue_depth = (uint64_t)f->in_flight;
}

static char *cluster_id(void *ctx)
{
	return strdup("fake-cluster");
}

static void destroy(void *ctx)
{
	struct sinkfake *f = ctx;

	for (size_t i = 0; i < f->nrecs; i++) {
		free(f->recs[i].topic);
		free(f->recs[i].key);
		free(f->recs[i].value);
	}
	free(f->recs);
	free(f->reports);
	close(f->pipefd[0]);
	close(f->pipefd[1]);
	free(f);
}

static const struct sink_ops fake_ops = {
    .produce = produce,
    .poll = poll_reports,
    .fd = fd,
    .in_flight = in_flight,
    .queue_capacity = queue_capacity,
    .message_max = message_max,
    .fatal = fatal,
    .txn = txn,
    .fenced = fenced,
    .reachable = reachable,
    .stats = stats,
    .cluster_id = cluster_id,
    .destroy = destroy,
};

struct sinkfake *sinkfake_new(sink_delivery_fn cb, void *cb_ctx, uint32_t capacity)
{
	struct sinkfake *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	if (pipe2(f->pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
		free(f);
		return NULL;
	}
	f->base.ops = &fake_ops;
	f->base.ctx = f;
	f->cb = cb;
	f->cb_ctx = cb_ctx;
	f->capacity = capacity;
	return f;
}

struct sink *sinkfake_sink(struct sinkfake *f)
{
	return &f->base;
}

size_t sinkfake_count(const struct sinkfake *f)
{
	return f->nrecs;
}

const struct sinkfake_record *sinkfake_record(const struct sinkfake *f, size_t i)
{
	return i < f->nrecs ? &f->recs[i] : NULL;
}

void sinkfake_deliver(struct sinkfake *f, size_t i, enum sink_result res, const char *reason)
{
	struct report *rep;

	if (i >= f->nrecs || f->recs[i].reported) {
		fprintf(stderr, "sinkfake: record %zu %s\n", i,
		        i >= f->nrecs ? "was never produced" : "was reported already");
		abort();
	}
	f->recs[i].reported = true;
	if (f->recs[i].token == NULL)
		return;
	if (f->nreports == f->capreports) {
		f->capreports = f->capreports ? 2 * f->capreports : 16;
		f->reports = realloc(f->reports, f->capreports * sizeof(*f->reports));
		if (f->reports == NULL)
			abort();
	}
	rep = &f->reports[f->nreports++];
	rep->i = i;
	rep->res = res;
	snprintf(rep->reason, sizeof(rep->reason), "%s", reason != NULL ? reason : "fake failure");
	(void)!write(f->pipefd[1], "1", 1);
}

void sinkfake_deliver_all(struct sinkfake *f)
{
	for (size_t i = 0; i < f->nrecs; i++)
		if (!f->recs[i].reported)
			sinkfake_deliver(f, i, SINK_DELIVERED, NULL);
}

void sinkfake_fail_next(struct sinkfake *f, int rc, const char *why)
{
	f->fail_rc = rc;
	snprintf(f->fail_why, sizeof(f->fail_why), "%s", why);
}

void sinkfake_set_fatal(struct sinkfake *f, const char *why)
{
	snprintf(f->fatal_why, sizeof(f->fatal_why), "%s", why);
}

void sinkfake_txn_answer(struct sinkfake *f, int rc, int n)
{
	f->txn_rc = rc;
	f->txn_left = n;
}

int sinkfake_txn_calls(const struct sinkfake *f, enum sink_txn_op op)
{
	return f->txn_calls[op];
}

int sinkfake_polls(const struct sinkfake *f)
{
	return f->polls;
}

void sinkfake_wake(struct sinkfake *f)
{
	(void)!write(f->pipefd[1], "1", 1);
}
