// CRC-32C for KVStore: the SSE 4.2 `crc32` instruction, eight bytes at a time, where the CPU has it (selected once
// at run time), and a byte-wise table elsewhere. Swift cannot select the instruction itself without unsafe compiler
// flags, which packages may not use; a function-level target attribute needs none.
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

// The reflected Castagnoli polynomial.
#define KVSTORE_CRC32C_POLY 0x82F63B78u

static uint32_t table[256];

static void build_table(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (KVSTORE_CRC32C_POLY & (0u - (crc & 1u)));
        table[byte] = crc;
    }
}

static uint32_t crc32c_table(uint32_t crc, const unsigned char *bytes, size_t count) {
    crc = ~crc;
    while (count--) crc = table[(crc ^ *bytes++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const unsigned char *bytes,
                                                                 size_t count) {
    uint64_t value = ~crc & 0xFFFFFFFFu;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        value = __builtin_ia32_crc32di(value, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t rest = (uint32_t)value;
    // The last bytes four, two and one at a time: the instruction reads its operand's bytes in memory order.
    if (count >= 4) {
        uint32_t word;
        memcpy(&word, bytes, 4);
        rest = __builtin_ia32_crc32si(rest, word);
        bytes += 4;
        count -= 4;
    }
    if (count >= 2) {
        uint16_t half;
        memcpy(&half, bytes, 2);
        rest = __builtin_ia32_crc32hi(rest, half);
        bytes += 2;
        count -= 2;
    }
    if (count) rest = __builtin_ia32_crc32qi(rest, *bytes);
    return ~rest;
}
#endif

typedef uint32_t (*crc32c_function)(uint32_t, const unsigned char *, size_t);

// Set once, with release order, after the table is built; read with acquire order.
static crc32c_function selected;
static pthread_once_t selection = PTHREAD_ONCE_INIT;

static void select_function(void) {
    build_table();
    crc32c_function function = crc32c_table;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) function = crc32c_sse42;
#endif
    __atomic_store_n(&selected, function, __ATOMIC_RELEASE);
}

uint32_t kvstore_crc32c(uint32_t crc, const void *bytes, size_t count) {
    // A scan checks every record: after the first call, one load instead of pthread_once's call.
    crc32c_function function = __atomic_load_n(&selected, __ATOMIC_ACQUIRE);
    if (!function) {
        pthread_once(&selection, select_function);
        function = __atomic_load_n(&selected, __ATOMIC_ACQUIRE);
    }
    return function(crc, (const unsigned char *)bytes, count);
}
