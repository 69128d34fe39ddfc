/* acks: the contiguous acknowledged prefix, failures, cancel, abandon. */
#include "core/acks.h"
#include "testlib.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A slab of cap slots (acks_new's out parameter). */
static struct acks *slab(uint32_t cap)
{
	struct acks *a = NULL;

	CHECK_INT(acks_new(cap, &a), ACKS_OK);
	CHECK(a != NULL);
	return a;
}

/* A capacity out of range is its own code, and *out is NULL. */
static void test_new_range(void)
{
	struct acks *a = (struct acks *)&a;

	CHECK_INT(acks_new(0, &a), ACKS_ERR_RANGE);
	CHECK(a == NULL);
	a = (struct acks *)&a;
	CHECK_INT(acks_new((UINT32_C(1) << 31) + 1, &a), ACKS_ERR_RANGE);
	CHECK(a == NULL);
	CHECK_STR(acks_strerror(ACKS_ERR_RANGE), "capacity out of range");
}

static struct src_offset off(int64_t v)
{
	struct src_offset o = {.v = {v, 0, 0, 0}};
	return o;
}

static void test_in_order_and_out_of_order(void)
{
	struct acks *a = slab(8);
	struct acks_fifo f;
	struct src_offset got;
	void *t[5];

	acks_fifo_init(&f);
	for (int i = 0; i < 5; i++)
		t[i] = acks_submit(a, &f, &(struct src_offset){.v = {(i + 1) * 10, 0, 0, 0}});
	CHECK_INT(acks_available(a), 3);
	CHECK(!acks_take(&f, &got));
	/* Acks for 2 and 3 arrive first: nothing is committable past 0. */
	acks_done(a, t[1], true);
	acks_done(a, t[2], true);
	CHECK(!acks_take(&f, &got));
	acks_done(a, t[0], true);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 30);
	CHECK(!acks_take(&f, &got));
	CHECK_INT(acks_available(a), 6);
	acks_done(a, t[4], true);
	CHECK(!acks_take(&f, &got));
	acks_done(a, t[3], true);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 50);
	CHECK_INT(acks_available(a), 8);
	CHECK_INT(f.inflight, 0);
	acks_destroy(a);
}

static void test_failure_blocks_prefix(void)
{
	struct acks *a = slab(4);
	struct acks_fifo f;
	struct src_offset got;
	void *t1, *t2, *t3;

	acks_fifo_init(&f);
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {1, 0, 0, 0}});
	t2 = acks_submit(a, &f, &(struct src_offset){.v = {2, 0, 0, 0}});
	t3 = acks_submit(a, &f, &(struct src_offset){.v = {3, 0, 0, 0}});
	CHECK_INT(f.pending, 3);
	CHECK(acks_done(a, t2, false) == &f);
	CHECK(f.failed);
	acks_done(a, t3, true);
	CHECK_INT(f.pending, 1);
	acks_done(a, t1, true);
	/* Nothing waits for a report any more (a restart may go on), though
	 * the failed slot and the one behind it are still held. */
	CHECK_INT(f.pending, 0);
	CHECK_INT(f.inflight, 2);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 1); /* never past the failed record */
	CHECK(!acks_take(&f, &got));
	acks_abandon(a, &f);
	CHECK_INT(acks_available(a), 4);
	/* Abandoned: the FIFO takes records again, from a clean slate. */
	CHECK(!f.failed);
	CHECK_INT(f.inflight + f.pending, 0);
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {5, 0, 0, 0}});
	acks_done(a, t1, true);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 5);
	acks_fifo_fini(&f);
	acks_destroy(a);
}

static void test_two_fifos_and_full(void)
{
	struct acks *a = slab(2);
	struct acks_fifo f, g;
	struct src_offset got;
	void *t1, *t2;

	acks_fifo_init(&f);
	acks_fifo_init(&g);
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {7, 0, 0, 0}});
	t2 = acks_submit(a, &g, &(struct src_offset){.v = {9, 0, 0, 0}});
	CHECK(acks_submit(a, &f, &(struct src_offset){.v = {8, 0, 0, 0}}) == NULL);
	acks_done(a, t2, true);
	CHECK(!acks_take(&f, &got));
	CHECK(acks_take(&g, &got));
	CHECK_INT(got.v[0], 9);
	acks_done(a, t1, true);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 7);
	acks_destroy(a);
}

