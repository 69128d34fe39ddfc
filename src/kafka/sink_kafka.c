/* sink_kafka: librdkafka producer wrapper. */
#include "kafka/sink_kafka.h"

#include "config/config.h"
#include "config/settings.h"
#include "control/restconf.h"
#include "core/device.h"
#include "kafka/kconf.h"
#include "core/log.h"
#include "util/num.h"
#include "core/source.h"
#include "kafka/tlserr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

/* Topic handles kept for reuse; past it one is let go for each new topic
 * (records in flight hold their own reference), so a connector may produce
 * to any number of topics over its life (TimestampRouter's daily topics, a
 * table per topic). */
#define MAX_TOPICS 256

static const struct sink_ops kafka_ops;
static void kdestroy(void *ctx);

struct sink_kafka {
	struct sink base; /* what sink_open hands out: ops and this */
	rd_kafka_t *rk;
	rd_kafka_queue_t *mainq;
	int pipefd[2];
	sink_delivery_fn cb;
	void *cb_ctx;
	uint32_t queue_capacity;
	size_t message_max; /* the producer's message.max.bytes */
	struct {
		char *name;
		rd_kafka_topic_t *rkt;
	} topics[MAX_TOPICS];
	size_t ntopics;
	size_t evict; /* the handle let go next once topics is full */
	bool destroying;
	/* librdkafka could not start a thread it needs (a broker's): the
	 * producer cannot work, and a restart may cure it (sink_fatal). */
	bool crippled;
	char crippled_why[256];
	struct sink_stats stats; /* from the last statistics callback */
	struct {
		int err;
		time_t at;
		unsigned suppressed;
	} folds[8]; /* the last error codes seen, for folding repeats */
};

/* skiff's defaults, applied before the user's properties. */
static const char *const defaults[][2] = {
    {"enable.idempotence", "true"},
    {"acks", "all"},
    {"message.timeout.ms", "0"},
    {"partitioner", "murmur2_random"},
    {"queue.buffering.max.messages", "5000"},
    {"queue.buffering.max.kbytes", "2048"},
    {"linger.ms", "5"},
    {"client.id", "skiff"},
    {"log.queue", "true"},
    {"log.connection.close", "false"},
};

const char *sink_default(size_t i, const char **value)
{
	if (i >= sizeof(defaults) / sizeof(defaults[0]))
		return NULL;
	*value = defaults[i][1];
	return defaults[i][0];
}

/* Passes worker properties to librdkafka: producer.X and kafka.X as X, and
 * security.protocol, sasl.*, ssl.* as they are. */
static const char *librdkafka_name(const char *key)
{
	if (strncmp(key, "producer.", 9) == 0)
		return key + 9;
	if (strncmp(key, "kafka.", 6) == 0)
		return key + 6;
	return key;
}

/* Errors after which the cluster will not take the record however often it is
 * sent: the user must change a limit, an ACL or the topic. Anything else (time
 * outs, fencing, transport) may pass with a restart. */
static bool refused(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
	case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
	case RD_KAFKA_RESP_ERR_INVALID_RECORD:
	case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
	case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
	case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
	case RD_KAFKA_RESP_ERR_INVALID_REQUIRED_ACKS:
	case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
	case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
	case RD_KAFKA_RESP_ERR__INVALID_ARG:
		return true;
	default:
		return false;
	}
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct sink_kafka *s = opaque;

	(void)rk;
	if (s->destroying || m->_private == NULL)
		return; /* no token: an offset record of a transaction (sink_txn) */
	s->stats.done_bytes += m->key_len + m->len;
	s->stats.done_msgs++;
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		s->cb(s->cb_ctx, m->_private, SINK_DELIVERED, NULL);
		return;
	}
	s->cb(s->cb_ctx, m->_private, refused(m->err) ? SINK_REFUSED : SINK_FAILED,
	      rd_kafka_err2str(m->err));
}

/* Broker errors are folded by kind: a broker down for hours must not fill the
 * journal with one line per reconnect. Whether a message of kind key is logged
 * now: the first of a kind at once, repeats once a minute, with *repeats the
 * number folded since. Main loop only (librdkafka's logs come through the
 * main queue). */
