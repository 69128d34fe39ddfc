/* txrec: a record while it passes through a transform chain, in Connect's
 * data model: a topic, a key and a value each as a schema (Connect's JSON
 * form, as convert.h describes it; NULL for none) and a payload (NULL for
 * null), a timestamp, and headers.
 *
 * Key and value are taken from the source's record lazily: a transform that
 * only renames the topic never copies the value, and a line that no
 * transform touched reaches the converter as its bytes. A line, once taken,
 * is a STRING schema and a string payload (Connect's FileStreamSourceTask
 * gives the same). Main loop only. */
#ifndef SKIFF_TXREC_H
#define SKIFF_TXREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/source.h"
#include "util/err.h"

/* Most headers a transformed record may carry. */
#define TXREC_MAX_HEADERS 32

/* Failures of txrec_* (util/err.h). Memory is the one failure of most of
 * them, so it keeps -1, the value their callers have always tested. */
enum txrec_err {
	TXREC_OK = 0,
	TXREC_ERR_NOMEM = -1,   /* out of memory */
	TXREC_ERR_HEADERS = -2, /* more than TXREC_MAX_HEADERS headers */
};

/* A short text for a txrec_err code; never NULL. */
const char *txrec_strerror(int err);

struct txdata {
	const struct record_value *src; /* the source's, until taken */
	bool taken;                     /* schema and payload below are the data */
	cJSON *schema;                  /* owned; NULL: no schema */
	cJSON *payload;                 /* owned; NULL: null */
};

struct txheader {
	char *name;  /* owned */
	char *value; /* owned; NULL for a null header */
	size_t len;
};

struct txrec {
	char *topic; /* owned */
	struct txdata key, value;
	int64_t timestamp_ms; /* 0: none (Connect's null) */
	size_t nheaders;
	struct txheader headers[TXREC_MAX_HEADERS];
};

/* Fills t from r (t must be zeroed or released). Returns 0 or -1 (memory). */
int txrec_load(struct txrec *t, const struct record *r);

/* Makes d's schema and payload the data (copying the source's). Returns 0 or
 * -1 (memory). */
int txrec_take(struct txdata *d);

/* Replaces d's data with schema and payload (both taken over, either NULL). */
void txrec_set(struct txdata *d, cJSON *schema, cJSON *payload);

/* Ends a transform's rebuild of d: with rc 0, d takes schema and payload
 * (txrec_set); otherwise both are freed and d is left as it was. Returns rc. */
int txrec_finish(struct txdata *d, cJSON *schema, cJSON *payload, int rc);

/* True when d is null (a tombstone value, or no key). */
bool txrec_is_null(const struct txdata *d);

/* Appends a header (copies name and len bytes of value; value NULL: a null
 * header). Returns TXREC_OK, TXREC_ERR_NOMEM or TXREC_ERR_HEADERS. */
int txrec_add_header(struct txrec *t, const char *name, const char *value, size_t len);

/* Removes header i. */
void txrec_remove_header(struct txrec *t, size_t i);

/* Sets t's topic to a copy of topic. Returns 0 or -1 (memory). */
int txrec_set_topic(struct txrec *t, const char *topic);

/* Fills out (a record) from t: the record_values point into t (a taken
 * data becomes a VALUE_STRUCT of any schema, or VALUE_NULL), the headers
 * into hdr[], which must have TXREC_MAX_HEADERS entries; *nhdr is set. */
void txrec_view(const struct txrec *t, struct record *out, struct record_header *hdr, size_t *nhdr);

/* Frees what t owns and zeroes it. */
void txrec_release(struct txrec *t);

/* ---- Connect schemas in their JSON form ------------------------------- */

/* The schema's type ("struct", "string", "int64"; float32/float64 read as
 * "float"/"double"), "" for none. */
const char *txschema_type(const cJSON *s);
bool txschema_optional(const cJSON *s);
const char *txschema_str(const cJSON *s, const char *member); /* NULL: absent */

/* A new primitive schema {"type":type,"optional":optional}, or NULL. */
cJSON *txschema_new(const char *type, bool optional);

/* A new struct schema with s's name, version, doc and parameters (Connect's
 * SchemaUtil.copySchemaBasics: not optional, no fields yet), or NULL. */
cJSON *txschema_struct_from(const cJSON *s);

/* Adds field name with schema fs (taken over) to struct schema s. Returns 0
 * or -1 (memory: fs is freed). */
int txschema_add_field(cJSON *s, const char *name, cJSON *fs);

/* The field named name of struct schema s, or NULL. */
const cJSON *txschema_field(const cJSON *s, const char *name);

/* A copy of field schema f without its "field" member (the schema of the
 * field's value), or NULL. */
cJSON *txschema_of_field(const cJSON *f);

/* Java's class name of what Connect would hold for payload p of schema s
 * ("java.lang.String", "org.apache.kafka.connect.data.Struct", "null"), for
 * messages that quote Connect's. */
const char *txschema_java_class(const cJSON *s, const cJSON *p);

/* An integer payload item (raw text or number). Returns 0 and *v, or -1. */
int txvalue_int(const cJSON *p, int64_t *v);

/* Takes d and checks it holds a struct with a schema, as Connect's
 * Requirements.requireStruct. Returns 0, TX_ERR with "Only Struct objects
 * supported for [purpose], found: CLASS" in errbuf, or TX_ERR_NOMEM. */
int txrec_require_struct(struct txdata *d, const char *purpose, char *errbuf, size_t errlen);

/* A new raw integer item, or NULL. */
cJSON *txvalue_new_int(int64_t v);

#endif
