//===- ONNXIndexOps.cpp - ONNX index-driven data movement -----------------===//
//
// GatherElements GatherND -> TOSA, and the refusal of operators whose output
// shape depends on tensor values (NonZero Unique Compress NonMaxSuppression).
//
// Both gathers become one tosa.gather: the data viewed as [N, K, C] and a
// row index per output element computed in i32 (constant offsets built at
// import plus the index input scaled by its stride). Indices may be graph
// inputs: negative indices count from the end of their axis (index + size),
// then every index is clamped into [0, size) so generated code never reads
// outside the data. Constant indices out of [-size, size) are refused at
// import.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }

/// An i32 tensor type of `shape`.
RankedTensorType i32Type(NodeContext &ctx, llvm::ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, ctx.builder().getI32Type());
}

/// Fails unless every constant index of input `i` lies in [-size, size),
/// where `sizeOf(position)` is the axis size the element at that flat
/// position indexes. Runtime indices pass (they are wrapped and clamped).
LogicalResult checkConstantIndices(NodeContext &ctx, int i,
                                   llvm::function_ref<int64_t(size_t)> sizeOf) {
  const Tensor *t = ctx.constant(i);
  if (!t)
    return success();
  if (t->isFloat())
    return ctx.fail("indices must be int32 or int64");
  for (size_t p = 0; p < t->ints.size(); ++p) {
    int64_t v = t->ints[p], k = sizeOf(p);
    if (v < -k || v >= k)
      return ctx.fail("index " + llvm::Twine(v) + " is out of range [" + llvm::Twine(-k) + ", " +
                      llvm::Twine(k - 1) + "]");
  }
  return success();
}

/// Input `i` (int32 or int64 indices) as i32 with negative entries wrapped
/// (+ size) and all clamped into [0, size), where `sizes` (broadcast against
/// the indices' shape) holds the size of the axis each index addresses.
FailureOr<Value> wrappedIndices(NodeContext &ctx, int i, Value sizes) {
  FailureOr<Value> idx = ctx.input(i);
  if (failed(idx))
    return failure();
  Type element = idx->getType().cast<RankedTensorType>().getElementType();
  if (!element.isInteger(32) && !element.isInteger(64))
    return ctx.fail("indices must be int32 or int64");
  std::vector<int64_t> shape(shapeOf(*idx));
  auto type = i32Type(ctx, shape);
  Value v = element.isInteger(32) ? *idx : ctx.create<tosa::CastOp>(type, *idx);
  auto boolType = RankedTensorType::get(shape, ctx.builder().getI1Type());
  int64_t rank = shape.size();
  Value zero = ctx.constI32(std::vector<int64_t>(rank, 1), {0});
  Value one = ctx.constI32(std::vector<int64_t>(rank, 1), {1});
  Value negative = ctx.create<tosa::GreaterOp>(boolType, zero, v);
  Value wrapped = ctx.create<tosa::AddOp>(type, v, sizes);
  v = ctx.create<tosa::SelectOp>(type, negative, wrapped, v);
  Value last = ctx.create<tosa::SubOp>(sizes.getType(), sizes, one);
  v = ctx.create<tosa::MinimumOp>(type, v, last);
  return ctx.create<tosa::MaximumOp>(type, v, zero);
}

/// i32 elementwise product with TOSA's shift 0.
Value mulI32(NodeContext &ctx, RankedTensorType type, Value a, Value b) {
  return ctx.create<tosa::MulOp>(type, a, b, ctx.builder().getI32IntegerAttr(0));
}

// --- GatherElements -----------------------------------------------------------

/// GatherElements (opset 11+, axis default 0): data and indices have the
/// same rank; output[o] = data[o with o[axis] replaced by indices[o]], of
/// the indices' shape (ONNX Operators.md GatherElements). TOSA: data
/// flattened to [1, N, 1]; row = base(o) + index(o) * stride(axis), base a
/// constant of the other coordinates' offsets.
LogicalResult convertGatherElements(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0), idxShape = ctx.inputShape(1);
  int64_t rank = in.size(), axis = normalizeAxis(ctx.attrInt("axis", 0), rank);
  if (rank == 0 || axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 0)) +
                    " is out of range for data of rank " + llvm::Twine(rank));
  if (int64_t(idxShape.size()) != rank)
    return ctx.fail("indices of rank " + llvm::Twine(idxShape.size()) +
                    " must have the rank of data (" + llvm::Twine(rank) + ")");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idxShape[d] > in[d])
      return ctx.fail("indices " + shapeString(idxShape) + " exceed data " + shapeString(in) +
                      " in dimension " + llvm::Twine(d));
  int64_t n = product(in), w = product(idxShape);
  if (n == 0 || w == 0 || n > INT32_MAX)
    return ctx.fail("data " + shapeString(in) + " and indices " + shapeString(idxShape) +
                    " must be non-empty with fewer than 2^31 elements");
  if (failed(checkConstantIndices(ctx, 1, [&](size_t) { return in[axis]; })))
    return failure();
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * in[d + 1];
  std::vector<int32_t> base(w);
  for (int64_t p = 0; p < w; ++p) {
    int64_t rest = p, offset = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != axis)
        offset += (rest % idxShape[d]) * stride[d];
      rest /= idxShape[d];
    }
    base[p] = int32_t(offset);
  }
  std::vector<int64_t> ones(rank, 1);
  FailureOr<Value> idx = wrappedIndices(ctx, 1, ctx.constI32(ones, {int32_t(in[axis])}));
  FailureOr<Value> x = ctx.input(0);
  if (failed(idx) || failed(x))
    return failure();
  auto type = i32Type(ctx, idxShape);
  Value rows = mulI32(ctx, type, *idx, ctx.constI32(ones, {int32_t(stride[axis])}));
  rows = ctx.create<tosa::AddOp>(type, rows, ctx.constI32(idxShape, base));
  Value values = ctx.reshape(*x, {1, n, 1});
  Type element = x->getType().cast<RankedTensorType>().getElementType();
  Value gathered = ctx.create<tosa::GatherOp>(RankedTensorType::get({1, w, 1}, element), values,
                                              ctx.reshape(rows, {1, w}));
  return ctx.setOutput(0, ctx.reshape(gathered, idxShape));
}

