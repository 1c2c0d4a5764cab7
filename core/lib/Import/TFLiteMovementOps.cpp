//===- TFLiteMovementOps.cpp - Stacking, splitting and shape operators ----===//
//
// PACK UNPACK SPLIT SPLIT_V SHAPE BROADCAST_TO BROADCAST_ARGS FILL
// DEPTH_TO_SPACE SPACE_TO_DEPTH ARG_MAX ARG_MIN REVERSE_V2 GATHER_ND
// SPACE_TO_BATCH_ND BATCH_TO_SPACE_ND CUMSUM -> TOSA.
// Semantics: TFLite's reference kernels (tensorflow/lite/kernels/pack.cc,
// unpack.cc, split.cc, split_v.cc, shape.cc, broadcast_to.cc,
// broadcast_args.cc, fill.cc, internal/reference/depth_to_space.h,
// space_to_depth.h, arg_min_max.h, reverse.cc, gather_nd.cc,
// space_to_batch_nd.cc, batch_to_space_nd.cc, cumsum.cc). Axes, split sizes, shapes and FILL's
// dims must be constants (Kiln compiles static shapes); SHAPE and BROADCAST_ARGS fold to constants
// at import. Data movement keeps the input's element type (f32 or i32).
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TFLiteQuantizedOps.h"
#include "TosaMath.h"

#include <algorithm>
#include <climits>
#include <optional>

using namespace mlir;

namespace kiln::tfl {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `axis` counted from the back when negative, checked against [0, rank).
FailureOr<int64_t> normalizedAxis(OpContext &ctx, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return ctx.fail("axis " + llvm::Twine(axis) + " is out of range for rank " + llvm::Twine(rank) +
                    " (supported: [-" + llvm::Twine(rank) + ", " + llvm::Twine(rank - 1) + "])");
  return a;
}

/// The integers of input `i`, which must be constant (or folded): else
/// fails with "<what> (input i) must be a constant; <computed> are not
/// supported".
FailureOr<std::vector<int64_t>> requiredInts(OpContext &ctx, int i, const char *what,
                                             const char *computed) {
  if (!ctx.isConstant(i))
    return ctx.fail(llvm::Twine(what) + " (input " + llvm::Twine(i) + ") must be a constant; " +
                    computed + " not supported");
  return ctx.constantInts(i);
}

/// The constant scalar (or one-element) axis of input `i`, normalized.
FailureOr<int64_t> constantAxis(OpContext &ctx, int i, int64_t rank) {
  auto axis = requiredInts(ctx, i, "the axis", "a computed axis is");
  if (failed(axis))
    return failure();
  if (axis->size() != 1)
    return ctx.fail("the axis (input " + llvm::Twine(i) + ") must hold one value, not " +
                    llvm::Twine(axis->size()));
  return normalizedAxis(ctx, (*axis)[0], rank);
}

/// PACK (values_count inputs of one shape S, axis in [-(rank+1), rank]):
/// output[..., k, ...] = input k, the new dimension at `axis` (pack.cc).
/// TOSA: each input reshaped with a 1 at `axis`, tosa.concat along it.
LogicalResult convertPack(OpContext &ctx) {
  const auto *opts = ctx.options<schema::PackOptions>();
  int n = ctx.numInputs();
  if (n < 1 || (opts && opts->values_count() != n))
    return ctx.fail("values_count " + llvm::Twine(opts ? opts->values_count() : 0) +
                    " must be the number of inputs (" + llvm::Twine(n) + ")");
  std::vector<int64_t> in = ctx.inputShape(0);
  int64_t rank = in.size();
  auto axis = normalizedAxis(ctx, opts ? opts->axis() : 0, rank + 1);
  if (failed(axis))
    return failure();
  std::vector<int64_t> unit = in;
  unit.insert(unit.begin() + *axis, 1);
  llvm::SmallVector<Value> parts;
  for (int i = 0; i < n; ++i) {
    auto x = ctx.input(i);
    if (failed(x))
      return failure();
    if (shapeOf(*x) != llvm::ArrayRef<int64_t>(in))
      return ctx.fail("input " + llvm::Twine(i) + " has shape " + shapeString(shapeOf(*x)) +
                      ", input 0 " + shapeString(in) + ": PACK stacks tensors of one shape");
    if (x->getType().cast<RankedTensorType>().getElementType() != ctx.inputType(0).getElementType())
      return ctx.fail("the inputs must have one element type");
    parts.push_back(ctx.reshape(*x, unit));
  }
  return ctx.setOutput(0, ctx.concat(parts, *axis));
}

/// UNPACK (num outputs, axis): output k = input[..., k, ...] along `axis`,
/// that dimension removed; num must be the input's size there (unpack.cc).
/// TOSA: one tosa.slice per output, reshaped.
LogicalResult convertUnpack(OpContext &ctx) {
  const auto *opts = ctx.options<schema::UnpackOptions>();
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> in(shapeOf(*x));
  int64_t rank = in.size();
  if (rank < 1)
    return ctx.fail("expects an input of rank 1 or more");
  auto axis = normalizedAxis(ctx, opts ? opts->axis() : 0, rank);
  if (failed(axis))
    return failure();
  int64_t num = opts ? opts->num() : 0;
  if (num != in[*axis] || num != ctx.numOutputs())
    return ctx.fail("num " + llvm::Twine(num) + " must be the size of axis " + llvm::Twine(*axis) +
                    " of the input " + shapeString(in) + " and the number " + "of outputs (" +
                    llvm::Twine(ctx.numOutputs()) + ")");
  llvm::SmallVector<int64_t> out(in);
  out.erase(out.begin() + *axis);
  for (int64_t k = 0; k < num; ++k) {
    llvm::SmallVector<int64_t> start(rank, 0), size(in);
    start[*axis] = k;
    size[*axis] = 1;
    if (failed(ctx.setOutput(k, ctx.reshape(ctx.slice(*x, start, size), out))))
      return failure();
  }
  return success();
}

/// Binds output k to the k-th consecutive part (sizes[k] elements) of `x`
/// along `axis`.
LogicalResult bindParts(OpContext &ctx, Value x, int64_t axis, llvm::ArrayRef<int64_t> sizes) {
  llvm::SmallVector<int64_t> in(shapeOf(x));
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); offset += sizes[k], ++k) {
    llvm::SmallVector<int64_t> start(in.size(), 0), size(in);
    start[axis] = offset;
    size[axis] = sizes[k];
    if (failed(ctx.setOutput(k, ctx.slice(x, start, size))))
      return failure();
  }
  return success();
}

