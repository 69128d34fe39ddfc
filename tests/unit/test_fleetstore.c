/* fleetstore: the fleet's applied state round trip, its bounds, a damaged
 * or newer file named, the previous generation taken when the newest is
 * bad, and a failed write leaving the files as they were. */
#include "fleet/fleetstore.h"

#include "testlib.h"
#include "util/crc32c.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], offsets[512], path[512], prev[600];

/* A fresh state directory per case. */
static void fresh(const char *name)
{
	snprintf(dir, sizeof(dir), "%s/%s", testlib_tmpdir(), name);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(offsets, sizeof(offsets), "%s/offsets", dir);
	snprintf(path, sizeof(path), "%s/" FLEETSTORE_FILE, dir);
	snprintf(prev, sizeof(prev), "%s.prev", path);
}

/* The file's bytes (static storage, "" when missing). */
static const char *slurp(const char *p)
{
	static char buf[1 << 20];
	FILE *f = fopen(p, "rb");
	size_t n = 0;

	buf[0] = '\0';
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Writes body (a document without its closing brace) with a right
 * checksum, as fleetstore_save would. */
static void write_signed(const char *p, const char *body)
{
	char text[4096];
	int n = snprintf(text, sizeof(text), "%s,\"crc32c\":\"%08" PRIx32 "\"}\n", body,
	                 crc32c(0, body, strlen(body)));

	testlib_write_file(p, text, (size_t)n);
}

static struct fleetstore *load_ok(void)
{
	struct fleetstore *fs = NULL;
	char err[1024] = "";

	CHECK_INT(fleetstore_load(offsets, &fs, err, sizeof(err)), 0);
	if (fs == NULL) {
		fprintf(stderr, "load: %s\n", err);
		abort();
	}
	return fs;
}

static void expect_load_error(int want_rc, const char *want1, const char *want2)
{
	struct fleetstore *fs = NULL;
	char err[2048] = "";

	CHECK_INT(fleetstore_load(offsets, &fs, err, sizeof(err)), want_rc);
	CHECK(fs == NULL);
	if (strstr(err, want1) == NULL || (want2 && strstr(err, want2) == NULL)) {
		testlib_failures++;
		fprintf(stderr, "error '%s' lacks '%s' or '%s'\n", err, want1, want2 ? want2 : "");
	}
}

static void fill(struct fleetstore *fs)
{
	struct fleetstore_connector a = {"app",
	                                 {"skiff.config.gw-1", "V1Vw5wSwRlmq6DP5bfq8_A", 15},
	                                 CONNECT_TARGET_STARTED,
	                                 {NULL, NULL, 0}};
	struct fleetstore_connector b = {"db \"main\"\n\xc3\xa9",
	                                 {"skiff.config.group.pi4", "AAAAAAAAAAAAAAAAAAAAAA", 3},
	                                 CONNECT_TARGET_STOPPED,
	                                 {"skiff.config.gw-1", "V1Vw5wSwRlmq6DP5bfq8_A", 12}};

	CHECK_INT(fleetstore_bump(fs), 1);
	CHECK_INT(fleetstore_bump(fs), 2);
	CHECK_INT(fleetstore_topic_set(fs, "skiff.config.gw-1", "V1Vw5wSwRlmq6DP5bfq8_A", 17), 0);
	CHECK_INT(fleetstore_topic_set(fs, "skiff.config.group.pi4", "AAAAAAAAAAAAAAAAAAAAAA", 4),
	          0);
	CHECK_INT(fleetstore_connector_set(fs, &a), 0);
	CHECK_INT(fleetstore_connector_set(fs, &b), 0);
	a.target = CONNECT_TARGET_PAUSED;
	a.target_from =
	    (struct fleetstore_source){"skiff.config.gw-1", "V1Vw5wSwRlmq6DP5bfq8_A", 16};
	CHECK_INT(fleetstore_connector_set(fs, &a), 0); /* replaced, not added */
	CHECK_INT(fleetstore_refusal_add(fs, "V1Vw5wSwRlmq6DP5bfq8_A", 16), 0);
	CHECK_INT(fleetstore_refusal_add(fs, "V1Vw5wSwRlmq6DP5bfq8_A", 16), 0); /* once */
	CHECK_INT(fleetstore_status_key_add(fs, "status-connector-app"), 0);
	CHECK_INT(fleetstore_status_key_add(fs, "status-task-app-0"), 0);
	CHECK_INT(fleetstore_status_key_add(fs, "status-task-app-0"), 0);
	CHECK_INT(fleetstore_status_key_add(fs, "skiff-outcome-app"), 0);
	CHECK(fleetstore_status_key_remove(fs, "skiff-outcome-app"));
	CHECK(!fleetstore_status_key_remove(fs, "skiff-outcome-app"));
}

static void check_filled(const struct fleetstore *fs)
{
	struct fleetstore_connector c;
	const char *id;
	int64_t off;

	CHECK_INT(fleetstore_generation(fs), 2);
	CHECK(fleetstore_topic(fs, "skiff.config.gw-1", &id, &off));
	CHECK_STR(id, "V1Vw5wSwRlmq6DP5bfq8_A");
	CHECK_INT(off, 17);
	CHECK(fleetstore_topic(fs, "skiff.config.group.pi4", &id, &off));
	CHECK_INT(off, 4);
	CHECK(!fleetstore_topic(fs, "skiff.config.gw-2", &id, &off));
	CHECK_INT(fleetstore_connector_count(fs), 2);
	CHECK(fleetstore_connector_find(fs, "app", &c));
	CHECK_STR(c.config_from.topic, "skiff.config.gw-1");
	CHECK_STR(c.config_from.topic_id, "V1Vw5wSwRlmq6DP5bfq8_A");
	CHECK_INT(c.config_from.offset, 15);
	CHECK_INT(c.target, CONNECT_TARGET_PAUSED);
	CHECK_STR(c.target_from.topic, "skiff.config.gw-1");
	CHECK_INT(c.target_from.offset, 16);
	CHECK(fleetstore_connector_find(fs, "db \"main\"\n\xc3\xa9", &c));
	CHECK_INT(c.target, CONNECT_TARGET_STOPPED);
	CHECK_STR(c.config_from.topic, "skiff.config.group.pi4");
	CHECK_STR(c.config_from.topic_id, "AAAAAAAAAAAAAAAAAAAAAA");
	CHECK_INT(c.config_from.offset, 3);
	CHECK_STR(c.target_from.topic_id, "V1Vw5wSwRlmq6DP5bfq8_A");
	CHECK_INT(c.target_from.offset, 12);
	CHECK(fleetstore_refused(fs, "V1Vw5wSwRlmq6DP5bfq8_A", 16));
	CHECK(!fleetstore_refused(fs, "V1Vw5wSwRlmq6DP5bfq8_A", 17));
	CHECK(!fleetstore_refused(fs, "AAAAAAAAAAAAAAAAAAAAAA", 16));
	CHECK_INT(fleetstore_status_key_count(fs), 2);
	CHECK_STR(fleetstore_status_key(fs, 0), "status-connector-app");
	CHECK_STR(fleetstore_status_key(fs, 1), "status-task-app-0");
}

static void test_round_trip(void)
{
	struct fleetstore *fs;
	char err[512];
	struct stat st;

	fresh("round");
	fs = load_ok();
	CHECK_STR(fleetstore_path(fs), path);
	CHECK_INT(fleetstore_generation(fs), 0);
	CHECK_INT(fleetstore_connector_count(fs), 0);
	fill(fs);
	check_filled(fs);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	fleetstore_destroy(fs);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 077) == 0); /* 0600: connector names */
	CHECK(strncmp(slurp(path), "{\"format\":\"skiff-fleet-state\",\"version\":1,", 42) == 0);
	fs = load_ok();
	check_filled(fs);
	/* A removal, saved: the previous generation is kept as .prev. */
	CHECK(fleetstore_connector_remove(fs, "app"));
	CHECK(!fleetstore_connector_remove(fs, "app"));
	CHECK_INT(fleetstore_bump(fs), 3);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	fleetstore_destroy(fs);
	CHECK(exists(prev));
	fs = load_ok();
	CHECK_INT(fleetstore_generation(fs), 3);
	CHECK_INT(fleetstore_connector_count(fs), 1);
	/* A connector never given a target state keeps none. */
	{
		struct fleetstore_connector c = {
		    "fresh", {"t", "id", 1}, CONNECT_TARGET_STARTED, {NULL, NULL, 0}};

		CHECK_INT(fleetstore_connector_set(fs, &c), 0);
		CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
		fleetstore_destroy(fs);
		fs = load_ok();
		CHECK(fleetstore_connector_find(fs, "fresh", &c));
		CHECK(c.target_from.topic == NULL);
		CHECK_INT(c.config_from.offset, 1);
	}
	fleetstore_destroy(fs);
	/* Without a state directory: in memory, save writes nothing. */
	{
		char e[64];

		CHECK_INT(fleetstore_load(NULL, &fs, e, sizeof(e)), 0);
		CHECK(fleetstore_path(fs) == NULL);
		fill(fs);
		CHECK_INT(fleetstore_save(fs, e, sizeof(e)), 0);
		fleetstore_destroy(fs);
	}
}

