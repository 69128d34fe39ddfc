/* kconf: librdkafka properties with skiff's errors (see kconf.h). */
#include "kconf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether name's value is a path, which may be printed. */
static bool is_location(const char *name)
{
	size_t n = strlen(name), suffix = strlen(".location");

	return n > suffix && strcmp(name + n - suffix, ".location") == 0;
}

/* Copies why into out with every occurrence of value as "[hidden]". */
static void mask(const char *why, const char *value, char *out, size_t outlen)
{
	size_t vlen = strlen(value), used = 0;
	const char *p = why, *hit;

	out[0] = '\0';
	while (vlen > 0 && (hit = strstr(p, value)) != NULL && used < outlen) {
		used +=
		    (size_t)snprintf(out + used, outlen - used, "%.*s[hidden]", (int)(hit - p), p);
		p = hit + vlen;
	}
	if (used < outlen)
		snprintf(out + used, outlen - used, "%s", p);
}

int kconf_set(rd_kafka_conf_t *conf, const char *name, const char *value, const char *where,
              char *errbuf, size_t errlen)
{
	char why[512], shown[600];

	if (rd_kafka_conf_set(conf, name, value, why, sizeof(why)) == RD_KAFKA_CONF_OK)
		return 0;
	if (is_location(name)) {
		snprintf(errbuf, errlen, "%s: %s = %s: %s", where, name, value, why);
		return KCONF_ERR;
	}
	mask(why, value, shown, sizeof(shown));
	snprintf(errbuf, errlen, "%s: %s: %s", where, name, shown);
	return KCONF_ERR;
}
