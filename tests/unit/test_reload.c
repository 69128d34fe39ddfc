/* The reload (core/reload.c) over a faked worker (reload_ops recorded on
 * a table of slots): SIGHUP without configuration files does nothing; an
 * unchanged configuration touches no connector; a changed connector is
 * drained, closed and opened with its new settings, in that order and once
 * each; a connector that cannot open with its new settings refuses the
 * reload and opens again with its old ones; a key that needs a restart
 * refuses the reload before anything stops; the flush timings apply at
 * once; the REST API's changes are refused while the worker drains or
 * without configuration files. */
#include "config/connlayer.h"
#include "config/settings.h"
#include "control/rest.h"
#include "core/query.h"
#include "core/reload.h"
#include "core/source.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SLOTS 8

/* ---- the faked worker ---------------------------------------------------- */

static struct fake {
	char order[64]; /* one letter a call: d(rain) c(lose) o(pen) f(ail) e(os) a(pply) */
	const struct connector_settings *cs[SLOTS];
	size_t nslots;
	int open_rc;            /* what the next opens answer */
	char opened[SLOTS][64]; /* each open's topic, in order */
	size_t nopened;
	int rebinds;
	int64_t flush_interval, flush_timeout;
	int notified;
	bool draining;
	int soon; /* reload_ops.soon calls */
} fk;

static void note(char c)
{
	size_t n = strlen(fk.order);

	if (n + 1 < sizeof(fk.order))
		fk.order[n] = c;
}

static int f_drain(void *ctx)
{
	(void)ctx;
	note('d');
	return 0;
}

static void f_apply(void *ctx, const struct worker_conf *wc)
{
	(void)ctx;
	note('a');
	fk.flush_interval = wc->flush_interval_ms;
	fk.flush_timeout = wc->flush_timeout_ms;
}

static void f_eos(void *ctx)
{
	(void)ctx;
	note('e');
}

static void f_notify(void *ctx, const char *state)
{
	(void)ctx;
	(void)state;
	fk.notified++;
}

static size_t f_slots(void *ctx)
{
	(void)ctx;
	return fk.nslots;
}

static const struct connector_settings *f_slot(void *ctx, size_t k)
{
	(void)ctx;
	return fk.cs[k];
}

static void f_rebind(void *ctx, size_t k, const struct connector_settings *cs)
{
	(void)ctx;
	fk.cs[k] = cs;
	fk.rebinds++;
}

static long f_add(void *ctx)
{
	(void)ctx;
	return fk.nslots < SLOTS ? (long)fk.nslots++ : -1;
}

static int f_open(void *ctx, size_t k, const struct connector_settings *cs, char *why, size_t len)
{
	const char *topic = config_shown(cs->cfg, "topic");

	(void)ctx;
	note('o');
	if (fk.nopened < SLOTS)
		snprintf(fk.opened[fk.nopened++], sizeof(fk.opened[0]), "%s",
		         topic != NULL ? topic : "");
	fk.cs[k] = cs; /* opened, or FAILED with cs (as the worker's slot) */
	if (fk.open_rc != 0) {
		fk.open_rc = 0; /* the next one opens */
		snprintf(why, len, "connector %s: refused", cs->name);
		return -1;
	}
	return 0;
}

static void f_fail(void *ctx, size_t k, const char *why)
{
	(void)ctx;
	(void)k;
	(void)why;
	note('f');
}

static void f_close(void *ctx, size_t k)
{
	(void)ctx;
	note('c');
	fk.cs[k] = NULL;
}

static void f_soon(void *ctx)
{
	(void)ctx;
	fk.soon++;
}

static const struct reload_ops ops = {
    .drain_and_flush = f_drain,
    .apply = f_apply,
    .eos_reload = f_eos,
    .notify = f_notify,
    .slots = f_slots,
    .slot = f_slot,
    .rebind = f_rebind,
    .add = f_add,
    .open = f_open,
    .fail = f_fail,
    .close = f_close,
    .soon = f_soon,
};

/* ---- configuration files ------------------------------------------------- */

