//===- TFLiteQuantizedOps.cpp - int8 TFLite operators -> TOSA --------------===//
//
// Operators whose tensors are int8 or uint8 (computed as int8, see
// TFLiteQuant.h), converted so that every output element equals what
// TensorFlow Lite's integer kernels compute (tensorflow/lite/kernels,
// optimized and reference integer kernels, which agree on these
// operators):
//
// - Products (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): the TOSA op on
//   i8 with the zero points in its quantization_info accumulates in i32
//   with the i32 bias; one tosa.rescale (per channel where the weights
//   are) applies TFLite's fixed-point multiplier, rounding and output zero
//   point; the fused activation is a tosa.clamp on quantized bounds.
//   tosa.rescale with double_round rounds exactly as TFLite's
//   MultiplyByQuantizedMultiplier (SaturatingRoundingDoublingHighMul, then
//   RoundingDivideByPOT): both round the 64-bit product at bit 31 half up,
//   then the remaining shift half away from zero.
// - Elementwise binary (ADD, SUB, MUL): the rescale chains of TFLite's
//   kernels (ADD/SUB: inputs shifted left 20 bits and rescaled to twice the
//   larger input scale, summed, rescaled to the output).
// - Unary elementwise (LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH,
//   QUANTIZE int8 -> int8): a 256-entry tosa.table filled at import by
//   running TFLite's own per-element arithmetic on every int8 value, so
//   the lookup is exact by construction.
// - Data movement (RESHAPE, TRANSPOSE, SLICE, ...): the float converters,
//   which are element-type agnostic; TFLite copies bytes there.
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TFLiteWindow.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {

// --- TFLite's fixed-point primitives, evaluated at import -----------------

/// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded
/// half up (a nudge of 2^30 before an arithmetic division by 2^31).
int32_t roundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min())
    return std::numeric_limits<int32_t>::max();
  int64_t ab = static_cast<int64_t>(a) * b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return static_cast<int32_t>((ab + nudge) / (1LL << 31));
}

/// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from
/// zero.
int32_t roundingDivideByPOT(int32_t x, int exponent) {
  int32_t mask = static_cast<int32_t>((1LL << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// TFLite's MultiplyByQuantizedMultiplier (quantization_util / common.h).
int32_t multiplyByQuantizedMultiplier(int32_t x, QuantizedMultiplier m) {
  int left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
  return roundingDivideByPOT(
      roundingDoublingHighMul(static_cast<int32_t>(static_cast<uint32_t>(x) << left),
                              m.multiplier),
      right);
}

// --- Builders ---------------------------------------------------------------

Type i8Type(OpContext &ctx) { return ctx.builder().getIntegerType(8); }
Type i32Type(OpContext &ctx) { return ctx.builder().getI32Type(); }

RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

/// The quantization of input `i`, or a failure naming it.
FailureOr<const TensorQuant *> inQuant(OpContext &ctx, int i) {
  if (const TensorQuant *q = ctx.inputQuant(i))
    return q;
  return ctx.fail("input " + llvm::Twine(i) +
                  " has no int8 quantization (scale and zero point); mixed "
                  "float/int8 operators are not supported");
}

FailureOr<const TensorQuant *> outQuant(OpContext &ctx) {
  if (const TensorQuant *q = ctx.outputQuant(0))
    return q;
  return ctx.fail("the output has no int8 quantization (scale and zero "
                  "point); mixed float/int8 operators are not supported");
}

/// tosa.rescale of `value` (i8 or i32) to `element` (i8 or i32): subtracts
/// `inZp`, multiplies by each real scale as TFLite does (quantizeMultiplier,
/// MultiplyByQuantizedMultiplier's rounding), adds `outZp` and saturates.
/// Several scales apply per channel along the last dimension.
FailureOr<Value> rescale(OpContext &ctx, Value value, Type element, int32_t inZp,
                         int32_t outZp, llvm::ArrayRef<double> scales) {
  llvm::SmallVector<int32_t> multipliers, shifts;
  for (double s : scales) {
    QuantizedMultiplier m = quantizeMultiplier(s);
    // TOSA shift = 31 - TFLite's shift; a zero multiplier gives 0 at any
    // shift. TOSA allows shifts 2..62.
    int shift = m.multiplier == 0 ? 31 : 31 - m.shift;
    if (shift < 2)
      return ctx.fail("an effective quantization scale of " + std::to_string(s) +
                      " (input scale x weight scale / output scale) is too "
                      "large; TFLite's fixed-point multipliers reach 2^29");
    if (shift > 62) {
      m.multiplier = 0;
      shift = 62;
    }
    multipliers.push_back(m.multiplier);
    shifts.push_back(shift);
  }
  auto b = ctx.builder();
  return ctx.create<tosa::RescaleOp>(
      tensorOf(shapeOf(value), element), value, b.getI32IntegerAttr(inZp),
      b.getI32IntegerAttr(outZp), b.getDenseI32ArrayAttr(multipliers),
      b.getDenseI32ArrayAttr(shifts), b.getBoolAttr(true), b.getBoolAttr(true),
      b.getBoolAttr(scales.size() > 1));
}

/// tosa.clamp of an integer tensor to [lo, hi].
Value clampInt(OpContext &ctx, Value value, int64_t lo, int64_t hi) {
  auto b = ctx.builder();
  return ctx.create<tosa::ClampOp>(value.getType(), value,
                                   b.getI64IntegerAttr(lo), b.getI64IntegerAttr(hi),
                                   b.getF32FloatAttr(static_cast<float>(lo)),
                                   b.getF32FloatAttr(static_cast<float>(hi)));
}

/// The fused activation `act` on an int8 result: a clamp on the quantized
/// bounds (none when they span the whole int8 range).
FailureOr<Value> fusedActivation(OpContext &ctx, Value value,
                                 schema::ActivationFunctionType act,
                                 const TensorQuant &out) {
  using A = schema::ActivationFunctionType;
  if (act != A::NONE && act != A::RELU && act != A::RELU_N1_TO_1 && act != A::RELU6)
    return ctx.fail(std::string("fused activation ") +
                    schema::EnumNameActivationFunctionType(act) +
                    " is not supported on int8 (supported: NONE, RELU, "
                    "RELU_N1_TO_1, RELU6)");
  auto [lo, hi] = quantizedActivationRange(static_cast<int>(act), out);
  if (lo == -128 && hi == 127)
    return value;
  return clampInt(ctx, value, lo, hi);
}

Value constI8(OpContext &ctx, llvm::ArrayRef<int64_t> shape,
              llvm::ArrayRef<int8_t> values) {
  auto type = tensorOf(shape, i8Type(ctx));
  auto attr = DenseElementsAttr::get(type, values);
  return ctx.builder().create<tosa::ConstOp>(ctx.loc(), type, attr).getResult();
}

/// A 256-entry tosa.table applying `f` (an int8 value -> its int8 result,
/// TFLite's arithmetic) to every element of the i8 `value`.
Value lookupTable(OpContext &ctx, Value value,
                  const std::function<int32_t(int32_t)> &f) {
  std::vector<int8_t> table(256);
  for (int32_t q = -128; q <= 127; ++q)
    table[q + 128] = static_cast<int8_t>(std::clamp(f(q), -128, 127));
  Value t = constI8(ctx, {256}, table);
  return ctx.create<tosa::TableOp>(value.getType(), value, t);
}

/// Bias input `i` (int32) or zeros of length `n`.
FailureOr<Value> biasOrZeros(OpContext &ctx, int i, int64_t n) {
  if (!ctx.hasInput(i))
    return ctx.constI32({n}, std::vector<int32_t>(n, 0));
  if (ctx.inputTensor(i)->type() != schema::TensorType::INT32)
    return ctx.fail(std::string("the bias is ") +
                    schema::EnumNameTensorType(ctx.inputTensor(i)->type()) +
                    "; int8 operators take an INT32 bias");
  return ctx.input(i);
}

/// Real output multipliers of a product op: input scale x weight scale
/// (per channel) / output scale. TFLite computes int8 convolutions' in
/// double (PopulateConvolutionQuantizationParams) but FULLY_CONNECTED's and
/// uint8 ones' with the input x weight product rounded to float first
/// (GetQuantizedConvolutionMultipler).
std::vector<double> productScales(const TensorQuant &in, const TensorQuant &w,
                                  const TensorQuant &out, bool floatProduct) {
  std::vector<double> scales;
  for (float ws : w.scales) {
    double product = floatProduct ? static_cast<double>(in.scale() * ws)
                                  : static_cast<double>(in.scale()) * ws;
    scales.push_back(product / static_cast<double>(out.scale()));
  }
  return scales;
}

/// Rescales an i32 accumulator to the int8 output and applies the fused
/// activation; binds output 0.
LogicalResult finishProduct(OpContext &ctx, Value acc, llvm::ArrayRef<double> scales,
                            const TensorQuant &out,
                            schema::ActivationFunctionType act) {
  auto result = rescale(ctx, acc, i8Type(ctx), 0, out.zeroPoint(), scales);
  if (failed(result))
    return failure();
  auto activated = fusedActivation(ctx, *result, act, out);
  if (failed(activated))
    return failure();
  return ctx.setOutput(0, *activated);
}

/// Quantization of a product op's operands: input, weights (per-tensor or
/// per-channel along `channelDim`), output.
struct ProductQuant {
  const TensorQuant *in, *weight, *out;
};

FailureOr<ProductQuant> productQuant(OpContext &ctx, int channelDim) {
  auto in = inQuant(ctx, 0), w = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(in) || failed(w) || failed(out))
    return failure();
  if ((*w)->perChannel() && (*w)->dimension != channelDim)
    return ctx.fail("the weights are quantized per channel along dimension " +
                    llvm::Twine((*w)->dimension) + "; this operator's output "
                    "channels are dimension " + llvm::Twine(channelDim));
  for (int32_t zp : (*w)->zeroPoints)
    if (zp != (*w)->zeroPoints.front())
      return ctx.fail("per-channel weight zero points differ; TFLite's int8 "
                      "kernels take one weight zero point (0)");
  return ProductQuant{*in, *w, *out};
}

// --- Products ---------------------------------------------------------------

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
  auto window = windowOf(ctx, *opts, inShape, fShape[1], fShape[2]);
  if (failed(bias) || failed(window))
    return failure();
  std::vector<int64_t> outShape = ctx.outputShape(0);
  Value acc = ctx.create<tosa::Conv2DOp>(
      tensorOf(outShape, i32Type(ctx)), *input, *filter, *bias, window->pad,
      window->stride, window->dilation,
      tosa::ConvOpQuantizationAttr::get(ctx.context(), q->in->zeroPoint(),
                                        q->weight->zeroPoint()));
  bool floatProduct = q->in->fromUint8;
  return finishProduct(ctx, acc, productScales(*q->in, *q->weight, *q->out, floatProduct),
                       *q->out, opts->fused_activation_function());
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
  if (inShape.size() != 4 || fShape.size() != 4 || fShape[0] != 1 ||
      inShape[3] <= 0 || fShape[3] % inShape[3] != 0)
    return ctx.fail("expects a 4-D NHWC input and a [1, KH, KW, C*M] filter");
  int64_t channels = inShape[3], multiplier = fShape[3] / channels;
  Value weight = ctx.reshape(*filter, {fShape[1], fShape[2], channels, multiplier});
  auto bias = biasOrZeros(ctx, 2, fShape[3]);
  auto window = windowOf(ctx, *opts, inShape, fShape[1], fShape[2]);
  if (failed(bias) || failed(window))
    return failure();
  Value acc = ctx.create<tosa::DepthwiseConv2DOp>(
      tensorOf(ctx.outputShape(0), i32Type(ctx)), *input, weight, *bias,
      window->pad, window->stride, window->dilation,
      tosa::ConvOpQuantizationAttr::get(ctx.context(), q->in->zeroPoint(),
                                        q->weight->zeroPoint()));
  bool floatProduct = q->in->fromUint8;
  return finishProduct(ctx, acc, productScales(*q->in, *q->weight, *q->out, floatProduct),
                       *q->out, opts->fused_activation_function());
}

LogicalResult convertFullyConnected(OpContext &ctx) {
  const auto *opts = ctx.options<schema::FullyConnectedOptions>();
  auto act = opts ? opts->fused_activation_function()
                  : schema::ActivationFunctionType::NONE;
  if (opts && opts->weights_format() !=
                  schema::FullyConnectedOptionsWeightsFormat::DEFAULT)
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
    return ctx.fail("input of " + llvm::Twine(count) +
                    " elements does not split into rows of " + llvm::Twine(depth));
  int64_t rows = count / depth;
  auto bias = biasOrZeros(ctx, 2, units);
  if (failed(bias))
    return failure();
  Value flat = ctx.reshape(*input, {rows, depth});
  Value acc = ctx.create<tosa::FullyConnectedOp>(
      tensorOf({rows, units}, i32Type(ctx)), flat, *weights, *bias,
      tosa::ConvOpQuantizationAttr::get(ctx.context(), q->in->zeroPoint(),
                                        q->weight->zeroPoint()));
  // Per-tensor FULLY_CONNECTED multiplies the scales in float; per-channel
  // weights (newer TFLite) go through PopulateConvolutionQuantizationParams.
  bool floatProduct = !q->weight->perChannel();
  return finishProduct(ctx, acc, productScales(*q->in, *q->weight, *q->out, floatProduct),
                       *q->out, act);
}

// --- Pools ------------------------------------------------------------------

/// The pool's window: padding for SAME/VALID, checked sizes.
struct PoolWindow {
  int64_t kh, kw, sh, sw, top, bottom, left, right;
};

FailureOr<PoolWindow> poolWindow(OpContext &ctx, const schema::Pool2DOptions &opts,
                                 llvm::ArrayRef<int64_t> inShape) {
  PoolWindow w{opts.filter_height(), opts.filter_width(), opts.stride_h(),
               opts.stride_w(), 0, 0, 0, 0};
  if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0)
    return ctx.fail("filter sizes and strides must be positive");
  if (failed(checkWindowFits(ctx, opts.padding(), inShape, w.kh, w.kw, 1, 1)))
    return failure();
  computePadding(opts.padding(), inShape[1], w.kh, w.sh, 1, w.top, w.bottom);
  computePadding(opts.padding(), inShape[2], w.kw, w.sw, 1, w.left, w.right);
  return w;
}

