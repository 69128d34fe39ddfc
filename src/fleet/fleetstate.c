/* fleetstate: see fleetstate.h. Each topic keeps, per connector name, the
 * last connector- and target-state- record it holds (a slot); restart
 * requests wait in a queue of one per name until a plan takes them. A plan
 * resolves each name over the topics by rank (the device's own topic
 * first, then the later group over the earlier) and compares the result
 * with what the caller says is applied.
 *
 * Why nothing is removed on a partial read: the absence of a key is the
 * only trace a compacted-away tombstone leaves, and a read that stopped
 * short (a topic not read to its start high watermark, a record refused at
 * a bound) cannot tell "absent" from "not read yet". Removing then would
 * stop a connector the operator never removed; waiting costs one poll. */
#include "fleet/fleetstate.h"

#include "util/hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEY 1024

#define MARKER_PREFIX FLEETSTATE_MARKER_KEY ":"
#define WHY_RECREATED "config topic was recreated: kept until a record names it"
#define WHY_TOMBSTONE "removed: its connector- record was deleted (a tombstone)"
#define WHY_ABSENT "removed: no longer in its config topic, read whole (compacted tombstone)"
#define WHY_GONE "removed: its config topic is no longer read (fleet.groups)"

enum rstate { R_NONE, R_LIVE, R_TOMB, R_BAD };

/* The last record of one key in one topic. */
struct rec {
	enum rstate st;
	int64_t offset;
	cJSON *props;               /* connector-, R_LIVE */
	enum connect_target target; /* target-state-, R_LIVE */
	char *why;                  /* R_BAD */
};

struct slot {
	char *name;
	uint64_t seq; /* order first read, over all topics */
	struct rec cfg, tgt;
};

struct topic {
	char *name;
	char *id;     /* NULL until begun or a record names one */
	int64_t hwm;  /* high watermark at start; -1: not begun */
	int64_t pos;  /* next offset to read */
	char *alias;  /* the id a first marker replaced (the same topic), or NULL */
	bool refused; /* a record was not kept: no absence proven here */
	struct slot *slots;
	size_t n, cap;
	struct hash index;
};

struct restart {
	char *name;
	size_t topic;
	char *topic_id;
	int64_t offset;
	bool include_tasks, only_failed;
	char *why; /* a value that does not decode */
};

struct fleetstate {
	struct topic *topics;
	size_t ntopics;
	size_t nslots;
	uint64_t seq;
	struct restart *restarts;
	size_t nrestarts, caprestarts;
	struct hash rindex;
	char **reported; /* names reported kept after their topic was recreated */
	size_t nreported, capreported;
	struct hash repindex;
	struct fleetstate_counts counts;
};

struct fleetstate_plan {
	struct fleetstate_step *steps;
	size_t n, cap;
	char **strs;
	size_t nstrs, capstrs;
	cJSON **jsons;
	size_t njsons, capjsons;
	int err;
};

const char *fleetstate_strerror(int code)
{
	switch (code) {
	case FLEETSTATE_OK:
		return "ok";
	case FLEETSTATE_ERR_NOMEM:
		return "out of memory";
	case FLEETSTATE_ERR_LIMIT:
		return "a bound of the fleet's reducer passed: record not kept";
	case FLEETSTATE_ERR_TOPIC:
		return "a topic the fleet does not read";
	case FLEETSTATE_ERR_ARG:
		return "no config topic, an empty name or a topic named twice";
	default:
		return "failed";
	}
}

const char *fleetstate_op_name(enum fleetstate_op op)
{
	static const char *const names[] = {
	    [FLEETSTATE_ADD] = "ADD",       [FLEETSTATE_REPLACE] = "REPLACE",
	    [FLEETSTATE_ACK] = "ACK",       [FLEETSTATE_TARGET_STATE] = "TARGET_STATE",
	    [FLEETSTATE_REMOVE] = "REMOVE", [FLEETSTATE_RESTART] = "RESTART",
	    [FLEETSTATE_REPORT] = "REPORT",
	};

	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
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

/* Grows *arr (of *cap elements of size) for one more than n. */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr;
	size_t ncap = *cap ? *cap * 2 : 8;
	void *q;

	if (n < *cap)
		return 0;
	q = reallocarray(*p, ncap, size);
	if (q == NULL)
		return FLEETSTATE_ERR_NOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

static void rec_clear(struct rec *r)
{
	cJSON_Delete(r->props);
	free(r->why);
	memset(r, 0, sizeof(*r));
}

static void topic_clear(struct topic *t)
{
	for (size_t i = 0; i < t->n; i++) {
		rec_clear(&t->slots[i].cfg);
		rec_clear(&t->slots[i].tgt);
		free(t->slots[i].name);
	}
	t->n = 0;
	hash_clear(&t->index);
}

static void restart_clear(struct restart *r)
{
	free(r->name);
	free(r->topic_id);
	free(r->why);
}

void fleetstate_destroy(struct fleetstate *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->ntopics; i++) {
		struct topic *t = &st->topics[i];

		topic_clear(t);
		free(t->slots);
		hash_free(&t->index);
		free(t->name);
		free(t->id);
		free(t->alias);
	}
	free(st->topics);
	for (size_t i = 0; i < st->nrestarts; i++)
		restart_clear(&st->restarts[i]);
	free(st->restarts);
	hash_free(&st->rindex);
	for (size_t i = 0; i < st->nreported; i++)
		free(st->reported[i]);
	free(st->reported);
	hash_free(&st->repindex);
	free(st);
}

