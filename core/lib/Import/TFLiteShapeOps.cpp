//===- TFLiteShapeOps.cpp - Data movement and shape operators -------------===//
//
// RESHAPE SQUEEZE EXPAND_DIMS DEQUANTIZE CONCATENATION PAD PADV2 MIRROR_PAD
// TRANSPOSE SLICE STRIDED_SLICE GATHER EMBEDDING_LOOKUP RESIZE_BILINEAR
// RESIZE_NEAREST_NEIGHBOR
// -> TOSA.
// Shape-like operands (perm, begin/end/size, resize size) must be constants:
// Kiln compiles static shapes. Data movement converters keep the element
// type of their input (f32 or i32).
//
//===----------------------------------------------------------------------===//
#include "TFLiteConverter.h"

#include <algorithm>
#include <bit>
#include <numeric>

using namespace mlir;

namespace kiln::tfl {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

/// Tensor type of `shape` with the element type of `like`.
RankedTensorType typeLike(Value like, llvm::ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, like.getType().cast<RankedTensorType>().getElementType());
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string dimsString(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

/// tosa.slice, or `v` itself when the slice is the whole tensor.
Value slice(OpContext &ctx, Value v, llvm::ArrayRef<int64_t> start,
            llvm::ArrayRef<int64_t> size) {
  if (llvm::all_of(start, [](int64_t s) { return s == 0; }) &&
      size == shapeOf(v))
    return v;
  auto &b = ctx.builder();
  return ctx.create<tosa::SliceOp>(typeLike(v, size), v,
                                   b.getDenseI64ArrayAttr(start),
                                   b.getDenseI64ArrayAttr(size));
}

/// The new shape of a RESHAPE / SQUEEZE / EXPAND_DIMS of an input of shape
/// `in` as TFLite computes it: RESHAPE's constant shape operand (else
/// ReshapeOptions.new_shape, else the output's shape signature) with one -1
/// taking the remaining elements; SQUEEZE drops squeeze_dims (every size-1
/// dimension when none are listed); EXPAND_DIMS inserts a 1 at its axis.
/// Used once --fix-shape sizes the model, when the recorded output shape no
/// longer holds.
FailureOr<std::vector<int64_t>> reshapeTarget(OpContext &ctx,
                                              llvm::ArrayRef<int64_t> in) {
  int64_t rank = in.size();
  std::vector<int64_t> target;
  if (ctx.code() == BuiltinOperator::SQUEEZE) {
    const auto *opts = ctx.options<schema::SqueezeOptions>();
    std::vector<bool> drop(rank, false);
    if (opts && opts->squeeze_dims() && opts->squeeze_dims()->size()) {
      for (int32_t d : *opts->squeeze_dims()) {
        int64_t axis = d < 0 ? d + rank : d;
        if (axis < 0 || axis >= rank || in[axis] != 1)
          return ctx.fail("squeeze_dims " + llvm::Twine(d) + " does not name a size-1 "
                          "dimension of the input " + dimsString(in));
        drop[axis] = true;
      }
    } else {
      for (int64_t d = 0; d < rank; ++d)
        drop[d] = in[d] == 1;
    }
    for (int64_t d = 0; d < rank; ++d)
      if (!drop[d])
        target.push_back(in[d]);
    return target;
  }
  if (ctx.code() == BuiltinOperator::EXPAND_DIMS) {
    auto axis = ctx.constantInts(1);
    if (failed(axis))
      return failure();
    int64_t a = axis->size() == 1 ? (*axis)[0] : rank + 1;
    if (a < 0)
      a += rank + 1;
    if (a < 0 || a > rank)
      return ctx.fail("axis is out of range for an input of rank " + llvm::Twine(rank));
    target.assign(in.begin(), in.end());
    target.insert(target.begin() + a, 1);
    return target;
  }
  const auto *opts = ctx.options<schema::ReshapeOptions>();
  if (ctx.hasInput(1) && ctx.isConstant(1)) {
    auto shape = ctx.constantInts(1);
    if (failed(shape))
      return failure();
    target = *shape;
  } else if (opts && opts->new_shape()) {
    target.assign(opts->new_shape()->begin(), opts->new_shape()->end());
  } else {
    for (int64_t d : ctx.outputShape(0))
      target.push_back(ShapedType::isDynamic(d) ? -1 : d);
  }
  int64_t count = product(in), known = 1, open = -1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1 && open < 0) {
      open = d;
      continue;
    }
    if (target[d] < 0)
      return ctx.fail("new shape " + dimsString(target) +
                      " has more than one -1 or a negative size");
    known *= target[d];
  }
  if (open >= 0 && (known == 0 || count % known != 0))
    return ctx.fail("the input " + dimsString(in) + " (" + llvm::Twine(count) +
                    " elements) does not fill new shape " + dimsString(target) +
                    ": the element count must be a multiple of " + llvm::Twine(known));
  if (open >= 0)
    target[open] = count / known;
  else if (known != count)
    return ctx.fail("new shape " + dimsString(target) + " holds " + llvm::Twine(known) +
                    " elements, the input " + dimsString(in) + " has " +
                    llvm::Twine(count));
  return target;
}

