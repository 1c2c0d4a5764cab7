//===- TFLiteRecurrentOps.cpp - Sequence LSTM and RNN ---------------------===//
//
// UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM and
// UNIDIRECTIONAL_SEQUENCE_RNN -> TOSA, float32, unrolled at import: the
// sequence length is static, so each time step becomes its own
// fully_connected (or matmul) and elementwise gates, and the output is the
// concatenation of the per-step output states.
//
// Semantics: TensorFlow Lite's float kernels (tensorflow/lite/kernels/
// lstm_eval.cc LstmStepFloat, unidirectional_sequence_lstm.cc,
// bidirectional_sequence_lstm.cc, unidirectional_sequence_rnn.cc with
// kernel_utils.cc RnnBatchStep; TFLite Micro's kernels/lstm_eval.cc is the
// same recurrence). Per step, for gate g of input i, forget f, cell c,
// output o (TFLite's weight order):
//   pre_g = W_g x_t + R_g h_{t-1} (+ P_g .* C, peephole; i and f see
//           C_{t-1}, o sees C_t) (+ b_g)
//   layer norm: pre_g = LN_g .* (pre_g - mean) / sqrt(var + 1e-8) + b_g,
//           mean and var over the n_cell values of each batch row
//   i, f, o = sigmoid(pre); g = act(pre_c)  (act: fused_activation_function)
//   CIFG (no input gate weights): i = 1 - f
//   C_t = f .* C_{t-1} + i .* g, clipped to +-cell_clip when cell_clip > 0
//   m = o .* act(C_t); h_t = P m + pb (projection, clipped to +-proj_clip
//           when proj_clip > 0), else h_t = m
// RNN: h_t = act(W x_t + R h_{t-1} + b).
//
// The state: the output (activation) state and the cell state are variable
// tensors (is_variable). They are read at the start (OpContext::input,
// TFLite's initial value 0 until the state carries across invocations) and
// the final values are written back (OpContext::assignVariable), as
// TFLite's kernels update them in place. The input projection W x_t (+ b)
// of all steps is one product per gate; each step adds R h_{t-1}.
//
// The int8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 cell state) is converted by
// TFLiteQuantizedRecurrentOps.cpp. Refused with one error line here: the
// integer bidirectional LSTM and RNN, int16 activations, hybrid models
// (float32 input, int8 weights), the auxiliary-input form of the
// bidirectional LSTM, state that is not a variable tensor, activations
// TFLite's float kernels do not define here, and malformed shapes.
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TosaMath.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;

