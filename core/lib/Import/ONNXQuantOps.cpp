//===- ONNXQuantOps.cpp - Quantized ONNX operators -> TOSA ----------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv,
// QLinearMatMul, ConvInteger and MatMulInteger, computed as ONNX Runtime
// 1.30's CPU kernels compute them (onnxruntime/core/providers/cpu/
// quantization, MLAS quantize.cpp), int8 and uint8:
//
// - Storage: an int8 or uint8 tensor is an i8 value; a uint8 q is held as
//   q - 128 and its zero point as zp - 128 (the TFLite front end's rule,
//   TFLiteQuant.h): q - zp is unchanged, so one set of integer ops serves
//   both, and the model keeps uint8 inputs and outputs (bit 7 flipped at
//   the boundary, kiln.element_type "u8").
// - QuantizeLinear: y = saturate(nearbyint(x / scale) + zp), halves to
//   even (MlasQuantizeLinear divides in float and rounds with cvtps2dq).
//   TOSA 0.60 has no float division, so the float quotient's rounding is
//   reproduced: p = x * (1/scale) picks k = floor(p); D = x - (k + 1/2) *
//   scale is computed without rounding error (scale split into 13 + 11
//   significant bits, so each partial product of the half-integer fits a
//   float, and the subtractions cancel exactly); the float quotient is
//   k + 1/2 itself, a tie rounded to even, when |D| is at most half an ulp
//   of k + 1/2 times scale, else the sign of D decides.
// - DequantizeLinear: (float)(int32(x) - zp) * scale, one float multiply.
// - DynamicQuantizeLinear (uint8): min/max over the tensor with 0
//   included, scale = (max - min) / 255 correctly rounded (the residual of
//   (max - min) - 255 q is exact), 1 when max == min; zp =
//   nearbyint(clamp(-min / scale, 0, 255)); y quantized as above. All of it
//   at run time.
// - QLinearConv, QLinearMatMul: the int32 accumulator of (x - zx)(w - zw)
//   plus the int32 bias, requantized in float as MlasRequantizeOutput does:
//   nearbyint(float(acc) * (x_scale * w_scale / y_scale)) + y_zp, halves
//   to even, saturated; the multiplier is computed in float in that order
//   (ORT's ComputeOutputScale), per output channel / column where the
//   weight scale is. ORT's QLinear kernels use float requantization, not
//   fixed point, so Kiln does too: bit-exact, and on the integer-only
//   Cortex-M0+ target the float lives inside the operator (software float,
//   allowed there: IntegerTargets.h).
// - ConvInteger, MatMulInteger: the int32 accumulator itself.
//
// The integer products run on raw i8 values with the weight zero point in
// TOSA's quantization_info and the input zero point folded out:
// sum (x - zx)(w - zw) = sum x (w - zw) - zx sum (w - zw), the second term a
// per-channel constant times zx, so a symmetric weight (int8 zero point 0,
// or uint8 zero point 128) gives plain i8 x i8 convolutions and matmuls that
// Kiln's int8 kernels take. Convolution padding pads x with zx explicitly
// (ORT's im2col pads with the zero point). An input zero point computed at
// run time (DynamicQuantizeLinear's) works the same way with the product
// and the padding value as SSA values.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "ONNXQuantHelpers.h"
#include "ONNXWindow.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace mlir;

