/* connect_records: Kafka Connect's config and status records (issue 28).
 *
 * Where the records come from: `captured` below is every record a real Kafka
 * Connect 3.9.1 distributed worker (tests/e2e/connectjvm.py's jars, against
 * tests/kafka/kafka.sh's broker) wrote on its config.storage.topic and
 * status.storage.topic on 2026-12-05 14:42 UTC, while it was driven through
 * its REST API: create connector app (FileStreamSource), pause, resume,
 * stop, resume, PATCH its file, restart with tasks, create held with
 * initial_state PAUSED, create bad-one whose ExtractField$Value transform
 * fails its task (FAILED with Connect's Java trace), a cluster-scope logger
 * level, delete app. The script that drove it and dumped both topics:
 * /work/notes/i28/capture.py (session notes, issue 28's design). The other
 * shapes are named where they are used: a V0 target state (a worker before
 * Kafka 3.5) as KafkaConfigBackingStore's TARGET_STATE_V0 schema defines it. */
#include "fleet/connect_records.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

struct captured {
	const char *topic; /* "config" or "status" */
	int partition;
	long offset;
	const char *key;
	const char *value;
};

/* Generated from Connect's records (capture.py, below): kind, partition,
 * offset, key, value (NULL: a tombstone). */
static const struct captured captured[] = {
    {"config", 0, 0, "session-key",
     "{\"key\":\"qCHaYLFHMP1E32h9uF5SE3sDiwmPDcNEWxWlM01kwyQ=\",\"algorithm"
     "\":\"HmacSHA256\",\"creation-timestamp\":1796481705022}"},
    {"config", 0, 1, "connector-app",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"name\":\"app\"}}"},
    {"config", 0, 2, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\"to"
     "pic\":\"data-15f0c3\"}}"},
    {"config", 0, 3, "commit-app", "{\"tasks\":1}"},
    {"config", 0, 4, "target-state-app", "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}"},
    {"config", 0, 5, "target-state-app", "{\"state\":\"STARTED\",\"state.v2\":\"STARTED\"}"},
    {"config", 0, 6, "commit-app", "{\"tasks\":0}"},
    {"config", 0, 7, "target-state-app", "{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}"},
    {"config", 0, 8, "target-state-app", "{\"state\":\"STARTED\",\"state.v2\":\"STARTED\"}"},
    {"config", 0, 9, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\"to"
     "pic\":\"data-15f0c3\"}}"},
    {"config", 0, 10, "commit-app", "{\"tasks\":1}"},
    {"config", 0, 11, "connector-app",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"name\":\"a"
     "pp\",\"topic\":\"data-15f0c3\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt."
     "2\",\"tasks.max\":\"1\"}}"},
    {"config", 0, 12, "task-app-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt.2\",\"task.class\":\"org.apache.kafka.conne"
     "ct.file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"name\":\"app\",\""
     "topic\":\"data-15f0c3\"}}"},
    {"config", 0, 13, "commit-app", "{\"tasks\":1}"},
    {"config", 0, 14, "restart-connector-app", "{\"include-tasks\":true,\"only-failed\":false}"},
    {"config", 0, 15, "target-state-held", "{\"state\":\"PAUSED\",\"state.v2\":\"PAUSED\"}"},
    {"config", 0, 16, "connector-held",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"name\":\"held\"}}"},
    {"config", 0, 17, "connector-bad-one",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"tasks.max"
     "\":\"1\",\"file\":\"/tmp/i28cap-e9e0lr9c/in.txt\",\"topic\":\"data-15f"
     "0c3\",\"transforms\":\"x\",\"transforms.x.type\":\"org.apache.kafka.co"
     "nnect.transforms.ExtractField$Value\",\"transforms.x.field\":\"nope\","
     "\"name\":\"bad-one\"}}"},
    {"config", 0, 18, "task-bad-one-0",
     "{\"properties\":{\"connector.class\":\"FileStreamSource\",\"file\":\"/"
     "tmp/i28cap-e9e0lr9c/in.txt\",\"task.class\":\"org.apache.kafka.connect"
     ".file.FileStreamSourceTask\",\"tasks.max\":\"1\",\"transforms\":\"x\","
     "\"name\":\"bad-one\",\"topic\":\"data-15f0c3\",\"transforms.x.type\":"
     "\"org.apache.kafka.connect.transforms.ExtractField$Value\",\"transform"
     "s.x.field\":\"nope\"}}"},
    {"config", 0, 19, "commit-bad-one", "{\"tasks\":1}"},
    {"config", 0, 20, "logger-cluster-org.apache.kafka.connect.file", "{\"level\":\"DEBUG\"}"},
    {"config", 0, 21, "connector-app", NULL},
    {"config", 0, 22, "target-state-app", NULL},
    {"status", 4, 0, "status-task-app-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":3}"},
    {"status", 4, 1, "status-task-app-0",
     "{\"state\":\"PAUSED\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729\""
     ",\"generation\":3}"},
    {"status", 4, 2, "status-task-app-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":3}"},
    {"status", 4, 3, "status-task-app-0",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":3}"},
    {"status", 4, 4, "status-task-app-0", NULL},
    {"status", 4, 5, "status-task-app-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":6}"},
    {"status", 4, 6, "status-task-app-0",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":6}"},
    {"status", 4, 7, "status-task-app-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":7}"},
    {"status", 4, 8, "status-task-app-0",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":7}"},
    {"status", 4, 9, "status-task-app-0",
     "{\"state\":\"RESTARTING\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":7}"},
    {"status", 4, 10, "status-task-app-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":7}"},
    {"status", 4, 11, "status-task-app-0",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":10}"},
    {"status", 4, 12, "status-task-app-0", NULL},
    {"status", 4, 13, "status-task-app-0", NULL},
    {"status", 3, 0, "status-task-bad-one-0",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":10}"},
    {"status", 3, 1, "status-task-bad-one-0",
     "{\"state\":\"FAILED\",\"trace\":\"org.apache.kafka.connect.errors.Conn"
     "ectException: Tolerance exceeded in error handler\\n\\tat org.apache.k"
     "afka.connect.runtime.errors.RetryWithToleranceOperator.execAndHandleEr"
     "ror(RetryWithToleranceOperator.java:261)\\n\\tat org.apache.kafka.conn"
     "ect.runtime.errors.RetryWithToleranceOperator.execute(RetryWithToleran"
     "ceOperator.java:180)\\n\\tat org.apache.kafka.connect.runtime.Transfor"
     "mationChain.apply(TransformationChain.java:57)\\n\\tat org.apache.kafk"
     "a.connect.runtime.AbstractWorkerSourceTask.sendRecords(AbstractWorkerS"
     "ourceTask.java:398)\\n\\tat org.apache.kafka.connect.runtime.AbstractW"
     "orkerSourceTask.execute(AbstractWorkerSourceTask.java:364)\\n\\tat org"
     ".apache.kafka.connect.runtime.WorkerTask.doRun(WorkerTask.java:226)\\n"
     "\\tat org.apache.kafka.connect.runtime.WorkerTask.run(WorkerTask.java:"
     "281)\\n\\tat org.apache.kafka.connect.runtime.AbstractWorkerSourceTask"
     ".run(AbstractWorkerSourceTask.java:79)\\n\\tat org.apache.kafka.connec"
     "t.runtime.isolation.Plugins.lambda$withClassLoader$1(Plugins.java:238)"
     "\\n\\tat java.base/java.util.concurrent.Executors$RunnableAdapter.call"
     "(Executors.java:539)\\n\\tat java.base/java.util.concurrent.FutureTask"
     ".run(FutureTask.java:264)\\n\\tat java.base/java.util.concurrent.Threa"
     "dPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)\\n\\tat java.bas"
     "e/java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecuto"
     "r.java:635)\\n\\tat java.base/java.lang.Thread.run(Thread.java:840)\\n"
     "Caused by: org.apache.kafka.connect.errors.DataException: Only Struct "
     "objects supported for [field extraction], found: java.lang.String\\n\\"
     "tat org.apache.kafka.connect.transforms.util.Requirements.requireStruc"
     "t(Requirements.java:52)\\n\\tat org.apache.kafka.connect.transforms.ut"
     "il.Requirements.requireStructOrNull(Requirements.java:61)\\n\\tat org."
     "apache.kafka.connect.transforms.ExtractField.apply(ExtractField.java:8"
     "7)\\n\\tat org.apache.kafka.connect.runtime.TransformationStage.apply("
     "TransformationStage.java:57)\\n\\tat org.apache.kafka.connect.runtime."
     "TransformationChain.lambda$apply$0(TransformationChain.java:57)\\n\\ta"
     "t org.apache.kafka.connect.runtime.errors.RetryWithToleranceOperator.e"
     "xecAndRetry(RetryWithToleranceOperator.java:208)\\n\\tat org.apache.ka"
     "fka.connect.runtime.errors.RetryWithToleranceOperator.execAndHandleErr"
     "or(RetryWithToleranceOperator.java:245)\\n\\t... 13 more\\n\",\"worker"
     "_id\":\"127.0.0.1:42729\",\"generation\":10}"},
    {"status", 1, 0, "status-topic-data-15f0c3:connector-app",
     "{\"topic\":{\"name\":\"data-15f0c3\",\"connector\":\"app\",\"task\":0,"
     "\"discoverTimestamp\":1796481706349}}"},
    {"status", 1, 1, "status-topic-data-15f0c3:connector-app",
     "{\"topic\":{\"name\":\"data-15f0c3\",\"connector\":\"app\",\"task\":0,"
     "\"discoverTimestamp\":1796481706351}}"},
    {"status", 1, 2, "status-connector-bad-one",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":9}"},
    {"status", 1, 3, "status-topic-data-15f0c3:connector-app", NULL},
    {"status", 1, 4, "status-topic-data-15f0c3:connector-app", NULL},
    {"status", 0, 0, "status-connector-app",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":2}"},
    {"status", 0, 1, "status-connector-app",
     "{\"state\":\"PAUSED\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729\""
     ",\"generation\":3}"},
    {"status", 0, 2, "status-connector-app",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":3}"},
    {"status", 0, 3, "status-connector-app",
     "{\"state\":\"STOPPED\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":3}"},
    {"status", 0, 4, "status-connector-app",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":5}"},
    {"status", 0, 5, "status-connector-app",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":6}"},
    {"status", 0, 6, "status-connector-app",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":6}"},
    {"status", 0, 7, "status-connector-app",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":7}"},
    {"status", 0, 8, "status-connector-app",
     "{\"state\":\"RESTARTING\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":7}"},
    {"status", 0, 9, "status-connector-app",
     "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729"
     "\",\"generation\":7}"},
    {"status", 0, 10, "status-connector-held",
     "{\"state\":\"PAUSED\",\"trace\":null,\"worker_id\":\"127.0.0.1:42729\""
     ",\"generation\":8}"},
    {"status", 0, 11, "status-connector-app",
     "{\"state\":\"UNASSIGNED\",\"trace\":null,\"worker_id\":\"127.0.0.1:427"
     "29\",\"generation\":10}"},
    {"status", 0, 12, "status-connector-app", NULL},
};

