/* jfields: one journal datum ("FIELD=value", value any bytes) into a
 * Connect struct's payload and schema. Needs no libsystemd. Main loop
 * only. */
#ifndef SKIFF_JFIELDS_H
#define SKIFF_JFIELDS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/err.h"

/* Results of jfields_add and jfields_add_time (util/err.h). */
enum jfields_err {
	JFIELDS_OK = 0,
	JFIELDS_REPEATED = 1,       /* not a failure: the field was there already */
	JFIELDS_ERR_MALFORMED = -1, /* a datum without '=', or a bad field name */
	JFIELDS_ERR_NOMEM = -2,     /* out of memory */
};

/* A short text for a jfields_err code; never NULL. */
const char *jfields_strerror(int err);

/* Adds one datum of an entry to payload (the struct's values) and fields
 * (its schema's "fields" array). The value becomes a string when it is
 * well-formed UTF-8 without NUL, else bytes (base64 in the payload, as
 * Connect's JsonConverter writes bytes). Journal field names are [A-Z0-9_],
 * valid Connect field names. Returns JFIELDS_OK, JFIELDS_REPEATED when the
 * field was already in the entry (its first value is kept, this one
 * dropped), JFIELDS_ERR_MALFORMED for a datum without '=', or
 * JFIELDS_ERR_NOMEM. */
int jfields_add(cJSON *payload, cJSON *fields, const void *data, size_t len);

/* How many bytes of a field value v (len bytes) to keep under a cap: len
 * when it fits, else cap moved back (by at most 3 bytes) to the start of a
 * UTF-8 character, so that cutting text keeps it text. */
size_t jfields_cut(const char *v, size_t len, size_t cap);

/* The optional int64 fields __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP
 * (microseconds), which sd-journal keeps outside the entry's data. Returns
 * JFIELDS_OK or JFIELDS_ERR_NOMEM. */
int jfields_add_time(cJSON *payload, cJSON *fields, const char *name, uint64_t usec);

/* A new struct schema {"type":"struct","fields":[],"optional":false,
 * "name":"skiff.journal.Entry"}; *fields is its array. NULL on no memory. */
cJSON *jfields_schema(cJSON **fields);

#endif
