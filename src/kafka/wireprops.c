/* wireprops: Connect-only client security properties, refused with the
 * librdkafka way. */
#include "kafka/wireprops.h"

#include "config/config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CA_HINT                                                                                    \
	"librdkafka has no truststore: give the CA certificates as PEM, in a file "                \
	"(ssl.ca.location=ca.pem; from a JKS: keytool -exportcert -rfc -keystore "                 \
	"truststore.jks -alias CARoot -file ca.pem) or inline (ssl.ca.pem)"

static const struct {
	const char *key;
	const char *hint;
} refused[] = {
    {"ssl.truststore.location", CA_HINT},
    {"ssl.truststore.type", CA_HINT},
    {"ssl.truststore.password", CA_HINT},
    {"ssl.truststore.certificates", "its PEM text goes in ssl.ca.pem"},
    {"ssl.keystore.type", "librdkafka's ssl.keystore.location is always PKCS#12 (convert a JKS "
                          "with keytool -importkeystore -deststoretype PKCS12), or give PEM "
                          "files in ssl.certificate.location and ssl.key.location; remove "
                          "this key"},
    {"ssl.keystore.certificate.chain", "its PEM text goes in ssl.certificate.pem"},
    {"ssl.keystore.key", "its PEM text goes in ssl.key.pem"},
    {"sasl.jaas.config", "librdkafka reads no JAAS line: write the user and password as "
                         "sasl.username=... and sasl.password=... (PLAIN, SCRAM), or "
                         "sasl.oauthbearer.* for OAUTHBEARER"},
    {"ssl.protocol", "librdkafka takes the TLS versions OpenSSL offers; remove this key"},
    {"ssl.enabled.protocols", "librdkafka takes the TLS versions OpenSSL offers; remove this "
                              "key"},
};

/* The key as librdkafka sees it: producer.X and kafka.X are X. */
static const char *bare(const char *key)
{
	if (strncmp(key, "producer.", 9) == 0)
		return key + 9;
	if (strncmp(key, "kafka.", 6) == 0)
		return key + 6;
	return key;
}

/* A Java KeyStore (JKS 0xFEEDFEED or JCEKS 0xCECECECE) where librdkafka wants
 * PKCS#12. A file that cannot be read is left to librdkafka to report. */
static bool java_keystore(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool java;

	if (fd < 0)
		return false;
	java = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	       ((magic[0] == 0xfe && magic[1] == 0xed && magic[2] == 0xfe && magic[3] == 0xed) ||
	        (magic[0] == 0xce && magic[1] == 0xce && magic[2] == 0xce && magic[3] == 0xce));
	close(fd);
	return java;
}

/* The hint for one key=value, or NULL when librdkafka takes it as it is. */
static const char *hint_for(const char *key, const char *value)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcmp(key, refused[i].key) == 0)
			return refused[i].hint;
	if (strcmp(key, "ssl.endpoint.identification.algorithm") == 0 && value[0] == '\0')
		return "Connect's empty value (no host name check) is \"none\" in librdkafka: "
		       "write "
		       "ssl.endpoint.identification.algorithm=none, knowing that any certificate "
		       "the CA signed is then taken for the broker's";
	if (strcmp(key, "ssl.keystore.location") == 0 && java_keystore(value))
		return "a Java KeyStore; librdkafka reads PKCS#12 only: convert it (keytool "
		       "-importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 "
		       "-deststoretype PKCS12) or give PEM files in ssl.certificate.location and "
		       "ssl.key.location";
	return NULL;
}

int wireprops_check(const struct config_section *worker, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < config_passthrough_count(worker); i++) {
		const char *key = config_passthrough_key(worker, i);
		const char *hint = hint_for(bare(key), config_passthrough_value(worker, i));

		if (hint != NULL) {
			snprintf(errbuf, errlen, "%s: %s: %s", config_passthrough_where(worker, i),
			         key, hint);
			return -1;
		}
	}
	return 0;
}
