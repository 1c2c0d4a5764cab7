//===- ONNXShapeOps.cpp - ONNX shape and data-movement converters ---------===//
//
// Constant Identity Dropout Shape Size Reshape Flatten Squeeze Unsqueeze
// Transpose Concat Split Slice Gather Pad Tile Expand ConstantOfShape Range
// Cast CastLike -> TOSA.
//
// Constant folding: ONNX models compute shapes at run time (Shape -> Gather
// -> Concat -> Reshape). Kiln's shapes are static, so every converter here
// computes its result at import when its data inputs are constants
// (NodeContext::constant) and binds it with setConstant; only values a
// computation reads become tosa.const. The folding helpers of
// ONNXTensorFolding.h (remap, concatTensors, castTensor) do the index
// arithmetic on onnx::Tensor once for all operators. Non-constant data emits
// TOSA.
//
// Shape-like inputs (Reshape's shape, Slice's starts/ends, Pad's pads, ...)
// must be constants: their values decide output shapes.
//
// Empty results (a 0 dimension: an empty slice or split part) become empty
// constants; Kiln refuses them only if a computation or an output needs them.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "ONNXTensorFolding.h"
#include "TosaMath.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::onnx {
namespace {

using namespace fold;

// --- TOSA helpers ------------------------------------------------------------

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }

Type elementOf(Value v) { return v.getType().cast<RankedTensorType>().getElementType(); }

/// Tensor type of `shape` with the element type of `like`.
RankedTensorType typeLike(Value like, llvm::ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, elementOf(like));
}

/// tosa.slice of [start, start + size) along dimension `d` only.
Value sliceAxis(NodeContext &ctx, Value v, int64_t d, int64_t start, int64_t size) {
  llvm::SmallVector<int64_t> begin(shapeOf(v).size(), 0), sizes(shapeOf(v));
  begin[d] = start;
  sizes[d] = size;
  return ctx.slice(v, begin, sizes);
}

/// A tosa.const of `shape` filled with `value` (pad values, broadcast
/// operands).
Value filledConst(NodeContext &ctx, Type element, llvm::ArrayRef<int64_t> shape, double value) {
  auto type = RankedTensorType::get(shape, element);
  DenseElementsAttr attr;
  if (element.isF32())
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(float(value)));
  else if (element.isInteger(1))
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<bool>(value != 0));
  else
    attr = DenseElementsAttr::get(
        type, llvm::ArrayRef<APInt>(APInt(element.getIntOrFloatBitWidth(), int64_t(value), true)));
  return ctx.builder().create<tosa::ConstOp>(ctx.loc(), type, attr);
}

// --- Shared converter pieces ----------------------------------------------------

/// Binds output `out` to input 0 reshaped to `dims` (same elements, same
/// order): folded for a constant (or an empty tensor), tosa.reshape
/// otherwise.
LogicalResult bindReshaped(NodeContext &ctx, int out, std::vector<int64_t> dims) {
  if (const Tensor *t = ctx.constant(0))
    return ctx.setConstant(out, reshapedTensor(*t, std::move(dims)));
  if (product(dims) == 0)
    return ctx.setConstant(out, emptyTensor(ctx.inputType(0), std::move(dims)));
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.setOutput(out, ctx.reshape(*x, dims));
}

/// Integers from attribute `name` before opset `inputSince`, else from input
/// `input` (which must be constant). Missing: nullopt.
FailureOr<std::optional<std::vector<int64_t>>>
intsFromAttrOrInput(NodeContext &ctx, const std::string &name, int64_t inputSince, int input) {
  if (ctx.opset() < inputSince) {
    if (!ctx.hasAttr(name))
      return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(ctx.attrInts(name));
  }
  if (!ctx.hasInput(input))
    return std::optional<std::vector<int64_t>>();
  FailureOr<std::vector<int64_t>> v = ctx.constantInts(input);
  if (failed(v))
    return failure();
  return std::optional<std::vector<int64_t>>(std::move(*v));
}

/// Normalizes axis list `axes` against `rank`; fails naming `what` on an out
/// of range or repeated axis.
FailureOr<std::vector<int64_t>> normalizeAxes(NodeContext &ctx, std::vector<int64_t> axes,
                                              int64_t rank, const char *what) {
  std::vector<bool> seen(rank, false);
  for (int64_t &a : axes) {
    int64_t n = normalizeAxis(a, rank);
    if (n < 0 || n >= rank || seen[n])
      return ctx.fail(llvm::Twine(what) + " " + shapeString(axes) + " must name distinct axes in [" +
                      llvm::Twine(-rank) + ", " + llvm::Twine(rank - 1) + "]");
    seen[n] = true;
    a = n;
  }
  return axes;
}

// --- Constant, Identity, Dropout, Shape, Size -----------------------------------

/// Constant: the tensor of one of the attributes value (a TensorProto),
/// value_float / value_int (opset 12+: scalars), value_floats / value_ints
/// (opset 12+: 1-D). sparse_value and string values are refused.
LogicalResult convertConstant(NodeContext &ctx) {
  if (const Tensor *t = ctx.attrTensor("value"))
    return ctx.setConstant(0, *t);
  const Attribute *a = nullptr;
  for (const char *name : {"value_float", "value_int", "value_floats", "value_ints"})
    if (!a)
      a = ctx.node().attribute(name);
  if (!a)
    return ctx.fail("only the value, value_float, value_int, value_floats and value_ints "
                    "attributes are supported (not sparse_value or strings)");
  if (a->kind == Attribute::Float)
    return ctx.setConstant(0, makeTensor(kFloat, {}, {double(a->f)}));
  if (a->kind == Attribute::Int)
    return ctx.setConstant(0, int64Tensor({}, {a->i}));
  if (a->kind == Attribute::Floats)
    return ctx.setConstant(0, makeTensor(kFloat, {int64_t(a->floats.size())},
                                         std::vector<double>(a->floats.begin(), a->floats.end())));
  if (a->kind == Attribute::Ints)
    return ctx.setConstant(0, int64Tensor({int64_t(a->ints.size())}, a->ints));
  return ctx.fail("attribute " + a->name + " has the wrong kind");
}