/// Pools compute on raw int8 values: TFLite requires the output's scale and
/// zero point to be the input's.
LogicalResult checkSameQuant(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  if ((*in)->scales != (*out)->scales || (*in)->zeroPoints != (*out)->zeroPoints)
    return ctx.fail("the output's quantization (" + describeQuant(**out) +
                    ") differs from the input's (" + describeQuant(**in) +
                    "); TFLite's int8 kernel requires them equal");
  return success();
}

LogicalResult convertMaxPool(OpContext &ctx) {
  const auto *opts = ctx.options<schema::Pool2DOptions>();
  if (!opts)
    return ctx.fail("missing Pool2DOptions");
  auto input = ctx.input(0);
  if (failed(input) || failed(checkSameQuant(ctx)))
    return failure();
  auto inShape = ctx.inputShape(0);
  if (inShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  auto w = poolWindow(ctx, *opts, inShape);
  if (failed(w))
    return failure();
  auto b = ctx.builder();
  Value pool = ctx.create<tosa::MaxPool2dOp>(
      tensorOf(ctx.outputShape(0), i8Type(ctx)), *input,
      b.getDenseI64ArrayAttr({w->kh, w->kw}), b.getDenseI64ArrayAttr({w->sh, w->sw}),
      b.getDenseI64ArrayAttr({w->top, w->bottom, w->left, w->right}));
  auto out = fusedActivation(ctx, pool, opts->fused_activation_function(),
                             *ctx.outputQuant(0));
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
  const auto *opts = ctx.options<schema::Pool2DOptions>();
  if (!opts)
    return ctx.fail("missing Pool2DOptions");
  auto input = ctx.input(0);
  if (failed(input) || failed(checkSameQuant(ctx)))
    return failure();
  auto inShape = ctx.inputShape(0);
  if (inShape.size() != 4)
    return ctx.fail("expects a 4-D NHWC input");
  auto w = poolWindow(ctx, *opts, inShape);
  if (failed(w))
    return failure();
  int64_t channels = inShape[3];
  std::vector<int64_t> outShape = ctx.outputShape(0);
  int64_t oh = outShape[1], ow = outShape[2];
  auto b = ctx.builder();
  Value ones = constI8(ctx, {w->kh, w->kw, channels, 1},
                       std::vector<int8_t>(w->kh * w->kw * channels, 1));
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
  std::vector<int32_t> count(oh * ow), half(oh * ow), negHalf(oh * ow);
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      int64_t n = inside(y, w->sh, w->top, w->kh, inShape[1]) *
                  inside(x, w->sw, w->left, w->kw, inShape[2]);
      if (n <= 0)
        return ctx.fail("a pooling window lies entirely in the padding");
      count[y * ow + x] = static_cast<int32_t>(n);
      half[y * ow + x] = static_cast<int32_t>(n / 2);
      negHalf[y * ow + x] = -static_cast<int32_t>(n / 2);
    }
  auto i32 = [&](llvm::ArrayRef<int64_t> s) { return tensorOf(s, i32Type(ctx)); };
  llvm::SmallVector<int64_t> grid{1, oh, ow, 1};
  Value positive = ctx.create<tosa::GreaterOp>(
      tensorOf(shapeOf(sum), b.getI1Type()), sum, ctx.constI32({1, 1, 1, 1}, {0}));
  Value nudge = ctx.create<tosa::SelectOp>(i32(shapeOf(sum)), positive,
                                           ctx.constI32(grid, half),
                                           ctx.constI32(grid, negHalf));
  Value nudged = ctx.create<tosa::AddOp>(i32(shapeOf(sum)), sum, nudge);
  Value avg = ctx.create<tosa::DivOp>(i32(shapeOf(sum)), nudged,
                                      ctx.constI32(grid, count));
  auto activated = fusedActivation(ctx, avg, opts->fused_activation_function(),
                                   *ctx.outputQuant(0));
  if (failed(activated))
    return failure();
  // The mean of int8 values is an int8 value: the cast only narrows.
  return ctx.setOutput(
      0, ctx.create<tosa::CastOp>(tensorOf(shapeOf(sum), i8Type(ctx)), *activated));
}

