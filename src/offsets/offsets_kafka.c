/* offsets_kafka: the offsets topic, alone or beside the file; see
 * offsets_kafka.h. One backend (struct offset_backend_ops) that holds the
 * file backend (if any) and a producer: load reads the file, then the topic to
 * its end, and merges them by writer and generation (topic_wins); store
 * writes the file (at once), then sends to the topic what differs from what
 * it holds, and completes when the broker acknowledged every record.
 *
 * What the topic holds of this skiff's connectors' keys (and of no other:
 * a shared topic's other keys cost no memory) is kept here as a map key ->
 * (value or tombstone, generation, writer), from the read at start and from
 * every record sent since: a
 * write sends only the keys whose value changed (Connect, too, writes only
 * what changed), so compaction has little to do. A failed write sends every
 * key again next time, since which records arrived is unknown. */
#include "offsets/offsets_kafka.h"

#include "util/clock.h"
#include "config/config.h"
#include "util/hash.h"
#include "util/jsonint.h"
#include "kafka/kconf.h"
#include "offsets/offsets.h"
#include "offsets/offsets_store.h"
#include "offsets/offsets_file.h"
#include "offsets/offsets_fleet.h"
#include "offsets/offsets_import.h"
#include "kafka/ktopic.h"
#include "offsets/offsets_kvalue.h"
#include "config/settings.h"
#include "core/source.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#define MIN_READ_MS 10000
/* The reader's fetches: 64 KiB, below glibc's 128 KiB mmap threshold
 * (larger buffers are mapped, and each one freed raises the threshold: the
 * heap then grows to keep them), and a prefetch queue of 128 KiB or 2,000
 * records (librdkafka's defaults: 64 MiB or 100,000), a full one waiting
 * 20 ms, not fetch.error.backoff.ms's 500. Measured on a topic of 200,000
 * keys (52 MB, read in about 1 s on the test broker): peak RSS as on an
 * empty topic (7.5 MB), against 45 MB with the defaults
 * (tests/e2e/test_offsets_shared.py). librdkafka takes a batch larger than
 * a fetch whole (KIP-74), up to receive.message.max.bytes (100 MB). */
#define READ_FETCH_BYTES "65536"
#define READ_QUEUE_KB "128"
#define READ_QUEUE_MSGS "2000"
#define READ_BACKOFF_MS "20"
/* How far generations jump when the topic restores the file: more file
 * writes than any device makes between two restores (2^32 at one per
 * 100 ms: 13 years), and 2^21 restores below the file format's 2^53. */
#define GEN_JUMP (UINT64_C(1) << 32)
/* Earlier positions of a run of Connect's records kept per key (rec). */
#define RUN_STARTS 16

/* A key of this skiff's connectors as the topic holds it: its newest
 * record. */
struct rec {
	char *key;
	char *value;  /* NULL: a tombstone */
	uint64_t gen; /* its skiff.generation, 0: none (not written by skiff) */
	char *device; /* its skiff.device header, NULL: none */
	char *store;  /* its skiff.store header, NULL: none */
	int32_t part; /* the partition it was read from; -1: not read, written here */
	int64_t ts;   /* its timestamp (a key found in two partitions) */
	/* Not written by skiff (Connect's): the byte where the FileStreamSource
	 * task that wrote it started (offsets_import.h), -1: not known. */
	int64_t base;
	/* Connect's: the positions of the key's earlier records in the same
	 * run of Connect's records, oldest first (the last RUN_STARTS): where a
	 * later task of it started when Connect's task restarted (a worker
	 * restart, a rebalance, a pause), which skips them as bytes. */
	int64_t starts[RUN_STARTS];
	unsigned nstarts;
};

struct kctx {
	const struct config_section *w;
	const struct offset_backend_ops *fops; /* the file, or NULL */
	void *fctx;
	rd_kafka_t *rk;
	rd_kafka_queue_t *mainq;
	int pipefd[2];
	const char *topic;
	struct ktopic_spec spec; /* the topic for kafka/ktopic.h */
	int timeout_ms;
	struct rec *recs; /* what the topic holds */
	size_t n, cap;
	struct hash index;
	bool resend;
	bool create;            /* the writer creates a missing topic; --check does not */
	offsets_fence_fn fence; /* before the read (exactly-once): NULL, none */
	void *fence_arg;
	bool recheck;               /* a write found no topic: create it again before the next */
	struct offsets_fleet fleet; /* this device's names, load's warning */
	int lockfd[2];              /* the topic's locks (hold), -1: none */
	struct offsets *o;          /* from load: offsets_write_done's */
	size_t read_records, read_bytes, read_partitions; /* the last read of the topic */
	const char *only;  /* reading for one connector (kafka_adopt), NULL: all */
	char warned[1024]; /* the load's warnings */
	size_t nwarned;
	uint64_t writing; /* the generation in flight, 0: none */
	size_t pending;
	int err;
	char why[512];
	char note[1024]; /* the file's note on the write in flight, "" none */
};

/* ---- clients ---------------------------------------------------------------- */

/* The offsets topic for kafka/ktopic.h. */
static void spec_init(struct ktopic_spec *t, const struct config_section *w, const char *topic)
{
	t->topic = topic;
	t->key = "offset.storage.topic";
	t->prefix = "offset.storage.";
	t->noun = "offsets";
	t->loses = "the broker deletes offsets and a restart re-sends or skips records";
	t->lock_name = "skiff-offsets";
	t->partitions = (int)settings_worker(w)->offset_partitions;
	t->replication_factor = (int)settings_worker(w)->offset_rf;
}

