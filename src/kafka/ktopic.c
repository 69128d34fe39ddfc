#include "kafka/ktopic.h"

#include "config/config.h"
#include "config/settings.h"
#include "util/hash.h"
#include "util/lockfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *ktopic_strerror(int err)
{
	switch (err) {
	case KTOPIC_OK:
		return "ok";
	case KTOPIC_ERR_IO:
		return "the cluster did not answer";
	case KTOPIC_ERR_CONFIG:
		return "refused topic setting or policy";
	case KTOPIC_ERR_NOMEM:
		return "out of memory";
	case KTOPIC_ERR_LOCKED:
		return "another process writes the topic";
	}
	return "unknown ktopic error";
}

/* Topic configs: cleanup.policy=compact, then every <prefix>X of the
 * pass-through keys (the table's own rows, <prefix>topic, partitions and
 * replication.factor, are not among them). */
static int topic_configs(const struct config_section *w, const struct ktopic_spec *t,
                         rd_kafka_NewTopic_t *nt, char *errbuf, size_t errlen)
{
	size_t plen = strlen(t->prefix);

	rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "compact");
	for (size_t i = 0; i < config_passthrough_count(w); i++) {
		const char *key = config_passthrough_key(w, i), *v = config_passthrough_value(w, i);

		if (strncmp(key, t->prefix, plen) != 0)
			continue;
		if (strcmp(key + plen, "cleanup.policy") == 0 && strcmp(v, "compact") != 0) {
			/* Connect refuses it too: deletion would forget. */
			snprintf(errbuf, errlen,
			         "%s: %s=%s: the %s topic must be compacted, never deleted",
			         config_passthrough_where(w, i), key, v, t->noun);
			return KTOPIC_ERR_CONFIG;
		}
		if (rd_kafka_NewTopic_set_config(nt, key + plen, v) != RD_KAFKA_RESP_ERR_NO_ERROR) {
			snprintf(errbuf, errlen, "%s: %s: not a topic config",
			         config_passthrough_where(w, i), key);
			return KTOPIC_ERR_CONFIG;
		}
	}
	return 0;
}

bool ktopic_unreachable(rd_kafka_resp_err_t err)
{
	return err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
	       err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__RESOLVE;
}

/* One admin request's queue (where its result arrives), options (its
 * request timeout) and result event. */
struct admin_call {
	rd_kafka_queue_t *q;
	rd_kafka_AdminOptions_t *opt;
	rd_kafka_event_t *ev;
};

/* Makes a's queue and options, with timeout_ms as the request timeout.
 * Returns 0, or -1 when out of memory (admin_end still releases a). */
static int admin_start(struct admin_call *a, rd_kafka_t *rk, int timeout_ms)
{
	a->q = rd_kafka_queue_new(rk);
	a->opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
	if (a->q == NULL || a->opt == NULL)
		return -1;
	(void)rd_kafka_AdminOptions_set_request_timeout(a->opt, timeout_ms, NULL, 0);
	return 0;
}

/* Releases what admin_start made and the result event, if any. Accepts a
 * zeroed a. */
static void admin_end(struct admin_call *a)
{
	if (a->ev != NULL)
		rd_kafka_event_destroy(a->ev);
	if (a->opt != NULL)
		rd_kafka_AdminOptions_destroy(a->opt);
	if (a->q != NULL)
		rd_kafka_queue_destroy(a->q);
}

/* The error of a CreateTopics result event: 0 (created or already there),
 * or a KTOPIC_ERR_* with errbuf. */
static int create_result(const struct config_section *w, const struct ktopic_spec *t,
                         int timeout_ms, rd_kafka_event_t *ev, char *errbuf, size_t errlen)
{
	const rd_kafka_CreateTopics_result_t *res;
	const rd_kafka_topic_result_t **tr;
	rd_kafka_resp_err_t err;
	bool unreachable;
	size_t n = 0;

	if (ev == NULL) {
		/* No result at all (a loaded machine delivers librdkafka's own
		 * timeout after ours): the cluster was not reached either. */
		snprintf(errbuf, errlen,
		         "%s %s: cannot reach the cluster (bootstrap.servers %s) "
		         "to check it: no answer within %d ms",
		         t->key, t->topic, settings_worker(w)->bootstrap.text, timeout_ms);
		return KTOPIC_ERR_IO;
	}
	res = rd_kafka_event_CreateTopics_result(ev);
	tr = res != NULL ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
	err = n == 1 ? rd_kafka_topic_result_error(tr[0]) : rd_kafka_event_error(ev);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
		return 0;
	unreachable = ktopic_unreachable(err);
	/* Not reaching the broker says nothing of the topic, which may exist:
	 * "cannot create it" would send the user looking at the wrong thing. */
	snprintf(errbuf, errlen, "%s %s: %s%s%s: %s", t->key, t->topic,
	         unreachable ? "cannot reach the cluster (bootstrap.servers " : "cannot create it",
	         unreachable ? settings_worker(w)->bootstrap.text : "",
	         unreachable ? ") to check it" : "",
	         n == 1 ? rd_kafka_topic_result_error_string(tr[0])
	                : rd_kafka_event_error_string(ev));
	return unreachable ? KTOPIC_ERR_IO : KTOPIC_ERR_CONFIG;
}

