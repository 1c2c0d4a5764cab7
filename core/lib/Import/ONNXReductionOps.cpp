//===- ONNXReductionOps.cpp - Reductions, softmax, argmax ------------------===//
//
// ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2
// ReduceSumSquare ReduceLogSum ReduceLogSumExp, Softmax LogSoftmax Hardmax,
// ArgMax ArgMin; float32 data.
//
// A reduction over several axes of a tensor of any rank is TOSA reductions
// of one axis each after a reshape (kiln::reduceDims, TosaReduce.h).
// Softmax-like ops and ArgMax/ArgMin view their input
// as [outer, axis, inner] and work on the middle dimension.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "TosaReduce.h"

#include <array>
#include <limits>

using namespace mlir;

namespace kiln::onnx {
namespace {

using Reduction = TosaReduction;


llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

/// The float32 data input 0, or failure naming its element type.
FailureOr<Value> floatInput(NodeContext &ctx) {
  if (ctx.hasInput(0) && !isFloatType(ctx.inputType(0)))
    return ctx.fail("input 0 has element type " + dataTypeName(ctx.inputType(0)) +
                    "; Kiln supports this operator on float tensors only");
  return ctx.input(0);
}

Value mul(NodeContext &ctx, Value a, Value b) {
  return ctx.create<tosa::MulOp>(a.getType(), a, b, ctx.builder().getI32IntegerAttr(0));
}

/// Reduces over the dimensions flagged in `reduced` (kiln::reduceDims);
/// the result keeps the input's rank with reduced dimensions of size 1.
Value reduceDims(NodeContext &ctx, Value value, llvm::ArrayRef<bool> reduced,
                 Reduction kind) {
  return kiln::reduceDims(ctx.builder(), ctx.loc(), value, reduced, kind);
}

/// One reduction over `axis` (kept as a size-1 dimension).
Value reduceAxis(NodeContext &ctx, Value value, int64_t axis, Reduction kind) {
  llvm::SmallVector<bool> reduced(shapeOf(value).size(), false);
  reduced[axis] = true;
  return reduceDims(ctx, value, reduced, kind);
}

/// What a Reduce* node reduces, read from its attributes and inputs.
struct ReducePlan {
  llvm::SmallVector<bool> reduced; ///< Per input dimension.
  bool keepDims = true;
  bool identity = false; ///< Empty axes with noop_with_empty_axes = 1: nothing reduced.
  int64_t count = 1;     ///< Elements folded into each output element.
};

/// Axes come from the `axes` attribute, or from the optional constant input
/// 1 where the operator version takes them as an input (ReduceSum from opset
/// 13, the other Reduce* from opset 18). Negative axes count from the back;
/// no axes reduce every dimension unless noop_with_empty_axes = 1 (which only
/// the input form has), then no dimension is reduced.
FailureOr<ReducePlan> planReduce(NodeContext &ctx, llvm::ArrayRef<int64_t> shape) {
  const std::string &op = ctx.node().opType;
  bool axesInput = ctx.opset() >= (op == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  if (axesInput && ctx.hasInput(1)) {
    auto values = ctx.constantInts(1);
    if (failed(values))
      return failure();
    axes = *values;
  } else if (!axesInput) {
    axes = ctx.attrInts("axes");
  }
  ReducePlan plan;
  plan.keepDims = ctx.attrInt("keepdims", 1) != 0;
  int64_t rank = int64_t(shape.size());
  plan.reduced.assign(rank, axes.empty());
  if (axes.empty() && axesInput && ctx.attrInt("noop_with_empty_axes", 0) != 0) {
    plan.identity = true;
    plan.reduced.assign(rank, false);
    return plan;
  }
  for (int64_t axis : axes) {
    int64_t a = normalizeAxis(axis, rank);
    if (a < 0 || rank == 0)
      return ctx.fail("axis " + llvm::Twine(axis) + " is out of range for an input of rank " +
                      llvm::Twine(rank) + " (axes lie in [-rank, rank-1])");
    plan.reduced[a] = true;
  }
  for (int64_t k = 0; k < rank; ++k)
    if (plan.reduced[k])
      plan.count *= shape[k];
  return plan;
}

/// The reduced value (keepdims form) of one Reduce* operator.
Value reduceFor(NodeContext &ctx, const std::string &op, Value x,
                llvm::ArrayRef<bool> reduced, int64_t count) {
  int64_t rank = int64_t(shapeOf(x).size());
  auto type = [&](Value v) { return v.getType(); };
  if (op == "ReduceMax")
    return reduceDims(ctx, x, reduced, Reduction::Max);
  if (op == "ReduceMin")
    return reduceDims(ctx, x, reduced, Reduction::Min);
  if (op == "ReduceProd")
    return reduceDims(ctx, x, reduced, Reduction::Prod);
  if (op == "ReduceL1")
    return reduceDims(ctx, ctx.create<tosa::AbsOp>(type(x), x), reduced, Reduction::Sum);
  if (op == "ReduceL2" || op == "ReduceSumSquare") {
    Value s = reduceDims(ctx, mul(ctx, x, x), reduced, Reduction::Sum);
    if (op == "ReduceSumSquare")
      return s;
    return ctx.create<tosa::PowOp>(type(s), s, ctx.scalarF32(0.5f, rank));
  }
  if (op == "ReduceLogSum") {
    Value s = reduceDims(ctx, x, reduced, Reduction::Sum);
    return ctx.create<tosa::LogOp>(type(s), s);
  }
  if (op == "ReduceLogSumExp") {
    // shift + log(sum(exp(x - shift))) with shift = max: no overflow for
    // large inputs. An infinite max shifts by 0 instead (inf - inf would be
    // NaN): a row holding +inf gives +inf, a row of -inf gives log(0) = -inf.
    Value m = reduceDims(ctx, x, reduced, Reduction::Max);
    auto mType = m.getType().cast<RankedTensorType>();
    auto boolType = RankedTensorType::get(mType.getShape(), ctx.builder().getI1Type());
    Value infinite = ctx.create<tosa::EqualOp>(
        boolType, ctx.create<tosa::AbsOp>(mType, m),
        ctx.scalarF32(std::numeric_limits<float>::infinity(), rank));
    m = ctx.create<tosa::SelectOp>(mType, infinite, ctx.scalarF32(0.0f, rank), m);
    Value e = ctx.create<tosa::ExpOp>(type(x), ctx.create<tosa::SubOp>(type(x), x, m));
    Value s = reduceDims(ctx, e, reduced, Reduction::Sum);
    return ctx.create<tosa::AddOp>(type(s), m, ctx.create<tosa::LogOp>(type(s), s));
  }
  Value s = reduceDims(ctx, x, reduced, Reduction::Sum);
  if (op == "ReduceMean" && count != 1)
    s = mul(ctx, s, ctx.scalarF32(float(1.0 / double(count)), rank));
  return s;
}

/// Reduce{Sum,Mean,Max,Min,Prod,L1,L2,SumSquare,LogSum,LogSumExp} (opsets
/// 1-18; see planReduce for the axes): data [d0..dn-1] -> the reduced
/// dimensions become 1 (keepdims = 1, the default) or are removed. L1 sums
/// |x|, L2 is sqrt(sum(x^2)), SumSquare sum(x^2), LogSum log(sum(x)),
/// LogSumExp log(sum(exp(x))) computed as max + log(sum(exp(x - max))).
LogicalResult convertReduce(NodeContext &ctx) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  auto plan = planReduce(ctx, shape);
  if (failed(plan))
    return failure();
  // noop_with_empty_axes reduces nothing, but the operator's elementwise
  // part stays (ONNX clarified it, onnx/onnx#6103: ReduceL1 gives |x|,
  // ReduceSumSquare x^2, ReduceLogSum log x; ORT 1.30 computes the same):
  // reduceFor over no dimension.
  if (!plan->identity && plan->count == 0)
    return ctx.fail("reduces a dimension of size 0; empty reductions are not supported");
  Value r = reduceFor(ctx, ctx.node().opType, *x, plan->reduced, plan->count);
  llvm::SmallVector<int64_t> outShape;
  for (size_t k = 0; k < shape.size(); ++k)
    if (!plan->reduced[k] || plan->keepDims)
      outShape.push_back(plan->reduced[k] ? 1 : shape[k]);
  return ctx.setOutput(0, ctx.reshape(r, outShape));
}

/// The [outer, K, inner] view of a softmax-like operator's input: before
/// opset 13 the input is coerced to 2-D at `axis` (default 1) and the
/// operator runs over the whole second dimension ([prod(d0..axis-1),
/// prod(d_axis..)], inner = 1); from 13 it runs over the one axis (default
/// -1).
FailureOr<std::array<int64_t, 3>> softmaxView(NodeContext &ctx, llvm::ArrayRef<int64_t> shape) {
  bool coerce = ctx.opset() < 13;
  int64_t rank = int64_t(shape.size());
  int64_t attr = ctx.attrInt("axis", coerce ? 1 : -1);
  int64_t axis = attr < 0 ? attr + rank : attr;
  if (rank == 0 || axis < 0 || axis >= rank)
    return ctx.fail("axis " + llvm::Twine(attr) + " is out of range for an input of rank " +
                    llvm::Twine(rank));
  llvm::ArrayRef<int64_t> s(shape);
  if (coerce)
    return std::array<int64_t, 3>{product(s.take_front(axis)), product(s.drop_front(axis)), 1};
  return std::array<int64_t, 3>{product(s.take_front(axis)), shape[axis],
                                product(s.drop_front(axis + 1))};
}

/// Softmax exp(x - max) / sum(exp(x - max)) and LogSoftmax
/// (x - max) - log(sum(exp(x - max))) over the axis (see softmaxView), any
/// rank; the output has the input's shape. The max is subtracted first so
/// large inputs do not overflow.
LogicalResult convertSoftmax(NodeContext &ctx) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  auto view = softmaxView(ctx, shape);
  if (failed(view))
    return failure();
  Value v = ctx.reshape(*x, *view);
  Type type = v.getType();
  Value max = reduceAxis(ctx, v, 1, Reduction::Max);
  Value shifted = ctx.create<tosa::SubOp>(type, v, max);
  Value e = ctx.create<tosa::ExpOp>(type, shifted);
  Value sum = reduceAxis(ctx, e, 1, Reduction::Sum);
  Value out;
  if (ctx.node().opType == "LogSoftmax")
    out = ctx.create<tosa::SubOp>(type, shifted, ctx.create<tosa::LogOp>(sum.getType(), sum));
  else
    out = mul(ctx, e, ctx.create<tosa::ReciprocalOp>(sum.getType(), sum));
  return ctx.setOutput(0, ctx.reshape(out, shape));
}

/// Hardmax: 1 at the first maximum along the axis (see softmaxView), 0
/// elsewhere; the output has the input's shape.
LogicalResult convertHardmax(NodeContext &ctx) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  auto view = softmaxView(ctx, shape);
  if (failed(view))
    return failure();
  Value v = ctx.reshape(*x, *view);
  Value idx = ctx.argMaxMiddle(v, false);
  int64_t k = (*view)[1];
  std::vector<int32_t> iota(k);
  for (int64_t i = 0; i < k; ++i)
    iota[i] = int32_t(i);
  auto maskType = RankedTensorType::get(*view, ctx.builder().getI1Type());
  Value hit = ctx.create<tosa::EqualOp>(maskType, idx, ctx.constI32({1, k, 1}, iota));
  Value out = ctx.create<tosa::SelectOp>(v.getType(), hit, ctx.scalarF32(1.0f, 3),
                                         ctx.scalarF32(0.0f, 3));
  return ctx.setOutput(0, ctx.reshape(out, shape));
}