/// Identity: output = input (any type and shape).
LogicalResult convertIdentity(NodeContext &ctx) { return bindReshaped(ctx, 0, ctx.inputShape(0)); }

/// Dropout in inference: output = input; the optional mask output (opset
/// 7+: bool) is all true. Opset 12+ takes ratio (ignored in inference) and
/// training_mode inputs; training_mode must be absent or a constant false.
/// Opset 7-11's is_test / ratio attributes change nothing in inference.
LogicalResult convertDropout(NodeContext &ctx) {
  if (ctx.opset() >= 12 && ctx.hasInput(2)) {
    const Tensor *training = ctx.constant(2);
    if (!training || training->numElements() != 1 || training->at(0) != 0)
      return ctx.fail("training_mode (input 2) must be a constant false: Kiln compiles "
                      "inference, where Dropout passes its input through");
  }
  if (failed(bindReshaped(ctx, 0, ctx.inputShape(0))))
    return failure();
  std::vector<int64_t> dims = ctx.inputShape(0);
  Tensor mask = emptyTensor(kBool, dims);
  mask.ints.assign(product(dims), 1);
  return ctx.setConstant(1, std::move(mask));
}

/// Shape: the input's dimensions as a 1-D int64 constant. Opset 15+ keeps
/// dims[start:end] (negative values count from the end, both clamped to
/// [0, rank]; start >= end gives an empty tensor).
LogicalResult convertShape(NodeContext &ctx) {
  std::vector<int64_t> dims = ctx.inputShape(0);
  int64_t rank = dims.size();
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    start = ctx.attrInt("start", 0);
    end = ctx.attrInt("end", rank);
  }
  auto clampIndex = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  start = clampIndex(start);
  end = std::max(clampIndex(end), start);
  std::vector<int64_t> kept(dims.begin() + start, dims.begin() + end);
  return ctx.setConstant(0, int64Tensor({int64_t(kept.size())}, kept));
}

/// Size: the input's element count as an int64 scalar constant.
LogicalResult convertSize(NodeContext &ctx) {
  return ctx.setConstant(0, int64Tensor({}, {product(ctx.inputShape(0))}));
}

// --- Reshape, Flatten, Squeeze, Unsqueeze ------------------------------------------

/// Reshape: input 1 (opset 5+) is the constant new shape; an entry 0 copies
/// the input's dimension at that position (unless allowzero = 1, opset 14+,
/// where 0 is a zero size), one -1 takes the remaining elements.
LogicalResult convertReshape(NodeContext &ctx) {
  FailureOr<std::vector<int64_t>> target = ctx.constantInts(1);
  if (failed(target))
    return failure();
  std::vector<int64_t> in = ctx.inputShape(0), shape = *target;
  bool allowZero = ctx.opset() >= 14 && ctx.attrInt("allowzero", 0) != 0;
  int64_t known = 1, open = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowZero) {
      if (d >= in.size())
        return ctx.fail("shape " + shapeString(*target) + " copies dimension " +
                        llvm::Twine(d) + " (a 0) of an input of rank " + llvm::Twine(in.size()));
      shape[d] = in[d];
    }
    if (shape[d] == -1 && open < 0) {
      open = d;
      continue;
    }
    if (shape[d] < 0)
      return ctx.fail("shape " + shapeString(*target) + " has more than one -1 or a negative size");
    if (__builtin_mul_overflow(known, shape[d], &known))
      return ctx.fail("shape " + shapeString(*target) + " has more elements than int64 holds");
  }
  int64_t count = product(in);
  if (open >= 0 && known != 0 && count % known == 0)
    shape[open] = count / known;
  if ((open >= 0 && (known == 0 || count % known != 0)) || (open < 0 && known != count))
    return ctx.fail("the input " + shapeString(in) + " (" + llvm::Twine(count) +
                    " elements) cannot be reshaped to " + shapeString(*target));
  return bindReshaped(ctx, 0, shape);
}

/// Flatten: [prod(dims[:axis]), prod(dims[axis:])]; axis (default 1) in
/// [0, rank], negative from opset 11 (counted from rank).
LogicalResult convertFlatten(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size(), axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 1)) + " is out of range [" +
                    llvm::Twine(-rank) + ", " + llvm::Twine(rank) + "]");
  llvm::ArrayRef<int64_t> dims(in);
  return bindReshaped(ctx, 0, {product(dims.take_front(axis)), product(dims.drop_front(axis))});
}

