/* Unit tests of tailwatch through the file source's ops: what a turn costs
 * while most streams wait for a descriptor (max.open.files), counted by
 * the streams it looks at (tailwatch_visits), not timed; and that every
 * waiting stream still gets its turn. */
#include "config/config.h"
#include "config/props.h"
#include "core/source.h"
#include "sources/file/tailwatch.h"
#include "sourceenv_fake.h"
#include "testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct source_ops source_file_ops;

static void *open_glob(struct sourceenv_fake *f, const char *dir)
{
	static const struct config_key conn_keys[] = {
	    {"connector.class", CFG_CLASS, NULL, 0, 0, NULL, 0, "the source", CFG_NOFIELD},
	    CFG_END,
	};
	const struct config_key *tables[] = {conn_keys, source_file_ops.config_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 2};
	struct config_section *cfg = NULL;
	struct props *p = NULL;
	char buf[1024], err[512] = "";
	void *ctx = NULL;

	snprintf(buf, sizeof(buf),
	         "connector.class=FileStreamSource\ntopic=t\nfiles=%s/*.log\nmax.open.files=8\n",
	         dir);
	if (props_load_mem("test.properties", buf, strlen(buf), &p, err, sizeof(err)) != 0 ||
	    config_section_load(p, &spec, &cfg, err, sizeof(err)) != 0 ||
	    source_file_ops.open(cfg, &f->env, &ctx, err, sizeof(err)) != 0)
		fprintf(stderr, "open: %s\n", err);
	config_section_destroy(cfg);
	props_destroy(p);
	return ctx;
}

static void make_files(const char *dir, size_t n)
{
	char path[512];

	for (size_t i = 0; i < n; i++) {
		FILE *fp;

		snprintf(path, sizeof(path), "%s/f%05zu.log", dir, i);
		fp = fopen(path, "w");
		CHECK(fp != NULL);
		if (fp != NULL) {
			fprintf(fp, "line of file %zu\n", i);
			fclose(fp);
		}
	}
}

static void append(const char *dir, size_t i)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/f%05zu.log", dir, i);
	fp = fopen(path, "a");
	CHECK(fp != NULL);
	if (fp != NULL) {
		fputs("appended\n", fp);
		fclose(fp);
	}
}

static void rm_files(const char *dir, size_t n)
{
	char path[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%05zu.log", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

/* The streams a watch turn looks at while reading pauses (the producer
 * queue full), n files through max.open.files=8, a line appended to one
 * file before each turn and 250 ms between turns (past every 200 ms retry
 * of a stream waiting for a descriptor): per turn, over 20 turns once the
 * start is done. */
static double visits_per_turn(size_t n)
{
	char dir[] = "/tmp/skiff-tw-XXXXXX";
	struct sourceenv_fake f;
	void *ctx;
	int64_t now = 1000;
	size_t before;

	sourceenv_fake_init(&f, "test");
	CHECK(mkdtemp(dir) != NULL);
	make_files(dir, n);
	ctx = open_glob(&f, dir);
	CHECK(ctx != NULL);
	if (ctx == NULL)
		return 1e9;
	for (int i = 0; i < 5; i++, now += 250)
		source_file_ops.watch(ctx, now);
	before = tailwatch_visits;
	for (int i = 0; i < 20; i++, now += 250) {
		append(dir, n / 2);
		source_file_ops.watch(ctx, now);
	}
	source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
	rm_files(dir, n);
	return (double)(tailwatch_visits - before) / 20;
}

/* Issue 22: each stream waiting for a descriptor was looked at again every
 * turn, each look a walk of the open list; 20,000 files cost a second of
 * CPU in five with the broker away. A turn's looks must not grow with the
 * streams that only wait. */
static void test_waiting_streams_cost_nothing_per_turn(void)
{
	double small = visits_per_turn(50), large = visits_per_turn(1000);

	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "  visits per turn: 50 files %.1f, 1000 files %.1f\n", small,
		        large);
	CHECK(large <= small + 8);
	CHECK(large <= 64);
}

/* Read while the queue takes records: every file's line comes, through
 * max.open.files=8, the waiting streams served as streams read to their
 * end make room. */
static void test_every_waiting_stream_is_read(void)
{
	char dir[] = "/tmp/skiff-tw-XXXXXX";
	static struct record recs[256];
	static bool seen[400];
	struct source_batch b = {.records = recs, .max = 256};
	struct sourceenv_fake f;
	void *ctx;
	char err[512];
	int64_t now = 1000;
	size_t got = 0;

	sourceenv_fake_init(&f, "test");
	CHECK(mkdtemp(dir) != NULL);
	make_files(dir, 400);
	ctx = open_glob(&f, dir);
	CHECK(ctx != NULL);
	for (int turn = 0; ctx != NULL && turn < 2000 && got < 400; turn++, now += 10) {
		CHECK_INT(source_file_ops.poll(ctx, &b, now, err, sizeof(err)), 0);
		for (size_t i = 0; i < b.n; i++) {
			char line[64];
			size_t k;

			snprintf(line, sizeof(line), "%.*s", (int)recs[i].value.len,
			         recs[i].value.bytes);
			if (sscanf(line, "line of file %zu", &k) == 1 && k < 400 && !seen[k]) {
				seen[k] = true;
				got++;
			}
		}
	}
	CHECK_INT(got, 400);
	if (ctx != NULL)
		source_file_ops.close(ctx);
	sourceenv_fake_free(&f);
	rm_files(dir, 400);
}

int main(void)
{
	test_waiting_streams_cost_nothing_per_turn();
	test_every_waiting_stream_is_read();
	return testlib_done("test_tailwatch");
}
