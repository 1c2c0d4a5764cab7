//===- TFLiteReductionOps.cpp - Reductions and softmax --------------------===//
//
// MEAN SUM REDUCE_MAX REDUCE_MIN over constant axes, SOFTMAX, LOG_SOFTMAX
// and L2_NORMALIZATION, float32 only.
//
// A reduction over several axes of a tensor of any rank is TOSA reductions
// of one axis each after a reshape (kiln::reduceDims, TosaReduce.h).
//
//===----------------------------------------------------------------------===//
#include "TFLiteConverter.h"
#include "TosaMath.h"
#include "TosaReduce.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

enum class Reduction { Sum, Mean, Max, Min };

/// Fails unless `value` is a float32 tensor.
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

/// Reduces `value` (static shape, any rank) over the dimensions flagged in
/// `reduced` (kiln::reduceDims); the result has the input's rank with
/// reduced dimensions of size 1 (keep_dims form). Mean is reduced as Sum here.
Value reduceDims(OpContext &ctx, Value value, llvm::ArrayRef<bool> reduced,
                 Reduction kind) {
  TosaReduction tosaKind = kind == Reduction::Max   ? TosaReduction::Max
                           : kind == Reduction::Min ? TosaReduction::Min
                                                    : TosaReduction::Sum;
  return kiln::reduceDims(ctx.builder(), ctx.loc(), value, reduced, tosaKind);
}

/// One reduction over `axis`, which stays as a size-1 dimension.
Value reduceAxis(OpContext &ctx, Value value, int64_t axis, Reduction kind) {
  llvm::SmallVector<bool> reduced(value.getType().cast<RankedTensorType>().getRank(), false);
  reduced[axis] = true;
  return reduceDims(ctx, value, reduced, kind);
}

/// Flags of the dimensions named by the constant axes input 1 (negative
/// axes count from the back; repeats are allowed and an empty axes tensor
/// reduces nothing, as in TFLite).
FailureOr<llvm::SmallVector<bool>> reducedAxes(OpContext &ctx, int64_t rank) {
  if (!ctx.hasInput(1))
    return ctx.fail("the axes input (input 1) is missing");
  llvm::SmallVector<bool> reduced(rank, false);
  int64_t numAxes = 1;
  for (int64_t d : ctx.inputShape(1))
    numAxes *= d;
  if (numAxes == 0) // No axes (its buffer is empty): the identity.
    return reduced;
  const schema::Tensor *axesTensor = ctx.inputTensor(1);
  if (!ctx.isConstant(1))
    return ctx.fail("the axes input (input 1) must be a constant INT32/INT64 "
                    "tensor; axes computed at run time are not supported");
  if (axesTensor->type() != schema::TensorType::INT32 &&
      axesTensor->type() != schema::TensorType::INT64)
    return ctx.fail(llvm::Twine("the axes input (input 1) must be INT32 or "
                                "INT64, not ") +
                    schema::EnumNameTensorType(axesTensor->type()));
  auto axes = ctx.constantInts(1);
  if (failed(axes))
    return failure();
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return ctx.fail("axis " + llvm::Twine(axis) +
                      " is out of range for an input of rank " +
                      llvm::Twine(rank));
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  return reduced;
}

template <Reduction kind> LogicalResult convertReduce(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  // REDUCE_MAX / REDUCE_MIN also take int8 (the int8 table calls them with
  // the output quantized as the input: the raw values compare alike).
  bool int8MaxMin = (kind == Reduction::Max || kind == Reduction::Min) &&
                    x->getType().cast<RankedTensorType>().getElementType().isInteger(8);
  if (!int8MaxMin && failed(requireF32(ctx, *x, 0)))
    return failure();
  auto shape = x->getType().cast<RankedTensorType>().getShape();
  auto reduced = reducedAxes(ctx, shape.size());
  if (failed(reduced))
    return failure();
  Value result = reduceDims(ctx, *x, *reduced, kind);

  int64_t count = 1;
  llvm::SmallVector<int64_t> squeezed, kept;
  for (size_t i = 0; i < shape.size(); ++i) {
    if ((*reduced)[i])
      count *= shape[i];
    else
      squeezed.push_back(shape[i]);
    kept.push_back((*reduced)[i] ? 1 : shape[i]);
  }
  if (kind == Reduction::Mean && count != 1) {
    if (count == 0)
      return ctx.fail("the mean of an empty tensor is undefined");
    float scale = static_cast<float>(1.0 / static_cast<double>(count));
    result = ctx.create<tosa::MulOp>(
        result.getType(), result,
        ctx.scalarF32(scale, static_cast<int64_t>(shape.size())),
        ctx.builder().getI32IntegerAttr(0));
  }
  const auto *opts = ctx.options<schema::ReducerOptions>();
  bool keepDims = opts && opts->keep_dims();
  return ctx.setOutput(0, ctx.reshape(result, keepDims ? kept : squeezed));
}

