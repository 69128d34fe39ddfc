/* fleet: the device's fleet loop client. See fleet.h. */
#include "fleet/fleet.h"

#include "config/connlayer.h"
#include "control/health.h"
#include "control/rest.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/query.h"
#include "core/stats.h"
#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "fleet/fleetallow.h"
#include "fleet/fleetconf.h"
#include "fleet/fleetstate.h"
#include "fleet/fleetstore.h"
#include "kafka/fleetlink.h"
#include "util/buf.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#define WHY_MAX 1024
#define ID_PREFIX "topic:"

/* A config topic read. */
struct ftopic {
	char *name;
	char *id;     /* the link's, the store's, or ID_PREFIX name */
	int64_t next; /* the consumer's position: the next offset to read */
	int64_t upto; /* the store's offset applied up to (-1: none, or checked) */
	bool begun;   /* fleetstate_begin called: the snapshot's end known */
};

/* A connector the fleet gave, with the configuration it was given (the
 * fleet layer's entry): what fleetstate_plan compares records against. */
struct fconfig {
	char *name;
	cJSON *config;
};

/* A connector's status as last published. */
struct fpub {
	char *name;
	enum connect_state state;
	char *trace;
	bool seen;
};

struct fleet {
	struct loop *loop;
	const struct query *q;
	struct stats *stats;
	struct health *health; /* NULL: the registry's RSS as it is */
	const struct fleet_conf *conf;
	char *device;
	struct ftopic *topics;
	size_t ntopics;
	uint64_t recreated_seen; /* the reducer's count of recreated topics */
	struct fleetstore *store;
	struct fleetstate *st;
	struct fleetlink *link;
	/* What the link's conf points to, which it borrows for its life
	 * (fleetlink_open): the topics' names (topics[i].name) and the
	 * status topic's. */
	const char **link_topics;
	char status[FLEETCONF_TOPIC_MAX + 1];
	struct loop_fd *fdw;
	struct loop_timer *hb;
	struct loop_hook *hook;

	struct fconfig *configs;
	size_t nconfigs;

	struct fleetstate_plan *plan;
	size_t next;  /* the plan's next step */
	bool running; /* a step waits for its done */
	bool retry;   /* a change the query could not take yet: at the next turn */
	bool fresh;   /* records or ends since the last plan */
	bool closing; /* fleet_close came while a step ran: its done frees */
	bool waiting; /* the link said the cluster did not answer its start */

	uint64_t epoch;
	bool epoch_seen;
	struct fpub *pubs;
	size_t npubs;

	int64_t seq;
	struct fleet_counts counts;
};

const char *fleet_strerror(int err)
{
	switch (err) {
	case FLEET_OK:
		return "ok";
	case FLEET_ERR:
		return "the fleet's link could not open";
	case FLEET_ERR_NOMEM:
		return "out of memory";
	case FLEET_ERR_CONFIG:
		return "the fleet's configuration is wrong";
	case FLEET_ERR_STORE:
		return "the fleet's store cannot be used";
	default:
		return "unknown fleet error";
	}
}

static int64_t wall_ms(void)
{
	return clock_wall_ns() / 1000000;
}

static struct ftopic *topic_of(struct fleet *f, const char *name)
{
	for (size_t i = 0; i < f->ntopics; i++)
		if (strcmp(f->topics[i].name, name) == 0)
			return &f->topics[i];
	return NULL;
}

/* ---- the fleet layer's configurations, as applied ---------------------- */

static struct fconfig *config_of(struct fleet *f, const char *name)
{
	for (size_t i = 0; i < f->nconfigs; i++)
		if (strcmp(f->configs[i].name, name) == 0)
			return &f->configs[i];
	return NULL;
}

static void config_drop(struct fleet *f, const char *name)
{
	struct fconfig *c = config_of(f, name);

	if (c == NULL)
		return;
	free(c->name);
	cJSON_Delete(c->config);
	*c = f->configs[--f->nconfigs];
}

static int config_keep(struct fleet *f, const char *name, const cJSON *config)
{
	struct fconfig *c = config_of(f, name), *grown;
	cJSON *copy = cJSON_Duplicate(config, true);

	if (copy == NULL)
		return FLEET_ERR_NOMEM;
	if (c != NULL) {
		cJSON_Delete(c->config);
		c->config = copy;
		return 0;
	}
	grown = realloc(f->configs, (f->nconfigs + 1) * sizeof(*grown));
	if (grown == NULL)
		goto nomem;
	f->configs = grown;
	c = &f->configs[f->nconfigs];
	if ((c->name = strdup(name)) == NULL)
		goto nomem;
	c->config = copy;
	f->nconfigs++;
	return 0;
nomem:
	cJSON_Delete(copy);
	return FLEET_ERR_NOMEM;
}

/* ---- status records out ------------------------------------------------- */

static void status_send(struct fleet *f, const char *key, const struct buf *value)
{
	char why[WHY_MAX];

	if (fleetlink_send(f->link, key, value != NULL ? value->p : NULL,
	                   value != NULL ? value->len : 0, why, sizeof(why)) != 0) {
		log_msg(LOG_WARN, "fleet: %s not sent: %s", key, why);
		f->counts.errors++;
	}
}

