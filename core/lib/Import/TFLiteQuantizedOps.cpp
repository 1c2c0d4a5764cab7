//===- TFLiteQuantizedOps.cpp - int8 TFLite operators -> TOSA --------------===//
//
// Operators whose tensors are int8 or uint8 (computed as int8, see
// TFLiteQuant.h), converted so that every output element equals what
// TensorFlow Lite's integer kernels compute (tensorflow/lite/kernels,
// optimized and reference integer kernels, which agree on these
// operators):
//
// - Products (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): the TOSA op on
//   i8 with the zero points in its quantization_info accumulates in i32
//   with the i32 bias; one tosa.rescale (per channel where the weights
//   are) applies TFLite's fixed-point multiplier, rounding and output zero
//   point; the fused activation is a tosa.clamp on quantized bounds.
//   tosa.rescale with double_round rounds exactly as TFLite's
//   MultiplyByQuantizedMultiplier (SaturatingRoundingDoublingHighMul, then
//   RoundingDivideByPOT): both round the 64-bit product at bit 31 half up,
//   then the remaining shift half away from zero.
// - Elementwise binary (ADD, SUB, MUL): the rescale chains of TFLite's
//   kernels (ADD/SUB: inputs shifted left 20 bits and rescaled to twice the
//   larger input scale, summed, rescaled to the output).
// - Unary elementwise (LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH,
//   QUANTIZE int8 -> int8): a 256-entry tosa.table filled at import by
//   running TFLite's own per-element arithmetic on every int8 value, so
//   the lookup is exact by construction.
// - Data movement (RESHAPE, TRANSPOSE, SLICE, ...): the float converters,
//   which are element-type agnostic; TFLite copies bytes there.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace quant {

// --- Builders ---------------------------------------------------------------

Type i8Type(OpContext &ctx) { return ctx.builder().getIntegerType(8); }
Type i32Type(OpContext &ctx) { return ctx.builder().getI32Type(); }

RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

/// The quantization of input `i`, or a failure naming it.
FailureOr<const TensorQuant *> inQuant(OpContext &ctx, int i) {
  if (const TensorQuant *q = ctx.inputQuant(i))
    return q;
  return ctx.fail("input " + llvm::Twine(i) +
                  " has no int8 quantization (scale and zero point); mixed "
                  "float/int8 operators are not supported");
}

FailureOr<const TensorQuant *> outQuant(OpContext &ctx) {
  if (const TensorQuant *q = ctx.outputQuant(0))
    return q;
  return ctx.fail("the output has no int8 quantization (scale and zero "
                  "point); mixed float/int8 operators are not supported");
}

/// tosa.rescale of `value` (i8 or i32) to `element` (i8 or i32): subtracts
/// `inZp`, multiplies by each real scale as TFLite does (quantizeMultiplier,
/// MultiplyByQuantizedMultiplier's rounding), adds `outZp` and saturates.
/// Several scales apply per channel along the last dimension.
FailureOr<Value> rescale(OpContext &ctx, Value value, Type element, int32_t inZp,
                         int32_t outZp, llvm::ArrayRef<double> scales) {
  llvm::SmallVector<int32_t> multipliers, shifts;
  for (double s : scales) {
    QuantizedMultiplier m = quantizeMultiplier(s);
    // TOSA shift = 31 - TFLite's shift; a zero multiplier gives 0 at any
    // shift. TOSA allows shifts 2..62.
    int shift = m.multiplier == 0 ? 31 : 31 - m.shift;
    if (shift < 2)
      return ctx.fail("an effective quantization scale of " + shortNumber(s) +
                      " (input scale x weight scale / output scale) is too "
                      "large; TFLite's fixed-point multipliers reach 2^29");
    if (shift > 62) {
      m.multiplier = 0;
      shift = 62;
    }
    multipliers.push_back(m.multiplier);
    shifts.push_back(shift);
  }
  auto b = ctx.builder();
  return ctx.create<tosa::RescaleOp>(
      tensorOf(shapeOf(value), element), value, b.getI32IntegerAttr(inZp),
      b.getI32IntegerAttr(outZp), b.getDenseI32ArrayAttr(multipliers),
      b.getDenseI32ArrayAttr(shifts), b.getBoolAttr(true), b.getBoolAttr(true),
      b.getBoolAttr(scales.size() > 1));
}

/// tosa.clamp of an integer tensor to [lo, hi].
Value clampInt(OpContext &ctx, Value value, int64_t lo, int64_t hi) {
  auto b = ctx.builder();
  return ctx.create<tosa::ClampOp>(value.getType(), value,
                                   b.getI64IntegerAttr(lo), b.getI64IntegerAttr(hi),
                                   b.getF32FloatAttr(static_cast<float>(lo)),
                                   b.getF32FloatAttr(static_cast<float>(hi)));
}