/// MEAN: average over the constant axes (input 1), keep_dims from
/// ReducerOptions -> tosa.reduce_sum per reduced dimension, then tosa.mul by
/// the constant 1/count.
LogicalResult convertMean(OpContext &ctx) {
  return convertReduce<Reduction::Mean>(ctx);
}

/// SUM: sum over the constant axes (input 1), keep_dims from ReducerOptions
/// -> tosa.reduce_sum per reduced dimension.
LogicalResult convertSum(OpContext &ctx) {
  return convertReduce<Reduction::Sum>(ctx);
}

/// REDUCE_MAX: maximum over the constant axes (input 1), keep_dims from
/// ReducerOptions -> tosa.reduce_max per reduced dimension.
LogicalResult convertReduceMax(OpContext &ctx) {
  return convertReduce<Reduction::Max>(ctx);
}

/// REDUCE_MIN: minimum over the constant axes (input 1), keep_dims from
/// ReducerOptions -> tosa.reduce_min per reduced dimension.
LogicalResult convertReduceMin(OpContext &ctx) {
  return convertReduce<Reduction::Min>(ctx);
}

/// SOFTMAX: exp(beta * (x - max)) / sum(exp(beta * (x - max))) over the last
/// axis (SoftmaxOptions.beta). The input is viewed as [rows, depth]; then
/// tosa.reduce_max, tosa.sub, tosa.mul by beta (skipped for beta 1),
/// tosa.exp, tosa.reduce_sum and tosa.mul by tosa.reciprocal of the sum.
/// LOG_SOFTMAX (no options, beta 1): (x - max) - log(sum(exp(x - max)))
/// (reference/log_softmax.h), the same steps with tosa.log and tosa.sub.
LogicalResult convertSoftmax(OpContext &ctx) {
  // Without an options table TFLite runs with the schema default beta 0
  // (a uniform output); follow it.
  bool logSoftmax = ctx.code() == BuiltinOperator::LOG_SOFTMAX;
  const auto *opts = ctx.options<schema::SoftmaxOptions>();
  float beta = logSoftmax ? 1.0f : opts ? opts->beta() : 0.0f;
  auto x = ctx.input(0);
  if (failed(x) || failed(requireF32(ctx, *x, 0)))
    return failure();
  auto shape = x->getType().cast<RankedTensorType>().getShape();
  if (shape.empty())
    return ctx.fail("expects an input of rank 1 or more (softmax runs over "
                    "the last axis)");
  int64_t depth = shape.back();
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  auto mulF32 = [&](Value a, Value b) {
    return ctx.create<tosa::MulOp>(a.getType(), a, b,
                                   ctx.builder().getI32IntegerAttr(0));
  };
  Value v = ctx.reshape(*x, {rows, depth});
  auto matrix = v.getType();
  Value max = reduceAxis(ctx, v, 1, Reduction::Max);
  Value shifted = ctx.create<tosa::SubOp>(matrix, v, max);
  if (beta != 1.0f)
    shifted = mulF32(shifted, ctx.scalarF32(beta, 2));
  Value e = ctx.create<tosa::ExpOp>(matrix, shifted);
  Value sum = reduceAxis(ctx, e, 1, Reduction::Sum);
  if (logSoftmax) {
    Value log = ctx.create<tosa::LogOp>(sum.getType(), sum);
    return ctx.setOutput(0, ctx.reshape(ctx.create<tosa::SubOp>(matrix, shifted, log), shape));
  }
  Value inverse = ctx.create<tosa::ReciprocalOp>(sum.getType(), sum);
  Value out = mulF32(e, inverse);
  return ctx.setOutput(0, ctx.reshape(out, shape));
}

