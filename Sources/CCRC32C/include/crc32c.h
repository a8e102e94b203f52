#ifndef KVSTORE_CRC32C_H
#define KVSTORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

// CRC-32C (Castagnoli), the checksum of KVStore's records, external-value chunks and catalog entries.
// `crc` is the running value: 0 to start, the result of the previous call to continue.
// Uses the SSE 4.2 instruction when the CPU has it, a table otherwise.
uint32_t kvstore_crc32c(uint32_t crc, const void *bytes, size_t count);

#endif
