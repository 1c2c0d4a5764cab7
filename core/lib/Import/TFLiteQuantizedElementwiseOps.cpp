//===- TFLiteQuantizedElementwiseOps.cpp - int8 elementwise operators -------===//
//
// Unary operators (ABS among them) as 256-entry tables filled by running
// TFLite's own integer arithmetic on every int8 value (exact by
// construction); ADD, SUB, MUL, SQUARED_DIFFERENCE and the comparisons as
// TFLite's rescale chains; MAXIMUM / MINIMUM on the stored values.
// Semantics: tensorflow/lite/kernels (reference integer kernels); see
// TFLiteQuantizedOps.h for the shared builders.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"
#include "TFLiteWindow.h"
#include "TosaMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {
using namespace quant;

// --- Unary elementwise: exact lookup tables ----------------------------------

/// Binds output 0 to the table lookup of input 0 through `f` (TFLite's
/// arithmetic from an int8 input value to the int8 output value).
LogicalResult convertByTable(OpContext &ctx, const std::function<int32_t(int32_t)> &f) {
  auto input = ctx.input(0);
  if (failed(input))
    return failure();
  return ctx.setOutput(0, lookupTable(ctx, *input, f));
}

/// RELU, RELU6, RELU_N1_TO_1 (TFLite's QuantizedReluX): out_zp +
/// MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale), clamped
/// to [out_zp + round(lo / out_scale), out_zp + round(hi / out_scale)].
LogicalResult convertRelu(OpContext &ctx, float lo, float hi) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  // in_scale / out_scale in float, then widened (activations.cc ReluPrepare).
  QuantizedMultiplier m = quantizeMultiplier(static_cast<double>(i.scale() / o.scale()));
  int32_t qlo = std::max(-128, o.zeroPoint() + saturatingCast(std::round(lo / o.scale())));
  int32_t qhi = std::isinf(hi)
                    ? 127
                    : std::min(127, o.zeroPoint() + saturatingCast(std::round(hi / o.scale())));
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = o.zeroPoint() + multiplyByQuantizedMultiplier(q - i.zeroPoint(), m);
    return std::clamp(v, qlo, qhi);
  });
}

LogicalResult convertRelu0(OpContext &ctx) {
  return convertRelu(ctx, 0.0f, std::numeric_limits<float>::infinity());
}
LogicalResult convertRelu6(OpContext &ctx) { return convertRelu(ctx, 0.0f, 6.0f); }
LogicalResult convertReluN1To1(OpContext &ctx) { return convertRelu(ctx, -1.0f, 1.0f); }

/// A float function through TFLite's int8 lookup table (activations.cc
/// PopulateLookupTable): dequantize in float, apply `f`, multiply by
/// 1 / output scale, round half away from zero, add the zero point.
LogicalResult convertFloatTable(OpContext &ctx, float (*f)(float)) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  const float inverseScale = 1.0f / o.scale();
  return convertByTable(ctx, [&](int32_t q) {
    float dequantized = i.scale() * static_cast<float>(q - i.zeroPoint());
    float rescaled = std::round(f(dequantized) * inverseScale);
    return saturatingCast(rescaled + static_cast<float>(o.zeroPoint()));
  });
}

float logistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float hyperbolicTangent(float x) { return std::tanh(x); }

LogicalResult convertLogistic(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out))
    return failure();
  if ((*out)->scale() != 1.0f / 256 || (*out)->zeroPoint() != -128)
    return ctx.fail("the int8 output must have scale 1/256 and zero point -128 "
                    "(TFLite's requirement), it has " +
                    describeQuant(**out));
  return convertFloatTable(ctx, logistic);
}

LogicalResult convertTanh(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out))
    return failure();
  if ((*out)->scale() != 1.0f / 128 || (*out)->zeroPoint() != 0)
    return ctx.fail("the int8 output must have scale 1/128 and zero point 0 "
                    "(TFLite's requirement), it has " +
                    describeQuant(**out));
  return convertFloatTable(ctx, hyperbolicTangent);
}