/// RESHAPE (and SQUEEZE/EXPAND_DIMS): the model records the output shape,
/// so the target shape is read from the output tensor; the shape operand or
/// ReshapeOptions.new_shape only has to agree in element count. Once
/// --fix-shape sized the model and the output's signature has a -1, the
/// target is computed as TFLite does (reshapeTarget).
LogicalResult convertReshape(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape = ctx.outputShape(0);
  if (llvm::any_of(shape, ShapedType::isDynamic)) {
    auto target = reshapeTarget(ctx, shapeOf(*x));
    if (failed(target))
      return failure();
    shape = *target;
  }
  // A damaged file can record an output of another element count, which
  // TOSA cannot reshape to (found by the tflite_import fuzzer). Both counts
  // fit 64 bits: the importer checked every tensor's shape first.
  if (product(shape) != product(shapeOf(*x)))
    return ctx.fail("the output records shape " + dimsString(shape) + " (" +
                    llvm::Twine(product(shape)) + " elements) but the input has shape " +
                    dimsString(shapeOf(*x)) + " (" + llvm::Twine(product(shapeOf(*x))) +
                    " elements)");
  return ctx.setOutput(0, ctx.reshape(*x, shape));
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
  // The inputs must stack into the recorded output: its rank, its sizes off
  // the axis, the axis sizes adding up (a rank mismatch crashes MLIR 16's
  // tosa.concat shape inference; found by the tflite_import fuzzer).
  std::vector<int64_t> outShape = ctx.outputShape(0);
  // Open dimensions (--fix-shape): sizes off the axis from input 0, the
  // axis from the inputs' sum.
  for (int64_t d = 0; d < rank; ++d)
    if (ShapedType::isDynamic(outShape[d])) {
      outShape[d] = 0;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (static_cast<int64_t>(shapeOf(inputs[i]).size()) == rank &&
            (d == axis || i == 0))
          outShape[d] += shapeOf(inputs[i])[d];
    }
  int64_t along = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    llvm::ArrayRef<int64_t> in = shapeOf(inputs[i]);
    bool fits = static_cast<int64_t>(in.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = d == axis || in[d] == outShape[d];
    if (!fits)
      return ctx.fail("input " + llvm::Twine(i) + " of shape " + dimsString(in) +
                      " does not concatenate into the output's " + dimsString(outShape) +
                      " along axis " + llvm::Twine(axis));
    along += in[axis];
  }
  if (inputs.empty() || along != outShape[axis])
    return ctx.fail("the inputs give " + llvm::Twine(along) + " along axis " +
                    llvm::Twine(axis) + ", the output records " + dimsString(outShape));
  Value concat = ctx.create<tosa::ConcatOp>(
      RankedTensorType::get(outShape, ctx.outputType(0).getElementType()), inputs,
                                            ctx.builder().getI64IntegerAttr(axis));
  auto out = ctx.applyActivation(concat, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// Input 0 of a padding operator and its paddings, input 1: a constant
/// [rank, 2] tensor of [before, after] per dimension (PAD, PADV2, MIRROR_PAD).
struct PadOperands {
  Value input;
  std::vector<int64_t> paddings;
};
FailureOr<PadOperands> padOperands(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto paddings = ctx.constantInts(1);
  if (failed(paddings))
    return failure();
  int64_t rank = shapeOf(*x).size();
  if (static_cast<int64_t>(paddings->size()) != 2 * rank)
    return ctx.fail("paddings must be a [" + llvm::Twine(rank) + ", 2] tensor");
  return PadOperands{*x, std::move(*paddings)};
}

/// PAD / PADV2: paddings is a constant [rank, 2] tensor.
LogicalResult convertPad(OpContext &ctx) {
  auto operands = padOperands(ctx);
  if (failed(operands))
    return failure();
  int64_t rank = shapeOf(operands->input).size();
  std::vector<int32_t> pads(operands->paddings.begin(), operands->paddings.end());
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
  return ctx.setOutput(0, ctx.create<tosa::PadOp>(ctx.outputType(0), operands->input,
                                                  padValue, padConst, nullptr));
}

/// TRANSPOSE: output dimension k is input dimension perm[k]; perm is a
/// constant permutation of [0, rank). -> tosa.transpose (ranks 1 to 6).
LogicalResult convertTranspose(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto perm = ctx.constantInts(1);
  if (failed(perm))
    return failure();
  int64_t rank = ctx.inputShape(0).size();
  if (static_cast<int64_t>(perm->size()) != rank)
    return ctx.fail("perm has " + llvm::Twine(perm->size()) +
                    " entries, the input has rank " + llvm::Twine(rank));
  if (rank == 0)
    return ctx.setOutput(0, *x);
  if (rank > 6)
    return ctx.fail("input rank " + llvm::Twine(rank) +
                    " is not supported (TOSA transposes ranks 1 to 6)");
  std::vector<bool> seen(rank, false);
  std::vector<int32_t> perm32;
  bool identity = true;
  for (int64_t k = 0; k < rank; ++k) {
    int64_t p = (*perm)[k];
    if (p < 0 || p >= rank || seen[p])
      return ctx.fail("perm " + dimsString(*perm) +
                      " is not a permutation of [0, " + llvm::Twine(rank) +
                      ")");
    seen[p] = true;
    identity &= p == k;
    perm32.push_back(static_cast<int32_t>(p));
  }
  if (identity)
    return ctx.setOutput(0, *x);
  return ctx.setOutput(0, ctx.transpose(*x, perm32));
}

/// SLICE: output = input[begin[d] : begin[d] + size[d]] per dimension, with
/// size -1 meaning "to the end"; begin and size are constants.
/// -> tosa.slice (ranks 1 to 6).
LogicalResult convertSlice(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto begin = ctx.constantInts(1);
  if (failed(begin))
    return failure();
  auto size = ctx.constantInts(2);
  if (failed(size))
    return failure();
  auto inShape = ctx.inputShape(0);
  int64_t rank = inShape.size();
  if (rank < 1 || rank > 6)
    return ctx.fail("input rank " + llvm::Twine(rank) +
                    " is not supported (TOSA slices ranks 1 to 6)");
  if (static_cast<int64_t>(begin->size()) != rank ||
      static_cast<int64_t>(size->size()) != rank)
    return ctx.fail("begin and size must have one entry per input dimension (" +
                    llvm::Twine(rank) + ")");
  std::vector<int64_t> start(rank), extent(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t b = (*begin)[d], n = (*size)[d], dim = inShape[d];
    if (n == -1)
      n = dim - b;
    if (b < 0 || n < 0 || b + n > dim)
      return ctx.fail("begin " + dimsString(*begin) + " / size " +
                      dimsString(*size) + " are out of range for input " +
                      dimsString(inShape));
    if (n == 0)
      return ctx.fail("the slice is empty along dimension " + llvm::Twine(d) +
                      "; empty tensors are not supported");
    start[d] = b;
    extent[d] = n;
  }
  return ctx.setOutput(0, slice(ctx, *x, start, extent));
}

/// STRIDED_SLICE with constant begin/end/strides: TFLite's rules
/// (tensorflow/lite/kernels/internal/strided_slice_logic.h, following
/// TensorFlow's dense-spec canonicalization): an ellipsis expands to the
/// dimensions the other entries do not address, new_axis entries only add a
/// size-1 output dimension, masked begins/ends select the whole range,
/// negative indices count from the end and are then clamped, and a shrunk
/// axis selects the single element at begin.
///
/// TOSA: one tosa.slice of the covered range; dimensions with a negative
/// stride are reversed (tosa.reverse on a rank-3 view); dimensions with
/// |stride| > 1 are padded to a whole number of strides if the range ends
/// early, split into [count, |stride|] by a reshape and sliced to index 0 of
/// each stride; the declared output shape then drops shrunk axes and adds new
/// ones.
namespace {
/// STRIDED_SLICE's operands as the file gives them: one entry per
/// begin/end/strides element (the "sparse spec") and its five bit masks.
struct SparseSliceSpec {
  std::vector<int64_t> begin, end, strides;
  uint32_t beginMask = 0, endMask = 0, ellipsisMask = 0, newAxisMask = 0, shrinkMask = 0;
  bool offset = false;
};
/// One input dimension's entry after the ellipsis and new axes are resolved.
struct DenseSliceSpec {
  int64_t begin = 0, end = 0, stride = 1;
  bool beginMasked = true, endMasked = true, shrink = false;
};
/// Per input dimension: `count` elements from `first`, `stride` apart.
struct SliceSelection {
  int64_t first, count, stride;
};
} // namespace

/// The constant begin/end/strides and the options, checked for length
/// (equal, at most 32 entries).
static FailureOr<SparseSliceSpec> readStridedSlice(OpContext &ctx) {
  SparseSliceSpec spec;
  if (const auto *opts = ctx.options<schema::StridedSliceOptions>()) {
    spec.beginMask = opts->begin_mask();
    spec.endMask = opts->end_mask();
    spec.ellipsisMask = opts->ellipsis_mask();
    spec.newAxisMask = opts->new_axis_mask();
    spec.shrinkMask = opts->shrink_axis_mask();
    spec.offset = opts->offset();
  }
  auto begin = ctx.constantInts(1);
  if (failed(begin))
    return failure();
  auto end = ctx.constantInts(2);
  if (failed(end))
    return failure();
  spec.begin = *begin;
  spec.end = *end;
  spec.strides.assign(begin->size(), 1);
  if (ctx.hasInput(3)) {
    auto s = ctx.constantInts(3);
    if (failed(s))
      return failure();
    spec.strides = *s;
  }
  size_t n = spec.begin.size();
  if (spec.end.size() != n || spec.strides.size() != n)
    return ctx.fail("begin, end and strides must have the same length");
  if (n > 32)
    return ctx.fail("more than 32 slice entries");
  return spec;
}

/// Sparse spec -> one entry per input dimension; dimensions no entry
/// addresses take their whole range. Errors: two ellipses, more entries
/// than the input has dimensions.
static FailureOr<std::vector<DenseSliceSpec>>
denseSliceSpec(OpContext &ctx, const SparseSliceSpec &sparse, int64_t rank) {
  size_t n = sparse.begin.size();
  uint32_t used = n == 32 ? ~0u : (1u << n) - 1;
  if (std::popcount(sparse.ellipsisMask & used) > 1)
    return ctx.fail("more than one ellipsis in ellipsis_mask");
  std::vector<DenseSliceSpec> dense(rank);
  int64_t dim = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bit = 1u << i;
    if (sparse.ellipsisMask & bit) {
      int64_t rest = 0;
      for (size_t j = i + 1; j < n; ++j)
        if (!(sparse.newAxisMask & (1u << j)))
          ++rest;
      dim = std::max(dim, rank - rest);
      continue;
    }
    if (sparse.newAxisMask & bit)
      continue; // a size-1 output dimension: the declared shape has it
    if (dim >= rank)
      return ctx.fail("begin/end/strides address more dimensions than the "
                      "input's rank " +
                      llvm::Twine(rank));
    DenseSliceSpec &spec = dense[dim++];
    spec.begin = sparse.begin[i];
    spec.end = sparse.offset ? sparse.begin[i] + sparse.end[i] : sparse.end[i];
    spec.stride = sparse.strides[i];
    spec.beginMasked = sparse.beginMask & bit;
    spec.endMasked = sparse.endMask & bit;
    spec.shrink = sparse.shrinkMask & bit;
  }
  return dense;
}

/// The elements each dimension selects: masked bounds take the whole range,
/// negative indices count from the end and are clamped, a shrunk axis takes
/// the one element at begin. Errors: stride 0, an empty selection, a shrink
/// index out of range.
static FailureOr<std::vector<SliceSelection>>
sliceSelections(OpContext &ctx, const std::vector<DenseSliceSpec> &dense,
                llvm::ArrayRef<int64_t> inShape) {
  int64_t rank = inShape.size();
  std::vector<SliceSelection> sel(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const DenseSliceSpec &spec = dense[d];
    int64_t size = inShape[d], s = spec.stride;
    if (s == 0)
      return ctx.fail("stride 0 along dimension " + llvm::Twine(d));
    if (spec.shrink) {
      int64_t b = spec.begin < 0 ? spec.begin + size : spec.begin;
      if (b < 0 || b >= size)
        return ctx.fail("shrink_axis index " + llvm::Twine(spec.begin) +
                        " is out of range for dimension " + llvm::Twine(d) +
                        " of size " + llvm::Twine(size));
      sel[d] = {b, 1, 1};
      continue;
    }
    auto canonical = [&](int64_t v, bool masked, bool isEnd) {
      if (masked)
        return isEnd ? (s > 0 ? size : -1) : (s > 0 ? int64_t(0) : size - 1);
      if (v < 0)
        v += size;
      return s > 0 ? std::clamp<int64_t>(v, 0, size)
                   : std::clamp<int64_t>(v, -1, size - 1);
    };
    int64_t start = canonical(spec.begin, spec.beginMasked, false);
    int64_t stop = canonical(spec.end, spec.endMasked, true);
    int64_t span = s > 0 ? stop - start : start - stop;
    int64_t step = s > 0 ? s : -s;
    int64_t count = span > 0 ? (span + step - 1) / step : 0;
    if (count == 0)
      return ctx.fail("the slice is empty along dimension " + llvm::Twine(d) +
                      "; empty tensors are not supported");
    sel[d] = {start, count, count == 1 ? 1 : s};
  }
  return sel;
}

/// Splits each strided dimension of `v` (padded to whole strides) into
/// [count, step] and keeps index 0 of every step; runs of unsplit
/// dimensions are merged to keep the rank low. Error: an intermediate of
/// rank > 6.
static FailureOr<Value> keepEveryStep(OpContext &ctx, Value v,
                                      const std::vector<SliceSelection> &sel,
                                      llvm::ArrayRef<int64_t> step) {
  llvm::SmallVector<int64_t> split, keep;
  auto push = [&](int64_t n, int64_t k) {
    if (!split.empty() && split.back() == keep.back() && n == k) {
      split.back() *= n;
      keep.back() *= k;
      return;
    }
    split.push_back(n);
    keep.push_back(k);
  };
  for (size_t d = 0; d < sel.size(); ++d) {
    push(sel[d].count, sel[d].count);
    if (step[d] > 1)
      push(step[d], 1);
  }
  if (split.size() > 6)
    return ctx.fail("these strides need a rank-" + llvm::Twine(split.size()) +
                    " intermediate; TOSA slices ranks 1 to 6");
  v = ctx.reshape(v, split);
  return slice(ctx, v, llvm::SmallVector<int64_t>(split.size(), 0), keep);
}

/// TOSA for the selections `sel` of `x` (shape `inShape`).
static FailureOr<Value> emitSliceSelections(OpContext &ctx, Value x,
                                            const std::vector<SliceSelection> &sel,
                                            llvm::ArrayRef<int64_t> inShape) {
  int64_t rank = inShape.size();
  // 1. The covered range of every dimension. A dimension with step > 1 takes
  //    count * step elements when the input has them (so that step 4 needs no
  //    padding), else just up to its last selected element.
  std::vector<int64_t> start(rank), size(rank), step(rank), padAfter(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    auto [first, count, s] = sel[d];
    int64_t a = s > 0 ? s : -s, full = count * a, tight = (count - 1) * a + 1;
    step[d] = a;
    if (s > 0) {
      size[d] = first + full <= inShape[d] ? full : tight;
      start[d] = first;
    } else {
      size[d] = first - full + 1 >= 0 ? full : tight;
      start[d] = first - size[d] + 1;
    }
    padAfter[d] = full - size[d];
  }
  Value v = slice(ctx, x, start, size);

  // 2. Negative strides: reverse those dimensions (rank-3 view [outer, D,
  //    inner], as tosa.reverse takes ranks 1 to 4), so every dimension walks
  //    forward from index 0.
  for (int64_t d = 0; d < rank; ++d)
    if (sel[d].stride < 0)
      v = ctx.reverseAxis(v, d);

  // 3. Pad strided dimensions whose range ends early to whole strides.
  if (llvm::any_of(padAfter, [](int64_t p) { return p > 0; })) {
    std::vector<int32_t> pads;
    llvm::SmallVector<int64_t> padded;
    for (int64_t d = 0; d < rank; ++d) {
      pads.push_back(0);
      pads.push_back(static_cast<int32_t>(padAfter[d]));
      padded.push_back(size[d] + padAfter[d]);
    }
    v = ctx.create<tosa::PadOp>(typeLike(v, padded), v,
                                ctx.constI32({rank, 2}, pads));
  }

  // 4. Keep every step-th element of the strided dimensions.
  if (llvm::any_of(step, [](int64_t a) { return a > 1; }))
    return keepEveryStep(ctx, v, sel, step);
  return v;
}

LogicalResult convertStridedSlice(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto sparse = readStridedSlice(ctx);
  if (failed(sparse))
    return failure();
  auto inShape = ctx.inputShape(0);
  int64_t rank = inShape.size();
  if (rank < 1 || rank > 6)
    return ctx.fail("input rank " + llvm::Twine(rank) +
                    " is not supported (TOSA slices ranks 1 to 6)");
  auto dense = denseSliceSpec(ctx, *sparse, rank);
  if (failed(dense))
    return failure();
  auto sel = sliceSelections(ctx, *dense, inShape);
  if (failed(sel))
    return failure();
  auto v = emitSliceSelections(ctx, *x, *sel, inShape);
  if (failed(v))
    return failure();
  return ctx.setOutput(0, *v);
}

/// GATHER (batch_dims b, axis a >= b): output = params.shape[:a] +
/// indices.shape[b:] + params.shape[a+1:], taking params[..., indices[...],
/// ...] along axis a; the first b dimensions of params and indices are shared.
///
/// TOSA: tosa.gather on values [B*Outer, K, Inner] (B = batch dims, Outer =
/// params dims b..a-1, K = params dim a, Inner = the rest) with indices
/// [B*Outer, W], the W = prod(indices.shape[b:]) indices of each batch
/// repeated for every Outer row: folded into the constant for constant
/// indices, tosa.tile otherwise. Constant indices are range-checked (TFLite
/// rejects out-of-range indices); computed ones are clamped to [0, K) so the
/// generated code never reads outside params.
/// The gather of convertGather with params input `pIn`, indices input
/// `iIn` and the given axis and batch_dims (GATHER: 0, 1 and GatherOptions;
/// EMBEDDING_LOOKUP: 1, 0, axis 0).
LogicalResult gatherAlong(OpContext &ctx, int pIn, int iIn, int64_t axis, int64_t batchDims) {
  const int64_t axisGiven = axis, batchGiven = batchDims;
  auto params = ctx.input(pIn);
  if (failed(params))
    return failure();
  auto pShape = ctx.inputShape(pIn), iShape = ctx.inputShape(iIn);
  int64_t rank = pShape.size(), iRank = iShape.size();
  if (rank < 1)
    return ctx.fail("params must have rank 1 or more");
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis " + llvm::Twine(axisGiven) + " is out of range for params of rank " +
                    llvm::Twine(rank));
  if (batchDims < 0)
    batchDims += iRank;
  if (batchDims < 0 || batchDims > iRank || batchDims > axis)
    return ctx.fail("batch_dims " + llvm::Twine(batchGiven) +
                    " must lie in [0, min(axis, indices rank)]");
  for (int64_t d = 0; d < batchDims; ++d)
    if (pShape[d] != iShape[d])
      return ctx.fail("batch dimension " + llvm::Twine(d) +
                      " differs: params " + dimsString(pShape) + ", indices " +
                      dimsString(iShape));
  llvm::ArrayRef<int64_t> p(pShape), idx(iShape);
  int64_t batch = product(p.take_front(batchDims));
  int64_t outer = product(p.slice(batchDims, axis - batchDims));
  int64_t k = pShape[axis];
  int64_t inner = product(p.drop_front(axis + 1));
  int64_t width = product(idx.drop_front(batchDims));
  if (batch * outer * k * inner == 0 || width == 0)
    return ctx.fail("empty tensors are not supported");
  Value values = ctx.reshape(*params, {batch * outer, k, inner});

  Value indices;
  if (ctx.isConstant(iIn)) {
    auto constant = ctx.constantInts(iIn);
    if (failed(constant))
      return failure();
    if (static_cast<int64_t>(constant->size()) != batch * width)
      return ctx.fail("indices hold " + llvm::Twine(constant->size()) +
                      " values, their shape " + dimsString(iShape) + " needs " +
                      llvm::Twine(batch * width));
    std::vector<int32_t> data;
    data.reserve(batch * outer * width);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t w = 0; w < width; ++w) {
          int64_t i = (*constant)[b * width + w];
          if (i < 0 || i >= k)
            return ctx.fail("index " + llvm::Twine(i) +
                            " is out of range [0, " + llvm::Twine(k) +
                            ") of axis " + llvm::Twine(axis));
          data.push_back(static_cast<int32_t>(i));
        }
    indices = ctx.constI32({batch * outer, width}, data);
  } else {
    auto computed = ctx.input(iIn);
    if (failed(computed))
      return failure();
    auto type = computed->getType().cast<RankedTensorType>();
    if (!type.getElementType().isInteger(32))
      return ctx.fail("computed indices must be int32");
    auto &b = ctx.builder();
    Value v = ctx.create<tosa::ClampOp>(
        type, *computed, b.getI64IntegerAttr(0), b.getI64IntegerAttr(k - 1),
        b.getF32FloatAttr(0.0f), b.getF32FloatAttr(static_cast<float>(k - 1)));
    v = ctx.reshape(v, {batch, 1, width});
    if (outer > 1)
      v = ctx.create<tosa::TileOp>(typeLike(v, {batch, outer, width}), v,
                                   b.getDenseI64ArrayAttr({1, outer, 1}));
    indices = ctx.reshape(v, {batch * outer, width});
  }
  Value gathered = ctx.create<tosa::GatherOp>(
      typeLike(values, {batch * outer, width, inner}), values, indices);
  return ctx.setOutput(0, gathered);
}