/* A ktopic_err as the offset store's code. */
static int from_ktopic(int rc)
{
	switch (rc) {
	case KTOPIC_OK:
		return 0;
	case KTOPIC_ERR_CONFIG:
		return OFFSETS_ERR_CONFIG;
	case KTOPIC_ERR_NOMEM:
		return OFFSETS_ERR_NOMEM;
	case KTOPIC_ERR_LOCKED:
		return OFFSETS_ERR_LOCKED;
	}
	return OFFSETS_ERR_IO;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

static int open_producer(struct kctx *k, char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = kconf_worker(k->w, "skiff-offsets", errbuf, errlen);
	char tmo[32], why[512];
	int kc;

	if (conf == NULL)
		return OFFSETS_ERR_CONFIG;
	/* acks=all and idempotence: an acknowledged offset is on every in-sync
	 * replica, and a retried batch cannot land after a later one. */
	snprintf(tmo, sizeof(tmo), "%d", k->timeout_ms);
	if (kconf_set(conf, "acks", "all", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "enable.idempotence", "true", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "partitioner", "murmur2_random", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "linger.ms", "0", "defaults", errbuf, errlen) != 0 ||
	    /* A write to a deleted topic must not have the broker create it
	     * with its default policy (delete): kafka_store creates it. */
	    kconf_set(conf, "allow.auto.create.topics", "false", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "message.timeout.ms", tmo, "defaults", errbuf, errlen) != 0) {
		rd_kafka_conf_destroy(conf);
		return OFFSETS_ERR_CONFIG;
	}
	rd_kafka_conf_set_opaque(conf, k);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	if ((kc = kconf_new(RD_KAFKA_PRODUCER, conf, &k->rk, why, sizeof(why))) != KCONF_OK) {
		bool lacked = kc == KCONF_ERR_NOMEM;

		rd_kafka_conf_destroy(conf);
		snprintf(errbuf, errlen, "offset.storage.topic: producer: %s%s", why,
		         lacked ? ": out of memory or threads" : "");
		return lacked ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_CONFIG;
	}
	if (pipe2(k->pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
		snprintf(errbuf, errlen, "offset.storage.topic: pipe: %s", strerror(errno));
		return OFFSETS_ERR_IO;
	}
	k->mainq = rd_kafka_queue_get_main(k->rk);
	rd_kafka_queue_io_event_enable(k->mainq, k->pipefd[1], "1", 1);
	return 0;
}

/* ---- the map of what the topic holds ------------------------------------------ */

static struct rec *find(const struct kctx *k, const char *key)
{
	size_t i;

	return hash_get(&k->index, key, &i) ? &k->recs[i] : NULL;
}

/* Sets key to value (NULL: tombstone) at gen, written by device from store
 * (NULL: unknown). Returns 0 or OFFSETS_ERR_NOMEM. */
static int remember(struct kctx *k, const char *key, const char *value, uint64_t gen,
                    const char *device, const char *store)
{
	struct rec *r = find(k, key);
	char *v = NULL, *d = NULL, *st = NULL;

	if ((value != NULL && (v = strdup(value)) == NULL) ||
	    (device != NULL && (d = strdup(device)) == NULL) ||
	    (store != NULL && (st = strdup(store)) == NULL))
		goto nomem;
	if (r == NULL) {
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 16;
			struct rec *grown = realloc(k->recs, cap * sizeof(*grown));

			if (grown == NULL)
				goto nomem;
			k->recs = grown;
			k->cap = cap;
		}
		r = &k->recs[k->n];
		*r = (struct rec){.key = strdup(key), .part = -1, .base = -1};
		if (r->key == NULL || hash_put(&k->index, r->key, k->n) != 0) {
			free(r->key);
			goto nomem;
		}
		k->n++;
	}
	free(r->value);
	free(r->device);
	free(r->store);
	r->value = v;
	r->device = d;
	r->store = st;
	r->gen = gen;
	return 0;
nomem:
	free(v);
	free(d);
	free(st);
	return OFFSETS_ERR_NOMEM;
}

/* ---- load ------------------------------------------------------------------------ */

/* The bytes of m's headers, names and values. */
static size_t header_bytes(const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *hdrs = NULL;
	const char *name;
	const void *v;
	size_t n = 0, len;

	if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &v, &len) == 0; i++)
		n += strlen(name) + len;
	return n;
}

/* The position of an offset value, -1: none. */
static int64_t position_of(const char *value)
{
	int64_t pos = -1;

	return value != NULL && jsonint_get(value, "position", &pos) == 0 ? pos : -1;
}

/* Where the FileStreamSource task that wrote a record of Connect's after
 * prev (the key's newest record so far, NULL: none) started: at the
 * position of skiff's record it skipped, at the start after a tombstone
 * (an offset reset), where the run of Connect's records it continues
 * started; not known for the key's first record (the topic's oldest, or
 * what compaction left). */
static int64_t task_start(const struct rec *prev)
{
	if (prev == NULL)
		return -1;
	if (prev->value == NULL)
		return 0;
	return prev->gen > 0 ? position_of(prev->value) : prev->base;
}

struct reading {
	int n;         /* partitions */
	int64_t *high; /* each one's end at start */
	int64_t *next; /* the next offset to read */
	size_t bytes;  /* every record's key, value and headers */
	size_t own;    /* the keys and values kept (OFFSETS_MAX_BYTES) */
	size_t records;
};

/* Whether key is an offset key, ["connector",{partition}]: a record of
 * another shape is not an offset, nor ours to write back. */
static bool offset_key(const char *key)
{
	cJSON *j = cJSON_Parse(key);
	bool ok = cJSON_IsArray(j) && cJSON_GetArraySize(j) == 2 &&
	          cJSON_IsString(cJSON_GetArrayItem(j, 0)) &&
	          cJSON_IsObject(cJSON_GetArrayItem(j, 1));

	cJSON_Delete(j);
	return ok;
}