static char dir[300], wpath[400], cpath[400];
static struct offsets *store; /* an added connector's offsets are adopted into it */
static char *paths[2] = {wpath, cpath};

static void write_worker(const char *extra)
{
	char text[1024];

	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets.json\n"
	         "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
	         "offset.flush.interval.ms=1000\noffset.flush.timeout.ms=200\n%s",
	         dir, extra);
	testlib_write_file(wpath, text, strlen(text));
}

static void write_connector(const char *topic)
{
	char text[1024];

	snprintf(text, sizeof(text),
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\n"
	         "topic=%s\n",
	         dir, topic);
	testlib_write_file(cpath, text, strlen(text));
}

/* A new directory with the worker file and connector p's (topic t). */
static void make_dir(void)
{
	static int n;
	char path[600];

	snprintf(dir, sizeof(dir), "%s/%d", testlib_tmpdir(), n++);
	CHECK_INT(mkdir(dir, 0755), 0);
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/p.properties", dir);
	snprintf(path, sizeof(path), "%s/app.log", dir);
	testlib_write_file(path, "", 0);
	write_worker("");
	write_connector("t");
}

/* A reload over the files of dir as written now, each connector open in a
 * slot (the fake's state reset); *s the live settings (stop). */
static struct reload *begin(struct settings *s)
{
	struct reload_env env = {.ops = &ops, .ctx = &fk, .draining = &fk.draining};
	struct reload *r = NULL;
	char errbuf[2048];

	memset(s, 0, sizeof(*s));
	CHECK_INT(settings_load(paths, 2, s, errbuf, sizeof(errbuf)), 0);
	memset(&fk, 0, sizeof(fk));
	for (size_t i = 0; i < s->nconnectors && i < SLOTS; i++)
		fk.cs[fk.nslots++] = &s->connectors[i];
	CHECK_INT(reload_new(&env, &r), 0);
	snprintf(errbuf, sizeof(errbuf), "%s/offsets.json", dir);
	CHECK_INT(offsets_open_file(errbuf, &store, errbuf, sizeof(errbuf)), 0);
	reload_setup(r, s, store, paths, 2, true);
	return r;
}

/* begin() in a new directory: connector p open in slot 0. */
static struct reload *start(struct settings *s)
{
	make_dir();
	return begin(s);
}

static void stop(struct reload *r, struct settings *s)
{
	reload_destroy(r);
	settings_destroy(s);
	offsets_destroy(store);
	store = NULL;
}

/* ---- tests --------------------------------------------------------------- */

static void test_no_files(void)
{
	struct reload_env env = {.ops = &ops, .ctx = &fk, .draining = &fk.draining};
	struct rest_change rc = {.op = REST_DELETE, .name = "p"};
	struct reload *r = NULL;
	char errbuf[256] = "";

	memset(&fk, 0, sizeof(fk));
	CHECK_INT(reload_new(&env, &r), 0);
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, "");
	CHECK_INT(fk.notified, 0);
	CHECK_INT(reload_change(r, &rc, NULL, errbuf, sizeof(errbuf)), REST_ERR_STATE);
	CHECK(strstr(errbuf, "without configuration files") != NULL);
	reload_destroy(r);
}

static void test_unchanged(void)
{
	struct settings s;
	struct reload *r = start(&s);

	reload_turn(r); /* nothing asked: nothing done */
	CHECK_STR(fk.order, "");
	reload_ask(r);
	reload_turn(r);
	/* No drain, no close, no open: the connector keeps running with its
	 * settings moved into the new ones. */
	CHECK_STR(fk.order, "ae");
	CHECK_INT(fk.rebinds, 1);
	CHECK(fk.cs[0] == &s.connectors[0]);
	CHECK_INT(fk.notified, 2); /* RELOADING, READY */
	stop(r, &s);
}

static void test_changed(void)
{
	struct settings s;
	struct reload *r = start(&s);

	write_connector("t2");
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, "dcoae");
	CHECK_INT(fk.nopened, 1);
	CHECK_STR(fk.opened[0], "t2");
	CHECK(fk.cs[0] == &s.connectors[0]);
	CHECK_STR(config_shown(s.connectors[0].cfg, "topic"), "t2");
	stop(r, &s);
}

