/* commits: the one path from an acknowledged prefix to the offset store.
 * A put that fails is kept and tried again at the next flush, even after
 * its connector closed (a stop); a newer store of the key wins over a kept
 * one; three failed writes pause reading until one succeeds. */
#include "core/commits.h"
#include "config/settings.h"
#include "core/acks.h"
#include "core/partitions.h"
#include "core/source.h"
#include "offsets/offsets_doc.h"
#include "offsetsfake.h"
#include "testlib.h"
#include "util/rstr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P_KEY "[\"conn\",{\"filename\":\"a\"}]"

/* A source's rendering: {"position":N}. */
static char *render(struct partition *p, const struct src_offset *off)
{
	char buf[64];

	(void)p;
	snprintf(buf, sizeof(buf), "{\"position\":%lld}", (long long)off->v[0]);
	return strdup(buf);
}

/* Acknowledges one record of p at position pos. */
static void acked(struct acks *a, struct partition *p, int64_t pos)
{
	struct src_offset off = {.v = {pos, 0, 0, 0}};
	void *t = acks_submit(a, partition_fifo(p), &off);

	CHECK(t != NULL);
	CHECK(acks_done(a, t, true) != NULL);
}

/* What each test starts from: a commits writing to a fresh store, and one
 * partition, P_KEY, in a partitions table, its records tracked by an acks. */
struct fix {
	struct offsets *o;
	struct commits *cm;
	struct partitions *t;
	struct acks *a;
	struct partition *p;
};

static void up(struct fix *f)
{
	*f = (struct fix){0};
	CHECK_INT(commits_new(NULL, render, &f->cm), COMMITS_OK);
	CHECK_INT(partitions_new(&f->t), PARTITIONS_OK);
	CHECK_INT(acks_new(8, &f->a), ACKS_OK);
	fresh();
	f->o = open_ok();
	commits_set_store(f->cm, f->o);
	f->p = partitions_add(f->t, rstr_new(P_KEY, strlen(P_KEY)), NULL);
	CHECK(f->p != NULL);
}

static void down(struct fix *f)
{
	commits_destroy(f->cm);
	partitions_destroy(f->t, f->a, NULL);
	acks_destroy(f->a);
	offsets_destroy(f->o);
}

static void test_failed_store_at_a_stop_is_retried(void)
{
	struct fix f;
	char *json;

	up(&f);
	acked(f.a, f.p, 7);
	fill(f.o);
	/* The stop: the acknowledged prefix taken and stored, which fails (the
	 * store is full); then the connector closes and its partitions go. */
	CHECK_INT(commits_take(f.cm, f.p, &json), 1);
	CHECK_STR(json, "{\"position\":7}");
	CHECK_INT(commits_store(f.cm, f.p, json, NULL), OFFSETS_ERR_FULL);
	free(json);
	partitions_drop_conn(f.t, f.a, NULL, NULL);
	CHECK_INT(partitions_count(f.t), 0);
	CHECK(offsets_get(f.o, P_KEY) == NULL);
	CHECK(commits_due(f.cm)); /* the flush timer stays armed for it */
	/* Still full at the next flush: kept again. */
	commits_put_all(f.cm, f.t, false);
	CHECK(offsets_get(f.o, P_KEY) == NULL);
	/* Room again: the flush after stores what the stop could not. */
	CHECK_INT(offsets_put(f.o, FILL_KEY, "{\"x\":1}"), 0);
	commits_put_all(f.cm, f.t, false);
	CHECK_STR(offsets_get(f.o, P_KEY), "{\"position\":7}");
	CHECK(!commits_due(f.cm) || offsets_dirty(f.o));
	commits_write(f.cm, 1);
	CHECK_INT(commits_last(f.cm, NULL), 0);
	CHECK(!commits_due(f.cm));
	down(&f);
}

static void test_newer_store_wins_over_a_kept_one(void)
{
	struct fix f;
	char *json;

	up(&f);
	acked(f.a, f.p, 3);
	fill(f.o);
	CHECK_INT(commits_take(f.cm, f.p, &json), 1);
	CHECK(commits_store(f.cm, f.p, json, NULL) != 0);
	free(json);
	CHECK_INT(offsets_put(f.o, FILL_KEY, "{\"x\":1}"), 0);
	/* Acknowledged further before the next flush: that flush stores 5, and
	 * the kept 3 never comes back over it. */
	acked(f.a, f.p, 5);
	commits_put_all(f.cm, f.t, false);
	CHECK_STR(offsets_get(f.o, P_KEY), "{\"position\":5}");
	commits_put_all(f.cm, f.t, false);
	CHECK_STR(offsets_get(f.o, P_KEY), "{\"position\":5}");
	down(&f);
}

static void test_three_failed_writes_pause(void)
{
	struct fix f;

	up(&f);
	for (int i = 1; i <= 3; i++) {
		CHECK(!commits_paused(f.cm));
		acked(f.a, f.p, i);
		commits_moved(f.cm);
		w.fsync_file_errno = EIO;
		commits_put_all(f.cm, f.t, false);
		commits_write(f.cm, i);
		CHECK(commits_last(f.cm, NULL) != 0);
		CHECK_INT(commits_failures(f.cm), i);
	}
	CHECK(commits_paused(f.cm));
	commits_put_all(f.cm, f.t, false);
	commits_write(f.cm, 4);
	CHECK_INT(commits_last(f.cm, NULL), 0);
	CHECK(!commits_paused(f.cm));
	CHECK_INT(**commits_cell(f.cm, COMMITS_FLUSH_OK), 1);
	down(&f);
}