/// QUANTIZE int8/uint8 -> int8 (TFLite's Requantize): out_zp +
/// MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale in double).
/// float -> int8 (AffineQuantize): round(x / scale) + zero point, computed
/// here as x * (1 / scale) in float, which can differ from the division
/// when x / scale lies within one float ulp of a half-integer.
LogicalResult convertQuantize(OpContext &ctx) {
  auto out = outQuant(ctx);
  auto input = ctx.input(0);
  if (failed(out) || failed(input))
    return failure();
  if (const TensorQuant *in = ctx.inputQuant(0)) {
    QuantizedMultiplier m =
        quantizeMultiplier(static_cast<double>(in->scale()) / static_cast<double>((*out)->scale()));
    int32_t inZp = in->zeroPoint(), outZp = (*out)->zeroPoint();
    return convertByTable(
        ctx, [&](int32_t q) { return outZp + multiplyByQuantizedMultiplier(q - inZp, m); });
  }
  if (!input->getType().cast<RankedTensorType>().getElementType().isF32())
    return ctx.fail("QUANTIZE takes a float32 or int8/uint8 input");
  if ((*out)->perChannel())
    return ctx.fail("per-channel QUANTIZE is not supported");
  auto b = ctx.builder();
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  llvm::SmallVector<int64_t> ones(shape.size(), 1);
  auto f32 = tensorOf(shape, b.getF32Type());
  Value p = ctx.create<tosa::MulOp>(f32, *input, ctx.constF32(ones, {1.0f / (*out)->scale()}),
                                    b.getI32IntegerAttr(0));
  // round half away from zero: sign(p) * (floor(|p|) + (frac >= 1/2)).
  Value magnitude = ctx.create<tosa::AbsOp>(f32, p);
  Value whole = ctx.create<tosa::FloorOp>(f32, magnitude);
  Value fraction = ctx.create<tosa::SubOp>(f32, magnitude, whole);
  auto i1 = tensorOf(shape, b.getI1Type());
  Value up = ctx.create<tosa::GreaterEqualOp>(i1, fraction, ctx.constF32(ones, {0.5f}));
  Value rounded = ctx.create<tosa::AddOp>(
      f32, whole,
      ctx.create<tosa::SelectOp>(f32, up, ctx.constF32(ones, {1.0f}), ctx.constF32(ones, {0.0f})));
  Value negative = ctx.create<tosa::GreaterOp>(i1, ctx.constF32(ones, {0.0f}), p);
  Value signedValue = ctx.create<tosa::SelectOp>(
      f32, negative, ctx.create<tosa::NegateOp>(f32, rounded, nullptr), rounded);
  // Saturate in float first so the integer cast cannot overflow.
  Value bounded = ctx.clamp(signedValue, -1.0e6f, 1.0e6f);
  auto i32 = tensorOf(shape, i32Type(ctx));
  Value q = ctx.create<tosa::CastOp>(i32, bounded);
  Value shifted = ctx.create<tosa::AddOp>(i32, q, ctx.constI32(ones, {(*out)->zeroPoint()}));
  Value clamped = clampInt(ctx, shifted, -128, 127);
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(tensorOf(shape, i8Type(ctx)), clamped));
}

/// DEQUANTIZE int8/uint8 -> float: scale * (x - zero point). TFLite
/// multiplies in double and rounds to float once; the product of a float
/// scale and a 9-bit integer is exact in double, so one float multiply of
/// the same operands gives the same float.
LogicalResult convertDequantize(OpContext &ctx) {
  auto in = inQuant(ctx, 0);
  auto input = ctx.input(0);
  if (failed(in) || failed(input))
    return failure();
  if ((*in)->perChannel())
    return ctx.fail("per-channel DEQUANTIZE of a computed tensor is not supported");
  auto b = ctx.builder();
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  llvm::SmallVector<int64_t> ones(shape.size(), 1);
  auto i32 = tensorOf(shape, i32Type(ctx));
  auto f32 = tensorOf(shape, b.getF32Type());
  Value wide = ctx.create<tosa::CastOp>(i32, *input);
  Value centered = ctx.create<tosa::SubOp>(i32, wide, ctx.constI32(ones, {(*in)->zeroPoint()}));
  Value real = ctx.create<tosa::CastOp>(f32, centered);
  return ctx.setOutput(0, ctx.create<tosa::MulOp>(f32, real, ctx.constF32(ones, {(*in)->scale()}),
                                                  b.getI32IntegerAttr(0)));
}

// --- Binary elementwise -----------------------------------------------------