// --- SOFTMAX ----------------------------------------------------------------

/// SOFTMAX on int8 as TFLite's optimized kernel computes it
/// (optimized_ops::Softmax with PopulateSoftmaxLookupTable): a 256-entry
/// float table t[255 - d] = expf(-input_scale * beta * d); per row, with m
/// the row's largest input, e_j = t[255 - m + x_j], sum = sum of e_j in
/// order, p_j = e_j * (1 / (sum * output_scale)), output round(p_j) +
/// zero_point, saturated. The output must be scale 1/256, zero point -128.
LogicalResult convertSoftmax(OpContext &ctx) {
  const auto *opts = ctx.options<schema::SoftmaxOptions>();
  float beta = opts ? opts->beta() : 1.0f;
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto input = ctx.input(0);
  if (failed(in) || failed(out) || failed(input))
    return failure();
  if (ctx.inputShape(0).empty())
    return ctx.fail("expects an input of rank 1 or more");
  if ((*out)->scale() != 1.0f / 256 || (*out)->zeroPoint() != -128)
    return ctx.fail("the int8 output must have scale 1/256 and zero point -128 "
                    "(TFLite's requirement), it has " + describeQuant(**out));
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  int64_t rank = shape.size(), total = 1;
  for (int64_t d : shape)
    total *= d;
  std::vector<float> table(256);
  const float scale = -(*in)->scale() * beta;
  for (int32_t v = 0; v <= 255; ++v)
    table[255 - v] = std::exp(scale * static_cast<float>(v));
  auto b = ctx.builder();
  Type f32 = b.getF32Type();
  llvm::SmallVector<int64_t> rowShape(shape);
  rowShape.back() = 1;
  Value rowMax = ctx.create<tosa::ReduceMaxOp>(tensorOf(rowShape, i8Type(ctx)), *input,
                                               b.getI64IntegerAttr(rank - 1));
  Value x32 = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), *input);
  Value max32 = ctx.create<tosa::CastOp>(tensorOf(rowShape, i32Type(ctx)), rowMax);
  Value diff = ctx.create<tosa::SubOp>(tensorOf(shape, i32Type(ctx)), x32, max32);
  llvm::SmallVector<int64_t> ones(rank, 1);
  Value index = ctx.create<tosa::AddOp>(tensorOf(shape, i32Type(ctx)), diff,
                                        ctx.constI32(ones, {255}));
  Value values = ctx.constF32({1, 256, 1}, table);
  Value gathered = ctx.create<tosa::GatherOp>(
      tensorOf({1, total, 1}, f32), values, ctx.reshape(index, {1, total}));
  Value e = ctx.reshape(gathered, shape);
  Value sum = ctx.create<tosa::ReduceSumOp>(tensorOf(rowShape, f32), e,
                                            b.getI64IntegerAttr(rank - 1));
  Value scaled = ctx.create<tosa::MulOp>(tensorOf(rowShape, f32), sum,
                                         ctx.constF32(ones, {(*out)->scale()}),
                                         b.getI32IntegerAttr(0));
  Value inv = ctx.create<tosa::ReciprocalOp>(tensorOf(rowShape, f32), scaled);
  Value p = ctx.create<tosa::MulOp>(tensorOf(shape, f32), e, inv, b.getI32IntegerAttr(0));
  // round(p) for p >= 0, half away from zero, exactly: floor(p) plus one
  // when the (exact) fraction p - floor(p) is at least 1/2.
  Value whole = ctx.create<tosa::FloorOp>(tensorOf(shape, f32), p);
  Value fraction = ctx.create<tosa::SubOp>(tensorOf(shape, f32), p, whole);
  Value up = ctx.create<tosa::GreaterEqualOp>(tensorOf(shape, b.getI1Type()), fraction,
                                              ctx.constF32(ones, {0.5f}));
  Value step = ctx.create<tosa::SelectOp>(tensorOf(shape, f32), up,
                                          ctx.constF32(ones, {1.0f}),
                                          ctx.constF32(ones, {0.0f}));
  Value rounded = ctx.create<tosa::AddOp>(tensorOf(shape, f32), whole, step);
  Value q = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), rounded);
  Value shifted = ctx.create<tosa::AddOp>(tensorOf(shape, i32Type(ctx)), q,
                                          ctx.constI32(ones, {-128}));
  Value clamped = clampInt(ctx, shifted, -128, 127);
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(tensorOf(shape, i8Type(ctx)), clamped));
}


