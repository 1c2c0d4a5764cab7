//===- TFLiteConvOps.cpp - Convolutions, matmuls and pooling --------------===//
//
// CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL,
// MAX_POOL_2D, AVERAGE_POOL_2D -> TOSA. TFLite tensors are NHWC; TFLite
// CONV_2D filters are [O, KH, KW, I] (TOSA conv2d's weight layout),
// DEPTHWISE_CONV_2D filters [1, KH, KW, C*M] (TOSA wants [KH, KW, C, M]).
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TFLiteWindow.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

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
  auto window = windowOf(ctx, *opts, *input, fShape[1], fShape[2]);
  if (failed(window))
    return failure();
  Value conv = ctx.create<tosa::Conv2DOp>(
      ctx.f32Type(ctx.outputShape(0)), *input, *filter, *bias, window->pad,
      window->stride, window->dilation, nullptr);
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
  auto window = windowOf(ctx, *opts, *input, fShape[1], fShape[2]);
  if (failed(window))
    return failure();
  Value conv = ctx.create<tosa::DepthwiseConv2DOp>(
      ctx.f32Type(ctx.outputShape(0)), *input, weight, *bias, window->pad,
      window->stride, window->dilation, nullptr);
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
  // keep_num_dims keeps the input's leading dimensions, so its last one must
  // be the weights' depth (TFLite checks this too).
  bool keep = opts && opts->keep_num_dims();
  if (keep && (inShape.empty() || inShape.back() != depth))
    return ctx.fail("keep_num_dims needs the input's last dimension to be the "
                    "weights' depth " + llvm::Twine(depth) + ", the input has shape " +
                    shapeString(inShape));
  auto bias = biasOrZeros(ctx, 2, units);
  if (failed(bias))
    return failure();
  Value flat = ctx.reshape(*input, {rows, depth});
  Value fc = ctx.create<tosa::FullyConnectedOp>(ctx.f32Type({rows, units}),
                                                flat, *weights, *bias, nullptr);
  auto out = ctx.applyActivation(fc, act);
  if (failed(out))
    return failure();
  if (keep && ctx.propagating()) {
    std::vector<int64_t> kept(inShape.begin(), inShape.end() - 1);
    kept.push_back(units);
    return ctx.setOutput(0, ctx.reshape(*out, kept));
  }
  return ctx.setOutput(0, *out);
}

