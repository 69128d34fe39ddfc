/* fleetview: the devices as their status topics say (see fleetview.h). */
#include "fleet/fleetview.h"

#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "fleet/fleetconf.h"
#include "util/hash.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last record of one key per connector name. */
struct fv_status {
	char *name;
	enum connect_state state;
};

struct fv_outcome {
	char *name;
	struct fleet_outcome o; /* decoded: owns its strings */
};

struct fv_device {
	char *name;
	bool has_hb;
	/* The last heartbeat, what the view shows of it: its strings and
	 * lists in hbmem (one block: a decoded one keeps its whole JSON tree,
	 * ten times the size, times 10,000 devices); applied not kept. */
	struct fleet_heartbeat hb;
	char *hbmem;
	struct fv_status *st;
	size_t nst, capst;
	struct fv_outcome *out;
	size_t nout, capout;
};

struct fleetview {
	char *prefix, *suffix; /* the template around {device} */
	struct fv_device **dev;
	size_t ndev, capdev;
	struct hash index; /* name -> position in dev */
	uint64_t skipped;
};

const char *fleetview_strerror(int err)
{
	switch (err) {
	case FLEETVIEW_OK:
		return "ok";
	case FLEETVIEW_ERR_NOMEM:
		return "out of memory";
	case FLEETVIEW_ERR_ARG:
		return "bad argument";
	default:
		return "unknown fleetview error";
	}
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int fleetview_new(const char *status_tmpl, struct fleetview **out)
{
	const char *at = strstr(status_tmpl, "{device}");
	struct fleetview *v;

	*out = NULL;
	if (at == NULL || strstr(at + 8, "{device}") != NULL)
		return FLEETVIEW_ERR_ARG;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return FLEETVIEW_ERR_NOMEM;
	hash_init(&v->index);
	v->prefix = dupn(status_tmpl, (size_t)(at - status_tmpl));
	v->suffix = dupn(at + 8, strlen(at + 8));
	if (v->prefix == NULL || v->suffix == NULL) {
		fleetview_destroy(v);
		return FLEETVIEW_ERR_NOMEM;
	}
	*out = v;
	return FLEETVIEW_OK;
}

static void device_free(struct fv_device *d)
{
	if (d == NULL)
		return;
	free(d->hbmem);
	for (size_t i = 0; i < d->nst; i++)
		free(d->st[i].name);
	for (size_t i = 0; i < d->nout; i++) {
		free(d->out[i].name);
		fleet_outcome_clear(&d->out[i].o);
	}
	free(d->st);
	free(d->out);
	free(d->name);
	free(d);
}

void fleetview_destroy(struct fleetview *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->ndev; i++)
		device_free(v->dev[i]);
	free(v->dev);
	hash_free(&v->index);
	free(v->prefix);
	free(v->suffix);
	free(v);
}

bool fleetview_topic_device(const struct fleetview *v, const char *topic, char *buf, size_t len)
{
	size_t tl = strlen(topic), pl = strlen(v->prefix), sl = strlen(v->suffix);

	if (tl <= pl + sl || strncmp(topic, v->prefix, pl) != 0 ||
	    strcmp(topic + tl - sl, v->suffix) != 0 || tl - pl - sl >= len)
		return false;
	memcpy(buf, topic + pl, tl - pl - sl);
	buf[tl - pl - sl] = '\0';
	return fleetconf_name_check(buf) == FLEETCONF_OK;
}

static struct fv_device *find(const struct fleetview *v, const char *name)
{
	size_t i;

	return hash_get(&v->index, name, &i) ? v->dev[i] : NULL;
}

static int device_get(struct fleetview *v, const char *name, struct fv_device **out)
{
	struct fv_device *d = find(v, name);

	if (d != NULL) {
		*out = d;
		return FLEETVIEW_OK;
	}
	if (v->ndev == v->capdev) {
		size_t cap = v->capdev ? v->capdev * 2 : 16;
		struct fv_device **n = realloc(v->dev, cap * sizeof(*n));

		if (n == NULL)
			return FLEETVIEW_ERR_NOMEM;
		v->dev = n;
		v->capdev = cap;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL || (d->name = dupn(name, strlen(name))) == NULL ||
	    hash_put(&v->index, d->name, v->ndev) != HASH_OK) {
		device_free(d);
		return FLEETVIEW_ERR_NOMEM;
	}
	v->dev[v->ndev++] = d;
	*out = d;
	return FLEETVIEW_OK;
}

