//===- ONNXScatterOps.cpp - ONNX scatters, OneHot, MaxUnpool --------------===//
//
// ScatterElements Scatter ScatterND OneHot MaxUnpool -> TOSA.
//
// TOSA 0.60's tosa.scatter has no lowering to linalg in MLIR 16 that Kiln
// runs, so every scatter here is a comparison of the target positions with
// the indices (computed at run time or constant) and a select-and-reduce
// over the updates, in one rank-4 layout:
//   hit     [P, M, Q, 1]  update m of row p lands on position q;
//   updates [P, M, 1, C]  (C values per position: ScatterND's slices);
//   data    [P, 1, Q, C].
// `none` takes, at each position, the value of the last update that lands
// there (a later write wins, as ONNX Runtime's loop does); add, mul, max and
// min fold every update into the data. The comparison has P x M x Q x C
// elements; larger scatters are refused (kMaxScatterElements). Indices are
// int32 or int64; negative ones count from the end of their axis, and an
// index still outside the axis lands nowhere.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <limits>
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
RankedTensorType i32Type(NodeContext &ctx, llvm::ArrayRef<int64_t> shape) {
  return typeOf(shape, ctx.builder().getI32Type());
}

/// The most elements of the comparison a scatter builds.
constexpr int64_t kMaxScatterElements = int64_t(1) << 26;

/// How updates combine with the data (ScatterElements/ScatterND
/// `reduction`, opsets 16 and 18).
enum class Reduction { None, Add, Mul, Max, Min };

FailureOr<Reduction> reductionOf(NodeContext &ctx) {
  std::string r = ctx.attrString("reduction", "none");
  if (r == "none")
    return Reduction::None;
  if (r == "add")
    return Reduction::Add;
  if (r == "mul")
    return Reduction::Mul;
  if (r == "max")
    return Reduction::Max;
  if (r == "min")
    return Reduction::Min;
  return ctx.fail("reduction '" + r + "' is not one of none, add, mul, max, min");
}

/// Fails unless input `i` is float32, int32 or int64.
FailureOr<Value> dataInput(NodeContext &ctx, int i) {
  FailureOr<Value> v = ctx.input(i);
  if (failed(v))
    return failure();
  Type e = elementOf(*v);
  if (!e.isF32() && !e.isInteger(32) && !e.isInteger(64))
    return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                    "') has element type " + dataTypeName(ctx.inputType(i)) + "; " +
                    ctx.node().opType + " is converted for float32, int32 and int64 data");
  return v;
}

/// Input `i` (int32 or int64 indices) as i32, negative entries plus
/// `sizes` (broadcast against the indices). Entries out of range stay so
/// (they match no position).
FailureOr<Value> indicesI32(NodeContext &ctx, int i, Value sizes) {
  FailureOr<Value> idx = ctx.input(i);
  if (failed(idx))
    return failure();
  Type e = elementOf(*idx);
  if (!e.isInteger(32) && !e.isInteger(64))
    return ctx.fail("indices must be int32 or int64");
  std::vector<int64_t> shape(shapeOf(*idx));
  Value v = e.isInteger(32) ? *idx : ctx.create<tosa::CastOp>(i32Type(ctx, shape), *idx);
  int64_t rank = shape.size();
  Value negative = ctx.create<tosa::GreaterOp>(boolType(ctx, shape),
                                               ctx.constI32(std::vector<int64_t>(rank, 1), {0}), v);
  Value wrapped = ctx.create<tosa::AddOp>(i32Type(ctx, shape), v, sizes);
  return ctx.create<tosa::SelectOp>(i32Type(ctx, shape), negative, wrapped, v);
}