#define N_CAPTURED (sizeof(captured) / sizeof(captured[0]))

static const char *text(struct buf *b)
{
	const char *s = buf_cstr(b);

	return s != NULL ? s : "(buffer error)";
}

/* The key parses, and formats back to its bytes. */
static void key_round_trip(const struct captured *r, struct connect_key *k)
{
	char err[256] = "";
	struct buf b;

	CHECK_INT(connect_key_parse(r->key, strlen(r->key), k, err, sizeof(err)), 0);
	buf_init(&b, 4096);
	CHECK_INT(connect_key_format(k, &b), 0);
	CHECK_STR(text(&b), r->key);
	buf_free(&b);
}

/* Each value decodes, and encodes back to Connect's bytes. */
static void value_round_trip(const struct captured *r, const struct connect_key *k)
{
	size_t n = strlen(r->value);
	char err[256] = "";
	struct buf b;

	buf_init(&b, 1 << 16);
	switch (k->kind) {
	case CONNECT_CONNECTOR:
	case CONNECT_TASK: {
		cJSON *p = NULL;

		CHECK_INT(connect_config_decode(r->value, n, &p, err, sizeof(err)), 0);
		CHECK_INT(connect_config_encode(p, &b), 0);
		cJSON_Delete(p);
		break;
	}
	case CONNECT_TARGET_STATE: {
		enum connect_target t;

		CHECK_INT(connect_target_decode(r->value, n, &t, err, sizeof(err)), 0);
		CHECK_INT(connect_target_encode(t, &b), 0);
		break;
	}
	case CONNECT_STATUS_CONNECTOR:
	case CONNECT_STATUS_TASK: {
		struct connect_status s;

		CHECK_INT(connect_status_decode(r->value, n, &s, err, sizeof(err)), 0);
		CHECK_INT(connect_status_encode(&s, &b), 0);
		connect_status_clear(&s);
		break;
	}
	case CONNECT_RESTART: {
		bool tasks, failed;

		CHECK_INT(connect_restart_decode(r->value, n, &tasks, &failed, err, sizeof(err)),
		          0);
		CHECK_INT(connect_restart_encode(tasks, failed, &b), 0);
		break;
	}
	case CONNECT_STATUS_TOPIC: {
		cJSON *j = cJSON_Parse(r->value), *t = cJSON_GetObjectItem(j, "topic");

		CHECK(t != NULL);
		CHECK_INT(
		    connect_topic_status_encode(
		        cJSON_GetStringValue(cJSON_GetObjectItem(t, "name")),
		        cJSON_GetStringValue(cJSON_GetObjectItem(t, "connector")),
		        (int32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "task")),
		        (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "discoverTimestamp")),
		        &b),
		    0);
		cJSON_Delete(j);
		break;
	}
	default: /* session-key, commit-, tasks-fencing-, logger-cluster-: skiff skips them */
		buf_addz(&b, r->value);
		break;
	}
	if (err[0] != '\0')
		fprintf(stderr, "%s: %s\n", r->key, err);
	CHECK_STR(text(&b), r->value);
	buf_free(&b);
}

