/* connect_records: see connect_records.h. The rules were read in Kafka
 * Connect's KafkaConfigBackingStore and KafkaStatusBackingStore and checked
 * against records a Connect 3.9.1 distributed worker wrote
 * (tests/unit/test_connect_records.c says where each one comes from). */
#include "fleet/connect_records.h"

#include "convert/convert.h"
#include "util/jsonspan.h"
#include "util/num.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATUS_TOPIC_SEP ":connector-"

/* Config topic prefixes in the order Connect's reader tries them, then the
 * status topic's. */
static const struct prefix {
	const char *text;
	enum connect_kind kind;
	bool task; /* NAME-N */
} prefixes[] = {
    {"target-state-", CONNECT_TARGET_STATE, false},
    {"connector-", CONNECT_CONNECTOR, false},
    {"task-", CONNECT_TASK, true},
    {"commit-", CONNECT_COMMIT, false},
    {"restart-connector-", CONNECT_RESTART, false},
    {"tasks-fencing-", CONNECT_TASKS_FENCING, false},
    {"logger-cluster-", CONNECT_LOGGER, false},
    {"status-connector-", CONNECT_STATUS_CONNECTOR, false},
    {"status-task-", CONNECT_STATUS_TASK, true},
    {"status-topic-", CONNECT_STATUS_TOPIC, false},
};

#define SESSION_KEY "session-key"

static const char *const states[] = {
    [CONNECT_STATE_UNASSIGNED] = "UNASSIGNED", [CONNECT_STATE_RUNNING] = "RUNNING",
    [CONNECT_STATE_PAUSED] = "PAUSED",         [CONNECT_STATE_FAILED] = "FAILED",
    [CONNECT_STATE_RESTARTING] = "RESTARTING", [CONNECT_STATE_STOPPED] = "STOPPED",
    [CONNECT_STATE_DESTROYED] = "DESTROYED",
};

static const char *const targets[] = {
    [CONNECT_TARGET_STARTED] = "STARTED",
    [CONNECT_TARGET_PAUSED] = "PAUSED",
    [CONNECT_TARGET_STOPPED] = "STOPPED",
};

const char *connect_records_strerror(int code)
{
	switch (code) {
	case CONNECT_RECORDS_OK:
		return "ok";
	case CONNECT_RECORDS_ERR_NOMEM:
		return "out of memory";
	case CONNECT_RECORDS_ERR_KEY:
		return "not a key Kafka Connect writes";
	case CONNECT_RECORDS_ERR_JSON:
		return "not one JSON object with each member once";
	case CONNECT_RECORDS_ERR_SHAPE:
		return "not the shape of Kafka Connect's value";
	case CONNECT_RECORDS_ERR_STATE:
		return "a state Kafka Connect does not know";
	case CONNECT_RECORDS_ERR_TOOBIG:
		return "the record would pass its size limit";
	default:
		return "failed";
	}
}

const char *connect_target_name(enum connect_target t)
{
	return (unsigned)t < sizeof(targets) / sizeof(targets[0]) ? targets[t] : "?";
}

const char *connect_state_name(enum connect_state s)
{
	return (unsigned)s < sizeof(states) / sizeof(states[0]) ? states[s] : "?";
}

static void why(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* ---- keys ----------------------------------------------------------------- */

/* A name Connect's REST API would have taken: non-empty UTF-8 without ISO
 * control characters (C0, DEL, C1). */
static bool good_name(const char *s, size_t n)
{
	if (n == 0 || !utf8_valid(s, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0))
			return false;
	}
	return true;
}

/* NAME-N: the number after the last '-', decimal digits within int32. */
static int split_task(const char *s, size_t n, struct connect_key *out)
{
	const char *dash = NULL;
	char digits[16];
	int64_t v;

	for (size_t i = n; i > 0; i--)
		if (s[i - 1] == '-') {
			dash = s + i - 1;
			break;
		}
	if (dash == NULL)
		return -1;
	size_t dn = n - (size_t)(dash + 1 - s);
	if (dn == 0 || dn >= sizeof(digits))
		return -1;
	for (size_t i = 0; i < dn; i++)
		if (dash[1 + i] < '0' || dash[1 + i] > '9')
			return -1;
	memcpy(digits, dash + 1, dn);
	digits[dn] = '\0';
	if (num_parse_i64(digits, 0, INT32_MAX, &v) != 0)
		return -1;
	out->namelen = (size_t)(dash - s);
	out->task = (int32_t)v;
	return 0;
}

