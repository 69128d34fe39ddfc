/* Unit test of the held offset store (offsets_open_file_held): one writer per
 * store even when its lock file is deleted, because the store's own files are
 * locked; --check's plain open is never refused; a missing directory is
 * OFFSETS_ERR_NODIR (exit 78), not an I/O error. flock(2) locks belong to an
 * open file description, so a second open in this same process is refused
 * exactly as another process would be. */
#include "testlib.h"

#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY "[\"c\",{\"filename\":\"/var/log/a\"}]"

static void put_flush(struct offsets *o, const char *value)
{
	char err[1024] = "";

	CHECK_INT(offsets_put(o, KEY, value), 0);
	CHECK_INT(offsets_flush(o, err, sizeof(err)), 0);
}

int main(void)
{
	const char *dir = testlib_tmpdir();
	char path[512], lock[600], err[1024] = "", other[2048];
	struct offsets *a = NULL, *b = NULL;

	snprintf(path, sizeof(path), "%s/offsets", dir);
	snprintf(lock, sizeof(lock), "%s.lock", path);

	CHECK_INT(offsets_open_file_held(path, &a, err, sizeof(err)), 0);
	if (a == NULL)
		return testlib_done("test_offsets_lock");
	/* Fresh store: the lock file alone guards it. */
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), OFFSETS_ERR_LOCKED);
	CHECK(b == NULL && strstr(err, "another skiff") != NULL);

	/* Two generations written: path and path.prev are both held. */
	put_flush(a, "{\"position\":1}");
	put_flush(a, "{\"position\":2}");
	CHECK(unlink(lock) == 0);
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), OFFSETS_ERR_LOCKED);
	CHECK(b == NULL && strstr(err, path) != NULL && strstr(err, "another skiff") != NULL);

	/* A generation written after that is held too. */
	put_flush(a, "{\"position\":3}");
	CHECK(unlink(lock) == 0);
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), OFFSETS_ERR_LOCKED);

	/* --check reads a held store. */
	CHECK_INT(offsets_open_file(path, &b, err, sizeof(err)), 0);
	CHECK(b != NULL && strcmp(offsets_get(b, KEY), "{\"position\":3}") == 0);
	offsets_destroy(b);
	b = NULL;

	/* Released with the store: the next writer takes it and reads it. */
	offsets_destroy(a);
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), 0);
	CHECK(b != NULL && strcmp(offsets_get(b, KEY), "{\"position\":3}") == 0);
	offsets_destroy(b);

	/* The directory deleted and made again took every lock file with it:
	 * the abstract socket of the store's canonical path still refuses a
	 * second writer, also one naming the store another way. */
	CHECK_INT(offsets_open_file_held(path, &a, err, sizeof(err)), 0);
	put_flush(a, "{\"position\":4}");
	snprintf(other, sizeof(other), "rm -rf '%s/offsets'* && ln -s '%s' '%s/link'", dir, dir,
	         dir);
	CHECK(system(other) == 0);
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(other, sizeof(other), "%s/offsets", dir);
		else if (i == 1)
			snprintf(other, sizeof(other), "%s/link/offsets", dir);
		else
			snprintf(other, sizeof(other), "%s/../%s/offsets", dir,
			         strrchr(dir, '/') + 1);
		CHECK_INT(offsets_open_file_held(other, &b, err, sizeof(err)), OFFSETS_ERR_LOCKED);
		CHECK(b == NULL && strstr(err, "another skiff") != NULL);
	}
	offsets_destroy(a);
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), 0);
	offsets_destroy(b);

	/* No directory: a person must create it (78), named in the error. */
	snprintf(path, sizeof(path), "%s/no/such/dir/offsets", dir);
	CHECK_INT(offsets_open_file_held(path, &b, err, sizeof(err)), OFFSETS_ERR_NODIR);
	CHECK(strstr(err, "/no/such/dir") != NULL);
	return testlib_done("test_offsets_lock");
}
