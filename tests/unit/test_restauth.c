/* Unit tests for restauth.c (Connect's BasicAuthSecurityRestExtension) and
 * text_unbase64 (Java's Base64 decoder, which it parses credentials with). */
#include "control/restauth.h"
#include "testlib.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"

static const char *jaas(const char *dir, const char *name, const char *text)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	testlib_write_file(path, text, strlen(text));
	return path;
}

static void test_unbase64(void)
{
	char out[32];
	size_t n;

	CHECK_INT(text_unbase64("YWxpY2U6cHc=", 12, out, sizeof(out), &n), 0);
	CHECK_INT(n, 8);
	CHECK(memcmp(out, "alice:pw", 8) == 0);
	/* Padding optional, as Java's decoder. */
	CHECK_INT(text_unbase64("YWxpY2U6cHc", 11, out, sizeof(out), &n), 0);
	CHECK_INT(n, 8);
	CHECK_INT(text_unbase64("", 0, out, sizeof(out), &n), 0);
	CHECK_INT(n, 0);
	/* What Java refuses: a blank, a character outside the alphabet, a
	 * lone symbol, padding in the middle, too much padding. */
	CHECK_INT(text_unbase64("YWxp Y2U=", 9, out, sizeof(out), &n), -1);
	CHECK_INT(text_unbase64("!!!!", 4, out, sizeof(out), &n), -1);
	CHECK_INT(text_unbase64("YWxpY", 5, out, sizeof(out), &n), -1);
	CHECK_INT(text_unbase64("YQ==YQ==", 8, out, sizeof(out), &n), -1);
	CHECK_INT(text_unbase64("YQ===", 5, out, sizeof(out), &n), -1);
	/* Larger than the room given. */
	CHECK_INT(text_unbase64("YWxpY2U6cHc=", 12, out, 4, &n), -1);
}

static const char *basic(const char *user_pw)
{
	static char h[256];
	char *b = text_base64(user_pw, strlen(user_pw));

	snprintf(h, sizeof(h), "Basic %s", b);
	free(b);
	return h;
}

static void test_check(void)
{
	const char *dir = testlib_tmpdir();
	char users[512], text[1024], err[1024];
	struct restauth *a = NULL;

	snprintf(users, sizeof(users), "%s/users.properties", dir);
	{
		const char *u = "alice: wonder:land\nbob = builder\n# carol: x\n";

		testlib_write_file(users, u, strlen(u));
	}
	snprintf(text, sizeof(text),
	         "/* comment */ Other { a.B required; };\n"
	         "KafkaConnect {\n  " MODULE " required\n  file=\"%s\"\n  debug=\"true\";\n};\n",
	         users);
	CHECK_INT(
	    restauth_new(jaas(dir, "jaas.conf", text), "w.properties:3", &a, err, sizeof(err)), 0);
	CHECK_INT(restauth_users(a), 2);
	CHECK(restauth_check(a, basic("alice:wonder:land")));
	CHECK(restauth_check(a, basic("bob:builder")));
	/* "basic" in any case, as Connect's equalsIgnoreCase. */
	{
		char h[256];

		snprintf(h, sizeof(h), "bAsIc %s", basic("bob:builder") + 6);
		CHECK(restauth_check(a, h));
	}
	CHECK(!restauth_check(a, NULL));
	CHECK(!restauth_check(a, basic("alice:wonder")));
	CHECK(!restauth_check(a, basic("alice:wonder:land ")));
	CHECK(!restauth_check(a, basic("carol:x")));
	CHECK(!restauth_check(a, basic("alice")));
	CHECK(!restauth_check(a, basic(":builder")));
	CHECK(!restauth_check(a, "Bearer abc"));
	CHECK(!restauth_check(a, "Basic"));
	CHECK(!restauth_check(a, "Basic !!!"));
	CHECK(!restauth_check(a, "Basic  YWxpY2U6d29uZGVyOmxhbmQ="));
	/* Read again: the new users replace the old. */
	testlib_write_file(users, "carol: x\n", 9);
	CHECK_INT(restauth_reload(a, err, sizeof(err)), 0);
	CHECK(restauth_check(a, basic("carol:x")));
	CHECK(!restauth_check(a, basic("bob:builder")));
	/* An empty file is refused and the users before stay. */
	testlib_write_file(users, "", 0);
	CHECK_INT(restauth_reload(a, err, sizeof(err)), RESTAUTH_ERR_CONFIG);
	CHECK(strstr(err, "has no user") != NULL);
	CHECK(restauth_check(a, basic("carol:x")));
	restauth_destroy(a);
}

static void test_refusals(void)
{
	const char *dir = testlib_tmpdir();
	struct restauth *a = NULL;
	char err[1024];

	CHECK_INT(restauth_new(jaas(dir, "1.conf", "KafkaConnect { com.x.Ldap required; };"), "w:1",
	                       &a, err, sizeof(err)),
	          RESTAUTH_ERR_CONFIG);
	CHECK(strstr(err, "names the login module com.x.Ldap") != NULL);
	CHECK_INT(restauth_new(jaas(dir, "2.conf", "Other { " MODULE " required file=\"x\"; };"),
	                       "w:1", &a, err, sizeof(err)),
	          RESTAUTH_ERR_CONFIG);
	CHECK(strstr(err, "no KafkaConnect entry") != NULL);
	CHECK_INT(restauth_new(jaas(dir, "3.conf", "KafkaConnect { " MODULE " required; };"), "w:1",
	                       &a, err, sizeof(err)),
	          RESTAUTH_ERR_CONFIG);
	CHECK_INT(restauth_new(jaas(dir, "4.conf", "KafkaConnect { " MODULE " };"), "w:1", &a, err,
	                       sizeof(err)),
	          RESTAUTH_ERR_CONFIG);
	CHECK_INT(restauth_new(jaas(dir, "5.conf",
	                            "KafkaConnect { " MODULE " required file=\"/nonexistent\"; };"),
	                       "w:1", &a, err, sizeof(err)),
	          RESTAUTH_ERR);
	CHECK(strstr(err, "/nonexistent") != NULL);
	CHECK_INT(restauth_new("/nonexistent.conf", "KAFKA_OPTS", &a, err, sizeof(err)),
	          RESTAUTH_ERR);
	CHECK(strstr(err, "KAFKA_OPTS: JAAS file /nonexistent.conf") != NULL);
	CHECK(a == NULL);
	/* No restauth: everything passes (rest_api without the extension). */
	CHECK(restauth_check(NULL, NULL));
}

int main(void)
{
	test_unbase64();
	test_check();
	test_refusals();
	return testlib_done("restauth");
}
