/* fleet_heartbeat: see fleet_heartbeat.h.
 *
 * Why the bound holds by construction: the skeleton (every member name,
 * empty strings and lists) plus nine numbers of at most 20 characters plus
 * the "truncated" member is below FLEET_HEARTBEAT_MAX (the _Static_assert
 * below); the encoder measures the skeleton with this heartbeat's numbers,
 * and gives strings and list items only the bytes left. */
#include "fleet/fleet_heartbeat.h"

#include "convert/convert.h"
#include "util/jsonspan.h"
#include "util/num.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKELETON                                                                                   \
	"{\"device\":\"\",\"version\":\"\",\"at\":,\"seq\":,\"interval_ms\":,\"health\":\"\","     \
	"\"reason\":null,\"last_ack_ms\":,\"lost\":{\"records\":,\"bytes\":,\"files\":},"          \
	"\"backlog_bytes\":,\"rss_kb\":,\"connectors\":[],\"groups\":[],\"applied\":{}}"
#define TRUNCATED ",\"truncated\":{\"connectors\":,\"groups\":,\"applied\":,\"text\":}"
#define NUMBERS 9     /* at, seq, interval_ms, last_ack_ms, lost x3, backlog_bytes, rss_kb */
#define NUMBER_MAX 20 /* -9223372036854775808 */
#define COUNT_MAX 99999
#define COUNT_DIGITS 5

_Static_assert(sizeof(SKELETON) - 1 + NUMBERS * NUMBER_MAX + sizeof(TRUNCATED) - 1 +
                       4 * COUNT_DIGITS <=
                   FLEET_HEARTBEAT_MAX,
               "a heartbeat's numbers and names alone must fit its bound");

/* Escaped caps (quotes included) of the strings, when room allows. */
#define DEVICE_CAP (200 + 2)
#define HEALTH_CAP (32 + 2)
#define VERSION_CAP (64 + 2)
#define REASON_CAP (200 + 2)

static const char *const records[] = {
    [CONNECT_CONNECTOR] = "connector",
    [CONNECT_TARGET_STATE] = "target-state",
    [CONNECT_RESTART] = "restart",
};

const char *fleet_heartbeat_strerror(int code)
{
	switch (code) {
	case FLEET_HEARTBEAT_OK:
		return "ok";
	case FLEET_HEARTBEAT_ERR_NOMEM:
		return "out of memory";
	case FLEET_HEARTBEAT_ERR_JSON:
		return "not one JSON object with each member once";
	case FLEET_HEARTBEAT_ERR_SHAPE:
		return "not the shape of skiff's heartbeat or outcome";
	case FLEET_HEARTBEAT_ERR_TOOBIG:
		return "the value passes its size limit";
	case FLEET_HEARTBEAT_ERR_ARG:
		return "a member that must be given is missing";
	default:
		return "failed";
	}
}

