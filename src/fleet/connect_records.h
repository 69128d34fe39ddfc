/* connect_records: the records Kafka Connect's distributed worker keeps on
 * its config.storage.topic and status.storage.topic, byte for byte as it
 * writes them (issue 28: a fleet steered through these topics).
 *
 * Keys are plain strings (Connect's StringSerializer):
 *   config topic  connector-NAME, target-state-NAME, task-NAME-N, commit-NAME,
 *                 restart-connector-NAME, tasks-fencing-NAME, session-key,
 *                 logger-cluster-NAMESPACE
 *   status topic  status-connector-NAME, status-task-NAME-N,
 *                 status-topic-TOPIC:connector-NAME
 * A task key's number is after its last '-' (a name may hold '-':
 * status-task-bad-one-0 is task 0 of bad-one), as Connect splits it.
 *
 * Values are Connect's internal JsonConverter's (schemas.enable=false):
 * compact JSON, members in the order of Connect's schema, an unset optional
 * member written as null, strings escaped as Jackson escapes them. A deleted
 * connector is a tombstone (a null value, which is no value here: the caller
 * sees it on the record), never an encoded "DESTROYED".
 *   connector, task   {"properties":{"k":"v",...}}
 *   target state      {"state":"PAUSED","state.v2":"STOPPED"} (V1: state is
 *                     what a worker before 3.5 knows, STOPPED read as PAUSED;
 *                     a reader takes state.v2 when it is a string)
 *   status            {"state":"RUNNING","trace":null,"worker_id":"w","generation":3}
 *   restart request   {"include-tasks":true,"only-failed":false}
 *   topic status      {"topic":{"name":"t","connector":"c","task":0,"discoverTimestamp":ms}}
 *
 * Decoders refuse what Connect would drop or misread, with a named code and
 * errbuf naming the member: a member of another type than Connect's schema,
 * a state Connect does not know, a member named twice (Jackson keeps the
 * last one silently; which was meant is a guess). Members Connect does not
 * read are ignored, as Connect ignores them.
 *
 * Pure functions, any thread; never logs. Error convention: util/err.h. */
#ifndef SKIFF_CONNECT_RECORDS_H
#define SKIFF_CONNECT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/buf.h"
#include "util/err.h"

enum {
	CONNECT_RECORDS_OK = 0,
	CONNECT_RECORDS_ERR_NOMEM = -2,
	CONNECT_RECORDS_ERR_KEY = -3,    /* a key of no kind Connect writes, or malformed */
	CONNECT_RECORDS_ERR_JSON = -4,   /* not one JSON object, or a member named twice */
	CONNECT_RECORDS_ERR_SHAPE = -5,  /* a member missing or of another type than Connect's */
	CONNECT_RECORDS_ERR_STATE = -6,  /* a state Connect does not know (or cannot write) */
	CONNECT_RECORDS_ERR_TOOBIG = -7, /* the encoding would pass the buffer's maximum */
};

/* Short text for a CONNECT_RECORDS_ERR_* code. */
const char *connect_records_strerror(int code);

enum connect_kind {
	CONNECT_CONNECTOR,        /* connector-NAME */
	CONNECT_TARGET_STATE,     /* target-state-NAME */
	CONNECT_TASK,             /* task-NAME-N */
	CONNECT_COMMIT,           /* commit-NAME */
	CONNECT_RESTART,          /* restart-connector-NAME */
	CONNECT_TASKS_FENCING,    /* tasks-fencing-NAME */
	CONNECT_SESSION_KEY,      /* session-key */
	CONNECT_LOGGER,           /* logger-cluster-NAMESPACE (name) */
	CONNECT_STATUS_CONNECTOR, /* status-connector-NAME */
	CONNECT_STATUS_TASK,      /* status-task-NAME-N */
	CONNECT_STATUS_TOPIC,     /* status-topic-TOPIC:connector-NAME */
};

/* A key taken apart. name and topic point into the key given to
 * connect_key_parse (not NUL-terminated), or are what connect_key_format
 * writes. */