static bool fold_due(struct sink_kafka *s, int key, unsigned *repeats)
{
	time_t now = time(NULL);
	size_t i, oldest = 0;

	for (i = 0; i < 8 && s->folds[i].err != key; i++)
		if (s->folds[i].at < s->folds[oldest].at)
			oldest = i;
	if (i == 8) {
		i = oldest;
		s->folds[i].err = key;
		s->folds[i].at = 0;
		s->folds[i].suppressed = 0;
	}
	if (now - s->folds[i].at < 60) {
		s->folds[i].suppressed++;
		return false;
	}
	*repeats = s->folds[i].suppressed;
	s->folds[i].at = now;
	s->folds[i].suppressed = 0;
	return true;
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct sink_kafka *s = opaque;
	unsigned repeats;

	(void)rk;
	if (err == RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE && !s->crippled) {
		s->crippled = true;
		snprintf(s->crippled_why, sizeof(s->crippled_why), "%s", reason);
	}
	if (s->destroying || !fold_due(s, err, &repeats))
		return;
	if (repeats > 0)
		log_warn("kafka: %s (and %u more like it in the last minute)", reason, repeats);
	else
		log_msg(err == RD_KAFKA_RESP_ERR__FATAL ? LOG_ERROR : LOG_WARN, "kafka: %s",
		        reason);
}

/* The fold key of certificate-check lines: no librdkafka error code. */
#define FOLD_CERT_VERIFY (-100000)

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	struct sink_kafka *s = rd_kafka_opaque(rk);
	unsigned repeats;

	/* Connection failures reach on_error too, where they are folded. */
	if (s->destroying || strcmp(fac, "FAIL") == 0)
		return;
	if (strcmp(fac, "SSLCERTVRFY") == 0) {
		/* One per handshake, several a second: folded like on_error's. */
		if (!fold_due(s, FOLD_CERT_VERIFY, &repeats))
			return;
		if (repeats > 0)
			log_error("kafka: %s (and %u more like it in the last minute)", buf,
			          repeats);
		else
			log_error("kafka: %s", buf);
		return;
	}
	log_msg(level <= 3   ? LOG_ERROR
	        : level <= 4 ? LOG_WARN
	                     : LOG_DEBUG,
	        "kafka: %s: %s", fac, buf);
}

/* librdkafka 2.0.2 reports every failed certificate check as "certificate
 * verify failed": this names the cause (expired, wrong host, unknown CA) in its
 * SSLCERTVRFY log line. Returning 0 fails the handshake as OpenSSL would have.
 * Runs on a broker thread: touches nothing of skiff's. */
static int on_cert_verify(rd_kafka_t *rk, const char *broker, int32_t broker_id, int *x509_error,
                          int depth, const char *buf, size_t size, char *errstr, size_t errlen,
                          void *opaque)
{
	(void)rk, (void)broker_id, (void)buf, (void)size, (void)opaque;
	if (*x509_error == 0)
		return 1;
	snprintf(errstr, errlen, "%s (X509 error %d, %s certificate, broker %s)",
	         tlserr_reason(*x509_error), *x509_error, depth == 0 ? "the broker's" : "a CA",
	         broker);
	return 0;
}

static long long conf_ll(rd_kafka_conf_t *conf, const char *name)
{
	char val[64];
	size_t vlen = sizeof(val);

	if (rd_kafka_conf_get(conf, name, val, &vlen) != RD_KAFKA_CONF_OK)
		return -1;
	return strtoll(val, NULL, 10);
}

/* Where the user set librdkafka property name (producer.X or kafka.X), or
 * NULL when it is librdkafka's default. */
static const char *passthrough_where(const struct config_section *w, const char *name)
{
	for (size_t i = 0; i < config_passthrough_count(w); i++)
		if (strcmp(librdkafka_name(config_passthrough_key(w, i)), name) == 0)
			return config_passthrough_where(w, i);
	return NULL;
}

/* A record that message.max.bytes allows but the producer queue cannot hold
 * would be refused as "queue full" for ever, with nothing in flight to free
 * room. Both set so by the user: a contradiction, refused. message.max.bytes
 * set above skiff's default queue: the queue grows to two such records (the
 * user asked for records that large; skiff's small default is not theirs).
 * Left at librdkafka's default (1 MB) beside a small queue the user set: the
 * limit becomes the queue's size, so such a record fails at once as too large
 * (the connector stops before it). */