const char *fleet_outcome_name(enum fleet_outcome_kind k)
{
	return k == FLEET_OUTCOME_APPLIED   ? "APPLIED"
	       : k == FLEET_OUTCOME_REFUSED ? "REFUSED"
	                                    : "?";
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

static int buf_code(const struct buf *b)
{
	switch (buf_err(b)) {
	case 0:
		return 0;
	case BUF_ERR_NOMEM:
		return FLEET_HEARTBEAT_ERR_NOMEM;
	default:
		return FLEET_HEARTBEAT_ERR_TOOBIG;
	}
}

/* ---- escaping within a budget ---------------------------------------------- */

/* Appends the JSON string of n bytes of s as Jackson writes it. Escaped
 * aside first: the worst case's room (6 bytes a byte) asked of the bounded
 * output buffer failed a heartbeat whose topic and id passed about 60
 * bytes, though the escaped text fits. */
static void add_string(struct buf *b, const char *s, size_t n)
{
	uint64_t replaced = 0;
	char *tmp = malloc(convert_json_string_max(n));

	char *room;

	if (tmp != NULL) {
		buf_add(b, tmp, convert_json_string(tmp, s, n, &replaced));
		free(tmp);
	} else if ((room = buf_room(b, convert_json_string_max(n))) != NULL) {
		buf_commit(b, convert_json_string(room, s, n, &replaced));
	}
}

/* Bytes of the JSON string of n bytes of s (scratch: a buffer to escape in). */
static size_t escaped_len(struct buf *scratch, const char *s, size_t n)
{
	buf_reset(scratch);
	add_string(scratch, s, n);
	return buf_err(scratch) ? SIZE_MAX : buf_len(scratch);
}

/* How many bytes of s (a character boundary) escape to at most cap bytes
 * (cap >= 2: the quotes); SIZE_MAX on allocation failure. */
static size_t fit(struct buf *scratch, const char *s, size_t cap)
{
	size_t len = strlen(s), n = len, e, step;

	if (n + 2 > cap)
		n = cap - 2;
	if (n < len && n > 0)
		n = utf8_cut(s, len, n);
	while (n > 0) {
		if ((e = escaped_len(scratch, s, n)) == SIZE_MAX)
			return SIZE_MAX;
		if (e <= cap)
			break;
		/* A byte escapes to at most 6: drop at least what is over / 6. */
		step = (e - cap + 5) / 6;
		n = n > step ? utf8_cut(s, len, n - step) : 0;
	}
	return n;
}

/* ---- heartbeats ----------------------------------------------------------------- */

/* What of a heartbeat's strings and lists goes out. */
struct cut {
	size_t device, version, health, reason; /* bytes of each string */
	size_t connectors, groups, applied;     /* first items kept */
	int64_t text;                           /* strings cut */
	bool truncated;                         /* write the truncated member */
};

static void add_count(struct buf *b, const char *name, size_t total, size_t kept, bool first)
{
	size_t left = total - kept;

	buf_printf(b, "%s\"%s\":%zu", first ? "" : ",", name, left > COUNT_MAX ? COUNT_MAX : left);
}

static void add_applied(struct buf *b, const struct fleet_heartbeat_applied *a)
{
	add_string(b, a->topic, strlen(a->topic));
	buf_addz(b, ":{\"id\":");
	if (a->id != NULL)
		add_string(b, a->id, strlen(a->id));
	else
		buf_addz(b, "null");
	buf_printf(b, ",\"offset\":%lld}", (long long)a->offset);
}

/* Writes hb as c says (the members in SKELETON's order). */
static void emit(const struct fleet_heartbeat *hb, const struct cut *c, struct buf *b)
{
	buf_addz(b, "{\"device\":");
	add_string(b, hb->device, c->device);
	buf_addz(b, ",\"version\":");
	add_string(b, hb->version, c->version);
	buf_printf(b, ",\"at\":%lld,\"seq\":%lld,\"interval_ms\":%lld,\"health\":",
	           (long long)hb->at_ms, (long long)hb->seq, (long long)hb->interval_ms);
	add_string(b, hb->health, c->health);
	buf_addz(b, ",\"reason\":");
	if (hb->reason != NULL)
		add_string(b, hb->reason, c->reason);
	else
		buf_addz(b, "null");
	if (hb->last_ack_ms >= 0)
		buf_printf(b, ",\"last_ack_ms\":%lld", (long long)hb->last_ack_ms);
	else
		buf_addz(b, ",\"last_ack_ms\":null");
	buf_printf(
	    b,
	    ",\"lost\":{\"records\":%lld,\"bytes\":%lld,\"files\":%lld},\"backlog_bytes\":%lld,"
	    "\"rss_kb\":%lld,\"connectors\":[",
	    (long long)hb->lost_records, (long long)hb->lost_bytes, (long long)hb->lost_files,
	    (long long)hb->backlog_bytes, (long long)hb->rss_kb);
	for (size_t i = 0; i < c->connectors; i++) {
		if (i > 0)
			buf_addc(b, ',');
		add_string(b, hb->connectors[i], strlen(hb->connectors[i]));
	}
	buf_addz(b, "],\"groups\":[");
	for (size_t i = 0; i < c->groups; i++) {
		if (i > 0)
			buf_addc(b, ',');
		add_string(b, hb->groups[i], strlen(hb->groups[i]));
	}
	buf_addz(b, "],\"applied\":{");
	for (size_t i = 0; i < c->applied; i++) {
		if (i > 0)
			buf_addc(b, ',');
		add_applied(b, &hb->applied[i]);
	}
	buf_addc(b, '}');
	if (c->truncated) {
		buf_addz(b, ",\"truncated\":{");
		add_count(b, "connectors", hb->nconnectors, c->connectors, true);
		add_count(b, "groups", hb->ngroups, c->groups, false);
		add_count(b, "applied", hb->napplied, c->applied, false);
		buf_printf(b, ",\"text\":%lld}",
		           (long long)(c->text > COUNT_MAX ? COUNT_MAX : c->text));
	}
	buf_addc(b, '}');
}

/* One string into *room: its bytes kept (counted in c->text when cut).
 * base: what the skeleton already holds for it (2: ""). */
static int take_string(struct buf *scratch, const char *s, size_t cap, size_t base, long long *room,
                       size_t *kept, struct cut *c)
{
	size_t allow = (size_t)(*room + (long long)base), n, e;

	if (allow > cap)
		allow = cap;
	if (allow < 2)
		allow = 2;
	if ((n = fit(scratch, s, allow)) == SIZE_MAX ||
	    (e = escaped_len(scratch, s, n)) == SIZE_MAX)
		return FLEET_HEARTBEAT_ERR_NOMEM;
	if (n < strlen(s))
		c->text++;
	*room -= (long long)e - (long long)base;
	*kept = n;
	return 0;
}

/* How many of the n strings of v fit in *room (the first ones, a comma
 * between two). */
static size_t take_items(struct buf *scratch, const char *const *v, size_t n, long long *room)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t len = strlen(v[i]), e;

		if ((long long)len + 2 + (i > 0) > *room)
			break;
		e = escaped_len(scratch, v[i], len);
		if (e == SIZE_MAX || (long long)e + (i > 0) > *room)
			break;
		*room -= (long long)e + (i > 0);
	}
	return i;
}

