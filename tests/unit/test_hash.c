/* test_hash: the string index (src/util/hash.c). */
#include "util/hash.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 5000

static void test_put_get(void)
{
	static char keys[N][16];
	struct hash h;
	size_t idx = 0;
	int ok = 1;

	hash_init(&h);
	CHECK(!hash_get(&h, "a", &idx)); /* empty: nothing allocated */
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key-%d", i);
		if (hash_put(&h, keys[i], (size_t)i) != 0)
			ok = 0;
	}
	CHECK(ok);
	CHECK_INT(hash_count(&h), N);
	for (int i = 0; i < N; i++) {
		char probe[16];

		/* Found by content, not by pointer. */
		snprintf(probe, sizeof(probe), "key-%d", i);
		if (!hash_get(&h, probe, &idx) || idx != (size_t)i)
			ok = 0;
	}
	CHECK(ok);
	CHECK(!hash_get(&h, "key-5000", &idx));
	CHECK(!hash_get(&h, "", &idx));
	hash_clear(&h);
	CHECK_INT(hash_count(&h), 0);
	CHECK(!hash_get(&h, "key-1", &idx));
	CHECK_INT(hash_put(&h, keys[7], 0), 0);
	CHECK(hash_get(&h, "key-7", &idx) && idx == 0);
	hash_free(&h);
	hash_free(&h); /* twice: a freed index is an empty one */
	CHECK(!hash_get(&h, "key-7", &idx));
}

/* Keys whose hashes collide in the low bits still resolve by comparing. */
static void test_collisions(void)
{
	const char *keys[] = {"", "a", "b", "ab", "ba", "[\"c\",{\"f\":\"x\"}]"};
	struct hash h;
	size_t idx = 99;

	hash_init(&h);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK_INT(hash_put(&h, keys[i], i), 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK(hash_get(&h, keys[i], &idx) && idx == i);
	hash_free(&h);
}

/* Removing keys in any order leaves every other key found: 2,000 keys in
 * an index kept three quarters full (long probe runs), every other one
 * removed, then the rest; a removed key is found no more and may be put
 * again. */
static void test_del(void)
{
	static char keys[2000][16];
	struct hash h;
	size_t idx = 99;

	hash_init(&h);
	CHECK(!hash_del(&h, "none", &idx));
	for (size_t i = 0; i < 2000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		CHECK_INT(hash_put(&h, keys[i], i), 0);
	}
	for (size_t i = 0; i < 2000; i += 2)
		CHECK(hash_del(&h, keys[i], &idx) && idx == i);
	CHECK(!hash_del(&h, keys[0], NULL));
	CHECK_INT(hash_count(&h), 1000);
	for (size_t i = 0; i < 2000; i++)
		CHECK(hash_get(&h, keys[i], &idx) == (i % 2 == 1) && (i % 2 == 0 || idx == i));
	CHECK_INT(hash_put(&h, keys[0], 7), 0);
	CHECK(hash_get(&h, keys[0], &idx) && idx == 7);
	for (int i = 1999; i > 0; i -= 2)
		CHECK(hash_del(&h, keys[i], NULL));
	CHECK(hash_del(&h, keys[0], NULL));
	CHECK_INT(hash_count(&h), 0);
	for (size_t i = 0; i < 2000; i++)
		CHECK(!hash_get(&h, keys[i], &idx));
	hash_free(&h);
}

static void test_fnv(void)
{
	/* FNV-1a 64 reference values. */
	CHECK(hash_str("") == 14695981039346656037ull);
	CHECK(hash_str("a") == 0xaf63dc4c8601ec8cull);
	CHECK_STR(hash_strerror(HASH_ERR_NOMEM), "out of memory");
}

int main(void)
{
	test_put_get();
	test_collisions();
	test_del();
	test_fnv();
	return testlib_done("test_hash");
}