/// Squeeze: drops the size-1 dimensions listed in axes (attribute before
/// opset 13, optional input 1 from 13), or every size-1 dimension if none.
LogicalResult convertSqueeze(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  auto axes = intsFromAttrOrInput(ctx, "axes", 13, 1);
  if (failed(axes))
    return failure();
  std::vector<bool> drop(rank, false);
  if (*axes) {
    auto norm = normalizeAxes(ctx, **axes, rank, "axes");
    if (failed(norm))
      return failure();
    for (int64_t a : *norm) {
      if (in[a] != 1)
        return ctx.fail("axes " + shapeString(**axes) + ": dimension " + llvm::Twine(a) +
                        " of the input " + shapeString(in) + " is not 1");
      drop[a] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[d] == 1;
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      out.push_back(in[d]);
  return bindReshaped(ctx, 0, out);
}

/// Unsqueeze: inserts size-1 dimensions at axes (attribute before opset
/// 13, input 1 from 13), counted in the output's rank (negative from 11).
LogicalResult convertUnsqueeze(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  auto axes = intsFromAttrOrInput(ctx, "axes", 13, 1);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail("axes is missing (" +
                    llvm::Twine(ctx.opset() < 13 ? "attribute" : "input 1") + ")");
  int64_t rank = in.size() + (*axes)->size();
  auto norm = normalizeAxes(ctx, **axes, rank, "axes");
  if (failed(norm))
    return failure();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *norm)
    inserted[a] = true;
  std::vector<int64_t> out;
  for (int64_t d = 0, k = 0; d < rank; ++d)
    out.push_back(inserted[d] ? 1 : in[k++]);
  return bindReshaped(ctx, 0, out);
}

// --- Transpose, Concat, Split ------------------------------------------------------

/// Transpose: output dimension k is input dimension perm[k]; perm defaults
/// to the reversed dimensions. -> tosa.transpose.
LogicalResult convertTranspose(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  std::vector<int64_t> perm(rank);
  for (int64_t k = 0; k < rank; ++k)
    perm[k] = rank - 1 - k;
  perm = ctx.attrInts("perm", perm);
  std::vector<bool> seen(rank, false);
  bool valid = int64_t(perm.size()) == rank;
  for (int64_t k = 0; valid && k < rank; ++k) {
    valid = perm[k] >= 0 && perm[k] < rank && !seen[perm[k]];
    if (valid)
      seen[perm[k]] = true;
  }
  if (!valid)
    return ctx.fail("perm " + shapeString(perm) + " is not a permutation of the input's " +
                    llvm::Twine(rank) + " dimensions");
  std::vector<int64_t> out(rank);
  for (int64_t k = 0; k < rank; ++k)
    out[k] = in[perm[k]];
  if (const Tensor *t = ctx.constant(0)) {
    std::vector<int64_t> strides = stridesOf(in);
    return ctx.setConstant(0, remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
      int64_t f = 0;
      for (int64_t k = 0; k < rank; ++k)
        f += o[k] * strides[perm[k]];
      return f;
    }));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  if (rank > 6)
    return ctx.fail("input rank " + llvm::Twine(rank) + " is above 6, TOSA's transpose limit");
  return ctx.setOutput(0, ctx.transpose(*x, std::vector<int32_t>(perm.begin(), perm.end())));
}

/// Concat: inputs joined along axis (negative from opset 11); every other
/// dimension must agree. Inputs empty along the axis are skipped.
LogicalResult convertConcat(NodeContext &ctx) {
  std::vector<int64_t> first = ctx.inputShape(0);
  int64_t rank = first.size(), axis = normalizeAxis(ctx.attrInt("axis", 0), rank);
  if (!ctx.hasAttr("axis") || axis < 0 || rank == 0)
    return ctx.fail("axis (required) must lie in [" + llvm::Twine(-rank) + ", " +
                    llvm::Twine(rank - 1) + "]");
  std::vector<int64_t> out = first;
  out[axis] = 0;
  std::vector<int> used;
  bool allConstant = true;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    std::vector<int64_t> s = ctx.inputShape(i);
    bool fits = int64_t(s.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = d == axis || s[d] == first[d];
    if (!fits)
      return ctx.fail("input " + llvm::Twine(i) + " of shape " + shapeString(s) +
                      " does not concatenate with input 0 of shape " + shapeString(first) +
                      " along axis " + llvm::Twine(axis));
    out[axis] += s[axis];
    if (product(s) == 0)
      continue;
    used.push_back(i);
    allConstant &= ctx.constant(i) != nullptr;
  }
  if (used.empty() || allConstant) {
    std::vector<const Tensor *> parts;
    for (int i : used)
      parts.push_back(ctx.constant(i));
    if (parts.empty())
      return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
    return ctx.setConstant(0, concatTensors(parts, axis, out));
  }
  llvm::SmallVector<Value> values;
  for (int i : used) {
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  return ctx.setOutput(0, ctx.concat(values, axis));
}

/// The part sizes of Split along a dimension of `size`: the split attribute
/// (before opset 13) or input 1 (13+), else equal parts, one per output.
FailureOr<std::vector<int64_t>> splitSizes(NodeContext &ctx, int64_t size) {
  auto given = intsFromAttrOrInput(ctx, "split", 13, 1);
  if (failed(given))
    return failure();
  int64_t parts = ctx.numOutputs();
  if (ctx.opset() >= 18 && ctx.hasAttr("num_outputs")) {
    // Split-18: num_outputs parts of ceil(size / n), the last one smaller.
    int64_t n = ctx.attrInt("num_outputs", 0);
    if (*given)
      return ctx.fail("takes either the split input or the num_outputs attribute, not both");
    if (n < 1 || n != parts)
      return ctx.fail("attribute num_outputs is " + llvm::Twine(n) + "; it must be the node's " +
                      llvm::Twine(parts) + " outputs");
    int64_t chunk = (size + n - 1) / n;
    if (chunk * (n - 1) >= size && n > 1)
      return ctx.fail("the split dimension (" + llvm::Twine(size) + ") is too small for " +
                      llvm::Twine(n) + " outputs of " + llvm::Twine(chunk));
    std::vector<int64_t> sizes(n, chunk);
    sizes.back() = size - chunk * (n - 1);
    return sizes;
  }
  if (!*given) {
    if (parts == 0 || size % parts != 0)
      return ctx.fail("the split dimension (" + llvm::Twine(size) + ") does not divide into " +
                      llvm::Twine(parts) + " equal parts; give split sizes");
    return std::vector<int64_t>(parts, size / parts);
  }
  std::vector<int64_t> sizes = **given;
  int64_t sum = 0;
  for (int64_t s : sizes)
    sum += s < 0 ? size + 1 : s;
  if (int64_t(sizes.size()) != parts || sum != size)
    return ctx.fail("split " + shapeString(sizes) + " must give " + llvm::Twine(parts) +
                    " non-negative sizes adding up to " + llvm::Twine(size));
  return sizes;
}

/// Split: consecutive parts of the input along axis (default 0).
LogicalResult convertSplit(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size(), axis = normalizeAxis(ctx.attrInt("axis", 0), rank);
  if (axis < 0 || rank == 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 0)) + " is out of range for rank " +
                    llvm::Twine(rank));
  FailureOr<std::vector<int64_t>> sizes = splitSizes(ctx, in[axis]);
  if (failed(sizes))
    return failure();
  const Tensor *t = ctx.constant(0);
  std::vector<int64_t> strides = stridesOf(in);
  int64_t offset = 0;
  for (int k = 0; k < ctx.numOutputs(); offset += (*sizes)[k], ++k) {
    std::vector<int64_t> out = in;
    out[axis] = (*sizes)[k];
    LogicalResult bound = success();
    if ((t && foldable(out)) || product(out) == 0) {
      Tensor empty = emptyTensor(ctx.inputType(0), out);
      bound = ctx.setConstant(k, !t ? empty : remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
        int64_t f = 0;
        for (int64_t d = 0; d < rank; ++d)
          f += (o[d] + (d == axis ? offset : 0)) * strides[d];
        return f;
      }));
    } else {
      FailureOr<Value> x = ctx.input(0);
      if (failed(x))
        return failure();
      bound = ctx.setOutput(k, sliceAxis(ctx, *x, axis, offset, out[axis]));
    }
    if (failed(bound))
      return failure();
  }
  return success();
}