/* Whether a record (timestamp ts, skiff.generation gen, 0: none, from
 * device and store, NULL: no header) is newer than prev, the key's record
 * read from another partition (a tool that partitions otherwise, or a topic
 * that grew). One writer's generations say it whatever its clock (a board
 * without an RTC stamps its records years behind): the same store, or the
 * same device where neither record names a store. Otherwise the later
 * timestamp is the newer record. */
static bool newer(const struct rec *prev, int64_t ts, uint64_t gen, const char *device,
                  const char *store)
{
	bool same = false;

	if (prev->gen != 0 && gen != 0) {
		if (store != NULL && prev->store != NULL)
			same = strcmp(store, prev->store) == 0;
		else if (store == NULL && prev->store == NULL && device != NULL &&
		         prev->device != NULL)
			same = strcmp(device, prev->device) == 0;
	}
	return same ? gen > prev->gen : ts >= prev->ts;
}

/* One record read back. Only the keys of this skiff's connectors are kept:
 * the rest of a shared topic (Connect's connectors, other devices') is read
 * past and costs no memory. A key or value that is not an offset is
 * skipped: it is not ours to judge. */
static int apply(struct kctx *k, const rd_kafka_message_t *m, struct reading *rd)
{
	char *key = NULL, *value = NULL;
	const struct connector_settings *c;
	struct record_header h[OFFSETS_KVALUE_HEADERS];
	struct offsets_kmeta meta;
	struct rec *prev, *r;
	size_t nh;
	int64_t ts, base, starts[RUN_STARTS];
	unsigned ns = 0;
	int rc = OFFSETS_ERR_NOMEM;

	rd->records++;
	rd->bytes += m->key_len + m->len + header_bytes(m);
	if (m->key == NULL || m->key_len == 0 ||
	    (c = offsets_fleet_connector(&k->fleet, m->key, m->key_len)) == NULL ||
	    (k->only != NULL && strcmp(c->name, k->only) != 0))
		return 0;
	rd->own += m->key_len + m->len;
	if (rd->own > OFFSETS_MAX_BYTES)
		return OFFSETS_ERR_FULL;
	if ((key = strndup(m->key, m->key_len)) == NULL)
		return OFFSETS_ERR_NOMEM;
	if (!offset_key(key)) {
		free(key);
		return 0;
	}
	ts = rd_kafka_message_timestamp(m, NULL);
	prev = find(k, key);
	nh = offsets_kvalue_headers_of(m, h);
	offsets_kvalue_meta(h, nh, &meta);
	if (prev != NULL && prev->part >= 0 && prev->part != m->partition &&
	    !newer(prev, ts, meta.gen, meta.device, meta.store)) {
		free(key);
		return 0;
	}
	base = !meta.skiff ? task_start(prev) : -1;
	/* A run of Connect's records goes on: the previous one is a start too. */
	if (!meta.skiff && prev != NULL && prev->gen == 0 && prev->value != NULL) {
		ns = prev->nstarts;
		memcpy(starts, prev->starts, ns * sizeof(starts[0]));
		if (ns == RUN_STARTS)
			memmove(starts, starts + 1, --ns * sizeof(starts[0]));
		starts[ns++] = position_of(prev->value);
	}
	/* The file source's identity is in a header (offsets_kvalue.h). */
	if (m->payload == NULL || (value = offsets_kvalue_value(m->payload, m->len, h, nh)) != NULL)
		rc = remember(k, key, value, meta.gen, meta.device, meta.store);
	if (rc == 0 && (r = find(k, key)) != NULL) {
		r->part = m->partition;
		r->ts = ts;
		r->base = base;
		memcpy(r->starts, starts, ns * sizeof(starts[0]));
		r->nstarts = ns;
	}
	free(key);
	free(value);
	return rc;
}

static bool read_all(const struct reading *r)
{
	for (int p = 0; p < r->n; p++)
		if (r->next[p] < r->high[p])
			return false;
	return true;
}

static bool not_yet(rd_kafka_resp_err_t err)
{
	return err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
	       err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
	       err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
}

/* The topic's metadata, once the cluster knows it (a topic just created may
 * take a moment), within the read's time limit. */
static rd_kafka_resp_err_t topic_metadata(struct kctx *k, rd_kafka_t *c, rd_kafka_topic_t *rkt,
                                          const struct rd_kafka_metadata **md)
{
	int64_t deadline = clock_mono_ms() + k->timeout_ms;
	rd_kafka_resp_err_t err;

	for (;;) {
		err = rd_kafka_metadata(c, 0, rkt, md, k->timeout_ms);
		if (err == 0 && ((*md)->topic_cnt != 1 || (*md)->topics[0].err != 0 ||
		                 (*md)->topics[0].partition_cnt == 0)) {
			err = (*md)->topic_cnt == 1 && (*md)->topics[0].err != 0
			          ? (*md)->topics[0].err
			          : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
			rd_kafka_metadata_destroy(*md);
			*md = NULL;
		}
		if (!not_yet(err) || clock_mono_ms() > deadline ||
		    (!k->create && err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART))
			return err;
		usleep(100 * 1000);
	}
}

/* A partition's watermarks. Retries while the partition has no leader yet
 * (a topic just created), up to the read's time limit. */
static rd_kafka_resp_err_t watermarks(struct kctx *k, rd_kafka_t *c, int p, int64_t *lo,
                                      int64_t *hi)
{
	int64_t deadline = clock_mono_ms() + k->timeout_ms;
	rd_kafka_resp_err_t err;

	for (;;) {
		err = rd_kafka_query_watermark_offsets(c, k->topic, p, lo, hi, k->timeout_ms);
		if (!not_yet(err) || clock_mono_ms() > deadline)
			return err;
		usleep(100 * 1000);
	}
}

