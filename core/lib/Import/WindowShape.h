//===- WindowShape.h - Window arithmetic of convolutions and pools -*- C++ -*-===//
//
// The one place where an importer's windowed op (TFLite CONV_2D,
// DEPTHWISE_CONV_2D, TRANSPOSE_CONV, AVERAGE_POOL_2D, MAX_POOL_2D; ONNX
// Conv, ConvTranspose, MaxPool, AveragePool) becomes the attributes TOSA
// takes. Plain integers, no MLIR.
//
// A model gives, per spatial axis, the input size, the kernel, stride,
// dilation and padding; its output size rounds down (or up, in ONNX's
// ceil_mode). TOSA 0.60 asks the windows to tile the padded input exactly
// (CONV2D, AVG_POOL2D, MAX_POOL2D:
//   ERROR_IF(OH != idiv_check(IH - 1 + pad_top + pad_bottom
//                             - (KH - 1) * dilation_y, stride_y) + 1))
// and every pad to be >= 0. Input past the last window leaves the end
// padding first; what the end padding cannot absorb stays in the input,
// unread, with an end pad of 0 (Kiln's one relaxation of idiv_check, which
// its lowerings and the contract gate allow: slicing it off would cost a
// copy dispatch before every such convolution). It never becomes a
// negative pad, which the kernels read out of bounds.
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

/// The axis as TOSA takes it:
///   in + padBegin + padEnd - extent == (out - 1) * stride + remainder,
/// 0 <= remainder < stride, remainder > 0 only with padEnd == 0.
struct TosaWindowAxis {
  int64_t out = 0;
  /// TOSA pads, both >= 0; padEnd includes `overhang`.
  int64_t padBegin = 0, padEnd = 0;
  /// Input elements past the last window (unread; padEnd is 0 then).
  int64_t remainder = 0;
  /// End padding that ceil rounding added beyond the model's (pools that
  /// count padding, count_include_pad = 1, must not count it).
  int64_t overhang = 0;
};

/// Fits `axis` to TOSA's exact tiling. Requires axis.span() >= 0 (callers
/// report "no output" first), stride >= 1, dilation >= 1, pads >= 0.
TosaWindowAxis fitWindow(const WindowAxis &axis, WindowRounding rounding);

/// True if `t` holds for `axis` as described above (pads >= 0, the output
/// size of the floor formula, a remainder only without end padding) and at
/// least one window reads the input; the contract gate checks the same.
bool fitsWindows(const WindowAxis &axis, const TosaWindowAxis &t);

/// One spatial axis of a transposed convolution (ONNX ConvTranspose, TFLite
/// TRANSPOSE_CONV), elements: the model scatters input element i to outputs
/// i * stride - padBegin + k for 0 <= k < extent and keeps outputs 0 .. out-1
/// (ONNX: out = stride * (in - 1) + output_padding + extent - pads; TFLite:
/// out is output_shape, padBegin CONV_2D's padding for it).
struct TransposeWindowAxis {
  int64_t in = 1, extent = 1, stride = 1;
  int64_t padBegin = 0;
  int64_t out = 1;
};

/// The axis as TOSA 0.60's TRANSPOSE_CONV2D takes it: input element i lands
/// at i * stride + outPadBegin + k, and
///   ERROR_IF(OH != (IH - 1) * stride_y + out_pad_top + out_pad_bottom + KH),
/// so outPadBegin = -padBegin and outPadEnd = out - ((in - 1) * stride +
/// extent) + padBegin. A negative out_pad crops the output (it must stay
/// above -extent), a positive one extends it with outputs no input reaches
/// (bias only).
struct TosaTransposeAxis {
  int64_t outPadBegin = 0, outPadEnd = 0;
};

/// Fits `axis` to TOSA's transpose_conv2d (no preconditions: the contract
/// gate rejects out_pad <= -extent).
TosaTransposeAxis fitTransposeWindow(const TransposeWindowAxis &axis);

} // namespace kiln

#endif
