/* test_fleet: the device's fleet loop client (src/fleet/fleet.c) over the
 * pipeline's query faked (queryfake.c), the Kafka link faked
 * (fleetlinkfake.c) and a real loop: a record in is one change of the
 * fleet's layer, its done saves the store and sends the outcome; a record
 * read while a change applies waits for it; pass 1 refuses a ${file:...}
 * reference before any change; connector states go out as Connect's status
 * records only when the state epoch moved, and only those that changed; a
 * connector gone is tombstoned; the heartbeat comes at its interval and
 * nothing wakes the loop between two; a fleet opened again over its store
 * applies nothing again and reports no refusal again. */
#include "config/connlayer.h"
#include "control/rest.h"
#include "core/loop.h"
#include "core/query.h"
#include "core/stats.h"
#include "fleet/connect_records.h"
#include "fleet/fleet.h"
#include "fleet/fleet_heartbeat.h"
#include "fleet/fleetconf.h"
#include "fleet/fleetstore.h"
#include "kafka/fleetlink.h"
#include "fleetlinkfake.h"
#include "queryfake.h"
#include "testlib.h"

#include <cjson/cJSON.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPIC "skiff.config.gw-1"
#define TOPIC_ID "topic:" TOPIC /* the fake gives no topic id, as librdkafka 2.0.2 */

#define APP                                                                                        \
	"{\"properties\":{\"connector.class\":\"FileStreamSource\","                               \
	"\"file\":\"/var/log/app/a.log\",\"topic\":\"app\",\"name\":\"app\"}}"
#define DB                                                                                         \
	"{\"properties\":{\"connector.class\":\"FileStreamSource\","                               \
	"\"file\":\"/var/log/app/b.log\",\"topic\":\"db\",\"name\":\"db\"}}"
#define FRESH                                                                                      \
	"{\"properties\":{\"connector.class\":\"FileStreamSource\","                               \
	"\"file\":\"/var/log/app/c.log\",\"topic\":\"c\",\"name\":\"fresh\"}}"
#define SHADOW                                                                                     \
	"{\"properties\":{\"connector.class\":\"FileStreamSource\","                               \
	"\"file\":\"${file:/etc/shadow:x}\",\"topic\":\"x\",\"name\":\"bad\"}}"

static const char *const classes[] = {"FileStreamSource"};
static const char *const files[] = {"/var/log/app/*.log"};
static const char *const topics[] = {"*"};

static struct fleet_conf conf(int64_t interval)
{
	return (struct fleet_conf){
	    .enabled = true,
	    .config_topic = "skiff.config.{device}",
	    .status_topic = "skiff.status.{device}",
	    .config_replication_factor = -1,
	    .status_replication_factor = -1,
	    .status_partitions = 1,
	    .group_topic = "skiff.group.{group}",
	    .heartbeat_interval_ms = interval,
	    .fetch_wait_max_ms = 55000,
	    .allow = {.connector_classes = {1, classes, "FileStreamSource"},
	              .files = {1, files, "/var/log/app/*.log"},
	              .topics = {1, topics, "*"}},
	};
}

/* A fleet over a fake query and link, beside dir/offsets.json. */
struct rig {
	struct loop *loop;
	struct stats *stats;
	struct queryfake q;
	struct fleet_conf conf;
	char offsets[640];
	struct fleet *fleet;
	struct fleetlinkfake *link;
	struct loop_timer *kick;
	size_t seen; /* status records looked at so far */
};

static void on_kick(struct loop *l, struct loop_timer *t, void *arg)
{
	(void)l;
	(void)t;
	(void)arg;
}

