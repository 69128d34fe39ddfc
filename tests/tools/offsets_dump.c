/* offsets_dump: loads offset stores with skiff's own code (offsets_open_file,
 * the function skiff calls at start-up) and prints what a restart would see.
 * Used by the fault tests to judge crash states, damaged files and the state
 * left after kill -9.
 *
 *   offsets_dump PATH...
 *   offsets_dump -          (the paths, one a line, on standard input)
 *
 * One JSON line per PATH, in order:
 *   {"path":P,"ok":true,"generation":N,"from_prev":false,
 *    "entries":[[KEY_TEXT,VALUE_TEXT],...]}
 *   {"path":P,"ok":false,"code":-2,"kind":"corrupt","error":"..."}
 * KEY_TEXT and VALUE_TEXT are the stored JSON texts, byte for byte. kind is
 * "io", "corrupt", "nomem" or "arg" (offsets.h). Like skiff, loading removes a
 * stale PATH.tmp. Exit status: 0 when every line was printed, 2 on a usage
 * or output error; a store that does not load is reported, not an exit code. */
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

static const char *kind(int rc)
{
	switch (rc) {
	case OFFSETS_ERR_IO:
		return "io";
	case OFFSETS_ERR_CORRUPT:
		return "corrupt";
	case OFFSETS_ERR_NOMEM:
		return "nomem";
	case OFFSETS_ERR_ARG:
		return "arg";
	default:
		return "other";
	}
}

/* The report for one store, or NULL when out of memory. */
static cJSON *report(const char *path)
{
	struct offsets *o = NULL;
	struct offsets_stats st;
	char errbuf[2048] = "";
	cJSON *r = cJSON_CreateObject(), *entries;
	int rc = offsets_open_file(path, &o, errbuf, sizeof(errbuf));

	if (r == NULL)
		goto fail;
	cJSON_AddStringToObject(r, "path", path);
	cJSON_AddBoolToObject(r, "ok", rc == 0);
	if (rc != 0) {
		cJSON_AddNumberToObject(r, "code", rc);
		cJSON_AddStringToObject(r, "kind", kind(rc));
		cJSON_AddStringToObject(r, "error", errbuf);
		return r;
	}
	offsets_stats(o, &st);
	cJSON_AddNumberToObject(r, "generation", (double)st.generation);
	cJSON_AddBoolToObject(r, "from_prev", st.loaded_from_prev != 0);
	entries = cJSON_AddArrayToObject(r, "entries");
	for (size_t i = 0; entries != NULL && i < offsets_count(o); i++) {
		cJSON *pair = cJSON_CreateArray();

		if (pair == NULL)
			goto fail;
		cJSON_AddItemToArray(entries, pair);
		cJSON_AddItemToArray(pair, cJSON_CreateString(offsets_key(o, i)));
		cJSON_AddItemToArray(pair, cJSON_CreateString(offsets_value(o, i)));
	}
	offsets_destroy(o);
	return r;
fail:
	offsets_destroy(o);
	cJSON_Delete(r);
	return NULL;
}

/* Prints the report for path; returns 0, or -1 when it could not. */
static int dump(const char *path)
{
	cJSON *r = report(path);
	char *text = r ? cJSON_PrintUnformatted(r) : NULL;
	bool ok = text != NULL && printf("%s\n", text) >= 0;

	free(text);
	cJSON_Delete(r);
	if (!ok)
		fprintf(stderr, "offsets_dump: %s: out of memory or cannot write\n", path);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: offsets_dump PATH... | offsets_dump -\n");
		return 2;
	}
	if (argc == 2 && strcmp(argv[1], "-") == 0) {
		while (rc == 0 && (n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = '\0';
			if (line[0] != '\0')
				rc = dump(line);
		}
		free(line);
	} else {
		for (int i = 1; i < argc && rc == 0; i++)
			rc = dump(argv[i]);
	}
	return rc == 0 && fflush(stdout) == 0 ? 0 : 2;
}