// --- Slice ---------------------------------------------------------------------------

/// What Slice takes from one dimension: `count` elements starting at
/// `first`, `step` apart (negative: walking backwards).
struct AxisSelection {
  int64_t first = 0, count = 0, step = 1;
};

/// Slice's starts/ends/axes/steps: attributes before opset 10 (no steps),
/// inputs 1-4 from 10. Per axis, as the spec says: negative starts/ends
/// count from the end; then starts clamp to [0, dim] and ends to [0, dim]
/// for a positive step, to [0, dim-1] and [-1, dim-1] for a negative one.
FailureOr<std::vector<AxisSelection>> sliceSelections(NodeContext &ctx,
                                                      llvm::ArrayRef<int64_t> in) {
  int64_t rank = in.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    if (!ctx.hasAttr("starts") || !ctx.hasAttr("ends"))
      return ctx.fail("attributes starts and ends are required");
    starts = ctx.attrInts("starts");
    ends = ctx.attrInts("ends");
    axes = ctx.attrInts("axes");
  } else {
    std::vector<int64_t> *into[] = {&starts, &ends, &axes, &steps};
    for (int slot = 1; slot <= 4; ++slot) {
      if (slot > 2 && !ctx.hasInput(slot))
        continue;
      FailureOr<std::vector<int64_t>> v = ctx.constantInts(slot);
      if (failed(v))
        return failure();
      *into[slot - 1] = std::move(*v);
    }
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k)
      axes.push_back(k);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.fail("starts, ends, axes and steps must have the same length");
  auto norm = normalizeAxes(ctx, axes, rank, "axes");
  if (failed(norm))
    return failure();
  std::vector<AxisSelection> sel(rank);
  for (int64_t d = 0; d < rank; ++d)
    sel[d] = {0, in[d], 1};
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t d = (*norm)[k], dim = in[d], step = steps[k];
    if (step == 0)
      return ctx.fail("steps must not be 0");
    if (dim == 0) {
      sel[d] = {0, 0, 1};
      continue;
    }
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + dim : ends[k];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    end = step > 0 ? std::clamp<int64_t>(end, 0, dim) : std::clamp<int64_t>(end, -1, dim - 1);
    int64_t span = step > 0 ? end - start : start - end, a = step > 0 ? step : -step;
    int64_t count = span > 0 ? (span + a - 1) / a : 0;
    sel[d] = {start, count, count <= 1 ? 1 : step};
  }
  return sel;
}

/// Every other element of dimension `d` of `v`: keeps `count` elements
/// `step` apart from index 0 (pads to count * step, views dimension d as
/// [count, step] and keeps column 0).
Value strideAxis(NodeContext &ctx, Value v, int64_t d, int64_t count, int64_t step) {
  llvm::SmallVector<int64_t> shape(shapeOf(v));
  int64_t full = count * step;
  if (shape[d] > full)
    v = sliceAxis(ctx, v, d, 0, full);
  if (shape[d] < full) {
    int64_t rank = shape.size();
    std::vector<int32_t> pads(2 * rank, 0);
    pads[2 * d + 1] = int32_t(full - shape[d]);
    llvm::SmallVector<int64_t> padded(shape);
    padded[d] = full;
    v = ctx.create<tosa::PadOp>(typeLike(v, padded), v, ctx.constI32({rank, 2}, pads));
  }
  auto view = TosaBuilder::axisView(shapeOf(v), d);
  Value x = ctx.reshape(v, {view[0], count, step, view[2]});
  x = ctx.slice(x, {0, 0, 0, 0}, {view[0], count, 1, view[2]});
  shape[d] = count;
  return ctx.reshape(x, shape);
}

/// Slice: per axis, elements first, first + step, ... (count of them; see
/// sliceSelections). TOSA: tosa.slice of the covered range, tosa.reverse
/// of negative-step dimensions, then strideAxis for steps above 1.
LogicalResult convertSlice(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  auto sel = sliceSelections(ctx, in);
  if (failed(sel))
    return failure();
  std::vector<int64_t> out(rank);
  for (int64_t d = 0; d < rank; ++d)
    out[d] = (*sel)[d].count;
  const Tensor *t = ctx.constant(0);
  if ((t && foldable(out)) || product(out) == 0) {
    if (!t)
      return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
    std::vector<int64_t> strides = stridesOf(in);
    return ctx.setConstant(0, remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
      int64_t f = 0;
      for (int64_t d = 0; d < rank; ++d)
        f += ((*sel)[d].first + o[d] * (*sel)[d].step) * strides[d];
      return f;
    }));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  if (rank > 6) {
    // Above TOSA's rank 6: each dimension taken whole merges into the one
    // before it when that one steps by 1 (rows [f, f + c) of [.., a, b] are
    // elements [f * b, (f + c) * b) of [.., a * b]).
    std::vector<int64_t> merged;
    std::vector<AxisSelection> mergedSel;
    for (int64_t d = 0; d < rank; ++d) {
      AxisSelection a = (*sel)[d];
      bool whole = a.first == 0 && a.count == in[d] && a.step == 1;
      if (whole && !merged.empty() && mergedSel.back().step == 1) {
        mergedSel.back().first *= in[d];
        mergedSel.back().count *= in[d];
        merged.back() *= in[d];
      } else {
        merged.push_back(in[d]);
        mergedSel.push_back(a);
      }
    }
    if (merged.size() > 6)
      return ctx.fail("input rank " + llvm::Twine(rank) + " is above 6, TOSA's slice limit");
    *x = ctx.reshape(*x, merged);
    in = merged;
    *sel = mergedSel;
    rank = int64_t(merged.size());
  }
  std::vector<int64_t> begin(rank), size(rank);
  for (int64_t d = 0; d < rank; ++d) {
    auto [first, count, step] = (*sel)[d];
    int64_t a = std::abs(step), tight = (count - 1) * a + 1;
    int64_t full = step > 0 ? std::min(count * a, in[d] - first) : std::min(count * a, first + 1);
    size[d] = std::max(tight, full);
    begin[d] = step > 0 ? first : first - size[d] + 1;
  }
  Value v = ctx.slice(*x, begin, size);
  for (int64_t d = 0; d < rank; ++d) {
    if ((*sel)[d].step < 0)
      v = ctx.reverseAxis(v, d);
    if (std::abs((*sel)[d].step) > 1)
      v = strideAxis(ctx, v, d, (*sel)[d].count, std::abs((*sel)[d].step));
  }
  return ctx.setOutput(0, ctx.reshape(v, out));
}

