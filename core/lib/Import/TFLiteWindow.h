//===- TFLiteWindow.h - SAME/VALID windows of TFLite conv and pool ops -*- C++ -*-===//
//
// Padding and window attributes shared by the float converters
// (TFLiteConvOps.cpp) and the int8 ones (TFLiteQuantizedOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEWINDOW_H
#define KILN_CORE_IMPORT_TFLITEWINDOW_H

#include "TFLiteConverter.h"
#include "WindowShape.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

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

/// Explicit TOSA padding of a TFLite window on an NHWC input, fitted by
/// fitWindow (WindowShape.h): the input rows and columns past the last
/// window leave the end padding; the rest stays unread.
struct FittedPadding {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

/// TFLite's SAME/VALID padding of a KH x KW window (strides sh, sw;
/// dilations dh, dw) on the NHWC `input`, fitted to TOSA (a 1x1 stride-2
/// SAME convolution on an even size keeps its last row unread). Fails
/// (naming the dimension) when no window fits.
inline mlir::FailureOr<FittedPadding> fitPadding(OpContext &ctx, schema::Padding padding,
                                                 mlir::Value &input, int64_t kh, int64_t kw,
                                                 int64_t sh, int64_t sw, int64_t dh,
                                                 int64_t dw) {
  auto shape = input.getType().cast<mlir::RankedTensorType>().getShape();
  if (shape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  if (failed(checkWindowFits(ctx, padding, shape, kh, kw, dh, dw)))
    return mlir::failure();
  WindowAxis axes[2] = {{shape[1], kh, sh, dh, 0, 0}, {shape[2], kw, sw, dw, 0, 0}};
  TosaWindowAxis fitted[2];
  for (int d = 0; d < 2; ++d) {
    WindowAxis &a = axes[d];
    computePadding(padding, a.in, a.kernel, a.stride, a.dilation, a.padBegin, a.padEnd);
    fitted[d] = fitWindow(a, WindowRounding::Floor);
  }
  return FittedPadding{fitted[0].padBegin, fitted[0].padEnd, fitted[1].padBegin,
                       fitted[1].padEnd};
}

/// TOSA pad/stride/dilation attributes of a 2-D windowed op on an NHWC
/// input with a KH x KW window.
struct Window {
  mlir::DenseI64ArrayAttr pad, stride, dilation;
};

/// Reads strides, dilations and SAME/VALID padding from Conv2DOptions or
/// DepthwiseConv2DOptions and fits them to TOSA (fitPadding; `input` may
/// become a slice of itself).
template <typename Options>
mlir::FailureOr<Window> windowOf(OpContext &ctx, const Options &opts, mlir::Value &input,
                                 int64_t kh, int64_t kw) {
  int64_t sh = opts.stride_h(), sw = opts.stride_w();
  int64_t dh = opts.dilation_h_factor(), dw = opts.dilation_w_factor();
  if (sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    return ctx.fail("strides and dilations must be positive");
  auto pad = fitPadding(ctx, opts.padding(), input, kh, kw, sh, sw, dh, dw);
  if (failed(pad))
    return mlir::failure();
  auto b = ctx.builder();
  return Window{b.getDenseI64ArrayAttr({pad->top, pad->bottom, pad->left, pad->right}),
                b.getDenseI64ArrayAttr({sh, sw}),
                b.getDenseI64ArrayAttr({dh, dw})};
}

} // namespace kiln::tfl

#endif