/// The input of SPLIT / SPLIT_V (input `data`, rank 1 or more) and its
/// constant split axis (input `axisInput`), normalized.
struct SplitOperand {
  Value x;
  llvm::SmallVector<int64_t> shape;
  int64_t axis;
};
FailureOr<SplitOperand> splitOperand(OpContext &ctx, int data, int axisInput) {
  auto x = ctx.input(data);
  if (failed(x))
    return failure();
  llvm::SmallVector<int64_t> in(shapeOf(*x));
  if (in.empty())
    return ctx.fail("expects an input of rank 1 or more");
  auto axis = constantAxis(ctx, axisInput, in.size());
  if (failed(axis))
    return failure();
  return SplitOperand{*x, in, *axis};
}

/// SPLIT (inputs: axis, input; SplitOptions.num_splits): num_splits equal
/// parts along the constant axis, which they must divide (split.cc).
LogicalResult convertSplit(OpContext &ctx) {
  auto operand = splitOperand(ctx, 1, 0);
  if (failed(operand))
    return failure();
  auto [x, in, axis] = *operand;
  const auto *opts = ctx.options<schema::SplitOptions>();
  int64_t n = opts ? opts->num_splits() : 0;
  if (n < 1 || n != ctx.numOutputs() || in[axis] % n != 0)
    return ctx.fail("num_splits " + llvm::Twine(n) + " must be the number of outputs (" +
                    llvm::Twine(ctx.numOutputs()) + ") and divide axis " + llvm::Twine(axis) +
                    " of the input " + shapeString(in));
  return bindParts(ctx, x, axis, std::vector<int64_t>(n, in[axis] / n));
}

/// SPLIT_V (inputs: input, size_splits, axis): consecutive parts of the
/// constant sizes along the constant axis; one size may be -1, taking what
/// the others leave (split_v.cc).
LogicalResult convertSplitV(OpContext &ctx) {
  auto operand = splitOperand(ctx, 0, 2);
  if (failed(operand))
    return failure();
  auto [x, in, axis] = *operand;
  auto sizes = requiredInts(ctx, 1, "size_splits", "computed split sizes are");
  if (failed(sizes))
    return failure();
  int64_t known = 0, open = -1;
  for (size_t k = 0; k < sizes->size(); ++k) {
    if ((*sizes)[k] == -1 && open < 0)
      open = k;
    else if ((*sizes)[k] < 0)
      return ctx.fail("size_splits " + shapeString(*sizes) +
                      " may hold one -1, and no other negative size");
    else
      known += (*sizes)[k];
  }
  if (open >= 0 && known <= in[axis])
    (*sizes)[open] = in[axis] - known;
  int64_t total = open >= 0 ? in[axis] : known;
  if (total != in[axis] || known > in[axis] ||
      static_cast<int64_t>(sizes->size()) != ctx.numOutputs())
    return ctx.fail("size_splits " + shapeString(*sizes) + " must give " +
                    llvm::Twine(ctx.numOutputs()) + " sizes adding up to axis " +
                    llvm::Twine(axis) + " of the input " + shapeString(in));
  return bindParts(ctx, x, axis, *sizes);
}