namespace kiln::onnx {

bool movesQuantizedData(const std::string &opType) {
  return opType == "Reshape" || opType == "Flatten" || opType == "Squeeze" ||
         opType == "Unsqueeze" || opType == "Transpose" || opType == "Identity" ||
         opType == "Concat";
}

namespace quant {

bool isQuantType(int32_t t) { return t == kInt8 || t == kUInt8; }

/// The storage offset of `type`: 128 for uint8 (held as q - 128), else 0.
int32_t offsetOf(int32_t type) { return type == kUInt8 ? 128 : 0; }

Type i8Type(NodeContext &ctx) { return ctx.builder().getIntegerType(8); }
Type i32Type(NodeContext &ctx) { return ctx.builder().getI32Type(); }
Type i1Type(NodeContext &ctx) { return ctx.builder().getI1Type(); }

/// The broadcast shape of two equal-rank operands.
std::vector<int64_t> joint(Value a, Value b) {
  std::vector<int64_t> sa = shapeOf(a), sb = shapeOf(b);
  for (size_t k = 0; k < sa.size() && k < sb.size(); ++k)
    sa[k] = std::max(sa[k], sb[k]);
  return sa;
}

Value mul(NodeContext &ctx, Value a, Value b) {
  int64_t rank = std::max(shapeOf(a).size(), shapeOf(b).size());
  a = ctx.broadcastRank(a, rank);
  b = ctx.broadcastRank(b, rank);
  return ctx.create<tosa::MulOp>(tensorOf(joint(a, b), elementOf(a)), a, b,
                                 ctx.builder().getI32IntegerAttr(0));
}

Value select(NodeContext &ctx, Value c, Value a, Value b) {
  int64_t rank = std::max({shapeOf(a).size(), shapeOf(b).size(), shapeOf(c).size()});
  a = ctx.broadcastRank(a, rank);
  b = ctx.broadcastRank(b, rank);
  c = ctx.broadcastRank(c, rank);
  std::vector<int64_t> shape = joint(a, b), sc = shapeOf(c);
  for (size_t k = 0; k < shape.size(); ++k)
    shape[k] = std::max(shape[k], sc[k]);
  return ctx.create<tosa::SelectOp>(tensorOf(shape, elementOf(a)), c, a, b);
}

Value cast(NodeContext &ctx, Value v, Type element) {
  if (elementOf(v) == element)
    return v;
  return ctx.create<tosa::CastOp>(tensorOf(shapeOf(v), element), v);
}

Value floorOf(NodeContext &ctx, Value v) { return ctx.create<tosa::FloorOp>(v.getType(), v); }

/// An f32 constant of `rank` holding `values` along `axis` (one value:
/// shape [1, ..., 1]).
Value channelF32(NodeContext &ctx, llvm::ArrayRef<float> values, int64_t rank, int64_t axis) {
  std::vector<int64_t> shape(rank, 1);
  if (values.size() > 1)
    shape[axis] = int64_t(values.size());
  return ctx.constF32(shape, values);
}

Value channelI32(NodeContext &ctx, llvm::ArrayRef<int32_t> values, int64_t rank, int64_t axis) {
  std::vector<int64_t> shape(rank, 1);
  if (values.size() > 1)
    shape[axis] = int64_t(values.size());
  return ctx.constI32(shape, values);
}

Value constI8(NodeContext &ctx, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int8_t> values) {
  auto type = tensorOf(shape, i8Type(ctx));
  return ctx.builder()
      .create<tosa::ConstOp>(ctx.loc(), type, DenseElementsAttr::get(type, values))
      .getResult();
}

/// nearbyint of the finite f32 `p` (halves to even): f = floor(p), up when
/// p - f > 1/2 or p - f == 1/2 and f is odd.
Value roundHalfEven(NodeContext &ctx, Value p) {
  int64_t rank = shapeOf(p).size();
  Value f = floorOf(ctx, p);
  Value d = binary<tosa::SubOp>(ctx, p, f);
  Value half = ctx.scalarF32(0.5f, rank);
  Value hf = mul(ctx, f, half);
  Value odd = compare<tosa::GreaterOp>(ctx, hf, floorOf(ctx, hf));
  Value tie =
      ctx.create<tosa::LogicalAndOp>(odd.getType(), compare<tosa::EqualOp>(ctx, d, half), odd);
  Value up =
      ctx.create<tosa::LogicalOrOp>(odd.getType(), compare<tosa::GreaterOp>(ctx, d, half), tie);
  return select(ctx, up, binary<tosa::AddOp>(ctx, f, ctx.scalarF32(1.0f, rank)), f);
}

/// `v` unchanged, through a clamp to [-3e38, 3e38]: Kiln's code generation
/// lets LLVM reassociate and contract float arithmetic, and an error-free
/// transformation (a Veltkamp split, an exact residual) must keep its order;
/// the clamp's min/max carry no such flags, so nothing is rewritten across
/// it. (Full-range bounds would be folded away.)
Value ordered(NodeContext &ctx, Value v) { return ctx.clamp(v, -3.0e38f, 3.0e38f); }

/// `s` with the low 11 bits of its significand cleared.
float headOf(float s) {
  uint32_t bits;
  std::memcpy(&bits, &s, 4);
  bits &= ~uint32_t(0x7FF);
  float h;
  std::memcpy(&h, &bits, 4);
  return h;
}

ScaleParts constantScaleParts(NodeContext &ctx, llvm::ArrayRef<float> scales, int64_t rank,
                              int64_t axis) {
  std::vector<float> r, h, t;
  for (float s : scales) {
    r.push_back(1.0f / s);
    h.push_back(headOf(s));
    t.push_back(s - headOf(s));
  }
  return {channelF32(ctx, scales, rank, axis), channelF32(ctx, r, rank, axis),
          channelF32(ctx, h, rank, axis), channelF32(ctx, t, rank, axis)};
}

/// The parts of a scale computed at run time (Veltkamp's split: c = s *
/// (2^11 + 1), head = c - (c - s)).
ScaleParts runtimeScaleParts(NodeContext &ctx, Value s) {
  int64_t rank = shapeOf(s).size();
  Value c = ordered(ctx, mul(ctx, s, ctx.scalarF32(2049.0f, rank)));
  Value head =
      ordered(ctx, binary<tosa::SubOp>(ctx, c, ordered(ctx, binary<tosa::SubOp>(ctx, c, s))));
  return {s, ctx.create<tosa::ReciprocalOp>(s.getType(), s), head,
          binary<tosa::SubOp>(ctx, s, head)};
}

/// nearbyint(fl(x / s)) (halves to even) for f32 `x` and positive `s`, as
/// an integral f32 in [-512, 513] (larger quotients saturate there; callers
/// clamp to the quantized range); NaN gives -1024. With k = floor(x / s)
/// and m = k + 1/2: the float quotient is m itself (a tie, rounded to the
/// even one of k, k + 1) when |x / s - m| is at most half an ulp of m, i.e.
/// |x - m s| <= 2^(e - 24) s for 2^e <= |m| < 2^(e+1); otherwise the sign
/// of x - m s decides.
Value roundQuotient(NodeContext &ctx, Value x, const ScaleParts &s) {
  int64_t rank = shapeOf(x).size();
  Value p = ctx.clamp(mul(ctx, x, s.reciprocal), -512.0f, 512.0f);
  Value k = floorOf(ctx, p);
  Value m = binary<tosa::AddOp>(ctx, k, ctx.scalarF32(0.5f, rank));
  // x - m * s exactly: m has at most 11 significant bits, so m * head and
  // m * tail are exact; x - m * head is exact near the boundary (Sterbenz).
  Value v = ordered(ctx, binary<tosa::SubOp>(ctx, x, mul(ctx, m, s.head)));
  Value d = binary<tosa::SubOp>(ctx, v, mul(ctx, m, s.tail));
  Value zero = ctx.scalarF32(0.0f, rank);
  Value hk = mul(ctx, k, ctx.scalarF32(0.5f, rank));
  Value odd = compare<tosa::GreaterOp>(ctx, hk, floorOf(ctx, hk));
  // Half an ulp of m, times s (exact: powers of two), for |m| in [0.5, 512.5].
  Value absM = ctx.create<tosa::AbsOp>(m.getType(), m);
  Value window = mul(ctx, s.scale, ctx.scalarF32(std::ldexp(1.0f, -25), rank));
  for (int e = 0; e <= 9; ++e)
    window = select(
        ctx, compare<tosa::GreaterEqualOp>(ctx, absM, ctx.scalarF32(std::ldexp(1.0f, e), rank)),
        mul(ctx, s.scale, ctx.scalarF32(std::ldexp(1.0f, e - 24), rank)), window);
  Value absD = ctx.create<tosa::AbsOp>(d.getType(), d);
  Value tie = compare<tosa::GreaterEqualOp>(ctx, window, absD);
  Value up = select(ctx, tie, odd, compare<tosa::GreaterOp>(ctx, d, zero));
  Value n = select(ctx, up, binary<tosa::AddOp>(ctx, k, ctx.scalarF32(1.0f, rank)), k);
  return select(ctx, compare<tosa::EqualOp>(ctx, x, x), n, ctx.scalarF32(-1024.0f, rank));
}

/// The i8 storage of saturate(n + zp): `n` integral f32, `zp` f32 in the
/// storage domain (uint8 zero point - 128); the storage range is [-128, 127]
/// for both types.
Value saturateToI8(NodeContext &ctx, Value n, Value zp) {
  Value y = ctx.clamp(binary<tosa::AddOp>(ctx, n, zp), -128.0f, 127.0f);
  return cast(ctx, y, i8Type(ctx));
}

// --- Parameters ------------------------------------------------------------------

/// A scale and zero point pair known at import: one value per tensor or one
/// per index of `axis`. Zero points in the storage domain.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
  int32_t type = kUInt8;
  int64_t axis = -1;
};

/// "int8" etc. of a quantized type for messages; refuses other types.
LogicalResult checkQuantType(NodeContext &ctx, int32_t type, const std::string &what) {
  if (isQuantType(type))
    return success();
  return ctx.fail(what + " is " + dataTypeName(type) +
                  "; Kiln supports int8 and uint8 quantization (per tensor and per axis)");
}

/// The zero point input `zi` (int8/uint8, constant) or 0 of `defaultType`;
/// `count` values expected (1 or the channel count).
FailureOr<std::pair<int32_t, std::vector<int32_t>>>
constantZeroPoints(NodeContext &ctx, int zi, int32_t defaultType, size_t count) {
  if (!ctx.hasInput(zi))
    return std::make_pair(defaultType, std::vector<int32_t>(count, -offsetOf(defaultType)));
  int32_t type = ctx.inputType(zi);
  if (failed(checkQuantType(ctx, type, "the zero point (input " + std::to_string(zi) + ")")))
    return failure();
  const Tensor *t = ctx.constant(zi);
  if (!t)
    return ctx.fail("the zero point (input " + llvm::Twine(zi) + " '" + ctx.node().inputs[zi] +
                    "') must be a constant: its value must be known when the model is compiled");
  if (size_t(t->numElements()) != count && t->numElements() != 1)
    return ctx.fail("the zero point (input " + llvm::Twine(zi) + ") has " +
                    llvm::Twine(t->numElements()) + " values; its scale has " + llvm::Twine(count));
  std::vector<int32_t> zps;
  for (size_t k = 0; k < count; ++k)
    zps.push_back(int32_t(t->ints[t->numElements() == 1 ? 0 : k]) - offsetOf(type));
  return std::make_pair(type, zps);
}

/// A scale input `si` known at import: one positive finite value, or (when
/// `channels` > 0) one per channel.
FailureOr<std::vector<float>> constantScales(NodeContext &ctx, int si, int64_t channels) {
  const Tensor *t = ctx.constant(si);
  if (!t)
    return ctx.fail("the scale (input " + llvm::Twine(si) + " '" +
                    (ctx.hasInput(si) ? ctx.node().inputs[si] : "") +
                    "') must be a constant: its value must be known when the model is compiled");
  if (!t->isFloat())
    return ctx.fail("the scale (input " + llvm::Twine(si) + ") is " + dataTypeName(t->dataType) +
                    "; it must be a float tensor");
  if (t->numElements() != 1 &&
      (channels <= 0 || t->numElements() != channels || t->dims.size() != 1))
    return ctx.fail("the scale (input " + llvm::Twine(si) + ") has shape " + shapeString(t->dims) +
                    "; Kiln supports one scale per tensor" +
                    (channels > 0 ? " or one per channel ([" + std::to_string(channels) + "])"
                                  : std::string()) +
                    " (block quantization is not supported)");
  for (float s : t->floats)
    if (!(s > 0) || !std::isfinite(s))
      return ctx.fail("the scale (input " + llvm::Twine(si) + ") holds " +
                      llvm::Twine(std::to_string(s)) + "; scales must be positive and finite");
  return t->floats;
}

/// Refuses QuantizeLinear / DequantizeLinear attributes of opsets 19 and 21
/// that Kiln does not implement (block_size; output_dtype other than the
/// zero point's).
LogicalResult checkQDQAttributes(NodeContext &ctx) {
  if (ctx.attrInt("block_size", 0) != 0)
    return ctx.fail("block_size is " + llvm::Twine(ctx.attrInt("block_size", 0)) +
                    ": block quantization is not supported; Kiln supports per-tensor and "
                    "per-axis scales");
  return success();
}

/// The per-tensor or per-axis parameters of QuantizeLinear / DequantizeLinear
/// (inputs 1 scale, 2 zero point) on data of shape `shape`.
FailureOr<QuantParams> qdqParams(NodeContext &ctx, llvm::ArrayRef<int64_t> shape,
                                 int32_t defaultType, bool checkZeroPoint = true) {
  if (failed(checkQDQAttributes(ctx)))
    return failure();
  QuantParams q;
  const Tensor *st = ctx.constant(1);
  int64_t rank = int64_t(shape.size());
  bool perAxis = st && st->numElements() != 1;
  if (perAxis) {
    if (ctx.opset() < 13)
      return ctx.fail("the scale has " + llvm::Twine(st->numElements()) +
                      " values; before opset 13 the scale is one value per tensor");
    q.axis = normalizeAxis(ctx.attrInt("axis", 1), rank);
    if (q.axis < 0)
      return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 1)) +
                      " is out of range for an input of rank " + llvm::Twine(rank));
  }
  FailureOr<std::vector<float>> scales = constantScales(ctx, 1, perAxis ? shape[q.axis] : 0);
  if (failed(scales))
    return failure();
  q.scales = *scales;
  if (!checkZeroPoint) // an int32 input: zero point 0, checked by the caller
    return q;
  auto zps = constantZeroPoints(ctx, 2, defaultType, q.scales.size());
  if (failed(zps))
    return failure();
  q.type = zps->first;
  q.zeroPoints = zps->second;
  return q;
}

/// The zero point of an integer product's input, known or computed at run
/// time (DynamicQuantizeLinear's): `value` in the storage domain, or
/// `ssa` an i8 tensor of one element (storage domain too).
struct ZeroPoint {
  int32_t value = 0;
  Value ssa;
  bool zero() const { return !ssa && value == 0; }
};

