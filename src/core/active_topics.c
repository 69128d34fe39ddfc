/* active_topics: see active_topics.h. */
#include "core/active_topics.h"

#include <stdlib.h>
#include <string.h>

struct active_topics {
	char **topics;
	size_t n, last; /* topics[last] matched last */
};

int active_topics_note(struct active_topics **tp, const char *topic)
{
	struct active_topics *t = *tp;
	char **grown, *copy;

	if (t != NULL && t->n > 0 && strcmp(t->topics[t->last], topic) == 0)
		return ACTIVE_TOPICS_OK; /* the usual case: the topic of the record before */
	if (t == NULL && (t = *tp = calloc(1, sizeof(*t))) == NULL)
		return ACTIVE_TOPICS_ERR_NOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->topics[i], topic) == 0) {
			t->last = i;
			return ACTIVE_TOPICS_OK;
		}
	if (t->n == ACTIVE_TOPICS_MAX)
		return ACTIVE_TOPICS_OK; /* GET .../topics lists the first ACTIVE_TOPICS_MAX */
	if ((grown = realloc(t->topics, (t->n + 1) * sizeof(*grown))) == NULL)
		return ACTIVE_TOPICS_ERR_NOMEM;
	t->topics = grown;
	if ((copy = strdup(topic)) == NULL)
		return ACTIVE_TOPICS_ERR_NOMEM;
	t->last = t->n;
	t->topics[t->n++] = copy;
	return ACTIVE_TOPICS_OK;
}

bool active_topics_has(struct active_topics *t, const char *topic)
{
	if (t == NULL)
		return false;
	if (t->n > 0 && strcmp(t->topics[t->last], topic) == 0)
		return true;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->topics[i], topic) == 0) {
			t->last = i;
			return true;
		}
	return false;
}

void active_topics_each(const struct active_topics *t, void (*fn)(void *arg, const char *topic),
                        void *arg)
{
	for (size_t i = 0; t != NULL && i < t->n; i++)
		fn(arg, t->topics[i]);
}

void active_topics_free(struct active_topics *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->topics[i]);
	free(t->topics);
	free(t);
}
