//===- TFLiteQuantizedConvOps.cpp - int8 products and pools -----------------===//
//
// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, BATCH_MATMUL and
// TRANSPOSE_CONV on int8:
// the TOSA op accumulates in i32 (the input zero point folded into the
// bias where the weights allow), one tosa.rescale applies TFLite's
// multiplier per channel, the fused activation clamps. MAX_POOL_2D and
// AVERAGE_POOL_2D with TFLite's integer rounding.
// Semantics: tensorflow/lite/kernels (reference integer kernels); see
// TFLiteQuantizedOps.h for the shared builders.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"
#include "TFLiteWindow.h"
#include "WindowShape.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {
using namespace quant;

// --- Products ---------------------------------------------------------------

/// A CONV_2D or DEPTHWISE_CONV_2D (`ConvOp`) on int8: the input zero point
/// folded into the bias where the weights allow (then the input is padded
/// with it explicitly), the TOSA convolution accumulating in i32 over
/// `weight` (the filter in the op's layout; `filter` is the file's
/// constant, `channels` output channels, channel-first or -last), then the
/// requantization and fused activation. uint8 products' multipliers use the
/// float product of the scales, as TFLite's uint8 path does.
template <typename ConvOp>
LogicalResult convolve(OpContext &ctx, const ProductQuant &q, Value input, Value filter,
                       Value weight, Value bias, const Window &window, int64_t channels,
                       bool channelFirst, schema::ActivationFunctionType act) {
  auto folded = foldInputZeroPoint(ctx, filter, bias, q, channels, channelFirst);
  if (failed(folded))
    return failure();
  auto pad = window.pad;
  if (folded->folded) {
    input = padSpatial(ctx, input, window.pad.asArrayRef(), q.in->zeroPoint());
    pad = ctx.builder().getDenseI64ArrayAttr({0, 0, 0, 0});
  }
  Value acc =
      ctx.create<ConvOp>(tensorOf(ctx.outputShape(0), i32Type(ctx)), input, weight, folded->bias,
                         pad, window.stride, window.dilation, folded->quantization);
  return finishProduct(ctx, acc, productScales(*q.in, *q.weight, *q.out, q.in->fromUint8), *q.out,
                       act);
}

LogicalResult convertConv2D(OpContext &ctx) {
  const auto *opts = ctx.options<schema::Conv2DOptions>();
  if (!opts)
    return ctx.fail("missing Conv2DOptions");
  auto q = productQuant(ctx, 0);
  auto input = ctx.input(0), filter = ctx.input(1);
  if (failed(q) || failed(input) || failed(filter))
    return failure();
  auto inShape = ctx.inputShape(0), fShape = ctx.inputShape(1);
  if (inShape.size() != 4 || fShape.size() != 4 || fShape[3] != inShape[3])
    return ctx.fail("expects a 4-D NHWC input and a 4-D OHWI filter of the "
                    "same input channels (grouped convolution is not supported)");
  auto bias = biasOrZeros(ctx, 2, fShape[0]);
  auto window = windowOf(ctx, *opts, *input, fShape[1], fShape[2]);
  if (failed(bias) || failed(window))
    return failure();
  return convolve<tosa::Conv2DOp>(ctx, *q, *input, *filter, *filter, *bias, *window, fShape[0],
                                  true, opts->fused_activation_function());
}

LogicalResult convertDepthwiseConv2D(OpContext &ctx) {
  const auto *opts = ctx.options<schema::DepthwiseConv2DOptions>();
  if (!opts)
    return ctx.fail("missing DepthwiseConv2DOptions");
  auto q = productQuant(ctx, 3);
  auto input = ctx.input(0), filter = ctx.input(1);
  if (failed(q) || failed(input) || failed(filter))
    return failure();
  auto inShape = ctx.inputShape(0), fShape = ctx.inputShape(1);
  if (inShape.size() != 4 || fShape.size() != 4 || fShape[0] != 1 || inShape[3] <= 0 ||
      fShape[3] % inShape[3] != 0)
    return ctx.fail("expects a 4-D NHWC input and a [1, KH, KW, C*M] filter");
  int64_t channels = inShape[3], multiplier = fShape[3] / channels;
  Value weight = ctx.reshape(*filter, {fShape[1], fShape[2], channels, multiplier});
  auto bias = biasOrZeros(ctx, 2, fShape[3]);
  auto window = windowOf(ctx, *opts, *input, fShape[1], fShape[2]);
  if (failed(bias) || failed(window))
    return failure();
  return convolve<tosa::DepthwiseConv2DOp>(ctx, *q, *input, *filter, weight, *bias, *window,
                                           fShape[3], false, opts->fused_activation_function());
}

