//===- TFLiteElementwiseOps.cpp - Elementwise operators and activations ---===//
//
// ADD SUB MUL DIV MAXIMUM MINIMUM SQUARED_DIFFERENCE POW PRELU FLOOR_DIV
// FLOOR_MOD ADD_N (n-ary) and RELU RELU6 RELU_N1_TO_1 LEAKY_RELU LOGISTIC
// HARD_SWISH ELU TANH EXP LOG NEG ABS SQRT RSQRT FLOOR CEIL ROUND SQUARE SIN
// COS ZEROS_LIKE (unary), float32; FLOOR_DIV, FLOOR_MOD, ADD_N and
// ZEROS_LIKE also int32.
//
// Binary ops broadcast numpy-style: both operands are first reshaped to the
// same rank (TOSA requires equal ranks and broadcasts size-1 dimensions).
// ROUND, SIN, COS, ELU and the remainders are the lowerings the ONNX
// importer uses too (TosaMath.h).
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TosaMath.h"

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

/// Both inputs, reshaped to one rank, with a check that their shapes
/// broadcast (broadcastOperands).
LogicalResult binaryOperands(OpContext &ctx, Value &lhs, Value &rhs) {
  auto operands = broadcastOperands(ctx, 2);
  if (failed(operands))
    return failure();
  lhs = (*operands)[0];
  rhs = (*operands)[1];
  return success();
}

/// Both inputs as binaryOperands gives them, each float32.
LogicalResult floatBinaryOperands(OpContext &ctx, Value &lhs, Value &rhs) {
  return success(succeeded(binaryOperands(ctx, lhs, rhs)) && succeeded(requireF32(ctx, lhs, 0)) &&
                 succeeded(requireF32(ctx, rhs, 1)));
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

/// Both inputs of FLOOR_DIV / FLOOR_MOD, reshaped to one rank: two float32
/// or two int32 tensors.
LogicalResult numericBinaryOperands(OpContext &ctx, Value &lhs, Value &rhs) {
  if (failed(binaryOperands(ctx, lhs, rhs)))
    return failure();
  Type a = tosa_math::elementOf(lhs), b = tosa_math::elementOf(rhs);
  if (a != b || !(a.isF32() || a.isInteger(32)))
    return ctx.fail("inputs have element types " + typeText(a) + " and " + typeText(b) +
                    "; supported: two float32 or two int32 tensors");
  return success();
}

/// FLOOR_DIV: floor(a / b), broadcast (tensorflow/lite/kernels/floor_div.cc).
/// float32: tosa.floor(a * tosa.reciprocal(b)) (MLIR 16's tosa.div is int32
/// only; one extra rounding, see convertDiv). int32: tosa_math::floorDivideI32
/// (b = 0, where TFLite stops with "Division by 0", gives a).
LogicalResult convertFloorDiv(OpContext &ctx) {
  Value l, r;
  if (failed(numericBinaryOperands(ctx, l, r)))
    return failure();
  if (tosa_math::elementOf(l).isInteger(32))
    return ctx.setOutput(0, tosa_math::floorDivideI32(ctx, l, r));
  Value inverse = ctx.create<tosa::ReciprocalOp>(r.getType(), r);
  return ctx.setOutput(0, tosa_math::unary<tosa::FloorOp>(ctx, mul(ctx, l, inverse)));
}

/// FLOOR_MOD: a - b * floor(a / b), broadcast: the remainder with the
/// divisor's sign (tensorflow/lite/kernels/floor_mod.cc: fmod(a, b), plus b
/// where that is non-zero and of the other sign). float32:
/// tosa_math::floatRemainder; int32: tosa_math::remainderI32 (b = 0 gives 0,
/// TFLite stops with "Division by 0").
LogicalResult convertFloorMod(OpContext &ctx) {
  Value l, r;
  if (failed(numericBinaryOperands(ctx, l, r)))
    return failure();
  if (tosa_math::elementOf(l).isInteger(32))
    return ctx.setOutput(0, tosa_math::remainderI32(ctx, l, r, /*floored=*/true));
  return ctx.setOutput(0, tosa_math::floatRemainder(ctx, l, r, /*truncated=*/false));
}

/// ADD_N: the sum of its N >= 1 inputs, all of one shape and element type
/// (float32 or int32; tensorflow/lite/kernels/add_n.cc), left to right ->
/// a chain of tosa.add.
LogicalResult convertAddN(OpContext &ctx) {
  if (ctx.numInputs() < 1)
    return ctx.fail("has no inputs; ADD_N takes one or more");
  auto first = ctx.input(0);
  if (failed(first))
    return failure();
  auto type = first->getType().cast<RankedTensorType>();
  if (!type.getElementType().isF32() && !type.getElementType().isInteger(32))
    return ctx.fail("input 0 has element type " + typeText(type.getElementType()) +
                    "; supported: float32, int32");
  Value sum = *first;
  for (int i = 1; i < ctx.numInputs(); ++i) {
    auto x = ctx.input(i);
    if (failed(x))
      return failure();
    if (x->getType() != type)
      return ctx.fail("input " + llvm::Twine(i) + " is " +
                      typeText(x->getType().cast<RankedTensorType>()) + ", input 0 " +
                      typeText(type) + "; ADD_N adds tensors of one shape and element type");
    sum = ctx.create<tosa::AddOp>(type, sum, *x);
  }
  return ctx.setOutput(0, sum);
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

/// FLOOR: round toward -inf -> tosa.floor.
LogicalResult convertFloor(OpContext &ctx) { return convertUnary<tosa::FloorOp>(ctx); }

/// CEIL: round toward +inf -> tosa.ceil.
LogicalResult convertCeil(OpContext &ctx) { return convertUnary<tosa::CeilOp>(ctx); }

/// ROUND: to the nearest integer, halves to even
/// (tensorflow/lite/kernels/internal/reference/round.h RoundToNearest) ->
/// tosa_math::roundHalfEven.
LogicalResult convertRound(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, tosa_math::roundHalfEven(ctx, *x));
}

/// SQUARE: x * x -> tosa.mul(x, x).
LogicalResult convertSquare(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, mul(ctx, *x, *x));
}