/* check_offset: a negative position is no offset of this source. */
static int check_offset(const struct config_section *cfg, const char *partition, const char *offset,
                        char *errbuf, size_t errlen)
{
	(void)cfg;
	(void)partition;
	if (strstr(offset, "-") != NULL) {
		snprintf(errbuf, errlen, "position must not be negative: %s", offset);
		return SOURCE_ERR_CONFIG;
	}
	return 0;
}

/* check_reach: the data ends at 50; an offset past it settles there. */
static int check_reach(const struct config_section *cfg, const char *partition, const char *offset,
                       const char *stored, bool bounded, char **settled, char *errbuf,
                       size_t errlen)
{
	(void)cfg;
	(void)partition;
	(void)stored;
	(void)bounded;
	if (strcmp(offset, "{\"position\":99}") == 0) {
		*settled = strdup("{\"position\":50}");
		snprintf(errbuf, errlen, "position 99 is past the end: 50 stored");
	}
	return 0;
}

/* KIP-875's PATCH and DELETE through commits_alter: every entry checked
 * before any is stored, an offset past the data settled by the source, a
 * null offset removing, a DELETE removing this connector's keys only. */
static void test_alter(void)
{
	static const char *const classes[] = {"Fake", NULL};
	struct source_ops ops = {
	    .classes = classes, .check_offset = check_offset, .check_reach = check_reach};
	struct connector_settings cs = {.name = "conn", .ops = &ops};
	struct offsets_doc_entry e[2];
	cJSON *pa = cJSON_Parse("{\"filename\":\"a\"}"), *pb = cJSON_Parse("{\"filename\":\"b\"}");
	struct commits *cm = NULL;
	struct offsets *o;
	char errbuf[256] = "";
	bool deferred = true;

	CHECK_INT(commits_new(NULL, render, &cm), COMMITS_OK);
	fresh();
	o = open_ok();
	commits_set_store(cm, o);
	CHECK_INT(offsets_put(o, "[\"other\",{\"filename\":\"a\"}]", "{\"position\":1}"), 0);
	e[0] = (struct offsets_doc_entry){pa, "{\"position\":7}", 14};
	e[1] = (struct offsets_doc_entry){pb, "{\"position\":-1}", 15};
	CHECK_INT(commits_alter(cm, &cs, e, 2, errbuf, sizeof(errbuf)), COMMITS_ERR_SOURCE);
	CHECK_STR(errbuf, "position must not be negative: {\"position\":-1}");
	CHECK(offsets_get(o, P_KEY) == NULL); /* the first was not stored either */

	e[1] = (struct offsets_doc_entry){pb, "{\"position\":99}", 15};
	CHECK_INT(commits_alter(cm, &cs, e, 2, errbuf, sizeof(errbuf)), 0);
	CHECK_STR(offsets_get(o, P_KEY), "{\"position\":7}");
	CHECK_STR(offsets_get(o, "[\"conn\",{\"filename\":\"b\"}]"), "{\"position\":50}");
	CHECK_INT(commits_write_now(cm, &deferred, errbuf, sizeof(errbuf)), 0);
	CHECK(!deferred);
	CHECK(!offsets_dirty(o));

	e[0] = (struct offsets_doc_entry){pa, NULL, 0}; /* null: removed */
	CHECK_INT(commits_alter(cm, &cs, e, 1, errbuf, sizeof(errbuf)), 0);
	CHECK(offsets_get(o, P_KEY) == NULL);
	CHECK(offsets_get(o, "[\"conn\",{\"filename\":\"b\"}]") != NULL);

	CHECK_INT(commits_alter(cm, &cs, NULL, 0, errbuf, sizeof(errbuf)), 0); /* DELETE */
	CHECK(offsets_get(o, "[\"conn\",{\"filename\":\"b\"}]") == NULL);
	CHECK_STR(offsets_get(o, "[\"other\",{\"filename\":\"a\"}]"), "{\"position\":1}");
	cJSON_Delete(pa);
	cJSON_Delete(pb);
	commits_destroy(cm);
	offsets_destroy(o);
}

/* commits' codes keep util/err.h's rule (-1 is the generic failure), and
 * stay apart from the store's, which commits_store passes on. */
static void test_codes(void)
{
	CHECK(COMMITS_ERR_NOMEM != -1);
	CHECK((int)COMMITS_ERR_NOMEM < (int)OFFSETS_ERR_CONFIG);
	CHECK_STR(commits_strerror(COMMITS_OK), "ok");
	CHECK_STR(commits_strerror(COMMITS_ERR_NOMEM), "out of memory");
	CHECK_STR(commits_strerror(OFFSETS_ERR_FULL), offsets_strerror(OFFSETS_ERR_FULL));
	CHECK_STR(commits_strerror(OFFSETS_ERR_IO), offsets_strerror(OFFSETS_ERR_IO));
	/* commits_alter's and commits_write_now's, too */
	CHECK_STR(commits_strerror(COMMITS_ERR_WRITE), "writing the offsets failed");
	CHECK((int)COMMITS_ERR_SOURCE < (int)OFFSETS_ERR_CONFIG);
	CHECK((int)COMMITS_ERR_STORE < (int)OFFSETS_ERR_CONFIG);
	CHECK((int)COMMITS_ERR_WRITE < (int)OFFSETS_ERR_CONFIG);
}

int main(void)
{
	setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0", 1);
	snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	test_failed_store_at_a_stop_is_retried();
	test_newer_store_wins_over_a_kept_one();
	test_three_failed_writes_pause();
	test_alter();
	test_codes();
	testlib_rmtree(base);
	return testlib_done("test_commits");
}