static int check_limits(const struct config_section *w, rd_kafka_conf_t *conf, char *errbuf,
                        size_t errlen)
{
	long long max_msg = conf_ll(conf, "message.max.bytes");
	long long queue_kb = conf_ll(conf, "queue.buffering.max.kbytes");
	const char *where = passthrough_where(w, "message.max.bytes");
	char val[32];

	if (max_msg < 0 || queue_kb < 0 || max_msg <= queue_kb * 1024)
		return 0;
	if (where == NULL) {
		snprintf(val, sizeof(val), "%lld", queue_kb * 1024 < 1000 ? 1000 : queue_kb * 1024);
		return kconf_set(conf, "message.max.bytes", val, "queue.buffering.max.kbytes",
		                 errbuf, errlen);
	}
	if (passthrough_where(w, "queue.buffering.max.kbytes") == NULL) {
		snprintf(val, sizeof(val), "%lld", 2 * ((max_msg + 1023) / 1024));
		return kconf_set(conf, "queue.buffering.max.kbytes", val, "message.max.bytes",
		                 errbuf, errlen);
	}
	snprintf(errbuf, errlen,
	         "%s: producer.message.max.bytes=%lld is larger than the producer "
	         "queue (producer.queue.buffering.max.kbytes=%lld, %lld bytes): a record that size "
	         "could never be queued; raise queue.buffering.max.kbytes or lower "
	         "message.max.bytes",
	         where, max_msg, queue_kb, queue_kb * 1024);
	return -1;
}

/* librdkafka's statistics (served by sink_poll, on the main loop): the
 * bytes written to brokers' sockets (tx_bytes: the sum of brokers[].txbytes,
 * after compression; not txmsg_bytes, which counts records before it), and
 * how many of the brokers it knows are up. Returns 0: librdkafka frees json. */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
	struct sink_kafka *s = opaque;
	cJSON *root = cJSON_ParseWithLength(json, len), *b;
	const cJSON *wire = cJSON_GetObjectItemCaseSensitive(root, "tx_bytes");
	int n = 0, up = 0;

	if (root == NULL)
		return 0;
	if (cJSON_IsNumber(wire) && wire->valuedouble >= 0)
		s->stats.wire_bytes = (uint64_t)wire->valuedouble;
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(root, "brokers"))
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "nodeid");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "state");

		/* The bootstrap entries (nodeid -1) are not brokers of the cluster. */
		if (!cJSON_IsNumber(id) || id->valuedouble < 0)
			continue;
		n++;
		up += cJSON_IsString(st) && strcmp(st->valuestring, "UP") == 0;
	}
	s->stats.brokers = n;
	s->stats.brokers_up = up;
	s->stats.updates++;
	cJSON_Delete(root);
	return 0;
}

/* librdkafka's statistics (on_stats), only where something reads them: the
 * bandwidth cap settles its estimates on the wire count every second, and
 * /metrics (listeners=) shows bytes sent and brokers up every 5 s. Without
 * either they would wake the loop every 5 s and keep librdkafka's histograms
 * (and the libm pages they need, ~0.4 MB) resident for nothing. The user's
 * statistics.interval.ms wins. */
static int statistics(const struct config_section *w, rd_kafka_conf_t *conf, char *errbuf,
                      size_t errlen)
{
	if (passthrough_where(w, "statistics.interval.ms") != NULL)
		return 0;
	if (settings_worker(w)->bandwidth > 0)
		return kconf_set(conf, "statistics.interval.ms", "1000",
		                 "bandwidth.max.bytes.per.second", errbuf, errlen);
	if (restconf_conf(w)->listeners.n > 0)
		return kconf_set(conf, "statistics.interval.ms", "5000", "listeners", errbuf,
		                 errlen);
	return 0;
}

/* librdkafka refuses a record timeout longer than the transaction's. Left at
 * skiff's 60000 (transactional) beside a producer.transaction.timeout.ms
 * set lower, as a test of a broker frozen past it would, the record timeout
 * becomes the transaction's: the start failed naming message.timeout.ms,
 * which the user never set. Both set so by the user: librdkafka says it. */