/// Combines `updates` [P, M, 1, C] into `data` [P, 1, Q, C] where `hit`
/// [P, M, Q, 1] (see the file comment); the result is [P, 1, Q, C].
Value combine(NodeContext &ctx, Value hit, Value updates, Value data, Reduction how) {
  auto &b = ctx.builder();
  int64_t p = shapeOf(hit)[0], m = shapeOf(hit)[1], q = shapeOf(hit)[2];
  int64_t c = shapeOf(updates)[3];
  Type element = elementOf(data);
  auto full = typeOf({p, m, q, c}, element);
  auto reduced = typeOf({p, 1, q, c}, element);
  IntegerAttr axis = b.getI64IntegerAttr(1);
  auto neutral = [&](double v) { return ctx.scalarOf(element, v, 4); };
  double inf = std::numeric_limits<double>::infinity();
  double low = element.isF32() ? -inf : element.isInteger(32) ? double(INT32_MIN) : -9.3e18;
  double high = element.isF32() ? inf : element.isInteger(32) ? double(INT32_MAX) : 9.3e18;
  switch (how) {
  case Reduction::None: {
    // The last update landing on each position, and whether any does.
    Value m32 = ctx.iotaI32({1, m, 1, 1}, 1);
    Value which = ctx.create<tosa::SelectOp>(i32Type(ctx, {p, m, q, 1}), hit, m32,
                                             ctx.constI32({1, 1, 1, 1}, {-1}));
    Value last = ctx.create<tosa::ReduceMaxOp>(i32Type(ctx, {p, 1, q, 1}), which, axis);
    Value isLast = ctx.create<tosa::EqualOp>(boolType(ctx, {p, m, q, 1}), m32, last);
    Value picked = ctx.create<tosa::SelectOp>(full, isLast, updates, neutral(0));
    Value value = ctx.create<tosa::ReduceSumOp>(reduced, picked, axis);
    Value any = ctx.create<tosa::GreaterEqualOp>(boolType(ctx, {p, 1, q, 1}), last,
                                                 ctx.constI32({1, 1, 1, 1}, {0}));
    return ctx.create<tosa::SelectOp>(reduced, any, value, data);
  }
  case Reduction::Add: {
    Value picked = ctx.create<tosa::SelectOp>(full, hit, updates, neutral(0));
    return ctx.create<tosa::AddOp>(reduced, data,
                                   ctx.create<tosa::ReduceSumOp>(reduced, picked, axis));
  }
  case Reduction::Mul: {
    Value picked = ctx.create<tosa::SelectOp>(full, hit, updates, neutral(1));
    return ctx.create<tosa::MulOp>(reduced, data,
                                   ctx.create<tosa::ReduceProdOp>(reduced, picked, axis),
                                   b.getI32IntegerAttr(0));
  }
  case Reduction::Max: {
    Value picked = ctx.create<tosa::SelectOp>(full, hit, updates, neutral(low));
    return ctx.create<tosa::MaximumOp>(reduced, data,
                                       ctx.create<tosa::ReduceMaxOp>(reduced, picked, axis));
  }
  case Reduction::Min: {
    Value picked = ctx.create<tosa::SelectOp>(full, hit, updates, neutral(high));
    return ctx.create<tosa::MinimumOp>(reduced, data,
                                       ctx.create<tosa::ReduceMinOp>(reduced, picked, axis));
  }
  }
  return data;
}

LogicalResult checkSize(NodeContext &ctx, int64_t p, int64_t m, int64_t q, int64_t c) {
  if (p * m > kMaxScatterElements || p * m * q > kMaxScatterElements ||
      p * m * q * c > kMaxScatterElements)
    return ctx.fail("the scatter compares " + llvm::Twine(p * m) + " updates with " +
                    llvm::Twine(q) + " positions (x " + llvm::Twine(c) + " values), above the " +
                    llvm::Twine(kMaxScatterElements) + " elements Kiln's scatters build");
  return success();
}

// --- ScatterElements, Scatter -----------------------------------------------

