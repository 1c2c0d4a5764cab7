//===- TFLiteElementwiseOps.cpp - Elementwise operators and activations ---===//
//
// ADD SUB MUL DIV MAXIMUM MINIMUM SQUARED_DIFFERENCE POW PRELU (binary) and
// RELU RELU6 RELU_N1_TO_1 LEAKY_RELU LOGISTIC HARD_SWISH TANH EXP LOG NEG ABS
// SQRT RSQRT (unary), float32 only.
//
// Binary ops broadcast numpy-style: both operands are first reshaped to the
// same rank (TOSA requires equal ranks and broadcasts size-1 dimensions).
//
//===----------------------------------------------------------------------===//
#include "TFLiteConverter.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

/// Fails unless `value` is a float32 tensor (the element type these
/// converters compute in).
LogicalResult requireF32(OpContext &ctx, Value value, int input) {
  auto type = value.getType().cast<RankedTensorType>();
  if (type.getElementType().isF32())
    return success();
  std::string element;
  llvm::raw_string_ostream os(element);
  os << type.getElementType();
  return ctx.fail("input " + llvm::Twine(input) + " has element type " +
                  os.str() + "; only float32 is supported");
}

/// Both inputs, reshaped to the output's rank.
LogicalResult binaryOperands(OpContext &ctx, Value &lhs, Value &rhs) {
  auto a = ctx.input(0);
  auto b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  int64_t rank = std::max<int64_t>(
      {static_cast<int64_t>(ctx.outputShape(0).size()),
       a->getType().cast<RankedTensorType>().getRank(),
       b->getType().cast<RankedTensorType>().getRank()});
  lhs = ctx.broadcastRank(*a, rank);
  rhs = ctx.broadcastRank(*b, rank);
  return success();
}

/// Both float32 inputs, reshaped to the output's rank, with a check that
/// their shapes broadcast (each dimension equal or 1 on one side).
LogicalResult floatBinaryOperands(OpContext &ctx, Value &lhs, Value &rhs) {
  if (failed(binaryOperands(ctx, lhs, rhs)) ||
      failed(requireF32(ctx, lhs, 0)) || failed(requireF32(ctx, rhs, 1)))
    return failure();
  auto l = lhs.getType().cast<RankedTensorType>();
  auto r = rhs.getType().cast<RankedTensorType>();
  for (int64_t i = 0; i < l.getRank(); ++i) {
    int64_t a = l.getDimSize(i), b = r.getDimSize(i);
    if (a != b && a != 1 && b != 1)
      return ctx.fail("input shapes do not broadcast (dimension " +
                      llvm::Twine(i) + ": " + llvm::Twine(a) + " vs " +
                      llvm::Twine(b) + ")");
  }
  return success();
}

RankedTensorType broadcastType(OpContext &ctx, Value lhs, Value rhs) {
  auto l = lhs.getType().cast<RankedTensorType>();
  auto r = rhs.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape;
  for (int64_t i = 0; i < l.getRank(); ++i)
    shape.push_back(std::max(l.getDimSize(i), r.getDimSize(i)));
  return ctx.f32Type(shape);
}

/// Float tosa.mul (shift 0) with broadcasting.
Value mul(OpContext &ctx, Value lhs, Value rhs) {
  return ctx.create<tosa::MulOp>(broadcastType(ctx, lhs, rhs), lhs, rhs,
                                 ctx.builder().getI32IntegerAttr(0));
}

template <typename OptionsT>
schema::ActivationFunctionType activationOf(OpContext &ctx) {
  const auto *opts = ctx.options<OptionsT>();
  return opts ? opts->fused_activation_function()
              : schema::ActivationFunctionType::NONE;
}

/// Applies the fused activation of ADD/SUB/MUL/DIV as the TFLite float
/// kernels do: they clamp through CalculateActivationRange, which knows only
/// the RELU family, so a fused TANH is a no-op there (XNNPACK declines such
/// nodes and the builtin kernel runs); it is dropped here to match.
LogicalResult finish(OpContext &ctx, Value value,
                     schema::ActivationFunctionType act) {
  if (act == schema::ActivationFunctionType::TANH)
    act = schema::ActivationFunctionType::NONE;
  auto out = ctx.applyActivation(value, act);
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// The single float32 input of a unary operator.
FailureOr<Value> unaryOperand(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x) || failed(requireF32(ctx, *x, 0)))
    return failure();
  return *x;
}

/// A unary operator that is exactly one TOSA op.
template <typename OpTy> LogicalResult convertUnary(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.create<OpTy>(x->getType(), *x));
}

// --- Binary --------------------------------------------------------------

/// ADD: a + b, broadcast, fused activation (AddOptions) -> tosa.add.
LogicalResult convertAdd(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return finish(ctx, ctx.create<tosa::AddOp>(broadcastType(ctx, l, r), l, r),
                activationOf<schema::AddOptions>(ctx));
}

