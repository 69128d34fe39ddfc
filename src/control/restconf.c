/* restconf: the REST API's keys (restconf.h). */
#include "control/restconf.h"

#include "config/config.h"
#include "util/num.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define INT_MAX32 2147483647
#define INERT(k)                                                                                   \
	{                                                                                          \
		k, CFG_STRING, NULL, 0, 0, NULL, CFG_INERT,                                        \
		    "Kafka Connect setting; no meaning here.", CFG_NOFIELD                         \
	}

/* Connect's server-side TLS keys under prefix P (listeners.https. or
 * admin.listeners.https.). */
#define TLS_KEYS(P, R, WHO)                                                                        \
	{P "ssl.keystore.location",                                                                \
	 CFG_STRING,                                                                               \
	 NULL,                                                                                     \
	 0,                                                                                        \
	 0,                                                                                        \
	 NULL,                                                                                     \
	 0,                                                                                        \
	 "The " WHO " certificate and private key: a PKCS#12 file (keytool's and "                 \
	 "openssl's .p12), or with ssl.keystore.type=PEM a PEM file holding the key "              \
	 "and the chain. Read again when it changes on disk.",                                     \
	 CFG_FIELD_SET(struct restconf_conf, tls[R].keystore_location, tls[R].given[0])},          \
	    {P "ssl.keystore.type",                                                                \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "PKCS12 or PEM (JKS: convert it, keytool -importkeystore -deststoretype "             \
	     "PKCS12); unset: told from the file.",                                                \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].keystore_type, tls[R].given[1])},          \
	    {P "ssl.keystore.password",                                                            \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     CFG_SECRET,                                                                           \
	     "The keystore's password (PKCS#12).",                                                 \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].keystore_password, tls[R].given[2])},      \
	    {P "ssl.key.password",                                                                 \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     CFG_SECRET,                                                                           \
	     "The password of an encrypted PEM private key.",                                      \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].key_password, tls[R].given[3])},           \
	    {P "ssl.keystore.key",                                                                 \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     CFG_SECRET,                                                                           \
	     "The private key as PEM text (with ssl.keystore.certificate.chain), instead of "      \
	     "a keystore file.",                                                                   \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].keystore_key, tls[R].given[4])},           \
	    {P "ssl.keystore.certificate.chain",                                                   \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "The certificate chain as PEM text, with ssl.keystore.key.",                          \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].keystore_chain, tls[R].given[5])},         \
	    {P "ssl.truststore.location",                                                          \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "The CA certificates client certificates must chain to (ssl.client.auth): "           \
	     "PKCS#12 or PEM. Read again when it changes on disk.",                                \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].truststore_location, tls[R].given[6])},    \
	    {P "ssl.truststore.type",                                                              \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "PKCS12 or PEM; unset: told from the file.",                                          \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].truststore_type, tls[R].given[7])},        \
	    {P "ssl.truststore.password",                                                          \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     CFG_SECRET,                                                                           \
	     "The truststore's password (PKCS#12).",                                               \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].truststore_password, tls[R].given[8])},    \
	    {P "ssl.truststore.certificates",                                                      \
	     CFG_STRING,                                                                           \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "The CA certificates as PEM text, instead of a truststore file.",                     \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].truststore_certs, tls[R].given[9])},       \
	    {P "ssl.client.auth",                                                                  \
	     CFG_ENUM,                                                                             \
	     "none",                                                                               \
	     0,                                                                                    \
	     0,                                                                                    \
	     "none|requested|required",                                                            \
	     0,                                                                                    \
	     "required: a client without a certificate the truststore vouches for is refused "     \
	     "in the TLS handshake; requested: one that sends a certificate must send such a "     \
	     "one.",                                                                               \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].client_auth, tls[R].given[10])},           \
	    {P "ssl.enabled.protocols",                                                            \
	     CFG_LIST,                                                                             \
	     "TLSv1.2,TLSv1.3",                                                                    \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "TLS versions offered: TLSv1.2, TLSv1.3 (TLSv1, TLSv1.1 if GnuTLS allows them).",     \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].protocols, tls[R].given[11])},             \
	    {P "ssl.cipher.suites",                                                                \
	     CFG_LIST,                                                                             \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     0,                                                                                    \
	     NULL,                                                                                 \
	     0,                                                                                    \
	     "Refused when set: GnuTLS's own choice of suites for the enabled versions is used "   \
	     "(remove the key).",                                                                  \
	     CFG_FIELD_SET(struct restconf_conf, tls[R].ciphers, tls[R].given[12])},               \
	    INERT(P "ssl.protocol"), INERT(P "ssl.provider"), INERT(P "ssl.keymanager.algorithm"), \
	    INERT(P "ssl.trustmanager.algorithm"), INERT(P "ssl.secure.random.implementation"),    \
	    INERT(P "ssl.endpoint.identification.algorithm"), INERT(P "ssl.engine.factory.class")

