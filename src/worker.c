/* worker: the loop, the path of a record, and the offset flush. */
#include "worker.h"

#include "acks.h"
#include "config.h"
#include "convert.h"
#include "log.h"
#include "offsets.h"
#include "settings.h"
#include "sink_kafka.h"
#include "source.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define MAX_PARTITIONS 65536
#define BATCH_RECORDS 1024
#define MAX_POLLFDS 256
#define MAX_COUNTERS 16
/* Offset flushes that may fail in a row before reading pauses: past them, a
 * crash would replay ever more, so duplicates would no longer be bounded. */
#define FLUSH_FAILURES_BEFORE_PAUSE 3

struct partition {
	char *key; /* ["connector",{partition map}] */
	struct conn *conn;
	struct acks_fifo fifo;
};

struct counter {
	const char *name;
	uint64_t value, logged;
};

struct conn {
	struct worker *w;
	const struct connector_settings *cs;
	void *ctx;
	struct source_env env;
	bool stopped;    /* failed for good: no more polls */
	bool config_error; /* ... for a reason no restart fixes (exit 78) */
	bool ready;      /* a descriptor fired, the deadline passed, or it has more */
	int64_t due;     /* monotonic ms when poll() is due anyway; -1 none */
	struct record *records;
	struct source_batch batch;
	size_t next;     /* first record of batch not yet produced */
	struct counter counters[MAX_COUNTERS];
	size_t ncounters;
};

struct worker {
	const struct settings *settings;
	struct offsets *offsets;
	struct sink *sink;
	struct acks *acks;
	struct conn conns[SETTINGS_MAX_CONNECTORS];
	size_t nconns;
	struct partition **parts;
	size_t nparts;
	int64_t flush_interval, flush_timeout, next_flush;
	bool stop;
	bool advanced;   /* an offset moved since the last flush */
	bool queue_full; /* the producer refused a record; wait for a delivery report */
	unsigned failed_flushes; /* in a row */
	uint64_t utf8_replaced;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what the worker offers sources ------------------------------------- */

static char *offset_key(const char *connector, const char *partition_json)
{
	cJSON *arr = cJSON_CreateArray(), *map = cJSON_Parse(partition_json);
	char *key = NULL;

	if (arr != NULL && map != NULL && cJSON_IsObject(map)) {
		cJSON_AddItemToArray(arr, cJSON_CreateString(connector));
		cJSON_AddItemToArray(arr, map);
		map = NULL;
		key = cJSON_PrintUnformatted(arr);
	}
	cJSON_Delete(map);
	cJSON_Delete(arr);
	return key;
}

static struct partition *env_partition(struct source_env *env, const char *partition_json)
{
	struct conn *c = env->opaque;
	struct worker *w = c->w;
	char *key = offset_key(env->connector, partition_json);
	struct partition *p = NULL, **grown;