static void test_bounds(void)
{
	struct fleetstore *fs;
	char big[FLEETSTORE_MAX_TEXT + 2], name[32], err[512];
	struct fleetstore_connector c = {name, {"t", "id", 0}, CONNECT_TARGET_STARTED, {0}};

	fresh("bounds");
	fs = load_ok();
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(fleetstore_status_key_add(fs, big), FLEETSTORE_ERR_ARG);
	big[FLEETSTORE_MAX_TEXT] = '\0';
	CHECK_INT(fleetstore_status_key_add(fs, big), 0);
	CHECK_INT(fleetstore_status_key_add(fs, ""), FLEETSTORE_ERR_ARG);
	CHECK_INT(fleetstore_topic_set(fs, "t", "id", -1), FLEETSTORE_ERR_ARG);
	CHECK_INT(fleetstore_topic_set(fs, "t", "id", FLEETSTORE_MAX_OFFSET + 1),
	          FLEETSTORE_ERR_ARG);
	CHECK_INT(fleetstore_topic_set(fs, "t", "id", FLEETSTORE_MAX_OFFSET), 0);
	CHECK_INT(fleetstore_refusal_add(fs, "", 1), FLEETSTORE_ERR_ARG);
	c.target = (enum connect_target)7;
	snprintf(name, sizeof(name), "x");
	CHECK_INT(fleetstore_connector_set(fs, &c), FLEETSTORE_ERR_ARG);
	c.target = CONNECT_TARGET_STARTED;
	c.config_from.topic = NULL; /* a configuration comes from somewhere */
	CHECK_INT(fleetstore_connector_set(fs, &c), FLEETSTORE_ERR_ARG);
	c.config_from.topic = "t";
	c.target_from = (struct fleetstore_source){"t", "", 0}; /* a topic has an id */
	CHECK_INT(fleetstore_connector_set(fs, &c), FLEETSTORE_ERR_ARG);
	c.target_from = (struct fleetstore_source){"t", "id", -1};
	CHECK_INT(fleetstore_connector_set(fs, &c), FLEETSTORE_ERR_ARG);
	c.target_from = (struct fleetstore_source){NULL, NULL, 0};
	for (int i = 0; i < FLEETSTORE_MAX_CONNECTORS; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		CHECK_INT(fleetstore_connector_set(fs, &c), 0);
	}
	snprintf(name, sizeof(name), "one-more");
	CHECK_INT(fleetstore_connector_set(fs, &c), FLEETSTORE_ERR_FULL);
	snprintf(name, sizeof(name), "c7");
	CHECK_INT(fleetstore_connector_set(fs, &c), 0); /* a replacement still fits */
	for (int i = 1; i < FLEETSTORE_MAX_STATUS_KEYS; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		CHECK_INT(fleetstore_status_key_add(fs, name), 0);
	}
	CHECK_INT(fleetstore_status_key_add(fs, "one-more"), FLEETSTORE_ERR_FULL);
	for (int i = 1; i < FLEETSTORE_MAX_TOPICS; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		CHECK_INT(fleetstore_topic_set(fs, name, "id", i), 0);
	}
	CHECK_INT(fleetstore_topic_set(fs, "one-more", "id", 0), FLEETSTORE_ERR_FULL);
	/* Refusals: the oldest is forgotten first. */
	for (int i = 0; i < FLEETSTORE_MAX_REFUSALS + 10; i++)
		CHECK_INT(fleetstore_refusal_add(fs, "id", i), 0);
	CHECK(!fleetstore_refused(fs, "id", 9));
	CHECK(fleetstore_refused(fs, "id", 10));
	CHECK(fleetstore_refused(fs, "id", FLEETSTORE_MAX_REFUSALS + 9));
	CHECK_INT(fleetstore_refusal_count(fs), FLEETSTORE_MAX_REFUSALS);
	{
		const char *id;
		int64_t off;

		fleetstore_refusal_at(fs, 0, &id, &off); /* the oldest kept */
		CHECK_STR(id, "id");
		CHECK_INT(off, 10);
		fleetstore_refusal_at(fs, FLEETSTORE_MAX_REFUSALS - 1, &id, &off);
		CHECK_INT(off, FLEETSTORE_MAX_REFUSALS + 9);
	}
	/* Full in every way, it saves and loads back (under the file bound). */
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	fleetstore_destroy(fs);
	fs = load_ok();
	CHECK_INT(fleetstore_connector_count(fs), FLEETSTORE_MAX_CONNECTORS);
	CHECK_INT(fleetstore_status_key_count(fs), FLEETSTORE_MAX_STATUS_KEYS);
	CHECK(!fleetstore_refused(fs, "id", 9));
	CHECK(fleetstore_refused(fs, "id", 10));
	CHECK_INT(fleetstore_refusal_add(fs, "id", 1000), 0); /* still the oldest first */
	CHECK(!fleetstore_refused(fs, "id", 10));
	CHECK(fleetstore_refused(fs, "id", 11));
	fleetstore_destroy(fs);
	/* The generation stops at INT32_MAX. */
	fresh("genmax");
	write_signed(path, "{\"format\":\"skiff-fleet-state\",\"version\":1,"
	                   "\"generation\":2147483646,\"topics\":[],\"connectors\":[],"
	                   "\"refusals\":[],\"status_keys\":[]");
	fs = load_ok();
	CHECK_INT(fleetstore_bump(fs), INT32_MAX);
	CHECK_INT(fleetstore_bump(fs), INT32_MAX);
	fleetstore_destroy(fs);
}