static void rig_open(struct rig *r, const char *dir, int64_t interval)
{
	struct fleet_params p;
	char err[512] = "";
	int rc;

	memset(r, 0, sizeof(*r));
	CHECK(loop_new(&r->loop) == 0);
	CHECK(stats_new(&r->stats) == 0);
	queryfake_init(&r->q, r->stats);
	r->conf = conf(interval);
	snprintf(r->offsets, sizeof(r->offsets), "%s/offsets.json", dir);
	p = (struct fleet_params){.loop = r->loop,
	                          .query = &r->q.q,
	                          .stats = r->stats,
	                          .conf = &r->conf,
	                          .device = "gw-1",
	                          .offsets_file = r->offsets,
	                          .link = &fleetlinkfake_ops};
	rc = fleet_open(&p, &r->fleet, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "fleet_open: %s\n", err);
	CHECK_INT(rc, 0);
	r->link = fleetlinkfake_last();
	CHECK(loop_timer_add(r->loop, -1, 0, on_kick, NULL, &r->kick) == 0);
}

static void rig_close(struct rig *r)
{
	fleet_close(r->fleet);
	loop_destroy(r->loop);
	stats_destroy(r->stats);
}

/* Turns the loop until the link has nothing more to hand out, then once
 * more (the turn hook); a timer of the test's keeps each turn short. */
static void pump(struct rig *r)
{
	char err[256];
	int fd = fleetlinkfake_ops.fd(r->link);

	for (int i = 0; i < 100; i++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		loop_timer_set(r->kick, loop_now_ms(), 0);
		CHECK(loop_once(r->loop, err, sizeof(err)) == 0);
		if (poll(&pfd, 1, 0) == 0)
			break;
	}
	loop_timer_set(r->kick, loop_now_ms(), 0);
	CHECK(loop_once(r->loop, err, sizeof(err)) == 0);
}

/* Acknowledges every status record produced, so the link sends what it
 * held behind them. */
static void deliver_all(struct rig *r)
{
	for (size_t i = 0; i < fleetlinkfake_count(r->link); i++)
		if (!fleetlinkfake_sent(r->link, i)->delivered)
			fleetlinkfake_deliver(r->link, i, 0, NULL);
	pump(r);
}

/* The status records produced since the last call: how many, and how many
 * of them have key prefix. */
static size_t news(struct rig *r, const char *prefix, size_t *matching)
{
	size_t n = fleetlinkfake_count(r->link), m = 0, fresh = n - r->seen;

	for (size_t i = r->seen; i < n; i++)
		if (strncmp(fleetlinkfake_sent(r->link, i)->key, prefix, strlen(prefix)) == 0)
			m++;
	r->seen = n;
	if (matching != NULL)
		*matching = m;
	return fresh;
}

/* The last record produced with key, or NULL. */
static const struct fleetlinkfake_sent *last_of(struct rig *r, const char *key)
{
	const struct fleetlinkfake_sent *found = NULL;

	for (size_t i = 0; i < fleetlinkfake_count(r->link); i++)
		if (strcmp(fleetlinkfake_sent(r->link, i)->key, key) == 0)
			found = fleetlinkfake_sent(r->link, i);
	return found;
}

static void check_outcome(struct rig *r, const char *name, enum fleet_outcome_kind kind,
                          int64_t offset)
{
	char key[128], err[256];
	const struct fleetlinkfake_sent *s;
	struct fleet_outcome o;

	deliver_all(r); /* the link holds a key's next record until the last is acked */
	snprintf(key, sizeof(key), "skiff-outcome-%s", name);
	s = last_of(r, key);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(s->value != NULL);
	CHECK_INT(fleet_outcome_decode(s->value, s->vlen, &o, err, sizeof(err)), 0);
	CHECK_INT(o.outcome, kind);
	CHECK_INT(o.offset, offset);
	CHECK_STR(o.topic, TOPIC);
	CHECK_STR(o.worker_id, "gw-1");
	CHECK_INT(o.record, CONNECT_CONNECTOR);
	CHECK(kind == FLEET_OUTCOME_APPLIED ? o.reason == NULL : o.reason != NULL);
	fleet_outcome_clear(&o);
}

/* What the worker does once a fleet change is applied: the fleet's layer
 * keeps the configuration. */
