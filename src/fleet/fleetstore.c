/* fleetstore: the fleet's applied state, kept (fleetstore.h). */
#include "fleet/fleetstore.h"

#include "fleet/connect_records.h"
#include "util/atomicfile.h"
#include "util/crc32c.h"
#include "util/num.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT "skiff-fleet-state"
#define VERSION 1
/* The document ends with exactly this and 8 hex digits and "}\n". */
#define TRAILER_KEY ",\"crc32c\":\""
#define TRAILER_KEY_LEN (sizeof(TRAILER_KEY) - 1)
#define TRAILER_LEN (TRAILER_KEY_LEN + 8 + 3)

struct topic {
	char *topic, *id;
	int64_t offset;
};

/* A record's place, owned texts (topic NULL: none). */
struct src {
	char *topic, *id;
	int64_t offset;
};

struct conn {
	char *name;
	struct src config_from, target_from;
	enum connect_target target;
};

struct refusal {
	char *id;
	int64_t offset;
};

struct fleetstore {
	char *path, *prev; /* NULL: not kept */
	bool rotate;       /* the next save keeps path as prev (path was valid or absent) */
	int32_t generation;
	struct topic topics[FLEETSTORE_MAX_TOPICS];
	size_t ntopics;
	struct conn *conns; /* FLEETSTORE_MAX_CONNECTORS */
	size_t nconns;
	/* A ring: refusals[(first + i) % MAX], i < nrefusals, oldest first. */
	struct refusal refusals[FLEETSTORE_MAX_REFUSALS];
	size_t first, nrefusals;
	char **keys; /* FLEETSTORE_MAX_STATUS_KEYS */
	size_t nkeys;
};

const char *fleetstore_strerror(int err)
{
	switch (err) {
	case FLEETSTORE_OK:
		return "ok";
	case FLEETSTORE_ERR_IO:
		return "the fleet state file cannot be read or written";
	case FLEETSTORE_ERR_NOMEM:
		return "out of memory";
	case FLEETSTORE_ERR_CORRUPT:
		return "no valid fleet state file (torn, damaged, or not one)";
	case FLEETSTORE_ERR_VERSION:
		return "the fleet state file was written by a newer skiff";
	case FLEETSTORE_ERR_FULL:
		return "the fleet state is full";
	case FLEETSTORE_ERR_ARG:
		return "a text too long or empty, or an offset out of range";
	default:
		return "unknown fleetstore error";
	}
}

static bool text_ok(const char *s)
{
	return s != NULL && s[0] != '\0' && strlen(s) <= FLEETSTORE_MAX_TEXT;
}

static bool offset_ok(int64_t o)
{
	return o >= 0 && o <= FLEETSTORE_MAX_OFFSET;
}

/* ---- the state in memory ------------------------------------------------ */

const char *fleetstore_path(const struct fleetstore *fs)
{
	return fs->path;
}

int32_t fleetstore_generation(const struct fleetstore *fs)
{
	return fs->generation;
}

int32_t fleetstore_bump(struct fleetstore *fs)
{
	if (fs->generation < INT32_MAX)
		fs->generation++;
	return fs->generation;
}

static struct topic *find_topic(const struct fleetstore *fs, const char *topic)
{
	for (size_t i = 0; i < fs->ntopics; i++)
		if (strcmp(fs->topics[i].topic, topic) == 0)
			return (struct topic *)(uintptr_t)&fs->topics[i];
	return NULL;
}

int fleetstore_topic_set(struct fleetstore *fs, const char *topic, const char *id, int64_t offset)
{
	struct topic *t = find_topic(fs, topic);
	char *cid, *ctopic = NULL;

	if (!text_ok(topic) || !text_ok(id) || !offset_ok(offset))
		return FLEETSTORE_ERR_ARG;
	if (t == NULL && fs->ntopics == FLEETSTORE_MAX_TOPICS)
		return FLEETSTORE_ERR_FULL;
	if ((cid = strdup(id)) == NULL || (t == NULL && (ctopic = strdup(topic)) == NULL)) {
		free(cid);
		return FLEETSTORE_ERR_NOMEM;
	}
	if (t == NULL) {
		t = &fs->topics[fs->ntopics++];
		t->topic = ctopic;
		t->id = NULL;
	}
	free(t->id);
	t->id = cid;
	t->offset = offset;
	return 0;
}