/// Input `zi`, the zero point of data input `di`; absent: 0 of the data's
/// type. `allowRuntime` takes a computed one-element tensor.
FailureOr<ZeroPoint> zeroPointOf(NodeContext &ctx, int zi, int di, bool allowRuntime,
                                 std::vector<int32_t> *perChannel = nullptr) {
  ZeroPoint z;
  int32_t dataType = ctx.inputType(di);
  z.value = -offsetOf(dataType);
  if (!ctx.hasInput(zi))
    return z;
  int32_t type = ctx.inputType(zi);
  if (type != dataType)
    return ctx.fail("the zero point (input " + llvm::Twine(zi) + ") is " + dataTypeName(type) +
                    " and its data (input " + llvm::Twine(di) + ") " + dataTypeName(dataType) +
                    "; they must have one type");
  if (const Tensor *t = ctx.constant(zi)) {
    if (t->numElements() < 1)
      return ctx.fail("the zero point (input " + llvm::Twine(zi) + ") is empty");
    z.value = int32_t(t->ints[0]) - offsetOf(type);
    for (int64_t k = 0; k < t->numElements(); ++k) {
      if (perChannel)
        perChannel->push_back(int32_t(t->ints[k]) - offsetOf(type));
      else if (t->ints[k] != t->ints[0])
        return ctx.fail("the zero point (input " + llvm::Twine(zi) +
                        ") holds different values; Kiln takes one zero point here");
    }
    return z;
  }
  if (!allowRuntime)
    return ctx.fail("the zero point (input " + llvm::Twine(zi) + " '" + ctx.node().inputs[zi] +
                    "') must be a constant: its value must be known when the model is compiled");
  FailureOr<Value> v = ctx.quantizedInput(zi);
  if (failed(v))
    return failure();
  if (product(shapeOf(*v)) != 1)
    return ctx.fail("the zero point (input " + llvm::Twine(zi) + ") has shape " +
                    shapeString(shapeOf(*v)) +
                    "; a zero point computed at run time must be "
                    "one value");
  z.ssa = ctx.reshape(*v, {});
  return z;
}

// --- QuantizeLinear / DequantizeLinear --------------------------------------------

/// Requantizes the i32 `acc` (channels along its last dimension) as
/// MlasRequantizeOutput: nearbyint(float(acc) * scale) + zp, saturated.
Value requantize(NodeContext &ctx, Value acc, llvm::ArrayRef<float> scales, int32_t zp) {
  int64_t rank = int64_t(shapeOf(acc).size());
  Value f = cast(ctx, acc, ctx.builder().getF32Type());
  Value p = ctx.clamp(mul(ctx, f, channelF32(ctx, scales, rank, rank - 1)), -1024.0f, 1024.0f);
  return saturateToI8(ctx, roundHalfEven(ctx, p), ctx.scalarF32(float(zp), rank));
}

} // namespace quant

using namespace quant;

namespace {

/// QuantizeLinear (10, 13, 19, 21): y = saturate(nearbyint(x / y_scale) +
/// y_zero_point), per tensor or along `axis` (13+); y is uint8 without a
/// zero point (or output_dtype, 21). A constant x is quantized at import.
LogicalResult convertQuantizeLinear(NodeContext &ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 3)
    return ctx.fail("QuantizeLinear takes 2 or 3 inputs; it has " + llvm::Twine(ctx.numInputs()));
  int32_t defaultType = kUInt8;
  if (int64_t dtype = ctx.attrInt("output_dtype", 0)) {
    if (failed(checkQuantType(ctx, int32_t(dtype), "output_dtype")))
      return failure();
    defaultType = int32_t(dtype);
    if (ctx.hasInput(2) && ctx.inputType(2) != dtype)
      return ctx.fail("output_dtype is " + dataTypeName(int32_t(dtype)) + " and the zero point " +
                      dataTypeName(ctx.inputType(2)) + "; they must agree");
  }
  if (!isFloatType(ctx.inputType(0)))
    return ctx.fail("input 0 is " + dataTypeName(ctx.inputType(0)) +
                    "; QuantizeLinear takes a float tensor");
  std::vector<int64_t> shape = ctx.inputShape(0);
  int64_t rank = int64_t(shape.size());
  FailureOr<QuantParams> q = qdqParams(ctx, shape, defaultType);
  if (failed(q))
    return failure();
  if (const Tensor *x = ctx.constant(0)) {
    // ORT: std::nearbyintf(x / scale) + zero point, saturated.
    Tensor y;
    y.dataType = q->type;
    y.dims = x->dims;
    int64_t inner = 1;
    if (q->axis >= 0)
      for (int64_t k = q->axis + 1; k < rank; ++k)
        inner *= shape[k];
    for (int64_t i = 0; i < x->numElements(); ++i) {
      size_t c = q->axis < 0 ? 0 : size_t((i / inner) % shape[q->axis]);
      float v = std::nearbyint(x->floats[i] / q->scales[c]) + float(q->zeroPoints[c]);
      v = std::isnan(x->floats[i]) ? -128.0f : std::clamp(v, -128.0f, 127.0f);
      y.ints.push_back(int64_t(v) + offsetOf(q->type));
    }
    return ctx.setConstant(0, std::move(y));
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  ScaleParts parts = constantScaleParts(ctx, q->scales, rank, q->axis);
  std::vector<float> zps(q->zeroPoints.begin(), q->zeroPoints.end());
  Value n = roundQuotient(ctx, *x, parts);
  return ctx.setQuantizedOutput(0, saturateToI8(ctx, n, channelF32(ctx, zps, rank, q->axis)),
                                q->type);
}

/// DequantizeLinear (10, 13, 19, 21): y = (x - x_zero_point) * x_scale in
/// float, per tensor or along `axis`; x int8, uint8 or int32 (zero point 0).
/// A constant x is dequantized at import; a scale and zero point computed
/// at run time (DynamicQuantizeLinear's) are taken per tensor.
LogicalResult convertDequantizeLinear(NodeContext &ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 3)
    return ctx.fail("DequantizeLinear takes 2 or 3 inputs; it has " + llvm::Twine(ctx.numInputs()));
  int32_t type = ctx.inputType(0);
  if (!isQuantType(type) && type != kInt32)
    return ctx.fail("input 0 is " + dataTypeName(type) +
                    "; Kiln supports int8 and uint8 quantization (and int32 with zero point 0)");
  if (failed(checkQDQAttributes(ctx)))
    return failure();
  std::vector<int64_t> shape = ctx.inputShape(0);
  int64_t rank = int64_t(shape.size());
  Value scale, zp;
  int64_t axis = -1;
  if (!ctx.constant(1) && !ctx.constant(0)) {
    // Computed per-tensor parameters.
    FailureOr<Value> s = ctx.input(1);
    if (failed(s))
      return failure();
    if (product(shapeOf(*s)) != 1)
      return ctx.fail("the scale (input 1) has shape " + shapeString(shapeOf(*s)) +
                      "; a scale computed at run time must be one value");
    scale = ctx.reshape(*s, std::vector<int64_t>(rank, 1));
    if (ctx.hasInput(2) && type != kInt32) {
      FailureOr<ZeroPoint> z = zeroPointOf(ctx, 2, 0, true);
      if (failed(z))
        return failure();
      zp = z->ssa ? ctx.reshape(cast(ctx, z->ssa, i32Type(ctx)), std::vector<int64_t>(rank, 1))
                  : channelI32(ctx, {z->value}, rank, 0);
    } else {
      zp = channelI32(ctx, {-offsetOf(type)}, rank, 0);
    }
  } else {
    if (type == kInt32 && ctx.hasInput(2)) {
      const Tensor *z = ctx.constant(2);
      if (!z || llvm::any_of(z->ints, [](int64_t v) { return v != 0; }))
        return ctx.fail("an int32 input takes zero point 0");
    }
    FailureOr<QuantParams> q = qdqParams(ctx, shape, type == kInt32 ? kInt8 : type,
                                         /*checkZeroPoint=*/type != kInt32);
    if (failed(q))
      return failure();
    if (type == kInt32)
      q->zeroPoints.assign(q->scales.size(), 0);
    else if (q->type != type)
      return ctx.fail("the zero point is " + dataTypeName(q->type) + " and input 0 " +
                      dataTypeName(type) + "; they must have one type");
    axis = q->axis;
    if (const Tensor *x = ctx.constant(0)) {
      Tensor y;
      y.dataType = kFloat;
      y.dims = x->dims;
      int64_t inner = 1;
      if (axis >= 0)
        for (int64_t k = axis + 1; k < rank; ++k)
          inner *= shape[k];
      for (int64_t i = 0; i < x->numElements(); ++i) {
        size_t c = axis < 0 ? 0 : size_t((i / inner) % shape[axis]);
        int32_t centered = int32_t(x->ints[i]) - offsetOf(type) - q->zeroPoints[c];
        y.floats.push_back(float(centered) * q->scales[c]);
      }
      return ctx.setConstant(0, std::move(y));
    }
    scale = channelF32(ctx, q->scales, rank, axis);
    zp = channelI32(ctx, q->zeroPoints, rank, axis);
  }
  FailureOr<Value> x = type == kInt32 ? ctx.input(0) : ctx.quantizedInput(0);
  if (failed(x))
    return failure();
  Value centered = binary<tosa::SubOp>(ctx, cast(ctx, *x, i32Type(ctx)), zp);
  return ctx.setOutput(0, mul(ctx, cast(ctx, centered, ctx.builder().getF32Type()), scale));
}

