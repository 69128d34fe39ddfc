/* Unit tests of the journald source's libsystemd-free parts: the position
 * texts, the cursor reader, an entry's data as a struct, and util/text. */
#include "core/source.h"
#include "sources/journald/jfields.h"
#include "sources/journald/jpos.h"
#include "testlib.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Position texts (jpos_text) live while a reference names them: more of
 * them at once than the 4096 the old ring held (whose 4097th push failed
 * and stopped reading until an offset flush); each keeps its text, their
 * account counts their bytes until the last drop frees them, and outlives
 * the source's reference while a text is alive (ASan sees a leak, a double
 * free or a use after free). */
static void test_texts(void)
{
	enum { N = 5000 };
	static struct src_ref *t[N];
	struct jpos_texts *held = NULL;
	char json[64];
	size_t one;

	CHECK_INT(jpos_texts_new(&held), JPOS_OK);
	CHECK_INT(jpos_texts_bytes(held), 0);
	for (int i = 0; i < N; i++) {
		snprintf(json, sizeof(json), "{\"cursor\":\"c%04d\",\"seqnums\":{}}", i);
		t[i] = NULL;
		CHECK_INT(jpos_text_new(held, json, &t[i]), JPOS_OK);
		CHECK(t[i] != NULL);
	}
	one = jpos_texts_bytes(held) / N;
	CHECK(one > strlen(json) && one < strlen(json) + 64);
	CHECK_INT(jpos_texts_bytes(held), N * one);
	CHECK_STR(jpos_text(t[0]), "{\"cursor\":\"c0000\",\"seqnums\":{}}");
	CHECK_STR(jpos_text(t[N - 1]), "{\"cursor\":\"c4999\",\"seqnums\":{}}");
	CHECK(jpos_text(NULL) == NULL);
	src_ref_hold(t[7]); /* a record in flight and a committable offset */
	src_ref_drop(t[7]);
	CHECK_STR(jpos_text(t[7]), "{\"cursor\":\"c0007\",\"seqnums\":{}}");
	for (int i = 0; i < N - 1; i++)
		src_ref_drop(t[i]);
	CHECK_INT(jpos_texts_bytes(held), one);
	jpos_texts_free(held); /* the source closes; one text is still named */
	CHECK_STR(jpos_text(t[N - 1]), "{\"cursor\":\"c4999\",\"seqnums\":{}}");
	src_ref_drop(t[N - 1]);
	jpos_texts_free(NULL);
}

/* An empty position (jpos_new's out parameter). */
static struct jpos *pos_new(void)
{
	struct jpos *p = NULL;

	CHECK_INT(jpos_new(&p), JPOS_OK);
	CHECK(p != NULL);
	return p;
}

