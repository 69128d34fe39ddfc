/* resttls: the https listeners' certificates and trusted CAs (resttls.h). */
#include "control/resttls.h"

#include "control/gnutlslib.h"
#include "control/restconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A keystore or truststore larger than this is refused. */
#define MAX_STORE_BYTES (1024 * 1024)
/* Certificates read from one chain or truststore, and from a client. */
#define MAX_CERTS 64

static const struct gnutlslib *g;

struct resttls_gen {
	unsigned refs;
	gnutls_pcert_st pcert[MAX_CERTS];
	unsigned npcert;
	gnutls_privkey_t key;
	gnutls_x509_trust_list_t trust; /* NULL: no truststore */
};

struct resttls {
	char *prefix, *where, *ts_where, *tsc_where;
	char *ks_location, *ks_type, *ks_password, *key_password, *ks_key, *ks_chain;
	char *ts_location, *ts_type, *ts_password, *ts_certs;
	char *priorities;
	bool request, require;
	struct resttls_gen *cur;
};

/* A file's bytes, NUL-terminated: 0, RESTTLS_ERR (errbuf: why) or
 * RESTTLS_ERR_NOMEM. */
static int read_all(const char *path, gnutls_datum_t *out, char *errbuf, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t len = 0;
	ssize_t n;
	unsigned char *buf = NULL;

	out->data = NULL;
	out->size = 0;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_STORE_BYTES) {
		snprintf(errbuf, errlen, "%s: not a regular file of at most %d bytes", path,
		         MAX_STORE_BYTES);
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		close(fd);
		return RESTTLS_ERR_NOMEM;
	}
	while (len < (size_t)st.st_size &&
	       (n = read(fd, buf + len, (size_t)st.st_size - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	out->data = buf;
	out->size = (unsigned)len;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return RESTTLS_ERR;
}

enum kind { KIND_PEM, KIND_PKCS12, KIND_JAVA };

/* What a store is: its type key when given (JKS too, as Java's default
 * reads PKCS#12), else its first bytes. */
static enum kind kind_of(const char *type, const gnutls_datum_t *d)
{
	const unsigned char *p = d->data;
	size_t i = 0;

	if (d->size >= 4 && ((p[0] == 0xfe && p[1] == 0xed && p[2] == 0xfe && p[3] == 0xed) ||
	                     (p[0] == 0xce && p[1] == 0xce && p[2] == 0xce && p[3] == 0xce)))
		return KIND_JAVA;
	if (type != NULL && strcasecmp(type, "PEM") == 0)
		return KIND_PEM;
	if (type != NULL && strcasecmp(type, "PKCS12") == 0)
		return KIND_PKCS12;
	while (i < d->size && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return d->size - i >= 5 && memcmp(p + i, "-----", 5) == 0 ? KIND_PEM : KIND_PKCS12;
}

static const char *java_hint(bool keystore)
{
	return keystore ? "a Java KeyStore (JKS): convert it with keytool -importkeystore "
	                  "-srckeystore keystore.jks -destkeystore keystore.p12 "
	                  "-deststoretype PKCS12, and give keystore.p12"
	                : "a Java KeyStore (JKS): convert it with keytool -importkeystore "
	                  "-srckeystore truststore.jks -destkeystore truststore.p12 "
	                  "-deststoretype PKCS12, and give truststore.p12";
}

static void gen_free(struct resttls_gen *gen)
{
	if (gen == NULL)
		return;
	for (unsigned i = 0; i < gen->npcert; i++)
		g->gnutls_pcert_deinit(&gen->pcert[i]);
	if (gen->key != NULL)
		g->gnutls_privkey_deinit(gen->key);
	if (gen->trust != NULL)
		g->gnutls_x509_trust_list_deinit(gen->trust, 1);
	free(gen);
}

/* Puts crts[0..n) (taken) and key (taken) into gen, checking that the key
 * is the first certificate's. */
static int take_chain(struct resttls_gen *gen, gnutls_x509_crt_t *crts, unsigned n,
                      gnutls_x509_privkey_t key, const char *what, char *errbuf, size_t errlen)
{
	unsigned char kid[64], cid[64];
	size_t klen = sizeof(kid), clen = sizeof(cid);
	int rc = RESTTLS_ERR_CONFIG, err;

	if (n == 0 || key == NULL) {
		snprintf(errbuf, errlen, "%s: %s", what,
		         n == 0 ? "no certificate in it" : "no private key in it");
		goto out;
	}
	if (n > MAX_CERTS) {
		snprintf(errbuf, errlen, "%s: a chain of more than %d certificates", what,
		         MAX_CERTS);
		goto out;
	}
	if (g->gnutls_x509_privkey_get_key_id(key, 0, kid, &klen) != 0 ||
	    g->gnutls_x509_crt_get_key_id(crts[0], 0, cid, &clen) != 0 || klen != clen ||
	    memcmp(kid, cid, klen) != 0) {
		snprintf(errbuf, errlen,
		         "%s: the private key is not the one of the first certificate of the chain",
		         what);
		goto out;
	}
	if ((err = g->gnutls_privkey_init(&gen->key)) != 0 ||
	    (err = g->gnutls_privkey_import_x509(gen->key, key,
	                                         GNUTLS_PRIVKEY_IMPORT_AUTO_RELEASE)) != 0) {
		snprintf(errbuf, errlen, "%s: %s", what, g->gnutls_strerror(err));
		goto out;
	}
	key = NULL; /* the privkey owns it now */
	gen->npcert = n;
	if ((err = g->gnutls_pcert_import_x509_list(gen->pcert, crts, &gen->npcert, 0)) != 0) {
		gen->npcert = 0;
		snprintf(errbuf, errlen, "%s: %s", what, g->gnutls_strerror(err));
		goto out;
	}
	rc = 0;
out:
	for (unsigned i = 0; i < n; i++)
		g->gnutls_x509_crt_deinit(crts[i]);
	if (key != NULL)
		g->gnutls_x509_privkey_deinit(key);
	return rc;
}

/* A PEM private key and certificate chain, in one text or two. */
static int pem_keystore(struct resttls_gen *gen, const gnutls_datum_t *keytext,
                        const gnutls_datum_t *chaintext, const char *password, const char *what,
                        char *errbuf, size_t errlen)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t *crts = NULL;
	unsigned n = 0;
	int err, rc;

	if ((err = g->gnutls_x509_privkey_init(&key)) != 0 ||
	    (err = g->gnutls_x509_privkey_import2(key, keytext, GNUTLS_X509_FMT_PEM, password,
	                                          password ? 0 : GNUTLS_PKCS_PLAIN)) != 0) {
		snprintf(errbuf, errlen, "%s: the private key: %s%s", what, g->gnutls_strerror(err),
		         err == GNUTLS_E_DECRYPTION_FAILED ? " (is ssl.key.password right?)" : "");
		if (key != NULL)
			g->gnutls_x509_privkey_deinit(key);
		return err == GNUTLS_E_MEMORY_ERROR ? RESTTLS_ERR_NOMEM : RESTTLS_ERR_CONFIG;
	}
	err = g->gnutls_x509_crt_list_import2(&crts, &n, chaintext, GNUTLS_X509_FMT_PEM,
	                                      GNUTLS_X509_CRT_LIST_SORT);
	if (err < 0) {
		snprintf(errbuf, errlen, "%s: the certificate chain: %s", what,
		         g->gnutls_strerror(err));
		g->gnutls_x509_privkey_deinit(key);
		return RESTTLS_ERR_CONFIG;
	}
	rc = take_chain(gen, crts, n, key, what, errbuf, errlen);
	(*g->free_fn)(crts);
	return rc;
}

/* Imports a PKCS#12 file, its MAC checked with password. */
static int pkcs12_open(const gnutls_datum_t *der, const char *password, gnutls_pkcs12_t *out,
                       const char *what, char *errbuf, size_t errlen)
{
	int err;

	*out = NULL;
	if ((err = g->gnutls_pkcs12_init(out)) != 0 ||
	    (err = g->gnutls_pkcs12_import(*out, der, GNUTLS_X509_FMT_DER, 0)) != 0) {
		snprintf(errbuf, errlen, "%s: not a PKCS#12 keystore: %s", what,
		         g->gnutls_strerror(err));
		return RESTTLS_ERR_CONFIG;
	}
	if (password != NULL && (err = g->gnutls_pkcs12_verify_mac(*out, password)) != 0) {
		snprintf(errbuf, errlen, "%s: %s (is the password right?)", what,
		         g->gnutls_strerror(err));
		return RESTTLS_ERR_CONFIG;
	}
	return 0;
}

static int pkcs12_keystore(struct resttls_gen *gen, const gnutls_datum_t *der, const char *password,
                           const char *key_password, const char *what, char *errbuf, size_t errlen)
{
	gnutls_pkcs12_t p12 = NULL;
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t *chain = NULL;
	unsigned n = 0;
	int rc, err;

	rc = pkcs12_open(der, password, &p12, what, errbuf, errlen);
	if (rc == 0) {
		/* keytool protects the key with the store's password; a
		 * different ssl.key.password is tried after it. */
		err = g->gnutls_pkcs12_simple_parse(p12, password ? password : "", &key, &chain, &n,
		                                    NULL, NULL, NULL, 0);
		if (err != 0 && key_password != NULL)
			err = g->gnutls_pkcs12_simple_parse(p12, key_password, &key, &chain, &n,
			                                    NULL, NULL, NULL, 0);
		if (err != 0) {
			snprintf(errbuf, errlen, "%s: no private key and chain read: %s", what,
			         g->gnutls_strerror(err));
			rc = RESTTLS_ERR_CONFIG;
		} else {
			rc = take_chain(gen, chain, n, key, what, errbuf, errlen);
			(*g->free_fn)(chain);
		}
	}
	if (p12 != NULL)
		g->gnutls_pkcs12_deinit(p12);
	return rc;
}

/* Adds crts[0..n) (taken) to gen's trust list. */
static int add_trust(struct resttls_gen *gen, gnutls_x509_crt_t *crts, unsigned n, const char *what,
                     char *errbuf, size_t errlen)
{
	int err;

	if (gen->trust == NULL && (err = g->gnutls_x509_trust_list_init(&gen->trust, 0)) != 0) {
		for (unsigned i = 0; i < n; i++)
			g->gnutls_x509_crt_deinit(crts[i]);
		return RESTTLS_ERR_NOMEM;
	}
	if (g->gnutls_x509_trust_list_add_cas(gen->trust, crts, n, 0) < 0) {
		snprintf(errbuf, errlen, "%s: its certificates cannot be trusted", what);
		return RESTTLS_ERR_CONFIG;
	}
	return 0;
}

static int pem_truststore(struct resttls_gen *gen, const gnutls_datum_t *text, const char *what,
                          char *errbuf, size_t errlen)
{
	gnutls_x509_crt_t *crts = NULL;
	unsigned n = 0;
	int err = g->gnutls_x509_crt_list_import2(&crts, &n, text, GNUTLS_X509_FMT_PEM, 0), rc;

	if (err < 0 || n == 0) {
		snprintf(errbuf, errlen, "%s: no PEM certificate read%s%s", what,
		         err < 0 ? ": " : "", err < 0 ? g->gnutls_strerror(err) : "");
		if (err >= 0)
			(*g->free_fn)(crts);
		return RESTTLS_ERR_CONFIG;
	}
	rc = add_trust(gen, crts, n, what, errbuf, errlen);
	(*g->free_fn)(crts);
	return rc;
}

/* The certificates of one bag of a PKCS#12 truststore into crts. */
static int bag_certs(gnutls_pkcs12_bag_t bag, const char *password, gnutls_x509_crt_t *crts,
                     unsigned *n)
{
	int count;

	if (g->gnutls_pkcs12_bag_get_type(bag, 0) == GNUTLS_BAG_ENCRYPTED &&
	    g->gnutls_pkcs12_bag_decrypt(bag, password ? password : "") != 0)
		return -1;
	count = g->gnutls_pkcs12_bag_get_count(bag);
	for (int i = 0; i < count && *n < MAX_CERTS; i++) {
		gnutls_datum_t der;

		if (g->gnutls_pkcs12_bag_get_type(bag, (unsigned)i) != GNUTLS_BAG_CERTIFICATE ||
		    g->gnutls_pkcs12_bag_get_data(bag, (unsigned)i, &der) != 0)
			continue;
		if (g->gnutls_x509_crt_init(&crts[*n]) != 0)
			return -1;
		if (g->gnutls_x509_crt_import(crts[*n], &der, GNUTLS_X509_FMT_DER) != 0) {
			g->gnutls_x509_crt_deinit(crts[*n]);
			continue;
		}
		(*n)++;
	}
	return 0;
}

static int pkcs12_truststore(struct resttls_gen *gen, const gnutls_datum_t *der,
                             const char *password, const char *what, char *errbuf, size_t errlen)
{
	gnutls_pkcs12_t p12 = NULL;
	gnutls_x509_crt_t crts[MAX_CERTS];
	unsigned n = 0;
	int rc = pkcs12_open(der, password, &p12, what, errbuf, errlen);

	for (unsigned i = 0; rc == 0; i++) {
		gnutls_pkcs12_bag_t bag = NULL;
		int err;

		if (g->gnutls_pkcs12_bag_init(&bag) != 0) {
			rc = RESTTLS_ERR_NOMEM;
			break;
		}
		err = g->gnutls_pkcs12_get_bag(p12, (int)i, bag);
		if (err == 0 && bag_certs(bag, password, crts, &n) != 0) {
			snprintf(errbuf, errlen, "%s: cannot be decrypted (is the password right?)",
			         what);
			rc = RESTTLS_ERR_CONFIG;
		}
		g->gnutls_pkcs12_bag_deinit(bag);
		if (err != 0)
			break;
	}
	if (p12 != NULL)
		g->gnutls_pkcs12_deinit(p12);
	if (rc == 0 && n == 0) {
		snprintf(errbuf, errlen, "%s: no certificate in it", what);
		rc = RESTTLS_ERR_CONFIG;
	}
	if (rc != 0) {
		for (unsigned i = 0; i < n; i++)
			g->gnutls_x509_crt_deinit(crts[i]);
		return rc;
	}
	return add_trust(gen, crts, n, what, errbuf, errlen);
}

static gnutls_datum_t text_datum(const char *s)
{
	gnutls_datum_t d = {(unsigned char *)(uintptr_t)s, (unsigned)strlen(s)};

	return d;
}

static int load_keystore(const struct resttls *tls, struct resttls_gen *gen, char *errbuf,
                         size_t errlen)
{
	char what[1200], why[1024] = "";
	gnutls_datum_t d;
	int rc;

	if (tls->ks_key != NULL) {
		gnutls_datum_t k = text_datum(tls->ks_key), c = text_datum(tls->ks_chain);

		snprintf(what, sizeof(what), "%s: %sssl.keystore.key", tls->where, tls->prefix);
		return pem_keystore(gen, &k, &c, tls->key_password, what, errbuf, errlen);
	}
	snprintf(what, sizeof(what), "%s: %sssl.keystore.location: %s", tls->where, tls->prefix,
	         tls->ks_location);
	if ((rc = read_all(tls->ks_location, &d, why, sizeof(why))) != 0) {
		snprintf(errbuf, errlen, "%s: %sssl.keystore.location: %s", tls->where, tls->prefix,
		         why);
		return rc;
	}
	switch (kind_of(tls->ks_type, &d)) {
	case KIND_JAVA:
		snprintf(errbuf, errlen, "%s: %s", what, java_hint(true));
		rc = RESTTLS_ERR_CONFIG;
		break;
	case KIND_PEM:
		rc = pem_keystore(gen, &d, &d, tls->key_password, what, errbuf, errlen);
		break;
	case KIND_PKCS12:
		rc = pkcs12_keystore(gen, &d, tls->ks_password, tls->key_password, what, errbuf,
		                     errlen);
		break;
	}
	free(d.data);
	return rc;
}

static int load_truststore(const struct resttls *tls, struct resttls_gen *gen, char *errbuf,
                           size_t errlen)
{
	char what[1200], why[1024] = "";
	gnutls_datum_t d;
	int rc;

	if (tls->ts_certs != NULL) {
		d = text_datum(tls->ts_certs);
		snprintf(what, sizeof(what), "%s: %sssl.truststore.certificates", tls->tsc_where,
		         tls->prefix);
		rc = pem_truststore(gen, &d, what, errbuf, errlen);
		if (rc != 0 || tls->ts_location == NULL)
			return rc;
	}
	if (tls->ts_location == NULL)
		return 0;
	snprintf(what, sizeof(what), "%s: %sssl.truststore.location: %s", tls->ts_where,
	         tls->prefix, tls->ts_location);
	if ((rc = read_all(tls->ts_location, &d, why, sizeof(why))) != 0) {
		snprintf(errbuf, errlen, "%s: %sssl.truststore.location: %s", tls->ts_where,
		         tls->prefix, why);
		return rc;
	}
	switch (kind_of(tls->ts_type, &d)) {
	case KIND_JAVA:
		snprintf(errbuf, errlen, "%s: %s", what, java_hint(false));
		rc = RESTTLS_ERR_CONFIG;
		break;
	case KIND_PEM:
		rc = pem_truststore(gen, &d, what, errbuf, errlen);
		break;
	case KIND_PKCS12:
		rc = pkcs12_truststore(gen, &d, tls->ts_password, what, errbuf, errlen);
		break;
	}
	free(d.data);
	return rc;
}

static int load(const struct resttls *tls, struct resttls_gen **out, char *errbuf, size_t errlen)
{
	struct resttls_gen *gen = calloc(1, sizeof(*gen));
	int rc;

	*out = NULL;
	if (gen == NULL)
		return RESTTLS_ERR_NOMEM;
	gen->refs = 1;
	rc = load_keystore(tls, gen, errbuf, errlen);
	if (rc == 0)
		rc = load_truststore(tls, gen, errbuf, errlen);
	if (rc != 0) {
		if (rc == RESTTLS_ERR_NOMEM)
			snprintf(errbuf, errlen, "%s: out of memory", tls->where);
		gen_free(gen);
		return rc;
	}
	*out = gen;
	return 0;
}

static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s != NULL ? strdup(s) : NULL;

	*ok = *ok && (s == NULL || d != NULL);
	return d;
}

int resttls_new(const struct rest_tls_settings *t, struct resttls **out, char *errbuf,
                size_t errlen)
{
	struct resttls *tls = calloc(1, sizeof(*tls));
	char why[512];
	bool ok = tls != NULL;
	int rc;

	*out = NULL;
	if (!ok)
		return RESTTLS_ERR_NOMEM;
	if (gnutlslib_get(&g, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "%s: an https listener needs %s (Debian: libgnutls30)",
		         t->where ? t->where : "listeners", why);
		resttls_destroy(tls);
		return RESTTLS_ERR_CONFIG;
	}
	tls->prefix = dup_or_null(t->prefix, &ok);
	tls->where = dup_or_null(t->where ? t->where : "listeners", &ok);
	tls->ts_where = dup_or_null(t->truststore_where ? t->truststore_where : tls->where, &ok);
	tls->tsc_where =
	    dup_or_null(t->truststore_certs_where ? t->truststore_certs_where : tls->where, &ok);
	tls->ks_location = dup_or_null(t->keystore_location, &ok);
	tls->ks_type = dup_or_null(t->keystore_type, &ok);
	tls->ks_password = dup_or_null(t->keystore_password, &ok);
	tls->key_password = dup_or_null(t->key_password, &ok);
	tls->ks_key = dup_or_null(t->keystore_key, &ok);
	tls->ks_chain = dup_or_null(t->keystore_chain, &ok);
	tls->ts_location = dup_or_null(t->truststore_location, &ok);
	tls->ts_type = dup_or_null(t->truststore_type, &ok);
	tls->ts_password = dup_or_null(t->truststore_password, &ok);
	tls->ts_certs = dup_or_null(t->truststore_certs, &ok);
	tls->priorities = dup_or_null(t->priorities, &ok);
	tls->request = t->client_auth != NULL && strcmp(t->client_auth, "none") != 0;
	tls->require = t->client_auth != NULL && strcmp(t->client_auth, "required") == 0;
	if (!ok) {
		resttls_destroy(tls);
		return RESTTLS_ERR_NOMEM;
	}
	rc = load(tls, &tls->cur, errbuf, errlen);
	if (rc != 0) {
		resttls_destroy(tls);
		return rc;
	}
	*out = tls;
	return 0;
}

size_t resttls_files(const struct resttls *tls, const char **paths, size_t max)
{
	size_t n = 0;

	if (tls->ks_location != NULL && n < max)
		paths[n++] = tls->ks_location;
	if (tls->ts_location != NULL && n < max)
		paths[n++] = tls->ts_location;
	return n;
}

int resttls_reload(struct resttls *tls, char *errbuf, size_t errlen)
{
	struct resttls_gen *gen;
	int rc = load(tls, &gen, errbuf, errlen);

	if (rc != 0)
		return rc;
	resttls_gen_unref(tls->cur);
	tls->cur = gen;
	return 0;
}

struct resttls_gen *resttls_current(struct resttls *tls)
{
	tls->cur->refs++;
	return tls->cur;
}

void resttls_gen_unref(struct resttls_gen *gen)
{
	if (gen != NULL && --gen->refs == 0)
		gen_free(gen);
}

void resttls_gen_cert(struct resttls_gen *gen, gnutls_pcert_st **pcert, unsigned *n,
                      gnutls_privkey_t *key)
{
	*pcert = gen->pcert;
	*n = gen->npcert;
	*key = gen->key;
}

bool resttls_requests_client(const struct resttls *tls)
{
	return tls->request;
}

bool resttls_requires_client(const struct resttls *tls)
{
	return tls->require;
}

int resttls_gen_verify(const struct resttls_gen *gen, const gnutls_datum_t *chain, unsigned n,
                       char *errbuf, size_t errlen)
{
	gnutls_x509_crt_t crts[MAX_CERTS];
	gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
	                                 (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_CLIENT, 0};
	unsigned got = 0, status = 0;
	int rc = RESTTLS_ERR_CONFIG;

	if (gen->trust == NULL || n == 0) {
		snprintf(errbuf, errlen, "no client certificate");
		return RESTTLS_ERR_CONFIG;
	}
	for (; got < n && got < MAX_CERTS; got++) {
		if (g->gnutls_x509_crt_init(&crts[got]) != 0)
			break;
		if (g->gnutls_x509_crt_import(crts[got], &chain[got], GNUTLS_X509_FMT_DER) != 0) {
			g->gnutls_x509_crt_deinit(crts[got]);
			break;
		}
	}
	if (got == n &&
	    g->gnutls_x509_trust_list_verify_crt2(gen->trust, crts, got, &purpose, 1, 0, &status,
	                                          NULL) == 0 &&
	    status == 0)
		rc = 0;
	else
		snprintf(errbuf, errlen,
		         "the client certificate is not one the truststore vouches "
		         "for (unknown CA, expired, or not for TLS clients)");
	for (unsigned i = 0; i < got; i++)
		g->gnutls_x509_crt_deinit(crts[i]);
	return rc;
}

const char *resttls_priorities(const struct resttls *tls)
{
	return tls->priorities;
}

void resttls_destroy(struct resttls *tls)
{
	if (tls == NULL)
		return;
	resttls_gen_unref(tls->cur);
	free(tls->prefix);
	free(tls->where);
	free(tls->ts_where);
	free(tls->tsc_where);
	free(tls->ks_location);
	free(tls->ks_type);
	free(tls->ks_password);
	free(tls->key_password);
	free(tls->ks_key);
	free(tls->ks_chain);
	free(tls->ts_location);
	free(tls->ts_type);
	free(tls->ts_password);
	free(tls->ts_certs);
	free(tls->priorities);
	free(tls);
}

const char *resttls_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case RESTTLS_ERR:
		return "cannot be read";
	case RESTTLS_ERR_NOMEM:
		return "out of memory";
	case RESTTLS_ERR_CONFIG:
		return "not a usable keystore or truststore";
	default:
		return "unknown TLS error";
	}
}
