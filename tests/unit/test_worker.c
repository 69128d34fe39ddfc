/* Unit tests for worker.c's set-up: out of memory at any allocation of
 * worker_new is WORKER_ERR_NOMEM (exit 75, restart me), never the
 * configuration error (exit 78) it was reported as before. No broker is
 * needed: the producer does not connect until a record is produced. */
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"
#include "config/settings.h"
#include "core/stats.h"
#include "testlib.h"
#include "core/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static int fail_at; /* the countdown: the call that makes it 0 fails; 0 off */

void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_at > 0 && --fail_at == 0)
		return NULL;
	return __real_calloc(n, size);
}

static void write_text(const char *path, const char *text)
{
	testlib_write_file(path, text, strlen(text));
}

/* worker_new and worker_start, as main runs them around the store's open. */
static int new_worker(const struct settings *s, struct offsets *o, struct stats *st,
                      struct worker **out, char *errbuf, size_t errlen)
{
	int rc = worker_new(s, st, out, errbuf, errlen);

	if (rc == 0 && (rc = worker_start(*out, o, errbuf, errlen)) != 0) {
		worker_destroy(*out);
		*out = NULL;
	}
	return rc;
}

static void test_out_of_memory_is_transient(void)
{
	char dir[512], wpath[600], cpath[600], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};
	struct settings s;
	struct offsets *o = NULL;
	struct stats *st = NULL;
	int nomem = 0, ok = 0;

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/fd.properties", dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets\n", dir);
	write_text(wpath, text);
	snprintf(text, sizeof(text),
	         "name=fd\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n", dir);
	write_text(cpath, text);
	memset(&s, 0, sizeof(s));
	CHECK_INT(settings_load(paths, 2, &s, errbuf, sizeof(errbuf)), 0);
	snprintf(text, sizeof(text), "%s/offsets", dir);
	CHECK_INT(offsets_open_file(text, &o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(stats_new(&st), 0);
	/* Fail the 1st, 2nd, ... calloc until worker_new gets through. */
	for (int k = 1; k < 200 && !ok; k++) {
		struct worker *w = NULL;
		int rc;

		fail_at = k;
		rc = new_worker(&s, o, st, &w, errbuf, sizeof(errbuf));
		ok = fail_at > 0; /* nothing failed: it got through */
		fail_at = 0;
		if (rc == WORKER_ERR_NOMEM) {
			nomem++;
			CHECK_INT(worker_exit_code(rc), 75);
			CHECK(strstr(errbuf, "out of memory") != NULL);
		} else if (rc != 0) {
			/* Only the source's own open may fail otherwise (it has no
			 * code for out of memory): its text, not the worker's. */
			CHECK_INT(rc, WORKER_ERR_CONFIG);
			CHECK(strncmp(errbuf, "connector fd: ", 14) == 0 &&
			      strcmp(errbuf, "connector fd: out of memory") != 0);
			fprintf(stderr, "calloc %d: the source's open: %s\n", k, errbuf);
		}
		CHECK((rc == 0) == (w != NULL));
		worker_destroy(w);
	}
	CHECK(ok);
	CHECK(nomem >= 5); /* the worker, loop, timers, metrics, sink, acks, records */
	CHECK_INT(worker_exit_code(WORKER_ERR_CONFIG), 78);
	CHECK_INT(worker_exit_code(0), 0);
	stats_destroy(st);
	offsets_destroy(o);
	settings_destroy(&s);
}

/* Fails each calloc of worker_new in turn with connector conn (a properties
 * text) in dir; returns how many failures were reported as a configuration
 * error (exit 78). */
static int config_errors_when_out_of_memory(const char *dir, const char *conn)
{
	char wpath[600], cpath[600], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};
	struct settings s;
	struct offsets *o = NULL;
	struct stats *st = NULL;
	int config = 0, ok = 0;

	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/c.properties", dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets\n", dir);
	write_text(wpath, text);
	write_text(cpath, conn);
	memset(&s, 0, sizeof(s));
	CHECK_INT(settings_load(paths, 2, &s, errbuf, sizeof(errbuf)), 0);
	snprintf(text, sizeof(text), "%s/offsets", dir);
	CHECK_INT(offsets_open_file(text, &o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(stats_new(&st), 0);
	for (int k = 1; k < 400 && !ok; k++) {
		struct worker *w = NULL;
		int rc;

		fail_at = k;
		rc = new_worker(&s, o, st, &w, errbuf, sizeof(errbuf));
		ok = fail_at > 0;
		fail_at = 0;
		if (rc == WORKER_ERR_CONFIG) {
			fprintf(stderr, "calloc %d: exit 78 for: %s\n", k, errbuf);
			config++;
		}
		worker_destroy(w);
	}
	CHECK(ok);
	stats_destroy(st);
	offsets_destroy(o);
	settings_destroy(&s);
	return config;
}

/* Out of memory in a source's open() is SOURCE_ERR_NOMEM: exit 75 like the
 * worker's own (it was 78, "a person must act", on 4247a90). */
static void test_source_out_of_memory_is_transient(void)
{
	char dir[512], conn[1024];

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(conn, sizeof(conn),
	         "name=fd\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n", dir);
	CHECK_INT(config_errors_when_out_of_memory(dir, conn), 0);
	snprintf(conn, sizeof(conn),
	         "name=db\nconnector.class=JdbcSourceConnector\nconnection.url=jdbc:sqlite:%s/"
	         "db.sqlite\nmode=bulk\ntable.whitelist=a,b\ntopic.prefix=p-\n",
	         dir);
	CHECK_INT(config_errors_when_out_of_memory(dir, conn), 0);
}

/* A source registers its counters with their own help at open
 * (env->counter), before any is counted: an exporter lists them at 0. */
static void test_source_counters_registered(void)
{
	char dir[512], wpath[600], cpath[600], text[2048], errbuf[2048];
	char *paths[2] = {wpath, cpath};
	struct settings s;
	struct offsets *o = NULL;
	struct stats *st = NULL;
	struct worker *w = NULL;
	struct stats_view v;
	size_t cur = 0;
	int found = 0;

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(wpath, sizeof(wpath), "%s/worker.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/fd.properties", dir);
	snprintf(text, sizeof(text),
	         "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=%s/offsets\n", dir);
	write_text(wpath, text);
	snprintf(text, sizeof(text),
	         "name=fd\nconnector.class=FileStreamSource\nfile=%s/app.log\ntopic=t\n", dir);
	write_text(cpath, text);
	memset(&s, 0, sizeof(s));
	CHECK_INT(settings_load(paths, 2, &s, errbuf, sizeof(errbuf)), 0);
	snprintf(text, sizeof(text), "%s/offsets", dir);
	CHECK_INT(offsets_open_file(text, &o, errbuf, sizeof(errbuf)), 0);
	CHECK_INT(stats_new(&st), 0);
	CHECK_INT(new_worker(&s, o, st, &w, errbuf, sizeof(errbuf)), 0);
	while (stats_next(st, &cur, &v)) {
		if (strcmp(v.desc->name, "lines_truncated") != 0)
			continue;
		found++;
		CHECK_STR(v.connector, "fd");
		CHECK_STR(v.desc->help, "lines longer than max.line.bytes truncated");
		CHECK(v.desc->flags & STATS_F_LOG);
		CHECK_INT(v.value, 0);
	}
	CHECK_INT(found, 1);
	worker_destroy(w);
	stats_destroy(st);
	offsets_destroy(o);
	settings_destroy(&s);
}

int main(void)
{
	test_out_of_memory_is_transient();
	test_source_out_of_memory_is_transient();
	test_source_counters_registered();
	return testlib_done("test_worker");
}
