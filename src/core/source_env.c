/* source_env: what the worker offers a source and the source in the loop
 * (core/source_env.h). */
#include "core/source_env.h"

#include "core/worker.h"

#include "config/settings.h"
#include "core/commits.h"
#include "core/conn.h"
#include "core/loop.h"
#include "core/partitions.h"
#include "config/config.h"
#include "core/log.h"
#include "offsets/offsets.h"
#include "util/rstr.h"
#include "core/sink.h"
#include "core/stats.h"
#include "transform/transform.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

struct source_env_host {
	struct source_env_conf conf;
	struct offsets *offsets; /* borrowed (source_env_host_set_offsets) */
	uint64_t *logged;        /* the log exporter: value last logged, by registry index */
	size_t nlogged;
};

int source_env_host_new(const struct source_env_conf *conf, struct source_env_host **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return SOURCE_ENV_ERR_NOMEM;
	(*out)->conf = *conf;
	return 0;
}

void source_env_host_destroy(struct source_env_host *h)
{
	if (h == NULL)
		return;
	free(h->logged);
	free(h);
}

void source_env_host_set_offsets(struct source_env_host *h, struct offsets *offsets)
{
	h->offsets = offsets;
}

/* ---- what the worker offers sources -------------------------------------- */

/* ["connector",{partition}] as a shared string (util/rstr.h: the offset
 * store keeps it, not a copy), or NULL. */
static char *offset_key(const char *connector, const char *partition_json)
{
	cJSON *arr = cJSON_CreateArray(), *map = cJSON_Parse(partition_json);
	char *text = NULL, *key = NULL;

	if (arr != NULL && map != NULL && cJSON_IsObject(map)) {
		cJSON_AddItemToArray(arr, cJSON_CreateString(connector));
		cJSON_AddItemToArray(arr, map);
		map = NULL;
		text = cJSON_PrintUnformatted(arr);
	}
	if (text != NULL)
		key = rstr_new(text, strlen(text));
	free(text);
	cJSON_Delete(map);
	cJSON_Delete(arr);
	return key;
}

static struct partition *env_partition(struct source_env *env, const char *partition_json)
{
	struct conn *c = env->opaque;
	struct source_env_host *h = c->host;
	char *key = offset_key(env->connector, partition_json);
	struct partition *p;

	if (key == NULL)
		return NULL;
	/* By key, not by a walk: a glob of 20,000 files asks for 20,000. */
	if ((p = partitions_find(h->conf.parts, key)) != NULL) {
		rstr_drop(key);
		return p;
	}
	/* Stored already (a restart): the store's string, not a second one. */
	if (offsets_key_of(h->offsets, key) != NULL) {
		const char *stored = rstr_hold(offsets_key_of(h->offsets, key));

		rstr_drop(key);
		key = (char *)stored;
	}
	if ((p = partitions_add(h->conf.parts, key, c)) == NULL) {
		rstr_drop(key);
		return NULL;
	}
	return p;
}

static const char *env_committed(struct source_env *env, struct partition *p)
{
	struct conn *c = env->opaque;

	return offsets_get(c->host->offsets, p->key);
}

static char *partition_of_key(const char *key);

/* ["<connector>", as the keys of env's partitions begin (offset_key):
 * malloc'd, or NULL. */
static char *key_prefix(const char *connector)
{
	cJSON *name = cJSON_CreateString(connector);
	char *text = name != NULL ? cJSON_PrintUnformatted(name) : NULL;
	size_t len = text != NULL ? strlen(text) : 0;
	char *out = text != NULL ? malloc(len + 3) : NULL;

	if (out != NULL) {
		out[0] = '[';
		memcpy(out + 1, text, len);
		out[len + 1] = ',';
		out[len + 2] = '\0';
	}
	free(text);
	cJSON_Delete(name);
	return out;
}

/* source_env.stored: one walk of the store, the keys of this connector's
 * name. */