bool fleetstore_topic(const struct fleetstore *fs, const char *topic, const char **id,
                      int64_t *offset)
{
	const struct topic *t = find_topic(fs, topic);

	if (t == NULL)
		return false;
	*id = t->id;
	*offset = t->offset;
	return true;
}

static long find_conn(const struct fleetstore *fs, const char *name)
{
	for (size_t i = 0; i < fs->nconns; i++)
		if (strcmp(fs->conns[i].name, name) == 0)
			return (long)i;
	return -1;
}

static bool source_ok(const struct fleetstore_source *s, bool optional)
{
	if (s->topic == NULL)
		return optional;
	return text_ok(s->topic) && text_ok(s->topic_id) && offset_ok(s->offset);
}

static void free_src(struct src *s)
{
	free(s->topic);
	free(s->id);
	memset(s, 0, sizeof(*s));
}

/* A copy of s into *out. Returns 0 or FLEETSTORE_ERR_NOMEM (*out empty). */
static int copy_src(const struct fleetstore_source *s, struct src *out)
{
	memset(out, 0, sizeof(*out));
	if (s->topic == NULL)
		return 0;
	out->topic = strdup(s->topic);
	out->id = strdup(s->topic_id);
	out->offset = s->offset;
	if (out->topic == NULL || out->id == NULL) {
		free_src(out);
		return FLEETSTORE_ERR_NOMEM;
	}
	return 0;
}

static void free_conn(struct conn *e)
{
	free(e->name);
	free_src(&e->config_from);
	free_src(&e->target_from);
}

int fleetstore_connector_set(struct fleetstore *fs, const struct fleetstore_connector *c)
{
	long i = find_conn(fs, c->name);
	struct conn n = {0};

	if (!text_ok(c->name) || !source_ok(&c->config_from, false) ||
	    !source_ok(&c->target_from, true) || c->target < CONNECT_TARGET_STARTED ||
	    c->target > CONNECT_TARGET_STOPPED)
		return FLEETSTORE_ERR_ARG;
	if (i < 0 && fs->nconns == FLEETSTORE_MAX_CONNECTORS)
		return FLEETSTORE_ERR_FULL;
	if (fs->conns == NULL &&
	    (fs->conns = calloc(FLEETSTORE_MAX_CONNECTORS, sizeof(*fs->conns))) == NULL)
		return FLEETSTORE_ERR_NOMEM;
	/* Built whole first: a failure leaves the entry as it was. */
	if ((n.name = strdup(c->name)) == NULL || copy_src(&c->config_from, &n.config_from) != 0 ||
	    copy_src(&c->target_from, &n.target_from) != 0) {
		free_conn(&n);
		return FLEETSTORE_ERR_NOMEM;
	}
	n.target = c->target;
	if (i < 0)
		i = (long)fs->nconns++;
	else
		free_conn(&fs->conns[i]);
	fs->conns[i] = n;
	return 0;
}

bool fleetstore_connector_remove(struct fleetstore *fs, const char *name)
{
	long i = find_conn(fs, name);

	if (i < 0)
		return false;
	free_conn(&fs->conns[i]);
	memmove(&fs->conns[i], &fs->conns[i + 1],
	        (fs->nconns - (size_t)i - 1) * sizeof(fs->conns[0]));
	fs->nconns--;
	return true;
}

size_t fleetstore_connector_count(const struct fleetstore *fs)
{
	return fs->nconns;
}

void fleetstore_connector_at(const struct fleetstore *fs, size_t i,
                             struct fleetstore_connector *out)
{
	const struct conn *e = &fs->conns[i];

	out->name = e->name;
	out->config_from.topic = e->config_from.topic;
	out->config_from.topic_id = e->config_from.id;
	out->config_from.offset = e->config_from.offset;
	out->target = e->target;
	out->target_from.topic = e->target_from.topic;
	out->target_from.topic_id = e->target_from.id;
	out->target_from.offset = e->target_from.offset;
}

