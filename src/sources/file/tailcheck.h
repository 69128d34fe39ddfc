/* tailcheck: what a KIP-875 PATCH may store for the file source. */
#ifndef SKIFF_TAILCHECK_H
#define SKIFF_TAILCHECK_H

#include <stdbool.h>
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

/* source_ops.check_reach of the file source (source.h): the position is
 * taken in the file the offset's identity names (its own dev and ino, else
 * the stored offset's), where rotation put it (app.log.1, or app.log.1.gz
 * when compressed since: found as resuming finds it, its position in
 * uncompressed bytes), else in the file at the partition's path; refused
 * past that file's end, inside a line (the byte before it ends no line; a
 * "\r" ending the path's file, still written, ends none yet), when the
 * bytes up to it cannot be read (a compressed file damaged there, or of
 * which not one byte decodes; named), or, but for position 0, in a file
 * the offset's own dev and ino name that is not found (gone since, or
 * another file's identity: named). Position 0 in a file not there is
 * stored alone (no identity of a file never read). The identity members
 * (dev, ino, fp, fplen, tail, born, after) are then those skiff would
 * store at that position in that file, in *settled when they differ from
 * those sent (a body read with GET and sent back with a new position
 * carries the old position's "tail"): never a reason to read the file
 * again from its start. A position alone (Connect's offset) in the path's
 * file is stored as sent. An offset equal to the stored one passes
 * unchecked; the stored position in the stored offset's file is never
 * refused (what skiff would do unasked). Refused inside a line, *settled
 * may still hold that file's identity at the position (what --force
 * stores). On 0, errbuf notes the file when it is not the path's. Memory:
 * a fingerprint, 2 x 64 KiB around the position and, for a compressed
 * file, tailz's window and codec state, whatever the file's size; it is
 * decoded from its start up to 64 KiB past the position (bounded, a REST
 * request: refused, naming `skiff offsets set`, more than 64 MiB in). */
int tailcheck_reach(const struct config_section *cfg, const char *partition, const char *offset,
                    const char *stored, bool bounded, char **settled, char *errbuf, size_t errlen);

#endif