LogicalResult convertFullyConnected(OpContext &ctx) {
  const auto *opts = ctx.options<schema::FullyConnectedOptions>();
  auto act = opts ? opts->fused_activation_function() : schema::ActivationFunctionType::NONE;
  if (opts && opts->weights_format() != schema::FullyConnectedOptionsWeightsFormat::DEFAULT)
    return ctx.fail("only the DEFAULT weights format is supported");
  auto q = productQuant(ctx, 0);
  auto input = ctx.input(0), weights = ctx.input(1);
  if (failed(q) || failed(input) || failed(weights))
    return failure();
  auto inShape = ctx.inputShape(0), wShape = ctx.inputShape(1);
  if (wShape.size() != 2)
    return ctx.fail("expects 2-D [units, depth] weights");
  int64_t units = wShape[0], depth = wShape[1], count = 1;
  for (int64_t d : inShape)
    count *= d;
  if (depth <= 0 || count % depth != 0)
    return ctx.fail("input of " + llvm::Twine(count) + " elements does not split into rows of " +
                    llvm::Twine(depth));
  int64_t rows = count / depth;
  auto bias = biasOrZeros(ctx, 2, units);
  if (failed(bias))
    return failure();
  Value flat = ctx.reshape(*input, {rows, depth});
  auto folded = foldInputZeroPoint(ctx, *weights, *bias, *q, units, true);
  if (failed(folded))
    return failure();
  Value acc = ctx.create<tosa::FullyConnectedOp>(tensorOf({rows, units}, i32Type(ctx)), flat,
                                                 *weights, folded->bias, folded->quantization);
  // Per-tensor FULLY_CONNECTED multiplies the scales in float; per-channel
  // weights (newer TFLite) go through PopulateConvolutionQuantizationParams.
  bool floatProduct = !q->weight->perChannel();
  return finishProduct(ctx, acc, productScales(*q->in, *q->weight, *q->out, floatProduct), *q->out,
                       act);
}

/// BATCH_MATMUL on int8 (TFLite batch_matmul.cc): sum((x - zx) * (y - zy))
/// in int32, MBQM by sx * sy (float) / so (double), plus zo.
LogicalResult convertBatchMatMul(OpContext &ctx) {
  auto a = inQuant(ctx, 0), w = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(w) || failed(out))
    return failure();
  if ((*a)->perChannel() || (*w)->perChannel())
    return ctx.fail("per-channel quantized operands are not supported");
  auto product = buildBatchMatMul(
      ctx, i32Type(ctx),
      tosa::MatMulOpQuantizationAttr::get(ctx.context(), (*a)->zeroPoint(), (*w)->zeroPoint()));
  if (failed(product))
    return failure();
  // The input product in float, divided in double (batch_matmul.cc).
  double real =
      static_cast<double>((*a)->scale() * (*w)->scale()) / static_cast<double>((*out)->scale());
  auto result = rescale(ctx, *product, i8Type(ctx), 0, (*out)->zeroPoint(), {real});
  if (failed(result))
    return failure();
  return ctx.setOutput(0, *result);
}

// --- Pools ------------------------------------------------------------------

/// The pool's window: padding for SAME/VALID, checked sizes.
struct PoolWindow {
  int64_t kh, kw, sh, sw, top, bottom, left, right;
};