bool fleetstore_connector_find(const struct fleetstore *fs, const char *name,
                               struct fleetstore_connector *out)
{
	long i = find_conn(fs, name);

	if (i < 0)
		return false;
	fleetstore_connector_at(fs, (size_t)i, out);
	return true;
}

static struct refusal *refusal_at(const struct fleetstore *fs, size_t i)
{
	return (struct refusal *)(uintptr_t)&fs
	    ->refusals[(fs->first + i) % FLEETSTORE_MAX_REFUSALS];
}

bool fleetstore_refused(const struct fleetstore *fs, const char *id, int64_t offset)
{
	for (size_t i = 0; i < fs->nrefusals; i++) {
		const struct refusal *r = refusal_at(fs, i);

		if (r->offset == offset && strcmp(r->id, id) == 0)
			return true;
	}
	return false;
}

size_t fleetstore_refusal_count(const struct fleetstore *fs)
{
	return fs->nrefusals;
}

void fleetstore_refusal_at(const struct fleetstore *fs, size_t i, const char **id, int64_t *offset)
{
	const struct refusal *r = refusal_at(fs, i);

	*id = r->id;
	*offset = r->offset;
}

int fleetstore_refusal_add(struct fleetstore *fs, const char *id, int64_t offset)
{
	struct refusal *r;
	char *c;

	if (!text_ok(id) || !offset_ok(offset))
		return FLEETSTORE_ERR_ARG;
	if (fleetstore_refused(fs, id, offset))
		return 0;
	if ((c = strdup(id)) == NULL)
		return FLEETSTORE_ERR_NOMEM;
	if (fs->nrefusals == FLEETSTORE_MAX_REFUSALS) {
		/* The oldest goes: reported once more after a restart, at most. */
		free(refusal_at(fs, 0)->id);
		fs->first = (fs->first + 1) % FLEETSTORE_MAX_REFUSALS;
		fs->nrefusals--;
	}
	r = refusal_at(fs, fs->nrefusals++);
	r->id = c;
	r->offset = offset;
	return 0;
}

static long find_key(const struct fleetstore *fs, const char *key)
{
	for (size_t i = 0; i < fs->nkeys; i++)
		if (strcmp(fs->keys[i], key) == 0)
			return (long)i;
	return -1;
}

int fleetstore_status_key_add(struct fleetstore *fs, const char *key)
{
	if (!text_ok(key))
		return FLEETSTORE_ERR_ARG;
	if (find_key(fs, key) >= 0)
		return 0;
	if (fs->nkeys == FLEETSTORE_MAX_STATUS_KEYS)
		return FLEETSTORE_ERR_FULL;
	if (fs->keys == NULL &&
	    (fs->keys = calloc(FLEETSTORE_MAX_STATUS_KEYS, sizeof(*fs->keys))) == NULL)
		return FLEETSTORE_ERR_NOMEM;
	if ((fs->keys[fs->nkeys] = strdup(key)) == NULL)
		return FLEETSTORE_ERR_NOMEM;
	fs->nkeys++;
	return 0;
}

bool fleetstore_status_key_remove(struct fleetstore *fs, const char *key)
{
	long i = find_key(fs, key);

	if (i < 0)
		return false;
	free(fs->keys[i]);
	memmove(&fs->keys[i], &fs->keys[i + 1], (fs->nkeys - (size_t)i - 1) * sizeof(fs->keys[0]));
	fs->nkeys--;
	return true;
}

size_t fleetstore_status_key_count(const struct fleetstore *fs)
{
	return fs->nkeys;
}

const char *fleetstore_status_key(const struct fleetstore *fs, size_t i)
{
	return fs->keys[i];
}

