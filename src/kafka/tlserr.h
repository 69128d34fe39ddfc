/* tlserr: the words for an X509 verification error, which librdkafka 2.0.2's
 * "certificate verify failed" leaves out. Numbers from OpenSSL's x509_vfy.h
 * (stable across 1.1 and 3.x); no OpenSSL header or library needed. */
#ifndef SKIFF_TLSERR_H
#define SKIFF_TLSERR_H

/* What X509 error code err means, e.g. "certificate has expired"; a generic
 * text for codes not listed. Never NULL; static storage. */
const char *tlserr_reason(int err);

#endif