/// TRANSPOSE_CONV (inputs: output_shape [4] constant, weights [O, KH, KW, I],
/// input NHWC, optional bias [O] at index 3): the transpose of CONV_2D with
/// the same padding and stride,
///   out[n, iy*s - pad_top + ky, ix*s - pad_left + kx, o]
///       += in[n, iy, ix, i] * w[o, ky, kx, i],
/// where pad_top/pad_left are CONV_2D's SAME/VALID padding for an input the
/// size of output_shape (tensorflow/lite/kernels/transpose_conv.cc); outputs
/// that fall outside output_shape are dropped. The fused activation of newer
/// schemas is applied.
///
/// TOSA: out_pad from fitTransposeWindow (WindowShape.h; negative pads
/// crop, positive ones extend the output with bias only); with strides > 1
/// the bias is a separate tosa.add (see below).
LogicalResult convertTransposeConv(OpContext &ctx) {
  const auto *opts = ctx.options<schema::TransposeConvOptions>();
  if (!opts)
    return ctx.fail("missing TransposeConvOptions");
  auto outputShape = ctx.constantInts(0);
  if (failed(outputShape))
    return failure();
  auto filter = ctx.input(1);
  auto input = ctx.input(2);
  if (failed(filter) || failed(input))
    return failure();
  auto inShape = ctx.inputShape(2), fShape = ctx.inputShape(1);
  if (inShape.size() != 4 || fShape.size() != 4 || outputShape->size() != 4)
    return ctx.fail("expects a 4-D NHWC input, a 4-D OHWI filter and a "
                    "4-element output_shape");
  const std::vector<int64_t> &out = *outputShape;
  if (fShape[3] != inShape[3])
    return ctx.fail("filter has " + llvm::Twine(fShape[3]) +
                    " input channels, the input has " +
                    llvm::Twine(inShape[3]));
  std::vector<int64_t> declared = ctx.outputShape(0);
  bool matchesDeclared = declared.size() == out.size();
  for (size_t d = 0; matchesDeclared && d < out.size(); ++d)
    matchesDeclared = ShapedType::isDynamic(declared[d]) || declared[d] == out[d];
  if (out[0] != inShape[0] || out[3] != fShape[0] || !matchesDeclared)
    return ctx.fail("output_shape does not match the input batch, the filter's "
                    "output channels or the declared output tensor");
  auto bias = biasOrZeros(ctx, 3, fShape[0]);
  if (failed(bias))
    return failure();
  int64_t sh = opts->stride_h(), sw = opts->stride_w();
  if (sh <= 0 || sw <= 0)
    return ctx.fail("strides must be positive");
  // output_shape must be a size whose CONV_2D (same padding, stride, filter)
  // gives back the input size, as TensorFlow's conv2d_transpose requires;
  // for other sizes TFLite's kernels disagree (the XNNPACK one leaves
  // outputs unwritten).
  for (int d = 1; d <= 2; ++d) {
    int64_t s = d == 1 ? sh : sw, k = fShape[d];
    int64_t forward = opts->padding() == schema::Padding::SAME
                          ? (out[d] + s - 1) / s
                          : (out[d] >= k ? (out[d] - k) / s + 1 : 0);
    if (forward != inShape[d])
      return ctx.fail(
          llvm::Twine("output_shape ") + (d == 1 ? "height " : "width ") +
          llvm::Twine(out[d]) + " does not match input size " +
          llvm::Twine(inShape[d]) + ": a " +
          (opts->padding() == schema::Padding::SAME ? "SAME" : "VALID") +
          " CONV_2D with stride " + llvm::Twine(s) + " and filter " +
          llvm::Twine(k) + " maps " + llvm::Twine(out[d]) + " to " +
          llvm::Twine(forward) +
          " (supported: output sizes TensorFlow's "
          "conv2d_transpose accepts)");
  }
  int64_t top, bottom, left, right;
  computePadding(opts->padding(), out[1], fShape[1], sh, 1, top, bottom);
  computePadding(opts->padding(), out[2], fShape[2], sw, 1, left, right);
  TosaTransposeAxis rows = fitTransposeWindow({inShape[1], fShape[1], sh, top, out[1]});
  TosaTransposeAxis cols = fitTransposeWindow({inShape[2], fShape[2], sw, left, out[2]});
  // MLIR 16's strided transpose_conv2d decomposition adds the rank-1 bias to
  // the rank-4 result without reshaping it, which tosa-to-linalg cannot
  // lower: strided convolutions get a zero bias (folded away) and the bias
  // is added here as [1, 1, 1, O].
  bool strided = sh != 1 || sw != 1;
  Value convBias =
      strided ? ctx.constF32({fShape[0]}, std::vector<float>(fShape[0], 0.0f))
              : *bias;
  auto b = ctx.builder();
  Value conv = ctx.create<tosa::TransposeConv2DOp>(
      ctx.f32Type(out), *input, *filter, convBias,
      b.getDenseI64ArrayAttr({rows.outPadBegin, rows.outPadEnd, cols.outPadBegin, cols.outPadEnd}),
      b.getDenseI64ArrayAttr({sh, sw}), b.getDenseI64ArrayAttr(out), nullptr);
  if (strided && ctx.hasInput(3))
    conv = ctx.create<tosa::AddOp>(ctx.f32Type(out), conv,
                                   ctx.reshape(*bias, {1, 1, 1, fShape[0]}));
  auto result = ctx.applyActivation(conv, opts->fused_activation_function());
  if (failed(result))
    return failure();
  return ctx.setOutput(0, *result);
}