int fleetview_add_device(struct fleetview *v, const char *device)
{
	struct fv_device *d;

	return device_get(v, device, &d);
}

bool fleetview_has(const struct fleetview *v, const char *device)
{
	return find(v, device) != NULL;
}

uint64_t fleetview_skipped(const struct fleetview *v)
{
	return v->skipped;
}

/* The status entry of name (namelen bytes), NULL when absent. */
static size_t status_at(const struct fv_device *d, const char *name, size_t namelen)
{
	for (size_t i = 0; i < d->nst; i++)
		if (strlen(d->st[i].name) == namelen && memcmp(d->st[i].name, name, namelen) == 0)
			return i;
	return SIZE_MAX;
}

static size_t outcome_at(const struct fv_device *d, const char *name, size_t namelen)
{
	for (size_t i = 0; i < d->nout; i++)
		if (strlen(d->out[i].name) == namelen && memcmp(d->out[i].name, name, namelen) == 0)
			return i;
	return SIZE_MAX;
}

/* Copies what the view shows of src into *dst, its strings and lists in
 * one new block *mem. Returns 0 or FLEETVIEW_ERR_NOMEM. */
static int hb_compact(const struct fleet_heartbeat *src, struct fleet_heartbeat *dst, char **mem)
{
	const char *s[] = {src->device, src->version, src->health, src->reason};
	size_t size = (src->nconnectors + src->ngroups) * sizeof(char *);
	const char **list;
	char *at;

	for (size_t i = 0; i < 4; i++)
		size += s[i] != NULL ? strlen(s[i]) + 1 : 0;
	for (size_t i = 0; i < src->nconnectors; i++)
		size += strlen(src->connectors[i]) + 1;
	for (size_t i = 0; i < src->ngroups; i++)
		size += strlen(src->groups[i]) + 1;
	if ((*mem = malloc(size + 1)) == NULL)
		return FLEETVIEW_ERR_NOMEM;
	*dst = *src;
	dst->owned = NULL;
	dst->applied = NULL;
	dst->napplied = 0;
	list = (const char **)(void *)*mem;
	at = *mem + (src->nconnectors + src->ngroups) * sizeof(char *);
#define COPY(from, to)                                                                             \
	do {                                                                                       \
		size_t n_ = strlen(from) + 1;                                                      \
		memcpy(at, from, n_);                                                              \
		(to) = at;                                                                         \
		at += n_;                                                                          \
	} while (0)
	COPY(src->device, dst->device);
	COPY(src->version, dst->version);
	COPY(src->health, dst->health);
	if (src->reason != NULL)
		COPY(src->reason, dst->reason);
	for (size_t i = 0; i < src->nconnectors; i++)
		COPY(src->connectors[i], list[i]);
	for (size_t i = 0; i < src->ngroups; i++)
		COPY(src->groups[i], list[src->nconnectors + i]);
#undef COPY
	dst->connectors = list;
	dst->groups = list + src->nconnectors;
	return FLEETVIEW_OK;
}

static int feed_status(struct fv_device *d, const struct connect_key *k, const char *value,
                       size_t vallen, uint64_t *skipped)
{
	size_t i = status_at(d, k->name, k->namelen);
	struct connect_status s = {0};
	enum connect_state st;
	char why[128];

	if (value == NULL) { /* a removed connector: Connect's tombstone */
		if (i != SIZE_MAX) {
			free(d->st[i].name);
			d->st[i] = d->st[--d->nst];
		}
		return FLEETVIEW_OK;
	}
	if (connect_status_decode(value, vallen, &s, why, sizeof(why)) != 0) {
		connect_status_clear(&s);
		(*skipped)++;
		return FLEETVIEW_OK;
	}
	st = s.state;
	connect_status_clear(&s); /* zeroes s */
	if (i == SIZE_MAX) {
		if (d->nst == d->capst) {
			size_t cap = d->capst ? d->capst * 2 : 4;
			struct fv_status *n = realloc(d->st, cap * sizeof(*n));

			if (n == NULL)
				return FLEETVIEW_ERR_NOMEM;
			d->st = n;
			d->capst = cap;
		}
		if ((d->st[d->nst].name = dupn(k->name, k->namelen)) == NULL)
			return FLEETVIEW_ERR_NOMEM;
		i = d->nst++;
	}
	d->st[i].state = st;
	return FLEETVIEW_OK;
}

