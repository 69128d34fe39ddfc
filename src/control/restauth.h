/* restauth: Connect's BasicAuthSecurityRestExtension without a JVM: HTTP
 * Basic credentials checked against the users of the credentials file that
 * the JAAS file's KafkaConnect entry names.
 *
 * Connect reads the JAAS file that -Djava.security.auth.login.config names
 * (KAFKA_OPTS), takes its KafkaConnect entry, whose
 * org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule
 * has a file="..." option: a .properties file of user: password lines. So
 * does skiff (restconf.h says where the JAAS file's path comes from), and an
 * entry with another login module is refused, naming it. Two differences,
 * both on the safe side: a credentials file without a user is refused
 * (Connect would then let every request in), and both files are read again
 * when they change on disk (Connect reads them once).
 *
 * restauth_check is a pure function of its arguments and the users read:
 * the socket-free REST core (rest_api.c) calls it, the fuzzer too. No
 * message holds a password. Main loop only. Error convention: util/err.h. */
#ifndef SKIFF_RESTAUTH_H
#define SKIFF_RESTAUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

enum {
	RESTAUTH_OK = 0,
	RESTAUTH_ERR = -1,        /* a file cannot be read */
	RESTAUTH_ERR_NOMEM = -2,  /* out of memory */
	RESTAUTH_ERR_CONFIG = -3, /* a file is not what Connect would take */
};

struct restauth;

/* Reads the JAAS file jaas (where: "file:line" or "KAFKA_OPTS", for
 * messages) and the credentials file it names. Returns 0 and *out
 * (restauth_destroy), or a RESTAUTH_ERR_* code with errbuf "where: path:
 * why". */
int restauth_new(const char *jaas, const char *where, struct restauth **out, char *errbuf,
                 size_t errlen);

/* The two files, to watch (borrowed). Returns how many (at most max). */
size_t restauth_files(const struct restauth *a, const char **paths, size_t max);

/* Reads both files again. On failure the users read before stay, and
 * errbuf says why. Returns 0 or a RESTAUTH_ERR_* code. */
int restauth_reload(struct restauth *a, char *errbuf, size_t errlen);

/* Whether an Authorization header value (NULL: none) names a user of the
 * credentials file with its password, parsed as Connect's
 * BasicAuthCredentials does ("Basic", any case, one space, base64 of
 * user:password split at the first colon). */
bool restauth_check(const struct restauth *a, const char *authorization);

/* How many users the credentials file holds. */
size_t restauth_users(const struct restauth *a);

/* Accepts NULL. */
void restauth_destroy(struct restauth *a);

/* Connect's reply to a request without good credentials: 401 with this
 * body (and Content-Type application/json, though it is not JSON). */
extern const char restauth_refusal[];

#endif
