//===- ONNXArithmeticOps.cpp - ONNX Mod, Shrink, MVN, GlobalLpPool --------===//
//
// Mod Shrink MeanVarianceNormalization GlobalLpPool -> TOSA.
//
//   Mod        integer remainders from tosa.div (int32; truncating), float
//              ones from x - y * trunc(x / y) (fmod = 1) or floor (fmod =
//              0); folded at import when both inputs are constants;
//   Shrink     two compares and selects;
//   MeanVarianceNormalization  (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
//              over `axes`, as the operator's function body computes it;
//   GlobalLpPool  (sum over the spatial dimensions of |x|^p)^(1/p).
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "TosaMath.h"
#include "TosaReduce.h"

#include <cmath>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }
Type elementOf(Value v) { return v.getType().cast<RankedTensorType>().getElementType(); }
RankedTensorType typeOf(llvm::ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}
RankedTensorType boolType(NodeContext &ctx, llvm::ArrayRef<int64_t> shape) {
  return typeOf(shape, ctx.builder().getI1Type());
}

Value mulOf(NodeContext &ctx, RankedTensorType type, Value a, Value b) {
  return ctx.create<tosa::MulOp>(type, a, b, ctx.builder().getI32IntegerAttr(0));
}

/// Fails unless input `i` is float32 (what these converters compute on).
FailureOr<Value> floatInput(NodeContext &ctx, int i) {
  if (!isFloatType(ctx.inputType(i)))
    return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                    "') has element type " + dataTypeName(ctx.inputType(i)) + "; " +
                    ctx.node().opType + " is converted for float32");
  return ctx.input(i);
}

// --- Mod --------------------------------------------------------------------

/// The remainder of a / b with the sign of a (fmod) or of b (Python's %),
/// as ONNX Mod folds it; b = 0 gives 0 (numpy's integer rule).
int64_t intMod(int64_t a, int64_t b, bool fmod) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// Mod (10, 13; fmod default 0): the remainder of x / y, broadcast numpy
/// style; fmod = 1 takes the dividend's sign (C fmod), fmod = 0 the
/// divisor's (integers; ONNX requires fmod = 1 for floats, and Kiln reads
/// fmod = 0 on floats as x - y * floor(x / y)). int32 computes with
/// tosa.div, whose y = 0 and y = -1 are replaced by 1 first (remainder 0,
/// as numpy gives for y = 0; no INT_MIN / -1 overflow). int64 only when
/// folded (TOSA 0.60 divides int32 only), like Div.
LogicalResult convertMod(NodeContext &ctx) {
  int32_t ta = ctx.inputType(0), tb = ctx.inputType(1);
  bool isFloat = isFloatType(ta);
  if (isFloat != isFloatType(tb) || (!isFloat && ta != tb) ||
      (!isFloat && ta != kInt32 && ta != kInt64))
    return ctx.fail("inputs have element types " + dataTypeName(ta) + " and " + dataTypeName(tb) +
                    "; Mod is converted for two float32, int32 or int64 inputs");
  auto shape = broadcastShapes(ctx.inputShape(0), ctx.inputShape(1));
  if (!shape)
    return ctx.fail("input shapes " + shapeString(ctx.inputShape(0)) + " and " +
                    shapeString(ctx.inputShape(1)) + " do not broadcast (numpy rules)");
  bool fmod = ctx.attrInt("fmod", 0) != 0;
  int64_t rank = shape->size();
  const Tensor *a = ctx.constant(0), *b = ctx.constant(1);
  if (a && b && product(*shape) <= 4096) {
    Tensor t;
    t.dataType = ta;
    t.dims = *shape;
    auto sa = ctx.inputShape(0), sb = ctx.inputShape(1);
    auto at = [&](const Tensor &x, const std::vector<int64_t> &s, int64_t p) {
      int64_t off = 0, stride = 1, rest = p;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t coord = rest % (*shape)[d];
        rest /= (*shape)[d];
        int64_t k = d - (rank - int64_t(s.size()));
        if (k >= 0) {
          off += (s[k] == 1 ? 0 : coord) * stride;
          stride *= s[k];
        }
      }
      return off;
    };
    for (int64_t p = 0; p < product(*shape); ++p) {
      int64_t ia = at(*a, sa, p), ib = at(*b, sb, p);
      if (isFloat) {
        float x = a->floats[ia], y = b->floats[ib];
        float r = fmod ? std::fmod(x, y) : x - y * std::floor(x / y);
        t.floats.push_back(r);
      } else {
        int64_t r = intMod(a->ints[ia], b->ints[ib], fmod);
        t.ints.push_back(ta == kInt32 ? int64_t(int32_t(r)) : r);
      }
    }
    return ctx.setConstant(0, std::move(t));
  }
  FailureOr<Value> x = ctx.input(0), y = ctx.input(1);
  if (failed(x) || failed(y))
    return failure();
  Value xa = ctx.broadcastRank(*x, rank), yb = ctx.broadcastRank(*y, rank);
  Type element = elementOf(xa);
  if (isFloat)
    return ctx.setOutput(0, tosa_math::floatRemainder(ctx, xa, yb, fmod));
  if (!element.isInteger(32))
    return ctx.fail("int64 Mod of values computed at run time is not supported (TOSA 0.60 "
                    "divides int32 only); Mod takes float32, int32, and int64 values known "
                    "when the model is compiled");
  return ctx.setOutput(0, tosa_math::remainderI32(ctx, xa, yb, !fmod));
}

