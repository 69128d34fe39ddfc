/* fleet_cli: `skiff fleet` (see fleet_cli.h). */
#include "cli/fleet_cli.h"

#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "fleet/connect_records.h"
#include "fleet/fleet_heartbeat.h"
#include "fleet/fleetconf.h"
#include "fleet/fleetstate.h"
#include "fleet/fleetview.h"
#include "kafka/kconf.h"
#include "kafka/ktopic.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/num.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#define EXIT_OK 0
#define EXIT_REFUSED 1
#define EXIT_TEMPFAIL 75
#define EXIT_CONFIG 78

/* The operator's reader's group.id: never joined nor committed (librdkafka's
 * assign wants one); its grant is printed by provision --operator. */
#define OPERATOR_GROUP "skiff-fleet-operator"

/* Design §2.4: a device offline for a week reads its compacted topic plus
 * at most an hour's tail; tombstones outlive a month offline. */
#define SEGMENT_MS "3600000"
#define DELETE_RETENTION_MS "2592000000"

/* The topics' configs at provisioning unless --command-config sets them
 * (config.storage.X, status.storage.X, as a worker file's). */
static const char *const topic_defaults[] = {
    "config.storage.segment.ms",
    SEGMENT_MS,
    "config.storage.delete.retention.ms",
    DELETE_RETENTION_MS,
    "status.storage.segment.ms",
    SEGMENT_MS,
    "status.storage.delete.retention.ms",
    DELETE_RETENTION_MS,
    NULL,
};

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: skiff fleet status --bootstrap HOST:PORT [--command-config FILE]\n"
	    "                          [--device ID | --group G] [--json]\n"
	    "       skiff fleet config NAME (--device ID | --group G)\n"
	    "                          (FILE.properties | - | --set KEY=VALUE ...) [--wait S]\n"
	    "       skiff fleet pause|resume|stop NAME (--device ID | --group G) [--wait S]\n"
	    "       skiff fleet restart NAME (--device ID | --group G) [--include-tasks]\n"
	    "                          [--only-failed] [--wait S]\n"
	    "       skiff fleet remove NAME (--device ID | --group G) [--wait S]\n"
	    "       skiff fleet provision --device ID [--group G ...] [--replication-factor N]\n"
	    "                          [--bootstrap HOST:PORT] [--principal User:NAME]\n"
	    "                          [--operator User:NAME]\n"
	    "       skiff fleet provision --operator User:NAME [--bootstrap HOST:PORT]\n"
	    "\n"
	    "A fleet of skiffs steered through Kafka topics: each device reads Kafka\n"
	    "Connect's configuration records from its config topic (and its groups') and\n"
	    "writes Connect's status records and its heartbeat to its status topic.\n"
	    "\n"
	    "  --bootstrap HOST:PORT   the cluster (every command but provision's printing)\n"
	    "  --command-config FILE   client properties, as Kafka's tools take them:\n"
	    "                          security.protocol, sasl.*, ssl.*\n"
	    "  --wait S                wait up to S seconds for the devices' answers:\n"
	    "                          applied, refused: why, or no answer (last seen ...)\n"
	    "  --status-topic T        status.storage.topic (default skiff.status.{device})\n"
	    "  --config-topic T        config.storage.topic (default skiff.config.{device})\n"
	    "  --group-topic T         fleet.group.topic (default skiff.config.group.{group})\n"
	    "  --timeout S             for reading and writing (default 30)\n"
	    "\n"
	    "provision creates the device's topics (compacted; with --bootstrap) and prints\n"
	    "the kafka-acls.sh lines that let the device read only its configuration and\n"
	    "write only its status (LITERAL patterns: a PREFIXED skiff.config.gw-1 would\n"
	    "match skiff.config.gw-10 too); with --operator, the operator's grants\n"
	    "(PREFIXED: every device's configuration written, every status read).\n"
	    "Exit codes: 0 done, every device applied; 1 some refused; 75 some did not\n"
	    "answer, or the cluster was not reached; 78 usage or configuration.\n");
}

/* ---- arguments --------------------------------------------------------------- */

static const struct {
	const char *word;
	enum fleet_cmd cmd;
} commands[] = {
    {"status", FLEET_CMD_STATUS}, {"config", FLEET_CMD_CONFIG},
    {"pause", FLEET_CMD_PAUSE},   {"resume", FLEET_CMD_RESUME},
    {"stop", FLEET_CMD_STOP},     {"restart", FLEET_CMD_RESTART},
    {"remove", FLEET_CMD_REMOVE}, {"provision", FLEET_CMD_PROVISION},
};

/* The value of option opt: "--opt=v" or "--opt v". Returns it, or NULL
 * when argv[*i] is not opt; *err on a missing value. */
static const char *optval(int argc, char **argv, int *i, const char *opt, bool *err)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*err = true;
		return NULL;
	}
	return argv[++*i];
}

static int seconds(const char *opt, const char *v, int64_t *ms, char *errbuf, size_t errlen)
{
	int64_t s;

	if (num_parse_i64(v, 0, 86400, &s) != 0) {
		snprintf(errbuf, errlen, "%s %s: give whole seconds, 0 to 86400", opt, v);
		return -1;
	}
	*ms = s * 1000;
	return 0;
}

static int name_ok(const char *what, const char *name, char *errbuf, size_t errlen)
{
	if (fleetconf_name_check(name) == FLEETCONF_OK)
		return 0;
	snprintf(errbuf, errlen,
	         "%s \"%s\": a name of 1 to %d letters, digits and '-' (it is part of a topic's "
	         "name)",
	         what, name, FLEETCONF_NAME_MAX);
	return -1;
}