/// SUB: a - b, broadcast, fused activation (SubOptions) -> tosa.sub.
LogicalResult convertSub(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return finish(ctx, ctx.create<tosa::SubOp>(broadcastType(ctx, l, r), l, r),
                activationOf<schema::SubOptions>(ctx));
}

/// MUL: a * b, broadcast, fused activation (MulOptions) -> tosa.mul
/// (shift 0).
LogicalResult convertMul(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return finish(ctx, mul(ctx, l, r), activationOf<schema::MulOptions>(ctx));
}

/// DIV: a / b, broadcast, fused activation (DivOptions) ->
/// tosa.mul(a, tosa.reciprocal(b)). MLIR 16's tosa.div only accepts int32
/// (the verifier rejects f32), so TOSA has no exact float division; the
/// reciprocal adds one rounding (about 1 ulp, 1e-7 relative; a little more
/// for |b| > 2^126, where 1/b is subnormal). x/0 still gives +-inf, 0/0 and
/// inf/inf NaN.
LogicalResult convertDiv(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  Value inverse = ctx.create<tosa::ReciprocalOp>(r.getType(), r);
  return finish(ctx, mul(ctx, l, inverse),
                activationOf<schema::DivOptions>(ctx));
}

/// MAXIMUM: max(a, b), broadcast -> tosa.maximum. A NaN operand gives NaN
/// (kiln-propagate-nan), as IEEE's maximum and ONNX's Max; TFLite's own
/// kernel computes `a > b ? a : b` (a NaN `a` loses, a NaN `b` wins), which
/// Kiln does not follow yet (README, "Special values").
LogicalResult convertMaximum(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return ctx.setOutput(
      0, ctx.create<tosa::MaximumOp>(broadcastType(ctx, l, r), l, r));
}

/// MINIMUM: min(a, b), broadcast -> tosa.minimum (NaN as for MAXIMUM).
LogicalResult convertMinimum(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return ctx.setOutput(
      0, ctx.create<tosa::MinimumOp>(broadcastType(ctx, l, r), l, r));
}

/// SQUARED_DIFFERENCE: (a - b)^2, broadcast -> d = tosa.sub, tosa.mul(d, d).
LogicalResult convertSquaredDifference(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  Value d = ctx.create<tosa::SubOp>(broadcastType(ctx, l, r), l, r);
  return ctx.setOutput(0, mul(ctx, d, d));
}

/// POW: a^b (std::pow semantics), broadcast -> tosa.pow (math.powf).
LogicalResult convertPow(OpContext &ctx) {
  Value l, r;
  if (failed(floatBinaryOperands(ctx, l, r)))
    return failure();
  return ctx.setOutput(0,
                       ctx.create<tosa::PowOp>(broadcastType(ctx, l, r), l, r));
}

/// PRELU: x >= 0 ? x : alpha * x, alpha (usually a constant [1, 1, C])
/// broadcast against x -> tosa.select(tosa.greater_equal(x, 0), x,
/// tosa.mul(x, alpha)).
LogicalResult convertPrelu(OpContext &ctx) {
  Value x, alpha;
  if (failed(floatBinaryOperands(ctx, x, alpha)))
    return failure();
  auto xType = x.getType().cast<RankedTensorType>();
  auto type = broadcastType(ctx, x, alpha);
  Value zero = ctx.scalarF32(0.0f, xType.getRank());
  auto boolType =
      RankedTensorType::get(xType.getShape(), ctx.builder().getI1Type());
  Value nonNegative = ctx.create<tosa::GreaterEqualOp>(boolType, x, zero);
  return ctx.setOutput(
      0, ctx.create<tosa::SelectOp>(type, nonNegative, x, mul(ctx, x, alpha)));
}

// --- Unary ---------------------------------------------------------------

/// RELU: max(x, 0) -> tosa.clamp [0, FLT_MAX].
LogicalResult convertRelu(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.clamp(*x, 0.0f, std::numeric_limits<float>::infinity()));
}

/// RELU6: min(max(x, 0), 6) -> tosa.clamp [0, 6].
LogicalResult convertRelu6(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.clamp(*x, 0.0f, 6.0f));
}

/// RELU_N1_TO_1: min(max(x, -1), 1) -> tosa.clamp [-1, 1].
LogicalResult convertReluN1To1(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.clamp(*x, -1.0f, 1.0f));
}

/// LOGISTIC: 1 / (1 + exp(-x)) -> tosa.sigmoid.
LogicalResult convertLogistic(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.create<tosa::SigmoidOp>(x->getType(), *x));
}

