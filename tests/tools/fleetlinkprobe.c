/* fleetlinkprobe: the fleet link (src/kafka/fleetlink.h) against a real
 * broker, in the main loop (core/loop.h) as the fleet will run it, for the
 * end-to-end tests (tests/e2e/test_fleetlink.py).
 *
 *   fleetlinkprobe -w WORKER.properties -d DEVICE -c TOPIC [-c TOPIC...]
 *                  [-s STATUS_TOPIC] [-p PARTITIONS] [-C CONFIG_TOPIC_TO_CREATE]
 *                  [-k KEY=VALUE | -k KEY]... [-n RECORDS] [-W FETCH_WAIT_MS] [-T MS]
 *
 * Opens a link reading the -c topics (creating the -s status topic with -p
 * partitions, and -C, when missing, and checking they are compacted), sends
 * each -k status record (KEY alone: a tombstone), and prints one line per
 * event on standard output:
 *
 *   begin TOPIC END                  (END -1: not known)
 *   record TOPIC OFFSET KEY VALUE    (VALUE "null": a tombstone)
 *   snapshot TOPIC END
 *   sent KEY RC
 *   error WHY
 *
 * Exits 0 once every topic's snapshot ended, RECORDS records came (default:
 * none beyond the snapshots) and every status record was reported; 3 when
 * that did not happen within MS (default 30000); 2 on a usage error or when
 * the link does not open (the reason on standard error). */
#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "core/log.h"
#include "core/loop.h"
#include "kafka/fleetlink.h"
#include "kafka/fleetlink_kafka.h"
#include "util/num.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOPICS 8
#define MAX_SENDS 16

struct probe {
	size_t ntopics, ended;
	int64_t want, records;
	size_t nsends, reported;
	bool done;
	bool refused; /* the link's start refused (FLEETLINK_ERR_CONFIG): exit 2 */
};

static void usage(void)
{
	fprintf(stderr, "usage: fleetlinkprobe -w WORKER.properties -d DEVICE -c TOPIC... "
	                "[-s STATUS_TOPIC] [-p PARTITIONS] [-C CONFIG_TOPIC] [-k KEY[=VALUE]]... "
	                "[-n RECORDS] [-W FETCH_WAIT_MS] [-T MS]\n");
	exit(2);
}

static int64_t number(const char *s, int64_t min, int64_t max)
{
	int64_t v;

	if (num_parse_i64(s, min, max, &v) != 0)
		usage();
	return v;
}

static void check_done(struct probe *p)
{
	p->done = p->ended == p->ntopics && p->records >= p->want && p->reported == p->nsends;
}

static void on_record(void *arg, const struct fleetlink_record *r)
{
	struct probe *p = arg;

	printf("record %s %lld %.*s %.*s\n", r->topic, (long long)r->offset, (int)r->klen,
	       r->key != NULL ? r->key : "", r->value != NULL ? (int)r->vlen : 4,
	       r->value != NULL ? r->value : "null");
	p->records++;
	check_done(p);
}

static void on_begin(void *arg, const char *topic, const char *topic_id, int64_t end)
{
	printf("begin %s %lld\n", topic, (long long)end);
}

static void on_snapshot(void *arg, const char *topic, int64_t end)
{
	struct probe *p = arg;

	printf("snapshot %s %lld\n", topic, (long long)end);
	p->ended++;
	check_done(p);
}

static void on_sent(void *arg, const char *key, int rc, const char *why)
{
	struct probe *p = arg;

	printf("sent %s %d%s%s\n", key, rc, why != NULL ? " " : "", why != NULL ? why : "");
	p->reported++;
	check_done(p);
}

static void on_error(void *arg, int rc, const char *why)
{
	struct probe *p = arg;

	/* A start refused ends the probe as a refused open did. */
	if (rc == FLEETLINK_ERR_CONFIG) {
		fprintf(stderr, "fleetlinkprobe: %s\n", why);
		p->refused = p->done = true;
		return;
	}
	printf("error %s\n", why);
}

/* On stderr: whether the cluster answered the first request in time is
 * not what a test compares. */
static void on_waiting(void *arg, const char *why)
{
	fprintf(stderr, "fleetlinkprobe: %s\n", why);
}

static void readable(struct loop *l, struct loop_fd *w, int fd, int revents, void *arg)
{
	fleetlink_poll(arg);
	fflush(stdout);
}

static void tick(struct loop *l, struct loop_timer *t, void *arg)
{
}

/* The worker section of path, bound as settings_load binds it. */
static struct config_section *worker(const char *path)
{
	static const char *const passthrough[] = {
	    "kafka.", "security.", "sasl.", "ssl.", "status.storage.", "config.storage.", NULL};
	const struct config_key *tables[1];
	struct config_spec spec = {
	    .prefix = "", .tables = tables, .ntables = 1, .passthrough = passthrough};
	struct config_section *s = NULL;
	struct props *p = NULL;
	const char *name;
	size_t size;
	char err[512];