/// SHAPE: the input's dimensions as a 1-D INT32 (out_type INT64: INT64)
/// tensor, folded to a constant (shapes are static once --fix-shape sized
/// the model).
LogicalResult convertShape(OpContext &ctx) {
  if (!ctx.hasInput(0))
    return ctx.fail("input 0 is missing");
  return ctx.setConstantOutput(0, ctx.inputShape(0));
}

/// numpy broadcast of shapes `a` and `b`, or nullopt when they do not
/// broadcast.
std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                    llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[d] = x == 1 ? y : x;
  }
  return out;
}

/// BROADCAST_ARGS: the broadcast of two constant shapes, folded.
LogicalResult convertBroadcastArgs(OpContext &ctx) {
  auto a = ctx.constantInts(0);
  if (failed(a))
    return failure();
  auto b = ctx.constantInts(1);
  if (failed(b))
    return failure();
  auto out = broadcastShapes(*a, *b);
  if (!out)
    return ctx.fail("shapes " + shapeString(*a) + " and " + shapeString(*b) + " do not broadcast");
  return ctx.setConstantOutput(0, *out);
}

/// BROADCAST_TO (inputs: input, shape): the input broadcast (numpy rules)
/// to the constant shape, whose rank is at least the input's and which has,
/// per dimension, the input's size or any size where the input has 1
/// (broadcast_to.cc). TOSA: reshape to the rank, tosa.tile.
LogicalResult convertBroadcastTo(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto shape = requiredInts(ctx, 1, "the shape",
                            "a computed shape (other than a SHAPE or BROADCAST_ARGS result) is");
  if (failed(shape))
    return failure();
  auto in = shapeOf(*x);
  auto out = broadcastShapes(in, *shape);
  if (in.size() > shape->size() || !out || *out != *shape)
    return ctx.fail("the input " + shapeString(in) + " does not broadcast to shape " +
                    shapeString(*shape));
  if (product(*shape) == 0)
    return ctx.fail("empty tensors are not supported");
  return ctx.setOutput(0, ctx.broadcastTo(*x, *shape));
}

/// FILL (inputs: dims, value): a tensor of the constant dims holding the
/// scalar value (fill.cc). A constant value becomes a splat tosa.const, a
/// computed one is broadcast (tosa.tile).
LogicalResult convertFill(OpContext &ctx) {
  auto dims = requiredInts(ctx, 0, "dims", "computed dims are");
  if (failed(dims))
    return failure();
  if (llvm::any_of(*dims, [](int64_t d) { return d <= 0; }))
    return ctx.fail("dims " + shapeString(*dims) +
                    " must be positive (empty tensors are not supported)");
  auto value = ctx.input(1);
  if (failed(value))
    return failure();
  if (product(shapeOf(*value)) != 1)
    return ctx.fail("value (input 1) must be a scalar, not " + shapeString(shapeOf(*value)));
  Type element = value->getType().cast<RankedTensorType>().getElementType();
  if (!element.isF32() && !element.isInteger(32))
    return ctx.fail("value must be FLOAT32 or INT32");
  if (ctx.isConstant(1) && element.isF32()) {
    auto v = ctx.constantFloats(1);
    if (failed(v))
      return failure();
    return ctx.setOutput(0, ctx.constF32(*dims, {(*v)[0]}));
  }
  Value scalar = ctx.reshape(*value, llvm::SmallVector<int64_t>(dims->size(), 1));
  return ctx.setOutput(0, ctx.broadcastTo(scalar, *dims));
}

/// DEPTH_TO_SPACE (NHWC, block_size b): output[n, h*b + i, w*b + j, c] =
/// input[n, h, w, (i*b + j) * C/b^2 + c] (reference/depth_to_space.h).
/// SPACE_TO_DEPTH is its inverse, [N, H, W, C] -> [N, H/b, W/b, C*b^2].
/// TOSA: reshape to rank 6, transpose, reshape.
LogicalResult convertDepthToSpace(OpContext &ctx) {
  bool toSpace = ctx.code() == BuiltinOperator::DEPTH_TO_SPACE;
  int64_t b = 0;
  if (toSpace) {
    if (const auto *o = ctx.options<schema::DepthToSpaceOptions>())
      b = o->block_size();
  } else if (const auto *o = ctx.options<schema::SpaceToDepthOptions>()) {
    b = o->block_size();
  }
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto s = shapeOf(*x);
  if (s.size() != 4)
    return ctx.fail("expects a 4-D NHWC input, not " + shapeString(s));
  if (b < 1)
    return ctx.fail("block_size " + llvm::Twine(b) + " must be positive");
  int64_t n = s[0], h = s[1], w = s[2], c = s[3];
  if (toSpace) {
    if (c % (b * b) != 0)
      return ctx.fail("channels " + llvm::Twine(c) + " are not divisible by block_size^2 (" +
                      llvm::Twine(b * b) + ")");
    int64_t oc = c / (b * b);
    Value t = ctx.transpose(ctx.reshape(*x, {n, h, w, b, b, oc}), {0, 1, 3, 2, 4, 5});
    return ctx.setOutput(0, ctx.reshape(t, {n, h * b, w * b, oc}));
  }
  if (h % b != 0 || w % b != 0)
    return ctx.fail("height " + llvm::Twine(h) + " and width " + llvm::Twine(w) +
                    " must be divisible by block_size " + llvm::Twine(b));
  Value t = ctx.transpose(ctx.reshape(*x, {n, h / b, b, w / b, b, c}), {0, 1, 3, 2, 4, 5});
  return ctx.setOutput(0, ctx.reshape(t, {n, h / b, w / b, c * b * b}));
}