static void env_stored(struct source_env *env,
                       void (*fn)(void *arg, const char *partition_json, const char *offset_json),
                       void *arg)
{
	struct conn *c = env->opaque;
	const struct offsets *o = c->host->offsets;
	char *prefix = key_prefix(env->connector);
	size_t plen = prefix != NULL ? strlen(prefix) : 0;

	for (size_t i = 0; prefix != NULL && o != NULL && i < offsets_count(o); i++) {
		const char *key = offsets_key(o, i);
		char *part;

		if (strncmp(key, prefix, plen) != 0 || (part = partition_of_key(key)) == NULL)
			continue;
		fn(arg, part, offsets_value(o, i));
		free(part);
	}
	if (prefix == NULL)
		log_warn("connector %s: out of memory listing its stored offsets: those of "
		         "partitions gone since are not looked at",
		         env->connector);
	free(prefix);
}

/* Where reading of p starts, stored when p has nothing stored and nothing
 * in flight (source.h): it names no record, so it passes none. The flush
 * is due at once; every anchor of this turn goes into the same write. */
static void env_anchor(struct source_env *env, struct partition *p, const struct src_offset *off)
{
	struct conn *c = env->opaque;
	struct source_env_host *h = c->host;
	int rc;

	if (c->ctx == NULL || (rc = commits_anchor(h->conf.commits, p, off)) == 0)
		return;
	if (rc < 0)
		log_warn("offsets: cannot record where %s starts (out of memory or too many "
		         "partitions): a restart before its first acknowledgement reads it again "
		         "from the file then at its path",
		         p->key);
	else
		h->conf.ops->flush_soon(h->conf.ctx);
}

/* Makes room in h->logged for registry index i. */
static int room_logged(struct source_env_host *h, size_t i)
{
	size_t n = h->nlogged ? h->nlogged : 32;
	uint64_t *grown;

	if (i < h->nlogged)
		return 0;
	while (n <= i)
		n *= 2;
	grown = realloc(h->logged, n * sizeof(*grown));
	if (grown == NULL)
		return STATS_ERR_NOMEM;
	memset(grown + h->nlogged, 0, (n - h->nlogged) * sizeof(*grown));
	h->logged = grown;
	h->nlogged = n;
	return 0;
}

/* c's counter name (of partition part, a JSON object, or the connector's
 * when NULL), registered on first use with d, or with a generic help when d
 * is NULL. NULL: out of memory, or the name clashes with another metric
 * (said in the log). */
static struct event *event(struct conn *c, const char *name, const struct stats_desc *d,
                           const char *part)
{
	static const char generic[] = "an event the source counted (the docs page of its "
	                              "source says what each counter means)";
	struct stats_desc own = {
	    .name = name, .type = STATS_COUNTER, .help = generic, .flags = STATS_F_LOG};
	struct stats_labels l = {.connector = c->cs->name, .partition = part};
	struct event *e;
	int rc = 0;

	for (size_t i = 0; i < c->nevents; i++)
		if ((c->events[i].name == name || strcmp(c->events[i].name, name) == 0) &&
		    (part == NULL ? c->events[i].partition == NULL
		                  : c->events[i].partition != NULL &&
		                        strcmp(c->events[i].partition, part) == 0))
			return &c->events[i];
	if (d == NULL)
		d = &own;
	if (c->nevents == c->capevents) {
		size_t cap = c->capevents ? c->capevents * 2 : 8;

		e = realloc(c->events, cap * sizeof(*e));
		rc = e != NULL ? 0 : STATS_ERR_NOMEM;
		if (e != NULL) {
			c->events = e;
			c->capevents = cap;
		}
	}
	e = &c->events[c->nevents];
	e->partition = NULL;
	if (rc == 0 && part != NULL && (e->partition = strdup(part)) == NULL)
		rc = STATS_ERR_NOMEM;
	if (rc == 0)
		rc = stats_register(c->host->conf.stats, d, &l, &e->value, &e->index);
	if (rc == 0)
		rc = room_logged(c->host, e->index);
	if (rc != 0) {
		log_error("connector %s: cannot count %s: %s", c->cs->name, name,
		          stats_strerror(rc));
		free(e->partition);
		return NULL;
	}
	e->name = name;
	c->nevents++;
	return e;
}

/* The first time an event is counted it is logged at once; later moves at
 * the next offset flush (log_counters). */
