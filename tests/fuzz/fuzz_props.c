/* fuzz_props: libFuzzer target for the .properties reader (src/config/props.c).
 *
 * Any bytes are a properties file. Beyond "no crash, no leak, no undefined
 * behaviour", it checks what props.h promises of a successful parse: keys are
 * distinct, props_get finds each key's own value, lines are 1-based and never
 * past the input's last line, and strings are NUL-free C strings (the reader
 * refuses \u0000). A failed parse must say why, naming the file. */
#include "config/props.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t lines_in(const uint8_t *data, size_t size)
{
	size_t n = 1;

	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n')))
			n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct props *p = NULL;
	char errbuf[512] = "";

	if (props_load_mem("fuzz.properties", (const char *)data, size, &p, errbuf,
	                   sizeof(errbuf)) != 0) {
		if (p != NULL || strncmp(errbuf, "fuzz.properties", 15) != 0)
			abort(); /* a failure must leave *out NULL and name the file */
		return 0;
	}
	for (size_t i = 0; i < props_count(p); i++) {
		const char *k = props_key(p, i), *v = props_value(p, i);

		if (k == NULL || v == NULL || props_get(p, k) != v)
			abort();
		if (props_line(p, i) < 1 || (size_t)props_line(p, i) > lines_in(data, size))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(props_key(p, j), k) == 0)
				abort(); /* a key twice */
	}
	if (strcmp(props_name(p), "fuzz.properties") != 0)
		abort();
	props_destroy(p);
	return 0;
}