/// Both operands as i32 values (x - zero point) * 2^`leftShift` (one rescale
/// each; 2^leftShift as a multiplier of 2^30 and shift 30 - leftShift is
/// exact), broadcast to a common rank.
FailureOr<std::pair<Value, Value>> widenOperands(OpContext &ctx, int leftShift,
                                                 const TensorQuant &a, const TensorQuant &b) {
  auto x = ctx.input(0), y = ctx.input(1);
  if (failed(x) || failed(y))
    return failure();
  int64_t rank = std::max(shapeOf(*x).size(), shapeOf(*y).size());
  auto widen = [&](Value v, const TensorQuant &q) {
    return rescale(ctx, ctx.broadcastRank(v, rank), i32Type(ctx), q.zeroPoint(), 0,
                   {std::ldexp(1.0, leftShift)});
  };
  auto wx = widen(*x, a), wy = widen(*y, b);
  if (failed(wx) || failed(wy))
    return failure();
  return std::make_pair(*wx, *wy);
}

/// Both operands widened as widenOperands does, then each rescaled by its
/// real multiplier (`realA`, `realB`; TFLite's MultiplyByQuantizedMultiplier
/// SmallerThanOneExp, which is MultiplyByQuantizedMultiplier for
/// multipliers below 1): the common first step of ADD, SUB,
/// SQUARED_DIFFERENCE and the comparisons.
FailureOr<std::pair<Value, Value>> rescaledOperands(OpContext &ctx, int leftShift,
                                                    const TensorQuant &a, const TensorQuant &b,
                                                    double realA, double realB) {
  auto operands = widenOperands(ctx, leftShift, a, b);
  if (failed(operands))
    return failure();
  auto x = rescale(ctx, operands->first, i32Type(ctx), 0, 0, {realA});
  auto y = rescale(ctx, operands->second, i32Type(ctx), 0, 0, {realB});
  if (failed(x) || failed(y))
    return failure();
  return std::make_pair(*x, *y);
}

/// ADD and SUB (TFLite add.cc / sub.cc, int8): both inputs shifted left 20
/// bits and rescaled by scale_i / (2 max(scale_1, scale_2)), added or
/// subtracted, rescaled by 2 max(scale) / (2^20 output scale).
LogicalResult convertAddSub(OpContext &ctx, bool subtract, schema::ActivationFunctionType act) {
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  if ((*a)->perChannel() || (*b)->perChannel())
    return ctx.fail("per-channel quantized operands are not supported");
  const int leftShift = 20;
  double twiceMax = static_cast<double>(2 * std::max((*a)->scale(), (*b)->scale()));
  auto operands =
      rescaledOperands(ctx, leftShift, **a, **b, static_cast<double>((*a)->scale()) / twiceMax,
                       static_cast<double>((*b)->scale()) / twiceMax);
  if (failed(operands))
    return failure();
  Value x = operands->first, y = operands->second;
  auto type = tensorOf(ctx.outputShape(0), i32Type(ctx));
  Value sum = subtract ? ctx.create<tosa::SubOp>(type, x, y) : ctx.create<tosa::AddOp>(type, x, y);
  double outputScale =
      twiceMax / static_cast<double>(static_cast<float>(1 << leftShift) * (*out)->scale());
  return finishProduct(ctx, sum, {outputScale}, **out, act);
}

LogicalResult convertAdd(OpContext &ctx) {
  const auto *opts = ctx.options<schema::AddOptions>();
  return convertAddSub(
      ctx, false, opts ? opts->fused_activation_function() : schema::ActivationFunctionType::NONE);
}

LogicalResult convertSub(OpContext &ctx) {
  const auto *opts = ctx.options<schema::SubOptions>();
  return convertAddSub(
      ctx, true, opts ? opts->fused_activation_function() : schema::ActivationFunctionType::NONE);
}

