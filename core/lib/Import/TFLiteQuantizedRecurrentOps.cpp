//===- TFLiteQuantizedRecurrentOps.cpp - int8 sequence LSTM -> TOSA -------===//
//
// UNIDIRECTIONAL_SEQUENCE_LSTM in TFLite's integer "8x8->16" form: int8
// input, output, output state and weights, an int16 cell state of a
// power-of-two scale, int32 gate biases. Unrolled at import like the float
// LSTM (TFLiteRecurrentOps.cpp).
//
// Semantics: TensorFlow Lite 2.9's kernels/unidirectional_sequence_lstm.cc
// (PopulateQuantizedLstmParams8x8_16, the effective biases of
// PrecomputeZeroPointTimesWeightWithBias) and kernels/lstm_eval.cc
// (LstmStepInteger8x8_16 with CalculateLstmGateInteger8x8_16,
// UpdateLstmCellInteger and CalculateLstmOutputInteger8x8_16), with the
// tensor_utils primitives of kernels/internal/reference/
// portable_tensor_utils.cc. Per step, for gate g (input, forget, cell,
// output), every gate value an int16 in Q3.12 (scale 2^-12 without layer
// norm):
//   a_g = sat16(MBQM(b_g - zx sum W_g + sum x W_g, sx sW_g / 2^-12))
//   a_g = sat16(MBQM(-zh sum R_g + sum h R_g, sh sR_g / 2^-12) + a_g)
//   i, f, o = logistic(a) (gemmlowp's int16 logistic, Q3.12 -> Q0.15);
//   g = tanh(a_c) (gemmlowp's int16 tanh, Q3.12 -> Q0.15);
//   CIFG: i = 32767 - f
//   c = sat16(RDBPOT(f c, 15) + RDBPOT(i g, 30 + log2(s_c))), clipped to
//       +-trunc(cell_clip / s_c) when cell_clip > 0
//   h = sat8(MBQM(o tanh(c), 2^-30 / s_hidden) - z_hidden), tanh in
//       Q(15 + log2 s_c); s_hidden, z_hidden from the operator's fifth
//       intermediate tensor; TFLite 2.9 subtracts z_hidden (CwiseMul),
//       TFLite Micro adds it
// MBQM is TFLite's MultiplyByQuantizedMultiplier (quant::rescale), RDBPOT
// gemmlowp's RoundingDivideByPOT (half away from zero). The effective
// scales are float products as TFLite computes them. The logistic and
// tanh are evaluated at import for all 65536 int16 inputs (an exact
// emulation of gemmlowp's fixedpoint.h int16 arithmetic) and applied as a
// tosa.gather from that table (an i32 constant: Kiln's artifact has no
// i16 constant kind).
//
// TensorFlow Lite Micro (tensorflow/lite/micro/kernels/lstm_eval.cc at
// 90b983c2b3f1) computes the same recurrence but with its LUT-based
// reference_integer_ops::Logistic/Tanh; this converter follows TFLite 2.9.
//
// Refused with one error line: peephole, layer norm and projection (not
// converted yet), a fused activation other than TANH, weights that are not
// symmetric per-tensor int8, a cell state that is not int16 of a
// power-of-two scale.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"
#include "TFLiteQuantizedOps.h"
#include "TosaMath.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {

// --- gemmlowp's int16 fixed point (fixedpoint.h), scalar ------------------
// Raw int16 values of FixedPoint<int16_t, I> (15 - I fractional bits).
// +, - and negation wrap as the int16 scalar operators do.

int16_t wrap16(int32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v & 0xffff)); }

/// SaturatingRoundingDoublingHighMul for int16.
int16_t highMul(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  int32_t ab = int32_t(a) * int32_t(b);
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return wrap16((ab + nudge) / (1 << 15));
}