/// ARG_MAX / ARG_MIN (inputs: input, axis): index of the first maximum /
/// minimum along the constant axis, which is removed (arg_min_max.h: ties
/// give the lowest index); output_type INT32 or INT64 (Kiln computes both
/// in i32). Input float32, or int8/uint8 (the raw values compared; uint8 is
/// computed as int8, x - 128, which keeps the order), widened to i32.
/// ArgMin is ArgMax of -x (negation is exact in f32 and i32).
LogicalResult convertArgMax(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Type element = x->getType().cast<RankedTensorType>().getElementType();
  if (!element.isF32() && !element.isInteger(8))
    return ctx.fail("only float32, int8 and uint8 inputs are supported");
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  if (shape.empty())
    return ctx.fail("expects an input of rank 1 or more");
  auto axis = constantAxis(ctx, 1, shape.size());
  if (failed(axis))
    return failure();
  schema::TensorType type = schema::TensorType::INT64;
  if (ctx.code() == BuiltinOperator::ARG_MAX) {
    if (const auto *o = ctx.options<schema::ArgMaxOptions>())
      type = o->output_type();
  } else if (const auto *o = ctx.options<schema::ArgMinOptions>()) {
    type = o->output_type();
  }
  if (type != schema::TensorType::INT32 && type != schema::TensorType::INT64)
    return ctx.fail(std::string("output_type ") + schema::EnumNameTensorType(type) +
                    " is not supported (supported: INT32, INT64)");
  Value v = ctx.reshape(*x, TosaBuilder::axisView(shape, *axis));
  bool integer = element.isInteger(8);
  if (integer)
    v = ctx.create<tosa::CastOp>(RankedTensorType::get(shapeOf(v), ctx.builder().getI32Type()), v);
  if (ctx.code() == BuiltinOperator::ARG_MIN) {
    Value minusOne = integer ? ctx.constI32({1, 1, 1}, {-1}) : ctx.scalarF32(-1.0f, 3);
    v = ctx.create<tosa::MulOp>(v.getType(), v, minusOne, ctx.builder().getI32IntegerAttr(0));
  }
  Value idx = ctx.argMaxMiddle(v, false);
  shape.erase(shape.begin() + *axis);
  return ctx.setOutput(0, ctx.reshape(idx, shape));
}

