/* fleet_heartbeat: skiff's own records on a device's status topic (issue 28,
 * design §3.3), beside Kafka Connect's status records: encoded by the
 * device, decoded by `skiff fleet`. Connect's readers log and skip keys of
 * no kind they know, so an operator reading a device's status topic with
 * Connect's tools loses nothing.
 *
 *   skiff-heartbeat       {"device":"gw-0042","version":"0.28.0","at":ms,"seq":812,
 *                          "interval_ms":300000,"health":"ok","reason":null,
 *                          "last_ack_ms":ms,"lost":{"records":0,"bytes":0,"files":0},
 *                          "backlog_bytes":0,"rss_kb":8428,"connectors":["app"],
 *                          "groups":["site-berlin"],
 *                          "applied":{"skiff.config.gw-0042":{"id":"...","offset":17}}}
 *   skiff-outcome-NAME    {"topic":"skiff.config.gw-0042","offset":17,"record":"connector",
 *                          "outcome":"APPLIED","reason":null,"worker_id":"gw-0042",
 *                          "generation":12,"at":ms}
 *
 * A heartbeat is at most FLEET_HEARTBEAT_MAX bytes by construction: the
 * members are written in the order above, the numbers whole; the strings
 * (device, health, version, reason) cut to what is left, at a character
 * boundary, and the lists (connectors, groups, applied) keep as many of
 * their first items as fit. Whatever was left out is counted in a last
 * member, written only then:
 *   "truncated":{"connectors":N,"groups":N,"applied":N,"text":N}
 * (items left out of each list, strings cut; a count above 99999 is
 * written as 99999). interval_ms lets a reader call a device stale when its
 * last heartbeat is older than twice that.
 *
 * An outcome's reason is cut at FLEET_OUTCOME_REASON_MAX bytes of JSON
 * (ending in "..."). Strings are escaped by convert's Jackson escaper, as
 * Connect's records are; numbers are integers, read back exactly.
 *
 * Pure functions, any thread; never logs. Error convention: util/err.h. */
#ifndef SKIFF_FLEET_HEARTBEAT_H
#define SKIFF_FLEET_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet/connect_records.h"
#include "util/buf.h"
#include "util/err.h"

enum {
	FLEET_HEARTBEAT_OK = 0,
	FLEET_HEARTBEAT_ERR_NOMEM = -2,
	FLEET_HEARTBEAT_ERR_JSON = -3,   /* not one JSON object with each member once */
	FLEET_HEARTBEAT_ERR_SHAPE = -4,  /* a member missing or of another type */
	FLEET_HEARTBEAT_ERR_TOOBIG = -5, /* the output buffer's maximum, or a value past the
	                                    decoder's FLEET_HEARTBEAT_DECODE_MAX */
	FLEET_HEARTBEAT_ERR_ARG = -6,    /* encode: a NULL string that must be one */
};

#define FLEET_HEARTBEAT_MAX 512
#define FLEET_HEARTBEAT_DECODE_MAX 8192 /* a newer device's members fit */
#define FLEET_OUTCOME_REASON_MAX 1024

#define FLEET_HEARTBEAT_KEY "skiff-heartbeat"
#define FLEET_OUTCOME_PREFIX "skiff-outcome-"

const char *fleet_heartbeat_strerror(int code);

struct fleet_heartbeat_applied {
	const char *topic;
	const char *id; /* topic id; NULL: null */
	int64_t offset;
};

/* A heartbeat. Encode: the caller's pointers, borrowed. Decoded: owned by
 * the struct until fleet_heartbeat_clear. */
struct fleet_heartbeat {
	const char *device;
	const char *version;
	int64_t at_ms;
	int64_t seq;
	int64_t interval_ms;
	const char *health;
	const char *reason;  /* NULL: null */
	int64_t last_ack_ms; /* -1: none yet (null) */
	int64_t lost_records, lost_bytes, lost_files;
	int64_t backlog_bytes;
	int64_t rss_kb;
	const char *const *connectors;
	size_t nconnectors;
	const char *const *groups;
	size_t ngroups;
	const struct fleet_heartbeat_applied *applied;
	size_t napplied;
	/* Decoded: what the encoder left out ("truncated"); encode ignores them. */
	int64_t cut_connectors, cut_groups, cut_applied, cut_text;
	void *owned; /* decode's memory */
};

/* Appends hb's value to out: at most FLEET_HEARTBEAT_MAX bytes whatever hb
 * holds (see above). device, version and health must not be NULL
 * (FLEET_HEARTBEAT_ERR_ARG). Returns 0, _ARG, or out's error as _TOOBIG /
 * _NOMEM. */
int fleet_heartbeat_encode(const struct fleet_heartbeat *hb, struct buf *out);

/* Decodes a heartbeat value into *out (cleared first; the caller calls
 * fleet_heartbeat_clear, also on failure). Members not known here are
 * ignored (a newer device's). Returns 0, _JSON, _SHAPE (errbuf names the
 * member), _TOOBIG or _NOMEM. */
int fleet_heartbeat_decode(const char *value, size_t len, struct fleet_heartbeat *out, char *errbuf,
                           size_t errlen);

/* Frees what decode allocated; hb may be zeroed or half decoded. */
void fleet_heartbeat_clear(struct fleet_heartbeat *hb);

/* ---- outcomes ----------------------------------------------------------- */

enum fleet_outcome_kind {
	FLEET_OUTCOME_APPLIED,
	FLEET_OUTCOME_REFUSED,
};

/* The outcome of one config record on one device. record is the kind of
 * record answered: CONNECT_CONNECTOR, CONNECT_TARGET_STATE or
 * CONNECT_RESTART ("connector", "target-state", "restart"). Decoded
 * strings are owned until fleet_outcome_clear. */
struct fleet_outcome {
	const char *topic;
	int64_t offset;
	enum connect_kind record;
	enum fleet_outcome_kind outcome;
	const char *reason; /* NULL: null */
	const char *worker_id;
	int32_t generation;
	int64_t at_ms;
	void *owned;
};

/* "APPLIED", "REFUSED". */
const char *fleet_outcome_name(enum fleet_outcome_kind k);

/* Appends o's value. topic and worker_id must not be NULL, record one of
 * the three kinds (_ARG). */
int fleet_outcome_encode(const struct fleet_outcome *o, struct buf *out);

/* Decodes an outcome value into *out (cleared first; fleet_outcome_clear
 * after, also on failure). */
int fleet_outcome_decode(const char *value, size_t len, struct fleet_outcome *out, char *errbuf,
                         size_t errlen);

void fleet_outcome_clear(struct fleet_outcome *o);

/* Appends skiff-outcome-NAME. */
int fleet_outcome_key(const char *name, struct buf *out);

/* True when key (len bytes) is skiff-outcome-NAME with a non-empty NAME:
 * *name points into key. */
bool fleet_outcome_key_parse(const char *key, size_t len, const char **name, size_t *namelen);

#endif
