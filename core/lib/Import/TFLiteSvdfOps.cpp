//===- TFLiteSvdfOps.cpp - SVDF (float32 and int8) -> TOSA -----------------===//
//
// SVDF (builtin 27): a fully connected layer factorized into rank-`rank`
// feature and time filters over a memory of the last `memory_size` steps
// (https://research.google.com/pubs/archive/43813.pdf). Inputs:
//   0 input            [batch, input_size]
//   1 weights_feature  [num_filters, input_size]
//   2 weights_time     [num_filters, memory_size]
//   3 bias             [num_units], optional (-1); num_units = num_filters / rank
//   4 activation_state [batch, memory_size * num_filters], a variable tensor
//                      holding, per batch and filter, the feature outputs of
//                      the last memory_size steps, oldest first
// Output 0 [batch, num_units]. One invocation:
//   state[b, f, :] <- state[b, f, 1:] ++ [sum_i input[b, i] weights_feature[f, i]]
//   out[b, u] = act(bias[u] + sum_{r < rank} sum_m state[b, u*rank + r, m]
//                                              weights_time[u*rank + r, m])
// (float act: NONE, RELU, RELU_N1_TO_1, RELU6 or TANH, the last a real tanh
// as TFLite's ApplyActivationToVector computes it).
// Semantics: tensorflow/lite/kernels/svdf.cc and kernels/internal/reference/
// svdf.h (EvalFloatSVDF, EvalIntegerSVDF; TFLite 2.9 shifts the state before
// the feature product, as here), and TensorFlow Lite Micro's
// tensorflow/lite/micro/kernels/svdf_common.cc (EvalIntegerSvdfReference)
// for the integer forms:
//   - int8 input and weights_feature, int16 weights_time and state, int32
//     bias, int8 output (TFLite and TFLM);
//   - the same with int8 weights_time and an int8 state of any zero point
//     (TFLM only: TFLite 2.9's kernel reads both as int16).
// Integer arithmetic: the feature dot product sum (x - zx) w in int32 is
// multiplied by scale1 = float(float(sx * swf) / sstate) (TFLite's
// QuantizeMultiplier / MultiplyByQuantizedMultiplier), clamped to the state
// type's range and offset by the state's zero point (TFLM stores
// zs + clamp(...) into the state type, wrapping); the time products
// sum (s - zs) wt in int32 are summed over the rank with the bias and
// multiplied by scale2 = float(float(sstate * swt) / sout), offset by the
// output zero point and saturated to int8. The integer kernels apply no
// fused activation (TFLite 2.9 requires RELU there but ignores it, TFLM
// ignores it). Hybrid SVDF (float input, int8 weights) is refused by
// checkOperatorTypes.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"
#include "TosaMath.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {

/// The sizes of one SVDF, read from its inputs and checked as TFLite's
/// Prepare does (svdf.cc; TFLM svdf_common.cc PrepareSvdf).
struct SvdfShape {
  int64_t batch, inputSize, filters, memory, rank, units;
};

