/* kconf: one librdkafka property set from skiff's configuration, for the
 * records' producer (sink_kafka.c) and the offsets topic's clients
 * (offsets_kafka.c) alike, with one way of saying why it was refused.
 *
 * A refused property's error names where it came from and its key, and
 * librdkafka's reason with the value masked: the key may be a secret
 * librdkafka does not know (sasl.pasword: misspelt, so nothing marks it as
 * one), so a value is never printed, except a *.location's path. The files
 * the TLS *.location keys name are checked first, so that a missing one says
 * so instead of OpenSSL's "system lib". Error convention: util/err.h. */
#ifndef SKIFF_KCONF_H
#define SKIFF_KCONF_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "util/err.h"

struct config_section;

enum kconf_err {
	KCONF_OK = 0,
	KCONF_ERR = -1, /* refused: errbuf says "where: name: why" */
	/* kconf_new: no client for want of memory or threads (librdkafka's
	 * RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE, "Failed to create thread:
	 * Cannot allocate memory"), which a restart may cure, rather than for
	 * its configuration. */
	KCONF_ERR_NOMEM = -2,
};

/* A short text for a kconf_err code; never NULL. */
const char *kconf_strerror(int err);

/* Sets name=value in conf. where says where the value came from
 * ("file:line", "defaults", or the key that implied it). Returns 0, or
 * KCONF_ERR with errbuf "where: name: why" ("where: name = path: why" for a
 * *.location key). */
int kconf_set(rd_kafka_conf_t *conf, const char *name, const char *value, const char *where,
              char *errbuf, size_t errlen);

/* A property set with the worker's connection settings, as Connect gives
 * its internal clients (the offsets topic's, the fleet's): bootstrap.servers,
 * security.protocol, sasl.*, ssl.* and skiff's kafka.X (not producer.X: those
 * are the records' producer), client_id, log_level 3 (their warnings, a
 * coordinator still loading, repeat the records' producer's, which logs them
 * in skiff's words; errors still show) and kconf_log. Returns the set (the
 * caller's: kconf_new takes it, or rd_kafka_conf_destroy), or NULL with
 * errbuf "where: name: why" for a refused property. */
rd_kafka_conf_t *kconf_worker(const struct config_section *w, const char *client_id, char *errbuf,
                              size_t errlen);

/* rd_kafka_new(type, conf, errbuf, errlen) into *out, with one thing done
 * around the process's first call, which runs librdkafka's global init:
 * unless conf's sasl.mechanisms is GSSAPI (or SASL_PATH is set), SASL_PATH
 * is set empty for that call, so that sasl_client_init() loads none of Cyrus
 * SASL's plugins. librdkafka uses Cyrus for GSSAPI only (PLAIN, SCRAM and
 * OAUTHBEARER are its own), and the plugins and the Berkeley DB one of them
 * needs are ~0.5 MB resident. A configuration that turns to GSSAPI by a
 * reload needs a restart. Takes conf as rd_kafka_new() does (owned by the
 * client on success, still the caller's on failure). Returns KCONF_OK, or
 * KCONF_ERR or KCONF_ERR_NOMEM with *out NULL and errbuf librdkafka's
 * reason. Main thread, before any other thread calls getenv. */
int kconf_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, rd_kafka_t **out, char *errbuf,
              size_t errlen);

/* A librdkafka log callback (rd_kafka_conf_set_log_cb) for the clients
 * other than the records' producer (which folds its own, sink_kafka.c):
 * each line through log.h as "kafka (<client.id>): FAC: text", a warning
 * (debug above librdkafka's level 4), instead of librdkafka's raw
 * "%3|...|FAIL|..." on stderr; at most one line per facility a minute, the
 * next one saying how many were folded. Any thread (librdkafka's). */
void kconf_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf);

#endif