static void clear(struct fleetstore *fs)
{
	for (size_t i = 0; i < fs->ntopics; i++) {
		free(fs->topics[i].topic);
		free(fs->topics[i].id);
	}
	fs->ntopics = 0;
	for (size_t i = 0; i < fs->nconns; i++)
		free_conn(&fs->conns[i]);
	fs->nconns = 0;
	for (size_t i = 0; i < fs->nrefusals; i++)
		free(refusal_at(fs, i)->id);
	fs->nrefusals = fs->first = 0;
	for (size_t i = 0; i < fs->nkeys; i++)
		free(fs->keys[i]);
	fs->nkeys = 0;
	fs->generation = 0;
}

void fleetstore_destroy(struct fleetstore *fs)
{
	if (fs == NULL)
		return;
	clear(fs);
	free(fs->conns);
	free(fs->keys);
	free(fs->path);
	free(fs->prev);
	free(fs);
}

/* ---- the document --------------------------------------------------------- */

static bool add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_str(cJSON *o, const char *k, const char *v)
{
	return cJSON_AddStringToObject(o, k, v) != NULL;
}

/* {"topic":..,"id":..,"offset":..} as o's member k; nothing for none. */
static bool add_src(cJSON *o, const char *k, const struct src *s)
{
	cJSON *m;

	if (s->topic == NULL)
		return true;
	return (m = cJSON_AddObjectToObject(o, k)) != NULL && add_str(m, "topic", s->topic) &&
	       add_str(m, "id", s->id) && add_num(m, "offset", (double)s->offset);
}