FailureOr<SvdfShape> svdfShape(OpContext &ctx) {
  const auto *opts = ctx.options<schema::SVDFOptions>();
  if (!opts)
    return ctx.fail("missing SVDFOptions");
  if (ctx.numInputs() != 5 || ctx.numOutputs() != 1)
    return ctx.fail("takes 5 inputs (input, weights_feature, weights_time, bias, "
                    "activation_state) and 1 output; the model gives " +
                    llvm::Twine(ctx.numInputs()) + " and " + llvm::Twine(ctx.numOutputs()));
  for (int i : {0, 1, 2, 4})
    if (!ctx.hasInput(i))
      return ctx.fail("input " + llvm::Twine(i) +
                      " is missing; only the bias (input 3) is optional");
  auto x = ctx.inputShape(0), wf = ctx.inputShape(1), wt = ctx.inputShape(2),
       st = ctx.inputShape(4);
  auto shapeText = [](llvm::ArrayRef<int64_t> s) {
    std::string t = "[";
    for (size_t d = 0; d < s.size(); ++d)
      t += (d ? ", " : "") + std::to_string(s[d]);
    return t + "]";
  };
  if (x.size() != 2 || wf.size() != 2 || wt.size() != 2 || st.size() != 2)
    return ctx.fail("expects 2-D input, weights_feature, weights_time and activation_state; "
                    "the model gives " +
                    shapeText(x) + ", " + shapeText(wf) + ", " + shapeText(wt) + " and " +
                    shapeText(st));
  SvdfShape s{x[0], x[1], wf[0], wt[1], opts->rank(), 0};
  if (s.rank <= 0 || s.filters % s.rank != 0)
    return ctx.fail("rank " + llvm::Twine(s.rank) + " does not divide the " +
                    llvm::Twine(s.filters) + " filters (weights_feature " + shapeText(wf) +
                    "); num_units = num_filters / rank needs a positive divisor");
  s.units = s.filters / s.rank;
  if (wf[1] != s.inputSize || wt[0] != s.filters)
    return ctx.fail("weights_feature " + shapeText(wf) + " and weights_time " + shapeText(wt) +
                    " do not fit the input " + shapeText(x) +
                    " (expected [num_filters, input_size] and [num_filters, memory_size])");
  if (st[0] != s.batch || st[1] != s.memory * s.filters)
    return ctx.fail("activation_state " + shapeText(st) + " is not [batch, memory_size * " +
                    "num_filters] = [" + llvm::Twine(s.batch) + ", " +
                    llvm::Twine(s.memory * s.filters) + "]");
  if (ctx.hasInput(3)) {
    auto bias = ctx.inputShape(3);
    if (bias.size() != 1 || bias[0] != s.units)
      return ctx.fail("bias " + shapeText(bias) + " is not [num_units] = [" + llvm::Twine(s.units) +
                      "]");
  }
  if (!ctx.isVariable(4))
    return ctx.fail("activation_state (input 4) is not a variable tensor (is_variable); "
                    "SVDF keeps its memory in a variable tensor");
  auto out = ctx.outputShape(0);
  if (out.size() != 2 || out[0] != s.batch || out[1] != s.units)
    return ctx.fail("output " + shapeText(out) + " is not [batch, num_units] = [" +
                    llvm::Twine(s.batch) + ", " + llvm::Twine(s.units) + "]");
  return s;
}

/// The state after this step's shift: `state` [batch, filters, memory]
/// without its oldest column, `column` [batch, filters, 1] appended.
Value shiftIn(OpContext &ctx, const SvdfShape &s, Value state, Value column) {
  if (s.memory == 1)
    return column;
  Value kept = ctx.slice(state, {0, 0, 1}, {s.batch, s.filters, s.memory - 1});
  return ctx.concat({kept, column}, 2);
}

/// Sums `perFilter` [batch, filters, 1] over each unit's `rank` filters:
/// [batch, units].
Value sumOverRank(OpContext &ctx, const SvdfShape &s, Value perFilter) {
  Type element = tosa_math::elementOf(perFilter);
  Value grouped = ctx.reshape(perFilter, {s.batch, s.units, s.rank});
  Value summed =
      ctx.create<tosa::ReduceSumOp>(RankedTensorType::get({s.batch, s.units, 1}, element), grouped,
                                    ctx.builder().getI64IntegerAttr(2));
  return ctx.reshape(summed, {s.batch, s.units});
}

/// sum_m state[b, f, m] * weights[f, m]: [batch, filters, 1].
Value timeProduct(OpContext &ctx, const SvdfShape &s, Value state, Value weights) {
  Type element = tosa_math::elementOf(state);
  Value w = ctx.reshape(weights, {1, s.filters, s.memory});
  Value products = tosa_math::mul(ctx, state, w);
  return ctx.create<tosa::ReduceSumOp>(RankedTensorType::get({s.batch, s.filters, 1}, element),
                                       products, ctx.builder().getI64IntegerAttr(2));
}

