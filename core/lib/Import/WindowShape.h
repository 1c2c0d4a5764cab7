//===- WindowShape.h - Window arithmetic of convolutions and pools -*- C++ -*-===//
//
// The one place where an importer's windowed op (TFLite CONV_2D,
// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D; ONNX Conv, MaxPool,
// AveragePool) becomes the attributes TOSA takes. Plain integers, no MLIR.
//
// A model gives, per spatial axis, the input size, the kernel, stride,
// dilation and padding; its output size rounds down (or up, in ONNX's
// ceil_mode). TOSA 0.60 instead requires the windows to tile the padded
// input exactly (CONV2D, AVG_POOL2D, MAX_POOL2D:
//   ERROR_IF(OH != idiv_check(IH - 1 + pad_top + pad_bottom
//                             - (KH - 1) * dilation_y, stride_y) + 1)
// with idiv_check failing on a remainder) and every pad to be >= 0. So the
// leftover input past the last window is dropped: first from the end pad,
// then, when that is not enough, from the input itself (a slice the caller
// makes), never as a negative pad (which the kernels read out of bounds).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_WINDOWSHAPE_H
#define KILN_CORE_IMPORT_WINDOWSHAPE_H

#include <cstdint>

namespace kiln {

/// One spatial axis of a windowed op as the model states it (elements).
struct WindowAxis {
  int64_t in = 1;
  int64_t kernel = 1, stride = 1, dilation = 1;
  /// The model's padding before and after the input (>= 0).
  int64_t padBegin = 0, padEnd = 0;

  /// Elements one window spans: (kernel - 1) * dilation + 1.
  int64_t extent() const { return (kernel - 1) * dilation + 1; }
  /// in + padBegin + padEnd - extent: negative when no window fits.
  int64_t span() const { return in + padBegin + padEnd - extent(); }
};

/// How the output size rounds (in + padBegin + padEnd - extent) / stride.
enum class WindowRounding {
  /// floor(...) + 1: TFLite, ONNX's default (ceil_mode = 0).
  Floor,
  /// ceil(...) + 1, less one when the last window would start past the
  /// input and its begin padding (PyTorch's rule, which ONNX Runtime and
  /// the ONNX reference implementation follow for ceil_mode = 1).
  Ceil,
};

/// The axis as TOSA takes it: the windows tile
/// [in - crop] padded by padBegin and padEnd exactly:
///   (in - crop) + padBegin + padEnd - extent == (out - 1) * stride.
struct TosaWindowAxis {
  int64_t out = 0;
  /// TOSA pads, both >= 0; padEnd includes `overhang`.
  int64_t padBegin = 0, padEnd = 0;
  /// Elements to slice off the input's end first (no window reads them).
  int64_t crop = 0;
  /// End padding that ceil rounding added beyond the model's (pools that
  /// count padding, count_include_pad = 1, must not count it).
  int64_t overhang = 0;
};

/// Fits `axis` to TOSA's exact tiling. Requires axis.span() >= 0 (callers
/// report "no output" first), stride >= 1, dilation >= 1, pads >= 0.
TosaWindowAxis fitWindow(const WindowAxis &axis, WindowRounding rounding);

/// True if `t` tiles `axis`'s input exactly with pads >= 0 (the TOSA 0.60
/// condition above); for tests and assertions.
bool tilesExactly(const WindowAxis &axis, const TosaWindowAxis &t);

} // namespace kiln

#endif
