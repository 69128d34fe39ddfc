/* txroute: RegexRouter and TimestampRouter, as Connect's: they change the
 * record's topic only.
 *
 * RegexRouter's regex (txregex.h) is matched against the whole topic
 * (Matcher.matches) and replaced as replaceFirst does: "$N" names a group,
 * "\x" is a literal x. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "txdate.h"
#include "txops.h"
#include "txregex.h"
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

/* Java's Matcher.appendReplacement: $N groups, \x literals. */
static int replace(const char *topic, const char *rep, const regmatch_t *m, size_t nm,
                   struct buf *o, char *errbuf, size_t errlen)
{
	for (const char *p = rep; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			buf_add(o, ++p, 1);
		} else if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
			size_t g = (size_t)(*++p - '0') + TXREGEX_GROUP_SHIFT;

			if (g >= nm || m[g].rm_so < 0) {
				snprintf(errbuf, errlen, "No group %zu", g - TXREGEX_GROUP_SHIFT);
				return TX_ERR;
			}
			buf_add(o, topic + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
		} else if (*p == '$') {
			snprintf(errbuf, errlen, "Illegal group reference in '%s'", rep);
			return TX_ERR;
		} else {
			buf_add(o, p, 1);
		}
	}
	return 0;
}

static int rr_apply(void *ctx, struct txrec *r, char *errbuf, size_t errlen)
{
	struct router *t = ctx;
	regmatch_t m[11];
	struct buf o;
	char *topic = NULL;
	int rc;

	if (!txregex_matches(&t->re, r->topic, m, 11))
		return TX_OK;
	buf_init(&o, TOPIC_MAX * 4);
	if ((rc = replace(r->topic, t->replacement, m, 11, &o, errbuf, errlen)) != 0) {
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