/// LEAKY_RELU: x > 0 ? x : alpha * x (LeakyReluOptions.alpha) ->
/// tosa.select(tosa.greater(x, 0), x, tosa.mul(x, alpha)).
LogicalResult convertLeakyRelu(OpContext &ctx) {
  const auto *opts = ctx.options<schema::LeakyReluOptions>();
  float alpha = opts ? opts->alpha() : 0.2f;
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = x->getType().cast<RankedTensorType>();
  Value zero = ctx.scalarF32(0.0f, type.getRank());
  Value scaled = ctx.create<tosa::MulOp>(type, *x,
                                         ctx.scalarF32(alpha, type.getRank()),
                                         ctx.builder().getI32IntegerAttr(0));
  auto boolType = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
  Value positive = ctx.create<tosa::GreaterOp>(boolType, *x, zero);
  return ctx.setOutput(
      0, ctx.create<tosa::SelectOp>(type, positive, *x, scaled));
}

/// HARD_SWISH: x * relu6(x + 3) / 6 -> tosa.mul(x,
/// tosa.mul(tosa.clamp(tosa.add(x, 3), 0, 6), 1/6)). The gate is scaled
/// before the product, so x = FLT_MAX gives FLT_MAX (the exact value) and
/// not x * 6 = inf (tests/data/special/hard_swish).
LogicalResult convertHardSwish(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  auto type = x->getType().cast<RankedTensorType>();
  int64_t rank = type.getRank();
  Value shifted =
      ctx.create<tosa::AddOp>(type, *x, ctx.scalarF32(3.0f, rank));
  Value gate = ctx.clamp(shifted, 0.0f, 6.0f);
  Value scaledGate = mul(ctx, gate, ctx.scalarF32(1.0f / 6.0f, rank));
  return ctx.setOutput(0, mul(ctx, *x, scaledGate));
}

/// SQRT: sqrt(x) = 1 / rsqrt(x) (TOSA 0.60 has no sqrt): tosa.reciprocal
/// of tosa.rsqrt, within 2 ulp, with IEEE's special values: -0 -> -0
/// (rsqrt -inf), +inf -> +inf, x < 0 and -inf -> NaN. (powf(x, 0.5), the
/// old lowering, gives +inf for -inf and +0 for -0.)
LogicalResult convertSqrt(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  auto type = x->getType().cast<RankedTensorType>();
  Value inverse = ctx.create<tosa::RsqrtOp>(type, *x);
  return ctx.setOutput(0, ctx.create<tosa::ReciprocalOp>(type, inverse));
}

/// TANH: tanh(x) -> tosa.tanh.
LogicalResult convertTanh(OpContext &ctx) {
  return convertUnary<tosa::TanhOp>(ctx);
}

/// EXP: e^x -> tosa.exp.
LogicalResult convertExp(OpContext &ctx) {
  return convertUnary<tosa::ExpOp>(ctx);
}

/// LOG: natural logarithm -> tosa.log.
LogicalResult convertLog(OpContext &ctx) {
  return convertUnary<tosa::LogOp>(ctx);
}

/// NEG: -x -> tosa.negate.
LogicalResult convertNeg(OpContext &ctx) {
  return convertUnary<tosa::NegateOp>(ctx);
}

/// ABS: |x| -> tosa.abs.
LogicalResult convertAbs(OpContext &ctx) {
  return convertUnary<tosa::AbsOp>(ctx);
}

/// RSQRT: 1 / sqrt(x) -> tosa.rsqrt.
LogicalResult convertRsqrt(OpContext &ctx) {
  return convertUnary<tosa::RsqrtOp>(ctx);
}

} // namespace

void registerElementwiseOps(ConverterTable &table) {
  // Binary.
  table[BuiltinOperator::ADD] = convertAdd;
  table[BuiltinOperator::SUB] = convertSub;
  table[BuiltinOperator::MUL] = convertMul;
  table[BuiltinOperator::DIV] = convertDiv;
  table[BuiltinOperator::MAXIMUM] = convertMaximum;
  table[BuiltinOperator::MINIMUM] = convertMinimum;
  table[BuiltinOperator::SQUARED_DIFFERENCE] = convertSquaredDifference;
  table[BuiltinOperator::POW] = convertPow;
  table[BuiltinOperator::PRELU] = convertPrelu;
  // Activations.
  table[BuiltinOperator::RELU] = convertRelu;
  table[BuiltinOperator::RELU6] = convertRelu6;
  table[BuiltinOperator::RELU_N1_TO_1] = convertReluN1To1;
  table[BuiltinOperator::LOGISTIC] = convertLogistic;
  table[BuiltinOperator::LEAKY_RELU] = convertLeakyRelu;
  table[BuiltinOperator::HARD_SWISH] = convertHardSwish;
  // Unary math.
  table[BuiltinOperator::TANH] = convertTanh;
  table[BuiltinOperator::EXP] = convertExp;
  table[BuiltinOperator::LOG] = convertLog;
  table[BuiltinOperator::NEG] = convertNeg;
  table[BuiltinOperator::ABS] = convertAbs;
  table[BuiltinOperator::SQRT] = convertSqrt;
  table[BuiltinOperator::RSQRT] = convertRsqrt;
}

} // namespace kiln::tfl