static int record_timeout(const struct config_section *w, rd_kafka_conf_t *conf, char *errbuf,
                          size_t errlen)
{
	long long txn = conf_ll(conf, "transaction.timeout.ms");
	char val[32];

	if (settings_worker(w)->eos != SETTINGS_EOS_ENABLED || txn < 0 ||
	    conf_ll(conf, "message.timeout.ms") <= txn ||
	    passthrough_where(w, "message.timeout.ms") != NULL ||
	    passthrough_where(w, "delivery.timeout.ms") != NULL)
		return 0;
	snprintf(val, sizeof(val), "%lld", txn);
	return kconf_set(conf, "message.timeout.ms", val,
	                 passthrough_where(w, "transaction.timeout.ms"), errbuf, errlen);
}

/* With exactly.once.source.support=enabled: a transactional producer whose
 * transactional.id is "<offset.storage.topic>-<device>" (device_name: the
 * device.id, else the machine id, else the id kept beside the offset file;
 * stable across restarts of one device, distinct across a fleet sharing the
 * topic even when its hosts share a name, or boards cloned from one image
 * share a machine id and each has its own device.id), unless
 * producer.transactional.id gives one; and a record timeout within the
 * transaction's (librdkafka requires it). A device without a name is
 * refused: the host name would make a fleet of "raspberrypi" fence itself. */
static int transactional(rd_kafka_conf_t *conf, const struct config_section *w, char *errbuf,
                         size_t errlen)
{
	const char *given = passthrough_where(w, "transactional.id");
	char dev[DEVICE_NAME_MAX], id[512];
	enum device_origin from;

	if (settings_worker(w)->eos != SETTINGS_EOS_ENABLED)
		return 0;
	if (given != NULL) {
		log_info("exactly-once: transactional.id from %s", given);
		return kconf_set(conf, "message.timeout.ms", "60000", "exactly.once.source.support",
		                 errbuf, errlen);
	}
	from = device_name(w, dev, sizeof(dev));
	if (from == DEVICE_NONE) {
		char why[1024];

		device_missing(why, sizeof(why));
		snprintf(errbuf, errlen,
		         "%s: exactly.once.source.support=enabled: the transactional.id names "
		         "this device (or set producer.transactional.id), and %s",
		         config_where(w, "exactly.once.source.support"), why);
		return -1;
	}
	snprintf(id, sizeof(id), "%.200s-%s", settings_worker(w)->offset_topic, dev);
	log_info("exactly-once: transactional.id %s (%s)", id, device_origin_text(from));
	return kconf_set(conf, "transactional.id", id, "exactly.once.source.support", errbuf,
	                 errlen) ||
	       kconf_set(conf, "message.timeout.ms", "60000", "exactly.once.source.support", errbuf,
	                 errlen);
}

static int build_conf(struct sink_kafka *s, const struct config_section *w, rd_kafka_conf_t **out,
                      char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char val[64];
	size_t vlen = sizeof(val);

	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (kconf_set(conf, defaults[i][0], defaults[i][1], "defaults", errbuf, errlen))
			goto fail;
	if (kconf_set(conf, "bootstrap.servers", settings_worker(w)->bootstrap.text,
	              config_where(w, "bootstrap.servers"), errbuf, errlen) ||
	    transactional(conf, w, errbuf, errlen) != 0)
		goto fail;
	for (size_t i = 0; i < config_passthrough_count(w); i++) {
		const char *key = config_passthrough_key(w, i);

		if (strncmp(key, "consumer.", 9) == 0 || strncmp(key, "admin.", 6) == 0 ||
		    strncmp(key, "offset.storage.", 15) == 0)
			continue; /* Connect's other clients; the offsets topic's configs */
		if (kconf_set(conf, librdkafka_name(key), config_passthrough_value(w, i),
		              config_passthrough_where(w, i), errbuf, errlen))
			goto fail;
	}
	if (rd_kafka_conf_get(conf, "queue.buffering.max.messages", val, &vlen) == RD_KAFKA_CONF_OK)
		s->queue_capacity = (uint32_t)strtoul(val, NULL, 10);
	if (s->queue_capacity == 0)
		s->queue_capacity = 5000;
	if (check_limits(w, conf, errbuf, errlen) != 0 ||
	    record_timeout(w, conf, errbuf, errlen) != 0)
		goto fail;
	s->message_max =
	    (size_t)(conf_ll(conf, "message.max.bytes") > 0 ? conf_ll(conf, "message.max.bytes")
	                                                    : 1000000);
	if (statistics(w, conf, errbuf, errlen) != 0)
		goto fail;
	rd_kafka_conf_set_opaque(conf, s);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_log_cb(conf, on_log);
	/* Fails only in a librdkafka without TLS, where no certificate is checked. */
	(void)rd_kafka_conf_set_ssl_cert_verify_cb(conf, on_cert_verify);
	rd_kafka_conf_set_stats_cb(conf, on_stats);
	*out = conf;
	return 0;
fail:
	rd_kafka_conf_destroy(conf);
	return -1;
}

