//===- TFLiteQuantizedShapeOps.cpp - int8 data movement ---------------------===//
//
// PAD, PADV2, CONCATENATION and PACK with TFLite's quantization rules
// (inputs rescaled to the output's scale, or required equal to it), RESIZE_BILINEAR in integer
// arithmetic. Semantics: tensorflow/lite/kernels (reference integer kernels); see
// TFLiteQuantizedOps.h for the shared builders.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"
#include "TFLiteWindow.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {
using namespace quant;

// --- Data movement with quantization rules -------------------------------------

/// PAD / PADV2 on int8: padding with the output's zero point (PAD) or the
/// constant int8 pad value (PADV2).
LogicalResult convertPad(OpContext &ctx) {
  auto out = outQuant(ctx);
  auto input = ctx.input(0);
  auto paddings = ctx.constantInts(1);
  if (failed(out) || failed(input) || failed(paddings))
    return failure();
  int64_t rank = shapeOf(*input).size();
  if (static_cast<int64_t>(paddings->size()) != 2 * rank)
    return ctx.fail("paddings must be a [" + llvm::Twine(rank) + ", 2] tensor");
  std::vector<int32_t> pads(paddings->begin(), paddings->end());
  if (llvm::any_of(pads, [](int32_t p) { return p < 0; }))
    return ctx.fail("negative paddings are not supported");
  int8_t padValue = static_cast<int8_t>((*out)->zeroPoint());
  if (ctx.code() == BuiltinOperator::PADV2 && ctx.hasInput(2)) {
    auto value = ctx.input(2);
    if (failed(value))
      return failure();
    DenseElementsAttr attr;
    if (!matchPattern(*value, m_Constant(&attr)) || attr.getNumElements() != 1 ||
        !attr.getElementType().isInteger(8))
      return ctx.fail("PADV2 needs a constant int8 scalar pad value");
    padValue = static_cast<int8_t>(attr.getValues<APInt>()[0].getSExtValue());
  }
  Value padConst = constI8(ctx, {}, {padValue});
  return ctx.setOutput(0,
                       ctx.create<tosa::PadOp>(ctx.outputType(0), *input,
                                               ctx.constI32({rank, 2}, pads), padConst, nullptr));
}

/// CONCATENATION on int8: inputs with the output's scale and zero point are
/// copied (TFLite requires this for int8); uint8 inputs with another scale
/// are requantized as TFLite's ConcatenationWithScaling does (x * scale +
/// bias in float, scale = s_i * (1 / s_out), bias = -z_i * scale, rounded
/// half away from zero, plus z_out), through an exact per-input table.
LogicalResult convertConcatenation(OpContext &ctx) {
  const auto *opts = ctx.options<schema::ConcatenationOptions>();
  auto out = outQuant(ctx);
  if (!opts || failed(out))
    return failure();
  if (opts->fused_activation_function() != schema::ActivationFunctionType::NONE)
    return ctx.fail("a fused activation on int8 CONCATENATION is not supported");
  const TensorQuant &o = **out;
  llvm::SmallVector<Value> inputs;
  for (int k = 0; k < ctx.numInputs(); ++k) {
    auto q = inQuant(ctx, k);
    auto v = ctx.input(k);
    if (failed(q) || failed(v))
      return failure();
    const TensorQuant &i = **q;
    if (i.scales == o.scales && i.zeroPoints == o.zeroPoints) {
      inputs.push_back(*v);
      continue;
    }
    if (!i.fromUint8 || !o.fromUint8)
      return ctx.fail("input " + llvm::Twine(k) + " (" + describeQuant(i) +
                      ") has another quantization than the output (" + describeQuant(o) +
                      "); TFLite's int8 kernel requires "
                      "them equal (uint8 inputs are requantized)");
    const float scale = i.scale() * (1.0f / o.scale());
    const float bias = -static_cast<float>(i.zeroPoint() + 128) * scale;
    inputs.push_back(lookupTable(ctx, *v, [&](int32_t q8) {
      float value = static_cast<float>(q8 + 128) * scale + bias;
      int32_t u = saturatingCast(std::round(value)) + o.zeroPoint() + 128;
      return std::clamp(u, 0, 255) - 128;
    }));
  }
  int64_t rank = ctx.outputShape(0).size();
  int64_t axis = opts->axis() < 0 ? opts->axis() + rank : opts->axis();
  if (axis < 0 || axis >= rank)
    return ctx.fail("axis " + llvm::Twine(opts->axis()) + " is out of range for rank " +
                    llvm::Twine(rank));
  return ctx.setOutput(0, ctx.create<tosa::ConcatOp>(ctx.outputType(0), inputs,
                                                     ctx.builder().getI64IntegerAttr(axis)));
}

