/* Unit tests for ratelimit.c: the bucket's burst, its refill, the wire
 * count settling the estimates, a producer counting from 0 again, the
 * wake-up time, and the most any 10 s window lets through. */
#include "ratelimit.h"
#include "testlib.h"

static void test_burst_and_refill(void)
{
	struct ratelimit *r;

	CHECK_INT(ratelimit_new(1000, 0, &r), 0);
	CHECK(ratelimit_allows(r, 0));
	ratelimit_charge(r, 100, 0); /* the burst: a tenth of a second */
	CHECK(ratelimit_allows(r, 0));
	ratelimit_charge(r, 1, 0);
	CHECK(!ratelimit_allows(r, 0));
	/* Half the burst back (50 bytes at 1000/s) takes 51 ms from a debt of 1. */
	CHECK_INT(ratelimit_ready_at(r, 0), 51);
	CHECK(!ratelimit_allows(r, 0));
	CHECK(ratelimit_allows(r, 1));
	CHECK_INT(ratelimit_throttled_ms(r, 1), 1);
	/* Never more than the burst, however long it was idle. */
	CHECK(ratelimit_allows(r, 100000));
	ratelimit_charge(r, 101, 100000);
	CHECK(!ratelimit_allows(r, 100000));
	ratelimit_destroy(r);
}

static void test_settle(void)
{
	struct ratelimit *r;

	CHECK_INT(ratelimit_new(1000, 0, &r), 0);
	ratelimit_charge(r, 100, 0);
	CHECK(ratelimit_allows(r, 0));
	/* The wire says 300 were sent (framing, retries): a debt of 200. */
	ratelimit_settle(r, 300, 0);
	CHECK(!ratelimit_allows(r, 0));
	CHECK(!ratelimit_allows(r, 199));
	CHECK(ratelimit_allows(r, 200));
	/* Compression: 100 charged, 10 sent: 90 come back (a debt of 10). */
	ratelimit_charge(r, 100, 200);
	ratelimit_settle(r, 310, 200);
	CHECK(!ratelimit_allows(r, 209));
	CHECK(ratelimit_allows(r, 210));
	/* ... but never more than the burst. */
	ratelimit_settle(r, 310, 100000);
	ratelimit_charge(r, 100, 100000);
	CHECK(ratelimit_allows(r, 100000));
	ratelimit_charge(r, 1, 100000);
	CHECK(!ratelimit_allows(r, 100000));
	/* A new producer counts from 0: 50 sent, 101 charged, 51 back. */
	ratelimit_settle(r, 50, 100000);
	CHECK(ratelimit_allows(r, 100000));
	ratelimit_destroy(r);
	ratelimit_destroy(NULL);
}

/* A source that produces 100-byte records whenever allowed, for 60 s at
 * 1 ms steps: no 10 s window carries more than 10.1 s of the rate. */
static void test_ten_second_windows(void)
{
	static long long sent[60000];
	struct ratelimit *r;
	long long window = 0, most = 0;

	CHECK_INT(ratelimit_new(200000, 0, &r), 0);
	for (int t = 0; t < 60000; t++) {
		sent[t] = 0;
		while (ratelimit_allows(r, t)) {
			ratelimit_charge(r, 100, t);
			sent[t] += 100;
		}
		window += sent[t] - (t >= 10000 ? sent[t - 10000] : 0);
		if (window > most)
			most = window;
	}
	CHECK(most <= 200000LL * 10 + 20000 + 100);
	CHECK(most >= 200000LL * 10 - 100);
	ratelimit_destroy(r);
}

int main(void)
{
	test_burst_and_refill();
	test_settle();
	test_ten_second_windows();
	return testlib_done("test_ratelimit");
}
