/* metrics: the registry as Prometheus text (metrics.h). */
#include "metrics.h"

#include "utf8.h"

#include "stats.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 256) * 2;
		char *grown = realloc(b->p, cap);

		if (grown == NULL) {
			b->failed = true;
			return;
		}
		b->p = grown;
		b->cap = cap;
	}
}

/* A label value: backslash, double quote and newline escaped; a byte
 * that is not part of valid UTF-8 (a file name is any bytes) as the text
 * \xFF, so that the page stays UTF-8 (Prometheus refuses a whole scrape
 * otherwise) and two such names stay two series. */
static void put_label(struct buf *b, const char *name, const char *v, bool *first)
{
	size_t len, n, skip;

	if (v == NULL)
		return;
	put(b, "%s%s=\"", *first ? "{" : ",", name);
	*first = false;
	len = strlen(v);
	for (size_t i = 0; i < len; i += n) {
		unsigned char c = (unsigned char)v[i];

		n = 1;
		if (c == '\\' || c == '"')
			put(b, "\\%c", c);
		else if (c == '\n')
			put(b, "\\n");
		else if (c < 0x80)
			put(b, "%c", c);
		else if ((n = utf8_seq((const unsigned char *)v + i, len - i, &skip)) > 0)
			put(b, "%.*s", (int)n, v + i);
		else
			for (n = skip, skip = 0; skip < n; skip++)
				put(b, "\\\\x%02X", (unsigned char)v[i + skip]);
	}
	put(b, "\"");
}

static const char *suffix(const struct stats_desc *d)
{
	bool counter = d->type == STATS_COUNTER;

	if (d->flags & STATS_F_BYTES)
		return counter ? "_bytes_total" : "_bytes";
	if (d->flags & STATS_F_MS)
		return counter ? "_seconds_total" : "_seconds";
	if (d->flags & STATS_F_EPOCH_MS)
		return "_timestamp_seconds";
	return counter ? "_total" : "";
}

static void put_value(struct buf *b, const struct stats_view *v)
{
	if (v->desc->flags & (STATS_F_MS | STATS_F_EPOCH_MS))
		put(b, " %llu.%03u\n", (unsigned long long)(v->value / 1000),
		    (unsigned)(v->value % 1000));
	else
		put(b, " %llu\n", (unsigned long long)v->value);
}

/* Groups samples by name, then registration order. */
static int by_name(const void *a, const void *b)
{
	const struct stats_view *x = a, *y = b;
	int c = strcmp(x->desc->name, y->desc->name);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void put_help(struct buf *b, const struct stats_desc *d)
{
	const char *s;

	put(b, "# HELP skiff_%s%s ", d->name, suffix(d));
	for (s = d->help; *s != '\0'; s++) {
		if (*s == '\\')
			put(b, "\\\\");
		else if (*s == '\n')
			put(b, "\\n");
		else
			put(b, "%c", *s);
	}
	put(b, "\n# TYPE skiff_%s%s %s\n", d->name, suffix(d),
	    d->type == STATS_COUNTER ? "counter" : "gauge");
}

int metrics_render(const struct stats *s, char **out, size_t *len)
{
	size_t n = stats_count(s), cur = 0, i = 0;
	struct stats_view *v = calloc(n ? n : 1, sizeof(*v));
	struct buf b = {0};

	*out = NULL;
	if (v == NULL)
		return -2;
	while (i < n && stats_next(s, &cur, &v[i]))
		i++;
	n = i;
	qsort(v, n, sizeof(*v), by_name);
	put(&b, "%s", "");
	for (i = 0; i < n; i++) {
		bool first = true;

		if (i == 0 || strcmp(v[i].desc->name, v[i - 1].desc->name) != 0)
			put_help(&b, v[i].desc);
		put(&b, "skiff_%s%s", v[i].desc->name, suffix(v[i].desc));
		put_label(&b, "connector", v[i].connector, &first);
		put_label(&b, "partition", v[i].partition, &first);
		if (!first)
			put(&b, "}");
		put_value(&b, &v[i]);
	}
	free(v);
	if (b.failed) {
		free(b.p);
		return -2;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
