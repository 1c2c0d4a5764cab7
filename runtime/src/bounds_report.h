// The record a --check-bounds executable exports as `__kiln_bounds_report`
// (core/lib/Codegen/BoundsChecks.cpp writes it, this runtime reads it after
// each wave). Internal to the runtime; the layout is the compiler's
// { i32, i32, i32, i32, i64, i64, ptr } on 64-bit targets.
#ifndef KILN_RUNTIME_BOUNDS_REPORT_H
#define KILN_RUNTIME_BOUNDS_REPORT_H

#include <stdint.h>

namespace kiln::runtime {

struct BoundsReport {
  uint32_t violated;     // 0, or 1 once a kernel claimed the record (atomic)
  uint32_t binding;      // the binding's index in its dispatch
  uint32_t is_store;     // 1 for a write, 0 for a read
  uint32_t access_bytes; // bytes the access covers
  int64_t offset;        // the access's first byte, from the binding's base
  uint64_t extent;       // the binding's bytes
  const char *label;     // "main_dispatch_4 (MaxPool #2)"
};

} // namespace kiln::runtime

#endif
