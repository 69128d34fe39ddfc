/* Unit tests of the file source's path guard (source_env.allow_path, issue
 * 28): through the real file source's ops, with a guard that allows the
 * files of one glob (as fleet.allow.files would), every file the source
 * opens is checked where it really is before a byte of it is read; a
 * refused one fails the connector with the reason, counted
 * (files_refused), and nothing of it is shipped. */
#include "config/config.h"
#include "config/props.h"
#include "core/source.h"
#include "fleet/fleetallow.h"
#include "sourceenv_fake.h"
#include "testlib.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct source_ops source_file_ops;

/* The test's guard: one glob (FNM_PATHNAME), and every real path asked. */
static char allowed[1024];
static char asked[8192];

static int allow_path(struct source_env *env, const char *real_path, char *why, size_t len)
{
	(void)env;
	size_t at = strlen(asked);

	snprintf(asked + at, sizeof(asked) - at, "%s\n", real_path);
	if (fnmatch(allowed, real_path, FNM_PATHNAME) == 0)
		return 0;
	snprintf(why, len, "outside the test's glob (%s)", allowed);
	return -1;
}

/* A file source over props (the file, files or rotated.dirs keys), with
 * the test's guard unless f has one, in f. NULL when open fails. */
static void *open_src(struct sourceenv_fake *f, const char *keys)
{
	static const struct config_key conn_keys[] = {
	    {"connector.class", CFG_CLASS, NULL, 0, 0, NULL, 0, "the source", CFG_NOFIELD},
	    CFG_END,
	};
	const struct config_key *tables[] = {conn_keys, source_file_ops.config_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 2};
	struct config_section *cfg = NULL;
	struct props *p = NULL;
	char buf[2048], err[512] = "";
	void *ctx = NULL;

	if (f->env.allow_path == NULL)
		f->env.allow_path = allow_path;
	snprintf(buf, sizeof(buf), "connector.class=FileStreamSource\ntopic=t\n%s", keys);
	if (props_load_mem("test.properties", buf, strlen(buf), &p, err, sizeof(err)) != 0 ||
	    config_section_load(p, &spec, &cfg, err, sizeof(err)) != 0 ||
	    source_file_ops.open(cfg, &f->env, &ctx, err, sizeof(err)) != 0)
		fprintf(stderr, "open: %s\n", err);
	config_section_destroy(cfg);
	props_destroy(p);
	return ctx;
}

/* What polls of ctx give, up to 10 polls or the first failure: the lines
 * shipped into got ("line\n" each), the failure's text into errbuf.
 * Returns the last poll's code. The last record's offset is committed in
 * f (as the worker would once Kafka acknowledged it). */
static int poll_some(void *ctx, struct sourceenv_fake *f, char *got, size_t gotlen, char *errbuf,
                     size_t errlen)
{
	static struct record recs[64];
	static int64_t now = 1000;
	int rc = 0;

	got[0] = errbuf[0] = '\0';
	for (int i = 0; i < 10 && rc == 0; i++, now += 300) {
		struct source_batch b = {.records = recs, .max = 64};

		rc = source_file_ops.poll(ctx, &b, now, errbuf, errlen);
		for (size_t k = 0; k < b.n; k++) {
			size_t at = strlen(got);

			snprintf(got + at, gotlen - at, "%.*s\n", (int)recs[k].value.len,
			         recs[k].value.bytes);
		}
		if (rc == 0 && b.n > 0)
			sourceenv_fake_take(
			    f, recs[b.n - 1].part,
			    source_file_ops.offset_json(ctx, &recs[b.n - 1].offset));
	}
	return rc;
}

struct dirs {
	char top[PATH_MAX]; /* the test's tmpdir, links resolved */
	char app[512], secret[512];
};

static void make_dirs(struct dirs *d, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%.900s/%.100s", testlib_tmpdir(), name);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(realpath(path, d->top) != NULL);
	snprintf(d->app, sizeof(d->app), "%.400s/app", d->top);
	snprintf(d->secret, sizeof(d->secret), "%.400s/secret", d->top);
	CHECK(mkdir(d->app, 0700) == 0);
	CHECK(mkdir(d->secret, 0700) == 0);
}