/* TOPIC:connector-NAME (a topic name holds no ':'). */
static int split_topic(const char *s, size_t n, struct connect_key *out)
{
	const char *colon = memchr(s, ':', n);
	size_t seplen = strlen(STATUS_TOPIC_SEP);

	if (colon == NULL || colon == s || (size_t)(s + n - colon) < seplen ||
	    memcmp(colon, STATUS_TOPIC_SEP, seplen) != 0)
		return -1;
	out->topic = s;
	out->topiclen = (size_t)(colon - s);
	out->name = colon + seplen;
	out->namelen = n - out->topiclen - seplen;
	return 0;
}

int connect_key_parse(const char *key, size_t len, struct connect_key *out, char *errbuf,
                      size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len == strlen(SESSION_KEY) && memcmp(key, SESSION_KEY, len) == 0) {
		out->kind = CONNECT_SESSION_KEY;
		return 0;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		const struct prefix *p = &prefixes[i];
		size_t pl = strlen(p->text);
		int rc = 0;

		if (len < pl || memcmp(key, p->text, pl) != 0)
			continue;
		out->kind = p->kind;
		out->name = key + pl;
		out->namelen = len - pl;
		if (p->task)
			rc = split_task(out->name, out->namelen, out);
		else if (p->kind == CONNECT_STATUS_TOPIC)
			rc = split_topic(out->name, out->namelen, out);
		if (rc != 0) {
			why(errbuf, errlen, "a %skey without its parts", p->text);
			return CONNECT_RECORDS_ERR_KEY;
		}
		if (!good_name(out->name, out->namelen) ||
		    (out->topic != NULL && !good_name(out->topic, out->topiclen))) {
			why(errbuf, errlen,
			    "a %skey whose name is empty, not UTF-8 or holds a "
			    "control character",
			    p->text);
			return CONNECT_RECORDS_ERR_KEY;
		}
		return 0;
	}
	why(errbuf, errlen, "%s", "a key of no kind Kafka Connect writes");
	return CONNECT_RECORDS_ERR_KEY;
}

static int buf_code(const struct buf *b)
{
	switch (buf_err(b)) {
	case 0:
		return 0;
	case BUF_ERR_NOMEM:
		return CONNECT_RECORDS_ERR_NOMEM;
	default:
		return CONNECT_RECORDS_ERR_TOOBIG;
	}
}

int connect_key_format(const struct connect_key *k, struct buf *out)
{
	const struct prefix *p = NULL;

	if (k->kind == CONNECT_SESSION_KEY) {
		buf_addz(out, SESSION_KEY);
		return buf_code(out);
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && p == NULL; i++)
		if (prefixes[i].kind == k->kind)
			p = &prefixes[i];
	if (p == NULL || k->name == NULL || k->namelen == 0 || (p->task && k->task < 0) ||
	    (k->kind == CONNECT_STATUS_TOPIC && (k->topic == NULL || k->topiclen == 0)))
		return CONNECT_RECORDS_ERR_KEY;
	buf_addz(out, p->text);
	if (k->kind == CONNECT_STATUS_TOPIC) {
		buf_add(out, k->topic, k->topiclen);
		buf_addz(out, STATUS_TOPIC_SEP);
	}
	buf_add(out, k->name, k->namelen);
	if (p->task)
		buf_printf(out, "-%d", (int)k->task);
	return buf_code(out);
}

/* ---- JSON ------------------------------------------------------------------ */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The member of obj named twice, or NULL. */
static const char *twice(const cJSON *obj)
{
	for (const cJSON *a = obj->child; a != NULL; a = a->next)
		for (const cJSON *b = a->next; b != NULL; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return a->string;
	return NULL;
}

/* value (len bytes) as one JSON object, each member once (at this level:
 * nested objects are checked by whoever reads them). */
static int parse_object(const char *value, size_t len, cJSON **out, char *errbuf, size_t errlen)
{
	const char *end = NULL, *dup;
	cJSON *j;

	*out = NULL;
	if (value == NULL || len == 0) {
		why(errbuf, errlen, "%s", "an empty value");
		return CONNECT_RECORDS_ERR_JSON;
	}
	j = cJSON_ParseWithLengthOpts(value, len, &end, 0);
	if (j == NULL) {
		why(errbuf, errlen, "%s", "not JSON");
		return CONNECT_RECORDS_ERR_JSON;
	}
	while (end != NULL && end < value + len && blank(*end))
		end++;
	if (end != value + len || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		why(errbuf, errlen, "%s", "not one JSON object");
		return CONNECT_RECORDS_ERR_JSON;
	}
	if ((dup = twice(j)) != NULL) {
		why(errbuf, errlen, "member %s named twice", dup);
		cJSON_Delete(j);
		return CONNECT_RECORDS_ERR_JSON;
	}
	*out = j;
	return 0;
}

/* Appends the JSON string of s as Jackson writes it. */
static void add_string(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	uint64_t replaced = 0;
	char *room = buf_room(b, convert_json_string_max(n));

	if (room != NULL)
		buf_commit(b, convert_json_string(room, s, n, &replaced));
}

/* A string member (NULL: absent or null). Returns 0, or _SHAPE. */
static int string_member(const cJSON *obj, const char *name, const char **out, char *errbuf,
                         size_t errlen)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, name);

	*out = NULL;
	if (m == NULL || cJSON_IsNull(m))
		return 0;
	if (!cJSON_IsString(m)) {
		why(errbuf, errlen, "member %s is not a string", name);
		return CONNECT_RECORDS_ERR_SHAPE;
	}
	*out = m->valuestring;
	return 0;
}