/* An object appended to arr, or NULL. */
static cJSON *item(cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();

	if (o != NULL && !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *to_json(const struct fleetstore *fs)
{
	cJSON *d = cJSON_CreateObject(), *t = NULL, *c = NULL, *r = NULL, *k = NULL, *o;
	bool ok;

	ok = d != NULL && add_str(d, "format", FORMAT) && add_num(d, "version", VERSION) &&
	     add_num(d, "generation", fs->generation) &&
	     (t = cJSON_AddArrayToObject(d, "topics")) != NULL &&
	     (c = cJSON_AddArrayToObject(d, "connectors")) != NULL &&
	     (r = cJSON_AddArrayToObject(d, "refusals")) != NULL &&
	     (k = cJSON_AddArrayToObject(d, "status_keys")) != NULL;
	for (size_t i = 0; ok && i < fs->ntopics; i++)
		ok = (o = item(t)) != NULL && add_str(o, "topic", fs->topics[i].topic) &&
		     add_str(o, "id", fs->topics[i].id) &&
		     add_num(o, "offset", (double)fs->topics[i].offset);
	for (size_t i = 0; ok && i < fs->nconns; i++)
		ok = (o = item(c)) != NULL && add_str(o, "name", fs->conns[i].name) &&
		     add_src(o, "config_from", &fs->conns[i].config_from) &&
		     add_str(o, "target", connect_target_name(fs->conns[i].target)) &&
		     add_src(o, "target_from", &fs->conns[i].target_from);
	for (size_t i = 0; ok && i < fs->nrefusals; i++)
		ok = (o = item(r)) != NULL && add_str(o, "id", refusal_at(fs, i)->id) &&
		     add_num(o, "offset", (double)refusal_at(fs, i)->offset);
	for (size_t i = 0; ok && i < fs->nkeys; i++) {
		cJSON *s = cJSON_CreateString(fs->keys[i]);

		ok = s != NULL && cJSON_AddItemToArray(k, s);
		if (!ok)
			cJSON_Delete(s);
	}
	if (!ok) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

int fleetstore_save(struct fleetstore *fs, char *errbuf, size_t errlen)
{
	cJSON *d;
	char *body = NULL, *text = NULL;
	size_t blen;
	int rc, done = 0;

	if (fs->path == NULL)
		return 0;
	if ((d = to_json(fs)) == NULL || (body = cJSON_PrintUnformatted(d)) == NULL) {
		cJSON_Delete(d);
		snprintf(errbuf, errlen, "%s: out of memory", fs->path);
		return FLEETSTORE_ERR_NOMEM;
	}
	cJSON_Delete(d);
	blen = strlen(body) - 1; /* without the closing brace */
	if (blen + TRAILER_LEN > FLEETSTORE_MAX_BYTES) {
		/* Not reached within the bounds (fleetstore.h). */
		snprintf(errbuf, errlen, "%s: %zu bytes, over %u", fs->path, blen + TRAILER_LEN,
		         FLEETSTORE_MAX_BYTES);
		free(body);
		return FLEETSTORE_ERR_IO;
	}
	if ((text = malloc(blen + TRAILER_LEN + 1)) == NULL) {
		free(body);
		snprintf(errbuf, errlen, "%s: out of memory", fs->path);
		return FLEETSTORE_ERR_NOMEM;
	}
	memcpy(text, body, blen);
	free(body);
	snprintf(text + blen, TRAILER_LEN + 1, TRAILER_KEY "%08" PRIx32 "\"}\n",
	         crc32c(0, text, blen));
	rc = atomicfile_replace(fs->path, fs->rotate ? fs->prev : NULL, text, blen + TRAILER_LEN,
	                        &done, errbuf, errlen);
	free(text);
	if (done & ATOMICFILE_REPLACED)
		fs->rotate = true; /* path is this save's now: a good one to keep */
	if (rc != 0)
		return rc == ATOMICFILE_ERR_NOMEM ? FLEETSTORE_ERR_NOMEM : FLEETSTORE_ERR_IO;
	return 0;
}

/* ---- loading ---------------------------------------------------------------- */

/* Checks the trailer and the CRC of the bytes before it. */
static bool crc_ok(const char *d, size_t len, char *why, size_t whylen)
{
	const char *t;
	uint32_t stored = 0;

	if (len < TRAILER_LEN + 2 || memcmp(d + len - TRAILER_LEN, TRAILER_KEY, TRAILER_KEY_LEN) ||
	    memcmp(d + len - 3, "\"}\n", 3) != 0) {
		snprintf(why, whylen, "no checksum at the end (torn, or not a fleet state file)");
		return false;
	}
	t = d + len - TRAILER_LEN + TRAILER_KEY_LEN;
	for (size_t i = 0; i < 8; i++) {
		int v = (t[i] >= 'A' && t[i] <= 'F') ? -1 : num_hex_digit(t[i]);

		if (v < 0) {
			snprintf(why, whylen, "malformed checksum");
			return false;
		}
		stored = stored << 4 | (uint32_t)v;
	}
	if (stored != crc32c(0, d, len - TRAILER_LEN)) {
		snprintf(why, whylen, "checksum mismatch: torn or damaged");
		return false;
	}
	return true;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) && text_ok(v->valuestring) ? v->valuestring : NULL;
}

static bool num_of(const cJSON *o, const char *k, double min, double max, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > max ||
	    v->valuedouble != (double)(int64_t)v->valuedouble)
		return false;
	*out = (int64_t)v->valuedouble;
	return true;
}

/* Member k of o as a source (absent: none, when optional). */
static bool src_of(const cJSON *o, const char *k, bool optional, struct fleetstore_source *out)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, k);

	memset(out, 0, sizeof(*out));
	if (m == NULL)
		return optional;
	out->topic = str_of(m, "topic");
	out->topic_id = str_of(m, "id");
	return cJSON_IsObject(m) && out->topic != NULL && out->topic_id != NULL &&
	       num_of(m, "offset", 0, FLEETSTORE_MAX_OFFSET, &out->offset);
}

static bool target_of(const char *name, enum connect_target *out)
{
	for (int t = CONNECT_TARGET_STARTED; name != NULL && t <= CONNECT_TARGET_STOPPED; t++)
		if (strcmp(connect_target_name((enum connect_target)t), name) == 0) {
			*out = (enum connect_target)t;
			return true;
		}
	return false;
}

/* Fills fs from the document d (its envelope checked). Returns 0,
 * FLEETSTORE_ERR_CORRUPT with why, or FLEETSTORE_ERR_NOMEM. */