static size_t take_applied(struct buf *scratch, const struct fleet_heartbeat *hb, long long *room)
{
	size_t i;

	for (i = 0; i < hb->napplied; i++) {
		const struct fleet_heartbeat_applied *a = &hb->applied[i];
		size_t raw = strlen(a->topic) + (a->id ? strlen(a->id) : 0);

		if ((long long)raw > *room)
			break;
		buf_reset(scratch);
		if (i > 0)
			buf_addc(scratch, ',');
		add_applied(scratch, a);
		if (buf_err(scratch) || (long long)buf_len(scratch) > *room)
			break;
		*room -= (long long)buf_len(scratch);
	}
	return i;
}

/* Decides what goes out: all of it when it fits, else with room kept for
 * the truncated member. */
static int plan_cut(const struct fleet_heartbeat *hb, size_t skeleton, bool truncated,
                    struct buf *scratch, struct cut *c)
{
	long long room = FLEET_HEARTBEAT_MAX - (long long)skeleton;
	int rc;

	memset(c, 0, sizeof(*c));
	c->truncated = truncated;
	if (truncated)
		room -= (long long)(sizeof(TRUNCATED) - 1 + 4 * COUNT_DIGITS);
	if ((rc = take_string(scratch, hb->device, DEVICE_CAP, 2, &room, &c->device, c)) != 0 ||
	    (rc = take_string(scratch, hb->health, HEALTH_CAP, 2, &room, &c->health, c)) != 0 ||
	    (rc = take_string(scratch, hb->version, VERSION_CAP, 2, &room, &c->version, c)) != 0 ||
	    (hb->reason != NULL &&
	     (rc = take_string(scratch, hb->reason, REASON_CAP, 2, &room, &c->reason, c)) != 0))
		return rc;
	c->connectors = take_items(scratch, hb->connectors, hb->nconnectors, &room);
	c->groups = take_items(scratch, hb->groups, hb->ngroups, &room);
	c->applied = take_applied(scratch, hb, &room);
	return 0;
}

static bool whole(const struct fleet_heartbeat *hb, const struct cut *c)
{
	return c->text == 0 && c->connectors == hb->nconnectors && c->groups == hb->ngroups &&
	       c->applied == hb->napplied;
}

