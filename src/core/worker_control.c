/* worker_control: the worker as the REST API sees and steers it (rest.h,
 * worker.h): connector states, pause/resume/stop (through
 * core/connectors.c, which keeps their promise), KIP-875 offsets, health,
 * and the metrics computed at export time. Main loop only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "config/config.h"
#include "core/connectors.h"
#include "core/log.h"
#include "control/metrics.h"
#include "offsets/offsets.h"
#include "offsets/offsets_doc.h"
#include "control/plugins.h"
#include "control/rest.h"
#include "core/sink.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int64_t worker_epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct loop *worker_loop(struct worker *w)
{
	return w->loop;
}

/* ---- metrics --------------------------------------------------------------- */

int worker_control_register(struct worker *w)
{
	static const struct stats_desc d[] = {
	    {"offsets_last_flush", STATS_GAUGE, "when the last offset write completed",
	     STATS_F_EPOCH_MS},
	    {"offsets_last_flush_ok", STATS_GAUGE, "1 when the last offset write succeeded", 0},
	    {"producer_sent", STATS_COUNTER,
	     "bytes written to the brokers' sockets: after compression, framing included "
	     "(librdkafka tx_bytes)",
	     STATS_F_BYTES},
	    {"producer_queue_depth", STATS_GAUGE, "records and requests in the producer queue", 0},
	    {"kafka_brokers", STATS_GAUGE, "brokers of the cluster the producer knows", 0},
	    {"kafka_brokers_up", STATS_GAUGE, "brokers the producer has a connection up to", 0},
	    {"process_resident_memory", STATS_GAUGE, "resident memory of the process",
	     STATS_F_BYTES},
	    {"process_cpu", STATS_COUNTER, "CPU time of the process, user and system", STATS_F_MS},
	};
	uint64_t **cells[] = {commits_cell(w->commits, COMMITS_FLUSH_TIME),
	                      commits_cell(w->commits, COMMITS_FLUSH_OK),
	                      &w->sent_bytes,
	                      &w->queue_depth,
	                      &w->brokers,
	                      &w->brokers_up,
	                      &w->rss,
	                      &w->cpu};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (stats_register(w->stats, &d[i], NULL, cells[i], NULL) != 0)
			return WORKER_ERR_NOMEM;
	return 0;
}

/* ---- a partition's series ------------------------------------------------------
 *
 * A partition counts its records (produced, acked, bytes read, the last
 * acknowledgement) in itself, a few integers, whatever its number. Its
 * series in the registry (the seven skiff_partition_* of /metrics) exist
 * only for the metrics.partition.limit most active partitions, picked
 * again at each export (worker_stats_refresh): those with records in
 * flight first, then by their last acknowledgement, the ones shown already
 * before others of the same rank. A glob of 20,000 files would otherwise
 * be 140,000 series (more than a fleet's Prometheus wants from one device)
 * and 0.25 KB per file that never goes. The connector's own counters
 * (records, losses) are exact whatever is shown. */

enum { S_PRODUCED, S_ACKED, S_READ, S_IN_FLIGHT, S_OLDEST_AGE, S_LAST_ACK, NSERIES };

static const struct stats_desc series_desc[NSERIES] = {
    [S_PRODUCED] = {"partition_records_produced", STATS_COUNTER, "records handed to the producer",
                    0},
    [S_ACKED] = {"partition_records_acked", STATS_COUNTER, "records Kafka acknowledged", 0},
    [S_READ] = {"partition_read", STATS_COUNTER,
                "bytes of the values read (a line without its newline; a row as converted)",
                STATS_F_BYTES},
    [S_IN_FLIGHT] = {"partition_records_in_flight", STATS_GAUGE,
                     "records waiting for Kafka's "
                     "acknowledgement",
                     0},
    [S_OLDEST_AGE] = {"partition_oldest_unacked_age", STATS_GAUGE,
                      "how long the oldest unacknowledged record has waited (since it became "
                      "the oldest)",
                      STATS_F_MS},
    [S_LAST_ACK] = {"partition_last_ack", STATS_GAUGE, "when Kafka last acknowledged a record",
                    STATS_F_EPOCH_MS},
};

