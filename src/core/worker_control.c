/* worker_control: each partition's counts and its connector's active
 * topics, from the record path (the REST API's commands and KIP-875's
 * edits: core/query.c; connector changes: core/reload.c). Main loop
 * only. */
#include "core/worker.h"
#include "core/worker_private.h"

#include "core/active_topics.h"
#include "config/config.h"
#include "core/connectors.h"
#include "core/log.h"
#include "offsets/offsets.h"
#include "offsets/offsets_doc.h"
#include "control/rest.h"
#include "core/sink.h"
#include "core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a partition's counts and active topics ------------------------------ */

void worker_control_produced(const struct record *r, const char *topic, size_t vlen)
{
	struct partition *p = r->part;

	p->produced++;
	p->read_bytes += r->value.kind == VALUE_STRING ? r->value.len : vlen;
	partition_head(p, p->conn->w->turn_ms);
	/* The connector's active topics (Connect's): out of memory leaves this
	 * one unlisted, as Connect's list is only informative. */
	(void)active_topics_note(&p->conn->topics, topic);
}

void worker_control_forget(struct conn *c)
{
	active_topics_free(c->topics);
	c->topics = NULL;
}

void worker_control_acked(struct partition *p, bool ok)
{
	if (ok) {
		p->acked++;
		p->last_ack_ms = p->conn->w->turn_epoch_ms;
	}
	connector_acked(p);
}