static int feed_outcome(struct fv_device *d, const char *name, size_t namelen, const char *value,
                        size_t vallen, uint64_t *skipped)
{
	size_t i = outcome_at(d, name, namelen);
	struct fleet_outcome o = {0};
	char why[128];

	if (value == NULL) {
		if (i != SIZE_MAX) {
			free(d->out[i].name);
			fleet_outcome_clear(&d->out[i].o);
			d->out[i] = d->out[--d->nout];
		}
		return FLEETVIEW_OK;
	}
	if (fleet_outcome_decode(value, vallen, &o, why, sizeof(why)) != 0) {
		fleet_outcome_clear(&o);
		(*skipped)++;
		return FLEETVIEW_OK;
	}
	if (i == SIZE_MAX) {
		if (d->nout == d->capout) {
			size_t cap = d->capout ? d->capout * 2 : 4;
			struct fv_outcome *n = realloc(d->out, cap * sizeof(*n));

			if (n == NULL)
				goto nomem;
			d->out = n;
			d->capout = cap;
		}
		if ((d->out[d->nout].name = dupn(name, namelen)) == NULL)
			goto nomem;
		i = d->nout++;
	} else {
		fleet_outcome_clear(&d->out[i].o);
	}
	d->out[i].o = o;
	return FLEETVIEW_OK;
nomem:
	fleet_outcome_clear(&o);
	return FLEETVIEW_ERR_NOMEM;
}

int fleetview_feed(struct fleetview *v, const char *topic, const char *key, size_t keylen,
                   const char *value, size_t vallen)
{
	char name[FLEETCONF_NAME_MAX + 1], why[128];
	struct fv_device *d;
	struct connect_key k;
	const char *oname;
	size_t onamelen;
	int rc;

	if (!fleetview_topic_device(v, topic, name, sizeof(name)))
		return FLEETVIEW_OK;
	if ((rc = device_get(v, name, &d)) != FLEETVIEW_OK)
		return rc;
	if (key == NULL) {
		v->skipped++;
		return FLEETVIEW_OK;
	}
	if (keylen == strlen(FLEET_HEARTBEAT_KEY) &&
	    memcmp(key, FLEET_HEARTBEAT_KEY, keylen) == 0) {
		struct fleet_heartbeat hb = {0};
		char *mem = NULL;

		if (value == NULL) { /* the device's records removed */
			free(d->hbmem);
			d->hbmem = NULL;
			d->has_hb = false;
			return FLEETVIEW_OK;
		}
		rc = fleet_heartbeat_decode(value, vallen, &hb, why, sizeof(why));
		if (rc == FLEET_HEARTBEAT_ERR_NOMEM) {
			fleet_heartbeat_clear(&hb);
			return FLEETVIEW_ERR_NOMEM;
		}
		if (rc != 0) {
			fleet_heartbeat_clear(&hb);
			v->skipped++;
			return FLEETVIEW_OK;
		}
		rc = hb_compact(&hb, &d->hb, &mem);
		fleet_heartbeat_clear(&hb);
		if (rc != FLEETVIEW_OK) /* d->hb untouched: the last one stays */
			return rc;
		free(d->hbmem);
		d->hbmem = mem;
		d->has_hb = true;
		return FLEETVIEW_OK;
	}
	if (fleet_outcome_key_parse(key, keylen, &oname, &onamelen))
		return feed_outcome(d, oname, onamelen, value, vallen, &v->skipped);
	if (connect_key_parse(key, keylen, &k, why, sizeof(why)) == 0 &&
	    k.kind == CONNECT_STATUS_CONNECTOR)
		return feed_status(d, &k, value, vallen, &v->skipped);
	/* Task and topic statuses: a skiff connector has one task, whose state
	 * the connector's says; topic statuses are the REST API's. */
	return FLEETVIEW_OK;
}

enum fleetview_answer fleetview_answer(const struct fleetview *v, const char *device,
                                       const char *name, const char *topic, int64_t offset,
                                       const char **reason)
{
	const struct fv_device *d = find(v, device);
	size_t i;

	*reason = "";
	if (d == NULL || (i = outcome_at(d, name, strlen(name))) == SIZE_MAX)
		return FLEETVIEW_NO_ANSWER;
	if (strcmp(d->out[i].o.topic, topic) != 0 || d->out[i].o.offset < offset)
		return FLEETVIEW_NO_ANSWER;
	if (d->out[i].o.outcome == FLEET_OUTCOME_APPLIED)
		return FLEETVIEW_APPLIED;
	if (d->out[i].o.reason != NULL)
		*reason = d->out[i].o.reason;
	return FLEETVIEW_REFUSED;
}

