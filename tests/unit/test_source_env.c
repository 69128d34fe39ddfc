/* core/source_env.c without a worker: a host over a loop, a registry, a
 * partition table and commits, with its ops faked, offers a connector's
 * source its state file, its value budget and its counters, and decides
 * how the loop treats the source (read, watch while reading pauses, or
 * nothing) and when watch() is called. */
#include "config/settings.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "core/source.h"
#include "core/source_env.h"
#include "core/stats.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"
#include "testlib.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

/* ---- the worker's side, faked ------------------------------------------- */

static struct fake {
	int flush_soon, watches;
	size_t message_max;
	int64_t flush_interval;
} fk;

static void flush_soon(void *ctx)
{
	(void)ctx;
	fk.flush_soon++;
}

static size_t message_max(void *ctx)
{
	(void)ctx;
	return fk.message_max;
}

static int64_t flush_interval(void *ctx)
{
	(void)ctx;
	return fk.flush_interval;
}

static const struct source_env_ops ops = {
    .flush_soon = flush_soon,
    .message_max = message_max,
    .flush_interval = flush_interval,
};

static int64_t swatch(void *ctx, int64_t now)
{
	(void)ctx;
	(void)now;
	fk.watches++;
	return 500;
}

static struct source_ops watching = {.kind = "test", .watch = swatch};
static struct source_ops plain = {.kind = "test"};

/* ---- a host and one slot -------------------------------------------------- */

struct rig {
	struct loop *loop;
	struct stats *st;
	struct partitions *parts;
	struct commits *commits;
	struct source_env_host *h;
	struct connector_settings cs;
	struct conn c;
};

static void rig_up(struct rig *r, const char *offset_file, const char *name)
{
	struct source_env_conf conf = {.offset_file = offset_file, .ops = &ops};

	memset(r, 0, sizeof(*r));
	memset(&fk, 0, sizeof(fk));
	fk.message_max = 1000000;
	fk.flush_interval = 1234;
	CHECK_INT(loop_new(&r->loop), 0);
	CHECK_INT(stats_new(&r->st), 0);
	CHECK_INT(partitions_new(&r->parts), 0);
	CHECK_INT(commits_new(NULL, NULL, &r->commits), 0);
	conf.loop = r->loop;
	conf.stats = r->st;
	conf.parts = r->parts;
	conf.commits = r->commits;
	CHECK_INT(source_env_host_new(&conf, &r->h), 0);
	r->cs.name = name;
	r->cs.ops = &plain;
	r->cs.value_conv.kind = CONV_JSON;
	r->cs.key_conv.kind = CONV_STRING;
	r->c.cs = &r->cs;
	r->c.run = CONN_RUNNING;
	source_env_init(r->h, &r->c);
	CHECK_INT(source_env_register(&r->c), 0);
}

static void rig_down(struct rig *r)
{
	for (int i = 0; i < r->c.nwatches; i++)
		loop_fd_del(r->loop, r->c.watches[i]);
	loop_timer_del(r->loop, r->c.deadline);
	source_env_free(&r->c);
	source_env_host_destroy(r->h);
	partitions_destroy(r->parts, NULL, NULL);
	commits_destroy(r->commits);
	stats_destroy(r->st);
	loop_destroy(r->loop);
}