static void layer_put(const char *offsets, const char *name, const char *value)
{
	struct connlayer *l = NULL, *with = NULL;
	cJSON *props = NULL;
	char err[256];

	CHECK(connect_config_decode(value, strlen(value), &props, err, sizeof(err)) == 0);
	CHECK(connlayer_load(CONNLAYER_FLEET, offsets, &l, err, sizeof(err)) == 0);
	CHECK(connlayer_with(l, name, props, false, &with) == 0);
	CHECK(connlayer_save(with, err, sizeof(err)) == 0);
	connlayer_destroy(with);
	connlayer_destroy(l);
	cJSON_Delete(props);
}

/* The done of the change the fake took, as the worker gives it. */
static void done(struct rig *r, int rc)
{
	CHECK(r->q.change.done != NULL);
	r->q.change.done(r->q.change.arg, rc, rc == 0 ? "" : "refused by the test");
	pump(r);
}

static void test_apply_one_at_a_time(const char *dir)
{
	struct rig r;
	struct fleetstore *fs = NULL;
	struct fleetstore_connector c;
	char err[512];
	size_t outcomes;
	int32_t gen;

	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 1);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_end(r.link, TOPIC, 1);
	pump(&r);
	/* One change of the fleet's layer, vetted by pass 2. */
	CHECK_INT(r.q.changes, 1);
	CHECK_STR(r.q.change_name, "app");
	CHECK_INT(r.q.change.layer, CONNLAYER_FLEET);
	CHECK_INT(r.q.change.op, QUERY_CHANGE_PUT);
	CHECK(r.q.change.vet != NULL);
	CHECK(fleet_busy(r.fleet));
	gen = 1; /* the start counted */

	/* A second record while the first applies: it waits. */
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-db", DB);
	pump(&r);
	CHECK_INT(r.q.changes, 1);
	news(&r, FLEET_OUTCOME_PREFIX, &outcomes);
	CHECK_INT(outcomes, 0);

	/* done(0): the store saved, APPLIED sent, then the next change. */
	layer_put(r.offsets, "app", APP);
	done(&r, 0);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	CHECK(fs != NULL && fleetstore_connector_find(fs, "app", &c));
	if (fs != NULL && fleetstore_connector_find(fs, "app", &c)) {
		CHECK_STR(c.config_from.topic, TOPIC);
		CHECK_STR(c.config_from.topic_id, TOPIC_ID);
		CHECK_INT(c.config_from.offset, 0);
		CHECK_INT(fleetstore_generation(fs), gen + 1);
	}
	fleetstore_destroy(fs);
	check_outcome(&r, "app", FLEET_OUTCOME_APPLIED, 0);
	CHECK_INT(r.q.changes, 2);
	CHECK_STR(r.q.change_name, "db");
	layer_put(r.offsets, "db", DB);
	done(&r, 0);
	check_outcome(&r, "db", FLEET_OUTCOME_APPLIED, 1);
	CHECK(!fleet_busy(r.fleet));
	CHECK_INT(r.q.changes, 2);
	rig_close(&r);
}

static void test_refused_by_pass_1(const char *dir)
{
	struct rig r;
	struct fleetstore *fs = NULL;
	char err[512];
	struct fleet_counts n;

	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 3);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-db", DB);
	fleetlinkfake_record(r.link, TOPIC, 2, "connector-bad", SHADOW);
	fleetlinkfake_end(r.link, TOPIC, 3);
	pump(&r);
	/* Reopened over the store of the test before: app and db are applied
	 * as they are, nothing changes; bad is refused before any change. */
	CHECK_INT(r.q.changes, 0);
	check_outcome(&r, "bad", FLEET_OUTCOME_REFUSED, 2);
	CHECK(last_of(&r, "skiff-outcome-app") == NULL);
	CHECK(last_of(&r, "skiff-outcome-db") == NULL);
	fleet_counts(r.fleet, &n);
	CHECK_INT(n.refused, 1);
	CHECK_INT(n.applied, 0);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	CHECK(fs != NULL && fleetstore_refused(fs, TOPIC_ID, 2));
	fleetstore_destroy(fs);
	rig_close(&r);
}