/// Min or max of all elements of the f32 `x`, as [1].
Value reduceAll(NodeContext &ctx, Value x, bool max) {
  Value flat = ctx.reshape(x, {product(shapeOf(x))});
  auto type = tensorOf({1}, ctx.builder().getF32Type());
  auto axis = ctx.builder().getI64IntegerAttr(0);
  return max ? ctx.create<tosa::ReduceMaxOp>(type, flat, axis)
             : ctx.create<tosa::ReduceMinOp>(type, flat, axis);
}

/// DynamicQuantizeLinear (11): uint8 y, y_scale, y_zero_point from x's range
/// at run time (ORT's GetQuantizationParameter, then MlasQuantizeLinear).
LogicalResult convertDynamicQuantizeLinear(NodeContext &ctx) {
  if (ctx.numInputs() != 1)
    return ctx.fail("DynamicQuantizeLinear takes 1 input; it has " + llvm::Twine(ctx.numInputs()));
  if (!isFloatType(ctx.inputType(0)))
    return ctx.fail("input 0 is " + dataTypeName(ctx.inputType(0)) +
                    "; DynamicQuantizeLinear takes a float tensor");
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value zero = ctx.constF32({1}, {0.0f});
  Value lo = binary<tosa::MinimumOp>(ctx, reduceAll(ctx, *x, false), zero);
  Value hi = binary<tosa::MaximumOp>(ctx, reduceAll(ctx, *x, true), zero);
  Value range = binary<tosa::SubOp>(ctx, hi, lo);
  // scale = range / 255 correctly rounded: q = range * fl(1/255) is within
  // an ulp; e = (range - 256 q) + q = range - 255 q exactly (both steps
  // cancel within a factor of 2); q + e / 255 then rounds as the quotient
  // (which is never within 2^-9 ulp of a midpoint).
  Value r255 = ctx.constF32({1}, {1.0f / 255.0f});
  Value q = ordered(ctx, mul(ctx, range, r255));
  Value e = ordered(
      ctx,
      binary<tosa::AddOp>(
          ctx,
          ordered(ctx, binary<tosa::SubOp>(ctx, range, mul(ctx, q, ctx.constF32({1}, {256.0f})))),
          q));
  Value scale = ordered(ctx, binary<tosa::AddOp>(ctx, q, ordered(ctx, mul(ctx, e, r255))));
  scale = select(ctx, compare<tosa::EqualOp>(ctx, range, zero), ctx.constF32({1}, {1.0f}), scale);
  ScaleParts parts = runtimeScaleParts(ctx, scale);
  // zp = nearbyint(clamp(0 - min / scale, 0, 255)).
  Value negLo = ctx.create<tosa::NegateOp>(lo.getType(), lo, nullptr);
  Value zpU8 = ctx.clamp(roundQuotient(ctx, negLo, parts), 0.0f, 255.0f);
  Value zp8 = binary<tosa::SubOp>(ctx, zpU8, ctx.constF32({1}, {128.0f}));
  int64_t rank = int64_t(shapeOf(*x).size());
  std::vector<int64_t> ones(rank, 1);
  ScaleParts wide{ctx.reshape(parts.scale, ones), ctx.reshape(parts.reciprocal, ones),
                  ctx.reshape(parts.head, ones), ctx.reshape(parts.tail, ones)};
  Value y = saturateToI8(ctx, roundQuotient(ctx, *x, wide), ctx.reshape(zp8, ones));
  if (failed(ctx.setQuantizedOutput(0, y, kUInt8)))
    return failure();
  if (failed(ctx.setOutput(1, ctx.reshape(scale, {}))))
    return failure();
  return ctx.setQuantizedOutput(2, ctx.reshape(cast(ctx, zp8, i8Type(ctx)), {}), kUInt8);
}

// --- Integer products ---------------------------------------------------------------

/// A constant i8 weight in storage values, or an SSA one.
struct IntWeight {
  std::vector<int64_t> values; ///< Storage values when constant.
  Value value;
  std::vector<int64_t> dims;
  bool constant() const { return !value; }
};

/// Folds a constant weight's zero point into its values where every w - zw
/// fits int8 (then the product has no weight zero point: plain i8 x i8
/// kernels); `zw` becomes 0.
void foldWeightZeroPoint(IntWeight &w, int32_t &zw) {
  if (!w.constant() || zw == 0)
    return;
  for (int64_t v : w.values)
    if (v - zw < -128 || v - zw > 127)
      return;
  for (int64_t &v : w.values)
    v -= zw;
  zw = 0;
}

FailureOr<IntWeight> intWeight(NodeContext &ctx, int i) {
  IntWeight w;
  w.dims = ctx.inputShape(i);
  if (const Tensor *t = ctx.constant(i)) {
    if (!isQuantType(t->dataType))
      return ctx.fail("input " + llvm::Twine(i) + " is " + dataTypeName(t->dataType) +
                      "; it must be int8 or uint8");
    for (int64_t v : t->ints)
      w.values.push_back(v - offsetOf(t->dataType));
    return w;
  }
  FailureOr<Value> v = ctx.quantizedInput(i);
  if (failed(v))
    return failure();
  w.value = *v;
  return w;
}

/// Output dimension k is input dimension perm[k].
IntWeight permute(NodeContext &ctx, const IntWeight &w, llvm::ArrayRef<int32_t> perm) {
  size_t rank = w.dims.size();
  std::vector<int64_t> dims(rank), stride(rank, 1);
  for (size_t k = rank; k-- > 1;)
    stride[k - 1] = stride[k] * w.dims[k];
  for (size_t k = 0; k < rank; ++k)
    dims[k] = w.dims[perm[k]];
  IntWeight r;
  r.dims = dims;
  if (!w.constant()) {
    r.value = ctx.transpose(w.value, perm);
    return r;
  }
  r.values.resize(w.values.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t out = 0; out < r.values.size(); ++out) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k)
      offset += index[k] * stride[perm[k]];
    r.values[out] = w.values[offset];
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < dims[k])
        break;
      index[k] = 0;
    }
  }
  return r;
}

Value weightValue(NodeContext &ctx, const IntWeight &w, llvm::ArrayRef<int64_t> dims) {
  if (!w.constant())
    return ctx.reshape(w.value, dims);
  std::vector<int8_t> v(w.values.begin(), w.values.end());
  return constI8(ctx, dims, v);
}

/// Per output channel sums of (w - zw) over the other dimensions of `w`
/// laid out [O, K] (channelFirst) or [K, O]; constant or computed.
Value weightSums(NodeContext &ctx, const IntWeight &w, int64_t channels, bool channelFirst,
                 int32_t zw) {
  int64_t k = product(w.dims) / channels;
  if (w.constant()) {
    std::vector<int32_t> sums(channels, 0);
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t j = 0; j < k; ++j)
        sums[o] += int32_t((channelFirst ? w.values[o * k + j] : w.values[j * channels + o]) - zw);
    return ctx.constI32({channels}, sums);
  }
  Value wide = cast(ctx,
                    ctx.reshape(w.value, channelFirst ? std::vector<int64_t>{channels, k}
                                                      : std::vector<int64_t>{k, channels}),
                    i32Type(ctx));
  wide = binary<tosa::SubOp>(ctx, wide, ctx.constI32({1, 1}, {zw}));
  int64_t axis = channelFirst ? 1 : 0;
  Value sum = ctx.create<tosa::ReduceSumOp>(
      tensorOf(channelFirst ? std::vector<int64_t>{channels, 1} : std::vector<int64_t>{1, channels},
               i32Type(ctx)),
      wide, ctx.builder().getI64IntegerAttr(axis));
  return ctx.reshape(sum, {channels});
}

/// zx * sums as i32, broadcast over `rank` with the channels last.
Value zeroPointTerm(NodeContext &ctx, const ZeroPoint &zx, Value sums, int64_t rank) {
  int64_t n = shapeOf(sums)[0];
  std::vector<int64_t> shape(rank, 1);
  shape[rank - 1] = n;
  Value s = ctx.reshape(sums, shape);
  Value z = zx.ssa ? ctx.reshape(cast(ctx, zx.ssa, i32Type(ctx)), std::vector<int64_t>(rank, 1))
                   : ctx.constI32(std::vector<int64_t>(rank, 1), {zx.value});
  return mul(ctx, s, z);
}

/// The int32 accumulator of an integer convolution (QLinearConv: inputs x 0,
/// x_zp 2, w 3, w_zp 5, bias 8; ConvInteger: x 0, w 1, x_zp 2, w_zp 3), NHWC
/// [N, OH, OW, M] (lifted to 2-D), with the ONNX input rank.
struct IntConv {
  Value acc;
  int64_t rank = 4;
};