// --- Gather ---------------------------------------------------------------------------

/// Gather's indices as an i32 [outer, width] SSA value for tosa.gather:
/// negative indices count from the end (index + k), then clamped to
/// [0, k) so generated code never reads outside the data.
FailureOr<Value> computedGatherIndices(NodeContext &ctx, int64_t k, int64_t outer, int64_t width) {
  FailureOr<Value> idx = ctx.input(1);
  if (failed(idx))
    return failure();
  Type element = elementOf(*idx);
  if (!element.isInteger(32) && !element.isInteger(64))
    return ctx.fail("indices must be int32 or int64");
  auto i32 = ctx.builder().getI32Type();
  std::vector<int64_t> shape(shapeOf(*idx));
  auto type = RankedTensorType::get(shape, i32);
  Value v = element.isInteger(32) ? *idx : ctx.create<tosa::CastOp>(type, *idx);
  auto boolType = RankedTensorType::get(shape, ctx.builder().getI1Type());
  Value zero = filledConst(ctx, i32, shape, 0), size = filledConst(ctx, i32, shape, double(k));
  Value negative = ctx.create<tosa::GreaterOp>(boolType, zero, v);
  Value wrapped = ctx.create<tosa::AddOp>(type, v, size);
  v = ctx.create<tosa::SelectOp>(type, negative, wrapped, v);
  auto &b = ctx.builder();
  v = ctx.create<tosa::ClampOp>(type, v, b.getI64IntegerAttr(0), b.getI64IntegerAttr(k - 1),
                                b.getF32FloatAttr(0.0f), b.getF32FloatAttr(float(k - 1)));
  v = ctx.reshape(v, {1, width});
  if (outer > 1)
    v = ctx.create<tosa::TileOp>(RankedTensorType::get({outer, width}, i32), v,
                                 b.getDenseI64ArrayAttr({outer, 1}));
  return v;
}

/// Gather (axis, default 0, negative from opset 11): output shape
/// data[:axis] + indices + data[axis+1:], taking data[..., indices[...], ...];
/// negative indices count from the end (opset 11+). Constant indices are
/// range-checked. TOSA: tosa.gather on data viewed as [outer, k, inner].
LogicalResult convertGather(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0), idxShape = ctx.inputShape(1);
  int64_t rank = in.size(), axis = normalizeAxis(ctx.attrInt("axis", 0), rank);
  if (rank == 0 || axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 0)) + " is out of range for data of rank " +
                    llvm::Twine(rank));
  llvm::ArrayRef<int64_t> dims(in);
  int64_t outer = product(dims.take_front(axis)), k = in[axis], inner = product(dims.drop_front(axis + 1));
  int64_t width = product(idxShape);
  std::vector<int64_t> out(dims.begin(), dims.begin() + axis);
  out.insert(out.end(), idxShape.begin(), idxShape.end());
  out.insert(out.end(), dims.begin() + axis + 1, dims.end());
  const Tensor *indices = ctx.constant(1);
  std::vector<int64_t> idx;
  if (indices) {
    if (indices->isFloat())
      return ctx.fail("indices must be int32 or int64");
    for (int64_t i : indices->ints) {
      if (i < -k || i >= k)
        return ctx.fail("index " + llvm::Twine(i) + " is out of range [" + llvm::Twine(-k) + ", " +
                        llvm::Twine(k - 1) + "] of axis " + llvm::Twine(axis));
      idx.push_back(i < 0 ? i + k : i);
    }
  }
  const Tensor *t = ctx.constant(0);
  if ((t && indices && foldable(out)) || product(out) == 0) {
    if (!t || !indices)
      return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
    int64_t q = idxShape.size();
    return ctx.setConstant(0, remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
      int64_t w = 0;
      for (int64_t d = 0; d < q; ++d)
        w = w * idxShape[d] + o[axis + d];
      int64_t before = 0, after = 0;
      for (int64_t d = 0; d < axis; ++d)
        before = before * in[d] + o[d];
      for (int64_t d = axis + 1; d < rank; ++d)
        after = after * in[d] + o[q + d - 1];
      return (before * k + idx[w]) * inner + after;
    }));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value values = ctx.reshape(*x, {outer, k, inner});
  Value gatherIdx;
  if (indices) {
    std::vector<int32_t> data;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : idx)
        data.push_back(int32_t(i));
    gatherIdx = ctx.constI32({outer, width}, data);
  } else {
    FailureOr<Value> computed = computedGatherIndices(ctx, k, outer, width);
    if (failed(computed))
      return failure();
    gatherIdx = *computed;
  }
  Value gathered = ctx.create<tosa::GatherOp>(typeLike(values, {outer, width, inner}), values, gatherIdx);
  return ctx.setOutput(0, ctx.reshape(gathered, out));
}

// --- Pad ------------------------------------------------------------------------------

