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

#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

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
  // A multiplier of 2^31 or more (absurd scales) saturates instead of
  // shifting past the word (undefined in C++ and in TFLite alike).
  if (m.shift > 30)
    return x > 0 ? std::numeric_limits<int32_t>::max()
                 : (x < 0 ? std::numeric_limits<int32_t>::min() : 0);
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
      return ctx.fail("an effective quantization scale of " + shortNumber(s) +
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

/// The values of a constant i8/i32 tensor `v` (a tosa.const), or nullopt.
std::optional<std::vector<int64_t>> constantValues(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !attr.getElementType().isa<IntegerType>())
    return std::nullopt;
  std::vector<int64_t> values;
  values.reserve(attr.getNumElements());
  for (const APInt &x : attr.getValues<APInt>())
    values.push_back(x.getSExtValue());
  return values;
}

/// A product op's operands once the input zero point is folded away:
/// sum_k (x - zx) w = sum_k x w - zx sum_k w, so with constant weights of
/// zero point 0 the op multiplies raw int8 values (no subtraction in the
/// inner loop: plain linalg.matmul / convolutions on i8, which Kiln's
/// register-tiled kernels take) and the bias absorbs -zx sum_k w per
/// output channel. Padding then pads with zx explicitly, so padded taps
/// still cancel. `quantization` holds the TOSA zero
/// points to apply in the op (non-constant weights, or weights with a zero
/// point: uint8 models); zero points 0 when folded.
struct FoldedProduct {
  Value bias;
  tosa::ConvOpQuantizationAttr quantization;
  bool folded = false;
};

/// `weights` is [O, K...] (channel first: CONV_2D, FULLY_CONNECTED) or
/// [K..., O] (channel last: depthwise's [KH, KW, C, M] as [KH*KW, C*M]):
/// `channels` output channels, channel-major when `channelFirst`.
FailureOr<FoldedProduct> foldInputZeroPoint(OpContext &ctx, Value weights, Value bias,
                                            const ProductQuant &q, int64_t channels,
                                            bool channelFirst) {
  FoldedProduct r;
  r.bias = bias;
  r.quantization = tosa::ConvOpQuantizationAttr::get(ctx.context(), q.in->zeroPoint(),
                                                     q.weight->zeroPoint());
  auto w = constantValues(weights);
  auto b = constantValues(bias);
  if (q.weight->zeroPoint() != 0 || !w || !b || channels <= 0 ||
      w->size() % channels != 0 || static_cast<int64_t>(b->size()) != channels)
    return r;
  int64_t perChannel = w->size() / channels;
  std::vector<int32_t> folded(channels);
  for (int64_t o = 0; o < channels; ++o) {
    int64_t sum = 0;
    for (int64_t k = 0; k < perChannel; ++k)
      sum += channelFirst ? (*w)[o * perChannel + k] : (*w)[k * channels + o];
    int64_t value = (*b)[o] - static_cast<int64_t>(q.in->zeroPoint()) * sum;
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      return r; // keep the zero point in the op
    folded[o] = static_cast<int32_t>(value);
  }
  r.bias = ctx.constI32({channels}, folded);
  // TOSA requires quantization_info on i8 operands: zero points 0, which
  // kiln-drop-zero-points turns into the plain linalg ops.
  r.quantization = tosa::ConvOpQuantizationAttr::get(ctx.context(), 0, 0);
  r.folded = true;
  return r;
}

/// Pads the NHWC `input` by `pad` ([top, bottom, left, right]) with `value`.
Value padSpatial(OpContext &ctx, Value input, llvm::ArrayRef<int64_t> pad, int32_t value) {
  if (llvm::all_of(pad, [](int64_t p) { return p == 0; }))
    return input;
  llvm::ArrayRef<int64_t> s = shapeOf(input);
  llvm::SmallVector<int64_t> padded{s[0], s[1] + pad[0] + pad[1], s[2] + pad[2] + pad[3], s[3]};
  Value pads = ctx.constI32({4, 2}, {0, 0, static_cast<int32_t>(pad[0]), static_cast<int32_t>(pad[1]),
                                     static_cast<int32_t>(pad[2]), static_cast<int32_t>(pad[3]), 0, 0});
  return ctx.create<tosa::PadOp>(tensorOf(padded, i8Type(ctx)), input, pads,
                                 constI8(ctx, {}, {static_cast<int8_t>(value)}), nullptr);
}

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
  Value acc = ctx.create<ConvOp>(tensorOf(ctx.outputShape(0), i32Type(ctx)), input, weight,
                                 folded->bias, pad, window.stride, window.dilation,
                                 folded->quantization);
  return finishProduct(ctx, acc, productScales(*q.in, *q.weight, *q.out, q.in->fromUint8),
                       *q.out, act);
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
  return convolve<tosa::Conv2DOp>(ctx, *q, *input, *filter, *filter, *bias, *window,
                                  fShape[0], true, opts->fused_activation_function());
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
  auto window = windowOf(ctx, *opts, *input, fShape[1], fShape[2]);
  if (failed(bias) || failed(window))
    return failure();
  return convolve<tosa::DepthwiseConv2DOp>(ctx, *q, *input, *filter, weight, *bias,
                                           *window, fShape[3], false,
                                           opts->fused_activation_function());
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
  auto folded = foldInputZeroPoint(ctx, *weights, *bias, *q, units, true);
  if (failed(folded))
    return failure();
  Value acc = ctx.create<tosa::FullyConnectedOp>(
      tensorOf({rows, units}, i32Type(ctx)), flat, *weights, folded->bias,
      folded->quantization);
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