FailureOr<IntConv> integerConv(NodeContext &ctx, int xi, int xzi, int wi, int wzi, int bi) {
  FailureOr<Value> x = ctx.quantizedInput(xi);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(xi), ws = ctx.inputShape(wi);
  if (xs.size() == 5)
    return ctx.fail("3-D " + ctx.node().opType +
                    " (a rank-5 input) is not supported; Kiln "
                    "converts 1-D and 2-D ones");
  if (failed(checkSpatialRank(ctx, int64_t(xs.size()))))
    return failure();
  int64_t group = ctx.attrInt("group", 1);
  if (ws.size() != xs.size())
    return ctx.fail("the weight has shape " + shapeString(ws) + "; it needs rank " +
                    llvm::Twine(xs.size()));
  if (group < 1 || xs[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != xs[1])
    return ctx.fail("group " + llvm::Twine(group) + " does not fit input channels " +
                    llvm::Twine(xs[1]) + " and weight shape " + shapeString(ws));
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (failed(checkKernelShape(ctx, kernel)))
    return failure();
  FailureOr<Window> win = readWindow(ctx, xs, kernel);
  if (failed(win) || failed(forwardPadding(ctx, *win, false)))
    return failure();
  FailureOr<ZeroPoint> zx = zeroPointOf(ctx, xzi, xi, true);
  FailureOr<ZeroPoint> zw = zeroPointOf(ctx, wzi, wi, false);
  FailureOr<IntWeight> w = intWeight(ctx, wi);
  if (failed(zx) || failed(zw) || failed(w))
    return failure();
  foldWeightZeroPoint(*w, zw->value);
  if (w->dims.size() == 3) {
    w->dims = {w->dims[0], w->dims[1], 1, w->dims[2]};
    if (!w->constant())
      w->value = ctx.reshape(w->value, w->dims);
  }
  int64_t m = ws[0];
  // The bias: int32 [M] (QLinearConv), else zeros.
  Value bias = ctx.constI32({m}, std::vector<int32_t>(m, 0));
  if (bi >= 0 && ctx.hasInput(bi)) {
    if (ctx.inputType(bi) != kInt32 || ctx.inputShape(bi) != std::vector<int64_t>{m})
      return ctx.fail("the bias (input " + llvm::Twine(bi) + ") is " +
                      dataTypeName(ctx.inputType(bi)) + " " + shapeString(ctx.inputShape(bi)) +
                      "; it must be int32 [" + llvm::Twine(m) + "]");
    FailureOr<Value> b = ctx.input(bi);
    if (failed(b))
      return failure();
    bias = *b;
  }
  auto &b = ctx.builder();
  // x (NHWC, i8) padded with its zero point, so padded taps give 0.
  Value in = ctx.transposeToChannelsLast(lift2D(ctx, *x));
  std::vector<int64_t> is = shapeOf(in);
  const Window &wd = *win;
  if (wd.padBegin[0] || wd.padEnd[0] || wd.padBegin[1] || wd.padEnd[1]) {
    std::vector<int64_t> padded{is[0], is[1] + wd.padBegin[0] + wd.padEnd[0],
                                is[2] + wd.padBegin[1] + wd.padEnd[1], is[3]};
    Value pads = ctx.constI32({4, 2}, {0, 0, int32_t(wd.padBegin[0]), int32_t(wd.padEnd[0]),
                                       int32_t(wd.padBegin[1]), int32_t(wd.padEnd[1]), 0, 0});
    if (!zx->ssa) {
      in = ctx.create<tosa::PadOp>(tensorOf(padded, i8Type(ctx)), in, pads,
                                   constI8(ctx, {}, {int8_t(zx->value)}), nullptr);
    } else {
      // A zero point computed at run time: the border is the zero point
      // tiled and concatenated (tosa.pad takes a constant pad value).
      Value one = ctx.reshape(zx->ssa, {1, 1, 1, 1});
      auto border = [&](int64_t h, int64_t w) {
        return ctx.create<tosa::TileOp>(tensorOf({is[0], h, w, is[3]}, i8Type(ctx)), one,
                                        b.getDenseI64ArrayAttr({is[0], h, w, is[3]}));
      };
      auto around = [&](Value v, int axis, int64_t before, int64_t after) {
        std::vector<int64_t> vs = shapeOf(v);
        llvm::SmallVector<Value> parts;
        if (before)
          parts.push_back(axis == 1 ? border(before, vs[2]) : border(vs[1], before));
        parts.push_back(v);
        if (after)
          parts.push_back(axis == 1 ? border(after, vs[2]) : border(vs[1], after));
        if (parts.size() == 1)
          return v;
        vs[axis] += before + after;
        return ctx.create<tosa::ConcatOp>(tensorOf(vs, i8Type(ctx)), parts,
                                          b.getI64IntegerAttr(axis));
      };
      in = around(around(in, 2, wd.padBegin[1], wd.padEnd[1]), 1, wd.padBegin[0], wd.padEnd[0]);
      (void)pads;
    }
    is = padded;
  }
  Window nopad = wd;
  nopad.padBegin = {0, 0};
  nopad.padEnd = {0, 0};
  auto quant = tosa::ConvOpQuantizationAttr::get(ctx.context(), 0, zw->value);
  int64_t n = is[0];
  auto accType = [&](int64_t channels) {
    return tensorOf({n, wd.out[0], wd.out[1], channels}, i32Type(ctx));
  };
  // One convolution of `input` by the OHWI weight `ohwi` with `bias`.
  auto conv = [&](Value input, const IntWeight &ohwi, Value bs) {
    return ctx.create<tosa::Conv2DOp>(
        accType(ohwi.dims[0]), input, weightValue(ctx, ohwi, ohwi.dims), bs, nopad.tosaPad(b),
        b.getDenseI64ArrayAttr(wd.stride), b.getDenseI64ArrayAttr(wd.dilation), quant);
  };
  Value acc, sums;
  if (group == 1) {
    IntWeight ohwi = permute(ctx, *w, {0, 2, 3, 1});
    sums = weightSums(ctx, ohwi, m, true, zw->value);
    acc = conv(in, ohwi, bias);
  } else if (group == xs[1] && ws[1] == 1) {
    int64_t c = group, mult = m / group;
    IntWeight hwcm = permute(ctx, *w, {2, 3, 0, 1}); // [KH, KW, M, 1]
    hwcm.dims = {w->dims[2], w->dims[3], c, mult};
    sums = weightSums(ctx, hwcm, m, false, zw->value);
    acc = ctx.create<tosa::DepthwiseConv2DOp>(
        accType(m), in, weightValue(ctx, hwcm, hwcm.dims), bias, nopad.tosaPad(b),
        b.getDenseI64ArrayAttr(wd.stride), b.getDenseI64ArrayAttr(wd.dilation), quant);
  } else {
    int64_t cg = is[3] / group, mg = m / group;
    IntWeight ohwi = permute(ctx, *w, {0, 2, 3, 1});
    sums = weightSums(ctx, ohwi, m, true, zw->value);
    llvm::SmallVector<Value> parts;
    for (int64_t g = 0; g < group; ++g) {
      Value xg = ctx.create<tosa::SliceOp>(tensorOf({is[0], is[1], is[2], cg}, i8Type(ctx)), in,
                                           b.getDenseI64ArrayAttr({0, 0, 0, g * cg}),
                                           b.getDenseI64ArrayAttr({is[0], is[1], is[2], cg}));
      IntWeight wg;
      wg.dims = {mg, ohwi.dims[1], ohwi.dims[2], ohwi.dims[3]};
      int64_t per = product(wg.dims);
      if (ohwi.constant())
        wg.values.assign(ohwi.values.begin() + g * per, ohwi.values.begin() + (g + 1) * per);
      else
        wg.value = ctx.create<tosa::SliceOp>(tensorOf(wg.dims, i8Type(ctx)), ohwi.value,
                                             b.getDenseI64ArrayAttr({g * mg, 0, 0, 0}),
                                             b.getDenseI64ArrayAttr(wg.dims));
      Value bg =
          ctx.create<tosa::SliceOp>(tensorOf({mg}, i32Type(ctx)), bias,
                                    b.getDenseI64ArrayAttr({g * mg}), b.getDenseI64ArrayAttr({mg}));
      parts.push_back(conv(xg, wg, bg));
    }
    acc = ctx.create<tosa::ConcatOp>(accType(m), parts, b.getI64IntegerAttr(3));
  }
  if (!zx->zero())
    acc = binary<tosa::SubOp>(ctx, acc, zeroPointTerm(ctx, *zx, sums, 4));
  return IntConv{acc, int64_t(xs.size())};
}

/// The NHWC i32/i8 result of a lifted convolution back to NCHW at `rank`.
Value convResult(NodeContext &ctx, Value y, int64_t rank) {
  return unlift(ctx, ctx.transposeToChannelsFirst(y), rank);
}

/// ConvInteger (10): the int32 convolution of (x - x_zero_point) by
/// (w - w_zero_point); padding reads x_zero_point.
LogicalResult convertConvInteger(NodeContext &ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 4)
    return ctx.fail("ConvInteger takes 2 to 4 inputs; it has " + llvm::Twine(ctx.numInputs()));
  FailureOr<IntConv> c = integerConv(ctx, 0, 2, 1, 3, -1);
  if (failed(c))
    return failure();
  return ctx.setOutput(0, convResult(ctx, c->acc, c->rank));
}

