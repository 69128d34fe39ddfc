/* tailmulti: lines grouped into multi-line records (see tailmulti.h).
 *
 * Offset safety. A record is handed out with the offset after its last line
 * and only once complete; lines waiting in the record being assembled have
 * no offset anywhere but here. So the committed offset of the stream (the
 * contiguous acknowledged prefix of handed-out records) is always the end of
 * a record = the first byte of the next one, and a restart reads that next
 * record whole from its first line. What is waiting when skiff stops or
 * crashes was never shipped and is read again. Between complete records
 * nothing is skipped: every line fed ends up in exactly one record. */
#include "sources/file/tailmulti.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record buffer grown beyond this is freed once its record ships. */
#define KEEP_CAP (64 * 1024)

struct tailmulti_rules {
	regex_t re;
	bool compiled;
	struct tailmulti_opts o;
	char *scratch; /* a line NUL-terminated for regexec */
	size_t scap;
};

struct tailmulti {
	struct tailmulti_rules *r;
	char *buf; /* the waiting record's bytes, lines joined by "\n" */
	size_t len, cap, nlines;
	int64_t start;           /* its first line's first byte */
	struct src_offset after; /* after its last line; holds the ref */
	int64_t last_ms;         /* when its last line was added */
	struct src_ref **given;  /* refs of records handed out, until the next feed */
	size_t ngiven, capgiven;
};

int tailmulti_rules_new(const struct tailmulti_opts *o, struct tailmulti_rules **out, char *errbuf,
                        size_t errlen)
{
	struct tailmulti_rules *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL)
		return TAILMULTI_ERR_NOMEM;
	r->o = *o;
	r->o.pattern = NULL;
	rc = regcomp(&r->re, o->pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char why[256];

		regerror(rc, &r->re, why, sizeof(why));
		snprintf(errbuf, errlen, "multiline.pattern: %s", why);
		free(r);
		return rc == REG_ESPACE ? TAILMULTI_ERR_NOMEM : TAILMULTI_ERR;
	}
	r->compiled = true;
	*out = r;
	return 0;
}

void tailmulti_rules_free(struct tailmulti_rules *r)
{
	if (r == NULL)
		return;
	if (r->compiled)
		regfree(&r->re);
	free(r->scratch);
	free(r);
}

int tailmulti_new(struct tailmulti_rules *r, struct tailmulti **out)
{
	struct tailmulti *m = calloc(1, sizeof(*m));

	*out = m;
	if (m == NULL)
		return TAILMULTI_ERR_NOMEM;
	m->r = r;
	return 0;
}

static void release(struct tailmulti *m)
{
	for (size_t i = 0; i < m->ngiven; i++)
		src_ref_drop(m->given[i]);
	m->ngiven = 0;
}

void tailmulti_free(struct tailmulti *m)
{
	if (m == NULL)
		return;
	release(m);
	if (m->nlines > 0)
		src_ref_drop(m->after.ref);
	free(m->given);
	free(m->buf);
	free(m);
}

int64_t tailmulti_deadline(const struct tailmulti *m)
{
	return m->nlines > 0 ? m->last_ms + m->r->o.timeout_ms : -1;
}

/* Room for what one feed of n lines may need, before any is consumed: a
 * given slot per record and a scratch copy of the longest line. */
static int prepare(struct tailmulti *m, const struct tailline *in, size_t n)
{
	struct tailmulti_rules *r = m->r;
	size_t longest = 0;

	if (m->capgiven < n + 1) {
		struct src_ref **g = realloc(m->given, (n + 1) * sizeof(*g));

		if (g == NULL)
			return TAILMULTI_ERR_NOMEM;
		m->given = g;
		m->capgiven = n + 1;
	}
	for (size_t i = 0; i < n; i++)
		if (in[i].len > longest)
			longest = in[i].len;
	if (r->scap < longest + 1) {
		char *s = realloc(r->scratch, longest + 1);

		if (s == NULL)
			return TAILMULTI_ERR_NOMEM;
		r->scratch = s;
		r->scap = longest + 1;
	}
	return 0;
}

/* True when l "matches" in Filebeat's sense (negate applied). A NUL byte in
 * the line ends what the pattern sees. */