/// RoundingDivideByPOT for int16 and int32.
int32_t divideByPot(int32_t x, int e) {
  int32_t mask = int32_t((int64_t{1} << e) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

/// SaturatingRoundingMultiplyByPOT<e> for int16.
int16_t multiplyByPot(int16_t x, int e) {
  if (e == 0)
    return x;
  if (e < 0)
    return wrap16(divideByPot(x, -e));
  int32_t threshold = (1 << (15 - e)) - 1;
  if (x > threshold)
    return std::numeric_limits<int16_t>::max();
  if (x < -threshold)
    return std::numeric_limits<int16_t>::min();
  return wrap16(int32_t(x) * (1 << e));
}

/// GEMMLOWP_CHECKED_FIXEDPOINT_CONSTANT for int16: the int32 raw value
/// rounding-shifted right by 16.
int16_t constant16(int32_t raw32) { return wrap16(divideByPot(raw32, 16)); }

int16_t saturatingAdd16(int16_t a, int16_t b) {
  return int16_t(std::clamp<int32_t>(int32_t(a) + b, -32768, 32767));
}

/// exp(a) for a in [-1/4, 0), Q0.15.
int16_t expQuarter(int16_t a) {
  const int16_t constantTerm = constant16(1895147668), oneThird = constant16(715827883);
  int16_t x = wrap16(a + (1 << 12));
  int16_t x2 = highMul(x, x), x3 = highMul(x2, x), x4 = highMul(x2, x2);
  int16_t x4Over4 = multiplyByPot(x4, -2);
  int16_t poly = multiplyByPot(wrap16(highMul(wrap16(x4Over4 + x3), oneThird) + x2), -1);
  return saturatingAdd16(constantTerm, highMul(constantTerm, wrap16(x + poly)));
}

/// exp(a) for a <= 0 in Q(intBits), result Q0.15 (exp_on_negative_values).
int16_t expNegative(int16_t a, int intBits) {
  int fracBits = 15 - intBits;
  int16_t quarter = int16_t(1 << (fracBits - 2));
  int16_t mask = int16_t(quarter - 1);
  int16_t modQuarter = wrap16((a & mask) - quarter);
  int16_t result = expQuarter(multiplyByPot(modQuarter, intBits));
  int16_t remainder = wrap16(modQuarter - a);
  const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                  39332535,   720401,     242};
  for (int k = 0; k < 7; ++k) {
    int exponent = k - 2;
    if (intBits > exponent && (remainder & (1 << (fracBits + exponent))))
      result = highMul(result, constant16(multipliers[k]));
  }
  if (intBits > 5 && a < constant16(-(1 << (36 - intBits))))
    result = 0;
  return a == 0 ? int16_t(32767) : result;
}

/// The Newton-Raphson reciprocal of 1 + a for a in (0, 1) in Q2.13 steps;
/// `tanhForm`: (1 - a) / (1 + a) instead of 1 / (1 + a).
int16_t reciprocalOnePlus(int16_t a, bool tanhForm) {
  int32_t sum = int32_t(a) + 32767;
  int16_t half = wrap16((sum + (sum >= 0 ? 1 : -1)) / 2);
  int16_t x = wrap16(constant16(1515870810) + highMul(half, constant16(-1010580540)));
  for (int k = 0; k < 3; ++k) {
    int16_t oneMinus = wrap16((1 << 13) - highMul(half, x));
    x = wrap16(x + multiplyByPot(highMul(x, oneMinus), 2));
  }
  return tanhForm ? multiplyByPot(wrap16(x - (1 << 13)), 2) : multiplyByPot(x, 1);
}

/// gemmlowp::logistic of a Q(intBits) int16, Q0.15 result.
int16_t logistic16(int16_t a, int intBits) {
  if (a == 0)
    return constant16(1 << 30);
  int16_t absolute = a > 0 ? a : wrap16(-a);
  int16_t positive = reciprocalOnePlus(expNegative(wrap16(-absolute), intBits), false);
  return a > 0 ? positive : wrap16(32767 - positive);
}

/// gemmlowp::tanh of a Q(intBits) int16, Q0.15 result.
int16_t tanh16(int16_t a, int intBits) {
  if (a == 0)
    return 0;
  int16_t n = a < 0 ? a : wrap16(-a);
  int16_t t = reciprocalOnePlus(expNegative(n, intBits + 1), true);
  return a < 0 ? wrap16(-t) : t;
}

// --- Building blocks ---------------------------------------------------------

std::string label(OpContext &ctx, int i, const std::string &role) {
  const schema::Tensor *t = ctx.inputTensor(i);
  std::string name = t && t->name() ? t->name()->str() : "";
  return "input " + std::to_string(i) + " (" + role + (name.empty() ? "" : " '" + name + "'") + ")";
}

/// `f` of every int16 value as a [1, 65536, 1] i32 constant, index x + 32768.
Value int16Table(OpContext &ctx, const std::function<int16_t(int16_t)> &f) {
  std::vector<int32_t> table(65536);
  for (int32_t x = -32768; x < 32768; ++x)
    table[x + 32768] = f(int16_t(x));
  return ctx.reshape(ctx.constI32({65536}, table), {1, 65536, 1});
}

/// Looks up every element of `v` (i32 [B, N] holding int16 values) in a
/// table from int16Table.
Value lookup(OpContext &ctx, Value table, Value v) {
  auto s = quant::shapeOf(v);
  int64_t b = s[0], n = s[1];
  auto i32 = quant::i32Type(ctx);
  Value index = tosa_math::binary<tosa::AddOp>(ctx, v, ctx.scalarOf(i32, 32768, 2));
  Value got = ctx.create<tosa::GatherOp>(quant::tensorOf({1, b * n, 1}, i32), table,
                                         ctx.reshape(index, {1, b * n}));
  return ctx.reshape(got, {b, n});
}

/// gemmlowp's RoundingDivideByPOT(x, e) (half away from zero) of an i32
/// tensor: floor((x - (x < 0) + 2^(e-1)) / 2^e), the floor by a tosa.rescale
/// of multiplier 2^30 and shift 30 + e (single rounding, half up).
Value roundingShift(OpContext &ctx, Value x, int e) {
  auto s = quant::shapeOf(x);
  auto i32 = quant::i32Type(ctx);
  Value negative = tosa_math::compare<tosa::GreaterOp>(ctx, ctx.scalarOf(i32, 0, 2), x);
  Value one = ctx.create<tosa::CastOp>(quant::tensorOf(s, i32), negative);
  Value adjusted = tosa_math::binary<tosa::SubOp>(ctx, x, one);
  auto b = ctx.builder();
  return ctx.create<tosa::RescaleOp>(quant::tensorOf(s, i32), adjusted, b.getI32IntegerAttr(0),
                                     b.getI32IntegerAttr(0), b.getDenseI32ArrayAttr({1 << 30}),
                                     b.getDenseI32ArrayAttr({30 + e}), b.getBoolAttr(true),
                                     b.getBoolAttr(false), b.getBoolAttr(false));
}

/// Scale and zero point as the file stores them (int16 tensors and
/// intermediates have no TensorQuant).
struct PlainQuant {
  float scale = 0;
  int64_t zeroPoint = 0;
};

FailureOr<PlainQuant> plainQuant(OpContext &ctx, const schema::Tensor *t, const std::string &what) {
  const schema::QuantizationParameters *q = t ? t->quantization() : nullptr;
  if (!q || !q->scale() || q->scale()->size() != 1 || !(q->scale()->Get(0) > 0.0f) ||
      !std::isfinite(q->scale()->Get(0)))
    return ctx.fail(what + " needs one positive quantization scale (per tensor)");
  PlainQuant p;
  p.scale = q->scale()->Get(0);
  p.zeroPoint = q->zero_point() && q->zero_point()->size() ? q->zero_point()->Get(0) : 0;
  return p;
}

/// One gate's int8 weights: input [N, I] and recurrent [N, O] constants,
/// bias [N]; scales.
struct Gate {
  quant::FoldedProduct x, h; // biases with the zero points folded in
  Value w, r;
  float xScale = 0, hScale = 0; // effective: sx sW / 2^-12, sh sR / 2^-12
};

struct IntLstm {
  int64_t steps = 0, batch = 0, inputs = 0, cells = 0, outputs = 0;
  bool timeMajor = false, cifg = false;
  Gate gate[4];
  const TensorQuant *in = nullptr, *state = nullptr;
  int cellPower = 0;     // log2 of the cell state's scale
  int32_t cellClip = 0;  // quantized; 0: none
  float hiddenScale = 0; // 2^-15 / s_hidden * 2^-15
  int32_t hiddenZp = 0;
};

const char *const kGateName[4] = {"input", "forget", "cell", "output"};

/// Checks the types and reads the constants of gate g.
LogicalResult readGate(OpContext &ctx, IntLstm &l, int g) {
  int wi = 1 + g, ri = 5 + g, bi = 12 + g;
  std::string gate = kGateName[g];
  for (auto [i, role] : {std::pair{wi, gate + "-gate input weights"},
                         std::pair{ri, gate + "-gate recurrent weights"}}) {
    if (!ctx.hasInput(i) || ctx.inputTensor(i)->type() != schema::TensorType::INT8 ||
        !ctx.isConstant(i))
      return ctx.fail(label(ctx, i, role) + " must be a constant INT8 tensor in the integer LSTM");
    const TensorQuant *q = ctx.inputQuant(i);
    if (!q || q->perChannel() || q->zeroPoint() != 0)
      return ctx.fail(label(ctx, i, role) +
                      " must be quantized per tensor with zero point 0, as TFLite's integer "
                      "LSTM reads it");
  }
  std::vector<int64_t> ws = ctx.inputShape(wi), rs = ctx.inputShape(ri);
  if (ws != std::vector<int64_t>{l.cells, l.inputs} ||
      rs != std::vector<int64_t>{l.cells, l.outputs})
    return ctx.fail(gate + "-gate weights are " + shapeString(ws) + " and " + shapeString(rs) +
                    "; expected " + shapeString({l.cells, l.inputs}) + " and " +
                    shapeString({l.cells, l.outputs}));
  if (!ctx.hasInput(bi) || ctx.inputTensor(bi)->type() != schema::TensorType::INT32 ||
      ctx.inputShape(bi) != std::vector<int64_t>{l.cells})
    return ctx.fail(label(ctx, bi, gate + " gate bias") + " must be INT32 of shape " +
                    shapeString({l.cells}));
  auto w = ctx.input(wi), r = ctx.input(ri), bias = ctx.input(bi);
  if (failed(w) || failed(r) || failed(bias))
    return failure();
  Gate &gt = l.gate[g];
  gt.w = *w;
  gt.r = *r;
  const TensorQuant *wq = ctx.inputQuant(wi), *rq = ctx.inputQuant(ri);
  const float gateScale = std::ldexp(1.0f, -12);
  gt.xScale = wq->scale() * l.in->scale() / gateScale;
  gt.hScale = rq->scale() * l.state->scale() / gateScale;
  auto x = quant::foldInputZeroPoint(ctx, *w, *bias, {l.in, wq, nullptr}, l.cells, true);
  auto h = quant::foldInputZeroPoint(ctx, *r, ctx.constI32({l.cells}, {0}), {l.state, rq, nullptr},
                                     l.cells, true);
  if (failed(x) || failed(h))
    return failure();
  gt.x = *x;
  gt.h = *h;
  return success();
}

/// Checks what this converter handles and reads the sizes and scales.
LogicalResult readIntLstm(OpContext &ctx, IntLstm &l) {
  const auto *opts = ctx.options<schema::UnidirectionalSequenceLSTMOptions>();
  if (!opts)
    return ctx.fail("has no UnidirectionalSequenceLSTMOptions");
  if (ctx.numInputs() != 24 && ctx.numInputs() != 20)
    return ctx.fail("has " + llvm::Twine(ctx.numInputs()) +
                    " inputs; UNIDIRECTIONAL_SEQUENCE_LSTM takes 24 (20 without layer norm)");
  if (opts->fused_activation_function() != schema::ActivationFunctionType::TANH)
    return ctx.fail(std::string("fused_activation_function ") +
                    schema::EnumNameActivationFunctionType(opts->fused_activation_function()) +
                    " is not supported by the integer LSTM (TFLite's integer kernel uses TANH)");
  for (int i : {9, 10, 11})
    if (ctx.hasInput(i))
      return ctx.fail(label(ctx, i, "peephole weights") +
                      " is given: the int8 LSTM with peephole is not supported yet");
  for (int i : {16, 17})
    if (ctx.hasInput(i))
      return ctx.fail(label(ctx, i, "projection") +
                      " is given: the int8 LSTM with projection is not supported yet");
  for (int i = 20; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      return ctx.fail(label(ctx, i, "layer-norm coefficients") +
                      " is given: the int8 LSTM with layer norm is not supported yet");
  std::vector<int64_t> s = ctx.inputShape(0);
  if (s.size() != 3 || llvm::any_of(s, [](int64_t d) { return d <= 0; }))
    return ctx.fail(label(ctx, 0, "input") + " has shape " + shapeString(s) +
                    "; expected rank 3, static and positive");
  l.timeMajor = opts->time_major();
  l.steps = l.timeMajor ? s[0] : s[1];
  l.batch = l.timeMajor ? s[1] : s[0];
  l.inputs = s[2];
  if (l.steps > tosa_math::kMaxUnrolledSteps)
    return ctx.fail(llvm::Twine(l.steps) + " time steps exceed the " +
                    llvm::Twine(tosa_math::kMaxUnrolledSteps) + " steps Kiln unrolls");
  if (!ctx.hasInput(2) || !ctx.hasInput(6) || ctx.inputShape(2).size() != 2 ||
      ctx.inputShape(6).size() != 2)
    return ctx.fail("input-to-forget weights (input 2) and recurrent-to-forget weights (input 6) "
                    "must be given, [n_cell, n_input] and [n_cell, n_output]");
  l.cells = ctx.inputShape(2)[0];
  l.outputs = ctx.inputShape(6)[1];
  if (l.outputs != l.cells)
    return ctx.fail("n_output " + llvm::Twine(l.outputs) + " differs from n_cell " +
                    llvm::Twine(l.cells) + " without projection weights");
  l.cifg = !ctx.hasInput(1);
  if (l.cifg != !ctx.hasInput(5) || l.cifg == ctx.hasInput(12))
    return ctx.fail("input gate: inputs 1, 5 and 12 must all be given, or all be -1 (CIFG)");
  using T = schema::TensorType;
  if (ctx.outputTensor(0)->type() != T::INT8)
    return ctx.fail("output 0 must be INT8 in the integer LSTM");
  for (auto [i, role, type] :
       {std::tuple{18, "output state", T::INT8}, std::tuple{19, "cell state", T::INT16}}) {
    if (!ctx.hasInput(i) || !ctx.isVariable(i))
      return ctx.fail(label(ctx, i, role) +
                      " must be a variable tensor (is_variable); TFLite keeps the state in one");
    if (ctx.inputTensor(i)->type() != type)
      return ctx.fail(label(ctx, i, role) + " is " +
                      schema::EnumNameTensorType(ctx.inputTensor(i)->type()) + "; expected " +
                      schema::EnumNameTensorType(type));
  }
  if (ctx.inputShape(18) != std::vector<int64_t>{l.batch, l.outputs} ||
      ctx.inputShape(19) != std::vector<int64_t>{l.batch, l.cells})
    return ctx.fail("the states are " + shapeString(ctx.inputShape(18)) + " and " +
                    shapeString(ctx.inputShape(19)) + "; expected " +
                    shapeString({l.batch, l.outputs}) + " and " + shapeString({l.batch, l.cells}));
  auto in = quant::inQuant(ctx, 0), state = quant::inQuant(ctx, 18);
  if (failed(in) || failed(state))
    return failure();
  l.in = *in;
  l.state = *state;
  auto cell = plainQuant(ctx, ctx.inputTensor(19), label(ctx, 19, "cell state"));
  if (failed(cell))
    return failure();
  int exponent = 0;
  if (cell->zeroPoint != 0 || std::frexp(cell->scale, &exponent) != 0.5f)
    return ctx.fail(label(ctx, 19, "cell state") + " has scale " + shortNumber(cell->scale) +
                    " and zero point " + llvm::Twine(cell->zeroPoint) +
                    "; the integer LSTM needs a power-of-two scale (its cell arithmetic shifts by "
                    "the log2) and zero point 0");
  l.cellPower = exponent - 1;
  if (15 + l.cellPower > 6 || 15 + l.cellPower < 0)
    return ctx.fail(label(ctx, 19, "cell state") + " has scale 2^" + llvm::Twine(l.cellPower) +
                    "; TFLite's integer LSTM takes 2^-15 to 2^-9");
  float clip = opts->cell_clip();
  if (!(clip >= 0) || !std::isfinite(clip))
    return ctx.fail("cell_clip must be 0 or positive");
  if (clip > 0)
    l.cellClip = int32_t(std::clamp(clip / cell->scale, -32768.0f, 32767.0f));
  return success();
}

/// The operator's intermediate tensor `i` (schema Operator.intermediates),
/// or nullptr: the operator is the importer graph's operator #index.
const schema::Tensor *intermediateTensor(OpContext &ctx, int i) {
  const schema::SubGraph *graph = ctx.owner().graph;
  if (!graph || !graph->operators() || ctx.index() >= int(graph->operators()->size()))
    return nullptr;
  const schema::Operator *op = graph->operators()->Get(ctx.index());
  if (!op->outputs() || !op->outputs()->size() || op->outputs()->Get(0) != ctx.outputIndex(0))
    return nullptr;
  const auto *list = op->intermediates();
  if (!list || i < 0 || i >= int(list->size()) || list->Get(i) < 0)
    return nullptr;
  return ctx.owner().tensor(list->Get(i));
}

/// The fifth intermediate (the hidden state's quantization):
/// effective scale 2^-15 / s * 2^-15 (in double, stored as float).
LogicalResult readHidden(OpContext &ctx, IntLstm &l) {
  const schema::Tensor *hidden = intermediateTensor(ctx, 4);
  if (!hidden)
    return ctx.fail("has no fifth intermediate tensor; TFLite's integer LSTM reads the hidden "
                    "state's scale and zero point from it");
  auto q = plainQuant(ctx, hidden, "intermediate 4 (hidden state)");
  if (failed(q))
    return failure();
  l.hiddenScale = float(std::pow(2.0, -15) / q->scale * std::pow(2.0, -15));
  l.hiddenZp = int32_t(q->zeroPoint);
  return success();
}

/// sat16(MBQM(acc, scale) + add): the int16 gate accumulation (add: null
/// or the i32 [B, N] value so far).
FailureOr<Value> accumulate(OpContext &ctx, Value acc, float scale, Value add) {
  auto i32 = quant::i32Type(ctx);
  auto scaled = quant::rescale(ctx, acc, i32, 0, 0, {double(scale)});
  if (failed(scaled))
    return failure();
  Value sum = add ? tosa_math::binary<tosa::AddOp>(ctx, *scaled, add) : *scaled;
  return quant::clampInt(ctx, sum, -32768, 32767);
}

/// The product of `x` (i8 [M, K]) and a gate's weights: i32 [M, N].
Value product(OpContext &ctx, Value x, Value w, const quant::FoldedProduct &f, int64_t n) {
  int64_t m = quant::shapeOf(x)[0];
  return ctx.create<tosa::FullyConnectedOp>(quant::tensorOf({m, n}, quant::i32Type(ctx)), x, w,
                                            f.bias, f.quantization);
}

} // namespace

/// UNIDIRECTIONAL_SEQUENCE_LSTM with int8 input (the 8x8->16 integer
/// kernel); called by the float converter for int8 inputs.
LogicalResult convertQuantizedUnidirectionalLstm(OpContext &ctx) {
  IntLstm l;
  if (failed(readIntLstm(ctx, l)) || failed(readHidden(ctx, l)))
    return failure();
  for (int g = l.cifg ? 1 : 0; g < 4; ++g)
    if (failed(readGate(ctx, l, g)))
      return failure();
  auto x = ctx.input(0), h0 = ctx.input(18), c0 = ctx.input(19);
  if (failed(x) || failed(h0) || failed(c0))
    return failure();
  auto i32 = quant::i32Type(ctx);
  int64_t b = l.batch, n = l.cells;
  Value seq = l.timeMajor ? *x : ctx.transpose(*x, {1, 0, 2});
  Value flat = ctx.reshape(seq, {l.steps * b, l.inputs});
  Value xw[4];
  for (int g = l.cifg ? 1 : 0; g < 4; ++g) {
    auto a =
        accumulate(ctx, product(ctx, flat, l.gate[g].w, l.gate[g].x, n), l.gate[g].xScale, Value());
    if (failed(a))
      return failure();
    xw[g] = *a;
  }
  Value sigmoid = int16Table(ctx, [](int16_t v) { return logistic16(v, 3); });
  Value tanhGate = int16Table(ctx, [](int16_t v) { return tanh16(v, 3); });
  int cellBits = 15 + l.cellPower;
  Value tanhCell = int16Table(ctx, [cellBits](int16_t v) { return tanh16(v, cellBits); });
  Value h = *h0;
  Value c = ctx.create<tosa::CastOp>(quant::tensorOf({b, n}, i32), *c0);
  std::vector<Value> hs;
  for (int64_t t = 0; t < l.steps; ++t) {
    Value act[4];
    for (int g = l.cifg ? 1 : 0; g < 4; ++g) {
      Value fromX = ctx.slice(xw[g], {t * b, 0}, {b, n});
      auto a =
          accumulate(ctx, product(ctx, h, l.gate[g].r, l.gate[g].h, n), l.gate[g].hScale, fromX);
      if (failed(a))
        return failure();
      act[g] = lookup(ctx, g == 2 ? tanhGate : sigmoid, *a);
    }
    if (l.cifg)
      act[0] = tosa_math::binary<tosa::SubOp>(ctx, ctx.scalarOf(i32, 32767, 2), act[1]);
    Value kept = roundingShift(ctx, tosa_math::mul(ctx, act[1], c), 15);
    Value added = roundingShift(ctx, tosa_math::mul(ctx, act[0], act[2]), 30 + l.cellPower);
    c = quant::clampInt(ctx, tosa_math::binary<tosa::AddOp>(ctx, kept, added), -32768, 32767);
    if (l.cellClip > 0)
      c = quant::clampInt(ctx, c, -l.cellClip, l.cellClip);
    Value prod = tosa_math::mul(ctx, act[3], lookup(ctx, tanhCell, c));
    // TFLite 2.9's CwiseMul (portable_tensor_utils.cc) subtracts the
    // hidden zero point where it means to add it; the recurrent product
    // then reads h with the output state's zero point.
    auto hidden =
        quant::rescale(ctx, prod, quant::i8Type(ctx), 0, -l.hiddenZp, {double(l.hiddenScale)});
    if (failed(hidden))
      return failure();
    h = *hidden;
    hs.push_back(h);
  }
  std::vector<Value> parts;
  for (Value v : hs)
    parts.push_back(ctx.reshape(v, l.timeMajor ? std::vector<int64_t>{1, b, l.outputs}
                                               : std::vector<int64_t>{b, 1, l.outputs}));
  Value out = ctx.concat(parts, l.timeMajor ? 0 : 1);
  Value c16 = ctx.create<tosa::CastOp>(quant::tensorOf({b, n}, ctx.builder().getI16Type()), c);
  if (failed(ctx.setOutput(0, out)) || failed(ctx.assignVariable(18, h)) ||
      failed(ctx.assignVariable(19, c16)))
    return failure();
  return success();
}

void registerQuantizedRecurrentOps(ConverterTable &table) {
  // Reached through the float table's UNIDIRECTIONAL_SEQUENCE_LSTM
  // (convertsIntegerForms), which hands int8 inputs here; listed in the
  // int8 table too, where the operator table looks for it.
  table[BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM] = convertQuantizedUnidirectionalLstm;
}

} // namespace kiln::tfl