/* A damaged file is named; with a good previous generation it is taken,
 * and the next save does not rotate the bad file over it. */
static void test_corrupt(void)
{
	struct fleetstore *fs;
	char err[512], good_prev[4096];

	fresh("corrupt");
	testlib_write_file(path, "garbage\n", 8);
	expect_load_error(FLEETSTORE_ERR_CORRUPT, path, "delete it to start the fleet state over");
	expect_load_error(FLEETSTORE_ERR_CORRUPT, "no checksum at the end", NULL);
	/* Right checksum, wrong content. */
	write_signed(path, "{\"format\":\"skiff-fleet-state\",\"version\":1,\"generation\":-3");
	expect_load_error(FLEETSTORE_ERR_CORRUPT, "a member missing, out of range", NULL);
	write_signed(path, "{\"format\":\"skiff-offsets\",\"version\":1");
	expect_load_error(FLEETSTORE_ERR_CORRUPT, "not a fleet state file", NULL);
	/* A newer skiff's. */
	write_signed(path, "{\"format\":\"skiff-fleet-state\",\"version\":2,\"generation\":9");
	expect_load_error(FLEETSTORE_ERR_VERSION, path, "version 2, written by a newer skiff");

	/* Two generations, the newest torn: the previous one is taken. */
	fresh("fallback");
	fs = load_ok();
	fill(fs);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	CHECK_INT(fleetstore_bump(fs), 3);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	fleetstore_destroy(fs);
	snprintf(good_prev, sizeof(good_prev), "%s", slurp(prev));
	{
		const char *cur = slurp(path);
		size_t n = strlen(cur);

		testlib_write_file(path, cur, n / 2); /* torn */
	}
	fs = load_ok();
	CHECK_INT(fleetstore_generation(fs), 2); /* prev's */
	check_filled(fs);
	CHECK_INT(fleetstore_bump(fs), 3);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	CHECK_STR(slurp(prev), good_prev);                   /* the bad file did not replace it */
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0); /* now path is good: rotated */
	CHECK(strcmp(slurp(prev), good_prev) != 0);
	fleetstore_destroy(fs);
	/* Both bad: both named. */
	testlib_write_file(path, "x", 1);
	testlib_write_file(prev, "{}", 2);
	expect_load_error(FLEETSTORE_ERR_CORRUPT, path,
	                  "delete both to start the fleet state over");
	expect_load_error(FLEETSTORE_ERR_CORRUPT, prev, NULL);
	/* prev alone (a crash between the renames): taken. */
	unlink(path);
	write_signed(prev, "{\"format\":\"skiff-fleet-state\",\"version\":1,"
	                   "\"generation\":5,\"topics\":[],\"connectors\":[],"
	                   "\"refusals\":[],\"status_keys\":[]");
	fs = load_ok();
	CHECK_INT(fleetstore_generation(fs), 5);
	fleetstore_destroy(fs);
}