const struct config_key restconf_keys[] = {
    {"listeners", CFG_LIST, NULL, 0, 0, NULL, 0,
     "The REST API, /metrics and /health (Connect's paths): http://HOST:PORT or "
     "https://HOST:PORT, comma-separated; an empty HOST binds every interface; unset: off. "
     "Beyond loopback, give https and rest.extension.classes (docs/rest-api.md).",
     CFG_FIELD(struct restconf_conf, listeners)},
    {"admin.listeners", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Where /admin/loggers is served: unset, on the listeners; empty, nowhere; URLs, "
     "there only (without rest.extension.classes' password, as Connect).",
     CFG_FIELD_SET(struct restconf_conf, admin_listeners, admin_listeners_given)},
    TLS_KEYS("listeners.https.", REST_TLS_MAIN, "https listeners'"),
    TLS_KEYS("admin.listeners.https.", REST_TLS_ADMIN, "https admin listeners'"),
    {"rest.extension.classes", CFG_LIST, NULL, 0, 0, NULL, 0,
     "Connect's BasicAuthSecurityRestExtension (package "
     "org.apache.kafka.connect.rest.basic.auth.extension): HTTP Basic authentication of "
     "every request, with the users of the JAAS file's PropertyFileLoginModule (see "
     "java.security.auth.login.config).",
     CFG_FIELD(struct restconf_conf, extensions)},
    {"java.security.auth.login.config", CFG_STRING, NULL, 0, 0, NULL, 0,
     "The JAAS file naming the users file (Connect reads it from "
     "-Djava.security.auth.login.config=FILE in KAFKA_OPTS, which skiff reads too when "
     "this key is unset). Its KafkaConnect entry names PropertyFileLoginModule (required) "
     "with file=\"/etc/skiff/rest-users.properties\": a properties file of user: password "
     "lines, read again when it changes.",
     CFG_FIELD(struct restconf_conf, jaas)},
    {"access.control.allow.origin", CFG_STRING, "", 0, 0, NULL, 0,
     "Origins a browser page may call the API from (Connect's CORS key): * or a "
     "comma-separated list of scheme://host[:port]; empty: none but the listener's own.",
     CFG_FIELD(struct restconf_conf, allow_origin)},
    {"access.control.allow.methods", CFG_STRING, "", 0, 0, NULL, 0,
     "Methods those origins may use (default GET,POST,HEAD, as Connect's).",
     CFG_FIELD(struct restconf_conf, allow_methods)},
    {"rest.advertised.host.name", CFG_STRING, NULL, 0, 0, NULL, 0,
     "A host name clients use to reach this worker: accepted in the Host header beside "
     "IP addresses, localhost, this machine's name and the listener's own host.",
     CFG_FIELD(struct restconf_conf, advertised_host)},
    INERT("rest.host.name"),
    INERT("rest.port"),
    INERT("rest.advertised.port"),
    INERT("rest.advertised.listener"),
    INERT("response.http.headers.config"),
    {"rest.max.connections", CFG_INT, "64", 4, 1024, NULL, 0,
     "skiff's own: connections served at once per listener. One more evicts the "
     "connection that has waited longest without a complete request, from the address "
     "holding the most: slow clients cannot keep others out. Connections closed by their "
     "clients are not counted; one whose request has arrived whole is never evicted.",
     CFG_FIELD(struct restconf_conf, max_connections)},
    {"rest.max.body.bytes", CFG_INT, "262144", 1024, 67108864, NULL, 0,
     "skiff's own: the largest request body; a larger one is answered 413 as soon as "
     "that is known.",
     CFG_FIELD(struct restconf_conf, max_body)},
    {"rest.request.timeout.ms", CFG_INT, "4000", 100, INT_MAX32, NULL, 0,
     "skiff's own: the longest a request may take to arrive, from the connection's "
     "accept or its previous reply; then the connection is closed, unless the request "
     "has just arrived whole.",
     CFG_FIELD(struct restconf_conf, request_ms)},
    {"rest.idle.timeout.ms", CFG_INT, "10000", 1000, INT_MAX32, NULL, 0,
     "skiff's own: an idle keep-alive connection is closed after this long.",
     CFG_FIELD(struct restconf_conf, idle_ms)},
    CFG_END,
};