/// ScatterElements (11, 13, 16, 18; axis default 0, reduction from 16) and
/// Scatter (9, deprecated in 11; the same without reduction): data, indices
/// and updates of one rank, indices and updates of one shape, no larger than
/// data outside the axis; output[o with o[axis] = indices[u]] = updates[u]
/// (ONNX Operators.md ScatterElements). The axis is moved last; indices and
/// updates are padded to the data's other dimensions with indices that land
/// nowhere.
LogicalResult convertScatterElements(NodeContext &ctx) {
  std::vector<int64_t> ds = ctx.inputShape(0), is = ctx.inputShape(1), us = ctx.inputShape(2);
  int64_t rank = ds.size(), axis = normalizeAxis(ctx.attrInt("axis", 0), rank);
  if (rank == 0 || axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 0)) +
                    " is out of range for data of rank " + llvm::Twine(rank));
  if (int64_t(is.size()) != rank || is != us)
    return ctx.fail("indices " + shapeString(is) + " and updates " + shapeString(us) +
                    " must have one shape of the data's rank " + llvm::Twine(rank));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > ds[d])
      return ctx.fail("indices " + shapeString(is) + " exceed data " + shapeString(ds) +
                      " in dimension " + llvm::Twine(d));
  FailureOr<Reduction> how = reductionOf(ctx);
  FailureOr<Value> data = dataInput(ctx, 0), updates = dataInput(ctx, 2);
  if (failed(how) || failed(data) || failed(updates))
    return failure();
  if (elementOf(*updates) != elementOf(*data))
    return ctx.fail("updates and data have different element types");
  int64_t n = ds[axis], m = is[axis];
  int64_t p = product(ds) / n;
  if (failed(checkSize(ctx, p, m, n, 1)))
    return failure();
  FailureOr<Value> idx =
      indicesI32(ctx, 1, ctx.constI32(std::vector<int64_t>(rank, 1), {int32_t(n)}));
  if (failed(idx))
    return failure();
  std::vector<int32_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(int32_t(d));
  perm.push_back(int32_t(axis));
  std::vector<int32_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = int32_t(d);
  // Pad indices (with -1: no position) and updates to the data's other
  // dimensions, in the moved layout.
  auto padTo = [&](Value v, double fill) {
    Value t = ctx.transpose(v, perm);
    std::vector<int64_t> shape(shapeOf(t));
    std::vector<int32_t> pads(2 * rank, 0);
    bool any = false;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      pads[2 * d + 1] = int32_t(ds[perm[d]] - shape[d]);
      any |= pads[2 * d + 1] != 0;
      shape[d] = ds[perm[d]];
    }
    if (!any)
      return t;
    Value padding = ctx.constI32({rank, 2}, pads);
    return Value(ctx.create<tosa::PadOp>(typeOf(shape, elementOf(t)), t, padding,
                                         ctx.scalarOf(elementOf(t), fill, 0), nullptr));
  };
  Value i2 = ctx.reshape(padTo(*idx, -1), {p, m, 1, 1});
  Value u2 = ctx.reshape(padTo(*updates, 0), {p, m, 1, 1});
  Value d2 = ctx.reshape(ctx.transpose(*data, perm), {p, 1, n, 1});
  Value hit =
      ctx.create<tosa::EqualOp>(boolType(ctx, {p, m, n, 1}), i2, ctx.iotaI32({1, 1, n, 1}, 2));
  Value out = combine(ctx, hit, u2, d2, *how);
  std::vector<int64_t> moved;
  for (int32_t d : perm)
    moved.push_back(ds[d]);
  return ctx.setOutput(0, ctx.transpose(ctx.reshape(out, moved), inverse));
}

// --- ScatterND ------------------------------------------------------------------