/// SIN / COS: tosa_math::sinOrCos (TOSA 0.60 has neither: range reduction
/// by pi and a series, within about 1e-7 for |x| up to a few hundred).
LogicalResult convertSinCos(OpContext &ctx, bool cosine) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, tosa_math::sinOrCos(ctx, *x, cosine));
}
LogicalResult convertSin(OpContext &ctx) { return convertSinCos(ctx, false); }
LogicalResult convertCos(OpContext &ctx) { return convertSinCos(ctx, true); }

/// ELU: x < 0 ? exp(x) - 1 : x (alpha 1; TFLite's ELU has no options,
/// tensorflow/lite/kernels/internal/reference/elu.h) -> tosa_math::elu.
LogicalResult convertElu(OpContext &ctx) {
  auto x = unaryOperand(ctx);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, tosa_math::elu(ctx, *x, 1.0));
}

/// ZEROS_LIKE: zeros of x's shape and element type (float32, int32 or bool)
/// -> a splat tosa.const (x itself is not read: 0 * x would keep NaN).
LogicalResult convertZerosLike(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = x->getType().cast<RankedTensorType>();
  Type element = type.getElementType();
  if (!element.isF32() && !element.isInteger(32) && !element.isInteger(1))
    return ctx.fail("input 0 has element type " + typeText(element) +
                    "; supported: float32, int32, bool");
  Attribute zero = element.isF32() ? Attribute(ctx.builder().getF32FloatAttr(0.0f))
                                   : Attribute(ctx.builder().getIntegerAttr(element, 0));
  auto attr = DenseElementsAttr::get(type, zero);
  return ctx.setOutput(0, ctx.create<tosa::ConstOp>(type, attr));
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
  table[BuiltinOperator::FLOOR_DIV] = convertFloorDiv;
  table[BuiltinOperator::FLOOR_MOD] = convertFloorMod;
  table[BuiltinOperator::ADD_N] = convertAddN;
  // Activations.
  table[BuiltinOperator::RELU] = convertRelu;
  table[BuiltinOperator::RELU6] = convertRelu6;
  table[BuiltinOperator::RELU_N1_TO_1] = convertReluN1To1;
  table[BuiltinOperator::LOGISTIC] = convertLogistic;
  table[BuiltinOperator::LEAKY_RELU] = convertLeakyRelu;
  table[BuiltinOperator::HARD_SWISH] = convertHardSwish;
  table[BuiltinOperator::ELU] = convertElu;
  // Unary math.
  table[BuiltinOperator::TANH] = convertTanh;
  table[BuiltinOperator::EXP] = convertExp;
  table[BuiltinOperator::LOG] = convertLog;
  table[BuiltinOperator::NEG] = convertNeg;
  table[BuiltinOperator::ABS] = convertAbs;
  table[BuiltinOperator::SQRT] = convertSqrt;
  table[BuiltinOperator::RSQRT] = convertRsqrt;
  table[BuiltinOperator::FLOOR] = convertFloor;
  table[BuiltinOperator::CEIL] = convertCeil;
  table[BuiltinOperator::ROUND] = convertRound;
  table[BuiltinOperator::SQUARE] = convertSquare;
  table[BuiltinOperator::SIN] = convertSin;
  table[BuiltinOperator::COS] = convertCos;
  table[BuiltinOperator::ZEROS_LIKE] = convertZerosLike;
}

std::string typeText(Type element) {
  if (element.isF32())
    return "float32";
  if (element.isInteger(1))
    return "bool";
  if (element.isInteger(32))
    return "int32";
  if (element.isInteger(8))
    return "int8";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << element;
  return os.str();
}

std::string typeText(RankedTensorType type) {
  return shapeString(type.getShape()) + " " + typeText(type.getElementType());
}

FailureOr<llvm::SmallVector<Value, 4>> broadcastOperands(OpContext &ctx, int count) {
  llvm::SmallVector<Value, 4> values;
  int64_t rank = static_cast<int64_t>(ctx.outputShape(0).size());
  for (int i = 0; i < count; ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    values.push_back(*v);
    rank = std::max(rank, v->getType().cast<RankedTensorType>().getRank());
  }
  for (Value &v : values)
    v = ctx.broadcastRank(v, rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = 1;
    for (Value v : values) {
      int64_t n = v.getType().cast<RankedTensorType>().getDimSize(d);
      if (n != 1 && size != 1 && n != size)
        return ctx.fail("input shapes do not broadcast (dimension " + llvm::Twine(d) + ": " +
                        llvm::Twine(size) + " vs " + llvm::Twine(n) + ")");
      size = std::max(size, n);
    }
  }
  return values;
}

} // namespace kiln::tfl
