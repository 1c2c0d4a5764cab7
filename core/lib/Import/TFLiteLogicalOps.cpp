//===- TFLiteLogicalOps.cpp - Comparisons, logic, select and cast ---------===//
//
// EQUAL NOT_EQUAL GREATER GREATER_EQUAL LESS LESS_EQUAL (float32 or int32
// operands, EQUAL / NOT_EQUAL also bool; bool result), LOGICAL_AND
// LOGICAL_OR LOGICAL_NOT (bool), SELECT_V2 and SELECT (bool condition,
// float32 / int32 / bool values) and CAST between float32, int32 and bool.
//
// Semantics: tensorflow/lite/kernels/comparisons.cc, logical.cc, select.cc
// and cast.cc. Binary operators and SELECT_V2 broadcast numpy-style
// (broadcastOperands); SELECT takes equal shapes, or a rank-1 condition
// that picks whole slices along dimension 0; int8 / uint8 values (the int8
// table reuses SELECT and SELECT_V2) must share the output's quantization.
// The int8 comparisons are in TFLiteQuantizedElementwiseOps.cpp; other
// operators here with int8 / uint8 tensors are refused by the importer,
// naming the int8 operators it has.
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TosaMath.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

using tosa_math::compare;
using tosa_math::elementOf;
using tosa_math::scalarLike;

/// Fails unless `element` is float32 (allowed by `f32`), int32 (`i32`) or
/// bool (`i1`), naming input `input` and the supported types.
LogicalResult requireType(OpContext &ctx, Type element, int input, bool f32, bool i32, bool i1) {
  if ((f32 && element.isF32()) || (i32 && element.isInteger(32)) || (i1 && element.isInteger(1)))
    return success();
  std::string names;
  auto list = [&](bool ok, const char *name) {
    if (ok)
      names += (names.empty() ? "" : ", ") + std::string(name);
  };
  list(f32, "float32");
  list(i32, "int32");
  list(i1, "bool");
  return ctx.fail("input " + llvm::Twine(input) + " has element type " + typeText(element) +
                  "; supported: " + names);
}

/// A comparison a OP b, broadcast, bool result: `OpTy` (tosa.equal,
/// tosa.greater, tosa.greater_equal) with the operands swapped for LESS /
/// LESS_EQUAL and the result negated for NOT_EQUAL. Float NaN compares
/// unequal to everything (IEEE, as the kernel's C++ operators).
template <typename OpTy, bool Swap, bool Negate>
LogicalResult convertComparison(OpContext &ctx, bool allowBool) {
  auto operands = broadcastOperands(ctx, 2);
  if (failed(operands))
    return failure();
  Value a = (*operands)[0], b = (*operands)[1];
  if (failed(requireType(ctx, elementOf(a), 0, true, true, allowBool)))
    return failure();
  if (elementOf(a) != elementOf(b))
    return ctx.fail("inputs have element types " + typeText(elementOf(a)) + " and " +
                    typeText(elementOf(b)) + "; the operands must have one element type");
  Value result = Swap ? compare<OpTy>(ctx, b, a) : compare<OpTy>(ctx, a, b);
  if (Negate)
    result = tosa_math::unary<tosa::LogicalNotOp>(ctx, result);
  return ctx.setOutput(0, result);
}

/// EQUAL: a == b -> tosa.equal.
LogicalResult convertEqual(OpContext &ctx) {
  return convertComparison<tosa::EqualOp, false, false>(ctx, true);
}
/// NOT_EQUAL: a != b -> tosa.logical_not(tosa.equal) (true for NaN).
LogicalResult convertNotEqual(OpContext &ctx) {
  return convertComparison<tosa::EqualOp, false, true>(ctx, true);
}
/// GREATER: a > b -> tosa.greater.
LogicalResult convertGreater(OpContext &ctx) {
  return convertComparison<tosa::GreaterOp, false, false>(ctx, false);
}
/// GREATER_EQUAL: a >= b -> tosa.greater_equal.
LogicalResult convertGreaterEqual(OpContext &ctx) {
  return convertComparison<tosa::GreaterEqualOp, false, false>(ctx, false);
}
/// LESS: a < b -> tosa.greater(b, a).
LogicalResult convertLess(OpContext &ctx) {
  return convertComparison<tosa::GreaterOp, true, false>(ctx, false);
}
/// LESS_EQUAL: a <= b -> tosa.greater_equal(b, a).
LogicalResult convertLessEqual(OpContext &ctx) {
  return convertComparison<tosa::GreaterEqualOp, true, false>(ctx, false);
}

