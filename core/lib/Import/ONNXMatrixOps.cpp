//===- ONNXMatrixOps.cpp - ONNX triangles, prefix sums, top-k, reversals --===//
//
// Trilu EyeLike CumSum TopK ReverseSequence Det -> TOSA (Einsum is in
// ONNXEinsumOps.cpp).
//
// None of these has a TOSA 0.60 op of its own; each is built from
// constants known at import (index grids, masks) and elementwise compares,
// selects, reductions, pads and slices:
//   Trilu            a select against a constant (or k-dependent) mask;
//   EyeLike          folded to a constant;
//   CumSum           log2(n) shifted adds (Hillis-Steele), with a
//                    reverse for `reverse` and a one-step shift for
//                    `exclusive`; exact for integers;
//   TopK             each element's rank (how many elements beat it, ties
//                    to the lower index) from an [n, n] comparison, then
//                    the rank-r element picked by a select and a reduction:
//                    k from a constant, ties lower index first, sorted;
//   ReverseSequence  a tosa.gather with per-(batch, time) source indices
//                    computed from sequence_lens at run time;
//   Det              cofactor expansion along the first row (n <= 6).
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

/// Fails unless input `i` is float32, int32 or int64 (what these converters
/// compute on).
FailureOr<Value> numericInput(NodeContext &ctx, int i) {
  FailureOr<Value> v = ctx.input(i);
  if (failed(v))
    return failure();
  Type e = elementOf(*v);
  if (!e.isF32() && !e.isInteger(32) && !e.isInteger(64))
    return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                    "') has element type " + dataTypeName(ctx.inputType(i)) + "; " +
                    ctx.node().opType + " is converted for float32, int32 and int64");
  return v;
}

/// The smallest value of `element` (-inf for f32): the neutral element of a
/// maximum.
double lowest(Type element) {
  if (element.isF32())
    return -std::numeric_limits<double>::infinity();
  return element.isInteger(32) ? double(INT32_MIN) : -9.3e18; // saturates to INT64_MIN
}

Value binaryOp(NodeContext &ctx, llvm::StringRef op, Value a, Value b) {
  auto shape = broadcastShapes(shapeOf(a), shapeOf(b));
  auto type = typeOf(*shape, elementOf(a));
  if (op == "add")
    return ctx.create<tosa::AddOp>(type, a, b);
  if (op == "sub")
    return ctx.create<tosa::SubOp>(type, a, b);
  return ctx.create<tosa::MulOp>(type, a, b, ctx.builder().getI32IntegerAttr(0));
}

// --- Trilu ------------------------------------------------------------------