/// ScatterND (11, 13, 16, 18; reduction from 16): indices [..., k] address
/// the first k dimensions of data; updates has shape indices[:-1] +
/// data[k:] (ONNX Operators.md ScatterND). Data viewed as [K, C], the index
/// tuples folded to row numbers by their strides.
LogicalResult convertScatterND(NodeContext &ctx) {
  std::vector<int64_t> ds = ctx.inputShape(0), is = ctx.inputShape(1), us = ctx.inputShape(2);
  int64_t r = ds.size(), qr = is.size();
  if (r < 1 || qr < 1 || is.back() < 1 || is.back() > r)
    return ctx.fail("data " + shapeString(ds) + " and indices " + shapeString(is) +
                    ": the last indices dimension must be in [1, data rank]");
  int64_t k = is.back();
  std::vector<int64_t> want(is.begin(), is.end() - 1);
  want.insert(want.end(), ds.begin() + k, ds.end());
  if (us != want)
    return ctx.fail("updates " + shapeString(us) + " must have shape " + shapeString(want) +
                    " (indices[:-1] + data[k:])");
  FailureOr<Reduction> how = reductionOf(ctx);
  FailureOr<Value> data = dataInput(ctx, 0), updates = dataInput(ctx, 2);
  if (failed(how) || failed(data) || failed(updates))
    return failure();
  if (elementOf(*updates) != elementOf(*data))
    return ctx.fail("updates and data have different element types");
  llvm::ArrayRef<int64_t> dims(ds);
  int64_t rows = product(dims.take_front(k)), c = product(dims.drop_front(k));
  int64_t u = product(llvm::ArrayRef<int64_t>(is).drop_back());
  if (failed(checkSize(ctx, 1, u, rows, c)))
    return failure();
  std::vector<int32_t> sizes, strides(k, 1);
  for (int64_t j = 0; j < k; ++j)
    sizes.push_back(int32_t(ds[j]));
  for (int64_t j = k - 2; j >= 0; --j)
    strides[j] = strides[j + 1] * int32_t(ds[j + 1]);
  std::vector<int64_t> tupleShape(qr, 1);
  tupleShape.back() = k;
  FailureOr<Value> idx = indicesI32(ctx, 1, ctx.constI32(tupleShape, sizes));
  if (failed(idx))
    return failure();
  Value tuples = ctx.reshape(*idx, {u, k});
  auto &b = ctx.builder();
  // A tuple with an entry outside its dimension lands nowhere: its row is -1.
  Value low = ctx.create<tosa::GreaterOp>(boolType(ctx, {u, k}), ctx.constI32({1, 1}, {0}), tuples);
  Value high =
      ctx.create<tosa::GreaterEqualOp>(boolType(ctx, {u, k}), tuples, ctx.constI32({1, k}, sizes));
  Value outside = ctx.create<tosa::LogicalOrOp>(boolType(ctx, {u, k}), low, high);
  Value anyOutside =
      ctx.create<tosa::ReduceAnyOp>(boolType(ctx, {u, 1}), outside, b.getI64IntegerAttr(1));
  Value scaled = ctx.create<tosa::MulOp>(i32Type(ctx, {u, k}), tuples,
                                         ctx.constI32({1, k}, strides), b.getI32IntegerAttr(0));
  Value row = ctx.create<tosa::ReduceSumOp>(i32Type(ctx, {u, 1}), scaled, b.getI64IntegerAttr(1));
  row =
      ctx.create<tosa::SelectOp>(i32Type(ctx, {u, 1}), anyOutside, ctx.constI32({1, 1}, {-1}), row);
  Value hit =
      ctx.create<tosa::EqualOp>(boolType(ctx, {1, u, rows, 1}), ctx.reshape(row, {1, u, 1, 1}),
                                ctx.iotaI32({1, 1, rows, 1}, 2));
  Value out = combine(ctx, hit, ctx.reshape(*updates, {1, u, 1, c}),
                      ctx.reshape(*data, {1, 1, rows, c}), *how);
  return ctx.setOutput(0, ctx.reshape(out, ds));
}

// --- OneHot -----------------------------------------------------------------------