/// REVERSE_V2 (inputs: tensor, axis): the input with every dimension
/// listed in the constant 1-D axis tensor reversed (reverse.cc; negative
/// axes count from the back). TOSA: one tosa.reverse per axis.
LogicalResult convertReverseV2(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  auto axes = requiredInts(ctx, 1, "the axis", "a computed axis is");
  if (failed(axes))
    return failure();
  Value v = *x;
  std::vector<bool> seen(rank, false);
  for (int64_t a : *axes) {
    auto axis = normalizedAxis(ctx, a, rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return ctx.fail("axis " + llvm::Twine(*axis) + " is listed twice");
    seen[*axis] = true;
    v = ctx.reverseAxis(v, *axis);
  }
  return ctx.setOutput(0, v);
}

/// CUMSUM (inputs: input, axis; CumsumOptions exclusive, reverse): running
/// sums along the constant axis (tensorflow/lite/kernels/cumsum.cc,
/// reference_ops::CumSum, which accumulates each line in order); exclusive
/// leaves each element out of its own sum (the first is 0), reverse sums
/// from the end. float32 and int32 (TFLite also has int64). TOSA: a
/// Hillis-Steele scan, ceil(log2 K) steps of v + (v shifted by 2^i along
/// the axis, zeros shifted in); int32 sums are exact, float32 ones are
/// added in a tree order instead of left to right (the last bits may
/// differ from TFLite's).
LogicalResult convertCumsum(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Type element = x->getType().cast<RankedTensorType>().getElementType();
  if (!element.isF32() && !element.isInteger(32))
    return ctx.fail("only float32 and int32 inputs are supported");
  llvm::SmallVector<int64_t> shape(shapeOf(*x));
  if (shape.empty())
    return ctx.fail("expects an input of rank 1 or more");
  auto axis = constantAxis(ctx, 1, shape.size());
  if (failed(axis))
    return failure();
  bool exclusive = false, reverse = false;
  if (const auto *o = ctx.options<schema::CumsumOptions>()) {
    exclusive = o->exclusive();
    reverse = o->reverse();
  }
  // v shifted by s along the axis: s zeros in front, the last s dropped.
  auto shifted = [&](Value v, int64_t s) {
    llvm::SmallVector<int64_t> before(shape.size(), 0), after(shape.size(), 0),
        start(shape.size(), 0);
    before[*axis] = s;
    return ctx.slice(ctx.padZeros(v, before, after), start, shape);
  };
  Value v = *x;
  if (reverse)
    v = ctx.reverseAxis(v, *axis);
  if (exclusive && shape[*axis] > 0)
    v = shifted(v, 1);
  for (int64_t s = 1; s < shape[*axis]; s *= 2)
    v = ctx.create<tosa::AddOp>(v.getType(), v, shifted(v, s));
  if (reverse)
    v = ctx.reverseAxis(v, *axis);
  return ctx.setOutput(0, v);
}

/// GATHER_ND (inputs: params, indices [..., m]): output[i...] =
/// params[indices[i..., 0], ..., indices[i..., m-1], ...], shape
/// indices.shape[:-1] + params.shape[m:] (reference/reference_ops.h
/// GatherNd). Constant indices are range-checked (TFLite fails on an index
/// out of range); computed int32 ones are clamped per component so the code
/// never reads outside params. TOSA: TosaBuilder::gatherTuples.
LogicalResult convertGatherNd(OpContext &ctx) {
  auto params = ctx.input(0);
  if (failed(params))
    return failure();
  std::vector<int64_t> in = ctx.inputShape(0), q = ctx.inputShape(1);
  int64_t r = in.size(), qr = q.size();
  if (r < 1 || qr < 1 || q.back() < 1 || q.back() > r)
    return ctx.fail("params " + shapeString(in) + " and indices " + shapeString(q) +
                    " need ranks >= 1 and a last indices dimension in [1, params rank]");
  int64_t m = q.back();
  llvm::ArrayRef<int64_t> dims(in);
  int64_t k = product(dims.take_front(m)), inner = product(dims.drop_front(m));
  int64_t l = product(llvm::ArrayRef<int64_t>(q).drop_back());
  std::vector<int64_t> out(q.begin(), q.end() - 1);
  out.insert(out.end(), dims.begin() + m, dims.end());
  if (product(in) == 0 || product(out) == 0 || product(in) > INT32_MAX)
    return ctx.fail("params " + shapeString(in) + " and output " + shapeString(out) +
                    " must be non-empty with fewer than 2^31 elements");
  std::vector<int32_t> strides(m, 1);
  for (int64_t j = m - 2; j >= 0; --j)
    strides[j] = strides[j + 1] * int32_t(in[j + 1]);
  Value tuples;
  if (ctx.isConstant(1)) {
    auto idx = ctx.constantInts(1);
    if (failed(idx))
      return failure();
    std::vector<int32_t> data;
    for (size_t p = 0; p < idx->size(); ++p) {
      int64_t i = (*idx)[p], size = in[p % m];
      if (i < 0 || i >= size)
        return ctx.fail("index " + llvm::Twine(i) + " is out of range [0, " + llvm::Twine(size) +
                        ") of params dimension " + llvm::Twine(p % m));
      data.push_back(int32_t(i));
    }
    tuples = ctx.constI32({1, l, m}, data);
  } else {
    auto idx = ctx.input(1);
    if (failed(idx))
      return failure();
    auto type = idx->getType().cast<RankedTensorType>();
    if (!type.getElementType().isInteger(32))
      return ctx.fail("computed indices must be int32");
    // Clamp component j to [0, in[j] - 1]: max with 0, min with the sizes.
    std::vector<int32_t> last;
    for (int64_t j = 0; j < m; ++j)
      last.push_back(int32_t(in[j] - 1));
    Value v = ctx.reshape(*idx, {1, l, m});
    auto vType = v.getType();
    v = ctx.create<tosa::MaximumOp>(vType, v, ctx.constI32({1, 1, 1}, {0}));
    v = ctx.create<tosa::MinimumOp>(vType, v, ctx.constI32({1, 1, m}, last));
    tuples = v;
  }
  Value gathered = ctx.gatherTuples(ctx.reshape(*params, {1, k, inner}), tuples, strides);
  return ctx.setOutput(0, ctx.reshape(gathered, out));
}

/// The operands of SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: the input as
/// 4-D [N, H, W, C] (a 3-D [N, H, C] gets W = 1), the constant block_shape
/// [bh, bw] and paddings / crops [[top, bottom], [left, right]] (input 2),
/// as the two spatial dimensions TFLite supports.
struct BlockOperands {
  Value x;
  std::vector<int64_t> shape; // 4-D
  int64_t bh, bw;
  std::vector<int64_t> edges; // top, bottom, left, right
  bool rank3;
};
FailureOr<BlockOperands> blockOperands(OpContext &ctx) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  std::vector<int64_t> s(shapeOf(*x).begin(), shapeOf(*x).end());
  if (s.size() != 3 && s.size() != 4)
    return ctx.fail("expects a 3-D or 4-D input (batch, spatial..., channels), not " +
                    shapeString(s));
  bool rank3 = s.size() == 3;
  int64_t m = rank3 ? 1 : 2;
  if (!ctx.isConstant(1) || !ctx.isConstant(2))
    return ctx.fail("block_shape (input 1) and the paddings / crops (input 2) must be "
                    "constants; computed ones are not supported");
  auto block = ctx.constantInts(1);
  auto edges = ctx.constantInts(2);
  if (failed(block) || failed(edges))
    return failure();
  if (static_cast<int64_t>(block->size()) != m || static_cast<int64_t>(edges->size()) != 2 * m)
    return ctx.fail("block_shape must hold " + llvm::Twine(m) + " value(s) and paddings / crops " +
                    llvm::Twine(m) + "x2 for an input of rank " + llvm::Twine(s.size()));
  if (rank3) {
    s.insert(s.begin() + 2, 1);
    block->push_back(1);
    edges->insert(edges->end(), {0, 0});
  }
  if ((*block)[0] < 1 || (*block)[1] < 1 || llvm::any_of(*edges, [](int64_t e) { return e < 0; }))
    return ctx.fail("block_shape " + shapeString(*block) +
                    " must be positive and paddings / "
                    "crops " +
                    shapeString(*edges) + " non-negative");
  return BlockOperands{*x, s, (*block)[0], (*block)[1], *edges, rank3};
}

