/* The checksums and hashes every layer uses. CRC-32 (IEEE 802.3, reflected,
 * as zlib computes it), nibble-table form: 64 bytes of table instead of 1 KiB
 * keeps the core small. */
#include "cn.h"

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
    0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
    0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu};

uint32_t cn_crc32(uint32_t crc, const void *data, uint32_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
        crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
    }
    return ~crc;
}

/* A directory entry's name hash (FNV-1a folded to 24 bits): the tree key of
 * the entry, computed by the directory code and by replay. */
uint32_t cn_name_hash(const char *name, uint32_t len)
{
    uint32_t h = 2166136261u, i; /* FNV-1a, folded to 24 bits */
    for (i = 0; i < len; i++) {
        h ^= (uint8_t)name[i];
        h *= 16777619u;
    }
    return (h ^ (h >> 24)) & 0xFFFFFFu;
}
