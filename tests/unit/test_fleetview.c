/* fleetview: the devices of `skiff fleet status` from their status topics'
 * records, encoded as a device encodes them (fleet_heartbeat, Connect's
 * statuses): the table and the JSON, a stale device (heartbeat older than
 * twice its interval), a tombstone removing a connector's status, the last
 * record of a key winning, records that do not decode skipped and counted,
 * topics of no device ignored, and the outcome matching `--wait` relies on
 * (its topic, an offset at or past the one written). */
#include "fleet/fleetview.h"
#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define NOW 1796481706349LL

static void feed(struct fleetview *v, const char *topic, const char *key, const char *value)
{
	CHECK_INT(fleetview_feed(v, topic, key, strlen(key), value, value ? strlen(value) : 0), 0);
}

static void heartbeat(struct fleetview *v, const char *device, int64_t age_ms, const char *health,
                      const char *const *conns, size_t nconns, const char *const *groups,
                      size_t ngroups)
{
	struct fleet_heartbeat hb = {.device = device,
	                             .version = "0.28.0",
	                             .at_ms = NOW - age_ms,
	                             .seq = 7,
	                             .interval_ms = 60000,
	                             .health = health,
	                             .last_ack_ms = NOW - age_ms,
	                             .lost_records = 3,
	                             .backlog_bytes = 2048,
	                             .rss_kb = 8428,
	                             .connectors = conns,
	                             .nconnectors = nconns,
	                             .groups = groups,
	                             .ngroups = ngroups};
	char topic[256];
	struct buf b;

	buf_init(&b, 4096);
	CHECK_INT(fleet_heartbeat_encode(&hb, &b), 0);
	snprintf(topic, sizeof(topic), "skiff.status.%s", device);
	feed(v, topic, FLEET_HEARTBEAT_KEY, buf_cstr(&b));
	buf_free(&b);
}

static void status(struct fleetview *v, const char *device, const char *conn, enum connect_state st)
{
	struct connect_status s = {.state = st, .worker_id = (char *)device, .generation = 1};
	char topic[256], key[256];
	struct buf b;

	buf_init(&b, 4096);
	CHECK_INT(connect_status_encode(&s, &b), 0);
	snprintf(topic, sizeof(topic), "skiff.status.%s", device);
	snprintf(key, sizeof(key), "status-connector-%s", conn);
	feed(v, topic, key, buf_cstr(&b));
	buf_free(&b);
}

static void outcome(struct fleetview *v, const char *device, const char *conn, const char *topic,
                    int64_t offset, enum fleet_outcome_kind k, const char *reason)
{
	struct fleet_outcome o = {.topic = topic,
	                          .offset = offset,
	                          .record = CONNECT_CONNECTOR,
	                          .outcome = k,
	                          .reason = reason,
	                          .worker_id = device,
	                          .generation = 2,
	                          .at_ms = NOW};
	char st[256];
	struct buf b, key;

	buf_init(&b, 4096);
	buf_init(&key, 4096);
	CHECK_INT(fleet_outcome_encode(&o, &b), 0);
	CHECK_INT(fleet_outcome_key(conn, &key), 0);
	snprintf(st, sizeof(st), "skiff.status.%s", device);
	feed(v, st, buf_cstr(&key), buf_cstr(&b));
	buf_free(&b);
	buf_free(&key);
}

static struct fleetview *three(void)
{
	static const char *const c2[] = {"app", "db"}, *const c1[] = {"app"};
	static const char *const berlin[] = {"site-berlin"};
	struct fleetview *v = NULL;

	CHECK_INT(fleetview_new("skiff.status.{device}", &v), 0);
	heartbeat(v, "gw-2", 5000, "ok", c2, 2, berlin, 1);
	status(v, "gw-2", "app", CONNECT_STATE_RUNNING);
	status(v, "gw-2", "db", CONNECT_STATE_RUNNING);
	status(v, "gw-2", "db", CONNECT_STATE_FAILED); /* the last one wins */
	heartbeat(v, "gw-1", 1000, "ok", c1, 1, berlin, 1);
	status(v, "gw-1", "app", CONNECT_STATE_RUNNING);
	status(v, "gw-1", "old", CONNECT_STATE_RUNNING);
	feed(v, "skiff.status.gw-1", "status-connector-old", NULL); /* removed */
	/* 3 min old, interval 1 min: stale */
	heartbeat(v, "gw-3", 180000, "ok", c1, 1, NULL, 0);
	feed(v, "skiff.status.gw-3", "skiff-heartbeat", "{not json");
	feed(v, "other.topic", "skiff-heartbeat", "{}"); /* no device's */
	return v;
}

static void table(void)
{
	struct fleetview *v = three();
	struct buf b;

	buf_init(&b, 1 << 16);
	CHECK_INT(fleetview_table(v, NULL, NOW, &b), 0);
	CHECK_STR(buf_cstr(&b),
	          "DEVICE  HEALTH  LAST-SEEN  VERSION  CONNECTORS     BACKLOG  LOST  RSS\n"
	          "gw-1    ok      1s ago     0.28.0   1              2.0 KB   3     8.2 MB\n"
	          "gw-2    ok      5s ago     0.28.0   2 (db FAILED)  2.0 KB   3     8.2 MB\n"
	          "gw-3    stale   3m ago     0.28.0   1              2.0 KB   3     8.2 MB\n");
	CHECK_INT((int)fleetview_skipped(v), 1);
	buf_reset(&b);
	struct fleetview_filter g = {.group = "site-berlin"};
	CHECK_INT(fleetview_table(v, &g, NOW, &b), 0);
	CHECK(strstr(buf_cstr(&b), "gw-1") != NULL && strstr(buf_cstr(&b), "gw-2") != NULL &&
	      strstr(buf_cstr(&b), "gw-3") == NULL);
	buf_reset(&b);
	struct fleetview_filter d = {.device = "gw-3"};
	CHECK_INT(fleetview_table(v, &d, NOW, &b), 0);
	CHECK(strstr(buf_cstr(&b), "gw-3") != NULL && strstr(buf_cstr(&b), "gw-1") == NULL);
	buf_free(&b);
	fleetview_destroy(v);
}