static void save(struct fleet *f)
{
	char why[WHY_MAX];

	if (fleetstore_save(f->store, why, sizeof(why)) != 0) {
		log_msg(LOG_ERROR, "fleet: %s", why);
		f->counts.errors++;
	}
}

static void outcome(struct fleet *f, const struct fleetstate_step *s, bool applied,
                    const char *reason)
{
	struct fleet_outcome o = {
	    .topic = s->from.topic != NULL ? s->from.topic : "",
	    .offset = s->from.offset,
	    .record = s->record,
	    .outcome = applied ? FLEET_OUTCOME_APPLIED : FLEET_OUTCOME_REFUSED,
	    .reason = reason,
	    .worker_id = f->device,
	    .generation = fleetstore_generation(f->store),
	    .at_ms = wall_ms(),
	};
	struct buf key, value;

	buf_init(&key, FLEETSTORE_MAX_TEXT + 64);
	buf_init(&value, FLEET_OUTCOME_REASON_MAX + 1024);
	if (fleet_outcome_key(s->name, &key) != 0 || buf_add(&key, "", 1) != 0 ||
	    fleet_outcome_encode(&o, &value) != 0) {
		log_msg(LOG_WARN, "fleet: the outcome for %s cannot be encoded", s->name);
		f->counts.errors++;
	} else {
		status_send(f, key.p, &value);
	}
	if (applied)
		f->counts.applied++;
	else
		f->counts.refused++;
	buf_free(&key);
	buf_free(&value);
}

static void refuse(struct fleet *f, const struct fleetstate_step *s, const char *reason)
{
	log_msg(LOG_WARN, "fleet: %s refused: %s", s->name, reason);
	if (s->from.topic_id != NULL &&
	    fleetstore_refusal_add(f->store, s->from.topic_id, s->from.offset) != 0)
		f->counts.errors++;
	save(f);
	outcome(f, s, false, reason);
}

/* ---- steps -------------------------------------------------------------- */

static void run_steps(struct fleet *f);

static const char *initial_state(enum connect_target t)
{
	switch (t) {
	case CONNECT_TARGET_PAUSED:
		return "PAUSED";
	case CONNECT_TARGET_STOPPED:
		return "STOPPED";
	case CONNECT_TARGET_STARTED:
		break;
	}
	return "RUNNING";
}

static void store_entry(struct fleet *f, const struct fleetstate_applied *e)
{
	struct fleetstore_connector c = {
	    .name = e->name,
	    .config_from = {e->config_from.topic, e->config_from.topic_id, e->config_from.offset},
	    .target = e->target,
	    .target_from = {e->target_from.topic, e->target_from.topic_id, e->target_from.offset},
	};

	if (fleetstore_connector_set(f->store, &c) != 0 ||
	    (e->config != NULL && config_keep(f, e->name, e->config) != 0)) {
		log_msg(LOG_ERROR, "fleet: %s applied but not recorded", e->name);
		f->counts.errors++;
	}
}

/* The step that ran is over: rc 0 applied (the store saved, APPLIED sent),
 * else refused with why. */
static void step_over(struct fleet *f, const struct fleetstate_step *s, bool applied,
                      const char *why)
{
	if (!applied) {
		refuse(f, s, why);
		return;
	}
	switch (s->op) {
	case FLEETSTATE_ADD:
	case FLEETSTATE_REPLACE:
	case FLEETSTATE_TARGET_STATE:
		store_entry(f, &s->entry);
		fleetstore_bump(f->store);
		break;
	case FLEETSTATE_ACK:
		store_entry(f, &s->entry);
		break;
	case FLEETSTATE_REMOVE:
		fleetstore_connector_remove(f->store, s->name);
		config_drop(f, s->name);
		fleetstore_bump(f->store);
		break;
	case FLEETSTATE_RESTART:
		fleetstore_bump(f->store);
		break;
	case FLEETSTATE_REPORT:
		break;
	}
	save(f);
	outcome(f, s, true, NULL);
}

static void fleet_free(struct fleet *f);

static void on_done(void *arg, int rc, const char *why)
{
	struct fleet *f = arg;
	const struct fleetstate_step *s = fleetstate_plan_step(f->plan, f->next - 1);

	f->running = false;
	if (f->closing) {
		/* Closed meanwhile: the change's fate is the layer's file; the
		 * next start re-reads the topic and plans against the store. */
		fleet_free(f);
		return;
	}
	if (rc == REST_ERR_STATE) {
		/* Never applied: the worker stopped first. Not the record's
		 * fault: not remembered, the next start plans it again. */
		log_msg(LOG_WARN, "fleet: %s not applied: %s", s->name, why);
		return;
	}
	if (rc == REST_ERR_NOMEM) {
		/* Not the record's fault: said, not remembered as refused. */
		log_msg(LOG_ERROR, "fleet: %s not applied: out of memory", s->name);
		f->counts.errors++;
		outcome(f, s, false, "out of memory on the device");
		run_steps(f);
		return;
	}
	if (rc == REST_ERR)
		log_msg(LOG_WARN, "fleet: %s applied but its layer not kept: %s", s->name, why);
	step_over(f, s, rc == 0 || rc == REST_ERR, why != NULL && why[0] != '\0' ? why : "refused");
	run_steps(f);
}

