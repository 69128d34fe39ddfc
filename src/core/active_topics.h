/* active_topics: a connector's active topics, as Connect's GET
 * /connectors/X/topics lists them: the topics it produced to since its
 * source opened or the last reset (PUT .../topics/reset), in the order of
 * their first record. Bounded: at most ACTIVE_TOPICS_MAX are kept (a
 * RegexRouter or TimestampRouter can name one per day for ever); later
 * ones are not listed. The record path notes each record's topic; the
 * REST API reads them through the query (core/query.h). Main loop only;
 * error convention: util/err.h. */
#ifndef SKIFF_ACTIVE_TOPICS_H
#define SKIFF_ACTIVE_TOPICS_H

#include "util/err.h"

#include <stdbool.h>

#define ACTIVE_TOPICS_MAX 256

struct active_topics;

enum {
	ACTIVE_TOPICS_OK = 0,
	ACTIVE_TOPICS_ERR_NOMEM = -2, /* out of memory: the topic is not listed */
};

/* Notes topic (copied) in *t, made at the first topic (*t NULL: none yet).
 * The topic of the record before costs one comparison. Returns
 * ACTIVE_TOPICS_OK (also when the list is full) or ACTIVE_TOPICS_ERR_NOMEM. */
int active_topics_note(struct active_topics **t, const char *topic);

/* True when topic is in t (NULL: none); the topic of the call before costs
 * one comparison. For the record path's topic guard (core/pipeline.c): a
 * topic listed was allowed when its first record went. */
bool active_topics_has(struct active_topics *t, const char *topic);

/* Each topic of t to fn, in the order noted. Accepts NULL (none). */
void active_topics_each(const struct active_topics *t, void (*fn)(void *arg, const char *topic),
                        void *arg);

/* Frees t and its copies (a reset, or the source closes). Accepts NULL. */
void active_topics_free(struct active_topics *t);

#endif