/// Pad's operands: pads [b_0.., e_0..] per dimension, the constant value
/// (known at import, or `runtimeValue`: input 2 computed at run time).
struct PadSpec {
  std::string mode;
  std::vector<int64_t> pads;
  double value = 0;
  bool runtimeValue = false;
};

/// Pad-18's axes (input 3, constant, negative from the back, no repeats):
/// `pads` [b.., e..] per listed axis become pads of every dimension.
LogicalResult padAxes(NodeContext &ctx, int64_t rank, std::vector<int64_t> &pads) {
  FailureOr<std::vector<int64_t>> axes = ctx.constantInts(3);
  if (failed(axes))
    return failure();
  int64_t n = int64_t(axes->size());
  if (int64_t(pads.size()) != 2 * n)
    return ctx.fail("pads " + shapeString(pads) + " must hold 2 * " + llvm::Twine(n) +
                    " values for the axes " + shapeString(*axes));
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (int64_t k = 0; k < n; ++k) {
    int64_t a = normalizeAxis((*axes)[k], rank);
    if (a < 0 || seen[a])
      return ctx.fail("axes " + shapeString(*axes) + " must be distinct axes in [-" +
                      llvm::Twine(rank) + ", " + llvm::Twine(rank - 1) + "]");
    seen[a] = true;
    full[a] = pads[k];
    full[a + rank] = pads[k + n];
  }
  pads = full;
  return success();
}

/// pads and value attributes before opset 11, inputs 1 and 2 (optional
/// scalar) from 11, axes (input 3) from 18.
FailureOr<PadSpec> padSpec(NodeContext &ctx, int64_t rank) {
  PadSpec spec;
  spec.mode = ctx.attrString("mode", "constant");
  if (spec.mode != "constant" && spec.mode != "reflect" && spec.mode != "edge")
    return ctx.fail("mode '" + spec.mode + "' is not supported; Kiln pads in constant, reflect "
                    "and edge modes");
  if (ctx.opset() < 11) {
    spec.pads = ctx.attrInts("pads");
    spec.value = ctx.attrFloat("value", 0.0f);
  } else {
    FailureOr<std::vector<int64_t>> pads = ctx.constantInts(1);
    if (failed(pads))
      return failure();
    spec.pads = *pads;
    if (ctx.opset() >= 18 && ctx.hasInput(3) && failed(padAxes(ctx, rank, spec.pads)))
      return failure();
    if (ctx.hasInput(2)) {
      if (product(ctx.inputShape(2)) != 1)
        return ctx.fail("constant_value (input 2) must be a scalar");
      if (const Tensor *v = ctx.constant(2))
        spec.value = v->at(0);
      else
        spec.runtimeValue = spec.mode == "constant";
    }
  }
  if (int64_t(spec.pads.size()) != 2 * rank)
    return ctx.fail("pads " + shapeString(spec.pads) + " must hold 2 * rank = " +
                    llvm::Twine(2 * rank) + " values");
  return spec;
}

/// Input index along a dimension of `size` for padded position `i` (i < 0
/// or >= size outside the input): edge repeats the border element, reflect
/// mirrors without repeating it; -1 for constant mode's fill.
int64_t padSource(int64_t i, int64_t size, const std::string &mode) {
  if (i >= 0 && i < size)
    return i;
  if (mode == "edge")
    return std::clamp<int64_t>(i, 0, size - 1);
  if (mode == "reflect" && size > 1) {
    int64_t period = 2 * (size - 1);
    i = ((i % period) + period) % period;
    return i < size ? i : period - i;
  }
  return mode == "reflect" ? 0 : -1;
}

/// Edge or reflect padding of dimension `d` by `before` and `after`
/// (non-negative): slices of the border (reversed for reflect, repeated for
/// edge) concatenated around `v`.
FailureOr<Value> padAxis(NodeContext &ctx, Value v, int64_t d, int64_t before, int64_t after,
                         const std::string &mode) {
  int64_t size = shapeOf(v)[d];
  llvm::SmallVector<Value> parts;
  if (mode == "edge") {
    if (before)
      parts.push_back(ctx.tileAxis(sliceAxis(ctx, v, d, 0, 1), d, before));
    parts.push_back(v);
    if (after)
      parts.push_back(ctx.tileAxis(sliceAxis(ctx, v, d, size - 1, 1), d, after));
    return ctx.concat(parts, d);
  }
  if (before >= size || after >= size)
    return ctx.fail("reflect pads [" + llvm::Twine(before) + ", " + llvm::Twine(after) +
                    "] of dimension " + llvm::Twine(d) + " (size " + llvm::Twine(size) +
                    ") must each be below the dimension's size");
  if (before)
    parts.push_back(ctx.reverseAxis(sliceAxis(ctx, v, d, 1, before), d));
  parts.push_back(v);
  if (after)
    parts.push_back(ctx.reverseAxis(sliceAxis(ctx, v, d, size - 1 - after, after), d));
  return ctx.concat(parts, d);
}

/// Binds output 0 to `padded` (constant-mode padding of the data by
/// `padding`, [before, after] per dimension) with the padded positions set to
/// constant_value, input 2, computed at run time: tosa.select between it
/// (broadcast) and `padded`, on a constant mask of the padded positions.
LogicalResult runtimePadValue(NodeContext &ctx, Value padded, llvm::ArrayRef<int32_t> padding) {
  FailureOr<Value> value = ctx.input(2);
  if (failed(value))
    return failure();
  if (elementOf(*value) != elementOf(padded))
    return ctx.fail("constant_value (input 2) must have the data's element type");
  std::vector<int64_t> out(shapeOf(padded));
  int64_t rank = out.size();
  Tensor mask = remap(int64Tensor({2}, {0, 1}), out, [&](llvm::ArrayRef<int64_t> o) {
    for (int64_t d = 0; d < rank; ++d)
      if (o[d] < padding[2 * d] || o[d] >= out[d] - padding[2 * d + 1])
        return int64_t(1);
    return int64_t(0);
  });
  mask.dataType = kBool;
  FailureOr<Value> maskValue = ctx.constTensor(mask);
  if (failed(maskValue))
    return failure();
  Value fill = ctx.reshape(*value, std::vector<int64_t>(rank, 1));
  return ctx.setOutput(0, ctx.create<tosa::SelectOp>(padded.getType(), *maskValue, fill, padded));
}