namespace kiln::tfl {

/// UNIDIRECTIONAL_SEQUENCE_LSTM with int8 input and an int16 cell state
/// (TFLiteQuantizedRecurrentOps.cpp); convertUnidirectionalLstm hands int8
/// models to it.
LogicalResult convertQuantizedUnidirectionalLstm(OpContext &ctx);

namespace {

using schema::ActivationFunctionType;
using schema::TensorType;
using tosa_math::kMaxUnrolledSteps;
using tosa_math::linear;

std::vector<int64_t> shapeOf(Value v) {
  auto shape = v.getType().cast<RankedTensorType>().getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

Value add(OpContext &ctx, Value a, Value b) { return tosa_math::binary<tosa::AddOp>(ctx, a, b); }
Value sub(OpContext &ctx, Value a, Value b) { return tosa_math::binary<tosa::SubOp>(ctx, a, b); }
Value mul(OpContext &ctx, Value a, Value b) { return tosa_math::mul(ctx, a, b); }

/// "input 3 (input-to-cell weights 'lstm/w_c')".
std::string label(OpContext &ctx, int i, const std::string &role) {
  const schema::Tensor *t = ctx.inputTensor(i);
  std::string name = t && t->name() ? t->name()->str() : "";
  return "input " + std::to_string(i) + " (" + role + (name.empty() ? "" : " '" + name + "'") + ")";
}

/// Input `i` present, float32 and of shape `want`; its value.
FailureOr<Value> floatInput(OpContext &ctx, int i, const std::string &role,
                            llvm::ArrayRef<int64_t> want) {
  if (!ctx.hasInput(i))
    return ctx.fail(label(ctx, i, role) + " is missing; it is required");
  if (ctx.inputTensor(i)->type() != TensorType::FLOAT32)
    return ctx.fail(label(ctx, i, role) + " is " +
                    schema::EnumNameTensorType(ctx.inputTensor(i)->type()) +
                    "; Kiln converts float32 recurrent operators");
  if (ctx.inputShape(i) != std::vector<int64_t>(want.begin(), want.end()))
    return ctx.fail(label(ctx, i, role) + " has shape " + shapeString(ctx.inputShape(i)) +
                    "; expected " + shapeString(want));
  return ctx.input(i);
}

/// floatInput for an optional input: null when absent.
FailureOr<Value> optionalInput(OpContext &ctx, int i, const std::string &role,
                               llvm::ArrayRef<int64_t> want) {
  if (i < 0 || !ctx.hasInput(i))
    return Value();
  return floatInput(ctx, i, role, want);
}

/// A state input: a float32 variable tensor [batch, size], read as the
/// state at the start of the operator.
FailureOr<Value> stateInput(OpContext &ctx, int i, const std::string &role,
                            llvm::ArrayRef<int64_t> want) {
  if (ctx.hasInput(i) && !ctx.isVariable(i))
    return ctx.fail(label(ctx, i, role) +
                    " is not a variable tensor (is_variable); TFLite keeps the state in one");
  return floatInput(ctx, i, role, want);
}

/// The refusals that depend on element types only: integer (int8 input;
/// the integer LSTM keeps an int16 cell state) and hybrid (float32 input,
/// int8 weights) models.
LogicalResult checkFloat(OpContext &ctx, const char *what) {
  TensorType in = ctx.hasInput(0) ? ctx.inputTensor(0)->type() : TensorType::FLOAT32;
  bool lstm = llvm::StringRef(what).endswith("LSTM");
  if (in == TensorType::INT8 || in == TensorType::UINT8 || in == TensorType::INT16)
    return ctx.fail(std::string("int8 ") + what + " is not supported yet (input 0 is " +
                    schema::EnumNameTensorType(in) +
                    (lstm ? "; TFLite's integer kernel keeps an int16 cell state" : "") +
                    "); Kiln converts float32 " + what);
  if (in != TensorType::FLOAT32)
    return ctx.fail(std::string("input 0 is ") + schema::EnumNameTensorType(in) +
                    "; Kiln converts float32 " + what);
  for (int i = 1; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    TensorType t = ctx.inputTensor(i)->type();
    if (t == TensorType::INT8 || t == TensorType::UINT8)
      return ctx.fail(std::string("hybrid ") + what + " (float32 input, " +
                      schema::EnumNameTensorType(t) + " " + label(ctx, i, "weights") +
                      ") is not supported; Kiln converts float32 " + what +
                      " with float32 weights");
  }
  return success();
}

/// The input [S, B, I] time-major (transposed from [B, S, I] when
/// !timeMajor), with S, B and I; fails unless input 0 is rank 3, static,
/// and S x directions is within kMaxUnrolledSteps.
struct Sequence {
  Value x; // [S, B, I]
  int64_t steps = 0, batch = 0, size = 0;
};

FailureOr<Sequence> readSequence(OpContext &ctx, bool timeMajor, int64_t dirs) {
  std::vector<int64_t> s = ctx.inputShape(0);
  if (s.size() != 3 || llvm::any_of(s, [](int64_t d) { return d <= 0; }))
    return ctx.fail(label(ctx, 0, "input") + " has shape " + shapeString(s) + "; expected " +
                    (timeMajor ? "[time, batch, input_size]" : "[batch, time, input_size]") +
                    ", static and positive");
  Sequence q;
  q.steps = timeMajor ? s[0] : s[1];
  q.batch = timeMajor ? s[1] : s[0];
  q.size = s[2];
  if (q.steps * dirs > kMaxUnrolledSteps)
    return ctx.fail(llvm::Twine(q.steps) + " time steps x " + llvm::Twine(dirs) +
                    " direction(s) exceed the " + llvm::Twine(kMaxUnrolledSteps) +
                    " steps Kiln unrolls");
  FailureOr<Value> x = floatInput(ctx, 0, "input", s);
  if (failed(x))
    return failure();
  q.x = timeMajor ? *x : ctx.transpose(*x, {1, 0, 2});
  return q;
}

/// Checks a fused activation for a recurrent cell: TFLite's float kernels
/// apply it through ApplyActivationToVector (tensor_utils), which defines
/// RELU, RELU_N1_TO_1, RELU6 and TANH; NONE is the identity for the RNN
/// (applied in place) but leaves the LSTM's cell output unwritten
/// (lstm_eval.cc CalculateLstmOutputFloat), so the LSTM refuses it.
LogicalResult checkActivation(OpContext &ctx, ActivationFunctionType act, bool lstm) {
  using A = ActivationFunctionType;
  if (act == A::RELU || act == A::RELU_N1_TO_1 || act == A::RELU6 || act == A::TANH ||
      (act == A::NONE && !lstm))
    return success();
  return ctx.fail(
      std::string("fused_activation_function ") + schema::EnumNameActivationFunctionType(act) +
      " is not supported (supported: " +
      (lstm ? "TANH, RELU, RELU_N1_TO_1, RELU6" : "NONE, TANH, RELU, RELU_N1_TO_1, RELU6") + ")");
}

/// A fused activation checked by checkActivation.
Value activate(OpContext &ctx, ActivationFunctionType act, Value x) {
  using A = ActivationFunctionType;
  float inf = std::numeric_limits<float>::infinity();
  switch (act) {
  case A::RELU:
    return ctx.clamp(x, 0, inf);
  case A::RELU_N1_TO_1:
    return ctx.clamp(x, -1, 1);
  case A::RELU6:
    return ctx.clamp(x, 0, 6);
  case A::TANH:
    return tosa_math::unary<tosa::TanhOp>(ctx, x);
  default:
    return x;
  }
}

/// Checks a clip option: 0 (none) or positive and finite.
LogicalResult checkClip(OpContext &ctx, const char *name, float v) {
  if (std::isfinite(v) && v >= 0)
    return success();
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(v));
  return ctx.fail(llvm::Twine(name) + " " + text +
                  " is not supported (0 for no clipping, or a positive bound)");
}

/// Per step values [S, B, N] stacked as [S, B, N] (timeMajor) or [B, S, N].
Value stackSteps(OpContext &ctx, llvm::ArrayRef<Value> hs, bool timeMajor) {
  std::vector<Value> parts;
  for (Value h : hs) {
    std::vector<int64_t> s = shapeOf(h);
    parts.push_back(ctx.reshape(h, timeMajor ? std::vector<int64_t>{1, s[0], s[1]}
                                             : std::vector<int64_t>{s[0], 1, s[1]}));
  }
  return ctx.concat(parts, timeMajor ? 0 : 1);
}

// ---------------------------------------------------------------------------
// LSTM

/// Where one direction's tensors are among the operator's inputs: the first
/// of the 4 input-to-gate weights (gate order input, forget, cell, output),
/// 4 recurrent-to-gate weights, 3 peepholes (input, forget, output), 4 gate
/// biases, the projection weights and bias, the two states and the 4
/// layer-norm coefficients (-1: none in this layout).
struct LstmSlots {
  int inputWeights, recurrentWeights, peepholes, biases, projection, projectionBias;
  int outputState, cellState, layerNorm;
};

/// UNIDIRECTIONAL_SEQUENCE_LSTM's 24 inputs (unidirectional_sequence_lstm.cc).
constexpr LstmSlots kUnidirectional = {1, 5, 9, 12, 16, 17, 18, 19, 20};
/// BIDIRECTIONAL_SEQUENCE_LSTM's forward and backward cells
/// (bidirectional_sequence_lstm.cc; 39-47 are the auxiliary input).
constexpr LstmSlots kForward = {1, 5, 9, 12, 16, 17, 35, 36, -1};
constexpr LstmSlots kBackward = {18, 22, 26, 29, 33, 34, 37, 38, -1};

const char *const kGate[4] = {"input", "forget", "cell", "output"};

struct LstmParams {
  ActivationFunctionType act = ActivationFunctionType::TANH;
  float cellClip = 0, projClip = 0;
};

/// One direction's weights and initial state (f32 values; null = absent).
struct LstmCell {
  int64_t cells = 0, outputs = 0;
  Value w[4], r[4], b[4], ln[4]; // [N, I], [N, O], [N], [1, N]; w/r/b[0] null: CIFG
  Value p[3];                    // peepholes i, f, o as [1, N]
  Value proj, projBias;          // [O, N], [O]
  Value h0, c0;                  // [B, O], [B, N]
  bool cifg() const { return !w[0]; }
};

/// Reads the gate weights and biases of a direction (`dir`: "" or
/// "forward " / "backward "); sizes from the forget gate's weights.
LogicalResult readGates(OpContext &ctx, const LstmSlots &s, const Sequence &q,
                        const std::string &dir, LstmCell &cell) {
  int wf = s.inputWeights + 1, rf = s.recurrentWeights + 1;
  std::vector<int64_t> ws = ctx.hasInput(wf) ? ctx.inputShape(wf) : std::vector<int64_t>();
  std::vector<int64_t> rs = ctx.hasInput(rf) ? ctx.inputShape(rf) : std::vector<int64_t>();
  if (ws.size() != 2 || rs.size() != 2 || ws[0] != rs[0])
    return ctx.fail(dir + "input-to-forget weights (input " + std::to_string(wf) +
                    ") and recurrent-to-forget weights (input " + std::to_string(rf) +
                    ") must be [n_cell, n_input] and [n_cell, n_output]; they are " +
                    (ctx.hasInput(wf) ? shapeString(ws) : std::string("missing")) + " and " +
                    (ctx.hasInput(rf) ? shapeString(rs) : std::string("missing")));
  cell.cells = ws[0];
  cell.outputs = rs[1];
  bool cifg = !ctx.hasInput(s.inputWeights);
  if (cifg != !ctx.hasInput(s.recurrentWeights) || cifg == ctx.hasInput(s.biases))
    return ctx.fail(dir + "input gate: input-to-input weights (input " +
                    std::to_string(s.inputWeights) + "), recurrent-to-input weights (input " +
                    std::to_string(s.recurrentWeights) + ") and input gate bias (input " +
                    std::to_string(s.biases) + ") must all be given, or all be -1 (CIFG)");
  for (int g = cifg ? 1 : 0; g < 4; ++g) {
    std::string gate = dir + kGate[g];
    FailureOr<Value> w =
        floatInput(ctx, s.inputWeights + g, gate + "-gate input weights", {cell.cells, q.size});
    if (failed(w))
      return failure();
    FailureOr<Value> r = floatInput(ctx, s.recurrentWeights + g, gate + "-gate recurrent weights",
                                    {cell.cells, cell.outputs});
    if (failed(r))
      return failure();
    FailureOr<Value> b = floatInput(ctx, s.biases + g, gate + " gate bias", {cell.cells});
    if (failed(b))
      return failure();
    cell.w[g] = *w;
    cell.r[g] = *r;
    cell.b[g] = *b;
  }
  return success();
}

/// Reads the optional peepholes, projection and layer norm of a direction
/// (each all present or all absent; the input gate's absent under CIFG).
LogicalResult readOptional(OpContext &ctx, const LstmSlots &s, const std::string &dir,
                           LstmCell &cell) {
  int64_t n = cell.cells;
  auto group = [&](int first, const char *what, int count, llvm::ArrayRef<int64_t> idx,
                   Value *out) -> LogicalResult {
    if (first < 0)
      return success();
    int given = 0, needed = 0;
    for (int k = 0; k < count; ++k) {
      bool inputGate = idx[k] == 0;
      if (inputGate && cell.cifg()) {
        if (ctx.hasInput(first + k))
          return ctx.fail(dir + what + ": " + label(ctx, first + k, "input gate") +
                          " is given without an input gate (CIFG); it must be -1");
        continue;
      }
      ++needed;
      given += ctx.hasInput(first + k);
    }
    if (given != 0 && given != needed)
      return ctx.fail(dir + what + " (inputs " + std::to_string(first) + " to " +
                      std::to_string(first + count - 1) + ") must all be given or all be -1; " +
                      std::to_string(given) + " of " + std::to_string(needed) + " are");
    for (int k = 0; k < count && given; ++k) {
      if (!ctx.hasInput(first + k))
        continue;
      FailureOr<Value> v = floatInput(ctx, first + k, dir + what, {n});
      if (failed(v))
        return failure();
      out[k] = ctx.reshape(*v, {1, n});
    }
    return success();
  };
  if (failed(group(s.peepholes, "peephole weights", 3, {0, 1, 3}, cell.p)) ||
      failed(group(s.layerNorm, "layer-norm coefficients", 4, {0, 1, 2, 3}, cell.ln)))
    return failure();
  FailureOr<Value> proj =
      optionalInput(ctx, s.projection, dir + "projection weights", {cell.outputs, n});
  if (failed(proj))
    return failure();
  cell.proj = *proj;
  if (!cell.proj && ctx.hasInput(s.projectionBias))
    return ctx.fail(dir + "projection bias (input " + std::to_string(s.projectionBias) +
                    ") is given without projection weights (input " + std::to_string(s.projection) +
                    ")");
  FailureOr<Value> pb =
      optionalInput(ctx, s.projectionBias, dir + "projection bias", {cell.outputs});
  if (failed(pb))
    return failure();
  cell.projBias = *pb;
  if (!cell.proj && cell.outputs != n)
    return ctx.fail(dir + "recurrent weights are [" + std::to_string(n) + ", " +
                    std::to_string(cell.outputs) +
                    "]: without projection weights n_output must equal n_cell");
  return success();
}

/// One direction's tensors, checked.
FailureOr<LstmCell> readLstmCell(OpContext &ctx, const LstmSlots &s, const Sequence &q,
                                 const std::string &dir) {
  LstmCell cell;
  if (failed(readGates(ctx, s, q, dir, cell)) || failed(readOptional(ctx, s, dir, cell)))
    return failure();
  FailureOr<Value> h0 =
      stateInput(ctx, s.outputState, dir + "output state", {q.batch, cell.outputs});
  if (failed(h0))
    return failure();
  FailureOr<Value> c0 = stateInput(ctx, s.cellState, dir + "cell state", {q.batch, cell.cells});
  if (failed(c0))
    return failure();
  cell.h0 = *h0;
  cell.c0 = *c0;
  return cell;
}

/// Layer normalization of the rows of `x` [B, N] (lstm_eval.cc via
/// MeanStddevNormalization): (x - mean) / sqrt(var + 1e-8), the variance
/// the mean of squared deviations.
Value normalizeRows(OpContext &ctx, Value x) {
  std::vector<int64_t> s = shapeOf(x);
  auto rowMean = [&](Value v) {
    Value sum = ctx.builder().create<tosa::ReduceSumOp>(ctx.loc(), ctx.f32Type({s[0], 1}), v,
                                                        ctx.builder().getI64IntegerAttr(1));
    return mul(ctx, sum, ctx.scalarF32(1.0f / float(s[1]), 2));
  };
  Value d = sub(ctx, x, rowMean(x));
  Value var = rowMean(mul(ctx, d, d));
  Value inv = tosa_math::unary<tosa::RsqrtOp>(ctx, add(ctx, var, ctx.scalarF32(1e-8f, 2)));
  return mul(ctx, d, inv);
}

/// Gate g's activation input for one step: `xw` (W_g x_t, plus b_g without
/// layer norm) + R_g h (+ P .* c) (layer norm, then + b_g).
Value gatePre(OpContext &ctx, const LstmCell &cell, int g, Value xw, Value h, Value c,
              Value peephole) {
  Value pre = add(ctx, xw, linear(ctx, h, cell.r[g], Value()));
  if (peephole)
    pre = add(ctx, pre, mul(ctx, c, peephole));
  if (cell.ln[g])
    pre = add(ctx, mul(ctx, normalizeRows(ctx, pre), cell.ln[g]),
              ctx.reshape(cell.b[g], {1, cell.cells}));
  return pre;
}

/// Runs one direction over the sequence (backward: from the last step);
/// hs[t] is the output state after step t [B, O], h and c the final states.
void runLstm(OpContext &ctx, const LstmCell &cell, const LstmParams &p, const Sequence &q,
             bool backward, std::vector<Value> &hs, Value &h, Value &c) {
  int64_t b = q.batch, n = cell.cells;
  Value x = ctx.reshape(q.x, {q.steps * b, q.size});
  Value xw[4];
  for (int g = cell.cifg() ? 1 : 0; g < 4; ++g)
    xw[g] = linear(ctx, x, cell.w[g], cell.ln[g] ? Value() : cell.b[g]);
  auto sigmoid = [&](Value v) { return tosa_math::unary<tosa::SigmoidOp>(ctx, v); };
  h = cell.h0;
  c = cell.c0;
  hs.assign(q.steps, Value());
  for (int64_t k = 0; k < q.steps; ++k) {
    int64_t t = backward ? q.steps - 1 - k : k;
    auto at = [&](int g) { return ctx.slice(xw[g], {t * b, 0}, {b, n}); };
    Value f = sigmoid(gatePre(ctx, cell, 1, at(1), h, c, cell.p[1]));
    Value i = cell.cifg() ? sub(ctx, ctx.scalarF32(1, 2), f)
                          : sigmoid(gatePre(ctx, cell, 0, at(0), h, c, cell.p[0]));
    Value g = activate(ctx, p.act, gatePre(ctx, cell, 2, at(2), h, c, Value()));
    c = add(ctx, mul(ctx, f, c), mul(ctx, i, g));
    if (p.cellClip > 0)
      c = ctx.clamp(c, -p.cellClip, p.cellClip);
    Value o = sigmoid(gatePre(ctx, cell, 3, at(3), h, c, cell.p[2]));
    Value m = mul(ctx, o, activate(ctx, p.act, c));
    if (cell.proj) {
      m = linear(ctx, m, cell.proj, cell.projBias);
      if (p.projClip > 0)
        m = ctx.clamp(m, -p.projClip, p.projClip);
    }
    h = m;
    hs[t] = h;
  }
}

/// Reads and checks the options common to both LSTMs.
LogicalResult readLstmParams(OpContext &ctx, ActivationFunctionType act, float cellClip,
                             float projClip, LstmParams &p) {
  if (failed(checkActivation(ctx, act, true)) || failed(checkClip(ctx, "cell_clip", cellClip)) ||
      failed(checkClip(ctx, "proj_clip", projClip)))
    return failure();
  p.act = act;
  p.cellClip = cellClip;
  p.projClip = projClip;
  return success();
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM (float32; unidirectional_sequence_lstm.cc):
/// input [B, S, I] ([S, B, I] with time_major), 20 or 24 inputs (without
/// or with layer norm), output [B, S, O] ([S, B, O]); the output and cell
/// states (inputs 18, 19) are written back.
LogicalResult convertUnidirectionalLstm(OpContext &ctx) {
  if (ctx.hasInput(0) && ctx.inputTensor(0)->type() == TensorType::INT8)
    return convertQuantizedUnidirectionalLstm(ctx);
  if (failed(checkFloat(ctx, "LSTM")))
    return failure();
  const auto *opts = ctx.options<schema::UnidirectionalSequenceLSTMOptions>();
  if (!opts)
    return ctx.fail("has no UnidirectionalSequenceLSTMOptions");
  if (ctx.numInputs() != 24 && ctx.numInputs() != 20)
    return ctx.fail("has " + llvm::Twine(ctx.numInputs()) +
                    " inputs; UNIDIRECTIONAL_SEQUENCE_LSTM takes 24 (20 without layer norm)");
  if (opts->diagonal_recurrent_tensors())
    return ctx.fail("diagonal_recurrent_tensors is not supported (full recurrent weights are)");
  LstmParams p;
  if (failed(readLstmParams(ctx, opts->fused_activation_function(), opts->cell_clip(),
                            opts->proj_clip(), p)))
    return failure();
  LstmSlots slots = kUnidirectional;
  if (ctx.numInputs() == 20)
    slots.layerNorm = -1;
  FailureOr<Sequence> q = readSequence(ctx, opts->time_major(), 1);
  if (failed(q))
    return failure();
  FailureOr<LstmCell> cell = readLstmCell(ctx, slots, *q, "");
  if (failed(cell))
    return failure();
  std::vector<Value> hs;
  Value h, c;
  runLstm(ctx, *cell, p, *q, false, hs, h, c);
  if (failed(ctx.setOutput(0, stackSteps(ctx, hs, opts->time_major()))) ||
      failed(ctx.assignVariable(slots.outputState, h)) ||
      failed(ctx.assignVariable(slots.cellState, c)))
    return failure();
  return success();
}

/// BIDIRECTIONAL_SEQUENCE_LSTM (float32; bidirectional_sequence_lstm.cc):
/// 48 inputs, a forward cell (1-17, states 35-36) over steps 0..S-1 and a
/// backward cell (18-34, states 37-38) over S-1..0; output 0 the forward
/// [.., O_fw] and output 1 the backward outputs, or with merge_outputs one
/// output [.., O_fw + O_bw]. time_major defaults to true here.
LogicalResult convertBidirectionalLstm(OpContext &ctx) {
  if (failed(checkFloat(ctx, "bidirectional LSTM")))
    return failure();
  const auto *opts = ctx.options<schema::BidirectionalSequenceLSTMOptions>();
  if (!opts)
    return ctx.fail("has no BidirectionalSequenceLSTMOptions");
  if (ctx.numInputs() != 48)
    return ctx.fail("has " + llvm::Twine(ctx.numInputs()) +
                    " inputs; BIDIRECTIONAL_SEQUENCE_LSTM takes 48");
  for (int i = 39; i < 48; ++i)
    if (ctx.hasInput(i))
      return ctx.fail("the auxiliary input form (inputs 39 to 47; " + label(ctx, i, "auxiliary") +
                      " is given) is not supported; Kiln converts the bidirectional LSTM "
                      "without auxiliary input");
  bool merge = opts->merge_outputs();
  if (ctx.numOutputs() != (merge ? 1 : 2))
    return ctx.fail("has " + llvm::Twine(ctx.numOutputs()) + " outputs; with merge_outputs " +
                    (merge ? "true" : "false") + " it gives " + (merge ? "1" : "2"));
  LstmParams p;
  if (failed(readLstmParams(ctx, opts->fused_activation_function(), opts->cell_clip(),
                            opts->proj_clip(), p)))
    return failure();
  FailureOr<Sequence> q = readSequence(ctx, opts->time_major(), 2);
  if (failed(q))
    return failure();
  FailureOr<LstmCell> fw = readLstmCell(ctx, kForward, *q, "forward ");
  if (failed(fw))
    return failure();
  FailureOr<LstmCell> bw = readLstmCell(ctx, kBackward, *q, "backward ");
  if (failed(bw))
    return failure();
  std::vector<Value> hsFw, hsBw;
  Value hFw, cFw, hBw, cBw;
  runLstm(ctx, *fw, p, *q, false, hsFw, hFw, cFw);
  runLstm(ctx, *bw, p, *q, true, hsBw, hBw, cBw);
  Value yFw = stackSteps(ctx, hsFw, opts->time_major());
  Value yBw = stackSteps(ctx, hsBw, opts->time_major());
  LogicalResult bound =
      merge ? ctx.setOutput(0, ctx.concat({yFw, yBw}, 2))
            : success(succeeded(ctx.setOutput(0, yFw)) && succeeded(ctx.setOutput(1, yBw)));
  if (failed(bound) || failed(ctx.assignVariable(kForward.outputState, hFw)) ||
      failed(ctx.assignVariable(kForward.cellState, cFw)) ||
      failed(ctx.assignVariable(kBackward.outputState, hBw)) ||
      failed(ctx.assignVariable(kBackward.cellState, cBw)))
    return failure();
  return success();
}

// ---------------------------------------------------------------------------
// RNN

/// UNIDIRECTIONAL_SEQUENCE_RNN (float32; unidirectional_sequence_rnn.cc,
/// kernel_utils.cc RnnBatchStep): inputs input [B, S, I] ([S, B, I] with
/// time_major), weights [U, I], recurrent weights [U, U], bias [U], hidden
/// state [B, U] (a variable tensor, written back); per step h = act(W x_t +
/// R h + b); output [B, S, U] ([S, B, U]).
LogicalResult convertUnidirectionalRnn(OpContext &ctx) {
  if (failed(checkFloat(ctx, "RNN")))
    return failure();
  const auto *opts = ctx.options<schema::SequenceRNNOptions>();
  if (!opts)
    return ctx.fail("has no SequenceRNNOptions");
  if (ctx.numInputs() != 5)
    return ctx.fail("has " + llvm::Twine(ctx.numInputs()) +
                    " inputs; UNIDIRECTIONAL_SEQUENCE_RNN takes 5 (input, weights, recurrent "
                    "weights, bias, hidden state)");
  ActivationFunctionType act = opts->fused_activation_function();
  if (failed(checkActivation(ctx, act, false)))
    return failure();
  FailureOr<Sequence> q = readSequence(ctx, opts->time_major(), 1);
  if (failed(q))
    return failure();
  std::vector<int64_t> ws = ctx.hasInput(1) ? ctx.inputShape(1) : std::vector<int64_t>();
  if (ws.size() != 2)
    return ctx.fail(label(ctx, 1, "weights") + " must be [units, input_size]; it is " +
                    (ctx.hasInput(1) ? shapeString(ws) : std::string("missing")));
  int64_t u = ws[0];
  FailureOr<Value> w = floatInput(ctx, 1, "weights", {u, q->size});
  if (failed(w))
    return failure();
  FailureOr<Value> r = floatInput(ctx, 2, "recurrent weights", {u, u});
  if (failed(r))
    return failure();
  FailureOr<Value> bias = floatInput(ctx, 3, "bias", {u});
  if (failed(bias))
    return failure();
  FailureOr<Value> h0 = stateInput(ctx, 4, "hidden state", {q->batch, u});
  if (failed(h0))
    return failure();
  int64_t b = q->batch;
  Value xw = linear(ctx, ctx.reshape(q->x, {q->steps * b, q->size}), *w, *bias);
  Value h = *h0;
  std::vector<Value> hs;
  for (int64_t t = 0; t < q->steps; ++t) {
    Value pre = add(ctx, ctx.slice(xw, {t * b, 0}, {b, u}), linear(ctx, h, *r, Value()));
    h = activate(ctx, act, pre);
    hs.push_back(h);
  }
  if (failed(ctx.setOutput(0, stackSteps(ctx, hs, opts->time_major()))) ||
      failed(ctx.assignVariable(4, h)))
    return failure();
  return success();
}

} // namespace

bool convertsIntegerForms(BuiltinOperator code) {
  return code == BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM ||
         code == BuiltinOperator::BIDIRECTIONAL_SEQUENCE_LSTM ||
         code == BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN;
}

void registerRecurrentOps(ConverterTable &table) {
  table[BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM] = convertUnidirectionalLstm;
  table[BuiltinOperator::BIDIRECTIONAL_SEQUENCE_LSTM] = convertBidirectionalLstm;
  table[BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_RNN] = convertUnidirectionalRnn;
}

} // namespace kiln::tfl
