/* acks: the in-flight slab and per-partition FIFOs of acknowledgements. */
#include "acks.h"

#include <stdlib.h>

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
	uint32_t free_head;
	uint32_t available;
};

void acks_fifo_init(struct acks_fifo *f)
{
	*f = (struct acks_fifo){.head = ACKS_NIL, .tail = ACKS_NIL};
}

struct acks *acks_new(uint32_t capacity)
{
	struct acks *a = NULL;

	if (capacity == 0 || capacity > (UINT32_C(1) << 31))
		return NULL;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->slots = calloc(capacity, sizeof(*a->slots));
	if (a->slots == NULL) {
		free(a);
		return NULL;
	}
	for (uint32_t i = 0; i < capacity; i++)
		a->slots[i].next = i + 1 < capacity ? i + 1 : ACKS_NIL;
	a->capacity = capacity;
	a->available = capacity;
	a->free_head = 0;
	return a;
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

	if (i == ACKS_NIL)
		return NULL;
	s = &a->slots[i];
	a->free_head = s->next;
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

void acks_fifo_fini(struct acks_fifo *f)
{
	src_ref_drop(f->committable.ref);
	f->committable.ref = NULL;
}

void acks_destroy(struct acks *a)
{
	if (a == NULL)
		return;
	for (uint32_t i = 0; i < a->capacity; i++)
		if (a->slots[i].state != SLOT_FREE)
			src_ref_drop(a->slots[i].off.ref);
	free(a->slots);
	free(a);
}