/// ArgMax / ArgMin (opsets 1-13): int64 index of the first (select_last_index
/// = 1, from opset 12: the last) maximum / minimum along `axis` (default 0,
/// negative from the back); the axis becomes 1 (keepdims = 1, the default)
/// or is removed. ArgMin is ArgMax of -x (negation is exact).
LogicalResult convertArgMax(NodeContext &ctx) {
  auto x = floatInput(ctx);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  int64_t rank = int64_t(shape.size());
  int64_t attr = ctx.attrInt("axis", 0);
  int64_t axis = normalizeAxis(attr, rank);
  if (rank == 0 || axis < 0)
    return ctx.fail("axis " + llvm::Twine(attr) + " is out of range for an input of rank " +
                    llvm::Twine(rank));
  llvm::ArrayRef<int64_t> s(shape);
  Value v = ctx.reshape(*x, {product(s.take_front(axis)), shape[axis],
                             product(s.drop_front(axis + 1))});
  if (ctx.node().opType == "ArgMin")
    v = mul(ctx, v, ctx.scalarF32(-1.0f, 3));
  Value idx = ctx.argMaxMiddle(v, ctx.attrInt("select_last_index", 0) != 0);
  auto idxShape = shapeOf(idx);
  idx = ctx.create<tosa::CastOp>(RankedTensorType::get(idxShape, ctx.builder().getI64Type()),
                                 idx);
  llvm::SmallVector<int64_t> outShape(shape);
  if (ctx.attrInt("keepdims", 1) != 0)
    outShape[axis] = 1;
  else
    outShape.erase(outShape.begin() + axis);
  return ctx.setOutput(0, ctx.reshape(idx, outShape));
}

} // namespace

void registerReductionOps(ConverterTable &table) {
  for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                         "ReduceLogSumExp"})
    table[op] = convertReduce;
  table["Softmax"] = convertSoftmax;
  table["LogSoftmax"] = convertSoftmax;
  table["Hardmax"] = convertHardmax;
  table["ArgMax"] = convertArgMax;
  table["ArgMin"] = convertArgMax;
}

} // namespace kiln::onnx
