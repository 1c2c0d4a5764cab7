//===- ONNXRecurrentOps.cpp - ONNX LSTM, GRU and RNN ----------------------===//
//
// LSTM, GRU and RNN (opsets 7 and 14; layout from 14) -> TOSA, float32,
// unrolled at import: the time steps are static, so each step becomes its
// own matmul and elementwise gates, and Y is the concatenation of the
// per-step hidden states.
//
// The input projection X * W^T + Wb of all steps is one matmul per
// direction ([S*B, I] x [I, G*H]); each step adds H_{t-1} * R^T + Rb and
// applies the gates. Constant weights become tosa.fully_connected's [N, K]
// weight as they are stored (ONNX's W[dir] is [G*H, I]); weights computed
// by the graph go through tosa.transpose and tosa.matmul.
//
// Gate orders (ONNX Operators.md): LSTM i o f c (P: i o f), GRU z r h,
// RNN i. layout = 1 has X [B, S, I], states [B, D, H] and Y [B, S, D, H];
// it is transposed to layout 0 on the way in and back on the way out.
// sequence_lens must be a constant: batches shorter than seq_length run
// their own steps (reverse from their last one), their Y is zero past their
// length and Y_h / Y_c hold the state of their last step, as ONNX Runtime
// computes them.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "TosaMath.h"

#include <cctype>
#include <cmath>

using namespace mlir;

namespace kiln::onnx {
namespace {

using tosa_math::kMaxUnrolledSteps;
/// x [M, K] times w^T (w [N, K]) plus bias ([N], or null).
using tosa_math::linear;

enum class Cell { RNN, GRU, LSTM };

/// Batches [first, first + size) of one sequence length.
struct BatchGroup {
  int64_t first, size, len;
};

/// One activation of the `activations` list, with its alpha and beta.
struct Activation {
  std::string name; // lower case
  float alpha = 0, beta = 0;
};

/// What a recurrent node computes, read and checked from its inputs and
/// attributes (layout-0 shapes).
struct Recurrent {
  Cell cell = Cell::LSTM;
  int64_t gates = 4, seq = 0, batch = 0, inputSize = 0, hidden = 0, dirs = 1;
  bool reverse = false; // direction = reverse (dirs == 1)
  int64_t layout = 0;
  std::optional<float> clip;
  bool inputForget = false, linearBeforeReset = false;
  /// Per direction, activationsPerDir() of them.
  std::vector<Activation> acts;
  Value x;      // [S, B, I]
  Value h0, c0; // [D, B, H] or null
  bool hasBias = false, hasPeepholes = false;
  /// The batches by sequence length (one group when all are seq_length).
  std::vector<BatchGroup> groups;