static void test_restart_applies_nothing(const char *dir)
{
	struct rig r;
	struct fleetstore *fs = NULL;
	char err[512];
	size_t outcomes;
	int32_t before;

	rig_open(&r, dir, 3600000);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	before = fs != NULL ? fleetstore_generation(fs) : -1;
	fleetstore_destroy(fs);
	fleetlinkfake_begin(r.link, TOPIC, 3);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-db", DB);
	fleetlinkfake_record(r.link, TOPIC, 2, "connector-bad", SHADOW);
	fleetlinkfake_end(r.link, TOPIC, 3);
	pump(&r);
	CHECK_INT(r.q.changes, 0);
	news(&r, FLEET_OUTCOME_PREFIX, &outcomes);
	CHECK_INT(outcomes, 0);
	CHECK(!fleet_busy(r.fleet));
	CHECK(before > 2);
	rig_close(&r);
}

/* The config topic deleted and recreated while the device was away
 * (librdkafka 2.0.2 gives no topic id): its end below the offset applied
 * up to says so. What the old topic gave is kept and REPORTed, not removed
 * by its absence; a new record at the offset where the old topic had a
 * refused one is applied, not skipped as already refused. */
static void test_recreated(const char *dir)
{
	struct rig r;
	struct fleetstore *fs = NULL;
	struct fleetstore_connector c;
	const struct fleetlinkfake_sent *o;
	struct fleet_outcome out;
	struct fleet_counts n;
	char err[512];

	/* Over the store of the tests before: app and db applied, bad refused
	 * at offset 2; the topic now read to 5. */
	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 5);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-db", DB);
	fleetlinkfake_record(r.link, TOPIC, 2, "connector-bad", SHADOW);
	fleetlinkfake_record(r.link, TOPIC, 3, "connector-gone", NULL);
	fleetlinkfake_record(r.link, TOPIC, 4, "connector-gone", NULL);
	fleetlinkfake_end(r.link, TOPIC, 5);
	pump(&r);
	CHECK_INT(r.q.changes, 0);
	rig_close(&r);

	/* Recreated: three records, the third where bad was. */
	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 3);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-gone", NULL);
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-gone", NULL);
	fleetlinkfake_record(r.link, TOPIC, 2, "connector-fresh", FRESH);
	fleetlinkfake_end(r.link, TOPIC, 3);
	pump(&r);
	CHECK_INT(r.q.changes, 1);
	CHECK_STR(r.q.change_name, "fresh");
	CHECK_INT(r.q.change.op, QUERY_CHANGE_PUT);
	layer_put(r.offsets, "fresh", FRESH);
	done(&r, 0);
	pump(&r);
	CHECK_INT(r.q.changes, 1); /* app and db not removed */
	fleet_counts(r.fleet, &n);
	CHECK_INT(n.recreated, 1);
	deliver_all(&r);
	o = last_of(&r, "skiff-outcome-app");
	CHECK(o != NULL && o->value != NULL);
	if (o != NULL && o->value != NULL) {
		CHECK(fleet_outcome_decode(o->value, o->vlen, &out, err, sizeof(err)) == 0);
		CHECK(out.reason != NULL && strstr(out.reason, "recreated") != NULL);
		fleet_outcome_clear(&out);
	}
	CHECK(last_of(&r, "skiff-outcome-db") != NULL);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	CHECK(fs != NULL && fleetstore_connector_find(fs, "app", &c));
	CHECK(fs != NULL && fleetstore_connector_find(fs, "db", &c));
	CHECK(fs != NULL && fleetstore_connector_find(fs, "fresh", &c));
	fleetstore_destroy(fs);
	rig_close(&r);

	/* Opened again over what it saved: nothing new to say. */
	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 3);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-gone", NULL);
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-gone", NULL);
	fleetlinkfake_record(r.link, TOPIC, 2, "connector-fresh", FRESH);
	fleetlinkfake_end(r.link, TOPIC, 3);
	pump(&r);
	CHECK_INT(r.q.changes, 0);
	rig_close(&r);
}