static void json(void)
{
	struct fleetview *v = three();
	struct fleetview_filter d = {.device = "gw-2"};
	struct buf b;

	outcome(v, "gw-2", "app", "skiff.config.gw-2", 4, FLEET_OUTCOME_REFUSED,
	        "file /etc/shadow");
	buf_init(&b, 1 << 16);
	CHECK_INT(fleetview_json(v, &d, NOW, &b), 0);
	CHECK_STR(buf_cstr(&b),
	          "{\"devices\":[{\"device\":\"gw-2\",\"health\":\"ok\",\"stale\":false,"
	          "\"reason\":null,\"last_seen_ms\":1796481701349,\"age_ms\":5000,"
	          "\"version\":\"0.28.0\",\"interval_ms\":60000,\"seq\":7,"
	          "\"groups\":[\"site-berlin\"],\"backlog_bytes\":2048,"
	          "\"lost\":{\"records\":3,\"bytes\":0,\"files\":0},\"rss_kb\":8428,"
	          "\"connectors\":[{\"name\":\"app\",\"state\":\"RUNNING\"},"
	          "{\"name\":\"db\",\"state\":\"FAILED\"}],"
	          "\"outcomes\":[{\"name\":\"app\",\"topic\":\"skiff.config.gw-2\",\"offset\":4,"
	          "\"record\":\"connector\",\"outcome\":\"REFUSED\","
	          "\"reason\":\"file /etc/shadow\",\"at_ms\":1796481706349}]}],\"skipped\":1}\n");
	buf_reset(&b);
	struct fleetview_filter s = {.device = "gw-3"};
	CHECK_INT(fleetview_json(v, &s, NOW, &b), 0);
	CHECK(strstr(buf_cstr(&b), "\"health\":\"stale\",\"stale\":true") != NULL);
	buf_free(&b);
	fleetview_destroy(v);
}

static void answers(void)
{
	struct fleetview *v = three();
	const char *why;

	CHECK_INT(fleetview_answer(v, "gw-1", "app", "skiff.config.gw-1", 5, &why),
	          FLEETVIEW_NO_ANSWER);
	outcome(v, "gw-1", "app", "skiff.config.gw-1", 4, FLEET_OUTCOME_APPLIED, NULL);
	/* an older record's answer is no answer to offset 5 */
	CHECK_INT(fleetview_answer(v, "gw-1", "app", "skiff.config.gw-1", 5, &why),
	          FLEETVIEW_NO_ANSWER);
	outcome(v, "gw-1", "app", "skiff.config.gw-1", 6, FLEET_OUTCOME_APPLIED, NULL);
	CHECK_INT(fleetview_answer(v, "gw-1", "app", "skiff.config.gw-1", 5, &why),
	          FLEETVIEW_APPLIED);
	/* another topic's offset says nothing of this one */
	CHECK_INT(fleetview_answer(v, "gw-1", "app", "skiff.config.group.site-berlin", 5, &why),
	          FLEETVIEW_NO_ANSWER);
	CHECK_INT(fleetview_answer(v, "gw-1", "db", "skiff.config.gw-1", 5, &why),
	          FLEETVIEW_NO_ANSWER);
	outcome(v, "gw-2", "app", "skiff.config.group.site-berlin", 9, FLEET_OUTCOME_REFUSED,
	        "class not allowed");
	CHECK_INT(fleetview_answer(v, "gw-2", "app", "skiff.config.group.site-berlin", 9, &why),
	          FLEETVIEW_REFUSED);
	CHECK_STR(why, "class not allowed");
	CHECK_INT(fleetview_answer(v, "gw-9", "app", "skiff.config.gw-9", 0, &why),
	          FLEETVIEW_NO_ANSWER);
	CHECK(fleetview_last_seen(v, "gw-1") == NOW - 1000);
	CHECK(fleetview_last_seen(v, "gw-9") == -1);
	fleetview_destroy(v);
}

static void names(void)
{
	struct fleetview *v = NULL;
	char dev[256];

	CHECK_INT(fleetview_new("skiff.status", &v), FLEETVIEW_ERR_ARG);
	CHECK_INT(fleetview_new("st.{device}.x", &v), 0);
	CHECK(fleetview_topic_device(v, "st.gw-1.x", dev, sizeof(dev)));
	CHECK_STR(dev, "gw-1");
	CHECK(!fleetview_topic_device(v, "st.gw_1.x", dev, sizeof(dev)));
	CHECK(!fleetview_topic_device(v, "st..x", dev, sizeof(dev)));
	CHECK(!fleetview_topic_device(v, "st.gw-1.y", dev, sizeof(dev)));
	fleetview_destroy(v);
	fleetview_age(-1, NOW, dev, sizeof(dev));
	CHECK_STR(dev, "never");
	fleetview_age(NOW - 3 * 3600 * 1000LL, NOW, dev, sizeof(dev));
	CHECK_STR(dev, "3h ago");
	fleetview_age(NOW - 600000, NOW, dev, sizeof(dev));
	CHECK_STR(dev, "10m ago");
}

int main(void)
{
	table();
	json();
	answers();
	names();
	return testlib_done("fleetview");
}