static bool matches(struct tailmulti_rules *r, const struct tailline *l)
{
	memcpy(r->scratch, l->bytes, l->len);
	r->scratch[l->len] = '\0';
	return (regexec(&r->re, r->scratch, 0, NULL, 0) == 0) != r->o.negate;
}

/* True when l is the bytes right after the waiting record in the same file. */
static bool follows(const struct tailmulti *m, const struct tailline *l)
{
	return l->start == m->after.v[0] && l->after.v[1] == m->after.v[1] &&
	       l->after.v[2] == m->after.v[2];
}

/* Hands the waiting record out: its bytes into buf, its offset's reference
 * to m->given. */
static void ship(struct tailmulti *m, struct tailbuf *buf, struct tailline *out, size_t *nout)
{
	char *to = buf->mem + buf->used;

	if (m->len > 0)
		memcpy(to, m->buf, m->len);
	buf->used += m->len;
	out[*nout] =
	    (struct tailline){.bytes = to, .len = m->len, .start = m->start, .after = m->after};
	(*nout)++;
	if (m->ngiven > 0 && m->given[m->ngiven - 1] == m->after.ref)
		src_ref_drop(m->after.ref); /* the records of one file share its mark */
	else
		m->given[m->ngiven++] = m->after.ref;
	m->after.ref = NULL;
	m->nlines = m->len = 0;
	if (m->cap > KEEP_CAP) {
		free(m->buf);
		m->buf = NULL;
		m->cap = 0;
	}
}

static int add(struct tailmulti *m, const struct tailline *l, int64_t now)
{
	size_t sep = m->nlines > 0 ? 1 : 0, need = m->len + sep + l->len;

	if (need > m->cap) {
		size_t cap = m->cap * 2 > 256 ? m->cap * 2 : 256;
		char *grown;

		if (cap > m->r->o.max_bytes)
			cap = m->r->o.max_bytes;
		if (cap < need)
			cap = need;
		if ((grown = realloc(m->buf, cap)) == NULL)
			return TAILMULTI_ERR_NOMEM;
		m->buf = grown;
		m->cap = cap;
	}
	if (sep)
		m->buf[m->len] = '\n';
	if (l->len > 0)
		memcpy(m->buf + m->len + sep, l->bytes, l->len);
	m->len = need;
	if (m->nlines++ == 0)
		m->start = l->start;
	src_ref_drop(m->after.ref);
	m->after = l->after;
	src_ref_hold(m->after.ref);
	m->last_ms = now;
	return 0;
}

/* One line: completes the waiting record when l does not belong to it, adds
 * l, and with match=before completes the record that l ends. */
static int one(struct tailmulti *m, const struct tailline *l, int64_t now, struct tailbuf *buf,
               struct tailline *out, size_t *nout, struct tailmulti_stats *st)
{
	const struct tailmulti_opts *o = &m->r->o;
	bool match = matches(m->r, l);

	if (m->nlines > 0) {
		bool cut = !follows(m, l) || (!o->before && !match);

		if (!cut && m->nlines >= o->max_lines) {
			cut = true;
			st->max_lines++;
		} else if (!cut && m->len + 1 + l->len > o->max_bytes) {
			cut = true;
			st->max_bytes++;
		}
		if (cut)
			ship(m, buf, out, nout);
	}
	if (add(m, l, now) != 0)
		return TAILMULTI_ERR_NOMEM;
	if (o->before && !match)
		ship(m, buf, out, nout);
	return 0;
}

int tailmulti_feed(struct tailmulti *m, const struct tailline *in, size_t n, int64_t now,
                   struct tailbuf *buf, struct tailline *out, size_t *nout,
                   struct tailmulti_stats *st)
{
	*nout = 0;
	release(m);
	if (prepare(m, in, n) != 0)
		return TAILMULTI_ERR_NOMEM;
	if (n == 0) {
		if (m->nlines > 0 && now >= tailmulti_deadline(m)) {
			st->timeouts++;
			ship(m, buf, out, nout);
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (one(m, &in[i], now, buf, out, nout, st) != 0)
			return TAILMULTI_ERR_NOMEM;
	return 0;
}
