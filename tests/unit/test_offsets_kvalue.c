/* offsets_kvalue: the offsets topic's value is Connect's (issue 12). */
#include "offsets/offsets_kvalue.h"
#include "testlib.h"

#include <stdbool.h>
#include <string.h>

static bool connect_is(const char *full, const char *want)
{
	char buf[OFFSETS_KVALUE_MAX];
	size_t n = offsets_kvalue_connect(full, buf, sizeof(buf));

	if (want == NULL)
		return n == 0;
	return n == strlen(want) && memcmp(buf, want, n) == 0;
}

int main(void)
{
	/* The file source: position alone, wherever it stands. */
	CHECK(connect_is("{\"position\":1234,\"dev\":64768,\"ino\":99,\"fp\":-7,\"fplen\":1024,"
	                 "\"born\":1700000000000,\"finished\":1}",
	                 "{\"position\":1234}"));
	CHECK(connect_is("{\"dev\":1,\"position\":0}", "{\"position\":0}"));
	/* Connect's already: written whole, no header. */
	CHECK(connect_is("{\"position\":1234}", NULL));
	CHECK(connect_is("{\"incrementing\":5}", NULL));
	CHECK(connect_is("{\"timestamp_nanos\":0,\"incrementing\":5,\"timestamp\":17}", NULL));
	/* The SQLite source's timestamp value: skiff's rowid_seen left out. */
	CHECK(connect_is("{\"timestamp_nanos\":5,\"timestamp\":17,\"rowid_seen\":-3}",
	                 "{\"timestamp_nanos\":5,\"timestamp\":17}"));
	CHECK(connect_is("{\"rowid_seen\":3,\"timestamp\":17}", NULL));
	CHECK(connect_is("{\"cursor\":\"s=1;i=2\",\"seqnums\":{\"a\":3}}", NULL));
	/* Too small a buffer: written whole rather than cut short. */
	{
		char small[8];

		CHECK(offsets_kvalue_connect("{\"position\":1234,\"dev\":1}", small,
		                             sizeof(small)) == 0);
	}
	return testlib_done("test_offsets_kvalue");
}