// --- Unary elementwise: exact lookup tables ----------------------------------

/// Binds output 0 to the table lookup of input 0 through `f` (TFLite's
/// arithmetic from an int8 input value to the int8 output value).
LogicalResult convertByTable(OpContext &ctx,
                             const std::function<int32_t(int32_t)> &f) {
  auto input = ctx.input(0);
  if (failed(input))
    return failure();
  return ctx.setOutput(0, lookupTable(ctx, *input, f));
}

/// RELU, RELU6, RELU_N1_TO_1 (TFLite's QuantizedReluX): out_zp +
/// MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale), clamped
/// to [out_zp + round(lo / out_scale), out_zp + round(hi / out_scale)].
LogicalResult convertRelu(OpContext &ctx, float lo, float hi) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  // in_scale / out_scale in float, then widened (activations.cc ReluPrepare).
  QuantizedMultiplier m = quantizeMultiplier(static_cast<double>(i.scale() / o.scale()));
  int32_t qlo = std::max(-128, o.zeroPoint() + static_cast<int32_t>(std::round(lo / o.scale())));
  int32_t qhi = std::isinf(hi) ? 127
                               : std::min(127, o.zeroPoint() + static_cast<int32_t>(
                                                                   std::round(hi / o.scale())));
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = o.zeroPoint() + multiplyByQuantizedMultiplier(q - i.zeroPoint(), m);
    return std::clamp(v, qlo, qhi);
  });
}