/// The result `v` (4-D) bound to output 0, W dropped again for a 3-D input.
LogicalResult bindBlockResult(OpContext &ctx, const BlockOperands &op, Value v) {
  auto s = shapeOf(v);
  if (op.rank3)
    return ctx.setOutput(0, ctx.reshape(v, {s[0], s[1], s[3]}));
  return ctx.setOutput(0, v);
}

/// SPACE_TO_BATCH_ND: pad H and W with zeros (int8/uint8: with the output's
/// zero point, as space_to_batch_nd.cc does), then move each (i, j) position of a
/// bh x bw block to batch (i * bw + j) * N + n (space_to_batch_nd.cc):
/// [N, H, W, C] -> [bh*bw*N, H'/bh, W'/bw, C]. TOSA: tosa.pad, reshape to
/// [N, H'/bh, bh, W'/bw, bw, C], transpose to [bh, bw, N, H'/bh, W'/bw, C],
/// reshape.
LogicalResult convertSpaceToBatchNd(OpContext &ctx) {
  auto op = blockOperands(ctx);
  if (failed(op))
    return failure();
  auto s = op->shape;
  const auto &e = op->edges;
  int64_t h = s[1] + e[0] + e[1], w = s[2] + e[2] + e[3];
  if (h % op->bh != 0 || w % op->bw != 0)
    return ctx.fail("the padded spatial size [" + llvm::Twine(h) + ", " + llvm::Twine(w) +
                    "] is not divisible by block_shape [" + llvm::Twine(op->bh) + ", " +
                    llvm::Twine(op->bw) + "]");
  Value v = ctx.reshape(op->x, s);
  if (const TensorQuant *q = ctx.outputQuant(0)) // int8: the output's zero point
    v = quant::padSpatial(ctx, v, {e[0], e[1], e[2], e[3]}, q->zeroPoint());
  else
    v = ctx.padZeros(v, {0, e[0], e[2], 0}, {0, e[1], e[3], 0});
  int64_t oh = h / op->bh, ow = w / op->bw;
  v = ctx.transpose(ctx.reshape(v, {s[0], oh, op->bh, ow, op->bw, s[3]}), {2, 4, 0, 1, 3, 5});
  return bindBlockResult(ctx, *op, ctx.reshape(v, {op->bh * op->bw * s[0], oh, ow, s[3]}));
}