/* Creates the topic unless it exists (Connect's KafkaOffsetBackingStore does
 * the same at start). An existing topic is used as it is. */
static int create(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                  int timeout_ms, char *errbuf, size_t errlen)
{
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_event_t *ev = NULL;
	int rc;

	if (q == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", t->key);
		return KTOPIC_ERR_NOMEM;
	}
	rc = ktopic_create_post(rk, w, t, timeout_ms, q, errbuf, errlen);
	if (rc == 0) {
		ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
		rc = ktopic_create_result(w, t, timeout_ms, ev, errbuf, errlen);
	}
	if (ev != NULL)
		rd_kafka_event_destroy(ev);
	rd_kafka_queue_destroy(q);
	return rc;
}

int ktopic_create_post(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                       int timeout_ms, rd_kafka_queue_t *q, char *errbuf, size_t errlen)
{
	rd_kafka_NewTopic_t *nt =
	    rd_kafka_NewTopic_new(t->topic, t->partitions, t->replication_factor, NULL, 0);
	struct admin_call a = {0};
	int rc = KTOPIC_ERR_NOMEM;

	if (nt == NULL || admin_start(&a, rk, timeout_ms) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", t->key);
		goto out;
	}
	rc = topic_configs(w, t, nt, errbuf, errlen);
	if (rc == 0)
		rd_kafka_CreateTopics(rk, &nt, 1, a.opt, q);
out:
	admin_end(&a);
	if (nt != NULL)
		rd_kafka_NewTopic_destroy(nt);
	return rc;
}

int ktopic_create_result(const struct config_section *w, const struct ktopic_spec *t,
                         int timeout_ms, rd_kafka_event_t *ev, char *errbuf, size_t errlen)
{
	return create_result(w, t, timeout_ms, ev, errbuf, errlen);
}

/* True when policy is "compact" alone (a list, as Kafka writes it: Connect
 * refuses "compact,delete" too, since delete still forgets offsets). */
static bool compact_only(const char *policy)
{
	bool any = false;

	while (*policy != '\0') {
		size_t n;

		policy += strspn(policy, " ,");
		n = strcspn(policy, " ,");
		if (n == 0)
			break;
		if (n != 7 || strncmp(policy, "compact", 7) != 0)
			return false;
		any = true;
		policy += n;
	}
	return any;
}

/* The cleanup.policy in a DescribeConfigs result, or NULL when the cluster
 * did not say (an error, no such topic, no permission). Points into ev. */
static const char *policy_of(rd_kafka_event_t *ev)
{
	const rd_kafka_DescribeConfigs_result_t *res = rd_kafka_event_DescribeConfigs_result(ev);
	const rd_kafka_ConfigResource_t **rs;
	const rd_kafka_ConfigEntry_t **e;
	size_t n = 0, ne = 0;

	if (res == NULL || rd_kafka_event_error(ev) != 0)
		return NULL;
	rs = rd_kafka_DescribeConfigs_result_resources(res, &n);
	if (n != 1 || rd_kafka_ConfigResource_error(rs[0]) != 0)
		return NULL;
	e = rd_kafka_ConfigResource_configs(rs[0], &ne);
	for (size_t i = 0; i < ne; i++)
		if (strcmp(rd_kafka_ConfigEntry_name(e[i]), "cleanup.policy") == 0)
			return rd_kafka_ConfigEntry_value(e[i]);
	return NULL;
}

int ktopic_check_post(rd_kafka_t *rk, const struct ktopic_spec *t, int timeout_ms,
                      rd_kafka_queue_t *q, char *errbuf, size_t errlen)
{
	rd_kafka_ConfigResource_t *cr =
	    rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, t->topic);
	struct admin_call a = {0};
	int rc = KTOPIC_ERR_NOMEM;

	if (cr == NULL || admin_start(&a, rk, timeout_ms) != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", t->key);
		goto out;
	}
	rd_kafka_DescribeConfigs(rk, &cr, 1, a.opt, q);
	rc = 0;