int64_t fleetview_last_seen(const struct fleetview *v, const char *device)
{
	const struct fv_device *d = find(v, device);

	return d != NULL && d->has_hb ? d->hb.at_ms : -1;
}

void fleetview_age(int64_t at_ms, int64_t now_ms, char *buf, size_t len)
{
	int64_t s = (now_ms - at_ms) / 1000;

	if (at_ms < 0)
		snprintf(buf, len, "never");
	else if (s < 0)
		snprintf(buf, len, "0s ago");
	else if (s < 120)
		snprintf(buf, len, "%" PRId64 "s ago", s);
	else if (s < 2 * 3600)
		snprintf(buf, len, "%" PRId64 "m ago", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, len, "%" PRId64 "h ago", s / 3600);
	else
		snprintf(buf, len, "%" PRId64 "d ago", s / 86400);
}

static bool in_group(const struct fv_device *d, const char *group)
{
	for (size_t i = 0; d->has_hb && i < d->hb.ngroups; i++)
		if (strcmp(d->hb.groups[i], group) == 0)
			return true;
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct fv_device *const *)a)->name, (*(struct fv_device *const *)b)->name);
}

/* The devices f selects, in name order (malloc'd; *n of them). NULL with
 * *n 0 when none, or out of memory (*nomem). */
static struct fv_device **selected(const struct fleetview *v, const struct fleetview_filter *f,
                                   size_t *n, bool *nomem)
{
	struct fv_device **s;

	*n = 0;
	*nomem = false;
	if (v->ndev == 0)
		return NULL;
	if ((s = malloc(v->ndev * sizeof(*s))) == NULL) {
		*nomem = true;
		return NULL;
	}
	for (size_t i = 0; i < v->ndev; i++) {
		const struct fv_device *d = v->dev[i];

		if (f != NULL && f->device != NULL && strcmp(d->name, f->device) != 0)
			continue;
		if (f != NULL && f->group != NULL && !in_group(d, f->group))
			continue;
		s[(*n)++] = v->dev[i];
	}
	qsort(s, *n, sizeof(*s), by_name);
	return s;
}

size_t fleetview_group(const struct fleetview *v, const char *group,
                       void (*fn)(void *ctx, const char *device), void *ctx)
{
	struct fleetview_filter f = {.group = group};
	bool nomem;
	size_t n;
	struct fv_device **s = selected(v, &f, &n, &nomem);

	for (size_t i = 0; i < n; i++)
		fn(ctx, s[i]->name);
	free(s);
	return n;
}

static bool stale(const struct fv_device *d, int64_t now_ms)
{
	return d->has_hb && d->hb.interval_ms > 0 && now_ms - d->hb.at_ms > 2 * d->hb.interval_ms;
}

static const char *health(const struct fv_device *d, int64_t now_ms)
{
	if (!d->has_hb)
		return "unknown";
	return stale(d, now_ms) ? "stale" : d->hb.health;
}

/* 1536 -> "1.5 KB" (powers of 1024, as ps and free show memory). */
static void bytes(int64_t n, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double x = (double)n;
	size_t u = 0;

	while (x >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRId64 " B", n);
	else
		snprintf(buf, len, "%.1f %s", x, unit[u]);
}

/* The CONNECTORS cell: how many the heartbeat lists, then each one whose
 * last status is not RUNNING, "2 (db FAILED)". */
static void connectors_cell(const struct fv_device *d, struct buf *cell)
{
	size_t shown = 0;

	buf_reset(cell);
	if (!d->has_hb) {
		buf_printf(cell, "%zu", d->nst);
	} else {
		buf_printf(cell, "%zu", d->hb.nconnectors + (size_t)d->hb.cut_connectors);
	}
	for (size_t i = 0; i < d->nst; i++) {
		if (d->st[i].state == CONNECT_STATE_RUNNING)
			continue;
		if (shown == 3) {
			buf_addz(cell, " ...");
			break;
		}
		buf_printf(cell, "%s%s %s", shown == 0 ? " (" : ", ", d->st[i].name,
		           connect_state_name(d->st[i].state));
		shown++;
	}
	if (shown > 0)
		buf_addc(cell, ')');
}

#define NCOLS 8

