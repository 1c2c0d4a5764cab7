//===- ONNXLossOps.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ===//
//
// The two loss operators of the default domain (opsets 12 and 13), which
// models exported for evaluation keep in their graphs. Both are static:
// the class each target picks is found by comparing the target with the
// class indices 0..C-1 (a one-hot mask), so no gather by run-time index is
// needed and a target outside [0, C) (ignore_index among them) selects no
// class and contributes 0.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {
namespace {

RankedTensorType typeOf(Value v) { return v.getType().cast<RankedTensorType>(); }

std::vector<int64_t> shapeOf(Value v) {
  auto s = typeOf(v).getShape();
  return {s.begin(), s.end()};
}

/// The numpy broadcast of `a` and `b` (same rank) with element type `element`.
RankedTensorType broadcastType(Value a, Value b, Type element) {
  std::vector<int64_t> sa = shapeOf(a), sb = shapeOf(b), out(sa.size());
  for (size_t d = 0; d < sa.size(); ++d)
    out[d] = sa[d] == 1 ? sb[d] : sa[d];
  return RankedTensorType::get(out, element);
}

template <typename OpTy> Value binary(NodeContext &ctx, Value a, Value b) {
  return ctx.create<OpTy>(broadcastType(a, b, typeOf(a).getElementType()), a, b);
}

Value mul(NodeContext &ctx, Value a, Value b) {
  return ctx.create<tosa::MulOp>(broadcastType(a, b, typeOf(a).getElementType()), a, b,
                                 ctx.builder().getI32IntegerAttr(0));
}

/// tosa.reduce_sum / reduce_max over `axis`, which stays as size 1.
template <typename OpTy> Value reduce(NodeContext &ctx, Value v, int64_t axis) {
  std::vector<int64_t> s = shapeOf(v);
  s[axis] = 1;
  return ctx.create<OpTy>(RankedTensorType::get(s, typeOf(v).getElementType()), v,
                          ctx.builder().getI64IntegerAttr(axis));
}

/// The sum of every element of `v`, as a rank-0 tensor.
Value sumAll(NodeContext &ctx, Value v) {
  for (int64_t d = 0; d < typeOf(v).getRank(); ++d)
    v = reduce<tosa::ReduceSumOp>(ctx, v, d);
  return ctx.reshape(v, {});
}

/// log_softmax along axis 1: x - max - log(sum(exp(x - max))).
Value logSoftmax(NodeContext &ctx, Value x) {
  Value shifted = binary<tosa::SubOp>(ctx, x, reduce<tosa::ReduceMaxOp>(ctx, x, 1));
  Value sum =
      reduce<tosa::ReduceSumOp>(ctx, ctx.create<tosa::ExpOp>(shifted.getType(), shifted), 1);
  return binary<tosa::SubOp>(ctx, shifted, ctx.create<tosa::LogOp>(sum.getType(), sum));
}

/// What both losses read: scores or log-probabilities [N, C, d1, ...] and
/// the int64 target [N, d1, ...], viewed as [N, C, D] and [N, D] with D the
/// product of d1, ... (TOSA 0.60 reduces tensors of rank 4 at most), the
/// optional weight [C], the attributes, and the shapes to give back.
struct LossInputs {
  Value input, target, weight;
  std::vector<int64_t> inputShape, targetShape;
  int64_t classes = 0;
  std::optional<int64_t> ignoreIndex;
  std::string reduction;
};

FailureOr<LossInputs> readLossInputs(NodeContext &ctx) {
  if (ctx.numInputs() < 2 || !ctx.hasInput(0) || !ctx.hasInput(1))
    return ctx.fail("needs inputs 0 (scores [N, C, ...]) and 1 (target [N, ...])");
  std::vector<int64_t> xs = ctx.inputShape(0), ts = ctx.inputShape(1);
  if (ctx.inputType(0) != kFloat)
    return ctx.fail("input 0 must be float32");
  if (ctx.inputType(1) != kInt64 && ctx.inputType(1) != kInt32)
    return ctx.fail("the target (input 1) must be int32 or int64");
  if (xs.size() < 2)
    return ctx.fail("input 0 has shape " + shapeString(xs) + "; it needs [N, C, ...]");
  std::vector<int64_t> want = xs;
  want.erase(want.begin() + 1);
  if (ts != want)
    return ctx.fail("the target (input 1) has shape " + shapeString(ts) + "; for input 0 " +
                    shapeString(xs) + " it needs " + shapeString(want));
  LossInputs in;
  in.classes = xs[1];
  in.reduction = ctx.attrString("reduction", "mean");
  if (in.reduction != "none" && in.reduction != "sum" && in.reduction != "mean")
    return ctx.fail("reduction '" + in.reduction + "' is not one of none, sum, mean");
  if (ctx.hasAttr("ignore_index"))
    in.ignoreIndex = ctx.attrInt("ignore_index", 0);
  FailureOr<Value> x = ctx.input(0), t = ctx.input(1);
  if (failed(x) || failed(t))
    return failure();
  int64_t inner = product(llvm::ArrayRef<int64_t>(xs).drop_front(2));
  in.inputShape = xs;
  in.targetShape = ts;
  in.input = ctx.reshape(*x, {xs[0], xs[1], inner});
  in.target = ctx.reshape(*t, {xs[0], inner});
  if (ctx.numInputs() > 2 && ctx.hasInput(2)) {
    if (ctx.inputShape(2) != std::vector<int64_t>{xs[1]} || ctx.inputType(2) != kFloat)
      return ctx.fail("the weight (input 2) must be float32 of shape [" + llvm::Twine(xs[1]) + "]");
    FailureOr<Value> w = ctx.input(2);
    if (failed(w))
      return failure();
    in.weight = *w;
  }
  return in;
}

/// NegativeLogLikelihoodLoss on log-probabilities `in.input` ([N, C, D]): loss[n, d] =
/// -input[n, t, d] * weight[t] with t = target[n, d] (0 where t is
/// ignore_index or outside [0, C)); reduction none gives [N, d1, ...],
/// sum the sum, mean the sum divided by the sum of the weights of the
/// targets counted (ONNX Operators.md, NegativeLogLikelihoodLoss).
Value negativeLogLikelihood(NodeContext &ctx, const LossInputs &in) {
  std::vector<int64_t> xs = shapeOf(in.input);
  const int64_t rank = int64_t(xs.size());
  Type targetType = typeOf(in.target).getElementType();
  std::vector<int64_t> expanded = xs;
  expanded[1] = 1;
  Value target = ctx.reshape(in.target, expanded);
  // Class indices 0..C-1 along axis 1.
  std::vector<int64_t> classShape(rank, 1);
  classShape[1] = in.classes;
  std::vector<int64_t> ids(in.classes);
  for (int64_t c = 0; c < in.classes; ++c)
    ids[c] = c;
  Value classes;
  if (targetType.isInteger(64)) {
    classes = ctx.constI64(classShape, ids);
  } else {
    std::vector<int32_t> ids32(ids.begin(), ids.end());
    classes = ctx.constI32(classShape, ids32);
  }
  Value picked = ctx.create<tosa::EqualOp>(
      broadcastType(target, classes, ctx.builder().getI1Type()), target, classes);
  Value weight = in.weight ? ctx.reshape(in.weight, classShape) : ctx.scalarF32(1.0f, rank);
  if (in.ignoreIndex && *in.ignoreIndex >= 0 && *in.ignoreIndex < in.classes) {
    // The ignored class weighs 0.
    std::vector<float> keep(in.classes, 1.0f);
    keep[*in.ignoreIndex] = 0.0f;
    weight = mul(ctx, weight, ctx.constF32(classShape, keep));
  }
  Value zero = ctx.scalarF32(0.0f, rank);
  Value weights = ctx.create<tosa::SelectOp>(ctx.f32Type(xs), picked,
                                             binary<tosa::AddOp>(ctx, zero, weight), zero);
  // A broadcast weight must reach [N, C, ...] before the select: add it to
  // zeros of that shape.
  Value terms = mul(ctx, in.input, weights);
  Value loss =
      ctx.create<tosa::NegateOp>(RankedTensorType::get(expanded, ctx.builder().getF32Type()),
                                 reduce<tosa::ReduceSumOp>(ctx, terms, 1));
  if (in.reduction == "none")
    return ctx.reshape(loss, in.targetShape);
  Value total = sumAll(ctx, loss);
  if (in.reduction == "sum")
    return total;
  Value denominator = sumAll(ctx, weights);
  return mul(ctx, total, ctx.create<tosa::ReciprocalOp>(denominator.getType(), denominator));
}

/// NegativeLogLikelihoodLoss (opsets 12, 13): input [N, C, d1, ...]
/// log-probabilities, target [N, d1, ...] int32/int64 (run-time values
/// allowed), weight [C] optional; reduction none / sum / mean (default),
/// ignore_index.
LogicalResult convertNegativeLogLikelihoodLoss(NodeContext &ctx) {
  FailureOr<LossInputs> in = readLossInputs(ctx);
  if (failed(in))
    return failure();
  return ctx.setOutput(0, negativeLogLikelihood(ctx, *in));
}

/// SoftmaxCrossEntropyLoss (opsets 12, 13): NegativeLogLikelihoodLoss of
/// log_softmax(scores) along the class axis 1, same inputs and attributes;
/// the optional output 1 is that log_softmax [N, C, d1, ...].
LogicalResult convertSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  FailureOr<LossInputs> in = readLossInputs(ctx);
  if (failed(in))
    return failure();
  in->input = logSoftmax(ctx, in->input);
  if (ctx.hasOutput(1) && failed(ctx.setOutput(1, ctx.reshape(in->input, in->inputShape))))
    return failure();
  return ctx.setOutput(0, negativeLogLikelihood(ctx, *in));
}

} // namespace

void registerLossOps(ConverterTable &table) {
  table["NegativeLogLikelihoodLoss"] = convertNegativeLogLikelihoodLoss;
  table["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropyLoss;
}

} // namespace kiln::onnx