static int on_vet(void *arg, const struct connector_settings *cs, char *why, size_t len)
{
	struct fleet *f = arg;

	return fleetallow_connector(&f->conf->allow, cs, why, len);
}

static long conn_index(struct fleet *f, const char *name)
{
	size_t n = f->q->ops->connectors(f->q->ctx);
	struct query_conn c;

	for (size_t i = 0; i < n; i++) {
		f->q->ops->connector(f->q->ctx, i, &c);
		if (strcmp(c.name, name) == 0)
			return (long)i;
	}
	return -1;
}

/* A command on name's connector: true when done, with why otherwise. */
static bool command(struct fleet *f, const char *name, enum query_command cmd, char *why,
                    size_t len)
{
	long i = conn_index(f, name);

	if (i < 0) {
		snprintf(why, len, "connector %s is not running on this device", name);
		return false;
	}
	return f->q->ops->command(f->q->ctx, (size_t)i, cmd, why, len) == 0;
}

static enum query_command target_command(enum connect_target t)
{
	switch (t) {
	case CONNECT_TARGET_PAUSED:
		return QUERY_PAUSE;
	case CONNECT_TARGET_STOPPED:
		return QUERY_STOP;
	case CONNECT_TARGET_STARTED:
		break;
	}
	return QUERY_RESUME;
}

/* Starts step s: true when it runs (its done comes later), false when it is
 * over already (or must wait: f->retry). */
static bool start(struct fleet *f, const struct fleetstate_step *s)
{
	char why[WHY_MAX] = "";
	struct query_change ch = {.layer = CONNLAYER_FLEET, .name = s->name, .arg = f};
	int rc;

	f->counts.steps++;
	switch (s->op) {
	case FLEETSTATE_ADD:
	case FLEETSTATE_REPLACE:
		/* Pass 1: the record as the topic holds it, nothing resolved. */
		if (fleetallow_record(&f->conf->allow, s->name, s->entry.config, why,
		                      sizeof(why)) != 0) {
			step_over(f, s, false, why);
			return false;
		}
		ch.op = QUERY_CHANGE_PUT;
		ch.config = s->entry.config;
		ch.initial_state = initial_state(s->entry.target);
		ch.vet = on_vet;
		break;
	case FLEETSTATE_REMOVE:
		ch.op = QUERY_CHANGE_DELETE;
		break;
	case FLEETSTATE_TARGET_STATE:
		step_over(f, s,
		          command(f, s->name, target_command(s->entry.target), why, sizeof(why)),
		          why);
		return false;
	case FLEETSTATE_RESTART: {
		struct fleetstore_connector mine;
		bool local = !fleetstore_connector_find(f->store, s->name, &mine);

		/* The reducer knows only the fleet's connectors: one of the
		 * device's own is restarted only as fleet.allow.replace.local
		 * says. */
		if (fleetallow_local(&f->conf->allow, s->name, local, why, sizeof(why)) != 0) {
			step_over(f, s, false, why);
			return false;
		}
		step_over(f, s, command(f, s->name, QUERY_RESTART, why, sizeof(why)), why);
		return false;
	}
	case FLEETSTATE_ACK:
		step_over(f, s, true, NULL);
		return false;
	case FLEETSTATE_REPORT:
		step_over(f, s, false, s->reason != NULL ? s->reason : "not applied");
		return false;
	}
	ch.done = on_done;
	rc = f->q->ops->layer_change(f->q->ctx, &ch, why, sizeof(why));
	if (rc == REST_PENDING)
		return true;
	if (rc == REST_ERR_STATE) {
		/* Another change is applied, or the worker drains: again at a
		 * later turn, this same step. */
		f->counts.steps--;
		f->retry = true;
		return false;
	}
	step_over(f, s, false, why[0] != '\0' ? why : "the change was not taken");
	return false;
}

static void plan_free(struct fleet *f)
{
	fleetstate_plan_free(f->plan);
	f->plan = NULL;
	f->next = 0;
}

/* Records the topics' positions once a plan is over. */
static void plan_over(struct fleet *f)
{
	for (size_t i = 0; i < f->ntopics; i++)
		if (f->topics[i].next >= 0 &&
		    fleetstore_topic_set(f->store, f->topics[i].name, f->topics[i].id,
		                         f->topics[i].next) != 0)
			f->counts.errors++;
	save(f);
	plan_free(f);
}

static int make_plan(struct fleet *f)
{
	size_t n = fleetstore_connector_count(f->store), nr = fleetstore_refusal_count(f->store);
	struct fleetstate_applied *applied = calloc(n + 1, sizeof(*applied));
	struct fleetstate_mark *marks = calloc(nr + 1, sizeof(*marks));
	int rc = FLEET_ERR_NOMEM;

	if (applied == NULL || marks == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct fleetstore_connector c;
		struct fconfig *cfg;

		fleetstore_connector_at(f->store, i, &c);
		cfg = config_of(f, c.name);
		applied[i] = (struct fleetstate_applied){
		    .name = c.name,
		    .config_from = {c.config_from.topic, c.config_from.topic_id,
		                    c.config_from.offset},
		    .config = cfg != NULL ? cfg->config : NULL,
		    .target = c.target,
		    .target_from = {c.target_from.topic, c.target_from.topic_id,
		                    c.target_from.offset},
		};
	}
	for (size_t i = 0; i < nr; i++)
		fleetstore_refusal_at(f->store, i, &marks[i].topic_id, &marks[i].offset);
	rc = fleetstate_plan(f->st, applied, n, marks, nr, &f->plan) == 0 ? 0 : FLEET_ERR_NOMEM;
out:
	free(applied);
	free(marks);
	return rc;
}

