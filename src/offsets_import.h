/* offsets_import: reads Kafka Connect standalone's offsets file
 * (FileOffsetBackingStore: one Java-serialized java.util.HashMap<byte[],
 * byte[]>, key and value the converter's JSON bytes, e.g.
 *   ["local-file-source",{"filename":"/var/log/app.log"}] -> {"position":1234})
 * into the offset store, so that a Connect user's skiff resumes at the same
 * lines. Only that shape of the serialization stream is read (Java's Object
 * Serialization Specification, chapter 6); anything else is refused with
 * the byte position and what was expected. Leaf module. */
#ifndef SKIFF_OFFSETS_IMPORT_H
#define SKIFF_OFFSETS_IMPORT_H

#include <stddef.h>

struct offsets;

/* Puts every entry of the Connect offsets file at path into o (a null value
 * removes its key, as Connect's null offset). *count: entries put. Returns 0,
 * or a negative OFFSETS_ERR_* with errbuf naming the file and, for a shape
 * skiff does not read, the byte offset (OFFSETS_ERR_CORRUPT), or the key the
 * store refuses (OFFSETS_ERR_ARG). */
int offsets_import_connect(const char *path, struct offsets *o, size_t *count, char *errbuf,
                           size_t errlen);

#endif
