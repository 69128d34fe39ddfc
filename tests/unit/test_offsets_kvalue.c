/* offsets_kvalue: the offsets topic's value is Connect's (issue 12); what the
 * one codec writes (the store's records, exactly-once's) is what the load
 * reads back (issue 27). */
#include "offsets/offsets_kvalue.h"
#include "testlib.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool connect_is(const char *full, const char *want)
{
	char buf[OFFSETS_KVALUE_MAX];
	size_t n = offsets_kvalue_connect(full, buf, sizeof(buf));

	if (want == NULL)
		return n == 0;
	return n == strlen(want) && memcmp(buf, want, n) == 0;
}

/* The header name of r (NULL: none) as a string. */
static const char *hdr(const struct offsets_krecord *r, size_t i)
{
	static char buf[512];

	if (i >= r->nheaders || r->headers[i].len >= sizeof(buf))
		return NULL;
	memcpy(buf, r->headers[i].value, r->headers[i].len);
	buf[r->headers[i].len] = '\0';
	return buf;
}

/* The record of full written by the store (with store) or by exactly-once
 * (store NULL), then read back as the load reads it: the same offset,
 * generation, device and store. */
static void round_trip(const char *full, const char *store, const char *value, size_t nheaders)
{
	struct offsets_krecord r;
	struct offsets_kmeta meta;
	char *back;

	offsets_kvalue_encode(&r, full, 42, "pi-7", store);
	CHECK(r.vlen == strlen(value) && memcmp(r.value, value, r.vlen) == 0);
	CHECK(r.nheaders == nheaders);
	CHECK(strcmp(r.headers[0].name, "skiff.generation") == 0);
	CHECK(hdr(&r, 0) != NULL && strcmp(hdr(&r, 0), "42") == 0);
	CHECK(strcmp(r.headers[1].name, "skiff.device") == 0);
	CHECK(hdr(&r, 1) != NULL && strcmp(hdr(&r, 1), "pi-7") == 0);
	if (store != NULL) {
		CHECK(strcmp(r.headers[2].name, "skiff.store") == 0);
		CHECK(hdr(&r, 2) != NULL && strcmp(hdr(&r, 2), store) == 0);
	}
	if (nheaders == (store != NULL ? 4u : 3u)) {
		CHECK(strcmp(r.headers[nheaders - 1].name, "skiff.offset") == 0);
		CHECK(hdr(&r, nheaders - 1) != NULL && strcmp(hdr(&r, nheaders - 1), full) == 0);
	}
	offsets_kvalue_meta(r.headers, r.nheaders, &meta);
	CHECK(meta.skiff && meta.gen == 42);
	CHECK(meta.device != NULL && strcmp(meta.device, "pi-7") == 0);
	CHECK(store != NULL ? meta.store != NULL && strcmp(meta.store, store) == 0
	                    : meta.store == NULL);
	back = offsets_kvalue_value(r.value, r.vlen, r.headers, r.nheaders);
	CHECK(back != NULL && strcmp(back, full) == 0);
	free(back);
}

static void codec(void)
{
	const char *file = "{\"position\":1234,\"dev\":64768,\"ino\":99,\"fp\":-7,\"fplen\":1024}";
	const char *ts = "{\"timestamp_nanos\":5,\"timestamp\":17,\"rowid_seen\":-3}";
	const char *journal = "{\"cursor\":\"s=1;i=2\",\"seqnums\":{\"a\":3}}";
	struct offsets_krecord r;
	struct offsets_kmeta meta;
	char *back;

	/* The store's records (skiff.store) and exactly-once's (none). */
	round_trip(file, "0123456789abcdef0123456789abcdef", "{\"position\":1234}", 4);
	round_trip(file, NULL, "{\"position\":1234}", 3);
	round_trip(ts, "0123456789abcdef0123456789abcdef",
	           "{\"timestamp_nanos\":5,\"timestamp\":17}", 4);
	round_trip(ts, NULL, "{\"timestamp_nanos\":5,\"timestamp\":17}", 3);
	/* Connect's value already: written whole, no skiff.offset. */
	round_trip(journal, "0123456789abcdef0123456789abcdef", journal, 3);
	round_trip("{\"position\":7}", NULL, "{\"position\":7}", 2);
	/* A tombstone: no value, the writer's headers. */
	offsets_kvalue_encode(&r, NULL, 9, "pi-7", "s");
	CHECK(r.value == NULL && r.vlen == 0 && r.nheaders == 3);
	/* An empty skiff.store (a store without an id) reads as none. */
	offsets_kvalue_encode(&r, journal, 9, "pi-7", "");
	offsets_kvalue_meta(r.headers, r.nheaders, &meta);
	CHECK(meta.skiff && meta.gen == 9 && meta.store == NULL);
	/* Connect's own record (no header) and one a Connect tool altered
	 * (skiff.offset no longer matches the value): the value alone. */
	offsets_kvalue_meta(NULL, 0, &meta);
	CHECK(!meta.skiff && meta.gen == 0 && meta.device == NULL && meta.store == NULL);
	offsets_kvalue_encode(&r, file, 1, "pi-7", NULL);
	back = offsets_kvalue_value("{\"position\":99}", 15, r.headers, r.nheaders);
	CHECK(back != NULL && strcmp(back, "{\"position\":99}") == 0);
	free(back);
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
	codec();
	return testlib_done("test_offsets_kvalue");
}