static const char *const basic_auth_class =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";

/* "scheme://[hidden]@rest" for a URL with user information, so that a
 * message never repeats a password. */
static const char *shown_url(const char *url, char *buf, size_t len)
{
	const char *at = strchr(url, '@'), *sep = strstr(url, "://");

	if (at == NULL)
		return url;
	snprintf(buf, len, "%.*s[hidden]%s", sep ? (int)(sep - url + 3) : 0, url, at);
	return buf;
}

/* Connect's ^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+), with the port in
 * 0..65535 and http or https (any case). */
static int parse_url(const char *url, const char *key, const char *where, struct rest_listener *l,
                     char *errbuf, size_t errlen)
{
	const char *sep = strstr(url, "://"), *h, *end, *colon;
	char shown[512];
	int64_t port;
	size_t hlen;

	if (sep == NULL)
		goto bad;
	if ((size_t)(sep - url) == 4 && strncasecmp(url, "http", 4) == 0)
		l->https = false;
	else if ((size_t)(sep - url) == 5 && strncasecmp(url, "https", 5) == 0)
		l->https = true;
	else {
		snprintf(errbuf, errlen, "%s: %s: '%s': the protocol must be http or https", where,
		         key, shown_url(url, shown, sizeof(shown)));
		return -1;
	}
	h = sep + 3;
	colon = strrchr(h, ':');
	if (colon == NULL || num_parse_i64(colon + 1, 0, 65535, &port) != 0)
		goto bad;
	end = colon;
	if (*h == '[') {
		if (end == h || end[-1] != ']')
			goto bad;
		h++;
		end--;
	}
	hlen = (size_t)(end - h);
	if (hlen >= sizeof(l->host) || strspn(h, "0123456789abcdefghijklmnopqrstuvwxyz"
	                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ-%._:") < hlen)
		goto bad;
	memcpy(l->host, h, hlen);
	l->host[hlen] = '\0';
	snprintf(l->port, sizeof(l->port), "%lld", (long long)port);
	l->where = where;
	return 0;
bad:
	snprintf(errbuf, errlen,
	         "%s: %s: '%s' is not PROTOCOL://HOST:PORT (http or https; user information "
	         "is refused: credentials go in the JAAS file of rest.extension.classes)",
	         where, key, shown_url(url, shown, sizeof(shown)));
	return -1;
}

static int read_listeners(const struct config_section *w, const char *key,
                          const struct config_list *list, bool admin, struct rest_settings *out,
                          char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < list->n; i++) {
		struct rest_listener *l = &out->listeners[out->nlisteners];

		if (out->nlisteners == REST_MAX_LISTENERS) {
			snprintf(errbuf, errlen, "%s: %s: more than %d listeners",
			         config_where(w, key), key, REST_MAX_LISTENERS);
			return -1;
		}
		if (parse_url(list->items[i], key, config_where(w, key), l, errbuf, errlen) != 0)
			return -1;
		l->admin = admin;
		out->nlisteners++;
	}
	return 0;
}

/* The worker's own ssl.KEY (a pass-through entry), or NULL. */
static const char *top_level(const struct config_section *w, const char *key, const char **where)
{
	for (size_t i = 0; i < config_passthrough_count(w); i++)
		if (strcmp(config_passthrough_key(w, i), key) == 0) {
			if (*where == NULL)
				*where = config_passthrough_where(w, i);
			return config_passthrough_value(w, i);
		}
	return NULL;
}

/* prefix + key, as a table key of this module. */
static const char *pk(char *buf, size_t len, const char *prefix, const char *key)
{
	snprintf(buf, len, "%s%s", prefix, key);
	return buf;
}

static const char *const tls_suffixes[] = {
    "ssl.keystore.location",   "ssl.keystore.type",
    "ssl.keystore.password",   "ssl.key.password",
    "ssl.keystore.key",        "ssl.keystore.certificate.chain",
    "ssl.truststore.location", "ssl.truststore.type",
    "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.client.auth",         "ssl.enabled.protocols",
    "ssl.cipher.suites",       NULL,
};

/* ssl.enabled.protocols as GnuTLS priorities. */
static int priorities(const struct config_section *w, const char *key,
                      const struct config_list *list, struct rest_tls_settings *t, char *errbuf,
                      size_t errlen)
{
	static const struct {
		const char *java, *gnutls;
	} versions[] = {{"TLSv1.3", "+VERS-TLS1.3"},
	                {"TLSv1.2", "+VERS-TLS1.2"},
	                {"TLSv1.1", "+VERS-TLS1.1"},
	                {"TLSv1", "+VERS-TLS1.0"}};
	size_t n = list->n, used;

	used = (size_t)snprintf(t->priobuf, sizeof(t->priobuf), "NORMAL:-VERS-ALL");
	for (size_t i = 0; i < n; i++) {
		const char *v = list->items[i];
		size_t k = 0;

		while (k < sizeof(versions) / sizeof(versions[0]) &&
		       strcmp(v, versions[k].java) != 0)
			k++;
		if (k == sizeof(versions) / sizeof(versions[0])) {
			snprintf(errbuf, errlen,
			         "%s: %s: '%s' is not TLSv1.3, TLSv1.2, TLSv1.1 or TLSv1",
			         config_where(w, key), key, v);
			return -1;
		}
		used += (size_t)snprintf(t->priobuf + used, sizeof(t->priobuf) - used, ":%s",
		                         versions[k].gnutls);
	}
	if (n == 0) {
		snprintf(errbuf, errlen, "%s: %s: no TLS version left", config_where(w, key), key);
		return -1;
	}
	t->priorities = t->priobuf;
	return 0;
}

/* The TLS keys of one role: those under prefix when any is set, else the
 * worker's own ssl.keystore.* (Connect's all-or-nothing). */
static int read_tls(const struct config_section *w, const struct restconf_tls_conf *c,
                    const char *prefix, struct rest_tls_settings *t, char *errbuf, size_t errlen)
{
	static const char *const client_auths[] = {"none", "requested", "required"};
	bool any = false;
	char key[128];

	_Static_assert(sizeof(tls_suffixes) / sizeof(tls_suffixes[0]) == RESTCONF_TLS_KEYS + 1,
	               "one given[] per TLS key");
	for (size_t i = 0; i < RESTCONF_TLS_KEYS; i++)
		any |= c->given[i];
	t->prefix = prefix;
	if (any) {
		t->keystore_location = c->keystore_location;
		t->keystore_type = c->keystore_type;
		t->keystore_password = c->keystore_password;
		t->key_password = c->key_password;
		t->keystore_key = c->keystore_key;
		t->keystore_chain = c->keystore_chain;
		t->truststore_location = c->truststore_location;
		t->truststore_type = c->truststore_type;
		t->truststore_password = c->truststore_password;
		t->truststore_certs = c->truststore_certs;
		t->client_auth = c->client_auth >= 0 ? client_auths[c->client_auth] : NULL;
		/* The first given of the keys above (not the protocols, suites). */
		for (size_t i = 0; t->where == NULL && i < RESTCONF_TLS_KEYS - 2; i++)
			if (c->given[i])
				t->where =
				    config_where(w, pk(key, sizeof(key), prefix, tls_suffixes[i]));
		if (t->truststore_location != NULL)
			t->truststore_where = config_where(
			    w, pk(key, sizeof(key), prefix, "ssl.truststore.location"));
		if (t->truststore_certs != NULL)
			t->truststore_certs_where = config_where(
			    w, pk(key, sizeof(key), prefix, "ssl.truststore.certificates"));
		if (c->ciphers.n > 0) {
			pk(key, sizeof(key), prefix, "ssl.cipher.suites");
			snprintf(
			    errbuf, errlen,
			    "%s: %s: Java's cipher suite names are not GnuTLS's; skiff offers "
			    "GnuTLS's own choice for the enabled TLS versions: remove this key",
			    config_where(w, key), key);
			return -1;
		}
		return priorities(w, pk(key, sizeof(key), prefix, "ssl.enabled.protocols"),
		                  &c->protocols, t, errbuf, errlen);
	}
	/* Connect falls back to the worker's ssl.*: here those are the
	 * producer's, and the keystore ones mean the same to both. */
	t->prefix = "";
	t->keystore_location = top_level(w, "ssl.keystore.location", &t->where);
	t->keystore_password = top_level(w, "ssl.keystore.password", &t->where);
	t->key_password = top_level(w, "ssl.key.password", &t->where);
	t->client_auth = "none";
	return priorities(w, pk(key, sizeof(key), prefix, "ssl.enabled.protocols"), &c->protocols,
	                  t, errbuf, errlen);
}

static bool type_ok(const char *type)
{
	return type == NULL || strcasecmp(type, "PKCS12") == 0 || strcasecmp(type, "PEM") == 0 ||
	       strcasecmp(type, "JKS") == 0;
}

/* What an https listener of role needs: a key and chain, and a truststore
 * for client certificates. */
static int check_tls(const struct config_section *w, const struct rest_tls_settings *t,
                     const char *role, const char *lkey, const char *lwhere, char *errbuf,
                     size_t errlen)
{
	const char *p = t->prefix[0] ? t->prefix : role;

	if (t->keystore_location == NULL && t->keystore_key == NULL) {
		snprintf(
		    errbuf, errlen,
		    "%s: %s: an https listener needs %sssl.keystore.location (a PKCS#12 or "
		    "PEM keystore) or %sssl.keystore.key with %sssl.keystore.certificate.chain, "
		    "or the worker's ssl.keystore.location",
		    lwhere, lkey, p, p, p);
		return -1;
	}
	if ((t->keystore_key == NULL) != (t->keystore_chain == NULL) ||
	    (t->keystore_key != NULL && t->keystore_location != NULL)) {
		snprintf(errbuf, errlen,
		         "%s: give %sssl.keystore.key and %sssl.keystore.certificate.chain "
		         "together, without %sssl.keystore.location",
		         t->where, p, p, p);
		return -1;
	}
	if (!type_ok(t->keystore_type) || !type_ok(t->truststore_type)) {
		snprintf(errbuf, errlen, "%s: %sssl.%s.type: '%s' is not PKCS12, PEM or JKS",
		         t->where, p, type_ok(t->keystore_type) ? "truststore" : "keystore",
		         type_ok(t->keystore_type) ? t->truststore_type : t->keystore_type);
		return -1;
	}
	if (strcmp(t->client_auth, "none") != 0 && t->truststore_location == NULL &&
	    t->truststore_certs == NULL) {
		snprintf(errbuf, errlen,
		         "%s: %sssl.client.auth=%s needs %sssl.truststore.location or "
		         "%sssl.truststore.certificates: the CAs client certificates must chain "
		         "to (Java would take its own cacerts; skiff trusts no CA by default)",
		         t->where, p, t->client_auth, p, p);
		return -1;
	}
	(void)w;
	return 0;
}

/* -Djava.security.auth.login.config=FILE in $KAFKA_OPTS (quotes dropped). */
static void jaas_from_env(struct rest_settings *out)
{
	static const char flag[] = "-Djava.security.auth.login.config=";
	const char *opts = getenv("KAFKA_OPTS"), *p;
	size_t n;

	if (opts == NULL)
		return;
	for (p = opts; (p = strstr(p, flag)) != NULL; p += sizeof(flag) - 1) {
		if (p != opts && p[-1] != ' ' && p[-1] != '\t' && p[-1] != '"' && p[-1] != '\'')
			continue;
		p += sizeof(flag) - 1;
		if (*p == '"' || *p == '\'') {
			const char *q = strchr(p + 1, *p);

			n = q ? (size_t)(q - p - 1) : strlen(p + 1);
			p++;
		} else {
			n = strcspn(p, " \t");
		}
		if (n == 0 || n >= sizeof(out->jaas_env))
			return;
		memcpy(out->jaas_env, p, n);
		out->jaas_env[n] = '\0';
		out->jaas = out->jaas_env;
		out->jaas_where = "KAFKA_OPTS";
		return;
	}
}

static int read_auth(const struct config_section *w, const struct restconf_conf *c,
                     struct rest_settings *out, char *errbuf, size_t errlen)
{
	const char *key = "rest.extension.classes";

	for (size_t i = 0; i < c->extensions.n; i++) {
		const char *cls = c->extensions.items[i];

		if (strcmp(cls, basic_auth_class) != 0 &&
		    strcmp(cls, "BasicAuthSecurityRestExtension") != 0) {
			snprintf(errbuf, errlen,
			         "%s: %s: '%s': skiff has one REST extension, %s (HTTP Basic "
			         "authentication); a Java extension cannot run here",
			         config_where(w, key), key, cls, basic_auth_class);
			return -1;
		}
		out->basic_auth = true;
		out->basic_auth_where = config_where(w, key);
	}
	if (c->jaas != NULL) {
		out->jaas = c->jaas;
		out->jaas_where = config_where(w, "java.security.auth.login.config");
	} else {
		jaas_from_env(out);
	}
	if (out->basic_auth && (out->jaas == NULL || out->jaas[0] == '\0')) {
		snprintf(errbuf, errlen,
		         "%s: %s: BasicAuthSecurityRestExtension needs a JAAS file: set "
		         "java.security.auth.login.config=FILE (or "
		         "KAFKA_OPTS=-Djava.security.auth.login.config=FILE, as Connect)",
		         out->basic_auth_where, key);
		return -1;
	}
	return 0;
}

int restconf_read(const struct config_section *w, struct rest_settings *out, char *errbuf,
                  size_t errlen)
{
	const struct restconf_conf *c = restconf_conf(w);

	memset(out, 0, sizeof(*out));
	if (read_listeners(w, "listeners", &c->listeners, false, out, errbuf, errlen) != 0 ||
	    read_listeners(w, "admin.listeners", &c->admin_listeners, true, out, errbuf, errlen) !=
	        0)
		return -1;
	out->admin_apart = c->admin_listeners.n > 0;
	out->admin_off = c->admin_listeners_given && !out->admin_apart;
	if (read_tls(w, &c->tls[REST_TLS_MAIN], "listeners.https.", &out->tls[REST_TLS_MAIN],
	             errbuf, errlen) != 0 ||
	    read_tls(w, &c->tls[REST_TLS_ADMIN], "admin.listeners.https.",
	             &out->tls[REST_TLS_ADMIN], errbuf, errlen) != 0)
		return -1;
	for (size_t i = 0; i < out->nlisteners; i++) {
		const struct rest_listener *l = &out->listeners[i];
		const char *key = l->admin ? "admin.listeners" : "listeners";

		if (l->https && check_tls(w, &out->tls[l->admin ? REST_TLS_ADMIN : REST_TLS_MAIN],
		                          l->admin ? "admin.listeners.https." : "listeners.https.",
		                          key, l->where, errbuf, errlen) != 0)
			return -1;
	}
	if (read_auth(w, c, out, errbuf, errlen) != 0)
		return -1;
	out->allow_origin = c->allow_origin;
	out->allow_methods = c->allow_methods;
	out->advertised_host = c->advertised_host;
	out->max_connections = c->max_connections;
	out->max_body = c->max_body;
	out->request_ms = c->request_ms;
	out->idle_ms = c->idle_ms;
	return 0;
}