  int64_t activationsPerDir() const { return cell == Cell::LSTM ? 3 : cell == Cell::GRU ? 2 : 1; }
  const Activation &act(int64_t dir, int64_t k) const {
    return acts[dir * activationsPerDir() + k];
  }
};

const char *cellName(Cell c) { return c == Cell::LSTM ? "LSTM" : c == Cell::GRU ? "GRU" : "RNN"; }

std::vector<int64_t> shapeOf(Value v) {
  auto shape = v.getType().cast<RankedTensorType>().getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

/// The broadcast shape of two same-rank values.
std::vector<int64_t> joint(Value a, Value b) {
  std::vector<int64_t> s = shapeOf(a), t = shapeOf(b);
  for (size_t k = 0; k < s.size(); ++k)
    s[k] = std::max(s[k], t[k]);
  return s;
}

Value add(NodeContext &ctx, Value a, Value b) {
  return ctx.create<tosa::AddOp>(ctx.f32Type(joint(a, b)), a, b);
}
Value sub(NodeContext &ctx, Value a, Value b) {
  return ctx.create<tosa::SubOp>(ctx.f32Type(joint(a, b)), a, b);
}
Value mul(NodeContext &ctx, Value a, Value b) {
  return ctx.create<tosa::MulOp>(ctx.f32Type(joint(a, b)), a, b,
                                 ctx.builder().getI32IntegerAttr(0));
}
Value scalar(NodeContext &ctx, float v) { return ctx.scalarF32(v, 2); }

/// Columns [col, col + n) of a [B, N] value.
Value columns(NodeContext &ctx, Value v, int64_t col, int64_t n) {
  return ctx.slice(v, {0, col}, {shapeOf(v)[0], n});
}

/// Part of input `i` (shape [D, rows] or [D, rows, cols]) for direction
/// `dir`: rows [row, row + size[0]) (all columns) as a [size...] value; a
/// tosa.const when the input is a constant.
FailureOr<Value> directionPart(NodeContext &ctx, int i, int64_t dir, int64_t row,
                               llvm::ArrayRef<int64_t> size) {
  std::vector<int64_t> shape = ctx.inputShape(i);
  int64_t cols = shape.size() == 3 ? shape[2] : 1;
  if (const Tensor *t = ctx.constant(i)) {
    std::vector<float> values;
    int64_t base = (dir * shape[1] + row) * cols;
    for (int64_t k = 0; k < size[0] * cols; ++k)
      values.push_back(float(t->at(base + k)));
    return ctx.constF32(size, values);
  }
  FailureOr<Value> v = ctx.input(i);
  if (failed(v))
    return failure();
  std::vector<int64_t> start(shape.size(), 0), sz = shape;
  start[0] = dir;
  start[1] = row;
  sz[0] = 1;
  sz[1] = size[0];
  return ctx.reshape(ctx.slice(*v, start, sz), size);
}

/// tosa.select(x > threshold, a, b) for rank-2 [B, H] operands.
Value selectGreater(NodeContext &ctx, Value lhs, Value rhs, Value a, Value b) {
  auto type = RankedTensorType::get(shapeOf(a), ctx.builder().getI1Type());
  Value cond = ctx.create<tosa::GreaterOp>(type, lhs, rhs);
  return ctx.create<tosa::SelectOp>(ctx.f32Type(shapeOf(a)), cond, a, b);
}

/// Applies one of the activations the ONNX recurrent operators list.
Value activate(NodeContext &ctx, const Activation &act, Value x) {
  auto type = x.getType();
  const std::string &n = act.name;
  if (n == "sigmoid")
    return ctx.create<tosa::SigmoidOp>(type, x);
  if (n == "tanh")
    return ctx.create<tosa::TanhOp>(type, x);
  if (n == "relu")
    return ctx.create<tosa::MaximumOp>(type, x, scalar(ctx, 0));
  if (n == "hardsigmoid")
    return ctx.clamp(add(ctx, mul(ctx, x, scalar(ctx, act.alpha)), scalar(ctx, act.beta)), 0, 1);
  if (n == "leakyrelu")
    return selectGreater(ctx, scalar(ctx, 0), x, mul(ctx, x, scalar(ctx, act.alpha)), x);
  if (n == "thresholdedrelu") {
    Value zero = ctx.constF32(shapeOf(x), {0.0f});
    return selectGreater(ctx, x, scalar(ctx, act.alpha), x, zero);
  }
  if (n == "scaledtanh") {
    Value t = ctx.create<tosa::TanhOp>(type, mul(ctx, x, scalar(ctx, act.beta)));
    return mul(ctx, t, scalar(ctx, act.alpha));
  }
  if (n == "affine")
    return add(ctx, mul(ctx, x, scalar(ctx, act.alpha)), scalar(ctx, act.beta));
  if (n == "elu") {
    Value em1 = sub(ctx, ctx.create<tosa::ExpOp>(type, x), scalar(ctx, 1));
    return selectGreater(ctx, scalar(ctx, 0), x, mul(ctx, em1, scalar(ctx, act.alpha)), x);
  }
  if (n == "softsign") {
    Value d = add(ctx, ctx.create<tosa::AbsOp>(type, x), scalar(ctx, 1));
    return mul(ctx, x, ctx.create<tosa::ReciprocalOp>(type, d));
  }
  // softplus: max(x, 0) + log(1 + exp(-|x|)), exact for large |x|.
  Value e = ctx.create<tosa::ExpOp>(
      type, ctx.create<tosa::NegateOp>(type, ctx.create<tosa::AbsOp>(type, x)));
  Value l = ctx.create<tosa::LogOp>(type, add(ctx, e, scalar(ctx, 1)));
  return add(ctx, ctx.create<tosa::MaximumOp>(type, x, scalar(ctx, 0)), l);
}

/// Pre-activation clip (the `clip` attribute), then the activation.
Value gate(NodeContext &ctx, const Recurrent &r, const Activation &act, Value x) {
  if (r.clip)
    x = ctx.clamp(x, -*r.clip, *r.clip);
  return activate(ctx, act, x);
}

/// Reads `activations`, `activation_alpha` and `activation_beta` (defaults
/// per cell; alpha and beta consumed in order by the activations that take
/// them, as ONNX Runtime reads them).
LogicalResult readActivations(NodeContext &ctx, Recurrent &r) {
  std::vector<std::string> names;
  if (const Attribute *a = ctx.node().attribute("activations"))
    names = a->strings;
  int64_t per = r.activationsPerDir();
  if (names.empty()) {
    static const char *defaults[] = {"sigmoid", "tanh", "tanh"};
    for (int64_t d = 0; d < r.dirs; ++d)
      for (int64_t k = 0; k < per; ++k)
        names.push_back(r.cell == Cell::RNN ? "tanh" : defaults[k]);
  }
  if (int64_t(names.size()) != per * r.dirs)
    return ctx.fail("activations lists " + llvm::Twine(names.size()) + " functions; " +
                    cellName(r.cell) + " with " + llvm::Twine(r.dirs) + " direction(s) takes " +
                    llvm::Twine(per * r.dirs));
  std::vector<float> alphas = ctx.attrFloats("activation_alpha");
  std::vector<float> betas = ctx.attrFloats("activation_beta");
  size_t ai = 0, bi = 0;
  auto next = [](std::vector<float> &list, size_t &i, float def) {
    return i < list.size() ? list[i++] : def;
  };
  for (const std::string &name : names) {
    Activation a;
    for (char c : name)
      a.name += char(std::tolower(static_cast<unsigned char>(c)));
    if (a.name == "leakyrelu")
      a.alpha = next(alphas, ai, 0.01f);
    else if (a.name == "thresholdedrelu" || a.name == "elu")
      a.alpha = next(alphas, ai, 1.0f);
    else if (a.name == "hardsigmoid") {
      a.alpha = next(alphas, ai, 0.2f);
      a.beta = next(betas, bi, 0.5f);
    } else if (a.name == "scaledtanh" || a.name == "affine") {
      a.alpha = next(alphas, ai, 1.0f);
      a.beta = next(betas, bi, a.name == "affine" ? 0.0f : 1.0f);
    } else if (a.name != "sigmoid" && a.name != "tanh" && a.name != "relu" &&
               a.name != "softsign" && a.name != "softplus")
      return ctx.fail("activation '" + name +
                      "' is not supported (Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, "
                      "ThresholdedRelu, ScaledTanh, Affine, Elu, Softsign, Softplus are)");
    r.acts.push_back(a);
  }
  return success();
}

/// Reads the optional initial state input `i` ([D, B, H], or [B, D, H] for
/// layout 1) into layout 0; null when omitted.
FailureOr<Value> readState(NodeContext &ctx, const Recurrent &r, int i, const char *what) {
  if (!ctx.hasInput(i))
    return Value();
  std::vector<int64_t> want = {r.dirs, r.batch, r.hidden};
  if (r.layout == 1)
    std::swap(want[0], want[1]);
  if (ctx.inputShape(i) != want)
    return ctx.fail(llvm::Twine(what) + " has shape " + shapeString(ctx.inputShape(i)) +
                    "; expected " + shapeString(want));
  FailureOr<Value> v = ctx.input(i);
  if (failed(v))
    return failure();
  return r.layout == 1 ? ctx.transpose(*v, {1, 0, 2}) : *v;
}

/// Reads sequence_lens (input 4): absent (every batch seq_length), or a
/// constant of lengths in [1, seq_length]; batches of equal length next to
/// each other form one group.
LogicalResult readSequenceLens(NodeContext &ctx, Recurrent &r) {
  std::vector<int64_t> lens(r.batch, r.seq);
  if (ctx.hasInput(4)) {
    if (!ctx.constant(4))
      return ctx.fail("sequence_lens must be a constant (an initializer); it is computed by "
                      "the graph");
    FailureOr<std::vector<int64_t>> given = ctx.constantInts(4);
    if (failed(given))
      return failure();
    if (int64_t(given->size()) != r.batch)
      return ctx.fail("sequence_lens has " + llvm::Twine(given->size()) + " values for batch " +
                      llvm::Twine(r.batch));
    lens = *given;
  }
  for (int64_t b = 0; b < r.batch; ++b) {
    if (lens[b] < 1 || lens[b] > r.seq)
      return ctx.fail("sequence_lens " + llvm::Twine(lens[b]) + " of batch " + llvm::Twine(b) +
                      " is outside [1, seq_length " + llvm::Twine(r.seq) + "]");
    if (b > 0 && lens[b] == r.groups.back().len)
      ++r.groups.back().size;
    else
      r.groups.push_back({b, 1, lens[b]});
  }
  return success();
}

/// Reads and checks shapes, attributes and X (inputs 0-2, 4-7).
LogicalResult readRecurrent(NodeContext &ctx, Recurrent &r) {
  r.gates = r.cell == Cell::LSTM ? 4 : r.cell == Cell::GRU ? 3 : 1;
  std::string dir = ctx.attrString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return ctx.fail("direction '" + dir + "' is not forward, reverse or bidirectional");
  r.dirs = dir == "bidirectional" ? 2 : 1;
  r.reverse = dir == "reverse";
  r.layout = ctx.opset() >= 14 ? ctx.attrInt("layout", 0) : 0;
  if (r.layout != 0 && r.layout != 1)
    return ctx.fail("layout " + llvm::Twine(r.layout) + " is not 0 or 1");
  if (ctx.hasAttr("clip"))
    r.clip = ctx.attrFloat("clip", 0);
  r.inputForget = ctx.attrInt("input_forget", 0) != 0;
  r.linearBeforeReset = ctx.attrInt("linear_before_reset", 0) != 0;
  for (int i : {0, 1, 2})
    if (!ctx.hasInput(i) || !isFloatType(ctx.inputType(i)))
      return ctx.fail("input " + llvm::Twine(i) + " (X, W, R) must be a float tensor");
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1), rs = ctx.inputShape(2);
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3)
    return ctx.fail("X, W and R must have rank 3; they have shapes " + shapeString(xs) + ", " +
                    shapeString(ws) + " and " + shapeString(rs));
  if (llvm::any_of(xs, [](int64_t d) { return d <= 0; }))
    return ctx.fail("X has shape " + shapeString(xs) +
                    "; seq_length, batch_size and input_size must be static and positive");
  r.seq = r.layout ? xs[1] : xs[0];
  r.batch = r.layout ? xs[0] : xs[1];
  r.inputSize = xs[2];
  r.hidden = rs[2];
  if (ctx.hasAttr("hidden_size") && ctx.attrInt("hidden_size", 0) != r.hidden)
    return ctx.fail("hidden_size " + llvm::Twine(ctx.attrInt("hidden_size", 0)) +
                    " does not match R of shape " + shapeString(rs));
  int64_t gh = r.gates * r.hidden;
  std::vector<int64_t> wWant = {r.dirs, gh, r.inputSize}, rWant = {r.dirs, gh, r.hidden};
  if (ws != wWant || rs != rWant)
    return ctx.fail("W " + shapeString(ws) + " and R " + shapeString(rs) + " do not match " +
                    cellName(r.cell) + " with hidden_size " + llvm::Twine(r.hidden) +
                    ", input_size " + llvm::Twine(r.inputSize) + " and " + llvm::Twine(r.dirs) +
                    " direction(s): expected " + shapeString(wWant) + " and " + shapeString(rWant));
  if (r.seq * r.dirs > kMaxUnrolledSteps)
    return ctx.fail("seq_length " + llvm::Twine(r.seq) + " x " + llvm::Twine(r.dirs) +
                    " direction(s) exceeds the " + llvm::Twine(kMaxUnrolledSteps) +
                    " time steps Kiln unrolls");
  r.hasBias = ctx.hasInput(3);
  if (r.hasBias && ctx.inputShape(3) != std::vector<int64_t>{r.dirs, 2 * gh})
    return ctx.fail("B has shape " + shapeString(ctx.inputShape(3)) + "; expected " +
                    shapeString({r.dirs, 2 * gh}));
  r.hasPeepholes = r.cell == Cell::LSTM && ctx.hasInput(7);
  if (r.hasPeepholes && ctx.inputShape(7) != std::vector<int64_t>{r.dirs, 3 * r.hidden})
    return ctx.fail("P has shape " + shapeString(ctx.inputShape(7)) + "; expected " +
                    shapeString({r.dirs, 3 * r.hidden}));
  if (failed(readSequenceLens(ctx, r)) || failed(readActivations(ctx, r)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  r.x = r.layout ? ctx.transpose(*x, {1, 0, 2}) : *x;
  FailureOr<Value> h0 = readState(ctx, r, 5, "initial_h");
  FailureOr<Value> c0 = r.cell == Cell::LSTM ? readState(ctx, r, 6, "initial_c") : Value();
  if (failed(h0) || failed(c0))
    return failure();
  r.h0 = *h0;
  r.c0 = *c0;
  return success();
}

/// The weights of one direction, as linear() takes them.
struct DirectionWeights {
  Value w;          // [G*H, I]
  Value wb;         // [G*H] or null
  Value rAll;       // [G*H, H] (LSTM, RNN) or R's z r rows [2H, H] (GRU)
  Value rbAll;      // matching recurrent bias or null
  Value rh, rbh;    // GRU: R's h rows [H, H] and Rbh [H]
  Value pi, po, pf; // LSTM peepholes [1, H] or null
};

FailureOr<DirectionWeights> readWeights(NodeContext &ctx, const Recurrent &r, int64_t d) {
  DirectionWeights dw;
  int64_t h = r.hidden, gh = r.gates * h;
  int64_t recRows = r.cell == Cell::GRU ? 2 * h : gh;
  FailureOr<Value> w = directionPart(ctx, 1, d, 0, {gh, r.inputSize});
  FailureOr<Value> rAll = directionPart(ctx, 2, d, 0, {recRows, h});
  if (failed(w) || failed(rAll))
    return failure();
  dw.w = *w;
  dw.rAll = *rAll;
  if (r.cell == Cell::GRU) {
    FailureOr<Value> rh = directionPart(ctx, 2, d, 2 * h, {h, h});
    if (failed(rh))
      return failure();
    dw.rh = *rh;
  }
  if (r.hasBias) {
    FailureOr<Value> wb = directionPart(ctx, 3, d, 0, {gh});
    FailureOr<Value> rb = directionPart(ctx, 3, d, gh, {recRows});
    FailureOr<Value> rbh =
        r.cell == Cell::GRU ? directionPart(ctx, 3, d, gh + 2 * h, {h}) : FailureOr<Value>(Value());
    if (failed(wb) || failed(rb) || failed(rbh))
      return failure();
    dw.wb = *wb;
    dw.rbAll = *rb;
    dw.rbh = *rbh;
  }
  if (r.hasPeepholes) {
    Value *ps[] = {&dw.pi, &dw.po, &dw.pf};
    for (int k = 0; k < 3; ++k) {
      FailureOr<Value> p = directionPart(ctx, 7, d, k * h, {h});
      if (failed(p))
        return failure();
      *ps[k] = ctx.reshape(*p, {1, h});
    }
  }
  return dw;
}

/// One LSTM step: `xw` is X_t * W^T + Wb [B, 4H]; updates h and c.
void lstmStep(NodeContext &ctx, const Recurrent &r, int64_t d, const DirectionWeights &dw, Value xw,
              Value &h, Value &c) {
  int64_t n = r.hidden;
  Value pre = add(ctx, xw, linear(ctx, h, dw.rAll, dw.rbAll));
  Value iPre = columns(ctx, pre, 0, n), oPre = columns(ctx, pre, n, n);
  Value fPre = columns(ctx, pre, 2 * n, n), cPre = columns(ctx, pre, 3 * n, n);
  if (dw.pi) {
    iPre = add(ctx, iPre, mul(ctx, c, dw.pi));
    fPre = add(ctx, fPre, mul(ctx, c, dw.pf));
  }
  Value i = gate(ctx, r, r.act(d, 0), iPre);
  Value f = r.inputForget ? sub(ctx, scalar(ctx, 1), i) : gate(ctx, r, r.act(d, 0), fPre);
  Value g = gate(ctx, r, r.act(d, 1), cPre);
  c = add(ctx, mul(ctx, f, c), mul(ctx, i, g));
  if (dw.po)
    oPre = add(ctx, oPre, mul(ctx, c, dw.po));
  Value o = gate(ctx, r, r.act(d, 0), oPre);
  h = mul(ctx, o, activate(ctx, r.act(d, 2), c));
}

/// One GRU step: `xw` is X_t * W^T + Wb [B, 3H]; updates h.
void gruStep(NodeContext &ctx, const Recurrent &r, int64_t d, const DirectionWeights &dw, Value xw,
             Value &h) {
  int64_t n = r.hidden;
  Value zr = add(ctx, columns(ctx, xw, 0, 2 * n), linear(ctx, h, dw.rAll, dw.rbAll));
  Value z = gate(ctx, r, r.act(d, 0), columns(ctx, zr, 0, n));
  Value rg = gate(ctx, r, r.act(d, 0), columns(ctx, zr, n, n));
  Value rec = r.linearBeforeReset ? mul(ctx, rg, linear(ctx, h, dw.rh, dw.rbh))
                                  : linear(ctx, mul(ctx, rg, h), dw.rh, dw.rbh);
  Value hh = gate(ctx, r, r.act(d, 1), add(ctx, columns(ctx, xw, 2 * n, n), rec));
  // H_t = (1 - z) * hh + z * H_{t-1}
  h = add(ctx, mul(ctx, sub(ctx, scalar(ctx, 1), z), hh), mul(ctx, z, h));
}

/// tosa.concat of `parts` along `axis` (one part: itself).
Value concat(NodeContext &ctx, llvm::ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts.front();
  std::vector<int64_t> shape = shapeOf(parts.front());
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += shapeOf(p)[axis];
  return ctx.create<tosa::ConcatOp>(ctx.f32Type(shape), parts,
                                    ctx.builder().getI64IntegerAttr(axis));
}

/// Runs direction `d` of the batches `g` over their `g.len` steps; hs[t]
/// is H at time index t ([g.size, H]; zeros from g.len on), h and c the
/// states after the last step.
void runDirection(NodeContext &ctx, const Recurrent &r, int64_t d, const DirectionWeights &dw,
                  const BatchGroup &g, std::vector<Value> &hs, Value &h, Value &c) {
  int64_t s = g.len, b = g.size, n = r.hidden, gh = r.gates * n;
  Value x = ctx.slice(r.x, {0, g.first, 0}, {s, b, r.inputSize});
  Value xw = linear(ctx, ctx.reshape(x, {s * b, r.inputSize}), dw.w, dw.wb);
  auto state = [&](Value init) {
    return init ? ctx.reshape(ctx.slice(init, {d, g.first, 0}, {1, b, n}), {b, n})
                : ctx.constF32({b, n}, {0.0f});
  };
  h = state(r.h0);
  c = r.cell == Cell::LSTM ? state(r.c0) : Value();
  bool backward = r.reverse || d == 1;
  hs.assign(r.seq, Value());
  for (int64_t k = 0; k < s; ++k) {
    int64_t t = backward ? s - 1 - k : k;
    Value xt = ctx.slice(xw, {t * b, 0}, {b, gh});
    if (r.cell == Cell::LSTM)
      lstmStep(ctx, r, d, dw, xt, h, c);
    else if (r.cell == Cell::GRU)
      gruStep(ctx, r, d, dw, xt, h);
    else
      h = gate(ctx, r, r.act(d, 0), add(ctx, xt, linear(ctx, h, dw.rAll, dw.rbAll)));
    hs[t] = h;
  }
  for (int64_t t = s; t < r.seq; ++t)
    hs[t] = ctx.constF32({b, n}, {0.0f});
}

/// Runs direction `d` for every batch group; hs[t] is H at time index t
/// [B, H], h and c the final states [B, H].
LogicalResult runDirection(NodeContext &ctx, const Recurrent &r, int64_t d, std::vector<Value> &hs,
                           Value &h, Value &c) {
  FailureOr<DirectionWeights> dw = readWeights(ctx, r, d);
  if (failed(dw))
    return failure();
  std::vector<std::vector<Value>> groupHs(r.groups.size());
  std::vector<Value> hsLast, csLast;
  for (size_t k = 0; k < r.groups.size(); ++k) {
    Value gh, gc;
    runDirection(ctx, r, d, *dw, r.groups[k], groupHs[k], gh, gc);
    hsLast.push_back(gh);
    csLast.push_back(gc);
  }
  hs.assign(r.seq, Value());
  for (int64_t t = 0; t < r.seq; ++t) {
    std::vector<Value> parts;
    for (auto &g : groupHs)
      parts.push_back(g[t]);
    hs[t] = concat(ctx, parts, 0);
  }
  h = concat(ctx, hsLast, 0);
  c = r.cell == Cell::LSTM ? concat(ctx, csLast, 0) : Value();
  return success();
}

/// Stacks per-direction [B, H] states into [D, B, H] (layout 0) or
/// [B, D, H] (layout 1).
Value stackStates(NodeContext &ctx, const Recurrent &r, llvm::ArrayRef<Value> states) {
  std::vector<Value> parts;
  for (Value v : states)
    parts.push_back(ctx.reshape(v, {1, r.batch, r.hidden}));
  Value y = concat(ctx, parts, 0);
  return r.layout ? ctx.transpose(y, {1, 0, 2}) : y;
}

/// LSTM, GRU and RNN: reads the node, unrolls each direction and binds the
/// outputs that are named (Y, Y_h and, for LSTM, Y_c).
LogicalResult convertRecurrent(NodeContext &ctx, Cell cell) {
  Recurrent r;
  r.cell = cell;
  if (failed(readRecurrent(ctx, r)))
    return failure();
  std::vector<std::vector<Value>> hs(r.dirs);
  std::vector<Value> lastH(r.dirs), lastC(r.dirs);
  for (int64_t d = 0; d < r.dirs; ++d)
    if (failed(runDirection(ctx, r, d, hs[d], lastH[d], lastC[d])))
      return failure();
  if (ctx.hasOutput(0)) {
    std::vector<Value> steps;
    for (int64_t t = 0; t < r.seq; ++t) {
      std::vector<Value> perDir;
      for (int64_t d = 0; d < r.dirs; ++d)
        perDir.push_back(ctx.reshape(hs[d][t], {1, 1, r.batch, r.hidden}));
      steps.push_back(concat(ctx, perDir, 1));
    }
    Value y = concat(ctx, steps, 0); // [S, D, B, H]
    if (r.layout)
      y = ctx.transpose(y, {2, 0, 1, 3});
    if (failed(ctx.setOutput(0, y)))
      return failure();
  }
  if (ctx.hasOutput(1) && failed(ctx.setOutput(1, stackStates(ctx, r, lastH))))
    return failure();
  if (cell == Cell::LSTM && ctx.hasOutput(2) &&
      failed(ctx.setOutput(2, stackStates(ctx, r, lastC))))
    return failure();
  return success();
}

/// LSTM (opsets 7, 14; ONNX Operators.md): gates i o f c with peepholes P,
/// input_forget, clip and activations (f, g, h) = (Sigmoid, Tanh, Tanh) by
/// default: C_t = f_t * C_{t-1} + i_t * c_t, H_t = o_t * h(C_t).
LogicalResult convertLSTM(NodeContext &ctx) { return convertRecurrent(ctx, Cell::LSTM); }

/// GRU (opsets 7, 14): gates z r h, linear_before_reset, (f, g) = (Sigmoid,
/// Tanh) by default: H_t = (1 - z_t) * h_t + z_t * H_{t-1}.
LogicalResult convertGRU(NodeContext &ctx) { return convertRecurrent(ctx, Cell::GRU); }

/// RNN (opsets 7, 14): H_t = f(X_t * W^T + H_{t-1} * R^T + Wb + Rb), f =
/// Tanh by default.
LogicalResult convertRNN(NodeContext &ctx) { return convertRecurrent(ctx, Cell::RNN); }

} // namespace

void registerRecurrentOps(ConverterTable &table) {
  table["LSTM"] = convertLSTM;
  table["GRU"] = convertGRU;
  table["RNN"] = convertRNN;
}

} // namespace kiln::onnx