/* The value of the registry's metric name labelled with c's connector. */
static uint64_t metric(const struct rig *r, const char *name)
{
	struct stats_view v;
	size_t cur = 0;

	while (stats_next(r->st, &cur, &v))
		if (strcmp(v.desc->name, name) == 0 && v.connector != NULL &&
		    strcmp(v.connector, r->cs.name) == 0)
			return v.value;
	return UINT64_MAX;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_state_file(void)
{
	struct rig r;
	char longname[301];

	rig_up(&r, "/var/lib/skiff/offsets.json", "a b/c");
	CHECK_STR(r.c.env.state_file, "/var/lib/skiff/offsets.json.state-a%20b%2fc");
	rig_down(&r);

	/* A name too long for one directory entry: its FNV-1a 64 in hex. */
	memset(longname, 'n', 300);
	longname[300] = '\0';
	rig_up(&r, "/s/offsets.json", longname);
	CHECK(r.c.env.state_file != NULL);
	CHECK_INT(strlen(r.c.env.state_file), strlen("/s/offsets.json.state-") + 16);
	CHECK(strncmp(r.c.env.state_file, "/s/offsets.json.state-", 22) == 0);
	rig_down(&r);

	/* No offsets file (the topic only): no state file. */
	rig_up(&r, NULL, "p");
	CHECK(r.c.env.state_file == NULL);
	rig_down(&r);
}

static void test_budget_and_interval(void)
{
	struct rig r;

	rig_up(&r, NULL, "p");
	/* JSON: 6 bytes out per byte in at worst, after 16 KiB of room. */
	CHECK_INT(r.c.env.value_bytes_max, (1000000 - 16384) / 6);
	CHECK_INT(r.c.env.state_interval_ms, 1234);
	CHECK(r.c.env.opaque == &r.c);
	CHECK_STR(r.c.env.connector, "p");
	rig_down(&r);
}

static void test_counters(void)
{
	struct rig r;
	static const struct stats_desc d = {"lines_held", STATS_COUNTER, "held lines", STATS_F_LOG};

	rig_up(&r, NULL, "p");
	CHECK_INT(metric(&r, "records_produced"), 0); /* registered by source_env_register */
	r.c.env.count(&r.c.env, "lines_lost", 3);
	r.c.env.count(&r.c.env, "lines_lost", 2);
	CHECK_INT(metric(&r, "lines_lost"), 5);
	r.c.env.set(&r.c.env, "lines_lost", 7);
	CHECK_INT(metric(&r, "lines_lost"), 7);
	CHECK_INT(r.c.env.counter(&r.c.env, &d), 0);
	CHECK_INT(metric(&r, "lines_held"), 0);
	/* The exporter logs what moved and remembers it; nothing to check but
	 * that it runs over what the host registered. */
	source_env_log_counters(r.h);
	rig_down(&r);
}

static void test_mode_and_notice(void)
{
	struct rig r;
	int ctx = 1;

	rig_up(&r, NULL, "p");
	/* Not open: nothing to read or watch. */
	CHECK_INT(source_env_mode(&r.c, false), SOURCE_ENV_IDLE);
	r.c.ctx = &ctx;
	CHECK_INT(source_env_mode(&r.c, false), SOURCE_ENV_READ);
	/* Blocked, and no watch(): nothing. */
	CHECK_INT(source_env_mode(&r.c, true), SOURCE_ENV_IDLE);
	r.cs.ops = &watching;
	CHECK_INT(source_env_mode(&r.c, true), SOURCE_ENV_WATCH);
	/* Paused by a person: watched, not read. */
	r.c.run = CONN_PAUSED;
	CHECK_INT(source_env_mode(&r.c, false), SOURCE_ENV_WATCH);
	/* Failed for good: nothing. */
	r.c.stopped = true;
	CHECK_INT(source_env_mode(&r.c, false), SOURCE_ENV_IDLE);
	r.c.stopped = false;

	CHECK_INT(source_env_watch(&r.c, SOURCE_ENV_WATCH, 1000), 0);
	/* Nothing fired and watch() is not due: not called. */
	r.c.watch_at = -1;
	source_env_notice(&r.c, 1000);
	CHECK_INT(fk.watches, 0);
	/* A descriptor fired: watch() once, then ready to be read. */
	r.c.woke = true;
	r.c.ready = false;
	source_env_notice(&r.c, 1000);
	CHECK_INT(fk.watches, 1);
	CHECK(r.c.ready);
	CHECK(!r.c.woke);
	CHECK_INT(r.c.watch_at, 1500);
	CHECK_INT(r.c.watch_rest, 1000 + SOURCE_WATCH_REST_MS);
	/* Its own deadline passed: watch() again. */
	source_env_notice(&r.c, 1500);
	CHECK_INT(fk.watches, 2);
	r.c.ctx = NULL;
	rig_down(&r);
}

/* The connector's guard (connector_settings.guard) reaches the source as
 * env.allow_path, with the guard's arg; no guard, or one without a path
 * check, offers none (every local connector: unchanged). */
static const char *guard_saw;

static int guard_path(const void *arg, const char *real_path, char *why, size_t len)
{
	guard_saw = real_path;
	if (strcmp(real_path, (const char *)arg) == 0)
		return 0;
	snprintf(why, len, "outside %s", (const char *)arg);
	return -1;
}

static void test_allow_path(void)
{
	struct source_guard g = {.allow_path = guard_path, .arg = "/var/log/app/a.log"};
	struct source_guard topics_only = {.arg = "x"};
	struct rig r;
	char why[64] = "";

	rig_up(&r, NULL, "p");
	CHECK(r.c.env.allow_path == NULL);
	rig_down(&r);

	rig_up(&r, NULL, "p");
	r.cs.guard = &topics_only;
	source_env_free(&r.c);
	source_env_init(r.h, &r.c);
	CHECK(r.c.env.allow_path == NULL);
	r.cs.guard = &g;
	source_env_free(&r.c);
	source_env_init(r.h, &r.c);
	CHECK(r.c.env.allow_path != NULL);
	if (r.c.env.allow_path != NULL) {
		CHECK_INT(r.c.env.allow_path(&r.c.env, "/var/log/app/a.log", why, sizeof(why)), 0);
		CHECK(r.c.env.allow_path(&r.c.env, "/etc/shadow", why, sizeof(why)) != 0);
		CHECK_STR(guard_saw, "/etc/shadow");
		CHECK_STR(why, "outside /var/log/app/a.log");
	}
	rig_down(&r);
}

/* What stored() lists: every offset stored under the connector's own name
 * (escaped as the keys are), made into a partition this run or not; none
 * of another connector, nor of a name it is a prefix of. */
struct listing {
	char text[1024];
	int n;
};

static void list_one(void *arg, const char *partition_json, const char *offset_json)
{
	struct listing *l = arg;
	size_t used = strlen(l->text);

	snprintf(l->text + used, sizeof(l->text) - used, "%s=%s;", partition_json, offset_json);
	l->n++;
}

static void test_stored(void)
{
	char path[512], err[256] = "";
	struct offsets *o = NULL;
	struct listing l = {"", 0};
	struct rig r;

	snprintf(path, sizeof(path), "%s/offsets-stored", testlib_tmpdir());
	remove(path);
	CHECK_INT(offsets_open_file(path, &o, err, sizeof(err)), 0);
	CHECK_INT(offsets_put(o, "[\"lo\\\"g\",{\"filename\":\"/a\"}]", "{\"position\":1}"), 0);
	CHECK_INT(offsets_put(o, "[\"lo\\\"gs\",{\"filename\":\"/b\"}]", "{\"position\":2}"), 0);
	CHECK_INT(offsets_put(o, "[\"other\",{\"filename\":\"/c\"}]", "{\"position\":3}"), 0);
	CHECK_INT(offsets_put(o, "[\"lo\\\"g\",{\"filename\":\"/d\"}]", "{\"position\":4}"), 0);
	rig_up(&r, NULL, "lo\"g");
	source_env_host_set_offsets(r.h, o);
	CHECK(r.c.env.stored != NULL);
	r.c.env.stored(&r.c.env, list_one, &l);
	CHECK_INT(l.n, 2);
	CHECK_STR(l.text,
	          "{\"filename\":\"/a\"}={\"position\":1};{\"filename\":\"/d\"}={\"position\":4};");
	CHECK_INT(partitions_count(r.parts), 0); /* no handle made */
	rig_down(&r);
	offsets_destroy(o);
	remove(path);
}

int main(void)
{
	test_stored();
	test_state_file();
	test_budget_and_interval();
	test_counters();
	test_mode_and_notice();
	test_allow_path();
	return testlib_done("test_source_env");
}