/* The partitions' ends and an assignment of those with records. */
static int plan(struct kctx *k, rd_kafka_t *c, struct reading *r,
                rd_kafka_topic_partition_list_t *tp, char *errbuf, size_t errlen)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(c, k->topic, NULL);
	rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__INVALID_ARG;
	int rc = OFFSETS_ERR_IO;

	if (rkt != NULL)
		err = topic_metadata(k, c, rkt, &md);
	if (!k->create && err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
		rc = 0; /* --check: a topic not created yet is an empty one */
		goto out;
	}
	if (err != 0) {
		snprintf(errbuf, errlen, "offset.storage.topic %s: %s%s%s: %s", k->topic,
		         ktopic_unreachable(err) ? "cannot reach the cluster (bootstrap.servers "
		                                 : "metadata",
		         ktopic_unreachable(err) ? settings_worker(k->w)->bootstrap.text : "",
		         ktopic_unreachable(err) ? ") to read it" : "", rd_kafka_err2str(err));
		goto out;
	}
	r->n = md->topics[0].partition_cnt;
	r->high = calloc((size_t)r->n + 1, sizeof(*r->high));
	r->next = calloc((size_t)r->n + 1, sizeof(*r->next));
	rc = OFFSETS_ERR_NOMEM;
	if (r->high == NULL || r->next == NULL)
		goto out;
	rc = OFFSETS_ERR_IO;
	for (int p = 0; p < r->n; p++) {
		int64_t lo = 0;

		err = watermarks(k, c, p, &lo, &r->high[p]);
		if (err != 0) {
			snprintf(errbuf, errlen, "offset.storage.topic %s: partition %d: %s",
			         k->topic, p, rd_kafka_err2str(err));
			goto out;
		}
		r->next[p] = lo;
		if (lo < r->high[p])
			rd_kafka_topic_partition_list_add(tp, k->topic, p)->offset = lo;
	}
	rc = 0;
out:
	if (md != NULL)
		rd_kafka_metadata_destroy(md);
	if (rkt != NULL)
		rd_kafka_topic_destroy(rkt);
	return rc;
}

/* Consumes until every partition reached its end at start, or fails when
 * nothing comes for the read's time limit. */
static int consume_to_end(struct kctx *k, rd_kafka_t *c, struct reading *r, char *errbuf,
                          size_t errlen)
{
	int64_t deadline = clock_mono_ms() + k->timeout_ms;
	int rc = 0;

	while (rc == 0 && !read_all(r)) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);

		if (m == NULL && clock_mono_ms() > deadline) {
			snprintf(errbuf, errlen,
			         "offset.storage.topic %s: not read to its end (%zu records read, "
			         "then nothing for %d ms)",
			         k->topic, r->records, k->timeout_ms);
			return OFFSETS_ERR_IO;
		}
		if (m == NULL)
			continue;
		/* A large shared topic over a slow link takes as long as it
		 * takes: only a read that stalls fails. */
		deadline = clock_mono_ms() + k->timeout_ms;
		if (m->err == 0 && m->partition >= 0 && m->partition < r->n) {
			r->next[m->partition] = m->offset + 1;
			rc = apply(k, m, r);
		} else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && m->partition >= 0 &&
		           m->partition < r->n) {
			/* Exactly-once: the end read_committed sees; past it are the
			 * commit markers and a killed instance's open transaction. */
			r->next[m->partition] = r->high[m->partition];
		} else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && m->err != 0) {
			snprintf(errbuf, errlen, "offset.storage.topic %s: %s", k->topic,
			         rd_kafka_message_errstr(m));
			rc = OFFSETS_ERR_IO;
		}
		rd_kafka_message_destroy(m);
	}
	if (rc == OFFSETS_ERR_FULL || rc == OFFSETS_ERR_NOMEM)
		snprintf(errbuf, errlen, "offset.storage.topic %s: %s", k->topic,
		         offsets_strerror(rc));
	return rc;
}

/* Reads the topic from its start to its end into k's map. */
static int read_topic(struct kctx *k, char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = kconf_worker(k->w, "skiff-offsets", errbuf, errlen);
	rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(32);
	struct reading r = {0};
	rd_kafka_resp_err_t err;
	rd_kafka_t *c = NULL;
	char why[512];
	int rc = OFFSETS_ERR_CONFIG, kc;

	/* A group.id only because librdkafka's assign wants one: the reader
	 * never joins the group nor commits. A shared topic holds far more
	 * than this device's keys: small fetches keep its memory small
	 * (READ_FETCH_BYTES). */
	if (conf == NULL ||
	    kconf_set(conf, "group.id", "skiff-offsets-reader", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "enable.auto.commit", "false", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "message.max.bytes", READ_FETCH_BYTES, "defaults", errbuf, errlen) !=
	        0 ||
	    kconf_set(conf, "fetch.max.bytes", READ_FETCH_BYTES, "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "max.partition.fetch.bytes", READ_FETCH_BYTES, "defaults", errbuf,
	              errlen) != 0 ||
	    kconf_set(conf, "queued.max.messages.kbytes", READ_QUEUE_KB, "defaults", errbuf,
	              errlen) != 0 ||
	    kconf_set(conf, "queued.min.messages", READ_QUEUE_MSGS, "defaults", errbuf, errlen) !=
	        0 ||
	    kconf_set(conf, "fetch.error.backoff.ms", READ_BACKOFF_MS, "defaults", errbuf,
	              errlen) != 0 ||
	    (settings_worker(k->w)->eos == SETTINGS_EOS_ENABLED &&
	     (kconf_set(conf, "isolation.level", "read_committed", "exactly-once", errbuf,
	                errlen) ||
	      kconf_set(conf, "enable.partition.eof", "true", "exactly-once", errbuf, errlen))))
		goto out;
	if ((kc = kconf_new(RD_KAFKA_CONSUMER, conf, &c, why, sizeof(why))) != KCONF_OK) {
		bool lacked = kc == KCONF_ERR_NOMEM;

		snprintf(errbuf, errlen, "offset.storage.topic: consumer: %s%s", why,
		         lacked ? ": out of memory or threads" : "");
		rc = lacked ? OFFSETS_ERR_NOMEM : OFFSETS_ERR_CONFIG;
		goto out;
	}
	conf = NULL;
	rc = plan(k, c, &r, tp, errbuf, errlen);
	if (rc == 0 && tp->cnt > 0 && (err = rd_kafka_assign(c, tp)) != 0) {
		snprintf(errbuf, errlen, "offset.storage.topic %s: cannot assign: %s", k->topic,
		         rd_kafka_err2str(err));
		rc = OFFSETS_ERR_IO;
	}
	if (rc == 0)
		rc = consume_to_end(k, c, &r, errbuf, errlen);
	k->read_records = r.records;
	k->read_bytes = r.bytes;
	k->read_partitions = (size_t)r.n;
out:
	if (conf != NULL)
		rd_kafka_conf_destroy(conf);
	if (c != NULL) {
		(void)rd_kafka_assign(c, NULL);
		rd_kafka_destroy(c);
	}
	rd_kafka_topic_partition_list_destroy(tp);
	free(r.high);
	free(r.next);
	return rc;
}