static void test_cancel_and_orphans(void)
{
	struct acks *a = slab(3);
	struct acks_fifo f;
	struct src_offset got;
	void *t1, *t2, *t3;

	acks_fifo_init(&f);
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {1, 0, 0, 0}});
	t2 = acks_submit(a, &f, &(struct src_offset){.v = {2, 0, 0, 0}});
	acks_cancel(a, t2);
	CHECK_INT(f.inflight, 1);
	CHECK_INT(acks_available(a), 2);
	t3 = acks_submit(a, &f, &(struct src_offset){.v = {3, 0, 0, 0}});
	acks_done(a, t1, true);
	acks_done(a, t3, true);
	CHECK(acks_take(&f, &got));
	CHECK_INT(got.v[0], 3);
	/* A single-entry FIFO cancelled empties it. */
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {4, 0, 0, 0}});
	acks_cancel(a, t1);
	CHECK_INT(f.head, ACKS_NIL);
	CHECK_INT(f.tail, ACKS_NIL);
	/* Orphans: abandoned while in flight, freed on their report. */
	t1 = acks_submit(a, &f, &(struct src_offset){.v = {5, 0, 0, 0}});
	acks_abandon(a, &f);
	CHECK_INT(acks_available(a), 2);
	CHECK(acks_done(a, t1, true) == NULL);
	CHECK_INT(acks_available(a), 3);
	CHECK(!acks_take(&f, &got));
	acks_destroy(a);
}

static void test_many(void)
{
	/* A long random-order run: committable is always the largest offset
	 * whose predecessors are all acknowledged. */
	enum { N = 5000, CAP = 64 };
	struct acks *a = slab(CAP);
	struct acks_fifo f;
	struct src_offset got;
	void *tok[N];
	int acked[N] = {0};
	int submitted = 0, done = 0, prefix = 0;
	unsigned seed = 12345;

	acks_fifo_init(&f);
	while (done < N) {
		while (submitted < N && acks_available(a) > 0) {
			tok[submitted] =
			    acks_submit(a, &f, &(struct src_offset){.v = {submitted + 1, 0, 0, 0}});
			submitted++;
		}
		for (;;) {
			int i;
			seed = seed * 1103515245u + 12345u;
			i = done + (int)((seed >> 8) % (unsigned)(submitted - done));
			if (!acked[i]) {
				acked[i] = 1;
				acks_done(a, tok[i], true);
				break;
			}
		}
		while (done < N && acked[done])
			done++;
		if (acks_take(&f, &got))
			prefix = (int)got.v[0];
		CHECK(prefix == done);
	}
	CHECK_INT(prefix, N);
	CHECK_INT(acks_available(a), CAP);
	(void)off;
	acks_destroy(a);
}

/* A source's reference (a journald cursor, a file's mark) lives exactly as
 * long as an offset names it: in flight, committable, or the source's own. */
static int freed;

static void count_free(struct src_ref *r)
{
	(void)r;
	freed++;
}

