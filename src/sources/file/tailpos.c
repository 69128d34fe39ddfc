/* tailpos: the file source's offset value. */
#include "sources/file/tailpos.h"

#include "util/jsonint.h"
#include "sources/file/tailid.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ref is the mark's first member: the mark starts where it does. */
static struct tailmark *mark_at(struct src_ref *ref)
{
	if (ref == NULL)
		return NULL;
	return (struct tailmark *)((char *)ref - offsetof(struct tailmark, ref));
}

static void mark_free(struct src_ref *ref)
{
	free(mark_at(ref));
}

const char *tailpos_strerror(int rc)
{
	switch (rc) {
	case TAILPOS_OK:
		return "ok";
	case TAILPOS_ERR_NOMEM:
		return "out of memory";
	default:
		return "no usable position";
	}
}

int tailmark_new(int64_t born, struct tailmark **out)
{
	struct tailmark *m = malloc(sizeof(*m));

	*out = NULL;
	if (m == NULL)
		return TAILPOS_ERR_NOMEM;
	src_ref_init(&m->ref, mark_free);
	m->born = born;
	m->after = 0;
	m->done = -1;
	m->fp = 0;
	m->fp_full = false;
	*out = m;
	return 0;
}

struct tailmark *tailmark_of(const struct src_offset *off)
{
	return mark_at(off->ref);
}

/* Little-endian on every board: an offset file moved between them holds.
 * Written so that compilers make it one load where the CPU is little-endian. */
static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

/* tailpos.h. A word at a time: this runs for every line read, and FNV-1a
 * a byte at a time is 64 multiplications in a row (~10% of skiff's thread
 * shipping 150-byte lines). */
uint64_t tailpos_tail(const void *bytes, size_t len)
{
	const unsigned char *b = bytes;
	uint64_t h = TAILID_FP_EMPTY;
	size_t i = 0;

	for (; i + 8 <= len; i += 8)
		h = (h ^ le64(b + i)) * UINT64_C(0x100000001b3);
	return tailid_fp_update(h, b + i, len - i);
}

int tailpos_parse(const char *json, struct tailpos *out)
{
	int64_t fp = 0, fplen = -1;

	memset(out, 0, sizeof(*out));
	if (json == NULL || jsonint_get(json, "position", &out->pos) != 0 || out->pos < 0)
		return -1;
	out->known = true;
	out->has_id =
	    jsonint_get(json, "dev", &out->dev) == 0 && jsonint_get(json, "ino", &out->ino) == 0;
	out->has_fp = jsonint_get(json, "fp", &fp) == 0 &&
	              jsonint_get(json, "fplen", &fplen) == 0 && fplen >= 0 &&
	              fplen <= TAILID_FP_MAX && fplen <= out->pos;
	out->fplen = out->has_fp ? (int32_t)fplen : 0;
	out->fp = (uint64_t)fp;
	out->has_tail = jsonint_get(json, "tail", &fp) == 0 && out->pos > TAILID_FP_MAX;
	out->tail = (uint64_t)fp;
	out->has_born = jsonint_get(json, "born", &out->born) == 0;
	out->has_after = jsonint_get(json, "after", &out->after) == 0 && out->after > 0;
	out->finished = jsonint_get(json, "finished", &fp) == 0 && fp == 1;
	out->has_seen = jsonint_get(json, "seen", &out->seen) == 0 && out->seen >= out->pos;
	return 0;
}

/* The identity part: position, dev, ino, and fp/fplen or, past the first
 * TAILID_FP_MAX bytes, the mark's fp and tail (v[3]). */
static int format_id(const struct src_offset *off, const struct tailmark *m, char *buf, size_t len)
{
	int n;

	if (off->v[0] <= TAILID_FP_MAX)
		return snprintf(buf, len,
		                "{\"position\":%lld,\"dev\":%lld,\"ino\":%lld,\"fp\":%lld,"
		                "\"fplen\":%lld",
		                (long long)off->v[0], (long long)off->v[1], (long long)off->v[2],
		                (long long)off->v[3], (long long)off->v[0]);
	n = snprintf(buf, len, "{\"position\":%lld,\"dev\":%lld,\"ino\":%lld", (long long)off->v[0],
	             (long long)off->v[1], (long long)off->v[2]);
	/* No full fp known (read again from 0 with no memory for a new mark):
	 * dev, ino and tail identify it. */
	if (n > 0 && m != NULL && m->fp_full && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"fp\":%lld,\"fplen\":%d",
		              (long long)m->fp, TAILID_FP_MAX);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"tail\":%lld", (long long)off->v[3]);
	return n;
}

int tailpos_format(const struct src_offset *off, char *buf, size_t len)
{
	const struct tailmark *m = tailmark_of(off);
	int64_t born = m != NULL && m->born > 0 ? m->born : -1;
	bool finished = born > 0 && m->done == off->v[0];
	int n = format_id(off, m, buf, len);

	if (n > 0 && born >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"born\":%lld", (long long)born);
	if (n > 0 && m != NULL && m->after > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"after\":%lld", (long long)m->after);
	if (n > 0 && finished && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"finished\":1");
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "}");
	return n > 0 && (size_t)n < len ? n : -1;
}
