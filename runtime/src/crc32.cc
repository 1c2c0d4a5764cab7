// CRC-32, table driven (one 1 KiB table computed at compile time).
#include "crc32.h"

namespace kiln::runtime {

namespace {
/// The table for the reflected polynomial 0xEDB88320, built by the compiler
/// (a constant: no guarded static, so the runtime needs no C++ runtime
/// library, and no first-use race).
struct Table {
  uint32_t entries[256] = {};
  constexpr Table() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      entries[i] = c;
    }
  }
};
constexpr Table kTable;
} // namespace

static const uint32_t *table() { return kTable.entries; }

uint32_t crc32(const uint8_t *data, size_t size) {
  const uint32_t *t = table();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    c = t[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

} // namespace kiln::runtime
