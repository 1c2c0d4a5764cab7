//===- ONNXQuantHelpers.h - Shared helpers of the quantized ONNX ops -----===//
//
// The TOSA and parameter helpers of ONNXQuantOps.cpp that the fused QDQ
// kernels of ONNXQuantFusedOps.cpp use too (defined in ONNXQuantOps.cpp).
// Storage: an int8 or uint8 tensor is an i8 value, uint8 held as q - 128.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ONNXConverter.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::onnx {

/// Kiln's fused QDQ Add, Mul, LeakyRelu, Sigmoid, GlobalAveragePool, Softmax,
/// AveragePool and Concat (ORT's contrib QLinear kernels;
/// ONNXQuantFusedOps.cpp).
void registerQuantFusedOps(ConverterTable &table);

namespace quant {

bool isQuantType(int32_t t);
/// The storage offset of `type`: 128 for uint8 (held as q - 128), else 0.
int32_t offsetOf(int32_t type);
using shapes::elementOf;
using shapes::shapeOf;
using shapes::tensorOf;
mlir::Type i8Type(NodeContext &ctx);
mlir::Type i32Type(NodeContext &ctx);
mlir::Type i1Type(NodeContext &ctx);
/// The broadcast shape of two equal-rank operands.
std::vector<int64_t> joint(mlir::Value a, mlir::Value b);

/// Elementwise binary TOSA op, operands brought to one rank.
template <typename Op> mlir::Value binary(NodeContext &ctx, mlir::Value a, mlir::Value b) {
  int64_t rank = std::max(shapeOf(a).size(), shapeOf(b).size());
  a = ctx.broadcastRank(a, rank);
  b = ctx.broadcastRank(b, rank);
  return ctx.create<Op>(tensorOf(joint(a, b), elementOf(a)), a, b);
}

/// Elementwise comparison (an i1 result), operands brought to one rank.
template <typename Op> mlir::Value compare(NodeContext &ctx, mlir::Value a, mlir::Value b) {
  int64_t rank = std::max(shapeOf(a).size(), shapeOf(b).size());
  a = ctx.broadcastRank(a, rank);
  b = ctx.broadcastRank(b, rank);
  return ctx.create<Op>(tensorOf(joint(a, b), i1Type(ctx)), a, b);
}

mlir::Value mul(NodeContext &ctx, mlir::Value a, mlir::Value b);
mlir::Value select(NodeContext &ctx, mlir::Value c, mlir::Value a, mlir::Value b);
mlir::Value cast(NodeContext &ctx, mlir::Value v, mlir::Type element);
/// An i32 constant of `rank` holding `values` along `axis`.
mlir::Value channelI32(NodeContext &ctx, llvm::ArrayRef<int32_t> values, int64_t rank,
                       int64_t axis);
mlir::Value constI8(NodeContext &ctx, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int8_t> values);
/// nearbyint of the finite f32 `p` (halves to even).
mlir::Value roundHalfEven(NodeContext &ctx, mlir::Value p);
/// `v` through a clamp that keeps LLVM from contracting across it.
mlir::Value ordered(NodeContext &ctx, mlir::Value v);
/// A positive scale as the exact quotient rounding needs it: its reciprocal
/// and its split into a 13-bit head and an 11-bit tail (values broadcast
/// against the data).
struct ScaleParts {
  mlir::Value scale, reciprocal, head, tail;
};
/// The parts of a scale computed at run time (Veltkamp's split).
ScaleParts runtimeScaleParts(NodeContext &ctx, mlir::Value s);
/// nearbyint(fl(x / s)) (halves to even) for f32 `x` and positive `s`, as an
/// integral f32 in [-512, 513].
mlir::Value roundQuotient(NodeContext &ctx, mlir::Value x, const ScaleParts &s);
/// Requantizes the i32 `acc` (channels along its last dimension) as
/// MlasRequantizeOutput: nearbyint(float(acc) * scale) + zp (storage domain),
/// saturated.
mlir::Value requantize(NodeContext &ctx, mlir::Value acc, llvm::ArrayRef<float> scales, int32_t zp);

/// Refuses a type other than int8 / uint8, naming `what`.
mlir::LogicalResult checkQuantType(NodeContext &ctx, int32_t type, const std::string &what);
/// The zero point input `zi` (int8/uint8, constant) or 0 of `defaultType`:
/// its type and `count` values in the storage domain.
mlir::FailureOr<std::pair<int32_t, std::vector<int32_t>>>
constantZeroPoints(NodeContext &ctx, int zi, int32_t defaultType, size_t count);
/// A scale input `si` known at import: one positive finite value, or (when
/// `channels` > 0) one per channel.
mlir::FailureOr<std::vector<float>> constantScales(NodeContext &ctx, int si, int64_t channels);

} // namespace quant
} // namespace kiln::onnx
