/* convert: Kafka Connect's converters, byte-compatible with what Connect
 * writes: JsonConverter (schemas.enable true: {"schema":…,"payload":…};
 * false: the payload alone), StringConverter and ByteArrayConverter.
 * Pure functions; called from the main loop. */
#ifndef SKIFF_CONVERT_H
#define SKIFF_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record_value;

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
 * RD_KAFKA_MSG_F_FREE), or NULL for a null value. *replaced counts invalid
 * UTF-8 sequences that JsonConverter replaced with U+FFFD, as Java's decoder
 * does for Connect (String and ByteArray converters pass bytes unchanged).
 * Returns -1 when c cannot represent v (ByteArrayConverter and a struct) or
 * on allocation failure. */
int convert_value(const struct converter *c, const struct record_value *v, char **out,
		  size_t *len, uint64_t *replaced);

/* Appends the JSON string literal for len bytes of s (quotes included) to
 * dst, as Jackson escapes it: \" \\ \b \f \n \r \t, other control characters
 * as \u00XX (upper-case hex), invalid UTF-8 as U+FFFD. dst must have room for
 * convert_json_string_max(len) bytes. Returns bytes written; adds the number
 * of replaced sequences to *replaced. */
size_t convert_json_string(char *dst, const char *s, size_t len, uint64_t *replaced);
size_t convert_json_string_max(size_t len);

#endif