/* Runs the plan's steps one at a time; plans anew once it is over, every
 * snapshot is read and records came since. */
static void run_steps(struct fleet *f)
{
	for (;;) {
		if (f->running || f->retry)
			return;
		if (f->plan != NULL && f->next < fleetstate_plan_count(f->plan)) {
			const struct fleetstate_step *s = fleetstate_plan_step(f->plan, f->next++);

			if (start(f, s)) {
				f->running = true;
				return;
			}
			if (f->retry)
				f->next--;
			continue;
		}
		if (f->plan != NULL)
			plan_over(f);
		if (!f->fresh || !fleetstate_complete(f->st))
			return;
		f->fresh = false;
		if (make_plan(f) != 0) {
			log_msg(LOG_ERROR, "fleet: out of memory planning");
			f->counts.errors++;
			return;
		}
	}
}

/* ---- records in ----------------------------------------------------------- */

/* A snapshot's end below the offset the store says was applied up to: the
 * topic was deleted and recreated (or truncated) while the device was away.
 * librdkafka 2.0.2 gives no topic id to tell, so t gets a new one of its
 * own: what the old topic gave is kept and reported (fleetstate: its id is
 * not the topic's), not removed by its absence, and refusals remembered by
 * the old id no longer skip the new topic's records. Checked once a run. */
static void check_regression(struct fleet *f, struct ftopic *t, int64_t end)
{
	unsigned char rnd[8];
	char *id;
	size_t len;
	int64_t upto = t->upto;

	t->upto = -1;
	if (end < 0 || upto <= 0 || end >= upto)
		return;
	f->counts.recreated++;
	log_msg(LOG_WARN,
	        "fleet: config topic %s was recreated (its end %lld is below the offset %lld "
	        "applied): kept until a record names it",
	        t->name, (long long)end, (long long)upto);
	len = strlen(ID_PREFIX) + strlen(t->name) + 1 + 2 * sizeof(rnd) + 1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd) || (id = malloc(len)) == NULL) {
		f->counts.errors++;
		return;
	}
	snprintf(id, len, "%s%s@%02x%02x%02x%02x%02x%02x%02x%02x", ID_PREFIX, t->name, rnd[0],
	         rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	free(t->id);
	t->id = id;
}

static void on_begin(void *arg, const char *topic, const char *topic_id, int64_t end)
{
	struct fleet *f = arg;
	struct ftopic *t = topic_of(f, topic);

	if (t == NULL)
		return;
	if (topic_id != NULL && strcmp(topic_id, t->id) != 0) {
		char *id = strdup(topic_id);

		if (id == NULL) {
			f->counts.errors++;
			return;
		}
		free(t->id);
		t->id = id;
	}
	/* An end not known yet (-1) begins nothing: begun at 0, the topic
	 * would count as read whole and its absences would remove. The
	 * snapshot's end begins it. */
	if (end < 0)
		return;
	check_regression(f, t, end);
	if (fleetstate_begin(f->st, topic, t->id, end) != 0)
		f->counts.errors++;
	t->begun = true;
	f->fresh = true;
}

/* The reducer's id for t after a record: a marker (skiff-topic-id) may
 * have given one, or changed it (the topic recreated). */
static void adopt_id(struct fleet *f, struct ftopic *t, int64_t offset)
{
	const char *id = fleetstate_topic_id(f->st, t->name);
	struct fleetstate_counts n;
	char *copy;

	if (id == NULL || strcmp(id, t->id) == 0)
		return;
	fleetstate_counts(f->st, &n);
	if (n.recreated > f->recreated_seen) {
		f->recreated_seen = n.recreated;
		f->counts.recreated++;
		log_msg(
		    LOG_WARN,
		    "fleet: config topic %s was recreated (its marker at offset %lld is %s, not "
		    "%s): kept until a record names it",
		    t->name, (long long)offset, id, t->id);
	}
	if ((copy = strdup(id)) == NULL) {
		f->counts.errors++;
		return;
	}
	free(t->id);
	t->id = copy;
}

static void on_record(void *arg, const struct fleetlink_record *r)
{
	struct fleet *f = arg;
	struct ftopic *t = topic_of(f, r->topic);
	char why[WHY_MAX];
	struct fleetstate_record rec;

	if (t == NULL || r->key == NULL)
		return;
	rec = (struct fleetstate_record){r->topic, t->id,    r->offset, r->key,
	                                 r->klen,  r->value, r->vlen};
	if (fleetstate_take(f->st, &rec, why, sizeof(why)) != 0) {
		log_msg(LOG_WARN, "fleet: %s offset %lld: %s", r->topic, (long long)r->offset, why);
		f->counts.errors++;
	}
	adopt_id(f, t, r->offset);
	t->next = r->offset + 1;
	fleetstate_position(f->st, r->topic, t->next);
	f->fresh = true;
}