/* A tombstone removes through the layer (DELETE), the store forgets it; a
 * change the layer refuses (done with an error) is REFUSED and remembered;
 * a change the query cannot take yet (another one applies) is asked again
 * at a later turn; a restart read after the start is a command. */
static void test_remove_refuse_retry_restart(const char *dir)
{
	struct rig r;
	struct fleetstore *fs = NULL;
	struct fleetstore_connector c;
	char err[512];
	int asked;

	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 1);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_end(r.link, TOPIC, 1);
	pump(&r);
	CHECK_INT(r.q.changes, 1);
	layer_put(r.offsets, "app", APP);
	done(&r, 0);
	queryfake_conn(&r.q, "app");

	/* The query is busy with another change: asked again next turn. */
	r.q.change_rc = REST_ERR_STATE;
	fleetlinkfake_record(r.link, TOPIC, 1, "connector-db", DB);
	pump(&r);
	CHECK(r.q.changes >= 2); /* asked at each turn */
	CHECK_STR(r.q.change_name, "db");
	CHECK(!fleet_busy(r.fleet));
	r.q.change_rc = 0;
	pump(&r);
	CHECK_STR(r.q.change_name, "db");
	CHECK(fleet_busy(r.fleet));
	asked = r.q.changes;
	/* The layer refuses it (pass 2, or the configuration does not load). */
	done(&r, REST_ERR_ARG);
	check_outcome(&r, "db", FLEET_OUTCOME_REFUSED, 1);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	CHECK(fs != NULL && fleetstore_refused(fs, TOPIC_ID, 1));
	CHECK(fs != NULL && !fleetstore_connector_find(fs, "db", &c));
	fleetstore_destroy(fs);
	fs = NULL;

	/* A restart request read after the start: the command, APPLIED. */
	fleetlinkfake_record(r.link, TOPIC, 2, "restart-connector-app",
	                     "{\"include-tasks\":false,\"only-failed\":false}");
	pump(&r);
	CHECK_INT(r.q.command_cmd, QUERY_RESTART);
	CHECK_INT(r.q.command_conn, 0);
	CHECK_INT(r.q.changes, asked);

	/* A tombstone: a DELETE of the fleet's layer, then the store forgets. */
	fleetlinkfake_record(r.link, TOPIC, 3, "connector-app", NULL);
	pump(&r);
	CHECK_INT(r.q.changes, asked + 1);
	CHECK_STR(r.q.change_name, "app");
	CHECK_INT(r.q.change.op, QUERY_CHANGE_DELETE);
	done(&r, 0);
	check_outcome(&r, "app", FLEET_OUTCOME_APPLIED, 3);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	CHECK(fs != NULL && !fleetstore_connector_find(fs, "app", &c));
	fleetstore_destroy(fs);

	/* A restart of a connector of the device's own files: refused without
	 * fleet.allow.replace.local, no command given. */
	queryfake_conn(&r.q, "local");
	r.q.command_cmd = -1;
	fleetlinkfake_record(r.link, TOPIC, 4, "restart-connector-local",
	                     "{\"include-tasks\":false,\"only-failed\":false}");
	pump(&r);
	CHECK_INT(r.q.command_cmd, -1);
	deliver_all(&r);
	{
		const struct fleetlinkfake_sent *o = last_of(&r, "skiff-outcome-local");
		struct fleet_outcome out;

		CHECK(o != NULL && o->value != NULL);
		if (o != NULL && o->value != NULL) {
			CHECK(fleet_outcome_decode(o->value, o->vlen, &out, err, sizeof(err)) == 0);
			CHECK_INT(out.outcome, FLEET_OUTCOME_REFUSED);
			CHECK_INT(out.record, CONNECT_RESTART);
			CHECK(out.reason != NULL &&
			      strstr(out.reason, "fleet.allow.replace.local") != NULL);
			fleet_outcome_clear(&out);
		}
	}
	rig_close(&r);
}

