//===- ONNXElementwiseOps.cpp - ONNX elementwise converters ---------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {

namespace {

/// Relu: max(x, 0) as a clamp.
LogicalResult convertRelu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.clamp(*x, 0.0f, std::numeric_limits<float>::max()));
}

/// Add: numpy broadcasting (ranks aligned with leading 1s for TOSA).
LogicalResult convertAdd(NodeContext &ctx) {
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  auto shape = broadcastShapes(ctx.inputShape(0), ctx.inputShape(1));
  if (!shape)
    return ctx.fail("inputs of shapes " + shapeString(ctx.inputShape(0)) + " and " +
                    shapeString(ctx.inputShape(1)) + " do not broadcast");
  int64_t rank = int64_t(shape->size());
  Value lhs = ctx.broadcastRank(*a, rank), rhs = ctx.broadcastRank(*b, rank);
  Type element = lhs.getType().cast<ShapedType>().getElementType();
  return ctx.setOutput(0, ctx.create<tosa::AddOp>(RankedTensorType::get(*shape, element), lhs, rhs));
}

} // namespace

void registerElementwiseOps(ConverterTable &table) {
  table["Relu"] = convertRelu;
  table["Add"] = convertAdd;
}

} // namespace kiln::onnx