static void test_refused_open_goes_back(void)
{
	struct settings s;
	struct reload *r = start(&s);

	write_connector("t2");
	fk.open_rc = -1;
	reload_ask(r);
	reload_turn(r);
	/* The new settings do not open: the reload is refused and the
	 * connector opens again with the settings before (drained again:
	 * nothing to wait for). No eos_reload, no apply. */
	CHECK_STR(fk.order, "dcodco");
	CHECK_INT(fk.nopened, 2);
	CHECK_STR(fk.opened[0], "t2");
	CHECK_STR(fk.opened[1], "t");
	CHECK_STR(config_shown(s.connectors[0].cfg, "topic"), "t");
	stop(r, &s);
}

static void test_restart_key_refused(void)
{
	struct settings s;
	struct reload *r = start(&s);

	write_worker("bootstrap.servers=127.0.0.1:2\n");
	write_connector("t2");
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, ""); /* refused before anything stops */
	CHECK_STR(config_shown(s.connectors[0].cfg, "topic"), "t");
	stop(r, &s);
}

static void test_flush_timings(void)
{
	struct settings s;
	struct reload *r = start(&s);

	write_worker("offset.flush.interval.ms=5000\n");
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, "ae");
	CHECK_INT(fk.flush_interval, 5000);
	CHECK_INT(fk.flush_timeout, 200);
	stop(r, &s);
}

static void test_change_while_draining(void)
{
	struct settings s;
	struct reload *r = start(&s);
	struct rest_change rc = {.op = REST_DELETE, .name = "p"};
	char errbuf[256] = "";

	fk.draining = true;
	CHECK_INT(reload_change(r, &rc, NULL, errbuf, sizeof(errbuf)), REST_ERR_STATE);
	CHECK(strstr(errbuf, "concurrent config change") != NULL);
	fk.draining = false;
	stop(r, &s);
}

/* Writes layer kind's file in dir with connector name to topic (NULL: a
 * deletion), over what it holds. */
static void write_layer(enum connlayer_kind kind, const char *name, const char *topic)
{
	char offsets[400], err[512], cfg[1024];
	struct connlayer *l = NULL, *with = NULL;
	cJSON *config = NULL;

	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(cfg, sizeof(cfg),
	         "{\"name\":\"%s\",\"connector.class\":\"FileStreamSource\","
	         "\"file\":\"%s/app.log\",\"topic\":\"%s\"}",
	         name, dir, topic != NULL ? topic : "");
	CHECK_INT(connlayer_load(kind, offsets, &l, err, sizeof(err)), 0);
	if (topic != NULL)
		config = cJSON_Parse(cfg);
	CHECK_INT(connlayer_with(l, name, config, false, &with), 0);
	CHECK_INT(connlayer_save(with, err, sizeof(err)), 0);
	cJSON_Delete(config);
	connlayer_destroy(with);
	connlayer_destroy(l);
}

static const struct connector_settings *conn_of(const struct settings *s, const char *name)
{
	for (size_t i = 0; i < s->nconnectors; i++)
		if (strcmp(s->connectors[i].name, name) == 0)
			return &s->connectors[i];
	return NULL;
}

static const char *topic_of(const struct settings *s, const char *name)
{
	const struct connector_settings *cs = conn_of(s, name);

	return cs != NULL ? config_shown(cs->cfg, "topic") : "(none)";
}

/* files < fleet < REST, per connector name; the fleet's entry over a
 * connector of the files is refused unless its layer's policy allows it. */