LogicalResult convertRelu0(OpContext &ctx) {
  return convertRelu(ctx, 0.0f, std::numeric_limits<float>::infinity());
}
LogicalResult convertRelu6(OpContext &ctx) { return convertRelu(ctx, 0.0f, 6.0f); }
LogicalResult convertReluN1To1(OpContext &ctx) { return convertRelu(ctx, -1.0f, 1.0f); }

/// A float function through TFLite's int8 lookup table (activations.cc
/// PopulateLookupTable): dequantize in float, apply `f`, multiply by
/// 1 / output scale, round half away from zero, add the zero point.
LogicalResult convertFloatTable(OpContext &ctx, float (*f)(float)) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  const float inverseScale = 1.0f / o.scale();
  return convertByTable(ctx, [&](int32_t q) {
    float dequantized = i.scale() * static_cast<float>(q - i.zeroPoint());
    float rescaled = std::round(f(dequantized) * inverseScale);
    return static_cast<int32_t>(rescaled + static_cast<float>(o.zeroPoint()));
  });
}

float logistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float hyperbolicTangent(float x) { return std::tanh(x); }

LogicalResult convertLogistic(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out))
    return failure();
  if ((*out)->scale() != 1.0f / 256 || (*out)->zeroPoint() != -128)
    return ctx.fail("the int8 output must have scale 1/256 and zero point -128 "
                    "(TFLite's requirement), it has " + describeQuant(**out));
  return convertFloatTable(ctx, logistic);
}

LogicalResult convertTanh(OpContext &ctx) {
  auto out = outQuant(ctx);
  if (failed(out))
    return failure();
  if ((*out)->scale() != 1.0f / 128 || (*out)->zeroPoint() != 0)
    return ctx.fail("the int8 output must have scale 1/128 and zero point 0 "
                    "(TFLite's requirement), it has " + describeQuant(**out));
  return convertFloatTable(ctx, hyperbolicTangent);
}

