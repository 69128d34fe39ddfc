/* jring: the cursor ring and the cursor reader; see
 * source_journald.h. */
#include "sources/journald/source_journald.h"

#include "util/num.h"

#include <stdlib.h>
#include <string.h>

struct jring {
	char *slot[JRING_SLOTS];
	int64_t head;     /* newest sequence number */
	int64_t released; /* oldest one still asked for */
	size_t bytes;     /* of the texts released..head */
};

struct jring *jring_new(const char *first)
{
	struct jring *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->slot[0] = strdup(first)) == NULL) {
		free(r);
		return NULL;
	}
	r->bytes = strlen(first) + 1;
	return r;
}

void jring_free(struct jring *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < JRING_SLOTS; i++)
		free(r->slot[i]);
	free(r);
}

bool jring_full(const struct jring *r)
{
	return r->head - r->released + 1 >= JRING_SLOTS || r->bytes >= JRING_BYTES;
}

int64_t jring_push(struct jring *r, const char *text)
{
	char *copy;
	size_t i;

	if (jring_full(r) || (copy = strdup(text)) == NULL)
		return -1;
	i = (size_t)((r->head + 1) % JRING_SLOTS);
	free(r->slot[i]);
	r->slot[i] = copy;
	r->bytes += strlen(copy) + 1;
	return ++r->head;
}

int64_t jring_head(const struct jring *r)
{
	return r->head;
}

const char *jring_get(struct jring *r, int64_t seq)
{
	/* Asked-for numbers only grow (the committable offset of a partition
	 * only moves forward); an older one is still there until overwritten. */
	if (seq < 0 || seq > r->head || r->head - seq >= JRING_SLOTS)
		return NULL;
	for (; r->released < seq; r->released++)
		r->bytes -= strlen(r->slot[r->released % JRING_SLOTS]) + 1;
	return r->slot[seq % JRING_SLOTS];
}

/* The value of "<key>=" in a ';'-separated cursor, and its length. */
static const char *cursor_item(const char *c, char key, size_t *len)
{
	while (*c != '\0') {
		const char *end = strchr(c, ';');

		if (end == NULL)
			end = c + strlen(c);
		if (c[0] == key && c[1] == '=') {
			*len = (size_t)(end - c - 2);
			return c + 2;
		}
		c = *end == ';' ? end + 1 : end;
	}
	return NULL;
}

int jcursor_seqnum(const char *cursor, char id[33], uint64_t *seqnum)
{
	size_t slen = 0, ilen = 0;
	const char *s = cursor_item(cursor, 's', &slen);
	const char *i = cursor_item(cursor, 'i', &ilen);
	uint64_t v = 0;

	if (s == NULL || i == NULL || slen != 32 || ilen == 0 || ilen > 16)
		return -1;
	for (size_t k = 0; k < 32; k++)
		if (num_hex_digit(s[k]) < 0)
			return -1;
	for (size_t k = 0; k < ilen; k++) {
		int h = num_hex_digit(i[k]);

		if (h < 0)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	memcpy(id, s, 32);
	id[32] = '\0';
	*seqnum = v;
	return 0;
}