/// The pool's window fitted to TOSA (fitPadding: `input` may become a
/// slice of itself).
FailureOr<PoolWindow> poolWindow(OpContext &ctx, const schema::Pool2DOptions &opts,
                                 Value &input) {
  PoolWindow w{opts.filter_height(), opts.filter_width(), opts.stride_h(),
               opts.stride_w(), 0, 0, 0, 0};
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
  Value positive = ctx.create<tosa::GreaterOp>(
      tensorOf(shapeOf(sum), b.getI1Type()), sum, ctx.constI32({1, 1, 1, 1}, {0}));
  Value nudge = ctx.create<tosa::SelectOp>(i32(shapeOf(sum)), positive,
                                           ctx.constI32(grid, half),
                                           ctx.constI32(grid, negHalf));
  Value nudged = ctx.create<tosa::AddOp>(i32(shapeOf(sum)), sum, nudge);
  Value avg = ctx.create<tosa::DivOp>(i32(shapeOf(sum)), nudged,
                                      ctx.constI32(grid, count));
  if (fromUint8)
    avg = ctx.create<tosa::SubOp>(i32(shapeOf(sum)), avg, ctx.constI32({1, 1, 1, 1}, {128}));
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
  int32_t qlo = std::max(-128, o.zeroPoint() + saturatingCast(std::round(lo / o.scale())));
  int32_t qhi = std::isinf(hi) ? 127
                               : std::min(127, o.zeroPoint() + saturatingCast(std::round(hi / o.scale())));
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
    return saturatingCast(rescaled + static_cast<float>(o.zeroPoint()));
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


/// LEAKY_RELU (TFLite leaky_relu int8): x - zi >= 0 ? MBQM(x - zi, si / so)
/// : MBQM(x - zi, si * alpha / so), plus zo; both multipliers computed in
/// float, then widened.
LogicalResult convertLeakyRelu(OpContext &ctx) {
  const auto *opts = ctx.options<schema::LeakyReluOptions>();
  float alpha = opts ? opts->alpha() : 0.2f;
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  if (alpha < 0.0f)
    return ctx.fail("a negative alpha is not supported on int8");
  QuantizedMultiplier identity =
      quantizeMultiplier(static_cast<double>(i.scale() / o.scale()));
  QuantizedMultiplier slope =
      quantizeMultiplier(static_cast<double>(i.scale() * alpha / o.scale()));
  return convertByTable(ctx, [&](int32_t q) {
    int32_t v = q - i.zeroPoint();
    return o.zeroPoint() + multiplyByQuantizedMultiplier(v, v >= 0 ? identity : slope);
  });
}

// gemmlowp's 16-bit primitives, as TFLite's int8 HARD_SWISH uses them.
int16_t roundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  int32_t ab = static_cast<int32_t>(a) * b;
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}
int16_t doublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}
int16_t saturatingLeftShift16(int16_t value, int amount) {
  int64_t r = static_cast<int64_t>(value) * (1LL << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(r, -32768, 32767));
}
/// TFLite's DownScaleInt32ToInt16Multiplier: rounds a 31-bit multiplier to
/// 15 bits.
int16_t downScaleMultiplier(int32_t m) {
  if (m >= std::numeric_limits<int32_t>::max() - (1 << 15))
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((m + (1 << 15)) >> 16);
}