/* Whether the topic's newest record r of a key wins over the offset file
 * (generation fgen, 0: no file): per key the newest record wins, whoever
 * wrote it. A record this store wrote is compared by generation: it wins
 * when the file does not hold its generation (the file is lost, or an older
 * copy was put back); otherwise the file holds it or a later position that
 * the topic did not take yet (its broker unreachable). A record anyone else
 * wrote (Connect, a Connect tool, another skiff, another device) came after
 * this store's last record of the key in the topic's order: it wins. */
static bool topic_wins(const struct kctx *k, const struct rec *r, uint64_t fgen)
{
	return fgen == 0 || r->gen == 0 || !offsets_fleet_mine(&k->fleet, r->device, r->store) ||
	       r->gen > fgen;
}

/* Adds a warning to the load's note (the first ones, then a count). */
static void note_warn(struct kctx *k, const char *text)
{
	size_t len = strlen(k->warned);

	k->nwarned++;
	if (len + strlen(text) + 3 < sizeof(k->warned))
		snprintf(k->warned + len, sizeof(k->warned) - len, "%s%s", len ? "; " : "", text);
}

/* Connect's value counted from byte from in the file at path, in bytes:
 * 0 with *bytes, else as offsets_import_value (why says it). */
static int count_from(const char *path, int64_t from, const char *value, int64_t *bytes, char *why,
                      size_t wlen)
{
	char buf[64];
	int rc = offsets_import_value(path, from, value, buf, sizeof(buf), why, wlen);

	*bytes = rc == 0 ? position_of(buf) : -1;
	return *bytes < 0 ? OFFSETS_ERR_ARG : rc;
}

/* Whether byte pos of the file at path starts a line (a position Connect
 * could have written). */
static bool line_start(const char *path, int64_t pos)
{
	char why[256];
	int64_t start;

	return offsets_import_line_start(path, pos, &start, why, sizeof(why)) == 0 && start == pos;
}

/* The value to load for r, a record of Connect's (not skiff's) of the
 * file source's connector c: FileStreamSource's position counts Java chars
 * from where its task started, skiff's bytes (offsets_import.h). The
 * task's start (r->base) may be unknown (the key's first record in the
 * topic): then the position the file holds (have), when not past Connect's,
 * else the start of the file. Connect writes only line starts: where the
 * count from there is none, its task restarted since (it skipped its own
 * earlier position as bytes), and the run's earlier records are tried,
 * newest first; where none gives a line start, the earliest count, moved
 * back to its line's start (lines again rather than lines lost or a
 * fragment). What cannot be counted (the file is missing or holds fewer
 * characters) is taken as it is, and said. Returns value or buf. */
static const char *from_connect(struct kctx *k, const struct connector_settings *c,
                                const struct rec *r, const char *have, char *buf, size_t len)
{
	cJSON *key = cJSON_Parse(r->key);
	const cJSON *file =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(key, 1), "filename");
	int64_t base = r->base, pos = position_of(r->value), had = position_of(have);
	int64_t bytes = -1, least = -1, from = -1, at;
	char why[512], text[1024];
	const char *out = r->value, *path;

	if (strcmp(c->ops->kind, "file") != 0 || !cJSON_IsString(file) || pos < 0)
		goto out;
	path = file->valuestring;
	if (base < 0)
		base = had >= 0 && had <= pos ? had : 0;
	if (count_from(path, base, r->value, &bytes, why, sizeof(why)) == 0) {
		least = bytes;
		if (line_start(path, bytes))
			goto found;
	}
	for (unsigned i = r->nstarts; i-- > 0;) {
		from = r->starts[i];
		if (from < 0 || from > pos ||
		    count_from(path, from, r->value, &at, text, sizeof(text)) != 0)
			continue;
		if (least < 0 || at < least)
			least = at;
		if (line_start(path, at)) {
			bytes = at;
			snprintf(
			    text, sizeof(text),
			    "offset.storage.topic %s: connector %s: Kafka Connect's task restarted "
			    "after byte %lld (it skipped its position as bytes): its position %lld "
			    "counted from byte %lld, its earlier record",
			    k->topic, c->name, (long long)base, (long long)pos, (long long)from);
			note_warn(k, text);
			goto found;
		}
	}
	if (least >= 0) {
		if (offsets_import_line_start(path, least, &bytes, why, sizeof(why)) != 0)
			bytes = least;
		snprintf(text, sizeof(text),
		         "offset.storage.topic %s: connector %s: Kafka Connect's position %lld is "
		         "no line start counted from any byte its task could have started at: "
		         "resuming at byte %lld, the start of the earliest line it may not have "
		         "sent (lines may be sent again)",
		         k->topic, c->name, (long long)pos, (long long)bytes);
		note_warn(k, text);
		goto found;
	}
	snprintf(text, sizeof(text),
	         "offset.storage.topic %s: connector %s: the position %lld Kafka Connect wrote "
	         "counts characters from byte %lld, which the file cannot tell (%s): taken as "
	         "bytes",
	         k->topic, c->name, (long long)pos, (long long)base, why);
	note_warn(k, text);
	goto out;