int fleetstate_new(const char *const *topics, size_t ntopics, struct fleetstate **out)
{
	struct fleetstate *st = NULL;

	*out = NULL;
	if (ntopics == 0)
		return FLEETSTATE_ERR_ARG;
	for (size_t i = 0; i < ntopics; i++) {
		if (topics[i] == NULL || topics[i][0] == '\0')
			return FLEETSTATE_ERR_ARG;
		for (size_t j = 0; j < i; j++)
			if (strcmp(topics[i], topics[j]) == 0)
				return FLEETSTATE_ERR_ARG;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->topics = calloc(ntopics, sizeof(*st->topics))) == NULL)
		goto nomem;
	st->ntopics = ntopics;
	hash_init(&st->rindex);
	hash_init(&st->repindex);
	for (size_t i = 0; i < ntopics; i++) {
		struct topic *t = &st->topics[i];

		hash_init(&t->index);
		t->hwm = -1;
		if ((t->name = strdup(topics[i])) == NULL)
			goto nomem;
	}
	*out = st;
	return 0;
nomem:
	fleetstate_destroy(st);
	return FLEETSTATE_ERR_NOMEM;
}

static struct topic *topic_of(struct fleetstate *st, const char *name, size_t *idx)
{
	for (size_t i = 0; name != NULL && i < st->ntopics; i++)
		if (strcmp(st->topics[i].name, name) == 0) {
			if (idx != NULL)
				*idx = i;
			return &st->topics[i];
		}
	return NULL;
}

/* t now is the topic of id (a first id, or a topic deleted and recreated:
 * then what the old one said is forgotten, and everything in the new one
 * is news). */
static int set_id(struct fleetstate *st, struct topic *t, const char *id)
{
	char *copy;

	if (id == NULL || (t->id != NULL && strcmp(t->id, id) == 0))
		return 0;
	if ((copy = strdup(id)) == NULL)
		return FLEETSTATE_ERR_NOMEM;
	if (t->id != NULL) {
		st->nslots -= t->n;
		topic_clear(t);
		t->hwm = 0;
		t->pos = 0;
		t->refused = false;
		free(t->alias);
		t->alias = NULL;
		st->counts.recreated++;
	}
	free(t->id);
	t->id = copy;
	return 0;
}

/* The topic's marker (FLEETSTATE_MARKER_KEY, value a UUID skiff fleet wrote): its id
 * from here on. A first marker names the topic it is read in: the id it
 * replaces stays an alias (what was applied and refused under it is the
 * same topic's). Another marker than the topic's means the topic was
 * deleted and recreated: what the old one said is forgotten, the end of the
 * read stays. */
static int take_marker(struct fleetstate *st, struct topic *t, const struct fleetstate_record *rec)
{
	size_t len = sizeof(MARKER_PREFIX) + rec->valuelen;
	int64_t hwm = t->hwm;
	char *id;
	int rc;

	st->counts.skipped++;
	if (rec->value == NULL || rec->valuelen == 0 || rec->valuelen > FLEETSTATE_MARKER_MAX)
		return 0;
	for (size_t i = 0; i < rec->valuelen; i++)
		if (rec->value[i] <= ' ' || rec->value[i] > '~')
			return 0;
	if ((id = malloc(len)) == NULL)
		return FLEETSTATE_ERR_NOMEM;
	snprintf(id, len, "%s%.*s", MARKER_PREFIX, (int)rec->valuelen, rec->value);
	if (t->id != NULL && strcmp(t->id, id) == 0) {
		free(id);
		return 0;
	}
	if (t->id != NULL && strncmp(t->id, MARKER_PREFIX, strlen(MARKER_PREFIX)) == 0) {
		rc = set_id(st, t, id);
		free(id);
		free(t->alias);
		t->alias = NULL;
		t->hwm = hwm;
		t->pos = rec->offset + 1;
		return rc;
	}
	free(t->alias);
	t->alias = t->id;
	t->id = id;
	return 0;
}

