/* tailcheck: a KIP-875 offset for the file source, checked (tailcheck.h). */
#include "tailcheck.h"

#include "config.h"
#include "jsonint.h"
#include "source.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int check_partition(const struct config_section *cfg, const char *partition, char *errbuf,
                           size_t errlen)
{
	cJSON *p = cJSON_Parse(partition);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "filename");
	int rc = 0;

	if (!cJSON_IsString(f) || cJSON_GetArraySize(p) != 1) {
		snprintf(errbuf, errlen,
		         "Partition objects should contain the key 'filename' (a string) and "
		         "nothing else");
		rc = SOURCE_ERR_CONFIG;
	}
	/* A file the connector does not read (now) is taken, as Connect takes
	 * it: its offset serves if the file or files setting comes to name
	 * it. */
	cJSON_Delete(p);
	return rc;
}

int tailcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                     char *errbuf, size_t errlen)
{
	static const char *const ids[] = {"dev",  "ino",  "fp",    "fplen",
	                                  "tail", "born", "after", "finished"};
	cJSON *o = cJSON_Parse(offset);
	const cJSON *m;
	int64_t v;
	int rc = check_partition(cfg, partition, errbuf, errlen);

	if (rc == 0 && jsonint_get(offset, "position", &v) != 0) {
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset is expected to be a Long "
		         "value (an integer, written without a fraction or exponent)");
		rc = SOURCE_ERR_CONFIG;
	} else if (rc == 0 && v < 0) {
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset should be a non-negative "
		         "value");
		rc = SOURCE_ERR_CONFIG;
	}
	cJSON_ArrayForEach(m, o)
	{
		bool known = strcmp(m->string, "position") == 0;

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]) && !known && rc == 0; i++) {
			if (strcmp(m->string, ids[i]) != 0)
				continue;
			known = true;
			if (jsonint_get(offset, ids[i], &v) != 0) {
				snprintf(errbuf, errlen,
				         "The value for the '%s' key in the offset is expected to "
				         "be a Long value",
				         ids[i]);
				rc = SOURCE_ERR_CONFIG;
			}
		}
		if (!known && rc == 0) {
			snprintf(errbuf, errlen,
			         "unknown key '%.100s' in the offset (the file source's offset is "
			         "'position' and optionally dev, ino, fp, fplen, tail, born, "
			         "after, finished)",
			         m->string);
			rc = SOURCE_ERR_CONFIG;
		}
	}
	cJSON_Delete(o);
	return rc;
}
