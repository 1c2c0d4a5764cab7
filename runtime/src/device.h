// Shared helpers of the HAL devices. Internal to the runtime.
#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "kiln/runtime.h"

#include <stdint.h>
#include <time.h>

namespace kiln::runtime {

inline uint64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

/// Appends an event to `trace` (thread-safe). `count` only ever counts
/// stored events (it never passes `capacity`); an event past capacity is
/// counted in `dropped` instead, so a reader may loop to `count`.
inline void recordEvent(kiln_trace_t *trace, uint32_t command, uint32_t workgroup,
                        uint32_t thread, uint64_t start, uint64_t end) {
  size_t slot = __atomic_load_n(&trace->count, __ATOMIC_RELAXED);
  do {
    if (slot >= trace->capacity) {
      __atomic_fetch_add(&trace->dropped, 1, __ATOMIC_RELAXED);
      return;
    }
  } while (!__atomic_compare_exchange_n(&trace->count, &slot, slot + 1, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
  trace->events[slot] = {command, workgroup, thread, start, end};
}

/// Runs workgroup `linear` (x fastest) of `d`.
inline void runWorkgroup(const kiln_dispatch_t &d, uint32_t linear) {
  uint32_t id[3];
  id[0] = linear % d.workgroup_count[0];
  uint32_t rest = linear / d.workgroup_count[0];
  id[1] = rest % d.workgroup_count[1];
  id[2] = rest / d.workgroup_count[1];
  d.fn(d.bindings, id);
}

inline uint32_t workgroupTotal(const kiln_dispatch_t &d) {
  return d.workgroup_count[0] * d.workgroup_count[1] * d.workgroup_count[2];
}

} // namespace kiln::runtime

#endif