static int check_args(struct fleet_args *a, char *errbuf, size_t errlen)
{
	bool writes = a->cmd != FLEET_CMD_STATUS && a->cmd != FLEET_CMD_PROVISION;

	if (writes && a->name == NULL) {
		snprintf(errbuf, errlen, "give the connector's NAME");
		return -1;
	}
	if (a->device != NULL && a->group != NULL) {
		snprintf(errbuf, errlen, "give --device or --group, not both");
		return -1;
	}
	if (writes && a->device == NULL && a->group == NULL) {
		snprintf(errbuf, errlen,
		         "give --device ID or --group G: which devices to configure");
		return -1;
	}
	if (a->cmd == FLEET_CMD_PROVISION && a->device == NULL && a->operator_principal == NULL) {
		snprintf(errbuf, errlen, "provision: give --device ID, or --operator User:NAME");
		return -1;
	}
	if (a->cmd == FLEET_CMD_PROVISION && a->device == NULL && a->ngroups > 0) {
		snprintf(errbuf, errlen, "provision: --group is a device's: give --device ID");
		return -1;
	}
	if (a->cmd != FLEET_CMD_PROVISION && a->bootstrap == NULL) {
		snprintf(errbuf, errlen, "give --bootstrap HOST:PORT");
		return -1;
	}
	if (a->cmd == FLEET_CMD_CONFIG && (a->file == NULL) == (a->nsets == 0)) {
		snprintf(errbuf, errlen,
		         "config: give the connector's FILE.properties (or - for stdin), or "
		         "--set KEY=VALUE ..., not both");
		return -1;
	}
	if (a->cmd != FLEET_CMD_CONFIG && (a->file != NULL || a->nsets > 0)) {
		snprintf(errbuf, errlen, "a file or --set is for config only");
		return -1;
	}
	if ((a->device != NULL && name_ok("device", a->device, errbuf, errlen) != 0) ||
	    (a->group != NULL && name_ok("group", a->group, errbuf, errlen) != 0))
		return -1;
	for (size_t i = 0; i < a->ngroups; i++)
		if (name_ok("group", a->groups[i], errbuf, errlen) != 0)
			return -1;
	if (strstr(a->status_topic, "{device}") == NULL) {
		snprintf(errbuf, errlen, "--status-topic %s: must hold {device}", a->status_topic);
		return -1;
	}
	if (strstr(a->group_topic, "{group}") == NULL) {
		snprintf(errbuf, errlen, "--group-topic %s: must hold {group}", a->group_topic);
		return -1;
	}
	/* The operator's grants are PREFIXED on what comes before the name. */
	if (a->operator_principal != NULL && (strstr(a->config_topic, "{device}") == NULL ||
	                                      strncmp(a->config_topic, "{device}", 8) == 0 ||
	                                      strncmp(a->status_topic, "{device}", 8) == 0 ||
	                                      strncmp(a->group_topic, "{group}", 7) == 0)) {
		snprintf(errbuf, errlen,
		         "--operator: the topic templates (%s, %s, %s) must each hold their "
		         "{device} or {group} after a fixed part, the prefix the operator's grants "
		         "name",
		         a->config_topic, a->status_topic, a->group_topic);
		return -1;
	}
	return 0;
}