/// Pad: mode constant (the constant value), reflect or edge; pads are
/// [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; negative pads crop.
/// TOSA: tosa.slice for the crop, then tosa.pad (constant) or slices and
/// concats per dimension (edge, reflect).
LogicalResult convertPad(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  FailureOr<PadSpec> spec = padSpec(ctx, rank);
  if (failed(spec))
    return failure();
  const std::vector<int64_t> &pads = spec->pads;
  std::vector<int64_t> out(rank);
  for (int64_t d = 0; d < rank; ++d) {
    out[d] = in[d] + pads[d] + pads[rank + d];
    if (out[d] < 0 || (in[d] == 0 && out[d] > 0 && spec->mode != "constant"))
      return ctx.fail("pads " + shapeString(pads) + " do not fit the input " + shapeString(in));
  }
  const Tensor *t = spec->runtimeValue ? nullptr : ctx.constant(0);
  if ((t && foldable(out)) || product(out) == 0) {
    if (!t)
      return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
    std::vector<int64_t> strides = stridesOf(in);
    return ctx.setConstant(0, remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
      int64_t f = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t i = padSource(o[d] - pads[d], in[d], spec->mode);
        if (i < 0)
          return int64_t(-1);
        f += i * strides[d];
      }
      return f;
    }, spec->value));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  std::vector<int64_t> begin(rank), size(rank);
  for (int64_t d = 0; d < rank; ++d) {
    begin[d] = std::max<int64_t>(-pads[d], 0);
    size[d] = in[d] - begin[d] - std::max<int64_t>(-pads[rank + d], 0);
  }
  Value v = ctx.slice(*x, begin, size);
  if (spec->mode == "constant") {
    std::vector<int32_t> padding;
    for (int64_t d = 0; d < rank; ++d) {
      padding.push_back(int32_t(std::max<int64_t>(pads[d], 0)));
      padding.push_back(int32_t(std::max<int64_t>(pads[rank + d], 0)));
    }
    if (llvm::none_of(padding, [](int32_t p) { return p > 0; }))
      return ctx.setOutput(0, v);
    Value padConst = filledConst(ctx, elementOf(v), {}, spec->value);
    v = ctx.create<tosa::PadOp>(typeLike(v, out), v, ctx.constI32({rank, 2}, padding), padConst);
    if (spec->runtimeValue)
      return runtimePadValue(ctx, v, padding);
    return ctx.setOutput(0, v);
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = std::max<int64_t>(pads[d], 0), after = std::max<int64_t>(pads[rank + d], 0);
    if (before || after) {
      FailureOr<Value> padded = padAxis(ctx, v, d, before, after, spec->mode);
      if (failed(padded))
        return failure();
      v = *padded;
    }
  }
  return ctx.setOutput(0, v);
}

// --- Tile, Expand, ConstantOfShape, Range -------------------------------------------------