/// `v` is [prod(src), rows, cols] with batch dimensions `src` (numpy-aligned
/// to `dst`, each equal or 1); returns [prod(dst), rows, cols] with the size-1
/// batch dimensions repeated by one tosa.tile. Adjacent dimensions that are
/// both kept or both repeated are merged, as tosa.tile takes ranks 1 to 4.
FailureOr<Value> broadcastBatch(OpContext &ctx, Value v,
                                llvm::ArrayRef<int64_t> src,
                                llvm::ArrayRef<int64_t> dst) {
  auto shape = v.getType().cast<RankedTensorType>().getShape();
  int64_t rows = shape[1], cols = shape[2], total = 1;
  for (int64_t d : dst)
    total *= d;
  if (src == dst)
    return v;
  llvm::SmallVector<int64_t> dims, multiples;
  auto push = [&](int64_t dim, int64_t multiple) {
    if (!dims.empty() && (multiple > 1) == (multiples.back() > 1)) {
      dims.back() *= dim; // both kept, or both size 1 and repeated
      multiples.back() *= multiple;
      return;
    }
    dims.push_back(dim);
    multiples.push_back(multiple);
  };
  for (size_t i = 0; i < src.size(); ++i)
    push(src[i], src[i] == dst[i] ? 1 : dst[i]);
  push(rows * cols, 1);
  if (dims.size() > 4)
    return ctx.fail("broadcasting the batch dimensions needs a rank-" +
                    llvm::Twine(dims.size()) +
                    " tile; TOSA tiles ranks 1 to 4");
  llvm::SmallVector<int64_t> tiled;
  for (size_t i = 0; i < dims.size(); ++i)
    tiled.push_back(dims[i] * multiples[i]);
  Value r = ctx.reshape(v, dims);
  r = ctx.create<tosa::TileOp>(
      RankedTensorType::get(tiled, v.getType().cast<RankedTensorType>().getElementType()), r,
                               ctx.builder().getDenseI64ArrayAttr(multiples));
  return ctx.reshape(r, {total, rows, cols});
}

/// BATCH_MATMUL: out[..., m, n] = sum_k x[..., m, k] * y[..., k, n], with x
/// read as [..., K, M] when adj_x and y as [..., N, K] when adj_y; the batch
/// dimensions (all but the last two, ranks 2 and up) broadcast numpy-style.
///
/// TOSA: both operands are viewed as [batch, rows, cols] and transposed
/// ([0, 2, 1]) when adjointed; a rhs without batch is shared by folding the
/// lhs batch into its rows ([1, B*M, K] x [1, K, N]); otherwise size-1 batch
/// dimensions are tiled and tosa.matmul runs [B, M, K] x [B, K, N].
LogicalResult convertBatchMatMul(OpContext &ctx) {
  auto x = ctx.inputType(0), y = ctx.inputType(1);
  if (!x || !y)
    return failure();
  if (!x.getElementType().isF32() || !y.getElementType().isF32())
    return ctx.fail("only float32 operands are supported");
  auto product = buildBatchMatMul(ctx, ctx.builder().getF32Type(), nullptr);
  if (failed(product))
    return failure();
  return ctx.setOutput(0, *product);
}

} // namespace

FailureOr<Value> buildBatchMatMul(OpContext &ctx, Type accumulator,
                                  tosa::MatMulOpQuantizationAttr quantization) {
  const auto *opts = ctx.options<schema::BatchMatMulOptions>();
  bool adjX = opts && opts->adj_x(), adjY = opts && opts->adj_y();
  auto x = ctx.input(0);
  auto y = ctx.input(1);
  if (failed(x) || failed(y))
    return failure();
  auto xs = ctx.inputShape(0), ys = ctx.inputShape(1);
  int64_t rx = xs.size(), ry = ys.size();
  if (rx < 2 || ry < 2)
    return ctx.fail("both operands need rank 2 or more");
  int64_t nb = std::max(rx, ry) - 2;
  llvm::SmallVector<int64_t> bx(nb - (rx - 2), 1), by(nb - (ry - 2), 1), bo;
  bx.append(xs.begin(), xs.end() - 2);
  by.append(ys.begin(), ys.end() - 2);
  int64_t batchX = 1, batchY = 1, batch = 1;
  for (int64_t i = 0; i < nb; ++i) {
    if (bx[i] != by[i] && bx[i] != 1 && by[i] != 1)
      return ctx.fail("batch dimensions do not broadcast: lhs " +
                      llvm::Twine(bx[i]) + ", rhs " + llvm::Twine(by[i]) +
                      " at batch dimension " + llvm::Twine(i));
    bo.push_back(std::max(bx[i], by[i]));
    batchX *= bx[i];
    batchY *= by[i];
    batch *= bo.back();
  }
  int64_t m = adjX ? xs[rx - 1] : xs[rx - 2],
          k = adjX ? xs[rx - 2] : xs[rx - 1];
  int64_t ky = adjY ? ys[ry - 1] : ys[ry - 2],
          n = adjY ? ys[ry - 2] : ys[ry - 1];
  if (k != ky)
    return ctx.fail("contraction sizes differ: lhs " + llvm::Twine(k) +
                    ", rhs " + llvm::Twine(ky));
  Value a = ctx.reshape(*x, {batchX, xs[rx - 2], xs[rx - 1]});
  if (adjX)
    a = ctx.transpose(a, {0, 2, 1});
  Value w = ctx.reshape(*y, {batchY, ys[ry - 2], ys[ry - 1]});
  if (adjY)
    w = ctx.transpose(w, {0, 2, 1});
  Value product;
  if (batchY == 1) {
    a = ctx.reshape(a, {1, batch * m, k});
    product = ctx.create<tosa::MatMulOp>(
        RankedTensorType::get({1, batch * m, n}, accumulator), a, w, quantization);
  } else {
    auto lhs = broadcastBatch(ctx, a, bx, bo);
    if (failed(lhs))
      return failure();
    auto rhs = broadcastBatch(ctx, w, by, bo);
    if (failed(rhs))
      return failure();
    product = ctx.create<tosa::MatMulOp>(
        RankedTensorType::get({batch, m, n}, accumulator), *lhs, *rhs, quantization);
  }
  // The rank-3 product in the result's own shape, broadcast batch
  // dimensions included: [batch * m, n] rows carry no rank, and a
  // declared shape with open dimensions (a model with dynamic inputs,
  // fixed by --fix-shape) is resolved against this shape, not guessed
  // from the element count.
  llvm::SmallVector<int64_t> outShape(bo);
  outShape.append({m, n});
  return ctx.reshape(product, outShape);
}

