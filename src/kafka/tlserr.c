/* tlserr: X509 verification errors in words. */
#include "kafka/tlserr.h"

#include <stddef.h>

static const struct {
	int code;
	const char *text;
} reasons[] = {
    {2, "the issuer's certificate is not in ssl.ca.location (unknown CA)"},
    {7, "the certificate's signature does not verify"},
    {9, "the certificate is not yet valid (check the clock)"},
    {10, "certificate has expired"},
    {18, "self-signed certificate not in ssl.ca.location (unknown CA)"},
    {19, "self-signed certificate in the chain not in ssl.ca.location (unknown CA)"},
    {20, "the issuer's certificate is not in ssl.ca.location (unknown CA)"},
    {21, "the certificate's issuer is not in ssl.ca.location (unknown CA)"},
    {23, "certificate revoked"},
    {25, "path length constraint exceeded"},
    {26, "the certificate is not for a TLS server (purpose)"},
    {27, "certificate not trusted"},
    {28, "certificate rejected"},
    {62, "Hostname mismatch: the certificate does not name the broker's host"},
    {64, "IP address mismatch: the certificate does not name the broker's address"},
    {66, "the certificate's key is too small"},
    {67, "the CA certificate's key is too small"},
    {68, "the CA certificate's signature digest is too weak"},
};

const char *tlserr_reason(int err)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == err)
			return reasons[i].text;
	return "certificate verification failed (see OpenSSL's x509_vfy.h for the code)";
}