found:
	if ((size_t)snprintf(buf, len, "{\"position\":%lld}", (long long)bytes) < len)
		out = buf;
out:
	cJSON_Delete(key);
	return out;
}

/* Applies the topic's records to o where they win (topic_wins), and marks
 * o dirty where the topic does not hold what o holds for a key of this
 * skiff's connectors. *restored: a record of this store's won (the file was
 * lost or older). */
static int merge(struct kctx *k, struct offsets *o, uint64_t fgen, uint64_t *maxgen, bool *restored,
                 char *errbuf, size_t errlen)
{
	bool differ = false;
	char buf[64];
	int rc;

	for (size_t i = 0; i < k->n; i++) {
		const struct rec *r = &k->recs[i];
		const struct connector_settings *c =
		    offsets_fleet_connector(&k->fleet, r->key, strlen(r->key));
		const char *have = offsets_get(o, r->key), *value = r->value;

		if (k->only != NULL && (c == NULL || strcmp(c->name, k->only) != 0))
			continue;

		rc = offsets_fleet_check(&k->fleet, r->key, r->device, r->store, r->gen, fgen,
		                         errbuf, errlen);
		if (rc != 0)
			return rc;
		if (r->gen > *maxgen)
			*maxgen = r->gen;
		if (topic_wins(k, r, fgen)) {
			*restored = *restored || fgen == 0 || r->gen > fgen;
			if (r->gen == 0 && value != NULL && c != NULL)
				value = from_connect(k, c, r, have, buf, sizeof(buf));
			rc = offsets_load_record(o, r->key, value);
			if (rc == OFFSETS_ERR_NOMEM || rc == OFFSETS_ERR_FULL)
				return rc;
		}
		have = offsets_get(o, r->key);
		if ((have == NULL) != (r->value == NULL) ||
		    (have != NULL && strcmp(have, r->value) != 0))
			differ = true;
	}
	for (size_t i = 0; i < offsets_count(o) && !differ; i++)
		differ = find(k, offsets_key(o, i)) == NULL &&
		         offsets_fleet_connector(&k->fleet, offsets_key(o, i),
		                                 strlen(offsets_key(o, i))) != NULL;
	if (differ)
		offsets_load_mark_dirty(o);
	return 0;
}

/* The topic cannot be read, but the file loaded: start from the file (a
 * device must start offline, as it does without the topic), say so, and
 * send every offset at the first write. Without a file skiff does not
 * start (exit 75 and retry): it would re-send everything. */
static int file_only(struct kctx *k, uint64_t fgen, uint64_t *generation, int *from_prev,
                     char *errbuf, size_t errlen)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", errbuf);
	for (size_t i = 0; i < k->n; i++) {
		free(k->recs[i].key);
		free(k->recs[i].value);
		free(k->recs[i].device);
		free(k->recs[i].store);
	}
	k->n = 0;
	hash_clear(&k->index);
	k->resend = true;
	offsets_load_mark_dirty(k->o);
	*generation = fgen;
	*from_prev = 1;
	snprintf(errbuf, errlen,
	         "%s; started from the offset file alone (what the topic holds was not "
	         "compared), every offset goes to the topic at the first flush",
	         why);
	return 0;
}

/* Says what the read cost (records and bytes read, for how many keys of
 * this skiff's connectors, in how long) or, before that, what could not be
 * taken as written. */
static void note_load(struct kctx *k, struct offsets *o, int64_t ms)
{
	char text[1536];

	snprintf(text, sizeof(text),
	         "offset.storage.topic %s: read %zu records (%zu bytes) from %zu partition%s in "
	         "%lld ms, %zu keys of this skiff's connectors",
	         k->topic, k->read_records, k->read_bytes, k->read_partitions,
	         k->read_partitions == 1 ? "" : "s", (long long)ms, k->n);
	offsets_load_note(o, false, text);
	if (k->nwarned == 0)
		return;
	snprintf(text, sizeof(text), "%s%s", k->warned, k->nwarned > 1 ? " (and more)" : "");
	offsets_load_note(o, true, text);
}