int fleet_args_parse(int argc, char **argv, struct fleet_args *a, char *errbuf, size_t errlen)
{
	size_t c;
	int i = 1;

	memset(a, 0, sizeof(*a));
	a->status_topic = "skiff.status.{device}";
	a->config_topic = "skiff.config.{device}";
	a->group_topic = "skiff.config.group.{group}";
	a->wait_ms = -1;
	a->timeout_ms = 30000;
	a->replication_factor = -1;
	a->status_partitions = 1;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return argc < 2 ? (snprintf(errbuf, errlen, "give a command"), -1) : 1;
	for (c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (strcmp(argv[1], commands[c].word) == 0)
			break;
	if (c == sizeof(commands) / sizeof(commands[0])) {
		snprintf(errbuf, errlen, "unknown command \"%s\"", argv[1]);
		return -1;
	}
	a->cmd = commands[c].cmd;
	for (i = 2; i < argc; i++) {
		bool err = false;
		const char *v;
		int64_t n;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
		if (strcmp(argv[i], "--json") == 0) {
			a->json = true;
		} else if (strcmp(argv[i], "--include-tasks") == 0) {
			a->include_tasks = true;
		} else if (strcmp(argv[i], "--only-failed") == 0) {
			a->only_failed = true;
		} else if ((v = optval(argc, argv, &i, "--bootstrap", &err)) != NULL) {
			a->bootstrap = v;
		} else if ((v = optval(argc, argv, &i, "--command-config", &err)) != NULL) {
			a->command_config = v;
		} else if ((v = optval(argc, argv, &i, "--device", &err)) != NULL) {
			a->device = v;
		} else if ((v = optval(argc, argv, &i, "--group", &err)) != NULL) {
			if (a->cmd == FLEET_CMD_PROVISION) {
				if (a->ngroups == FLEET_CLI_GROUPS_MAX) {
					snprintf(errbuf, errlen, "at most %d groups",
					         FLEET_CLI_GROUPS_MAX);
					return -1;
				}
				a->groups[a->ngroups++] = v;
			} else if (a->group != NULL) {
				snprintf(errbuf, errlen, "--group: one group at a time");
				return -1;
			} else {
				a->group = v;
			}
		} else if ((v = optval(argc, argv, &i, "--set", &err)) != NULL) {
			if (strchr(v, '=') == NULL || v[0] == '=') {
				snprintf(errbuf, errlen, "--set %s: give KEY=VALUE", v);
				return -1;
			}
			if (a->nsets == FLEET_CLI_SETS_MAX) {
				snprintf(errbuf, errlen, "at most %d --set", FLEET_CLI_SETS_MAX);
				return -1;
			}
			a->sets[a->nsets++] = v;
		} else if ((v = optval(argc, argv, &i, "--wait", &err)) != NULL) {
			if (seconds("--wait", v, &a->wait_ms, errbuf, errlen) != 0)
				return -1;
		} else if ((v = optval(argc, argv, &i, "--timeout", &err)) != NULL) {
			if (seconds("--timeout", v, &a->timeout_ms, errbuf, errlen) != 0 ||
			    a->timeout_ms == 0) {
				snprintf(errbuf, errlen, "--timeout %s: give 1 to 86400 seconds",
				         v);
				return -1;
			}
		} else if ((v = optval(argc, argv, &i, "--status-topic", &err)) != NULL) {
			a->status_topic = v;
		} else if ((v = optval(argc, argv, &i, "--config-topic", &err)) != NULL) {
			a->config_topic = v;
		} else if ((v = optval(argc, argv, &i, "--group-topic", &err)) != NULL) {
			a->group_topic = v;
		} else if ((v = optval(argc, argv, &i, "--principal", &err)) != NULL) {
			a->principal = v;
		} else if ((v = optval(argc, argv, &i, "--operator", &err)) != NULL) {
			a->operator_principal = v;
		} else if ((v = optval(argc, argv, &i, "--replication-factor", &err)) != NULL) {
			if (num_parse_i64(v, -1, 32767, &n) != 0 || n == 0) {
				snprintf(
				    errbuf, errlen,
				    "--replication-factor %s: give -1 (the broker's default) or "
				    "1 to 32767",
				    v);
				return -1;
			}
			a->replication_factor = (int)n;
		} else if ((v = optval(argc, argv, &i, "--status-partitions", &err)) != NULL) {
			if (num_parse_i64(v, 1, 32767, &n) != 0) {
				snprintf(errbuf, errlen, "--status-partitions %s: give 1 to 32767",
				         v);
				return -1;
			}
			a->status_partitions = (int)n;
		} else if (err) {
			snprintf(errbuf, errlen, "%s: give its value", argv[i]);
			return -1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			snprintf(errbuf, errlen, "unknown option %s", argv[i]);
			return -1;
		} else if (a->name == NULL && a->cmd != FLEET_CMD_STATUS &&
		           a->cmd != FLEET_CMD_PROVISION) {
			a->name = argv[i];
		} else if (a->cmd == FLEET_CMD_CONFIG && a->file == NULL) {
			a->file = argv[i];
		} else {
			snprintf(errbuf, errlen, "unexpected argument \"%s\"", argv[i]);
			return -1;
		}
		if (err) {
			snprintf(errbuf, errlen, "%s: give its value", argv[i]);
			return -1;
		}
	}
	return check_args(a, errbuf, errlen);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

/* ---- the clients ------------------------------------------------------------- */

struct fleet {
	const struct fleet_args *a;
	struct config_section *w; /* the client keys */
	rd_kafka_t *producer, *consumer;
	const rd_kafka_metadata_t *md; /* every topic's */
};

/* A client of type into f. A consumer to_end reads a window of status
 * topics to their end: it learns that a partition reached its end from a
 * fetch that brings nothing, which the broker holds fetch.wait.max.ms (500
 * by default: each window's half a second); the one that waits for answers
 * keeps the default, not to fetch a hundred times a second while it waits. */
static int open_client(struct fleet *f, rd_kafka_type_t type, bool to_end, char *errbuf,
                       size_t errlen)
{
	rd_kafka_conf_t *conf = kconf_worker(f->w, "skiff-fleet", errbuf, errlen);
	char tmo[32];
	int kc;

	if (conf == NULL)
		return EXIT_CONFIG;
	snprintf(tmo, sizeof(tmo), "%" PRId64, f->a->timeout_ms);
	if (type == RD_KAFKA_PRODUCER &&
	    (kconf_set(conf, "acks", "all", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "enable.idempotence", "true", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "linger.ms", "0", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "message.timeout.ms", tmo, "defaults", errbuf, errlen) != 0))
		goto fail;
	/* A group.id only because librdkafka's assign wants one: the reader
	 * never joins the group nor commits. Its prefetch is bounded whatever
	 * the fleet's size (librdkafka's defaults: 64 MiB or 100,000 records
	 * queued, 50 MiB a fetch), so that memory stays the view's: a device's
	 * status topic is a few KiB. */
	if (type == RD_KAFKA_CONSUMER &&
	    (kconf_set(conf, "group.id", OPERATOR_GROUP, "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "fetch.max.bytes", "1048576", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "max.partition.fetch.bytes", "65536", "defaults", errbuf, errlen) !=
	         0 ||
	     kconf_set(conf, "queued.max.messages.kbytes", "4096", "defaults", errbuf, errlen) !=
	         0 ||
	     kconf_set(conf, "queued.min.messages", "10000", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "enable.auto.commit", "false", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "enable.partition.eof", "true", "defaults", errbuf, errlen) != 0 ||
	     kconf_set(conf, "allow.auto.create.topics", "false", "defaults", errbuf, errlen) != 0))
		goto fail;
	if (type == RD_KAFKA_CONSUMER &&
	    kconf_set(conf, "auto.offset.reset", "earliest", "defaults", errbuf, errlen) != 0)
		goto fail;
	if (type == RD_KAFKA_CONSUMER && to_end &&
	    kconf_set(conf, "fetch.wait.max.ms", "10", "defaults", errbuf, errlen) != 0)
		goto fail;
	if (type == RD_KAFKA_PRODUCER)
		rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	kc = kconf_new(type, conf, type == RD_KAFKA_PRODUCER ? &f->producer : &f->consumer, errbuf,
	               errlen);
	if (kc != KCONF_OK) {
		rd_kafka_conf_destroy(conf);
		return kc == KCONF_ERR_NOMEM ? EXIT_TEMPFAIL : EXIT_CONFIG;
	}
	return EXIT_OK;
fail:
	rd_kafka_conf_destroy(conf);
	return EXIT_CONFIG;
}

/* Every topic's metadata into f->md (the status topics are found by name). */
static int list_topics(struct fleet *f, rd_kafka_t *rk, char *errbuf, size_t errlen)
{
	rd_kafka_resp_err_t err;

	if (f->md != NULL) {
		rd_kafka_metadata_destroy(f->md);
		f->md = NULL;
	}
	err = rd_kafka_metadata(rk, 1, NULL, &f->md, (int)f->a->timeout_ms);
	if (err != 0) {
		snprintf(errbuf, errlen, "%s: no answer listing the topics: %s", f->a->bootstrap,
		         rd_kafka_err2str(err));
		return EXIT_TEMPFAIL;
	}
	return EXIT_OK;
}

static const rd_kafka_metadata_topic_t *topic_md(const struct fleet *f, const char *topic)
{
	for (int i = 0; f->md != NULL && i < f->md->topic_cnt; i++)
		if (strcmp(f->md->topics[i].topic, topic) == 0 && f->md->topics[i].err == 0)
			return &f->md->topics[i];
	return NULL;
}

/* ---- reading status topics ---------------------------------------------------- */

/* One partition being read to its end. */
struct part {
	const char *topic; /* f->md's */
	int32_t partition;
	int64_t high; /* -1: its end was reached */
};

/* Status topics read at once when reading to their end, each window by a
 * consumer of its own. librdkafka (2.0) finds a topic by name in a list of
 * every topic its handle ever knew, for each topic of each fetch response,
 * and walks that list each second: with 10,000 devices' topics in one
 * handle, at once or a window at a time, a read took minutes of CPU
 * (tests/bench/bench_fleet_status.py). */
#define READ_WINDOW 500

struct reading {
	struct part *p;
	size_t n, left;
	/* Reading to the end: partitions [wfrom, next) are assigned, wleft of
	 * them not at their end yet. Waiting (answered): all of them. */
	size_t wfrom, next, wleft;
	struct hash index; /* "topic" -> first part of the topic */
	/* --wait: called after each outcome record; true when all answered. */
	bool (*answered)(void *ctx, const char *device);
	void *ctx;
};

/* Adds the status topics of devices (NULL: every one) to r, to be assigned
 * from their beginning by read_on. */
static int read_setup(struct fleet *f, struct fleetview *v, const char *const *devices, size_t ndev,
                      struct reading *r, char *errbuf, size_t errlen)
{
	char dev[FLEETCONF_NAME_MAX + 1];
	int rc = EXIT_TEMPFAIL;

	memset(r, 0, sizeof(*r));
	hash_init(&r->index);
	for (int t = 0; t < f->md->topic_cnt; t++) {
		const rd_kafka_metadata_topic_t *mt = &f->md->topics[t];
		bool want = devices == NULL;

		if (mt->err != 0 || !fleetview_topic_device(v, mt->topic, dev, sizeof(dev)))
			continue;
		for (size_t i = 0; !want && i < ndev; i++)
			want = strcmp(devices[i], dev) == 0;
		if (!want)
			continue;
		if (fleetview_add_device(v, dev) != 0)
			goto nomem;
		struct part *np = realloc(r->p, (r->n + (size_t)mt->partition_cnt) * sizeof(*np));

		if (np == NULL)
			goto nomem;
		r->p = np;
		if (hash_put(&r->index, mt->topic, r->n) != 0)
			goto nomem;
		for (int p = 0; p < mt->partition_cnt; p++) {
			r->p[r->n + (size_t)p] = (struct part){mt->topic, mt->partitions[p].id, 0};
			r->left++;
		}
		r->n += (size_t)mt->partition_cnt;
	}
	rc = EXIT_OK;
	goto out;
nomem:
	snprintf(errbuf, errlen, "out of memory");
out:
	if (rc != EXIT_OK) {
		hash_free(&r->index);
		free(r->p);
		r->p = NULL;
	}
	return rc;
}

/* Assigns the next window of r's partitions (waiting: all of them) in
 * place of the last. Each partition is read until librdkafka says it
 * reached its end (partition EOF, empty ones too): no ListOffsets round
 * trip per device's topic before reading. Returns EXIT_OK or
 * EXIT_TEMPFAIL (errbuf says why). */
static int assign_next(struct fleet *f, struct reading *r, char *errbuf, size_t errlen)
{
	size_t to =
	    r->answered != NULL || r->n - r->next < READ_WINDOW ? r->n : r->next + READ_WINDOW;
	rd_kafka_topic_partition_list_t *tp =
	    rd_kafka_topic_partition_list_new((int)(to - r->next));
	int rc = EXIT_OK;

	if (r->answered == NULL) { /* each window a new consumer */
		rd_kafka_consumer_close(f->consumer);
		rd_kafka_destroy(f->consumer);
		f->consumer = NULL;
		if ((rc = open_client(f, RD_KAFKA_CONSUMER, true, errbuf, errlen)) != EXIT_OK) {
			rd_kafka_topic_partition_list_destroy(tp);
			return rc;
		}
	}
	r->wfrom = r->next;
	r->wleft = 0;
	for (; r->next < to; r->next++) {
		rd_kafka_topic_partition_list_add(tp, r->p[r->next].topic, r->p[r->next].partition)
		    ->offset = 0;
		r->wleft += r->p[r->next].high >= 0;
	}
	if (rd_kafka_assign(f->consumer, tp) != 0) {
		snprintf(errbuf, errlen, "assigning the status topics failed");
		rc = EXIT_TEMPFAIL;
	}
	rd_kafka_topic_partition_list_destroy(tp);
	return rc;
}

static void read_done(struct fleet *f, struct reading *r)
{
	if (f->consumer != NULL) /* NULL: a new window's failed to open */
		rd_kafka_assign(f->consumer, NULL);
	hash_free(&r->index);
	free(r->p);
}

static struct part *part_of(struct reading *r, const char *topic, int32_t partition)
{
	size_t i;

	if (!hash_get(&r->index, topic, &i))
		return NULL;
	for (; i < r->n && strcmp(r->p[i].topic, topic) == 0; i++)
		if (r->p[i].partition == partition)
			return &r->p[i];
	return NULL;
}

/* Reads until every partition reached its end (r->answered NULL; deadline
 * moves on with each record: only a stall fails), or until r->answered
 * says all answered or deadline (--wait). Returns EXIT_OK, or
 * EXIT_TEMPFAIL (the topics not read to their end: errbuf says so) or
 * EXIT_CONFIG (out of memory). */
static int read_on(struct fleet *f, struct fleetview *v, struct reading *r, int64_t deadline,
                   bool *all_answered, char *errbuf, size_t errlen)
{
	*all_answered = false;
	while (r->answered != NULL || r->left > 0) {
		rd_kafka_message_t *m;
		const char *topic;
		struct part *p;
		const char *oname = NULL;
		size_t onamelen = 0;
		int rc;

		if (r->next < r->n && (r->answered != NULL || r->wleft == 0) &&
		    (rc = assign_next(f, r, errbuf, errlen)) != EXIT_OK)
			return rc;
		if (clock_mono_ms() > deadline) {
			if (r->answered != NULL)
				return EXIT_OK;
			snprintf(errbuf, errlen,
			         "%s: the status topics were not read to their end: nothing "
			         "came for %" PRId64 " s (%zu partitions left)",
			         f->a->bootstrap, f->a->timeout_ms / 1000, r->left);
			return EXIT_TEMPFAIL;
		}
		if ((m = rd_kafka_consumer_poll(f->consumer, 100)) == NULL)
			continue;
		/* Reading to the end: a large fleet over a slow link takes as
		 * long as it takes; only a read that stalls fails. */
		if (r->answered == NULL)
			deadline = clock_mono_ms() + f->a->timeout_ms;
		topic = m->rkt != NULL ? rd_kafka_topic_name(m->rkt) : "";
		p = part_of(r, topic, m->partition);
		if (m->err == 0) {
			if (fleetview_feed(v, topic, m->key, m->key_len, m->payload, m->len) != 0) {
				rd_kafka_message_destroy(m);
				snprintf(errbuf, errlen, "out of memory");
				return EXIT_CONFIG;
			}
			if (r->answered != NULL && m->key != NULL)
				fleet_outcome_key_parse(m->key, m->key_len, &oname, &onamelen);
		} else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (p != NULL && p->high >= 0) {
				p->high = -1;
				r->left--;
				if (p >= r->p + r->wfrom && p < r->p + r->next)
					r->wleft--;
			}
		} else {
			fprintf(stderr, "skiff fleet: %s: %s\n", topic, rd_kafka_message_errstr(m));
		}
		if (oname != NULL) {
			char dev[FLEETCONF_NAME_MAX + 1];

			if (fleetview_topic_device(v, topic, dev, sizeof(dev)) &&
			    r->answered(r->ctx, dev)) {
				rd_kafka_message_destroy(m);
				*all_answered = true;
				return EXIT_OK;
			}
		}
		rd_kafka_message_destroy(m);
	}
	return EXIT_OK;
}

/* ---- status ------------------------------------------------------------------ */

static void no_device(void *ctx, const char *device)
{
	(void)ctx;
	(void)device;
}

static int do_status(struct fleet *f, char *errbuf, size_t errlen)
{
	struct fleetview_filter flt = {.device = f->a->device, .group = f->a->group};
	struct fleetview *v = NULL;
	struct reading r;
	struct buf out;
	bool all;
	int rc;

	if ((rc = fleetview_new(f->a->status_topic, &v)) != 0) {
		snprintf(errbuf, errlen, "%s", fleetview_strerror(rc));
		return EXIT_CONFIG;
	}
	if ((rc = list_topics(f, f->consumer, errbuf, errlen)) != EXIT_OK)
		goto out;
	if ((rc = read_setup(f, v, f->a->device != NULL ? &f->a->device : NULL,
	                     f->a->device != NULL ? 1 : 0, &r, errbuf, errlen)) != EXIT_OK)
		goto out;
	rc = read_on(f, v, &r, clock_mono_ms() + f->a->timeout_ms, &all, errbuf, errlen);
	read_done(f, &r);
	if (rc != EXIT_OK)
		goto out;
	if (f->a->device != NULL && !fleetview_has(v, f->a->device)) {
		char t[FLEETCONF_TOPIC_MAX + 64];

		fleetconf_topic(f->a->status_topic, f->a->device, t, sizeof(t));
		snprintf(errbuf, errlen, "unknown device %s: %s has no topic %s", f->a->device,
		         f->a->bootstrap, t);
		rc = EXIT_CONFIG;
		goto out;
	}
	buf_init(&out, 1 << 30);
	rc = f->a->json ? fleetview_json(v, &flt, clock_wall_ns() / 1000000, &out)
	                : fleetview_table(v, &flt, clock_wall_ns() / 1000000, &out);
	if (rc == 0)
		fwrite(buf_ptr(&out), 1, buf_len(&out), stdout);
	buf_free(&out);
	if (rc != 0) {
		snprintf(errbuf, errlen, "out of memory");
		rc = EXIT_TEMPFAIL;
	}
	if (f->a->group != NULL && fleetview_group(v, f->a->group, no_device, NULL) == 0)
		fprintf(stderr, "skiff fleet: no device's heartbeat lists group %s\n", f->a->group);
	if (!f->a->json && fleetview_skipped(v) > 0)
		fprintf(stderr,
		        "skiff fleet: %" PRIu64 " records of the status topics skipped: "
		        "not of a shape skiff knows\n",
		        fleetview_skipped(v));
out:
	fleetview_destroy(v);
	return rc;
}

/* ---- writing Connect's records ---------------------------------------------- */

struct sent {
	int64_t offset;
	rd_kafka_resp_err_t err;
	bool done;
};

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct sent *s = m->_private;

	(void)rk;
	(void)opaque;
	s->offset = m->offset;
	s->err = m->err;
	s->done = true;
}

/* The connector's properties, in the order given, "name" last when not
 * given (as Connect's REST API stores them). Returns 0 and *out (a cJSON
 * object), or EXIT_CONFIG with errbuf naming the file and line. */
static int properties(const struct fleet_args *a, cJSON **out, char *errbuf, size_t errlen)
{
	struct props *p = NULL;
	cJSON *o = cJSON_CreateObject();
	const char *given;
	int rc = EXIT_CONFIG;

	*out = NULL;
	if (o == NULL)
		goto nomem;
	if (a->file != NULL && strcmp(a->file, "-") == 0) {
		struct buf in;
		char chunk[4096];
		size_t n;

		buf_init(&in, PROPS_MAX_FILE_BYTES);
		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
			buf_add(&in, chunk, n);
		if (buf_err(&in) != 0) {
			snprintf(errbuf, errlen, "stdin: %s", buf_strerror(buf_err(&in)));
			buf_free(&in);
			goto out;
		}
		rc = props_load_mem("stdin", buf_ptr(&in), buf_len(&in), &p, errbuf, errlen);
		buf_free(&in);
		if (rc != 0) {
			rc = EXIT_CONFIG;
			goto out;
		}
	} else if (a->file != NULL) {
		if (props_load_file(a->file, &p, errbuf, errlen) != 0)
			goto out;
	} else {
		if (props_new("--set", &p) != 0)
			goto nomem;
		for (size_t i = 0; i < a->nsets; i++) {
			const char *eq = strchr(a->sets[i], '=');
			char *k = strndup(a->sets[i], (size_t)(eq - a->sets[i]));
			int added = k != NULL ? props_add(p, k, eq + 1, (int)i + 1) : -1;

			free(k);
			if (added != 0)
				goto nomem;
		}
	}
	rc = EXIT_CONFIG;
	if ((given = props_get(p, "name")) != NULL && strcmp(given, a->name) != 0) {
		snprintf(errbuf, errlen, "%s: name=%s, but the connector is %s", props_name(p),
		         given, a->name);
		goto out;
	}
	if (props_get(p, "connector.class") == NULL) {
		snprintf(errbuf, errlen, "%s: no connector.class", props_name(p));
		goto out;
	}
	for (size_t i = 0; i < props_count(p); i++)
		if (cJSON_AddStringToObject(o, props_key(p, i), props_value(p, i)) == NULL)
			goto nomem;
	if (given == NULL && cJSON_AddStringToObject(o, "name", a->name) == NULL)
		goto nomem;
	*out = o;
	o = NULL;
	rc = EXIT_OK;
	goto out;
nomem:
	snprintf(errbuf, errlen, "out of memory");
	rc = EXIT_TEMPFAIL;
out:
	cJSON_Delete(o);
	props_destroy(p);
	return rc;
}

/* One record to write: its key and value (NULL: a tombstone). */
struct rec {
	struct buf key, value;
	bool tombstone;
	struct sent sent;
};

/* The records the command writes, in order (Connect's: remove writes the
 * connector's tombstone, then its target state's). *primary: the one
 * whose offset the devices' outcomes answer. */
static int records(const struct fleet_args *a, struct rec *r, size_t *n, size_t *primary,
                   char *errbuf, size_t errlen)
{
	struct connect_key k = {.name = a->name, .namelen = strlen(a->name)};
	cJSON *props = NULL;
	int rc = 0;

	*n = 1;
	*primary = 0;
	for (size_t i = 0; i < 2; i++) {
		buf_init(&r[i].key, 4096);
		buf_init(&r[i].value, 1 << 20);
		r[i].tombstone = false;
		r[i].sent = (struct sent){-1, 0, false};
	}
	switch (a->cmd) {
	case FLEET_CMD_CONFIG:
		if ((rc = properties(a, &props, errbuf, errlen)) != EXIT_OK)
			return rc;
		k.kind = CONNECT_CONNECTOR;
		rc = connect_config_encode(props, &r[0].value);
		cJSON_Delete(props);
		break;
	case FLEET_CMD_PAUSE:
	case FLEET_CMD_RESUME:
	case FLEET_CMD_STOP:
		k.kind = CONNECT_TARGET_STATE;
		rc = connect_target_encode(a->cmd == FLEET_CMD_PAUSE    ? CONNECT_TARGET_PAUSED
		                           : a->cmd == FLEET_CMD_RESUME ? CONNECT_TARGET_STARTED
		                                                        : CONNECT_TARGET_STOPPED,
		                           &r[0].value);
		break;
	case FLEET_CMD_RESTART:
		k.kind = CONNECT_RESTART;
		rc = connect_restart_encode(a->include_tasks, a->only_failed, &r[0].value);
		break;
	case FLEET_CMD_REMOVE:
		k.kind = CONNECT_CONNECTOR;
		r[0].tombstone = r[1].tombstone = true;
		*n = 2;
		break;
	default:
		return EXIT_CONFIG;
	}
	if (rc == 0)
		rc = connect_key_format(&k, &r[0].key);
	if (rc == 0 && *n == 2) {
		k.kind = CONNECT_TARGET_STATE;
		rc = connect_key_format(&k, &r[1].key);
	}
	if (rc != 0) {
		snprintf(errbuf, errlen, "%s: %s", a->name, connect_records_strerror(rc));
		return rc == CONNECT_RECORDS_ERR_NOMEM ? EXIT_TEMPFAIL : EXIT_CONFIG;
	}
	return EXIT_OK;
}

/* Writes r[0..n-1] to topic's partition 0 (a config topic has one, as
 * Connect requires), in order, and waits for each one's offset (printed
 * after prefix). */
static int write_records(struct fleet *f, const char *topic, struct rec *r, size_t n,
                         const char *prefix, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		rd_kafka_resp_err_t err = rd_kafka_producev(
		    f->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
		    RD_KAFKA_V_KEY(buf_ptr(&r[i].key), buf_len(&r[i].key)),
		    RD_KAFKA_V_VALUE(r[i].tombstone ? NULL
		                                    : (void *)(uintptr_t)buf_ptr(&r[i].value),
		                     r[i].tombstone ? 0 : buf_len(&r[i].value)),
		    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&r[i].sent),
		    RD_KAFKA_V_END);

		if (err != 0) {
			snprintf(errbuf, errlen, "%s: %s", topic, rd_kafka_err2str(err));
			return EXIT_TEMPFAIL;
		}
	}
	rd_kafka_flush(f->producer, (int)f->a->timeout_ms + 5000);
	for (size_t i = 0; i < n; i++) {
		if (!r[i].sent.done || r[i].sent.err != 0) {
			snprintf(errbuf, errlen, "%s: %s not written: %s", topic,
			         buf_cstr(&r[i].key),
			         r[i].sent.done ? rd_kafka_err2str(r[i].sent.err) : "timed out");
			return EXIT_TEMPFAIL;
		}
		printf("%swrote %s%s to %s at offset %" PRId64 "\n", prefix, buf_cstr(&r[i].key),
		       r[i].tombstone ? " (tombstone)" : "", topic, r[i].sent.offset);
	}
	return EXIT_OK;
}