static void test_layer_order(void)
{
	struct settings s, t;
	struct reload *r = start(&s);
	char err[2048];
	const struct settings_refusal *no;

	write_layer(CONNLAYER_FLEET, "p", "fleet-p");
	write_layer(CONNLAYER_FLEET, "q", "fleet-q");
	write_layer(CONNLAYER_REST, "q", "rest-q");
	write_layer(CONNLAYER_FLEET, "f", "fleet-f");
	/* By default the fleet may not replace the files' p. */
	CHECK_INT(settings_load(paths, 2, &t, err, sizeof(err)), 0);
	CHECK_STR(topic_of(&t, "p"), "t");
	CHECK_INT(conn_of(&t, "p")->layer, CONNLAYER_FILES);
	no = settings_refused(&t, CONNLAYER_FLEET, "p");
	CHECK(no != NULL);
	CHECK(no != NULL && strstr(no->why, "connector p: the fleet's configuration is refused: "
	                                    "a connector of that name comes from the "
	                                    "configuration files (") != NULL);
	CHECK(no != NULL && strstr(no->why, "fleet.allow.replace.local=true") != NULL);
	CHECK_STR(topic_of(&t, "f"), "fleet-f");
	CHECK_INT(conn_of(&t, "f")->layer, CONNLAYER_FLEET);
	CHECK(!conn_of(&t, "f")->over);
	/* The REST API's q over the fleet's: the person at the device wins. */
	CHECK_STR(topic_of(&t, "q"), "rest-q");
	CHECK_INT(conn_of(&t, "q")->layer, CONNLAYER_REST);
	CHECK(conn_of(&t, "q")->over);
	CHECK_INT(conn_of(&t, "q")->under, CONNLAYER_FLEET);
	settings_destroy(&t);
	/* Allowed by the worker file, the fleet's p replaces the files'; the
	 * REST API's over both. */
	write_worker("fleet.allow.replace.local=true\n");
	CHECK_INT(settings_load(paths, 2, &t, err, sizeof(err)), 0);
	CHECK(connlayer_replaces(t.layers[CONNLAYER_FLEET]));
	CHECK_STR(topic_of(&t, "p"), "fleet-p");
	CHECK_INT(conn_of(&t, "p")->layer, CONNLAYER_FLEET);
	CHECK(conn_of(&t, "p")->over);
	CHECK_INT(conn_of(&t, "p")->under, CONNLAYER_FILES);
	CHECK(settings_refused(&t, CONNLAYER_FLEET, "p") == NULL);
	settings_destroy(&t);
	write_layer(CONNLAYER_REST, "p", "rest-p");
	CHECK_INT(settings_load(paths, 2, &t, err, sizeof(err)), 0);
	CHECK_STR(topic_of(&t, "p"), "rest-p");
	CHECK_INT(conn_of(&t, "p")->under, CONNLAYER_FLEET);
	settings_destroy(&t);
	write_worker("");
	/* A fleet deletion of the files' p: refused by default too. */
	write_layer(CONNLAYER_REST, "p", NULL);
	write_layer(CONNLAYER_FLEET, "p", NULL);
	CHECK_INT(settings_load(paths, 2, &t, err, sizeof(err)), 0);
	CHECK(conn_of(&t, "p") == NULL); /* the REST API's deletion */
	settings_destroy(&t);
	stop(r, &s);
}

/* SIGHUP reloads the files and lays the layers as they run over them: the
 * fleet's connectors stay; its policy is the worker file's as re-read. */
static void test_sighup_keeps_fleet_layer(void)
{
	struct settings s;
	struct reload *r;

	make_dir();
	write_layer(CONNLAYER_FLEET, "f", "fleet-f");
	r = begin(&s);
	CHECK_INT(fk.nslots, 2);
	CHECK_STR(topic_of(&s, "f"), "fleet-f");
	CHECK(!connlayer_replaces(s.layers[CONNLAYER_FLEET]));
	/* Another fleet file now (a restart would read it): SIGHUP keeps the
	 * layer that runs, not the file. */
	write_layer(CONNLAYER_FLEET, "g", "fleet-g");
	write_connector("t2");
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, "dcoae"); /* p changed; f kept as it ran */
	CHECK_STR(topic_of(&s, "p"), "t2");
	CHECK_STR(topic_of(&s, "f"), "fleet-f");
	CHECK_INT(conn_of(&s, "f")->layer, CONNLAYER_FLEET);
	CHECK(conn_of(&s, "g") == NULL);
	CHECK(!connlayer_replaces(s.layers[CONNLAYER_FLEET]));
	write_worker("fleet.allow.replace.local=true\n");
	reload_ask(r);
	reload_turn(r);
	CHECK(connlayer_replaces(s.layers[CONNLAYER_FLEET]));
	CHECK_STR(topic_of(&s, "f"), "fleet-f");
	CHECK(conn_of(&s, "g") == NULL);
	stop(r, &s);
}