/// BATCH_TO_SPACE_ND: the inverse, then crops (batch_to_space_nd.cc):
/// [B, H, W, C] -> [B/(bh*bw), H*bh - crops, W*bw - crops, C]. TOSA: reshape
/// to [bh, bw, N, H, W, C], transpose to [N, H, bh, W, bw, C], reshape,
/// tosa.slice.
LogicalResult convertBatchToSpaceNd(OpContext &ctx) {
  auto op = blockOperands(ctx);
  if (failed(op))
    return failure();
  auto s = op->shape;
  const auto &e = op->edges;
  int64_t blocks = op->bh * op->bw, n = s[0] / blocks;
  int64_t h = s[1] * op->bh, w = s[2] * op->bw;
  if (s[0] % blocks != 0 || e[0] + e[1] >= h || e[2] + e[3] >= w)
    return ctx.fail("the batch " + llvm::Twine(s[0]) + " must be divisible by " +
                    llvm::Twine(blocks) + " (block_shape [" + llvm::Twine(op->bh) + ", " +
                    llvm::Twine(op->bw) + "]) and the crops " + shapeString(e) +
                    " must leave a non-empty output");
  Value v = ctx.reshape(op->x, {op->bh, op->bw, n, s[1], s[2], s[3]});
  v = ctx.reshape(ctx.transpose(v, {2, 3, 0, 4, 1, 5}), {n, h, w, s[3]});
  v = ctx.slice(v, {0, e[0], e[2], 0}, {n, h - e[0] - e[1], w - e[2] - e[3], s[3]});
  return bindBlockResult(ctx, *op, v);
}

/// DYNAMIC_UPDATE_SLICE with start indices computed at run time (operand
/// shape `os`, update shape `us`, both static): start_d clamped to [0, os_d
/// - us_d]; r_d = coordinate_d - start_d; an element lies in the update when
/// every r_d is in [0, us_d) and takes the update element sum_d r_d *
/// stride_d (r_d clamped so the gather stays in range elsewhere).
LogicalResult dynamicUpdateSlice(OpContext &ctx, Value operand, Value update,
                                 llvm::ArrayRef<int64_t> os, llvm::ArrayRef<int64_t> us) {
  auto start = ctx.input(2);
  if (failed(start))
    return failure();
  Type startElement = start->getType().cast<RankedTensorType>().getElementType();
  if (!startElement.isInteger(32) && !startElement.isInteger(64))
    return ctx.fail("start_indices (input 2) must be INT32 or INT64, not " +
                    typeText(startElement));
  int64_t rank = os.size();
  Value starts = *start;
  if (startElement.isInteger(64))
    starts = ctx.create<tosa::CastOp>(RankedTensorType::get({rank}, ctx.builder().getI32Type()),
                                      ctx.clamp(starts, -2147483648.0f, 2147483647.0f));
  llvm::SmallVector<int64_t> ones(rank, 1);
  Value inside, flat;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    Value s = ctx.reshape(ctx.slice(starts, {d}, {1}), ones);
    s = ctx.clamp(s, 0.0f, static_cast<float>(os[d] - us[d]));
    Value r = tosa_math::binary<tosa::SubOp>(ctx, ctx.iotaI32(os, d), s);
    Value low = tosa_math::compare<tosa::GreaterEqualOp>(ctx, r, tosa_math::scalarLike(ctx, 0, r));
    Value high = tosa_math::compare<tosa::GreaterOp>(ctx, tosa_math::scalarLike(ctx, us[d], r), r);
    Value here = tosa_math::binary<tosa::LogicalAndOp>(ctx, low, high);
    inside = inside ? tosa_math::binary<tosa::LogicalAndOp>(ctx, inside, here) : here;
    Value term = tosa_math::mul(ctx, ctx.clamp(r, 0.0f, static_cast<float>(us[d] - 1)),
                                tosa_math::scalarLike(ctx, stride, r));
    flat = flat ? tosa_math::binary<tosa::AddOp>(ctx, flat, term) : term;
    stride *= us[d];
  }
  int64_t total = product(os);
  Type element = operand.getType().cast<RankedTensorType>().getElementType();
  Value gathered = ctx.create<tosa::GatherOp>(RankedTensorType::get({1, total, 1}, element),
                                              ctx.reshape(update, {1, stride, 1}),
                                              ctx.reshape(flat, {1, total}));
  return ctx.setOutput(0, tosa_math::select(ctx, inside, ctx.reshape(gathered, os), operand));
}

