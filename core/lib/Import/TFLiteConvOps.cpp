//===- TFLiteConvOps.cpp - Convolutions, matmuls and pooling --------------===//
//
// CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL,
// MAX_POOL_2D, AVERAGE_POOL_2D -> TOSA. TFLite tensors are NHWC; TFLite
// CONV_2D filters are [O, KH, KW, I] (TOSA conv2d's weight layout),
// DEPTHWISE_CONV_2D filters [1, KH, KW, C*M] (TOSA wants [KH, KW, C, M]).
//
//===----------------------------------------------------------------------===//
#include "TFLiteConverter.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

/// Explicit padding of one spatial dimension for TFLite's SAME/VALID rules
/// (tensorflow/lite/kernels/padding.h): SAME makes out = ceil(in / stride)
/// and splits the total padding with the smaller half first.
void computePadding(schema::Padding padding, int64_t in, int64_t kernel,
                    int64_t stride, int64_t dilation, int64_t &before,
                    int64_t &after) {
  before = after = 0;
  if (padding != schema::Padding::SAME)
    return;
  int64_t effective = (kernel - 1) * dilation + 1;
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((out - 1) * stride + effective - in, 0);
  before = total / 2;
  after = total - before;
}

/// Bias input `i` or zeros of length `n`.
FailureOr<Value> biasOrZeros(OpContext &ctx, int i, int64_t n) {
  if (ctx.hasInput(i))
    return ctx.input(i);
  return ctx.constF32({n}, std::vector<float>(n, 0.0f));
}

