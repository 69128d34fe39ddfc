/* Unit tests for ratelimit.c: the bucket's burst, its refill, the wire
 * count settling the estimates of reported records only, a producer
 * counting from 0 again, the ratio learnt under compression, the bound on
 * what is queued while the link is down, the debt of a large record, the
 * wake-up time, and the most any 10 s window lets through. */
#include "kafka/ratelimit.h"
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
	/* The wire says 300 were sent, the record still unreported (framing,
	 * retries): a debt of 300. */
	ratelimit_settle(r, 300, 0);
	CHECK(!ratelimit_allows(r, 0));
	CHECK(!ratelimit_allows(r, 299));
	CHECK(ratelimit_allows(r, 300));
	/* Reported: its charge of 100 comes back. */
	ratelimit_reported(r, 100, true);
	ratelimit_settle(r, 300, 300);
	CHECK_INT(ratelimit_ready_at(r, 300), -1);
	ratelimit_charge(r, 100, 300);
	CHECK(ratelimit_allows(r, 300));
	ratelimit_charge(r, 1, 300);
	CHECK(!ratelimit_allows(r, 300));
	/* A record charged, not reported, not sent: nothing comes back (the
	 * link may be down; it will be sent later). */
	ratelimit_settle(r, 300, 300);
	CHECK(!ratelimit_allows(r, 300));
	/* A new producer counts from 0: 60 reported, 50 sent, 10 back. */
	ratelimit_reported(r, 60, true);
	ratelimit_settle(r, 50, 300);
	CHECK(ratelimit_allows(r, 300));
	ratelimit_destroy(r);
	ratelimit_destroy(NULL);
}

/* Compression: the wire carries a tenth of the records' bytes; after a few
 * reports the charges are a tenth too, so ten times the cap in records go
 * through while the wire holds the cap. */
static void test_ratio(void)
{
	struct ratelimit *r;
	uint64_t charged = 0, wire = 0, sent = 0;

	CHECK_INT(ratelimit_new(10000, 0, &r), 0);
	for (int t = 0; t < 20000; t++) {
		while (ratelimit_allows(r, t)) {
			ratelimit_charge(r, 100, t);
			charged += 100;
		}
		/* Sent and reported at once, 10 on the wire for each 100. */
		ratelimit_reported(r, charged, true);
		wire += (charged - sent) / 10;
		sent = charged;
		if (t % 1000 == 999)
			ratelimit_settle(r, wire, t);
	}
	/* The last 10 s: about 100 000 bytes on the wire, 1 000 000 of records. */
	CHECK(wire >= 150000 && wire <= 210000);
	CHECK(charged >= 1500000);
	ratelimit_destroy(r);
}

/* A link down: records are charged but neither sent nor reported. No more
 * than half a second of the rate is queued, however long it stays down. */
static void test_queued_bound(void)
{
	struct ratelimit *r;
	uint64_t charged = 0;

	CHECK_INT(ratelimit_new(1000, 0, &r), 0);
	for (int t = 0; t < 30000; t++) {
		while (ratelimit_allows(r, t)) {
			ratelimit_charge(r, 100, t);
			charged += 100;
		}
		if (t % 1000 == 999)
			ratelimit_settle(r, 0, t);
	}
	CHECK(charged <= 500 + 100);
	CHECK_INT(ratelimit_ready_at(r, 30000), -1); /* a report wakes, not a timer */
	/* The link is back: all of it reported, reading resumes. */
	ratelimit_reported(r, charged, true);
	CHECK(ratelimit_allows(r, 30000));
	ratelimit_destroy(r);
}

/* A record larger than the burst goes when the bucket is not in debt, and
 * puts it in debt for all of it: 3000 bytes at 1000/s, one every 3 s. */
static void test_debt(void)
{
	struct ratelimit *r;
	int at[4], n = 0;

	CHECK_INT(ratelimit_new(1000, 0, &r), 0);
	for (int t = 0; t < 10000 && n < 4; t++) {
		if (!ratelimit_allows(r, t))
			continue;
		ratelimit_charge(r, 3000, t);
		ratelimit_reported(r, 3000u * (unsigned)(n + 1), true);
		at[n++] = t;
	}
	CHECK_INT(n, 4);
	CHECK_INT(at[0], 0);
	CHECK_INT(at[1], 2900);
	CHECK_INT(at[2], 5900);
	CHECK_INT(at[3], 8900);
	ratelimit_destroy(r);
}

/* A source that produces 100-byte records whenever allowed, for 60 s at
 * 1 ms steps: no 10 s window carries more than 10.1 s of the rate. */
static void test_ten_second_windows(void)
{
	static long long sent[60000];
	struct ratelimit *r;
	long long window = 0, most = 0;
	uint64_t total = 0;

	CHECK_INT(ratelimit_new(200000, 0, &r), 0);
	for (int t = 0; t < 60000; t++) {
		sent[t] = 0;
		while (ratelimit_allows(r, t)) {
			ratelimit_charge(r, 100, t);
			sent[t] += 100;
		}
		total += (uint64_t)sent[t];
		ratelimit_reported(r, total, true); /* delivered within the ms */
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
	test_ratio();
	test_queued_bound();
	test_debt();
	test_ten_second_windows();
	return testlib_done("test_ratelimit");
}