/// MUL (TFLite mul.cc, int8): (x - zp_x) * (y - zp_y) in int32, rescaled by
/// scale_x * scale_y / scale_out (computed in float, then widened).
LogicalResult convertMul(OpContext &ctx) {
  const auto *opts = ctx.options<schema::MulOptions>();
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  if ((*a)->perChannel() || (*b)->perChannel())
    return ctx.fail("per-channel quantized operands are not supported");
  auto operands = widenOperands(ctx, 0, **a, **b);
  if (failed(operands))
    return failure();
  Value product =
      ctx.create<tosa::MulOp>(tensorOf(ctx.outputShape(0), i32Type(ctx)), operands->first,
                              operands->second, ctx.builder().getI32IntegerAttr(0));
  float real = (*a)->scale() * (*b)->scale() / (*out)->scale();
  return finishProduct(ctx, product, {static_cast<double>(real)}, **out,
                       opts ? opts->fused_activation_function()
                            : schema::ActivationFunctionType::NONE);
}

/// LEAKY_RELU (TFLite leaky_relu int8): x - zi >= 0 ? MBQM(x - zi, si / so)
/// : MBQM(x - zi, si * alpha / so), plus zo; both multipliers computed in
/// float, then widened.
LogicalResult convertLeakyRelu(OpContext &ctx) {
  const auto *opts = ctx.options<schema::LeakyReluOptions>();
  float alpha = opts ? opts->alpha() : 0.2f;
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  if (alpha < 0.0f)
    return ctx.fail("a negative alpha is not supported on int8");
  QuantizedMultiplier identity = quantizeMultiplier(static_cast<double>(i.scale() / o.scale()));
  QuantizedMultiplier slope =
      quantizeMultiplier(static_cast<double>(i.scale() * alpha / o.scale()));
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = q - i.zeroPoint();
    return o.zeroPoint() + multiplyByQuantizedMultiplier(v, v >= 0 ? identity : slope);
  });
}

/// HARD_SWISH int8 (TFLite reference_ops::HardSwish, quantized): x on a
/// 2^7-finer input scale, a "relu-ish" factor in [0, 1] from the input
/// rescaled so 3.0 is 2^15, their 16-bit fixed-point product, shifted to the
/// output scale. Evaluated per int8 value into a table.
LogicalResult convertHardSwish(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  const float hiresInputScale = (1.0f / 128.0f) * i.scale();
  const float reluishScale = 3.0f / 32768.0f;
  QuantizedMultiplier outM = quantizeMultiplier(static_cast<double>(hiresInputScale / o.scale()));
  QuantizedMultiplier reluM =
      quantizeMultiplier(static_cast<double>(hiresInputScale / reluishScale));
  if (outM.shift > 0)
    return ctx.fail("the output scale is too small for TFLite's int8 HARD_SWISH "
                    "(input scale / 128 / output scale must be below 1)");
  int16_t outMult = downScaleMultiplier(outM.multiplier);
  int16_t reluMult = downScaleMultiplier(reluM.multiplier);
  auto divideByPOT16 = [](int16_t x, int exponent) {
    return static_cast<int16_t>(roundingDivideByPOT(x, exponent));
  };
  return convertByTable(ctx, [&](int32_t q) {
    int16_t value = static_cast<int16_t>(q - i.zeroPoint());
    int16_t hires = static_cast<int16_t>(value * (1 << 7));
    int16_t preshift = roundingDoublingHighMul16(hires, outMult);
    int16_t reluish = hires;
    if (reluM.shift > 0)
      reluish = saturatingLeftShift16(reluish, reluM.shift - 1);
    reluish = roundingDoublingHighMul16(reluish, reluMult);
    if (reluM.shift > 0)
      reluish = saturatingLeftShift16(reluish, 1);
    if (reluM.shift < 0)
      reluish = divideByPOT16(reluish, -reluM.shift);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    int16_t product = doublingHighMul16(reluish, preshift);
    int32_t result = divideByPOT16(product, -outM.shift) + o.zeroPoint();
    return result;
  });
}

// --- Arithmetic TFLite has int8 forms of (issue 31) -------------------------

/// ABS int8 (tensorflow/lite/kernels/elementwise.cc AbsEvalQuantized; TFLite
/// Micro tensorflow/lite/micro/kernels/elementwise.cc): |x - zi|, times
/// in_scale / out_scale (the float quotient, widened; skipped when the
/// scales are equal), plus zo, saturated. A table over the 256 inputs.
LogicalResult convertAbs(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  const bool scaled = i.scale() != o.scale();
  QuantizedMultiplier m = quantizeMultiplier(static_cast<double>(i.scale() / o.scale()));
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = std::abs(q - i.zeroPoint());
    return o.zeroPoint() + (scaled ? multiplyByQuantizedMultiplier(v, m) : v);
  });
}