/// Trilu (14; upper default 1, k default 0): keeps the elements of the last
/// two dimensions with j - i >= k (upper) or j - i <= k (lower) and zeroes
/// the others (ONNX Operators.md Trilu). k may be computed at run time.
LogicalResult convertTrilu(NodeContext &ctx) {
  std::vector<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  if (rank < 2)
    return ctx.fail("input of rank " + llvm::Twine(rank) + "; Trilu needs rank >= 2");
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  bool upper = ctx.attrInt("upper", 1) != 0;
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  std::vector<int64_t> grid(rank, 1);
  grid[rank - 2] = rows;
  grid[rank - 1] = cols;
  Value keep;
  if (!ctx.hasInput(1) || ctx.constant(1)) {
    int64_t k = 0;
    if (ctx.hasInput(1)) {
      FailureOr<std::vector<int64_t>> kv = ctx.constantInts(1);
      if (failed(kv) || kv->size() != 1)
        return failed(kv) ? failure() : ctx.fail("k must hold one value");
      k = kv->front();
    }
    std::vector<int32_t> cells(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        cells[i * cols + j] = upper ? (j - i >= k) : (j - i <= k);
    Value mask = ctx.constI32(grid, cells);
    keep = ctx.create<tosa::EqualOp>(boolType(ctx, grid), mask,
                                     ctx.constI32(std::vector<int64_t>(rank, 1), {1}));
  } else {
    if (ctx.inputType(1) != kInt64 || product(ctx.inputShape(1)) != 1)
      return ctx.fail("k must be an int64 scalar");
    FailureOr<Value> k = ctx.input(1);
    if (failed(k))
      return failure();
    std::vector<int64_t> diff(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        diff[i * cols + j] = j - i;
    Value d = ctx.constI64(grid, diff);
    Value kk = ctx.reshape(*k, std::vector<int64_t>(rank, 1));
    keep = upper ? ctx.create<tosa::GreaterEqualOp>(boolType(ctx, grid), d, kk)
                 : ctx.create<tosa::GreaterEqualOp>(boolType(ctx, grid), kk, d);
  }
  Value zero = ctx.scalarOf(elementOf(*x), 0, rank);
  return ctx.setOutput(0, ctx.create<tosa::SelectOp>(x->getType(), keep, *x, zero));
}

// --- EyeLike ------------------------------------------------------------------

/// EyeLike (9; dtype default the input's, k default 0): ones on the k-th
/// diagonal of a 2-D tensor of the input's shape, zeros elsewhere, folded to
/// a constant.
LogicalResult convertEyeLike(NodeContext &ctx) {
  std::vector<int64_t> shape = ctx.inputShape(0);
  if (shape.size() != 2)
    return ctx.fail("input of rank " + llvm::Twine(shape.size()) + "; EyeLike takes rank 2");
  int32_t dtype = int32_t(ctx.attrInt("dtype", ctx.inputType(0)));
  if (!isFloatType(dtype) && dtype != kInt32 && dtype != kInt64 && dtype != kBool)
    return ctx.fail("dtype " + dataTypeName(dtype) +
                    " is not supported; EyeLike makes float32, int32, int64 or bool tensors");
  int64_t k = ctx.attrInt("k", 0);
  Tensor t;
  t.dataType = dtype;
  t.dims = shape;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      bool one = j - i == k;
      if (isFloatType(dtype))
        t.floats.push_back(one ? 1.0f : 0.0f);
      else
        t.ints.push_back(one ? 1 : 0);
    }
  return ctx.setConstant(0, std::move(t));
}

// --- CumSum --------------------------------------------------------------------

/// `v` shifted by `s` along `axis`: s zeros in front, the last s elements
/// dropped.
Value shiftAlong(NodeContext &ctx, Value v, int64_t axis, int64_t s) {
  std::vector<int64_t> shape(shapeOf(v)), padded = shape;
  std::vector<int32_t> pads(2 * shape.size(), 0);
  pads[2 * axis] = int32_t(s);
  padded[axis] += s;
  Value padding = ctx.constI32({int64_t(shape.size()), 2}, pads);
  Value p = ctx.create<tosa::PadOp>(typeOf(padded, elementOf(v)), v, padding,
                                    ctx.scalarOf(elementOf(v), 0, 0), nullptr);
  return ctx.slice(p, std::vector<int64_t>(shape.size(), 0), shape);
}

/// CumSum (11, 14; exclusive and reverse default 0): running sums along a
/// constant axis (ONNX Operators.md CumSum). Hillis-Steele: after step s
/// (1, 2, 4, ...) element i holds the sum of the 2s elements ending at i.
LogicalResult convertCumSum(NodeContext &ctx) {
  FailureOr<Value> x = numericInput(ctx, 0);
  if (failed(x))
    return failure();
  FailureOr<std::vector<int64_t>> axisValue = ctx.constantInts(1);
  if (failed(axisValue))
    return failure();
  int64_t rank = shapeOf(*x).size();
  if (axisValue->size() != 1 || rank == 0)
    return ctx.fail("axis must hold one value and the input must have rank >= 1");
  int64_t axis = normalizeAxis(axisValue->front(), rank);
  if (axis < 0)
    return ctx.fail("axis " + llvm::Twine(axisValue->front()) +
                    " is out of range for an input of rank " + llvm::Twine(rank));
  auto &b = ctx.builder();
  bool reverse = ctx.attrInt("reverse", 0) != 0, exclusive = ctx.attrInt("exclusive", 0) != 0;
  Value v = *x;
  if (reverse)
    v = ctx.create<tosa::ReverseOp>(v.getType(), v, b.getI64IntegerAttr(axis));
  int64_t n = shapeOf(v)[axis];
  if (exclusive)
    v = shiftAlong(ctx, v, axis, 1);
  for (int64_t s = 1; s < n; s *= 2)
    v = binaryOp(ctx, "add", v, shiftAlong(ctx, v, axis, s));
  if (reverse)
    v = ctx.create<tosa::ReverseOp>(v.getType(), v, b.getI64IntegerAttr(axis));
  return ctx.setOutput(0, v);
}

// --- TopK -----------------------------------------------------------------------

/// The most elements of the [rows, n, n] comparison TopK builds.
constexpr int64_t kMaxTopKCompare = int64_t(1) << 24;

/// TopK (1, 10, 11; axis default -1, largest 1, sorted 1): the k largest
/// (or smallest) elements along an axis and their int64 indices, sorted,
/// equal values lower index first (ONNX Operators.md TopK). k must be a
/// constant (input 1 from opset 10, attribute k before).
LogicalResult convertTopK(NodeContext &ctx) {
  FailureOr<Value> x = numericInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  int64_t axis = normalizeAxis(ctx.attrInt("axis", -1), rank);
  if (rank == 0 || axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", -1)) +
                    " is out of range for an input of rank " + llvm::Twine(rank));
  int64_t k;
  if (ctx.opset() < 10) {
    k = ctx.attrInt("k", -1);
  } else {
    if (!ctx.constant(1))
      return ctx.fail("k (input 1 '" + ctx.node().inputs[1] +
                      "') is not known when the model is compiled; Kiln takes TopK with a "
                      "constant k (the output shape)");
    FailureOr<std::vector<int64_t>> kv = ctx.constantInts(1);
    if (failed(kv) || kv->size() != 1)
      return failed(kv) ? failure() : ctx.fail("k must hold one value");
    k = kv->front();
  }
  int64_t n = shape[axis];
  if (k < 1 || k > n)
    return ctx.fail("k = " + llvm::Twine(k) + " is outside [1, " + llvm::Twine(n) +
                    "] (the size of axis " + llvm::Twine(axis) + ")");
  // [rows, n] with the axis last.
  std::vector<int32_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(int32_t(d));
  perm.push_back(int32_t(axis));
  std::vector<int64_t> moved;
  for (int32_t d : perm)
    moved.push_back(shape[d]);
  int64_t rowCount = product(shape) / n;
  if (rowCount * n * n > kMaxTopKCompare)
    return ctx.fail("an axis of " + llvm::Twine(n) + " elements in " + llvm::Twine(rowCount) +
                    " rows is above the " + llvm::Twine(kMaxTopKCompare) +
                    " comparisons Kiln's TopK builds (rows x n x n)");
  Type element = elementOf(*x);
  Value rows = ctx.reshape(ctx.transpose(*x, perm), {rowCount, n});
  Value xi = ctx.reshape(rows, {rowCount, n, 1}), xj = ctx.reshape(rows, {rowCount, 1, n});
  auto cmpType = boolType(ctx, {rowCount, n, n});
  bool largest = ctx.attrInt("largest", 1) != 0;
  Value better = largest ? ctx.create<tosa::GreaterOp>(cmpType, xj, xi)
                         : ctx.create<tosa::GreaterOp>(cmpType, xi, xj);
  Value equal = ctx.create<tosa::EqualOp>(cmpType, xj, xi);
  std::vector<int32_t> before(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      before[i * n + j] = j < i;
  Value earlier = ctx.create<tosa::EqualOp>(
      boolType(ctx, {1, n, n}), ctx.constI32({1, n, n}, before), ctx.constI32({1, 1, 1}, {1}));
  Value tieBefore = ctx.create<tosa::LogicalAndOp>(cmpType, equal, earlier);
  Value beats = ctx.create<tosa::LogicalOrOp>(cmpType, better, tieBefore);
  auto &b = ctx.builder();
  Value count = ctx.create<tosa::CastOp>(typeOf({rowCount, n, n}, b.getI32Type()), beats);
  Value rankOf = ctx.create<tosa::ReduceSumOp>(typeOf({rowCount, n, 1}, b.getI32Type()), count,
                                               b.getI64IntegerAttr(2));
  // pick[r, i, t]: element i has rank t (t < k).
  auto pickType = boolType(ctx, {rowCount, n, k});
  Value pick = ctx.create<tosa::EqualOp>(pickType, rankOf, ctx.iotaI32({1, 1, k}, 2));
  Value chosen = ctx.create<tosa::SelectOp>(typeOf({rowCount, n, k}, element), pick, xi,
                                            ctx.scalarOf(element, lowest(element), 3));
  Value values = ctx.create<tosa::ReduceMaxOp>(typeOf({rowCount, 1, k}, element), chosen,
                                               b.getI64IntegerAttr(1));
  Value where =
      ctx.create<tosa::SelectOp>(typeOf({rowCount, n, k}, b.getI32Type()), pick,
                                 ctx.iotaI32({1, n, 1}, 1), ctx.constI32({1, 1, 1}, {-1}));
  Value index = ctx.create<tosa::ReduceMaxOp>(typeOf({rowCount, 1, k}, b.getI32Type()), where,
                                              b.getI64IntegerAttr(1));
  std::vector<int64_t> outMoved = moved;
  outMoved.back() = k;
  std::vector<int32_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = int32_t(d);
  auto finish = [&](Value v) { return ctx.transpose(ctx.reshape(v, outMoved), inverse); };
  Value index64 = ctx.create<tosa::CastOp>(typeOf({rowCount, 1, k}, b.getI64Type()), index);
  if (failed(ctx.setOutput(0, finish(values))))
    return failure();
  return ctx.setOutput(1, finish(index64));
}

// --- ReverseSequence ---------------------------------------------------------------

/// ReverseSequence (10; batch_axis default 1, time_axis 0, one of them 0 and
/// the other 1): in batch b the first sequence_lens[b] time steps are
/// reversed, the rest copied (ONNX Operators.md ReverseSequence). Lengths
/// may be computed at run time; they are clamped into [0, time steps].
LogicalResult convertReverseSequence(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  int64_t batchAxis = ctx.attrInt("batch_axis", 1), timeAxis = ctx.attrInt("time_axis", 0);
  if (rank < 2 || !((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return ctx.fail("batch_axis " + llvm::Twine(batchAxis) + " and time_axis " +
                    llvm::Twine(timeAxis) + " on rank " + llvm::Twine(rank) +
                    "; ReverseSequence takes rank >= 2 with axes 0 and 1");
  int32_t lensType = ctx.inputType(1);
  if (lensType != kInt64 && lensType != kInt32)
    return ctx.fail("sequence_lens must be int64");
  int64_t batch = shape[batchAxis], steps = shape[timeAxis];
  if (ctx.inputShape(1) != std::vector<int64_t>{batch})
    return ctx.fail("sequence_lens has shape " + shapeString(ctx.inputShape(1)) +
                    " where the batch is " + llvm::Twine(batch));
  FailureOr<Value> lensValue = ctx.input(1);
  if (failed(lensValue))
    return failure();
  auto &b = ctx.builder();
  auto i32 = [&](llvm::ArrayRef<int64_t> s) { return typeOf(s, b.getI32Type()); };
  Value lens = *lensValue;
  if (!elementOf(lens).isInteger(32))
    lens = ctx.create<tosa::CastOp>(i32({batch}), lens);
  lens = ctx.reshape(lens, {batch, 1});
  Value t = ctx.iotaI32({1, steps}, 1);
  Value one = ctx.constI32({1, 1}, {1});
  Value reversed = ctx.create<tosa::SubOp>(i32({batch, steps}),
                                           ctx.create<tosa::SubOp>(i32({batch, 1}), lens, one), t);
  Value inside = ctx.create<tosa::GreaterOp>(boolType(ctx, {batch, steps}), lens, t);
  Value source = ctx.create<tosa::SelectOp>(i32({batch, steps}), inside, reversed,
                                            ctx.iotaI32({batch, steps}, 1));
  source = ctx.create<tosa::MaximumOp>(i32({batch, steps}), source, ctx.constI32({1, 1}, {0}));
  source = ctx.create<tosa::MinimumOp>(i32({batch, steps}), source,
                                       ctx.constI32({1, 1}, {int32_t(steps - 1)}));
  int64_t inner = product(shape) / (batch * steps);
  Value v = batchAxis == 0 ? *x : ctx.transpose(*x, [&] {
    std::vector<int32_t> p{1, 0};
    for (int32_t d = 2; d < rank; ++d)
      p.push_back(d);
    return p;
  }());
  std::vector<int64_t> moved(shapeOf(v));
  Value values = ctx.reshape(v, {batch, steps, inner});
  Value gathered =
      ctx.create<tosa::GatherOp>(typeOf({batch, steps, inner}, elementOf(v)), values, source);
  Value out = ctx.reshape(gathered, moved);
  if (batchAxis != 0) {
    std::vector<int32_t> p{1, 0};
    for (int32_t d = 2; d < rank; ++d)
      p.push_back(d);
    out = ctx.transpose(out, p);
  }
  return ctx.setOutput(0, out);
}

// --- Det -----------------------------------------------------------------------

/// The largest matrix Det expands by cofactors (n! terms).
constexpr int64_t kMaxDetSize = 6;

/// det of `m` [B, n, n] as [B, 1, 1], by cofactor expansion along row 0.
Value determinant(NodeContext &ctx, Value m) {
  int64_t b = shapeOf(m)[0], n = shapeOf(m)[1];
  auto one = ctx.f32Type({b, 1, 1});
  auto at = [&](int64_t i, int64_t j) { return ctx.slice(m, {0, i, j}, {b, 1, 1}); };
  if (n == 1)
    return m;
  if (n == 2)
    return ctx.create<tosa::SubOp>(one, binaryOp(ctx, "mul", at(0, 0), at(1, 1)),
                                   binaryOp(ctx, "mul", at(0, 1), at(1, 0)));
  Value sum;
  for (int64_t j = 0; j < n; ++j) {
    llvm::SmallVector<Value> cols;
    if (j > 0)
      cols.push_back(ctx.slice(m, {0, 1, 0}, {b, n - 1, j}));
    if (j < n - 1)
      cols.push_back(ctx.slice(m, {0, 1, j + 1}, {b, n - 1, n - 1 - j}));
    Value minor = cols.size() == 1
                      ? cols[0]
                      : ctx.create<tosa::ConcatOp>(ctx.f32Type({b, n - 1, n - 1}), cols,
                                                   ctx.builder().getI64IntegerAttr(2));
    Value term = binaryOp(ctx, "mul", at(0, j), determinant(ctx, minor));
    sum = !sum ? term : binaryOp(ctx, j % 2 ? "sub" : "add", sum, term);
  }
  return sum;
}

/// Det (11): the determinants of the [..., n, n] input's matrices, [...],
/// by cofactor expansion (n <= kMaxDetSize).
LogicalResult convertDet(NodeContext &ctx) {
  std::vector<int64_t> shape = ctx.inputShape(0);
  int64_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2] || !isFloatType(ctx.inputType(0)))
    return ctx.fail("input " + shapeString(shape) + " must be float32 [..., n, n]");
  int64_t n = shape.back();
  if (n > kMaxDetSize)
    return ctx.fail(llvm::Twine(n) + " x " + llvm::Twine(n) + " matrices are above the " +
                    llvm::Twine(kMaxDetSize) + " x " + llvm::Twine(kMaxDetSize) +
                    " Kiln's Det expands by cofactors");
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t batch = product(shape) / (n * n);
  Value d = determinant(ctx, ctx.reshape(*x, {batch, n, n}));
  return ctx.setOutput(0, ctx.reshape(d, std::vector<int64_t>(shape.begin(), shape.end() - 2)));
}

} // namespace

void registerMatrixOps(ConverterTable &table) {
  table["Det"] = convertDet;
  table["Trilu"] = convertTrilu;
  table["EyeLike"] = convertEyeLike;
  table["CumSum"] = convertCumSum;
  table["TopK"] = convertTopK;
  table["ReverseSequence"] = convertReverseSequence;
}

} // namespace kiln::onnx