/// HARD_SWISH int8 (TFLite reference_ops::HardSwish, quantized): x on a
/// 2^7-finer input scale, a "relu-ish" factor in [0, 1] from the input
/// rescaled so 3.0 is 2^15, their 16-bit fixed-point product, shifted to the
/// output scale. Evaluated per int8 value into a table.
LogicalResult convertHardSwish(OpContext &ctx) {
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  const float hiresInputScale = (1.0f / 128.0f) * i.scale();
  const float reluishScale = 3.0f / 32768.0f;
  QuantizedMultiplier outM = quantizeMultiplier(static_cast<double>(hiresInputScale / o.scale()));
  QuantizedMultiplier reluM = quantizeMultiplier(static_cast<double>(hiresInputScale / reluishScale));
  if (outM.shift > 0)
    return ctx.fail("the output scale is too small for TFLite's int8 HARD_SWISH "
                    "(input scale / 128 / output scale must be below 1)");
  int16_t outMult = downScaleMultiplier(outM.multiplier);
  int16_t reluMult = downScaleMultiplier(reluM.multiplier);
  auto divideByPOT16 = [](int16_t x, int exponent) {
    return static_cast<int16_t>(roundingDivideByPOT(x, exponent));
  };
  return convertByTable(ctx, [&](int32_t q) {
    int16_t value = static_cast<int16_t>(q - i.zeroPoint());
    int16_t hires = static_cast<int16_t>(value * (1 << 7));
    int16_t preshift = roundingDoublingHighMul16(hires, outMult);
    int16_t reluish = hires;
    if (reluM.shift > 0)
      reluish = saturatingLeftShift16(reluish, reluM.shift - 1);
    reluish = roundingDoublingHighMul16(reluish, reluMult);
    if (reluM.shift > 0)
      reluish = saturatingLeftShift16(reluish, 1);
    if (reluM.shift < 0)
      reluish = divideByPOT16(reluish, -reluM.shift);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    int16_t product = doublingHighMul16(reluish, preshift);
    int32_t result = divideByPOT16(product, -outM.shift) + o.zeroPoint();
    return result;
  });
}

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
  return ctx.setOutput(0, ctx.create<tosa::PadOp>(ctx.outputType(0), *input,
                                                  ctx.constI32({rank, 2}, pads),
                                                  padConst, nullptr));
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
                      ") has another quantization than the output (" +
                      describeQuant(o) + "); TFLite's int8 kernel requires "
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

// --- MEAN ---------------------------------------------------------------------

