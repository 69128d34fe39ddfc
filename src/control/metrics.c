/* metrics: the registry as Prometheus text (metrics.h). */
#include "control/metrics.h"

#include "util/buf.h"
#include "core/stats.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the len bytes of v from i on that a label value keeps as they
 * are: up to the next byte to escape or to check as UTF-8 (copied in runs,
 * not a byte a call: /metrics of 3,000 file partitions is 3.8 MB). */
/* Bounds the page: far above what a registry holds (20,000 file
 * partitions are about 26 MB). */
#define METRICS_MAX_BYTES ((size_t)1 << 30)

static size_t put_plain(struct buf *b, const char *v, size_t i, size_t len)
{
	size_t j = i;

	while (j < len) {
		unsigned char c = (unsigned char)v[j];

		if (c == '\\' || c == '"' || c == '\n' || c >= 0x80)
			break;
		j++;
	}
	buf_add(b, v + i, j - i);
	return j;
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
	buf_printf(b, "%s%s=\"", *first ? "{" : ",", name);
	*first = false;
	len = strlen(v);
	for (size_t i = put_plain(b, v, 0, len); i < len; i = put_plain(b, v, i + n, len)) {
		unsigned char c = (unsigned char)v[i];

		n = 1;
		if (c == '\\' || c == '"')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_addz(b, "\\n");
		else if ((n = utf8_seq((const unsigned char *)v + i, len - i, &skip)) > 0)
			buf_add(b, v + i, n);
		else
			for (n = skip, skip = 0; skip < n; skip++)
				buf_printf(b, "\\\\x%02X", (unsigned char)v[i + skip]);
	}
	buf_addc(b, '"');
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
		buf_printf(b, " %llu.%03u\n", (unsigned long long)(v->value / 1000),
		           (unsigned)(v->value % 1000));
	else
		buf_printf(b, " %llu\n", (unsigned long long)v->value);
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

	buf_printf(b, "# HELP skiff_%s%s ", d->name, suffix(d));
	for (s = d->help; *s != '\0'; s++) {
		if (*s == '\\')
			buf_addz(b, "\\\\");
		else if (*s == '\n')
			buf_addz(b, "\\n");
		else
			buf_addc(b, *s);
	}
	buf_printf(b, "\n# TYPE skiff_%s%s %s\n", d->name, suffix(d),
	           d->type == STATS_COUNTER ? "counter" : "gauge");
}

int metrics_render(const struct stats *s, char **out, size_t *len)
{
	size_t n = stats_count(s), cur = 0, i = 0;
	struct stats_view *v = calloc(n ? n : 1, sizeof(*v));
	struct buf b;

	buf_init(&b, METRICS_MAX_BYTES);
	*out = NULL;
	if (v == NULL)
		return METRICS_ERR_NOMEM;
	while (i < n && stats_next(s, &cur, &v[i]))
		i++;
	n = i;
	qsort(v, n, sizeof(*v), by_name);
	for (i = 0; i < n; i++) {
		bool first = true;

		if (i == 0 || strcmp(v[i].desc->name, v[i - 1].desc->name) != 0)
			put_help(&b, v[i].desc);
		buf_printf(&b, "skiff_%s%s", v[i].desc->name, suffix(v[i].desc));
		put_label(&b, "connector", v[i].connector, &first);
		put_label(&b, "partition", v[i].partition, &first);
		if (!first)
			buf_addc(&b, '}');
		put_value(&b, &v[i]);
	}
	free(v);
	/* An empty registry is still a page (""). */
	return buf_take(&b, out, len) == 0 ? METRICS_OK : METRICS_ERR_NOMEM;
}

const char *metrics_strerror(int err)
{
	switch (err) {
	case METRICS_OK:
		return "no error";
	case METRICS_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}
