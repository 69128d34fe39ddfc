/* ratelimit: the token bucket (see ratelimit.h). */
#include "ratelimit.h"

#include <stdlib.h>

struct ratelimit {
	int64_t rate;            /* bytes a second */
	int64_t burst;           /* the most the bucket holds */
	int64_t tokens;          /* bytes that may go now; below 0: a debt */
	int64_t at;              /* when tokens was last refilled */
	int64_t charged;         /* estimates since the last settle */
	uint64_t wire_last;      /* the sender's total at the last settle */
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
	r->tokens = r->burst;
	r->at = now_ms;
	r->throttled_since = -1;
	*out = r;
	return 0;
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
	r->tokens -= (int64_t)bytes;
	r->charged += (int64_t)bytes;
}

void ratelimit_settle(struct ratelimit *r, uint64_t wire_total, int64_t now_ms)
{
	uint64_t sent;

	if (wire_total < r->wire_last)
		r->wire_last = 0; /* a new producer counts from 0 */
	sent = wire_total - r->wire_last;
	r->wire_last = wire_total;
	refill(r, now_ms);
	r->tokens += r->charged - (int64_t)sent;
	if (r->tokens > r->burst)
		r->tokens = r->burst;
	r->charged = 0;
}

bool ratelimit_allows(struct ratelimit *r, int64_t now_ms)
{
	refill(r, now_ms);
	if (r->tokens >= 0) {
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
