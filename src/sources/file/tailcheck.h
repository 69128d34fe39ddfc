/* tailcheck: what a KIP-875 PATCH may store for the file source. */
#ifndef SKIFF_TAILCHECK_H
#define SKIFF_TAILCHECK_H

#include <stddef.h>

struct config_section;

/* source_ops.check_offset of the file source: partition must be
 * {"filename": <a path the connector follows or would: its file, or one
 * its files patterns match and files.exclude does not>}, offset
 * {"position": <integer 0..2^63-1>} plus, optionally, tailpos.h's identity
 * fields as integers; anything else would be read back as "no offset" and
 * the file read again from its start. Returns 0 or SOURCE_ERR_CONFIG with
 * errbuf. */
int tailcheck_offset(const struct config_section *cfg, const char *partition, const char *offset,
                     char *errbuf, size_t errlen);

#endif
