/* skiff: arguments, signals and wiring; no logic of its own. */
#include "core/log.h"
#include "config/config.h"
#include "core/device.h"
#include "fleet/fleet.h"
#include "fleet/fleetallow.h"
#include "fleet/fleetconf.h"
#include "kafka/fleetlink_kafka.h"
#include "cli/help.h"
#include "core/loop.h"
#include "offsets/offsets.h"
#include "cli/offsets_cli.h"
#include "offsets/offsets_factory.h"
#include "control/rest.h"
#include "config/settings.h"
#include "kafka/sink_kafka.h"
#include "control/sdnotify.h"
#include "core/source.h"
#include "control/standby.h"
#include "core/stats.h"
#include "cli/status_cli.h"
#include "cli/fleet_cli.h"
#include "core/worker.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static int sigpipe_w = -1;

/* Only writes the signal number to the self-pipe; the loop does the work. */
static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(sigpipe_w, &b, 1) < 0) {
		/* The pipe is full of signals already: nothing is lost. */
	}
	errno = saved;
}

static int setup_signals(int *readfd)
{
	int fds[2];
	struct sigaction sa;

	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
		return -1;
	sigpipe_w = fds[1];
	*readfd = fds[0];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGHUP, &sa, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void no_delivery(void *ctx, void *token, enum sink_result res, const char *reason)
{
	(void)ctx;
	(void)token;
	(void)res;
	(void)reason;
}

static void usage(FILE *fp)
{
	fprintf(fp,
	        "usage: skiff [options] WORKER.properties [CONNECTOR.properties ...]\n"
	        "       skiff status [WORKER.properties [CONNECTOR.properties ...]]\n"
	        "       skiff offsets list|set|reset|import ... (skiff offsets --help)\n"
	        "       skiff fleet status|config|pause|resume|stop|restart|remove|provision ...\n"
	        "                          (skiff fleet --help)\n"
	        "\n"
	        "Ships lines of files, rows of SQLite databases and journal entries to Apache\n"
	        "Kafka, with Kafka Connect's configuration files and offset formats.\n"
	        "\n"
	        "  --check            validate the configuration and the offset file, print the\n"
	        "                     effective settings (secrets masked), and exit\n"
	        "  --help-config[=json]\n"
	        "                     print every property with type, default and meaning\n"
	        "                     (json: the same as one document, for programs)\n"
	        "  --log-level LEVEL  error, warn, notice, info (default) or debug\n"
	        "  --version          print versions and exit\n"
	        "  --help             this text\n"
	        "\n"
	        "Exit codes: 0 stopped cleanly; 75 transient failure (restart me);\n"
	        "78 configuration or offset store unusable (a person must act).\n"
	        "man skiff, man 5 skiff.properties: the manual.\n");
}

/* The newest offset generation was missing or damaged: records are about to
 * be sent again, and a person should know why. Then what the load said
 * (offsets_load_said: the offsets topic's read, at info, or a warning). */
static void warn_fallback(const struct offsets *offsets, const char *why)
{
	struct offsets_stats st;
	bool warn;
	const char *note = offsets_load_said(offsets, &warn);

	offsets_stats(offsets, &st);
	if (st.loaded_from_prev)
		log_warn("%s", why);
	if (*note != '\0' && warn)
		log_warn("%s", note);
	else if (*note != '\0')
		log_info("%s", note);
}

/* --check: each source looks at what it can without Kafka (a database's
 * tables and columns). Returns 0, or -1 when one found what a person must fix. */
static int check_sources(const struct settings *s)
{
	char errbuf[1024];
	int bad = 0;

	for (size_t i = 0; i < s->nconnectors; i++) {
		const struct connector_settings *c = &s->connectors[i];
		int rc;

		if (c->ops->check == NULL)
			continue;
		rc = c->ops->check(c->cfg, c->name, errbuf, sizeof(errbuf));
		if (rc == SOURCE_ERR_CONFIG) {
			log_error("connector %s: %s", c->name, errbuf);
			bad = -1;
		} else if (rc != 0) {
			log_warn("connector %s: not checked: %s", c->name, errbuf);
		}
	}
	return bad;
}

/* Where the offset store is configured, for its errors. */
static const char *store_where(const struct config_section *w)
{
	return settings_worker(w)->offset_file != NULL
	           ? config_where(w, "offset.storage.file.filename")
	           : config_where(w, "offset.storage.topic");
}

/* Logs why the store did not open; returns the exit code. */
static int store_failed(const struct settings *s, int rc, const char *why)
{
	log_error("%s: %s", store_where(s->worker), why);
	/* Corrupt or no directory: a person must look. I/O errors may pass:
	 * restart (another skiff holding the store is waited for: open_store). */
	return rc == OFFSETS_ERR_IO || rc == OFFSETS_ERR_LOCKED || rc == OFFSETS_ERR_NOMEM
	           ? WORKER_EXIT_TEMPFAIL
	           : WORKER_EXIT_CONFIG;
}

/* offsets_open_store's fence: the worker claims its transactional.id. */
static int fence(void *w, char *errbuf, size_t errlen)
{
	int rc = worker_fence(w, errbuf, errlen);

	return rc == 0 ? 0 : rc == WORKER_ERR_CONFIG ? OFFSETS_ERR_CONFIG : OFFSETS_ERR_IO;
}

/* Another skiff holds the store: it is tried again this often, and the
 * wait logged at its start and then this often. */
#define HELD_RETRY_MS 1000
#define HELD_LOG_EVERY_MS (10 * 60 * 1000)

/* Opens and takes the store for worker w, fenced (see fence). While another
 * skiff holds it (a restart overlapping the old process, a unit started
 * twice, a person starting one by hand) it waits for that one to go, then
 * takes it (and with exactly-once fences what the other left open): exiting
 * 75 had systemd start it again every RestartSec for as long as the other
 * ran. Returns -1 with *out, or the exit code (0: a signal ended the wait). */
static int open_store(const struct settings *s, struct worker *w, struct stats *stats, int sigfd,
                      struct offsets **out)
{
	char errbuf[2048], status[2200];
	struct sdnotify *n = NULL;
	int64_t since = -1, logged = 0;
	int rc;

	while ((rc = offsets_open_store_fenced(s, fence, w, out, errbuf, sizeof(errbuf))) ==
	       OFFSETS_ERR_LOCKED) {
		if (since < 0) {
			since = logged = loop_now_ms();
			log_warn("%s: %s; waiting for it to stop, then taking over (trying again "
			         "every second)",
			         store_where(s->worker), errbuf);
			snprintf(
			    status, sizeof(status),
			    "waiting for the other skiff that holds the offset store to stop: %s",
			    errbuf);
			n = standby_notify(status);
		} else if (loop_now_ms() - logged >= HELD_LOG_EVERY_MS) {
			logged = loop_now_ms();
			log_warn("still waiting for the other skiff to stop (%lld s): %s",
			         (long long)((logged - since) / 1000), errbuf);
		}
		if (standby_sleep(n, sigfd, HELD_RETRY_MS) != 0) {
			sdnotify_close(n);
			return WORKER_EXIT_OK;
		}
	}
	sdnotify_close(n);
	if (rc == 0 && since >= 0)
		log_info("the other skiff let go of the offset store after %lld s: taking over",
		         (long long)((loop_now_ms() - since) / 1000));
	if (rc != 0)
		return store_failed(s, rc, errbuf);
	warn_fallback(*out, errbuf);
	if (offsets_register_stats(*out, stats) != 0) {
		log_error("stats: out of memory");
		return WORKER_EXIT_TEMPFAIL;
	}
	return -1;
}

/* open_store, with exactly-once after the cluster answers: waiting for it
 * while it does not (a start, or a read that lost it), where a restart
 * would only do the same work again. Returns as open_store, or 0 when a
 * signal stopped the wait. */
static int open_store_waiting(const struct settings *s, struct worker *w, struct stats *stats,
                              int sigfd, struct offsets **out)
{
	bool waited;
	int code;

	if (worker_await_cluster(w, sigfd, &waited) != 0)
		return WORKER_EXIT_OK;
	while ((code = open_store(s, w, stats, sigfd, out)) == WORKER_EXIT_TEMPFAIL) {
		/* A cluster that answers at once did not cause the failure. */
		if (worker_await_cluster(w, sigfd, &waited) != 0)
			return WORKER_EXIT_OK;
		if (!waited)
			break;
	}
	return code;
}

/* --check: reads the store without taking it from a running skiff, lets
 * librdkafka validate producer.* (a producer made and dropped), and prints
 * the settings. Returns the exit code. */
static int check_config(struct settings *s)
{
	struct offsets *offsets = NULL;
	struct sink *probe = NULL;
	char errbuf[2048];
	int rc, code = WORKER_EXIT_CONFIG;

	rc = offsets_open_store(s, false, &offsets, errbuf, sizeof(errbuf));
	if (rc != 0)
		return store_failed(s, rc, errbuf);
	warn_fallback(offsets, errbuf);
	if (sink_open(s->worker, no_delivery, NULL, &probe, errbuf, sizeof(errbuf)) != 0) {
		log_error("%s", errbuf);
		goto out;
	}
	sink_destroy(probe);
	if (check_sources(s) != 0)
		goto out;
	if ((rc = rest_check(s->worker, errbuf, sizeof(errbuf))) != 0) {
		log_error("%s", errbuf);
		code = rc == REST_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL : WORKER_EXIT_CONFIG;
		goto out;
	}
	settings_print(s, stdout);
	printf("# offsets: %zu stored\nconfiguration ok\n", offsets_count(offsets));
	code = WORKER_EXIT_OK;
out:
	offsets_destroy(offsets);
	return code;
}

/* --help-config[=text|json]: every property (help.h). Returns the exit code. */
static int help_config(const char *format)
{
	cJSON *doc = NULL;
	char *json = NULL;
	int code = WORKER_EXIT_OK;

	if (format != NULL && strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
		fprintf(stderr, "skiff: --help-config=%s: the formats are text and json\n", format);
		return WORKER_EXIT_CONFIG;
	}
	if (settings_help_doc(&doc) != 0) {
		fprintf(stderr, "skiff: --help-config: out of memory\n");
		return WORKER_EXIT_TEMPFAIL;
	}
	if (format == NULL || strcmp(format, "text") == 0) {
		help_print_text(doc, stdout);
	} else if ((json = cJSON_Print(doc)) != NULL) {
		printf("%s\n", json);
	} else {
		fprintf(stderr, "skiff: --help-config: out of memory\n");
		code = WORKER_EXIT_TEMPFAIL;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "skiff: --help-config: cannot write: %s\n", strerror(errno));
		code = WORKER_EXIT_TEMPFAIL;
	}
	cJSON_free(json);
	cJSON_Delete(doc);
	return code;
}