struct pseries {
	uint64_t *h[NSERIES];
	/* The backlog gauge, registered when the source first tells it, in
	 * unit backlog_unit; hidden while unknown. */
	uint64_t *backlog;
	enum source_unit backlog_unit;
	bool backlog_put, backlog_hidden;
};

void worker_control_partition(struct partition *p)
{
	(void)p; /* nothing counted yet, nothing shown */
}

/* The labels of p's series: its connector, and the source partition (the
 * second element of its key) copied into *json (free it). Returns 0 or
 * WORKER_ERR_NOMEM. */
static int series_labels(const struct partition *p, struct stats_labels *l, char **json)
{
	const char *part;
	size_t plen;

	*l = (struct stats_labels){.connector = p->conn->cs->name};
	(void)offsets_doc_own_key(p->key, l->connector, &part, &plen);
	if ((*json = strndup(part, plen)) == NULL)
		return WORKER_ERR_NOMEM;
	l->partition = *json;
	return 0;
}

void worker_control_unshow(struct partition *p)
{
	struct stats *st = p->conn->w->stats;

	if (p->series == NULL)
		return;
	for (size_t i = 0; i < NSERIES; i++)
		stats_remove(st, p->series->h[i]);
	stats_remove(st, p->series->backlog);
	free(p->series);
	p->series = NULL;
}

/* Gives p its series. Returns 0 or WORKER_ERR_NOMEM (then not shown). */
static int show(struct partition *p)
{
	struct stats_labels l;
	char *json = NULL;
	int rc = 0;

	if ((p->series = calloc(1, sizeof(*p->series))) == NULL ||
	    series_labels(p, &l, &json) != 0) {
		free(p->series);
		p->series = NULL;
		return WORKER_ERR_NOMEM;
	}
	for (size_t i = 0; i < NSERIES && rc == 0; i++)
		rc = stats_register(p->conn->w->stats, &series_desc[i], &l, &p->series->h[i], NULL);
	free(json);
	if (rc != 0) {
		worker_control_unshow(p);
		return WORKER_ERR_NOMEM;
	}
	return 0;
}

/* True when a is more active than b (see the top of this section). */
static bool busier(const struct partition *a, size_t ia, const struct partition *b, size_t ib)
{
	if ((partition_inflight(a) > 0) != (partition_inflight(b) > 0))
		return partition_inflight(a) > 0;
	if (a->last_ack_ms != b->last_ack_ms)
		return a->last_ack_ms > b->last_ack_ms;
	if ((a->series != NULL) != (b->series != NULL))
		return a->series != NULL;
	return ia < ib;
}

/* A min-heap of partition indexes, the least active at its root. */
static void sift_down(struct worker *w, uint32_t *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, least = i;

		if (l < n && busier(partitions_at(w->parts, heap[least]), heap[least],
		                    partitions_at(w->parts, heap[l]), heap[l]))
			least = l;
		if (l + 1 < n && busier(partitions_at(w->parts, heap[least]), heap[least],
		                        partitions_at(w->parts, heap[l + 1]), heap[l + 1]))
			least = l + 1;
		if (least == i)
			return;
		uint32_t t = heap[i];

		heap[i] = heap[least];
		heap[least] = t;
		i = least;
	}
}

/* Marks the partitions to show (chosen): all when they are no more than
 * the limit, else the limit's most active, kept in a heap of the limit's
 * size (O(n log limit), nothing of the size of n). Returns 0 or
 * WORKER_ERR_NOMEM (then none is chosen anew). */