/* The fleet's layer's guard (settings_guard), set once after the first
 * load: each connector of that layer carries it, across a SIGHUP and a
 * fleet change (a connector it adds too), and no other connector does. */
static void test_layer_guard_carried(void)
{
	static const struct source_guard g = {0};
	struct settings s;
	struct reload *r;

	make_dir();
	write_layer(CONNLAYER_FLEET, "f", "fleet-f");
	r = begin(&s);
	CHECK(conn_of(&s, "f")->guard == NULL);
	settings_guard(&s, CONNLAYER_FLEET, &g);
	CHECK(conn_of(&s, "f")->guard == &g);
	CHECK(conn_of(&s, "p")->guard == NULL);
	write_layer(CONNLAYER_FLEET, "g", "fleet-g");
	write_connector("t2");
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(topic_of(&s, "p"), "t2"); /* a new settings went live */
	CHECK(s.guards[CONNLAYER_FLEET] == &g);
	CHECK(s.guards[CONNLAYER_FILES] == NULL && s.guards[CONNLAYER_REST] == NULL);
	CHECK(conn_of(&s, "f")->guard == &g);
	CHECK(conn_of(&s, "p")->guard == NULL);
	stop(r, &s);
}

/* ---- a control client's change aimed at the fleet's layer --------------- */

static struct client {
	int dones, rc;
	char why[2048];
	int vets;
	char vetted_topic[64];
	enum connlayer_kind vetted_layer;
	const char *refuse; /* vet's answer: NULL lets it go */
	struct reload *r;
	const struct query_change *again; /* done starts it */
	int again_rc;
} cl;

static int c_vet(void *arg, const struct connector_settings *cs, char *why, size_t len)
{
	const char *topic = config_shown(cs->cfg, "topic");

	CHECK(arg == &cl);
	cl.vets++;
	cl.vetted_layer = cs->layer;
	snprintf(cl.vetted_topic, sizeof(cl.vetted_topic), "%s", topic != NULL ? topic : "");
	if (cl.refuse == NULL)
		return 0;
	snprintf(why, len, "connector %s: %s", cs->name, cl.refuse);
	return -1;
}

static void c_done(void *arg, int rc, const char *why)
{
	char err[256];

	CHECK(arg == &cl);
	cl.dones++;
	cl.rc = rc;
	snprintf(cl.why, sizeof(cl.why), "%s", why);
	if (cl.again != NULL) {
		const struct query_change *next = cl.again;

		cl.again = NULL;
		cl.again_rc = reload_layer_change(cl.r, next, err, sizeof(err));
	}
}

static cJSON *fleet_config(const char *name, const char *topic)
{
	char text[1024];

	snprintf(text, sizeof(text),
	         "{\"name\":\"%s\",\"connector.class\":\"FileStreamSource\","
	         "\"file\":\"%s/app.log\",\"topic\":\"%s\"}",
	         name, dir, topic);
	return cJSON_Parse(text);
}

static struct query_change fleet_put(const char *name, const cJSON *config)
{
	return (struct query_change){.layer = CONNLAYER_FLEET,
	                             .op = QUERY_CHANGE_PUT,
	                             .name = name,
	                             .config = config,
	                             .vet = c_vet,
	                             .done = c_done,
	                             .arg = &cl};
}

