// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final XOR
// 0xFFFFFFFF: the checksum zlib's crc32() computes). Internal to the runtime.
#ifndef KILN_RUNTIME_CRC32_H
#define KILN_RUNTIME_CRC32_H

#include <stddef.h>
#include <stdint.h>

namespace kiln::runtime {

/// CRC-32 of data[0, size).
uint32_t crc32(const uint8_t *data, size_t size);

} // namespace kiln::runtime

#endif