/// DYNAMIC_UPDATE_SLICE (inputs: operand, update of the operand's rank and
/// at most its size per dimension, start_indices [rank] INT32/INT64):
/// the operand with the update written from start, each start index first
/// clamped to [0, operand_d - update_d] (dynamic_update_slice.cc,
/// TFLite Micro dynamic_update_slice.cc). Float32, int32 and int8 (stored
/// bytes, as TFLite copies them). Start indices known at import give a
/// static insert: tosa.select of a constant mask between the zero-padded
/// update and the operand. Computed ones keep the schedule static too:
/// each operand element's coordinates minus the clamped starts say whether
/// it lies in the update and which update element it takes (one
/// tosa.gather of the flattened update), then the same select.
LogicalResult convertDynamicUpdateSlice(OpContext &ctx) {
  auto operand = ctx.input(0), update = ctx.input(1);
  if (failed(operand) || failed(update))
    return failure();
  auto type = operand->getType().cast<RankedTensorType>();
  Type element = type.getElementType();
  if (!element.isF32() && !element.isInteger(32) && !element.isInteger(8))
    return ctx.fail("operand (input 0) has element type " + typeText(element) +
                    "; supported: float32, int32, int8");
  if (update->getType().cast<RankedTensorType>().getElementType() != element)
    return ctx.fail("update (input 1) is " + typeText(update->getType().cast<RankedTensorType>()) +
                    ", operand " + typeText(type) + "; they must have one element type");
  llvm::SmallVector<int64_t> os(type.getShape()), us(shapeOf(*update));
  int64_t rank = os.size();
  bool fits = static_cast<int64_t>(us.size()) == rank;
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = us[d] >= 0 && us[d] <= os[d];
  if (!fits)
    return ctx.fail("update (input 1) " + shapeString(us) + " must have the rank of operand " +
                    shapeString(os) + " and fit in it");
  if (ctx.inputShape(2) != std::vector<int64_t>{rank})
    return ctx.fail("start_indices (input 2) must have shape [" + llvm::Twine(rank) +
                    "] (one index per operand dimension), not " + shapeString(ctx.inputShape(2)));
  if (product(us) == 0)
    return ctx.setOutput(0, *operand);
  if (auto start = ctx.knownInts(2)) {
    llvm::SmallVector<int64_t> before(rank), after(rank);
    llvm::SmallVector<bool> mask(product(os), false);
    for (int64_t d = 0; d < rank; ++d) {
      before[d] = std::clamp<int64_t>((*start)[d], 0, os[d] - us[d]);
      after[d] = os[d] - us[d] - before[d];
    }
    if (us == os)
      return ctx.setOutput(0, *update);
    // The mask: 1 where every coordinate lies in [before_d, before_d + u_d).
    llvm::SmallVector<int64_t> coord(rank, 0);
    for (int64_t i = 0; i < static_cast<int64_t>(mask.size()); ++i) {
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d)
        inside = inside && coord[d] >= before[d] && coord[d] < before[d] + us[d];
      mask[i] = inside;
      for (int64_t d = rank - 1; d >= 0 && ++coord[d] == os[d]; --d)
        coord[d] = 0;
    }
    auto maskType = RankedTensorType::get(os, ctx.builder().getI1Type());
    Value maskValue = ctx.create<tosa::ConstOp>(
        maskType, DenseElementsAttr::get(maskType, llvm::ArrayRef<bool>(mask)));
    Value padded = ctx.padZeros(*update, before, after);
    return ctx.setOutput(0, tosa_math::select(ctx, maskValue, padded, *operand));
  }
  return dynamicUpdateSlice(ctx, *operand, *update, os, us);
}

} // namespace

void registerMovementOps(ConverterTable &table) {
  table[BuiltinOperator::PACK] = convertPack;
  table[BuiltinOperator::UNPACK] = convertUnpack;
  table[BuiltinOperator::SPLIT] = convertSplit;
  table[BuiltinOperator::SPLIT_V] = convertSplitV;
  table[BuiltinOperator::SHAPE] = convertShape;
  table[BuiltinOperator::BROADCAST_ARGS] = convertBroadcastArgs;
  table[BuiltinOperator::BROADCAST_TO] = convertBroadcastTo;
  table[BuiltinOperator::FILL] = convertFill;
  table[BuiltinOperator::DEPTH_TO_SPACE] = convertDepthToSpace;
  table[BuiltinOperator::SPACE_TO_DEPTH] = convertDepthToSpace;
  table[BuiltinOperator::ARG_MAX] = convertArgMax;
  table[BuiltinOperator::ARG_MIN] = convertArgMax;
  table[BuiltinOperator::REVERSE_V2] = convertReverseV2;
  table[BuiltinOperator::GATHER_ND] = convertGatherNd;
  table[BuiltinOperator::CUMSUM] = convertCumsum;
  table[BuiltinOperator::SPACE_TO_BATCH_ND] = convertSpaceToBatchNd;
  table[BuiltinOperator::BATCH_TO_SPACE_ND] = convertBatchToSpaceNd;
  table[BuiltinOperator::DYNAMIC_UPDATE_SLICE] = convertDynamicUpdateSlice;
}

} // namespace kiln::tfl
