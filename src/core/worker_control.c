/* worker_control: what the REST API steers in the worker, through the
 * query (core/query.c; the API itself is control/rest_worker.c): a
 * connector's pause/resume/stop/restart (core/connectors.c keeps their
 * promise), KIP-875 offset edits; and each partition's counts and active
 * topics (connector changes: core/reload.c). Main loop only. */
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

/* A reload leaves a removed connector's slot as a tombstone (the loop holds
 * pointers into the array): connectors are indexed among live ones. */
static struct conn *live(struct worker *w, size_t i)
{
	for (size_t k = 0; k < w->nconns; k++)
		if (!w->conns[k]->removed && i-- == 0)
			return w->conns[k];
	return NULL;
}

/* ---- pause, resume, stop, restart (core/connectors.c) ------------------------ */

void worker_control_acked(struct partition *p, bool ok)
{
	if (ok) {
		p->acked++;
		p->last_ack_ms = p->conn->w->turn_epoch_ms;
	}
	connector_acked(p);
}

/* worker_private.h */
int worker_control(void *ctx, size_t i, enum rest_action a, char *errbuf, size_t errlen)
{
	struct conn *c = live(ctx, i);
	int rc;

	switch (a) {
	case REST_RESTART:
		connector_restart(c);
		return 0;
	case REST_PAUSE:
		rc = connector_pause(c, errbuf, errlen);
		break;
	case REST_RESUME:
		rc = connector_resume(c, errbuf, errlen);
		break;
	default:
		rc = connector_stop(c, errbuf, errlen);
		break;
	}
	return rc == 0 ? 0 : rc == CONNECTORS_ERR_STATE ? REST_ERR_STATE : REST_ERR;
}

/* ---- offsets (KIP-875) ----------------------------------------------------- */

/* worker_private.h */
int worker_offsets_get(void *ctx, size_t i, char **json)
{
	struct worker *w = ctx;

	return offsets_doc_print(w->offsets, live(w, i)->cs->name, json) == 0 ? 0 : REST_ERR_NOMEM;
}

/* worker_private.h */
int worker_offsets_alter(void *ctx, size_t i, const struct offsets_doc_entry *e, size_t n,
                         char *errbuf, size_t errlen)
{
	struct worker *w = ctx;
	struct conn *c = live(w, i);
	const char *name = c->cs->name;
	bool deferred = false;
	int rc;

	if (c->run != CONN_STOPPED || c->stopped) {
		snprintf(errbuf, errlen,
		         "Connectors must be in the STOPPED state before their "
		         "offsets can be modified. This can be done for the specified connector by "
		         "issuing a 'PUT' request to the '/connectors/%s/stop' endpoint",
		         name);
		return REST_ERR_STATE;
	}
	rc = commits_alter(w->commits, c->cs, e, n, errbuf, errlen);
	if (rc == 0) {
		log_notice("connector %s: offsets %s (REST API)", name, e ? "altered" : "reset");
		rc = commits_write_now(w->commits, &deferred, errbuf, errlen);
	}
	if (deferred)
		w->next_flush = loop_now_ms(); /* the flush timer writes it */
	return rc == 0                    ? 0
	       : rc == COMMITS_ERR_SOURCE ? REST_ERR_SOURCE
	       : rc == COMMITS_ERR_NOMEM  ? REST_ERR_NOMEM
	       : rc == COMMITS_ERR_WRITE  ? REST_ERR
	                                  : REST_ERR_ARG;
}