/* Where the key librdkafka's error why is about was set ("ssl.key.location
 * failed: ..."): the first passthrough key it names, else bootstrap.servers,
 * which every producer has. */
static const char *where_named(const struct config_section *w, const char *why)
{
	for (size_t i = 0; i < config_passthrough_count(w); i++)
		if (strstr(why, librdkafka_name(config_passthrough_key(w, i))) != NULL)
			return config_passthrough_where(w, i);
	return config_where(w, "bootstrap.servers");
}

int sink_open(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
              struct sink **out, char *errbuf, size_t errlen)
{
	struct sink_kafka *s = calloc(1, sizeof(*s));
	rd_kafka_conf_t *conf = NULL;
	char why[512];
	int rc = SINK_ERR_CONFIG, kc;

	*out = NULL;
	if (s == NULL) {
		snprintf(errbuf, errlen, "kafka: out of memory");
		return SINK_ERR_NOMEM;
	}
	s->base.ops = &kafka_ops;
	s->base.ctx = s;
	s->pipefd[0] = s->pipefd[1] = -1;
	s->cb = cb;
	s->cb_ctx = cb_ctx;
	if (build_conf(s, worker, &conf, errbuf, errlen) != 0)
		goto fail;
	kc = kconf_new(RD_KAFKA_PRODUCER, conf, &s->rk, why, sizeof(why));
	if (kc == KCONF_ERR_NOMEM) {
		rd_kafka_conf_destroy(conf);
		snprintf(errbuf, errlen, "kafka producer: %s: out of memory or threads", why);
		rc = SINK_ERR_NOMEM;
		goto fail;
	}
	if (kc != KCONF_OK) {
		rd_kafka_conf_destroy(conf);
		snprintf(errbuf, errlen, "%s: kafka producer: %s", where_named(worker, why), why);
		goto fail;
	}
	if (pipe2(s->pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
		snprintf(errbuf, errlen, "kafka: pipe: %s", strerror(errno));
		rc = SINK_ERR;
		goto fail;
	}
	rd_kafka_set_log_queue(s->rk, NULL);
	s->mainq = rd_kafka_queue_get_main(s->rk);
	rd_kafka_queue_io_event_enable(s->mainq, s->pipefd[1], "1", 1);
	*out = &s->base;
	return 0;
fail:
	kdestroy(s);
	return rc;
}

static size_t kmessage_max(const void *ctx)
{
	const struct sink_kafka *s = ctx;

	return s->message_max;
}

static uint32_t kqueue_capacity(const void *ctx)
{
	const struct sink_kafka *s = ctx;

	return s->queue_capacity;
}

static int kfd(const void *ctx)
{
	const struct sink_kafka *s = ctx;

	return s->pipefd[0];
}

static rd_kafka_topic_t *topic_handle(struct sink_kafka *s, const char *name)
{
	size_t i;
	char *copy;
	rd_kafka_topic_t *rkt;

	for (i = 0; i < s->ntopics; i++) {
		if (strcmp(s->topics[i].name, name) == 0)
			return s->topics[i].rkt;
	}
	copy = strdup(name);
	if (copy == NULL)
		return NULL;
	rkt = rd_kafka_topic_new(s->rk, name, NULL);
	if (rkt == NULL) {
		free(copy);
		return NULL;
	}
	if (s->ntopics < MAX_TOPICS) {
		i = s->ntopics++;
	} else {
		i = s->evict;
		s->evict = (s->evict + 1) % MAX_TOPICS;
		rd_kafka_topic_destroy(s->topics[i].rkt);
		free(s->topics[i].name);
	}
	s->topics[i].name = copy;
	s->topics[i].rkt = rkt;
	return rkt;
}

static rd_kafka_headers_t *make_headers(const struct record_header *h, size_t n)
{
	rd_kafka_headers_t *hdrs = rd_kafka_headers_new(n);

	for (size_t i = 0; hdrs != NULL && i < n; i++)
		rd_kafka_header_add(hdrs, h[i].name, -1, h[i].value, (ssize_t)h[i].len);
	return hdrs;
}

static int kproduce(void *ctx, const struct sink_record *r, void *token, char *errbuf,
                    size_t errlen)
{
	struct sink_kafka *s = ctx;
	const char *topic = r->topic;
	rd_kafka_topic_t *rkt = topic_handle(s, topic);
	rd_kafka_headers_t *hdrs = NULL;
	rd_kafka_resp_err_t err;

	if (rkt == NULL) {
		snprintf(errbuf, errlen,
		         "topic %s: cannot be used (no memory, or a name librdkafka refuses)",
		         topic);
		return SINK_ERR;
	}
	if (r->nheaders > 0 && (hdrs = make_headers(r->headers, r->nheaders)) == NULL) {
		snprintf(errbuf, errlen, "topic %s: out of memory for the record's headers", topic);
		return SINK_ERR;
	}
	err = rd_kafka_producev(
	    s->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
	    RD_KAFKA_V_KEY(r->key, r->klen), RD_KAFKA_V_VALUE((void *)r->value, r->vlen),
	    RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_TIMESTAMP(r->timestamp_ms),
	    RD_KAFKA_V_OPAQUE(token), RD_KAFKA_V_END);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	if (hdrs != NULL)
		rd_kafka_headers_destroy(hdrs);
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		return SINK_QUEUE_FULL;
	snprintf(errbuf, errlen, "topic %s: %s", topic, rd_kafka_err2str(err));
	return refused(err) ? SINK_ERR_CONFIG : SINK_ERR;
}

static int ktxn(void *ctx, enum sink_txn_op op, int timeout_ms, char *errbuf, size_t errlen)
{
	struct sink_kafka *s = ctx;
	rd_kafka_error_t *e = NULL;
	int rc;

	switch (op) {
	case SINK_TXN_INIT:
		e = rd_kafka_init_transactions(s->rk, timeout_ms);
		break;
	case SINK_TXN_BEGIN:
		e = rd_kafka_begin_transaction(s->rk);
		break;
	case SINK_TXN_COMMIT:
		e = rd_kafka_commit_transaction(s->rk, timeout_ms);
		break;
	case SINK_TXN_ABORT:
		e = rd_kafka_abort_transaction(s->rk, timeout_ms);
		break;
	}
	if (e == NULL)
		return 0;
	snprintf(errbuf, errlen, "transaction: %s", rd_kafka_error_string(e));
	/* Fenced (another instance took the transactional.id) or fatal: this
	 * producer can do nothing more. A timeout goes on in the background,
	 * and the same call again resumes it (rdkafka.h). */
	if (rd_kafka_error_is_fatal(e))
		rc = SINK_ERR_CONFIG;
	else if (rd_kafka_error_is_retriable(e) &&
	         rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__TIMED_OUT)
		rc = SINK_TXN_PENDING;
	else
		rc = SINK_ERR;
	rd_kafka_error_destroy(e);
	return rc;
}

static int kreachable(void *ctx, int timeout_ms, char *errbuf, size_t errlen)
{
	struct sink_kafka *s = ctx;
	const struct rd_kafka_metadata *md = NULL;
	/* No topic named: the answer is the brokers' list, the smallest request
	 * that proves a broker answers. */
	rd_kafka_resp_err_t err = rd_kafka_metadata(s->rk, 0, NULL, &md, timeout_ms);

	if (md != NULL)
		rd_kafka_metadata_destroy(md);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	snprintf(errbuf, errlen, "%s", rd_kafka_err2str(err));
	return SINK_ERR;
}

static void kpoll(void *ctx)
{
	struct sink_kafka *s = ctx;
	char drain[64];

	while (read(s->pipefd[0], drain, sizeof(drain)) > 0)
		;
	rd_kafka_poll(s->rk, 0);
}

static int kin_flight(const void *ctx)
{
	const struct sink_kafka *s = ctx;

	return rd_kafka_outq_len(s->rk);
}

static void kstats(const void *ctx, struct sink_stats *out)
{
	const struct sink_kafka *s = ctx;

	*out = s->stats;
	out->queue_depth = (uint64_t)rd_kafka_outq_len(s->rk);
}

static char *kcluster_id(void *ctx)
{
	struct sink_kafka *s = ctx;
	char *id = rd_kafka_clusterid(s->rk, 0), *copy;

	if (id == NULL)
		return NULL;
	copy = strdup(id);
	rd_kafka_mem_free(s->rk, id);
	return copy;
}

static int kfatal(void *ctx, char *errbuf, size_t errlen)
{
	struct sink_kafka *s = ctx;
	char why[512];
	rd_kafka_resp_err_t err = rd_kafka_fatal_error(s->rk, why, sizeof(why));

	if (s->crippled) {
		snprintf(errbuf, errlen, "kafka: %s: out of memory or threads", s->crippled_why);
		return SINK_ERR;
	}
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	snprintf(errbuf, errlen, "kafka fatal error: %s: %s", rd_kafka_err2name(err), why);
	return SINK_ERR;
}

static bool kfenced(void *ctx, char *id, size_t idlen, int64_t *timeout_ms)
{
	struct sink_kafka *s = ctx;
	rd_kafka_resp_err_t err = rd_kafka_fatal_error(s->rk, NULL, 0);
	const rd_kafka_conf_t *conf = rd_kafka_conf(s->rk);
	char ms[32];
	size_t n = sizeof(ms), len = idlen;

	if (err != RD_KAFKA_RESP_ERR__FENCED && err != RD_KAFKA_RESP_ERR_PRODUCER_FENCED)
		return false;
	*timeout_ms = 60000; /* librdkafka's default */
	if (rd_kafka_conf_get(conf, "transaction.timeout.ms", ms, &n) == RD_KAFKA_CONF_OK)
		(void)num_parse_i64(ms, 1, INT64_MAX, timeout_ms);
	if (rd_kafka_conf_get(conf, "transactional.id", id, &len) != RD_KAFKA_CONF_OK)
		snprintf(id, idlen, "?");
	return true;
}

size_t sink_tls_files(const struct config_section *w, const char **out, size_t max)
{
	static const char *const keys[] = {"ssl.certificate.location", "ssl.key.location",
	                                   "ssl.ca.location", "ssl.keystore.location",
	                                   "ssl.crl.location"};
	size_t n = 0;

	for (size_t i = 0; i < config_passthrough_count(w) && n < max; i++) {
		const char *name = librdkafka_name(config_passthrough_key(w, i));
		const char *val = config_passthrough_value(w, i);

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strcmp(name, keys[k]) == 0 && val[0] != '\0' &&
			    strcmp(val, "probe") != 0)
				out[n++] = val;
	}
	return n;
}