out:
	admin_end(&a);
	if (cr != NULL)
		rd_kafka_ConfigResource_destroy(cr);
	return rc;
}

int ktopic_check_result(const struct config_section *w, const struct ktopic_spec *t,
                        rd_kafka_event_t *ev, char *errbuf, size_t errlen)
{
	const char *policy = ev != NULL ? policy_of(ev) : NULL;

	if (ev == NULL || ktopic_unreachable(rd_kafka_event_error(ev))) {
		snprintf(errbuf, errlen,
		         "%s %s: cannot reach the cluster (bootstrap.servers %s) to check it%s%s",
		         t->key, t->topic, settings_worker(w)->bootstrap.text,
		         ev != NULL ? ": " : "", ev != NULL ? rd_kafka_event_error_string(ev) : "");
		return KTOPIC_ERR_IO;
	}
	if (policy == NULL || compact_only(policy))
		return 0;
	snprintf(errbuf, errlen,
	         "%s %s has cleanup.policy=%s: %s %s topic must be "
	         "compacted only, or %s (Connect refuses it too; was it deleted and created "
	         "again by a write?). Fix: kafka-configs.sh --bootstrap-server %s --alter "
	         "--entity-type topics --entity-name %s --add-config cleanup.policy=compact, or "
	         "name a new %s (skiff creates it compacted)",
	         t->key, t->topic, policy, strchr("aeiou", t->noun[0]) != NULL ? "an" : "a",
	         t->noun, t->loses, settings_worker(w)->bootstrap.text, t->topic, t->key);
	return KTOPIC_ERR_CONFIG;
}

/* Refuses an existing topic that is not compacted only; a cluster that
 * does not answer passes (ktopic_ensure). */
static int check_policy(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                        int timeout_ms, char *errbuf, size_t errlen)
{
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_event_t *ev = NULL;
	int rc;

	if (q == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", t->key);
		return KTOPIC_ERR_NOMEM;
	}
	rc = ktopic_check_post(rk, t, timeout_ms, q, errbuf, errlen);
	if (rc == 0) {
		ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
		rc = ktopic_check_result(w, t, ev, errbuf, errlen);
		if (rc == KTOPIC_ERR_IO)
			rc = 0;
	}
	if (ev != NULL)
		rd_kafka_event_destroy(ev);
	rd_kafka_queue_destroy(q);
	return rc;
}

int ktopic_ensure(rd_kafka_t *rk, const struct config_section *w, const struct ktopic_spec *t,
                  int timeout_ms, bool create_it, char *errbuf, size_t errlen)
{
	int rc = create_it ? create(rk, w, t, timeout_ms, errbuf, errlen) : 0;

	return rc != 0 ? rc : check_policy(rk, w, t, timeout_ms, errbuf, errlen);
}

int ktopic_lock(const struct config_section *w, const struct ktopic_spec *t, int fds[2],
                char *errbuf, size_t errlen)
{
	/* /run/lock, not a service's own RuntimeDirectory or a PrivateTmp:
	 * every skiff of the device, and `skiff offsets`, must see it. */
	const char *dir = access("/run/lock", W_OK | X_OK) == 0 ? "/run/lock" : "/tmp";
	const char *bs = settings_worker(w)->bootstrap.text;
	char name[64], path[512], what[512], why[1024];
	bool held;

	fds[0] = fds[1] = -1;
	bs = bs != NULL ? bs : "";
	snprintf(name, sizeof(name), "%.20s-%016" PRIx64 "-%016" PRIx64, t->lock_name, hash_str(bs),
	         hash_str(t->topic));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(what, sizeof(what), "%s %.200s on %.200s", t->key, t->topic, bs);
	/* The socket first: a lock file can be deleted (or aged out of /tmp)
	 * under a running skiff, the abstract socket cannot. The file stays for
	 * what sees no socket of ours (another network namespace). */
	fds[0] = lockfile_abstract(name, what, why, sizeof(why));
	fds[1] = fds[0] >= 0 ? lockfile_acquire_for(path, what, why, sizeof(why)) : fds[0];
	if (fds[1] >= 0)
		return 0;
	held = fds[1] == LOCKFILE_HELD;
	snprintf(errbuf, errlen, "%s", why);
	if (fds[0] >= 0)
		close(fds[0]);
	fds[0] = fds[1] = -1;
	return held ? KTOPIC_ERR_LOCKED : KTOPIC_ERR_IO;
}
