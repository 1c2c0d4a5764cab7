// Overflow-checked size arithmetic, in one place. Internal to the runtime.
//
// Every size the runtime reads from an artifact (element counts, byte sizes,
// offsets, lengths, workgroup counts, the arena) is untrusted: it is combined
// only through these helpers, which fail instead of wrapping around.
#ifndef KILN_RUNTIME_CHECKED_H
#define KILN_RUNTIME_CHECKED_H

#include <stddef.h>
#include <stdint.h>

namespace kiln::runtime {

/// Largest object this process can address: a buffer of more bytes cannot
/// be allocated or indexed with ptrdiff_t (C11 7.20.3), so sizes above it
/// are refused before anything is allocated.
constexpr uint64_t kMaxObjectBytes = static_cast<uint64_t>(PTRDIFF_MAX);

/// *out = a * b; false (and *out untouched) when the product overflows.
inline bool checkedMul(uint64_t a, uint64_t b, uint64_t *out) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return false;
  *out = r;
  return true;
}

/// *out = a + b; false (and *out untouched) when the sum overflows.
inline bool checkedAdd(uint64_t a, uint64_t b, uint64_t *out) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return false;
  *out = r;
  return true;
}

/// Whether [offset, offset + length) lies inside a buffer of `size` bytes
/// (without computing offset + length, which may overflow).
inline bool rangeInside(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

} // namespace kiln::runtime

#endif