/// QUANTIZE int8/uint8 -> int8 (TFLite's Requantize): out_zp +
/// MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale in double).
/// float -> int8 (AffineQuantize): round(x / scale) + zero point, computed
/// here as x * (1 / scale) in float, which can differ from the division
/// when x / scale lies within one float ulp of a half-integer.
LogicalResult convertQuantize(OpContext &ctx) {
  auto out = outQuant(ctx);
  auto input = ctx.input(0);
  if (failed(out) || failed(input))
    return failure();
  if (const TensorQuant *in = ctx.inputQuant(0)) {
    QuantizedMultiplier m = quantizeMultiplier(static_cast<double>(in->scale()) /
                                               static_cast<double>((*out)->scale()));
    int32_t inZp = in->zeroPoint(), outZp = (*out)->zeroPoint();
    return convertByTable(ctx, [&](int32_t q) {
      return outZp + multiplyByQuantizedMultiplier(q - inZp, m);
    });
  }
  if (!input->getType().cast<RankedTensorType>().getElementType().isF32())
    return ctx.fail("QUANTIZE takes a float32 or int8/uint8 input");
  if ((*out)->perChannel())
    return ctx.fail("per-channel QUANTIZE is not supported");
  auto b = ctx.builder();
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  llvm::SmallVector<int64_t> ones(shape.size(), 1);
  auto f32 = tensorOf(shape, b.getF32Type());
  Value p = ctx.create<tosa::MulOp>(f32, *input,
                                    ctx.constF32(ones, {1.0f / (*out)->scale()}),
                                    b.getI32IntegerAttr(0));
  // round half away from zero: sign(p) * (floor(|p|) + (frac >= 1/2)).
  Value magnitude = ctx.create<tosa::AbsOp>(f32, p);
  Value whole = ctx.create<tosa::FloorOp>(f32, magnitude);
  Value fraction = ctx.create<tosa::SubOp>(f32, magnitude, whole);
  auto i1 = tensorOf(shape, b.getI1Type());
  Value up = ctx.create<tosa::GreaterEqualOp>(i1, fraction, ctx.constF32(ones, {0.5f}));
  Value rounded = ctx.create<tosa::AddOp>(
      f32, whole,
      ctx.create<tosa::SelectOp>(f32, up, ctx.constF32(ones, {1.0f}),
                                 ctx.constF32(ones, {0.0f})));
  Value negative = ctx.create<tosa::GreaterOp>(i1, ctx.constF32(ones, {0.0f}), p);
  Value signedValue = ctx.create<tosa::SelectOp>(
      f32, negative, ctx.create<tosa::NegateOp>(f32, rounded, nullptr), rounded);
  // Saturate in float first so the integer cast cannot overflow.
  Value bounded = ctx.clamp(signedValue, -1.0e6f, 1.0e6f);
  auto i32 = tensorOf(shape, i32Type(ctx));
  Value q = ctx.create<tosa::CastOp>(i32, bounded);
  Value shifted = ctx.create<tosa::AddOp>(i32, q, ctx.constI32(ones, {(*out)->zeroPoint()}));
  Value clamped = clampInt(ctx, shifted, -128, 127);
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(tensorOf(shape, i8Type(ctx)), clamped));
}

/// DEQUANTIZE int8/uint8 -> float: scale * (x - zero point). TFLite
/// multiplies in double and rounds to float once; the product of a float
/// scale and a 9-bit integer is exact in double, so one float multiply of
/// the same operands gives the same float.
LogicalResult convertDequantize(OpContext &ctx) {
  auto in = inQuant(ctx, 0);
  auto input = ctx.input(0);
  if (failed(in) || failed(input))
    return failure();
  if ((*in)->perChannel())
    return ctx.fail("per-channel DEQUANTIZE of a computed tensor is not supported");
  auto b = ctx.builder();
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  llvm::SmallVector<int64_t> ones(shape.size(), 1);
  auto i32 = tensorOf(shape, i32Type(ctx));
  auto f32 = tensorOf(shape, b.getF32Type());
  Value wide = ctx.create<tosa::CastOp>(i32, *input);
  Value centered = ctx.create<tosa::SubOp>(i32, wide, ctx.constI32(ones, {(*in)->zeroPoint()}));
  Value real = ctx.create<tosa::CastOp>(f32, centered);
  return ctx.setOutput(0, ctx.create<tosa::MulOp>(f32, real,
                                                  ctx.constF32(ones, {(*in)->scale()}),
                                                  b.getI32IntegerAttr(0)));
}

// --- Binary elementwise -----------------------------------------------------

/// Both operands as i32 values (x - zero point) * 2^`leftShift` (one rescale
/// each; 2^leftShift as a multiplier of 2^30 and shift 30 - leftShift is
/// exact), broadcast to a common rank.
FailureOr<std::pair<Value, Value>> widenOperands(OpContext &ctx, int leftShift,
                                                 const TensorQuant &a,
                                                 const TensorQuant &b) {
  auto x = ctx.input(0), y = ctx.input(1);
  if (failed(x) || failed(y))
    return failure();
  int64_t rank = std::max(shapeOf(*x).size(), shapeOf(*y).size());
  auto widen = [&](Value v, const TensorQuant &q) {
    return rescale(ctx, ctx.broadcastRank(v, rank), i32Type(ctx), q.zeroPoint(), 0,
                   {std::ldexp(1.0, leftShift)});
  };
  auto wx = widen(*x, a), wy = widen(*y, b);
  if (failed(wx) || failed(wy))
    return failure();
  return std::make_pair(*wx, *wy);
}

