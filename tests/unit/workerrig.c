/* workerrig: a real worker around a scripted source and fake producers;
 * see workerrig.h. */
#include "workerrig.h"

#include "config/settings.h"
#include "core/connectors.h"
#include "core/source.h"
#include "core/stats.h"
#include "core/worker.h"
#include "core/worker_private.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct workerrig_sinks workerrig_sinks;

static char base[256]; /* the rig's directories are under it ("": none yet) */
static int ndirs;
static struct source_ops scripted;
static struct workerrig_script *live; /* the up rig's script */

/* ---- the scripted source ------------------------------------------------- */

static int sopen(const struct config_section *cfg, struct source_env *env, void **ctx, char *errbuf,
                 size_t errlen)
{
	struct workerrig_script *sc = live;

	(void)cfg;
	sc->opens++;
	sc->part = env->partition(env, "{\"f\":\"a\"}");
	*ctx = sc;
	if (sc->part == NULL) {
		snprintf(errbuf, errlen, "no partition");
		return SOURCE_ERR_NOMEM;
	}
	return 0;
}

static int spoll(void *ctx, struct source_batch *b, int64_t now, char *errbuf, size_t errlen)
{
	struct workerrig_script *sc = ctx;

	(void)now;
	(void)errbuf;
	(void)errlen;
	sc->polls++;
	while (b->n < b->max && b->n < 4 && sc->next <= sc->total) {
		struct record *r = &b->records[b->n++];
		int i = sc->next++;
		char *line = sc->lines[i % 64];

		memset(r, 0, sizeof(*r));
		snprintf(line, sizeof(sc->lines[0]), "line %d", i);
		r->part = sc->part;
		r->offset.v[0] = i;
		r->topic = "t";
		r->value.kind = VALUE_STRING;
		r->value.bytes = line;
		r->value.len = strlen(line);
	}
	b->more = sc->next <= sc->total; /* at most 4 a poll: more come at once */
	return 0;
}

static int64_t stimeout(void *ctx, int64_t now)
{
	(void)ctx;
	(void)now;
	return 2;
}

static char *sjson(void *ctx, const struct src_offset *off)
{
	char buf[64];

	(void)ctx;
	snprintf(buf, sizeof(buf), "{\"position\":%lld}", (long long)off->v[0]);
	return strdup(buf);
}

static void sclose(void *ctx)
{
	struct workerrig_script *sc = ctx;

	if (sc != NULL)
		sc->closes++;
}

/* p's ops with the script's calls: what the rig does not script (its
 * config keys, its name) stays the file source's. */
static const struct source_ops *script_ops(const struct source_ops *file)
{
	scripted = *file;
	scripted.open = sopen;
	scripted.poll = spoll;
	scripted.pollfds = NULL;
	scripted.timeout_ms = stimeout;
	scripted.watch = NULL;
	scripted.offset_json = sjson;
	scripted.stopping = NULL;
	scripted.backlog = NULL;
	scripted.close = sclose;
	return &scripted;
}

/* ---- the settings -------------------------------------------------------- */

void workerrig_settings(struct settings *s, const char *worker_keys, const char *connector_keys)
{
	char dir[300], wpath[400], cpath[400], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};

	if (base[0] == '\0')
		snprintf(base, sizeof(base), "%s", testlib_tmpdir());
	snprintf(dir, sizeof(dir), "%s/%d", base, ndirs++);
	CHECK_INT(mkdir(dir, 0755), 0);
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/p.properties", dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets.json\n"
	         "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
	         "offset.flush.interval.ms=1\noffset.flush.timeout.ms=200\n%s",
	         dir, worker_keys != NULL ? worker_keys : "");
	testlib_write_file(wpath, text, strlen(text));
	snprintf(text, sizeof(text),
	         "name=p\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n%s", dir,
	         connector_keys != NULL ? connector_keys : "");
	testlib_write_file(cpath, text, strlen(text));
	memset(s, 0, sizeof(*s));
	CHECK_INT(settings_load(paths, 2, s, errbuf, sizeof(errbuf)), 0);
}

/* ---- the producers ------------------------------------------------------- */

int workerrig_open_sink(const struct config_section *worker, sink_delivery_fn cb, void *cb_ctx,
                        struct sink **out, char *errbuf, size_t errlen)
{
	struct workerrig_sinks *k = &workerrig_sinks;
	struct sinkfake *f;

	(void)worker;
	*out = NULL;
	if (k->refuse_next) {
		k->refuse_next = false;
		snprintf(errbuf, errlen, "ssl.key.location: no such key");
		return SINK_ERR_CONFIG;
	}
	if (k->n == WORKERRIG_FAKES) {
		snprintf(errbuf, errlen, "workerrig: more than %d producers", WORKERRIG_FAKES);
		return SINK_ERR_NOMEM;
	}
	f = sinkfake_new(cb, cb_ctx, k->capacity);
	if (f == NULL) {
		snprintf(errbuf, errlen, "workerrig: out of memory");
		return SINK_ERR_NOMEM;
	}
	k->made[k->n++] = f;
	*out = sinkfake_sink(f);
	return 0;
}

/* ---- the rig --------------------------------------------------------------- */

void workerrig_up(struct workerrig *r, const struct workerrig_conf *conf)
{
	char errbuf[2048];

	memset(r, 0, sizeof(*r));
	memset(&workerrig_sinks, 0, sizeof(workerrig_sinks));
	workerrig_sinks.capacity = conf->capacity;
	r->sc.total = conf->records;
	r->sc.next = 1;
	live = &r->sc;
	workerrig_settings(&r->s, conf->worker, conf->connector);
	if (!conf->file_source)
		r->s.connectors[0].ops = script_ops(r->s.connectors[0].ops);
	r->s.connectors[0].guard = conf->guard;
	CHECK_INT(offsets_open_file(settings_worker(r->s.worker)->offset_file, &r->o, errbuf,
	                            sizeof(errbuf)),
	          0);
	CHECK_INT(stats_new(&r->st), 0);
	CHECK_INT(
	    worker_new_with(&r->s, r->st, workerrig_open_sink, &r->wk, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(worker_start(r->wk, r->o, errbuf, sizeof(errbuf)), 0);
	r->c = connectors_at(r->wk->conns, 0);
	r->fake = workerrig_sinks.made[0];
}

void workerrig_down(struct workerrig *r)
{
	worker_destroy(r->wk);
	stats_destroy(r->st);
	offsets_destroy(r->o);
	settings_destroy(&r->s);
	live = NULL;
}

int workerrig_turn(struct workerrig *r)
{
	usleep(1200);
	sinkfake_wake(workerrig_sinks.made[workerrig_sinks.n - 1]);
	return worker_turn(r->wk);
}

int workerrig_turns(struct workerrig *r, int n)
{
	for (int i = 0; i < n; i++) {
		int code = workerrig_turn(r);

		if (code != 0)
			return code;
	}
	return 0;
}

void workerrig_cleanup(void)
{
	if (base[0] != '\0')
		testlib_rmtree(base);
	base[0] = '\0';
}