// --- Shrink -------------------------------------------------------------------

/// Shrink (9; lambd default 0.5, bias 0): x + bias where x < -lambd, x - bias
/// where x > lambd, 0 elsewhere (ONNX Operators.md Shrink).
LogicalResult convertShrink(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  float lambd = ctx.attrFloat("lambd", 0.5f), bias = ctx.attrFloat("bias", 0.0f);
  std::vector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  auto type = ctx.f32Type(shape);
  Value below = ctx.create<tosa::GreaterOp>(boolType(ctx, shape), ctx.scalarF32(-lambd, rank), *x);
  Value above = ctx.create<tosa::GreaterOp>(boolType(ctx, shape), *x, ctx.scalarF32(lambd, rank));
  Value plus = ctx.create<tosa::AddOp>(type, *x, ctx.scalarF32(bias, rank));
  Value minus = ctx.create<tosa::SubOp>(type, *x, ctx.scalarF32(bias, rank));
  Value y = ctx.create<tosa::SelectOp>(type, above, minus, ctx.scalarF32(0, rank));
  return ctx.setOutput(0, ctx.create<tosa::SelectOp>(type, below, plus, y));
}

// --- MeanVarianceNormalization ------------------------------------------------

/// MeanVarianceNormalization (9, 13; axes default [0, 2, 3]): (X - E[X]) /
/// (sqrt(E[X^2] - E[X]^2) + 1e-9), the moments over `axes` (the operator's
/// function body; the variance is clamped at 0 against rounding).
LogicalResult convertMeanVarianceNormalization(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  llvm::SmallVector<bool> reduced(rank, false);
  int64_t count = 1;
  for (int64_t a : ctx.attrInts("axes", {0, 2, 3})) {
    int64_t axis = normalizeAxis(a, rank);
    if (axis < 0 || rank == 0)
      return ctx.fail("axis " + llvm::Twine(a) + " is out of range for an input of rank " +
                      llvm::Twine(rank));
    if (!reduced[axis])
      count *= shape[axis];
    reduced[axis] = true;
  }
  auto type = ctx.f32Type(shape);
  Value inv = ctx.scalarF32(1.0f / float(count), rank);
  Value sum = reduceDims(ctx.builder(), ctx.loc(), *x, reduced, TosaReduction::Sum);
  auto rtype = sum.getType().cast<RankedTensorType>();
  Value mean = mulOf(ctx, rtype, sum, inv);
  Value squares = mulOf(ctx, type, *x, *x);
  Value meanSq = mulOf(
      ctx, rtype, reduceDims(ctx.builder(), ctx.loc(), squares, reduced, TosaReduction::Sum), inv);
  Value var = ctx.create<tosa::SubOp>(rtype, meanSq, mulOf(ctx, rtype, mean, mean));
  var = ctx.clamp(var, 0.0f, std::numeric_limits<float>::infinity());
  Value stddev = ctx.create<tosa::ReciprocalOp>(rtype, ctx.create<tosa::RsqrtOp>(rtype, var));
  Value denom = ctx.create<tosa::AddOp>(rtype, stddev, ctx.scalarF32(1e-9f, rank));
  Value centered = ctx.create<tosa::SubOp>(type, *x, mean);
  return ctx.setOutput(0, mulOf(ctx, type, centered, ctx.create<tosa::ReciprocalOp>(rtype, denom)));
}

// --- GlobalLpPool ----------------------------------------------------------------

/// GlobalLpPool (2; p default 2): X [N, C, d1, ...] -> [N, C, 1, ...], the
/// p-norm over all spatial dimensions: (sum |x|^p)^(1/p) (p = 1 and 2
/// without pow).
LogicalResult convertGlobalLpPool(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size(), p = ctx.attrInt("p", 2);
  if (rank < 3)
    return ctx.fail("X has shape " + shapeString(shape) + "; it needs [N, C, d1, ...]");
  if (p < 1)
    return ctx.fail("p = " + llvm::Twine(p) + "; GlobalLpPool takes p >= 1");
  auto type = ctx.f32Type(shape);
  Value a = ctx.create<tosa::AbsOp>(type, *x);
  Value powered = p == 1   ? a
                  : p == 2 ? mulOf(ctx, type, a, a)
                           : ctx.create<tosa::PowOp>(type, a, ctx.scalarF32(float(p), rank));
  llvm::SmallVector<bool> reduced(rank, true);
  reduced[0] = reduced[1] = false;
  Value sum = reduceDims(ctx.builder(), ctx.loc(), powered, reduced, TosaReduction::Sum);
  auto rtype = sum.getType().cast<RankedTensorType>();
  Value y = p == 1   ? sum
            : p == 2 ? ctx.create<tosa::ReciprocalOp>(rtype, ctx.create<tosa::RsqrtOp>(rtype, sum))
                     : ctx.create<tosa::PowOp>(rtype, sum, ctx.scalarF32(1.0f / float(p), rank));
  return ctx.setOutput(0, y);
}

} // namespace

void registerArithmeticOps(ConverterTable &table) {
  table["Mod"] = convertMod;
  table["Shrink"] = convertShrink;
  table["MeanVarianceNormalization"] = convertMeanVarianceNormalization;
  table["GlobalLpPool"] = convertGlobalLpPool;
}

} // namespace kiln::onnx