/* A config topic with no record yet gets its marker first: key
 * skiff-topic-id, value a random UUID, the topic's id for devices whose
 * librdkafka gives none (2.0.2). A device that finds another marker, or a
 * topic that ends below the offset it applied up to, knows the topic was
 * recreated and keeps what the old one gave (fleetstate.h). Connect's
 * readers skip a key of no kind they know; compaction keeps it. A topic
 * that already holds records (an older provision, or one created by hand)
 * is left as it is. */
static int write_marker(struct fleet *f, const char *topic, bool created, char *errbuf,
                        size_t errlen)
{
	static const char key[] = FLEETSTATE_MARKER_KEY;
	unsigned char u[16];
	char uuid[37];
	int64_t lo = 0, hi = 0, deadline = clock_mono_ms() + f->a->timeout_ms;
	rd_kafka_resp_err_t err;
	struct rec r;
	int rc;

	/* A topic just made is empty (its partition may not be known to the
	 * client yet). */
	err = created ? RD_KAFKA_RESP_ERR_NO_ERROR
	              : rd_kafka_query_watermark_offsets(f->producer, topic, 0, &lo, &hi,
	                                                 (int)f->a->timeout_ms);
	/* A topic made a moment ago (another device's provision of the same
	 * group): its partition's leader may not be known to the client yet. */
	while ((err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
	        err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
	        err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
	        err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION) &&
	       clock_mono_ms() < deadline) {
		rd_kafka_poll(f->producer, 200);
		err = rd_kafka_query_watermark_offsets(f->producer, topic, 0, &lo, &hi,
		                                       (int)f->a->timeout_ms);
	}
	if (err != 0) {
		snprintf(errbuf, errlen, "%s: the end offset: %s", topic, rd_kafka_err2str(err));
		return EXIT_TEMPFAIL;
	}
	if (hi > 0)
		return EXIT_OK;
	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u)) {
		snprintf(errbuf, errlen, "%s: no random bytes for its marker", topic);
		return EXIT_TEMPFAIL;
	}
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(uuid, sizeof(uuid),
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
	         u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
	         u[15]);
	memset(&r, 0, sizeof(r));
	buf_init(&r.key, 64);
	buf_init(&r.value, 64);
	r.sent = (struct sent){-1, 0, false};
	rc = EXIT_TEMPFAIL;
	if (buf_add(&r.key, key, sizeof(key) - 1) != 0 || buf_addz(&r.value, uuid) != 0)
		snprintf(errbuf, errlen, "out of memory");
	else
		rc = write_records(f, topic, &r, 1, "# ", errbuf, errlen);
	buf_free(&r.key);
	buf_free(&r.value);
	return rc;
}