static void test_refs_live_while_named(void)
{
	struct src_ref a, b;
	struct acks *k = slab(8);
	struct acks_fifo f;
	struct src_offset o;
	void *t1, *t2, *t3;

	acks_fifo_init(&f);
	src_ref_init(&a, count_free);
	src_ref_init(&b, count_free);
	t1 = acks_submit(k, &f, &(struct src_offset){.v = {1}, .ref = &a});
	t2 = acks_submit(k, &f, &(struct src_offset){.v = {2}, .ref = &a});
	t3 = acks_submit(k, &f, &(struct src_offset){.v = {3}, .ref = &b});
	CHECK_INT(a.refs, 3);
	CHECK_INT(b.refs, 2);
	acks_cancel(k, t3); /* could not be produced: its hold goes */
	CHECK_INT(b.refs, 1);
	src_ref_drop(&a);                    /* the source's next poll */
	CHECK(acks_done(k, t2, true) == &f); /* out of order: nothing passes */
	CHECK_INT(a.refs, 2);
	CHECK(acks_done(k, t1, true) == &f); /* both pass; the last is committable */
	CHECK_INT(a.refs, 1);
	CHECK(acks_take(&f, &o) && o.v[0] == 2 && o.ref == &a);
	CHECK_INT(freed, 0);
	t3 = acks_submit(k, &f, &(struct src_offset){.v = {3}, .ref = &b});
	src_ref_drop(&b);                    /* the source's next poll */
	CHECK(acks_done(k, t3, true) == &f); /* a's last reference goes */
	CHECK_INT(freed, 1);
	t1 = acks_submit(k, &f, &(struct src_offset){.v = {4}, .ref = NULL});
	acks_abandon(k, &f);
	acks_fifo_fini(&f); /* b's */
	CHECK_INT(freed, 2);
	CHECK(acks_done(k, t1, true) == NULL);
	acks_destroy(k);
}

/* Resident pages of the slab that holds token first (the slot of index 0)
 * and n slots of 56 bytes. */
static int resident_pages(void *first, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)first & ~(page - 1);
	uintptr_t hi = ((uintptr_t)first + n * 56 + page - 1) & ~(page - 1);
	size_t npages = (hi - lo) / page;
	unsigned char *vec = calloc(npages, 1);
	int count = 0;

	if (vec == NULL || mincore((void *)lo, hi - lo, vec) != 0) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < npages; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

static void test_slab_resident_as_used(void)
{
	/* The default slab (20,000 slots, 1.1 MB): a trickle of records keeps
	 * a page or two of it resident, not all of it; after a burst, a shrink
	 * gives the pages back and the slab works as new. */
	enum { CAP = 20000, BURST = 5000 };
	struct acks *a = slab(CAP);
	struct acks_fifo f;
	struct src_offset got;
	static void *tok[CAP];
	void *first = NULL;

	acks_fifo_init(&f);
	for (int i = 0; i < 100; i++) {
		tok[0] = acks_submit(a, &f, &(struct src_offset){.v = {i + 1}});
		if (i == 0)
			first = tok[0];
		CHECK(tok[0] == first); /* a freed slot is reused first */
		acks_done(a, tok[0], true);
	}
	CHECK(resident_pages(first, CAP) <= 3);
	CHECK(!acks_shrink(a)); /* too little was used to be worth it */
	for (int i = 0; i < BURST; i++)
		tok[i] = acks_submit(a, &f, &(struct src_offset){.v = {1000 + i}});
	CHECK(resident_pages(first, CAP) >= BURST * 56 / 4096 - 1);
	CHECK(!acks_shrink(a)); /* records in flight */
	for (int i = BURST - 1; i >= 0; i--)
		acks_done(a, tok[i], true);
	CHECK(acks_take(&f, &got) && got.v[0] == 1000 + BURST - 1);
	CHECK(acks_shrink(a));
	CHECK(resident_pages(first, CAP) <= 3);
	CHECK_INT(acks_available(a), CAP);
	/* Every slot again, then one too many. */
	for (int i = 0; i < CAP; i++) {
		tok[i] = acks_submit(a, &f, &(struct src_offset){.v = {10000 + i}});
		CHECK(tok[i] != NULL);
	}
	CHECK(acks_submit(a, &f, &(struct src_offset){.v = {0}}) == NULL);
	CHECK(tok[0] == first && (char *)tok[CAP - 1] - (char *)first == (CAP - 1) * 56);
	for (int i = 0; i < CAP; i++)
		acks_done(a, tok[i], true);
	CHECK(acks_take(&f, &got) && got.v[0] == 10000 + CAP - 1);
	CHECK_INT(acks_available(a), CAP);
	acks_destroy(a);
}

int main(void)
{
	test_new_range();
	test_slab_resident_as_used();
	test_refs_live_while_named();
	test_in_order_and_out_of_order();
	test_failure_blocks_prefix();
	test_two_fifos_and_full();
	test_cancel_and_orphans();
	test_many();
	return testlib_done("test_acks");
}
