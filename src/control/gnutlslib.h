/* gnutlslib: GnuTLS, loaded when an https:// listener is first opened.
 *
 * libmicrohttpd serves TLS through GnuTLS, but only from one PEM key and
 * certificate given once: no PKCS#12 keystore, no new certificate without a
 * new server, and no more than "a client certificate was requested" for
 * Connect's ssl.client.auth=required. So resttls.c reads Connect's keystores
 * and truststores itself and hands libmicrohttpd each handshake's
 * certificate, and checks each client's chain, with GnuTLS directly.
 * libmicrohttpd already maps libgnutls.so.30 (Debian's libmicrohttpd12
 * depends on libgnutls30), so this adds no library to the process; the
 * headers come from libgnutls28-dev. Like mhdlib.h it is dlopen()ed by its
 * versioned soname, so a process without https:// listeners maps neither.
 *
 * The pointers have the exact types of GnuTLS's headers.
 *
 * Main loop only (not thread-safe). Error convention: util/err.h. */
#ifndef SKIFF_GNUTLSLIB_H
#define SKIFF_GNUTLSLIB_H

#include <stddef.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/pkcs12.h>
#include <gnutls/x509.h>

#ifndef SKIFF_GNUTLS_SONAME
#define SKIFF_GNUTLS_SONAME "libgnutls.so.30"
#endif

#define GNUTLSLIB_FUNCS(X)                                                                         \
	X(gnutls_strerror)                                                                         \
	X(gnutls_x509_crt_init)                                                                    \
	X(gnutls_x509_crt_deinit)                                                                  \
	X(gnutls_x509_crt_import)                                                                  \
	X(gnutls_x509_crt_list_import2)                                                            \
	X(gnutls_x509_crt_get_key_id)                                                              \
	X(gnutls_x509_crt_get_expiration_time)                                                     \
	X(gnutls_x509_privkey_init)                                                                \
	X(gnutls_x509_privkey_deinit)                                                              \
	X(gnutls_x509_privkey_import2)                                                             \
	X(gnutls_x509_privkey_get_key_id)                                                          \
	X(gnutls_privkey_init)                                                                     \
	X(gnutls_privkey_deinit)                                                                   \
	X(gnutls_privkey_import_x509)                                                              \
	X(gnutls_pcert_import_x509_list)                                                           \
	X(gnutls_pcert_deinit)                                                                     \
	X(gnutls_pkcs12_init)                                                                      \
	X(gnutls_pkcs12_deinit)                                                                    \
	X(gnutls_pkcs12_import)                                                                    \
	X(gnutls_pkcs12_verify_mac)                                                                \
	X(gnutls_pkcs12_simple_parse)                                                              \
	X(gnutls_pkcs12_get_bag)                                                                   \
	X(gnutls_pkcs12_bag_init)                                                                  \
	X(gnutls_pkcs12_bag_deinit)                                                                \
	X(gnutls_pkcs12_bag_decrypt)                                                               \
	X(gnutls_pkcs12_bag_get_count)                                                             \
	X(gnutls_pkcs12_bag_get_type)                                                              \
	X(gnutls_pkcs12_bag_get_data)                                                              \
	X(gnutls_x509_trust_list_init)                                                             \
	X(gnutls_x509_trust_list_deinit)                                                           \
	X(gnutls_x509_trust_list_add_cas)                                                          \
	X(gnutls_x509_trust_list_verify_crt2)                                                      \
	X(gnutls_certificate_server_set_request)                                                   \
	X(gnutls_certificate_get_peers)                                                            \
	X(gnutls_certificate_send_x509_rdn_sequence)                                               \
	X(gnutls_session_set_verify_function)                                                      \
	X(gnutls_session_get_ptr)                                                                  \
	X(gnutls_record_send)

#define GNUTLSLIB_FIELD(fn) __typeof__(fn) *fn;
/* The GnuTLS functions resttls.c calls, and gnutls_free (a variable in
 * GnuTLS: the function that frees what GnuTLS allocated). */
struct gnutlslib {
	GNUTLSLIB_FUNCS(GNUTLSLIB_FIELD)
	gnutls_free_function *free_fn;
};
#undef GNUTLSLIB_FIELD

/* Loads SKIFF_GNUTLS_SONAME on the first call and resolves the table; later
 * calls return the same table. Sets *out (owned here, valid until exit) and
 * returns 0, or returns -1 with errbuf "libgnutls.so.30: why" and *out
 * NULL. */
int gnutlslib_get(const struct gnutlslib **out, char *errbuf, size_t errlen);

#endif
