/* ratelimit: the token bucket (see ratelimit.h). */
#include "kafka/ratelimit.h"

#include <stdlib.h>

/* The wire ratio in 1/65536ths: between 1/1024 (text that lz4 squeezes
 * hard) and 4 (tiny records, all framing). */
#define RATIO_ONE 65536
#define RATIO_MIN (RATIO_ONE / 1024)
#define RATIO_MAX (RATIO_ONE * 4)
/* Fewer record bytes reported between two settles say little of the ratio. */
#define RATIO_SAMPLE 4096

struct ratelimit {
	int64_t rate;            /* bytes a second */
	int64_t burst;           /* the most the bucket holds */
	int64_t max_queued;      /* the most the queued records may be worth */
	int64_t tokens;          /* bytes that may go now; below 0: a debt */
	int64_t at;              /* when tokens was last refilled */
	int64_t ratio;           /* wire bytes per estimated byte, in 1/65536ths */
	uint64_t queued;         /* estimated bytes charged, not yet reported */
	uint64_t done_since;     /* estimated bytes reported since the last settle */
	uint64_t done_last;      /* the producer's reported total at the last call */
	uint64_t wire_last;      /* the producer's wire total at the last settle */
	int64_t throttled_since; /* -1: not throttled */
	uint64_t throttled_ms;
};

int ratelimit_new(uint64_t bytes_per_s, int64_t now_ms, struct ratelimit **out)
{
	struct ratelimit *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL)
		return RATELIMIT_ERR_NOMEM;
	r->rate = bytes_per_s > (uint64_t)INT32_MAX ? INT32_MAX : (int64_t)bytes_per_s;
	r->burst = r->rate / 10 > 0 ? r->rate / 10 : 1;
	r->max_queued = r->rate / 2 > r->burst ? r->rate / 2 : r->burst;
	r->tokens = r->burst;
	r->at = now_ms;
	r->ratio = RATIO_ONE;
	r->throttled_since = -1;
	*out = r;
	return 0;
}

/* Estimated bytes as wire bytes, at the ratio learnt so far. */
static int64_t scaled(const struct ratelimit *r, uint64_t bytes)
{
	if (bytes > (uint64_t)INT64_MAX / RATIO_MAX)
		bytes = (uint64_t)INT64_MAX / RATIO_MAX;
	return (int64_t)bytes * r->ratio / RATIO_ONE;
}

static void refill(struct ratelimit *r, int64_t now_ms)
{
	int64_t dt = now_ms - r->at;

	if (dt <= 0)
		return;
	r->tokens += r->rate * dt / 1000;
	/* The remainder of a byte is kept by not moving at past it. */
	r->at += (r->rate * dt / 1000) * 1000 / r->rate;
	if (r->tokens >= r->burst) {
		r->tokens = r->burst;
		r->at = now_ms;
	}
}

void ratelimit_charge(struct ratelimit *r, uint64_t bytes, int64_t now_ms)
{
	refill(r, now_ms);
	r->tokens -= scaled(r, bytes);
	r->queued += bytes;
}

void ratelimit_reported(struct ratelimit *r, uint64_t done_total, bool empty)
{
	uint64_t done;

	if (done_total < r->done_last)
		r->done_last = 0; /* a new producer counts from 0 */
	done = done_total - r->done_last;
	r->done_last = done_total;
	r->done_since += done;
	r->queued = empty || done >= r->queued ? 0 : r->queued - done;
}

void ratelimit_settle(struct ratelimit *r, uint64_t wire_total, int64_t now_ms)
{
	uint64_t sent;

	if (wire_total < r->wire_last)
		r->wire_last = 0; /* a new producer counts from 0 */
	sent = wire_total - r->wire_last;
	r->wire_last = wire_total;
	refill(r, now_ms);
	/* The reported records leave with their charges; the wire's count
	 * takes their place (and that of requests no record was charged for). */
	r->tokens += scaled(r, r->done_since) - (int64_t)sent;
	if (r->tokens > r->burst)
		r->tokens = r->burst;
	if (r->done_since >= RATIO_SAMPLE && sent <= (uint64_t)INT64_MAX / RATIO_ONE) {
		/* Halfway to what this report measured: one odd report (a
		 * retry, a metadata refresh) moves it only so far. */
		int64_t measured = (int64_t)(sent * RATIO_ONE / r->done_since);

		r->ratio = (r->ratio + measured) / 2;
		r->ratio = r->ratio < RATIO_MIN   ? RATIO_MIN
		           : r->ratio > RATIO_MAX ? RATIO_MAX
		                                  : r->ratio;
	}
	r->done_since = 0;
}

bool ratelimit_allows(struct ratelimit *r, int64_t now_ms)
{
	refill(r, now_ms);
	if (r->tokens >= 0 && (r->queued == 0 || scaled(r, r->queued) <= r->max_queued)) {
		if (r->throttled_since >= 0)
			r->throttled_ms += (uint64_t)(now_ms - r->throttled_since);
		r->throttled_since = -1;
		return true;
	}
	if (r->throttled_since < 0)
		r->throttled_since = now_ms;
	return false;
}

int64_t ratelimit_ready_at(const struct ratelimit *r, int64_t now_ms)
{
	int64_t need = r->burst / 2 - r->tokens;

	if (r->tokens >= 0)
		return -1; /* the queue, not the bucket: a delivery report wakes */
	if (need <= 0)
		return now_ms;
	return r->at + (need * 1000 + r->rate - 1) / r->rate;
}

uint64_t ratelimit_throttled_ms(const struct ratelimit *r, int64_t now_ms)
{
	return r->throttled_ms +
	       (r->throttled_since >= 0 ? (uint64_t)(now_ms - r->throttled_since) : 0);
}

void ratelimit_destroy(struct ratelimit *r)
{
	free(r);
}