struct options {
	bool check;
	bool log_level; /* --log-level given: it wins over log.level */
	int first_file;
};

/* worker_on_stop: the fleet starts nothing more once the worker stops,
 * and goes before the producer (its own link's pending status records
 * dropped: the next start publishes again what changed). */
static void close_fleet(void *arg)
{
	struct fleet **f = arg;

	fleet_close(*f);
	*f = NULL;
}

/* With fleet.enabled, the fleet's loop client (fleet/fleet.h) on w's loop
 * and query, after w made its connectors: its first turn then publishes the
 * states they have, not tombstones of status keys it would send again.
 * Returns -1 with *out (NULL without fleet.enabled), or the exit code. */
static int open_fleet(const struct settings *s, struct worker *w, struct stats *stats,
                      struct fleet **out)
{
	const struct fleet_conf *fc = fleetconf_conf(s->worker);
	char device[DEVICE_NAME_MAX], errbuf[2048];
	struct fleet_params p = {
	    .loop = worker_loop(w),
	    .query = worker_query(w),
	    .stats = stats,
	    .health = worker_health(w),
	    .conf = fc,
	    .device = device,
	    .offsets_file = settings_worker(s->worker)->offset_file,
	    .link = &fleetlink_kafka_ops,
	    .kafka = s->worker,
	};
	int rc;