/// The fused activation `act` on an int8 result: a clamp on the quantized
/// bounds (none when they span the whole int8 range).
FailureOr<Value> fusedActivation(OpContext &ctx, Value value,
                                 schema::ActivationFunctionType act,
                                 const TensorQuant &out) {
  using A = schema::ActivationFunctionType;
  if (act != A::NONE && act != A::RELU && act != A::RELU_N1_TO_1 && act != A::RELU6)
    return ctx.fail(std::string("fused activation ") +
                    schema::EnumNameActivationFunctionType(act) +
                    " is not supported on int8 (supported: NONE, RELU, "
                    "RELU_N1_TO_1, RELU6)");
  auto [lo, hi] = quantizedActivationRange(static_cast<int>(act), out);
  if (lo == -128 && hi == 127)
    return value;
  return clampInt(ctx, value, lo, hi);
}

Value constI8(OpContext &ctx, llvm::ArrayRef<int64_t> shape,
              llvm::ArrayRef<int8_t> values) {
  auto type = tensorOf(shape, i8Type(ctx));
  auto attr = DenseElementsAttr::get(type, values);
  return ctx.builder().create<tosa::ConstOp>(ctx.loc(), type, attr).getResult();
}

/// A 256-entry tosa.table applying `f` (an int8 value -> its int8 result,
/// TFLite's arithmetic) to every element of the i8 `value`.
Value lookupTable(OpContext &ctx, Value value,
                  const std::function<int32_t(int32_t)> &f) {
  std::vector<int8_t> table(256);
  for (int32_t q = -128; q <= 127; ++q)
    table[q + 128] = static_cast<int8_t>(std::clamp(f(q), -128, 127));
  Value t = constI8(ctx, {256}, table);
  return ctx.create<tosa::TableOp>(value.getType(), value, t);
}

/// Bias input `i` (int32) or zeros of length `n`.
FailureOr<Value> biasOrZeros(OpContext &ctx, int i, int64_t n) {
  if (!ctx.hasInput(i))
    return ctx.constI32({n}, std::vector<int32_t>(n, 0));
  if (ctx.inputTensor(i)->type() != schema::TensorType::INT32)
    return ctx.fail(std::string("the bias is ") +
                    schema::EnumNameTensorType(ctx.inputTensor(i)->type()) +
                    "; int8 operators take an INT32 bias");
  return ctx.input(i);
}

/// Real output multipliers of a product op: input scale x weight scale
/// (per channel) / output scale. TFLite computes int8 convolutions' in
/// double (PopulateConvolutionQuantizationParams) but FULLY_CONNECTED's and
/// uint8 ones' with the input x weight product rounded to float first
/// (GetQuantizedConvolutionMultipler).
std::vector<double> productScales(const TensorQuant &in, const TensorQuant &w,
                                  const TensorQuant &out, bool floatProduct) {
  std::vector<double> scales;
  for (float ws : w.scales) {
    double product = floatProduct ? static_cast<double>(in.scale() * ws)
                                  : static_cast<double>(in.scale()) * ws;
    scales.push_back(product / static_cast<double>(out.scale()));
  }
  return scales;
}

/// Rescales an i32 accumulator to the int8 output and applies the fused
/// activation; binds output 0.
LogicalResult finishProduct(OpContext &ctx, Value acc, llvm::ArrayRef<double> scales,
                            const TensorQuant &out,
                            schema::ActivationFunctionType act) {
  auto result = rescale(ctx, acc, i8Type(ctx), 0, out.zeroPoint(), scales);
  if (failed(result))
    return failure();
  auto activated = fusedActivation(ctx, *result, act, out);
  if (failed(activated))
    return failure();
  return ctx.setOutput(0, *activated);
}

FailureOr<ProductQuant> productQuant(OpContext &ctx, int channelDim) {
  auto in = inQuant(ctx, 0), w = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(in) || failed(w) || failed(out))
    return failure();
  if ((*w)->perChannel() && (*w)->dimension != channelDim)
    return ctx.fail("the weights are quantized per channel along dimension " +
                    llvm::Twine((*w)->dimension) + "; this operator's output "
                    "channels are dimension " + llvm::Twine(channelDim));
  for (int32_t zp : (*w)->zeroPoints)
    if (zp != (*w)->zeroPoints.front())
      return ctx.fail("per-channel weight zero points differ; TFLite's int8 "
                      "kernels take one weight zero point (0)");
  return ProductQuant{*in, *w, *out};
}

/// The values of a constant i8/i32 tensor `v` (a tosa.const), or nullopt.
std::optional<std::vector<int64_t>> constantValues(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !attr.getElementType().isa<IntegerType>())
    return std::nullopt;
  std::vector<int64_t> values;
  values.reserve(attr.getNumElements());
  for (const APInt &x : attr.getValues<APInt>())
    values.push_back(x.getSExtValue());
  return values;
}