static void kdestroy(void *ctx)
{
	struct sink_kafka *s = ctx;

	if (s == NULL)
		return;
	if (s->rk != NULL) {
		/* Whatever is undelivered now is dropped here and stays unacknowledged,
		 * so its offset was never committed: it is read again next start. */
		s->destroying = true;
		rd_kafka_purge(s->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_poll(s->rk, 0);
		if (s->mainq != NULL)
			rd_kafka_queue_destroy(s->mainq);
		for (size_t i = 0; i < s->ntopics; i++) {
			rd_kafka_topic_destroy(s->topics[i].rkt);
			free(s->topics[i].name);
		}
		rd_kafka_destroy(s->rk);
	}
	if (s->pipefd[0] >= 0)
		close(s->pipefd[0]);
	if (s->pipefd[1] >= 0)
		close(s->pipefd[1]);
	free(s);
}

static const struct sink_ops kafka_ops = {
    .produce = kproduce,
    .poll = kpoll,
    .fd = kfd,
    .in_flight = kin_flight,
    .queue_capacity = kqueue_capacity,
    .message_max = kmessage_max,
    .fatal = kfatal,
    .txn = ktxn,
    .fenced = kfenced,
    .reachable = kreachable,
    .stats = kstats,
    .cluster_id = kcluster_id,
    .destroy = kdestroy,
};