/* ---- configurations ---------------------------------------------------------- */

int connect_config_decode(const char *value, size_t len, cJSON **properties, char *errbuf,
                          size_t errlen)
{
	cJSON *j = NULL, *p;
	const char *dup;
	int rc;

	*properties = NULL;
	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	p = cJSON_DetachItemFromObjectCaseSensitive(j, "properties");
	cJSON_Delete(j);
	if (!cJSON_IsObject(p)) {
		cJSON_Delete(p);
		why(errbuf, errlen, "%s", "member properties is not an object");
		return CONNECT_RECORDS_ERR_SHAPE;
	}
	if ((dup = twice(p)) != NULL) {
		why(errbuf, errlen, "property %s named twice", dup);
		cJSON_Delete(p);
		return CONNECT_RECORDS_ERR_JSON;
	}
	for (const cJSON *kv = p->child; kv != NULL; kv = kv->next)
		if (!cJSON_IsString(kv)) {
			why(errbuf, errlen, "property %s is not a string", kv->string);
			cJSON_Delete(p);
			return CONNECT_RECORDS_ERR_SHAPE;
		}
	*properties = p;
	return 0;
}

int connect_config_encode(const cJSON *properties, struct buf *out)
{
	bool first = true;

	if (!cJSON_IsObject(properties))
		return CONNECT_RECORDS_ERR_SHAPE;
	for (const cJSON *kv = properties->child; kv != NULL; kv = kv->next)
		if (!cJSON_IsString(kv))
			return CONNECT_RECORDS_ERR_SHAPE;
	buf_addz(out, "{\"properties\":{");
	for (const cJSON *kv = properties->child; kv != NULL; kv = kv->next) {
		if (!first)
			buf_addc(out, ',');
		first = false;
		add_string(out, kv->string);
		buf_addc(out, ':');
		add_string(out, kv->valuestring);
	}
	buf_addz(out, "}}");
	return buf_code(out);
}

/* ---- target states ------------------------------------------------------------ */

static int target_of(const char *name, enum connect_target *out)
{
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (strcmp(name, targets[i]) == 0) {
			*out = (enum connect_target)i;
			return 0;
		}
	return -1;
}

int connect_target_decode(const char *value, size_t len, enum connect_target *out, char *errbuf,
                          size_t errlen)
{
	const cJSON *v2, *v1;
	cJSON *j = NULL;
	const char *name = NULL;
	int rc;

	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	/* Connect: a state.v2 that is not a string is logged and passed over
	 * for state; one that names no state drops the record. */
	v2 = cJSON_GetObjectItemCaseSensitive(j, "state.v2");
	v1 = cJSON_GetObjectItemCaseSensitive(j, "state");
	if (cJSON_IsString(v2))
		name = v2->valuestring;
	else if (cJSON_IsString(v1))
		name = v1->valuestring;
	if (name == NULL) {
		why(errbuf, errlen, "%s", "neither state.v2 nor state is a string");
		rc = CONNECT_RECORDS_ERR_SHAPE;
	} else if (target_of(name, out) != 0) {
		why(errbuf, errlen, "target state %s is none of STARTED, PAUSED, STOPPED", name);
		rc = CONNECT_RECORDS_ERR_STATE;
	}
	cJSON_Delete(j);
	return rc;
}

int connect_target_encode(enum connect_target t, struct buf *out)
{
	if ((unsigned)t >= sizeof(targets) / sizeof(targets[0]))
		return CONNECT_RECORDS_ERR_STATE;
	/* V1: a worker before 3.5 reads state alone, and knows no STOPPED. */
	buf_printf(out, "{\"state\":\"%s\",\"state.v2\":\"%s\"}",
	           t == CONNECT_TARGET_STOPPED ? "PAUSED" : targets[t], targets[t]);
	return buf_code(out);
}

/* ---- statuses --------------------------------------------------------------------- */

void connect_status_clear(struct connect_status *s)
{
	free(s->trace);
	free(s->worker_id);
	memset(s, 0, sizeof(*s));
}

/* The member generation as Connect reads it: a JSON integer (Jackson makes
 * it a Long; 3.0 or "3" fail Connect's cast), here within int32. */