/* The devices a write is waited for. */
struct targets {
	char **dev;
	size_t n, cap;
	struct fleetview *v;
	const char *name, *topic;
	int64_t offset;
	size_t answered;
	bool *done;
};

static void add_target(void *ctx, const char *device)
{
	struct targets *t = ctx;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **n = realloc(t->dev, cap * sizeof(*n));

		if (n == NULL)
			return; /* counted short: said below */
		t->dev = n;
		t->cap = cap;
	}
	if ((t->dev[t->n] = strdup(device)) != NULL)
		t->n++;
}

static bool answered(void *ctx, const char *device)
{
	struct targets *t = ctx;
	const char *why;

	for (size_t i = 0; i < t->n; i++)
		if (!t->done[i] && strcmp(t->dev[i], device) == 0 &&
		    fleetview_answer(t->v, device, t->name, t->topic, t->offset, &why) !=
		        FLEETVIEW_NO_ANSWER) {
			t->done[i] = true;
			t->answered++;
		}
	return t->answered == t->n;
}

/* Reads the targets' status topics for their answers; prints one line per
 * device; returns the exit code. */
static int wait_answers(struct fleet *f, struct targets *t, char *errbuf, size_t errlen)
{
	struct reading r;
	bool all;
	int rc, code = EXIT_OK;
	int64_t now;

	if ((rc = fleetview_new(f->a->status_topic, &t->v)) != 0 ||
	    (t->done = calloc(t->n + 1, sizeof(*t->done))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return EXIT_TEMPFAIL;
	}
	if ((rc = list_topics(f, f->consumer, errbuf, errlen)) != EXIT_OK ||
	    (rc = read_setup(f, t->v, (const char *const *)t->dev, t->n, &r, errbuf, errlen)) !=
	        EXIT_OK)
		return rc;
	r.answered = answered;
	r.ctx = t;
	rc = read_on(f, t->v, &r, clock_mono_ms() + f->a->wait_ms, &all, errbuf, errlen);
	read_done(f, &r);
	if (rc != EXIT_OK)
		return rc;
	now = clock_wall_ns() / 1000000;
	for (size_t i = 0; i < t->n; i++) {
		const char *why;
		char age[64];

		switch (fleetview_answer(t->v, t->dev[i], t->name, t->topic, t->offset, &why)) {
		case FLEETVIEW_APPLIED:
			printf("%s: applied\n", t->dev[i]);
			break;
		case FLEETVIEW_REFUSED:
			printf("%s: refused: %s\n", t->dev[i], why[0] ? why : "(no reason given)");
			if (code == EXIT_OK)
				code = EXIT_REFUSED;
			break;
		default:
			fleetview_age(fleetview_last_seen(t->v, t->dev[i]), now, age, sizeof(age));
			printf("%s: no answer (last seen %s)\n", t->dev[i], age);
			code = EXIT_TEMPFAIL;
			break;
		}
	}
	return code;
}

static int do_write(struct fleet *f, char *errbuf, size_t errlen)
{
	const struct fleet_args *a = f->a;
	char topic[FLEETCONF_TOPIC_MAX + 64];
	struct targets t = {0};
	struct rec r[2];
	size_t n = 0, primary = 0;
	int rc;

	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 2; i++) {
		buf_init(&r[i].key, 16);
		buf_init(&r[i].value, 16);
	}
	if (fleetconf_topic(a->group != NULL ? a->group_topic : a->config_topic,
	                    a->group != NULL ? a->group : a->device, topic,
	                    sizeof(topic)) != FLEETCONF_OK) {
		snprintf(errbuf, errlen, "the config topic's name is longer than Kafka's %d",
		         FLEETCONF_TOPIC_MAX);
		rc = EXIT_CONFIG;
		goto out;
	}
	if ((rc = records(a, r, &n, &primary, errbuf, errlen)) != EXIT_OK)
		goto out;
	if ((rc = list_topics(f, f->producer, errbuf, errlen)) != EXIT_OK)
		goto out;
	if (topic_md(f, topic) == NULL) {
		if (a->device != NULL)
			snprintf(errbuf, errlen,
			         "unknown device %s: %s has no topic %s (skiff fleet provision "
			         "--device %s creates it)",
			         a->device, a->bootstrap, topic, a->device);
		else
			snprintf(errbuf, errlen,
			         "unknown group %s: %s has no topic %s (skiff fleet provision "
			         "--device ID --group %s creates it)",
			         a->group, a->bootstrap, topic, a->group);
		rc = EXIT_CONFIG;
		goto out;
	}
	if (topic_md(f, topic)->partition_cnt != 1) {
		/* Its log's order is the configuration's: Connect refuses such a
		 * config topic, and a device would read the records out of order. */
		snprintf(
		    errbuf, errlen,
		    "%s has %d partitions: a config topic has exactly one, as Connect requires",
		    topic, topic_md(f, topic)->partition_cnt);
		rc = EXIT_CONFIG;
		goto out;
	}
	/* The devices to wait for: the one named, or those whose last
	 * heartbeat lists the group, as they were before the write. */
	if (a->wait_ms >= 0 && a->device != NULL) {
		add_target(&t, a->device);
	} else if (a->wait_ms >= 0) {
		struct fleetview *v = NULL;
		struct reading rd;
		bool all;

		if (fleetview_new(a->status_topic, &v) != 0) {
			snprintf(errbuf, errlen, "out of memory");
			rc = EXIT_TEMPFAIL;
			goto out;
		}
		rc = read_setup(f, v, NULL, 0, &rd, errbuf, errlen);
		if (rc == EXIT_OK) {
			rc = read_on(f, v, &rd, clock_mono_ms() + a->timeout_ms, &all, errbuf,
			             errlen);
			read_done(f, &rd);
		}
		if (rc == EXIT_OK)
			fleetview_group(v, a->group, add_target, &t);
		fleetview_destroy(v);
		if (rc != EXIT_OK)
			goto out;
	}
	if ((rc = write_marker(f, topic, false, errbuf, errlen)) != EXIT_OK ||
	    (rc = write_records(f, topic, r, n, "", errbuf, errlen)) != EXIT_OK)
		goto out;
	if (a->wait_ms < 0)
		goto out;
	if (t.n == 0) {
		printf("no device's heartbeat lists group %s: nothing to wait for\n", a->group);
		goto out;
	}
	t.name = a->name;
	t.topic = topic;
	t.offset = r[primary].sent.offset;
	rc = wait_answers(f, &t, errbuf, errlen);
out:
	for (size_t i = 0; i < 2; i++) {
		buf_free(&r[i].key);
		buf_free(&r[i].value);
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.dev[i]);
	free(t.dev);
	free(t.done);
	fleetview_destroy(t.v);
	return rc;
}