static void test_states(const char *dir)
{
	struct rig r;
	size_t n, matching;
	const struct fleetlinkfake_sent *s;
	struct connect_status st;
	struct fleetstore *fs = NULL;
	char err[256];
	size_t app, db;

	rig_open(&r, dir, 3600000);
	app = queryfake_conn(&r.q, "app");
	db = queryfake_conn(&r.q, "db");
	(void)app;
	r.q.epoch = 1;
	pump(&r);
	n = news(&r, "status-", &matching);
	CHECK_INT(n, 4);
	CHECK_INT(matching, 4);
	s = last_of(&r, "status-connector-app");
	CHECK(s != NULL && s->value != NULL);
	if (s != NULL && s->value != NULL) {
		CHECK(connect_status_decode(s->value, s->vlen, &st, err, sizeof(err)) == 0);
		CHECK_INT(st.state, CONNECT_STATE_RUNNING);
		CHECK_STR(st.worker_id, "gw-1");
		CHECK(st.generation >= 1);
		connect_status_clear(&st);
	}
	CHECK(last_of(&r, "status-task-app-0") != NULL);
	deliver_all(&r);
	news(&r, "", NULL);

	/* Nothing moved: the epoch is the same, nothing is sent. */
	pump(&r);
	CHECK_INT(news(&r, "", NULL), 0);

	/* db pauses: only db's keys. */
	r.q.conns[db].state = QUERY_PAUSED;
	r.q.epoch = 2;
	pump(&r);
	n = news(&r, "status-", &matching);
	CHECK_INT(n, 2);
	s = last_of(&r, "status-connector-db");
	CHECK(s != NULL && s->value != NULL);
	if (s != NULL && s->value != NULL) {
		CHECK(connect_status_decode(s->value, s->vlen, &st, err, sizeof(err)) == 0);
		CHECK_INT(st.state, CONNECT_STATE_PAUSED);
		connect_status_clear(&st);
	}
	CHECK(last_of(&r, "status-task-db-0") != NULL);
	deliver_all(&r);
	news(&r, "", NULL);

	/* db fails with a trace: a change of trace alone is sent too. */
	r.q.conns[db].state = QUERY_FAILED;
	r.q.conns[db].trace = "boom";
	r.q.epoch = 3;
	pump(&r);
	CHECK_INT(news(&r, "status-", NULL), 2);
	deliver_all(&r);
	news(&r, "", NULL);
	r.q.conns[db].trace = "boom again";
	r.q.epoch = 4;
	pump(&r);
	CHECK_INT(news(&r, "status-", NULL), 2);
	deliver_all(&r);
	news(&r, "", NULL);

	/* db is removed: tombstones for its two keys, forgotten by the store. */
	r.q.nconns = 1;
	r.q.epoch = 5;
	pump(&r);
	CHECK_INT(news(&r, "status-", NULL), 2);
	s = last_of(&r, "status-connector-db");
	CHECK(s != NULL && s->value == NULL);
	s = last_of(&r, "status-task-db-0");
	CHECK(s != NULL && s->value == NULL);
	CHECK(fleetstore_load(r.offsets, &fs, err, sizeof(err)) == 0);
	if (fs != NULL) {
		bool db_kept = false, app_kept = false;

		for (size_t i = 0; i < fleetstore_status_key_count(fs); i++) {
			db_kept = db_kept || strstr(fleetstore_status_key(fs, i), "-db") != NULL;
			app_kept = app_kept || strstr(fleetstore_status_key(fs, i), "-app") != NULL;
		}
		CHECK(!db_kept);
		CHECK(app_kept);
	}
	fleetstore_destroy(fs);
	rig_close(&r);

	/* Opened again without app: its keys, kept in the store, are
	 * tombstoned at the first turn. */
	rig_open(&r, dir, 3600000);
	pump(&r);
	s = last_of(&r, "status-connector-app");
	CHECK(s != NULL && s->value == NULL);
	CHECK(last_of(&r, "status-task-app-0") != NULL);
	rig_close(&r);
}