// --- GatherND -------------------------------------------------------------------

/// GatherND (opset 11+, batch_dims from 12, default 0): indices [..., m]
/// address the m dimensions of data after the b batch dimensions; output
/// shape indices[:-1] + data[b + m:] (ONNX Operators.md GatherND). TOSA:
/// data as [B, K, C] (B the batch, K the addressed dimensions, C the rest),
/// the index tuples folded to row numbers by a dot with K's strides
/// (tosa.mul, tosa.reduce_sum), one tosa.gather.
LogicalResult convertGatherND(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0), q = ctx.inputShape(1);
  int64_t r = in.size(), qr = q.size(), b = ctx.attrInt("batch_dims", 0);
  if (r < 1 || qr < 1 || b < 0 || b >= std::min(r, qr))
    return ctx.fail("data of rank " + llvm::Twine(r) + ", indices of rank " + llvm::Twine(qr) +
                    " and batch_dims " + llvm::Twine(b) +
                    " need ranks >= 1 and batch_dims below both");
  int64_t m = q.back();
  if (m < 1 || m > r - b)
    return ctx.fail("the last indices dimension " + llvm::Twine(m) + " must be in [1, " +
                    llvm::Twine(r - b) + "]");
  for (int64_t d = 0; d < b; ++d)
    if (q[d] != in[d])
      return ctx.fail("batch dimension " + llvm::Twine(d) + " differs: data " + shapeString(in) +
                      ", indices " + shapeString(q));
  llvm::ArrayRef<int64_t> dims(in);
  int64_t batch = product(dims.take_front(b)), k = product(dims.slice(b, m));
  int64_t inner = product(dims.drop_front(b + m));
  int64_t l = product(llvm::ArrayRef<int64_t>(q).slice(b, qr - 1 - b));
  std::vector<int64_t> out(q.begin(), q.end() - 1);
  out.insert(out.end(), dims.begin() + b + m, dims.end());
  if (product(in) == 0 || product(out) == 0 || product(in) > INT32_MAX)
    return ctx.fail("data " + shapeString(in) + " and output " + shapeString(out) +
                    " must be non-empty with fewer than 2^31 elements");
  if (failed(checkConstantIndices(ctx, 1, [&](size_t p) { return in[b + p % m]; })))
    return failure();
  std::vector<int32_t> sizes, strides(m, 1);
  for (int64_t j = 0; j < m; ++j)
    sizes.push_back(int32_t(in[b + j]));
  for (int64_t j = m - 2; j >= 0; --j)
    strides[j] = strides[j + 1] * int32_t(in[b + j + 1]);
  std::vector<int64_t> tupleShape(qr, 1);
  tupleShape.back() = m;
  FailureOr<Value> idx = wrappedIndices(ctx, 1, ctx.constI32(tupleShape, sizes));
  FailureOr<Value> x = ctx.input(0);
  if (failed(idx) || failed(x))
    return failure();
  Value gathered = ctx.gatherTuples(ctx.reshape(*x, {batch, k, inner}),
                                    ctx.reshape(*idx, {batch, l, m}), strides);
  return ctx.setOutput(0, ctx.reshape(gathered, out));
}

// --- Data-dependent output shapes ------------------------------------------------

/// NonZero, Unique, Compress, NonMaxSuppression: the output's size depends
/// on the input values, and Kiln compiles static shapes.
LogicalResult refuseDataDependentShape(NodeContext &ctx) {
  return ctx.fail("the output shape depends on the input values; Kiln compiles static shapes, "
                  "which must be known when the model is compiled");
}

} // namespace

void registerIndexOps(ConverterTable &table) {
  table["GatherElements"] = convertGatherElements;
  table["GatherND"] = convertGatherND;
  for (const char *op : {"NonZero", "Unique", "Compress", "NonMaxSuppression"})
    table[op] = refuseDataDependentShape;
}

} // namespace kiln::onnx
