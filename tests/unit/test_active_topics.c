/* A connector's active topics: first-use order, one copy each, bounded at
 * ACTIVE_TOPICS_MAX, emptied by a free (a reset). */
#include "core/active_topics.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>

static void join(void *arg, const char *topic)
{
	char *out = arg;

	snprintf(out + strlen(out), 256 - strlen(out), "%s;", topic);
}

static size_t n;

static void count(void *arg, const char *topic)
{
	(void)arg;
	(void)topic;
	n++;
}

int main(void)
{
	struct active_topics *t = NULL;
	char out[256] = "", name[32];

	active_topics_each(t, join, out); /* none yet */
	CHECK_STR(out, "");
	CHECK_INT(active_topics_note(&t, "logs"), ACTIVE_TOPICS_OK);
	CHECK_INT(active_topics_note(&t, "logs"), ACTIVE_TOPICS_OK);
	CHECK_INT(active_topics_note(&t, "audit"), ACTIVE_TOPICS_OK);
	CHECK_INT(active_topics_note(&t, "logs"), ACTIVE_TOPICS_OK);
	active_topics_each(t, join, out);
	CHECK_STR(out, "logs;audit;");
	/* What the record path's topic guard asks (core/pipeline.c). */
	CHECK(active_topics_has(t, "logs"));
	CHECK(active_topics_has(t, "audit"));
	CHECK(active_topics_has(t, "audit"));
	CHECK(!active_topics_has(t, "secret"));
	CHECK(!active_topics_has(NULL, "logs"));
	active_topics_free(t);
	t = NULL;

	/* A router naming a topic per day: the first ACTIVE_TOPICS_MAX kept. */
	for (int i = 0; i < ACTIVE_TOPICS_MAX + 10; i++) {
		snprintf(name, sizeof(name), "day-%d", i);
		CHECK_INT(active_topics_note(&t, name), ACTIVE_TOPICS_OK);
	}
	active_topics_each(t, count, NULL);
	CHECK_INT(n, ACTIVE_TOPICS_MAX);
	CHECK(active_topics_has(t, "day-0"));
	CHECK(!active_topics_has(t, "day-260")); /* not kept: a guard asks again */
	active_topics_free(t);
	active_topics_free(NULL);
	return testlib_done("active_topics");
}
