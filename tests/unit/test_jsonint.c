/* jsonint: exact integers out of offset JSON. */
#include "util/jsonint.h"
#include "testlib.h"

int main(void)
{
	int64_t v = 0;

	CHECK_INT(jsonint_get("{\"position\":123}", "position", &v), 0);
	CHECK_INT(v, 123);
	CHECK_INT(jsonint_get("{\"incrementing\":9007199254740993}", "incrementing", &v), 0);
	CHECK(v == 9007199254740993LL);
	CHECK_INT(jsonint_get("{\"a\":{\"position\":1},\"position\":-7}", "position", &v), 0);
	CHECK_INT(v, -7);
	CHECK_INT(jsonint_get(" { \"x\" : \"position\" , \"position\" : 42 } ", "position", &v), 0);
	CHECK_INT(v, 42);
	CHECK_INT(jsonint_get("{\"p\\\"osition\":5,\"position\":6}", "position", &v), 0);
	CHECK_INT(v, 6);
	CHECK_INT(jsonint_get("{\"position\":1.5}", "position", &v), -1);
	CHECK_INT(jsonint_get("{\"position\":1e3}", "position", &v), -1);
	CHECK_INT(jsonint_get("{\"position\":\"12\"}", "position", &v), -1);
	CHECK_INT(jsonint_get("{\"position\":99999999999999999999}", "position", &v), -1);
	CHECK_INT(jsonint_get("[\"position\",1]", "position", &v), -1);
	CHECK_INT(jsonint_get("{\"pos\":1}", "position", &v), -1);
	CHECK_INT(jsonint_get(NULL, "position", &v), -1);
	CHECK_INT(jsonint_get("{\"position", "position", &v), -1);
	return testlib_done("test_jsonint");
}