static void env_count(struct source_env *env, const char *name, uint64_t n)
{
	struct conn *c = env->opaque;
	struct event *e = event(c, name, NULL, NULL);

	if (e == NULL)
		return;
	stats_add(e->value, n);
	if (c->host->logged[e->index] == 0) {
		log_warn("connector %s: %s=%llu", env->connector, name,
		         (unsigned long long)*e->value);
		c->host->logged[e->index] = *e->value;
	}
}

static void env_set(struct source_env *env, const char *name, uint64_t value)
{
	struct event *e = event(env->opaque, name, NULL, NULL);

	if (e != NULL)
		*e->value = value;
}

/* The partition map of a key ["connector",{...}] (offset_key's shape), as a
 * malloc'd string, or NULL: kept only where a partition's stat needs it, not
 * beside every partition. */
static char *partition_of_key(const char *key)
{
	const char *p = key + 2; /* past [" */

	while (*p != '\0' && *p != '"')
		p += *p == '\\' && p[1] != '\0' ? 2 : 1;
	if (*p != '"' || p[1] != ',' || strlen(p) < 3)
		return NULL;
	p += 2;
	return strndup(p, strlen(p) - 1); /* without the closing ] */
}

/* A partition's counter (added to) or gauge (set); logged as env_count's. */
static void env_partition_stat(struct source_env *env, struct partition *p,
                               const struct stats_desc *d, uint64_t n)
{
	struct conn *c = env->opaque;
	char *json = p != NULL ? partition_of_key(p->key) : NULL;
	struct event *e = json != NULL ? event(c, d->name, d, json) : NULL;

	if (e != NULL && d->type == STATS_GAUGE)
		*e->value = n;
	else if (e != NULL)
		stats_add(e->value, n);
	if (e != NULL && c->host->logged[e->index] == 0 && *e->value != 0) {
		log_warn("connector %s: %s %s=%llu", env->connector, json, d->name,
		         (unsigned long long)*e->value);
		c->host->logged[e->index] = *e->value;
	}
	free(json);
}

/* Registered now, counted through env_count by name. */
static int env_counter(struct source_env *env, const struct stats_desc *d)
{
	return event(env->opaque, d->name, d, NULL) != NULL ? 0 : SOURCE_ERR_NOMEM;
}

__attribute__((format(printf, 3, 4))) static void env_log(struct source_env *env, int level,
                                                          const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vconnector((enum log_level)level, env->connector, fmt, ap);
	va_end(ap);
}

void source_env_log_counters(struct source_env_host *h)
{
	struct stats_view v;
	size_t cur = 0;

	while (stats_next(h->conf.stats, &cur, &v)) {
		if (!(v.desc->flags & STATS_F_LOG) || v.index >= h->nlogged ||
		    v.value == h->logged[v.index])
			continue;
		log_warn("connector %s: %s%s%s=%llu", v.connector ? v.connector : "-",
		         v.partition ? v.partition : "", v.partition ? " " : "", v.desc->name,
		         (unsigned long long)v.value);
		h->logged[v.index] = v.value;
	}
}

/* A source descriptor fired or its deadline passed: poll it this turn (or
 * watch it, while reading pauses). */
static void on_source_fd(struct loop *l, struct loop_fd *watch, int fd, int revents, void *arg)
{
	((struct conn *)arg)->ready = true;
	((struct conn *)arg)->woke = true;
}

static void on_source_due(struct loop *l, struct loop_timer *t, void *arg)
{
	((struct conn *)arg)->ready = true;
}

/* Asks c's source for its descriptors into c->pfds, growing it until they
 * fit. Returns how many, or WORKER_ERR_NOMEM. */
static int source_fds(struct conn *c)
{
	for (;;) {
		int n = c->cap > 0 && c->cs->ops->pollfds != NULL
		            ? c->cs->ops->pollfds(c->ctx, c->pfds, c->cap)
		            : 0;
		int cap = c->cap ? c->cap * 2 : 4;
		struct pollfd *p;

		if (n < c->cap)
			return n;
		/* Full: there may be more than fit. */
		p = realloc(c->pfds, (size_t)cap * sizeof(*p));
		if (p == NULL)
			return WORKER_ERR_NOMEM;
		c->pfds = p;
		c->cap = cap;
	}
}

