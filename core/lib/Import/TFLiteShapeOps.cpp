//===- TFLiteShapeOps.cpp - Data movement and shape operators -------------===//
#include "TFLiteConverter.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

/// RESHAPE (and SQUEEZE/EXPAND_DIMS): the model records the output shape,
/// so the target shape is read from the output tensor; the shape operand or
/// ReshapeOptions.new_shape only has to agree in element count.
LogicalResult convertReshape(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(0, ctx.reshape(*x, ctx.outputShape(0)));
}

/// DEQUANTIZE: float16 constants -> float32 constants at import.
LogicalResult convertDequantize(OpContext &ctx) {
  const schema::Tensor *t = ctx.inputTensor(0);
  if (!t || t->type() != schema::TensorType::FLOAT16 || !ctx.isConstant(0))
    return ctx.fail("only float16 constant inputs are supported (int8/uint8 "
                    "dequantization means a quantized model)");
  auto x = ctx.input(0); // widened to f32 when materialized
  if (failed(x))
    return failure();
  return ctx.setOutput(0, *x);
}

LogicalResult convertConcatenation(OpContext &ctx) {
  const auto *opts = ctx.options<schema::ConcatenationOptions>();
  if (!opts)
    return ctx.fail("missing ConcatenationOptions");
  llvm::SmallVector<Value> inputs;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  int64_t rank = ctx.outputShape(0).size();
  int64_t axis = opts->axis() < 0 ? opts->axis() + rank : opts->axis();
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis " + llvm::Twine(opts->axis()) + " is out of range for rank " +
                    llvm::Twine(rank));
  Value concat = ctx.create<tosa::ConcatOp>(ctx.outputType(0), inputs,
                                            ctx.builder().getI64IntegerAttr(axis));
  auto out = ctx.applyActivation(concat, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// PAD / PADV2: paddings is a constant [rank, 2] tensor.
LogicalResult convertPad(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto paddings = ctx.constantInts(1);
  if (failed(paddings))
    return failure();
  int64_t rank = ctx.inputShape(0).size();
  if (static_cast<int64_t>(paddings->size()) != 2 * rank)
    return ctx.fail("paddings must be a [" + llvm::Twine(rank) + ", 2] tensor");
  std::vector<int32_t> pads(paddings->begin(), paddings->end());
  for (int32_t p : pads)
    if (p < 0)
      return ctx.fail("negative paddings are not supported");
  Value padValue = ctx.constI32({rank, 2}, pads);
  Value padConst;
  if (ctx.code() == BuiltinOperator::PADV2 && ctx.hasInput(2)) {
    auto value = ctx.constantFloats(2);
    if (failed(value) || value->size() != 1)
      return ctx.fail("PADV2 needs a constant scalar pad value");
    padConst = ctx.constF32({}, {(*value)[0]});
  } else {
    padConst = ctx.constF32({}, {0.0f});
  }
  return ctx.setOutput(0, ctx.create<tosa::PadOp>(ctx.outputType(0), *x,
                                                  padValue, padConst, nullptr));
}

} // namespace

void registerShapeOps(ConverterTable &table) {
  table[BuiltinOperator::RESHAPE] = convertReshape;
  table[BuiltinOperator::SQUEEZE] = convertReshape;
  table[BuiltinOperator::EXPAND_DIMS] = convertReshape;
  table[BuiltinOperator::DEQUANTIZE] = convertDequantize;
  table[BuiltinOperator::CONCATENATION] = convertConcatenation;
  table[BuiltinOperator::PAD] = convertPad;
  table[BuiltinOperator::PADV2] = convertPad;
}

} // namespace kiln::tfl
