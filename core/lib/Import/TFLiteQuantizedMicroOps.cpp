//===- TFLiteQuantizedMicroOps.cpp - int8 operators of TFLite Micro --------===//
//
// int8 forms of operators whose integer arithmetic TensorFlow Lite Micro's
// reference kernels define (tensorflow/lite/micro/kernels/*.cc; TFLite 2.9
// has no int8 kernel for several of them): ADD_N and CUMSUM (the 20-bit
// left-shifted sum of add_n.cc / cumsum.cc, whose accumulator starts at
// minus the input zero point), CAST (static_cast of the stored values,
// cast.cc), FILL (the stored value copied, fill.cc), ZEROS_LIKE (stored
// zeros, zeros_like.cc), EMBEDDING_LOOKUP (rows copied, or dequantized for a
// float32 output, embedding_lookup.cc) and ELU (a 256-entry table,
// elu.cc). Shared builders: TFLiteQuantizedOps.h.
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteQuantizedOps.h"
#include "TosaMath.h"

#include <cmath>

using namespace mlir;

namespace kiln::tfl {
namespace {
using namespace quant;

/// The left shift of ADD_N's and CUMSUM's int8 sums (kAddNIntegerShift,
/// kCumSumIntegerShift).
constexpr int kSumShift = 20;

/// The common int8 quantization of inputs 0 .. count-1, checked as TFLite
/// Micro's Prepare does: every input has input 0's scale and zero point.
FailureOr<const TensorQuant *> sharedInputQuant(OpContext &ctx, int count) {
  auto first = inQuant(ctx, 0);
  if (failed(first))
    return failure();
  if ((*first)->perChannel())
    return ctx.fail("input 0 is quantized per channel; int8 " + llvm::Twine(ctx.name()) +
                    " takes per-tensor quantization");
  for (int i = 1; i < count; ++i) {
    auto q = inQuant(ctx, i);
    if (failed(q))
      return failure();
    if ((*q)->scale() != (*first)->scale() || (*q)->zeroPoint() != (*first)->zeroPoint())
      return ctx.fail("input " + llvm::Twine(i) + " has " + describeQuant(**q) + ", input 0 " +
                      describeQuant(**first) + "; int8 " + ctx.name() +
                      " adds inputs of one scale and zero point (TFLite Micro)");
  }
  return *first;
}

/// (x - zp) * 2^19 as i32: TFLite Micro's MultiplyByQuantizedMultiplier
/// SmallerThanOneExp((x - zp) << 20, multiplier of s / 2s = 0.5), which is
/// exact. One tosa.rescale.
FailureOr<Value> halfShifted(OpContext &ctx, Value x, const TensorQuant &q) {
  return rescale(ctx, x, i32Type(ctx), q.zeroPoint(), 0, {std::ldexp(1.0, kSumShift - 1)});
}

/// The end of ADD_N / CUMSUM int8: `sum` (the i32 sum of halfShifted terms)
/// plus the accumulator's start, -zp * 2^19, rescaled by 2 s / (2^20 s_out)
/// to the output zero point and saturated; binds output 0.
LogicalResult finishShiftedSum(OpContext &ctx, Value sum, const TensorQuant &in,
                               const TensorQuant &out) {
  llvm::SmallVector<int64_t> ones(shapeOf(sum).size(), 1);
  Value start = ctx.constI32(ones, {-in.zeroPoint() * (1 << (kSumShift - 1))});
  Value acc = ctx.create<tosa::AddOp>(sum.getType(), sum, start);
  double twice = 2.0 * static_cast<double>(in.scale());
  double real = twice / (std::ldexp(1.0, kSumShift) * static_cast<double>(out.scale()));
  if (!(real < 1.0))
    return ctx.fail("the output scale " + shortNumber(out.scale()) +
                    " is below 2^-19 of the input scale; TFLite Micro's int8 " + ctx.name() +
                    " needs an output multiplier below 1");
  auto result = rescale(ctx, acc, i8Type(ctx), 0, out.zeroPoint(), {real});
  if (failed(result))
    return failure();
  return ctx.setOutput(0, *result);
}

/// ADD_N int8 (TFLite Micro add_n.cc, reference_ops::AddN): inputs of one
/// shape, scale and zero point zp; out = zo + MBQM(2^19 (sum_j (x_j - zp)
/// - zp), 2 s / (2^20 s_out)), saturated. The accumulator starts at the
/// rescaled -zp (its "x = 0" is the input offset), so the result is one zp
/// below the real sum for a nonzero zero point: TFLite Micro's arithmetic.
LogicalResult convertAddN(OpContext &ctx) {
  int n = ctx.numInputs();
  if (n < 2)
    return ctx.fail("has " + llvm::Twine(n) +
                    " input(s); TFLite Micro's int8 ADD_N takes 2 or more");
  auto in = sharedInputQuant(ctx, n);
  auto out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  if (ctx.inputTensor(0)->type() != schema::TensorType::INT8 ||
      ctx.outputTensor(0)->type() != schema::TensorType::INT8)
    return ctx.fail("takes INT8 inputs and output here (TFLite Micro's ADD_N: FLOAT32 or INT8)");
  Value sum;
  for (int i = 0; i < n; ++i) {
    auto x = ctx.input(i);
    if (failed(x))
      return failure();
    if (i > 0 && shapeOf(*x) != shapeOf(sum))
      return ctx.fail("input " + llvm::Twine(i) + " is " + shapeString(shapeOf(*x)) + ", input 0 " +
                      shapeString(shapeOf(sum)) + "; ADD_N adds tensors of one shape");
    auto term = halfShifted(ctx, *x, **in);
    if (failed(term))
      return failure();
    sum = i == 0 ? *term : ctx.create<tosa::AddOp>(sum.getType(), sum, *term);
  }
  return finishShiftedSum(ctx, sum, **in, **out);
}

/// CUMSUM int8 (TFLite Micro cumsum.cc, reference_ops::CumSum int8): along
/// the constant axis, out[i] = zo + MBQM(2^19 (sum_{j <= i} (x_j - zp) -
/// zp), 2 s / (2^20 s_out)) (j < i when exclusive; from the end when
/// reverse). The prefix sum is log2(n) shifted adds (as the float CUMSUM).
LogicalResult convertCumsum(OpContext &ctx) {
  auto in = sharedInputQuant(ctx, 1);
  auto out = outQuant(ctx);
  auto x = ctx.input(0);
  if (failed(in) || failed(out) || failed(x))
    return failure();
  if (ctx.inputTensor(0)->type() != schema::TensorType::INT8)
    return ctx.fail("takes an INT8 input here (TFLite Micro's CUMSUM: FLOAT32 or INT8)");
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  if (shape.empty())
    return ctx.fail("expects an input of rank 1 or more");
  if (!ctx.isConstant(1))
    return ctx.fail("the axis (input 1) must be a constant; a computed axis is not supported");
  auto axisValues = ctx.constantInts(1);
  if (failed(axisValues))
    return failure();
  int64_t rank = shape.size();
  if (axisValues->size() != 1 || (*axisValues)[0] < -rank || (*axisValues)[0] >= rank)
    return ctx.fail("the axis (input 1) must hold one value in [" + llvm::Twine(-rank) + ", " +
                    llvm::Twine(rank - 1) + "]");
  int64_t axis = (*axisValues)[0] < 0 ? (*axisValues)[0] + rank : (*axisValues)[0];
  bool exclusive = false, reverse = false;
  if (const auto *o = ctx.options<schema::CumsumOptions>()) {
    exclusive = o->exclusive();
    reverse = o->reverse();
  }
  auto terms = halfShifted(ctx, *x, **in);
  if (failed(terms))
    return failure();
  // v shifted by s along the axis: s zeros in front, the last s dropped.
  auto shifted = [&](Value v, int64_t s) {
    llvm::SmallVector<int64_t> before(rank, 0), after(rank, 0), start(rank, 0);
    before[axis] = s;
    return ctx.slice(ctx.padZeros(v, before, after), start, shape);
  };
  Value v = *terms;
  if (reverse)
    v = ctx.reverseAxis(v, axis);
  if (exclusive)
    v = shifted(v, 1);
  for (int64_t s = 1; s < shape[axis]; s *= 2)
    v = ctx.create<tosa::AddOp>(v.getType(), v, shifted(v, s));
  if (reverse)
    v = ctx.reverseAxis(v, axis);
  return finishShiftedSum(ctx, v, **in, **out);
}

/// The element type CAST reads or writes for TFLite type `t`, or null when
/// TFLite Micro's cast.cc has no such case (`output`: bool is an input
/// type only there).
Type castElement(OpContext &ctx, schema::TensorType t, bool output) {
  auto b = ctx.builder();
  switch (t) {
  case schema::TensorType::INT8:
    return b.getIntegerType(8);
  case schema::TensorType::INT32:
    return b.getI32Type();
  case schema::TensorType::FLOAT32:
    return b.getF32Type();
  case schema::TensorType::BOOL:
    return output ? Type() : b.getI1Type();
  default:
    return Type();
  }
}

/// CAST with an int8 side (TFLite Micro cast.cc: static_cast of the stored
/// values, quantization ignored): INT8 -> INT32 / FLOAT32 (exact), INT32 ->
/// INT8 (the low 8 bits, two's complement), FLOAT32 -> INT8 (truncated
/// toward zero; C++ leaves values outside [-128, 127] undefined, Kiln
/// saturates them), BOOL -> INT8 (0 / 1). UINT8 and casts to BOOL are not
/// in cast.cc and are refused.
LogicalResult convertCast(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  schema::TensorType from = ctx.inputTensor(0)->type(), to = ctx.outputTensor(0)->type();
  Type inElement = castElement(ctx, from, false), outElement = castElement(ctx, to, true);
  if (!inElement || !outElement)
    return ctx.fail(std::string("casts ") + schema::EnumNameTensorType(from) + " to " +
                    schema::EnumNameTensorType(to) +
                    "; int8 casts supported (TFLite Micro cast.cc): INT8 to INT8, INT32, "
                    "FLOAT32 and INT32, FLOAT32, BOOL to INT8");
  auto shape = shapeOf(*x);
  auto target = tensorOf(shape, outElement);
  if (inElement == outElement)
    return ctx.setOutput(0, *x);
  if (inElement.isInteger(1)) {
    Value one = ctx.scalarOf(outElement, 1, shape.size()),
          zero = ctx.scalarOf(outElement, 0, shape.size());
    return ctx.setOutput(0, tosa_math::select(ctx, *x, one, zero));
  }
  if (inElement.isF32()) {
    // Truncate toward zero in float, saturate to the int8 range, convert.
    Value bounded = ctx.clamp(*x, -128.0f, 127.0f);
    return ctx.setOutput(0, tosa_math::truncatingCast(ctx, bounded, target));
  }
  if (inElement.isInteger(32)) {
    // The low byte as a signed value: ((x + 128) & 255) - 128, then a cast
    // that is exact on [-128, 127].
    auto scalar = [&](double v) { return tosa_math::scalarLike(ctx, v, *x); };
    Value low = tosa_math::binary<tosa::BitwiseAndOp>(
        ctx, tosa_math::binary<tosa::AddOp>(ctx, *x, scalar(128)), scalar(255));
    Value centered = tosa_math::binary<tosa::SubOp>(ctx, low, scalar(128));
    return ctx.setOutput(0, ctx.create<tosa::CastOp>(target, centered));
  }
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(target, *x));
}

/// ZEROS_LIKE int8 (TFLite Micro zeros_like.cc): stored zeros (the real
/// value -zp * scale where the zero point is not 0), a splat constant.
LogicalResult convertZerosLike(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  if (ctx.inputTensor(0)->type() != schema::TensorType::INT8 ||
      ctx.outputTensor(0)->type() != schema::TensorType::INT8)
    return ctx.fail(std::string("takes ") + schema::EnumNameTensorType(ctx.inputTensor(0)->type()) +
                    " to " + schema::EnumNameTensorType(ctx.outputTensor(0)->type()) +
                    "; int8 ZEROS_LIKE supported (TFLite Micro zeros_like.cc): INT8 to INT8");
  auto type = tensorOf(shapeOf(*x), i8Type(ctx));
  auto attr = DenseElementsAttr::get(type, ctx.builder().getIntegerAttr(i8Type(ctx), 0));
  return ctx.setOutput(0, ctx.create<tosa::ConstOp>(type, attr));
}

/// FILL int8 (TFLite Micro fill.cc): the stored int8 value (input 1, a
/// scalar of the output's type) in every element of the constant dims
/// (input 0); quantization is not read (bytes copied).
LogicalResult convertFill(OpContext &ctx) {
  schema::TensorType valueType = ctx.inputTensor(1)->type(), outType = ctx.outputTensor(0)->type();
  if (valueType != outType || valueType != schema::TensorType::INT8)
    return ctx.fail(
        std::string("fills ") + schema::EnumNameTensorType(outType) + " with a " +
        schema::EnumNameTensorType(valueType) +
        " value; int8 FILL takes an INT8 value for an INT8 output (TFLite Micro fill.cc)");
  if (!ctx.isConstant(0))
    return ctx.fail("dims (input 0) must be a constant; computed dims are not supported");
  auto dims = ctx.constantInts(0);
  auto value = ctx.input(1);
  if (failed(dims) || failed(value))
    return failure();
  if (llvm::any_of(*dims, [](int64_t d) { return d <= 0; }))
    return ctx.fail("dims " + shapeString(*dims) +
                    " must be positive (empty tensors are not supported)");
  if (shapeOf(*value).size() != 0)
    return ctx.fail("value (input 1) must be a scalar, not " + shapeString(shapeOf(*value)));
  Value scalar = ctx.reshape(*value, llvm::SmallVector<int64_t>(dims->size(), 1));
  return ctx.setOutput(0, ctx.broadcastTo(scalar, *dims));
}

/// EMBEDDING_LOOKUP with int8 values (TFLite Micro embedding_lookup.cc):
/// an INT8 output copies the rows (GATHER's converter, stored bytes); a
/// FLOAT32 output (hybrid) dequantizes them, scale * q, which needs zero
/// point 0. ids (input 0) are 1-D INT32; computed ids outside [0, rows) are
/// clamped (TFLite Micro stops with an error there).
LogicalResult convertEmbeddingLookup(OpContext &ctx) {
  if (ctx.inputShape(0).size() != 1 || ctx.inputTensor(0)->type() != schema::TensorType::INT32)
    return ctx.fail("ids (input 0) must be a 1-D INT32 tensor");
  if (ctx.inputTensor(1)->type() != schema::TensorType::INT8)
    return ctx.fail(std::string("value (input 1) is ") +
                    schema::EnumNameTensorType(ctx.inputTensor(1)->type()) +
                    "; TFLite Micro's EMBEDDING_LOOKUP takes FLOAT32 or INT8 values");
  schema::TensorType outType = ctx.outputTensor(0)->type();
  if (outType == schema::TensorType::INT8)
    return converters().at(BuiltinOperator::EMBEDDING_LOOKUP)(ctx);
  if (outType != schema::TensorType::FLOAT32)
    return ctx.fail(std::string("the output is ") + schema::EnumNameTensorType(outType) +
                    "; int8 values give an INT8 or FLOAT32 (dequantized) output");
  auto q = inQuant(ctx, 1);
  auto ids = ctx.input(0), value = ctx.input(1);
  if (failed(q) || failed(ids) || failed(value))
    return failure();
  if ((*q)->perChannel() || (*q)->zeroPoint() != 0)
    return ctx.fail(
        "value (input 1) has " + describeQuant(**q) +
        "; the hybrid (FLOAT32 output) EMBEDDING_LOOKUP takes one scale and zero point 0");
  llvm::ArrayRef<int64_t> vs = shapeOf(*value);
  if (vs.size() < 2)
    return ctx.fail("value (input 1) must have rank 2 or more, not " + shapeString(vs));
  int64_t rows = vs[0], columns = 1, k = shapeOf(*ids)[0];
  for (int64_t d : vs.drop_front())
    columns *= d;
  Value index = clampInt(ctx, ctx.reshape(*ids, {1, k}), 0, rows - 1);
  Value picked = ctx.create<tosa::GatherOp>(tensorOf({1, k, columns}, i8Type(ctx)),
                                            ctx.reshape(*value, {1, rows, columns}), index);
  auto f32 = tensorOf({1, k, columns}, ctx.builder().getF32Type());
  Value real = ctx.create<tosa::MulOp>(f32, ctx.create<tosa::CastOp>(f32, picked),
                                       ctx.constF32({1, 1, 1}, {(*q)->scale()}),
                                       ctx.builder().getI32IntegerAttr(0));
  std::vector<int64_t> outShape{k};
  outShape.insert(outShape.end(), vs.begin() + 1, vs.end());
  return ctx.setOutput(0, ctx.reshape(real, outShape));
}

/// ELU int8 (TFLite Micro elu.cc, TFLite elu's PopulateLookupTable): a
/// 256-entry table of zo + round(f(s_in (q - zi)) / s_out), f(v) = v < 0 ?
/// expf(v) - 1 : v, all in float, saturated.
LogicalResult convertElu(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto x = ctx.input(0);
  if (failed(in) || failed(out) || failed(x))
    return failure();
  if (ctx.inputTensor(0)->type() != schema::TensorType::INT8 ||
      ctx.outputTensor(0)->type() != schema::TensorType::INT8)
    return ctx.fail("takes an INT8 input and output here (TFLite Micro's ELU: FLOAT32 or INT8)");
  const TensorQuant &i = **in, &o = **out;
  const float inverseScale = 1.0f / o.scale();
  return ctx.setOutput(0, lookupTable(ctx, *x, [&](int32_t q) {
                         float v = i.scale() * static_cast<float>(q - i.zeroPoint());
                         float f = v < 0.0f ? std::exp(v) - 1.0f : v;
                         float rounded = std::round(f * inverseScale);
                         return saturatingCast(rounded + static_cast<float>(o.zeroPoint()));
                       }));
}

} // namespace

void registerQuantizedMicroOps(ConverterTable &table) {
  table[BuiltinOperator::ADD_N] = convertAddN;
  table[BuiltinOperator::CUMSUM] = convertCumsum;
  table[BuiltinOperator::CAST] = convertCast;
  table[BuiltinOperator::ZEROS_LIKE] = convertZerosLike;
  table[BuiltinOperator::FILL] = convertFill;
  table[BuiltinOperator::EMBEDDING_LOOKUP] = convertEmbeddingLookup;
  table[BuiltinOperator::ELU] = convertElu;
}

} // namespace kiln::tfl