LogicalResult convertConv2D(OpContext &ctx) {
  const auto *opts = ctx.options<schema::Conv2DOptions>();
  if (!opts)
    return ctx.fail("missing Conv2DOptions");
  auto input = ctx.input(0);
  auto filter = ctx.input(1);
  if (failed(input) || failed(filter))
    return failure();
  auto inShape = ctx.inputShape(0), fShape = ctx.inputShape(1);
  if (inShape.size() != 4 || fShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input and a 4-D OHWI filter");
  if (fShape[3] != inShape[3])
    return ctx.fail("grouped convolution (filter has " +
                    llvm::Twine(fShape[3]) + " input channels, input has " +
                    llvm::Twine(inShape[3]) + ") is not supported");
  auto bias = biasOrZeros(ctx, 2, fShape[0]);
  if (failed(bias))
    return failure();
  int64_t sh = opts->stride_h(), sw = opts->stride_w();
  int64_t dh = opts->dilation_h_factor(), dw = opts->dilation_w_factor();
  if (sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    return ctx.fail("strides and dilations must be positive");
  int64_t top, bottom, left, right;
  computePadding(opts->padding(), inShape[1], fShape[1], sh, dh, top, bottom);
  computePadding(opts->padding(), inShape[2], fShape[2], sw, dw, left, right);
  auto b = ctx.builder();
  Value conv = ctx.create<tosa::Conv2DOp>(
      ctx.f32Type(ctx.outputShape(0)), *input, *filter, *bias,
      b.getDenseI64ArrayAttr({top, bottom, left, right}),
      b.getDenseI64ArrayAttr({sh, sw}), b.getDenseI64ArrayAttr({dh, dw}),
      nullptr);
  auto out = ctx.applyActivation(conv, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertDepthwiseConv2D(OpContext &ctx) {
  const auto *opts = ctx.options<schema::DepthwiseConv2DOptions>();
  if (!opts)
    return ctx.fail("missing DepthwiseConv2DOptions");
  auto input = ctx.input(0);
  auto filter = ctx.input(1);
  if (failed(input) || failed(filter))
    return failure();
  auto inShape = ctx.inputShape(0), fShape = ctx.inputShape(1);
  if (inShape.size() != 4 || fShape.size() != 4 || fShape[0] != 1)
    return ctx.fail("expects a 4-D NHWC input and a [1, KH, KW, C*M] filter");
  int64_t channels = inShape[3];
  if (channels <= 0 || fShape[3] % channels != 0)
    return ctx.fail("filter depth " + llvm::Twine(fShape[3]) +
                    " is not a multiple of the input channels " +
                    llvm::Twine(channels));
  int64_t multiplier = fShape[3] / channels;
  // [1, KH, KW, C*M] and [KH, KW, C, M] share one row-major element order.
  Value weight = ctx.reshape(*filter, {fShape[1], fShape[2], channels, multiplier});
  auto bias = biasOrZeros(ctx, 2, fShape[3]);
  if (failed(bias))
    return failure();
  int64_t sh = opts->stride_h(), sw = opts->stride_w();
  int64_t dh = opts->dilation_h_factor(), dw = opts->dilation_w_factor();
  if (sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    return ctx.fail("strides and dilations must be positive");
  int64_t top, bottom, left, right;
  computePadding(opts->padding(), inShape[1], fShape[1], sh, dh, top, bottom);
  computePadding(opts->padding(), inShape[2], fShape[2], sw, dw, left, right);
  auto b = ctx.builder();
  Value conv = ctx.create<tosa::DepthwiseConv2DOp>(
      ctx.f32Type(ctx.outputShape(0)), *input, weight, *bias,
      b.getDenseI64ArrayAttr({top, bottom, left, right}),
      b.getDenseI64ArrayAttr({sh, sw}), b.getDenseI64ArrayAttr({dh, dw}),
      nullptr);
  auto out = ctx.applyActivation(conv, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertFullyConnected(OpContext &ctx) {
  const auto *opts = ctx.options<schema::FullyConnectedOptions>();
  auto act = opts ? opts->fused_activation_function()
                  : schema::ActivationFunctionType::NONE;
  if (opts && opts->weights_format() !=
                  schema::FullyConnectedOptionsWeightsFormat::DEFAULT)
    return ctx.fail("only the DEFAULT weights format is supported");
  auto input = ctx.input(0);
  auto weights = ctx.input(1);
  if (failed(input) || failed(weights))
    return failure();
  auto inShape = ctx.inputShape(0), wShape = ctx.inputShape(1);
  if (wShape.size() != 2)
    return ctx.fail("expects 2-D [units, depth] weights");
  int64_t units = wShape[0], depth = wShape[1];
  int64_t count = 1;
  for (int64_t d : inShape)
    count *= d;
  if (depth <= 0 || count % depth != 0)
    return ctx.fail("input of " + llvm::Twine(count) +
                    " elements does not split into rows of " +
                    llvm::Twine(depth));
  int64_t rows = count / depth;
  auto bias = biasOrZeros(ctx, 2, units);
  if (failed(bias))
    return failure();
  Value flat = ctx.reshape(*input, {rows, depth});
  Value fc = ctx.create<tosa::FullyConnectedOp>(ctx.f32Type({rows, units}),
                                                flat, *weights, *bias, nullptr);
  auto out = ctx.applyActivation(fc, act);
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertPool(OpContext &ctx, bool isMax) {
  const auto *opts = ctx.options<schema::Pool2DOptions>();
  if (!opts)
    return ctx.fail("missing Pool2DOptions");
  auto input = ctx.input(0);
  if (failed(input))
    return failure();
  auto inShape = ctx.inputShape(0);
  if (inShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  int64_t kh = opts->filter_height(), kw = opts->filter_width();
  int64_t sh = opts->stride_h(), sw = opts->stride_w();
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0)
    return ctx.fail("filter sizes and strides must be positive");
  int64_t top, bottom, left, right;
  computePadding(opts->padding(), inShape[1], kh, sh, 1, top, bottom);
  computePadding(opts->padding(), inShape[2], kw, sw, 1, left, right);
  auto b = ctx.builder();
  auto type = ctx.f32Type(ctx.outputShape(0));
  Value pool;
  if (isMax)
    pool = ctx.create<tosa::MaxPool2dOp>(
        type, *input, b.getDenseI64ArrayAttr({kh, kw}),
        b.getDenseI64ArrayAttr({sh, sw}),
        b.getDenseI64ArrayAttr({top, bottom, left, right}));
  else
    // TOSA avg_pool2d divides by the number of non-padding elements in the
    // window, as TFLite's AVERAGE_POOL_2D does.
    pool = ctx.create<tosa::AvgPool2dOp>(
        type, *input, b.getDenseI64ArrayAttr({kh, kw}),
        b.getDenseI64ArrayAttr({sh, sw}),
        b.getDenseI64ArrayAttr({top, bottom, left, right}), nullptr);
  auto out = ctx.applyActivation(pool, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertMaxPool(OpContext &ctx) { return convertPool(ctx, true); }
LogicalResult convertAvgPool(OpContext &ctx) { return convertPool(ctx, false); }

} // namespace

void registerConvOps(ConverterTable &table) {
  table[BuiltinOperator::CONV_2D] = convertConv2D;
  table[BuiltinOperator::DEPTHWISE_CONV_2D] = convertDepthwiseConv2D;
  table[BuiltinOperator::FULLY_CONNECTED] = convertFullyConnected;
  table[BuiltinOperator::MAX_POOL_2D] = convertMaxPool;
  table[BuiltinOperator::AVERAGE_POOL_2D] = convertAvgPool;
}

} // namespace kiln::tfl