/// MEAN on int8 (TFLite 2.9 reduce.cc EvalMean), by case:
/// - keep_dims over the H and W of a 4-D input (reference_integer_ops::Mean):
///   s = sum(x - zi); s = MBQM(s, si / so); s rounded-divided (half away
///   from zero) by the element count; plus zo.
/// - equal input and output quantization (reference_ops::Mean): the int32
///   sum of the raw values divided by the count, truncating.
/// - otherwise (QuantizedMeanOrSum): round(float(sum) / n * (si / so) -
///   zi * (si / so)) + zo in float; evaluated at import for every possible
///   sum into a table (counts up to 1024).
LogicalResult convertMean(OpContext &ctx) {
  const auto *opts = ctx.options<schema::ReducerOptions>();
  bool keepDims = opts && opts->keep_dims();
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto input = ctx.input(0);
  auto axesOr = ctx.constantInts(1);
  if (failed(in) || failed(out) || failed(input) || failed(axesOr))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  int64_t rank = shape.size();
  std::vector<int64_t> axes;
  for (int64_t a : *axesOr) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank)
      return ctx.fail("axis " + llvm::Twine(a) + " is out of range for rank " +
                      llvm::Twine(rank));
    if (!llvm::is_contained(axes, axis))
      axes.push_back(axis);
  }
  std::sort(axes.begin(), axes.end());
  auto b = ctx.builder();
  // The int32 sum of the raw values over `axes`, kept as size-1 dimensions.
  Value sum = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), *input);
  llvm::SmallVector<int64_t> kept(shape);
  int64_t n = 1;
  for (int64_t axis : axes) {
    n *= shape[axis];
    kept[axis] = 1;
    sum = ctx.create<tosa::ReduceSumOp>(tensorOf(kept, i32Type(ctx)), sum,
                                        b.getI64IntegerAttr(axis));
  }
  if (n <= 0)
    return ctx.fail("MEAN over zero elements");
  // The result's own shape (keep_dims or not): setOutput checks it against
  // the shape the model declares, never a reshape to the declared one.
  llvm::SmallVector<int64_t> resultShape;
  for (int64_t d = 0; d < rank; ++d)
    if (keepDims || !llvm::is_contained(axes, d))
      resultShape.push_back(kept[d]);
  auto i32 = tensorOf(kept, i32Type(ctx));
  llvm::SmallVector<int64_t> ones(rank, 1);
  Value result;
  bool spatial = keepDims && rank == 4 && axes == std::vector<int64_t>{1, 2};
  if (spatial) {
    Value centered = ctx.create<tosa::SubOp>(i32, sum, ctx.constI32(ones, {int32_t(i.zeroPoint() * n)}));
    auto scaled = rescale(ctx, centered, i32Type(ctx), 0, 0,
                          {static_cast<double>(i.scale()) / static_cast<double>(o.scale())});
    if (failed(scaled))
      return failure();
    Value positive = ctx.create<tosa::GreaterOp>(tensorOf(kept, b.getI1Type()), *scaled,
                                                 ctx.constI32(ones, {0}));
    Value nudge = ctx.create<tosa::SelectOp>(i32, positive, ctx.constI32(ones, {int32_t(n / 2)}),
                                             ctx.constI32(ones, {-int32_t(n / 2)}));
    Value divided = ctx.create<tosa::DivOp>(
        i32, ctx.create<tosa::AddOp>(i32, *scaled, nudge), ctx.constI32(ones, {int32_t(n)}));
    result = ctx.create<tosa::AddOp>(i32, divided, ctx.constI32(ones, {o.zeroPoint()}));
  } else if (i.scales == o.scales && i.zeroPoints == o.zeroPoints) {
    result = ctx.create<tosa::DivOp>(i32, sum, ctx.constI32(ones, {int32_t(n)}));
  } else {
    if (n > 1024)
      return ctx.fail("MEAN over " + llvm::Twine(n) + " elements with a requantized "
                      "output is not supported (at most 1024)");
    const float scale = i.scale() / o.scale();
    const float bias = -static_cast<float>(i.zeroPoint() + (i.fromUint8 ? 128 : 0)) * scale;
    const int32_t shift = i.fromUint8 ? 128 : 0, outShift = o.fromUint8 ? 128 : 0;
    std::vector<int8_t> table(255 * n + 1);
    for (int64_t s = -128 * n; s <= 127 * n; ++s) {
      // The sum TFLite sees is of the stored values (uint8: + 128 each).
      int64_t stored = s + shift * n;
      float mean = static_cast<float>(stored) / static_cast<float>(n);
      float r = std::round(mean * scale + bias) + static_cast<float>(o.zeroPoint() + outShift);
      r = std::min(r, static_cast<float>(o.fromUint8 ? 255 : 127));
      r = std::max(r, static_cast<float>(o.fromUint8 ? 0 : -128));
      table[s + 128 * n] = static_cast<int8_t>(static_cast<int32_t>(r) - outShift);
    }
    int64_t total = 1;
    for (int64_t d : kept)
      total *= d;
    Value index = ctx.create<tosa::AddOp>(i32, sum, ctx.constI32(ones, {int32_t(128 * n)}));
    Value values = ctx.reshape(constI8(ctx, {static_cast<int64_t>(table.size())}, table),
                               {1, static_cast<int64_t>(table.size()), 1});
    Value gathered = ctx.create<tosa::GatherOp>(tensorOf({1, total, 1}, i8Type(ctx)), values,
                                                ctx.reshape(index, {1, total}));
    return ctx.setOutput(0, ctx.reshape(gathered, resultShape));
  }
  Value clamped = clampInt(ctx, result, -128, 127);
  Value narrow = ctx.create<tosa::CastOp>(tensorOf(kept, i8Type(ctx)), clamped);
  return ctx.setOutput(0, ctx.reshape(narrow, resultShape));
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
      tosa::MatMulOpQuantizationAttr::get(ctx.context(), (*a)->zeroPoint(),
                                          (*w)->zeroPoint()));
  if (failed(product))
    return failure();
  // The input product in float, divided in double (batch_matmul.cc).
  double real = static_cast<double>((*a)->scale() * (*w)->scale()) /
                static_cast<double>((*out)->scale());
  auto result = rescale(ctx, *product, i8Type(ctx), 0, (*out)->zeroPoint(), {real});
  if (failed(result))
    return failure();
  return ctx.setOutput(0, *result);
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
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(tensorOf({n, oh, ow, c}, i8),
                                                   clampInt(ctx, result, -128, 127)));
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
  table[BuiltinOperator::LEAKY_RELU] = convertLeakyRelu;
  table[BuiltinOperator::HARD_SWISH] = convertHardSwish;
  table[BuiltinOperator::PAD] = convertPad;
  table[BuiltinOperator::PADV2] = convertPad;
  table[BuiltinOperator::CONCATENATION] = convertConcatenation;
  table[BuiltinOperator::MEAN] = convertMean;
  table[BuiltinOperator::BATCH_MATMUL] = convertBatchMatMul;
  table[BuiltinOperator::RESIZE_BILINEAR] = convertResizeBilinear;
  // Data movement copies bytes in TFLite: the float converters are
  // element-type agnostic.
  const ConverterTable &floats = converters();
  for (BuiltinOperator op :
       {BuiltinOperator::RESHAPE, BuiltinOperator::SQUEEZE,
        BuiltinOperator::EXPAND_DIMS, BuiltinOperator::TRANSPOSE,
        BuiltinOperator::SLICE, BuiltinOperator::STRIDED_SLICE,
        BuiltinOperator::GATHER, BuiltinOperator::RESIZE_NEAREST_NEIGHBOR})
    table[op] = floats.at(op);
}

} // namespace kiln::tfl