/* A link inside the allowed directory to a file outside: refused where it
 * opens, the connector fails naming both paths and the allowed glob,
 * counted once; nothing of the secret shipped. The file beside it, inside,
 * is read as ever (a guard that allows is no change). */
static void test_symlink_to_outside(void)
{
	struct sourceenv_fake f;
	struct dirs d;
	char path[1024], target[1024], got[4096], err[1024], keys[1024], want[4096];
	void *ctx;
	int rc;

	make_dirs(&d, "symlink");
	snprintf(allowed, sizeof(allowed), "%s/*.log", d.app);
	snprintf(target, sizeof(target), "%s/shadow", d.secret);
	testlib_write_file(target, "root:SECRET\n", 12);
	snprintf(path, sizeof(path), "%s/good.log", d.app);
	testlib_write_file(path, "good line\n", 10);
	snprintf(path, sizeof(path), "%s/x.log", d.app);
	CHECK(symlink(target, path) == 0);

	/* The file inside alone: read, its real path asked. */
	sourceenv_fake_init(&f, "app");
	snprintf(keys, sizeof(keys), "file=%s/good.log\n", d.app);
	asked[0] = '\0';
	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	rc = poll_some(ctx, &f, got, sizeof(got), err, sizeof(err));
	CHECK_INT(rc, 0);
	CHECK_STR(got, "good line\n");
	CHECK(strstr(asked, "/app/good.log\n") != NULL);
	CHECK_INT(sourceenv_fake_counted(&f, "files_refused"), 0);
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);

	/* The glob matches the link too: the connector fails. */
	sourceenv_fake_init(&f, "app");
	snprintf(keys, sizeof(keys), "files=%s/*.log\n", d.app);
	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	rc = poll_some(ctx, &f, got, sizeof(got), err, sizeof(err));
	CHECK_INT(rc, SOURCE_ERR_CONFIG);
	snprintf(want, sizeof(want), "file %s resolves to %s, outside the test's glob (%s)", path,
	         target, allowed);
	CHECK_STR(err, want);
	CHECK(strstr(got, "SECRET") == NULL);
	CHECK_INT(sourceenv_fake_counted(&f, "files_refused"), 1);
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* A path that reads as inside (app/link/../leak.log, lexically
 * app/leak.log) but goes through a link to a directory outside: the
 * kernel's ".." is the link target's parent, and so is the guard's. */
static void test_dotdot_through_linked_dir(void)
{
	struct sourceenv_fake f;
	struct dirs d;
	char path[1024], inner[1024], link[1024], target[1024], got[4096], err[1024], keys[1024],
	    want[4096];
	void *ctx;

	make_dirs(&d, "dotdot");
	snprintf(allowed, sizeof(allowed), "%s/*", d.app);
	snprintf(inner, sizeof(inner), "%s/inner", d.secret);
	CHECK(mkdir(inner, 0700) == 0);
	snprintf(target, sizeof(target), "%s/leak.log", d.secret);
	testlib_write_file(target, "SECRET\n", 7);
	snprintf(link, sizeof(link), "%s/link", d.app);
	CHECK(symlink(inner, link) == 0);
	snprintf(path, sizeof(path), "%s/link/../leak.log", d.app);

	sourceenv_fake_init(&f, "app");
	snprintf(keys, sizeof(keys), "file=%.900s\n", path);
	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	CHECK_INT(poll_some(ctx, &f, got, sizeof(got), err, sizeof(err)), SOURCE_ERR_CONFIG);
	snprintf(want, sizeof(want), "file %s resolves to %s, outside the test's glob (%s)", path,
	         target, allowed);
	CHECK_STR(err, want);
	CHECK_STR(got, "");
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
}

/* A rotated copy is a file of its own name: the glob that allows app.log
 * does not allow app.log.1 (strict: the real path must match). Resumed
 * after a rotation, the rest of the old file is in app.log.1: refused,
 * the connector fails, nothing shipped from it; with a glob that covers
 * the rotated names (app.log*), the same resume reads it. */