/// LOGICAL_AND / LOGICAL_OR: bool a op b, broadcast -> tosa.logical_and /
/// tosa.logical_or.
template <typename OpTy> LogicalResult convertLogicalBinary(OpContext &ctx) {
  auto operands = broadcastOperands(ctx, 2);
  if (failed(operands))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (failed(requireType(ctx, elementOf((*operands)[i]), i, false, false, true)))
      return failure();
  return ctx.setOutput(0, tosa_math::binary<OpTy>(ctx, (*operands)[0], (*operands)[1]));
}

/// LOGICAL_NOT: !x of a bool tensor -> tosa.logical_not.
LogicalResult convertLogicalNot(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x) || failed(requireType(ctx, elementOf(*x), 0, false, false, true)))
    return failure();
  return ctx.setOutput(0, tosa_math::unary<tosa::LogicalNotOp>(ctx, *x));
}

/// Int8 / uint8 SELECT values (select.cc copies the stored values): both
/// inputs must have the output's scale and zero point.
LogicalResult checkQuantizedSelect(OpContext &ctx) {
  const TensorQuant *out = ctx.outputQuant(0);
  for (int k = 1; k <= 2; ++k) {
    const TensorQuant *q = ctx.inputQuant(k);
    if (!q || !out || q->perChannel() || q->scale() != out->scale() ||
        q->zeroPoint() != out->zeroPoint())
      return ctx.fail("input " + llvm::Twine(k) + " has " +
                      (q ? describeQuant(*q) : std::string("no quantization")) + ", the output " +
                      (out ? describeQuant(*out) : std::string("none")) +
                      "; int8 SELECT copies stored values, so both values must have the "
                      "output's scale and zero point");
  }
  return success();
}

/// Checks SELECT / SELECT_V2's operands: a bool condition and two values of
/// one element type (float32, int32, bool, or int8 / uint8 of the output's
/// quantization).
LogicalResult checkSelect(OpContext &ctx, Value cond, Value x, Value y) {
  if (failed(requireType(ctx, elementOf(cond), 0, false, false, true)))
    return failure();
  if (!elementOf(x).isInteger(8) && failed(requireType(ctx, elementOf(x), 1, true, true, true)))
    return failure();
  if (elementOf(x) != elementOf(y))
    return ctx.fail("inputs 1 and 2 have element types " + typeText(elementOf(x)) + " and " +
                    typeText(elementOf(y)) + "; they must have one element type");
  return elementOf(x).isInteger(8) ? checkQuantizedSelect(ctx) : success();
}

/// SELECT_V2: cond ? x : y, the three broadcast numpy-style -> tosa.select.
LogicalResult convertSelectV2(OpContext &ctx) {
  auto operands = broadcastOperands(ctx, 3);
  if (failed(operands))
    return failure();
  Value cond = (*operands)[0], x = (*operands)[1], y = (*operands)[2];
  if (failed(checkSelect(ctx, cond, x, y)))
    return failure();
  return ctx.setOutput(0, tosa_math::select(ctx, cond, x, y));
}

