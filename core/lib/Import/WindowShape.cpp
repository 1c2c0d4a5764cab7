//===- WindowShape.cpp - Window arithmetic of convolutions and pools ------===//
#include "WindowShape.h"

#include <algorithm>

namespace kiln {

TosaWindowAxis fitWindow(const WindowAxis &axis, WindowRounding rounding) {
  const int64_t span = axis.span();
  TosaWindowAxis t;
  t.padBegin = axis.padBegin;
  t.padEnd = axis.padEnd;
  int64_t steps = span / axis.stride;
  if (rounding == WindowRounding::Ceil) {
    steps = (span + axis.stride - 1) / axis.stride;
    // The last window starts inside the input or its begin padding.
    if (steps > 0 && steps * axis.stride >= axis.in + axis.padBegin)
      --steps;
  }
  t.out = steps + 1;
  // Elements past the last window (< 0) or missing for it (> 0).
  const int64_t overhang = steps * axis.stride - span;
  if (overhang >= 0) {
    t.padEnd += overhang;
    t.overhang = overhang;
    return t;
  }
  const int64_t unread = -overhang;
  const int64_t fromPad = std::min(unread, t.padEnd);
  t.padEnd -= fromPad;
  t.remainder = unread - fromPad;
  return t;
}

bool fitsWindows(const WindowAxis &axis, const TosaWindowAxis &t) {
  const int64_t span = axis.in + t.padBegin + t.padEnd - axis.extent();
  // Some window overlaps the input: the first one ending inside it (k0)
  // exists and starts before the input's end.
  const int64_t k0 =
      t.padBegin < axis.extent()
          ? 0
          : (t.padBegin - axis.extent()) / axis.stride + 1;
  const bool readsInput = k0 < t.out && k0 * axis.stride - t.padBegin < axis.in;
  return t.padBegin >= 0 && t.padEnd >= 0 && t.out >= 1 && span >= 0 && readsInput &&
         span == (t.out - 1) * axis.stride + t.remainder && t.remainder >= 0 &&
         t.remainder < axis.stride && (t.remainder == 0 || t.padEnd == 0);
}

TosaTransposeAxis fitTransposeWindow(const TransposeWindowAxis &axis) {
  TosaTransposeAxis t;
  t.outPadBegin = -axis.padBegin;
  t.outPadEnd = axis.out - ((axis.in - 1) * axis.stride + axis.extent) + axis.padBegin;
  return t;
}

} // namespace kiln
