/* test_device: this device's name (src/core/device.c): device.id, else
 * /etc/machine-id (SKIFF_MACHINE_ID_FILE here), else the id kept beside the
 * offset file; never the host name. */
#include "config/config.h"
#include "config/settings.h"
#include "core/device.h"
#include "config/props.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096], machine[4200], state[4200], kept[4300];

/* A worker section of text, its keys bound as settings_load binds them;
 * the caller destroys it. */
static struct config_section *worker(const char *text)
{
	const struct config_key *tables[1];
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 1};
	struct config_section *s = NULL;
	struct props *p = NULL;
	const char *name;
	size_t size;
	char err[512];

	CHECK(settings_table(0, &name, &tables[0], &size));
	CHECK_STR(name, "worker");
	CHECK_INT(props_load_mem("w.properties", text, strlen(text), &p, err, sizeof(err)), 0);
	CHECK_INT(config_section_load(p, &spec, &s, err, sizeof(err)), 0);
	CHECK_INT(config_section_keep(s, tables[0], size), 0);
	props_destroy(p);
	return s;
}

/* device_init for a worker keeping its offsets at state (with device.id
 * when id is not NULL), and the first device_name. */
static enum device_origin name_of(const char *id, bool create, char *out, size_t len)
{
	char text[8300];
	struct config_section *w;
	enum device_origin o;

	snprintf(text, sizeof(text), "offset.storage.file.filename=%s\n%s%s\n", state,
	         id ? "device.id=" : "", id ? id : "");
	w = worker(text);
	device_init(w, create);
	o = device_name(NULL, out, len);
	config_section_destroy(w);
	return o;
}

static void test_machine_id(void)
{
	char out[DEVICE_NAME_MAX], note[8192];

	testlib_write_file(machine, "0123456789abcdef0123456789abcdef\n", 33);
	CHECK_INT(name_of(NULL, true, out, sizeof(out)), DEVICE_MACHINE_ID);
	CHECK_STR(out, "0123456789abcdef0123456789abcdef");
	CHECK(!device_note(note, sizeof(note)));
	CHECK(access(kept, F_OK) != 0); /* nothing kept while there is a machine id */
	CHECK_INT(name_of("gw-7", true, out, sizeof(out)), DEVICE_CONFIGURED);
	CHECK_STR(out, "gw-7");
	CHECK_STR(device_origin_text(DEVICE_MACHINE_ID), "machine id");
}

static void test_kept_id(void)
{
	const char *bad[] = {"", "uninitialized\n", "0123456789abcdef\n",
	                     "0123456789ABCDEF0123456789ABCDEF\n"};
	char out[DEVICE_NAME_MAX], first[DEVICE_NAME_MAX], note[8192];
	char host[256] = "";

	(void)gethostname(host, sizeof(host));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unlink(kept);
		testlib_write_file(machine, bad[i], strlen(bad[i]));
		/* --check makes nothing */
		CHECK_INT(name_of(NULL, false, out, sizeof(out)), DEVICE_NONE);
		CHECK_STR(out, "");
		CHECK(access(kept, F_OK) != 0);
		CHECK_INT(name_of(NULL, true, first, sizeof(first)), DEVICE_KEPT);
		CHECK_INT(strlen(first), 32);
		CHECK(strcmp(first, host) != 0);
		CHECK(device_note(note, sizeof(note)));
		CHECK(strstr(note, "made now") != NULL && strstr(note, kept) != NULL);
		/* The next start takes the same one. */
		CHECK_INT(name_of(NULL, true, out, sizeof(out)), DEVICE_KEPT);
		CHECK_STR(out, first);
		CHECK(device_note(note, sizeof(note)));
		CHECK(strstr(note, "earlier start") != NULL);
		CHECK(strstr(device_origin_text(DEVICE_KEPT), kept) != NULL);
	}
	/* Cut short by a crash while it was made: made again. */
	testlib_write_file(kept, "0123", 4);
	CHECK_INT(name_of(NULL, true, out, sizeof(out)), DEVICE_KEPT);
	CHECK_INT(strlen(out), 32);
	/* Something else in its place is not overwritten. */
	testlib_write_file(kept, "not an id at all\n", 17);
	CHECK_INT(name_of(NULL, true, out, sizeof(out)), DEVICE_NONE);
	device_missing(note, sizeof(note));
	CHECK(strstr(note, "holds no id") != NULL && strstr(note, "device.id") != NULL);
	unlink(kept);
}

static void test_nowhere_to_keep(void)
{
	char out[DEVICE_NAME_MAX], note[8192];
	struct config_section *w = worker("device.id=\n");

	testlib_write_file(machine, "", 0);
	device_init(w, true);
	CHECK_INT(device_name(NULL, out, sizeof(out)), DEVICE_NONE);
	CHECK_STR(out, "");
	device_missing(note, sizeof(note));
	CHECK(strstr(note, "no offset.storage.file.filename") != NULL);
	CHECK(strstr(note, "device.id") != NULL);
	config_section_destroy(w);
	/* A state directory that does not exist: said, nothing made. */
	snprintf(state, sizeof(state), "%s/missing/offsets", dir);
	CHECK_INT(name_of(NULL, true, out, sizeof(out)), DEVICE_NONE);
	device_missing(note, sizeof(note));
	CHECK(strstr(note, "No such file or directory") != NULL);
	snprintf(state, sizeof(state), "%s/offsets", dir);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(machine, sizeof(machine), "%s/machine-id", dir);
	snprintf(state, sizeof(state), "%s/offsets", dir);
	snprintf(kept, sizeof(kept), "%s.device", state);
	setenv("SKIFF_MACHINE_ID_FILE", machine, 1);
	test_machine_id();
	test_kept_id();
	test_nowhere_to_keep();
	return testlib_done("test_device");
}