/// The requantization multipliers of a QLinear op: x_scale * w_scale[c] /
/// y_scale in float, left to right (ORT's ComputeOutputScale).
FailureOr<std::vector<float>> outputScales(NodeContext &ctx, int xsi, int wsi, int ysi,
                                           int64_t channels) {
  auto xs = constantScales(ctx, xsi, 0), ws = constantScales(ctx, wsi, channels),
       ys = constantScales(ctx, ysi, 0);
  if (failed(xs) || failed(ws) || failed(ys))
    return failure();
  std::vector<float> out;
  for (float w : *ws) {
    float v = (*xs)[0] * w;
    v = v / (*ys)[0];
    out.push_back(v);
  }
  return out;
}

/// QLinearConv (10): the int32 convolution plus bias, requantized to y's
/// scale and zero point (see the file comment).
LogicalResult convertQLinearConv(NodeContext &ctx) {
  if (ctx.numInputs() < 8 || ctx.numInputs() > 9)
    return ctx.fail("QLinearConv takes 8 or 9 inputs; it has " + llvm::Twine(ctx.numInputs()));
  std::vector<int64_t> ws = ctx.inputShape(3);
  if (ws.empty())
    return ctx.fail("the weight (input 3) has no dimensions");
  auto scales = outputScales(ctx, 1, 4, 6, ws[0]);
  if (failed(scales))
    return failure();
  int32_t yType = ctx.hasInput(7) ? ctx.inputType(7) : kUInt8;
  if (failed(checkQuantType(ctx, yType, "y_zero_point")))
    return failure();
  auto yzp = constantZeroPoints(ctx, 7, yType, 1);
  FailureOr<IntConv> c =
      failed(yzp) ? FailureOr<IntConv>(failure()) : integerConv(ctx, 0, 2, 3, 5, 8);
  if (failed(c))
    return failure();
  Value y = requantize(ctx, c->acc, *scales, yzp->second[0]);
  return ctx.setQuantizedOutput(0, convResult(ctx, y, c->rank), yType);
}

/// The int32 accumulator of an integer matmul (numpy.matmul of A - za by B
/// - zb): A [..., M, K] with B [K, N], or batched with equal batches.
FailureOr<Value> integerMatMul(NodeContext &ctx, int ai, int azi, int bi, int bzi,
                               bool transB = false) {
  FailureOr<Value> a = ctx.quantizedInput(ai);
  FailureOr<IntWeight> bw = failed(a) ? FailureOr<IntWeight>(failure()) : intWeight(ctx, bi);
  if (failed(a) || failed(bw))
    return failure();
  if (transB) {
    if (bw->dims.size() != 2)
      return ctx.fail("B has shape " + shapeString(bw->dims) + "; Gemm takes a 2-D B");
    *bw = permute(ctx, *bw, {1, 0});
  }
  std::vector<int64_t> as = shapeOf(*a), bs = bw->dims;
  if (as.size() < 2 || bs.size() < 2)
    return ctx.fail(ctx.node().opType + " operands have shapes " + shapeString(as) + " and " +
                    shapeString(bs) + "; Kiln supports rank 2 or more");
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return ctx.fail("inner sizes differ: A " + shapeString(as) + ", B " + shapeString(bs));
  FailureOr<ZeroPoint> za = zeroPointOf(ctx, azi, ai, true);
  FailureOr<ZeroPoint> zb = zeroPointOf(ctx, bzi, bi, false);
  if (failed(za) || failed(zb))
    return failure();
  foldWeightZeroPoint(*bw, zb->value);
  std::vector<int64_t> outShape(as.begin(), as.end() - 1);
  outShape.push_back(n);
  int64_t batchB = product(llvm::ArrayRef<int64_t>(bs).drop_back(2));
  int64_t batchA = product(llvm::ArrayRef<int64_t>(as).drop_back(2));
  auto quant = tosa::MatMulOpQuantizationAttr::get(ctx.context(), 0, zb->value);
  Value acc, sums;
  if (batchB == 1) {
    int64_t rows = batchA * m;
    Value lhs = ctx.reshape(*a, {1, rows, k});
    Value rhs = weightValue(ctx, *bw, {1, k, n});
    IntWeight flat = *bw;
    flat.dims = {k, n};
    sums = weightSums(ctx, flat, n, false, zb->value);
    acc = ctx.create<tosa::MatMulOp>(tensorOf({1, rows, n}, i32Type(ctx)), lhs, rhs, quant);
    acc = ctx.reshape(acc, {rows, n});
    if (!za->zero())
      acc = binary<tosa::SubOp>(ctx, acc, zeroPointTerm(ctx, *za, sums, 2));
  } else {
    if (as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()))
      return ctx.fail("batch dimensions of " + shapeString(as) + " and " + shapeString(bs) +
                      " differ; Kiln supports a 2-D B or equal batch dimensions");
    Value lhs = ctx.reshape(*a, {batchA, m, k});
    Value rhs = weightValue(ctx, *bw, {batchA, k, n});
    acc = ctx.create<tosa::MatMulOp>(tensorOf({batchA, m, n}, i32Type(ctx)), lhs, rhs, quant);
    if (!za->zero()) {
      // Per batch column sums of B - zb: [batch, 1, N].
      Value wide = binary<tosa::SubOp>(ctx, cast(ctx, rhs, i32Type(ctx)),
                                       ctx.constI32({1, 1, 1}, {zb->value}));
      Value s = ctx.create<tosa::ReduceSumOp>(tensorOf({batchA, 1, n}, i32Type(ctx)), wide,
                                              ctx.builder().getI64IntegerAttr(1));
      Value z = za->ssa ? ctx.reshape(cast(ctx, za->ssa, i32Type(ctx)), {1, 1, 1})
                        : ctx.constI32({1, 1, 1}, {za->value});
      acc = binary<tosa::SubOp>(ctx, acc, mul(ctx, s, z));
    }
  }
  return ctx.reshape(acc, outShape);
}

/// MatMulInteger (10): int32 numpy.matmul of (A - a_zero_point) by (B -
/// b_zero_point).
LogicalResult convertMatMulInteger(NodeContext &ctx) {
  if (ctx.numInputs() < 2 || ctx.numInputs() > 4)
    return ctx.fail("MatMulInteger takes 2 to 4 inputs; it has " + llvm::Twine(ctx.numInputs()));
  FailureOr<Value> acc = integerMatMul(ctx, 0, 2, 1, 3);
  if (failed(acc))
    return failure();
  return ctx.setOutput(0, *acc);
}

/// QLinearMatMul (10, 21): the int32 matmul requantized to y (per column
/// where b's scale is).
LogicalResult convertQLinearMatMul(NodeContext &ctx) {
  if (ctx.numInputs() != 8)
    return ctx.fail("QLinearMatMul takes 8 inputs; it has " + llvm::Twine(ctx.numInputs()));
  std::vector<int64_t> bs = ctx.inputShape(3);
  if (bs.empty())
    return ctx.fail("B (input 3) has no dimensions");
  auto scales = outputScales(ctx, 1, 4, 6, bs.back());
  if (failed(scales))
    return failure();
  int32_t yType = ctx.hasInput(7) ? ctx.inputType(7) : kUInt8;
  if (failed(checkQuantType(ctx, yType, "y_zero_point")))
    return failure();
  auto yzp = constantZeroPoints(ctx, 7, yType, 1);
  FailureOr<Value> acc = failed(yzp) ? FailureOr<Value>(failure()) : integerMatMul(ctx, 0, 2, 3, 5);
  if (failed(acc))
    return failure();
  return ctx.setQuantizedOutput(0, requantize(ctx, *acc, *scales, yzp->second[0]), yType);
}

/// Kiln's fused form of a QDQ Gemm (fuseQDQ; the inputs of ORT's contrib
/// QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C (int32, optional), y_scale,
/// y_zp; transB): the int32 product of A by B (or B^T) plus C, requantized
/// as QLinearMatMul.
LogicalResult convertQGemm(NodeContext &ctx) {
  std::vector<int64_t> bs = ctx.inputShape(3);
  bool transB = ctx.attrInt("transB", 0) != 0;
  if (bs.size() != 2 || ctx.inputRank(0) != 2)
    return ctx.fail("Gemm takes 2-D A and B; they have shapes " + shapeString(ctx.inputShape(0)) +
                    " and " + shapeString(bs));
  int64_t n = transB ? bs[0] : bs[1];
  auto scales = outputScales(ctx, 1, 4, 7, n);
  if (failed(scales))
    return failure();
  int32_t yType = ctx.hasInput(8) ? ctx.inputType(8) : kUInt8;
  if (failed(checkQuantType(ctx, yType, "y_zero_point")))
    return failure();
  auto yzp = constantZeroPoints(ctx, 8, yType, 1);
  FailureOr<Value> acc =
      failed(yzp) ? FailureOr<Value>(failure()) : integerMatMul(ctx, 0, 2, 3, 5, transB);
  if (failed(acc))
    return failure();
  Value y = *acc;
  if (ctx.hasInput(6)) {
    if (ctx.inputType(6) != kInt32 || product(ctx.inputShape(6)) != n)
      return ctx.fail("the bias C is " + dataTypeName(ctx.inputType(6)) + " " +
                      shapeString(ctx.inputShape(6)) + "; it must be int32 [" + llvm::Twine(n) +
                      "]");
    FailureOr<Value> c = ctx.input(6);
    if (failed(c))
      return failure();
    y = binary<tosa::AddOp>(ctx, y, ctx.reshape(*c, {1, n}));
  }
  return ctx.setQuantizedOutput(0, requantize(ctx, y, *scales, yzp->second[0]), yType);
}

} // namespace