static bool exists(const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* A fleet change is a reload: taken at once, applied at the turn's end,
 * vetted on the resolved connector, done once, kept in its layer's file. */
static void test_fleet_change_applied(void)
{
	struct settings s;
	struct reload *r = start(&s);
	cJSON *cfg = fleet_config("f", "fleet-f");
	struct query_change ch = fleet_put("f", cfg);
	static const struct source_guard g = {0};
	char err[256];

	settings_guard(&s, CONNLAYER_FLEET, &g);
	memset(&cl, 0, sizeof(cl));
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	CHECK_INT(fk.soon, 1); /* the next turn does not sleep */
	CHECK_INT(cl.dones, 0);
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_ERR_STATE); /* busy */
	CHECK(strstr(err, "concurrent config change") != NULL);
	reload_turn(r);
	CHECK_INT(cl.dones, 1);
	CHECK_INT(cl.rc, 0);
	CHECK_STR(cl.why, "");
	CHECK_INT(cl.vets, 1);
	CHECK_STR(cl.vetted_topic, "fleet-f");
	CHECK_INT(cl.vetted_layer, CONNLAYER_FLEET);
	CHECK_STR(fk.order, "oae"); /* p untouched: no drain; f opened */
	CHECK_STR(topic_of(&s, "f"), "fleet-f");
	CHECK_INT(conn_of(&s, "f")->layer, CONNLAYER_FLEET);
	CHECK(conn_of(&s, "f")->guard == &g); /* the fleet's layer's guard */
	CHECK(conn_of(&s, "p")->guard == NULL);
	CHECK(exists(CONNLAYER_FLEET_FILE));
	CHECK(!exists(CONNLAYER_REST_FILE));
	reload_turn(r); /* nothing more */
	CHECK_INT(cl.dones, 1);
	/* A deletion of a connector only the fleet gave drops its entry. */
	ch.op = QUERY_CHANGE_DELETE;
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	CHECK_INT(cl.rc, 0);
	CHECK_INT(cl.vets, 1); /* not for a deletion */
	CHECK(conn_of(&s, "f") == NULL);
	CHECK_INT(connlayer_count(s.layers[CONNLAYER_FLEET]), 0);
	cJSON_Delete(cfg);
	stop(r, &s);
}

/* vet refuses: nothing stops, nothing is kept, done says why. */
static void test_vet_refuses(void)
{
	struct settings s;
	struct reload *r = start(&s);
	cJSON *cfg = fleet_config("p", "elsewhere");
	struct query_change ch = fleet_put("p", cfg);
	char err[256];

	memset(&cl, 0, sizeof(cl));
	cl.refuse = "topic elsewhere is outside fleet.allow.topics";
	write_worker("fleet.allow.replace.local=true\n");
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 1);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK_STR(cl.why, "connector p: topic elsewhere is outside fleet.allow.topics");
	CHECK_STR(cl.vetted_topic, "elsewhere");
	CHECK_STR(fk.order, ""); /* refused before anything stopped */
	CHECK_STR(topic_of(&s, "p"), "t");
	CHECK_INT(conn_of(&s, "p")->layer, CONNLAYER_FILES);
	CHECK_INT(connlayer_count(s.layers[CONNLAYER_FLEET]), 0);
	CHECK(!exists(CONNLAYER_FLEET_FILE));
	cJSON_Delete(cfg);
	stop(r, &s);
}

/* The fleet over a connector of the files: refused unless the worker file
 * says fleet.allow.replace.local=true, then applied as SIGHUP would
 * (drained, closed, opened with the new settings). */
static void test_fleet_over_files(void)
{
	struct settings s;
	struct reload *r = start(&s);
	cJSON *cfg = fleet_config("p", "fleet-p");
	struct query_change ch = fleet_put("p", cfg);
	char err[256];

	memset(&cl, 0, sizeof(cl));
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 1);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK(strstr(cl.why, "connector p: the fleet's configuration is refused: a connector of "
	                     "that name comes from the configuration files (") != NULL);
	CHECK(strstr(cl.why, "fleet.allow.replace.local=true") != NULL);
	CHECK_INT(cl.vets, 0);
	CHECK_STR(fk.order, "");
	CHECK_STR(topic_of(&s, "p"), "t");
	CHECK(!exists(CONNLAYER_FLEET_FILE));
	/* Nor may a fleet deletion remove it. */
	ch.op = QUERY_CHANGE_DELETE;
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK_STR(topic_of(&s, "p"), "t");
	/* Allowed: the fleet's p replaces the files' one. */
	ch.op = QUERY_CHANGE_PUT;
	write_worker("fleet.allow.replace.local=true\n");
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 3);
	CHECK_INT(cl.rc, 0);
	CHECK_STR(fk.order, "dcoae");
	CHECK_STR(topic_of(&s, "p"), "fleet-p");
	CHECK_INT(conn_of(&s, "p")->layer, CONNLAYER_FLEET);
	CHECK(connlayer_replaces(s.layers[CONNLAYER_FLEET]));
	/* SIGHUP keeps it, and the layer's policy. */
	memset(fk.order, 0, sizeof(fk.order));
	reload_ask(r);
	reload_turn(r);
	CHECK_STR(fk.order, "ae");
	CHECK_STR(topic_of(&s, "p"), "fleet-p");
	CHECK_INT(cl.dones, 3);
	cJSON_Delete(cfg);
	stop(r, &s);
}

