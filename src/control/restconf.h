/* restconf: the REST API's worker keys, Connect's own (listeners,
 * admin.listeners, listeners.https.ssl.*, admin.listeners.https.ssl.*,
 * rest.extension.classes, access.control.allow.*, rest.advertised.host.name)
 * and skiff's bounds (rest.max.*), as one config table, and their reading
 * into a struct rest_settings.
 *
 * Connect's rules, kept: a listener is PROTOCOL://HOST:PORT with http or
 * https (an empty HOST binds every interface); admin.listeners unset serves
 * /admin/loggers on the listeners, set empty turns it off, set to URLs
 * serves it there only; an https listener takes its TLS keys from
 * listeners.https.ssl.* (admin.listeners.https.ssl.* for admin listeners) and,
 * when none of those is set, from the worker's own ssl.* keys ("all or
 * nothing", as Connect's valuesWithPrefixAllOrNothing).
 *
 * Leaf module: it reads no file (resttls.c and restauth.c do). Strings in a
 * struct rest_settings are borrowed from the section it was read from.
 * Start-up and reload only. Error convention: util/err.h. */
#ifndef SKIFF_RESTCONF_H
#define SKIFF_RESTCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

/* The table, loaded with the worker's keys (settings.c). */
extern const struct config_key restconf_keys[];

#define REST_MAX_LISTENERS 8

/* Where an https listener's keys come from. */
enum rest_tls_role { REST_TLS_MAIN, REST_TLS_ADMIN };

/* The TLS keys of one role as bound (restconf_keys): given[i] tells whether
 * the i-th of them, in the table's order, was set. */
#define RESTCONF_TLS_KEYS 13
struct restconf_tls_conf {
	const char *keystore_location, *keystore_type, *keystore_password, *key_password;
	const char *keystore_key, *keystore_chain;
	const char *truststore_location, *truststore_type, *truststore_password;
	const char *truststore_certs;
	int client_auth; /* none, requested, required: the choices' order */
	struct config_list protocols, ciphers;
	bool given[RESTCONF_TLS_KEYS];
};

/* The REST keys of the worker file, bound once when it loads (settings.c
 * keeps them in the worker section): restconf_conf(). */
struct restconf_conf {
	struct config_list listeners, admin_listeners, extensions;
	bool admin_listeners_given;
	struct restconf_tls_conf tls[2]; /* by enum rest_tls_role */
	const char *jaas, *allow_origin, *allow_methods, *advertised_host;
	int64_t max_connections, max_body, request_ms, idle_ms;
};

/* The worker section's bound REST keys (owned by it; a section
 * settings_load did not make aborts). */
static inline const struct restconf_conf *restconf_conf(const struct config_section *worker)
{
	return (const struct restconf_conf *)config_section_kept(worker, restconf_keys);
}

/* Connect's TLS keys for one role, as configured (NULL: unset). */
struct rest_tls_settings {
	const char *prefix; /* "listeners.https." or "admin.listeners.https.", "" for ssl.* */
	const char *keystore_location, *keystore_type, *keystore_password, *key_password;
	const char *keystore_key, *keystore_chain; /* PEM text given inline */
	const char *truststore_location, *truststore_type, *truststore_password;
	const char *truststore_certs; /* PEM text given inline */
	const char *client_auth;      /* none, requested or required */
	const char *priorities;       /* GnuTLS priorities from ssl.enabled.protocols */
	const char *where;            /* file:line of the first key set, for messages */
	/* file:line of ssl.truststore.location and .certificates (NULL: unset) */
	const char *truststore_where, *truststore_certs_where;
	char priobuf[128];
};

struct rest_listener {
	bool https;
	bool admin;     /* an admin.listeners URL: serves /admin only */
	char host[256]; /* "" binds every interface */
	char port[8];
	const char *where; /* file:line of its key */
};

struct rest_settings {
	struct rest_listener listeners[REST_MAX_LISTENERS];
	size_t nlisteners;
	/* admin.listeners: unset (admin on the listeners), "" (admin off), or
	 * URLs (admin only there). */
	bool admin_off, admin_apart;
	struct rest_tls_settings tls[2]; /* by enum rest_tls_role */
	/* rest.extension.classes names BasicAuthSecurityRestExtension. */
	bool basic_auth;
	const char *basic_auth_where;
	/* The JAAS file: java.security.auth.login.config, else the one
	 * -Djava.security.auth.login.config=FILE in $KAFKA_OPTS names. */
	const char *jaas;
	const char *jaas_where;
	char jaas_env[1024];
	/* access.control.allow.origin ("" none, "*" any, else a comma list)
	 * and access.control.allow.methods. */
	const char *allow_origin, *allow_methods;
	const char *advertised_host; /* rest.advertised.host.name, or NULL */
	int64_t max_connections, max_body, request_ms, idle_ms;
};

/* Reads the REST keys of worker into *out, checking what can be checked
 * without reading a file: each URL's form (user information in a URL is
 * refused and never repeated), the TLS keys an https listener needs and
 * their values, the extension classes. Returns 0 (out->nlisteners 0: the
 * API is off) or -1 with errbuf "file:line: key: why". */
int restconf_read(const struct config_section *worker, struct rest_settings *out, char *errbuf,
                  size_t errlen);

#endif