/// RSQRT int8 (tensorflow/lite/kernels/elementwise.cc RsqrtEvalQuantized;
/// TFLite Micro elementwise.cc): v = x - zi; v == 0 gives 127; otherwise
/// 1 / sqrt(v) from invSqrtMultiplier applied to 1 with 20 extra bits, then
/// multiplied by 1 / (sqrt(in_scale) out_scale) (float product, then the
/// reciprocal in double) with those 20 bits taken back, plus zo. TFLite
/// stops with an error on v < 0 ("Rsqrt is only defined for positive
/// values"); Kiln gives 127 there too (the table needs a value).
LogicalResult convertRsqrt(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  QuantizedMultiplier m =
      quantizeMultiplier(1.0 / static_cast<double>(std::sqrt(i.scale()) * o.scale()));
  const int kShift = 20;
  if (m.shift - kShift > 30)
    return ctx.fail("the output scale is too small for TFLite's int8 RSQRT");
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = q - i.zeroPoint();
    if (v <= 0)
      return 127;
    QuantizedMultiplier inv = invSqrtMultiplier(v);
    int32_t data = multiplyByQuantizedMultiplier(1, {inv.multiplier, inv.shift + kShift});
    return o.zeroPoint() + multiplyByQuantizedMultiplier(data, {m.multiplier, m.shift - kShift});
  });
}

/// DIV int8 (TFLite Micro tensorflow/lite/micro/kernels/div.cc, reference
/// DivElementwise; TFLite 2.9 has the same arithmetic for uint8 only):
/// zo + quantizedDivide(x - zx, y - zy, scale_x / (scale_y scale_out)) (the
/// multiplier's quotient in float), the fused activation's clamp. The
/// result depends on both stored values, so it is a 65536-entry table
/// indexed by (x + 128) 256 + (y + 128) (tosa.gather). A divisor equal to
/// its zero point (TFLite stops there) gives 127 or -128 by the dividend's
/// sign, zo for 0 / 0.
LogicalResult convertDiv(OpContext &ctx) {
  const auto *opts = ctx.options<schema::DivOptions>();
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  const TensorQuant &x = **a, &y = **b, &o = **out;
  auto act = opts ? opts->fused_activation_function() : schema::ActivationFunctionType::NONE;
  QuantizedMultiplier m =
      quantizeMultiplier(static_cast<double>(x.scale() / (y.scale() * o.scale())));
  std::vector<int8_t> table(65536);
  for (int32_t p = -128; p <= 127; ++p)
    for (int32_t q = -128; q <= 127; ++q) {
      int32_t n = p - x.zeroPoint(), d = q - y.zeroPoint();
      int32_t v = d != 0 ? o.zeroPoint() + quantizedDivide(n, d, m)
                         : (n > 0   ? 127
                            : n < 0 ? -128
                                    : o.zeroPoint());
      table[(p + 128) * 256 + (q + 128)] = static_cast<int8_t>(std::clamp(v, -128, 127));
    }
  auto operands = broadcastOperands(ctx, 2);
  if (failed(operands))
    return failure();
  auto index = [&](Value v) {
    auto type = tensorOf(shapeOf(v), i32Type(ctx));
    llvm::SmallVector<int64_t> ones(shapeOf(v).size(), 1);
    return ctx.create<tosa::AddOp>(type, ctx.create<tosa::CastOp>(type, v),
                                   ctx.constI32(ones, {128}));
  };
  Value hiIndex = index((*operands)[0]);
  llvm::SmallVector<int64_t> ones(shapeOf(hiIndex).size(), 1);
  hiIndex = tosa_math::mul(ctx, hiIndex, ctx.constI32(ones, {256}));
  Value flat = tosa_math::binary<tosa::AddOp>(ctx, hiIndex, index((*operands)[1]));
  std::vector<int64_t> shape = ctx.outputShape(0);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  auto values = tensorOf({1, 65536, 1}, i8Type(ctx));
  Value constant = ctx.builder().create<tosa::ConstOp>(
      ctx.loc(), values, DenseElementsAttr::get(values, llvm::ArrayRef<int8_t>(table)));
  Value picked = ctx.create<tosa::GatherOp>(tensorOf({1, count, 1}, i8Type(ctx)), constant,
                                            ctx.reshape(flat, {1, count}));
  auto activated = fusedActivation(ctx, ctx.reshape(picked, shape), act, o);
  if (failed(activated))
    return failure();
  return ctx.setOutput(0, *activated);
}

