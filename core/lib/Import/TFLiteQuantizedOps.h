//===- TFLiteQuantizedOps.h - Builders of the int8 TFLite converters -*- C++ -*-===//
//
// What the int8 converters share: the quantization of an operator's
// operands, tosa.rescale with TFLite's multipliers, clamps, exact lookup
// tables, and the folding of a product's input zero point into its bias.
// The converters themselves are grouped by family, as the float ones are
// (TFLiteConverter.h):
//   TFLiteQuantizedConvOps.cpp        CONV_2D DEPTHWISE_CONV_2D
//                                     FULLY_CONNECTED BATCH_MATMUL pools
//                                     TRANSPOSE_CONV
//   TFLiteQuantizedElementwiseOps.cpp unary tables (ABS RSQRT ...), ADD
//                                     SUB MUL SQUARED_DIFFERENCE MAXIMUM
//                                     MINIMUM PRELU, the comparisons,
//                                     LEAKY_RELU HARD_SWISH QUANTIZE
//                                     DEQUANTIZE
//   TFLiteQuantizedShapeOps.cpp       PAD PADV2 CONCATENATION PACK RESIZE_BILINEAR
//   TFLiteQuantizedReductionOps.cpp   MEAN SUM REDUCE_MAX REDUCE_MIN SOFTMAX
//   TFLiteSvdfOps.cpp                 SVDF (int16 or int8 state)
//   TFLiteQuantizedMicroOps.cpp       ADD_N CUMSUM CAST FILL ZEROS_LIKE
//                                     EMBEDDING_LOOKUP ELU (TFLite Micro's
//                                     int8 arithmetic)
// TFLite's fixed-point arithmetic itself (no MLIR) is in TFLiteQuant.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEQUANTIZEDOPS_H
#define KILN_CORE_IMPORT_TFLITEQUANTIZEDOPS_H

#include "TFLiteConverter.h"

#include <functional>
#include <optional>
#include <vector>

namespace kiln::tfl {

// Each family registers its int8 converters (registerQuantizedOps, in
// TFLiteQuantizedOps.cpp, calls them all).
void registerQuantizedConvOps(ConverterTable &table);
void registerQuantizedElementwiseOps(ConverterTable &table);
void registerQuantizedShapeOps(ConverterTable &table);
void registerQuantizedReductionOps(ConverterTable &table);
/// Integer SVDF (TFLiteSvdfOps.cpp, beside the float one).
void registerQuantizedSvdfOps(ConverterTable &table);
void registerQuantizedMicroOps(ConverterTable &table);

namespace quant {

using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Value;
namespace tosa = mlir::tosa;

/// i8 and i32 (int8 tensors and their accumulators).
mlir::Type i8Type(OpContext &ctx);
mlir::Type i32Type(OpContext &ctx);

/// tensor<shape x element>.
mlir::RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, mlir::Type element);

/// The static shape of the ranked tensor `v`.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

/// The quantization of input `i`, or a failure naming it.
FailureOr<const TensorQuant *> inQuant(OpContext &ctx, int i);

/// The quantization of output 0, or a failure saying it has none.
FailureOr<const TensorQuant *> outQuant(OpContext &ctx);

/// tosa.rescale of `value` (i8 or i32) to `element` (i8 or i32): subtracts
/// `inZp`, multiplies by each real scale as TFLite does (quantizeMultiplier,
/// MultiplyByQuantizedMultiplier's rounding), adds `outZp` and saturates.
/// Several scales apply per channel along the last dimension.
FailureOr<Value> rescale(OpContext &ctx, Value value, mlir::Type element, int32_t inZp,
                         int32_t outZp, llvm::ArrayRef<double> scales);

/// tosa.clamp of an integer tensor to [lo, hi].
Value clampInt(OpContext &ctx, Value value, int64_t lo, int64_t hi);

/// The fused activation `act` on an int8 result: a clamp on the quantized
/// bounds (none when they span the whole int8 range).
FailureOr<Value> fusedActivation(OpContext &ctx, Value value, schema::ActivationFunctionType act,
                                 const TensorQuant &out);

/// An i8 tosa.const of `shape` holding `values`.
Value constI8(OpContext &ctx, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int8_t> values);

/// A 256-entry tosa.table applying `f` (an int8 value -> its int8 result,
/// TFLite's arithmetic) to every element of the i8 `value`.
Value lookupTable(OpContext &ctx, Value value, const std::function<int32_t(int32_t)> &f);

/// Bias input `i` (int32) or zeros of length `n`.
FailureOr<Value> biasOrZeros(OpContext &ctx, int i, int64_t n);

/// Real output multipliers of a product op: input scale x weight scale
/// (per channel) / output scale. TFLite computes int8 convolutions' in
/// double (PopulateConvolutionQuantizationParams) but FULLY_CONNECTED's and
/// uint8 ones' with the input x weight product rounded to float first
/// (GetQuantizedConvolutionMultipler).
std::vector<double> productScales(const TensorQuant &in, const TensorQuant &w,
                                  const TensorQuant &out, bool floatProduct);

/// Rescales an i32 accumulator to the int8 output and applies the fused
/// activation; binds output 0.
LogicalResult finishProduct(OpContext &ctx, Value acc, llvm::ArrayRef<double> scales,
                            const TensorQuant &out, schema::ActivationFunctionType act);

/// Quantization of a product op's operands: input, weights (per-tensor or
/// per-channel along `channelDim`), output.
struct ProductQuant {
  const TensorQuant *in, *weight, *out;
};

/// The operands' quantization, checked: per-channel weights only along
/// `channelDim`, one weight zero point.
FailureOr<ProductQuant> productQuant(OpContext &ctx, int channelDim);

/// The values of a constant i8/i32 tensor `v` (a tosa.const), or nullopt.
std::optional<std::vector<int64_t>> constantValues(mlir::Value v);

/// A product op's operands once the input zero point is folded away:
/// sum_k (x - zx) w = sum_k x w - zx sum_k w, so with constant weights of
/// zero point 0 the op multiplies raw int8 values (no subtraction in the
/// inner loop: plain linalg.matmul / convolutions on i8, which Kiln's
/// register-tiled kernels take) and the bias absorbs -zx sum_k w per
/// output channel. Padding then pads with zx explicitly, so padded taps
/// still cancel. `quantization` holds the TOSA zero
/// points to apply in the op (non-constant weights, or weights with a zero
/// point: uint8 models); zero points 0 when folded.
struct FoldedProduct {
  Value bias;
  tosa::ConvOpQuantizationAttr quantization;
  bool folded = false;
};

/// `weights` is [O, K...] (channel first: CONV_2D, FULLY_CONNECTED) or
/// [K..., O] (channel last: depthwise's [KH, KW, C, M] as [KH*KW, C*M]):
/// `channels` output channels, channel-major when `channelFirst`.
FailureOr<FoldedProduct> foldInputZeroPoint(OpContext &ctx, Value weights, Value bias,
                                            const ProductQuant &q, int64_t channels,
                                            bool channelFirst);

/// Pads the NHWC `input` by `pad` ([top, bottom, left, right]) with `value`.
Value padSpatial(OpContext &ctx, Value input, llvm::ArrayRef<int64_t> pad, int32_t value);

} // namespace quant
} // namespace kiln::tfl

#endif
