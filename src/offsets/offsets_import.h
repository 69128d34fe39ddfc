/* offsets_import: reads Kafka Connect standalone's offsets file
 * (FileOffsetBackingStore: one Java-serialized java.util.HashMap<byte[],
 * byte[]>, key and value the converter's JSON bytes, e.g.
 *   ["local-file-source",{"filename":"/var/log/app.log"}] -> {"position":1234})
 * into the offset store, so that a Connect user's skiff resumes at the same
 * lines. Only that shape of the serialization stream is read (Java's Object
 * Serialization Specification, chapter 6); anything else is refused with
 * the byte position and what was expected. Each entry goes to the caller,
 * who checks it and puts it in the store. Connect's FileStreamSource counts
 * its position in Java chars (UTF-16 code units: it reads the file through
 * a UTF-8 character reader), skiff in bytes: offsets_import_position turns
 * one into the other by reading the file, for this import and for the
 * offsets topic's records that Connect wrote (offsets_kafka.c). Leaf
 * module. */
#ifndef SKIFF_OFFSETS_IMPORT_H
#define SKIFF_OFFSETS_IMPORT_H

#include <stddef.h>
#include <stdint.h>

/* One entry: key and value (NULL: Connect's null offset) as Connect wrote
 * them (NUL-free text, unchecked, valid during the call), at: the key's byte
 * offset in the offsets file. Returns 0 to go on, or a negative
 * OFFSETS_ERR_* with errbuf to stop the import with it. */
typedef int (*offsets_import_fn)(void *arg, const char *key, const char *value, size_t at,
                                 char *errbuf, size_t errlen);

/* Hands every entry of the Connect offsets file at path to fn, in the
 * file's order. *count: entries fn took. Returns 0, or a negative
 * OFFSETS_ERR_* with errbuf naming the file and, for a shape skiff does not
 * read, the byte offset (OFFSETS_ERR_CORRUPT), or what fn returned; a file
 * missing, unreadable by its permissions or too large is OFFSETS_ERR_ARG (a
 * person must act), a read error OFFSETS_ERR_IO. */
int offsets_import_connect(const char *path, offsets_import_fn fn, void *arg, size_t *count,
                           char *errbuf, size_t errlen);

/* FileStreamSource's position as skiff's. A FileStreamSource task skips
 * the position it starts from in bytes (InputStream.skip, before its UTF-8
 * reader), then counts Java chars (UTF-16 code units) read from there: its
 * position is from + chars. This walks the file at path from byte from
 * (where a character starts) over chars chars and puts in *bytes where they
 * end: the file's UTF-8 walked, a 4-byte sequence counted as 2 chars, a
 * malformed sequence as the one U+FFFD Java's decoder puts for it
 * (utf8_seq). chars <= 0 is byte from without reading the file. Returns 0,
 * or with errbuf naming the file: OFFSETS_ERR_ARG when it is missing, holds
 * fewer chars, or chars ends inside a 4-byte character (no position is made
 * up: only the file can say it); OFFSETS_ERR_IO for a read error. */
int offsets_import_position(const char *path, int64_t from, int64_t chars, int64_t *bytes,
                            char *errbuf, size_t errlen);

/* FileStreamSource's offset value ({"position":N}, written by Connect for
 * the file at path, its task started at byte from: 0 for a task that read
 * the file from its start) as skiff's {"position":<bytes>} in out (len
 * bytes), through offsets_import_position. N below from is no count from
 * there (a value set by hand, which a task skips in bytes): taken as
 * bytes. Returns 0, OFFSETS_ERR_ARG for a value without a whole "position"
 * (errbuf says so), or offsets_import_position's errors. */
int offsets_import_value(const char *path, int64_t from, const char *value, char *out, size_t len,
                         char *errbuf, size_t errlen);

/* The start of the line that holds byte pos of the file at path in *start,
 * as FileStreamSource splits lines (at \n, \r\n or a lone \r): pos itself
 * when it is 0 or the byte before it ends a line, else the byte after the
 * nearest line end before pos (0 when there is none). A position Connect
 * wrote is always a line start: one that is not was counted from the wrong
 * byte. Returns 0, or OFFSETS_ERR_IO with errbuf naming the file. */
int offsets_import_line_start(const char *path, int64_t pos, int64_t *start, char *errbuf,
                              size_t errlen);

#endif