int fleetstate_begin(struct fleetstate *st, const char *topic, const char *topic_id, int64_t hwm)
{
	struct topic *t = topic_of(st, topic, NULL);
	int rc;

	if (t == NULL)
		return FLEETSTATE_ERR_TOPIC;
	if ((rc = set_id(st, t, topic_id)) != 0)
		return rc;
	t->hwm = hwm < 0 ? 0 : hwm;
	return 0;
}

int fleetstate_position(struct fleetstate *st, const char *topic, int64_t next)
{
	struct topic *t = topic_of(st, topic, NULL);

	if (t == NULL)
		return FLEETSTATE_ERR_TOPIC;
	if (next > t->pos)
		t->pos = next;
	return 0;
}

static bool topic_done(const struct topic *t)
{
	return t->hwm >= 0 && t->pos >= t->hwm && !t->refused;
}

bool fleetstate_complete(const struct fleetstate *st)
{
	for (size_t i = 0; i < st->ntopics; i++)
		if (!topic_done(&st->topics[i]))
			return false;
	return true;
}

const char *fleetstate_topic_id(struct fleetstate *st, const char *topic)
{
	struct topic *t = topic_of(st, topic, NULL);

	return t == NULL ? NULL : t->id;
}

void fleetstate_counts(const struct fleetstate *st, struct fleetstate_counts *out)
{
	*out = st->counts;
}

/* ---- taking records -------------------------------------------------------- */

/* The slot of name (malloc'd: taken over, or freed when the slot exists). */
static int slot_of(struct fleetstate *st, struct topic *t, char *name, struct slot **out,
                   char *errbuf, size_t errlen)
{
	size_t i;

	if (hash_get(&t->index, name, &i)) {
		free(name);
		*out = &t->slots[i];
		return 0;
	}
	if (st->nslots >= FLEETSTATE_MAX_NAMES) {
		why(errbuf, errlen,
		    "topic %s: connector %s: more than %d connector names over the "
		    "fleet's config topics",
		    t->name, name, FLEETSTATE_MAX_NAMES);
		free(name);
		return FLEETSTATE_ERR_LIMIT;
	}
	if (grow(&t->slots, &t->cap, t->n, sizeof(*t->slots)) != 0 ||
	    hash_put(&t->index, name, t->n) != 0) {
		free(name);
		return FLEETSTATE_ERR_NOMEM;
	}
	memset(&t->slots[t->n], 0, sizeof(t->slots[t->n]));
	t->slots[t->n].name = name;
	t->slots[t->n].seq = st->seq++;
	*out = &t->slots[t->n++];
	st->nslots++;
	return 0;
}

/* r becomes the record of rec (kind: connector- or target-state-). */
static int set_rec(struct fleetstate *st, struct rec *r, enum connect_kind kind,
                   const struct fleetstate_record *rec, const char *name)
{
	char err[256] = "";
	int rc;

	rec_clear(r);
	r->offset = rec->offset;
	if (rec->value == NULL) {
		r->st = R_TOMB;
		return 0;
	}
	if (rec->valuelen > FLEETSTATE_MAX_VALUE) {
		snprintf(err, sizeof(err), "a value of %zu bytes passes the limit of %d",
		         rec->valuelen, FLEETSTATE_MAX_VALUE);
		rc = CONNECT_RECORDS_ERR_SHAPE;
	} else if (kind == CONNECT_CONNECTOR) {
		rc = connect_config_decode(rec->value, rec->valuelen, &r->props, err, sizeof(err));
	} else {
		rc = connect_target_decode(rec->value, rec->valuelen, &r->target, err, sizeof(err));
	}
	if (rc == CONNECT_RECORDS_ERR_NOMEM)
		return FLEETSTATE_ERR_NOMEM;
	if (rc == 0) {
		r->st = R_LIVE;
		return 0;
	}
	st->counts.bad++;
	r->st = R_BAD;
	if (asprintf(&r->why, "%s%s at offset %lld of %s refused: %s",
	             kind == CONNECT_CONNECTOR ? "connector-" : "target-state-", name,
	             (long long)rec->offset, rec->topic, err) < 0) {
		r->why = NULL;
		return FLEETSTATE_ERR_NOMEM;
	}
	return 0;
}