static void test_captured(void)
{
	size_t kinds[CONNECT_STATUS_TOPIC + 1] = {0}, tombstones = 0;

	for (size_t i = 0; i < N_CAPTURED; i++) {
		const struct captured *r = &captured[i];
		struct connect_key k;

		key_round_trip(r, &k);
		/* Each key is of its topic's kinds. */
		CHECK((strcmp(r->topic, "status") == 0) == (k.kind >= CONNECT_STATUS_CONNECTOR));
		kinds[k.kind]++;
		if (r->value == NULL)
			tombstones++;
		else
			value_round_trip(r, &k);
	}
	CHECK_INT(N_CAPTURED, 57);
	CHECK_INT(tombstones, 8);
	for (size_t i = 0; i <= CONNECT_STATUS_TOPIC; i++)
		if (i != CONNECT_TASKS_FENCING) /* exactly-once was off */
			CHECK(kinds[i] > 0);
}

static void test_keys(void)
{
	struct connect_key k;
	struct buf b;

	/* The task number is after the last '-', as Connect splits it. */
	CHECK_INT(connect_key_parse("status-task-bad-one-0", 21, &k, NULL, 0), 0);
	CHECK_INT(k.kind, CONNECT_STATUS_TASK);
	CHECK(k.namelen == 7 && memcmp(k.name, "bad-one", 7) == 0 && k.task == 0);
	CHECK_INT(connect_key_parse("task-a-b-12", 11, &k, NULL, 0), 0);
	CHECK(k.namelen == 3 && memcmp(k.name, "a-b", 3) == 0 && k.task == 12);
	CHECK_INT(connect_key_parse("status-topic-data-1:connector-app", 33, &k, NULL, 0), 0);
	CHECK(k.topiclen == 6 && memcmp(k.topic, "data-1", 6) == 0);
	CHECK(k.namelen == 3 && memcmp(k.name, "app", 3) == 0);
	/* As Connect's split: task 1 of connector "app-". */
	CHECK_INT(connect_key_parse("task-app--1", 11, &k, NULL, 0), 0);
	CHECK(k.namelen == 4 && memcmp(k.name, "app-", 4) == 0 && k.task == 1);
	/* restart-connector- and tasks-fencing- are not read as connector-/task-. */
	CHECK_INT(connect_key_parse("restart-connector-x", 19, &k, NULL, 0), 0);
	CHECK_INT(k.kind, CONNECT_RESTART);
	CHECK_INT(connect_key_parse("tasks-fencing-x", 15, &k, NULL, 0), 0);
	CHECK_INT(k.kind, CONNECT_TASKS_FENCING);
	/* A UTF-8 name is a name. */
	CHECK_INT(connect_key_parse("connector-caf\xc3\xa9", 15, &k, NULL, 0), 0);

	static const char *const bad[] = {
	    "connector-",
	    "task-app",
	    "task-app-",
	    "task-app-x1",

	    "task-app-2147483648",
	    "task--0",
	    "status-task-app",
	    "status-topic-t",
	    "status-topic-:connector-a",
	    "status-topic-t:connector-",
	    "status-topic-t:conn-a",
	    "connector-a\x01",
	    "connector-a\xc2\x85",
	    "connector-\xff",
	    "session-keys",
	    "offsets",
	    "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[128] = "";

		CHECK_INT(connect_key_parse(bad[i], strlen(bad[i]), &k, err, sizeof(err)),
		          CONNECT_RECORDS_ERR_KEY);
		CHECK(err[0] != '\0');
	}
	/* A NUL inside a key is not a name. */
	CHECK_INT(connect_key_parse("connector-a\0b", 13, &k, NULL, 0), CONNECT_RECORDS_ERR_KEY);

	/* Formatting checks what it writes. */
	buf_init(&b, 64);
	k = (struct connect_key){.kind = CONNECT_CONNECTOR, .name = "", .namelen = 0};
	CHECK_INT(connect_key_format(&k, &b), CONNECT_RECORDS_ERR_KEY);
	k = (struct connect_key){
	    .kind = CONNECT_STATUS_TASK, .name = "a", .namelen = 1, .task = -1};
	CHECK_INT(connect_key_format(&k, &b), CONNECT_RECORDS_ERR_KEY);
	k = (struct connect_key){.kind = CONNECT_STATUS_TOPIC, .name = "a", .namelen = 1};
	CHECK_INT(connect_key_format(&k, &b), CONNECT_RECORDS_ERR_KEY);
	buf_free(&b);
	buf_init(&b, 10);
	k = (struct connect_key){.kind = CONNECT_TARGET_STATE, .name = "app", .namelen = 3};
	CHECK_INT(connect_key_format(&k, &b), CONNECT_RECORDS_ERR_TOOBIG);
	buf_free(&b);
}

