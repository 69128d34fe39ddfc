/* resttls: the certificate, key and trusted CAs of the REST API's https
 * listeners, read from Connect's keystore and truststore keys with GnuTLS
 * (gnutlslib.h), and read again when their files change.
 *
 * A keystore is a PKCS#12 file (keytool's or openssl's), a PEM file holding
 * the private key and its chain (Kafka's ssl.keystore.type=PEM), or PEM text
 * in ssl.keystore.key and ssl.keystore.certificate.chain. A truststore is a
 * PKCS#12 file of certificates or PEM certificates (file or text). A Java
 * KeyStore (JKS, JCEKS) is refused with the keytool line that converts it.
 * The key must match the first certificate of the chain.
 *
 * What was read is a generation (struct resttls_gen), reference-counted:
 * a connection holds the generation it was accepted under until it closes,
 * so a new certificate serves new connections while the old handshakes go
 * on with the old one. No message ever holds a password.
 *
 * Main loop only. Error convention: util/err.h. */
#ifndef SKIFF_RESTTLS_H
#define SKIFF_RESTTLS_H

#include <stdbool.h>
#include <stddef.h>

#include <gnutls/abstract.h>

#include "util/err.h"

struct rest_tls_settings;

enum {
	RESTTLS_OK = 0,
	RESTTLS_ERR = -1,        /* a file cannot be read (errbuf says why) */
	RESTTLS_ERR_NOMEM = -2,  /* out of memory */
	RESTTLS_ERR_CONFIG = -3, /* a keystore or truststore is not usable (errbuf says why) */
};

struct resttls;
struct resttls_gen;

/* Loads GnuTLS and what t names (t is copied). Returns 0 and *out
 * (resttls_destroy), or a RESTTLS_ERR_* code with errbuf "file:line: key:
 * path: why". */
int resttls_new(const struct rest_tls_settings *t, struct resttls **out, char *errbuf,
                size_t errlen);

/* The files to watch for a new certificate (borrowed; as many as fit in
 * max). */
size_t resttls_files(const struct resttls *tls, const char **paths, size_t max);

/* Reads the files again into a new current generation. On failure the
 * current one stays, and errbuf says why. Returns 0 or a RESTTLS_ERR_*
 * code. */
int resttls_reload(struct resttls *tls, char *errbuf, size_t errlen);

/* The current generation, with a reference the caller gives back with
 * resttls_gen_unref. */
struct resttls_gen *resttls_current(struct resttls *tls);

void resttls_gen_unref(struct resttls_gen *g);

/* The chain and key a handshake of g presents (owned by g). */
void resttls_gen_cert(struct resttls_gen *g, gnutls_pcert_st **pcert, unsigned *n,
                      gnutls_privkey_t *key);

/* Whether a client certificate is requested (ssl.client.auth requested or
 * required) and whether it is required. */
bool resttls_requests_client(const struct resttls *tls);
bool resttls_requires_client(const struct resttls *tls);

/* Checks a client's chain (DER, leaf first) against g's trusted CAs, for
 * TLS client use, at the current time. Returns 0 when it chains to one, or
 * RESTTLS_ERR_CONFIG with errbuf saying why not. */
int resttls_gen_verify(const struct resttls_gen *g, const gnutls_datum_t *chain, unsigned n,
                       char *errbuf, size_t errlen);

/* GnuTLS priorities for ssl.enabled.protocols (owned by tls). */
const char *resttls_priorities(const struct resttls *tls);

/* Accepts NULL. Generations still referenced live on until unreferenced. */
void resttls_destroy(struct resttls *tls);

const char *resttls_strerror(int err);

#endif