/* Queues a restart request (one per name: a later one replaces it). */
static int queue_restart(struct fleetstate *st, size_t ti, const struct fleetstate_record *rec,
                         char *name, char *errbuf, size_t errlen)
{
	struct restart r = {.name = name, .topic = ti, .offset = rec->offset};
	char err[256] = "";
	size_t i;
	int rc;

	rc = connect_restart_decode(rec->value, rec->valuelen, &r.include_tasks, &r.only_failed,
	                            err, sizeof(err));
	if (rc == CONNECT_RECORDS_ERR_NOMEM)
		goto nomem;
	if (rc != 0) {
		st->counts.bad++;
		if (asprintf(&r.why, "restart-connector-%s at offset %lld of %s refused: %s", name,
		             (long long)rec->offset, rec->topic, err) < 0) {
			r.why = NULL;
			goto nomem;
		}
	}
	if (rec->topic_id != NULL && (r.topic_id = strdup(rec->topic_id)) == NULL)
		goto nomem;
	if (hash_get(&st->rindex, name, &i)) {
		hash_del(&st->rindex, name, NULL);
		restart_clear(&st->restarts[i]);
		st->restarts[i] = r;
		return hash_put(&st->rindex, r.name, i) == 0 ? 0 : FLEETSTATE_ERR_NOMEM;
	}
	if (st->nrestarts >= FLEETSTATE_MAX_NAMES) {
		why(errbuf, errlen,
		    "topic %s: restart-connector-%s: more than %d restart requests "
		    "waiting",
		    rec->topic, name, FLEETSTATE_MAX_NAMES);
		st->topics[ti].refused = true;
		restart_clear(&r);
		return FLEETSTATE_ERR_LIMIT;
	}
	if (grow(&st->restarts, &st->caprestarts, st->nrestarts, sizeof(*st->restarts)) != 0 ||
	    hash_put(&st->rindex, name, st->nrestarts) != 0)
		goto nomem;
	st->restarts[st->nrestarts++] = r;
	return 0;
nomem:
	restart_clear(&r);
	return FLEETSTATE_ERR_NOMEM;
}

/* A restart-connector- record (name malloc'd, taken over). */
static int take_restart(struct fleetstate *st, size_t ti, const struct fleetstate_record *rec,
                        char *name, char *errbuf, size_t errlen)
{
	const struct topic *t = &st->topics[ti];
	int rc;

	/* One-shot: a request read inside the start snapshot was meant for a
	 * run long gone. A tombstone asks for nothing. */
	if (t->hwm < 0 || rec->offset < t->hwm || rec->value == NULL) {
		if (rec->value == NULL)
			st->counts.skipped++;
		else
			st->counts.old++;
		free(name);
		return 0;
	}
	rc = queue_restart(st, ti, rec, name, errbuf, errlen);
	if (rc == FLEETSTATE_ERR_LIMIT)
		st->counts.refused++;
	return rc;
}