namespace {

/// MAX_POOL_2D, AVERAGE_POOL_2D and L2_POOL_2D (isMax false, l2 true:
/// sqrt of the average of x^2 over the window's non-padding elements,
/// reference_ops.h L2Pool; TOSA: tosa.mul, tosa.avg_pool2d, then sqrt as
/// tosa.reciprocal of tosa.rsqrt, as SQRT lowers it) on NHWC f32.
LogicalResult convertPool(OpContext &ctx, bool isMax, bool l2 = false) {
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
  auto fitted = fitPadding(ctx, opts->padding(), *input, kh, kw, sh, sw, 1, 1);
  if (failed(fitted))
    return failure();
  int64_t top = fitted->top, bottom = fitted->bottom, left = fitted->left,
          right = fitted->right;
  auto b = ctx.builder();
  auto type = ctx.f32Type(ctx.outputShape(0));
  Value x = *input;
  if (l2)
    x = ctx.create<tosa::MulOp>(x.getType(), x, x, b.getI32IntegerAttr(0));
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
        type, x, b.getDenseI64ArrayAttr({kh, kw}), b.getDenseI64ArrayAttr({sh, sw}),
        b.getDenseI64ArrayAttr({top, bottom, left, right}), nullptr);
  if (l2)
    pool = ctx.create<tosa::ReciprocalOp>(pool.getType(),
                                          ctx.create<tosa::RsqrtOp>(pool.getType(), pool));
  auto out = ctx.applyActivation(pool, opts->fused_activation_function());
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

LogicalResult convertMaxPool(OpContext &ctx) { return convertPool(ctx, true); }
LogicalResult convertAvgPool(OpContext &ctx) { return convertPool(ctx, false); }
LogicalResult convertL2Pool(OpContext &ctx) { return convertPool(ctx, false, true); }

} // namespace

void registerConvOps(ConverterTable &table) {
  table[BuiltinOperator::CONV_2D] = convertConv2D;
  table[BuiltinOperator::DEPTHWISE_CONV_2D] = convertDepthwiseConv2D;
  table[BuiltinOperator::TRANSPOSE_CONV] = convertTransposeConv;
  table[BuiltinOperator::FULLY_CONNECTED] = convertFullyConnected;
  table[BuiltinOperator::BATCH_MATMUL] = convertBatchMatMul;
  table[BuiltinOperator::MAX_POOL_2D] = convertMaxPool;
  table[BuiltinOperator::AVERAGE_POOL_2D] = convertAvgPool;
  table[BuiltinOperator::L2_POOL_2D] = convertL2Pool;
}

} // namespace kiln::tfl