/// ADD and SUB (TFLite add.cc / sub.cc, int8): both inputs shifted left 20
/// bits and rescaled by scale_i / (2 max(scale_1, scale_2)), added or
/// subtracted, rescaled by 2 max(scale) / (2^20 output scale).
LogicalResult convertAddSub(OpContext &ctx, bool subtract,
                            schema::ActivationFunctionType act) {
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  if ((*a)->perChannel() || (*b)->perChannel())
    return ctx.fail("per-channel quantized operands are not supported");
  const int leftShift = 20;
  double twiceMax = static_cast<double>(2 * std::max((*a)->scale(), (*b)->scale()));
  auto operands = widenOperands(ctx, leftShift, **a, **b);
  if (failed(operands))
    return failure();
  auto x = rescale(ctx, operands->first, i32Type(ctx), 0, 0,
                   {static_cast<double>((*a)->scale()) / twiceMax});
  auto y = rescale(ctx, operands->second, i32Type(ctx), 0, 0,
                   {static_cast<double>((*b)->scale()) / twiceMax});
  if (failed(x) || failed(y))
    return failure();
  auto type = tensorOf(ctx.outputShape(0), i32Type(ctx));
  Value sum = subtract ? ctx.create<tosa::SubOp>(type, *x, *y)
                       : ctx.create<tosa::AddOp>(type, *x, *y);
  double outputScale = twiceMax / static_cast<double>(
                                      static_cast<float>(1 << leftShift) * (*out)->scale());
  return finishProduct(ctx, sum, {outputScale}, **out, act);
}

LogicalResult convertAdd(OpContext &ctx) {
  const auto *opts = ctx.options<schema::AddOptions>();
  return convertAddSub(ctx, false, opts ? opts->fused_activation_function()
                                        : schema::ActivationFunctionType::NONE);
}

LogicalResult convertSub(OpContext &ctx) {
  const auto *opts = ctx.options<schema::SubOptions>();
  return convertAddSub(ctx, true, opts ? opts->fused_activation_function()
                                       : schema::ActivationFunctionType::NONE);
}

/// MUL (TFLite mul.cc, int8): (x - zp_x) * (y - zp_y) in int32, rescaled by
/// scale_x * scale_y / scale_out (computed in float, then widened).
LogicalResult convertMul(OpContext &ctx) {
  const auto *opts = ctx.options<schema::MulOptions>();
  auto a = inQuant(ctx, 0), b = inQuant(ctx, 1), out = outQuant(ctx);
  if (failed(a) || failed(b) || failed(out))
    return failure();
  if ((*a)->perChannel() || (*b)->perChannel())
    return ctx.fail("per-channel quantized operands are not supported");
  auto operands = widenOperands(ctx, 0, **a, **b);
  if (failed(operands))
    return failure();
  Value product = ctx.create<tosa::MulOp>(tensorOf(ctx.outputShape(0), i32Type(ctx)),
                                          operands->first, operands->second,
                                          ctx.builder().getI32IntegerAttr(0));
  float real = (*a)->scale() * (*b)->scale() / (*out)->scale();
  return finishProduct(ctx, product, {static_cast<double>(real)}, **out,
                       opts ? opts->fused_activation_function()
                            : schema::ActivationFunctionType::NONE);
}

} // namespace

void registerQuantizedOps(ConverterTable &table) {
  table[BuiltinOperator::CONV_2D] = convertConv2D;
  table[BuiltinOperator::DEPTHWISE_CONV_2D] = convertDepthwiseConv2D;
  table[BuiltinOperator::FULLY_CONNECTED] = convertFullyConnected;
  table[BuiltinOperator::MAX_POOL_2D] = convertMaxPool;
  table[BuiltinOperator::AVERAGE_POOL_2D] = convertAvgPool;
  table[BuiltinOperator::SOFTMAX] = convertSoftmax;
  table[BuiltinOperator::RELU] = convertRelu0;
  table[BuiltinOperator::RELU6] = convertRelu6;
  table[BuiltinOperator::RELU_N1_TO_1] = convertReluN1To1;
  table[BuiltinOperator::LOGISTIC] = convertLogistic;
  table[BuiltinOperator::TANH] = convertTanh;
  table[BuiltinOperator::QUANTIZE] = convertQuantize;
  table[BuiltinOperator::DEQUANTIZE] = convertDequantize;
  table[BuiltinOperator::ADD] = convertAdd;
  table[BuiltinOperator::SUB] = convertSub;
  table[BuiltinOperator::MUL] = convertMul;
  // Data movement copies bytes in TFLite: the float converters are
  // element-type agnostic.
  const ConverterTable &floats = converters();
  for (BuiltinOperator op :
       {BuiltinOperator::RESHAPE, BuiltinOperator::SQUEEZE,
        BuiltinOperator::EXPAND_DIMS, BuiltinOperator::TRANSPOSE,
        BuiltinOperator::SLICE, BuiltinOperator::STRIDED_SLICE,
        BuiltinOperator::GATHER})
    table[op] = floats.at(op);
}

} // namespace kiln::tfl