int fleetstate_take(struct fleetstate *st, const struct fleetstate_record *rec, char *errbuf,
                    size_t errlen)
{
	struct connect_key k;
	struct slot *s = NULL;
	struct topic *t;
	char *name;
	size_t ti;
	int rc;

	if ((t = topic_of(st, rec->topic, &ti)) == NULL) {
		why(errbuf, errlen, "topic %s: not a config topic of this device",
		    rec->topic ? rec->topic : "(null)");
		return FLEETSTATE_ERR_TOPIC;
	}
	if (rec->key != NULL && rec->keylen == strlen(FLEETSTATE_MARKER_KEY) &&
	    memcmp(rec->key, FLEETSTATE_MARKER_KEY, rec->keylen) == 0) {
		if (rec->offset >= t->pos)
			t->pos = rec->offset + 1;
		st->counts.taken++;
		return take_marker(st, t, rec);
	}
	if (rec->topic_id == NULL || t->alias == NULL || strcmp(rec->topic_id, t->alias) != 0)
		if ((rc = set_id(st, t, rec->topic_id)) != 0)
			return rc;
	if (rec->offset >= t->pos)
		t->pos = rec->offset + 1;
	st->counts.taken++;
	if (rec->keylen > MAX_KEY) {
		why(errbuf, errlen,
		    "topic %s offset %lld: a key of %zu bytes passes the limit of %d", t->name,
		    (long long)rec->offset, rec->keylen, MAX_KEY);
		goto refused;
	}
	if (rec->key == NULL || connect_key_parse(rec->key, rec->keylen, &k, NULL, 0) != 0) {
		st->counts.unknown++;
		return 0;
	}
	switch (k.kind) {
	case CONNECT_CONNECTOR:
	case CONNECT_TARGET_STATE:
	case CONNECT_RESTART:
		break;
	case CONNECT_STATUS_CONNECTOR:
	case CONNECT_STATUS_TASK:
	case CONNECT_STATUS_TOPIC:
		st->counts.unknown++; /* a status key has no place on a config topic */
		return 0;
	default:
		st->counts.skipped++;
		return 0;
	}
	if ((name = strndup(k.name, k.namelen)) == NULL)
		goto nomem;
	if (k.kind == CONNECT_RESTART)
		return take_restart(st, ti, rec, name, errbuf, errlen);
	if ((rc = slot_of(st, t, name, &s, errbuf, errlen)) == FLEETSTATE_ERR_LIMIT)
		goto refused;
	if (rc != 0)
		goto nomem;
	rc = set_rec(st, k.kind == CONNECT_CONNECTOR ? &s->cfg : &s->tgt, k.kind, rec, s->name);
	if (rc != 0)
		goto nomem;
	return 0;
refused:
	st->counts.refused++;
	t->refused = true;
	return FLEETSTATE_ERR_LIMIT;
nomem:
	/* A record lost to memory is a record not read: no absence holds. */
	t->refused = true;
	return FLEETSTATE_ERR_NOMEM;
}

/* ---- plans ------------------------------------------------------------------- */

size_t fleetstate_plan_count(const struct fleetstate_plan *p)
{
	return p->n;
}

const struct fleetstate_step *fleetstate_plan_step(const struct fleetstate_plan *p, size_t i)
{
	return i < p->n ? &p->steps[i] : NULL;
}

void fleetstate_plan_free(struct fleetstate_plan *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	for (size_t i = 0; i < p->njsons; i++)
		cJSON_Delete(p->jsons[i]);
	free(p->strs);
	free(p->jsons);
	free(p->steps);
	free(p);
}

/* A copy of s owned by p (NULL for NULL; on failure p->err). */
static const char *keep(struct fleetstate_plan *p, const char *s)
{
	char *c;

	if (s == NULL || p->err != 0)
		return NULL;
	if (grow(&p->strs, &p->capstrs, p->nstrs, sizeof(*p->strs)) != 0 ||
	    (c = strdup(s)) == NULL) {
		p->err = FLEETSTATE_ERR_NOMEM;
		return NULL;
	}
	p->strs[p->nstrs++] = c;
	return c;
}

static const cJSON *keep_json(struct fleetstate_plan *p, const cJSON *j)
{
	cJSON *c;

	if (j == NULL || p->err != 0)
		return NULL;
	if (grow(&p->jsons, &p->capjsons, p->njsons, sizeof(*p->jsons)) != 0 ||
	    (c = cJSON_Duplicate(j, true)) == NULL) {
		p->err = FLEETSTATE_ERR_NOMEM;
		return NULL;
	}
	p->jsons[p->njsons++] = c;
	return c;
}

static struct fleetstate_source keep_source(struct fleetstate_plan *p,
                                            const struct fleetstate_source *s)
{
	struct fleetstate_source c = {keep(p, s->topic), keep(p, s->topic_id), s->offset};

	return c;
}

/* Appends a step, copying what it points at into p. */
static void add_step(struct fleetstate_plan *p, const struct fleetstate_step *s)
{
	struct fleetstate_step c = *s;

	if (p->err != 0)
		return;
	c.name = keep(p, s->name);
	c.from = keep_source(p, &s->from);
	c.reason = keep(p, s->reason);
	c.entry.name = c.name;
	c.entry.config_from = keep_source(p, &s->entry.config_from);
	c.entry.target_from = keep_source(p, &s->entry.target_from);
	c.entry.config = keep_json(p, s->entry.config);
	if (p->err == 0 && grow(&p->steps, &p->cap, p->n, sizeof(*p->steps)) != 0)
		p->err = FLEETSTATE_ERR_NOMEM;
	if (p->err == 0)
		p->steps[p->n++] = c;
}

/* Rank of topic i: the device's own topic above every group, a later
 * group above an earlier one. */
static size_t rank(const struct fleetstate *st, size_t i)
{
	return i == 0 ? st->ntopics : i;
}

/* True when every topic ranked at or above topic w (all topics: w
 * SIZE_MAX) is read to its start high watermark: nothing unread can still
 * change what w says. */