/// Binds output 0 to input 0 of shape `in` broadcast by repetition to `out`
/// (`out[d]` a multiple of `in[d]`): element o comes from o[d] % in[d].
/// Tile and Expand.
LogicalResult bindTiled(NodeContext &ctx, std::vector<int64_t> in, std::vector<int64_t> out) {
  int64_t rank = out.size();
  const Tensor *t = ctx.constant(0);
  if ((t && foldable(out)) || product(out) == 0) {
    if (!t)
      return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
    std::vector<int64_t> strides = stridesOf(in);
    return ctx.setConstant(0, remap(*t, out, [&](llvm::ArrayRef<int64_t> o) {
      int64_t f = 0;
      for (int64_t d = 0; d < rank; ++d)
        f += (o[d] % in[d]) * strides[d];
      return f;
    }));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value v = ctx.reshape(*x, in);
  std::vector<int64_t> repeats(rank);
  for (int64_t d = 0; d < rank; ++d)
    repeats[d] = out[d] / in[d];
  return ctx.setOutput(0, ctx.tile(v, repeats));
}

/// Tile: dimension d repeated repeats[d] times (input 1, constant; opset
/// 6+). TOSA: tosa.tile.
LogicalResult convertTile(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  FailureOr<std::vector<int64_t>> repeats = ctx.constantInts(1);
  if (failed(repeats))
    return failure();
  if (repeats->size() != in.size() || llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
    return ctx.fail("repeats " + shapeString(*repeats) + " must hold one non-negative value per "
                    "input dimension (" + llvm::Twine(in.size()) + ")");
  std::vector<int64_t> out = in;
  for (size_t d = 0; d < in.size(); ++d)
    out[d] *= (*repeats)[d];
  if (product(in) == 0)
    return ctx.setConstant(0, emptyTensor(ctx.inputType(0), out));
  return bindTiled(ctx, in, out);
}

/// Expand: numpy broadcast of the input with shape (input 1, constant);
/// the output shape is the broadcast of both. TOSA: reshape to the output
/// rank, then tosa.tile of the size-1 dimensions.
LogicalResult convertExpand(NodeContext &ctx) {
  std::vector<int64_t> in = ctx.inputShape(0);
  FailureOr<std::vector<int64_t>> shape = ctx.constantInts(1);
  if (failed(shape))
    return failure();
  auto out = broadcastShapes(in, *shape);
  if (!out)
    return ctx.fail("the input " + shapeString(in) + " does not broadcast to shape " +
                    shapeString(*shape));
  std::vector<int64_t> ranked(out->size() - in.size(), 1);
  ranked.insert(ranked.end(), in.begin(), in.end());
  if (product(ranked) == 0)
    return ctx.setConstant(0, emptyTensor(ctx.inputType(0), *out));
  return bindTiled(ctx, ranked, *out);
}

/// ConstantOfShape (opset 9+): a tensor of shape input 0 (constant) filled
/// with attribute value's one element (default float32 0).
LogicalResult convertConstantOfShape(NodeContext &ctx) {
  FailureOr<std::vector<int64_t>> shape = ctx.constantInts(0);
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return ctx.fail("shape " + shapeString(*shape) + " has a negative dimension");
  Tensor fill = makeTensor(kFloat, {1}, {0.0});
  if (const Tensor *v = ctx.attrTensor("value")) {
    if (v->numElements() != 1)
      return ctx.fail("value must hold one element");
    fill = *v;
  }
  Tensor out = emptyTensor(fill.dataType, *shape);
  int64_t n = product(*shape);
  if (n > kMaxFoldElements)
    return ctx.fail("shape " + shapeString(*shape) + " has more than " +
                    llvm::Twine(kMaxFoldElements) +
                    " elements, the most Kiln builds a ConstantOfShape result of");
  if (fill.isFloat())
    out.floats.assign(n, fill.floats[0]);
  else
    out.ints.assign(n, fill.ints[0]);
  return ctx.setConstant(0, std::move(out));
}

/// Range (opset 11+): start, start + delta, ... while below limit (above for
/// a negative delta): max(ceil((limit - start) / delta), 0) elements of the
/// inputs' type. The element count depends on the inputs' values, so all
/// three must be constant scalars.
LogicalResult convertRange(NodeContext &ctx) {
  const Tensor *start = ctx.constant(0), *limit = ctx.constant(1), *delta = ctx.constant(2);
  if (!start || !limit || !delta)
    return ctx.fail("start, limit and delta must be constants: the output's length depends on "
                    "their values");
  if (start->numElements() != 1 || limit->numElements() != 1 || delta->numElements() != 1 ||
      delta->at(0) == 0)
    return ctx.fail("start, limit and delta must be scalars, delta non-zero");
  Tensor out = emptyTensor(start->dataType, {});
  double length = std::ceil((limit->at(0) - start->at(0)) / delta->at(0));
  if (!std::isfinite(length) || length > double(kMaxFoldElements))
    return ctx.fail("start, limit and delta give more than " + llvm::Twine(kMaxFoldElements) +
                    " elements, the most Kiln builds a Range result of");
  if (start->isFloat()) {
    float s = start->floats[0], d = delta->floats[0];
    int64_t n = std::max<int64_t>(int64_t(std::ceil((limit->floats[0] - s) / d)), 0);
    for (int64_t i = 0; i < n; ++i)
      out.floats.push_back(s + float(i) * d);
  } else {
    int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    int64_t span;
    if (__builtin_sub_overflow(l, s, &span) || span > INT64_MAX / 2 || span < INT64_MIN / 2)
      return ctx.fail("limit - start overflows int64");
    int64_t n = d > 0 ? (span + d - 1) / d : (span + d + 1) / d;
    n = std::max<int64_t>(span == 0 ? 0 : n, 0);
    for (int64_t i = 0; i < n; ++i)
      out.ints.push_back(s + i * d);
  }
  out.dims = {int64_t(out.isFloat() ? out.floats.size() : out.ints.size())};
  return ctx.setConstant(0, std::move(out));
}

// --- Cast, CastLike ---------------------------------------------------------------------

// Float -> integer on SSA values truncates toward zero:
// tosa_math::truncatingCast (tosa.cast rounds to nearest).
using tosa_math::truncatingCast;

/// Casts input 0 to ONNX type `to`: folded for constants (castTensor);
/// on SSA values float types stay f32 (every float type is f32 in Kiln's
/// IR), float -> int truncates toward zero, x -> bool is x != 0, bool ->
/// number is 0/1 (tosa.cast). SSA targets: float types, int32, int64, bool.
LogicalResult castTo(NodeContext &ctx, int32_t to) {
  if (const Tensor *t = ctx.constant(0)) {
    if (to < kFloat || to > kBFloat16 || to == kString || to == 14 || to == 15)
      return ctx.fail("cast to " + dataTypeName(to) + " is not supported");
    return ctx.setConstant(0, castTensor(*t, to));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Type target;
  auto &b = ctx.builder();
  if (isFloatType(to))
    target = b.getF32Type();
  else if (to == kInt32 || to == kInt64 || to == kBool)
    target = b.getIntegerType(to == kInt32 ? 32 : to == kInt64 ? 64 : 1);
  else
    return ctx.fail("cast to " + dataTypeName(to) + " is not supported on computed values; Kiln "
                    "computes float32, int32, int64 and bool");
  Type source = elementOf(*x);
  if (source == target)
    return ctx.setOutput(0, *x);
  auto type = RankedTensorType::get(shapeOf(*x), target);
  if (source.isF32() && !target.isInteger(1))
    return ctx.setOutput(0, truncatingCast(ctx, *x, type));
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(type, *x));
}

/// Cast: to the element type of attribute `to`.
LogicalResult convertCast(NodeContext &ctx) {
  if (!ctx.hasAttr("to"))
    return ctx.fail("attribute to is missing");
  return castTo(ctx, int32_t(ctx.attrInt("to", kFloat)));
}

/// CastLike (opset 15+): Cast to the element type of input 1.
LogicalResult convertCastLike(NodeContext &ctx) { return castTo(ctx, ctx.inputType(1)); }

} // namespace

void registerShapeOps(ConverterTable &table) {
  table["Constant"] = convertConstant;
  table["Identity"] = convertIdentity;
  table["Dropout"] = convertDropout;
  table["Shape"] = convertShape;
  table["Size"] = convertSize;
  table["Reshape"] = convertReshape;
  table["Flatten"] = convertFlatten;
  table["Squeeze"] = convertSqueeze;
  table["Unsqueeze"] = convertUnsqueeze;
  table["Transpose"] = convertTranspose;
  table["Concat"] = convertConcat;
  table["Split"] = convertSplit;
  table["Slice"] = convertSlice;
  table["Gather"] = convertGather;
  table["Pad"] = convertPad;
  table["Tile"] = convertTile;
  table["Expand"] = convertExpand;
  table["ConstantOfShape"] = convertConstantOfShape;
  table["Range"] = convertRange;
  table["Cast"] = convertCast;
  table["CastLike"] = convertCastLike;
}

} // namespace kiln::onnx