static int kafka_load(void *vctx, struct offsets *o, uint64_t *generation, int *from_prev,
                      char *errbuf, size_t errlen)
{
	struct kctx *k = vctx;
	uint64_t fgen = 0, maxgen = 0;
	bool restored = false;
	char ferr[1024] = "";
	int64_t t0 = clock_mono_ms();
	int rc;

	k->o = o;
	*from_prev = 0;
	if (k->fops != NULL) {
		rc = k->fops->load(k->fctx, o, &fgen, from_prev, ferr, sizeof(ferr));
		if (rc != 0) {
			snprintf(errbuf, errlen, "%s", ferr);
			return rc;
		}
	}
	rc = from_ktopic(
	    ktopic_ensure(k->rk, k->w, &k->spec, k->timeout_ms, k->create, errbuf, errlen));
	/* Exactly-once: no instance may commit after the read (else what it
	 * committed would be read again). */
	if (rc == 0 && k->fence != NULL)
		rc = k->fence(k->fence_arg, errbuf, errlen);
	if (rc == 0)
		rc = read_topic(k, errbuf, errlen);
	/* Exactly-once: the file may lag the committed transactions. */
	if (rc == OFFSETS_ERR_IO && fgen > 0 && settings_worker(k->w)->eos != SETTINGS_EOS_ENABLED)
		return file_only(k, fgen, generation, from_prev, errbuf, errlen);
	if (rc == 0)
		rc = merge(k, o, fgen, &maxgen, &restored, errbuf, errlen);
	if (rc == OFFSETS_ERR_NOMEM || rc == OFFSETS_ERR_FULL)
		snprintf(errbuf, errlen, "offset.storage.topic %s: %s", k->topic,
		         offsets_strerror(rc));
	if (rc != 0)
		return rc;
	note_load(k, o, clock_mono_ms() - t0);
	*generation = fgen > maxgen ? fgen : maxgen;
	/* The topic restored a lost or older file. That file may have counted
	 * generations past the topic's highest (writes that changed nothing the
	 * topic holds, or that the topic never took): go on far above them, so
	 * that an old copy of it put back later never wins over what is
	 * written from now on. */
	if (restored && k->fops != NULL && maxgen + GEN_JUMP > *generation)
		*generation = maxgen + GEN_JUMP;
	if (*from_prev)
		snprintf(errbuf, errlen, "%s", ferr); /* the fallback's warning */
	if (k->fleet.warn[0] != '\0') {
		/* Another device's position taken as this one's: warned as a
		 * fallback is (offsets_loaded_from_prev). */
		snprintf(errbuf, errlen, "%s%s%s", *from_prev ? ferr : "", *from_prev ? "; " : "",
		         k->fleet.warn);
		*from_prev = 1;
	}
	return 0;
}

/* ---- store ------------------------------------------------------------------------ */

/* A record not written: k->why says why. A topic gone (deleted while skiff
 * runs) is not created by the write (allow.auto.create.topics=false: the
 * broker would create it with its default cleanup.policy, delete); the next
 * write creates it again compacted, or refuses one someone else created. */
static void write_failed(struct kctx *k, rd_kafka_resp_err_t err)
{
	bool gone = err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
	            err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
	            err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;

	if (gone)
		k->recheck = true;
	snprintf(k->why, sizeof(k->why), "offset.storage.topic %s: %s%s", k->topic,
	         rd_kafka_err2str(err),
	         gone ? " (the topic was deleted? the next write creates it again, compacted)"
	              : "");
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kctx *k = opaque;

	(void)rk;
	if (m->err != 0 && k->err == 0) {
		k->err = OFFSETS_ERR_IO;
		write_failed(k, m->err);
	}
	if (k->pending > 0 && --k->pending == 0 && k->writing != 0) {
		uint64_t gen = k->writing;

		k->writing = 0;
		if (k->err != 0)
			k->resend = true;
		if (k->o != NULL)
			offsets_write_done(k->o, gen, k->err,
			                   k->err != 0       ? k->why
			                   : k->note[0] != 0 ? k->note
			                                     : NULL);
	}
}

/* Sends one record (value NULL: a tombstone; the value Connect's, the
 * whole in a header: offsets_kvalue.h) and notes it in the map. */
static int send_one(struct kctx *k, const char *key, const char *value, uint64_t gen)
{
	struct offsets_krecord r;
	rd_kafka_resp_err_t err;

	offsets_kvalue_encode(&r, value, gen, k->fleet.device, k->fleet.store);
	err = offsets_kvalue_produce(k->rk, k->topic, key, &r);
	if (err != 0) {
		write_failed(k, err);
		return OFFSETS_ERR_IO;
	}
	k->pending++;
	return remember(k, key, value, gen, k->fleet.device, k->fleet.store);
}

/* Whether key is of a connector this skiff runs: the only keys it writes. */
static bool runs_here(const struct kctx *k, const char *key)
{
	return offsets_fleet_connector(&k->fleet, key, strlen(key)) != NULL;
}

/* Sends what the topic does not hold yet of this skiff's connectors' keys:
 * changed values (with resend: every value), and a tombstone for a key the
 * topic holds but the store no longer does: one a person removed (`skiff
 * offsets reset`, REST DELETE, also while skiff was stopped). The map holds
 * no other keys (apply): a device never writes a record of another
 * writer's key, the file's offsets of connectors it no longer runs
 * included. */
static int send_changes(struct kctx *k, const struct offsets *o, uint64_t gen)
{
	int rc = 0;

	for (size_t i = 0; i < offsets_count(o) && rc == 0; i++) {
		const char *key = offsets_key(o, i), *v = offsets_value(o, i);
		const struct rec *r = find(k, key);

		if ((k->resend || r == NULL || r->value == NULL || strcmp(r->value, v) != 0) &&
		    runs_here(k, key))
			rc = send_one(k, key, v, gen);
	}
	for (size_t i = 0; i < k->n && rc == 0; i++) {
		const struct rec *r = &k->recs[i];

		if ((r->value != NULL || k->resend) && offsets_get(o, r->key) == NULL &&
		    runs_here(k, r->key))
			rc = send_one(k, r->key, NULL, gen);
	}
	return rc;
}

static int kafka_store(void *vctx, const struct offsets *o, uint64_t gen, char *errbuf,
                       size_t errlen)
{
	struct kctx *k = vctx;
	int rc;

	if (k->fops != NULL && (rc = k->fops->store(k->fctx, o, gen, errbuf, errlen)) != 0)
		return rc;
	/* The file's note (written whole again) goes with the completion. */
	snprintf(k->note, sizeof(k->note), "%s", k->fops != NULL ? errbuf : "");
	/* Blocks the loop for one admin request, only after a write found the
	 * topic gone. Then every key is sent again (resend). */
	if (k->recheck) {
		rc = from_ktopic(
		    ktopic_ensure(k->rk, k->w, &k->spec, k->timeout_ms, true, errbuf, errlen));
		if (rc != 0)
			return rc;
		k->recheck = false;
	}
	k->pending = 0;
	k->err = 0;
	rc = send_changes(k, o, gen);
	if (rc != 0)
		k->resend = true;
	if (k->pending == 0) {
		if (rc == 0)
			k->resend = false;
		snprintf(errbuf, errlen, "%s", rc == 0 ? k->note : k->why);
		return rc;
	}
	k->resend = false;
	k->err = rc;
	k->writing = gen;
	return OFFSETS_INPROGRESS;
}