/* What the heartbeat reads: the registry's loss counters and resident
 * memory by name (summed over connectors), the sources' backlog in bytes
 * (rows are not bytes), the producer's last acknowledgement. */
static void feed_stats(struct rig *r)
{
	static const struct stats_desc lines = {"lines_unread_lost", STATS_COUNTER, "lines", 0};
	static const struct stats_desc bytes = {"bytes_unread_lost", STATS_COUNTER, "bytes", 0};
	static const struct stats_desc gone = {"files_gone_unread", STATS_COUNTER, "files", 0};
	static const struct stats_desc rss = {"process_resident_memory", STATS_GAUGE, "rss", 0};
	struct stats_labels a = {.connector = "app"}, b = {.connector = "db"};
	uint64_t *h;
	size_t app = queryfake_conn(&r->q, "app"), db = queryfake_conn(&r->q, "db"), part;

	CHECK(stats_register(r->stats, &lines, &a, &h, NULL) == 0);
	*h = 7;
	CHECK(stats_register(r->stats, &lines, &b, &h, NULL) == 0);
	*h = 5;
	CHECK(stats_register(r->stats, &bytes, &a, &h, NULL) == 0);
	*h = 700;
	CHECK(stats_register(r->stats, &gone, &b, &h, NULL) == 0);
	*h = 2;
	CHECK(stats_register(r->stats, &rss, NULL, &h, NULL) == 0);
	*h = 8192 * 1024;
	part = queryfake_part(&r->q, app, "[\"app\",{}]");
	r->q.backlog_known[part] = true;
	r->q.backlog_unit[part] = SOURCE_UNIT_BYTES;
	r->q.backlog[part] = 4096;
	part = queryfake_part(&r->q, db, "[\"db\",{}]");
	r->q.backlog_known[part] = true;
	r->q.backlog_unit[part] = SOURCE_UNIT_ROWS;
	r->q.backlog[part] = 99;
	r->q.producer.last_ack_ms = loop_now_ms();
}

static void test_heartbeat_idle(const char *dir)
{
	struct rig r;
	struct fleet_counts n;
	char err[256];
	const struct fleetlinkfake_sent *s;
	struct fleet_heartbeat hb;

	rig_open(&r, dir, 1000);
	feed_stats(&r);
	/* Each turn of an idle loop is a heartbeat: nothing wakes it between. */
	for (uint64_t turn = 1; turn <= 3; turn++) {
		CHECK(loop_once(r.loop, err, sizeof(err)) == 0);
		fleet_counts(r.fleet, &n);
		CHECK_INT(n.heartbeats, turn);
		deliver_all(&r); /* not idle: acknowledges the heartbeat */
		fleet_counts(r.fleet, &n);
		CHECK_INT(n.heartbeats, turn);
	}
	s = last_of(&r, FLEET_HEARTBEAT_KEY);
	CHECK(s != NULL && s->value != NULL);
	if (s != NULL && s->value != NULL) {
		CHECK(fleet_heartbeat_decode(s->value, s->vlen, &hb, err, sizeof(err)) == 0);
		CHECK_STR(hb.device, "gw-1");
		CHECK_STR(hb.health, "ok");
		CHECK_INT(hb.interval_ms, 1000);
		CHECK_INT(hb.seq, 3);
		CHECK_INT(hb.nconnectors, 2);
		CHECK_INT(hb.lost_records, 7 + 5);
		CHECK_INT(hb.lost_bytes, 700);
		CHECK_INT(hb.lost_files, 2);
		CHECK_INT(hb.backlog_bytes, 4096);
		CHECK_INT(hb.rss_kb, 8192);
		CHECK(hb.last_ack_ms > 0);
		fleet_heartbeat_clear(&hb);
	}

	/* A connector fails: the next heartbeat says so, with the reason. */
	r.q.conns[1].state = QUERY_FAILED;
	r.q.conns[1].trace = "boom";
	CHECK(loop_once(r.loop, err, sizeof(err)) == 0);
	deliver_all(&r);
	s = last_of(&r, FLEET_HEARTBEAT_KEY);
	CHECK(s != NULL && s->value != NULL);
	if (s != NULL && s->value != NULL) {
		CHECK(fleet_heartbeat_decode(s->value, s->vlen, &hb, err, sizeof(err)) == 0);
		CHECK_INT(hb.seq, 4);
		CHECK(strcmp(hb.health, "ok") != 0);
		CHECK(hb.reason != NULL && strstr(hb.reason, "db") != NULL);
		fleet_heartbeat_clear(&hb);
	}
	rig_close(&r);
}