int fleet_heartbeat_encode(const struct fleet_heartbeat *hb, struct buf *out)
{
	struct buf scratch, b;
	struct cut c = {0};
	int rc;

	if (hb->device == NULL || hb->version == NULL || hb->health == NULL)
		return FLEET_HEARTBEAT_ERR_ARG;
	for (size_t i = 0; i < hb->nconnectors; i++)
		if (hb->connectors[i] == NULL)
			return FLEET_HEARTBEAT_ERR_ARG;
	for (size_t i = 0; i < hb->ngroups; i++)
		if (hb->groups[i] == NULL)
			return FLEET_HEARTBEAT_ERR_ARG;
	for (size_t i = 0; i < hb->napplied; i++)
		if (hb->applied[i].topic == NULL)
			return FLEET_HEARTBEAT_ERR_ARG;
	buf_init(&scratch, convert_json_string_max(FLEET_HEARTBEAT_MAX));
	buf_init(&b, FLEET_HEARTBEAT_MAX);
	emit(hb, &c, &b); /* the skeleton with this heartbeat's numbers */
	if ((rc = buf_code(&b)) != 0)
		goto out;
	rc = plan_cut(hb, buf_len(&b), false, &scratch, &c);
	if (rc == 0 && !whole(hb, &c))
		rc = plan_cut(hb, buf_len(&b), true, &scratch, &c);
	if (rc != 0)
		goto out;
	buf_reset(&b);
	emit(hb, &c, &b);
	/* buf's maximum is the bound: passing it is a bug here, not a
	 * truncation, and fails loudly. */
	if ((rc = buf_code(&b)) == 0) {
		buf_add(out, buf_ptr(&b), buf_len(&b));
		rc = buf_code(out);
	}
out:
	buf_free(&scratch);
	buf_free(&b);
	return rc;
}

/* ---- decoding ------------------------------------------------------------------- */

struct owned {
	cJSON *json;
	const char **connectors;
	const char **groups;
	struct fleet_heartbeat_applied *applied;
};

/* value (len bytes) as one JSON object, each of its members once. */
static int parse_object(const char *value, size_t len, cJSON **out, char *errbuf, size_t errlen)
{
	const char *end = NULL;
	cJSON *j;

	*out = NULL;
	if (len > FLEET_HEARTBEAT_DECODE_MAX) {
		why(errbuf, errlen, "a value of %zu bytes (more than %d)", len,
		    FLEET_HEARTBEAT_DECODE_MAX);
		return FLEET_HEARTBEAT_ERR_TOOBIG;
	}
	if (value == NULL || len == 0 ||
	    (j = cJSON_ParseWithLengthOpts(value, len, &end, 0)) == NULL) {
		why(errbuf, errlen, "%s", "not JSON");
		return FLEET_HEARTBEAT_ERR_JSON;
	}
	while (end != NULL && end < value + len && strchr(" \t\r\n", *end) != NULL && *end != '\0')
		end++;
	if (end != value + len || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		why(errbuf, errlen, "%s", "not one JSON object");
		return FLEET_HEARTBEAT_ERR_JSON;
	}
	for (const cJSON *a = j->child; a != NULL; a = a->next)
		for (const cJSON *b = a->next; b != NULL; b = b->next)
			if (strcmp(a->string, b->string) == 0) {
				why(errbuf, errlen, "member %s named twice", a->string);
				cJSON_Delete(j);
				return FLEET_HEARTBEAT_ERR_JSON;
			}
	*out = j;
	return 0;
}

static const char *str_member(const cJSON *obj, const char *name, bool nullable, int *rc,
                              char *errbuf, size_t errlen)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (*rc != 0)
		return NULL;
	if (cJSON_IsString(m))
		return m->valuestring;
	if (nullable && cJSON_IsNull(m))
		return NULL;
	why(errbuf, errlen, "member %s is %s", name,
	    m == NULL  ? "missing"
	    : nullable ? "not a string or null"
	               : "not a string");
	*rc = FLEET_HEARTBEAT_ERR_SHAPE;
	return NULL;
}

/* The integer member name of the object whose text is json (len bytes)
 * and tree obj, read exactly from the text (cJSON keeps a double). null:
 * -1 when nullable. */
