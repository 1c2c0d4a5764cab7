//===- TFLiteElementwiseOps.cpp - Elementwise operators and activations ---===//
//
// Binary ops broadcast numpy-style: both operands are first reshaped to the
// same rank (TOSA requires equal ranks and broadcasts size-1 dimensions).
//
//===----------------------------------------------------------------------===//
#include "TFLiteConverter.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

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

RankedTensorType broadcastType(OpContext &ctx, Value lhs, Value rhs) {
  auto l = lhs.getType().cast<RankedTensorType>();
  auto r = rhs.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape;
  for (int64_t i = 0; i < l.getRank(); ++i)
    shape.push_back(std::max(l.getDimSize(i), r.getDimSize(i)));
  return ctx.f32Type(shape);
}

template <typename OptionsT>
schema::ActivationFunctionType activationOf(OpContext &ctx) {
  const auto *opts = ctx.options<OptionsT>();
  return opts ? opts->fused_activation_function()
              : schema::ActivationFunctionType::NONE;
}

LogicalResult finish(OpContext &ctx, Value value,
                     schema::ActivationFunctionType act) {
  auto out = ctx.applyActivation(value, act);
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertAdd(OpContext &ctx) {
  Value l, r;
  if (failed(binaryOperands(ctx, l, r)))
    return failure();
  return finish(ctx, ctx.create<tosa::AddOp>(broadcastType(ctx, l, r), l, r),
                activationOf<schema::AddOptions>(ctx));
}

LogicalResult convertMaximum(OpContext &ctx) {
  Value l, r;
  if (failed(binaryOperands(ctx, l, r)))
    return failure();
  return ctx.setOutput(
      0, ctx.create<tosa::MaximumOp>(broadcastType(ctx, l, r), l, r));
}

LogicalResult convertRelu(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.clamp(*x, 0.0f, std::numeric_limits<float>::max()));
}

LogicalResult convertLogistic(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.create<tosa::SigmoidOp>(x->getType(), *x));
}

/// TFLite: x > 0 ? x : alpha * x.
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

} // namespace

void registerElementwiseOps(ConverterTable &table) {
  table[BuiltinOperator::ADD] = convertAdd;
  table[BuiltinOperator::MAXIMUM] = convertMaximum;
  table[BuiltinOperator::RELU] = convertRelu;
  table[BuiltinOperator::LOGISTIC] = convertLogistic;
  table[BuiltinOperator::LEAKY_RELU] = convertLeakyRelu;
}

} // namespace kiln::tfl
