/* sink: the seam's calls reach the producer's ops, and the fake producer
 * the record path's tests use (sinkfake.c) behaves as librdkafka does where
 * they rely on it: reports only from sink_poll, each token once, in the
 * order asked, QUEUE_FULL at capacity, nothing after destroy. */
#include "core/sink.h"
#include "sinkfake.h"
#include "testlib.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>

struct seen {
	int n;
	void *tokens[16];
	enum sink_result res[16];
	char reasons[16][64];
};

static void on_report(void *ctx, void *token, enum sink_result res, const char *reason)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->tokens[s->n] = token;
		s->res[s->n] = res;
		snprintf(s->reasons[s->n], sizeof(s->reasons[0]), "%s", reason ? reason : "");
	}
	s->n++;
}

static int produce(struct sink *s, const char *value, void *token)
{
	char err[128];
	struct sink_record r = {
	    .topic = "t", .key = "k", .klen = 1, .value = value, .vlen = strlen(value)};

	return sink_produce(s, &r, token, err, sizeof(err));
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

static void test_reports_in_the_order_asked(void)
{
	struct seen seen = {0};
	struct sinkfake *f = sinkfake_new(on_report, &seen, 0);
	struct sink *s = sinkfake_sink(f);
	int tok[5];

	for (int i = 0; i < 5; i++)
		CHECK_INT(produce(s, "v", &tok[i]), 0);
	CHECK_INT(sinkfake_count(f), 5);
	CHECK_STR(sinkfake_record(f, 2)->value, "v");
	CHECK_INT(sink_in_flight(s), 5);
	CHECK(!readable(sink_fd(s)));
	sinkfake_deliver(f, 2, SINK_DELIVERED, NULL);
	sinkfake_deliver(f, 0, SINK_FAILED, "broker away");
	sinkfake_deliver(f, 4, SINK_REFUSED, "too large");
	CHECK_INT(seen.n, 0); /* nothing before sink_poll */
	CHECK(readable(sink_fd(s)));
	sink_poll(s);
	CHECK(!readable(sink_fd(s)));
	CHECK_INT(seen.n, 3);
	CHECK(seen.tokens[0] == &tok[2] && seen.res[0] == SINK_DELIVERED);
	CHECK(seen.tokens[1] == &tok[0] && seen.res[1] == SINK_FAILED);
	CHECK_STR(seen.reasons[1], "broker away");
	CHECK(seen.tokens[2] == &tok[4] && seen.res[2] == SINK_REFUSED);
	CHECK_INT(sink_in_flight(s), 2);
	sink_poll(s);
	CHECK_INT(seen.n, 3); /* each once */
	sink_destroy(s);      /* two in flight: no report from here on */
	CHECK_INT(seen.n, 3);
}

static void test_capacity_and_failures(void)
{
	struct seen seen = {0};
	struct sinkfake *f = sinkfake_new(on_report, &seen, 2);
	struct sink *s = sinkfake_sink(f);
	char err[128] = "";
	int tok[3];

	CHECK_INT(sink_queue_capacity(s), 2);
	CHECK_INT(produce(s, "a", &tok[0]), 0);
	CHECK_INT(produce(s, "b", &tok[1]), 0);
	CHECK_INT(produce(s, "c", &tok[2]), SINK_QUEUE_FULL);
	CHECK_INT(sinkfake_count(f), 2); /* nothing taken */
	sinkfake_deliver(f, 1, SINK_DELIVERED, NULL);
	CHECK_INT(produce(s, "c", &tok[2]), SINK_QUEUE_FULL); /* room comes with the poll */
	sink_poll(s);
	CHECK_INT(produce(s, "c", &tok[2]), 0);
	sinkfake_deliver(f, 0, SINK_DELIVERED, NULL);
	sink_poll(s);
	CHECK_INT(seen.n, 2);
	/* A record produced without a token (a transaction's offset record)
	 * takes no room and gets no report. */
	CHECK_INT(produce(s, "offset", NULL), 0);
	sinkfake_deliver(f, 3, SINK_DELIVERED, NULL);
	sink_poll(s);
	CHECK_INT(seen.n, 2);
	CHECK_INT(sink_in_flight(s), 1);
	sinkfake_fail_next(f, SINK_ERR_CONFIG, "topic t: invalid");
	CHECK_INT(produce(s, "d", &tok[0]), SINK_ERR_CONFIG);
	CHECK_INT(sink_fatal(s, err, sizeof(err)), 0);
	sinkfake_set_fatal(f, "kafka fatal error: fake");
	CHECK(sink_fatal(s, err, sizeof(err)) != 0);
	CHECK_STR(err, "kafka fatal error: fake");
	sinkfake_txn_answer(f, SINK_TXN_PENDING, 2);
	CHECK_INT(sink_txn(s, SINK_TXN_COMMIT, 10, err, sizeof(err)), SINK_TXN_PENDING);
	CHECK_INT(sink_txn(s, SINK_TXN_COMMIT, 10, err, sizeof(err)), SINK_TXN_PENDING);
	CHECK_INT(sink_txn(s, SINK_TXN_COMMIT, 10, err, sizeof(err)), 0);
	CHECK_INT(sinkfake_txn_calls(f, SINK_TXN_COMMIT), 3);
	CHECK_STR(sink_strerror(SINK_QUEUE_FULL), "producer queue full");
	sink_destroy(s);
	sink_destroy(NULL);
}

int main(void)
{
	test_reports_in_the_order_asked();
	test_capacity_and_failures();
	return testlib_done("test_sink");
}
