/* offsets_fleet: which keys of a shared offsets topic are this skiff's
 * connectors', read from the key's first element without parsing the rest
 * (every record of a topic of 200,000 keys goes through it), and which
 * records this offsets store wrote (issue 24). */
#include "offsets/offsets_fleet.h"
#include "config/settings.h"
#include "testlib.h"

#include <stdbool.h>
#include <string.h>

static const char *owner(const struct offsets_fleet *f, const char *key)
{
	const struct connector_settings *c = offsets_fleet_connector(f, key, strlen(key));

	return c != NULL ? c->name : NULL;
}

static void test_connector_of_key(void)
{
	struct connector_settings cs[3] = {{.name = "app"}, {.name = "app-dev\"7"}, {.name = "α"}};
	struct settings s = {.nconnectors = 3, .connectors = cs};
	struct offsets_fleet f = {.s = &s};
	const char *cut = "[\"app\",{\"filename\":\"/var/log/a.log\"}]xyz";

	CHECK_STR(owner(&f, "[\"app\",{\"filename\":\"/var/log/a.log\"}]"), "app");
	CHECK_STR(owner(&f, " [ \"app\" , {\"filename\":\"/x\"}]"), "app");
	/* A name that only starts like one of ours, or ends like it. */
	CHECK(owner(&f, "[\"app-dev7\",{\"filename\":\"/x\"}]") == NULL);
	CHECK(owner(&f, "[\"ap\",{\"filename\":\"/x\"}]") == NULL);
	CHECK(owner(&f, "[\"xapp\",{\"filename\":\"/x\"}]") == NULL);
	/* Escapes are read as JSON: \" and \u03b1 (α) name ours. */
	CHECK_STR(owner(&f, "[\"app-dev\\\"7\",{}]"), "app-dev\"7");
	CHECK_STR(owner(&f, "[\"\\u03b1\",{}]"), "α");
	CHECK_STR(owner(&f, "[\"α\",{}]"), "α");
	/* Not an offset key: another tool's record in a shared topic. */
	CHECK(owner(&f, "app") == NULL);
	CHECK(owner(&f, "{\"app\":1}") == NULL);
	CHECK(owner(&f, "[1,{}]") == NULL);
	CHECK(owner(&f, "[\"app") == NULL);
	CHECK(owner(&f, "") == NULL);
	/* The key's bytes only: nothing past len is read. */
	CHECK(offsets_fleet_connector(&f, cut, 5) == NULL);
	CHECK(offsets_fleet_connector(&f, cut, strlen(cut) - 3) == &cs[0]);
}

static void test_mine(void)
{
	struct offsets_fleet f = {.device = "dev-a", .machine = "0123abcd", .store = "s1"};

	CHECK(offsets_fleet_mine(&f, "dev-a", "s1"));
	CHECK(offsets_fleet_mine(&f, "0123abcd", "s1"));
	/* No store id on the record (exactly-once, an older skiff): the device. */
	CHECK(offsets_fleet_mine(&f, "dev-a", NULL));
	/* Another store of the same device name (a clone, a copied card). */
	CHECK(!offsets_fleet_mine(&f, "dev-a", "s2"));
	CHECK(!offsets_fleet_mine(&f, "dev-b", "s2"));
	/* This store under another name (device.id changed): this store's. */
	CHECK(offsets_fleet_mine(&f, "dev-b", "s1"));
	/* No device header: Connect's, a tool's. */
	CHECK(!offsets_fleet_mine(&f, NULL, NULL));
	/* A store id made at this start, or none (the topic alone): the device. */
	f.made = true;
	CHECK(offsets_fleet_mine(&f, "dev-a", "s2"));
	CHECK(!offsets_fleet_mine(&f, "dev-b", "s1"));
	f.made = false;
	f.store[0] = '\0';
	CHECK(offsets_fleet_mine(&f, "dev-a", "s2"));
}

int main(void)
{
	test_connector_of_key();
	test_mine();
	return testlib_done("test_offsets_fleet");
}