static int target(const char *v, enum connect_target *t)
{
	return connect_target_decode(v, strlen(v), t, NULL, 0);
}

static void test_targets(void)
{
	enum connect_target t = CONNECT_TARGET_STARTED;
	struct buf b;

	/* V1 as captured: STOPPED travels as state.v2, PAUSED for old workers. */
	CHECK_INT(target("{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}", &t), 0);
	CHECK_INT(t, CONNECT_TARGET_STOPPED);
	/* V0 (KafkaConfigBackingStore's TARGET_STATE_V0: a worker before 3.5). */
	CHECK_INT(target("{\"state\":\"PAUSED\"}", &t), 0);
	CHECK_INT(t, CONNECT_TARGET_PAUSED);
	/* A state.v2 that is no string is passed over for state, as Connect does. */
	CHECK_INT(target("{\"state\":\"STARTED\",\"state.v2\":7}", &t), 0);
	CHECK_INT(t, CONNECT_TARGET_STARTED);
	CHECK_INT(target("{\"state\":\"STARTED\",\"state.v2\":\"RUNNING\"}", &t),
	          CONNECT_RECORDS_ERR_STATE);
	CHECK_INT(target("{\"state\":\"paused\"}", &t), CONNECT_RECORDS_ERR_STATE);
	CHECK_INT(target("{\"state\":null}", &t), CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(target("{\"state\":\"PAUSED\",\"state\":\"STARTED\"}", &t),
	          CONNECT_RECORDS_ERR_JSON);
	CHECK_INT(target("[\"PAUSED\"]", &t), CONNECT_RECORDS_ERR_JSON);
	CHECK_INT(target("{\"state\":\"PAUSED\"} x", &t), CONNECT_RECORDS_ERR_JSON);
	CHECK_INT(target("", &t), CONNECT_RECORDS_ERR_JSON);
	CHECK_INT(target(" {\"state\":\"PAUSED\"}\n", &t), 0);

	buf_init(&b, 256);
	CHECK_INT(connect_target_encode(CONNECT_TARGET_STOPPED, &b), 0);
	CHECK_STR(text(&b), "{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}");
	buf_free(&b);
	CHECK_STR(connect_target_name(CONNECT_TARGET_PAUSED), "PAUSED");
}

static void test_configs(void)
{
	const char *v;
	cJSON *p = NULL;
	char err[128] = "";
	struct buf b;

	v = "{\"properties\":{\"name\":\"app\",\"file\":\"/var/log/a.log\"},\"extra\":1}";
	CHECK_INT(connect_config_decode(v, strlen(v), &p, err, sizeof(err)), 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(p, "file")), "/var/log/a.log");
	cJSON_Delete(p);
	v = "{\"properties\":{\"tasks.max\":1}}";
	CHECK_INT(connect_config_decode(v, strlen(v), &p, err, sizeof(err)),
	          CONNECT_RECORDS_ERR_SHAPE);
	CHECK(p == NULL && strstr(err, "tasks.max") != NULL);
	v = "{\"properties\":{\"file\":null}}";
	CHECK_INT(connect_config_decode(v, strlen(v), &p, err, sizeof(err)),
	          CONNECT_RECORDS_ERR_SHAPE);
	/* Jackson would keep the second file silently. */
	v = "{\"properties\":{\"file\":\"/a\",\"file\":\"/etc/shadow\"}}";
	CHECK_INT(connect_config_decode(v, strlen(v), &p, err, sizeof(err)),
	          CONNECT_RECORDS_ERR_JSON);
	CHECK(strstr(err, "file") != NULL);
	v = "{\"props\":{}}";
	CHECK_INT(connect_config_decode(v, strlen(v), &p, err, sizeof(err)),
	          CONNECT_RECORDS_ERR_SHAPE);

	/* Strings escaped as Jackson writes them (convert_json_string). */
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "a\"b", "x\ny\\z\x01/");
	buf_init(&b, 256);
	CHECK_INT(connect_config_encode(p, &b), 0);
	CHECK_STR(text(&b), "{\"properties\":{\"a\\\"b\":\"x\\ny\\\\z\\u0001/\"}}");
	buf_free(&b);
	buf_init(&b, 8);
	CHECK_INT(connect_config_encode(p, &b), CONNECT_RECORDS_ERR_TOOBIG);
	buf_free(&b);
	cJSON_AddNumberToObject(p, "n", 1);
	buf_init(&b, 256);
	CHECK_INT(connect_config_encode(p, &b), CONNECT_RECORDS_ERR_SHAPE);
	buf_free(&b);
	cJSON_Delete(p);
}