	*out = NULL;
	if (!fc->enabled)
		return -1;
	if (device_name(s->worker, device, sizeof(device)) == DEVICE_NONE) {
		device_missing(errbuf, sizeof(errbuf));
		log_error("fleet.enabled=true: %s", errbuf);
		return WORKER_EXIT_CONFIG;
	}
	rc = fleet_open(&p, out, errbuf, sizeof(errbuf));
	if (rc != 0) {
		log_error("%s", errbuf);
		return rc == FLEET_ERR_CONFIG || rc == FLEET_ERR_STORE ? WORKER_EXIT_CONFIG
		                                                       : WORKER_EXIT_TEMPFAIL;
	}
	log_info("fleet: device %s", device);
	worker_on_stop(w, close_fleet, out);
	return -1;
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"check", no_argument, NULL, 'c'},
	    {"help-config", optional_argument, NULL, 'H'},
	    {"log-level", required_argument, NULL, 'l'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum log_level level;
	int opt;

	while ((opt = getopt_long(argc, argv, "chl:V", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->check = true;
			break;
		case 'H':
			return help_config(optarg);
		case 'l':
			if (log_level_parse(optarg, &level) != 0) {
				fprintf(stderr,
				        "skiff: --log-level: '%s' is not error, warn, notice, "
				        "info or debug\n",
				        optarg);
				return WORKER_EXIT_CONFIG;
			}
			log_set_level(level);
			o->log_level = true;
			break;
		case 'V':
			printf("skiff %s (librdkafka %s)\n", SKIFF_VERSION, rd_kafka_version_str());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return WORKER_EXIT_CONFIG;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return WORKER_EXIT_CONFIG;
	}
	o->first_file = optind;
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct settings s;
	struct offsets *offsets = NULL;
	struct stats *stats = NULL;
	struct worker *w = NULL;
	struct rest *rest = NULL;
	struct fleet *fleet = NULL;
	struct source_guard fleet_guard;
	char errbuf[2048];
	int code, rc, sigfd = -1;

	memset(&s, 0, sizeof(s));
	if (argc > 1 && strcmp(argv[1], "status") == 0)
		return status_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "offsets") == 0)
		return offsets_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "fleet") == 0)
		return fleet_main(argc - 1, argv + 1);
	code = parse_args(argc, argv, &o);
	if (code >= 0)
		return code;
	rc = settings_load(argv + o.first_file, (size_t)(argc - o.first_file), &s, errbuf,
	                   sizeof(errbuf));
	code = rc == SETTINGS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL : WORKER_EXIT_CONFIG;
	if (rc != 0) {
		log_error("%s", errbuf);
		goto out;
	}
	settings_log_notices(&s);
	/* The device keeps the last word: every connector of the fleet's
	 * layer, those kept from a previous run as those the fleet sends
	 * later, is guarded from its first read (core/source.h): what a link
	 * or a router reaches must be in fleet.allow.*. The lists are the
	 * start's worker section's (fleet.* changes need a restart while the
	 * fleet is on; the section stays alive until exit). */
	fleetallow_guard(&fleetconf_conf(s.worker)->allow, &fleet_guard);
	settings_guard(&s, CONNLAYER_FLEET, &fleet_guard);
	device_init(s.worker, !o.check);
	if (!o.log_level && settings_worker(s.worker)->log_level >= 0)
		log_set_level((enum log_level)settings_worker(s.worker)->log_level);
	if (o.check) {
		code = check_config(&s);
		goto out;
	}
	if (setup_signals(&sigfd) != 0) {
		log_error("signals: %s", strerror(errno));
		code = WORKER_EXIT_TEMPFAIL;
		goto out;
	}
	code = WORKER_EXIT_TEMPFAIL;
	if (stats_new(&stats) != 0) {
		log_error("stats: out of memory");
		goto out;
	}
	/* The producer before the store: with exactly-once it fences the
	 * other instances of its transactional.id before the store is read. */
	rc = worker_new(&s, stats, &w, errbuf, sizeof(errbuf));
	if (rc != 0) {
		log_error("%s", errbuf);
		code = worker_exit_code(rc);
		goto out;
	}
	if ((code = open_store_waiting(&s, w, stats, sigfd, &offsets)) >= 0)
		goto out;
	rc = worker_start(w, offsets, errbuf, sizeof(errbuf));
	if (rc != 0) {
		log_error("%s", errbuf);
		code = worker_exit_code(rc);
		goto out;
	}
	if (device_note(errbuf, sizeof(errbuf)))
		log_warn("%s", errbuf);
	worker_reload_setup(w, &s, argv + o.first_file, (size_t)(argc - o.first_file), o.log_level);
	/* The REST API (listeners): after the worker, whose state it serves. */
	rc =
	    rest_open(s.worker, worker_loop(w), &worker_rest_ops, w, &rest, errbuf, sizeof(errbuf));
	if (rc != 0) {
		log_error("%s", errbuf);
		code = rc == REST_ERR_CONFIG ? WORKER_EXIT_CONFIG : WORKER_EXIT_TEMPFAIL;
		goto out;
	}
	if ((code = open_fleet(&s, w, stats, &fleet)) >= 0)
		goto out;
	code = worker_run(w, sigfd);
out:
	fleet_close(fleet);
	rest_destroy(rest);
	worker_destroy(w);
	offsets_destroy(offsets);
	stats_destroy(stats);
	settings_destroy(&s);
	if (code == WORKER_EXIT_CONFIG)
		log_error("exit 78: configuration or offset store unusable; restarting will not "
		          "help until it is fixed");
	else if (code == WORKER_EXIT_TEMPFAIL)
		log_error("exit 75: transient failure; a restart may succeed");
	return code;
}