static int choose(struct worker *w)
{
	size_t k = w->part_limit < partitions_count(w->parts) ? w->part_limit
	                                                      : partitions_count(w->parts),
	       n = 0;
	uint32_t *heap;

	for (size_t i = 0; i < partitions_count(w->parts); i++)
		partitions_at(w->parts, i)->chosen = k == partitions_count(w->parts);
	if (k == partitions_count(w->parts) || k == 0)
		return 0;
	if ((heap = malloc(k * sizeof(*heap))) == NULL)
		return WORKER_ERR_NOMEM;
	for (size_t i = 0; i < partitions_count(w->parts); i++) {
		if (n < k) {
			heap[n++] = (uint32_t)i;
			if (n == k)
				for (size_t j = k / 2; j-- > 0;)
					sift_down(w, heap, k, j);
		} else if (busier(partitions_at(w->parts, i), i, partitions_at(w->parts, heap[0]),
		                  heap[0])) {
			heap[0] = (uint32_t)i;
			sift_down(w, heap, k, 0);
		}
	}
	for (size_t j = 0; j < k; j++)
		partitions_at(w->parts, heap[j])->chosen = true;
	free(heap);
	return 0;
}

/* Shows the chosen partitions, with their values at now; those no longer
 * chosen lose their series first, so that the registry never holds more
 * than the limit's. */
static void refresh_partitions(struct worker *w, int64_t now)
{
	if (choose(w) != 0)
		return; /* the same ones as before, their values as they were */
	for (size_t i = 0; i < partitions_count(w->parts); i++)
		if (!partitions_at(w->parts, i)->chosen)
			worker_control_unshow(partitions_at(w->parts, i));
	for (size_t i = 0; i < partitions_count(w->parts); i++) {
		struct partition *p = partitions_at(w->parts, i);
		uint64_t **h;

		partition_head(p, now);
		if (!p->chosen || (p->series == NULL && show(p) != 0))
			continue;
		h = p->series->h;
		*h[S_PRODUCED] = p->produced;
		*h[S_ACKED] = p->acked;
		*h[S_READ] = p->read_bytes;
		*h[S_IN_FLIGHT] = partition_inflight(p);
		*h[S_OLDEST_AGE] = (uint64_t)partition_waited(p, now);
		*h[S_LAST_ACK] = (uint64_t)p->last_ack_ms;
	}
}

/* Most topics kept per connector for GET .../topics: a RegexRouter or
 * TimestampRouter can name one per day for ever. */
#define MAX_TOPICS 256

/* Notes topic among c's active topics (Connect's, for GET .../topics). */
static void note_topic(struct conn *c, const char *topic)
{
	char **grown, *copy;

	if (c->ntopics > 0 && strcmp(c->topics[c->last_topic], topic) == 0)
		return; /* the usual case: the topic of the record before */
	for (size_t i = 0; i < c->ntopics; i++)
		if (strcmp(c->topics[i], topic) == 0) {
			c->last_topic = i;
			return;
		}
	if (c->ntopics == MAX_TOPICS) {
		return; /* GET .../topics lists the first MAX_TOPICS */
	}
	grown = realloc(c->topics, (c->ntopics + 1) * sizeof(*grown));
	if (grown == NULL)
		return;
	c->topics = grown;
	if ((copy = strdup(topic)) == NULL)
		return;
	c->last_topic = c->ntopics;
	c->topics[c->ntopics++] = copy;
}

void worker_control_produced(const struct record *r, const char *topic, size_t vlen)
{
	struct partition *p = r->part;

	p->produced++;
	p->read_bytes += r->value.kind == VALUE_STRING ? r->value.len : vlen;
	partition_head(p, p->conn->w->turn_ms);
	note_topic(p->conn, topic);
}

void worker_control_forget(struct conn *c)
{
	for (size_t i = 0; i < c->ntopics; i++)
		free(c->topics[i]);
	free(c->topics);
	c->topics = NULL;
	c->ntopics = c->last_topic = 0;
}

/* A reload leaves a removed connector's slot as a tombstone (the loop holds
 * pointers into the array): everything here counts and indexes live ones. */
static size_t live_count(const struct worker *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nconns; i++)
		n += !w->conns[i]->removed;
	return n;
}