/// `weights` is [O, K...] (channel first: CONV_2D, FULLY_CONNECTED) or
/// [K..., O] (channel last: depthwise's [KH, KW, C, M] as [KH*KW, C*M]):
/// `channels` output channels, channel-major when `channelFirst`.
FailureOr<FoldedProduct> foldInputZeroPoint(OpContext &ctx, Value weights, Value bias,
                                            const ProductQuant &q, int64_t channels,
                                            bool channelFirst) {
  FoldedProduct r;
  r.bias = bias;
  r.quantization = tosa::ConvOpQuantizationAttr::get(ctx.context(), q.in->zeroPoint(),
                                                     q.weight->zeroPoint());
  auto w = constantValues(weights);
  auto b = constantValues(bias);
  if (q.weight->zeroPoint() != 0 || !w || !b || channels <= 0 ||
      w->size() % channels != 0 || static_cast<int64_t>(b->size()) != channels)
    return r;
  int64_t perChannel = w->size() / channels;
  std::vector<int32_t> folded(channels);
  for (int64_t o = 0; o < channels; ++o) {
    int64_t sum = 0;
    for (int64_t k = 0; k < perChannel; ++k)
      sum += channelFirst ? (*w)[o * perChannel + k] : (*w)[k * channels + o];
    int64_t value = (*b)[o] - static_cast<int64_t>(q.in->zeroPoint()) * sum;
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      return r; // keep the zero point in the op
    folded[o] = static_cast<int32_t>(value);
  }
  r.bias = ctx.constI32({channels}, folded);
  // TOSA requires quantization_info on i8 operands: zero points 0, which
  // kiln-drop-zero-points turns into the plain linalg ops.
  r.quantization = tosa::ConvOpQuantizationAttr::get(ctx.context(), 0, 0);
  r.folded = true;
  return r;
}

/// Pads the NHWC `input` by `pad` ([top, bottom, left, right]) with `value`.
Value padSpatial(OpContext &ctx, Value input, llvm::ArrayRef<int64_t> pad, int32_t value) {
  if (llvm::all_of(pad, [](int64_t p) { return p == 0; }))
    return input;
  llvm::ArrayRef<int64_t> s = shapeOf(input);
  llvm::SmallVector<int64_t> padded{s[0], s[1] + pad[0] + pad[1], s[2] + pad[2] + pad[3], s[3]};
  Value pads = ctx.constI32({4, 2}, {0, 0, static_cast<int32_t>(pad[0]), static_cast<int32_t>(pad[1]),
                                     static_cast<int32_t>(pad[2]), static_cast<int32_t>(pad[3]), 0, 0});
  return ctx.create<tosa::PadOp>(tensorOf(padded, i8Type(ctx)), input, pads,
                                 constI8(ctx, {}, {static_cast<int8_t>(value)}), nullptr);
}

} // namespace quant

/// The int8 UNIDIRECTIONAL_SEQUENCE_LSTM (TFLiteQuantizedRecurrentOps.cpp).
void registerQuantizedRecurrentOps(ConverterTable &table);

void registerQuantizedOps(ConverterTable &table) {
  registerQuantizedConvOps(table);
  registerQuantizedElementwiseOps(table);
  registerQuantizedShapeOps(table);
  registerQuantizedReductionOps(table);
  registerQuantizedSvdfOps(table);
  registerQuantizedMicroOps(table);
  registerQuantizedRecurrentOps(table);
  // Data movement copies bytes in TFLite (whatever the output's
  // quantization: these kernels' Prepare does not compare it; PACK, which
  // does, is in registerQuantizedShapeOps): the float converters are
  // element-type agnostic. SPACE_TO_BATCH_ND pads with the output's zero
  // point; ARG_MAX / ARG_MIN compare the raw int8 values; SELECT /
  // SELECT_V2 also check that the values share the output's quantization
  // (TFLiteLogicalOps.cpp).
  const ConverterTable &floats = converters();
  for (BuiltinOperator op : {BuiltinOperator::RESHAPE,
                             BuiltinOperator::SQUEEZE,
                             BuiltinOperator::EXPAND_DIMS,
                             BuiltinOperator::TRANSPOSE,
                             BuiltinOperator::SLICE,
                             BuiltinOperator::STRIDED_SLICE,
                             BuiltinOperator::GATHER,
                             BuiltinOperator::RESIZE_NEAREST_NEIGHBOR,
                             BuiltinOperator::UNPACK,
                             BuiltinOperator::SPLIT,
                             BuiltinOperator::SPLIT_V,
                             BuiltinOperator::DEPTH_TO_SPACE,
                             BuiltinOperator::SPACE_TO_DEPTH,
                             BuiltinOperator::SPACE_TO_BATCH_ND,
                             BuiltinOperator::BATCH_TO_SPACE_ND,
                             BuiltinOperator::BROADCAST_TO,
                             BuiltinOperator::GATHER_ND,
                             BuiltinOperator::REVERSE_V2,
                             BuiltinOperator::MIRROR_PAD,
                             BuiltinOperator::ARG_MAX,
                             BuiltinOperator::ARG_MIN,
                             BuiltinOperator::SELECT,
                             BuiltinOperator::SELECT_V2,
                             BuiltinOperator::DYNAMIC_UPDATE_SLICE})
    table[op] = floats.at(op);
}

} // namespace kiln::tfl
