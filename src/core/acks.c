/* acks: the in-flight slab and per-partition FIFOs of acknowledgements. */
#include "core/acks.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Below this many bytes of used slots a shrink is not worth a system call. */
#define SHRINK_MIN (64 * 1024)

enum slot_state { SLOT_FREE, SLOT_INFLIGHT, SLOT_ACKED, SLOT_FAILED };

struct slot {
	struct acks_fifo *fifo;
	struct src_offset off;
	uint32_t next; /* next in the FIFO, or in the free list */
	uint8_t state;
};

/* The per-record cost of flight, stated in acks.h. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct slot) == 56, "acks.h states 56 bytes a slot");

struct acks {
	struct slot *slots;
	uint32_t capacity;
	uint32_t free_head; /* slots freed after use, most recent first */
	uint32_t fresh;     /* slots [fresh, capacity) were never used */
	uint32_t available;
};

void acks_fifo_init(struct acks_fifo *f)
{
	*f = (struct acks_fifo){.head = ACKS_NIL, .tail = ACKS_NIL};
}

int acks_new(uint32_t capacity, struct acks **out)
{
	struct acks *a = NULL;

	*out = NULL;
	if (capacity == 0 || capacity > (UINT32_C(1) << 31))
		return ACKS_ERR_RANGE;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return ACKS_ERR_NOMEM;
	/* Never written here: a slot's page becomes resident when a record
	 * first needs it, so an idle or slow pipeline keeps a few pages, not
	 * the whole slab (calloc of this size maps fresh zero pages). */
	a->slots = calloc(capacity, sizeof(*a->slots));
	if (a->slots == NULL) {
		free(a);
		return ACKS_ERR_NOMEM;
	}
	a->capacity = capacity;
	a->available = capacity;
	a->free_head = ACKS_NIL;
	a->fresh = 0;
	*out = a;
	return ACKS_OK;
}

const char *acks_strerror(int err)
{
	switch (err) {
	case ACKS_OK:
		return "no error";
	case ACKS_ERR_RANGE:
		return "capacity out of range";
	case ACKS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}

uint32_t acks_available(const struct acks *a)
{
	return a->available;
}

uint32_t acks_capacity(const struct acks *a)
{
	return a->capacity;
}

void *acks_submit(struct acks *a, struct acks_fifo *f, const struct src_offset *off)
{
	uint32_t i = a->free_head;
	struct slot *s;

	/* Reuse a freed slot before touching a fresh one: the resident part
	 * of the slab is the most records ever in flight at once. */
	if (i != ACKS_NIL)
		a->free_head = a->slots[i].next;
	else if (a->fresh < a->capacity)
		i = a->fresh++;
	else
		return NULL;
	s = &a->slots[i];
	a->available--;
	*s = (struct slot){.fifo = f, .off = *off, .next = ACKS_NIL, .state = SLOT_INFLIGHT};
	src_ref_hold(s->off.ref); /* the record's is the source's */
	if (f->tail == ACKS_NIL)
		f->head = i;
	else
		a->slots[f->tail].next = i;
	f->tail = i;
	f->inflight++;
	f->pending++;
	return s;
}

/* Frees slot i, and its offset's reference unless it was moved out. */
static void release(struct acks *a, uint32_t i)
{
	struct slot *s = &a->slots[i];

	src_ref_drop(s->off.ref);
	s->off.ref = NULL;
	s->state = SLOT_FREE;
	s->fifo = NULL;
	s->next = a->free_head;
	a->free_head = i;
	a->available++;
}

/* Pops acknowledged slots off the head of f. */
static void advance(struct acks *a, struct acks_fifo *f)
{
	while (f->head != ACKS_NIL && a->slots[f->head].state == SLOT_ACKED) {
		uint32_t i = f->head;
		struct slot *s = &a->slots[i];

		src_ref_drop(f->committable.ref);
		f->committable = s->off; /* its reference moves with it */
		s->off.ref = NULL;
		f->advanced = true;
		f->head = s->next;
		if (f->head == ACKS_NIL)
			f->tail = ACKS_NIL;
		f->inflight--;
		release(a, i);
	}
}

void acks_cancel(struct acks *a, void *token)
{
	struct slot *s = token;
	struct acks_fifo *f = s->fifo;
	uint32_t i = (uint32_t)(s - a->slots), prev = ACKS_NIL;

	if (f == NULL || f->tail != i)
		return;
	/* Rare (a full producer queue): a walk from the head is fine. */
	for (uint32_t j = f->head; j != i; j = a->slots[j].next)
		prev = j;
	if (prev == ACKS_NIL)
		f->head = ACKS_NIL;
	else
		a->slots[prev].next = ACKS_NIL;
	f->tail = prev;
	f->inflight--;
	f->pending--;
	release(a, i);
}

struct acks_fifo *acks_done(struct acks *a, void *token, bool ok)
{
	struct slot *s = token;
	struct acks_fifo *f;

	if (s == NULL || s->state != SLOT_INFLIGHT)
		return NULL;
	f = s->fifo;
	if (f == NULL) {
		/* Orphaned by acks_abandon: nobody waits for it any more. */
		release(a, (uint32_t)(s - a->slots));
		return NULL;
	}
	f->pending--;
	if (!ok) {
		/* Stays at its place for good: the prefix never passes it. */
		s->state = SLOT_FAILED;
		f->failed = true;
		return f;
	}
	s->state = SLOT_ACKED;
	advance(a, f);
	return f;
}

struct acks_fifo *acks_owner(const void *token)
{
	const struct slot *s = token;

	return s != NULL && s->state == SLOT_INFLIGHT ? s->fifo : NULL;
}

void acks_abandon(struct acks *a, struct acks_fifo *f)
{
	uint32_t i = f->head;

	while (i != ACKS_NIL) {
		struct slot *s = &a->slots[i];
		uint32_t next = s->next;

		if (s->state == SLOT_INFLIGHT) {
			s->fifo = NULL;
			s->next = ACKS_NIL;
		} else {
			release(a, i);
		}
		i = next;
	}
	f->head = f->tail = ACKS_NIL;
	f->inflight = f->pending = 0;
	f->failed = false;
}

bool acks_take(struct acks_fifo *f, struct src_offset *out)
{
	if (!f->advanced)
		return false;
	*out = f->committable;
	f->advanced = false;
	return true;
}

void acks_settle(struct acks_fifo *f)
{
	if (f->advanced)
		return; /* moved again since: the new one is still to store */
	src_ref_drop(f->committable.ref);
	f->committable.ref = NULL;
}

void acks_fifo_fini(struct acks_fifo *f)
{
	src_ref_drop(f->committable.ref);
	f->committable.ref = NULL;
}

bool acks_shrink(struct acks *a)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (a->available != a->capacity || (size_t)a->fresh * sizeof(*a->slots) < SHRINK_MIN)
		return false;
	/* Only whole pages inside the slab: they read back as zeros, the state
	 * of a fresh slot; the slots of the partial pages at either end are
	 * free already and stay as they are. */
	lo = ((uintptr_t)a->slots + page - 1) & ~(page - 1);
	hi = (uintptr_t)(a->slots + a->fresh) & ~(page - 1);
	if (hi > lo && madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
		return false;
	a->fresh = 0;
	a->free_head = ACKS_NIL;
	return true;
}

void acks_destroy(struct acks *a)
{
	if (a == NULL)
		return;
	for (uint32_t i = 0; i < a->fresh; i++) /* the rest were never used */
		if (a->slots[i].state != SLOT_FREE)
			src_ref_drop(a->slots[i].off.ref);
	free(a->slots);
	free(a);
}
