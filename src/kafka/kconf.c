/* kconf: librdkafka properties with skiff's errors (see kconf.h). */
#include "kafka/kconf.h"

#include "config/config.h"
#include "config/settings.h"
#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Whether name's value is a path, which may be printed. */
static bool is_location(const char *name)
{
	size_t n = strlen(name), suffix = strlen(".location");

	return n > suffix && strcmp(name + n - suffix, ".location") == 0;
}

/* The TLS files librdkafka hands to OpenSSL, whose error for a missing one
 * is only "system lib". "probe" (ssl.ca.location) asks for the system's
 * CAs. Returns 0, or KCONF_ERR with errbuf "where: name = path: why". */
static int readable(const char *name, const char *value, const char *where, char *errbuf,
                    size_t errlen)
{
	static const char *const files[] = {"ssl.key.location", "ssl.certificate.location",
	                                    "ssl.ca.location", "ssl.crl.location"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (strcmp(name, files[i]) != 0 || value[0] == '\0' || strcmp(value, "probe") == 0)
			continue;
		if (access(value, R_OK) != 0) {
			snprintf(errbuf, errlen, "%s: %s = %s: %s", where, name, value,
			         strerror(errno));
			return KCONF_ERR;
		}
	}
	return 0;
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

	if (readable(name, value, where, errbuf, errlen) != 0)
		return KCONF_ERR;
	if (rd_kafka_conf_set(conf, name, value, why, sizeof(why)) == RD_KAFKA_CONF_OK)
		return 0;
	if (is_location(name)) {
		/* Bounded, so gcc on 32-bit targets sees the length fit an int. */
		snprintf(errbuf, errlen, "%.1024s: %.256s = %.4096s: %s", where, name, value, why);
		return KCONF_ERR;
	}
	mask(why, value, shown, sizeof(shown));
	snprintf(errbuf, errlen, "%s: %s: %s", where, name, shown);
	return KCONF_ERR;
}

/* Whether conf authenticates with SASL/GSSAPI, librdkafka's default
 * mechanism, used only when security.protocol is sasl_*. */
static bool gssapi(const rd_kafka_conf_t *conf)
{
	char val[64];
	size_t n = sizeof(val);

	if (rd_kafka_conf_get(conf, "security.protocol", val, &n) != RD_KAFKA_CONF_OK ||
	    strncasecmp(val, "sasl", 4) != 0)
		return false;
	n = sizeof(val);
	return rd_kafka_conf_get(conf, "sasl.mechanisms", val, &n) != RD_KAFKA_CONF_OK ||
	       strcmp(val, "GSSAPI") == 0;
}

int kconf_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, rd_kafka_t **out, char *errbuf,
              size_t errlen)
{
	static bool first = true;
	bool quiet = false;

	if (first) {
		first = false;
		/* Cyrus reads SASL_PATH as the plugin directories, "" as none. */
		quiet =
		    !gssapi(conf) && getenv("SASL_PATH") == NULL && setenv("SASL_PATH", "", 0) == 0;
	}
	*out = rd_kafka_new(type, conf, errbuf, errlen);
	if (quiet)
		unsetenv("SASL_PATH");
	if (*out != NULL)
		return KCONF_OK;
	/* rd_kafka_last_error() is this thread's, set by rd_kafka_new. */
	return rd_kafka_last_error() == RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE ? KCONF_ERR_NOMEM
	                                                                     : KCONF_ERR;
}

const char *kconf_strerror(int err)
{
	switch (err) {
	case KCONF_OK:
		return "no error";
	case KCONF_ERR:
		return "refused";
	case KCONF_ERR_NOMEM:
		return "out of memory or threads";
	default:
		return "unknown error";
	}
}

/* Folding of kconf_log's lines: per facility, one a minute. */
#define FOLDS 8
#define FOLD_S 60

static struct {
	char fac[16];
	time_t at;
	unsigned suppressed;
} folds[FOLDS];
static pthread_mutex_t folds_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether a line of fac is due now; *repeats: those folded since the last. */
static bool fold_due(const char *fac, unsigned *repeats)
{
	struct timespec ts;
	size_t i, oldest = 0;
	bool due = true;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	*repeats = 0;
	pthread_mutex_lock(&folds_lock);
	for (i = 0; i < FOLDS && strcmp(folds[i].fac, fac) != 0; i++)
		if (folds[i].at < folds[oldest].at)
			oldest = i;
	if (i == FOLDS) { /* a new facility takes the oldest slot */
		i = oldest;
		snprintf(folds[i].fac, sizeof(folds[i].fac), "%s", fac);
		folds[i].suppressed = 0;
	} else if (ts.tv_sec - folds[i].at < FOLD_S) {
		folds[i].suppressed++;
		due = false;
	}
	if (due) {
		*repeats = folds[i].suppressed;
		folds[i].at = ts.tv_sec;
		folds[i].suppressed = 0;
	}
	pthread_mutex_unlock(&folds_lock);
	return due;
}

void kconf_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	const char *name = rd_kafka_name(rk);
	int n = (int)strcspn(name, "#");
	unsigned repeats;

	if (!fold_due(fac, &repeats))
		return;
	if (repeats > 0)
		log_msg(level <= 4 ? LOG_WARN : LOG_DEBUG,
		        "kafka (%.*s): %s: %s (and %u more like it in the last minute)", n, name,
		        fac, buf, repeats);
	else
		log_msg(level <= 4 ? LOG_WARN : LOG_DEBUG, "kafka (%.*s): %s: %s", n, name, fac,
		        buf);
}

rd_kafka_conf_t *kconf_worker(const struct config_section *w, const char *client_id, char *errbuf,
                              size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();

	if (kconf_set(conf, "bootstrap.servers", settings_worker(w)->bootstrap.text,
	              config_where(w, "bootstrap.servers"), errbuf, errlen) != 0 ||
	    kconf_set(conf, "client.id", client_id, "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "log_level", "3", "defaults", errbuf, errlen) != 0 ||
	    kconf_set(conf, "log.connection.close", "false", "defaults", errbuf, errlen) != 0)
		goto fail;
	rd_kafka_conf_set_log_cb(conf, kconf_log);
	for (size_t i = 0; i < config_passthrough_count(w); i++) {
		const char *k = config_passthrough_key(w, i);

		if (strncmp(k, "kafka.", 6) == 0)
			k += 6;
		else if (strncmp(k, "security.", 9) != 0 && strncmp(k, "sasl.", 5) != 0 &&
		         strncmp(k, "ssl.", 4) != 0)
			continue;
		if (kconf_set(conf, k, config_passthrough_value(w, i),
		              config_passthrough_where(w, i), errbuf, errlen) != 0)
			goto fail;
	}
	return conf;
fail:
	rd_kafka_conf_destroy(conf);
	return NULL;
}
