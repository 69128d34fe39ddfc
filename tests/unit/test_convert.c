/* convert: Connect's converters, byte for byte. Every expectation here was
 * produced by the real converters (Kafka 3.9.1 on JDK 17; numbers that JDK 17
 * prints differently, on JDK 25): tests/convert/compare.sh checks the rest. */
#include "convert/convert.h"
#include "core/source.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

/* The result as a NUL-terminated copy ("(null)" for a null result). */
static char *text(const char *out, size_t len)
{
	char *z = malloc(len + 1);

	memcpy(z, out ? out : "", out ? len : 0);
	z[out ? len : 0] = '\0';
	return out ? z : (free(z), strdup("(null)"));
}

static char *conv(const char *cls, bool schemas, const char *bytes, size_t len, uint64_t *repl)
{
	struct converter c;
	struct record_value v = {.kind = VALUE_STRING, .bytes = bytes, .len = len};
	char *out = NULL, *z;
	size_t olen = 0;

	CHECK_INT(convert_resolve(cls, schemas, &c), 0);
	CHECK_INT(convert_value(&c, &v, &out, &olen, repl), 0);
	z = text(out, olen);
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
	/* Jackson: named escapes for \b \t \n \f \r, \u00XX upper-case for the
	 * other controls, DEL as it is. */
	check_json("\t\b\f\x01\x1f\x7f", 6, "\"\\t\\b\\f\\u0001\\u001F\x7f\"", 0);
	check_json("\n\r\x0b\x1b", 4, "\"\\n\\r\\u000B\\u001B\"", 0);
	check_json("nul\0x", 5, "\"nul\\u0000x\"", 0);
	/* BMP characters as UTF-8, U+2028 too; beyond the BMP a Java string
	 * holds a surrogate pair, which Jackson escapes. */
	check_json("h\xc3\xa9 \xe2\x82\xac \xe2\x80\xa8", 11,
	           "\"h\xc3\xa9 \xe2\x82\xac \xe2\x80\xa8\"", 0);
	check_json("\xf0\x9f\x98\x80", 4, "\"\\uD83D\\uDE00\"", 0);
	check_json("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 8, "\"\\uD800\\uDC00\\uDBFF\\uDFFF\"", 0);
	check_json("\xef\xbf\xbf", 3, "\"\xef\xbf\xbf\"", 0);
	check_json("", 0, "\"\"", 0);
}

#define FFFD "\xef\xbf\xbd"

/* Invalid UTF-8 as Java's decoder replaces it: the maximal subpart, except
 * that an encoded surrogate (ED A0..BF xx) is one replacement. */