/* What the REST API gives or deleted, a fleet change may not override
 * (the person at the device has the last word) unless the worker file says
 * fleet.allow.replace.local=true. */
static void test_fleet_under_rest(void)
{
	struct settings s;
	struct reload *r;
	cJSON *q = NULL, *d = NULL;
	struct query_change ch;
	char err[256];

	make_dir();
	write_layer(CONNLAYER_REST, "q", "rest-q");
	write_layer(CONNLAYER_REST, "d", NULL);
	r = begin(&s);
	q = fleet_config("q", "fleet-q");
	d = fleet_config("d", "fleet-d");
	memset(&cl, 0, sizeof(cl));
	ch = fleet_put("q", q);
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 1);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK(strstr(cl.why, "connector q: the change is refused: the REST API gives a connector "
	                     "of that name (") != NULL);
	CHECK_STR(topic_of(&s, "q"), "rest-q");
	ch = fleet_put("d", d);
	CHECK_INT(reload_layer_change(r, &ch, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK(strstr(cl.why, "the REST API deleted a connector of that name") != NULL);
	CHECK(conn_of(&s, "d") == NULL);
	CHECK(!exists(CONNLAYER_FLEET_FILE));
	cJSON_Delete(q);
	cJSON_Delete(d);
	stop(r, &s);
}

/* One change at a time: done may start the next, applied at the next turn;
 * each done called once; a configuration that does not load is refused. */
static void test_changes_in_sequence(void)
{
	struct settings s;
	struct reload *r = start(&s);
	cJSON *a = fleet_config("a", "ta"), *bad = fleet_config("b", "tb");
	struct query_change first = fleet_put("a", a), second = fleet_put("b", bad);
	char err[256];

	cJSON_ReplaceItemInObject(bad, "connector.class", cJSON_CreateString("NoSuchClass"));
	memset(&cl, 0, sizeof(cl));
	cl.r = r;
	cl.again = &second;
	CHECK_INT(reload_layer_change(r, &first, err, sizeof(err)), REST_PENDING);
	reload_turn(r);
	CHECK_INT(cl.dones, 1);
	CHECK_INT(cl.rc, 0);
	CHECK_INT(cl.again_rc, REST_PENDING); /* taken from inside done */
	CHECK_INT(fk.soon, 2);
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	CHECK_INT(cl.rc, REST_ERR_ARG);
	CHECK(strstr(cl.why, "NoSuchClass") != NULL);
	CHECK(conn_of(&s, "b") == NULL);
	CHECK_STR(topic_of(&s, "a"), "ta");
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	/* While the worker drains, a change is refused at once, done never
	 * called. */
	fk.draining = true;
	CHECK_INT(reload_layer_change(r, &first, err, sizeof(err)), REST_ERR_STATE);
	fk.draining = false;
	reload_turn(r);
	CHECK_INT(cl.dones, 2);
	cJSON_Delete(a);
	cJSON_Delete(bad);
	stop(r, &s);
}

int main(void)
{
	test_no_files();
	test_unchanged();
	test_changed();
	test_refused_open_goes_back();
	test_restart_key_refused();
	test_flush_timings();
	test_change_while_draining();
	test_layer_order();
	test_sighup_keeps_fleet_layer();
	test_layer_guard_carried();
	test_fleet_change_applied();
	test_vet_refuses();
	test_fleet_over_files();
	test_fleet_under_rest();
	test_changes_in_sequence();
	return testlib_done("test_reload");
}
