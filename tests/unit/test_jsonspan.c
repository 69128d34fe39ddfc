/* jsonspan: value spans in JSON text, for the KIP-875 PATCH (issue 11 #2). */
#include "util/jsonspan.h"
#include "testlib.h"

#include <string.h>

static bool member(const char *s, const char *key, const char *want)
{
	const char *v;
	size_t n;

	if (!jsonspan_member(s, strlen(s), key, &v, &n))
		return want == NULL;
	return want != NULL && n == strlen(want) && memcmp(v, want, n) == 0;
}

int main(void)
{
	const char *body = " {\"offsets\" : [ {\"partition\":{\"f\":\"a]}\\\"\"},"
	                   "\"offset\":{\"fp\":6748621030000000001, \"p\":[1,{}]}} , "
	                   "{\"offset\":null,\"partition\":{}} ]}";
	const char *arr, *el;
	size_t alen, elen, cur = 0, k = 0;

	CHECK(jsonspan_member(body + 1, strlen(body + 1), "offsets", &arr, &alen));
	CHECK(arr[0] == '[' && arr[alen - 1] == ']');
	while (jsonspan_array_next(arr, alen, &cur, &el, &elen)) {
		char e[200];

		CHECK(elen < sizeof(e));
		memcpy(e, el, elen);
		e[elen] = '\0';
		if (k == 0) {
			CHECK(member(e, "offset", "{\"fp\":6748621030000000001, \"p\":[1,{}]}"));
			CHECK(member(e, "partition", "{\"f\":\"a]}\\\"\"}"));
		} else {
			CHECK(member(e, "offset", "null"));
		}
		k++;
	}
	CHECK(k == 2);
	/* First of a duplicate key; literals and numbers; nothing past len. */
	CHECK(member("{\"a\":1,\"a\":2}", "a", "1"));
	CHECK(member("{\"a\":-1.5e3}", "a", "-1.5e3"));
	CHECK(member("{\"a\":true }", "a", "true"));
	CHECK(member("{}", "a", NULL));
	CHECK(jsonspan_value("{\"a\":[1,2}", 9) == 0);
	CHECK(jsonspan_value("\"abc\\\"", 6) == 0);
	CHECK(jsonspan_value("[]", 2) == 2);
	cur = 0;
	CHECK(!jsonspan_array_next("[]", 2, &cur, &el, &elen));
	CHECK(!jsonspan_array_next("{}", 2, &cur, &el, &elen));
	return testlib_done("test_jsonspan");
}
