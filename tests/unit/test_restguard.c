/* Unit tests for restguard.c: which Host and Origin a request may carry. */
#include "control/rest.h"
#include "control/restguard.h"
#include "testlib.h"

static const char *const names[] = {"gw7", "gw7.local", "device.example"};

static const struct rest_policy http_policy = {
    .port = "8083", .names = names, .nnames = 3, .allow_origin = "", .allow_methods = ""};

static void test_host(void)
{
	const struct rest_policy *p = &http_policy;

	/* IP addresses (no name a page could rebind), localhost, our names. */
	CHECK(restguard_host_ok(p, NULL));
	CHECK(restguard_host_ok(p, "127.0.0.1"));
	CHECK(restguard_host_ok(p, "127.0.0.1:8083"));
	CHECK(restguard_host_ok(p, "192.168.1.20:9999"));
	CHECK(restguard_host_ok(p, "[::1]:8083"));
	CHECK(restguard_host_ok(p, "[fe80::1]"));
	CHECK(restguard_host_ok(p, "localhost:8083"));
	CHECK(restguard_host_ok(p, "LocalHost."));
	CHECK(restguard_host_ok(p, "GW7.local:8083"));
	CHECK(restguard_host_ok(p, "device.example"));
	/* Names a page's author controls, and what is not a host at all. */
	CHECK(!restguard_host_ok(p, "evil.example"));
	CHECK(!restguard_host_ok(p, "evil.example:8083"));
	CHECK(!restguard_host_ok(p, "127.0.0.1.nip.io"));
	CHECK(!restguard_host_ok(p, "localhost.evil.example"));
	CHECK(!restguard_host_ok(p, "gw7.evil.example"));
	CHECK(!restguard_host_ok(p, ""));
	CHECK(!restguard_host_ok(p, ":8083"));
	CHECK(!restguard_host_ok(p, "[::1"));
	CHECK(!restguard_host_ok(p, "localhost:80x"));
	CHECK(!restguard_host_ok(p, "a:1:2"));
	/* No policy: unit tests of the routes. */
	CHECK(restguard_host_ok(NULL, "evil.example"));
}

static void test_origin(void)
{
	struct rest_policy p = http_policy;

	CHECK(restguard_origin_ok(&p, NULL, "127.0.0.1:8083"));
	/* Same origin: the scheme of the listener, the authority of Host. */
	CHECK(restguard_origin_ok(&p, "http://127.0.0.1:8083", "127.0.0.1:8083"));
	CHECK(restguard_origin_ok(&p, "http://LOCALHOST:8083", "localhost:8083"));
	CHECK(restguard_origin_ok(&p, "http://gw7", "gw7:80"));
	CHECK(!restguard_origin_ok(&p, "https://127.0.0.1:8083", "127.0.0.1:8083"));
	CHECK(!restguard_origin_ok(&p, "http://127.0.0.1:9000", "127.0.0.1:8083"));
	CHECK(!restguard_origin_ok(&p, "http://evil.example", "127.0.0.1:8083"));
	CHECK(!restguard_origin_ok(&p, "null", "127.0.0.1:8083"));
	CHECK(!restguard_origin_ok(&p, "http://127.0.0.1:8083", NULL));
	p.https = true;
	CHECK(restguard_origin_ok(&p, "https://gw7", "gw7:443"));
	CHECK(!restguard_origin_ok(&p, "http://gw7", "gw7:443"));
	/* Listed, as Jetty's CrossOriginFilter lists them. */
	p.allow_origin = " https://dash.example ,http://*.lan";
	CHECK(restguard_origin_listed(&p, "https://dash.example"));
	CHECK(restguard_origin_listed(&p, "http://ops.lan"));
	CHECK(!restguard_origin_listed(&p, "https://dash.example.evil"));
	CHECK(restguard_origin_ok(&p, "http://ops.lan", "127.0.0.1:8083"));
	p.allow_origin = "*";
	CHECK(restguard_origin_ok(&p, "null", "127.0.0.1:8083"));
}

static void test_methods_and_type(void)
{
	struct rest_policy p = http_policy;

	CHECK(restguard_method_listed(&p, "GET"));
	CHECK(restguard_method_listed(&p, "POST"));
	CHECK(!restguard_method_listed(&p, "PUT"));
	p.allow_methods = "GET, PUT ,DELETE";
	CHECK(restguard_method_listed(&p, "PUT"));
	CHECK(restguard_method_listed(&p, "DELETE"));
	CHECK(!restguard_method_listed(&p, "PU"));
	CHECK(!restguard_method_listed(&p, "POST"));
	CHECK(restguard_json("application/json"));
	CHECK(restguard_json("Application/JSON; charset=utf-8"));
	CHECK(!restguard_json("application/jsonx"));
	CHECK(!restguard_json("text/plain"));
	CHECK(!restguard_json(NULL));
}

int main(void)
{
	test_host();
	test_origin();
	test_methods_and_type();
	return testlib_done("restguard");
}