static void test_pos(void)
{
	const char *a = "0123456789abcdef0123456789abcdef", *b = "fedcba9876543210fedcba9876543210";
	struct jpos *p = pos_new(), *q = pos_new();
	char id[33], dropped[33] = "";
	cJSON *o;
	char *json;
	uint64_t v = 0;

	CHECK(!jpos_get(p, a, &v));
	CHECK_INT(jpos_set(p, a, 7, dropped), 0);
	CHECK_INT(jpos_set(p, b, 9007199254740992ull, dropped), 0); /* 2^53: exact */
	CHECK_INT(jpos_set(p, a, 8, dropped), 0);
	CHECK_INT(jpos_set(p, "short", 1, dropped), -1);
	CHECK(jpos_get(p, a, &v) && v == 8);
	json = jpos_json(p, "s=x;i=8");
	CHECK_STR(json,
	          "{\"cursor\":\"s=x;i=8\",\"seqnums\":{\"0123456789abcdef0123456789abcdef\":8,"
	          "\"fedcba9876543210fedcba9876543210\":9007199254740992}}");
	o = cJSON_Parse(json);
	CHECK_INT(jpos_load(q, cJSON_GetObjectItem(o, "seqnums")), 0);
	CHECK(jpos_get(q, b, &v) && v == 9007199254740992ull);
	cJSON_Delete(o);
	free(json);
	/* malformed: not an id, negative, fractional, beyond 2^53, not an object */
	const char *bad[] = {"{\"xyz\":1}", "{\"0123456789abcdef0123456789abcdef\":-1}",
	                     "{\"0123456789abcdef0123456789abcdef\":1.5}",
	                     "{\"0123456789abcdef0123456789abcdef\":1e17}", "[]"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = cJSON_Parse(bad[i]);
		CHECK_INT(jpos_load(q, o), -1);
		cJSON_Delete(o);
	}
	/* flags and the sweep: ids without the flag go */
	jpos_flag(p, a, JPOS_SEEN);
	CHECK_INT(jpos_flags(p, a), JPOS_SEEN);
	CHECK_INT(jpos_flags(p, b), 0);
	CHECK_INT(jpos_sweep(p, JPOS_SEEN), 1);
	CHECK(!jpos_get(p, b, &v) && jpos_get(p, a, &v));
	/* the cap: the id set least recently goes */
	for (int i = 0; i < JPOS_IDS_MAX - 1; i++) {
		snprintf(id, sizeof(id), "%032x", i + 100);
		CHECK_INT(jpos_set(p, id, 1, dropped), 0);
	}
	CHECK_INT(jpos_set(p, a, 9, dropped), 0); /* a is now the newest */
	CHECK_INT(jpos_set(p, b, 1, dropped), 1);
	snprintf(id, sizeof(id), "%032x", 100);
	CHECK_STR(dropped, id);
	CHECK(jpos_get(p, a, &v) && v == 9);
	jpos_free(p);
	jpos_free(q);
	jpos_free(NULL);
}

/* 70 ids (a journal-remote directory of 70 hosts' files): every one is kept
 * and comes back from the offset text, so a restart reads none again. */
static void test_pos_many_ids(void)
{
	struct jpos *p = pos_new(), *q = pos_new();
	char id[33], dropped[33] = "";
	cJSON *o;
	char *json;
	uint64_t v = 0;
	int kept = 0;

	CHECK(JPOS_IDS_MAX >= 1024);
	for (int i = 0; i < 70; i++) {
		snprintf(id, sizeof(id), "%032x", i + 1);
		CHECK_INT(jpos_set(p, id, (uint64_t)i + 1000, dropped), 0);
	}
	json = jpos_json(p, "s=x;i=1");
	o = cJSON_Parse(json);
	CHECK_INT(jpos_load(q, cJSON_GetObjectItem(o, "seqnums")), 0);
	for (int i = 0; i < 70; i++) {
		snprintf(id, sizeof(id), "%032x", i + 1);
		kept += jpos_get(q, id, &v) && v == (uint64_t)i + 1000;
	}
	CHECK_INT(kept, 70);
	cJSON_Delete(o);
	free(json);
	jpos_free(p);
	jpos_free(q);
}

static void test_cursor(void)
{
	char id[33];
	uint64_t n = 0;

	CHECK_INT(jpos_cursor_seqnum("s=4527ea4ba7c44d70b4495f1db81de976;i=aaaa;b=0123;m=1;t=2;x=3",
	                             id, &n),
	          0);
	CHECK_STR(id, "4527ea4ba7c44d70b4495f1db81de976");
	CHECK_INT(n, 0xaaaa);
	CHECK_INT(jpos_cursor_seqnum("b=1;i=10;s=4527ea4ba7c44d70b4495f1db81de976", id, &n), 0);
	CHECK_INT(n, 16);
	CHECK_INT(jpos_cursor_seqnum("s=4527;i=10", id, &n), -1);
	CHECK_INT(jpos_cursor_seqnum("s=4527ea4ba7c44d70b4495f1db81de976;i=", id, &n), -1);
	CHECK_INT(jpos_cursor_seqnum("s=4527ea4ba7c44d70b4495f1db81de976;i=1g", id, &n), -1);
	CHECK_INT(jpos_cursor_seqnum("", id, &n), -1);
}

