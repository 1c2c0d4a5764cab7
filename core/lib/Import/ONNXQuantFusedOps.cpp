//===- ONNXQuantFusedOps.cpp - Fused QDQ groups as ORT's QLinear kernels -===//
//
// Kiln's forms of ONNX Runtime 1.30's com.microsoft QLinearAdd, QLinearMul,
// QLinearLeakyRelu, QLinearSigmoid, QLinearGlobalAveragePool and
// QLinearSoftmax, which only
// fuseQDQ makes (ONNXQuantOps.cpp, "QDQ groups"; inputs as ORT's: x,
// x_scale, x_zero_point, ..., y_scale, y_zero_point; every scale and zero
// point one constant value, every tensor of one type). Each computes what
// ORT's CPU kernel computes on x86-64, bit for bit: the MLAS routine it
// follows is named at each converter. Storage as ONNXQuantOps.cpp's: i8,
// uint8 as q - 128.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "ONNXQuantHelpers.h"

#include <algorithm>
#include <cmath>
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

/// Kiln's fused QDQ Add (ORT's QLinearAdd: A, A_scale, A_zp, B, B_scale,
/// B_zp, C_scale, C_zp; A [...] and B [...] broadcast to C's shape): a
/// lookup in addTable's 65536 entries, indexed by both inputs (tosa.gather
/// of [1, 65536, 1] at [1, |C|]), bit-exact with ORT.
LogicalResult convertFusedAdd(NodeContext &ctx) {
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
  std::vector<int8_t> table =
      addTable(*pa, *pb, *pc, broadcastLoop(ctx.inputShape(0), ctx.inputShape(3)));
  int64_t rank = std::max(shapeOf(*a).size(), shapeOf(*b).size());
  Value ia = mul(ctx, cast(ctx, *a, i32Type(ctx)), channelI32(ctx, {256}, rank, 0));
  Value ib = binary<tosa::AddOp>(ctx, cast(ctx, *b, i32Type(ctx)),
                                 channelI32(ctx, {128 * 256 + 128}, rank, 0));
  Value index = binary<tosa::AddOp>(ctx, ia, ib);
  std::vector<int64_t> shape = shapeOf(index);
  int64_t n = product(shape);
  Value values = constI8(ctx, {1, 65536, 1}, table);
  Value g = ctx.create<tosa::GatherOp>(tensorOf({1, n, 1}, i8Type(ctx)), values,
                                       ctx.reshape(index, {1, n}));
  return ctx.setQuantizedOutput(0, ctx.reshape(g, shape), pc->type);
}