/* Mirrors c's descriptors into the loop: watched while active, else none. */
static int watch_fds(struct conn *c, bool active)
{
	int n = active ? source_fds(c) : 0;

	if (n < 0)
		return n;
	if (n > c->nwatches) {
		struct loop_fd **ws = realloc(c->watches, (size_t)n * sizeof(*ws));

		if (ws == NULL)
			return WORKER_ERR_NOMEM;
		c->watches = ws;
		for (; c->nwatches < n; c->nwatches++)
			if (loop_fd_add(c->host->conf.loop, -1, 0, on_source_fd, c,
			                &c->watches[c->nwatches]) != 0)
				return WORKER_ERR_NOMEM;
	}
	for (int i = 0; i < c->nwatches; i++) {
		if (i < n)
			loop_fd_set(c->watches[i], c->pfds[i].fd, c->pfds[i].events);
		else
			loop_fd_set(c->watches[i], -1, 0);
	}
	return 0;
}

enum source_env_mode source_env_mode(const struct conn *c, bool blocked)
{
	if (c->removed || c->stopped || c->ctx == NULL)
		return SOURCE_ENV_IDLE;
	if (conn_reading(c) && !blocked)
		return SOURCE_ENV_READ;
	/* Paused by a person, or records cannot go to Kafka: what a rotation
	 * deletes meanwhile would be lost unseen. */
	return c->cs->ops->watch != NULL ? SOURCE_ENV_WATCH : SOURCE_ENV_IDLE;
}

int source_env_watch(struct conn *c, enum source_env_mode mode, int64_t now)
{
	bool fds = mode == SOURCE_ENV_READ || (mode == SOURCE_ENV_WATCH && now >= c->watch_rest);
	int64_t d = -1;

	if (watch_fds(c, fds) != 0)
		return WORKER_ERR_NOMEM;
	if (mode == SOURCE_ENV_WATCH) {
		/* Resting: wake when the descriptors are to be watched again. */
		d = !fds               ? c->watch_rest - now
		    : c->watch_at >= 0 ? (c->watch_at > now ? c->watch_at - now : 0)
		                       : -1;
	} else if (mode == SOURCE_ENV_READ && (c->ready || c->next < c->batch.n)) {
		d = 0;
	} else if (mode == SOURCE_ENV_READ && c->cs->ops->timeout_ms != NULL) {
		d = c->cs->ops->timeout_ms(c->ctx, now);
	} else if (mode == SOURCE_ENV_READ) {
		d = SOURCE_DEFAULT_POLL_MS;
	}
	loop_timer_set(c->deadline, d >= 0 ? now + d : -1, 0);
	return 0;
}

void source_env_notice(struct conn *c, int64_t now)
{
	int64_t d;

	if (!c->woke && (c->watch_at < 0 || now < c->watch_at))
		return; /* the loop woke to end a rest, or for another reason */
	c->woke = false;
	d = c->cs->ops->watch(c->ctx, now);
	c->watch_at = d >= 0 ? now + d : -1;
	c->watch_rest = now + SOURCE_WATCH_REST_MS;
	c->ready = true; /* what it noticed is read once reading resumes */
}

/* source_env.value_bytes_max for c. */
static size_t value_budget(const struct conn *c)
{
	size_t max = c->host->conf.ops->message_max(c->host->conf.ctx);
	/* The key, headers, the schema envelope and the record's framing: 16
	 * KiB, or a quarter of a message.max.bytes the user made small. */
	size_t room = max / 4 < 16384 ? max / 4 : 16384;
	size_t per_byte = c->cs->value_conv.kind == CONV_JSON     ? 6
	                  : c->cs->value_conv.kind == CONV_STRING ? 3
	                                                          : 1;

	return (max - room) / per_byte;
}

/* source_env.state_file for c: <offsets file>.state-<name>, the name's
 * bytes other than [A-Za-z0-9._-] as %XX (a name too long for one
 * directory entry: its FNV-1a 64 hash in hex); NULL without an offsets
 * file, or out of memory. */
