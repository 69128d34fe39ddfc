/* convert: Connect's converters, byte for byte. */
#include "convert.h"
#include "source.h"
#include "testlib.h"

#include <stdlib.h>

static char *conv(const char *cls, bool schemas, const char *bytes, size_t len, uint64_t *repl)
{
	struct converter c;
	struct record_value v = {.kind = VALUE_STRING, .bytes = bytes, .len = len};
	char *out = NULL, *z;
	size_t olen = 0;

	CHECK_INT(convert_resolve(cls, schemas, &c), 0);
	CHECK_INT(convert_value(&c, &v, &out, &olen, repl), 0);
	z = malloc(olen + 1);
	memcpy(z, out, olen);
	z[olen] = '\0';
	free(out);
	return z;
}

static void check_json(const char *in, size_t len, const char *want, uint64_t want_repl)
{
	uint64_t repl = 0;
	char *got = conv("JsonConverter", false, in, len, &repl);

	CHECK_STR(got, want);
	CHECK_INT(repl, want_repl);
	free(got);
}

static void test_json_escapes(void)
{
	check_json("plain", 5, "\"plain\"", 0);
	check_json("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"", 0);
	check_json("\t\b\f\x01\x1f\x7f", 6, "\"\\t\\b\\f\\u0001\\u001F\x7f\"", 0);
	check_json("nul\0x", 5, "\"nul\\u0000x\"", 0);
	check_json("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12, "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", 0);
	/* Invalid UTF-8 becomes U+FFFD per maximal subpart, as Java decodes. */
	check_json("a\xff" "b", 3, "\"a\xef\xbf\xbd" "b\"", 1);
	check_json("\xe2\x82", 2, "\"\xef\xbf\xbd\"", 1);
	check_json("\xe2\x82z", 3, "\"\xef\xbf\xbdz\"", 1);
	check_json("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"", 2);
	check_json("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", 3);
	check_json("\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", 4);
	check_json("", 0, "\"\"", 0);
}

static void test_envelopes(void)
{
	uint64_t repl = 0;
	char *got = conv("org.apache.kafka.connect.json.JsonConverter", true, "hi", 2, &repl);

	CHECK_STR(got, "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"hi\"}");
	free(got);
	got = conv("StringConverter", true, "a\xff\0b", 4, &repl);
	CHECK(memcmp(got, "a\xff\0b", 4) == 0);
	free(got);
	got = conv("org.apache.kafka.connect.converters.ByteArrayConverter", false, "\x80x", 2, &repl);
	CHECK(memcmp(got, "\x80x", 2) == 0);
	free(got);
	CHECK_INT(repl, 0);
}

static void test_null_and_struct(void)
{
	struct converter c;
	struct record_value nul = {.kind = VALUE_NULL};
	cJSON *schema = cJSON_Parse("{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"s\"}],\"optional\":false,\"name\":\"t\"}");
	cJSON *payload = cJSON_CreateObject();
	struct record_value st = {.kind = VALUE_STRUCT, .payload = payload, .schema = schema};
	char *out = (char *)1;
	size_t len = 9;
	uint64_t repl = 0;

	cJSON_AddItemToObject(payload, "id", cJSON_CreateRaw("9007199254740993"));
	cJSON_AddItemToObject(payload, "s", cJSON_CreateNull());
	CHECK_INT(convert_resolve("Json", true, &c), 0);
	CHECK_INT(convert_value(&c, &nul, &out, &len, &repl), 0);
	CHECK(out == NULL && len == 0);
	CHECK_INT(convert_value(&c, &st, &out, &len, &repl), 0);
	CHECK_STR(out, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"s\"}],\"optional\":false,\"name\":\"t\"},\"payload\":{\"id\":9007199254740993,\"s\":null}}");
	free(out);
	c.schemas_enable = false;
	CHECK_INT(convert_value(&c, &st, &out, &len, &repl), 0);
	CHECK_STR(out, "{\"id\":9007199254740993,\"s\":null}");
	free(out);
	CHECK_INT(convert_resolve("StringConverter", false, &c), 0);
	CHECK_INT(convert_value(&c, &st, &out, &len, &repl), 0);
	CHECK(len == strlen("Struct{id=9007199254740993}") && memcmp(out, "Struct{id=9007199254740993}", len) == 0);
	free(out);
	CHECK_INT(convert_resolve("ByteArrayConverter", false, &c), 0);
	CHECK_INT(convert_value(&c, &st, &out, &len, &repl), -1);
	cJSON_Delete(schema);
	cJSON_Delete(payload);
}

static void test_resolve(void)
{
	struct converter c;

	CHECK_INT(convert_resolve("org.apache.kafka.connect.storage.StringConverter", false, &c), 0);
	CHECK(c.kind == CONV_STRING);
	CHECK_INT(convert_resolve("ByteArray", false, &c), 0);
	CHECK(c.kind == CONV_BYTEARRAY);
	CHECK_INT(convert_resolve("io.confluent.connect.avro.AvroConverter", false, &c), -1);
	CHECK_INT(convert_resolve("jsonconverter", false, &c), -1);
}

int main(void)
{
	test_json_escapes();
	test_envelopes();
	test_null_and_struct();
	test_resolve();
	return testlib_done("test_convert");
}
