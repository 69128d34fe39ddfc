/* test_offsets_scan: documents and journal records checked piece by piece
 * (src/offsets/offsets_scan.c): the verdicts a whole-document cJSON parse gave. */
#include "offsets/offsets_scan.h"
#include "testlib.h"

#include <string.h>

static const char *const names[] = {"format", "generation"};

static bool scan(const char *text, bool nulls, struct offsets_scan *sc)
{
	return offsets_scan(text, strlen(text), names, 2, nulls, sc);
}

static void test_valid(void)
{
	struct offsets_scan sc;

	CHECK(scan(" {\"format\":\"f\",\"generation\":7,\"offsets\":[{\"key\":[\"c\",{\"p\":1}],"
	           "\"value\":{\"position\":12345678901234567890}},{\"key\":[\"c\",{}],\"value\":"
	           "{}}],\"crc32c\":\"x\"}\n",
	           false, &sc));
	CHECK(cJSON_IsString(sc.member[0]) && strcmp(sc.member[0]->valuestring, "f") == 0);
	CHECK(cJSON_IsNumber(sc.member[1]) && sc.member[1]->valuedouble == 7);
	CHECK(sc.has_offsets);
	CHECK_INT(sc.nentries, 2);
	CHECK_INT(sc.bad, -1);
	offsets_scan_free(&sc);
	CHECK(scan("{}", false, &sc) && !sc.has_offsets && sc.member[0] == NULL);
	offsets_scan_free(&sc);
	CHECK(scan("{\"offsets\":[]}", false, &sc) && sc.has_offsets && sc.nentries == 0);
	offsets_scan_free(&sc);
}

static void test_not_json(void)
{
	struct offsets_scan sc;

	CHECK(!scan("", false, &sc));
	CHECK(!scan("[1]", false, &sc));
	CHECK(!scan("{\"generation\":1x}", false, &sc));
	CHECK(!scan("{\"generation\":1 \"format\":\"f\"}", false, &sc));
	CHECK(!scan("{\"generation\":1,}", false, &sc));
	CHECK(!scan("{\"generation\" 1}", false, &sc));
	CHECK(!scan("{\"generation\":1} x", false, &sc));
	CHECK(!scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":{}},]}", false, &sc));
	CHECK(!scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":{]}]}", false, &sc));
	CHECK(!scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":{}}", false, &sc));
}

static void test_shapes(void)
{
	struct offsets_scan sc;

	CHECK(
	    scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":{}},{\"key\":[\"c\"],\"value\":{}}]}",
	         false, &sc));
	CHECK_INT(sc.bad, 1);
	CHECK(sc.why == OFFSETS_SCAN_BAD_KEY);
	offsets_scan_free(&sc);
	CHECK(scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":null}]}", false, &sc));
	CHECK_INT(sc.bad, 0);
	CHECK(sc.why == OFFSETS_SCAN_BAD_VALUE);
	offsets_scan_free(&sc);
	/* A journal record's removal. */
	CHECK(scan("{\"offsets\":[{\"key\":[\"c\",{}],\"value\":null}]}", true, &sc));
	CHECK_INT(sc.bad, -1);
	offsets_scan_free(&sc);
	/* The first "offsets" counts, as the first member of a name in cJSON. */
	CHECK(scan("{\"offsets\":1,\"offsets\":[]}", false, &sc) && !sc.has_offsets);
	offsets_scan_free(&sc);
}

int main(void)
{
	test_valid();
	test_not_json();
	test_shapes();
	return testlib_done("test_offsets_scan");
}
