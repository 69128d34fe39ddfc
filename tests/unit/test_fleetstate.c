/* fleetstate: the fleet's reducer (issue 28; design §2.3, §2.4, §4.4).
 *
 * A table of record sequences and applied states, each with the plan it
 * must give, one row per rule of fleetstate.h; then Kafka Connect's own
 * config records (captured from a Connect 3.9.1 distributed worker on
 * 2026-12-05, the same records as test_connect_records.c: see there for how)
 * read once as a start snapshot and once record by record by a device that
 * applies each plan, and the bounds.
 *
 * A plan is rendered one step a line:
 *   OP name record@topic:offset [STATE] [config] [(reason)] */
#include "fleet/fleetstate.h"
#include "testlib.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

#define OWN "own"
#define GA "ga"
#define GB "gb"

struct rin {
	int topic; /* index in the row's topics */
	int64_t offset;
	const char *key;
	const char *value; /* NULL: a tombstone */
};

struct ain {
	const char *name;
	const char *topic, *id;
	int64_t offset;
	const char *props; /* JSON object */
	const char *target;
	const char *ttopic, *tid; /* NULL: never given */
	int64_t toffset;
};

struct row {
	const char *what;
	const char *topics[4]; /* NULL-terminated; default {OWN} */
	const char *ids[4];    /* topic ids at begin; default "id-<topic>" */
	int64_t hwm[4];        /* high watermarks at start */
	int64_t pos[4];        /* positions reported after the records (0: none) */
	struct rin recs[10];   /* key NULL ends */
	struct ain applied[3]; /* name NULL ends */
	struct fleetstate_mark refused[2];
	const char *want;   /* the plan */
	const char *second; /* a second plan with the same inputs (NULL: not made) */
};

#define CFG_A "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}}"
#define CFG_B "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}}"
#define CFG_G                                                                                      \
	"{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"                   \
	"g\",\"topic\":\"t\"}}"
#define PROPS_A "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}"
#define PROPS_A_REORDERED "{\"file\":\"/a\",\"connector.class\":\"FileStreamSource\"}"
#define PAUSED "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}"
#define STOPPED_V1 "{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}"
#define RESTART "{\"include-tasks\":true,\"only-failed\":false}"

#define A_OWN(off)                                                                                 \
	{                                                                                          \
		"app", OWN, "id-" OWN, off, PROPS_A, "STARTED", NULL, NULL, -1                     \
	}