static int status(const char *v, struct connect_status *s)
{
	return connect_status_decode(v, strlen(v), s, NULL, 0);
}

static void test_statuses(void)
{
	struct connect_status s;
	struct buf b;

	CHECK_INT(
	    status("{\"state\":\"STOPPED\",\"trace\":null,\"worker_id\":\"w\",\"generation\":3}",
	           &s),
	    0);
	CHECK(s.state == CONNECT_STATE_STOPPED && s.trace == NULL && s.generation == 3);
	CHECK_STR(s.worker_id, "w");
	connect_status_clear(&s);
	/* trace absent is null; members in another order are the same status. */
	CHECK_INT(status("{\"generation\":-1,\"worker_id\":\"w\",\"state\":\"DESTROYED\"}", &s), 0);
	CHECK(s.state == CONNECT_STATE_DESTROYED && s.generation == -1);
	/* DESTROYED is read, never written: a deletion is a tombstone. */
	buf_init(&b, 256);
	CHECK_INT(connect_status_encode(&s, &b), CONNECT_RECORDS_ERR_STATE);
	connect_status_clear(&s);
	/* Connect casts generation through Long: 3.0 and "3" are dropped there. */
	CHECK_INT(status("{\"state\":\"RUNNING\",\"worker_id\":\"w\",\"generation\":3.0}", &s),
	          CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(status("{\"state\":\"RUNNING\",\"worker_id\":\"w\",\"generation\":\"3\"}", &s),
	          CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(
	    status("{\"state\":\"RUNNING\",\"worker_id\":\"w\",\"generation\":2147483648}", &s),
	    CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(status("{\"state\":\"RUNNING\",\"worker_id\":\"w\"}", &s),
	          CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(status("{\"state\":\"BROKEN\",\"worker_id\":\"w\",\"generation\":1}", &s),
	          CONNECT_RECORDS_ERR_STATE);
	CHECK_INT(status("{\"worker_id\":\"w\",\"generation\":1}", &s), CONNECT_RECORDS_ERR_SHAPE);
	CHECK_INT(
	    status("{\"state\":\"RUNNING\",\"trace\":5,\"worker_id\":\"w\",\"generation\":1}", &s),
	    CONNECT_RECORDS_ERR_SHAPE);
	CHECK(s.trace == NULL && s.worker_id == NULL);

	/* Encoded in Connect's member order, the trace escaped as Jackson does. */
	s = (struct connect_status){CONNECT_STATE_FAILED, "E: x\n\tat y \xf0\x9f\x98\x80", "gw-1",
	                            7};
	buf_reset(&b);
	CHECK_INT(connect_status_encode(&s, &b), 0);
	CHECK_STR(text(&b), "{\"state\":\"FAILED\",\"trace\":\"E: x\\n\\tat y \\uD83D\\uDE00\","
	                    "\"worker_id\":\"gw-1\",\"generation\":7}");
	s.worker_id = NULL;
	CHECK_INT(connect_status_encode(&s, &b), CONNECT_RECORDS_ERR_SHAPE);
	buf_free(&b);
	CHECK_STR(connect_state_name(CONNECT_STATE_RESTARTING), "RESTARTING");
}

static void test_restarts(void)
{
	bool tasks = true, failed = true;
	const char *v = "{}";

	/* Missing members are Connect's defaults, false. */
	CHECK_INT(connect_restart_decode(v, strlen(v), &tasks, &failed, NULL, 0), 0);
	CHECK(!tasks && !failed);
	v = "{\"include-tasks\":\"true\"}";
	CHECK_INT(connect_restart_decode(v, strlen(v), &tasks, &failed, NULL, 0),
	          CONNECT_RECORDS_ERR_SHAPE);
}

int main(void)
{
	test_captured();
	test_keys();
	test_targets();
	test_configs();
	test_statuses();
	test_restarts();
	CHECK_STR(connect_records_strerror(CONNECT_RECORDS_ERR_STATE),
	          "a state Kafka Connect does not know");
	return testlib_done("test_connect_records");
}
