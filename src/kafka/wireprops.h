/* wireprops: Connect's client security properties that librdkafka names
 * differently or cannot read. A Connect worker file brings Java's ways (JKS
 * stores, JAAS lines, an empty endpoint algorithm); librdkafka takes PEM files,
 * sasl.username/sasl.password and "none". Each is refused at load (and by
 * --check) with what to write instead, rather than librdkafka's "No such
 * configuration property". */
#ifndef SKIFF_WIREPROPS_H
#define SKIFF_WIREPROPS_H

#include <stddef.h>

struct config_section;

/* Checks the worker's pass-through keys (bare, producer.X or kafka.X). Returns
 * 0, or -1 with errbuf naming file:line, the key and the librdkafka way; never
 * a secret's value. */
int wireprops_check(const struct config_section *worker, char *errbuf, size_t errlen);

#endif