struct connect_key {
	enum connect_kind kind;
	const char *name; /* connector name (logger: namespace); NULL: session-key */
	size_t namelen;
	const char *topic; /* CONNECT_STATUS_TOPIC only */
	size_t topiclen;
	int32_t task; /* CONNECT_TASK, CONNECT_STATUS_TASK */
};

/* Takes the key of len bytes apart into *out. The name must be non-empty
 * UTF-8 without control characters; a task number decimal digits within
 * int32. Returns 0 or CONNECT_RECORDS_ERR_KEY (errbuf says why). */
int connect_key_parse(const char *key, size_t len, struct connect_key *out, char *errbuf,
                      size_t errlen);

/* Appends k's key text to out. Returns 0, CONNECT_RECORDS_ERR_KEY (an empty
 * name, a negative task) or the buffer's error as CONNECT_RECORDS_ERR_TOOBIG
 * / _NOMEM. */
int connect_key_format(const struct connect_key *k, struct buf *out);

/* ---- connector and task configurations -------------------------------- */

/* The properties of a connector-/task- value: *properties is a new cJSON
 * object of strings in the record's order (the caller cJSON_Deletes it).
 * A property whose value is not a string (null included: skiff's
 * configurations have no null) is CONNECT_RECORDS_ERR_SHAPE. */
int connect_config_decode(const char *value, size_t len, cJSON **properties, char *errbuf,
                          size_t errlen);

/* Appends {"properties":{...}} for an object of strings (in its order). */
int connect_config_encode(const cJSON *properties, struct buf *out);

/* ---- target states ------------------------------------------------------ */

enum connect_target {
	CONNECT_TARGET_STARTED,
	CONNECT_TARGET_PAUSED,
	CONNECT_TARGET_STOPPED,
};

/* Connect's name of t ("STARTED", ...). */
const char *connect_target_name(enum connect_target t);

/* The state a target-state value asks for: state.v2 when it is a string,
 * else state (a record of a worker before 3.5). An unknown name is
 * CONNECT_RECORDS_ERR_STATE, no string in either member _SHAPE. */
int connect_target_decode(const char *value, size_t len, enum connect_target *out, char *errbuf,
                          size_t errlen);

/* Appends the V1 value Connect writes for t. */
int connect_target_encode(enum connect_target t, struct buf *out);

/* ---- statuses ------------------------------------------------------------ */

enum connect_state {
	CONNECT_STATE_UNASSIGNED,
	CONNECT_STATE_RUNNING,
	CONNECT_STATE_PAUSED,
	CONNECT_STATE_FAILED,
	CONNECT_STATE_RESTARTING,
	CONNECT_STATE_STOPPED,
	CONNECT_STATE_DESTROYED, /* read only: Connect writes a tombstone instead */
};

const char *connect_state_name(enum connect_state s);

/* A status-connector-/status-task- value. Decoded: trace and worker_id are
 * malloc'd (NULL for null or absent; connect_status_clear frees them). */
struct connect_status {
	enum connect_state state;
	char *trace;
	char *worker_id;
	int32_t generation;
};

/* Decodes a status value into *out (cleared first). generation must be a
 * JSON integer within int32 (Connect casts it to Long: 3.0 is dropped). */
int connect_status_decode(const char *value, size_t len, struct connect_status *out, char *errbuf,
                          size_t errlen);

/* Frees s's strings; s may be half decoded. */
void connect_status_clear(struct connect_status *s);

/* Appends s's value (trace NULL: null). DESTROYED is
 * CONNECT_RECORDS_ERR_STATE: a deletion is a tombstone. worker_id must not
 * be NULL (Connect's schema requires it): _SHAPE. */
int connect_status_encode(const struct connect_status *s, struct buf *out);

/* ---- restart requests, topic statuses ------------------------------------ */

/* A restart-connector- value; a missing member is Connect's default, false. */
int connect_restart_decode(const char *value, size_t len, bool *include_tasks, bool *only_failed,
                           char *errbuf, size_t errlen);

int connect_restart_encode(bool include_tasks, bool only_failed, struct buf *out);

/* Appends a status-topic- value: topic, connector, task, discover_ms. */
int connect_topic_status_encode(const char *topic, const char *connector, int32_t task,
                                int64_t discover_ms, struct buf *out);

#endif