static int64_t int_member(const char *json, size_t len, const cJSON *obj, const char *name,
                          bool nullable, int *rc, char *errbuf, size_t errlen)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, name);
	const char *v;
	size_t n, i;
	char text[24];
	int64_t out;

	if (*rc != 0)
		return 0;
	if (nullable && cJSON_IsNull(m))
		return -1;
	if (!cJSON_IsNumber(m) || !jsonspan_member(json, len, name, &v, &n) || n == 0 ||
	    n >= sizeof(text))
		goto bad;
	for (i = v[0] == '-' ? 1 : 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			goto bad;
	memcpy(text, v, n);
	text[n] = '\0';
	if (num_parse_i64(text, INT64_MIN, INT64_MAX, &out) != 0)
		goto bad;
	return out;
bad:
	why(errbuf, errlen, "member %s is %s", name, m == NULL ? "missing" : "not an integer");
	*rc = FLEET_HEARTBEAT_ERR_SHAPE;
	return 0;
}

/* The text span of object member name (an object), or NULL. */
static const char *obj_span(const char *json, size_t len, const cJSON *obj, const char *name,
                            size_t *n, int *rc, char *errbuf, size_t errlen)
{
	const char *v;

	if (*rc != 0)
		return NULL;
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(obj, name)) &&
	    jsonspan_member(json, len, name, &v, n))
		return v;
	why(errbuf, errlen, "member %s is missing or not an object", name);
	*rc = FLEET_HEARTBEAT_ERR_SHAPE;
	return NULL;
}

static int strings(const cJSON *obj, const char *name, const char ***out, size_t *n, char *errbuf,
                   size_t errlen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, name), *e;
	size_t i = 0;

	*n = 0;
	if (!cJSON_IsArray(a)) {
		why(errbuf, errlen, "member %s is missing or not an array", name);
		return FLEET_HEARTBEAT_ERR_SHAPE;
	}
	if ((*out = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(**out))) == NULL)
		return FLEET_HEARTBEAT_ERR_NOMEM;
	cJSON_ArrayForEach(e, a)
	{
		if (!cJSON_IsString(e)) {
			why(errbuf, errlen, "member %s holds an item that is not a string", name);
			return FLEET_HEARTBEAT_ERR_SHAPE;
		}
		(*out)[i++] = e->valuestring;
	}
	*n = i;
	return 0;
}

/* applied: {"topic":{"id":..,"offset":..},...}, the tree and its text
 * walked side by side (members in the same order). */
static int applied(const char *json, size_t len, const cJSON *obj, struct owned *o,
                   struct fleet_heartbeat *hb, char *errbuf, size_t errlen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "applied"), *e;
	const char *span, *key, *val;
	size_t n, cursor = 0, klen, vlen, i = 0;
	int rc = 0;

	if ((span = obj_span(json, len, obj, "applied", &n, &rc, errbuf, errlen)) == NULL)
		return rc;
	if ((o->applied = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(*o->applied))) == NULL)
		return FLEET_HEARTBEAT_ERR_NOMEM;
	cJSON_ArrayForEach(e, a)
	{
		struct fleet_heartbeat_applied *x = &o->applied[i];

		if (!cJSON_IsObject(e) ||
		    !jsonspan_member_next(span, n, &cursor, &key, &klen, &val, &vlen)) {
			why(errbuf, errlen, "applied member %s is not an object", e->string);
			return FLEET_HEARTBEAT_ERR_SHAPE;
		}
		x->topic = e->string;
		x->id = str_member(e, "id", true, &rc, errbuf, errlen);
		x->offset = int_member(val, vlen, e, "offset", false, &rc, errbuf, errlen);
		if (rc != 0)
			return rc;
		i++;
	}
	hb->applied = o->applied;
	hb->napplied = i;
	return 0;
}

void fleet_heartbeat_clear(struct fleet_heartbeat *hb)
{
	struct owned *o = hb->owned;

	if (o != NULL) {
		cJSON_Delete(o->json);
		free(o->connectors);
		free(o->groups);
		free(o->applied);
		free(o);
	}
	memset(hb, 0, sizeof(*hb));
}

