/* txroute: RegexRouter and TimestampRouter, as Connect's: they change the
 * record's topic only.
 *
 * RegexRouter's regex (txregex.h) is matched against the whole topic
 * (Matcher.matches) and replaced as replaceFirst does: "$N" names a group
 * ("$10" group 10 only when there are ten), one that took no part in the
 * match gives "", "\x" is a literal x. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transform/txdate.h"
#include "transform/txops.h"
#include "transform/txregex.h"
#include "util/buf.h"

#define TOPIC_MAX 249 /* Kafka's longest topic name */

struct router {
	regex_t re;
	bool compiled;
	const char *replacement;
	const char *topic_format, *ts_format; /* TimestampRouter */
};

static void router_free(void *ctx)
{
	struct router *t = ctx;

	if (t == NULL)
		return;
	if (t->compiled)
		regfree(&t->re);
	free(t);
}

static int rr_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct router *t = calloc(1, sizeof(*t));
	const char *regex;
	char why[512];
	int rc;

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	if (txconf_require(c, "regex", &regex, errbuf, errlen) ||
	    txconf_require(c, "replacement", &t->replacement, errbuf, errlen))
		return TX_ERR;
	rc = txregex_compile(&t->re, regex, why, sizeof(why));
	if (rc != 0)
		return rc == TX_ERR_NOMEM ? rc
		                          : txconf_error(c, "regex", errbuf, errlen, "%s", why);
	t->compiled = true;
	return 0;
}

/* Appends Java's group g (counted from 1; 0 the whole match) of topic to
 * o: nothing for a group that took no part in the match. */
static void add_group(const char *topic, const regmatch_t *m, size_t g, struct buf *o)
{
	const regmatch_t *x = &m[g + TXREGEX_GROUP_SHIFT];

	if (x->rm_so >= 0 && x->rm_eo >= x->rm_so)
		buf_add(o, topic + x->rm_so, (size_t)(x->rm_eo - x->rm_so));
}

/* Reads the group number after "$" at *p as appendReplacement does: the
 * first digit, then each next digit while the number stays within the
 * pattern's groups ("$10" with one group is group 1, then "0"). Returns the
 * number, or -1 with errbuf set; *p is left on its last digit. */
static long group_ref(const char **p, size_t ngroups, const char *rep, char *errbuf, size_t errlen)
{
	const char *s = *p + 1;
	long g;

	if (*s == '\0')
		return snprintf(errbuf, errlen, "Illegal group reference: group index is missing"),
		       -1;
	if (*s == '{') /* a named group: skiff's patterns have none */
		return snprintf(errbuf, errlen, "No group with name in '%s'", rep), -1;
	if (*s < '0' || *s > '9')
		return snprintf(errbuf, errlen, "Illegal group reference"), -1;
	g = *s - '0';
	while (s[1] >= '0' && s[1] <= '9' && (size_t)(g * 10 + (s[1] - '0')) <= ngroups)
		g = g * 10 + (*++s - '0');
	*p = s;
	if ((size_t)g > ngroups)
		return snprintf(errbuf, errlen, "No group %ld", g), -1;
	return g;
}

/* Java's Matcher.appendReplacement: $N groups (one not matched gives
 * nothing), \x a literal x. */
static int replace(const char *topic, const char *rep, const regmatch_t *m, size_t ngroups,
                   struct buf *o, char *errbuf, size_t errlen)
{
	for (const char *p = rep; *p != '\0'; p++) {
		long g;

		if (*p == '\\') {
			if (p[1] == '\0') {
				snprintf(errbuf, errlen, "character to be escaped is missing");
				return TX_ERR;
			}
			buf_add(o, ++p, 1);
		} else if (*p == '$') {
			if ((g = group_ref(&p, ngroups, rep, errbuf, errlen)) < 0)
				return TX_ERR;
			add_group(topic, m, (size_t)g, o);
		} else {
			buf_add(o, p, 1);
		}
	}
	return 0;
}

static int rr_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct router *t = ctx;
	regmatch_t m[TXREGEX_NMATCH];
	struct buf o;
	char *topic = NULL;
	int rc;

	if (!txregex_matches(&t->re, r->topic, m, TXREGEX_NMATCH))
		return TX_OK;
	buf_init(&o, TOPIC_MAX * 4);
	rc = replace(r->topic, t->replacement, m, txregex_groups(&t->re), &o, errbuf, errlen);
	if (rc != 0) {
		buf_free(&o);
		return rc;
	}
	if (buf_take(&o, &topic, NULL) != 0)
		return TX_ERR_NOMEM;
	free(r->topic);
	r->topic = topic;
	return TX_OK;
}

const struct tx_ops txroute_regex_ops = {
    .name = "RegexRouter",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Renames the topic when the whole topic matches regex.",
    .props = "regex (Java syntax, run as POSIX extended), replacement ($1 for a group)",
    .init = rr_init,
    .apply = rr_apply,
    .free = router_free,
};

/* ---- TimestampRouter ------------------------------------------------------- */

static int tr_init(const struct txconf *c, void **ctx, char *errbuf, size_t errlen)
{
	struct router *t = calloc(1, sizeof(*t));
	char why[256];

	*ctx = t;
	if (t == NULL)
		return TX_ERR_NOMEM;
	t->topic_format = txconf_get(c, "topic.format");
	t->ts_format = txconf_get(c, "timestamp.format");
	t->topic_format = t->topic_format ? t->topic_format : "${topic}-${timestamp}";
	t->ts_format = t->ts_format ? t->ts_format : "yyyyMMdd";
	if (txdate_check(t->ts_format, why, sizeof(why)) != 0)
		return txconf_error(c, "timestamp.format", errbuf, errlen, "%s", why);
	return 0;
}

static int tr_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct router *t = ctx;
	struct buf o;
	char *topic = NULL;

	if (r->timestamp_ms == 0) {
		snprintf(errbuf, errlen, "Timestamp missing on record (the source sets none)");
		return TX_ERR;
	}
	buf_init(&o, TOPIC_MAX * 4);
	for (const char *p = t->topic_format; *p != '\0';) {
		if (strncmp(p, "${topic}", 8) == 0) {
			buf_addz(&o, r->topic);
			p += 8;
		} else if (strncmp(p, "${timestamp}", 12) == 0) {
			txdate_format(t->ts_format, r->timestamp_ms, true, &o);
			p += 12;
		} else {
			buf_add(&o, p++, 1);
		}
	}
	if (buf_take(&o, &topic, NULL) != 0)
		return TX_ERR_NOMEM;
	free(r->topic);
	r->topic = topic;
	return TX_OK;
}

const struct tx_ops txroute_timestamp_ops = {
    .name = "TimestampRouter",
    .pkg = "org.apache.kafka.connect.transforms",
    .doc = "Renames the topic after the record's timestamp (a record without one fails).",
    .props = "topic.format (${topic}-${timestamp}), timestamp.format (yyyyMMdd; SimpleDateFormat "
             "letters yMdHkKhmsSaEZX, UTC)",
    .init = tr_init,
    .apply = tr_apply,
    .free = router_free,
};
