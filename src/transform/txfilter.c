/* txfilter: Filter and the predicates, as Connect's. Filter drops every
 * record it is applied to, so it is used with a predicate (transforms.F.
 * predicate=P, optionally negate=true): TopicNameMatches (the whole topic
 * matches a Java regex, see txregex.h), HasHeaderKey (a header of that name
 * exists) and RecordIsTombstone (the value is null). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"
#include "transform/txregex.h"

static void no_free(void *ctx)
{
	(void)ctx;
}

static int filter_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	(void)c, (void)errbuf, (void)errlen;
	*ctx = NULL;
	return 0;
}

static int filter_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	(void)ctx, (void)r, (void)errbuf, (void)errlen;
	return TX_DROP;
}

const struct tx_ops txfilter_ops = {
    .name = "Filter",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Drops the record (with a predicate: the records it matches).",
    .props = "predicate, negate",
    .init = filter_init,
    .apply = filter_apply,
    .free = no_free,
};

/* ---- TopicNameMatches ------------------------------------------------------ */

struct topic_re {
	regex_t re;
};

static void tm_free(void *ctx)
{
	struct topic_re *t = ctx;

	if (t != NULL)
		regfree(&t->re);
	free(t);
}

static int tm_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct topic_re *t = calloc(1, sizeof(*t));
	const char *pattern;
	char why[512];
	int rc;

	*ctx = NULL;
	if (t == NULL)
		return TX_ERR_NOMEM;
	if (txconf_require(c, "pattern", &pattern, errbuf, errlen) != 0) {
		free(t);
		return TX_ERR;
	}
	if ((rc = txregex_compile(&t->re, pattern, why, sizeof(why))) != 0) {
		free(t);
		return rc == TX_ERR_NOMEM ? rc
		                          : txconf_error(c, "pattern", errbuf, errlen, "%s", why);
	}
	*ctx = t;
	return 0;
}

static int tm_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct topic_re *t = ctx;
	regmatch_t m[1];

	(void)errbuf, (void)errlen;
	return txregex_matches(&t->re, r->topic, m, 1) ? 1 : 0;
}

const struct tx_ops txfilter_topic_ops = {
    .name = "TopicNameMatches",
    .pkg = "org.apache.kafka.connect.transforms.predicates",
    .doc = "True when the whole topic name matches pattern.",
    .props = "pattern (Java syntax, run as POSIX extended)",
    .init = tm_init,
    .apply = tm_apply,
    .free = tm_free,
};

/* ---- HasHeaderKey ---------------------------------------------------------- */

static int hk_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	const char *name;

	*ctx = NULL;
	if (txconf_require(c, "name", &name, errbuf, errlen) != 0)
		return TX_ERR;
	*ctx = (void *)name;
	return 0;
}

static int hk_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	(void)errbuf, (void)errlen;
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcmp(r->headers[i].name, ctx) == 0)
			return 1;
	return 0;
}

const struct tx_ops txfilter_header_ops = {
    .name = "HasHeaderKey",
    .pkg = "org.apache.kafka.connect.transforms.predicates",
    .doc = "True when the record has a header of that name.",
    .props = "name",
    .init = hk_init,
    .apply = hk_apply,
    .free = no_free,
};

/* ---- RecordIsTombstone ------------------------------------------------------ */

static int ts_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	(void)ctx, (void)errbuf, (void)errlen;
	return txrec_is_null(&r->value) ? 1 : 0;
}

const struct tx_ops txfilter_tombstone_ops = {
    .name = "RecordIsTombstone",
    .pkg = "org.apache.kafka.connect.transforms.predicates",
    .doc = "True when the value is null.",
    .props = "(none)",
    .init = filter_init,
    .apply = ts_apply,
    .free = no_free,
};