	if (!settings_table(0, &name, &tables[0], &size) ||
	    props_load_file(path, &p, err, sizeof(err)) != 0 ||
	    config_section_load(p, &spec, &s, err, sizeof(err)) != 0 ||
	    config_section_keep(s, tables[0], size) != 0) {
		fprintf(stderr, "fleetlinkprobe: %s: %s\n", path, err);
		exit(2);
	}
	props_destroy(p);
	return s;
}

int main(int argc, char **argv)
{
	const char *topics[MAX_TOPICS], *sends[MAX_SENDS], *wpath = NULL;
	struct fleetlink_conf c = {.status_partitions = 1,
	                           .status_replication = -1,
	                           .config_replication = -1,
	                           .fetch_wait_max_ms = 55000,
	                           .timeout_ms = 10000};
	struct fleetlink_cbs cbs = {on_begin, on_record,  on_snapshot, on_sent,
	                            on_error, on_waiting, NULL};
	struct probe p = {0};
	struct fleetlink *fl = NULL;
	struct loop *l = NULL;
	struct loop_fd *w = NULL;
	struct loop_timer *t = NULL;
	int64_t timeout = 30000, until;
	char err[1024];
	int opt, rc = 3;

	while ((opt = getopt(argc, argv, "w:d:c:s:p:C:k:n:W:T:")) != -1) {
		switch (opt) {
		case 'w':
			wpath = optarg;
			break;
		case 'd':
			c.device = optarg;
			break;
		case 'c':
			if (c.ntopics == MAX_TOPICS)
				usage();
			topics[c.ntopics++] = optarg;
			break;
		case 's':
			c.status_topic = optarg;
			c.create_status = true;
			break;
		case 'p':
			c.status_partitions = (int)number(optarg, 1, 1000);
			break;
		case 'C':
			c.create_config = optarg;
			break;
		case 'k':
			if (p.nsends == MAX_SENDS)
				usage();
			sends[p.nsends++] = optarg;
			break;
		case 'n':
			p.want = number(optarg, 0, 1000000);
			break;
		case 'W':
			c.fetch_wait_max_ms = number(optarg, 0, 300000);
			break;
		case 'T':
			timeout = number(optarg, 1, 600000);
			break;
		default:
			usage();
		}
	}
	if (wpath == NULL || c.device == NULL || c.ntopics == 0)
		usage();
	/* librdkafka's debug lines (kafka.debug=... in the worker file). */
	if (getenv("FLEETLINKPROBE_DEBUG") != NULL)
		log_set_level(LOG_DEBUG);
	c.worker = worker(wpath);
	c.topics = topics;
	p.ntopics = c.ntopics;
	if (fleetlink_open(&fleetlink_kafka_ops, &c, &cbs, &p, &fl, err, sizeof(err)) != 0) {
		fprintf(stderr, "fleetlinkprobe: %s\n", err);
		config_section_destroy((struct config_section *)c.worker);
		return 2;
	}
	for (size_t i = 0; i < p.nsends; i++) {
		char key[256];
		const char *eq = strchr(sends[i], '=');

		snprintf(key, sizeof(key), "%.*s", eq != NULL ? (int)(eq - sends[i]) : 255,
		         sends[i]);
		if (fleetlink_send(fl, key, eq != NULL ? eq + 1 : NULL,
		                   eq != NULL ? strlen(eq + 1) : 0, err, sizeof(err)) != 0) {
			printf("sent %s %d %s\n", key, -1, err);
			p.reported++;
		}
	}
	if (loop_new(&l) != 0 || loop_fd_add(l, fleetlink_fd(fl), POLLIN, readable, fl, &w) != 0) {
		fprintf(stderr, "fleetlinkprobe: out of memory\n");
		rc = 2;
		goto out;
	}
	/* A tick, so that the deadline is seen with nothing coming. */
	if (loop_timer_add(l, loop_now_ms() + 200, 200, tick, NULL, &t) != 0) {
		fprintf(stderr, "fleetlinkprobe: out of memory\n");
		rc = 2;
		goto out;
	}
	until = loop_now_ms() + timeout;
	while (!p.done && loop_now_ms() < until)
		if (loop_once(l, err, sizeof(err)) != 0)
			break;
	rc = p.refused ? 2 : p.done ? 0 : 3;
out:
	fflush(stdout);
	loop_destroy(l);
	fleetlink_destroy(fl);
	config_section_destroy((struct config_section *)c.worker);
	return rc;
}