/* ---- provision --------------------------------------------------------------- */

/* Prints design §2.6's grants for the device: LITERAL patterns (a PREFIXED
 * skiff.config.gw-1 would match gw-10 too). */
static void print_acls(const struct fleet_args *a, const char *cfg, const char *st,
                       char (*groups)[FLEETCONF_TOPIC_MAX + 64])
{
	char principal[FLEETCONF_NAME_MAX + 16], server[1024] = "";

	if (a->principal != NULL)
		snprintf(principal, sizeof(principal), "%s", a->principal);
	else
		snprintf(principal, sizeof(principal), "User:%s", a->device);
	if (a->bootstrap != NULL)
		snprintf(server, sizeof(server), " --bootstrap-server %s", a->bootstrap);
	printf("# ACLs for device %s: it reads only its configuration, writes only its status\n",
	       a->device);
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Read --operation Describe "
	       "--topic %s --resource-pattern-type literal\n",
	       server, principal, cfg);
	/* Create and DescribeConfigs: the device creates its status topic when
	 * it is missing and checks it is compacted (kafka/ktopic), as Connect's
	 * worker does its own; without them it does not start (tested). */
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Write --operation Describe "
	       "--operation Create --operation DescribeConfigs --topic %s "
	       "--resource-pattern-type literal\n",
	       server, principal, st);
	for (size_t i = 0; i < a->ngroups; i++)
		printf("kafka-acls.sh%s --add --allow-principal %s --operation Read --operation "
		       "Describe --topic %s --resource-pattern-type literal\n",
		       server, principal, groups[i]);
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Describe --group "
	       "skiff-fleet-%s --resource-pattern-type literal\n",
	       server, principal, a->device);
	printf(
	    "# and its data topics (Write), its offsets topic (Read, Write); with exactly-once:\n"
	    "# --transactional-id <its transactional.id> --operation Write --operation "
	    "Describe\n"
	    "# brokers before Kafka 2.8 (KIP-679) also want, for its idempotent producers:\n"
	    "# kafka-acls.sh%s --add --allow-principal %s --operation IdempotentWrite "
	    "--cluster\n",
	    server, principal);
}