/* The cells of one row into row[NCOLS] (each a buf). */
static void row_cells(const struct fv_device *d, int64_t now_ms, struct buf *row)
{
	char t[64];

	for (size_t c = 0; c < NCOLS; c++)
		buf_reset(&row[c]);
	buf_addz(&row[0], d->name);
	buf_addz(&row[1], health(d, now_ms));
	fleetview_age(d->has_hb ? d->hb.at_ms : -1, now_ms, t, sizeof(t));
	buf_addz(&row[2], t);
	buf_addz(&row[3], d->has_hb ? d->hb.version : "-");
	connectors_cell(d, &row[4]);
	if (d->has_hb) {
		bytes(d->hb.backlog_bytes, t, sizeof(t));
		buf_addz(&row[5], t);
		buf_printf(&row[6], "%" PRId64, d->hb.lost_records);
		bytes(d->hb.rss_kb * 1024, t, sizeof(t));
		buf_addz(&row[7], t);
	} else {
		for (size_t c = 5; c < NCOLS; c++)
			buf_addz(&row[c], "-");
	}
}

int fleetview_table(const struct fleetview *v, const struct fleetview_filter *f, int64_t now_ms,
                    struct buf *out)
{
	static const char *const head[NCOLS] = {"DEVICE",     "HEALTH",  "LAST-SEEN", "VERSION",
	                                        "CONNECTORS", "BACKLOG", "LOST",      "RSS"};
	size_t width[NCOLS], n;
	struct buf row[NCOLS];
	bool nomem;
	struct fv_device **s = selected(v, f, &n, &nomem);
	int rc = FLEETVIEW_OK;

	if (nomem)
		return FLEETVIEW_ERR_NOMEM;
	for (size_t c = 0; c < NCOLS; c++) {
		buf_init(&row[c], 4096);
		width[c] = strlen(head[c]);
	}
	for (size_t i = 0; i < n; i++) {
		row_cells(s[i], now_ms, row);
		for (size_t c = 0; c < NCOLS; c++)
			if (buf_len(&row[c]) > width[c])
				width[c] = buf_len(&row[c]);
	}
	for (size_t c = 0; c + 1 < NCOLS; c++)
		buf_printf(out, "%-*s  ", (int)width[c], head[c]);
	buf_printf(out, "%s\n", head[NCOLS - 1]);
	for (size_t i = 0; i < n; i++) {
		row_cells(s[i], now_ms, row);
		for (size_t c = 0; c + 1 < NCOLS; c++)
			buf_printf(out, "%-*s  ", (int)width[c], buf_cstr(&row[c]));
		buf_printf(out, "%s\n", buf_cstr(&row[NCOLS - 1]));
	}
	for (size_t c = 0; c < NCOLS; c++) {
		if (buf_err(&row[c]) != 0)
			rc = FLEETVIEW_ERR_NOMEM;
		buf_free(&row[c]);
	}
	free(s);
	if (buf_err(out) != 0)
		rc = FLEETVIEW_ERR_NOMEM;
	return rc;
}

static const char *record_name(enum connect_kind k)
{
	switch (k) {
	case CONNECT_CONNECTOR:
		return "connector";
	case CONNECT_TARGET_STATE:
		return "target-state";
	case CONNECT_RESTART:
		return "restart";
	default:
		return "other";
	}
}

