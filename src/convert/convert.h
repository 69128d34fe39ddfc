/* convert: Kafka Connect's converters, byte-compatible with what Connect
 * writes: JsonConverter (schemas.enable true: {"schema":…,"payload":…};
 * false: the payload alone), StringConverter and ByteArrayConverter.
 * Pure functions; called from the main loop. */
#ifndef SKIFF_CONVERT_H
#define SKIFF_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct buf;
struct record_value;

/* The largest value a converter writes: librdkafka's largest
 * message.max.bytes, so nothing larger could be produced anyway. */
#define CONVERT_MAX_BYTES 1000000000

enum converter_kind { CONV_JSON, CONV_STRING, CONV_BYTEARRAY };

struct converter {
	enum converter_kind kind;
	bool schemas_enable; /* JsonConverter only */
};

/* Resolves a converter class name: the full Java class name, its simple name
 * or the simple name without "Converter" (Connect's plugin aliases). Returns 0
 * or -1 for an unknown class. */
int convert_resolve(const char *class_name, bool schemas_enable, struct converter *out);

/* The canonical Java class name of c, for messages. */
const char *convert_class_name(const struct converter *c);

/* Serialises v as c does. On success returns 0 and *out is a malloc'd buffer
 * of *len bytes that the caller owns (handed to librdkafka with
 * RD_KAFKA_MSG_F_FREE), or NULL for a null value (Connect's converters all
 * return null for a null key or value). *replaced counts the invalid UTF-8
 * sequences replaced with U+FFFD, as Java's decoder replaces them before
 * Connect sees a line (JsonConverter and StringConverter).
 *
 * A VALUE_STRING is a line: JsonConverter writes it as a JSON string (with
 * the STRING schema envelope when schemas_enable), StringConverter as its
 * UTF-8, ByteArrayConverter as the bytes unchanged (Connect rejects a STRING
 * value there; skiff passes raw lines on purpose).
 *
 * A VALUE_STRUCT is a schema and a payload in Connect's JSON form. The
 * schema as JsonConverter writes it; its members may come in any order (they
 * are written in Connect's), "optional" defaults to false, and the types
 * float32 and float64 are written as Connect's "float" and "double". The
 * payload an object with a member per field (absent or null: null, or the
 * field's "default"): integer types (and the logical Timestamp, Date, Time)
 * as raw JSON text (cJSON_CreateRaw, exact) or cJSON numbers (exact below
 * 2^53); float and double as cJSON numbers (NaN and infinities allowed) or
 * raw text; bytes as the base64 string. JsonConverter writes it as Connect
 * does; StringConverter as Struct.toString(), except where Connect prints
 * what skiff cannot know: a bytes field (the identity hash of a Java array;
 * skiff writes the base64), a Decimal (skiff writes the base64), a date
 * before 1582 (Julian calendar in Java), a zone Java names differently.
 * Strings are C strings in which the bytes C0 80 stand for U+0000 (Java's
 * "modified UTF-8"): build a payload string from bytes that may hold a NUL
 * or invalid UTF-8 with convert_string_item().
 *
 * A VALUE_JSON (source.h) is a struct the source wrote as JsonConverter
 * would: its bytes are the payload, in the envelope with schema_json when
 * schemas_enable; the other converters refuse it (CONVERT_ERR_SHAPE).
 *
 * Returns 0; CONVERT_ERR_SHAPE when c cannot represent v (ByteArrayConverter
 * and a struct: no restart changes that); CONVERT_ERR_NOMEM on allocation
 * failure or when the result would pass CONVERT_MAX_BYTES. Called from the
 * main loop (reads the time zone). */
enum {
	CONVERT_OK = 0,
	CONVERT_ERR_NOMEM = -1,
	CONVERT_ERR_SHAPE = -2,
};

int convert_value(const struct converter *c, const struct record_value *v, char **out, size_t *len,
                  uint64_t *replaced);

/* convert_value without an allocation per record, for the produce path:
 * *out points at v's own bytes when they are what c writes (a well-formed
 * line with StringConverter, any line with ByteArrayConverter), else into
 * scratch, emptied first, which holds what c wrote (NULL for a null value).
 * *out is valid until scratch or v changes: the caller copies it (librdkafka
 * with RD_KAFKA_MSG_F_COPY). scratch keeps its allocation; its maximum should
 * be CONVERT_MAX_BYTES. Returns as convert_value. */
int convert_value_view(const struct converter *c, const struct record_value *v, struct buf *scratch,
                       const char **out, size_t *len, uint64_t *replaced);

/* Connect's JSON for a schema (JsonConverter.asJsonSchema), malloc'd (caller
 * frees), or NULL on allocation failure. */
char *convert_schema_json(const cJSON *schema);

/* Writes the JSON string literal for len bytes of s (quotes included) to
 * dst, as Jackson writes a Java String: \" \\ \b \f \n \r \t, other control
 * characters as \u00XX (upper-case hex), DEL and U+2028 as they are,
 * characters outside the BMP as an escaped surrogate pair (\uD83D\uDE00),
 * invalid UTF-8 replaced with U+FFFD as Java's UTF-8 decoder does. dst must
 * have room for convert_json_string_max(len) bytes. Returns bytes written;
 * adds the number of replaced sequences to *replaced. The one JSON string
 * escaper: struct payloads go through it too. */
size_t convert_json_string(char *dst, const char *s, size_t len, uint64_t *replaced);
size_t convert_json_string_max(size_t len);

/* A payload string item for len bytes of text (text[len] must be readable,
 * as sqlite3_column_text() gives it), holding what Java's decoder would make
 * of them: invalid UTF-8 replaced with U+FFFD (counted in *replaced), a NUL
 * byte kept as C0 80, which the converters write as \u0000 (JsonConverter)
 * or a NUL byte (StringConverter). Returns the item (caller owns it) or NULL
 * on allocation failure. */
cJSON *convert_string_item(const char *text, size_t len, uint64_t *replaced);

#endif