/// The pool's window fitted to TOSA (fitPadding: `input` may become a
/// slice of itself).
FailureOr<PoolWindow> poolWindow(OpContext &ctx, const schema::Pool2DOptions &opts, Value &input) {
  PoolWindow w{
      opts.filter_height(), opts.filter_width(), opts.stride_h(), opts.stride_w(), 0, 0, 0, 0};
  if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0)
    return ctx.fail("filter sizes and strides must be positive");
  auto fitted = fitPadding(ctx, opts.padding(), input, w.kh, w.kw, w.sh, w.sw, 1, 1);
  if (failed(fitted))
    return failure();
  w.top = fitted->top;
  w.bottom = fitted->bottom;
  w.left = fitted->left;
  w.right = fitted->right;
  return w;
}

/// Pools compute on the raw int8 values, as TFLite 2.9's int8 kernels do
/// (an output quantized differently from the input is read with its own
/// scale, not requantized); both must be int8-quantized.
LogicalResult checkPoolQuant(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  return success();
}

/// A pool's options, input, shape and window, checked.
struct PoolOperands {
  const schema::Pool2DOptions *opts;
  Value input;
  std::vector<int64_t> inShape;
  PoolWindow window;
};

FailureOr<PoolOperands> poolOperands(OpContext &ctx) {
  const auto *opts = ctx.options<schema::Pool2DOptions>();
  if (!opts)
    return ctx.fail("missing Pool2DOptions");
  auto input = ctx.input(0);
  if (failed(input) || failed(checkPoolQuant(ctx)))
    return failure();
  auto inShape = ctx.inputShape(0);
  if (inShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  auto w = poolWindow(ctx, *opts, *input);
  if (failed(w))
    return failure();
  return PoolOperands{opts, *input, shapeOf(*input), *w};
}

LogicalResult convertMaxPool(OpContext &ctx) {
  auto p = poolOperands(ctx);
  if (failed(p))
    return failure();
  const auto *opts = p->opts;
  const PoolWindow *w = &p->window;
  Value *input = &p->input;
  auto b = ctx.builder();
  Value pool = ctx.create<tosa::MaxPool2dOp>(
      tensorOf(ctx.outputShape(0), i8Type(ctx)), *input, b.getDenseI64ArrayAttr({w->kh, w->kw}),
      b.getDenseI64ArrayAttr({w->sh, w->sw}),
      b.getDenseI64ArrayAttr({w->top, w->bottom, w->left, w->right}));
  auto out = fusedActivation(ctx, pool, opts->fused_activation_function(), *ctx.outputQuant(0));
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// AVERAGE_POOL_2D as TFLite's integer kernels compute it: the int32 sum of
/// the raw int8 values inside the image, divided by their count rounding
/// half away from zero ((sum +- count/2) / count, truncating). The window
/// sums are a depthwise convolution with weights 1 (padding contributes 0);
/// the per-position counts are a constant.
LogicalResult convertAvgPool(OpContext &ctx) {
  auto p = poolOperands(ctx);
  if (failed(p))
    return failure();
  const auto *opts = p->opts;
  const PoolWindow *w = &p->window;
  Value *input = &p->input;
  const std::vector<int64_t> &inShape = p->inShape;
  int64_t channels = inShape[3];
  std::vector<int64_t> outShape = ctx.outputShape(0);
  int64_t oh = outShape[1], ow = outShape[2];
  auto b = ctx.builder();
  Value ones =
      constI8(ctx, {w->kh, w->kw, channels, 1}, std::vector<int8_t>(w->kh * w->kw * channels, 1));
  Value sum = ctx.create<tosa::DepthwiseConv2DOp>(
      tensorOf({inShape[0], oh, ow, channels}, i32Type(ctx)), *input, ones,
      ctx.constI32({channels}, std::vector<int32_t>(channels, 0)),
      b.getDenseI64ArrayAttr({w->top, w->bottom, w->left, w->right}),
      b.getDenseI64ArrayAttr({w->sh, w->sw}), b.getDenseI64ArrayAttr({1, 1}),
      tosa::ConvOpQuantizationAttr::get(ctx.context(), 0, 0));
  // Elements of each window inside the image.
  auto inside = [](int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t size) {
    int64_t start = o * stride - pad;
    return std::min(start + k, size) - std::max<int64_t>(start, 0);
  };
  // A uint8 input is averaged in the uint8 domain, as TFLite does: its
  // sums are those of the int8 values plus 128 per element, all >= 0.
  const bool fromUint8 = ctx.inputQuant(0)->fromUint8;
  std::vector<int32_t> count(oh * ow), half(oh * ow), negHalf(oh * ow);
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      int64_t n = inside(y, w->sh, w->top, w->kh, inShape[1]) *
                  inside(x, w->sw, w->left, w->kw, inShape[2]);
      if (n <= 0)
        return ctx.fail("a pooling window lies entirely in the padding");
      count[y * ow + x] = static_cast<int32_t>(n);
      half[y * ow + x] = static_cast<int32_t>(n / 2 + (fromUint8 ? 128 * n : 0));
      negHalf[y * ow + x] = fromUint8 ? half[y * ow + x] : -static_cast<int32_t>(n / 2);
    }
  auto i32 = [&](llvm::ArrayRef<int64_t> s) { return tensorOf(s, i32Type(ctx)); };
  llvm::SmallVector<int64_t> grid{1, oh, ow, 1};
  Value positive = ctx.create<tosa::GreaterOp>(tensorOf(shapeOf(sum), b.getI1Type()), sum,
                                               ctx.constI32({1, 1, 1, 1}, {0}));
  Value nudge = ctx.create<tosa::SelectOp>(i32(shapeOf(sum)), positive, ctx.constI32(grid, half),
                                           ctx.constI32(grid, negHalf));
  Value nudged = ctx.create<tosa::AddOp>(i32(shapeOf(sum)), sum, nudge);
  Value avg = ctx.create<tosa::DivOp>(i32(shapeOf(sum)), nudged, ctx.constI32(grid, count));
  if (fromUint8)
    avg = ctx.create<tosa::SubOp>(i32(shapeOf(sum)), avg, ctx.constI32({1, 1, 1, 1}, {128}));
  auto activated =
      fusedActivation(ctx, avg, opts->fused_activation_function(), *ctx.outputQuant(0));
  if (failed(activated))
    return failure();
  // The mean of int8 values is an int8 value: the cast only narrows.
  return ctx.setOutput(0,
                       ctx.create<tosa::CastOp>(tensorOf(shapeOf(sum), i8Type(ctx)), *activated));
}

/// TRANSPOSE_CONV int8 (TFLite Micro transpose_conv.cc and TFLite's
/// reference_integer_ops::TransposeConv; inputs: output_shape [4] constant,
/// weights [O, KH, KW, I] int8 with zero point 0, per tensor or per channel
/// along O, input NHWC int8, optional int32 bias [O]): every input element's
/// (x - zx) * w scattered into an i32 accumulator at CONV_2D's SAME / VALID
/// padding (as the float TRANSPOSE_CONV), plus the bias, times
/// s_in * s_w[o] / s_out (double), plus zo, the fused activation's clamp.
/// TOSA: tosa.transpose_conv2d on i8 with the input zero point in its
/// quantization_info, accumulating in i32; then finishProduct's rescale.
LogicalResult convertTransposeConv(OpContext &ctx) {
  const auto *opts = ctx.options<schema::TransposeConvOptions>();
  if (!opts)
    return ctx.fail("missing TransposeConvOptions");
  auto in = inQuant(ctx, 2), w = inQuant(ctx, 1), out = outQuant(ctx);
  auto outputShape = ctx.constantInts(0);
  auto filter = ctx.input(1), input = ctx.input(2);
  if (failed(in) || failed(w) || failed(out) || failed(outputShape) || failed(filter) ||
      failed(input))
    return failure();
  if ((*w)->perChannel() && (*w)->dimension != 0)
    return ctx.fail("the weights are quantized per channel along dimension " +
                    llvm::Twine((*w)->dimension) +
                    "; TRANSPOSE_CONV's output channels are dimension 0");
  if (llvm::any_of((*w)->zeroPoints, [](int32_t zp) { return zp != 0; }))
    return ctx.fail("the weights have a nonzero zero point; TFLite's int8 TRANSPOSE_CONV takes "
                    "symmetric weights (zero point 0)");
  auto inShape = ctx.inputShape(2), fShape = ctx.inputShape(1);
  const std::vector<int64_t> &o = *outputShape;
  if (inShape.size() != 4 || fShape.size() != 4 || o.size() != 4 || fShape[3] != inShape[3] ||
      o[0] != inShape[0] || o[3] != fShape[0] || ctx.outputShape(0) != o)
    return ctx.fail("expects a 4-D NHWC input, a 4-D OHWI filter of its input channels and an "
                    "output_shape matching the batch, the filter's output channels and the "
                    "declared output tensor");
  int64_t sh = opts->stride_h(), sw = opts->stride_w();
  if (sh <= 0 || sw <= 0)
    return ctx.fail("strides must be positive");
  for (int d = 1; d <= 2; ++d) {
    int64_t s = d == 1 ? sh : sw, k = fShape[d];
    int64_t forward = opts->padding() == schema::Padding::SAME
                          ? (o[d] + s - 1) / s
                          : (o[d] >= k ? (o[d] - k) / s + 1 : 0);
    if (forward != inShape[d])
      return ctx.fail(llvm::Twine("output_shape ") + (d == 1 ? "height " : "width ") +
                      llvm::Twine(o[d]) + " does not match input size " + llvm::Twine(inShape[d]) +
                      " (supported: output sizes TensorFlow's conv2d_transpose accepts)");
  }
  auto bias = biasOrZeros(ctx, 3, fShape[0]);
  if (failed(bias))
    return failure();
  int64_t top, bottom, left, right;
  computePadding(opts->padding(), o[1], fShape[1], sh, 1, top, bottom);
  computePadding(opts->padding(), o[2], fShape[2], sw, 1, left, right);
  TosaTransposeAxis rows = fitTransposeWindow({inShape[1], fShape[1], sh, top, o[1]});
  TosaTransposeAxis cols = fitTransposeWindow({inShape[2], fShape[2], sw, left, o[2]});
  // As the float converter: a strided transpose_conv2d gets a zero bias and
  // the bias is added as [1, 1, 1, O] (MLIR 16's decomposition).
  bool strided = sh != 1 || sw != 1;
  Value convBias = strided ? ctx.constI32({fShape[0]}, std::vector<int32_t>(fShape[0], 0)) : *bias;
  auto b = ctx.builder();
  auto quantization = tosa::ConvOpQuantizationAttr::get(ctx.context(), (*in)->zeroPoint(), 0);
  auto accType = tensorOf(o, i32Type(ctx));
  Value acc = ctx.create<tosa::TransposeConv2DOp>(
      accType, *input, *filter, convBias,
      b.getDenseI64ArrayAttr({rows.outPadBegin, rows.outPadEnd, cols.outPadBegin, cols.outPadEnd}),
      b.getDenseI64ArrayAttr({sh, sw}), b.getDenseI64ArrayAttr(o), quantization);
  if (strided && ctx.hasInput(3))
    acc = ctx.create<tosa::AddOp>(accType, acc, ctx.reshape(*bias, {1, 1, 1, fShape[0]}));
  return finishProduct(ctx, acc, productScales(**in, **w, **out, false), **out,
                       opts->fused_activation_function());
}

} // namespace

void registerQuantizedConvOps(ConverterTable &table) {
  table[BuiltinOperator::CONV_2D] = convertConv2D;
  table[BuiltinOperator::DEPTHWISE_CONV_2D] = convertDepthwiseConv2D;
  table[BuiltinOperator::FULLY_CONNECTED] = convertFullyConnected;
  table[BuiltinOperator::MAX_POOL_2D] = convertMaxPool;
  table[BuiltinOperator::AVERAGE_POOL_2D] = convertAvgPool;
  table[BuiltinOperator::BATCH_MATMUL] = convertBatchMatMul;
  table[BuiltinOperator::TRANSPOSE_CONV] = convertTransposeConv;
}

} // namespace kiln::tfl