/// Float32 SVDF (reference_ops::EvalFloatSVDF).
LogicalResult convertSvdf(OpContext &ctx) {
  auto shape = svdfShape(ctx);
  if (failed(shape))
    return failure();
  const SvdfShape &s = *shape;
  for (int i : {0, 1, 2, 3, 4})
    if (ctx.hasInput(i) && ctx.inputTensor(i)->type() != schema::TensorType::FLOAT32)
      return ctx.fail(std::string("input ") + std::to_string(i) + " is " +
                      schema::EnumNameTensorType(ctx.inputTensor(i)->type()) +
                      "; float SVDF takes FLOAT32 tensors throughout (the integer form: int8 "
                      "input and weights_feature, int16 or int8 weights_time and state)");
  auto x = ctx.input(0), wf = ctx.input(1), wt = ctx.input(2), state = ctx.input(4);
  if (failed(x) || failed(wf) || failed(wt) || failed(state))
    return failure();
  Value zeros = ctx.constF32({s.filters}, {0.0f});
  Value feature = ctx.create<tosa::FullyConnectedOp>(ctx.f32Type({s.batch, s.filters}), *x, *wf,
                                                     zeros, nullptr);
  Value column = ctx.reshape(feature, {s.batch, s.filters, 1});
  Value old = ctx.reshape(*state, {s.batch, s.filters, s.memory});
  Value next = shiftIn(ctx, s, old, column);
  Value out = sumOverRank(ctx, s, timeProduct(ctx, s, next, *wt));
  if (ctx.hasInput(3)) {
    auto bias = ctx.input(3);
    if (failed(bias))
      return failure();
    out = tosa_math::binary<tosa::AddOp>(ctx, out, ctx.reshape(*bias, {1, s.units}));
  }
  // ApplyActivationToVector (tensor_utils) applies TANH as tanh, unlike the
  // clamp ranges of other float kernels (OpContext::applyActivation).
  auto act = ctx.options<schema::SVDFOptions>()->fused_activation_function();
  FailureOr<Value> activated = out;
  if (act == schema::ActivationFunctionType::TANH)
    activated = tosa_math::unary<tosa::TanhOp>(ctx, out);
  else if (act == schema::ActivationFunctionType::SIGN_BIT)
    return ctx.fail("fused activation SIGN_BIT is not supported (supported: NONE, RELU, "
                    "RELU_N1_TO_1, RELU6, TANH)");
  else
    activated = ctx.applyActivation(out, act);
  if (failed(activated))
    return failure();
  if (failed(ctx.assignVariable(4, ctx.reshape(next, {s.batch, s.memory * s.filters}))))
    return failure();
  return ctx.setOutput(0, *activated);
}

// --- Integer SVDF -----------------------------------------------------------

/// Scale and zero point of an INT16 (or int8) tensor as the file stores
/// them: the importer's TensorQuant covers int8/uint8 tensors only.
struct PlainQuant {
  float scale = 0;
  int64_t zeroPoint = 0;
};

FailureOr<PlainQuant> plainQuant(OpContext &ctx, const schema::Tensor *t, const char *what) {
  const schema::QuantizationParameters *q = t ? t->quantization() : nullptr;
  if (!q || !q->scale() || q->scale()->size() != 1 || !(q->scale()->Get(0) > 0.0f) ||
      !std::isfinite(q->scale()->Get(0)))
    return ctx.fail(std::string(what) + " needs one positive quantization scale (per tensor)");
  PlainQuant p;
  p.scale = q->scale()->Get(0);
  p.zeroPoint = q->zero_point() && q->zero_point()->size() ? q->zero_point()->Get(0) : 0;
  return p;
}

/// The integer SVDF's quantization, checked against the type rules of
/// TFLite's and TFLM's Prepare.
struct SvdfQuant {
  const TensorQuant *in, *feature, *out;
  PlainQuant time, state;
  Type stateType; ///< i16 or i8
};

