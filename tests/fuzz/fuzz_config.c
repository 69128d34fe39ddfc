/* fuzz_config: libFuzzer target for the configuration loader (src/config/settings.c,
 * src/config/config.c and the source tables, through settings_load, the function
 * skiff and skiff --check run first).
 *
 * The input is a worker file; when it holds the line "--connector--", what
 * follows is a connector file (Connect's two-file form). Beyond "no crash, no
 * leak, no undefined behaviour": a configuration that loads has at least one
 * connector, each with a name and a source, and prints (--check's output,
 * secrets masked) without trouble; one that does not load says why. The files
 * live in a private directory (/dev/shm preferred), removed at exit. */
#include "config/settings.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MARK "\n--connector--\n"

static char dir[256], worker[300], connector[300];
static FILE *devnull;

static void cleanup(void)
{
	unlink(worker);
	unlink(connector);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/skiff-fuzz-config-XXXXXX", base ? base : "/tmp");
	if (mkdtemp(dir) == NULL || (devnull = fopen("/dev/null", "w")) == NULL) {
		perror("fuzz_config");
		exit(1);
	}
	snprintf(worker, sizeof(worker), "%s/worker.properties", dir);
	snprintf(connector, sizeof(connector), "%s/connector.properties", dir);
	atexit(cleanup);
	return 0;
}

static void put_file(const char *name, const uint8_t *data, size_t len)
{
	FILE *f = fopen(name, "wb");

	if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *mark = memmem(data, size, MARK, sizeof(MARK) - 1);
	size_t first = mark ? (size_t)(mark - data) : size;
	char *paths[2] = {worker, connector};
	struct settings s;
	char errbuf[2048] = "";

	put_file(worker, data, first);
	if (mark != NULL)
		put_file(connector, mark + sizeof(MARK) - 1, size - first - (sizeof(MARK) - 1));
	if (settings_load(paths, mark ? 2 : 1, &s, errbuf, sizeof(errbuf)) != 0) {
		if (errbuf[0] == '\0')
			abort(); /* refused without a reason */
		settings_destroy(&s);
		return 0;
	}
	if (s.nconnectors == 0 || s.worker == NULL)
		abort();
	for (size_t i = 0; i < s.nconnectors; i++)
		if (s.connectors[i].name == NULL || s.connectors[i].ops == NULL ||
		    s.connectors[i].cfg == NULL)
			abort();
	settings_print(&s, devnull);
	settings_destroy(&s);
	return 0;
}