static void rotated_resume(const char *glob_tail, bool allowed_too)
{
	struct sourceenv_fake f;
	struct dirs d;
	char path[1024], rotated[1024], got[4096], err[1024], keys[1024], want[4096];
	void *ctx;
	FILE *fp;

	make_dirs(&d, allowed_too ? "rotated-ok" : "rotated");
	snprintf(allowed, sizeof(allowed), "%s/%s", d.app, glob_tail);
	snprintf(path, sizeof(path), "%s/app.log", d.app);
	snprintf(rotated, sizeof(rotated), "%s/app.log.1", d.app);
	testlib_write_file(path, "one\n", 4);

	sourceenv_fake_init(&f, "app");
	snprintf(keys, sizeof(keys), "file=%.900s\n", path);
	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	CHECK_INT(poll_some(ctx, &f, got, sizeof(got), err, sizeof(err)), 0);
	CHECK_STR(got, "one\n");
	source_file_ops.close(ctx);

	/* Written while skiff was away, then rotated (logrotate's create). */
	fp = fopen(path, "a");
	CHECK(fp != NULL);
	if (fp != NULL) {
		fputs("two\n", fp);
		fclose(fp);
	}
	CHECK(rename(path, rotated) == 0);
	testlib_write_file(path, "three\n", 6);

	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	if (allowed_too) {
		CHECK_INT(poll_some(ctx, &f, got, sizeof(got), err, sizeof(err)), 0);
		CHECK_STR(got, "two\nthree\n");
	} else {
		CHECK_INT(poll_some(ctx, &f, got, sizeof(got), err, sizeof(err)),
		          SOURCE_ERR_CONFIG);
		snprintf(want, sizeof(want), "file %s is outside the test's glob (%s)", rotated,
		         allowed);
		CHECK_STR(err, want);
		CHECK(strstr(got, "two") == NULL);
		CHECK_INT(sourceenv_fake_counted(&f, "files_refused"), 1);
	}
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
}

static void test_rotated_copy_needs_its_own_name(void)
{
	rotated_resume("app.log", false);
	rotated_resume("app.log*", true);
}

/* The fleet's guard (fleetallow_guard) as the worker's env offers it
 * (source_env.c's env_allow_path): the trace a user reads. */
static struct source_guard fleet_guard;

static int via_fleet_guard(struct source_env *env, const char *real_path, char *why, size_t len)
{
	(void)env;
	return fleet_guard.allow_path(fleet_guard.arg, real_path, why, len);
}

static void test_fleet_guard_trace(void)
{
	struct sourceenv_fake f;
	struct dirs d;
	struct fleet_allow_conf a = {0};
	const char *items[1];
	char glob[1024], path[1024], target[1024], got[4096], err[1024], keys[1024], want[4096];
	void *ctx;

	make_dirs(&d, "fleet");
	snprintf(glob, sizeof(glob), "%s/*.log", d.app);
	items[0] = glob;
	a.files = (struct config_list){.n = 1, .items = items, .text = glob};
	fleetallow_guard(&a, &fleet_guard);
	snprintf(target, sizeof(target), "%s/shadow", d.secret);
	testlib_write_file(target, "root:SECRET\n", 12);
	snprintf(path, sizeof(path), "%s/x.log", d.app);
	CHECK(symlink(target, path) == 0);

	sourceenv_fake_init(&f, "app");
	snprintf(keys, sizeof(keys), "file=%.900s\n", path);
	f.env.allow_path = via_fleet_guard;
	ctx = open_src(&f, keys);
	CHECK(ctx != NULL);
	CHECK_INT(poll_some(ctx, &f, got, sizeof(got), err, sizeof(err)), SOURCE_ERR_CONFIG);
	snprintf(want, sizeof(want), "file %s resolves to %s, outside fleet.allow.files (%s)", path,
	         target, glob);
	CHECK_STR(err, want);
	CHECK_STR(got, "");
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
}

int main(void)
{
	test_symlink_to_outside();
	test_dotdot_through_linked_dir();
	test_rotated_copy_needs_its_own_name();
	test_fleet_guard_trace();
	return testlib_done("source_file_guard");
}
