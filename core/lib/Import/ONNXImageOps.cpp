//===- ONNXImageOps.cpp - ONNX CenterCropPad, Col2Im ----------------------===//
//
// Image-shaped data movement of opset 18 -> TOSA, static shapes:
//   - CenterCropPad: each named axis cropped (tosa.slice) or zero-padded
//     (tosa.pad) to the size the constant `shape` input gives, centered;
//   - Col2Im: the column blocks of an im2col matrix summed back into the
//     image (N-D): the columns spread out by the strides (a reshape, a pad
//     and a reshape per axis), then, per block position, placed at its
//     dilated offset by tosa.pad and added up; the image's pads cut off.
// Semantics follow onnx docs/Operators.md (CenterCropPad-18, Col2Im-18) and
// the reference implementation of onnx/reference/ops.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

using shapes::shapeOf;

/// CenterCropPad (18): input_data [d0, ..., dr-1] (float32, int32, int64
/// or bool) and `shape` (a constant of one size per axis in `axes`, all
/// axes when the attribute is absent) -> the input with each such axis of
/// size s: a larger axis keeps the s elements from floor((d - s) / 2), a
/// smaller one is zero-padded by floor((s - d) / 2) before and the rest
/// after (docs/Operators.md, CenterCropPad).
LogicalResult convertCenterCropPad(NodeContext &ctx) {
  if (ctx.numInputs() != 2 || !ctx.hasInput(0) || !ctx.hasInput(1))
    return ctx.fail("takes 2 inputs (input_data, shape); it has " + llvm::Twine(ctx.numInputs()));
  int32_t type = ctx.inputType(0);
  if (!isFloatType(type) && type != kInt32 && type != kInt64 && type != kBool)
    return ctx.fail("input_data has element type " + dataTypeName(type) +
                    "; Kiln's CenterCropPad takes float32, int32, int64 and bool");
  FailureOr<std::vector<int64_t>> shape = ctx.constantInts(1);
  if (failed(shape))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  const int64_t rank = int64_t(xs.size());
  std::vector<int64_t> axes;
  if (ctx.hasAttr("axes")) {
    for (int64_t axis : ctx.attrInts("axes")) {
      int64_t a = normalizeAxis(axis, rank);
      if (a < 0)
        return ctx.fail("axis " + llvm::Twine(axis) + " is out of range for input_data of rank " +
                        llvm::Twine(rank));
      if (llvm::is_contained(axes, a))
        return ctx.fail("attribute axes " + shapeString(ctx.attrInts("axes")) +
                        " must be distinct axes");
      axes.push_back(a);
    }
  } else {
    for (int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  }
  if (shape->size() != axes.size())
    return ctx.fail("shape holds " + llvm::Twine(shape->size()) +
                    " sizes; it needs one per axis (" + llvm::Twine(axes.size()) + ")");
  std::vector<int64_t> start(size_t(rank), 0), kept = xs, before(size_t(rank), 0),
                                               after(size_t(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i], s = (*shape)[i], d = xs[size_t(a)];
    if (s < 1)
      return ctx.fail("shape " + shapeString(*shape) + " holds a size below 1");
    if (s < d) {
      start[size_t(a)] = (d - s) / 2;
      kept[size_t(a)] = s;
    } else {
      before[size_t(a)] = (s - d) / 2;
      after[size_t(a)] = s - d - (s - d) / 2;
    }
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value y = ctx.slice(*x, start, kept);
  return ctx.setOutput(0, ctx.padZeros(y, before, after));
}

/// Col2Im's shapes and attributes, checked: per spatial axis the image
/// size, block size, dilation, stride, pads and block count.
struct Col2ImShape {
  int64_t n = 0, c = 0, blocks = 1, columns = 0;
  std::vector<int64_t> image, block, dilations, strides, pads, counts;
};

/// Reads and checks Col2Im's inputs and attributes (see convertCol2Im).
LogicalResult readCol2Im(NodeContext &ctx, Col2ImShape &s) {
  if (ctx.numInputs() != 3 || !ctx.hasInput(0) || !ctx.hasInput(1) || !ctx.hasInput(2))
    return ctx.fail("takes 3 inputs (input, image_shape, block_shape); it has " +
                    llvm::Twine(ctx.numInputs()));
  if (!isFloatType(ctx.inputType(0)))
    return ctx.fail("input has element type " + dataTypeName(ctx.inputType(0)) +
                    "; Kiln's Col2Im takes float32");
  FailureOr<std::vector<int64_t>> image = ctx.constantInts(1), block = ctx.constantInts(2);
  if (failed(image) || failed(block))
    return failure();
  s.image = *image, s.block = *block;
  const size_t d = s.image.size();
  if (d < 1 || s.block.size() != d)
    return ctx.fail("image_shape " + shapeString(s.image) + " and block_shape " +
                    shapeString(s.block) + " must hold one size per spatial axis, as many each");
  for (size_t i = 0; i < d; ++i)
    if (s.image[i] < 1 || s.block[i] < 1)
      return ctx.fail("image_shape " + shapeString(s.image) + " and block_shape " +
                      shapeString(s.block) + " must be positive");
  auto ints = [&](const char *name, size_t count, int64_t def, int64_t min,
                  std::vector<int64_t> &dst) -> LogicalResult {
    dst = ctx.attrInts(name, std::vector<int64_t>(count, def));
    if (dst.size() != count)
      return ctx.fail(llvm::Twine("attribute ") + name + " has " + llvm::Twine(dst.size()) +
                      " values; the " + llvm::Twine(d) + "-D image needs " + llvm::Twine(count));
    for (int64_t v : dst)
      if (v < min)
        return ctx.fail(llvm::Twine("attribute ") + name + " holds " + llvm::Twine(v) +
                        "; values below " + llvm::Twine(min) + " are invalid");
    return success();
  };
  if (failed(ints("dilations", d, 1, 1, s.dilations)) ||
      failed(ints("strides", d, 1, 1, s.strides)) || failed(ints("pads", 2 * d, 0, 0, s.pads)))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  for (size_t i = 0; i < d; ++i) {
    int64_t span = s.image[i] + s.pads[i] + s.pads[d + i] - (s.block[i] - 1) * s.dilations[i] - 1;
    if (span < 0)
      return ctx.fail("the padded image is smaller than the dilated block along spatial axis " +
                      llvm::Twine(i) + ": there are no blocks");
    s.counts.push_back(span / s.strides[i] + 1);
    s.blocks *= s.block[i];
  }
  int64_t want = product(s.counts);
  if (xs.size() != 3 || xs[1] % s.blocks != 0 || xs[2] != want)
    return ctx.fail("input has shape " + shapeString(xs) + "; with block_shape " +
                    shapeString(s.block) + " it must be [N, C * " + llvm::Twine(s.blocks) + ", " +
                    llvm::Twine(want) + "]");
  s.n = xs[0], s.c = xs[1] / s.blocks, s.columns = xs[2];
  return success();
}

/// Col2Im (18): input [N, C * prod(block_shape), L] -> [N, C, *image_shape]
/// (image_shape and block_shape constants, D spatial axes; dilations,
/// pads [begins, ends] and strides per axis): column l of block position
/// k (row-major over block_shape) adds to the padded image at l's block
/// origin (its multi-index over the L = prod(block counts) blocks times
/// the strides) plus k times the dilations; the pads are then cut off
/// (docs/Operators.md, Col2Im; the inverse of im2col, torch's fold).
LogicalResult convertCol2Im(NodeContext &ctx) {
  Col2ImShape s;
  if (failed(readCol2Im(ctx, s)))
    return failure();
  FailureOr<Value> input = ctx.input(0);
  if (failed(input))
    return failure();
  const int64_t d = int64_t(s.image.size()), nc = s.n * s.c;
  // [N * C, K, L1, ..., LD], each Li spread to Li * stride_i (zeros between).
  std::vector<int64_t> shape = {nc, s.blocks};
  shape.insert(shape.end(), s.counts.begin(), s.counts.end());
  Value x = ctx.reshape(*input, shape);
  for (int64_t i = 0; i < d; ++i) {
    int64_t stride = s.strides[size_t(i)];
    if (stride == 1)
      continue;
    size_t axis = size_t(2 + i);
    std::vector<int64_t> split = shape;
    split.insert(split.begin() + long(axis) + 1, 1);
    std::vector<int64_t> before(split.size(), 0), after(split.size(), 0);
    after[axis + 1] = stride - 1;
    x = ctx.padZeros(ctx.reshape(x, split), before, after);
    shape[axis] *= stride;
    x = ctx.reshape(x, shape);
  }
  // Per block position: its columns placed at the dilated offset.
  std::vector<int64_t> padded;
  for (int64_t i = 0; i < d; ++i)
    padded.push_back(s.image[size_t(i)] + s.pads[size_t(i)] + s.pads[size_t(d + i)]);
  std::vector<int64_t> full = {nc};
  full.insert(full.end(), padded.begin(), padded.end());
  Value sum;
  for (int64_t k = 0; k < s.blocks; ++k) {
    std::vector<int64_t> start(shape.size(), 0), size = shape;
    start[1] = k;
    size[1] = 1;
    std::vector<int64_t> before(size_t(d + 1), 0), after(size_t(d + 1), 0);
    int64_t rest = k;
    for (int64_t i = d - 1; i >= 0; --i) {
      int64_t offset = (rest % s.block[size_t(i)]) * s.dilations[size_t(i)];
      rest /= s.block[size_t(i)];
      size_t axis = size_t(2 + i);
      size[axis] = std::min(shape[axis], padded[size_t(i)] - offset);
      before[size_t(1 + i)] = offset;
      after[size_t(1 + i)] = padded[size_t(i)] - offset - size[axis];
    }
    std::vector<int64_t> plane = size;
    plane.erase(plane.begin() + 1);
    Value v = ctx.reshape(ctx.slice(x, start, size), plane);
    v = ctx.padZeros(v, before, after);
    sum = sum ? ctx.create<tosa::AddOp>(ctx.f32Type(full), sum, v) : v;
  }
  std::vector<int64_t> start(size_t(d + 1), 0), size = {nc};
  for (int64_t i = 0; i < d; ++i) {
    start[size_t(1 + i)] = s.pads[size_t(i)];
    size.push_back(s.image[size_t(i)]);
  }
  std::vector<int64_t> out = {s.n, s.c};
  out.insert(out.end(), s.image.begin(), s.image.end());
  return ctx.setOutput(0, ctx.reshape(ctx.slice(sum, start, size), out));
}

} // namespace

void registerImageOps(ConverterTable &table) {
  table["CenterCropPad"] = convertCenterCropPad;
  table["Col2Im"] = convertCol2Im;
}

} // namespace kiln::onnx
