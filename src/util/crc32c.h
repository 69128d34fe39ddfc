/* crc32c: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of iSCSI, ext4 metadata and Kafka's record batches. Software,
 * table-driven; plenty for files of a few MiB. */
#ifndef SKIFF_CRC32C_H
#define SKIFF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues the CRC-32C crc (0 to start) over len bytes of buf and returns
 * it. Chaining works like zlib's crc32: crc32c(crc32c(0, a), b) equals the CRC
 * of a followed by b. crc32c(0, "123456789", 9) == 0xE3069283. Pure function,
 * callable from any context. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
