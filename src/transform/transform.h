/* transform: Kafka Connect's single message transforms and predicates, as a
 * connector file configures them (transforms=a,b; transforms.a.type=
 * org.apache.kafka.connect.transforms.InsertField$Value; predicates=p; ...),
 * applied in order to each record between the source and the converters, on
 * its topic, key, value, headers and timestamp, the way Connect applies them.
 *
 * A chain belongs to one connector's settings; it is parsed at load (and at
 * reload) and applied from the main loop. */
#ifndef SKIFF_TRANSFORM_H
#define SKIFF_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/source.h"
#include "util/err.h"

struct cJSON;
struct config_section;
struct transform_chain;

/* A record as the chain leaves it: what the converters and the producer
 * take. Its pointers are valid until the next apply on the chain, or its
 * destroy. */
struct transform_out {
	const char *topic;
	struct record_value key, value;
	int64_t timestamp_ms; /* 0: none (the producer's time) */
	const struct record_header *headers;
	size_t nheaders;
};

/* Failures of transform_chain_parse (error convention: util/err.h). */
enum {
	TRANSFORM_ERR_CONFIG = -1, /* a bad or unimplemented transform: exit 78 */
	TRANSFORM_ERR_NOMEM = -2,
};

/* What transform_chain_apply made of a record. */
enum transform_result {
	TRANSFORM_OK,    /* *out is the record to convert and produce */
	TRANSFORM_DROP,  /* a Filter (or a predicate's Filter) dropped it */
	TRANSFORM_ERROR, /* a transform failed on this record (Connect's
	                  * DataException): errbuf says which and why */
	TRANSFORM_NOMEM, /* out of memory: a restart may pass */
};

/* Reads the connector's transforms and predicates from the pass-through keys
 * of cfg ("transforms", "transforms.*", "predicates", "predicates.*"; see
 * transform_config_prefixes). Returns 0 and *out (an empty chain when none
 * is configured; release with transform_chain_destroy), or
 * TRANSFORM_ERR_CONFIG with "file:line: key: why" in errbuf (an
 * unimplemented class is named), or TRANSFORM_ERR_NOMEM. */
int transform_chain_parse(const struct config_section *cfg, struct transform_chain **out,
                          char *errbuf, size_t errlen);

/* Key prefixes that belong to the chain, NULL-terminated: a connector's
 * config spec passes them through to transform_chain_parse. */
extern const char *const transform_config_prefixes[];

/* Number of transforms in c (0: records pass unchanged). */
size_t transform_chain_len(const struct transform_chain *c);

/* The class of the i-th transform of c, then of its predicates (i past the
 * transforms), as configured (type=); *predicate says which. NULL past the
 * last (and for c NULL). Owned by c. For the fleet's allow-list
 * (fleet/fleetallow.h). */
const char *transform_chain_class(const struct transform_chain *c, size_t i, bool *predicate);

/* Applies c (NULL: no transforms) to in. With TRANSFORM_OK, *out is in as
 * transformed, pointing into in's memory or into memory c owns (in itself is
 * never changed, so the same record may be applied again after a full
 * producer queue). With TRANSFORM_ERROR, errbuf holds
 * "transforms.ALIAS (CLASS): why". Main loop. */
enum transform_result transform_chain_apply(struct transform_chain *c, const struct record *in,
                                            struct transform_out *out, char *errbuf, size_t errlen);

/* Prints the chain for --check, one transform a line, each prefixed with
 * indent: alias, class, its properties, its predicate. */
void transform_chain_print(const struct transform_chain *c, const char *indent, FILE *fp);

/* Adds to doc (the JSON object of --help-config's document, help.h) the keys
 * that configure a chain ("chain_keys": name and doc) and the transforms and
 * predicates skiff implements ("transforms", "predicates": class, variants,
 * doc, properties). Returns 0 or TRANSFORM_ERR_NOMEM (doc then holds part of
 * it; the caller deletes it). */
int transform_help_doc(struct cJSON *doc);

/* Accepts NULL. */
void transform_chain_destroy(struct transform_chain *c);

#endif
