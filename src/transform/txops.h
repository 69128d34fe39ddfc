/* txops: what one transform (or predicate) implementation provides, and the
 * view of its configuration it gets. Each transform fills one
 * `const struct tx_ops`; the chain never switches on the kind. Adding a
 * transform is adding a file and a line in txregistry.c. */
#ifndef SKIFF_TXOPS_H
#define SKIFF_TXOPS_H

#include <stdbool.h>
#include <stddef.h>

#include "transform/txrec.h"
#include "util/err.h"

/* The properties of one transform or predicate: "transforms.ALIAS.*" with
 * the prefix taken off ("static.field"), and where each was set. */
struct txconf {
	const char *prefix; /* "transforms.ALIAS." */
	size_t n;
	const char *const *keys;
	const char *const *values;
	const char *const *wheres; /* "file:line" */
	const bool *secret;        /* the value came from a config provider */
	const char *listed;        /* "file:line" of the transforms= (or
	                            * predicates=) entry naming the alias */
	bool key;                  /* the $Key variant (else $Value, or neither) */
};

/* The value of key (trimmed of blanks as Connect's ConfigDef does), or NULL
 * when not set. */
const char *txconf_get(const struct txconf *c, const char *key);

/* Writes "file:line: transforms.ALIAS.key: why" into errbuf (file:line
 * where key was set, or where the alias was listed when key is not set) and
 * returns -1. */
int txconf_error(const struct txconf *c, const char *key, char *errbuf, size_t errlen,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A required string property; -1 with the error written when missing or
 * empty. */
int txconf_require(const struct txconf *c, const char *key, const char **out, char *errbuf,
                   size_t errlen);

/* The i-th item of the comma-separated list value v (items trimmed; empty
 * items skipped as Connect's ConfigDef.Type.LIST does). Returns its length
 * and *item, or 0 when there is no i-th item. */
size_t txconf_list_item(const char *v, size_t i, const char **item);

/* True when name is in the comma-separated list v. */
bool txconf_list_has(const char *v, const char *name);

/* Results of tx_ops.apply. */
enum {
	TX_OK = 0,
	TX_DROP = 1,       /* the record is dropped (Filter) */
	TX_ERR = -1,       /* Connect's DataException: errbuf says why */
	TX_ERR_NOMEM = -2, /* out of memory */
};

struct tx_ops {
	const char *name;  /* "InsertField": the class, after the package */
	const char *pkg;   /* "org.apache.kafka.connect.transforms" */
	bool variants;     /* has $Key and $Value */
	const char *doc;   /* one line for --help-config */
	const char *props; /* its properties, for --help-config */
	/* Reads conf; returns 0 and *ctx, TX_ERR with errbuf, or
	 * TX_ERR_NOMEM. */
	int (*init)(const struct txconf *conf, void **ctx, char *errbuf, size_t errlen);
	/* Transforms r (a transform) or tests it (a predicate: returns 1 for
	 * true, 0 for false); TX_ERR with errbuf, TX_ERR_NOMEM. */
	int (*apply)(void *ctx, struct txrec *r, char *errbuf, size_t errlen);
	void (*free)(void *ctx); /* accepts NULL */
};

/* The transforms and predicates skiff implements, NULL-terminated
 * (txregistry.c). */
extern const struct tx_ops *const txregistry_transforms[];
extern const struct tx_ops *const txregistry_predicates[];

/* The implementation of the Java class name cls ("...InsertField$Value"),
 * with *key set for a $Key variant, or NULL. */
const struct tx_ops *txregistry_find(const struct tx_ops *const *list, const char *cls, bool *key);

#endif
