/* tailcheck: a KIP-875 offset for the file source, checked (tailcheck.h). */
#include "tailcheck.h"

#include "config.h"
#include "jsonint.h"
#include "source.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether cfg's connector follows path, or would once it exists. */
static bool follows(const struct config_section *cfg, const char *path)
{
	const char *file = config_str(cfg, "file"), *base = strrchr(path, '/');
	size_t n = config_list_len(cfg, "files");
	bool match = false;

	if (file != NULL && file[0] != '\0')
		return strcmp(file, path) == 0;
	for (size_t i = 0; i < n && !match; i++) {
		const char *p = config_list_item(cfg, "files", i);

		match = strcmp(p, path) == 0 || fnmatch(p, path, FNM_PATHNAME) == 0;
	}
	base = base != NULL ? base + 1 : path;
	n = config_list_len(cfg, "files.exclude");
	for (size_t i = 0; i < n && match; i++) {
		const char *x = config_list_item(cfg, "files.exclude", i);

		match = fnmatch(x, strchr(x, '/') ? path : base,
		                strchr(x, '/') ? FNM_PATHNAME : 0) != 0;
	}
	return match;
}

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
	} else if (!follows(cfg, f->valuestring)) {
		snprintf(errbuf, errlen,
		         "the partition's 'filename' %.300s is not a file this connector reads "
		         "(its file or files setting)",
		         f->valuestring);
		rc = SOURCE_ERR_FOREIGN;
	}
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
		/* Connect's words; a number that Java would read as a Long only
		 * as written otherwise gets the reason too. */
		snprintf(errbuf, errlen,
		         "The value for the 'position' key in the offset is expected to be a Long "
		         "value%s",
		         cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "position"))
		             ? " (an integer, written without a fraction or exponent)"
		             : "");
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