static bool decided(const struct fleetstate *st, size_t w)
{
	for (size_t j = 0; j < st->ntopics; j++)
		if ((w == SIZE_MAX || rank(st, j) >= rank(st, w)) && !topic_done(&st->topics[j]))
			return false;
	return true;
}

static const struct slot *slot_in(const struct topic *t, const char *name)
{
	size_t i;

	return hash_get(&t->index, name, &i) ? &t->slots[i] : NULL;
}

/* The topic whose record of name wins (cfg: connector-, else
 * target-state-): the highest ranked holding a live or a bad one (a
 * tombstone says nothing, as its compacted absence would). SIZE_MAX: none. */
static size_t winner(const struct fleetstate *st, const char *name, bool cfg)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < st->ntopics; i++) {
		const struct slot *s = slot_in(&st->topics[i], name);
		const struct rec *r = s == NULL ? NULL : cfg ? &s->cfg : &s->tgt;

		if (r == NULL || (r->st != R_LIVE && r->st != R_BAD))
			continue;
		if (best == SIZE_MAX || rank(st, i) > rank(st, best))
			best = i;
	}
	return best;
}

static const struct rec *rec_in(const struct fleetstate *st, size_t ti, const char *name, bool cfg)
{
	const struct slot *s = slot_in(&st->topics[ti], name);

	return s == NULL ? NULL : cfg ? &s->cfg : &s->tgt;
}

static bool marked_id(const struct fleetstate_mark *refused, size_t nrefused, const char *id,
                      int64_t offset)
{
	for (size_t i = 0; i < nrefused; i++)
		if (offset == refused[i].offset && ((id == NULL && refused[i].topic_id == NULL) ||
		                                    (id != NULL && refused[i].topic_id != NULL &&
		                                     strcmp(id, refused[i].topic_id) == 0)))
			return true;
	return false;
}

/* The caller refused t's record at offset (under its id, or its alias). */
static bool marked(const struct fleetstate_mark *refused, size_t nrefused, const struct topic *t,
                   int64_t offset)
{
	return marked_id(refused, nrefused, t->id, offset) ||
	       (t->alias != NULL && marked_id(refused, nrefused, t->alias, offset));
}

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_source(const struct fleetstate_source *a, const struct fleetstate_source *b)
{
	return same_str(a->topic, b->topic) && same_str(a->topic_id, b->topic_id) &&
	       (a->topic == NULL || a->offset == b->offset);
}

static const struct fleetstate_applied *
applied_of(const struct hash *idx, const struct fleetstate_applied *applied, const char *name)
{
	size_t i;

	return hash_get(idx, name, &i) ? &applied[i] : NULL;
}

/* Notes that name was reported kept after its topic was recreated: once a
 * run (a name past the bound, or out of memory, is reported again). */
static void remember_reported(struct fleetstate *st, const char *name)
{
	char *copy;

	if (st->nreported >= FLEETSTATE_MAX_NAMES ||
	    grow(&st->reported, &st->capreported, st->nreported, sizeof(*st->reported)) != 0 ||
	    (copy = strdup(name)) == NULL)
		return;
	if (hash_put(&st->repindex, copy, st->nreported) == 0)
		st->reported[st->nreported++] = copy;
	else
		free(copy);
}

/* Removals (and the keeping of connectors whose topic was recreated): the
 * applied connectors no topic names. */
static int plan_removals(struct fleetstate *st, const struct fleetstate_applied *applied,
                         size_t napplied, struct fleetstate_plan *p)
{
	bool whole = fleetstate_complete(st);

	for (size_t i = 0; i < napplied && p->err == 0; i++) {
		const struct fleetstate_applied *a = &applied[i];
		struct fleetstate_step s = {.name = a->name, .record = CONNECT_CONNECTOR};
		size_t ti = SIZE_MAX;
		const struct topic *t = topic_of(st, a->config_from.topic, &ti);
		const struct rec *r;
		size_t at;

		if (winner(st, a->name, true) != SIZE_MAX)
			continue;
		s.from = a->config_from;
		if (t != NULL && t->id != NULL && a->config_from.topic_id != NULL &&
		    strcmp(t->id, a->config_from.topic_id) != 0 &&
		    (t->alias == NULL || strcmp(t->alias, a->config_from.topic_id) != 0)) {
			s.op = FLEETSTATE_REPORT;
			s.reason = WHY_RECREATED;
			if (!hash_get(&st->repindex, a->name, &at)) {
				add_step(p, &s);
				remember_reported(st, a->name);
			}
			continue;
		}
		if (!whole)
			continue;
		s.op = FLEETSTATE_REMOVE;
		s.reason = t == NULL ? WHY_GONE : WHY_ABSENT;
		if (t != NULL && (r = rec_in(st, ti, a->name, true)) != NULL && r->st == R_TOMB) {
			s.reason = WHY_TOMBSTONE;
			s.from.topic = t->name;
			s.from.topic_id = t->id;
			s.from.offset = r->offset;
		}
		add_step(p, &s);
	}
	return p->err;
}

