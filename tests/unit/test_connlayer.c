/* Unit tests for connlayer.c: the REST API's connectors kept beside the
 * offsets file. */
#include "config/props.h"
#include "config/connlayer.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void test_round_trip(void)
{
	const char *dir = testlib_tmpdir();
	char offsets[512], path[600], err[512];
	struct connlayer *rc = NULL, *a = NULL, *b = NULL, *c = NULL, *back = NULL;
	cJSON *cfg = cJSON_Parse("{\"name\":\"x\",\"connector.class\":\"FileStreamSource\","
	                         "\"topic\":\"${env:T}\"}");
	struct stat st;

	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/" CONNLAYER_REST_FILE, dir);
	/* No file yet: an empty store, kept there. */
	CHECK_INT(connlayer_load(CONNLAYER_REST, offsets, &rc, err, sizeof(err)), 0);
	CHECK_INT(connlayer_count(rc), 0);
	CHECK_STR(connlayer_path(rc), path);
	CHECK_INT(connlayer_with(rc, "x", cfg, false, &a), 0);
	CHECK_INT(connlayer_with(a, "old", NULL, false, &b), 0);
	CHECK_INT(connlayer_count(rc), 0); /* copies: rc unchanged */
	CHECK_INT(connlayer_count(b), 2);
	CHECK_INT(connlayer_find(b, "old"), 1);
	CHECK(connlayer_props(b, 1) == NULL);
	CHECK_STR(props_get(connlayer_props(b, 0), "topic"), "${env:T}"); /* as written */
	CHECK_STR(props_name(connlayer_props(b, 0)), "REST connector x");
	CHECK_INT(props_line(connlayer_props(b, 0), 2), 3);
	CHECK_INT(connlayer_save(b, err, sizeof(err)), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_INT(connlayer_load(CONNLAYER_REST, offsets, &back, err, sizeof(err)), 0);
	CHECK_INT(connlayer_count(back), 2);
	CHECK_STR(connlayer_name(back, 0), "x");
	CHECK(cJSON_Compare(connlayer_config(back, 0), cfg, true));
	CHECK(connlayer_config(back, 1) == NULL);
	/* Changed in place (its order kept), dropped, copied. */
	CHECK_INT(connlayer_with(back, "x", NULL, true, &c), 0);
	CHECK_INT(connlayer_count(c), 1);
	CHECK_STR(connlayer_name(c, 0), "old");
	connlayer_destroy(c);
	CHECK_INT(connlayer_with(back, NULL, NULL, false, &c), 0);
	CHECK_INT(connlayer_count(c), 2);
	connlayer_destroy(c);
	connlayer_destroy(back);
	connlayer_destroy(b);
	connlayer_destroy(a);
	connlayer_destroy(rc);
	/* Without an offsets file: in memory, saved nowhere. */
	CHECK_INT(connlayer_load(CONNLAYER_REST, NULL, &rc, err, sizeof(err)), 0);
	CHECK(connlayer_path(rc) == NULL);
	CHECK_INT(connlayer_with(rc, "x", cfg, false, &a), 0);
	CHECK_INT(connlayer_save(a, err, sizeof(err)), 0);
	connlayer_destroy(a);
	connlayer_destroy(rc);
	cJSON_Delete(cfg);
}

static void test_damaged(void)
{
	static const char *const bad[] = {
	    "{",
	    "{\"format\":\"x\",\"version\":1,\"connectors\":[]}",
	    "{\"format\":\"skiff-rest-connectors\",\"version\":2,\"connectors\":[]}",
	    "{\"format\":\"skiff-rest-connectors\",\"version\":1,\"connectors\":[{\"name\":\"a\"}]"
	    "}",
	    "{\"format\":\"skiff-rest-connectors\",\"version\":1,\"connectors\":"
	    "[{\"name\":\"a\",\"config\":{\"x\":1}}]}",
	    "{\"format\":\"skiff-rest-connectors\",\"version\":1,\"connectors\":"
	    "[{\"name\":\"a\",\"deleted\":true},{\"name\":\"a\",\"deleted\":true}]}",
	};
	const char *dir = testlib_tmpdir();
	char offsets[512], path[600], err[512];
	struct connlayer *rc = NULL;

	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/" CONNLAYER_REST_FILE, dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		testlib_write_file(path, bad[i], strlen(bad[i]));
		CHECK_INT(connlayer_load(CONNLAYER_REST, offsets, &rc, err, sizeof(err)),
		          CONNLAYER_ERR_FORMAT);
		CHECK(rc == NULL);
		CHECK(strstr(err, CONNLAYER_REST_FILE
		             ": not a file of the REST API's connectors") != NULL);
	}
}