/// L2_NORMALIZATION: x / max(sqrt(sum(x^2)), 1e-6) over the last axis
/// (reference/l2normalization.h, epsilon 1e-6). TOSA on the [rows, depth]
/// view: tosa.mul, tosa.reduce_sum, tosa.maximum with 1e-12 (= epsilon^2,
/// so that sqrt(max(s, eps^2)) = max(sqrt(s), eps)), tosa.rsqrt, tosa.mul.
/// A fused activation other than NONE is refused.
LogicalResult convertL2Normalization(OpContext &ctx) {
  const auto *opts = ctx.options<schema::L2NormOptions>();
  if (opts && opts->fused_activation_function() != schema::ActivationFunctionType::NONE)
    return ctx.fail(std::string("fused activation ") +
                    schema::EnumNameActivationFunctionType(opts->fused_activation_function()) +
                    " is not supported (supported: NONE)");
  auto x = ctx.input(0);
  if (failed(x) || failed(requireF32(ctx, *x, 0)))
    return failure();
  auto shape = x->getType().cast<RankedTensorType>().getShape();
  if (shape.empty())
    return ctx.fail("expects an input of rank 1 or more (it normalizes the last axis)");
  int64_t depth = shape.back(), rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  auto mulF32 = [&](Value a, Value b) {
    return ctx.create<tosa::MulOp>(a.getType(), a, b, ctx.builder().getI32IntegerAttr(0));
  };
  Value v = ctx.reshape(*x, {rows, depth});
  Value sum = reduceAxis(ctx, mulF32(v, v), 1, Reduction::Sum);
  Value floor = ctx.create<tosa::MaximumOp>(sum.getType(), sum, ctx.scalarF32(1e-12f, 2));
  Value inverse = ctx.create<tosa::RsqrtOp>(sum.getType(), floor);
  return ctx.setOutput(0, ctx.reshape(mulF32(v, inverse), shape));
}

/// REDUCE_ALL: logical AND of a bool tensor over the constant axes (input
/// 1), keep_dims from ReducerOptions (reduce.cc EvalLogic / EvalAllHelper;
/// TFLite Micro reduce.cc). TOSA: the bools as i32 0/1, tosa.reduce_min per
/// reduced dimension, != 0. An empty reduction gives true, as AND does.
LogicalResult convertReduceAll(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = x->getType().cast<RankedTensorType>();
  if (!type.getElementType().isInteger(1))
    return ctx.fail("input 0 has element type " + typeText(type.getElementType()) +
                    "; REDUCE_ALL takes bool");
  auto shape = type.getShape();
  auto reduced = reducedAxes(ctx, shape.size());
  if (failed(reduced))
    return failure();
  int64_t rank = shape.size();
  Type i32 = ctx.builder().getI32Type();
  Value asInt = tosa_math::select(ctx, *x, ctx.scalarOf(i32, 1, rank), ctx.scalarOf(i32, 0, rank));
  Value min = reduceDims(ctx, asInt, *reduced, Reduction::Min);
  Value result = tosa_math::compare<tosa::GreaterOp>(ctx, min, tosa_math::scalarLike(ctx, 0, min));
  llvm::SmallVector<int64_t> squeezed, kept;
  for (int64_t i = 0; i < rank; ++i) {
    if (!(*reduced)[i])
      squeezed.push_back(shape[i]);
    kept.push_back((*reduced)[i] ? 1 : shape[i]);
  }
  const auto *opts = ctx.options<schema::ReducerOptions>();
  bool keepDims = opts && opts->keep_dims();
  return ctx.setOutput(0, ctx.reshape(result, keepDims ? kept : squeezed));
}

} // namespace

void registerReductionOps(ConverterTable &table) {
  table[BuiltinOperator::MEAN] = convertMean;
  table[BuiltinOperator::SUM] = convertSum;
  table[BuiltinOperator::REDUCE_MAX] = convertReduceMax;
  table[BuiltinOperator::REDUCE_MIN] = convertReduceMin;
  table[BuiltinOperator::SOFTMAX] = convertSoftmax;
  table[BuiltinOperator::LOG_SOFTMAX] = convertSoftmax;
  table[BuiltinOperator::L2_NORMALIZATION] = convertL2Normalization;
  table[BuiltinOperator::REDUCE_ALL] = convertReduceAll;
}

} // namespace kiln::tfl