static const struct row rows[] = {
    {.what = "the last record of a key wins; a connector never given a target state is STARTED",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_B}, {0, 1, "connector-app", CFG_A}},
     .want = "ADD app connector@own:1 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a tombstone removes",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "connector-app", NULL}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:1 (removed: its connector- record was deleted (a "
             "tombstone))\n"},
    {.what = "the device's own topic wins over a group",
     .topics = {OWN, GA},
     .hwm = {1, 1},
     .recs = {{1, 0, "connector-app", CFG_G}, {0, 0, "connector-app", CFG_A}},
     .want = "ADD app connector@own:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a later group in fleet.groups wins over an earlier one",
     .topics = {OWN, GA, GB},
     .hwm = {0, 1, 1},
     .recs = {{2, 0, "connector-app", CFG_B}, {1, 0, "connector-app", CFG_G}},
     .want = "ADD app connector@gb:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a configuration is taken whole from the topic that wins, never merged",
     .topics = {OWN, GA},
     .hwm = {1, 1},
     .recs = {{1, 0, "connector-app", CFG_G}, {0, 0, "connector-app", CFG_A}},
     .applied = {{"app", GA, "id-" GA, 0,
                  "{\"connector.class\":\"FileStreamSource\",\"file\":\"/g\",\"topic\":\"t\"}",
                  "STARTED", NULL, NULL, -1}},
     .want = "REPLACE app connector@own:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a tombstone in the device's own topic lets the group's configuration apply",
     .topics = {OWN, GA},
     .hwm = {2, 1},
     .recs = {{0, 0, "connector-app", CFG_A},
              {1, 0, "connector-app", CFG_G},
              {0, 1, "connector-app", NULL}},
     .applied = {A_OWN(0)},
     .want = "REPLACE app connector@ga:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/g\",\"topic\":\"t\"}\n"},
    {.what = "KIP-980: target-state- before connector- is kept and goes with it",
     .hwm = {2},
     .recs = {{0, 0, "target-state-held", PAUSED}, {0, 1, "connector-held", CFG_A}},
     .want = "ADD held connector@own:1 PAUSED@own:0 "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a target state for a connector not yet known waits for it",
     .hwm = {1},
     .recs = {{0, 0, "target-state-held", PAUSED}},
     .want = ""},
    {.what = "state.v2 wins over state (TARGET_STATE_V1: STOPPED written as PAUSED)",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "target-state-app", STOPPED_V1}},
     .applied = {A_OWN(0)},
     .want = "TARGET_STATE app target-state@own:1 STOPPED@own:1 "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a V0 target state (a worker before 3.5) is read from state",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "target-state-app", "{\"state\":\"PAUSED\"}"}},
     .applied = {A_OWN(0)},
     .want = "TARGET_STATE app target-state@own:1 PAUSED@own:1 "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a target-state tombstone puts the connector back to STARTED",
     .hwm = {3},
     .recs = {{0, 0, "connector-app", CFG_A},
              {0, 1, "target-state-app", PAUSED},
              {0, 2, "target-state-app", NULL}},
     .applied = {{"app", OWN, "id-" OWN, 0, PROPS_A, "PAUSED", OWN, "id-" OWN, 1}},
     .want = "TARGET_STATE app target-state@own:1 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "a target state in the device's own topic pauses a group's connector",
     .topics = {OWN, GA},
     .hwm = {1, 1},
     .recs = {{1, 0, "connector-app", CFG_G}, {0, 0, "target-state-app", PAUSED}},
     .want = "ADD app connector@ga:0 PAUSED@own:0 "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/g\",\"topic\":\"t\"}\n"},
    {.what = "a restart request inside the start snapshot is not replayed",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "restart-connector-app", RESTART}},
     .applied = {A_OWN(0)},
     .want = ""},
    {.what = "a restart request read after the start snapshot is planned once",
     .hwm = {1},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "restart-connector-app", RESTART}},
     .applied = {A_OWN(0)},
     .want = "RESTART app restart@own:1 tasks\n",
     .second = ""},
    {.what = "configurations compare as maps: Connect's PATCH reorders them (re-read: no step)",
     .hwm = {1},
     .recs = {{0, 0, "connector-app", CFG_A}},
     .applied = {{"app", OWN, "id-" OWN, 0, PROPS_A_REORDERED, "STARTED", NULL, NULL, -1}},
     .want = ""},
    {.what = "the same configuration at another offset is acknowledged, not reloaded",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "connector-app", CFG_A}},
     .applied = {A_OWN(0)},
     .want = "ACK app connector@own:1 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
    {.what = "absent after a whole read (a compacted-away tombstone) is removed",
     .hwm = {3},
     .recs = {{0, 2, "connector-other", CFG_B}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:0 (removed: no longer in its config topic, read whole "
             "(compacted tombstone))\n"
             "ADD other connector@own:2 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "absent from a read not yet at the high watermark removes nothing",
     .hwm = {5},
     .recs = {{0, 2, "connector-other", CFG_B}},
     .applied = {A_OWN(0)},
     .want = ""},
    {.what = "a group topic not read whole yet removes nothing, decides nothing it could change",
     .topics = {OWN, GA},
     .hwm = {1, 4},
     .recs = {{0, 0, "connector-other", CFG_B}, {1, 0, "connector-grp", CFG_G}},
     .applied = {A_OWN(0)},
     .want = ""},
    {.what = "a name the device's own topic settles whole is decided before the groups are read",
     .topics = {OWN, GA},
     .hwm = {2, 4},
     .recs = {{0, 0, "connector-other", CFG_B},
              {0, 1, "target-state-other", PAUSED},
              {1, 0, "connector-grp", CFG_G}},
     .applied = {A_OWN(0)},
     .want = "ADD other connector@own:0 PAUSED@own:1 "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a position past compacted offsets completes the read",
     .hwm = {9},
     .pos = {9},
     .recs = {{0, 2, "connector-other", CFG_B}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:0 (removed: no longer in its config topic, read whole "
             "(compacted tombstone))\n"
             "ADD other connector@own:2 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a recreated config topic (new id) keeps what runs, reported once",
     .ids = {"id-new"},
     .hwm = {0},
     .applied = {A_OWN(4)},
     .want = "REPORT app connector@own:4 (config topic was recreated: kept until a record "
             "names it)\n",
     .second = ""},
    {.what = "a record in the recreated topic names the connector again",
     .ids = {"id-new"},
     .hwm = {1},
     .recs = {{0, 0, "connector-app", CFG_B}},
     .applied = {A_OWN(4)},
     .want = "REPLACE app connector@own:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a marker other than the topic's: recreated, what runs is kept and reported",
     .ids = {"skiff-topic-id:u1"},
     .hwm = {1},
     .recs = {{0, 0, "skiff-topic-id", "u2"}},
     .applied = {{"app", OWN, "skiff-topic-id:u1", 4, PROPS_A, "STARTED", NULL, NULL, -1}},
     .want = "REPORT app connector@own:4 (config topic was recreated: kept until a record "
             "names it)\n"},
    {.what = "a marker other than the topic's: refusals under the old id skip nothing",
     .ids = {"skiff-topic-id:u1"},
     .hwm = {2},
     .recs = {{0, 0, "skiff-topic-id", "u2"}, {0, 1, "connector-other", CFG_B}},
     .refused = {{"skiff-topic-id:u1", 1}},
     .want = "ADD other connector@own:1 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a marker other than the topic's keeps the read's end: news only after it",
     .ids = {"skiff-topic-id:u1"},
     .hwm = {3},
     .recs = {{0, 0, "skiff-topic-id", "u2"}, {0, 1, "connector-other", CFG_B}},
     .want = ""},
    {.what = "the topic's own marker changes nothing",
     .ids = {"skiff-topic-id:u1"},
     .hwm = {2},
     .recs = {{0, 0, "skiff-topic-id", "u1"}, {0, 1, "connector-app", CFG_A}},
     .applied = {{"app", OWN, "skiff-topic-id:u1", 1, PROPS_A, "STARTED", NULL, NULL, -1}},
     .want = ""},
    {.what = "a first marker names the topic it is read in: nothing read before is forgotten, "
             "an absence under the old id removes",
     .hwm = {3},
     .recs = {{0, 0, "connector-other", CFG_B},
              {0, 1, "connector-app", NULL},
              {0, 2, "skiff-topic-id", "u1"}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:1 (removed: its connector- record was deleted (a "
             "tombstone))\n"
             "ADD other connector@own:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"},
    {.what = "a first marker: refusals under the id it replaces still hold",
     .hwm = {2},
     .recs = {{0, 0, "skiff-topic-id", "u1"}, {0, 1, "connector-other", CFG_B}},
     .refused = {{"id-" OWN, 1}},
     .want = ""},
    {.what = "a marker that is no UUID-like text is skipped",
     .hwm = {2},
     .recs = {{0, 0, "skiff-topic-id", "not an id"}, {0, 1, "connector-app", NULL}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:1 (removed: its connector- record was deleted (a "
             "tombstone))\n"},
    {.what = "a topic no longer in fleet.groups no longer holds its connectors",
     .hwm = {0},
     .applied = {{"app", "old-group", "id-old", 3, PROPS_A, "STARTED", NULL, NULL, -1}},
     .want = "REMOVE app connector@old-group:3 (removed: its config topic is no longer read "
             "(fleet.groups))\n"},
    {.what = "task-, commit-, tasks-fencing-, session-key, logger- skipped; unknown keys too",
     .hwm = {7},
     .recs = {{0, 0, "task-app-0", CFG_A},
              {0, 1, "commit-app", "{\"tasks\":1}"},
              {0, 2, "tasks-fencing-app", "{\"task-count\":1}"},
              {0, 3, "session-key", "{}"},
              {0, 4, "logger-cluster-org.x", "{\"level\":\"DEBUG\"}"},
              {0, 5, "no-such-kind", "{}"},
              {0, 6, "status-connector-app", "{}"}},
     .want = ""},
    {.what = "a refused configuration is not planned again",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "connector-app", CFG_B}},
     .applied = {A_OWN(0)},
     .refused = {{"id-" OWN, 1}},
     .want = ""},
    {.what = "a refused new connector is not planned again",
     .hwm = {1},
     .recs = {{0, 0, "connector-app", CFG_A}},
     .refused = {{"id-" OWN, 0}},
     .want = ""},
    {.what = "a refused target state is not planned again, nor reported",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "target-state-app", PAUSED}},
     .applied = {A_OWN(0)},
     .refused = {{"id-" OWN, 1}},
     .want = ""},
    {.what = "a value that does not decode is reported, what runs kept (not removed)",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "connector-app", "{\"properties\":7}"}},
     .applied = {A_OWN(0)},
     .want = "REPORT app connector@own:1 (connector-app at offset 1 of own refused: member "
             "properties is not an object)\n"},
    {.what = "a bad record once refused is not reported again",
     .hwm = {2},
     .recs = {{0, 0, "connector-app", CFG_A}, {0, 1, "connector-app", "{\"properties\":7}"}},
     .applied = {A_OWN(0)},
     .refused = {{"id-" OWN, 1}},
     .want = ""},
    {.what = "a bad target state is reported, even before its connector",
     .hwm = {1},
     .recs = {{0, 0, "target-state-app", "{\"state\":\"SLEEPING\"}"}},
     .want = "REPORT app target-state@own:0 (target-state-app at offset 0 of own refused: "
             "target state SLEEPING is none of STARTED, PAUSED, STOPPED)\n"},
    {.what = "a bad restart request after the snapshot is reported once",
     .hwm = {0},
     .recs = {{0, 0, "restart-connector-app", "[]"}},
     .want = "REPORT app restart@own:0 (restart-connector-app at offset 0 of own refused: not "
             "one JSON object)\n",
     .second = ""},
    {.what = "removals come first, then names in the order read",
     .hwm = {3},
     .recs = {{0, 0, "connector-zed", CFG_B},
              {0, 1, "connector-app", NULL},
              {0, 2, "connector-abe", CFG_A}},
     .applied = {A_OWN(0)},
     .want = "REMOVE app connector@own:1 (removed: its connector- record was deleted (a "
             "tombstone))\n"
             "ADD zed connector@own:0 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/b\"}\n"
             "ADD abe connector@own:2 STARTED "
             "{\"connector.class\":\"FileStreamSource\",\"file\":\"/a\"}\n"},
};

struct captured {
	int64_t offset;
	const char *key;
	const char *value;
};

/* Kafka Connect 3.9.1's config topic, offsets 0-22 (value NULL: a tombstone). */
static const struct captured captured[] = {
    {0, "session-key",
     "{\"key\":\"qCHaYLFHMP1E32h9uF5SE3sDiwmPDcNEWxWlM01kwyQ=\",\"algorithm"
     "\":\"HmacSHA256\",\"creation-timestamp\":1796481705022}"},
    {1, "connector-app",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"name\":\"app\"}}"},
    {2, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\"to"
     "pic\":\"data-15f0c3\"}}"},
    {3, "commit-app", "{\"tasks\":1}"},
    {4, "target-state-app", "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}"},
    {5, "target-state-app", "{\"state\":\"STARTED\",\"state.v2\":\"STARTED\"}"},
    {6, "commit-app", "{\"tasks\":0}"},
    {7, "target-state-app", "{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}"},
    {8, "target-state-app", "{\"state\":\"STARTED\",\"state.v2\":\"STARTED\"}"},
    {9, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\"to"
     "pic\":\"data-15f0c3\"}}"},
    {10, "commit-app", "{\"tasks\":1}"},
    {11, "connector-app",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"name\":\"a"
     "pp\",\"topic\":\"data-15f0c3\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt."
     "2\",\"tasks.max\":\"1\"}}"},
    {12, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt.2\",\"task.class\":\"org.apache.kafka.conne"
     "ct.file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\""
     "topic\":\"data-15f0c3\"}}"},
    {13, "commit-app", "{\"tasks\":1}"},
    {14, "restart-connector-app", "{\"include-tasks\":true,\"only-failed\":false}"},
    {15, "target-state-held", "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}"},
    {16, "connector-held",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"name\":\"held\"}}"},
    {17, "connector-bad-one",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"transforms\":\"x\",\"transforms.x.type\":\"org.apache.kafka.co"
     "nnect.transforms.ExtractField$Value\",\"transforms.x.field\":\"nope\","
     "\"name\":\"bad-one\"}}"},
    {18, "task-bad-one-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"transforms\":\"x\","
     "\"name\":\"bad-one\",\"topic\":\"data-15f0c3\",\"transforms.x.type\":"
     "\"org.apache.kafka.connect.transforms.ExtractField$Value\",\"transform"
     "s.x.field\":\"nope\"}}"},
    {19, "commit-bad-one", "{\"tasks\":1}"},
    {20, "logger-cluster-org.apache.kafka.connect.file", "{\"level\":\"DEBUG\"}"},
    {21, "connector-app", NULL},
    {22, "target-state-app", NULL},
};

/* ---- rendering -------------------------------------------------------------- */

static void render_source(struct buf *b, const char *what, const struct fleetstate_source *s)
{
	buf_printf(b, "%s@%s:%lld", what, s->topic ? s->topic : "-", (long long)s->offset);
}

static const char *record_name(enum connect_kind k)
{
	return k == CONNECT_CONNECTOR      ? "connector"
	       : k == CONNECT_TARGET_STATE ? "target-state"
	       : k == CONNECT_RESTART      ? "restart"
	                                   : "?";
}

/* The plan, one step a line; full: with the configuration's JSON. */
static char *render_as(const struct fleetstate_plan *p, bool full)
{
	struct buf b;
	char *out = NULL;

	buf_init(&b, 1 << 20);
	buf_addz(&b, "");
	for (size_t i = 0; i < fleetstate_plan_count(p); i++) {
		const struct fleetstate_step *s = fleetstate_plan_step(p, i);

		buf_printf(&b, "%s %s ", fleetstate_op_name(s->op), s->name);
		render_source(&b, record_name(s->record), &s->from);
		switch (s->op) {
		case FLEETSTATE_ADD:
		case FLEETSTATE_REPLACE:
		case FLEETSTATE_ACK:
		case FLEETSTATE_TARGET_STATE: {
			char *j = cJSON_PrintUnformatted(s->entry.config);

			buf_addc(&b, ' ');
			if (s->entry.target_from.topic != NULL)
				render_source(&b, connect_target_name(s->entry.target),
				              &s->entry.target_from);
			else
				buf_addz(&b, connect_target_name(s->entry.target));
			if (full)
				buf_printf(&b, " %s", j ? j : "(null)");
			free(j);
			break;
		}
		case FLEETSTATE_RESTART:
			buf_printf(&b, "%s%s", s->include_tasks ? " tasks" : "",
			           s->only_failed ? " only-failed" : "");
			break;
		default:
			buf_printf(&b, " (%s)", s->reason ? s->reason : "(null)");
		}
		buf_addc(&b, '\n');
	}
	if (buf_take(&b, &out, NULL) != 0)
		return NULL;
	return out;
}

static char *render(const struct fleetstate_plan *p)
{
	return render_as(p, true);
}

/* ---- the table ---------------------------------------------------------------- */

static const char *id_of(const struct row *r, size_t i, char *tmp, size_t n)
{
	if (r->ids[i] != NULL)
		return r->ids[i];
	snprintf(tmp, n, "id-%s", r->topics[0] ? r->topics[i] : OWN);
	return tmp;
}

static void run_row(const struct row *r)
{
	const char *const deftopics[] = {OWN, NULL};
	const char *const *topics = r->topics[0] ? r->topics : deftopics;
	struct fleetstate_applied applied[3];
	struct fleetstate *st = NULL;
	struct fleetstate_plan *p = NULL;
	size_t nt = 0, na = 0, nr = 0;
	char tmp[64], err[256];
	char *got;

	while (topics[nt] != NULL)
		nt++;
	CHECK_INT(fleetstate_new(topics, nt, &st), 0);
	for (size_t i = 0; i < nt; i++)
		CHECK_INT(fleetstate_begin(st, topics[i], id_of(r, i, tmp, sizeof(tmp)), r->hwm[i]),
		          0);
	for (size_t i = 0; i < 10 && r->recs[i].key != NULL; i++) {
		const struct rin *in = &r->recs[i];
		struct fleetstate_record rec = {
		    .topic = topics[in->topic],
		    /* as the fleet passes it: the reducer's (a marker may have
		     * given one) */
		    .topic_id = fleetstate_topic_id(st, topics[in->topic]),
		    .offset = in->offset,
		    .key = in->key,
		    .keylen = strlen(in->key),
		    .value = in->value,
		    .valuelen = in->value ? strlen(in->value) : 0,
		};

		CHECK_INT(fleetstate_take(st, &rec, err, sizeof(err)), 0);
	}
	for (size_t i = 0; i < nt; i++)
		if (r->pos[i] > 0)
			CHECK_INT(fleetstate_position(st, topics[i], r->pos[i]), 0);
	for (; na < 3 && r->applied[na].name != NULL; na++) {
		const struct ain *a = &r->applied[na];

		applied[na] = (struct fleetstate_applied){
		    .name = a->name,
		    .config_from = {a->topic, a->id, a->offset},
		    .config = cJSON_Parse(a->props),
		    .target = strcmp(a->target, "PAUSED") == 0    ? CONNECT_TARGET_PAUSED
		              : strcmp(a->target, "STOPPED") == 0 ? CONNECT_TARGET_STOPPED
		                                                  : CONNECT_TARGET_STARTED,
		    .target_from = {a->ttopic, a->tid, a->toffset},
		};
	}
	while (nr < 2 && r->refused[nr].topic_id != NULL)
		nr++;
	for (int round = 0; round < (r->second ? 2 : 1); round++) {
		CHECK_INT(fleetstate_plan(st, applied, na, r->refused, nr, &p), 0);
		got = p ? render(p) : NULL;
		CHECK_STR(got, round == 0 ? r->want : r->second);
		if (got == NULL || strcmp(got, round == 0 ? r->want : r->second) != 0)
			fprintf(stderr, "  row: %s\n", r->what);
		free(got);
		fleetstate_plan_free(p);
		p = NULL;
	}
	for (size_t i = 0; i < na; i++)
		cJSON_Delete((cJSON *)applied[i].config);
	fleetstate_destroy(st);
}

/* ---- a device that applies its plans ------------------------------------------ */

struct store {
	struct fleetstate_applied e[8];
	size_t n;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void entry_free(struct fleetstate_applied *a)
{
	free((char *)a->name);
	free((char *)a->config_from.topic);
	free((char *)a->config_from.topic_id);
	free((char *)a->target_from.topic);
	free((char *)a->target_from.topic_id);
	cJSON_Delete((cJSON *)a->config);
}

static void store_apply(struct store *st, const struct fleetstate_step *s)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (strcmp(st->e[i].name, s->name) == 0)
			break;
	if (s->op == FLEETSTATE_REMOVE) {
		CHECK(i < st->n);
		if (i < st->n) {
			entry_free(&st->e[i]);
			st->e[i] = st->e[--st->n];
		}
		return;
	}
	if (s->op == FLEETSTATE_RESTART || s->op == FLEETSTATE_REPORT)
		return;
	CHECK(s->op == FLEETSTATE_ADD ? i == st->n : i < st->n);
	if (i == st->n) {
		if (st->n == 8)
			return;
		st->n++;
	} else {
		entry_free(&st->e[i]);
	}
	st->e[i] = (struct fleetstate_applied){
	    .name = strdup(s->name),
	    .config_from = {dup_or_null(s->entry.config_from.topic),
	                    dup_or_null(s->entry.config_from.topic_id),
	                    s->entry.config_from.offset},
	    .config = cJSON_Duplicate(s->entry.config, true),
	    .target = s->entry.target,
	    .target_from = {dup_or_null(s->entry.target_from.topic),
	                    dup_or_null(s->entry.target_from.topic_id),
	                    s->entry.target_from.offset},
	};
}

static void store_free(struct store *st)
{
	for (size_t i = 0; i < st->n; i++)
		entry_free(&st->e[i]);
	st->n = 0;
}

static void take_captured(struct fleetstate *st, size_t i)
{
	struct fleetstate_record rec = {
	    .topic = OWN,
	    .topic_id = "id-" OWN,
	    .offset = captured[i].offset,
	    .key = captured[i].key,
	    .keylen = strlen(captured[i].key),
	    .value = captured[i].value,
	    .valuelen = captured[i].value ? strlen(captured[i].value) : 0,
	};
	char err[256];

	CHECK_INT(fleetstate_take(st, &rec, err, sizeof(err)), 0);
}

/* Plans against st's store, applies the plan and appends it to trace. */
static void plan_apply(struct fleetstate *fs, struct store *st, struct buf *trace, int64_t at)
{
	struct fleetstate_plan *p = NULL;
	char *got;

	CHECK_INT(fleetstate_plan(fs, st->e, st->n, NULL, 0, &p), 0);
	if (p == NULL)
		return;
	for (size_t i = 0; i < fleetstate_plan_count(p); i++)
		store_apply(st, fleetstate_plan_step(p, i));
	got = render_as(p, false);
	if (got != NULL && got[0] != '\0')
		buf_printf(trace, "@%lld %s", (long long)at, got);
	free(got);
	fleetstate_plan_free(p);
}

/* Connect's config topic read as a start snapshot (a device that comes up
 * after the operator's session): what is left, and nothing replayed. */
static void capture_as_snapshot(void)
{
	const char *const topics[] = {OWN};
	const size_t n = sizeof(captured) / sizeof(captured[0]);
	struct fleetstate *fs = NULL;
	struct fleetstate_plan *p = NULL;
	struct fleetstate_counts c;
	char *got;

	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-" OWN, (int64_t)n), 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(!fleetstate_complete(fs));
		take_captured(fs, i);
	}
	CHECK(fleetstate_complete(fs));
	CHECK_INT(fleetstate_plan(fs, NULL, 0, NULL, 0, &p), 0);
	got = p ? render(p) : NULL;
	CHECK_STR(
	    got,
	    "ADD held connector@own:16 PAUSED@own:15 {\"connector.class\":\"FileStreamSource\","
	    "\"tasks.max\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-"
	    "15f0c3\",\"name\":\"held\"}\n"
	    "ADD bad-one connector@own:17 STARTED {\"connector.class\":\"FileStreamSource\","
	    "\"tasks.max\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-"
	    "15f0c3\",\"transforms\":\"x\",\"transforms.x.type\":\"org.apache.kafka.connect."
	    "transforms.ExtractField$Value\",\"transforms.x.field\":\"nope\",\"name\":\"bad-"
	    "one\"}\n");
	free(got);
	fleetstate_plan_free(p);
	fleetstate_counts(fs, &c);
	CHECK_INT(c.taken, 23);
	/* session-key, task- x4, commit- x5, logger-cluster- */
	CHECK_INT(c.skipped, 11);
	CHECK_INT(c.old, 1); /* restart-connector-app at 14 */
	CHECK_INT(c.unknown, 0);
	CHECK_INT(c.bad, 0);
	fleetstate_destroy(fs);
}

/* The same records read one by one by a device that was up all along and
 * applies each plan: each of the operator's actions is one step; then the
 * device restarts and reads its topic again: nothing to do. */
static void capture_replayed(void)
{
	const char *const topics[] = {OWN};
	const size_t n = sizeof(captured) / sizeof(captured[0]);
	struct fleetstate *fs = NULL;
	struct store st = {.n = 0};
	struct buf trace;
	char *got = NULL;

	buf_init(&trace, 1 << 16);
	buf_addz(&trace, "");
	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-" OWN, 0), 0);
	for (size_t i = 0; i < n; i++) {
		take_captured(fs, i);
		plan_apply(fs, &st, &trace, captured[i].offset);
	}
	CHECK_INT(buf_take(&trace, &got, NULL), 0);
	CHECK_STR(got, "@1 ADD app connector@own:1 STARTED\n"
	               "@4 TARGET_STATE app target-state@own:4 PAUSED@own:4\n"
	               "@5 TARGET_STATE app target-state@own:5 STARTED@own:5\n"
	               "@7 TARGET_STATE app target-state@own:7 STOPPED@own:7\n"
	               "@8 TARGET_STATE app target-state@own:8 STARTED@own:8\n"
	               "@11 REPLACE app connector@own:11 STARTED@own:8\n"
	               "@14 RESTART app restart@own:14 tasks\n"
	               "@16 ADD held connector@own:16 PAUSED@own:15\n"
	               "@17 ADD bad-one connector@own:17 STARTED\n"
	               "@21 REMOVE app connector@own:21 (removed: its connector- record was "
	               "deleted (a tombstone))\n");
	free(got);
	fleetstate_destroy(fs);

	/* The restart: the same topic read again as a snapshot. */
	buf_init(&trace, 1 << 16);
	buf_addz(&trace, "");
	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-" OWN, (int64_t)n), 0);
	for (size_t i = 0; i < n; i++)
		take_captured(fs, i);
	plan_apply(fs, &st, &trace, (int64_t)n);
	CHECK_INT(buf_take(&trace, &got, NULL), 0);
	CHECK_STR(got, "");
	CHECK_INT(st.n, 2);
	free(got);
	fleetstate_destroy(fs);
	store_free(&st);
}

/* ---- bounds, errors ------------------------------------------------------------- */

static int take_one(struct fleetstate *fs, const char *id, int64_t off, const char *key,
                    const char *value, size_t valuelen, char *err, size_t errlen)
{
	struct fleetstate_record rec = {OWN, id, off, key, strlen(key), value, valuelen};

	return fleetstate_take(fs, &rec, err, errlen);
}

static void skipped_counted(void)
{
	const char *const topics[] = {OWN};
	struct fleetstate *fs = NULL;
	struct fleetstate_counts c;
	char err[256];
	const char *keys[] = {"task-app-0",          "commit-app",           "tasks-fencing-app",
	                      "session-key",         "logger-cluster-org.x", "no-such-kind",
	                      "status-connector-app"};

	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK_INT(take_one(fs, "id-" OWN, (int64_t)i, keys[i], "{}", 2, err, sizeof(err)),
		          0);
	fleetstate_counts(fs, &c);
	CHECK_INT(c.taken, 7);
	CHECK_INT(c.skipped, 5);
	CHECK_INT(c.unknown, 2);
	fleetstate_destroy(fs);
}
static void names_bounded(void)
{
	const char *const topics[] = {OWN};
	struct fleetstate *fs = NULL;
	struct fleetstate_plan *p = NULL;
	struct fleetstate_counts c;
	struct fleetstate_applied gone = {
	    .name = "gone", .config_from = {OWN, "id-" OWN, 0}, .target_from = {NULL, NULL, -1}};
	char key[64], err[256] = "";
	size_t adds = 0, removes = 0;

	gone.config = cJSON_Parse(PROPS_A);
	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-" OWN, FLEETSTATE_MAX_NAMES + 1), 0);
	for (int i = 0; i < FLEETSTATE_MAX_NAMES; i++) {
		snprintf(key, sizeof(key), "connector-c%d", i);
		CHECK_INT(take_one(fs, "id-" OWN, i, key, CFG_A, strlen(CFG_A), err, sizeof(err)),
		          0);
	}
	CHECK_INT(take_one(fs, "id-" OWN, FLEETSTATE_MAX_NAMES, "connector-one-too-many", CFG_A,
	                   strlen(CFG_A), err, sizeof(err)),
	          FLEETSTATE_ERR_LIMIT);
	CHECK_STR(err, "topic own: connector one-too-many: more than 4096 connector names over the "
	               "fleet's config topics");
	/* The read reached the high watermark, but a record was not kept:
	 * absence proves nothing, and "gone" stays. */
	CHECK(!fleetstate_complete(fs));
	fleetstate_counts(fs, &c);
	CHECK_INT(c.refused, 1);
	CHECK_INT(fleetstate_plan(fs, &gone, 1, NULL, 0, &p), 0);
	for (size_t i = 0; p != NULL && i < fleetstate_plan_count(p); i++) {
		adds += fleetstate_plan_step(p, i)->op == FLEETSTATE_ADD;
		removes += fleetstate_plan_step(p, i)->op == FLEETSTATE_REMOVE;
	}
	CHECK_INT(removes, 0);
	/* Nor is any name decided: the record not kept may have been its
	 * target state. The error is the caller's to report. */
	CHECK_INT(adds, 0);
	fleetstate_plan_free(p);
	cJSON_Delete((cJSON *)gone.config);
	fleetstate_destroy(fs);
}

static void value_bounded(void)
{
	const char *const topics[] = {OWN};
	struct fleetstate *fs = NULL;
	struct fleetstate_plan *p = NULL;
	size_t n = FLEETSTATE_MAX_VALUE + 1;
	char *big = malloc(n), err[256];
	char *got;

	CHECK(big != NULL);
	if (big == NULL)
		return;
	memset(big, ' ', n);
	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-" OWN, 1), 0);
	CHECK_INT(take_one(fs, "id-" OWN, 0, "connector-app", big, n, err, sizeof(err)), 0);
	CHECK_INT(fleetstate_plan(fs, NULL, 0, NULL, 0, &p), 0);
	got = p ? render(p) : NULL;
	CHECK_STR(got, "REPORT app connector@own:0 (connector-app at offset 0 of own refused: a "
	               "value of 1048577 bytes passes the limit of 1048576)\n");
	free(got);
	free(big);
	fleetstate_plan_free(p);
	fleetstate_destroy(fs);
}

/* The topic deleted and recreated while the device reads it: a record of
 * the new id forgets what the old one said. */
static void recreated_while_read(void)
{
	const char *const topics[] = {OWN};
	struct fleetstate *fs = NULL;
	struct fleetstate_plan *p = NULL;
	struct fleetstate_counts c;
	struct fleetstate_applied app = {
	    .name = "app", .config_from = {OWN, "id-1", 0}, .target_from = {NULL, NULL, -1}};
	char err[256], *got;

	app.config = cJSON_Parse(PROPS_A);
	CHECK_INT(fleetstate_new(topics, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, OWN, "id-1", 1), 0);
	CHECK_INT(take_one(fs, "id-1", 0, "connector-app", CFG_A, strlen(CFG_A), err, sizeof(err)),
	          0);
	CHECK_INT(fleetstate_plan(fs, &app, 1, NULL, 0, &p), 0);
	CHECK_INT(p ? fleetstate_plan_count(p) : 99, 0);
	fleetstate_plan_free(p);
	CHECK_INT(
	    take_one(fs, "id-2", 0, "connector-other", CFG_B, strlen(CFG_B), err, sizeof(err)), 0);
	fleetstate_counts(fs, &c);
	CHECK_INT(c.recreated, 1);
	CHECK_INT(fleetstate_plan(fs, &app, 1, NULL, 0, &p), 0);
	got = p ? render_as(p, false) : NULL;
	CHECK_STR(got,
	          "REPORT app connector@own:0 (config topic was recreated: kept until a record "
	          "names it)\n"
	          "ADD other connector@own:0 STARTED\n");
	free(got);
	fleetstate_plan_free(p);
	cJSON_Delete((cJSON *)app.config);
	fleetstate_destroy(fs);
}

static void errors(void)
{
	const char *const two[] = {OWN, OWN};
	const char *const empty[] = {""};
	struct fleetstate *fs = (struct fleetstate *)1;
	char err[256] = "";

	CHECK_INT(fleetstate_new(two, 0, &fs), FLEETSTATE_ERR_ARG);
	CHECK(fs == NULL);
	CHECK_INT(fleetstate_new(two, 2, &fs), FLEETSTATE_ERR_ARG);
	CHECK_INT(fleetstate_new(empty, 1, &fs), FLEETSTATE_ERR_ARG);
	CHECK_INT(fleetstate_new(two, 1, &fs), 0);
	CHECK_INT(fleetstate_begin(fs, "elsewhere", "x", 0), FLEETSTATE_ERR_TOPIC);
	CHECK_INT(fleetstate_position(fs, "elsewhere", 0), FLEETSTATE_ERR_TOPIC);
	{
		struct fleetstate_record rec = {"elsewhere", "x", 0, "connector-a", 11, NULL, 0};

		CHECK_INT(fleetstate_take(fs, &rec, err, sizeof(err)), FLEETSTATE_ERR_TOPIC);
		CHECK_STR(err, "topic elsewhere: not a config topic of this device");
	}
	/* Not begun: nothing is complete, and a restart is not news. */
	CHECK(!fleetstate_complete(fs));
	CHECK_STR(fleetstate_strerror(FLEETSTATE_ERR_LIMIT),
	          "a bound of the fleet's reducer passed: record not kept");
	CHECK_STR(fleetstate_op_name(FLEETSTATE_TARGET_STATE), "TARGET_STATE");
	fleetstate_destroy(fs);
	fleetstate_destroy(NULL);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
	skipped_counted();
	capture_as_snapshot();
	capture_replayed();
	names_bounded();
	value_bounded();
	recreated_while_read();
	errors();
	return testlib_done("test_fleetstate");
}