/* The fleet's layer: its own file and format, a REST file is not one, and
 * its policy (by default it replaces nothing) kept by copies. */
static void test_fleet_layer(void)
{
	const char *dir = testlib_tmpdir();
	char offsets[512], path[600], err[512], *text = NULL;
	struct connlayer *l = NULL, *a = NULL, *back = NULL;
	cJSON *cfg = cJSON_Parse("{\"name\":\"x\",\"connector.class\":\"FileStreamSource\"}");
	struct stat st;
	FILE *fp;
	long n;

	snprintf(offsets, sizeof(offsets), "%s/fleet/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/fleet/" CONNLAYER_FLEET_FILE, dir);
	snprintf(err, sizeof(err), "%s/fleet", dir);
	CHECK_INT(mkdir(err, 0700), 0);
	CHECK_INT(connlayer_load(CONNLAYER_FLEET, offsets, &l, err, sizeof(err)), 0);
	CHECK_STR(connlayer_path(l), path);
	CHECK_INT(connlayer_kind(l), CONNLAYER_FLEET);
	CHECK(!connlayer_replaces(l));
	connlayer_set_replaces(l, true);
	CHECK_INT(connlayer_with(l, "x", cfg, false, &a), 0);
	CHECK(connlayer_replaces(a));
	CHECK_STR(props_name(connlayer_props(a, 0)), "fleet connector x");
	CHECK_INT(connlayer_save(a, err, sizeof(err)), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	fp = fopen(path, "r");
	CHECK(fp != NULL);
	if (fp != NULL) {
		text = calloc(1, 4096);
		n = (long)fread(text, 1, 4095, fp);
		fclose(fp);
		CHECK(n > 0 && strstr(text, "\"format\":\t\"skiff-fleet-connectors\"") != NULL);
		free(text);
	}
	CHECK_INT(connlayer_load(CONNLAYER_FLEET, offsets, &back, err, sizeof(err)), 0);
	CHECK_INT(connlayer_count(back), 1);
	CHECK(cJSON_Compare(connlayer_config(back, 0), cfg, true));
	connlayer_destroy(back);
	/* A REST file is not the fleet's, nor the fleet's a REST one. */
	CHECK_INT(connlayer_load(CONNLAYER_REST, offsets, &back, err, sizeof(err)), 0);
	CHECK_INT(connlayer_count(back), 0); /* no rest-connectors.json there */
	connlayer_destroy(back);
	testlib_write_file(path,
	                   "{\"format\":\"skiff-rest-connectors\",\"version\":1,"
	                   "\"connectors\":[]}",
	                   strlen("{\"format\":\"skiff-rest-connectors\",\"version\":1,"
	                          "\"connectors\":[]}"));
	CHECK_INT(connlayer_load(CONNLAYER_FLEET, offsets, &back, err, sizeof(err)),
	          CONNLAYER_ERR_FORMAT);
	CHECK(strstr(err, CONNLAYER_FLEET_FILE ": not a file of the fleet's connectors "
	                                       "(skiff-fleet-connectors version 1)") != NULL);
	connlayer_destroy(a);
	connlayer_destroy(l);
	cJSON_Delete(cfg);
}

int main(void)
{
	test_round_trip();
	test_damaged();
	test_fleet_layer();
	return testlib_done("connlayer");
}
