/* offsets_kvalue: the offsets topic's records, the one codec of what skiff
 * writes there beside Connect's key: the store's writes (offsets_kafka.c) and
 * the exactly-once transaction's offset records (core/eos.c) encode
 * with it, the load (offsets_kafka.c) decodes with it.
 *
 * Headers: skiff.generation (the store generation that wrote the record),
 * skiff.device (the device that wrote it: offsets_fleet.h), skiff.store (the
 * store that wrote it; not on exactly-once's records) and skiff.offset (below),
 * in that order. A record without skiff.generation is Connect's (or a Connect
 * tool's).
 *
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "core/device.h"
#include "core/source.h"

#define OFFSETS_KVALUE_GEN_HEADER "skiff.generation"
#define OFFSETS_KVALUE_DEVICE_HEADER "skiff.device"
#define OFFSETS_KVALUE_STORE_HEADER "skiff.store"
#define OFFSETS_KVALUE_HEADER "skiff.offset"
/* Headers of one record: the four above. */
#define OFFSETS_KVALUE_HEADERS 4
/* Room for Connect's value of an offset (offsets_kvalue_connect). */
#define OFFSETS_KVALUE_MAX 128
/* Longest skiff.store read back (an id is 32 hex digits), plus one. */
#define OFFSETS_KVALUE_STORE_MAX 48

/* One record to write, as offsets_kvalue_encode makes it. Points into its
 * own buffers and into the strings given to encode: valid while they are,
 * and not to be copied as a struct. */
struct offsets_krecord {
	const char *value; /* the record's value (Connect's, or the whole); NULL: a tombstone */
	size_t vlen;
	struct record_header headers[OFFSETS_KVALUE_HEADERS];
	size_t nheaders;
	char gen[24];
	char connect[OFFSETS_KVALUE_MAX];
};

/* What a record read back says beside its key and value (offsets_kvalue_meta).
 * device and store point into the struct's own buffers. */
struct offsets_kmeta {
	bool skiff;         /* it has skiff.generation: skiff wrote it */
	uint64_t gen;       /* skiff.generation's number, 0: none */
	const char *device; /* skiff.device, NULL: none (or empty, or too long) */
	const char *store;  /* skiff.store, NULL: none (or empty, or too long) */
	char devbuf[DEVICE_NAME_MAX];
	char storebuf[OFFSETS_KVALUE_STORE_MAX];
};

/* Makes the record of the offset value value (a compact JSON offset value as
 * the store holds it; NULL: a tombstone) written as generation gen by device
 * and, when not NULL, the store store (exactly-once's records name none)
 * into r: Connect's value, the whole value in skiff.offset when they differ. */
void offsets_kvalue_encode(struct offsets_krecord *r, const char *value, uint64_t gen,
                           const char *device, const char *store);

/* The headers of a record read back: skiff.generation, skiff.device,
 * skiff.store and skiff.offset as found (empty or too long: as absent) into
 * out. */
void offsets_kvalue_meta(const struct record_header *h, size_t nh, struct offsets_kmeta *out);

/* Connect's value of full (a compact JSON offset value, as the store holds
 * it) into buf (len bytes): its length when it differs from full (then
 * full goes in the header skiff.offset), 0 when full is Connect's already or
 * does not fit (then the record's value is full, with no header). */
size_t offsets_kvalue_connect(const char *full, char *buf, size_t len);

/* Produces (copied) key -> r to topic. Returns librdkafka's error. */
rd_kafka_resp_err_t offsets_kvalue_produce(rd_kafka_t *rk, const char *topic, const char *key,
                                           const struct offsets_krecord *r);

/* The last header of each of the four names of m into h (pointing into m,
 * valid while m is); returns how many. */
size_t offsets_kvalue_headers_of(const rd_kafka_message_t *m,
                                 struct record_header h[OFFSETS_KVALUE_HEADERS]);

/* The offset value a record (value payload of len bytes, not a tombstone;
 * headers h) stands for: its skiff.offset header when that header's Connect
 * value is the record's value, else the record's value. A new string (the
 * caller frees it), or NULL: out of memory. */
char *offsets_kvalue_value(const void *payload, size_t len, const struct record_header *h,
                           size_t nh);

#endif