/// PRELU int8 (tensorflow/lite/kernels/prelu.cc, reference_ops::
/// BroadcastPrelu4DSlow; TFLite Micro prelu_common.cc): v = x - zx;
/// v >= 0 gives MBQM(v, sx / so), otherwise MBQM(v (alpha - za), sx sa /
/// so) (multipliers in double), plus zo, saturated. Alpha broadcasts.
LogicalResult convertPrelu(OpContext &ctx) {
  auto in = inQuant(ctx, 0), alpha = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(in) || failed(alpha) || failed(out))
    return failure();
  const TensorQuant &i = **in, &a = **alpha, &o = **out;
  if (a.perChannel())
    return ctx.fail("alpha is quantized per channel (" + describeQuant(a) +
                    "); TFLite's int8 PRELU takes one alpha scale and zero point");
  auto operands = widenOperands(ctx, 0, i, a);
  if (failed(operands))
    return failure();
  Value x = operands->first;
  double sx = i.scale(), sa = a.scale(), so = o.scale();
  auto positive = rescale(ctx, x, i8Type(ctx), 0, o.zeroPoint(), {sx / so});
  Value product = tosa_math::mul(ctx, x, operands->second);
  auto negative = rescale(ctx, product, i8Type(ctx), 0, o.zeroPoint(), {sx * sa / so});
  if (failed(positive) || failed(negative))
    return failure();
  Value isPositive =
      tosa_math::compare<tosa::GreaterEqualOp>(ctx, x, tosa_math::scalarLike(ctx, 0, x));
  return ctx.setOutput(0, tosa_math::select(ctx, isPositive, *positive, *negative));
}

/// Fails unless both inputs have output 0's scale and zero point: TFLite's
/// int8 MAXIMUM / MINIMUM (maximum_minimum.cc, TFLite Micro
/// maximum_minimum.cc) pick the larger / smaller stored value without
/// rescaling, which means max / min only on one quantization.
LogicalResult requireOutputQuant(OpContext &ctx, const TensorQuant &out) {
  for (int k = 0; k < 2; ++k) {
    auto q = inQuant(ctx, k);
    if (failed(q))
      return failure();
    if ((*q)->scale() != out.scale() || (*q)->zeroPoint() != out.zeroPoint())
      return ctx.fail("input " + llvm::Twine(k) + " has " + describeQuant(**q) + ", the output " +
                      describeQuant(out) +
                      "; int8 MAXIMUM / MINIMUM compare stored values, so the inputs "
                      "must have the output's scale and zero point");
  }
  return success();
}

/// MAXIMUM / MINIMUM int8: tosa.maximum / tosa.minimum of the stored
/// values, broadcast (every operand of one quantization).
template <typename OpTy> LogicalResult convertMinMax(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out) || failed(requireOutputQuant(ctx, **out)))
    return failure();
  auto operands = broadcastOperands(ctx, 2);
  if (failed(operands))
    return failure();
  return ctx.setOutput(0, tosa_math::binary<OpTy>(ctx, (*operands)[0], (*operands)[1]));
}

/// SQUARED_DIFFERENCE int8 (tensorflow/lite/kernels/squared_difference.cc,
/// TFLite Micro squared_difference.cc): both inputs shifted left 7 bits
/// and rescaled by scale_i / (2 max(scale_1, scale_2)), subtracted, the
/// difference squared in int32, rescaled by (2 max(scale))^2 / (2^14
/// output scale), plus zo, saturated.
LogicalResult convertSquaredDifference(OpContext &ctx) {
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  const int leftShift = 7;
  double twiceMax = static_cast<double>(2 * std::max((*a)->scale(), (*b)->scale()));
  auto operands =
      rescaledOperands(ctx, leftShift, **a, **b, static_cast<double>((*a)->scale()) / twiceMax,
                       static_cast<double>((*b)->scale()) / twiceMax);
  if (failed(operands))
    return failure();
  auto type = tensorOf(ctx.outputShape(0), i32Type(ctx));
  Value diff = ctx.create<tosa::SubOp>(type, operands->first, operands->second);
  Value square = tosa_math::mul(ctx, diff, diff);
  double outputScale =
      twiceMax * twiceMax /
      static_cast<double>(static_cast<float>(1 << (2 * leftShift)) * (*out)->scale());
  return finishProduct(ctx, square, {outputScale}, **out, schema::ActivationFunctionType::NONE);
}

