// HAL device local-sync: every workgroup inline, in order.
#include "device.h"

#include <string.h>

using namespace kiln::runtime;

static kiln_status_t localSyncExecuteWave(void *, const kiln_dispatch_t *dispatches, size_t count,
                                          kiln_trace_t *trace) {
  for (size_t i = 0; i < count; ++i) {
    const kiln_dispatch_t &d = dispatches[i];
    uint32_t total = workgroupTotal(d);
    uint64_t dispatchStart = trace ? nowNs() : 0;
    for (uint32_t w = 0; w < total; ++w) {
      uint64_t start = trace ? nowNs() : 0;
      runWorkgroup(d, w);
      if (trace)
        recordEvent(trace, d.command, w, 0, start, nowNs());
    }
    if (trace)
      recordEvent(trace, d.command, UINT32_MAX, 0, dispatchStart, nowNs());
  }
  return kiln_status_ok();
}

extern "C" kiln_status_t kiln_device_create_local_sync(kiln_device_t *out_device) {
  if (!out_device)
    return kiln_status_ok();
  memset(out_device, 0, sizeof(*out_device));
  out_device->name = "local-sync";
  out_device->execute_wave = localSyncExecuteWave;
  return kiln_status_ok();
}

extern "C" void kiln_device_release(kiln_device_t *device) {
  if (device && device->release)
    device->release(device->self);
  if (device) {
    device->self = nullptr;
    device->release = nullptr;
  }
}
