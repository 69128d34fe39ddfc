/* tolerance: errors.tolerance and errors.log.*, Connect's error handling
 * for a source connector (its RetryWithToleranceOperator around the
 * transformation and conversion stages); see core/tolerance.h.
 *
 * A record a transform or a converter cannot take fails the same way every
 * time (Connect's DataException, which it never retries: so
 * errors.retry.timeout has nothing to retry here). With errors.tolerance=none
 * the connector stops before it, its offset kept (the caller's
 * connector_fail). With all, the record is skipped: counted in
 * records_skipped, logged when errors.log.enable says so, and done, as
 * Connect's WorkerSourceTask acknowledges a dropped record: the record path
 * acknowledges its slot in the partition's FIFO at once, so the committed
 * offset moves past it once the records before it are acknowledged, and the
 * records after it still advance it.
 *
 * Connect (KIP-779, 3.2) extends errors.tolerance=all to the producer: a
 * record Kafka will never take (too large, an invalid topic, not authorised)
 * is skipped the same way, refused at once by the producer or later in its
 * delivery report. A delivery that failed for a reason a restart may pass
 * (a timeout) is not skipped: it stops the connector, offset kept, as with
 * none. Main loop only. */
#include "core/tolerance.h"

#include "config/settings.h"
#include "core/log.h"
#include "core/partitions.h"
#include "core/source.h"
#include "core/stats.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* The most of a record a log line shows. */
#define SHOWN_BYTES 1024

/* Renders v for the log, at most SHOWN_BYTES of it, into out. */
static void show_value(const struct record_value *v, char *out, size_t len)
{
	char *json;

	switch (v->kind) {
	case VALUE_NULL:
		snprintf(out, len, "null");
		return;
	case VALUE_STRING:
		snprintf(out, len, "\"%.*s\"%s", (int)(v->len < SHOWN_BYTES ? v->len : SHOWN_BYTES),
		         v->bytes, v->len > SHOWN_BYTES ? "..." : "");
		return;
	case VALUE_JSON:
		snprintf(out, len, "%.*s%s", (int)(v->len < SHOWN_BYTES ? v->len : SHOWN_BYTES),
		         v->bytes, v->len > SHOWN_BYTES ? "..." : "");
		return;
	case VALUE_STRUCT:
		json = cJSON_PrintUnformatted(v->payload);
		snprintf(out, len, "%.*s%s", SHOWN_BYTES, json ? json : "(out of memory)",
		         json && strlen(json) > SHOWN_BYTES ? "..." : "");
		free(json);
		return;
	}
}

/* errors.log.enable: one line; the record itself only with
 * errors.log.include.messages (Connect keeps keys and values out of the log
 * unless asked). */
static void log_skip(const struct tolerance *t, const char *name, const struct record *r,
                     const char *why)
{
	char key[SHOWN_BYTES + 64], value[SHOWN_BYTES + 64];

	if (!t->log_messages) {
		log_error("connector %s: errors.tolerance=all: skipped a record of %s: %s", name,
		          r->part->key, why);
		return;
	}
	show_value(&r->key, key, sizeof(key));
	show_value(&r->value, value, sizeof(value));
	log_error("connector %s: errors.tolerance=all: skipped a record of %s: %s; the record: "
	          "topic=%s key=%s value=%s headers=%zu",
	          name, r->part->key, why, r->topic, key, value, r->nheaders);
}

void tolerance_init(struct tolerance *t, const struct config_section *cfg)
{
	const struct connector_conf *cc = settings_connector(cfg);

	t->all = cc->tolerance == SETTINGS_TOLERANCE_ALL;
	t->log = cc->errors_log;
	t->log_messages = cc->errors_log_messages;
}

bool tolerance_refusal(struct tolerance *t, const char *name, const char *key, const char *reason)
{
	if (!t->all)
		return false;
	stats_add(t->skipped, 1);
	/* The record itself is gone by now: its delivery report has no copy. */
	if (t->log)
		log_error("connector %s: errors.tolerance=all: skipped a record of %s that Kafka "
		          "refused: %s",
		          name, key, reason);
	return true;
}

bool tolerance_record(struct tolerance *t, const char *name, const struct record *r,
                      const char *why)
{
	if (!t->all)
		return false;
	stats_add(t->skipped, 1);
	if (t->log)
		log_skip(t, name, r, why);
	return true;
}