static cJSON *device_json(const struct fv_device *d, int64_t now_ms)
{
	cJSON *o = cJSON_CreateObject(), *a, *x;
	bool ok = o != NULL;

#define ADD(fn, k, ...) ok = ok && fn(o, k, __VA_ARGS__) != NULL
#define NUM(k, v) ADD(cJSON_AddNumberToObject, k, (double)(v))
	ADD(cJSON_AddStringToObject, "device", d->name);
	ADD(cJSON_AddStringToObject, "health", health(d, now_ms));
	ok = ok && cJSON_AddBoolToObject(o, "stale", stale(d, now_ms)) != NULL;
	if (d->has_hb) {
		if (d->hb.reason != NULL)
			ADD(cJSON_AddStringToObject, "reason", d->hb.reason);
		else
			ok = ok && cJSON_AddNullToObject(o, "reason") != NULL;
		NUM("last_seen_ms", d->hb.at_ms);
		NUM("age_ms", now_ms - d->hb.at_ms);
		ADD(cJSON_AddStringToObject, "version", d->hb.version);
		NUM("interval_ms", d->hb.interval_ms);
		NUM("seq", d->hb.seq);
		ok = ok && (a = cJSON_AddArrayToObject(o, "groups")) != NULL;
		for (size_t i = 0; ok && i < d->hb.ngroups; i++)
			ok = cJSON_AddItemToArray(a, cJSON_CreateString(d->hb.groups[i]));
		NUM("backlog_bytes", d->hb.backlog_bytes);
		ok = ok && (x = cJSON_AddObjectToObject(o, "lost")) != NULL &&
		     cJSON_AddNumberToObject(x, "records", (double)d->hb.lost_records) != NULL &&
		     cJSON_AddNumberToObject(x, "bytes", (double)d->hb.lost_bytes) != NULL &&
		     cJSON_AddNumberToObject(x, "files", (double)d->hb.lost_files) != NULL;
		NUM("rss_kb", d->hb.rss_kb);
	} else {
		static const char *const none[] = {
		    "reason", "last_seen_ms", "age_ms",        "version", "interval_ms",
		    "seq",    "groups",       "backlog_bytes", "lost",    "rss_kb"};

		for (size_t i = 0; ok && i < sizeof(none) / sizeof(none[0]); i++)
			ok = cJSON_AddNullToObject(o, none[i]) != NULL;
	}
	ok = ok && (a = cJSON_AddArrayToObject(o, "connectors")) != NULL;
	/* The heartbeat's list first (the live ones), each with its last status. */
	for (size_t i = 0; ok && d->has_hb && i < d->hb.nconnectors; i++) {
		size_t j = status_at(d, d->hb.connectors[i], strlen(d->hb.connectors[i]));

		ok = (x = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(a, x) &&
		     cJSON_AddStringToObject(x, "name", d->hb.connectors[i]) != NULL &&
		     (j == SIZE_MAX ? cJSON_AddNullToObject(x, "state") != NULL
		                    : cJSON_AddStringToObject(
		                          x, "state", connect_state_name(d->st[j].state)) != NULL);
	}
	for (size_t j = 0; ok && j < d->nst; j++) {
		bool listed = false;

		for (size_t i = 0; d->has_hb && i < d->hb.nconnectors; i++)
			listed = listed || strcmp(d->hb.connectors[i], d->st[j].name) == 0;
		if (listed)
			continue;
		ok =
		    (x = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(a, x) &&
		    cJSON_AddStringToObject(x, "name", d->st[j].name) != NULL &&
		    cJSON_AddStringToObject(x, "state", connect_state_name(d->st[j].state)) != NULL;
	}
	ok = ok && (a = cJSON_AddArrayToObject(o, "outcomes")) != NULL;
	for (size_t i = 0; ok && i < d->nout; i++) {
		const struct fleet_outcome *oc = &d->out[i].o;

		ok = (x = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(a, x) &&
		     cJSON_AddStringToObject(x, "name", d->out[i].name) != NULL &&
		     cJSON_AddStringToObject(x, "topic", oc->topic) != NULL &&
		     cJSON_AddNumberToObject(x, "offset", (double)oc->offset) != NULL &&
		     cJSON_AddStringToObject(x, "record", record_name(oc->record)) != NULL &&
		     cJSON_AddStringToObject(x, "outcome", fleet_outcome_name(oc->outcome)) !=
		         NULL &&
		     (oc->reason != NULL ? cJSON_AddStringToObject(x, "reason", oc->reason) != NULL
		                         : cJSON_AddNullToObject(x, "reason") != NULL) &&
		     cJSON_AddNumberToObject(x, "at_ms", (double)oc->at_ms) != NULL;
	}
#undef NUM
#undef ADD
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int fleetview_json(const struct fleetview *v, const struct fleetview_filter *f, int64_t now_ms,
                   struct buf *out)
{
	bool nomem, ok;
	size_t n;
	struct fv_device **s = selected(v, f, &n, &nomem);

	/* One device's tree at a time: a document of 10,000 devices as one
	 * cJSON tree is ten times the view's own memory. */
	ok = !nomem && buf_addz(out, "{\"devices\":[") == 0;
	for (size_t i = 0; ok && i < n; i++) {
		cJSON *d = device_json(s[i], now_ms);
		char *text = d != NULL ? cJSON_PrintUnformatted(d) : NULL;

		ok =
		    text != NULL && (i == 0 || buf_addc(out, ',') == 0) && buf_addz(out, text) == 0;
		free(text);
		cJSON_Delete(d);
	}
	ok = ok && buf_printf(out, "],\"skipped\":%" PRIu64 "}\n", v->skipped) == 0;
	free(s);
	return ok ? FLEETVIEW_OK : FLEETVIEW_ERR_NOMEM;
}
