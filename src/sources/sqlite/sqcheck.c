/* sqcheck: whether an offset a person sends (KIP-875, REST PATCH) is one the
 * SQLite source would use, checked against the connector's configuration. */
#include "source.h"
#include "source_sqlite.h"

#include "config.h"
#include "jsonint.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Whether name is one of the configured tables. */
static bool configured_table(const struct config_section *cfg, const char *name)
{
	const char *key =
	    config_list_len(cfg, "table.include.list") ? "table.include.list" : "table.whitelist";

	for (size_t i = 0; i < config_list_len(cfg, key); i++)
		if (strcmp(config_list_item(cfg, key, i), name) == 0)
			return true;
	return false;
}

/* The partition the source writes for this configuration: {"query":"query"},
 * {"table":T} (bulk) or {"protocol":"1","table":T}. */
static bool partition_ok(const struct config_section *cfg, const cJSON *p, bool bulk)
{
	const char *query = config_str(cfg, "query");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "table");
	const cJSON *proto = cJSON_GetObjectItemCaseSensitive(p, "protocol");

	if (!cJSON_IsObject(p))
		return false;
	if (query != NULL && query[0] != '\0') {
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(p, "query");

		return cJSON_GetArraySize(p) == 1 && cJSON_IsString(q) &&
		       strcmp(q->valuestring, "query") == 0;
	}
	if (!cJSON_IsString(t) || !configured_table(cfg, t->valuestring))
		return false;
	if (bulk)
		return cJSON_GetArraySize(p) == 1;
	return cJSON_GetArraySize(p) == 2 && cJSON_IsString(proto) &&
	       strcmp(proto->valuestring, "1") == 0;
}

/* Each member an exact integer, the mode's members present, nothing else. */
static bool offset_ok(const char *mode, const char *offset)
{
	static const char *const keys[] = {"incrementing", "timestamp", "timestamp_nanos"};
	bool inc = strstr(mode, "incrementing") != NULL, ts = strstr(mode, "timestamp") != NULL;
	cJSON *o = cJSON_Parse(offset);
	int64_t v;
	int found = 0;
	bool ok = cJSON_IsObject(o);

	for (size_t i = 0; ok && i < sizeof(keys) / sizeof(keys[0]); i++) {
		bool want = i == 0 ? inc : ts;

		if (cJSON_GetObjectItemCaseSensitive(o, keys[i]) == NULL) {
			ok = !want || i == 2; /* the nanos are optional */
			continue;
		}
		ok = want && jsonint_get(offset, keys[i], &v) == 0 && v >= 0;
		found++;
	}
	ok = ok && found == cJSON_GetArraySize(o);
	cJSON_Delete(o);
	return ok;
}

int sqcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                   char *errbuf, size_t errlen)
{
	const char *mode = config_str(cfg, "mode");
	bool bulk = mode == NULL || strcmp(mode, "bulk") == 0;
	cJSON *p = cJSON_Parse(partition);
	bool part = partition_ok(cfg, p, bulk);

	cJSON_Delete(p);
	if (!part) {
		snprintf(errbuf, errlen,
		         "the partition %s is not one of this connector's: {\"protocol\":\"1\","
		         "\"table\":<a configured table>} ({\"table\":…} in bulk mode), or "
		         "{\"query\":\"query\"} with query=",
		         partition);
		return SOURCE_ERR_CONFIG;
	}
	if (bulk) {
		snprintf(errbuf, errlen,
		         "mode=bulk keeps no offset: only null (a reset) can be stored");
		return SOURCE_ERR_CONFIG;
	}
	if (!offset_ok(mode, offset)) {
		snprintf(
		    errbuf, errlen,
		    "the offset for mode=%s holds %s as non-negative integers (and nothing else)",
		    mode,
		    strcmp(mode, "incrementing") == 0 ? "\"incrementing\""
		    : strcmp(mode, "timestamp") == 0
		        ? "\"timestamp\" (ms) and optionally \"timestamp_nanos\""
		        : "\"incrementing\", \"timestamp\" and optionally \"timestamp_nanos\"");
		return SOURCE_ERR_CONFIG;
	}
	return 0;
}
