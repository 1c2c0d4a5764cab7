//===- TFLiteWindow.h - SAME/VALID windows of TFLite conv and pool ops -*- C++ -*-===//
//
// Padding and window attributes shared by the float converters
// (TFLiteConvOps.cpp) and the int8 ones (TFLiteQuantizedOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEWINDOW_H
#define KILN_CORE_IMPORT_TFLITEWINDOW_H

#include "TFLiteConverter.h"

namespace kiln::tfl {

/// Explicit padding of one spatial dimension for TFLite's SAME/VALID rules
/// (tensorflow/lite/kernels/padding.h): SAME makes out = ceil(in / stride)
/// and splits the total padding with the smaller half first.
inline void computePadding(schema::Padding padding, int64_t in, int64_t kernel,
                    int64_t stride, int64_t dilation, int64_t &before,
                    int64_t &after) {
  before = after = 0;
  if (padding != schema::Padding::SAME)
    return;
  int64_t effective = (kernel - 1) * dilation + 1;
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((out - 1) * stride + effective - in, 0);
  before = total / 2;
  after = total - before;
}

/// Fails unless a KH x KW window (dilated by dh, dw) fits the NHWC input:
/// with VALID padding (no padding) an input smaller than the window has no
/// output (TFLite computes a zero-size output; Kiln refuses it), e.g. when
/// --fix-shape makes a spatial dimension too small.
inline mlir::LogicalResult checkWindowFits(OpContext &ctx, schema::Padding padding,
                              llvm::ArrayRef<int64_t> inShape, int64_t kh,
                              int64_t kw, int64_t dh, int64_t dw) {
  if (padding == schema::Padding::SAME)
    return mlir::success();
  for (int d = 1; d <= 2; ++d) {
    int64_t k = d == 1 ? kh : kw, dil = d == 1 ? dh : dw;
    int64_t extent = (k - 1) * dil + 1;
    if (inShape[d] < extent)
      return ctx.fail(llvm::Twine("the input ") + (d == 1 ? "height " : "width ") +
                      llvm::Twine(inShape[d]) + " is smaller than the " +
                      llvm::Twine(kh) + "x" + llvm::Twine(kw) + " window (extent " +
                      llvm::Twine(extent) + " with dilation " + llvm::Twine(dil) +
                      ") under VALID padding: there is no output");
  }
  return mlir::success();
}

/// TOSA pad/stride/dilation attributes of a 2-D windowed op on an NHWC
/// input with a KH x KW window.
struct Window {
  mlir::DenseI64ArrayAttr pad, stride, dilation;
};

/// Reads strides, dilations and SAME/VALID padding from Conv2DOptions or
/// DepthwiseConv2DOptions.
template <typename Options>
mlir::FailureOr<Window> windowOf(OpContext &ctx, const Options &opts,
                           llvm::ArrayRef<int64_t> inShape, int64_t kh,
                           int64_t kw) {
  int64_t sh = opts.stride_h(), sw = opts.stride_w();
  int64_t dh = opts.dilation_h_factor(), dw = opts.dilation_w_factor();
  if (sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    return ctx.fail("strides and dilations must be positive");
  if (failed(checkWindowFits(ctx, opts.padding(), inShape, kh, kw, dh, dw)))
    return mlir::failure();
  int64_t top, bottom, left, right;
  computePadding(opts.padding(), inShape[1], kh, sh, dh, top, bottom);
  computePadding(opts.padding(), inShape[2], kw, sw, dw, left, right);
  auto b = ctx.builder();
  return Window{b.getDenseI64ArrayAttr({top, bottom, left, right}),
                b.getDenseI64ArrayAttr({sh, sw}),
                b.getDenseI64ArrayAttr({dh, dw})};
}

} // namespace kiln::tfl

#endif