/// Kiln's fused QDQ Mul (ORT's QLinearMul, inputs and shapes as
/// QLinearAdd's), as
/// MLAS's SSE2 kernel computes it (MlasQLinearMulKernel, qlmul.cpp): the
/// int32 product (a - zA)(b - zB), converted to float, times sA * sB / sC
/// (float, in that order), plus zC, then cvtps2dq (nearbyint) and
/// saturating packs; the same for every broadcast loop.
LogicalResult convertFusedMul(NodeContext &ctx) {
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
  int64_t rank = std::max(shapeOf(*a).size(), shapeOf(*b).size());
  int32_t off = offsetOf(type);
  auto centered = [&](Value v, int32_t zp) {
    return binary<tosa::SubOp>(ctx, cast(ctx, v, i32Type(ctx)),
                               channelI32(ctx, {zp - off}, rank, 0));
  };
  Value prod = mul(ctx, centered(*a, pa->zp), centered(*b, pb->zp));
  float ratio = pa->scale * pb->scale / pc->scale;
  Value t = ordered(
      ctx, mul(ctx, cast(ctx, prod, ctx.builder().getF32Type()), ctx.scalarF32(ratio, rank)));
  t = ordered(ctx, binary<tosa::AddOp>(ctx, t, ctx.scalarF32(float(pc->zp), rank)));
  auto [lo, hi] = rangeOf(pc->type);
  Value n = ctx.clamp(roundHalfEven(ctx, t), float(lo), float(hi));
  Value outside = compare<tosa::GreaterEqualOp>(ctx, t, ctx.scalarF32(2147483648.0f, rank));
  n = select(ctx, outside, ctx.scalarF32(float(lo), rank), n);
  Value y = binary<tosa::SubOp>(ctx, n, ctx.scalarF32(float(offsetOf(pc->type)), rank));
  return ctx.setQuantizedOutput(0, cast(ctx, y, i8Type(ctx)), pc->type);
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

/// Kiln's fused QDQ LeakyRelu / Sigmoid (ORT's QLinearLeakyRelu /
/// QLinearSigmoid: X, X_scale, X_zp, Y_scale, Y_zp; Y of X's shape): ORT's
/// 256-entry table (QlinearBuildLookupTable, qlinear_lookup_table.cc:
/// x_scale * (x - zp) in float, the function in float, MlasQuantizeLinear),
/// as a tosa.table.
LogicalResult convertFusedLookup(NodeContext &ctx) {
  int32_t type = ctx.inputType(0);
  if (failed(checkQuantType(ctx, type, "X")))
    return failure();
  auto px = tensorParams(ctx, 1, 2, type), py = tensorParams(ctx, 3, 4, type);
  if (failed(px) || failed(py))
    return failure();
  FailureOr<Value> x = ctx.quantizedInput(0);
  if (failed(x))
    return failure();
  bool sigmoid = ctx.node().opType == "QLinearSigmoid";
  float alpha = ctx.attrFloat("alpha", 0.01f);
  auto [lo, hi] = rangeOf(py->type);
  std::vector<int8_t> table(256);
  for (int k = 0; k < 256; ++k) {
    int32_t q = k - 128 + offsetOf(type);
    float d = px->scale * float(q - px->zp);
    float v = sigmoid ? mlasLogistic(d) : d >= 0.0f ? d : alpha * d;
    float r = std::clamp(std::nearbyint(v / py->scale), float(lo - py->zp), float(hi - py->zp));
    table[k] = int8_t(int32_t(r) + py->zp - offsetOf(py->type));
  }
  Value t = constI8(ctx, {256}, table);
  return ctx.setQuantizedOutput(0, ctx.create<tosa::TableOp>(x->getType(), *x, t), py->type);
}

/// Kiln's fused QDQ GlobalAveragePool (ORT's QLinearGlobalAveragePool: X,
/// X_scale, X_zp, Y_scale, Y_zp; X [N, C, d1, ...] -> [N, C, 1, ...]), as
/// MLAS computes it (MlasQLinearGlobalAveragePoolNchw, qlgavgpool.cpp): the
/// int32 sum of x - zX over the image, requantized by MlasRequantizeOutput
/// with the float scale sX / (sY * float(image size)).
LogicalResult convertFusedGlobalAveragePool(NodeContext &ctx) {
  int32_t type = ctx.inputType(0);
  if (failed(checkQuantType(ctx, type, "X")))
    return failure();
  auto px = tensorParams(ctx, 1, 2, type), py = tensorParams(ctx, 3, 4, type);
  FailureOr<Value> x =
      failed(px) || failed(py) ? FailureOr<Value>(failure()) : ctx.quantizedInput(0);
  if (failed(x))
    return failure();
  std::vector<int64_t> shape = shapeOf(*x);
  if (shape.size() < 3)
    return ctx.fail("GlobalAveragePool takes X [N, C, d1, ...]; it has shape " +
                    shapeString(shape));
  Value acc = cast(ctx, *x, i32Type(ctx));
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
  int32_t zx = px->zp - offsetOf(type);
  acc = binary<tosa::SubOp>(ctx, acc, channelI32(ctx, {int32_t(zx * image)}, rank, 0));
  float scale = px->scale / (py->scale * float(image));
  return ctx.setQuantizedOutput(0, requantize(ctx, acc, {scale}, py->zp - offsetOf(py->type)),
                                py->type);
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
  int32_t type = ctx.inputType(0);
  if (failed(checkQuantType(ctx, type, "X")))
    return failure();
  auto px = tensorParams(ctx, 1, 2, type), py = tensorParams(ctx, 3, 4, type);
  FailureOr<Value> x =
      failed(px) || failed(py) ? FailureOr<Value>(failure()) : ctx.quantizedInput(0);
  if (failed(x))
    return failure();
  int64_t rank = int64_t(shapeOf(*x).size()), opset = ctx.opset();
  int64_t axis = normalizeAxis(ctx.attrInt("axis", opset < 13 ? 1 : -1), rank);
  std::vector<int32_t> perm(rank);
  for (int64_t k = 0; k < rank; ++k)
    perm[k] = int32_t(k);
  std::swap(perm[axis], perm[rank - 1]);
  bool moved = opset >= 13 && axis != rank - 1;
  Value v = moved ? ctx.transpose(*x, perm) : *x;
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
  Value table = ctx.constF32({1, 256, 1}, softmaxTable(px->scale, d));
  Value e =
      ctx.create<tosa::GatherOp>(ctx.f32Type({1, total, 1}), table, ctx.reshape(k, {1, total}));
  e = ctx.reshape(e, {n, d});
  Value sum = ctx.slice(e, {0, 0}, {n, 1});
  for (int64_t j = 1; j < d; ++j)
    sum = ordered(ctx, binary<tosa::AddOp>(ctx, sum, ctx.slice(e, {0, j}, {n, 1})));
  const float unit = std::ldexp(1.0f, -64);
  float c = std::floor(1.0f / py->scale);
  Value p = ordered(ctx, mul(ctx, e, ctx.scalarF32(c * unit, 2)));
  Value s = ordered(ctx, mul(ctx, sum, ctx.scalarF32(unit, 2)));
  Value q = roundQuotient(ctx, p, runtimeScaleParts(ctx, s));
  Value y =
      ctx.clamp(binary<tosa::AddOp>(ctx, q, ctx.scalarF32(float(py->zp), 2)), -1.0e9f, 255.0f);
  y = binary<tosa::SubOp>(ctx, y, ctx.scalarF32(float(offsetOf(type)), 2));
  y = select(ctx, compare<tosa::GreaterEqualOp>(ctx, y, ctx.scalarF32(128.0f, 2)),
             binary<tosa::SubOp>(ctx, y, ctx.scalarF32(256.0f, 2)), y);
  Value out = ctx.reshape(cast(ctx, y, i8Type(ctx)), vs);
  return ctx.setQuantizedOutput(0, moved ? ctx.transpose(out, perm) : out, type);
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
}

} // namespace kiln::onnx