/// OneHot (9, 11; axis default -1): output[..., j at axis, ...] = on where
/// j == indices[...] (negative indices plus depth), off elsewhere; values
/// = [off, on] (ONNX Operators.md OneHot). depth must be a constant;
/// indices and values may be computed at run time; float indices truncate.
LogicalResult convertOneHot(NodeContext &ctx) {
  FailureOr<std::vector<float>> depthValue = ctx.constantFloats(1);
  if (failed(depthValue))
    return failure();
  if (depthValue->size() != 1 || !(depthValue->front() >= 1) ||
      depthValue->front() > float(INT32_MAX))
    return ctx.fail("depth must be one positive value");
  int64_t depth = int64_t(depthValue->front());
  std::vector<int64_t> is = ctx.inputShape(0);
  int64_t rank = is.size() + 1;
  int64_t axis = normalizeAxis(ctx.attrInt("axis", -1), rank);
  if (axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", -1)) +
                    " is out of range for an output of rank " + llvm::Twine(rank));
  if (ctx.inputShape(2) != std::vector<int64_t>{2})
    return ctx.fail("values has shape " + shapeString(ctx.inputShape(2)) +
                    "; OneHot takes [off, on]");
  FailureOr<Value> idx = ctx.input(0), values = ctx.input(2);
  if (failed(idx) || failed(values))
    return failure();
  Type valueType = elementOf(*values);
  if (!valueType.isF32() && !valueType.isInteger(32) && !valueType.isInteger(64))
    return ctx.fail("values has element type " + dataTypeName(ctx.inputType(2)) +
                    "; OneHot is converted for float32, int32 and int64 values");
  std::vector<int64_t> iShape(is);
  Value v = *idx;
  if (elementOf(v).isF32()) {
    // Truncate toward zero, then convert (exact for |x| < 2^24).
    auto ft = ctx.f32Type(iShape);
    Value negative = ctx.create<tosa::GreaterOp>(boolType(ctx, iShape),
                                                 ctx.scalarF32(0, int64_t(iShape.size())), v);
    v = ctx.create<tosa::SelectOp>(ft, negative, ctx.create<tosa::CeilOp>(ft, v),
                                   ctx.create<tosa::FloorOp>(ft, v));
    v = ctx.create<tosa::ClampOp>(ft, v, ctx.builder().getI64IntegerAttr(INT32_MIN),
                                  ctx.builder().getI64IntegerAttr(INT32_MAX),
                                  ctx.builder().getF32FloatAttr(-2147483648.0f),
                                  ctx.builder().getF32FloatAttr(2147483520.0f));
  } else if (!elementOf(v).isInteger(32) && !elementOf(v).isInteger(64)) {
    return ctx.fail("indices must be float32, int32 or int64");
  } else if (elementOf(v).isInteger(64)) {
    // Clamp before narrowing so that no int64 index wraps into range.
    auto t = typeOf(iShape, elementOf(v));
    std::vector<int64_t> ones(iShape.size(), 1);
    v = ctx.create<tosa::MaximumOp>(t, v, ctx.constI64(ones, {-int64_t(depth) - 1}));
    v = ctx.create<tosa::MinimumOp>(t, v, ctx.constI64(ones, {depth}));
  }
  if (!elementOf(v).isInteger(32))
    v = ctx.create<tosa::CastOp>(i32Type(ctx, iShape), v);
  std::vector<int64_t> ones(iShape.size(), 1);
  Value negative = ctx.create<tosa::GreaterOp>(boolType(ctx, iShape), ctx.constI32(ones, {0}), v);
  v = ctx.create<tosa::SelectOp>(
      i32Type(ctx, iShape), negative,
      ctx.create<tosa::AddOp>(i32Type(ctx, iShape), v, ctx.constI32(ones, {int32_t(depth)})), v);
  std::vector<int64_t> expanded(iShape), out(iShape), grid(rank, 1);
  expanded.insert(expanded.begin() + axis, 1);
  out.insert(out.begin() + axis, depth);
  grid[axis] = depth;
  Value hit = ctx.create<tosa::EqualOp>(boolType(ctx, out), ctx.reshape(v, expanded),
                                        ctx.iotaI32(grid, axis));
  std::vector<int64_t> unit(rank, 1);
  Value off = ctx.reshape(ctx.slice(*values, {0}, {1}), unit);
  Value on = ctx.reshape(ctx.slice(*values, {1}, {1}), unit);
  return ctx.setOutput(0, ctx.create<tosa::SelectOp>(typeOf(out, valueType), hit, on, off));
}

// --- MaxUnpool ----------------------------------------------------------------------