LogicalResult convertGather(OpContext &ctx) {
  const auto *opts = ctx.options<schema::GatherOptions>();
  return gatherAlong(ctx, 0, 1, opts ? opts->axis() : 0, opts ? opts->batch_dims() : 0);
}

/// EMBEDDING_LOOKUP (inputs: ids [K] int32, value [N, ...]): output[k, ...]
/// = value[ids[k], ...] (embedding_lookup.cc), i.e. GATHER of value along
/// axis 0 by ids.
LogicalResult convertEmbeddingLookup(OpContext &ctx) {
  if (ctx.inputShape(0).size() != 1)
    return ctx.fail("ids (input 0) must be 1-D, not " + dimsString(ctx.inputShape(0)));
  return gatherAlong(ctx, 1, 0, 0, 0);
}

/// One spatial axis of a tosa.resize: output index o samples input
/// coordinate (o * d + offset) / n; border makes the output size come out.
struct ResizeAxis {
  int64_t n, d, offset, border;
};

/// TFLite's sampling position for output index o, with s = p / q
/// (align_corners: (in-1)/(out-1), else in/out):
///   RESIZE_BILINEAR          half_pixel ? (o + 0.5) * s - 0.5 : o * s,
///                            interpolated between floor and floor + 1
///                            (both clamped to the input);
///   RESIZE_NEAREST_NEIGHBOR  align_corners ? round((o + h) * s)
///                                          : floor((o + h) * s),
///                            h = half_pixel ? 0.5 : 0, clamped to the input.
/// TOSA NEAREST_NEIGHBOR rounds halves up, so floor(x) is written as
/// round_half_up(x - 0.5). Everything is scaled by 2q to stay integral.
ResizeAxis resizeAxis(int64_t in, int64_t out, bool alignCorners,
                      bool halfPixel, bool nearest) {
  ResizeAxis r;
  if (in == 1) {
    // Every output samples the only input element.
    r = {out, 1, 0, 0};
  } else {
    bool aligned = alignCorners && out > 1;
    int64_t p = aligned ? in - 1 : in, q = aligned ? out - 1 : out;
    r.n = 2 * q;
    r.d = 2 * p;
    if (!nearest)
      r.offset = halfPixel ? p - q : 0;
    else
      r.offset = (halfPixel ? p : 0) - (alignCorners ? 0 : q);
    int64_t g =
        std::gcd(std::gcd(r.n, r.d), r.offset < 0 ? -r.offset : r.offset);
    r.n /= g;
    r.d /= g;
    r.offset /= g;
  }
  // TOSA: out - 1 = ((in - 1) * n - offset + border) / d.
  r.border = (out - 1) * r.d - (in - 1) * r.n + r.offset;
  return r;
}

/// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR on NHWC f32 with a constant
/// [new_height, new_width] size (see resizeAxis for the sampling rules).
/// -> tosa.resize BILINEAR / NEAREST_NEIGHBOR with per-axis scale, offset and
/// border. Bilinear with both align_corners and half_pixel_centers is
/// rejected, as TFLite does.
LogicalResult convertResize(OpContext &ctx) {
  bool nearest = ctx.code() == BuiltinOperator::RESIZE_NEAREST_NEIGHBOR;
  bool alignCorners = false, halfPixel = false;
  if (nearest) {
    if (const auto *o = ctx.options<schema::ResizeNearestNeighborOptions>()) {
      alignCorners = o->align_corners();
      halfPixel = o->half_pixel_centers();
    }
  } else if (const auto *o = ctx.options<schema::ResizeBilinearOptions>()) {
    alignCorners = o->align_corners();
    halfPixel = o->half_pixel_centers();
  }
  if (!nearest && alignCorners && halfPixel)
    return ctx.fail("align_corners and half_pixel_centers cannot both be true "
                    "(TFLite rejects this combination)");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto size = ctx.constantInts(1);
  if (failed(size))
    return failure();
  auto inShape = ctx.inputShape(0);
  if (inShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  // Nearest-neighbour resizing copies elements, so it takes int8 too (the
  // int8 converters use it for RESIZE_NEAREST_NEIGHBOR).
  Type element = x->getType().cast<RankedTensorType>().getElementType();
  if (!element.isF32() && !(nearest && element.isInteger(8)))
    return ctx.fail("only float32 inputs are supported");
  if (size->size() != 2 || (*size)[0] <= 0 || (*size)[1] <= 0)
    return ctx.fail("size must hold two positive values [new_height, "
                    "new_width]");
  int64_t oh = (*size)[0], ow = (*size)[1];
  llvm::SmallVector<int64_t> outShape = {inShape[0], oh, ow, inShape[3]};
  ResizeAxis y = resizeAxis(inShape[1], oh, alignCorners, halfPixel, nearest);
  ResizeAxis xa = resizeAxis(inShape[2], ow, alignCorners, halfPixel, nearest);
  auto &b = ctx.builder();
  Value resized = ctx.create<tosa::ResizeOp>(
      RankedTensorType::get(outShape, element), *x, b.getDenseI64ArrayAttr({y.n, y.d, xa.n, xa.d}),
      b.getDenseI64ArrayAttr({y.offset, xa.offset}),
      b.getDenseI64ArrayAttr({y.border, xa.border}),
      b.getStringAttr(nearest ? "NEAREST_NEIGHBOR" : "BILINEAR"));
  return ctx.setOutput(0, resized);
}

/// MIRROR_PAD: paddings is a constant [rank, 2] tensor of [before, after]
/// per dimension. MirrorPadOptions.mode REFLECT mirrors without the edge
/// element ([1 2 3] padded by 2 before: [3 2 1 2 3], each side at most
/// dim - 1), SYMMETRIC with it ([2 1 1 2 3], each side at most dim), as
/// TensorFlow's MirrorPad defines them (TFLite kernels/mirror_pad.cc). Larger
/// or negative paddings are refused.
///
/// TOSA: mirror padding is separable, so each padded dimension in turn gets
/// its two mirrored edge slices (tosa.slice, then tosa.reverse) concatenated
/// around the running tensor (tosa.concat).
LogicalResult convertMirrorPad(OpContext &ctx) {
  const auto *opts = ctx.options<schema::MirrorPadOptions>();
  bool symmetric = opts && opts->mode() == schema::MirrorPadMode::SYMMETRIC;
  auto operands = padOperands(ctx);
  if (failed(operands))
    return failure();
  Value v = operands->input;
  llvm::SmallVector<int64_t> shape(shapeOf(v));
  int64_t rank = shape.size();
  const std::vector<int64_t> &paddings = operands->paddings;
  // The first mirrored element is index `edge` on each side.
  int64_t edge = symmetric ? 0 : 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
    int64_t limit = shape[d] - edge;
    if (before < 0 || after < 0 || before > limit || after > limit)
      return ctx.fail(llvm::Twine("paddings [") + llvm::Twine(before) + ", " +
                      llvm::Twine(after) + "] of dimension " + llvm::Twine(d) +
                      " (size " + llvm::Twine(shape[d]) + ") are out of range: " +
                      (symmetric ? "SYMMETRIC" : "REFLECT") + " mode pads each side by 0 to " +
                      llvm::Twine(std::max<int64_t>(limit, 0)));
    if (before == 0 && after == 0)
      continue;
    llvm::SmallVector<int64_t> current(shapeOf(v));
    auto mirrored = [&](int64_t start, int64_t count) {
      llvm::SmallVector<int64_t> begin(rank, 0), size(current);
      begin[d] = start;
      size[d] = count;
      return ctx.reverseAxis(slice(ctx, v, begin, size), d);
    };
    llvm::SmallVector<Value> parts;
    if (before)
      parts.push_back(mirrored(edge, before));
    parts.push_back(v);
    if (after)
      parts.push_back(mirrored(shape[d] - edge - after, after));
    current[d] += before + after;
    v = ctx.create<tosa::ConcatOp>(typeLike(v, current), parts,
                                   ctx.builder().getI64IntegerAttr(d));
  }
  return ctx.setOutput(0, v);
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
  table[BuiltinOperator::MIRROR_PAD] = convertMirrorPad;
  table[BuiltinOperator::TRANSPOSE] = convertTranspose;
  table[BuiltinOperator::SLICE] = convertSlice;
  table[BuiltinOperator::STRIDED_SLICE] = convertStridedSlice;
  table[BuiltinOperator::GATHER] = convertGather;
  table[BuiltinOperator::EMBEDDING_LOOKUP] = convertEmbeddingLookup;
  table[BuiltinOperator::RESIZE_BILINEAR] = convertResize;
  table[BuiltinOperator::RESIZE_NEAREST_NEIGHBOR] = convertResize;
}

} // namespace kiln::tfl