/// The comparisons on int8 / uint8 operands (tensorflow/lite/kernels/
/// comparisons.cc, reference_ops::ComparisonWithScaling; TFLite Micro
/// comparisons.cc): each operand (x - zp) shifted left 8 bits and
/// multiplied by its own scale (QuantizeMultiplierSmallerThanOneExp, so
/// scales must be below 1), then compared as int32 -> bool. `OpTy`, `Swap`
/// and `Negate` as the float comparisons (TFLiteLogicalOps.cpp).
template <typename OpTy, bool Swap, bool Negate> LogicalResult convertComparison(OpContext &ctx) {
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1);
  if (failed(a) || failed(b))
    return failure();
  for (int k = 0; k < 2; ++k) {
    const TensorQuant &q = k ? **b : **a;
    if (q.perChannel())
      return ctx.fail("per-channel quantized operands are not supported");
    if (!(q.scale() < 1.0f))
      return ctx.fail("input " + llvm::Twine(k) + " has scale " + shortNumber(q.scale()) +
                      "; TFLite's int8 comparisons take input scales below 1 "
                      "(QuantizeMultiplierSmallerThanOneExp)");
  }
  auto operands = rescaledOperands(ctx, 8, **a, **b, static_cast<double>((*a)->scale()),
                                   static_cast<double>((*b)->scale()));
  if (failed(operands))
    return failure();
  Value x = operands->first, y = operands->second;
  Value result = Swap ? tosa_math::compare<OpTy>(ctx, y, x) : tosa_math::compare<OpTy>(ctx, x, y);
  if (Negate)
    result = tosa_math::unary<tosa::LogicalNotOp>(ctx, result);
  return ctx.setOutput(0, result);
}

} // namespace

void registerQuantizedElementwiseOps(ConverterTable &table) {
  table[BuiltinOperator::RELU] = convertRelu0;
  table[BuiltinOperator::RELU6] = convertRelu6;
  table[BuiltinOperator::RELU_N1_TO_1] = convertReluN1To1;
  table[BuiltinOperator::LOGISTIC] = convertLogistic;
  table[BuiltinOperator::TANH] = convertTanh;
  table[BuiltinOperator::QUANTIZE] = convertQuantize;
  table[BuiltinOperator::DEQUANTIZE] = convertDequantize;
  table[BuiltinOperator::ADD] = convertAdd;
  table[BuiltinOperator::SUB] = convertSub;
  table[BuiltinOperator::MUL] = convertMul;
  table[BuiltinOperator::LEAKY_RELU] = convertLeakyRelu;
  table[BuiltinOperator::HARD_SWISH] = convertHardSwish;
  table[BuiltinOperator::ABS] = convertAbs;
  table[BuiltinOperator::RSQRT] = convertRsqrt;
  table[BuiltinOperator::PRELU] = convertPrelu;
  table[BuiltinOperator::DIV] = convertDiv;
  table[BuiltinOperator::MAXIMUM] = convertMinMax<tosa::MaximumOp>;
  table[BuiltinOperator::MINIMUM] = convertMinMax<tosa::MinimumOp>;
  table[BuiltinOperator::SQUARED_DIFFERENCE] = convertSquaredDifference;
  table[BuiltinOperator::EQUAL] = convertComparison<tosa::EqualOp, false, false>;
  table[BuiltinOperator::NOT_EQUAL] = convertComparison<tosa::EqualOp, false, true>;
  table[BuiltinOperator::GREATER] = convertComparison<tosa::GreaterOp, false, false>;
  table[BuiltinOperator::GREATER_EQUAL] = convertComparison<tosa::GreaterEqualOp, false, false>;
  table[BuiltinOperator::LESS] = convertComparison<tosa::GreaterOp, true, false>;
  table[BuiltinOperator::LESS_EQUAL] = convertComparison<tosa::GreaterEqualOp, true, false>;
}

} // namespace kiln::tfl