static bool kafka_moved(void *vctx)
{
	struct kctx *k = vctx;

	return k->fops != NULL && k->fops->moved(k->fctx);
}

/* The topic holds key = value now (an exactly-once transaction's record,
 * without skiff.store): a write sends it only when it changes again. Out of
 * memory leaves the map as it was: the write sends it once more. */
static void kafka_written(void *vctx, const char *key, const char *value, uint64_t gen,
                          const char *device)
{
	(void)remember(vctx, key, value, gen, device, NULL);
}

/* A connector a reload added: its keys were not read at load (only those
 * of the connectors running then were). Reads the topic again for its keys
 * alone and merges them as load does, with the file's generation now the
 * store's (this store's own records are never newer). */
static int kafka_adopt(void *vctx, struct offsets *o, const char *connector, char *errbuf,
                       size_t errlen)
{
	struct kctx *k = vctx;
	struct offsets_stats st;
	uint64_t maxgen = 0;
	bool restored = false;
	int rc;

	offsets_stats(o, &st);
	k->only = connector;
	k->nwarned = 0;
	k->warned[0] = '\0';
	rc = read_topic(k, errbuf, errlen);
	if (rc == 0)
		rc = merge(k, o, k->fops != NULL ? st.generation : 0, &maxgen, &restored, errbuf,
		           errlen);
	k->only = NULL;
	if (rc == 0 && k->nwarned > 0)
		snprintf(errbuf, errlen, "%s", k->warned);
	return rc;
}

static int kafka_fd(void *vctx)
{
	return ((struct kctx *)vctx)->pipefd[0];
}

static void kafka_poll(void *vctx)
{
	struct kctx *k = vctx;
	char buf[64];

	while (read(k->pipefd[0], buf, sizeof(buf)) > 0) {
	}
	rd_kafka_poll(k->rk, 0);
}

static void kafka_close(void *vctx)
{
	struct kctx *k = vctx;

	if (k == NULL)
		return;
	k->o = NULL; /* no completion into a store being destroyed */
	if (k->mainq != NULL)
		rd_kafka_queue_destroy(k->mainq);
	if (k->rk != NULL)
		rd_kafka_destroy(k->rk);
	for (int i = 0; i < 2; i++)
		if (k->pipefd[i] >= 0)
			close(k->pipefd[i]);
	for (size_t i = 0; i < k->n; i++) {
		free(k->recs[i].key);
		free(k->recs[i].value);
		free(k->recs[i].device);
		free(k->recs[i].store);
	}
	free(k->recs);
	hash_free(&k->index);
	if (k->fops != NULL)
		k->fops->close(k->fctx);
	for (int i = 0; i < 2; i++)
		if (k->lockfd[i] >= 0)
			close(k->lockfd[i]);
	free(k);
}

static const struct offset_backend_ops kafka_ops = {
    .name = "kafka",
    .load = kafka_load,
    .store = kafka_store,
    .close = kafka_close,
    .moved = kafka_moved,
    .fd = kafka_fd,
    .poll = kafka_poll,
    .written = kafka_written,
    .adopt = kafka_adopt,
};

/* offsets_kafka.h */
int offsets_open_kafka(const struct settings *s, bool hold, offsets_fence_fn fence, void *arg,
                       struct offsets **out, char *errbuf, size_t errlen)
{
	const struct config_section *w = s->worker;
	const struct worker_conf *wc = settings_worker(w);
	const char *file = wc->offset_file;
	const char *topic = wc->offset_topic;
	int64_t tmo = wc->flush_timeout_ms * 6;
	struct kctx *k;
	int rc = 0;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (k == NULL) {
		snprintf(errbuf, errlen, "offset store: out of memory");
		return OFFSETS_ERR_NOMEM;
	}
	k->w = w;
	k->topic = topic;
	spec_init(&k->spec, w, topic);
	k->create = hold;
	k->fence = fence;
	k->fence_arg = arg;
	k->pipefd[0] = k->pipefd[1] = k->lockfd[0] = k->lockfd[1] = -1;
	k->timeout_ms = tmo < MIN_READ_MS ? MIN_READ_MS : tmo > INT32_MAX ? INT32_MAX : (int)tmo;
	offsets_fleet_init(&k->fleet, s, topic, file, hold);
	k->fleet.fenced = wc->eos == SETTINGS_EOS_ENABLED;
	hash_init(&k->index);
	if (hold && k->fleet.device[0] == '\0') {
		char why[1024];

		/* The records' skiff.device header: the host name would make a fleet
		 * of "raspberrypi" take each other's offsets. */
		device_missing(why, sizeof(why));
		snprintf(errbuf, errlen,
		         "offset.storage.topic %s: its records name the device that wrote them, "
		         "and %s",
		         topic, why);
		rc = OFFSETS_ERR_CONFIG;
	}
	if (rc == 0 && hold)
		rc = from_ktopic(ktopic_lock(w, &k->spec, k->lockfd, errbuf, errlen));
	if (rc == 0 && file != NULL && *file != '\0')
		rc = offsets_file_backend(file, hold, &k->fops, &k->fctx, errbuf, errlen);
	if (rc == 0)
		rc = open_producer(k, errbuf, errlen);
	if (rc != 0) {
		kafka_close(k);
		return rc;
	}
	return offsets_open(&kafka_ops, k, out, errbuf, errlen);
}
