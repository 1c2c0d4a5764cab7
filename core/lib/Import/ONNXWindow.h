//===- ONNXWindow.h - Window attributes of ONNX convolutions -----*- C++ -*-===//
//
// The window attributes of ONNX's 1-D and 2-D convolutions and pools
// (kernel, strides, dilations, pads, auto_pad), read and fitted to TOSA
// once (ONNXConvOps.cpp defines them) for the float converters and the
// integer ones (ONNXQuantOps.cpp: QLinearConv, ConvInteger).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_ONNXWINDOW_H
#define KILN_CORE_IMPORT_ONNXWINDOW_H

#include "ONNXConverter.h"

#include <array>

namespace kiln::onnx {

/// Attributes of a 1-D or 2-D windowed op, lifted to 2-D: a 1-D op gets
/// H = 1 (kernel 1, stride 1, dilation 1, no padding). Index 0 is H, 1 is W.
struct Window {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  std::array<int64_t, 2> padBegin{0, 0}, padEnd{0, 0};
  std::array<int64_t, 2> in{1, 1}, out{1, 1};
  /// Part of padEnd added by ceil_mode so the last window fits (pools).
  std::array<int64_t, 2> overhang{0, 0};

  int64_t extent(int d) const { return (kernel[d] - 1) * dilation[d] + 1; }
  /// TOSA's pad attribute: [top, bottom, left, right].
  mlir::DenseI64ArrayAttr tosaPad(mlir::OpBuilder &b) const {
    return b.getDenseI64ArrayAttr({padBegin[0], padEnd[0], padBegin[1], padEnd[1]});
  }
};

/// Fails unless `rank` is that of a 1-D or 2-D windowed op's input (3 or 4).
mlir::LogicalResult checkSpatialRank(NodeContext &ctx, int64_t rank);

/// Fails if kernel_shape is given and differs from the weight's spatial
/// dimensions `kernel`.
mlir::LogicalResult checkKernelShape(NodeContext &ctx, llvm::ArrayRef<int64_t> kernel);

/// Kernel (the weight's spatial dims or kernel_shape), strides and
/// dilations of a windowed op on the ONNX input `inShape`.
mlir::FailureOr<Window> readWindow(NodeContext &ctx, llvm::ArrayRef<int64_t> inShape,
                                   llvm::ArrayRef<int64_t> kernel);

/// Padding and output size of a convolution or pool (auto_pad NOTSET,
/// SAME_UPPER, SAME_LOWER, VALID), fitted to TOSA (WindowShape.h); with
/// `ceilMode` the output size rounds up (pools only).
mlir::LogicalResult forwardPadding(NodeContext &ctx, Window &w, bool ceilMode);

/// [N, C, W] -> [N, C, 1, W]; rank 4 unchanged.
mlir::Value lift2D(NodeContext &ctx, mlir::Value x);

/// The NCHW result of a lifted op back to the input's rank.
mlir::Value unlift(NodeContext &ctx, mlir::Value y, int64_t rank);

} // namespace kiln::onnx

#endif