static char *state_file(const struct conn *c)
{
	static const char hex[] = "0123456789abcdef";
	const char *file = c->host->conf.offset_file;
	const char *base, *name = c->cs->name;
	size_t len, at;
	char *out;

	if (file == NULL || file[0] == '\0')
		return NULL;
	base = strrchr(file, '/') != NULL ? strrchr(file, '/') + 1 : file;
	len = strlen(file);
	if ((out = malloc(len + 7 + 3 * strlen(name) + 1)) == NULL)
		return NULL;
	memcpy(out, file, len);
	memcpy(out + len, ".state-", 7);
	at = len + 7;
	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-') {
			out[at++] = (char)*p;
		} else {
			out[at++] = '%';
			out[at++] = hex[*p >> 4];
			out[at++] = hex[*p & 15];
		}
	}
	if (at - (size_t)(base - file) > 255) {
		uint64_t h = UINT64_C(0xcbf29ce484222325);

		for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
			h = (h ^ *p) * UINT64_C(0x100000001b3);
		at = len + 7;
		for (int i = 15; i >= 0; i--)
			out[at++] = hex[(h >> (4 * i)) & 15];
	}
	out[at] = '\0';
	return out;
}

/* source_env.allow_path: the connector's guard's. */
static int env_allow_path(struct source_env *env, const char *real_path, char *why, size_t len)
{
	const struct source_guard *g = ((struct conn *)env->opaque)->cs->guard;

	return g->allow_path(g->arg, real_path, why, len);
}

void source_env_init(struct source_env_host *h, struct conn *c)
{
	c->host = h;
	c->env = (struct source_env){.opaque = c,
	                             .connector = c->cs->name,
	                             .partition = env_partition,
	                             .committed = env_committed,
	                             .stored = env_stored,
	                             .anchor = env_anchor,
	                             .counter = env_counter,
	                             .count = env_count,
	                             .set = env_set,
	                             .partition_stat = env_partition_stat,
	                             .log = env_log};
	c->env.value_bytes_max = value_budget(c);
	c->env.state_file = state_file(c);
	c->env.state_interval_ms = h->conf.ops->flush_interval(h->conf.ctx);
	if (c->cs->guard != NULL && c->cs->guard->allow_path != NULL)
		c->env.allow_path = env_allow_path;
	/* Rendered structs skip a tree per record; transforms need the tree. */
	if (transform_chain_len(c->cs->chain) == 0) {
		c->env.json_values = c->cs->value_conv.kind == CONV_JSON;
		c->env.json_keys = c->cs->key_conv.kind == CONV_JSON;
	}
}

int source_env_register(struct conn *c)
{
	static const struct stats_desc descs[] = {
	    {"records_produced", STATS_COUNTER, "records handed to the producer", 0},
	    {"records_acked", STATS_COUNTER, "records Kafka acknowledged", 0},
	    {"records_failed", STATS_COUNTER,
	     "records a transform, converter or Kafka failed on, skipped or not", 0},
	    {"converter_utf8_replaced", STATS_COUNTER,
	     "invalid UTF-8 sequences a converter replaced with U+FFFD", 0},
	    {"records_skipped", STATS_COUNTER,
	     "records a transform or converter failed on, skipped (errors.tolerance=all)",
	     STATS_F_LOG},
	};
	uint64_t **cells[] = {&c->produced, &c->acked, &c->failed, &c->utf8_replaced,
	                      &c->tol.skipped};
	struct stats_labels l = {.connector = c->cs->name};

	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		if (stats_register(c->host->conf.stats, &descs[i], &l, cells[i], NULL) != 0)
			return WORKER_ERR_NOMEM;
	if (loop_timer_add(c->host->conf.loop, -1, 0, on_source_due, c, &c->deadline) != 0)
		return WORKER_ERR_NOMEM;
	return 0;
}

void source_env_free(struct conn *c)
{
	free((char *)c->env.state_file);
	c->env.state_file = NULL;
	free(c->pfds);
	free(c->watches);
	for (size_t i = 0; i < c->nevents; i++)
		free(c->events[i].partition);
	free(c->events);
}