FailureOr<SvdfQuant> svdfQuant(OpContext &ctx) {
  using T = schema::TensorType;
  auto typeOf = [&](int i) { return ctx.inputTensor(i)->type(); };
  if (typeOf(0) != T::INT8 || typeOf(1) != T::INT8 || ctx.outputTensor(0)->type() != T::INT8)
    return ctx.fail(std::string("integer SVDF takes an INT8 input, INT8 weights_feature and an "
                                "INT8 output; the model gives ") +
                    schema::EnumNameTensorType(typeOf(0)) + ", " +
                    schema::EnumNameTensorType(typeOf(1)) + " and " +
                    schema::EnumNameTensorType(ctx.outputTensor(0)->type()));
  T stateType = typeOf(4);
  if ((stateType != T::INT16 && stateType != T::INT8) || typeOf(2) != stateType)
    return ctx.fail(std::string("weights_time and activation_state are ") +
                    schema::EnumNameTensorType(typeOf(2)) + " and " +
                    schema::EnumNameTensorType(stateType) +
                    "; integer SVDF takes both INT16 (TFLite, TFLM) or both INT8 (TFLM)");
  if (ctx.hasInput(3) && typeOf(3) != T::INT32)
    return ctx.fail(std::string("the bias is ") + schema::EnumNameTensorType(typeOf(3)) +
                    "; integer SVDF takes an INT32 bias");
  SvdfQuant q;
  auto in = quant::inQuant(ctx, 0), feature = quant::inQuant(ctx, 1), out = quant::outQuant(ctx);
  if (failed(in) || failed(feature) || failed(out))
    return failure();
  if ((*feature)->perChannel() || (*feature)->zeroPoint() != 0)
    return ctx.fail("weights_feature must be quantized per tensor with zero point 0, as "
                    "TFLite's integer SVDF reads it");
  auto time = plainQuant(ctx, ctx.inputTensor(2), "weights_time");
  auto state = plainQuant(ctx, ctx.inputTensor(4), "activation_state");
  if (failed(time) || failed(state))
    return failure();
  if (time->zeroPoint != 0)
    return ctx.fail("weights_time has zero point " + llvm::Twine(time->zeroPoint) +
                    "; integer SVDF reads it as 0");
  if (stateType == T::INT16 && state->zeroPoint != 0)
    return ctx.fail("the INT16 activation_state has zero point " + llvm::Twine(state->zeroPoint) +
                    "; TFLite's int16 SVDF state is symmetric (zero point 0)");
  q.in = *in;
  q.feature = *feature;
  q.out = *out;
  q.time = *time;
  q.state = *state;
  q.stateType = ctx.builder().getIntegerType(stateType == T::INT16 ? 16 : 8);
  return q;
}

/// `value` (i32) as the state type: TFLM assigns zs + clamp(...) to it,
/// which wraps an int8 state of non-zero zero point; ((v + 2^(n-1)) mod 2^n)
/// - 2^(n-1) in i32 first, so the narrowing cast is exact.
Value wrapToStateType(OpContext &ctx, Value value, Type stateType) {
  int bits = stateType.getIntOrFloatBitWidth();
  int64_t half = int64_t{1} << (bits - 1);
  auto i32 = ctx.builder().getI32Type();
  Value shifted = tosa_math::binary<tosa::AddOp>(ctx, value, ctx.scalarOf(i32, double(half), 3));
  Value masked = tosa_math::binary<tosa::BitwiseAndOp>(ctx, shifted,
                                                       ctx.scalarOf(i32, double(2 * half - 1), 3));
  return tosa_math::binary<tosa::SubOp>(ctx, masked, ctx.scalarOf(i32, double(half), 3));
}

/// The new state column: clamp(MBQM(sum (x - zx) wf, scale1)) + zs, in
/// i32, [batch, filters, 1].
FailureOr<Value> featureColumn(OpContext &ctx, const SvdfShape &s, const SvdfQuant &q, Value x,
                               Value wf) {
  Value zeros = ctx.constI32({s.filters}, {0});
  quant::ProductQuant pq{q.in, q.feature, q.out};
  auto folded = quant::foldInputZeroPoint(ctx, wf, zeros, pq, s.filters, true);
  if (failed(folded))
    return failure();
  auto i32 = ctx.builder().getI32Type();
  Value acc = ctx.create<tosa::FullyConnectedOp>(RankedTensorType::get({s.batch, s.filters}, i32),
                                                 x, wf, folded->bias, folded->quantization);
  double scale1 = static_cast<double>((q.in->scale() * q.feature->scale()) / q.state.scale);
  auto scaled = quant::rescale(ctx, acc, i32, 0, 0, {scale1});
  if (failed(scaled))
    return failure();
  int bits = q.stateType.getIntOrFloatBitWidth();
  int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
  Value column = quant::clampInt(ctx, ctx.reshape(*scaled, {s.batch, s.filters, 1}), lo, hi);
  if (q.state.zeroPoint == 0)
    return column;
  Value offset =
      tosa_math::binary<tosa::AddOp>(ctx, column, ctx.scalarOf(i32, double(q.state.zeroPoint), 3));
  return wrapToStateType(ctx, offset, q.stateType);
}