static void on_snapshot(void *arg, const char *topic, int64_t end)
{
	struct fleet *f = arg;
	struct ftopic *t = topic_of(f, topic);

	if (t == NULL)
		return;
	if (!t->begun) {
		check_regression(f, t, end);
		if (fleetstate_begin(f->st, topic, t->id, end) != 0)
			f->counts.errors++;
		t->begun = true;
	}
	if (end > t->next)
		t->next = end;
	fleetstate_position(f->st, topic, end);
	f->fresh = true;
}

static void on_sent(void *arg, const char *key, int rc, const char *why)
{
	struct fleet *f = arg;

	if (rc != 0) {
		log_msg(LOG_WARN, "fleet: %s not delivered: %s", key, why);
		f->counts.errors++;
	}
}

static void on_error(void *arg, int rc, const char *why)
{
	(void)arg;
	(void)rc;
	log_msg(LOG_WARN, "fleet: %s", why);
}

static void on_waiting(void *arg, const char *why)
{
	struct fleet *f = arg;

	f->waiting = true;
	log_msg(LOG_WARN, "%s", why);
}

static void on_ready(void *arg)
{
	struct fleet *f = arg;

	if (f->waiting)
		log_msg(LOG_INFO, "fleet: Kafka answered: the fleet's topics are read");
	f->waiting = false;
}

static void on_fd(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	struct fleet *f = arg;

	(void)l;
	(void)w;
	(void)fd;
	(void)revents;
	fleetlink_poll(f->link);
	run_steps(f);
}

/* ---- Connect's status records -------------------------------------------- */

static enum connect_state state_of(const struct query_conn *c)
{
	if (c->restarting)
		return CONNECT_STATE_RESTARTING;
	switch (c->state) {
	case QUERY_PAUSED:
		return CONNECT_STATE_PAUSED;
	case QUERY_STOPPING:
		return c->stop_paused ? CONNECT_STATE_PAUSED : CONNECT_STATE_RUNNING;
	case QUERY_STOPPED:
		return CONNECT_STATE_STOPPED;
	case QUERY_FAILED:
		return CONNECT_STATE_FAILED;
	case QUERY_RUNNING:
		break;
	}
	return CONNECT_STATE_RUNNING;
}

static struct fpub *pub_of(struct fleet *f, const char *name)
{
	for (size_t i = 0; i < f->npubs; i++)
		if (strcmp(f->pubs[i].name, name) == 0)
			return &f->pubs[i];
	return NULL;
}

