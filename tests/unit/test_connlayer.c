/* Unit tests for restconns.c: the REST API's connectors kept beside the
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
	struct restconns *rc = NULL, *a = NULL, *b = NULL, *c = NULL, *back = NULL;
	cJSON *cfg = cJSON_Parse("{\"name\":\"x\",\"connector.class\":\"FileStreamSource\","
	                         "\"topic\":\"${env:T}\"}");
	struct stat st;

	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/" RESTCONNS_FILE, dir);
	/* No file yet: an empty store, kept there. */
	CHECK_INT(restconns_load(offsets, &rc, err, sizeof(err)), 0);
	CHECK_INT(restconns_count(rc), 0);
	CHECK_STR(restconns_path(rc), path);
	CHECK_INT(restconns_with(rc, "x", cfg, false, &a), 0);
	CHECK_INT(restconns_with(a, "old", NULL, false, &b), 0);
	CHECK_INT(restconns_count(rc), 0); /* copies: rc unchanged */
	CHECK_INT(restconns_count(b), 2);
	CHECK_INT(restconns_find(b, "old"), 1);
	CHECK(restconns_props(b, 1) == NULL);
	CHECK_STR(props_get(restconns_props(b, 0), "topic"), "${env:T}"); /* as written */
	CHECK_STR(props_name(restconns_props(b, 0)), "REST connector x");
	CHECK_INT(props_line(restconns_props(b, 0), 2), 3);
	CHECK_INT(restconns_save(b, err, sizeof(err)), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_INT(restconns_load(offsets, &back, err, sizeof(err)), 0);
	CHECK_INT(restconns_count(back), 2);
	CHECK_STR(restconns_name(back, 0), "x");
	CHECK(cJSON_Compare(restconns_config(back, 0), cfg, true));
	CHECK(restconns_config(back, 1) == NULL);
	/* Changed in place (its order kept), dropped, copied. */
	CHECK_INT(restconns_with(back, "x", NULL, true, &c), 0);
	CHECK_INT(restconns_count(c), 1);
	CHECK_STR(restconns_name(c, 0), "old");
	restconns_destroy(c);
	CHECK_INT(restconns_with(back, NULL, NULL, false, &c), 0);
	CHECK_INT(restconns_count(c), 2);
	restconns_destroy(c);
	restconns_destroy(back);
	restconns_destroy(b);
	restconns_destroy(a);
	restconns_destroy(rc);
	/* Without an offsets file: in memory, saved nowhere. */
	CHECK_INT(restconns_load(NULL, &rc, err, sizeof(err)), 0);
	CHECK(restconns_path(rc) == NULL);
	CHECK_INT(restconns_with(rc, "x", cfg, false, &a), 0);
	CHECK_INT(restconns_save(a, err, sizeof(err)), 0);
	restconns_destroy(a);
	restconns_destroy(rc);
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
	struct restconns *rc = NULL;

	snprintf(offsets, sizeof(offsets), "%s/offsets.json", dir);
	snprintf(path, sizeof(path), "%s/" RESTCONNS_FILE, dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		testlib_write_file(path, bad[i], strlen(bad[i]));
		CHECK_INT(restconns_load(offsets, &rc, err, sizeof(err)), RESTCONNS_ERR_FORMAT);
		CHECK(rc == NULL);
		CHECK(strstr(err, RESTCONNS_FILE ": not a file of the REST API's connectors") !=
		      NULL);
	}
}

int main(void)
{
	test_round_trip();
	test_damaged();
	return testlib_done("restconns");
}