static void test_bad_device_and_store(const char *dir)
{
	struct loop *loop = NULL;
	struct queryfake q;
	struct fleet_conf c = conf(1000);
	struct fleet *f = NULL;
	char offsets[640], path[700], err[512];
	struct fleet_params p = {.query = &q.q, .conf = &c, .link = &fleetlinkfake_ops};

	CHECK(loop_new(&loop) == 0);
	queryfake_init(&q, NULL);
	p.loop = loop;
	p.device = "gw_1";
	CHECK_INT(fleet_open(&p, &f, err, sizeof(err)), FLEET_ERR_CONFIG);
	CHECK(strstr(err, "gw_1") != NULL);
	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, FLEETSTORE_FILE);
	testlib_write_file(path, "garbage\n", 8);
	p.device = "gw-1";
	p.offsets_file = offsets;
	CHECK_INT(fleet_open(&p, &f, err, sizeof(err)), FLEET_ERR_STORE);
	CHECK(strstr(err, FLEETSTORE_FILE) != NULL);
	CHECK(f == NULL);
	loop_destroy(loop);
}

/* Closed while a change applies: the change's done, which the reload
 * always gives, frees the fleet and does nothing else (asan sees a use
 * after free or a leak otherwise). */
static void test_close_while_busy(const char *dir)
{
	struct rig r;
	query_done_fn fn;
	void *arg;

	rig_open(&r, dir, 3600000);
	fleetlinkfake_begin(r.link, TOPIC, 1);
	fleetlinkfake_record(r.link, TOPIC, 0, "connector-app", APP);
	fleetlinkfake_end(r.link, TOPIC, 1);
	pump(&r);
	CHECK(fleet_busy(r.fleet));
	fn = r.q.change.done;
	arg = r.q.change.arg;
	rig_close(&r);
	CHECK(fn != NULL);
	if (fn != NULL)
		fn(arg, 0, "");
}

/* The link borrows what its conf points to (kafka/fleetlink.h) and reads
 * the topics again when the snapshot reader gives way to the long poll:
 * they live as long as the link (a real device: use after free at the
 * first snapshot's end). */
static void test_link_conf_outlives_open(const char *dir)
{
	struct rig r;
	const struct fleetlink_conf *c;

	rig_open(&r, dir, 3600000);
	c = fleetlinkfake_conf(r.link);
	CHECK_INT((long long)c->ntopics, 1);
	CHECK_STR(c->topics[0], TOPIC);
	CHECK_STR(c->status_topic, "skiff.status.gw-1");
	rig_close(&r);
}

int main(void)
{
	char dir[512], other[512], bad[512], more[512];

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(other, sizeof(other), "%s", testlib_tmpdir());
	snprintf(bad, sizeof(bad), "%s", testlib_tmpdir());
	snprintf(more, sizeof(more), "%s", testlib_tmpdir());
	test_apply_one_at_a_time(dir);
	test_refused_by_pass_1(dir);
	test_restart_applies_nothing(dir);
	test_recreated(dir);
	test_remove_refuse_retry_restart(more);
	testlib_rmtree(more);
	snprintf(more, sizeof(more), "%s", testlib_tmpdir());
	test_states(other);
	test_heartbeat_idle(other);
	test_bad_device_and_store(bad);
	test_close_while_busy(more);
	test_link_conf_outlives_open(more);
	testlib_rmtree(dir);
	testlib_rmtree(other);
	testlib_rmtree(bad);
	testlib_rmtree(more);
	return testlib_done("test_fleet");
}
