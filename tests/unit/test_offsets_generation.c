/* Unit test for the offset file's generation limit, found by fuzz_offsets: a
 * store at generation 2^53 (the largest the format reads exactly) loads, and
 * its next flush must be refused rather than write 2^53 + 1, which load reads
 * as damage, falling back to the older file on the next start. */
#include "testlib.h"

#include "util/crc32c.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

static void write_sealed(const char *path, const char *body)
{
	char doc[1024];
	int n = snprintf(doc, sizeof(doc), "%s,\"crc32c\":\"%08" PRIx32 "\"}\n", body,
	                 crc32c(0, body, strlen(body)));

	testlib_write_file(path, doc, (size_t)n);
}

int main(void)
{
	const char *dir = testlib_tmpdir();
	char path[512], prev[512], tmp[512], errbuf[1024] = "";
	struct offsets *o = NULL;
	struct offsets_stats st;

	snprintf(path, sizeof(path), "%s/offsets", dir);
	snprintf(prev, sizeof(prev), "%s/offsets.prev", dir);
	snprintf(tmp, sizeof(tmp), "%s/offsets.tmp", dir);
	write_sealed(path, "{\"format\":\"skiff-offsets\",\"version\":1,"
	                   "\"generation\":9007199254740992,\"offsets\":[{\"key\":[\"a\",{}],"
	                   "\"value\":{\"position\":1}}]");
	CHECK_INT(offsets_open_file(path, &o, errbuf, sizeof(errbuf)), 0);
	if (o == NULL)
		return testlib_done("test_offsets_generation");
	offsets_stats(o, &st);
	CHECK(st.generation == UINT64_C(9007199254740992));
	CHECK_INT(offsets_put(o, "[\"a\",{}]", "{\"position\":2}"), 0);
	CHECK_INT(offsets_flush(o, errbuf, sizeof(errbuf)), OFFSETS_ERR_IO);
	CHECK(strstr(errbuf, "2^53") != NULL);
	CHECK(offsets_dirty(o));
	/* Nothing was touched: no rotation, no temp file. */
	CHECK(access(prev, F_OK) != 0);
	CHECK(access(tmp, F_OK) != 0);
	offsets_destroy(o);
	o = NULL;
	CHECK_INT(offsets_open_file(path, &o, errbuf, sizeof(errbuf)), 0);
	if (o != NULL) {
		offsets_stats(o, &st);
		CHECK(st.generation == UINT64_C(9007199254740992));
		CHECK(!st.loaded_from_prev);
		CHECK_STR(offsets_get(o, "[\"a\",{}]"), "{\"position\":1}");
		offsets_destroy(o);
	}
	unlink(path);
	unlink(prev);
	rmdir(dir);
	return testlib_done("test_offsets_generation");
}