/* The target state name asks for: *from its record (topic NULL: none,
 * STARTED), or the applied one when the winner is a bad or refused record.
 * False while undecided. */
static bool target_for(const struct fleetstate *st, const char *name,
                       const struct fleetstate_applied *a, const struct fleetstate_mark *refused,
                       size_t nrefused, enum connect_target *target, struct fleetstate_source *from)
{
	size_t wt = winner(st, name, false);
	const struct rec *r;

	*target = CONNECT_TARGET_STARTED;
	memset(from, 0, sizeof(*from));
	from->offset = -1;
	if (!decided(st, wt))
		return false;
	if (wt == SIZE_MAX)
		return true;
	r = rec_in(st, wt, name, false);
	if (r->st == R_BAD || marked(refused, nrefused, &st->topics[wt], r->offset)) {
		if (a != NULL) {
			*target = a->target;
			*from = a->target_from;
		}
		return true;
	}
	*target = r->target;
	from->topic = st->topics[wt].name;
	from->topic_id = st->topics[wt].id;
	from->offset = r->offset;
	return true;
}

/* A REPORT of name's bad record r (kind) in topic t, unless the caller
 * refused it already. */
static void report_bad(struct fleetstate_plan *p, const char *name, enum connect_kind kind,
                       const struct topic *t, const struct rec *r,
                       const struct fleetstate_mark *refused, size_t nrefused)
{
	struct fleetstate_step s = {.op = FLEETSTATE_REPORT,
	                            .name = name,
	                            .record = kind,
	                            .reason = r->why,
	                            .from = {t->name, t->id, r->offset}};

	if (!marked(refused, nrefused, t, r->offset))
		add_step(p, &s);
}

/* s->entry holds a's configuration (or an equal one): a target state to
 * change, or a source to record (ACK), or nothing. */
static void plan_same_config(struct fleetstate_plan *p, struct fleetstate_step *s,
                             const struct fleetstate_applied *a)
{
	if (s->entry.target != a->target) {
		s->op = FLEETSTATE_TARGET_STATE;
		s->record = CONNECT_TARGET_STATE;
		s->from = s->entry.target_from;
		if (s->from.topic == NULL) /* a tombstone: back to STARTED */
			s->from = a->target_from;
	} else if (!same_source(&s->entry.config_from, &a->config_from)) {
		s->op = FLEETSTATE_ACK;
		s->record = CONNECT_CONNECTOR;
		s->from = s->entry.config_from;
	} else if (!same_source(&s->entry.target_from, &a->target_from)) {
		s->op = FLEETSTATE_ACK;
		s->record = CONNECT_TARGET_STATE;
		s->from = s->entry.target_from.topic ? s->entry.target_from : a->target_from;
	} else {
		return;
	}
	add_step(p, s);
}

/* The steps for one name some topic holds. */
static void plan_name(struct fleetstate *st, const char *name, const struct fleetstate_applied *a,
                      const struct fleetstate_mark *refused, size_t nrefused,
                      struct fleetstate_plan *p)
{
	size_t wc = winner(st, name, true), wt = winner(st, name, false);
	struct fleetstate_step s = {.name = name, .entry = {.name = name}};
	const struct rec *cr;
	const struct topic *ct;
	bool refused_cfg, same;