	if (key == NULL)
		return NULL;
	for (size_t i = 0; i < w->nparts; i++) {
		if (strcmp(w->parts[i]->key, key) == 0) {
			free(key);
			return w->parts[i];
		}
	}
	if (w->nparts == MAX_PARTITIONS || (p = calloc(1, sizeof(*p))) == NULL ||
	    (grown = realloc(w->parts, (w->nparts + 1) * sizeof(*grown))) == NULL) {
		free(p);
		free(key);
		return NULL;
	}
	w->parts = grown;
	p->key = key;
	p->conn = c;
	acks_fifo_init(&p->fifo);
	w->parts[w->nparts++] = p;
	return p;
}

static const char *env_committed(struct source_env *env, struct partition *p)
{
	struct conn *c = env->opaque;

	return offsets_get(c->w->offsets, p->key);
}

static void env_count(struct source_env *env, const char *name, uint64_t n)
{
	struct conn *c = env->opaque;
	struct counter *k = NULL;

	for (size_t i = 0; i < c->ncounters && k == NULL; i++)
		if (strcmp(c->counters[i].name, name) == 0)
			k = &c->counters[i];
	if (k == NULL && c->ncounters < MAX_COUNTERS) {
		k = &c->counters[c->ncounters++];
		k->name = name;
	}
	if (k == NULL)
		return;
	k->value += n;
	if (k->logged == 0) {
		log_warn("connector %s: %s=%llu", env->connector, name, (unsigned long long)k->value);
		k->logged = k->value;
	}
}

__attribute__((format(printf, 3, 4))) static void env_log(struct source_env *env, int level,
							   const char *fmt, ...)
{
	char text[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_msg((enum log_level)level, "connector %s: %s", env->connector, text);
}

/* Logs counters that moved since they were last logged. */
static void log_counters(struct conn *c)
{
	for (size_t i = 0; i < c->ncounters; i++) {
		struct counter *k = &c->counters[i];

		if (k->value != k->logged) {
			log_warn("connector %s: %s=%llu", c->cs->name, k->name,
				 (unsigned long long)k->value);
			k->logged = k->value;
		}
	}
}

/* ---- failure ------------------------------------------------------------- */

/* Stops c for good. Its committed offsets stay short of the failed record:
 * acknowledgements of records before it still advance them. config: no
 * restart can fix the cause (a person must act), which decides the exit code
 * once no connector runs. */
static void conn_fail(struct conn *c, bool config, const char *why)
{
	if (c->stopped)
		return;
	log_error("connector %s stopped: %s. Its offset stays before the record that failed; "
		  "fix the cause and restart skiff to resume from there",
		  c->cs->name, why);
	c->stopped = true;
	c->config_error = config;
	c->batch.n = c->next = 0;
}

static void on_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
	struct worker *w = ctx;
	struct acks_fifo *f = acks_done(w->acks, token, res == SINK_DELIVERED);
	struct partition *p;
	char why[512];

	w->queue_full = false; /* a report frees room in the producer queue */
	if (f == NULL)
		return;
	p = (struct partition *)((char *)f - offsetof(struct partition, fifo));
	if (res == SINK_DELIVERED) {
		w->advanced |= f->advanced;
		return;
	}
	snprintf(why, sizeof(why), "a record of %s could not be delivered: %s", p->key, reason);
	conn_fail(p->conn, res == SINK_REFUSED, why);
}

/* ---- the path of a record ----------------------------------------------- */

/* True while records cannot go to the producer: its queue or the ack slots are full. */
static bool blocked(const struct worker *w)
{
	return w->queue_full || acks_available(w->acks) == 0 ||
	       w->failed_flushes >= FLUSH_FAILURES_BEFORE_PAUSE;
}

/* Converts and produces c's batch from c->next on. Returns when the batch is
 * done, or the producer queue or the ack slots are full. */
static void produce_batch(struct conn *c)
{
	struct worker *w = c->w;
	char errbuf[512];

	while (!c->stopped && c->next < c->batch.n) {
		struct record *r = &c->records[c->next];
		char *key = NULL, *val = NULL;
		size_t klen = 0, vlen = 0;
		void *token;
		int rc;

		if (blocked(w))
			return;
		if (convert_value(&c->cs->key_conv, &r->key, &key, &klen, &w->utf8_replaced) ||
		    convert_value(&c->cs->value_conv, &r->value, &val, &vlen, &w->utf8_replaced)) {
			const struct record_value *v = key ? &r->value : &r->key;
			bool shape = v->kind == VALUE_STRUCT; /* else out of memory */

			free(key);
			snprintf(errbuf, sizeof(errbuf), "%s cannot serialise this record (%s)",
				 convert_class_name(key ? &c->cs->value_conv : &c->cs->key_conv),
				 shape ? "a struct" : "out of memory");
			conn_fail(c, shape, errbuf);
			return;
		}
		token = acks_submit(w->acks, &r->part->fifo, &r->offset);
		rc = sink_produce(w->sink, r->topic, key, klen, val, vlen, r->headers, r->nheaders,
				  r->timestamp_ms, token, errbuf, sizeof(errbuf));
		if (rc == 0) {
			c->next++;
			continue;
		}
		acks_cancel(w->acks, token);
		free(key);
		free(val);
		if (rc == SINK_QUEUE_FULL && sink_in_flight(w->sink) > 0) {
			/* Backpressure: no reading, no spinning, until a delivery report. */
			w->queue_full = true;
			return;
		}
		if (rc == SINK_QUEUE_FULL) {
			/* Nothing queued and still no room: it can never fit. */
			snprintf(errbuf, sizeof(errbuf), "a record of %zu bytes is larger than the "
				 "whole producer queue (producer.queue.buffering.max.kbytes)",
				 klen + vlen);
			conn_fail(c, true, errbuf);
			return;
		}
		conn_fail(c, rc == SINK_ERR_CONFIG, errbuf);
	}
}

/* Polls c's source for a new batch when the last one is done. */
static void poll_source(struct conn *c, int64_t now)
{
	char errbuf[1024];
	uint32_t room = acks_available(c->w->acks);
	int rc;

	if (c->stopped || c->next < c->batch.n || blocked(c->w))
		return;
	c->batch.records = c->records;
	c->batch.max = room < BATCH_RECORDS ? room : BATCH_RECORDS;
	c->batch.n = 0;
	c->next = 0;
	c->ready = false;
	rc = c->cs->ops->poll(c->ctx, &c->batch, now, errbuf, sizeof(errbuf));
	if (rc != 0) {
		conn_fail(c, rc == SOURCE_ERR_CONFIG, errbuf);
		return;
	}
	if (c->batch.more)
		c->ready = true;
	produce_batch(c);
}

/* ---- offsets ------------------------------------------------------------- */

/* Moves every partition's committable offset into the store and writes it
 * when something changed. Returns 0, or -1 when the write failed. */
static int flush_offsets(struct worker *w)
{
	char errbuf[1024];
	struct src_offset off;

	for (size_t i = 0; i < w->nparts; i++) {
		struct partition *p = w->parts[i];
		char *json;

		if (!acks_take(&p->fifo, &off))
			continue;
		json = p->conn->cs->ops->offset_json(p->conn->ctx, &off);
		if (json == NULL || offsets_put(w->offsets, p->key, json) != 0) {
			log_error("offsets: cannot record %s (out of memory or too many partitions)",
				  p->key);
			p->fifo.advanced = true; /* try again next flush */
		}
		free(json);
	}
	w->advanced = false;
	for (size_t i = 0; i < w->nconns; i++)
		log_counters(&w->conns[i]);
	if (!offsets_dirty(w->offsets))
		return 0;
	if (offsets_flush(w->offsets, errbuf, sizeof(errbuf)) != 0) {
		log_error("offsets: %s (the previous offsets stay in place; retrying at the next "
			  "flush)", errbuf);
		return -1;
	}
	log_debug("offsets: flushed");
	return 0;
}

/* Pauses reading while offsets cannot be saved, and resumes when they can. */
static void note_flush(struct worker *w, int rc)
{
	if (rc == 0) {
		if (w->failed_flushes >= FLUSH_FAILURES_BEFORE_PAUSE)
			log_notice("offsets: saved again; reading resumes");
		w->failed_flushes = 0;
		return;
	}
	if (++w->failed_flushes == FLUSH_FAILURES_BEFORE_PAUSE)
		log_warn("offsets: %d flushes in a row failed: reading pauses until offsets can be "
			 "saved, so that a crash cannot replay more than was acknowledged since",
			 FLUSH_FAILURES_BEFORE_PAUSE);
}

/* ---- the loop ------------------------------------------------------------ */

static void read_signals(struct worker *w, int sigfd)
{
	unsigned char sig[16];
	ssize_t n;

	while ((n = read(sigfd, sig, sizeof(sig))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (sig[i] == SIGHUP) {
				log_notice("SIGHUP: reloading is not supported; restart skiff to "
					   "apply configuration changes");
			} else if (!w->stop) {
				log_info("signal %d: stopping", sig[i]);
				w->stop = true;
			}
		}
	}
}

/* Builds the poll set; fills base[i] with the first index of conn i's fds. */
static nfds_t build_pollfds(struct worker *w, int sigfd, struct pollfd *fds, int *base,
			    int *count)
{
	nfds_t n = 0;

	bool wait = blocked(w);

	fds[n++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
	fds[n++] = (struct pollfd){.fd = sink_fd(w->sink), .events = POLLIN};
	for (size_t i = 0; i < w->nconns; i++) {
		struct conn *c = &w->conns[i];

		base[i] = (int)n;
		count[i] = 0;
		/* While blocked a readable source could only wake the loop for
		 * nothing, as often as the file is written: leave it out until a
		 * delivery report or the flush timer unblocks. */
		if (c->stopped || w->stop || wait)
			continue;
		count[i] = c->cs->ops->pollfds(c->ctx, fds + n, MAX_POLLFDS - (int)n);
		n += (nfds_t)count[i];
	}
	return n;
}

static int compute_timeout(struct worker *w, int64_t now)
{
	int64_t t = -1;
	bool wait = blocked(w);

	/* Blocked: no source deadline either (a source with rows buffered asks
	 * for 0); only the sink's descriptor and the flush timer end the wait. */
	for (size_t i = 0; i < w->nconns && !w->stop && !wait; i++) {
		struct conn *c = &w->conns[i];
		int64_t d;

		if (c->stopped)
			continue;
		if (c->ready || c->next < c->batch.n)
			return 0;
		d = c->cs->ops->timeout_ms(c->ctx, now);
		c->due = d >= 0 ? now + d : -1;
		if (d >= 0 && (t < 0 || d < t))
			t = d;
	}
	/* An idle skiff has nothing to flush and sets no flush timer. */
	if (w->advanced || offsets_dirty(w->offsets)) {
		int64_t d = w->next_flush > now ? w->next_flush - now : 0;

		if (t < 0 || d < t)
			t = d;
	}
	return t > 3600000 ? 3600000 : (int)t;
}

static void mark_ready(struct worker *w, const struct pollfd *fds, const int *base,
		       const int *count, int64_t now)
{
	for (size_t i = 0; i < w->nconns; i++) {
		struct conn *c = &w->conns[i];

		for (int j = 0; j < count[i]; j++)
			if (fds[base[i] + j].revents)
				c->ready = true;
		if (c->due >= 0 && now >= c->due)
			c->ready = true;
	}
}

/* 0 while a connector runs; once none does, 78 when each stopped for a
 * reason no restart fixes, else 75. */
static int all_stopped(const struct worker *w)
{
	bool config = true;

	for (size_t i = 0; i < w->nconns; i++) {
		if (!w->conns[i].stopped)
			return 0;
		config &= w->conns[i].config_error;
	}
	return config ? WORKER_EXIT_CONFIG : WORKER_EXIT_TEMPFAIL;
}

/* One turn of the loop. Returns 0 to go on, or an exit code. */
static int turn(struct worker *w, int sigfd)
{
	struct pollfd fds[MAX_POLLFDS];
	int base[SETTINGS_MAX_CONNECTORS], count[SETTINGS_MAX_CONNECTORS];
	char errbuf[512];
	nfds_t n = build_pollfds(w, sigfd, fds, base, count);
	int64_t now = now_ms();
	int code;

	if (poll(fds, n, compute_timeout(w, now)) < 0 && errno != EINTR) {
		log_error("poll: %s", strerror(errno));
		return WORKER_EXIT_TEMPFAIL;
	}
	now = now_ms();
	read_signals(w, sigfd);
	sink_poll(w->sink);
	if (sink_fatal(w->sink, errbuf, sizeof(errbuf)) != 0) {
		log_error("%s", errbuf);
		return WORKER_EXIT_TEMPFAIL;
	}
	mark_ready(w, fds, base, count, now);
	for (size_t i = 0; i < w->nconns && !w->stop; i++) {
		struct conn *c = &w->conns[i];

		produce_batch(c);
		if (c->ready)
			poll_source(c, now);
	}
	if ((w->advanced || offsets_dirty(w->offsets)) && now >= w->next_flush) {
		note_flush(w, flush_offsets(w));
		w->next_flush = now + w->flush_interval;
	}
	code = all_stopped(w);
	if (code != 0)
		log_error("no connector is running");
	return code;
}

/* Waits up to offset.flush.timeout.ms for records in flight, then commits
 * what was acknowledged. */
static int shut_down(struct worker *w, int code)
{
	int64_t deadline = now_ms() + w->flush_timeout;
	int left;

	while ((left = sink_in_flight(w->sink)) > 0 && now_ms() < deadline) {
		struct pollfd pfd = {.fd = sink_fd(w->sink), .events = POLLIN};
		int64_t wait = deadline - now_ms();

		poll(&pfd, 1, wait > 100 ? 100 : (int)wait);
		sink_poll(w->sink);
	}
	if (left > 0)
		log_warn("%d records still unacknowledged after offset.flush.timeout.ms=%lld: they "
			 "will be read again at the next start",
			 left, (long long)w->flush_timeout);
	if (w->utf8_replaced > 0)
		log_notice("converters replaced %llu invalid UTF-8 sequences with U+FFFD (as Connect "
			   "does; ByteArrayConverter passes bytes unchanged)",
			   (unsigned long long)w->utf8_replaced);
	if (flush_offsets(w) != 0 && code == WORKER_EXIT_OK)
		code = WORKER_EXIT_TEMPFAIL;
	return code;
}

int worker_run(struct worker *w, int sigfd)
{
	int code = 0;

	log_info("running %zu connector%s", w->nconns, w->nconns == 1 ? "" : "s");
	while (!w->stop && code == 0)
		code = turn(w, sigfd);
	code = shut_down(w, code);
	log_info("stopped (exit %d)", code);
	return code;
}

/* ---- set-up -------------------------------------------------------------- */

static int open_conn(struct worker *w, const struct connector_settings *cs, char *errbuf,
		     size_t errlen)
{
	struct conn *c = &w->conns[w->nconns];
	char why[1024];

	c->w = w;
	c->cs = cs;
	c->ready = true; /* read what is there at start */
	c->due = -1;
	c->env = (struct source_env){.opaque = c,
				     .connector = cs->name,
				     .partition = env_partition,
				     .committed = env_committed,
				     .count = env_count,
				     .log = env_log};
	c->records = calloc(BATCH_RECORDS, sizeof(*c->records));
	if (c->records == NULL) {
		snprintf(errbuf, errlen, "connector %s: out of memory", cs->name);
		return -1;
	}
	w->nconns++;
	if (cs->ops->open(cs->cfg, &c->env, &c->ctx, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "connector %s: %s", cs->name, why);
		return -1;
	}
	return 0;
}

int worker_new(const struct settings *s, struct offsets *offsets, struct worker **out,
	       char *errbuf, size_t errlen)
{
	struct worker *w = calloc(1, sizeof(*w));
	int code = WORKER_EXIT_CONFIG;

	*out = NULL;
	if (w == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return WORKER_EXIT_TEMPFAIL;
	}
	w->settings = s;
	w->offsets = offsets;
	w->flush_interval = config_int(s->worker, "offset.flush.interval.ms");
	w->flush_timeout = config_int(s->worker, "offset.flush.timeout.ms");
	w->next_flush = now_ms() + w->flush_interval;
	if (sink_open(s->worker, on_delivery, w, &w->sink, errbuf, errlen) != 0)
		goto fail;
	/* As many ack slots as the producer queue holds records: memory for
	 * in-flight records is bounded by construction. */
	w->acks = acks_new(sink_queue_capacity(w->sink));
	if (w->acks == NULL) {
		snprintf(errbuf, errlen, "out of memory for %u in-flight records",
			 sink_queue_capacity(w->sink));
		goto fail;
	}
	for (size_t i = 0; i < s->nconnectors; i++)
		if (open_conn(w, &s->connectors[i], errbuf, errlen) != 0)
			goto fail;
	*out = w;
	return 0;
fail:
	worker_destroy(w);
	return code;
}

void worker_destroy(struct worker *w)
{
	if (w == NULL)
		return;
	/* The sink first: purged deliveries must find the acks and sources alive. */
	sink_destroy(w->sink);
	for (size_t i = 0; i < w->nconns; i++) {
		w->conns[i].cs->ops->close(w->conns[i].ctx);
		free(w->conns[i].records);
	}
	for (size_t i = 0; i < w->nparts; i++) {
		free(w->parts[i]->key);
		free(w->parts[i]);
	}
	free(w->parts);
	acks_destroy(w->acks);
	free(w);
}