/// MaxUnpool (9, 11): X and I (MaxPool's values and flat int64 indices into
/// the whole unpooled tensor, N and C included) scattered into zeros of the
/// unpooled shape, (in - 1) * stride + kernel - pads per spatial axis, then
/// padded to output_shape (input 2, a constant) when that is larger (ONNX
/// Operators.md MaxUnpool, ONNX Runtime). Scattered plane by plane; a
/// position two windows chose takes the later one.
LogicalResult convertMaxUnpool(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  int64_t rank = xs.size(), spatial = rank - 2;
  if (rank < 3 || ctx.inputShape(1) != xs)
    return ctx.fail("X " + shapeString(xs) + " and I " + shapeString(ctx.inputShape(1)) +
                    " must have one shape of rank >= 3");
  std::vector<int64_t> kernel = ctx.attrInts("kernel_shape");
  std::vector<int64_t> strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = ctx.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (int64_t(kernel.size()) != spatial || int64_t(strides.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return ctx.fail("kernel_shape, strides and pads must have one (pads: two) entries per "
                    "spatial axis");
  std::vector<int64_t> out = xs;
  for (int64_t d = 0; d < spatial; ++d)
    out[2 + d] = (xs[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[spatial + d];
  // The indices address the unpooled shape the attributes give; a larger
  // output_shape pads that result with zeros, half of the difference
  // before (rounded down) and the rest after, as ONNX Runtime does.
  std::vector<int64_t> unpooled = out;
  if (ctx.hasInput(2)) {
    FailureOr<std::vector<int64_t>> shape = ctx.constantInts(2);
    if (failed(shape))
      return failure();
    if (int64_t(shape->size()) != rank || (*shape)[0] != xs[0] || (*shape)[1] != xs[1])
      return ctx.fail("output_shape " + shapeString(*shape) +
                      " must be [N, C, spatial...] "
                      "with X's N and C");
    for (int64_t d = 0; d < spatial; ++d)
      if ((*shape)[2 + d] < out[2 + d])
        return ctx.fail("output_shape " + shapeString(*shape) + " is smaller than the " +
                        shapeString(out) + " the pooling attributes give");
    out = *shape;
  }
  FailureOr<Value> x = dataInput(ctx, 0);
  if (failed(x))
    return failure();
  int64_t planes = xs[0] * xs[1];
  int64_t taps = product(xs) / planes, cells = product(unpooled) / planes;
  if (product(out) > INT32_MAX)
    return ctx.fail("the output " + shapeString(out) + " has 2^31 elements or more");
  if (failed(checkSize(ctx, planes, taps, cells, 1)))
    return failure();
  // Index relative to its plane: I - plane * cells (constant offsets).
  std::vector<int32_t> base(planes);
  for (int64_t pl = 0; pl < planes; ++pl)
    base[pl] = int32_t(pl * cells);
  FailureOr<Value> idx =
      indicesI32(ctx, 1, ctx.constI32(std::vector<int64_t>(rank, 1), {int32_t(planes * cells)}));
  if (failed(idx))
    return failure();
  Value local =
      ctx.create<tosa::SubOp>(i32Type(ctx, {planes, taps}), ctx.reshape(*idx, {planes, taps}),
                              ctx.constI32({planes, 1}, base));
  Value hit = ctx.create<tosa::EqualOp>(boolType(ctx, {planes, taps, cells, 1}),
                                        ctx.reshape(local, {planes, taps, 1, 1}),
                                        ctx.iotaI32({1, 1, cells, 1}, 2));
  // The data is zeros, broadcast from one element.
  Value zeros = ctx.scalarOf(elementOf(*x), 0, 4);
  Value result = combine(ctx, hit, ctx.reshape(*x, {planes, taps, 1, 1}), zeros, Reduction::None);
  result = ctx.reshape(result, unpooled);
  if (out != unpooled) {
    std::vector<int32_t> padding(2 * rank, 0);
    for (int64_t d = 2; d < rank; ++d) {
      int64_t total = out[d] - unpooled[d];
      padding[2 * d] = int32_t(total / 2);
      padding[2 * d + 1] = int32_t(total - total / 2);
    }
    result = ctx.create<tosa::PadOp>(typeOf(out, elementOf(result)), result,
                                     ctx.constI32({rank, 2}, padding),
                                     ctx.scalarOf(elementOf(result), 0, 0), nullptr);
  }
  return ctx.setOutput(0, result);
}

} // namespace

void registerScatterOps(ConverterTable &table) {
  table["ScatterElements"] = convertScatterElements;
  table["Scatter"] = convertScatterElements;
  table["ScatterND"] = convertScatterND;
  table["OneHot"] = convertOneHot;
  table["MaxUnpool"] = convertMaxUnpool;
}

} // namespace kiln::onnx