static int decode_counts(const char *value, size_t len, const cJSON *j, struct fleet_heartbeat *hb,
                         char *errbuf, size_t errlen)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "truncated");
	const cJSON *lost = cJSON_GetObjectItemCaseSensitive(j, "lost");
	const char *span;
	size_t n;
	int rc = 0;

	span = obj_span(value, len, j, "lost", &n, &rc, errbuf, errlen);
	hb->lost_records = int_member(span, n, lost, "records", false, &rc, errbuf, errlen);
	hb->lost_bytes = int_member(span, n, lost, "bytes", false, &rc, errbuf, errlen);
	hb->lost_files = int_member(span, n, lost, "files", false, &rc, errbuf, errlen);
	if (rc != 0 || t == NULL)
		return rc;
	span = obj_span(value, len, j, "truncated", &n, &rc, errbuf, errlen);
	hb->cut_connectors = int_member(span, n, t, "connectors", false, &rc, errbuf, errlen);
	hb->cut_groups = int_member(span, n, t, "groups", false, &rc, errbuf, errlen);
	hb->cut_applied = int_member(span, n, t, "applied", false, &rc, errbuf, errlen);
	hb->cut_text = int_member(span, n, t, "text", false, &rc, errbuf, errlen);
	return rc;
}

int fleet_heartbeat_decode(const char *value, size_t len, struct fleet_heartbeat *out, char *errbuf,
                           size_t errlen)
{
	struct owned *o;
	cJSON *j = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		cJSON_Delete(j);
		return FLEET_HEARTBEAT_ERR_NOMEM;
	}
	o->json = j;
	out->owned = o;
	out->device = str_member(j, "device", false, &rc, errbuf, errlen);
	out->version = str_member(j, "version", false, &rc, errbuf, errlen);
	out->at_ms = int_member(value, len, j, "at", false, &rc, errbuf, errlen);
	out->seq = int_member(value, len, j, "seq", false, &rc, errbuf, errlen);
	out->interval_ms = int_member(value, len, j, "interval_ms", false, &rc, errbuf, errlen);
	out->health = str_member(j, "health", false, &rc, errbuf, errlen);
	out->reason = str_member(j, "reason", true, &rc, errbuf, errlen);
	out->last_ack_ms = int_member(value, len, j, "last_ack_ms", true, &rc, errbuf, errlen);
	out->backlog_bytes = int_member(value, len, j, "backlog_bytes", false, &rc, errbuf, errlen);
	out->rss_kb = int_member(value, len, j, "rss_kb", false, &rc, errbuf, errlen);
	if (rc == 0)
		rc = decode_counts(value, len, j, out, errbuf, errlen);
	if (rc == 0 &&
	    (rc = strings(j, "connectors", &o->connectors, &out->nconnectors, errbuf, errlen)) == 0)
		out->connectors = o->connectors;
	if (rc == 0 && (rc = strings(j, "groups", &o->groups, &out->ngroups, errbuf, errlen)) == 0)
		out->groups = o->groups;
	if (rc == 0)
		rc = applied(value, len, j, o, out, errbuf, errlen);
	return rc;
}

/* ---- outcomes ------------------------------------------------------------------- */

static bool record_ok(enum connect_kind k)
{
	return k == CONNECT_CONNECTOR || k == CONNECT_TARGET_STATE || k == CONNECT_RESTART;
}

