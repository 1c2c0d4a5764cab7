//===- ONNXQuantFusedOps.cpp - Fused QDQ groups as ORT's QLinear kernels -===//
//
// Kiln's forms of ONNX Runtime 1.30's com.microsoft QLinearAdd, QLinearMul,
// QLinearLeakyRelu, QLinearSigmoid, QLinearGlobalAveragePool,
// QLinearSoftmax, QLinearAveragePool and QLinearConcat, which only fuseQDQ
// makes (ONNXQuantOps.cpp, "QDQ groups"; inputs as ORT's: x, x_scale,
// x_zero_point, ..., y_scale, y_zero_point, QLinearConcat's y_scale and
// y_zero_point first; every scale and zero point one constant value, every
// tensor of one type). Each computes what ORT's CPU kernel computes on
// x86-64, bit for bit: the ORT or MLAS routine it follows is named at each
// converter. Storage as ONNXQuantOps.cpp's: i8, uint8 as q - 128.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "ONNXQuantHelpers.h"
#include "WindowShape.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace mlir;

namespace kiln::onnx {

namespace {

using namespace quant;

/// One tensor's per-tensor scale and zero point (the zero point as the
/// type's value, not its storage).
struct TensorParams {
  float scale;
  int32_t zp;
  int32_t type;
};

FailureOr<TensorParams> tensorParams(NodeContext &ctx, int si, int zi, int32_t type) {
  auto s = constantScales(ctx, si, 0);
  auto z = failed(s) ? decltype(constantZeroPoints(ctx, zi, type, 1))(failure())
                     : constantZeroPoints(ctx, zi, type, 1);
  if (failed(z))
    return failure();
  return TensorParams{(*s)[0], z->second[0] + offsetOf(z->first), z->first};
}

/// The value range of a quantized type.
std::pair<int32_t, int32_t> rangeOf(int32_t type) {
  return type == kUInt8 ? std::make_pair(0, 255) : std::make_pair(-128, 127);
}

/// _mm256_cvtps_epi32 then the saturating packs to the 8-bit type, as MLAS
/// ends its QLinear kernels: nearbyint (halves to even), saturated; a value
/// outside int32 converts to INT_MIN, so saturates low.
int32_t packRounded(float v, int32_t type) {
  auto [lo, hi] = rangeOf(type);
  if (!(v > -2147483648.0f && v < 2147483648.0f))
    return lo;
  return int32_t(std::clamp(std::nearbyint(v), float(lo), float(hi)));
}

/// Which loop of ORT's BroadcastLooper runs a binary op of shapes `a`, `b`
/// (element_wise_ops.h; the innermost dimension of the output that is not 1
/// decides for every span): 0 input 0 a scalar per span, 1 input 1 a scalar
/// per span, 2 both whole spans.
int broadcastLoop(std::vector<int64_t> a, std::vector<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  for (size_t k = rank; k-- > 0;) {
    int64_t out = std::max(a[k], b[k]);
    if (out == 1)
      continue;
    if (a[k] == out && b[k] == out)
      return 2;
    return a[k] == out ? 1 : 0;
  }
  return 0;
}

/// ORT 1.30's QLinearAdd of every pair of 8-bit values, as MLAS's AVX2
/// kernel computes it (MlasQLinearAddKernelAvx2Helper, intrinsics/avx2/
/// qladd_avx2.cpp, as ORT's GCC build contracts it): ratios rA = sA / sC,
/// rB = sB / sC and fixed = zC - fma(rA, zA, rB zB) in float; per element
/// fma(a, rA, fma(b, rB, fixed)) on the raw values (with B one scalar per
/// span its fma is hoisted, same value); ORT passes the scalar as MLAS's B
/// (input 0 scalar: the operands swap). Then cvtps2dq and saturating packs.
/// Table index: (a storage + 128) * 256 + (b storage + 128); entries in the
/// storage domain. (The contraction was measured against ORT 1.30 on every
/// pair for 24 random scale sets: the uncontracted forms differ.)
std::vector<int8_t> addTable(const TensorParams &a, const TensorParams &b, const TensorParams &c,
                             int loop) {
  const TensorParams &ka = loop == 0 ? b : a, &kb = loop == 0 ? a : b;
  float ra = ka.scale / c.scale, rb = kb.scale / c.scale;
  float fixed = float(c.zp) - std::fma(ra, float(ka.zp), rb * float(kb.zp));
  std::vector<int8_t> table(65536);
  int32_t off = offsetOf(c.type);
  for (int ia = 0; ia < 256; ++ia)
    for (int ib = 0; ib < 256; ++ib) {
      float qa = float(ia - 128 + off), qb = float(ib - 128 + off);
      float x = loop == 0 ? qb : qa, y = loop == 0 ? qa : qb; // MLAS's A, B
      float v = std::fma(x, ra, std::fma(y, rb, fixed));
      table[ia * 256 + ib] = int8_t(packRounded(v, c.type) - off);
    }
  return table;
}

/// The operands of a fused QDQ Add or Mul (ORT's QLinearAdd / QLinearMul:
/// A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp; A [...] and B [...]
/// broadcast to C's shape): the three per-tensor parameter sets, A and B in
/// storage, and the output rank.
struct BinaryOperands {
  TensorParams pa, pb, pc;
  Value a, b;
  int64_t rank;
};

FailureOr<BinaryOperands> binaryOperands(NodeContext &ctx) {
  int32_t type = ctx.inputType(0);
  if (failed(checkQuantType(ctx, type, "A")))
    return failure();
  auto pa = tensorParams(ctx, 1, 2, type), pb = tensorParams(ctx, 4, 5, type),
       pc = tensorParams(ctx, 6, 7, type);
  if (failed(pa) || failed(pb) || failed(pc))
    return failure();
  FailureOr<Value> a = ctx.quantizedInput(0), b = ctx.quantizedInput(3);
  if (failed(a) || failed(b))
    return failure();
  int64_t rank = int64_t(std::max(shapeOf(*a).size(), shapeOf(*b).size()));
  return BinaryOperands{*pa, *pb, *pc, *a, *b, rank};
}

/// Kiln's fused QDQ Add (QLinearAdd, binaryOperands' shapes): a lookup in
/// addTable's 65536 entries, indexed by both inputs (tosa.gather of
/// [1, 65536, 1] at [1, |C|]), bit-exact with ORT.
LogicalResult convertFusedAdd(NodeContext &ctx) {
  FailureOr<BinaryOperands> op = binaryOperands(ctx);
  if (failed(op))
    return failure();
  std::vector<int8_t> table =
      addTable(op->pa, op->pb, op->pc, broadcastLoop(ctx.inputShape(0), ctx.inputShape(3)));
  Value ia = mul(ctx, cast(ctx, op->a, i32Type(ctx)), channelI32(ctx, {256}, op->rank, 0));
  Value ib = binary<tosa::AddOp>(ctx, cast(ctx, op->b, i32Type(ctx)),
                                 channelI32(ctx, {128 * 256 + 128}, op->rank, 0));
  Value index = binary<tosa::AddOp>(ctx, ia, ib);
  std::vector<int64_t> shape = shapeOf(index);
  int64_t n = product(shape);
  Value values = constI8(ctx, {1, 65536, 1}, table);
  Value g = ctx.create<tosa::GatherOp>(tensorOf({1, n, 1}, i8Type(ctx)), values,
                                       ctx.reshape(index, {1, n}));
  return ctx.setQuantizedOutput(0, ctx.reshape(g, shape), op->pc.type);
}

/// Kiln's fused QDQ Mul (QLinearMul, binaryOperands' shapes), as MLAS's
/// SSE2 kernel computes it (MlasQLinearMulKernel, qlmul.cpp): the int32
/// product (a - zA)(b - zB), converted to float, times sA * sB / sC (float,
/// in that order), plus zC, then cvtps2dq (nearbyint) and saturating packs;
/// the same for every broadcast loop.
LogicalResult convertFusedMul(NodeContext &ctx) {
  FailureOr<BinaryOperands> op = binaryOperands(ctx);
  if (failed(op))
    return failure();
  int64_t rank = op->rank;
  int32_t off = offsetOf(op->pa.type);
  auto centered = [&](Value v, int32_t zp) {
    return binary<tosa::SubOp>(ctx, cast(ctx, v, i32Type(ctx)),
                               channelI32(ctx, {zp - off}, rank, 0));
  };
  Value prod = mul(ctx, centered(op->a, op->pa.zp), centered(op->b, op->pb.zp));
  float ratio = op->pa.scale * op->pb.scale / op->pc.scale;
  Value t = ordered(
      ctx, mul(ctx, cast(ctx, prod, ctx.builder().getF32Type()), ctx.scalarF32(ratio, rank)));
  t = ordered(ctx, binary<tosa::AddOp>(ctx, t, ctx.scalarF32(float(op->pc.zp), rank)));
  auto [lo, hi] = rangeOf(op->pc.type);
  Value n = ctx.clamp(roundHalfEven(ctx, t), float(lo), float(hi));
  Value outside = compare<tosa::GreaterEqualOp>(ctx, t, ctx.scalarF32(2147483648.0f, rank));
  n = select(ctx, outside, ctx.scalarF32(float(lo), rank), n);
  Value y = binary<tosa::SubOp>(ctx, n, ctx.scalarF32(float(offsetOf(op->pc.type)), rank));
  return ctx.setQuantizedOutput(0, cast(ctx, y, i8Type(ctx)), op->pc.type);
}

/// MlasComputeLogistic on FMA3 machines (MlasLogisticKernelFma3,
/// x86_64/LogisticKernelFma3.S; constants of logistic.cpp): x clamped to
/// [-18, 18], p and q Horner in x^2 with fused multiply-adds, p / q + 1/2
/// clamped to [0, 1].
float mlasLogistic(float x) {
  x = std::min(std::max(x, -18.0f), 18.0f);
  float x2 = x * x;
  float p = std::fma(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = std::fma(x2, p, 6.08574864600143e-05f);
  p = std::fma(x2, p, 8.51377133304701e-03f);
  p = std::fma(x2, p, 2.48287947061529e-01f);
  float q = std::fma(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = std::fma(x2, q, 6.29106785017040e-06f);
  q = std::fma(x2, q, 1.70198817374094e-03f);
  q = std::fma(x2, q, 1.16817656904453e-01f);
  q = std::fma(x2, q, 9.93151921023180e-01f);
  p = x * p;
  return std::min(std::max(p / q + 0.5f, 0.0f), 1.0f);
}

/// The operand of a fused unary QDQ op (ORT's QLinearLeakyRelu,
/// QLinearSigmoid, QLinearGlobalAveragePool, QLinearAveragePool,
/// QLinearSoftmax: X, X_scale, X_zp, Y_scale, Y_zp): X's and Y's per-tensor
/// parameters and X in storage.
struct UnaryOperand {
  TensorParams px, py;
  Value x;
};

FailureOr<UnaryOperand> unaryOperand(NodeContext &ctx) {
  int32_t type = ctx.inputType(0);
  if (failed(checkQuantType(ctx, type, "X")))
    return failure();
  auto px = tensorParams(ctx, 1, 2, type), py = tensorParams(ctx, 3, 4, type);
  if (failed(px) || failed(py))
    return failure();
  FailureOr<Value> x = ctx.quantizedInput(0);
  if (failed(x))
    return failure();
  return UnaryOperand{*px, *py, *x};
}

/// ORT's 256-entry table of an 8-bit function (QlinearBuildLookupTable,
/// qlinear_lookup_table.cc): entry k (X's storage k - 128) is
/// MlasQuantizeLinear(fn(x_scale * (x - zX))) with Y's parameters, the
/// dequantization and fn in float; entries in Y's storage.
template <typename Fn>
std::vector<int8_t> lookupTable(const TensorParams &px, const TensorParams &py, Fn fn) {
  auto [lo, hi] = rangeOf(py.type);
  std::vector<int8_t> table(256);
  for (int k = 0; k < 256; ++k) {
    int32_t q = k - 128 + offsetOf(px.type);
    float v = fn(px.scale * float(q - px.zp));
    float r = std::clamp(std::nearbyint(v / py.scale), float(lo - py.zp), float(hi - py.zp));
    table[k] = int8_t(int32_t(r) + py.zp - offsetOf(py.type));
  }
  return table;
}

/// Kiln's fused QDQ LeakyRelu / Sigmoid (ORT's QLinearLeakyRelu /
/// QLinearSigmoid; Y of X's shape): lookupTable of the float function
/// (LeakyRelu, or MLAS's FMA3 logistic), as a tosa.table.
LogicalResult convertFusedLookup(NodeContext &ctx) {
  FailureOr<UnaryOperand> op = unaryOperand(ctx);
  if (failed(op))
    return failure();
  bool sigmoid = ctx.node().opType == "QLinearSigmoid";
  float alpha = ctx.attrFloat("alpha", 0.01f);
  std::vector<int8_t> table = lookupTable(op->px, op->py, [&](float d) {
    return sigmoid ? mlasLogistic(d) : d >= 0.0f ? d : alpha * d;
  });
  Value t = constI8(ctx, {256}, table);
  return ctx.setQuantizedOutput(0, ctx.create<tosa::TableOp>(op->x.getType(), op->x, t),
                                op->py.type);
}

/// ORT's QLinearGlobalAveragePool of the i8 storage `x` [N, C, d1, ...] ->
/// [N, C, 1, ...], as MLAS computes it (MlasQLinearGlobalAveragePoolNchw,
/// qlgavgpool.cpp): the int32 sum of x - zX over the image, requantized by
/// MlasRequantizeOutput with the float scale sX / (sY * float(image size)).
/// QLinearAveragePool takes this path too when its kernel is the image and
/// it has no pads (qlinear_pool.cc, fallback_to_global).
FailureOr<Value> globalAverage(NodeContext &ctx, Value x, const TensorParams &px,
                               const TensorParams &py) {
  std::vector<int64_t> shape = shapeOf(x);
  Value acc = cast(ctx, x, i32Type(ctx));
  int64_t image = 1;
  for (size_t axis = 2; axis < shape.size(); ++axis) {
    image *= shape[axis];
    std::vector<int64_t> s = shapeOf(acc);
    s[axis] = 1;
    acc = ctx.create<tosa::ReduceSumOp>(tensorOf(s, i32Type(ctx)), acc,
                                        ctx.builder().getI64IntegerAttr(int64_t(axis)));
  }
  if (image >= (1 << 24))
    return ctx.fail("the image has " + llvm::Twine(image) +
                    " elements; ORT's QLinearGlobalAveragePool takes fewer than 2^24");
  int64_t rank = int64_t(shape.size());
  int32_t zx = px.zp - offsetOf(px.type);
  acc = binary<tosa::SubOp>(ctx, acc, channelI32(ctx, {int32_t(zx * image)}, rank, 0));
  float scale = px.scale / (py.scale * float(image));
  return requantize(ctx, acc, {scale}, py.zp - offsetOf(py.type));
}

/// Kiln's fused QDQ GlobalAveragePool (ORT's QLinearGlobalAveragePool: X
/// [N, C, d1, ...] -> [N, C, 1, ...]): globalAverage.
LogicalResult convertFusedGlobalAveragePool(NodeContext &ctx) {
  FailureOr<UnaryOperand> op = unaryOperand(ctx);
  if (failed(op))
    return failure();
  std::vector<int64_t> shape = shapeOf(op->x);
  if (shape.size() < 3)
    return ctx.fail("GlobalAveragePool takes X [N, C, d1, ...]; it has shape " +
                    shapeString(shape));
  FailureOr<Value> y = globalAverage(ctx, op->x, op->px, op->py);
  return failed(y) ? failure() : ctx.setQuantizedOutput(0, *y, op->py.type);
}

/// ORT's QLinearSoftmax exp table (QlinearBuildLookupTableUint32,
/// qlinear_softmax.cc; float entries): E[i] = float(exp((i - 255 + shift)
/// xs)) in double, shift = max(0, log(FLT_MAX / D) - 5) / xs, so that a
/// row's sum stays finite.
std::vector<float> softmaxTable(float xs, int64_t d) {
  double shift = std::log(double(std::numeric_limits<float>::max() / float(d)));
  shift = std::max(0.0, shift - 5.0) / double(xs);
  std::vector<float> table(256);
  for (int i = 0; i < 256; ++i)
    table[i] = float(std::exp((double(i) - 255.0 + shift) * double(xs)));
  return table;
}

/// Kiln's fused QDQ Softmax (ORT's QLinearSoftmax: X, X_scale, X_zp,
/// Y_scale, Y_zp; Y of X's shape; rows along `axis`, computed as [n, d];
/// opset < 13: the dimensions from `axis` flattened), as QlinearSoftmaxCPU
/// computes it: v = E[x - max(row) + 255],
/// the float sum of the row's v from first to last, then
/// nearbyint(float(v * floor(1 / sY)) / sum) + zY, at most 255 (int8 takes
/// the low byte: ORT's cast). The quotient's rounding is roundQuotient's
/// (both operands scaled by 2^-64, exactly, to keep its split finite).
LogicalResult convertFusedSoftmax(NodeContext &ctx) {
  FailureOr<UnaryOperand> op = unaryOperand(ctx);
  if (failed(op))
    return failure();
  int32_t type = op->px.type;
  int64_t rank = int64_t(shapeOf(op->x).size()), opset = ctx.opset();
  int64_t axis = normalizeAxis(ctx.attrInt("axis", opset < 13 ? 1 : -1), rank);
  std::vector<int32_t> perm(rank);
  for (int64_t k = 0; k < rank; ++k)
    perm[k] = int32_t(k);
  std::swap(perm[axis], perm[rank - 1]);
  bool moved = opset >= 13 && axis != rank - 1;
  Value v = moved ? ctx.transpose(op->x, perm) : op->x;
  std::vector<int64_t> vs = shapeOf(v);
  int64_t total = product(vs), d = 1;
  for (int64_t k = opset < 13 ? axis : rank - 1; k < rank; ++k)
    d *= vs[k];
  int64_t n = total / d;
  Value rows = ctx.reshape(cast(ctx, v, i32Type(ctx)), {n, d});
  Value m = ctx.create<tosa::ReduceMaxOp>(tensorOf({n, 1}, i32Type(ctx)), rows,
                                          ctx.builder().getI64IntegerAttr(1));
  Value k =
      binary<tosa::AddOp>(ctx, binary<tosa::SubOp>(ctx, rows, m), channelI32(ctx, {255}, 2, 0));
  Value table = ctx.constF32({1, 256, 1}, softmaxTable(op->px.scale, d));
  Value e =
      ctx.create<tosa::GatherOp>(ctx.f32Type({1, total, 1}), table, ctx.reshape(k, {1, total}));
  e = ctx.reshape(e, {n, d});
  Value sum = ctx.slice(e, {0, 0}, {n, 1});
  for (int64_t j = 1; j < d; ++j)
    sum = ordered(ctx, binary<tosa::AddOp>(ctx, sum, ctx.slice(e, {0, j}, {n, 1})));
  const float unit = std::ldexp(1.0f, -64);
  float c = std::floor(1.0f / op->py.scale);
  Value p = ordered(ctx, mul(ctx, e, ctx.scalarF32(c * unit, 2)));
  Value s = ordered(ctx, mul(ctx, sum, ctx.scalarF32(unit, 2)));
  Value q = roundQuotient(ctx, p, runtimeScaleParts(ctx, s));
  Value y =
      ctx.clamp(binary<tosa::AddOp>(ctx, q, ctx.scalarF32(float(op->py.zp), 2)), -1.0e9f, 255.0f);
  y = binary<tosa::SubOp>(ctx, y, ctx.scalarF32(float(offsetOf(type)), 2));
  y = select(ctx, compare<tosa::GreaterEqualOp>(ctx, y, ctx.scalarF32(128.0f, 2)),
             binary<tosa::SubOp>(ctx, y, ctx.scalarF32(256.0f, 2)), y);
  Value out = ctx.reshape(cast(ctx, y, i8Type(ctx)), vs);
  return ctx.setQuantizedOutput(0, moved ? ctx.transpose(out, perm) : out, type);
}

// --- QLinearAveragePool and QLinearConcat ------------------------------------------

/// A float as an integer of the same order (-0 and +0 alike), and back.
int64_t orderKey(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return (b & 0x80000000u) ? -int64_t(b & 0x7fffffffu) : int64_t(b);
}

float fromOrderKey(int64_t k) {
  uint32_t b = k < 0 ? (uint32_t(-k) | 0x80000000u) : uint32_t(k);
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// ORT's QLinearAveragePool output for a window of float sum `sum` and
/// `count` elements (QLinearPool2DTask, AveragePool::Finalize, quantize_value;
/// qlinear_pool.cc, pool_base.h): sum / float(count), then / y_scale + zY,
/// nearbyint, saturated: two float divisions.
int32_t poolLevel(float sum, int64_t count, const TensorParams &py) {
  float mean = sum / float(count);
  return packRounded(mean / py.scale + float(py.zp), py.type);
}

/// The window sums at which poolLevel steps, for one `count`: entry j
/// (1 <= j < 256) is the least float sum in [-bound, bound] whose level is
/// at least the type's minimum + j (FLT_MAX when none); entry 0 is -FLT_MAX.
/// poolLevel is monotone in the sum there (every step is), so the level of
/// a sum is the number of entries 1.. at or below it.
std::vector<float> poolThresholds(int64_t count, const TensorParams &py, float bound) {
  const float big = std::numeric_limits<float>::max();
  int32_t lo = rangeOf(py.type).first;
  std::vector<float> t(256, big);
  t[0] = -big;
  int64_t first = orderKey(-bound), last = orderKey(bound);
  for (int j = 1; j < 256; ++j) {
    int64_t a = first, b = last + 1;
    while (a < b) {
      int64_t m = a + (b - a) / 2;
      if (poolLevel(fromOrderKey(m), count, py) >= lo + j)
        b = m;
      else
        a = m + 1;
    }
    t[j] = a > last ? big : fromOrderKey(a);
  }
  return t;
}

/// A pool's windows over its D spatial axes (1 to 3), as ORT's
/// PoolAttributes sizes them: per axis the input size, kernel, stride, the
/// pads (auto_pad's where it is set) and the output size (WindowShape's
/// fitWindow: floor, or ceil_mode's ceil less a last window that would start
/// in the end padding).
struct PoolGeometry {
  std::vector<int64_t> in, kernel, stride, padBegin, padEnd, out;
};

FailureOr<PoolGeometry> poolGeometry(NodeContext &ctx, llvm::ArrayRef<int64_t> xs) {
  size_t d = xs.size() - 2;
  PoolGeometry g;
  g.kernel = ctx.attrInts("kernel_shape");
  g.stride = ctx.attrInts("strides", std::vector<int64_t>(d, 1));
  std::vector<int64_t> pads = ctx.attrInts("pads", std::vector<int64_t>(2 * d, 0));
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (g.kernel.size() != d || g.stride.size() != d || pads.size() != 2 * d)
    return ctx.fail("kernel_shape, strides and pads must have " + llvm::Twine(d) + " and " +
                    llvm::Twine(2 * d) + " values for a " + llvm::Twine(d) + "-D input");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return ctx.fail("auto_pad '" + autoPad + "' is not supported");
  bool ceil = ctx.attrInt("ceil_mode", 0) != 0;
  for (size_t a = 0; a < d; ++a) {
    int64_t in = xs[2 + a], k = g.kernel[a], s = g.stride[a], pb = pads[a], pe = pads[a + d];
    if (autoPad == "VALID") {
      pb = pe = 0;
    } else if (autoPad != "NOTSET") {
      int64_t total = std::max<int64_t>(((in + s - 1) / s - 1) * s + k - in, 0);
      pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    }
    if (k < 1 || s < 1 || pb < 0 || pe < 0 || pb >= k || pe >= k)
      return ctx.fail("kernel " + llvm::Twine(k) + ", stride " + llvm::Twine(s) + ", pads " +
                      llvm::Twine(pb) + " and " + llvm::Twine(pe) +
                      ": ORT's QLinearAveragePool asks kernel and stride >= 1 and 0 <= pads < "
                      "kernel");
    WindowAxis axis{in, k, s, 1, pb, pe};
    if (axis.span() < 0)
      return ctx.fail("the padded input size " + llvm::Twine(axis.span() + k) +
                      " is smaller than the kernel " + llvm::Twine(k) + ": there is no output");
    g.in.push_back(in);
    g.padBegin.push_back(pb);
    g.padEnd.push_back(pe);
    g.out.push_back(fitWindow(axis, ceil ? WindowRounding::Ceil : WindowRounding::Floor).out);
  }
  return g;
}

/// The window sums of ORT's QLinearAveragePool (QLinearPool1D/2D/3DTask): x
/// [N, C, d1, ...] (i8 storage) padded with its zero point, dequantized as
/// DequantizeLinear does (float(x - zX) * sX, padding 0), then per output
/// the float sum of its kernel taps in row-major order, each tap a strided
/// slice: [N, C, o1, ...] f32. Padding taps add +0, which leaves ORT's sum
/// of the taps inside the input unchanged.
Value windowSums(NodeContext &ctx, Value x, const TensorParams &px, const PoolGeometry &g) {
  std::vector<int64_t> s = shapeOf(x), padded = s, tapSize = s;
  size_t d = g.kernel.size(), rank = s.size();
  std::vector<int32_t> pads(2 * rank, 0);
  for (size_t a = 0; a < d; ++a) {
    int64_t need = g.stride[a] * g.out[a] + g.kernel[a] - 1;
    int64_t end = std::max<int64_t>(need - g.padBegin[a] - s[2 + a], 0);
    pads[2 * (2 + a)] = int32_t(g.padBegin[a]);
    pads[2 * (2 + a) + 1] = int32_t(end);
    padded[2 + a] += g.padBegin[a] + end;
    tapSize[2 + a] = g.stride[a] * g.out[a];
  }
  int32_t zx = px.zp - offsetOf(px.type);
  Value in = ctx.create<tosa::PadOp>(tensorOf(padded, i8Type(ctx)), x,
                                     ctx.constI32({int64_t(rank), 2}, pads),
                                     constI8(ctx, {}, {int8_t(zx)}), nullptr);
  Value c = binary<tosa::SubOp>(ctx, cast(ctx, in, i32Type(ctx)),
                                channelI32(ctx, {zx}, int64_t(rank), 0));
  Value f = ordered(ctx, mul(ctx, cast(ctx, c, ctx.builder().getF32Type()),
                             ctx.scalarF32(px.scale, int64_t(rank))));
  Value sum;
  for (int64_t t = 0, taps = product(g.kernel); t < taps; ++t) {
    std::vector<int64_t> start(rank, 0);
    for (int64_t a = int64_t(d) - 1, r = t; a >= 0; r /= g.kernel[a], --a)
      start[2 + a] = r % g.kernel[a];
    Value tap = ctx.slice(f, start, tapSize);
    for (size_t a = 0; a < d; ++a) {
      if (g.stride[a] == 1)
        continue;
      std::vector<int64_t> ts = shapeOf(tap);
      int64_t before = product(llvm::ArrayRef<int64_t>(ts).take_front(2 + a));
      int64_t after = product(llvm::ArrayRef<int64_t>(ts).drop_front(3 + a));
      tap = ctx.reshape(tap, {before, g.out[a], g.stride[a], after});
      tap = ctx.slice(tap, {0, 0, 0, 0}, {before, g.out[a], 1, after});
      ts[2 + a] = g.out[a];
      tap = ctx.reshape(tap, ts);
    }
    sum = sum ? ordered(ctx, binary<tosa::AddOp>(ctx, sum, tap)) : tap;
  }
  return sum;
}

/// Elements of output `o`'s window inside an input of `in` (ORT's hend -
/// hstart: the window clipped to the input).
int64_t insideCount(int64_t o, int64_t in, int64_t kernel, int64_t stride, int64_t padBegin) {
  int64_t start = o * stride - padBegin;
  return std::min(start + kernel, in) - std::max<int64_t>(start, 0);
}

/// The quantized level of every window sum `sum` [N, C, o1, ...], as
/// poolLevel computes it: a binary search (8 steps, tosa.gather) in the
/// poolThresholds of the window's count (kernel size with
/// count_include_pad, else the elements inside the input); Y's storage, i8.
FailureOr<Value> poolLevels(NodeContext &ctx, Value sum, const PoolGeometry &g, bool includePad,
                            const TensorParams &px, const TensorParams &py) {
  size_t d = g.out.size();
  int64_t rank = int64_t(d) + 2, positions = product(g.out);
  std::vector<int64_t> counts, slot(positions);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t c = product(g.kernel);
    if (!includePad) {
      c = 1;
      for (int64_t a = int64_t(d) - 1, r = p; a >= 0; r /= g.out[a], --a)
        c *= insideCount(r % g.out[a], g.in[a], g.kernel[a], g.stride[a], g.padBegin[a]);
    }
    auto at = std::find(counts.begin(), counts.end(), c);
    slot[p] = at - counts.begin();
    if (at == counts.end())
      counts.push_back(c);
  }
  // A window's |sum| is at most count * 255 * sX (its elements are no more
  // than its count), so |mean| <= 255 * sX: 260 leaves room for the float
  // sums' rounding. Within that bound poolLevel stays monotone unless
  // mean / sY reaches int32's range, where ORT's conversion wraps.
  if (!(260.0f * px.scale / py.scale + 256.0f < 2.0e9f))
    return ctx.fail("x_scale / y_scale is " + std::to_string(px.scale / py.scale) +
                    "; ORT's QLinearAveragePool can overflow int32 at such ratios, which Kiln "
                    "does not reproduce");
  std::vector<float> table;
  for (int64_t c : counts) {
    std::vector<float> t = poolThresholds(c, py, float(c) * 260.0f * px.scale);
    table.insert(table.end(), t.begin(), t.end());
  }
  std::vector<float> mid(positions);
  std::vector<int32_t> base(positions);
  for (int64_t p = 0; p < positions; ++p) {
    base[p] = int32_t(slot[p] * 256);
    mid[p] = table[base[p] + 128];
  }
  std::vector<int64_t> posShape{1, 1};
  posShape.insert(posShape.end(), g.out.begin(), g.out.end());
  int64_t total = product(shapeOf(sum));
  Value values = ctx.constF32({1, int64_t(table.size()), 1}, table);
  Value bases = ctx.constI32(posShape, base);
  Value level = select(ctx, compare<tosa::GreaterEqualOp>(ctx, sum, ctx.constF32(posShape, mid)),
                       channelI32(ctx, {128}, rank, 0), channelI32(ctx, {0}, rank, 0));
  for (int32_t step = 64; step >= 1; step /= 2) {
    Value cand = binary<tosa::AddOp>(ctx, level, channelI32(ctx, {step}, rank, 0));
    Value index = ctx.reshape(binary<tosa::AddOp>(ctx, cand, bases), {1, total});
    Value t = ctx.create<tosa::GatherOp>(ctx.f32Type({1, total, 1}), values, index);
    t = ctx.reshape(t, shapeOf(sum));
    level = select(ctx, compare<tosa::GreaterEqualOp>(ctx, sum, t), cand, level);
  }
  int32_t lo = rangeOf(py.type).first;
  level = binary<tosa::AddOp>(ctx, level, channelI32(ctx, {lo - offsetOf(py.type)}, rank, 0));
  return cast(ctx, level, i8Type(ctx));
}

/// Kiln's fused QDQ AveragePool (ORT's QLinearAveragePool: X, X_scale,
/// X_zp, Y_scale, Y_zp; X [N, C, d1, ...] of 1 to 3 spatial axes -> Y
/// [N, C, o1, ...]; kernel_shape, strides, pads, auto_pad, ceil_mode,
/// count_include_pad; no dilations, which ORT's kernel does not take), as
/// qlinear_pool.cc computes it: with a kernel of the whole image and no
/// pads, QLinearGlobalAveragePool's integer arithmetic (globalAverage);
/// else the dequantized float sum of each window (windowSums), divided by
/// float(count) (the kernel size with count_include_pad, also over the
/// ceil_mode overhang; else the elements inside the input), divided by
/// y_scale, plus zY, nearbyint and saturated (poolLevels).
LogicalResult convertFusedAveragePool(NodeContext &ctx) {
  FailureOr<UnaryOperand> op = unaryOperand(ctx);
  if (failed(op))
    return failure();
  std::vector<int64_t> xs = shapeOf(op->x);
  if (xs.size() < 3 || xs.size() > 5)
    return ctx.fail("AveragePool takes X [N, C, d1, ...] of 1 to 3 spatial axes; it has shape " +
                    shapeString(xs));
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.fail("attribute kernel_shape is missing");
  FailureOr<PoolGeometry> g = poolGeometry(ctx, xs);
  if (failed(g))
    return failure();
  bool noPads = std::all_of(g->padBegin.begin(), g->padBegin.end(), [](int64_t p) { return !p; }) &&
                std::all_of(g->padEnd.begin(), g->padEnd.end(), [](int64_t p) { return !p; });
  FailureOr<Value> y;
  if (noPads && g->kernel == g->in) {
    y = globalAverage(ctx, op->x, op->px, op->py);
  } else {
    Value sum = windowSums(ctx, op->x, op->px, *g);
    y = poolLevels(ctx, sum, *g, ctx.attrInt("count_include_pad", 0) != 0, op->px, op->py);
  }
  return failed(y) ? failure() : ctx.setQuantizedOutput(0, *y, op->py.type);
}

/// Kiln's fused QDQ Concat of inputs with their own parameters (ORT's
/// QLinearConcat: Y_scale, Y_zp, then X_k, X_k_scale, X_k_zp per input; X_k
/// [..., d_k, ...] along `axis` -> Y [..., sum d_k, ...]), as
/// QLinearConcat::Compute computes it (qlinear_concat.cc): an input with
/// Y's scale and zero point copied, any other through ORT's identity
/// lookupTable (x_scale * (x - zX) in float, MlasQuantizeLinear) as a
/// tosa.table; then tosa.concat.
LogicalResult convertFusedConcat(NodeContext &ctx) {
  int count = (ctx.numInputs() - 2) / 3;
  if (ctx.numInputs() < 5 || (ctx.numInputs() - 2) % 3 != 0)
    return ctx.fail("QLinearConcat takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) "
                    "per input; it has " +
                    llvm::Twine(ctx.numInputs()) + " inputs");
  int32_t type = ctx.inputType(2);
  if (failed(checkQuantType(ctx, type, "X")))
    return failure();
  FailureOr<TensorParams> py = tensorParams(ctx, 0, 1, type);
  if (failed(py))
    return failure();
  llvm::SmallVector<Value> parts;
  for (int k = 0; k < count; ++k) {
    int at = 2 + 3 * k;
    FailureOr<TensorParams> px = tensorParams(ctx, at + 1, at + 2, type);
    FailureOr<Value> x = failed(px) ? FailureOr<Value>(failure()) : ctx.quantizedInput(at);
    if (failed(x))
      return failure();
    if (px->scale == py->scale && px->zp == py->zp) {
      parts.push_back(*x);
      continue;
    }
    Value t = constI8(ctx, {256}, lookupTable(*px, *py, [](float d) { return d; }));
    parts.push_back(ctx.create<tosa::TableOp>(x->getType(), *x, t));
  }
  std::vector<int64_t> shape = shapeOf(parts.front());
  int64_t axis = normalizeAxis(ctx.attrInt("axis", 0), int64_t(shape.size()));
  if (axis < 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 0)) + " is out of range");
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += shapeOf(p)[axis];
  Value y = ctx.create<tosa::ConcatOp>(tensorOf(shape, i8Type(ctx)), parts,
                                       ctx.builder().getI64IntegerAttr(axis));
  return ctx.setQuantizedOutput(0, y, py->type);
}

} // namespace

void registerQuantFusedOps(ConverterTable &table) {
  // Only fuseQDQ makes these (a model's own are com.microsoft's, a domain
  // Kiln refuses).
  table["QLinearAdd"] = convertFusedAdd;
  table["QLinearMul"] = convertFusedMul;
  table["QLinearLeakyRelu"] = convertFusedLookup;
  table["QLinearSigmoid"] = convertFusedLookup;
  table["QLinearGlobalAveragePool"] = convertFusedGlobalAveragePool;
  table["QLinearSoftmax"] = convertFusedSoftmax;
  table["QLinearAveragePool"] = convertFusedAveragePool;
  table["QLinearConcat"] = convertFusedConcat;
}

} // namespace kiln::onnx