/* The part of a topic template before its placeholder: the PREFIXED
 * pattern that covers every device's (or group's) topic. Returns false
 * when there is none (the template starts with it). */
static bool template_prefix(const char *tmpl, const char *ph, char *out, size_t outlen)
{
	const char *at = strstr(tmpl, ph);

	if (at == NULL || at == tmpl || (size_t)(at - tmpl) >= outlen)
		return false;
	snprintf(out, outlen, "%.*s", (int)(at - tmpl), tmpl);
	return true;
}

/* Prints the operator's grants: PREFIXED on the templates' fixed parts
 * (every device's configuration written, every status read), the
 * literal group its reader names. Create and DescribeConfigs are for
 * provisioning (skiff fleet provision --bootstrap, as this principal). */
static int print_operator_acls(const struct fleet_args *a, char *errbuf, size_t errlen)
{
	char cfg[FLEETCONF_TOPIC_MAX + 64], st[FLEETCONF_TOPIC_MAX + 64],
	    grp[FLEETCONF_TOPIC_MAX + 64], server[1024] = "";
	bool group_own;

	if (!template_prefix(a->config_topic, "{device}", cfg, sizeof(cfg)) ||
	    !template_prefix(a->status_topic, "{device}", st, sizeof(st)) ||
	    !template_prefix(a->group_topic, "{group}", grp, sizeof(grp))) {
		snprintf(errbuf, errlen,
		         "--operator: a topic template (%s, %s, %s) starts with its {device} or "
		         "{group}: no prefix covers every device's topics",
		         a->config_topic, a->status_topic, a->group_topic);
		return EXIT_CONFIG;
	}
	group_own = strncmp(grp, cfg, strlen(cfg)) != 0;
	if (a->bootstrap != NULL)
		snprintf(server, sizeof(server), " --bootstrap-server %s", a->bootstrap);
	printf("# ACLs for the operator %s: writes every device's and group's configuration, "
	       "reads every status\n",
	       a->operator_principal);
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Write --operation Describe "
	       "--operation Create --operation DescribeConfigs --topic %s "
	       "--resource-pattern-type prefixed\n",
	       server, a->operator_principal, cfg);
	if (group_own)
		printf("kafka-acls.sh%s --add --allow-principal %s --operation Write --operation "
		       "Describe --operation Create --operation DescribeConfigs --topic %s "
		       "--resource-pattern-type prefixed\n",
		       server, a->operator_principal, grp);
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Read --operation Describe "
	       "--operation Create --operation DescribeConfigs --topic %s "
	       "--resource-pattern-type prefixed\n",
	       server, a->operator_principal, st);
	printf("kafka-acls.sh%s --add --allow-principal %s --operation Describe --group %s "
	       "--resource-pattern-type literal\n",
	       server, a->operator_principal, OPERATOR_GROUP);
	return EXIT_OK;
}

