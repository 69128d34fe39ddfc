/* offsets_kvalue: an offset's value as the offsets topic's record holds it.
 * The record's value is Connect's, byte for byte: only the members Connect's
 * connector defines. The file source's value {"position":N,"dev":..,"ino":..,
 * "fp":..,"fplen":..[,"born":..][,"after":..][,"finished":1]} is
 * FileStreamSource's {"position":N} in the value, and the whole of it in the
 * record's header skiff.offset (the identity that keeps rotation and inode
 * reuse safe). The SQLite source's timestamp value {"timestamp_nanos":..,
 * "timestamp":..,"rowid_seen":..} is the JDBC connector's without the last
 * member in the value, whole in the header. Other values (the other JDBC
 * shapes, journald's) are written whole, with no header. Reading back, the header counts only when
 * its Connect value is the record's value: a value written by Connect, or changed by a Connect tool
 * (KIP-875's alter offsets writes no skiff header), stands alone: the file source then resumes at
 * that position of the file at the path, as with an imported Connect offset. Never logs. */
#ifndef SKIFF_OFFSETS_KVALUE_H
#define SKIFF_OFFSETS_KVALUE_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

#define OFFSETS_KVALUE_HEADER "skiff.offset"
/* Room for Connect's value of an offset (offsets_kvalue_connect). */
#define OFFSETS_KVALUE_MAX 128

/* Connect's value of full (a compact JSON offset value, as the store holds
 * it) into buf (len bytes): its length when it differs from full (then
 * full goes in the header skiff.offset), 0 when full is Connect's already or
 * does not fit (then the record's value is full, with no header). */
size_t offsets_kvalue_connect(const char *full, char *buf, size_t len);

/* Produces (copied) key -> Connect's value of value (NULL: a tombstone)
 * to topic with the headers h and, when the value was cut, skiff.offset.
 * Takes h in every case. Returns librdkafka's error. */
rd_kafka_resp_err_t offsets_kvalue_produce(rd_kafka_t *rk, const char *topic, const char *key,
                                           const char *value, rd_kafka_headers_t *h);

/* The offset value the record m (not a tombstone) stands for: its
 * skiff.offset header when that header's Connect value is m's value, else
 * m's value. A new string (the caller frees it), or NULL: out of memory. */
char *offsets_kvalue_read(const rd_kafka_message_t *m);

#endif
