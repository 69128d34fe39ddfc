/* provider: Kafka Connect's config providers (KIP-297, KIP-421), which put
 * values from outside into a configuration: a worker file declares them
 *
 *   config.providers=env,file,dir
 *   config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
 *   config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
 *   config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
 *   config.providers.<name>.param.<param>=...   (allowlist.pattern; allowed.paths)
 *
 * and any value of the worker file or of a connector file refers to them as
 * Connect's ConfigTransformer reads it, ${provider:[path:]key}:
 * ${env:VAR}, ${file:/path/to/a.properties:key}, ${dir:/path/to/dir:file}.
 *
 * As Connect does: a value may hold several references and text around
 * them; a reference whose provider is not declared stays as text (a notice
 * says so); FileConfigProvider reads a Java .properties file (our props
 * reader), DirectoryConfigProvider a file's whole content; an env reference
 * with a path is an error. Unlike Connect, a reference to a declared
 * provider that does not resolve (a missing file, key or variable, a path
 * outside allowed.paths, a variable outside allowlist.pattern) is an error
 * where Connect would keep the "${...}" text as the value: on a device that
 * text would go out as an id or a password.
 *
 * A value that took anything from a provider is a secret (props_secret).
 * Leaf module: errors come back as "file:line: key: provider (Class): why".
 * Start-up and reload only (main loop). */
#ifndef SKIFF_PROVIDER_H
#define SKIFF_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

struct props;
struct providers;

/* The largest value a resolution may produce. */
#define PROVIDER_MAX_VALUE_BYTES (1024 * 1024)

enum {
	PROVIDER_OK = 0,
	PROVIDER_ERR_CONFIG = -1, /* a bad declaration or reference: exit 78 */
	PROVIDER_ERR_NOMEM = -2,
};

/* Reads the providers declared in the worker file w (config.providers and
 * config.providers.*). Returns 0 and *out (providers_destroy; empty when
 * none is declared), or an error with "file:line: key: why" in errbuf. */
int providers_new(const struct props *w, struct providers **out, char *errbuf, size_t errlen);

/* True when key is one of the declarations providers_new reads (they are not
 * resolved, and the worker's config table skips them). */
bool providers_is_declaration(const char *key);

/* Resolves the references in every value of p (declarations excepted),
 * replacing each value in p; a value that took anything from a provider is
 * marked secret. Each reference is remembered for providers_print. Returns
 * 0, or an error with errbuf "file:line: key: name (Class): why"; p may be
 * partly resolved then (the caller drops it). */
int providers_resolve(struct providers *pv, struct props *p, char *errbuf, size_t errlen);

/* Resolves the references in one value (where: "file:line: key", for
 * messages). Returns 0 and *out (malloc'd, the caller frees), *secret true
 * when a provider gave anything; or an error as providers_resolve. */
int providers_expand(struct providers *pv, const char *value, const char *where, char **out,
                     bool *secret, char *errbuf, size_t errlen);

/* Finds the next reference ${provider:[path:]key} in s from *at, as
 * providers_expand finds them (ConfigTransformer's pattern): returns true
 * with *start, *end (past its '}') and span[0], span[1], span[2] the
 * provider, path (empty when none) and key as [begin, end) offsets into s,
 * and *at past it; false when there is no more. For a check that must see
 * every reference before anything resolves one (fleet/fleetallow.h). */
bool providers_next_ref(const char *s, size_t *at, size_t *start, size_t *end, size_t span[3][2]);

/* Notices to log: references left as text, unknown parameters. Owned by pv. */
size_t providers_notice_count(const struct providers *pv);
const char *providers_notice(const struct providers *pv, size_t i);

/* For --check: each declared provider and its class, then each resolved
 * reference ("file:line: key <- ${...}"), never a value. */
void providers_print(const struct providers *pv, FILE *fp);

/* Accepts NULL. */
void providers_destroy(struct providers *pv);

#endif