static bool same_trace(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The two status keys of connector name into keys[0] and keys[1]. */
static int status_keys(const char *name, struct buf keys[2])
{
	struct connect_key k = {
	    .kind = CONNECT_STATUS_CONNECTOR, .name = name, .namelen = strlen(name)};

	if (connect_key_format(&k, &keys[0]) != 0 || buf_add(&keys[0], "", 1) != 0)
		return -1;
	k.kind = CONNECT_STATUS_TASK;
	k.task = 0;
	if (connect_key_format(&k, &keys[1]) != 0 || buf_add(&keys[1], "", 1) != 0)
		return -1;
	return 0;
}

static void publish(struct fleet *f, const struct query_conn *c)
{
	struct connect_status s = {
	    .state = state_of(c),
	    .trace = (char *)c->trace,
	    .worker_id = f->device,
	    .generation = fleetstore_generation(f->store),
	};
	struct buf keys[2], value;

	buf_init(&keys[0], FLEETSTORE_MAX_TEXT);
	buf_init(&keys[1], FLEETSTORE_MAX_TEXT);
	buf_init(&value, 1u << 20);
	if (status_keys(c->name, keys) != 0 || connect_status_encode(&s, &value) != 0) {
		log_msg(LOG_WARN, "fleet: the status of %s cannot be encoded", c->name);
		f->counts.errors++;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		status_send(f, keys[i].p, &value);
		f->counts.statuses++;
		if (fleetstore_status_key_add(f->store, keys[i].p) != 0)
			f->counts.errors++;
	}
out:
	buf_free(&keys[0]);
	buf_free(&keys[1]);
	buf_free(&value);
}

static void tombstone(struct fleet *f, const char *key)
{
	status_send(f, key, NULL);
	f->counts.statuses++;
	fleetstore_status_key_remove(f->store, key);
}

/* Status keys the store kept whose connector is no longer there (it went
 * while skiff was down): tombstones. */
static bool tombstone_strays(struct fleet *f)
{
	bool changed = false;

	for (size_t i = 0; i < fleetstore_status_key_count(f->store);) {
		const char *key = fleetstore_status_key(f->store, i);
		struct connect_key k;
		char name[FLEETSTORE_MAX_TEXT + 1], why[128];

		if (connect_key_parse(key, strlen(key), &k, why, sizeof(why)) != 0 ||
		    k.name == NULL || k.namelen >= sizeof(name)) {
			i++;
			continue;
		}
		memcpy(name, k.name, k.namelen);
		name[k.namelen] = '\0';
		if (conn_index(f, name) >= 0) {
			i++;
			continue;
		}
		tombstone(f, key); /* removes key i: the next is at i */
		changed = true;
	}
	return changed;
}

static void publish_states(struct fleet *f)
{
	size_t n = f->q->ops->connectors(f->q->ctx), before = fleetstore_status_key_count(f->store);
	bool changed = false;

	if (!f->epoch_seen)
		changed = tombstone_strays(f);
	for (size_t i = 0; i < f->npubs; i++)
		f->pubs[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct query_conn c;
		struct fpub *p;

		f->q->ops->connector(f->q->ctx, i, &c);
		p = pub_of(f, c.name);
		if (p == NULL) {
			struct fpub *grown = realloc(f->pubs, (f->npubs + 1) * sizeof(*grown));

			if (grown == NULL)
				goto nomem;
			f->pubs = grown;
			p = &f->pubs[f->npubs];
			*p =
			    (struct fpub){.name = strdup(c.name), .state = CONNECT_STATE_DESTROYED};
			if (p->name == NULL)
				goto nomem;
			f->npubs++;
		}
		p->seen = true;
		if (p->state == state_of(&c) && same_trace(p->trace, c.trace))
			continue;
		free(p->trace);
		p->trace = c.trace != NULL ? strdup(c.trace) : NULL;
		p->state = state_of(&c);
		publish(f, &c);
	}
	for (size_t i = 0; i < f->npubs;) {
		struct fpub *p = &f->pubs[i];
		struct buf keys[2];

		if (p->seen) {
			i++;
			continue;
		}
		buf_init(&keys[0], FLEETSTORE_MAX_TEXT);
		buf_init(&keys[1], FLEETSTORE_MAX_TEXT);
		if (status_keys(p->name, keys) == 0) {
			tombstone(f, keys[0].p);
			tombstone(f, keys[1].p);
			changed = true;
		}
		buf_free(&keys[0]);
		buf_free(&keys[1]);
		free(p->name);
		free(p->trace);
		*p = f->pubs[--f->npubs];
	}
	if (changed || fleetstore_status_key_count(f->store) != before)
		save(f);
	return;
nomem:
	log_msg(LOG_ERROR, "fleet: out of memory publishing states");
	f->counts.errors++;
}

static void on_turn(struct loop *l, struct loop_hook *h, void *arg)
{
	struct fleet *f = arg;
	uint64_t e = f->q->ops->state_epoch(f->q->ctx);

	(void)l;
	(void)h;
	if (f->retry) {
		f->retry = false;
		run_steps(f);
	}
	if (f->epoch_seen && e == f->epoch)
		return;
	publish_states(f);
	f->epoch = e;
	f->epoch_seen = true;
}

/* ---- the heartbeat --------------------------------------------------------- */

static uint64_t stat_sum(struct fleet *f, const char *name)
{
	struct stats_view v;
	size_t cursor = 0;
	uint64_t sum = 0;

	if (f->stats == NULL)
		return 0;
	while (stats_next(f->stats, &cursor, &v))
		if (strcmp(v.desc->name, name) == 0)
			sum += v.value;
	return sum;
}

/* The resident memory as the registry has it, made current first: only
 * health_refresh sets it otherwise (a scrape, `skiff status`), and a device
 * nobody scrapes would send its start's value in every heartbeat. */
static uint64_t resident(struct fleet *f)
{
	if (f->health != NULL)
		health_refresh_process(f->health);
	return stat_sum(f, "process_resident_memory");
}

static void add_backlog(void *arg, const struct query_part *p, enum source_unit unit, uint64_t n)
{
	(void)p;
	if (unit == SOURCE_UNIT_BYTES)
		*(uint64_t *)arg += n;
}

static int64_t clamp(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void heartbeat(struct fleet *f)
{
	size_t n = f->q->ops->connectors(f->q->ctx), ntop = f->ntopics;
	const char **names = calloc(n + 1, sizeof(*names));
	struct fleet_heartbeat_applied *applied = calloc(ntop + 1, sizeof(*applied));
	char reason[512] = "";
	struct query_producer prod = {0};
	uint64_t backlog = 0;
	bool healthy = health_check(f->q, reason, sizeof(reason)) == 0;
	int64_t now = loop_now_ms(), wall = wall_ms();
	struct fleet_heartbeat hb = {
	    .device = f->device,
	    .version = SKIFF_VERSION,
	    .at_ms = wall,
	    .seq = ++f->seq,
	    .interval_ms = f->conf->heartbeat_interval_ms,
	    .health = healthy ? "ok" : "failing",
	    .reason = healthy ? NULL : reason,
	    .last_ack_ms = -1,
	    .lost_records = clamp(stat_sum(f, "lines_unread_lost")),
	    .lost_bytes = clamp(stat_sum(f, "bytes_unread_lost")),
	    .lost_files = clamp(stat_sum(f, "files_gone_unread")),
	    .rss_kb = clamp(resident(f) / 1024),
	    .groups = f->conf->groups.items,
	    .ngroups = f->conf->groups.n,
	};
	struct buf value;
	size_t na = 0;

	buf_init(&value, FLEET_HEARTBEAT_MAX);
	if (names == NULL || applied == NULL) {
		f->counts.errors++;
		goto out;
	}
	if (f->q->ops->producer != NULL) {
		f->q->ops->producer(f->q->ctx, &prod);
		if (prod.last_ack_ms > 0)
			hb.last_ack_ms = wall - (now - prod.last_ack_ms);
	}
	for (size_t i = 0; i < n; i++) {
		struct query_conn c;

		f->q->ops->connector(f->q->ctx, i, &c);
		names[i] = c.name;
		if (f->q->ops->backlog != NULL)
			f->q->ops->backlog(f->q->ctx, i, add_backlog, &backlog);
	}
	hb.backlog_bytes = clamp(backlog);
	hb.connectors = names;
	hb.nconnectors = n;
	for (size_t i = 0; i < ntop; i++) {
		const char *id;
		int64_t off;

		if (fleetstore_topic(f->store, f->topics[i].name, &id, &off))
			applied[na++] =
			    (struct fleet_heartbeat_applied){f->topics[i].name, id, off};
	}
	hb.applied = applied;
	hb.napplied = na;
	if (fleet_heartbeat_encode(&hb, &value) != 0) {
		f->counts.errors++;
		goto out;
	}
	status_send(f, FLEET_HEARTBEAT_KEY, &value);
	f->counts.heartbeats++;
out:
	buf_free(&value);
	free(names);
	free(applied);
}

static void on_heartbeat(struct loop *l, struct loop_timer *t, void *arg)
{
	(void)l;
	(void)t;
	heartbeat(arg);
}

/* ---- open, close ---------------------------------------------------------- */

static int add_topic(struct fleet *f, const char *tmpl, const char *name, char *errbuf,
                     size_t errlen)
{
	char buf[FLEETCONF_TOPIC_MAX + 1];
	struct ftopic *t = &f->topics[f->ntopics];
	size_t idlen;

	if (fleetconf_topic(tmpl, name, buf, sizeof(buf)) != FLEETCONF_OK) {
		snprintf(errbuf, errlen, "fleet: the topic of %s (%s) is too long", name, tmpl);
		return FLEET_ERR_CONFIG;
	}
	for (size_t i = 0; i < f->ntopics; i++)
		if (strcmp(f->topics[i].name, buf) == 0) {
			snprintf(errbuf, errlen, "fleet: topic %s named twice", buf);
			return FLEET_ERR_CONFIG;
		}
	idlen = strlen(ID_PREFIX) + strlen(buf) + 1;
	t->name = strdup(buf);
	t->id = malloc(idlen);
	t->next = -1;
	t->upto = -1;
	f->ntopics++;
	if (t->name == NULL || t->id == NULL)
		return FLEET_ERR_NOMEM;
	snprintf(t->id, idlen, "%s%s", ID_PREFIX, buf);
	return 0;
}

/* The fleet layer's configurations the store says were applied. */
static int load_configs(struct fleet *f, const char *offsets_file, char *errbuf, size_t errlen)
{
	struct connlayer *layer = NULL;
	int rc = connlayer_load(CONNLAYER_FLEET, offsets_file, &layer, errbuf, errlen);

	if (rc != 0)
		return rc == CONNLAYER_ERR_NOMEM ? FLEET_ERR_NOMEM : FLEET_ERR_STORE;
	for (size_t i = 0; i < connlayer_count(layer) && rc == 0; i++) {
		const cJSON *c = connlayer_config(layer, i);
		const char *name = connlayer_name(layer, i);

		struct fleetstore_connector e;

		if (c != NULL && fleetstore_connector_find(f->store, name, &e))
			rc = config_keep(f, name, c);
	}
	connlayer_destroy(layer);
	return rc;
}

static int open_store(struct fleet *f, const char *offsets_file, char *errbuf, size_t errlen)
{
	char why[WHY_MAX];
	int rc = fleetstore_load(offsets_file, &f->store, why, sizeof(why));

	if (rc == FLEETSTORE_ERR_NOMEM)
		return FLEET_ERR_NOMEM;
	if (rc != 0) {
		snprintf(errbuf, errlen, "fleet: %s", why);
		return FLEET_ERR_STORE;
	}
	if ((rc = load_configs(f, offsets_file, errbuf, errlen)) != 0)
		return rc;
	/* The id each topic was last read under (a new one after a
	 * recreation), and the offset applied up to. */
	for (size_t i = 0; i < f->ntopics; i++) {
		struct ftopic *t = &f->topics[i];
		const char *id;
		char *copy;

		if (!fleetstore_topic(f->store, t->name, &id, &t->upto))
			continue;
		if (id != NULL && strcmp(id, t->id) != 0) {
			if ((copy = strdup(id)) == NULL)
				return FLEET_ERR_NOMEM;
			free(t->id);
			t->id = copy;
		}
	}
	/* A start counts in the generation: a status record of this run is
	 * newer than any of the last. */
	fleetstore_bump(f->store);
	if (fleetstore_save(f->store, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "fleet: %s", why);
		return FLEET_ERR_STORE;
	}
	return 0;
}

static int open_link(struct fleet *f, const struct fleet_params *p, char *errbuf, size_t errlen)
{
	static const struct fleetlink_cbs cbs = {
	    .begin = on_begin,
	    .record = on_record,
	    .snapshot = on_snapshot,
	    .sent = on_sent,
	    .error = on_error,
	    .waiting = on_waiting,
	    .ready = on_ready,
	};
	const char **names = calloc(f->ntopics, sizeof(*names));
	struct fleetlink_conf lc = {
	    .worker = p->kafka,
	    .device = f->device,
	    .ntopics = f->ntopics,
	    .status_topic = f->status,
	    .create_status = true,
	    .status_partitions = (int)p->conf->status_partitions,
	    .status_replication = (int)p->conf->status_replication_factor,
	    .create_config = NULL,
	    .config_replication = (int)p->conf->config_replication_factor,
	    .fetch_wait_max_ms = p->conf->fetch_wait_max_ms,
	    .timeout_ms = 30000,
	};
	int rc;

	if (names == NULL)
		return FLEET_ERR_NOMEM;
	f->link_topics = names;
	if (fleetconf_topic(p->conf->status_topic, f->device, f->status, sizeof(f->status)) !=
	    FLEETCONF_OK) {
		snprintf(errbuf, errlen, "fleet: status.storage.topic is too long for %s",
		         f->device);
		return FLEET_ERR_CONFIG;
	}
	for (size_t i = 0; i < f->ntopics; i++)
		names[i] = f->topics[i].name;
	lc.topics = names;
	rc = fleetlink_open(p->link, &lc, &cbs, f, &f->link, errbuf, errlen);
	if (rc == FLEETLINK_ERR_NOMEM)
		rc = FLEET_ERR_NOMEM;
	else if (rc == FLEETLINK_ERR_CONFIG)
		rc = FLEET_ERR_CONFIG;
	else if (rc != 0)
		rc = FLEET_ERR;
	return rc;
}

int fleet_open(const struct fleet_params *p, struct fleet **out, char *errbuf, size_t errlen)
{
	struct fleet *f = calloc(1, sizeof(*f));
	const struct fleet_conf *c = p->conf;
	const char **tnames = NULL;
	int64_t now = loop_now_ms();
	int rc = FLEET_ERR_NOMEM;

	*out = NULL;
	if (f == NULL)
		return FLEET_ERR_NOMEM;
	f->loop = p->loop;
	f->q = p->query;
	f->stats = p->stats;
	f->health = p->health;
	f->conf = c;
	if (fleetconf_name_check(p->device) != FLEETCONF_OK) {
		snprintf(errbuf, errlen,
		         "fleet: device name \"%s\" cannot be part of a topic name "
		         "(1 to %d of A-Z, a-z, 0-9, '-')",
		         p->device, FLEETCONF_NAME_MAX);
		rc = FLEET_ERR_CONFIG;
		goto fail;
	}
	if ((f->device = strdup(p->device)) == NULL ||
	    (f->topics = calloc(c->groups.n + 1, sizeof(*f->topics))) == NULL)
		goto fail;
	if ((rc = add_topic(f, c->config_topic, f->device, errbuf, errlen)) != 0)
		goto fail;
	for (size_t i = 0; i < c->groups.n; i++)
		if ((rc = add_topic(f, c->group_topic, c->groups.items[i], errbuf, errlen)) != 0)
			goto fail;
	if ((rc = open_store(f, p->offsets_file, errbuf, errlen)) != 0)
		goto fail;
	rc = FLEET_ERR_NOMEM;
	if ((tnames = calloc(f->ntopics, sizeof(*tnames))) == NULL)
		goto fail;
	for (size_t i = 0; i < f->ntopics; i++)
		tnames[i] = f->topics[i].name;
	if (fleetstate_new(tnames, f->ntopics, &f->st) != 0)
		goto fail;
	if ((rc = open_link(f, p, errbuf, errlen)) != 0)
		goto fail;
	rc = FLEET_ERR_NOMEM;
	if (loop_fd_add(f->loop, fleetlink_fd(f->link), POLLIN, on_fd, f, &f->fdw) != 0 ||
	    loop_hook_add(f->loop, on_turn, f, &f->hook) != 0 ||
	    loop_timer_add(f->loop, now + c->heartbeat_interval_ms, c->heartbeat_interval_ms,
	                   on_heartbeat, f, &f->hb) != 0)
		goto fail;
	free(tnames);
	*out = f;
	return FLEET_OK;
fail:
	if (rc == FLEET_ERR_NOMEM)
		snprintf(errbuf, errlen, "fleet: out of memory");
	free(tnames);
	fleet_close(f);
	return rc;
}

void fleet_counts(const struct fleet *f, struct fleet_counts *out)
{
	*out = f->counts;
}

bool fleet_busy(const struct fleet *f)
{
	return f->running;
}

void fleet_close(struct fleet *f)
{
	if (f == NULL)
		return;
	loop_fd_del(f->loop, f->fdw);
	loop_hook_del(f->loop, f->hook);
	loop_timer_del(f->loop, f->hb);
	f->fdw = NULL;
	f->hook = NULL;
	f->hb = NULL;
	fleetlink_destroy(f->link);
	f->link = NULL;
	if (f->running) {
		f->closing = true;
		return;
	}
	fleet_free(f);
}

static void fleet_free(struct fleet *f)
{
	fleetstate_plan_free(f->plan);
	fleetstate_destroy(f->st);
	fleetstore_destroy(f->store);
	for (size_t i = 0; i < f->ntopics; i++) {
		free(f->topics[i].name);
		free(f->topics[i].id);
	}
	free(f->topics);
	free(f->link_topics);
	for (size_t i = 0; i < f->nconfigs; i++) {
		free(f->configs[i].name);
		cJSON_Delete(f->configs[i].config);
	}
	free(f->configs);
	for (size_t i = 0; i < f->npubs; i++) {
		free(f->pubs[i].name);
		free(f->pubs[i].trace);
	}
	free(f->pubs);
	free(f->device);
	free(f);
}