static void test_java_decoder(void)
{
	check_json("a\xff"
	           "b",
	           3, "\"a" FFFD "b\"", 1);
	check_json("\x80\x80", 2, "\"" FFFD FFFD "\"", 2);
	check_json("\xe2\x82", 2, "\"" FFFD "\"", 1);
	check_json("\xe2\x82z", 3, "\"" FFFD "z\"", 1);
	check_json("\xf0\x9f\x98"
	           "a",
	           4, "\"" FFFD "a\"", 1);
	check_json("\xc0\xaf", 2, "\"" FFFD FFFD "\"", 2);
	check_json("\xe0\x80\x80", 3, "\"" FFFD FFFD FFFD "\"", 3);
	check_json("\xf0\x80\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"", 4);
	check_json("\xed\xa0\x80", 3, "\"" FFFD "\"", 1);
	check_json("\xed\xa0\xbd\xed\xb8\x80", 6, "\"" FFFD FFFD "\"", 2);
	check_json("\xed\xa0", 2, "\"" FFFD "\"", 1);
	check_json("\xed\xa0"
	           "A",
	           3, "\"" FFFD "A\"", 1);
	check_json("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"", 4);
	check_json("\xf4\x90", 2, "\"" FFFD FFFD "\"", 2);
	check_json("\xf0\x90"
	           "A",
	           3, "\"" FFFD "A\"", 1);
	check_json("\xe0\xa0"
	           "A",
	           3, "\"" FFFD "A\"", 1);
	check_json("\xf8\x88\x80\x80\x80", 5, "\"" FFFD FFFD FFFD FFFD FFFD "\"", 5);
	check_json("\xc2\xc2\xa9", 3, "\"" FFFD "\xc2\xa9\"", 1);
}

static void test_envelopes(void)
{
	uint64_t repl = 0;
	char *got = conv("org.apache.kafka.connect.json.JsonConverter", true, "hi", 2, &repl);

	CHECK_STR(got, "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"hi\"}");
	free(got);
	/* StringConverter writes the Java String's UTF-8: NUL stays, invalid
	 * UTF-8 was replaced when Connect decoded the line. */
	got = conv("StringConverter", true, "a\0b\xe2\x82\xac", 6, &repl);
	CHECK(memcmp(got, "a\0b\xe2\x82\xac", 6) == 0);
	free(got);
	CHECK_INT(repl, 0);
	got = conv("StringConverter", false, "a\xff\xed\xa0\x80z", 6, &repl);
	CHECK_STR(got, "a" FFFD FFFD "z");
	CHECK_INT(repl, 2);
	free(got);
	/* ByteArrayConverter: raw bytes, on purpose (Connect rejects a STRING). */
	repl = 0;
	got = conv("org.apache.kafka.connect.converters.ByteArrayConverter", false, "\x80x", 2,
	           &repl);
	CHECK(memcmp(got, "\x80x", 2) == 0);
	free(got);
	CHECK_INT(repl, 0);
}

static void test_null(void)
{
	static const char *const classes[] = {"Json", "StringConverter", "ByteArray"};
	struct record_value nul = {.kind = VALUE_NULL};

	for (size_t i = 0; i < 3; i++) {
		for (int schemas = 0; schemas < 2; schemas++) {
			struct converter c;
			char *out = (char *)1;
			size_t len = 9;
			uint64_t repl = 0;

			CHECK_INT(convert_resolve(classes[i], schemas, &c), 0);
			CHECK_INT(convert_value(&c, &nul, &out, &len, &repl), 0);
			CHECK(out == NULL && len == 0);
		}
	}
}

/* Converts a struct given as schema text and a payload. */
static char *conv_struct(const char *cls, bool schemas, const cJSON *schema, const cJSON *payload)
{
	struct converter c;
	struct record_value v = {.kind = VALUE_STRUCT, .payload = payload, .schema = schema};
	char *out = NULL, *z;
	size_t len = 0;
	uint64_t repl = 0;

	CHECK_INT(convert_resolve(cls, schemas, &c), 0);
	CHECK_INT(convert_value(&c, &v, &out, &len, &repl), 0);
	z = text(out, len);
	free(out);
	return z;
}

static void check_struct(const char *cls, bool schemas, const char *schema_text,
                         const cJSON *payload, const char *want)
{
	cJSON *schema = cJSON_Parse(schema_text);
	char *got;

	CHECK(schema != NULL);
	got = conv_struct(cls, schemas, schema, payload);
	CHECK_STR(got, want);
	free(got);
	cJSON_Delete(schema);
}

/* A row as a source builds it: members out of Connect's order, int64 as raw
 * text, null and absent fields, a default, bytes as base64. */
static void test_struct(void)
{
	const char *schema =
	    "{\"fields\":[{\"field\":\"id\",\"type\":\"int64\"},"
	    "{\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,\"field\":\"ts\","
	    "\"type\":\"int64\",\"optional\":false},"
	    "{\"type\":\"float64\",\"optional\":true,\"field\":\"t\"},"
	    "{\"type\":\"string\",\"optional\":true,\"field\":\"s\"},"
	    "{\"type\":\"string\",\"optional\":true,\"field\":\"gone\",\"default\":\"d\"},"
	    "{\"type\":\"bytes\",\"optional\":true,\"field\":\"b\"}],"
	    "\"name\":\"t\",\"type\":\"struct\",\"version\":2}";
	cJSON *p = cJSON_CreateObject();

	cJSON_AddItemToObject(p, "id", cJSON_CreateRaw("9007199254740993"));
	cJSON_AddItemToObject(p, "ts", cJSON_CreateRaw("1700000000123"));
	cJSON_AddNumberToObject(p, "t", 21);
	cJSON_AddNullToObject(p, "s");
	cJSON_AddStringToObject(p, "b", "AP8=");
	check_struct(
	    "Json", true, schema, p,
	    "{\"schema\":{\"type\":\"struct\",\"fields\":["
	    "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
	    "{\"type\":\"int64\",\"optional\":false,"
	    "\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,\"field\":\"ts\"},"
	    "{\"type\":\"double\",\"optional\":true,\"field\":\"t\"},"
	    "{\"type\":\"string\",\"optional\":true,\"field\":\"s\"},"
	    "{\"type\":\"string\",\"optional\":true,\"default\":\"d\",\"field\":\"gone\"},"
	    "{\"type\":\"bytes\",\"optional\":true,\"field\":\"b\"}],"
	    "\"optional\":false,\"name\":\"t\",\"version\":2},"
	    "\"payload\":{\"id\":9007199254740993,\"ts\":1700000000123,\"t\":21.0,"
	    "\"s\":null,\"gone\":\"d\",\"b\":\"AP8=\"}}");
	check_struct("JsonConverter", false, schema, p,
	             "{\"id\":9007199254740993,\"ts\":1700000000123,\"t\":21.0,\"s\":null,"
	             "\"gone\":\"d\",\"b\":\"AP8=\"}");
	/* Struct.toString(): nulls left out (defaults are not applied); bytes
	 * as base64 where Connect prints "[B@<identity hash>". */
	setenv("TZ", "UTC", 1);
	check_struct("StringConverter", false, schema, p,
	             "Struct{id=9007199254740993,ts=Tue Nov 14 22:13:20 UTC 2023,t=21.0,b=AP8=}");
	check_struct("StringConverter", false, "{\"type\":\"struct\",\"fields\":[]}", p,
	             "Struct{}");
	cJSON_Delete(p);
}

static void check_number(double d, const char *type, const char *want_json, const char *want_text)
{
	char schema[160], want[96];
	cJSON *p = cJSON_CreateObject();

	cJSON_AddItemToObject(p, "x", cJSON_CreateNumber(d));
	snprintf(schema, sizeof(schema),
	         "{\"type\":\"struct\",\"fields\":[{\"type\":\"%s\",\"field\":\"x\"}]}", type);
	snprintf(want, sizeof(want), "{\"x\":%s}", want_json);
	check_struct("Json", false, schema, p, want);
	snprintf(want, sizeof(want), "Struct{x=%s}", want_text);
	check_struct("String", false, schema, p, want);
	cJSON_Delete(p);
}

/* Double.toString and Float.toString as JDK 19 and later print them: the
 * shortest digits that read back (JDK 17 prints more for some values). */
static void test_numbers(void)
{
	check_number(0, "double", "0.0", "0.0");
	check_number(-0.0, "double", "-0.0", "-0.0");
	check_number(100, "double", "100.0", "100.0");
	check_number(9999999, "double", "9999999.0", "9999999.0");
	check_number(1e7, "double", "1.0E7", "1.0E7");
	check_number(0.001, "double", "0.001", "0.001");
	check_number(0.00099, "double", "9.9E-4", "9.9E-4");
	check_number(123456789.123, "double", "1.23456789123E8", "1.23456789123E8");
	check_number(1.7976931348623157e308, "double", "1.7976931348623157E308",
	             "1.7976931348623157E308");
	check_number(4.9e-324, "double", "4.9E-324", "4.9E-324");
	check_number(1e-7, "double", "1.0E-7", "1.0E-7");
	check_number(-273.15, "double", "-273.15", "-273.15");
	check_number(2e23, "double", "2.0E23", "2.0E23");
	check_number(-2.681447534367114e18, "double", "-2.681447534367114E18",
	             "-2.681447534367114E18");
	check_number(NAN, "double", "\"NaN\"", "NaN");
	check_number(-INFINITY, "double", "\"-Infinity\"", "-Infinity");
	check_number((double)1.1f, "float", "1.1", "1.1");
	check_number((double)16777217.0f, "float", "1.6777216E7", "1.6777216E7");
	check_number((double)1.4e-45f, "float32", "1.4E-45", "1.4E-45");
	check_number((double)963333312.0f, "float", "9.633333E8", "9.633333E8");
	check_number(5, "int32", "5", "5");
}

static void test_struct_other(void)
{
	cJSON *p = cJSON_Parse("{\"in\":{\"a\":\"x\\u001fy\"},\"l\":[1.5,null],\"d\":19675,"
	                       "\"e\":\"\xf0\x9f\x98\x80\"}");
	const char *schema =
	    "{\"type\":\"struct\",\"fields\":["
	    "{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"field\":\"a\"}],\"field\":"
	    "\"in\"},"
	    "{\"type\":\"array\",\"items\":{\"type\":\"double\",\"optional\":true},\"field\":\"l\"}"
	    ","
	    "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,"
	    "\"field\":\"d\"},{\"type\":\"string\",\"field\":\"e\"}]}";

	check_struct(
	    "Json", false, schema, p,
	    "{\"in\":{\"a\":\"x\\u001Fy\"},\"l\":[1.5,null],\"d\":19675,\"e\":\"\\uD83D\\uDE00\"}");
	setenv("TZ", "UTC", 1);
	check_struct("String", false, schema, p,
	             "Struct{in=Struct{a=x\x1fy},l=[1.5, null],d=Tue Nov 14 00:00:00 UTC 2023,"
	             "e=\xf0\x9f\x98\x80}");
	check_struct(
	    "Json", true, "{\"type\":\"array\",\"items\":{\"type\":\"int8\"}}", p,
	    "{\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"int8\",\"optional\":false},"
	    "\"optional\":false},\"payload\":{\"in\":{\"a\":\"x\\u001Fy\"},\"l\":[1.5,null],"
	    "\"d\":19675,\"e\":\"\\uD83D\\uDE00\"}}");
	cJSON_Delete(p);
}

/* Connect's own output for a struct with a default, a Decimal (parameters),
 * a nested struct, an array, a Date and a map, fed back in: the same bytes.
 * Struct.toString() differs in one place only: Connect prints the Decimal
 * (12.34), skiff its base64 (BNI=). */
static void test_struct_roundtrip(void)
{
	const char *schema =
	    "{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,\"default\":"
	    "\"d\","
	    "\"field\":\"gone\"},{\"type\":\"bytes\",\"optional\":true,"
	    "\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,"
	    "\"parameters\":{\"scale\":\"2\"},\"field\":\"dec\"},{\"type\":\"struct\",\"fields\":["
	    "{\"type\":\"string\",\"optional\":false,\"field\":\"a\"}],\"optional\":false,"
	    "\"field\":\"in\"},"
	    "{\"type\":\"array\",\"items\":{\"type\":\"double\",\"optional\":true},\"optional\":"
	    "false,"
	    "\"field\":\"l\"},{\"type\":\"int32\",\"optional\":false,"
	    "\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,\"field\":\"d\"},"
	    "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},\"values\":{"
	    "\"type\":"
	    "\"int32\",\"optional\":false},\"optional\":true,\"field\":\"m\"}],\"optional\":false,"
	    "\"name\":\"t\",\"version\":2}";
	const char *payload = "{\"gone\":\"d\",\"dec\":\"BNI=\",\"in\":{\"a\":\"x\\u001Fy\"},"
	                      "\"l\":[1.5,null],\"d\":19675,\"m\":{\"k\":1}}";
	char want[2048];
	cJSON *p = cJSON_Parse(payload);

	/* The source leaves the defaulted field out: Connect writes the default. */
	cJSON_DeleteItemFromObject(p, "gone");
	snprintf(want, sizeof(want), "{\"schema\":%s,\"payload\":%s}", schema, payload);
	check_struct("Json", true, schema, p, want);
	setenv("TZ", "UTC", 1);
	check_struct("String", false, schema, p,
	             "Struct{dec=BNI=,in=Struct{a=x\x1fy},l=[1.5, null],"
	             "d=Tue Nov 14 00:00:00 UTC 2023,m={k=1}}");
	cJSON_Delete(p);
}

static void test_struct_bytearray(void)
{
	struct converter c;
	cJSON *s = cJSON_Parse("{\"type\":\"struct\",\"fields\":[]}"), *p = cJSON_CreateObject();
	struct record_value st = {.kind = VALUE_STRUCT, .payload = p, .schema = s};
	char *out = NULL;
	size_t len = 0;
	uint64_t repl = 0;

	CHECK_INT(convert_resolve("ByteArrayConverter", false, &c), 0);
	CHECK_INT(convert_value(&c, &st, &out, &len, &repl), CONVERT_ERR_SHAPE);
	cJSON_Delete(s);
	cJSON_Delete(p);
}

static void test_resolve(void)
{
	struct converter c;

	CHECK_INT(convert_resolve("org.apache.kafka.connect.storage.StringConverter", false, &c),
	          0);
	CHECK(c.kind == CONV_STRING);
	CHECK_INT(convert_resolve("ByteArray", false, &c), 0);
	CHECK(c.kind == CONV_BYTEARRAY);
	CHECK_INT(convert_resolve("io.confluent.connect.avro.AvroConverter", false, &c), -1);
	CHECK_INT(convert_resolve("jsonconverter", false, &c), -1);
}

int main(void)
{
	test_json_escapes();
	test_java_decoder();
	test_envelopes();
	test_null();
	test_struct();
	test_numbers();
	test_struct_other();
	test_struct_roundtrip();
	test_struct_bytearray();
	test_resolve();
	return testlib_done("test_convert");
}