static void test_fields(void)
{
	cJSON *fields = NULL, *schema = jfields_schema(&fields), *payload = cJSON_CreateObject();
	char *s, *p;

	CHECK(schema != NULL && payload != NULL);
	CHECK_INT(jfields_add(payload, fields, "MESSAGE=héllo", 14), 0);
	CHECK_INT(jfields_add(payload, fields, "BIN=a\0b", 7), 0);
	CHECK_INT(jfields_add(payload, fields, "BAD=\xff", 5), 0);
	CHECK_INT(jfields_add(payload, fields, "MESSAGE=again", 13), 1);
	CHECK_INT(jfields_add(payload, fields, "noequals", 8), -1);
	CHECK_INT(jfields_add(payload, fields, "=x", 2), -1);
	CHECK_INT(jfields_add_time(payload, fields, "__REALTIME_TIMESTAMP", 1700000000000001ULL),
	          0);
	s = cJSON_PrintUnformatted(schema);
	p = cJSON_PrintUnformatted(payload);
	CHECK_STR(s, "{\"type\":\"struct\",\"fields\":["
	             "{\"type\":\"string\",\"optional\":true,\"field\":\"MESSAGE\"},"
	             "{\"type\":\"bytes\",\"optional\":true,\"field\":\"BIN\"},"
	             "{\"type\":\"bytes\",\"optional\":true,\"field\":\"BAD\"},"
	             "{\"type\":\"int64\",\"optional\":true,\"field\":\"__REALTIME_TIMESTAMP\"}],"
	             "\"optional\":false,\"name\":\"skiff.journal.Entry\"}");
	CHECK_STR(p, "{\"MESSAGE\":\"héllo\",\"BIN\":\"YQBi\",\"BAD\":\"/w==\","
	             "\"__REALTIME_TIMESTAMP\":1700000000000001}");
	free(s);
	free(p);
	cJSON_Delete(schema);
	cJSON_Delete(payload);
}

/* Cutting a value keeps text text: never inside a UTF-8 character. */
static void test_cut(void)
{
	CHECK_INT((int)jfields_cut("abc", 3, 3), 3);
	CHECK_INT((int)jfields_cut("abcdef", 6, 4), 4);
	CHECK_INT((int)jfields_cut("ab\xe2\x82\xac", 5, 3), 2);       /* inside the euro sign */
	CHECK_INT((int)jfields_cut("ab\xe2\x82\xacx", 6, 5), 5);      /* just after it */
	CHECK_INT((int)jfields_cut("\x80\x80\x80\x80\x80", 5, 4), 4); /* binary: no start byte */
	CHECK_INT((int)jfields_cut("abc", 3, 0), 0);
}

static void test_text(void)
{
	char *b;

	CHECK(text_is_utf8("", 0));
	CHECK(text_is_utf8("a\tb\n€😀", 11));
	CHECK(!text_is_utf8("a\0b", 3));
	CHECK(!text_is_utf8("\xc0\x80", 2));     /* overlong NUL */
	CHECK(!text_is_utf8("\xed\xa0\x80", 3)); /* a surrogate */
	CHECK(!text_is_utf8("\xf4\x90\x80\x80", 4));
	CHECK(!text_is_utf8("\xe2\x82", 2)); /* cut short */
	CHECK_STR(b = text_base64("", 0), "");
	free(b);
	CHECK_STR(b = text_base64("f", 1), "Zg==");
	free(b);
	CHECK_STR(b = text_base64("fo", 2), "Zm8=");
	free(b);
	CHECK_STR(b = text_base64("foobar", 6), "Zm9vYmFy");
	free(b);
}

int main(void)
{
	test_texts();
	test_pos();
	test_pos_many_ids();
	test_cursor();
	test_fields();
	test_cut();
	test_text();
	return testlib_done("source_journald");
}