/// PACK on int8/uint8: the float converter (it copies bytes, as pack.cc
/// does) once every input has the output's scale and zero point, which
/// pack.cc's Prepare requires.
LogicalResult convertPack(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out))
    return failure();
  const TensorQuant &o = **out;
  for (int k = 0; k < ctx.numInputs(); ++k) {
    auto q = inQuant(ctx, k);
    if (failed(q))
      return failure();
    if ((*q)->scales != o.scales || (*q)->zeroPoints != o.zeroPoints)
      return ctx.fail("input " + llvm::Twine(k) + " (" + describeQuant(**q) +
                      ") has another quantization than the output (" + describeQuant(o) +
                      "); TFLite's int8 PACK requires them equal (pack.cc Prepare)");
  }
  return converters().at(BuiltinOperator::PACK)(ctx);
}

// --- RESIZE_BILINEAR ---------------------------------------------------------

/// One axis of TFLite's ResizeBilinearInteger: for each output index, the
/// source coordinate in 1/1024 units and the two source rows it blends.
struct BilinearAxis {
  std::vector<int32_t> lower, upper, weightLower, weightUpper;
};

BilinearAxis bilinearAxis(int64_t in, int64_t out, bool alignCorners, bool halfPixel) {
  int32_t scale10 = static_cast<int32_t>(((1 << 10) * in + out / 2) / out);
  if (alignCorners && out > 1)
    scale10 = static_cast<int32_t>(((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1));
  BilinearAxis axis;
  for (int64_t v = 0; v < out; ++v) {
    int32_t scaled = halfPixel ? static_cast<int32_t>(v) * scale10 + scale10 / 2 - (1 << 9)
                               : static_cast<int32_t>(v) * scale10;
    int32_t lower = std::max(scaled / (1 << 10), 0);
    int32_t upper = std::min((scaled + (1 << 10) - 1) / (1 << 10), static_cast<int32_t>(in - 1));
    int32_t fraction = scaled - (1 << 10) * lower;
    axis.lower.push_back(lower);
    axis.upper.push_back(upper);
    axis.weightLower.push_back((1 << 10) - fraction);
    axis.weightUpper.push_back(fraction);
  }
  return axis;
}

/// RESIZE_BILINEAR on int8 (TFLite's ResizeBilinearInteger, which 2.9 runs
/// for int8): source coordinates in 10-bit fixed point, the four taps
/// weighted in 2^20 units and the sum divided by 2^20 rounding half away
/// from zero, on the raw int8 values. TOSA: rows then columns gathered
/// (tosa.gather), the weights as per-row and per-column i32 constants.
LogicalResult convertResizeBilinear(OpContext &ctx) {
  bool alignCorners = false, halfPixel = false;
  if (const auto *o = ctx.options<schema::ResizeBilinearOptions>()) {
    alignCorners = o->align_corners();
    halfPixel = o->half_pixel_centers();
  }
  if (alignCorners && halfPixel)
    return ctx.fail("align_corners and half_pixel_centers cannot both be true "
                    "(TFLite rejects this combination)");
  auto in = inQuant(ctx, 0);
  auto input = ctx.input(0);
  auto size = ctx.constantInts(1);
  if (failed(in) || failed(input) || failed(size))
    return failure();
  if ((*in)->fromUint8)
    return ctx.fail("uint8 RESIZE_BILINEAR is not supported (int8 is)");
  auto s = ctx.inputShape(0);
  if (s.size() != 4 || size->size() != 2 || (*size)[0] <= 0 || (*size)[1] <= 0)
    return ctx.fail("expects a 4-D NHWC input and a constant [new_height, new_width]");
  int64_t n = s[0], h = s[1], w = s[2], c = s[3], oh = (*size)[0], ow = (*size)[1];
  BilinearAxis ys = bilinearAxis(h, oh, alignCorners, halfPixel);
  BilinearAxis xs = bilinearAxis(w, ow, alignCorners, halfPixel);
  Type i8 = i8Type(ctx), i32 = i32Type(ctx);
  auto repeat = [](const std::vector<int32_t> &v, int64_t times) {
    std::vector<int32_t> r;
    for (int64_t t = 0; t < times; ++t)
      r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  // Rows: [N, H, W*C] gathered at [N, OH] -> [N, OH, W*C].
  Value rowsView = ctx.reshape(*input, {n, h, w * c});
  auto rows = [&](const std::vector<int32_t> &index) {
    Value g = ctx.create<tosa::GatherOp>(tensorOf({n, oh, w * c}, i8), rowsView,
                                         ctx.constI32({n, oh}, repeat(index, n)));
    return ctx.reshape(g, {n * oh, w, c});
  };
  // Columns: [N*OH, W, C] gathered at [N*OH, OW] -> [N, OH, OW, C] as i32.
  auto columns = [&](Value v, const std::vector<int32_t> &index) {
    Value g = ctx.create<tosa::GatherOp>(tensorOf({n * oh, ow, c}, i8), v,
                                         ctx.constI32({n * oh, ow}, repeat(index, n * oh)));
    return ctx.create<tosa::CastOp>(tensorOf({n, oh, ow, c}, i32), ctx.reshape(g, {n, oh, ow, c}));
  };
  auto outType = tensorOf({n, oh, ow, c}, i32);
  auto mul = [&](Value a, Value b) {
    return ctx.create<tosa::MulOp>(outType, a, b, ctx.builder().getI32IntegerAttr(0));
  };
  auto add = [&](Value a, Value b) { return ctx.create<tosa::AddOp>(outType, a, b); };
  Value wyLo = ctx.constI32({1, oh, 1, 1}, ys.weightLower);
  Value wyHi = ctx.constI32({1, oh, 1, 1}, ys.weightUpper);
  Value wxLo = ctx.constI32({1, 1, ow, 1}, xs.weightLower);
  Value wxHi = ctx.constI32({1, 1, ow, 1}, xs.weightUpper);
  Value top = rows(ys.lower), bottom = rows(ys.upper);
  // sum = (v00 wy0 + v10 wy1) wx0 + (v01 wy0 + v11 wy1) wx1, in 2^20 units.
  Value left = add(mul(columns(top, xs.lower), wyLo), mul(columns(bottom, xs.lower), wyHi));
  Value right = add(mul(columns(top, xs.upper), wyLo), mul(columns(bottom, xs.upper), wyHi));
  Value sum = add(mul(left, wxLo), mul(right, wxHi));
  llvm::SmallVector<int64_t> ones{1, 1, 1, 1};
  Value positive = ctx.create<tosa::GreaterOp>(tensorOf({n, oh, ow, c}, ctx.builder().getI1Type()),
                                               sum, ctx.constI32(ones, {0}));
  Value nudge = ctx.create<tosa::SelectOp>(outType, positive, ctx.constI32(ones, {1 << 19}),
                                           ctx.constI32(ones, {-(1 << 19)}));
  Value result = ctx.create<tosa::DivOp>(outType, add(sum, nudge), ctx.constI32(ones, {1 << 20}));
  return ctx.setOutput(
      0, ctx.create<tosa::CastOp>(tensorOf({n, oh, ow, c}, i8), clampInt(ctx, result, -128, 127)));
}

} // namespace

void registerQuantizedShapeOps(ConverterTable &table) {
  table[BuiltinOperator::PAD] = convertPad;
  table[BuiltinOperator::PADV2] = convertPad;
  table[BuiltinOperator::CONCATENATION] = convertConcatenation;
  table[BuiltinOperator::PACK] = convertPack;
  table[BuiltinOperator::RESIZE_BILINEAR] = convertResizeBilinear;
}

} // namespace kiln::tfl