/* The i-th live connector; i < live_count(w). */
static struct conn *live(struct worker *w, size_t i)
{
	for (size_t k = 0; k < w->nconns; k++)
		if (!w->conns[k]->removed && i-- == 0)
			return w->conns[k];
	return NULL;
}

static const char *state_name(const struct conn *c)
{
	if (c->restarting)
		return "RESTARTING";
	if (c->stopped)
		return "FAILED";
	switch (c->run) {
	case CONN_PAUSED:
		return "PAUSED";
	case CONN_STOPPING:
		/* Not STOPPED before it is: offsets can be changed only then,
		 * and a script polls the status for it (Connect too shows the
		 * old state until the stop completes). */
		return c->stop_paused ? "PAUSED" : "RUNNING";
	case CONN_STOPPED:
		return "STOPPED";
	case CONN_RUNNING:
		break;
	}
	return "RUNNING";
}

static void refresh_process(struct worker *w)
{
	struct rusage ru;
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) == 2 && rss > 0)
			*w->rss = (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		*w->cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		          (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

static void refresh_backlog(struct worker *w);

void worker_stats_refresh(struct worker *w)
{
	static const struct stats_desc state = {"connector_state", STATS_GAUGE,
	                                        "0 running, 1 paused, 2 stopped, 3 failed", 0};
	int64_t now = loop_now_ms();
	struct sink_stats ss;

	refresh_partitions(w, now);
	for (size_t i = 0; i < live_count(w); i++) {
		struct conn *c = live(w, i);
		struct stats_labels l = {.connector = c->cs->name};
		const char *s = state_name(c);
		uint64_t *h;

		if (stats_register(w->stats, &state, &l, &h, NULL) == 0)
			*h = s[0] == 'R' ? 0 : s[0] == 'P' ? 1 : s[0] == 'S' ? 2 : 3;
	}
	sink_stats(w->sink, &ss);
	*w->sent_bytes = w->sent_before + ss.wire_bytes;
	*w->queue_depth = ss.queue_depth;
	*w->brokers = ss.brokers;
	*w->brokers_up = ss.brokers_up;
	refresh_process(w);
	refresh_backlog(w);
}

/* ---- health ---------------------------------------------------------------- */

int worker_health(struct worker *w, char *msg, size_t len)
{
	int64_t now = loop_now_ms(), oldest = 0;
	const struct partition *op = NULL;

	for (size_t i = 0; i < live_count(w); i++) {
		const struct conn *c = live(w, i);

		if (c->stopped) {
			snprintf(msg, len, "connector %s FAILED: %s", c->cs->name,
			         c->trace ? c->trace : "(no reason kept)");
			return -1;
		}
	}
	if (commits_last(w->commits, NULL) != 0) {
		snprintf(msg, len, "the last offset write failed: %s (the log says more)",
		         offsets_strerror(commits_last(w->commits, NULL)));
		return -1;
	}
	for (size_t i = 0; i < partitions_count(w->parts); i++) {
		struct partition *p = partitions_at(w->parts, i);

		partition_head(p, now);
		if (partition_waited(p, now) > oldest) {
			oldest = partition_waited(p, now);
			op = p;
		}
	}
	if (op != NULL && oldest > w->health_ack_ms) {
		snprintf(msg, len,
		         "a record of %s has waited %lld ms for Kafka's acknowledgement "
		         "(health.ack.timeout.ms=%lld)",
		         op->key, (long long)oldest, (long long)w->health_ack_ms);
		return -1;
	}
	snprintf(msg, len, "%zu connector%s; %d records in flight, the oldest waiting %lld ms",
	         live_count(w), live_count(w) == 1 ? "" : "s", sink_in_flight(w->sink),
	         (long long)oldest);
	return 0;
}

/* ---- pause, resume, stop, restart (core/connectors.c) ------------------------ */

void worker_control_acked(struct partition *p, bool ok)
{
	if (ok) {
		p->acked++;
		p->last_ack_ms = p->conn->w->turn_epoch_ms;
	}
	connector_acked(p);
}

static int control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	struct conn *c = live(ctx, i);
	int rc;

	switch (a) {
	case REST_RESTART:
		connector_restart(c);
		return 0;
	case REST_PAUSE:
		rc = connector_pause(c, errbuf, errlen);
		break;
	case REST_RESUME:
		rc = connector_resume(c, errbuf, errlen);
		break;
	default:
		rc = connector_stop(c, errbuf, errlen);
		break;
	}
	return rc == 0 ? 0 : rc == CONNECTORS_ERR_STATE ? REST_ERR_STATE : REST_ERR;
}

/* ---- offsets (KIP-875) ----------------------------------------------------- */

static int get_offsets(void *ctx, size_t i, char **json)
{
	struct worker *w = ctx;

	return offsets_doc_print(w->offsets, live(w, i)->cs->name, json) == 0 ? 0 : REST_ERR_NOMEM;
}

/* Whether c's source would use entry e (a reset always passes: junk stored
 * earlier must stay removable, as Connect allows), and it lies within the
 * source's data (check_reach: not past a table's newest row or a file's
 * end, not inside a line; no --force here, `skiff offsets set --force` with
 * skiff stopped). *settled: what check_reach would store instead (NULL: e
 * as sent; caller frees). Returns 0, REST_ERR_SOURCE with errbuf (the
 * source's reason, as Connect's connector throws it), or REST_ERR_NOMEM. */
static int check_one(const struct conn *c, const struct offsets_doc_entry *e, char **settled,
                     char *errbuf, size_t errlen)
{
	char why[1024] = "", *part, *off, *key;
	int rc = 0, src = 0;

	*settled = NULL;
	if (e->offset == NULL || c->cs->ops->check_offset == NULL)
		return 0;
	part = cJSON_PrintUnformatted(e->partition);
	off = strndup(e->offset, e->olen);
	key = offsets_doc_key(c->cs->name, e->partition);
	if (part == NULL || off == NULL || key == NULL)
		rc = REST_ERR_NOMEM;
	else if ((src = c->cs->ops->check_offset(c->cs->cfg, part, off, why, sizeof(why))) ==
	         SOURCE_ERR_FOREIGN)
		src = 0; /* stored, as Connect stores it */
	else if (src == 0 && c->cs->ops->check_reach != NULL)
		src =
		    c->cs->ops->check_reach(c->cs->cfg, part, off, offsets_get(c->w->offsets, key),
		                            true, settled, why, sizeof(why));
	if (src != 0) {
		snprintf(errbuf, errlen, "%s", why);
		rc = REST_ERR_SOURCE;
	} else if (rc == 0 && why[0] != '\0') {
		log_info("connector %s: %s", c->cs->name, why);
	}
	free(part);
	free(off);
	free(key);
	return rc;
}

/* Applies one PATCH entry: an offset is stored as sent (or as settled,
 * when not NULL), null removes. */
static int alter_one(struct worker *w, const char *name, const struct offsets_doc_entry *e,
                     const char *settled, char *errbuf, size_t errlen)
{
	char *key = offsets_doc_key(name, e->partition), *val = NULL;
	int rc = REST_ERR_ARG;

	if (e->offset != NULL)
		val = settled != NULL ? strdup(settled) : strndup(e->offset, e->olen);
	if (key == NULL || (e->offset != NULL && val == NULL))
		rc = REST_ERR_NOMEM;
	else if ((val ? offsets_put(w->offsets, key, val) : offsets_remove(w->offsets, key)) == 0)
		rc = 0;
	if (rc == REST_ERR_ARG)
		snprintf(errbuf, errlen,
		         "the offset store refuses %s (too many partitions or too "
		         "large)",
		         key);
	free(key);
	free(val);
	return rc;
}

static void on_written(void *arg, int rc, const char *why)
{
	int *out = arg;

	*out = rc;
}

/* Writes the store now; the file backend completes before returning. */
static int write_now(struct worker *w, char *errbuf, size_t errlen)
{
	int done = 1; /* not completed yet */

	if (offsets_writing(w->offsets) || offsets_write(w->offsets, on_written, &done) != 0) {
		w->next_flush = loop_now_ms(); /* the flush timer writes it */
		return 0;
	}
	if (done < 0) {
		snprintf(errbuf, errlen,
		         "the offsets were changed in memory but could not be "
		         "written: %s",
		         offsets_strerror(done));
		return REST_ERR;
	}
	return 0;
}

static int alter_offsets(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
                         char *errbuf, size_t errlen)
{
	struct worker *w = ctx;
	struct conn *c = live(w, i);
	const char *name = c->cs->name, *part;
	size_t plen;
	int rc = 0;

	if (c->run != CONN_STOPPED || c->stopped) {
		snprintf(errbuf, errlen,
		         "Connectors must be in the STOPPED state before their "
		         "offsets can be modified. This can be done for the specified connector by "
		         "issuing a 'PUT' request to the '/connectors/%s/stop' endpoint",
		         name);
		return REST_ERR_STATE;
	}
	if (e == NULL) {
		/* DELETE: every stored partition of this connector. */
		for (size_t k = offsets_count(w->offsets); k-- > 0 && rc == 0;)
			if (offsets_doc_own_key(offsets_key(w->offsets, k), name, &part, &plen))
				rc = offsets_remove(w->offsets, offsets_key(w->offsets, k));
	} else {
		/* All checked before any is stored: a refused PATCH changes
		 * nothing. */
		char **settled = calloc(n, sizeof(*settled));

		rc = settled != NULL ? 0 : REST_ERR_NOMEM;
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = check_one(c, &e[k], &settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && rc == 0; k++)
			rc = alter_one(w, name, &e[k], settled[k], errbuf, errlen);
		for (size_t k = 0; k < n && settled != NULL; k++)
			free(settled[k]);
		free(settled);
	}
	if (rc == REST_ERR_NOMEM)
		snprintf(errbuf, errlen, "out of memory");
	if (rc != 0)
		return rc == REST_ERR_NOMEM || rc == REST_ERR_SOURCE ? rc : REST_ERR_ARG;
	log_notice("connector %s: offsets %s (REST API)", name, e ? "altered" : "reset");
	return write_now(w, errbuf, errlen);
}

/* ---- backlog --------------------------------------------------------------- */

static const struct stats_desc backlog_desc[] = {
    [SOURCE_UNIT_BYTES] = {"partition_backlog", STATS_GAUGE,
                           "bytes the source knows are still unread (after its read position)",
                           STATS_F_BYTES},
    [SOURCE_UNIT_ROWS] = {"partition_backlog_rows", STATS_GAUGE,
                          "rows the source knows are still unread (after the last one read)", 0},
};

/* Registers p's backlog gauge in unit u, or shows it again; hides the
 * gauge of another unit. Labelled like p's other series. Returns 0 or
 * WORKER_ERR_NOMEM. */
static int backlog_gauge(struct partition *p, enum source_unit u)
{
	struct pseries *ps = p->series;
	struct stats_labels l;
	char *json;
	int rc;

	if (ps->backlog != NULL && ps->backlog_unit != u && !ps->backlog_hidden)
		stats_hide(ps->backlog);
	if (series_labels(p, &l, &json) != 0)
		return WORKER_ERR_NOMEM;
	rc = stats_register(p->conn->w->stats, &backlog_desc[u], &l, &ps->backlog, NULL);
	free(json);
	if (rc != 0) {
		ps->backlog = NULL;
		return WORKER_ERR_NOMEM;
	}
	ps->backlog_unit = u;
	ps->backlog_hidden = false;
	return 0;
}

/* source_ops.backlog's put: into the connector's sum, and p's gauge when
 * p is shown. */
static void put_backlog(void *arg, struct partition *p, enum source_unit u, uint64_t n)
{
	struct pseries *ps;

	(void)arg;
	if (p == NULL || (unsigned)u >= sizeof(backlog_desc) / sizeof(backlog_desc[0]))
		return;
	p->conn->backlog_unit = u;
	p->conn->backlog += n;
	p->conn->backlog_known++;
	if ((ps = p->series) == NULL)
		return;
	if ((ps->backlog == NULL || ps->backlog_hidden || ps->backlog_unit != u) &&
	    backlog_gauge(p, u) != 0)
		return; /* unknown: the registry is out of memory */
	*ps->backlog = n;
	ps->backlog_put = true;
}

/* Asks every open source for its backlog; a partition it did not tell is
 * unknown now and its gauge is hidden (a value of another time would
 * mislead). */
static void refresh_backlog(struct worker *w)
{
	for (size_t i = 0; i < partitions_count(w->parts); i++)
		if (partitions_at(w->parts, i)->series != NULL)
			partitions_at(w->parts, i)->series->backlog_put = false;
	for (size_t i = 0; i < w->nconns; i++) {
		struct conn *c = w->conns[i];

		c->backlog = 0;
		c->backlog_known = 0;
		if (!c->removed && c->ctx != NULL && c->cs->ops->backlog != NULL)
			c->cs->ops->backlog(c->ctx, put_backlog, w);
	}
	for (size_t i = 0; i < partitions_count(w->parts); i++) {
		struct pseries *ps = partitions_at(w->parts, i)->series;

		if (ps != NULL && ps->backlog != NULL && !ps->backlog_put && !ps->backlog_hidden) {
			stats_hide(ps->backlog);
			ps->backlog_hidden = true;
		}
	}
}

int worker_backlog(const struct worker *w, const struct conn *c, enum source_unit *unit,
                   uint64_t *n)
{
	(void)w;
	*unit = c->backlog_unit;
	*n = c->backlog;
	return c->backlog_known;
}

/* ---- the ops table ------------------------------------------------------------ */

static size_t count(void *ctx)
{
	return live_count(ctx);
}

static void connector(void *ctx, size_t i, struct rest_connector *out)
{
	const struct conn *c = live(ctx, i);

	out->name = c->cs->name;
	out->state = state_name(c);
	out->trace = c->stopped ? (c->trace ? c->trace : "") : NULL;
	/* Connect's pairs: a.b.XConnector runs a.b.XTask. */
	snprintf(out->task_class, sizeof(out->task_class), "%s", c->cs->ops->classes[0]);
	for (const char *const *k = c->cs->ops->classes; *k != NULL; k++) {
		size_t n = strlen(*k);

		if (strchr(*k, '.') != NULL && n > 9 && strcmp(*k + n - 9, "Connector") == 0) {
			snprintf(out->task_class, sizeof(out->task_class), "%.*sTask", (int)(n - 9),
			         *k);
			break;
		}
	}
}

static bool config_next(void *ctx, size_t i, size_t *cursor, const char **key, const char **shown)
{
	return config_next_set(live(ctx, i)->cs->cfg, cursor, key, shown);
}

static int health(void *ctx, char *msg, size_t len)
{
	return worker_health(ctx, msg, len);
}

static char *metrics(void *ctx)
{
	struct worker *w = ctx;
	char *text = NULL;
	size_t len;

	worker_stats_refresh(w);
	return metrics_render(w->stats, &text, &len) == 0 ? text : NULL;
}

static char *cluster_id(void *ctx)
{
	return sink_cluster_id(((struct worker *)ctx)->sink);
}

static void topics(void *ctx, size_t i, void (*fn)(void *arg, const char *topic), void *arg)
{
	const struct conn *c = live(ctx, i);

	for (size_t k = 0; k < c->ntopics; k++)
		fn(arg, c->topics[k]);
}

static void reset_topics(void *ctx, size_t i)
{
	worker_control_forget(live(ctx, i));
}

static cJSON *plugins(void *ctx, bool connectors_only)
{
	return plugins_list(connectors_only);
}

static int plugin_config(void *ctx, const char *plugin, cJSON **out)
{
	int rc = plugins_config(plugin, out);

	return rc == 0 ? 0 : rc == PLUGINS_ERR_UNKNOWN ? REST_ERR_NOTFOUND : REST_ERR_NOMEM;
}

static int validate(void *ctx, const char *plugin, const cJSON *config, cJSON **out, char *errbuf,
                    size_t errlen)
{
	struct worker *w = ctx;
	int rc = plugins_validate(w->settings->worker, plugin, config, out, errbuf, errlen);

	return rc == 0                      ? 0
	       : rc == PLUGINS_ERR_UNKNOWN  ? REST_ERR_NOTFOUND
	       : rc == PLUGINS_ERR_MISMATCH ? REST_ERR_ARG
	                                    : REST_ERR_NOMEM;
}

void worker_change_clear(struct worker_change *ch)
{
	free(ch->name);
	cJSON_Delete(ch->config);
	free(ch->initial_state);
	memset(ch, 0, sizeof(*ch));
}

/* A connector created, changed or deleted: taken now, applied as a reload
 * at the end of the turn (worker_reload_change), answered then. */
static int change(void *ctx, const struct rest_change *rc, void *waiter, char *errbuf,
                  size_t errlen)
{
	struct worker *w = ctx;
	struct worker_change *ch = &w->change;

	if (w->live == NULL) {
		snprintf(errbuf, errlen,
		         "this skiff was started without configuration files to "
		         "change");
		return REST_ERR_STATE;
	}
	if (ch->waiter != NULL || w->reloading) {
		snprintf(
		    errbuf, errlen,
		    "Cannot complete request momentarily due to stale configuration (typically "
		    "caused by a concurrent config change)");
		return REST_ERR_STATE;
	}
	ch->op = rc->op;
	ch->name = strdup(rc->name);
	ch->config = rc->config != NULL ? cJSON_Duplicate(rc->config, true) : NULL;
	ch->initial_state = rc->initial_state != NULL ? strdup(rc->initial_state) : NULL;
	if (ch->name == NULL || (rc->config != NULL && ch->config == NULL) ||
	    (rc->initial_state != NULL && ch->initial_state == NULL)) {
		worker_change_clear(ch);
		snprintf(errbuf, errlen, "out of memory");
		return REST_ERR_NOMEM;
	}
	ch->waiter = waiter;
	ch->asked = true;
	return REST_PENDING;
}

/* log4j's names of skiff's levels (log.h's order). */
static const char *const log4j_names[] = {"ERROR", "WARN", "NOTICE", "INFO", "DEBUG"};

static void logger(void *ctx, const char **level, int64_t *modified)
{
	const struct worker *w = ctx;

	*level = log4j_names[log_get_level()];
	*modified = w->logger_modified;
}

static int set_logger(void *ctx, const char *level)
{
	static const struct {
		const char *name;
		enum log_level level;
	} levels[] = {{"OFF", LOG_ERROR},   {"FATAL", LOG_ERROR},   {"ERROR", LOG_ERROR},
	              {"WARN", LOG_WARN},   {"NOTICE", LOG_NOTICE}, {"INFO", LOG_INFO},
	              {"DEBUG", LOG_DEBUG}, {"TRACE", LOG_DEBUG},   {"ALL", LOG_DEBUG}};
	struct worker *w = ctx;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcasecmp(level, levels[i].name) != 0)
			continue;
		log_notice("log level: %s (REST API, PUT /admin/loggers/root: until a reload or "
		           "restart)",
		           log4j_names[levels[i].level]);
		log_set_level(levels[i].level);
		w->logger_modified = worker_epoch_ms();
		return 0;
	}
	return REST_ERR_ARG;
}

const struct rest_ops worker_rest_ops = {
    .count = count,
    .connector = connector,
    .config_next = config_next,
    .control = control,
    .offsets = get_offsets,
    .alter_offsets = alter_offsets,
    .health = health,
    .metrics = metrics,
    .cluster_id = cluster_id,
    .topics = topics,
    .reset_topics = reset_topics,
    .logger = logger,
    .set_logger = set_logger,
    .plugins = plugins,
    .plugin_config = plugin_config,
    .validate = validate,
    .change = change,
};