/* Creates each topic unless it exists, and checks an existing one is
 * compacted (kafka/ktopic, as the device and the offsets topic do): [0] the
 * config topic, [1] the status topic, then the groups' config topics. Their
 * topic configs are config.storage.X / status.storage.X of the client
 * section (fleet_main's defaults: segment.ms, delete.retention.ms). */
static int create_topics(struct fleet *f, char (*names)[FLEETCONF_TOPIC_MAX + 64], size_t n,
                         char *errbuf, size_t errlen)
{
	int rc;

	if ((rc = list_topics(f, f->producer, errbuf, errlen)) != EXIT_OK)
		return rc;
	for (size_t i = 0; i < n; i++) {
		bool status = i == 1, existed = topic_md(f, names[i]) != NULL;
		struct ktopic_spec t = {
		    .topic = names[i],
		    .key = status ? "status.storage.topic" : "config.storage.topic",
		    .prefix = status ? "status.storage." : "config.storage.",
		    .noun = status ? "status" : "configuration",
		    .loses = status
		                 ? "the broker deletes a connector's last state and the fleet "
		                   "loses sight of it"
		                 : "the broker deletes configurations and a device that restarts "
		                   "drops its fleet's connectors",
		    .lock_name = status ? "skiff-status" : "skiff-config",
		    .partitions = status ? f->a->status_partitions : 1,
		    .replication_factor = f->a->replication_factor,
		};

		rc = ktopic_ensure(f->producer, f->w, &t, (int)f->a->timeout_ms, true, errbuf,
		                   errlen);
		if (rc != KTOPIC_OK)
			return rc == KTOPIC_ERR_CONFIG ? EXIT_CONFIG : EXIT_TEMPFAIL;
		if (existed)
			printf("# topic %s exists (compacted): left as it is\n", names[i]);
		else
			printf("# created topic %s (compacted)\n", names[i]);
		if (!status &&
		    (rc = write_marker(f, names[i], !existed, errbuf, errlen)) != EXIT_OK)
			return rc;
	}
	return EXIT_OK;
}

static int do_provision(struct fleet *f, char *errbuf, size_t errlen)
{
	const struct fleet_args *a = f->a;
	char names[FLEET_CLI_GROUPS_MAX + 2][FLEETCONF_TOPIC_MAX + 64];
	int rc = EXIT_OK;

	if (a->device != NULL &&
	    (fleetconf_topic(a->config_topic, a->device, names[0], sizeof(names[0])) != 0 ||
	     fleetconf_topic(a->status_topic, a->device, names[1], sizeof(names[1])) != 0)) {
		snprintf(errbuf, errlen, "a topic's name is longer than Kafka's %d",
		         FLEETCONF_TOPIC_MAX);
		return EXIT_CONFIG;
	}
	for (size_t i = 0; i < a->ngroups; i++)
		if (fleetconf_topic(a->group_topic, a->groups[i], names[i + 2], sizeof(names[0])) !=
		    0) {
			snprintf(errbuf, errlen, "a topic's name is longer than Kafka's %d",
			         FLEETCONF_TOPIC_MAX);
			return EXIT_CONFIG;
		}
	if (a->device == NULL)
		return print_operator_acls(a, errbuf, errlen);
	if (f->producer != NULL &&
	    (rc = create_topics(f, names, a->ngroups + 2, errbuf, errlen)) != EXIT_OK)
		return rc;
	print_acls(a, names[0], names[1], names + 2);
	if (a->operator_principal != NULL)
		return print_operator_acls(a, errbuf, errlen);
	return EXIT_OK;
}

int fleet_main(int argc, char **argv)
{
	struct fleet_args a;
	struct fleet f = {.a = &a};
	char errbuf[2048] = "";
	int rc;

	rc = fleet_args_parse(argc, argv, &a, errbuf, sizeof(errbuf));
	if (rc == 1) {
		usage(stdout);
		return EXIT_OK;
	}
	if (rc != 0) {
		fprintf(stderr, "skiff fleet: %s (skiff fleet --help)\n", errbuf);
		return EXIT_CONFIG;
	}
	if (a.cmd == FLEET_CMD_PROVISION && a.bootstrap == NULL) {
		rc = do_provision(&f, errbuf, sizeof(errbuf));
		if (rc != EXIT_OK)
			fprintf(stderr, "skiff fleet: %s\n", errbuf);
		return rc;
	}
	rc = settings_load_client(a.command_config, a.bootstrap, topic_defaults, &f.w, errbuf,
	                          sizeof(errbuf));
	if (rc != 0) {
		fprintf(stderr, "skiff fleet: %s\n", errbuf);
		return rc == SETTINGS_ERR_NOMEM ? EXIT_TEMPFAIL : EXIT_CONFIG;
	}
	rc = open_client(&f, RD_KAFKA_PRODUCER, false, errbuf, sizeof(errbuf));
	if (rc == EXIT_OK && a.cmd != FLEET_CMD_PROVISION)
		rc = open_client(&f, RD_KAFKA_CONSUMER, false, errbuf, sizeof(errbuf));
	if (rc == EXIT_OK) {
		switch (a.cmd) {
		case FLEET_CMD_STATUS:
			rc = do_status(&f, errbuf, sizeof(errbuf));
			break;
		case FLEET_CMD_PROVISION:
			rc = do_provision(&f, errbuf, sizeof(errbuf));
			break;
		default:
			rc = do_write(&f, errbuf, sizeof(errbuf));
			break;
		}
	}
	if (rc != EXIT_OK && rc != EXIT_REFUSED &&
	    !(rc == EXIT_TEMPFAIL && a.wait_ms >= 0 && errbuf[0] == '\0'))
		fprintf(stderr, "skiff fleet: %s\n", errbuf);
	if (f.md != NULL)
		rd_kafka_metadata_destroy(f.md);
	if (f.consumer != NULL) {
		rd_kafka_consumer_close(f.consumer);
		rd_kafka_destroy(f.consumer);
	}
	if (f.producer != NULL)
		rd_kafka_destroy(f.producer);
	config_section_destroy(f.w);
	return rc;
}