static int generation(const char *value, size_t len, int32_t *out, char *errbuf, size_t errlen)
{
	const char *v;
	size_t n, i;
	char text[24];
	int64_t g;

	if (!jsonspan_member(value, len, "generation", &v, &n) || n == 0 || n >= sizeof(text)) {
		why(errbuf, errlen, "%s", "member generation is missing or not an integer");
		return CONNECT_RECORDS_ERR_SHAPE;
	}
	for (i = v[0] == '-' ? 1 : 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			break;
	memcpy(text, v, n);
	text[n] = '\0';
	if (i != n || num_parse_i64(text, INT32_MIN, INT32_MAX, &g) != 0) {
		why(errbuf, errlen, "member generation %s is not an int32", text);
		return CONNECT_RECORDS_ERR_SHAPE;
	}
	*out = (int32_t)g;
	return 0;
}

int connect_status_decode(const char *value, size_t len, struct connect_status *out, char *errbuf,
                          size_t errlen)
{
	const char *state = NULL, *trace = NULL, *worker = NULL;
	cJSON *j = NULL;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	if ((rc = string_member(j, "state", &state, errbuf, errlen)) != 0 ||
	    (rc = string_member(j, "trace", &trace, errbuf, errlen)) != 0 ||
	    (rc = string_member(j, "worker_id", &worker, errbuf, errlen)) != 0 ||
	    (rc = generation(value, len, &out->generation, errbuf, errlen)) != 0)
		goto out;
	if (state == NULL) {
		why(errbuf, errlen, "%s", "member state is missing");
		rc = CONNECT_RECORDS_ERR_SHAPE;
		goto out;
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(state, states[i]) == 0)
			break;
	if (i == sizeof(states) / sizeof(states[0])) {
		why(errbuf, errlen, "state %s is no state of Kafka Connect's", state);
		rc = CONNECT_RECORDS_ERR_STATE;
		goto out;
	}
	out->state = (enum connect_state)i;
	if ((trace != NULL && (out->trace = strdup(trace)) == NULL) ||
	    (worker != NULL && (out->worker_id = strdup(worker)) == NULL))
		rc = CONNECT_RECORDS_ERR_NOMEM;
out:
	cJSON_Delete(j);
	if (rc != 0)
		connect_status_clear(out);
	return rc;
}

int connect_status_encode(const struct connect_status *s, struct buf *out)
{
	if ((unsigned)s->state >= sizeof(states) / sizeof(states[0]) ||
	    s->state == CONNECT_STATE_DESTROYED)
		return CONNECT_RECORDS_ERR_STATE;
	if (s->worker_id == NULL)
		return CONNECT_RECORDS_ERR_SHAPE;
	buf_printf(out, "{\"state\":\"%s\",\"trace\":", states[s->state]);
	if (s->trace != NULL)
		add_string(out, s->trace);
	else
		buf_addz(out, "null");
	buf_addz(out, ",\"worker_id\":");
	add_string(out, s->worker_id);
	buf_printf(out, ",\"generation\":%d}", (int)s->generation);
	return buf_code(out);
}

/* ---- restart requests, topic statuses ---------------------------------------------- */

static int bool_member(const cJSON *obj, const char *name, bool *out, char *errbuf, size_t errlen)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, name);

	*out = false;
	if (m == NULL)
		return 0;
	if (!cJSON_IsBool(m)) {
		why(errbuf, errlen, "member %s is not a boolean", name);
		return CONNECT_RECORDS_ERR_SHAPE;
	}
	*out = cJSON_IsTrue(m);
	return 0;
}

int connect_restart_decode(const char *value, size_t len, bool *include_tasks, bool *only_failed,
                           char *errbuf, size_t errlen)
{
	cJSON *j = NULL;
	int rc;

	*include_tasks = *only_failed = false;
	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	if ((rc = bool_member(j, "include-tasks", include_tasks, errbuf, errlen)) == 0)
		rc = bool_member(j, "only-failed", only_failed, errbuf, errlen);
	cJSON_Delete(j);
	return rc;
}

int connect_restart_encode(bool include_tasks, bool only_failed, struct buf *out)
{
	buf_printf(out, "{\"include-tasks\":%s,\"only-failed\":%s}",
	           include_tasks ? "true" : "false", only_failed ? "true" : "false");
	return buf_code(out);
}

int connect_topic_status_encode(const char *topic, const char *connector, int32_t task,
                                int64_t discover_ms, struct buf *out)
{
	buf_addz(out, "{\"topic\":{\"name\":");
	add_string(out, topic);
	buf_addz(out, ",\"connector\":");
	add_string(out, connector);
	buf_printf(out, ",\"task\":%d,\"discoverTimestamp\":%lld}}", (int)task,
	           (long long)discover_ms);
	return buf_code(out);
}