static int from_json(struct fleetstore *fs, const cJSON *d, char *why, size_t whylen)
{
	const cJSON *e, *arr;
	int64_t n;
	int rc = 0;

	if (!num_of(d, "generation", 0, INT32_MAX, &n))
		goto bad;
	fs->generation = (int32_t)n;
	arr = cJSON_GetObjectItemCaseSensitive(d, "topics");
	cJSON_ArrayForEach(e, arr)
	{
		if (rc != 0)
			break;
		const char *t = str_of(e, "topic"), *id = str_of(e, "id");

		if (t == NULL || id == NULL || !num_of(e, "offset", 0, FLEETSTORE_MAX_OFFSET, &n) ||
		    find_topic(fs, t) != NULL)
			goto bad;
		rc = fleetstore_topic_set(fs, t, id, n);
	}
	arr = cJSON_GetObjectItemCaseSensitive(d, "connectors");
	cJSON_ArrayForEach(e, arr)
	{
		if (rc != 0)
			break;
		struct fleetstore_connector c = {.name = str_of(e, "name")};

		if (c.name == NULL || !src_of(e, "config_from", false, &c.config_from) ||
		    !src_of(e, "target_from", true, &c.target_from) ||
		    !target_of(str_of(e, "target"), &c.target) || find_conn(fs, c.name) >= 0)
			goto bad;
		rc = fleetstore_connector_set(fs, &c);
	}
	arr = cJSON_GetObjectItemCaseSensitive(d, "refusals");
	cJSON_ArrayForEach(e, arr)
	{
		if (rc != 0)
			break;
		const char *id = str_of(e, "id");

		if (id == NULL || !num_of(e, "offset", 0, FLEETSTORE_MAX_OFFSET, &n))
			goto bad;
		rc = fleetstore_refusal_add(fs, id, n);
	}
	arr = cJSON_GetObjectItemCaseSensitive(d, "status_keys");
	cJSON_ArrayForEach(e, arr)
	{
		if (rc != 0)
			break;
		if (!cJSON_IsString(e) || !text_ok(e->valuestring))
			goto bad;
		rc = fleetstore_status_key_add(fs, e->valuestring);
	}
	if (rc == FLEETSTORE_ERR_NOMEM)
		return rc;
	if (rc != 0)
		goto bad; /* more than a bound holds: not a file this module wrote */
	return 0;
bad:
	snprintf(why, whylen, "not a fleet state: a member missing, out of range or repeated");
	return FLEETSTORE_ERR_CORRUPT;
}

/* One file: 0 and fs filled (*found true), 0 with *found false when it does
 * not exist, or an error with why (fs then cleared). */
static int read_one(struct fleetstore *fs, const char *path, bool *found, char *why, size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	cJSON *d = NULL;
	const cJSON *fmt, *ver;
	int rc;

	*found = false;
	rc = atomicfile_read(path, FLEETSTORE_MAX_BYTES, &text, &len, why, whylen);
	if (rc == ATOMICFILE_ERR_NOENT)
		return 0;
	*found = true;
	if (rc != 0)
		return rc == ATOMICFILE_ERR_NOMEM    ? FLEETSTORE_ERR_NOMEM
		       : rc == ATOMICFILE_ERR_TOOBIG ? FLEETSTORE_ERR_CORRUPT
		                                     : FLEETSTORE_ERR_IO;
	if (!crc_ok(text, len, why, whylen)) {
		rc = FLEETSTORE_ERR_CORRUPT;
		goto out;
	}
	if ((d = cJSON_ParseWithLength(text, len)) == NULL) {
		snprintf(why, whylen, "not JSON");
		rc = FLEETSTORE_ERR_CORRUPT;
		goto out;
	}
	fmt = cJSON_GetObjectItemCaseSensitive(d, "format");
	ver = cJSON_GetObjectItemCaseSensitive(d, "version");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) != 0 || !cJSON_IsNumber(ver)) {
		snprintf(why, whylen, "not a fleet state file (format %s)", FORMAT);
		rc = FLEETSTORE_ERR_CORRUPT;
		goto out;
	}
	if (ver->valuedouble != VERSION) {
		snprintf(why, whylen, "version %g, written by a newer skiff (this one reads %d)",
		         ver->valuedouble, VERSION);
		rc = FLEETSTORE_ERR_VERSION;
		goto out;
	}
	rc = from_json(fs, d, why, whylen);