/// Integer SVDF (TFLite reference_ops::EvalIntegerSVDF, TFLM
/// EvalIntegerSvdfReference).
LogicalResult convertQuantizedSvdf(OpContext &ctx) {
  auto shape = svdfShape(ctx);
  if (failed(shape))
    return failure();
  const SvdfShape &s = *shape;
  if (ctx.inputTensor(0)->type() == schema::TensorType::FLOAT32)
    return ctx.fail("is a hybrid SVDF (float32 input with int8 weights): not supported; "
                    "quantize the model fully (int8) or keep float32 weights");
  auto q = svdfQuant(ctx);
  if (failed(q))
    return failure();
  auto x = ctx.input(0), wf = ctx.input(1), wt = ctx.input(2), state = ctx.input(4);
  if (failed(x) || failed(wf) || failed(wt) || failed(state))
    return failure();
  auto i32 = ctx.builder().getI32Type();
  auto column = featureColumn(ctx, s, *q, *x, *wf);
  if (failed(column))
    return failure();
  auto toI32 = [&](Value v) {
    auto type = v.getType().cast<RankedTensorType>();
    return ctx.create<tosa::CastOp>(RankedTensorType::get(type.getShape(), i32), v);
  };
  Value old = toI32(ctx.reshape(*state, {s.batch, s.filters, s.memory}));
  Value next = shiftIn(ctx, s, old, *column);
  Value centered = next;
  if (q->state.zeroPoint != 0)
    centered =
        tosa_math::binary<tosa::SubOp>(ctx, next, ctx.scalarOf(i32, double(q->state.zeroPoint), 3));
  // weights_time widened to an i32 constant at import (the time products
  // are i32 anyway).
  auto wtValues = quant::constantValues(*wt);
  if (!wtValues)
    return ctx.fail("weights_time must be a constant tensor");
  std::vector<int32_t> wt32(wtValues->begin(), wtValues->end());
  Value weights = ctx.constI32({s.filters, s.memory}, wt32);
  Value acc = sumOverRank(ctx, s, timeProduct(ctx, s, centered, weights));
  if (ctx.hasInput(3)) {
    auto bias = ctx.input(3);
    if (failed(bias))
      return failure();
    acc = tosa_math::binary<tosa::AddOp>(ctx, acc, ctx.reshape(*bias, {1, s.units}));
  }
  double scale2 = static_cast<double>((q->state.scale * q->time.scale) / q->out->scale());
  auto out = quant::rescale(ctx, acc, quant::i8Type(ctx), 0, q->out->zeroPoint(), {scale2});
  if (failed(out))
    return failure();
  Value flat = ctx.reshape(next, {s.batch, s.memory * s.filters});
  Value stored = ctx.create<tosa::CastOp>(
      RankedTensorType::get({s.batch, s.memory * s.filters}, q->stateType), flat);
  if (failed(ctx.assignVariable(4, stored)))
    return failure();
  return ctx.setOutput(0, *out);
}

} // namespace

void registerSvdfOps(ConverterTable &table) {
  // float32; the integer SVDF is in the int8 table (registerQuantizedSvdfOps).
  table[BuiltinOperator::SVDF] = convertSvdf;
}

void registerQuantizedSvdfOps(ConverterTable &table) {
  table[BuiltinOperator::SVDF] = convertQuantizedSvdf;
}

} // namespace kiln::tfl