int fleet_outcome_encode(const struct fleet_outcome *o, struct buf *out)
{
	if (o->topic == NULL || o->worker_id == NULL || !record_ok(o->record) ||
	    (o->outcome != FLEET_OUTCOME_APPLIED && o->outcome != FLEET_OUTCOME_REFUSED))
		return FLEET_HEARTBEAT_ERR_ARG;
	buf_addz(out, "{\"topic\":");
	add_string(out, o->topic, strlen(o->topic));
	buf_printf(out, ",\"offset\":%lld,\"record\":\"%s\",\"outcome\":\"%s\",\"reason\":",
	           (long long)o->offset, records[o->record], fleet_outcome_name(o->outcome));
	if (o->reason == NULL) {
		buf_addz(out, "null");
	} else {
		struct buf scratch;
		size_t len = strlen(o->reason), n;

		buf_init(&scratch, convert_json_string_max(FLEET_OUTCOME_REASON_MAX));
		n = fit(&scratch, o->reason, FLEET_OUTCOME_REASON_MAX);
		if (n != SIZE_MAX && n < len) /* room for the "..." that says so */
			n = fit(&scratch, o->reason, FLEET_OUTCOME_REASON_MAX - 3);
		buf_free(&scratch);
		if (n == SIZE_MAX)
			return FLEET_HEARTBEAT_ERR_NOMEM;
		if (n < len) {
			struct buf r;
			int rc;

			buf_init(&r, FLEET_OUTCOME_REASON_MAX);
			buf_add(&r, o->reason, n);
			buf_addz(&r, "...");
			if ((rc = buf_code(&r)) == 0)
				add_string(out, buf_ptr(&r), buf_len(&r));
			buf_free(&r);
			if (rc != 0)
				return rc;
		} else {
			add_string(out, o->reason, len);
		}
	}
	buf_addz(out, ",\"worker_id\":");
	add_string(out, o->worker_id, strlen(o->worker_id));
	buf_printf(out, ",\"generation\":%d,\"at\":%lld}", (int)o->generation, (long long)o->at_ms);
	return buf_code(out);
}

void fleet_outcome_clear(struct fleet_outcome *o)
{
	cJSON_Delete(o->owned);
	memset(o, 0, sizeof(*o));
}

int fleet_outcome_decode(const char *value, size_t len, struct fleet_outcome *out, char *errbuf,
                         size_t errlen)
{
	const char *record, *outcome;
	cJSON *j = NULL;
	int64_t g;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = parse_object(value, len, &j, errbuf, errlen)) != 0)
		return rc;
	out->owned = j;
	out->topic = str_member(j, "topic", false, &rc, errbuf, errlen);
	out->offset = int_member(value, len, j, "offset", false, &rc, errbuf, errlen);
	record = str_member(j, "record", false, &rc, errbuf, errlen);
	outcome = str_member(j, "outcome", false, &rc, errbuf, errlen);
	out->reason = str_member(j, "reason", true, &rc, errbuf, errlen);
	out->worker_id = str_member(j, "worker_id", false, &rc, errbuf, errlen);
	g = int_member(value, len, j, "generation", false, &rc, errbuf, errlen);
	out->at_ms = int_member(value, len, j, "at", false, &rc, errbuf, errlen);
	if (rc != 0)
		return rc;
	if (g < INT32_MIN || g > INT32_MAX) {
		why(errbuf, errlen, "member generation %lld is not an int32", (long long)g);
		return FLEET_HEARTBEAT_ERR_SHAPE;
	}
	out->generation = (int32_t)g;
	if (strcmp(record, "connector") == 0)
		out->record = CONNECT_CONNECTOR;
	else if (strcmp(record, "target-state") == 0)
		out->record = CONNECT_TARGET_STATE;
	else if (strcmp(record, "restart") == 0)
		out->record = CONNECT_RESTART;
	else
		rc = FLEET_HEARTBEAT_ERR_SHAPE;
	if (rc != 0) {
		why(errbuf, errlen, "member record %s is none of connector, target-state, restart",
		    record);
		return rc;
	}
	if (strcmp(outcome, "APPLIED") == 0) {
		out->outcome = FLEET_OUTCOME_APPLIED;
	} else if (strcmp(outcome, "REFUSED") == 0) {
		out->outcome = FLEET_OUTCOME_REFUSED;
	} else {
		why(errbuf, errlen, "member outcome %s is neither APPLIED nor REFUSED", outcome);
		return FLEET_HEARTBEAT_ERR_SHAPE;
	}
	return 0;
}

int fleet_outcome_key(const char *name, struct buf *out)
{
	if (name == NULL || name[0] == '\0')
		return FLEET_HEARTBEAT_ERR_ARG;
	buf_addz(out, FLEET_OUTCOME_PREFIX);
	buf_addz(out, name);
	return buf_code(out);
}

bool fleet_outcome_key_parse(const char *key, size_t len, const char **name, size_t *namelen)
{
	size_t pl = strlen(FLEET_OUTCOME_PREFIX);

	if (len <= pl || memcmp(key, FLEET_OUTCOME_PREFIX, pl) != 0)
		return false;
	*name = key + pl;
	*namelen = len - pl;
	return true;
}