void registerQuantOps(ConverterTable &table) {
  table["QuantizeLinear"] = convertQuantizeLinear;
  table["DequantizeLinear"] = convertDequantizeLinear;
  table["DynamicQuantizeLinear"] = convertDynamicQuantizeLinear;
  table["QLinearConv"] = convertQLinearConv;
  table["QLinearMatMul"] = convertQLinearMatMul;
  table["ConvInteger"] = convertConvInteger;
  table["MatMulInteger"] = convertMatMulInteger;
  // Only fuseQDQ makes these (a model's own QGemm is com.microsoft's, a
  // domain Kiln refuses).
  table["QGemm"] = convertQGemm;
  registerQuantFusedOps(table);
}

// --- QDQ groups ---------------------------------------------------------------------
//
// ONNX Runtime's QDQ transformer (onnxruntime/core/optimizer/qdq_transformer)
// turns DequantizeLinear -> op -> QuantizeLinear groups into integer
// operators before running them; Kiln does the same rewrite on the node
// list, so a QDQ model computes what ORT computes, in integers:
//   - DQ(x), DQ(w) [, DQ(int32 bias)] -> Conv -> Q      => QLinearConv
//   - DQ(a), DQ(b) -> MatMul -> Q                        => QLinearMatMul
//   - DQ(a), DQ(b) [, DQ(int32 C)] -> Gemm -> Q (alpha, beta 1, transA 0)
//                                                        => QGemm (ORT's
//     contrib QGemm; here Kiln's own node, converted by convertQGemm)
//   - op -> Relu -> Q with Q's zero point its type's minimum: the Relu is
//     dropped first (ORT's ReluQuantFusion; Q saturates there anyway)
//   - DQ -> Reshape / Transpose / Squeeze / Unsqueeze / Flatten -> Q with
//     one scale and zero point: the pair is dropped (ORT's DropQDQNodes);
//     Concat likewise when every input's DQ has the Q's scale and zero
//     point (ORT's QLinearConcat then copies)
//   - DQ(a), DQ(b) -> Add / Mul -> Q, one 8-bit type, per-tensor constant
//     parameters                                         => QLinearAdd /
//     QLinearMul (ORT's contrib kernels, MLAS's arithmetic; these fused
//     kernels are in ONNXQuantFusedOps.cpp)
//   - DQ -> LeakyRelu / Sigmoid -> Q, one type            => QLinearLeakyRelu /
//     QLinearSigmoid (ORT's 256-entry tables)
//   - DQ -> GlobalAveragePool / Softmax -> Q, one type    =>
//     QLinearGlobalAveragePool / QLinearSoftmax (ONNXQuantFusedOps.cpp)
//   - DQ -> AveragePool (1-D to 3-D, no dilations) -> Q, one type
//                                                        => QLinearAveragePool
//   - DQ... -> Concat -> Q, every input of Q's type, some parameters not
//     Q's                                                => QLinearConcat
//   - DQ -> MaxPool (2-D, no dilations, opset 12+) -> Q with one positive
//     scale and zero point: the pair is dropped (ORT's DropQDQNodes)
// Other groups (Resize, Add/Mul/Concat of mixed types) stay float between their DQ and Q
// (docs/design.md says where that can differ from ORT).

namespace {

/// Read-only view of the graph for the rewrite.
class QDQGraph {
public:
  QDQGraph(const std::vector<Node> &nodes, const Model &model) : nodes(nodes), model(model) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const std::string &out : nodes[i].outputs)
        if (!out.empty())
          producer[out] = int(i);
      for (const std::string &in : nodes[i].inputs)
        if (!in.empty())
          ++uses[in];
    }
    for (const ValueInfo &out : model.outputs)
      ++uses[out.name];
  }

  /// The default-domain node of `opType` producing `name`, or -1.
  int producedBy(const std::string &name, const char *opType) const {
    auto it = producer.find(name);
    if (it == producer.end())
      return -1;
    const Node &n = nodes[it->second];
    return n.opType == opType && (n.domain.empty() || n.domain == "ai.onnx") ? it->second : -1;
  }

  /// The only node reading `name` (and no graph output does), or -1.
  int soleConsumer(const std::string &name) const {
    auto u = uses.find(name);
    if (u == uses.end() || u->second != 1)
      return -1;
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const std::string &in : nodes[i].inputs)
        if (in == name)
          return int(i);
    return -1;
  }

  /// The contents of `name` when it is an initializer or a Constant's value.
  const Tensor *constant(const std::string &name) const {
    if (name.empty())
      return nullptr;
    auto it = model.initializers.find(name);
    if (it != model.initializers.end())
      return &it->second;
    int c = producedBy(name, "Constant");
    if (c < 0)
      return nullptr;
    const Attribute *a = nodes[c].attribute("value");
    return a && a->kind == Attribute::TensorValue ? a->t.get() : nullptr;
  }

  /// The element type of `name` as the model declares or infers it.
  int32_t typeOf(const std::string &name) const {
    if (const Tensor *t = constant(name))
      return t->dataType;
    auto it = model.values.find(name);
    return it == model.values.end() ? kUndefined : it->second.elementType;
  }

  /// Whether a DequantizeLinear / QuantizeLinear node has known per-tensor
  /// (or, with `axisOk`, per-axis along `axis`) parameters of int8/uint8.
  bool knownParams(const Node &q, bool perTensorOnly, int64_t axis = 0, int64_t rank = 0) const {
    if (q.inputs.size() < 2 || q.attribute("block_size"))
      return false;
    const Tensor *s = constant(q.inputs[1]);
    if (!s || !s->isFloat())
      return false;
    if (s->numElements() != 1) {
      if (perTensorOnly)
        return false;
      const Attribute *a = q.attribute("axis");
      int64_t qa = normalizeAxis(a ? a->i : 1, rank);
      if (qa != axis)
        return false;
    }
    if (q.inputs.size() > 2 && !q.inputs[2].empty() && !constant(q.inputs[2]))
      return false;
    return true;
  }

  /// The zero point type of a Q/DQ node (uint8 without one).
  int32_t zeroPointType(const Node &q) const {
    if (q.inputs.size() > 2 && !q.inputs[2].empty())
      return typeOf(q.inputs[2]);
    const Attribute *a = q.attribute("output_dtype");
    return a && a->i ? int32_t(a->i) : kUInt8;
  }

  /// Whether two Q/DQ nodes have the same per-tensor scale and zero point.
  bool sameParams(const Node &a, const Node &b) const {
    const Tensor *sa = constant(a.inputs[1]), *sb = constant(b.inputs[1]);
    if (!sa || !sb || sa->numElements() != 1 || sb->numElements() != 1 ||
        sa->floats[0] != sb->floats[0] || zeroPointType(a) != zeroPointType(b))
      return false;
    auto zp = [&](const Node &q) {
      const Tensor *z = q.inputs.size() > 2 ? constant(q.inputs[2]) : nullptr;
      return z ? z->ints[0] : 0;
    };
    return zp(a) == zp(b);
  }

  /// Whether Q's zero point is its type's minimum (0 uint8, -128 int8).
  bool zeroPointIsMinimum(const Node &q) const {
    int32_t type = zeroPointType(q);
    const Tensor *z = q.inputs.size() > 2 ? constant(q.inputs[2]) : nullptr;
    int64_t v = z ? z->ints[0] : 0;
    return (type == kUInt8 && v == 0) || (type == kInt8 && v == -128);
  }

  const std::vector<Node> &nodes;
  const Model &model;
  std::map<std::string, int> producer;
  std::map<std::string, int> uses;
};

/// The rank of `name` as inferred, or -1.
int64_t rankOf(const Model &model, const std::string &name) {
  auto it = model.values.find(name);
  if (it != model.values.end() && it->second.hasShape)
    return int64_t(it->second.dims.size());
  auto in = model.initializers.find(name);
  return in == model.initializers.end() ? -1 : int64_t(in->second.dims.size());
}

/// Input `k` of `n`, or "" past its inputs.
std::string inputOf(const Node &n, size_t k) { return k < n.inputs.size() ? n.inputs[k] : ""; }

/// The x, x_scale and x_zero_point inputs of every DQ feeding `op`'s first
/// `arity` inputs, each DQ's parameters known and per tensor and its x of
/// Q's 8-bit type (ORT's Unary / Binary / InputVariadicSelector, which ask
/// one type; per-tensor constants are what ORT's QLinear kernels take);
/// empty when one is not.
std::vector<std::string> dqInputsOfType(const QDQGraph &g, const Node &op, size_t arity,
                                        const Node &q) {
  std::vector<std::string> ins;
  for (size_t k = 0; k < arity; ++k) {
    int dx = g.producedBy(inputOf(op, k), "DequantizeLinear");
    if (dx < 0 || !g.knownParams(g.nodes[dx], true) ||
        g.typeOf(inputOf(g.nodes[dx], 0)) != g.zeroPointType(q))
      return {};
    for (size_t j = 0; j < 3; ++j)
      ins.push_back(inputOf(g.nodes[dx], j));
  }
  return ins;
}