/* A write that fails halfway (the file size limit: EFBIG) leaves the file
 * and its previous generation as they were, and no temp file. */
static void test_failed_write_keeps_old_file(void)
{
	struct fleetstore *fs;
	struct rlimit old, small;
	char err[512], before[8192], before_prev[8192], tmp[600];
	int rc;

	fresh("failed");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fs = load_ok();
	fill(fs);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	CHECK_INT(fleetstore_save(fs, err, sizeof(err)), 0);
	snprintf(before, sizeof(before), "%s", slurp(path));
	snprintf(before_prev, sizeof(before_prev), "%s", slurp(prev));
	for (int i = 0; i < 200; i++) {
		char k[32];

		snprintf(k, sizeof(k), "status-task-app-%d", i);
		CHECK_INT(fleetstore_status_key_add(fs, k), 0);
	}
	CHECK_INT(fleetstore_bump(fs), 3);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	small = old;
	small.rlim_cur = 1024;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
	rc = fleetstore_save(fs, err, sizeof(err));
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK_INT(rc, FLEETSTORE_ERR_IO);
	CHECK(strstr(err, tmp) != NULL && strstr(err, strerror(EFBIG)) != NULL);
	CHECK_STR(slurp(path), before);
	CHECK_STR(slurp(prev), before_prev);
	CHECK(!exists(tmp));
	fleetstore_destroy(fs);
	fs = load_ok();
	check_filled(fs);
	fleetstore_destroy(fs);
}

int main(void)
{
	test_round_trip();
	test_bounds();
	test_corrupt();
	test_failed_write_keeps_old_file();
	CHECK(strstr(fleetstore_strerror(FLEETSTORE_ERR_VERSION), "newer") != NULL);
	CHECK(strstr(fleetstore_strerror(-99), "unknown") != NULL);
	return testlib_done("test_fleetstore");
}