out:
	if (rc != 0)
		clear(fs);
	cJSON_Delete(d);
	free(text);
	return rc;
}

/* Loads the valid one of path and prev with the higher generation. */
static int load_files(struct fleetstore *fs, char *errbuf, size_t errlen)
{
	struct fleetstore *other = calloc(1, sizeof(*other));
	char why[2][256];
	bool found[2];
	int rc[2];

	if (other == NULL)
		return FLEETSTORE_ERR_NOMEM;
	rc[0] = read_one(fs, fs->path, &found[0], why[0], sizeof(why[0]));
	rc[1] = read_one(other, fs->prev, &found[1], why[1], sizeof(why[1]));
	if (rc[0] == FLEETSTORE_ERR_NOMEM || rc[1] == FLEETSTORE_ERR_NOMEM) {
		fleetstore_destroy(other);
		snprintf(errbuf, errlen, "%s: out of memory", fs->path);
		return FLEETSTORE_ERR_NOMEM;
	}
	if (rc[1] == 0 && found[1] &&
	    (rc[0] != 0 || !found[0] || other->generation > fs->generation)) {
		/* prev wins: swap the contents, keep fs's own paths. */
		struct fleetstore t = *fs;

		*fs = *other;
		fs->path = t.path;
		fs->prev = t.prev;
		fs->rotate = false;
		*other = t; /* path's contents, freed below */
		other->path = other->prev = NULL;
	} else if (rc[0] == 0) {
		fs->rotate = true;
	}
	fleetstore_destroy(other);
	if ((rc[0] == 0 && found[0]) || (rc[1] == 0 && found[1]) || (!found[0] && !found[1]))
		return 0;
	/* Files there, none valid: a person decides (fleetstore.h). */
	if (found[0] && found[1])
		snprintf(errbuf, errlen,
		         "%s: %s; %s: %s; delete both to start the fleet state over", fs->path,
		         why[0], fs->prev, why[1]);
	else
		snprintf(errbuf, errlen, "%s: %s; delete it to start the fleet state over",
		         found[0] ? fs->path : fs->prev, found[0] ? why[0] : why[1]);
	return rc[0] == FLEETSTORE_ERR_VERSION || rc[1] == FLEETSTORE_ERR_VERSION
	           ? FLEETSTORE_ERR_VERSION
	       : rc[0] == FLEETSTORE_ERR_IO || rc[1] == FLEETSTORE_ERR_IO ? FLEETSTORE_ERR_IO
	                                                                  : FLEETSTORE_ERR_CORRUPT;
}

int fleetstore_load(const char *offsets_file, struct fleetstore **out, char *errbuf, size_t errlen)
{
	struct fleetstore *fs = calloc(1, sizeof(*fs));
	const char *slash;
	size_t dirlen;
	int rc;

	*out = NULL;
	if (fs == NULL)
		return FLEETSTORE_ERR_NOMEM;
	fs->rotate = true;
	if (offsets_file == NULL || offsets_file[0] == '\0') {
		*out = fs;
		return 0;
	}
	slash = strrchr(offsets_file, '/');
	dirlen = slash ? (size_t)(slash - offsets_file) + 1 : 0;
	fs->path = malloc(dirlen + sizeof(FLEETSTORE_FILE));
	fs->prev = malloc(dirlen + sizeof(FLEETSTORE_FILE) + 5);
	if (fs->path == NULL || fs->prev == NULL) {
		fleetstore_destroy(fs);
		return FLEETSTORE_ERR_NOMEM;
	}
	memcpy(fs->path, offsets_file, dirlen);
	memcpy(fs->path + dirlen, FLEETSTORE_FILE, sizeof(FLEETSTORE_FILE));
	snprintf(fs->prev, dirlen + sizeof(FLEETSTORE_FILE) + 5, "%s.prev", fs->path);
	if ((rc = load_files(fs, errbuf, errlen)) != 0) {
		fleetstore_destroy(fs);
		return rc;
	}
	*out = fs;
	return 0;
}