	/* A bad target-state record is reported whether or not its connector
	 * is known yet. */
	if (wt != SIZE_MAX && decided(st, wt) && rec_in(st, wt, name, false)->st == R_BAD)
		report_bad(p, name, CONNECT_TARGET_STATE, &st->topics[wt],
		           rec_in(st, wt, name, false), refused, nrefused);
	if (wc == SIZE_MAX || !decided(st, wc))
		return; /* no configuration (KIP-980: its target state waits), or not yet */
	ct = &st->topics[wc];
	cr = rec_in(st, wc, name, true);
	if (!target_for(st, name, a, refused, nrefused, &s.entry.target, &s.entry.target_from))
		return;
	if (cr->st == R_BAD) {
		report_bad(p, name, CONNECT_CONNECTOR, ct, cr, refused, nrefused);
		if (a == NULL)
			return;
		s.entry.config = a->config; /* the running configuration stays */
		s.entry.config_from = a->config_from;
		plan_same_config(p, &s, a);
		return;
	}
	refused_cfg = marked(refused, nrefused, ct, cr->offset);
	same = a != NULL && cJSON_Compare(a->config, cr->props, true);
	s.entry.config = cr->props;
	s.entry.config_from = (struct fleetstate_source){ct->name, ct->id, cr->offset};
	if (!same && !refused_cfg) {
		s.op = a == NULL ? FLEETSTATE_ADD : FLEETSTATE_REPLACE;
		s.record = CONNECT_CONNECTOR;
		s.from = s.entry.config_from;
		add_step(p, &s);
		return;
	}
	if (a == NULL)
		return; /* refused before: not planned again */
	if (!same) {    /* refused: the running configuration stays */
		s.entry.config = a->config;
		s.entry.config_from = a->config_from;
	}
	plan_same_config(p, &s, a);
}

/* Names over all topics, each once, in the order first read. */
static int names_in_order(const struct fleetstate *st, const struct slot ***out, size_t *n)
{
	const struct slot **v = NULL;
	struct hash seen;
	size_t k = 0, i;
	int rc = 0;

	hash_init(&seen);
	*out = NULL;
	*n = 0;
	if (st->nslots > 0 && (v = calloc(st->nslots, sizeof(*v))) == NULL)
		return FLEETSTATE_ERR_NOMEM;
	for (size_t t = 0; t < st->ntopics; t++)
		for (size_t j = 0; j < st->topics[t].n; j++)
			v[k++] = &st->topics[t].slots[j];
	/* Insertion sort by seq: slots are few, and mostly in order already. */
	for (i = 1; i < k; i++) {
		const struct slot *x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1]->seq > x->seq; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	*n = 0;
	for (i = 0; i < k; i++) {
		size_t at;

		if (hash_get(&seen, v[i]->name, &at))
			continue;
		if (hash_put(&seen, v[i]->name, i) != 0) {
			rc = FLEETSTATE_ERR_NOMEM;
			break;
		}
		v[(*n)++] = v[i];
	}
	hash_free(&seen);
	if (rc != 0) {
		free(v);
		*n = 0;
		return rc;
	}
	*out = v;
	return 0;
}

static void plan_restarts(struct fleetstate *st, struct fleetstate_plan *p)
{
	for (size_t i = 0; i < st->nrestarts && p->err == 0; i++) {
		const struct restart *r = &st->restarts[i];
		struct fleetstate_step s = {
		    .op = r->why ? FLEETSTATE_REPORT : FLEETSTATE_RESTART,
		    .name = r->name,
		    .record = CONNECT_RESTART,
		    .from = {st->topics[r->topic].name, r->topic_id, r->offset},
		    .include_tasks = r->include_tasks,
		    .only_failed = r->only_failed,
		    .reason = r->why,
		};

		add_step(p, &s);
	}
}

int fleetstate_plan(struct fleetstate *st, const struct fleetstate_applied *applied,
                    size_t napplied, const struct fleetstate_mark *refused, size_t nrefused,
                    struct fleetstate_plan **out)
{
	struct fleetstate_plan *p = NULL;
	const struct slot **names = NULL;
	struct hash idx;
	size_t n = 0;
	int rc = FLEETSTATE_ERR_NOMEM;

	*out = NULL;
	hash_init(&idx);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		goto out;
	for (size_t i = 0; i < napplied; i++)
		if (hash_put(&idx, applied[i].name, i) != 0)
			goto out;
	if ((rc = plan_removals(st, applied, napplied, p)) != 0 ||
	    (rc = names_in_order(st, &names, &n)) != 0)
		goto out;
	for (size_t i = 0; i < n && p->err == 0; i++)
		plan_name(st, names[i]->name, applied_of(&idx, applied, names[i]->name), refused,
		          nrefused, p);
	plan_restarts(st, p);
	if ((rc = p->err) != 0)
		goto out;
	/* Planned once: the requests are consumed. */
	for (size_t i = 0; i < st->nrestarts; i++)
		restart_clear(&st->restarts[i]);
	st->nrestarts = 0;
	hash_clear(&st->rindex);
	*out = p;
	p = NULL;
out:
	hash_free(&idx);
	free(names);
	fleetstate_plan_free(p);
	return rc;
}