/// SELECT (v1): cond ? x : y with x and y of one shape and cond of that
/// shape, or of rank 1 with x's first dimension (then it picks whole slices
/// x[i] or y[i]; select.cc's rank-1 case) -> tosa.select.
LogicalResult convertSelect(OpContext &ctx) {
  auto c = ctx.input(0), x = ctx.input(1), y = ctx.input(2);
  if (failed(c) || failed(x) || failed(y) || failed(checkSelect(ctx, *c, *x, *y)))
    return failure();
  auto ct = c->getType().cast<RankedTensorType>(), xt = x->getType().cast<RankedTensorType>();
  if (xt.getShape() != y->getType().cast<RankedTensorType>().getShape())
    return ctx.fail("inputs 1 and 2 have shapes " + shapeString(xt.getShape()) + " and " +
                    shapeString(y->getType().cast<RankedTensorType>().getShape()) +
                    "; SELECT takes one shape (SELECT_V2 broadcasts)");
  Value cond = *c;
  if (ct.getShape() != xt.getShape()) {
    if (ct.getRank() != 1 || xt.getRank() < 1 || ct.getDimSize(0) != xt.getDimSize(0))
      return ctx.fail("the condition has shape " + shapeString(ct.getShape()) + ", the values " +
                      shapeString(xt.getShape()) +
                      "; SELECT takes a condition of the values' shape or of rank 1 with "
                      "their first dimension");
    llvm::SmallVector<int64_t> shape(xt.getRank(), 1);
    shape[0] = ct.getDimSize(0);
    cond = ctx.reshape(cond, shape);
  }
  return ctx.setOutput(0, tosa_math::select(ctx, cond, *x, *y));
}

/// CAST between float32, int32 and bool (cast.cc: static_cast per
/// element): float32 -> int32 truncates toward zero
/// (tosa_math::truncatingCast; out-of-range values saturate, where C++
/// leaves them undefined); x -> bool is x != 0 (NaN gives true); bool ->
/// number is 0 or 1; int32 -> float32 rounds to nearest (tosa.cast). Other
/// types (int64, int8 / uint8 raw integers, float16) are refused by name.
LogicalResult convertCast(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  const schema::Tensor *in = ctx.inputTensor(0), *out = ctx.outputTensor(0);
  auto supported = [](schema::TensorType t) {
    return t == schema::TensorType::FLOAT32 || t == schema::TensorType::INT32 ||
           t == schema::TensorType::BOOL;
  };
  if (!in || !out || !supported(in->type()) || !supported(out->type()))
    return ctx.fail(std::string("casts ") + (in ? schema::EnumNameTensorType(in->type()) : "?") +
                    " to " + (out ? schema::EnumNameTensorType(out->type()) : "?") +
                    "; supported: FLOAT32, INT32 and BOOL to each other");
  auto type = x->getType().cast<RankedTensorType>();
  Type from = type.getElementType(), to = ctx.outputType(0).getElementType();
  auto target = RankedTensorType::get(type.getShape(), to);
  if (from == to)
    return ctx.setOutput(0, *x);
  if (to.isInteger(1)) // x != 0
    return ctx.setOutput(0, tosa_math::unary<tosa::LogicalNotOp>(
                                ctx, compare<tosa::EqualOp>(ctx, *x, scalarLike(ctx, 0, *x))));
  if (from.isInteger(1)) { // 1 or 0
    Value one = ctx.scalarOf(to, 1, type.getRank()), zero = ctx.scalarOf(to, 0, type.getRank());
    return ctx.setOutput(0, tosa_math::select(ctx, *x, one, zero));
  }
  if (from.isF32())
    return ctx.setOutput(0, tosa_math::truncatingCast(ctx, *x, target));
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(target, *x));
}

} // namespace

void registerLogicalOps(ConverterTable &table) {
  table[BuiltinOperator::EQUAL] = convertEqual;
  table[BuiltinOperator::NOT_EQUAL] = convertNotEqual;
  table[BuiltinOperator::GREATER] = convertGreater;
  table[BuiltinOperator::GREATER_EQUAL] = convertGreaterEqual;
  table[BuiltinOperator::LESS] = convertLess;
  table[BuiltinOperator::LESS_EQUAL] = convertLessEqual;
  table[BuiltinOperator::LOGICAL_AND] = convertLogicalBinary<tosa::LogicalAndOp>;
  table[BuiltinOperator::LOGICAL_OR] = convertLogicalBinary<tosa::LogicalOrOp>;
  table[BuiltinOperator::LOGICAL_NOT] = convertLogicalNot;
  table[BuiltinOperator::SELECT] = convertSelect;
  table[BuiltinOperator::SELECT_V2] = convertSelectV2;
  table[BuiltinOperator::CAST] = convertCast;
}

} // namespace kiln::tfl