/// Whether a QDQ AveragePool fuses: 1-D to 3-D windows, as ORT's
/// QLinearAveragePool takes, and no dilations attribute (even all ones),
/// which ORT's kernel refuses (ORT fuses the group, then fails to load the
/// session): such a group stays float.
bool poolFuses(const Node &op, const Model &model) {
  int64_t r = rankOf(model, inputOf(op, 0));
  return !op.attribute("dilations") && r >= 3 && r <= 5;
}

/// Whether every input of `op` comes from a DQ with `q`'s parameters (then
/// a Concat's pair is dropped: ORT's QLinearConcat only copies).
bool everyInputLike(const QDQGraph &g, const Node &op, const Node &q) {
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    int dx = g.producedBy(inputOf(op, k), "DequantizeLinear");
    if (dx < 0 || !g.knownParams(g.nodes[dx], true) || !g.sameParams(g.nodes[dx], q) ||
        !isQuantType(g.typeOf(inputOf(g.nodes[dx], 0))))
      return false;
  }
  return true;
}

} // namespace

std::vector<Node> fuseQDQ(const std::vector<Node> &nodes, const Model &model) {
  QDQGraph g(nodes, model);
  std::vector<Node> out = nodes;
  std::vector<bool> erased(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &op = nodes[i];
    if (!op.domain.empty() && op.domain != "ai.onnx")
      continue;
    if (op.outputs.size() != 1 || erased[i])
      continue;
    // The Q after op (through a Relu the Q makes redundant).
    int qi = g.soleConsumer(op.outputs[0]);
    int relu = -1;
    if (qi >= 0 && nodes[qi].opType == "Relu" && nodes[qi].outputs.size() == 1) {
      relu = qi;
      qi = g.soleConsumer(nodes[relu].outputs[0]);
    }
    if (qi < 0 || nodes[qi].opType != "QuantizeLinear" || erased[qi] ||
        !g.knownParams(nodes[qi], true) ||
        inputOf(nodes[qi], 0) != (relu >= 0 ? nodes[relu].outputs[0] : op.outputs[0]))
      continue;
    const Node &q = nodes[qi];
    if (relu >= 0 && !g.zeroPointIsMinimum(q))
      continue;
    if (!isQuantType(g.zeroPointType(q)))
      continue;
    auto dqOf = [&](const std::string &name) { return g.producedBy(name, "DequantizeLinear"); };
    auto qInputs = [&](int d) {
      const Node &n = nodes[d];
      return std::vector<std::string>{inputOf(n, 0), inputOf(n, 1), inputOf(n, 2)};
    };
    Node fused = op;
    if (op.opType == "Conv" || op.opType == "MatMul") {
      int dx = dqOf(inputOf(op, 0)), dw = dqOf(inputOf(op, 1));
      if (dx < 0 || dw < 0 || !g.knownParams(nodes[dx], true) ||
          !isQuantType(g.typeOf(inputOf(nodes[dx], 0))) ||
          !isQuantType(g.typeOf(inputOf(nodes[dw], 0))))
        continue;
      int64_t wRank = rankOf(model, inputOf(nodes[dw], 0));
      if (!g.knownParams(nodes[dw], false, op.opType == "Conv" ? 0 : wRank - 1, wRank))
        continue;
      std::vector<std::string> ins = qInputs(dx);
      for (const std::string &s : qInputs(dw))
        ins.push_back(s);
      ins.push_back(inputOf(q, 1));
      ins.push_back(inputOf(q, 2));
      if (op.opType == "Conv" && !inputOf(op, 2).empty()) {
        int db = dqOf(inputOf(op, 2));
        if (db < 0 || g.typeOf(inputOf(nodes[db], 0)) != kInt32)
          continue;
        ins.push_back(inputOf(nodes[db], 0));
      }
      fused.opType = op.opType == "Conv" ? "QLinearConv" : "QLinearMatMul";
      fused.inputs = ins;
    } else if (op.opType == "Gemm") {
      auto attr = [&](const char *name, float def) {
        const Attribute *a = op.attribute(name);
        return !a ? def : a->kind == Attribute::Float ? a->f : float(a->i);
      };
      bool transB = attr("transB", 0) != 0;
      int dx = dqOf(inputOf(op, 0)), dw = dqOf(inputOf(op, 1));
      if (attr("alpha", 1) != 1 || attr("beta", 1) != 1 || attr("transA", 0) != 0 || dx < 0 ||
          dw < 0 || !g.knownParams(nodes[dx], true) ||
          !g.knownParams(nodes[dw], false, transB ? 0 : 1, 2) ||
          !isQuantType(g.typeOf(inputOf(nodes[dx], 0))) ||
          !isQuantType(g.typeOf(inputOf(nodes[dw], 0))))
        continue;
      std::vector<std::string> ins = qInputs(dx);
      for (const std::string &s : qInputs(dw))
        ins.push_back(s);
      if (!inputOf(op, 2).empty()) {
        int db = dqOf(inputOf(op, 2));
        if (db < 0 || g.typeOf(inputOf(nodes[db], 0)) != kInt32)
          continue;
        ins.push_back(inputOf(nodes[db], 0));
      } else {
        ins.push_back("");
      }
      ins.push_back(inputOf(q, 1));
      ins.push_back(inputOf(q, 2));
      fused.opType = "QGemm";
      fused.inputs = ins;
    } else if (op.opType == "Add" || op.opType == "Mul" || op.opType == "LeakyRelu" ||
               op.opType == "Sigmoid" || op.opType == "GlobalAveragePool" ||
               op.opType == "Softmax" || op.opType == "AveragePool") {
      // ORT's BinarySelector / UnarySelector: every input from a DQ, the
      // inputs and the Q of one 8-bit type (here also per-tensor constant
      // parameters, which ORT's QLinear kernels require).
      size_t arity = op.opType == "Add" || op.opType == "Mul" ? 2 : 1;
      if (op.inputs.size() != arity || (op.opType == "AveragePool" && !poolFuses(op, model)))
        continue;
      std::vector<std::string> ins = dqInputsOfType(g, op, arity, q);
      if (ins.empty())
        continue;
      ins.push_back(inputOf(q, 1));
      ins.push_back(inputOf(q, 2));
      fused.opType = "QLinear" + op.opType;
      fused.inputs = ins;
    } else if (op.opType == "MaxPool") {
      // ORT's DropQDQNodesSelector for MaxPool-12: one type, equal
      // parameters, a positive scale (it would reverse the order); Kiln's
      // i8 MaxPool takes 2-D windows without dilations.
      int dx = dqOf(inputOf(op, 0));
      const Attribute *dil = op.attribute("dilations");
      bool plain =
          !dil || std::all_of(dil->ints.begin(), dil->ints.end(), [](int64_t d) { return d == 1; });
      const Tensor *s = g.constant(inputOf(q, 1));
      if (relu >= 0 || model.opset < 12 || !plain || dx < 0 || rankOf(model, op.inputs[0]) != 4 ||
          !g.knownParams(nodes[dx], true) || !g.sameParams(nodes[dx], q) || !s ||
          !(s->floats[0] > 0) || g.typeOf(inputOf(nodes[dx], 0)) != g.zeroPointType(q))
        continue;
      fused.inputs[0] = inputOf(nodes[dx], 0);
    } else if (op.opType == "Concat" && !op.inputs.empty() &&
               !(relu < 0 && everyInputLike(g, op, q))) {
      // ORT's InputVariadicSelector => QLinearConcat (inputs Y_scale, Y_zp,
      // then X, X_scale, X_zp per input). With every input's parameters
      // Q's (and no Relu) the pair is dropped instead, below.
      std::vector<std::string> ins = dqInputsOfType(g, op, op.inputs.size(), q);
      if (ins.empty())
        continue;
      ins.insert(ins.begin(), {inputOf(q, 1), inputOf(q, 2)});
      fused.opType = "QLinearConcat";
      fused.inputs = ins;
    } else if (movesQuantizedData(op.opType)) {
      // Concat moves every input; the others their data input 0 only.
      size_t moved = op.opType == "Concat" ? op.inputs.size() : 1;
      bool ok = relu < 0 && !op.inputs.empty();
      for (size_t k = 0; ok && k < moved; ++k) {
        int dx = dqOf(inputOf(op, k));
        ok = dx >= 0 && g.knownParams(nodes[dx], true) && g.sameParams(nodes[dx], q) &&
             isQuantType(g.typeOf(inputOf(nodes[dx], 0)));
        if (ok)
          fused.inputs[k] = inputOf(nodes[dx], 0);
      }
      if (!ok)
        continue;
    } else {
      continue;
    }
    fused.outputs = q.outputs;
    out[i] = fused;
    erased[qi] = true;
    if (relu >= 0)
      erased[relu] = true;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < out.size(); ++i)
    if (!erased[i])
      kept.push_back(std::move(out[i]));
  return kept;
}

} // namespace kiln::onnx
