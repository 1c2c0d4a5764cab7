//===- ONNXElementwiseOps.cpp - ONNX elementwise converters ---------------===//
//
// Unary math and activations (Relu LeakyRelu PRelu Elu Selu Celu
// ThresholdedRelu Clip Sigmoid HardSigmoid HardSwish Softplus Softsign Tanh
// Exp Log Sqrt Reciprocal Neg Abs Sign Floor Ceil Round Erf Sin Cos Tan
// Sinh Cosh Asin Acos Atan Asinh Acosh Atanh IsNaN
// IsInf),
// arithmetic (Add Sub Mul Div Pow, variadic Min Max Sum Mean), comparisons
// (Equal Greater Less GreaterOrEqual LessOrEqual), Where and logic (Not And
// Or Xor).
//
// Broadcasting: every multi-input operator here broadcasts numpy-style
// (ONNX opset 7+ for Add/Sub/Mul/Div/Pow/comparisons/logic, opset 8+ for
// Min/Max/Sum/Mean, whose opset-6/7 forms require equal shapes, a special
// case). TOSA requires equal ranks, so every operand is first reshaped to
// the output rank with leading 1s (NodeContext::broadcastRank); TOSA then
// broadcasts size-1 dimensions. The output shape is the numpy broadcast of
// the input shapes.
//
// Element types: float tensors are f32; Relu, Neg, Abs, Sign, Add, Sub, Mul,
// Div, Min, Max, PRelu, Clip, Pow and the comparisons also take int32 and
// int64 (Div of int64 only when folded, see convertDiv); Equal, Where, Not,
// And, Or and Xor take bool.
//
// Constant folding: when every input of a node is known at import time and
// the output has at most kMaxFoldElements elements, the output is computed
// here (float in float32, integers exactly as ONNX defines them: int32
// wraps, integer division truncates) and bound with NodeContext::setConstant,
// so shape arithmetic (Shape -> Mul/Add/Div/Equal/Where -> Reshape) stays
// known to the shape operators.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "TosaMath.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;

namespace kiln::onnx {

namespace {

// --- Element types -------------------------------------------------------

/// Classes of ONNX element types a converter accepts.
enum TypeClass : unsigned { kF = 1, kI = 2, kB = 4 };

unsigned typeClass(int32_t type) {
  if (isFloatType(type))
    return kF;
  if (type == kInt32 || type == kInt64)
    return kI;
  return type == kBool ? kB : 0;
}

/// "float32, int32, int64 or bool" for the classes in `classes`.
std::string classNames(unsigned classes) {
  std::vector<std::string> names;
  if (classes & kF)
    names.push_back("float32");
  if (classes & kI) {
    names.push_back("int32");
    names.push_back("int64");
  }
  if (classes & kB)
    names.push_back("bool");
  std::string s;
  for (size_t k = 0; k < names.size(); ++k)
    s += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
  return s;
}

/// Checks that the inputs in `slots` have one element type (ONNX's type
/// constraint T) of the classes in `accepted`, and returns it.
FailureOr<int32_t> commonType(NodeContext &ctx, llvm::ArrayRef<int> slots, unsigned accepted) {
  int32_t common = kUndefined;
  for (int i : slots) {
    int32_t type = ctx.inputType(i);
    if (!(typeClass(type) & accepted))
      return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                      "') has element type " + dataTypeName(type) + "; " + ctx.node().opType +
                      " is supported for " + classNames(accepted));
    bool same = common == kUndefined || type == common ||
                (isFloatType(type) && isFloatType(common));
    if (!same)
      return ctx.fail("inputs have element types " + dataTypeName(common) + " and " +
                      dataTypeName(type) + "; " + ctx.node().opType +
                      " needs one element type");
    if (common == kUndefined)
      common = type;
  }
  return common;
}

// --- Constant folding ----------------------------------------------------

/// The largest output folded at import (shape arithmetic is far smaller).
constexpr int64_t kMaxFoldElements = 4096;

/// One element during folding: float data in `f`, integer and bool in `i`.
struct Elem {
  float f = 0;
  int64_t i = 0;
};

/// Computes one output element from the inputs' elements; `isFloat` tells
/// which member of the data inputs (and of the result) is meant.
using FoldFn = std::function<Elem(bool isFloat, llvm::ArrayRef<Elem>)>;

Elem floatElem(float f) { return Elem{f, 0}; }
Elem intElem(int64_t i) { return Elem{0, i}; }

/// Two's-complement arithmetic without signed-overflow UB (the result is
/// wrapped to the element width by foldElementwise).
int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

/// numpy broadcast of the shapes of the inputs in `slots`.
std::optional<std::vector<int64_t>> broadcastAll(NodeContext &ctx, llvm::ArrayRef<int> slots) {
  std::vector<int64_t> shape;
  for (int i : slots) {
    auto next = broadcastShapes(shape, ctx.inputShape(i));
    if (!next)
      return std::nullopt;
    shape = *next;
  }
  return shape;
}

/// Fails naming the shapes when the inputs do not broadcast.
FailureOr<std::vector<int64_t>> outputShape(NodeContext &ctx, llvm::ArrayRef<int> slots) {
  if (auto shape = broadcastAll(ctx, slots))
    return *shape;
  std::string shapes;
  for (int i : slots)
    shapes += (shapes.empty() ? "" : ", ") + shapeString(ctx.inputShape(i));
  return ctx.fail("input shapes " + shapes + " do not broadcast (numpy rules)");
}


/// True when every input in `slots` is a constant and the output is small.
bool foldable(NodeContext &ctx, llvm::ArrayRef<int> slots, llvm::ArrayRef<int64_t> shape) {
  for (int i : slots)
    if (!ctx.constant(i))
      return false;
  return product(shape) <= kMaxFoldElements;
}

/// Binds output 0 to `fn` applied elementwise to the constant inputs in
/// `slots`, broadcast to `shape`. int32 results wrap to 32 bits, bool
/// results are 0/1.
LogicalResult foldElementwise(NodeContext &ctx, llvm::ArrayRef<int> slots,
                              llvm::ArrayRef<int64_t> shape, int32_t outType, bool isFloat,
                              const FoldFn &fn) {
  int64_t rank = int64_t(shape.size());
  // strides[j][k]: step in input j's data for output dimension k (0 where
  // input j is broadcast along k).
  std::vector<std::vector<int64_t>> strides;
  std::vector<const Tensor *> tensors;
  for (int i : slots) {
    const Tensor *t = ctx.constant(i);
    std::vector<int64_t> s(rank, 0);
    int64_t offset = rank - int64_t(t->dims.size()), step = 1;
    for (int64_t k = int64_t(t->dims.size()) - 1; k >= 0; --k) {
      s[offset + k] = t->dims[k] == 1 ? 0 : step;
      step *= t->dims[k];
    }
    strides.push_back(std::move(s));
    tensors.push_back(t);
  }
  Tensor out;
  out.dataType = outType;
  out.dims.assign(shape.begin(), shape.end());
  int64_t n = product(shape);
  std::vector<Elem> args(tensors.size());
  for (int64_t o = 0; o < n; ++o) {
    for (size_t j = 0; j < tensors.size(); ++j) {
      int64_t rest = o, index = 0;
      for (int64_t k = rank - 1; k >= 0; --k) {
        index += (rest % shape[k]) * strides[j][k];
        rest /= shape[k];
      }
      const Tensor *t = tensors[j];
      args[j] = t->isFloat() ? floatElem(t->floats[index]) : intElem(t->ints[index]);
    }
    Elem r = fn(isFloat, args);
    if (isFloatType(outType))
      out.floats.push_back(r.f);
    else if (outType == kInt32)
      out.ints.push_back(int32_t(uint32_t(uint64_t(r.i))));
    else if (outType == kBool)
      out.ints.push_back(r.i != 0);
    else
      out.ints.push_back(r.i);
  }
  return ctx.setConstant(0, std::move(out));
}

// --- Emission helpers ----------------------------------------------------

// The shared builders (TosaMath.h): elementOf, rankOf, resultType, binary,
// compare, mul, unary, select, scalarLike.
using tosa_math::binary;
using tosa_math::compare;
using tosa_math::elementOf;
using tosa_math::mul;
using tosa_math::rankOf;
using tosa_math::resultType;
using tosa_math::scalarLike;
using tosa_math::select;
using tosa_math::unary;

/// The smallest and largest value of an integer element type.
std::pair<int64_t, int64_t> intRange(Type element) {
  if (element.isInteger(32))
    return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
}

/// Clamps an int32 / int64 tensor to [lo, hi] (limited to the element
/// type's range): tosa.clamp for int32; for int64 tosa.maximum / minimum
/// with constants, since MLIR 16 lowers tosa.clamp's integer bounds through
/// int32 (an int64 bound beyond it would wrap).
Value clampInt(NodeContext &ctx, Value x, int64_t lo, int64_t hi) {
  auto [min, max] = intRange(elementOf(x));
  lo = std::max(lo, min);
  hi = std::min(hi, max);
  if (elementOf(x).isInteger(64)) {
    llvm::SmallVector<int64_t> ones(rankOf(x), 1);
    if (lo > min)
      x = binary<tosa::MaximumOp>(ctx, x, ctx.constI64(ones, {lo}));
    if (hi < max)
      x = binary<tosa::MinimumOp>(ctx, x, ctx.constI64(ones, {hi}));
    return x;
  }
  OpBuilder &b = ctx.builder();
  return ctx.create<tosa::ClampOp>(x.getType(), x, b.getI64IntegerAttr(lo),
                                   b.getI64IntegerAttr(hi), b.getF32FloatAttr(0),
                                   b.getF32FloatAttr(0));
}

/// tosa.clamp to [lo, hi] of an f32 tensor, or of an integer one (bounds
/// beyond the type's range saturate).
Value clampTo(NodeContext &ctx, Value x, double lo, double hi) {
  if (elementOf(x).isF32())
    return ctx.clamp(x, float(lo), float(hi));
  auto [min, max] = intRange(elementOf(x));
  return clampInt(ctx, x, lo <= double(min) ? min : int64_t(lo),
                  hi >= double(max) ? max : int64_t(hi));
}

// --- The generic driver --------------------------------------------------

/// The inputs reshaped to the output rank, and the output shape.
struct Operands {
  llvm::SmallVector<Value, 4> values;
  std::vector<int64_t> shape;
};

/// Builds the output from the rank-aligned operands; returns a null Value
/// after ctx.fail when it cannot.
using EmitFn = std::function<Value(NodeContext &, Operands &)>;

/// How one elementwise operator converts.
struct Elementwise {
  unsigned types = kF;     ///< Accepted classes of the data inputs.
  bool boolResult = false; ///< Comparisons: the output is bool.
  bool condition = false;  ///< Where: input 0 is a bool condition.
  FoldFn fold;
  EmitFn emit;
};

/// Converts a node whose inputs are all data inputs of `op` (omitted
/// optional inputs are skipped): type check, fold, or emit.
LogicalResult convertElementwise(NodeContext &ctx, const Elementwise &op) {
  llvm::SmallVector<int> slots, dataSlots;
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i)) {
      slots.push_back(i);
      if (!(op.condition && i == 0))
        dataSlots.push_back(i);
    }
  if (dataSlots.empty())
    return ctx.fail("the operator needs at least one input");
  if (op.condition && failed(commonType(ctx, {0}, kB)))
    return failure();
  FailureOr<int32_t> type = commonType(ctx, dataSlots, op.types);
  FailureOr<std::vector<int64_t>> shape = outputShape(ctx, slots);
  if (failed(type) || failed(shape))
    return failure();
  if (foldable(ctx, slots, *shape))
    return foldElementwise(ctx, slots, *shape, op.boolResult ? kBool : *type,
                           isFloatType(*type), op.fold);
  Operands operands{{}, *shape};
  for (int i : slots) {
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    operands.values.push_back(ctx.broadcastRank(*v, int64_t(shape->size())));
  }
  Value result = op.emit(ctx, operands);
  if (!result)
    return failure();
  return ctx.setOutput(0, result);
}

/// A float-only unary operator: `f` folds one element, `emit` builds it.
LogicalResult convertUnaryFloat(NodeContext &ctx, std::function<float(float)> f,
                                std::function<Value(NodeContext &, Value)> emit) {
  Elementwise op;
  op.fold = [f](bool, llvm::ArrayRef<Elem> x) { return floatElem(f(x[0].f)); };
  op.emit = [emit](NodeContext &c, Operands &o) { return emit(c, o.values[0]); };
  return convertElementwise(ctx, op);
}

/// A unary operator that is one TOSA op over float32.
template <typename OpTy> LogicalResult convertSimple(NodeContext &ctx, float (*f)(float)) {
  return convertUnaryFloat(ctx, f, [](NodeContext &c, Value x) { return unary<OpTy>(c, x); });
}


// --- Activations -----------------------------------------------------------

/// Relu (opsets 6, 13, 14): y = max(x, 0); float32, and int32 / int64 from
/// opset 14. Shape of x. -> tosa.maximum(x, 0) for float32 (+inf stays
/// +inf), tosa.clamp [0, type max] for integers.
LogicalResult convertRelu(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> x) {
    if (!isFloat)
      return intElem(std::max<int64_t>(x[0].i, 0));
    return floatElem(std::isnan(x[0].f) || x[0].f > 0 ? x[0].f : 0.0f);
  };
  op.emit = [](NodeContext &c, Operands &o) {
    Value x = o.values[0];
    if (elementOf(x).isF32()) // tosa.maximum keeps +inf (a clamp would give FLT_MAX)
      return binary<tosa::MaximumOp>(c, x, scalarLike(c, 0, x));
    return clampTo(c, x, 0, std::numeric_limits<float>::infinity());
  };
  return convertElementwise(ctx, op);
}

/// LeakyRelu (opsets 6, 16): y = x < 0 ? alpha * x : x, alpha = 0.01 by
/// default. Shape of x. -> select(greater(0, x), mul(x, alpha), x).
LogicalResult convertLeakyRelu(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 0.01f);
  return convertUnaryFloat(
      ctx, [alpha](float x) { return x < 0 ? alpha * x : x; },
      [alpha](NodeContext &c, Value x) {
        Value negative = compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x);
        return select(c, negative, mul(c, x, scalarLike(c, alpha, x)), x);
      });
}

/// Whether PRelu's slope is the per-channel [C] that PyTorch's early ONNX
/// exporter wrote (libonnx-testdata pytorch-converted test_PReLU_*_multiparam:
/// x [N,C,...], slope [C], C not x's last dimension, so numpy rules do not
/// broadcast it). PyTorch meant channel c's slope for dimension 1.
static bool legacyChannelSlope(const NodeContext &ctx) {
  std::vector<int64_t> x = ctx.inputShape(0), slope = ctx.inputShape(1);
  return x.size() >= 3 && slope.size() == 1 && slope[0] == x[1] && slope[0] != x.back() &&
         slope[0] != 1;
}

/// PRelu (opsets 7, 9, 16): y = x < 0 ? slope * x : x, slope broadcast to x
/// numpy-style (unidirectionally: a per-channel slope is [C,1,1] for NCHW
/// x). float32, int32, int64 (opset 9+). Shape: the broadcast of x and
/// slope (x's shape for valid models). A slope [C] that numpy rules cannot
/// broadcast but that matches x's channel dimension (legacyChannelSlope) is
/// read as [C,1,...,1], as PyTorch computed it.
LogicalResult convertPRelu(NodeContext &ctx) {
  if (ctx.numInputs() == 2 && ctx.hasInput(0) && ctx.hasInput(1) && legacyChannelSlope(ctx)) {
    FailureOr<Value> x = ctx.input(0), slope = ctx.input(1);
    if (failed(x) || failed(slope))
      return failure();
    if (x->getType().cast<RankedTensorType>().getElementType() !=
        slope->getType().cast<RankedTensorType>().getElementType())
      return ctx.fail("x and slope have different element types");
    std::vector<int64_t> shape(ctx.inputRank(0) - 1, 1);
    shape[0] = ctx.inputShape(1)[0];
    Value perChannel = ctx.broadcastRank(ctx.reshape(*slope, shape), ctx.inputRank(0));
    Value negative = compare<tosa::GreaterOp>(ctx, scalarLike(ctx, 0, *x), *x);
    return ctx.setOutput(0, select(ctx, negative, mul(ctx, *x, perChannel), *x));
  }
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    if (!isFloat)
      return intElem(v[0].i < 0 ? wrapMul(v[0].i, v[1].i) : v[0].i);
    return floatElem(v[0].f < 0 ? v[0].f * v[1].f : v[0].f);
  };
  op.emit = [](NodeContext &c, Operands &o) {
    Value x = o.values[0], slope = o.values[1];
    Value negative = compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x);
    return select(c, negative, mul(c, x, slope), x);
  };
  return convertElementwise(ctx, op);
}

/// Elu (opset 6): y = x < 0 ? alpha * (exp(x) - 1) : x, alpha = 1 by
/// default. Shape of x.
LogicalResult convertElu(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.0f);
  return convertUnaryFloat(
      ctx, [alpha](float x) { return x < 0 ? alpha * (std::exp(x) - 1.0f) : x; },
      [alpha](NodeContext &c, Value x) { return tosa_math::elu(c, x, alpha); });
}

/// Selu (opset 6): y = gamma * (x > 0 ? x : alpha * exp(x) - alpha), with
/// alpha = 1.67326319..., gamma = 1.05070102... by default. Shape of x.
LogicalResult convertSelu(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.67326319217681884765625f);
  float gamma = ctx.attrFloat("gamma", 1.05070102214813232421875f);
  return convertUnaryFloat(
      ctx, [=](float x) { return gamma * (x > 0 ? x : alpha * std::exp(x) - alpha); },
      [=](NodeContext &c, Value x) {
        Value scaled = mul(c, unary<tosa::ExpOp>(c, x), scalarLike(c, alpha, x));
        Value negative = binary<tosa::SubOp>(c, scaled, scalarLike(c, alpha, x));
        Value positive = compare<tosa::GreaterOp>(c, x, scalarLike(c, 0, x));
        return mul(c, select(c, positive, x, negative), scalarLike(c, gamma, x));
      });
}

/// Celu (opset 12): y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)),
/// alpha = 1 by default. Shape of x.
LogicalResult convertCelu(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.0f);
  if (alpha == 0)
    return ctx.fail("attribute alpha is 0; Celu divides by alpha");
  return convertUnaryFloat(
      ctx,
      [alpha](float x) {
        return std::max(0.0f, x) + std::min(0.0f, alpha * (std::exp(x / alpha) - 1.0f));
      },
      [alpha](NodeContext &c, Value x) {
        Value e = unary<tosa::ExpOp>(c, mul(c, x, scalarLike(c, 1.0 / alpha, x)));
        Value em1 = binary<tosa::SubOp>(c, e, scalarLike(c, 1, x));
        Value neg = binary<tosa::MinimumOp>(c, mul(c, em1, scalarLike(c, alpha, x)),
                                            scalarLike(c, 0, x));
        return binary<tosa::AddOp>(c, binary<tosa::MaximumOp>(c, x, scalarLike(c, 0, x)), neg);
      });
}

/// ThresholdedRelu (opset 10): y = x > alpha ? x : 0, alpha = 1 by default.
LogicalResult convertThresholdedRelu(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.0f);
  return convertUnaryFloat(
      ctx, [alpha](float x) { return x > alpha ? x : 0.0f; },
      [alpha](NodeContext &c, Value x) {
        Value above = compare<tosa::GreaterOp>(c, x, scalarLike(c, alpha, x));
        return select(c, above, x, scalarLike(c, 0, x));
      });
}

/// HardSigmoid (opset 6): y = max(0, min(1, alpha * x + beta)), alpha 0.2,
/// beta 0.5 by default. -> clamp(add(mul(x, alpha), beta), 0, 1).
LogicalResult convertHardSigmoid(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 0.2f), beta = ctx.attrFloat("beta", 0.5f);
  return convertUnaryFloat(
      ctx, [=](float x) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); },
      [=](NodeContext &c, Value x) {
        Value linear = binary<tosa::AddOp>(c, mul(c, x, scalarLike(c, alpha, x)),
                                           scalarLike(c, beta, x));
        return clampTo(c, linear, 0, 1);
      });
}

/// HardSwish (opset 14): y = x * max(0, min(1, x / 6 + 0.5)).
LogicalResult convertHardSwish(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); },
      [](NodeContext &c, Value x) {
        Value linear = binary<tosa::AddOp>(c, mul(c, x, scalarLike(c, 1.0 / 6.0, x)),
                                           scalarLike(c, 0.5, x));
        return mul(c, x, clampTo(c, linear, 0, 1));
      });
}

/// Softplus (opset 1): y = log(exp(x) + 1), computed as
/// max(x, 0) + log(1 + exp(-|x|)) so large x does not overflow.
LogicalResult convertSoftplus(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); },
      [](NodeContext &c, Value x) {
        Value e = unary<tosa::ExpOp>(c, unary<tosa::NegateOp>(c, unary<tosa::AbsOp>(c, x)));
        Value l = unary<tosa::LogOp>(c, binary<tosa::AddOp>(c, e, scalarLike(c, 1, x)));
        return binary<tosa::AddOp>(c, binary<tosa::MaximumOp>(c, x, scalarLike(c, 0, x)), l);
      });
}

/// Mish (18): y = x * tanh(softplus(x)), softplus as in convertSoftplus.
LogicalResult convertMish(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx,
      [](float x) {
        return x * std::tanh(std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))));
      },
      [](NodeContext &c, Value x) {
        Value e = unary<tosa::ExpOp>(c, unary<tosa::NegateOp>(c, unary<tosa::AbsOp>(c, x)));
        Value l = unary<tosa::LogOp>(c, binary<tosa::AddOp>(c, e, scalarLike(c, 1, x)));
        Value sp = binary<tosa::AddOp>(c, binary<tosa::MaximumOp>(c, x, scalarLike(c, 0, x)), l);
        return mul(c, x, unary<tosa::TanhOp>(c, sp));
      });
}

/// Softsign (opset 1): y = x / (1 + |x|).
LogicalResult convertSoftsign(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return x / (1.0f + std::fabs(x)); },
      [](NodeContext &c, Value x) {
        Value d = binary<tosa::AddOp>(c, unary<tosa::AbsOp>(c, x), scalarLike(c, 1, x));
        return mul(c, x, unary<tosa::ReciprocalOp>(c, d));
      });
}

/// Clip bounds: the value when known at import, else the input slot.
struct ClipBound {
  bool present = false;
  std::optional<Elem> value; ///< Known bound.
  int slot = -1;             ///< Input slot of a bound computed at run time.
};

/// Reads Clip's bounds: attributes `min`/`max` before opset 11 (defaults
/// the float range), optional scalar inputs 1 and 2 from opset 11 (absent:
/// unbounded; must have one element).
LogicalResult clipBounds(NodeContext &ctx, ClipBound &lo, ClipBound &hi) {
  if (ctx.opset() < 11) {
    lo = {true, floatElem(ctx.attrFloat("min", std::numeric_limits<float>::lowest())), -1};
    hi = {true, floatElem(ctx.attrFloat("max", std::numeric_limits<float>::infinity())), -1};
    return success();
  }
  for (int slot : {1, 2}) {
    ClipBound &b = slot == 1 ? lo : hi;
    if (!ctx.hasInput(slot))
      continue;
    if (product(ctx.inputShape(slot)) != 1)
      return ctx.fail("input " + llvm::Twine(slot) + " (" + (slot == 1 ? "min" : "max") +
                      ") has shape " + shapeString(ctx.inputShape(slot)) +
                      "; Clip's bounds are scalars");
    b.present = true;
    b.slot = slot;
    if (const Tensor *t = ctx.constant(slot))
      b.value = t->isFloat() ? floatElem(t->floats[0]) : intElem(t->ints[0]);
  }
  return success();
}

/// Clips one element to the known bounds (NaN stays NaN; lo > hi gives hi,
/// numpy.clip's order: max with lo, then min with hi).
Elem clipElem(bool isFloat, Elem x, const ClipBound &lo, const ClipBound &hi) {
  if (isFloat) {
    float v = x.f;
    if (!std::isnan(v) && lo.present && v < lo.value->f)
      v = lo.value->f;
    if (!std::isnan(v) && hi.present && v > hi.value->f)
      v = hi.value->f;
    return floatElem(v);
  }
  int64_t v = x.i;
  if (lo.present)
    v = std::max(v, lo.value->i);
  if (hi.present)
    v = std::min(v, hi.value->i);
  return intElem(v);
}

/// Clip with bounds computed at run time: maximum with min, then minimum
/// with max (each bound reshaped to x's rank).
FailureOr<Value> clipDynamic(NodeContext &ctx, Value x, const ClipBound &lo,
                             const ClipBound &hi) {
  llvm::SmallVector<int64_t> ones(rankOf(x), 1);
  for (const ClipBound *b : {&lo, &hi}) {
    if (!b->present)
      continue;
    FailureOr<Value> bound = ctx.input(b->slot);
    if (failed(bound))
      return failure();
    Value v = ctx.reshape(*bound, ones);
    x = b == &lo ? binary<tosa::MaximumOp>(ctx, x, v) : binary<tosa::MinimumOp>(ctx, x, v);
  }
  return x;
}

/// Clip (opsets 6, 11, 12, 13): y = min(max(x, min), max). Opset 6: float
/// attributes; opset 11: optional scalar inputs; opset 12+: int32/int64
/// too. Shape of x. Two known bounds -> tosa.clamp (as lowered by MLIR 16
/// a NaN x comes out as a bound, where numpy.clip keeps NaN; folding keeps
/// NaN); one known bound or run-time bounds -> tosa.maximum / minimum
/// (+-inf kept beyond an absent bound).
LogicalResult convertClip(NodeContext &ctx) {
  ClipBound lo, hi;
  llvm::SmallVector<int> slots = {0};
  for (int slot : {1, 2})
    if (ctx.opset() >= 11 && ctx.hasInput(slot))
      slots.push_back(slot);
  FailureOr<int32_t> type = commonType(ctx, slots, kF | kI);
  if (failed(type) || failed(clipBounds(ctx, lo, hi)))
    return failure();
  bool isFloat = isFloatType(*type);
  bool known = (!lo.present || lo.value) && (!hi.present || hi.value);
  std::vector<int64_t> shape = ctx.inputShape(0);
  if (known && foldable(ctx, {0}, shape))
    return foldElementwise(ctx, {0}, shape, *type, isFloat,
                           [&](bool f, llvm::ArrayRef<Elem> x) {
                             return clipElem(f, x[0], lo, hi);
                           });
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  if (!known) {
    FailureOr<Value> y = clipDynamic(ctx, *x, lo, hi);
    return failed(y) ? failure() : ctx.setOutput(0, *y);
  }
  if (!isFloat) {
    int64_t l = lo.present ? lo.value->i : std::numeric_limits<int64_t>::min();
    int64_t h = hi.present ? hi.value->i : std::numeric_limits<int64_t>::max();
    return ctx.setOutput(0, clampInt(ctx, *x, std::min(l, h), h)); // lo > hi: all max
  }
  Value y = *x; // no bound: identity
  if (lo.present && hi.present) // lo > hi: every value becomes max (numpy.clip)
    y = ctx.clamp(y, std::min(lo.value->f, hi.value->f), hi.value->f);
  else if (lo.present)
    y = binary<tosa::MaximumOp>(ctx, y, scalarLike(ctx, lo.value->f, y));
  else if (hi.present)
    y = binary<tosa::MinimumOp>(ctx, y, scalarLike(ctx, hi.value->f, y));
  return ctx.setOutput(0, y);
}

// --- Unary math ------------------------------------------------------------

/// Sigmoid (6, 13): 1 / (1 + exp(-x)) -> tosa.sigmoid.
LogicalResult convertSigmoid(NodeContext &ctx) {
  return convertSimple<tosa::SigmoidOp>(ctx, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}
/// Tanh (6, 13) -> tosa.tanh.
LogicalResult convertTanh(NodeContext &ctx) {
  return convertSimple<tosa::TanhOp>(ctx, [](float x) { return std::tanh(x); });
}
/// Exp (6, 13) -> tosa.exp.
LogicalResult convertExp(NodeContext &ctx) {
  return convertSimple<tosa::ExpOp>(ctx, [](float x) { return std::exp(x); });
}
/// Log (6, 13): natural logarithm (0 -> -inf, x < 0 -> NaN) -> tosa.log.
LogicalResult convertLog(NodeContext &ctx) {
  return convertSimple<tosa::LogOp>(ctx, [](float x) { return std::log(x); });
}
/// Reciprocal (6, 13): 1 / x -> tosa.reciprocal.
LogicalResult convertReciprocal(NodeContext &ctx) {
  return convertSimple<tosa::ReciprocalOp>(ctx, [](float x) { return 1.0f / x; });
}
/// Floor (6, 13) -> tosa.floor.
LogicalResult convertFloor(NodeContext &ctx) {
  return convertSimple<tosa::FloorOp>(ctx, [](float x) { return std::floor(x); });
}
/// Ceil (6, 13) -> tosa.ceil.
LogicalResult convertCeil(NodeContext &ctx) {
  return convertSimple<tosa::CeilOp>(ctx, [](float x) { return std::ceil(x); });
}

/// Sqrt (6, 13): sqrt(x), x < 0 -> NaN. TOSA 0.60 has no sqrt: 1 / rsqrt(x)
/// as the TFLite importer does.
LogicalResult convertSqrt(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::sqrt(x); },
      [](NodeContext &c, Value x) {
        // 1 / rsqrt(x): IEEE's -0 -> -0 and -inf -> NaN, which powf(x, 0.5)
        // gets wrong (+0, +inf); within 2 ulp.
        return unary<tosa::ReciprocalOp>(c, unary<tosa::RsqrtOp>(c, x));
      });
}

/// Neg (6, 13): -x; float32, int32, int64 (int wraps) -> tosa.negate.
LogicalResult convertNeg(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> x) {
    return isFloat ? floatElem(-x[0].f) : intElem(wrapSub(0, x[0].i));
  };
  op.emit = [](NodeContext &c, Operands &o) { return unary<tosa::NegateOp>(c, o.values[0]); };
  return convertElementwise(ctx, op);
}

/// Abs (6, 13): |x|; float32, int32, int64 -> tosa.abs.
LogicalResult convertAbs(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> x) {
    return isFloat ? floatElem(std::fabs(x[0].f))
                   : intElem(x[0].i < 0 ? wrapSub(0, x[0].i) : x[0].i);
  };
  op.emit = [](NodeContext &c, Operands &o) { return unary<tosa::AbsOp>(c, o.values[0]); };
  return convertElementwise(ctx, op);
}

/// Sign (9, 13): 1 for x > 0, -1 for x < 0, 0 for 0 (NaN stays NaN);
/// float32, int32, int64. -> select(x > 0, 1, select(0 > x, -1, x * 0)).
LogicalResult convertSign(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> x) {
    if (!isFloat)
      return intElem(x[0].i > 0 ? 1 : x[0].i < 0 ? -1 : 0);
    return floatElem(x[0].f > 0 ? 1.0f : x[0].f < 0 ? -1.0f : x[0].f * 0.0f);
  };
  op.emit = [](NodeContext &c, Operands &o) {
    Value x = o.values[0];
    Value rest = select(c, compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x),
                        scalarLike(c, -1, x), mul(c, x, scalarLike(c, 0, x)));
    return select(c, compare<tosa::GreaterOp>(c, x, scalarLike(c, 0, x)),
                  scalarLike(c, 1, x), rest);
  };
  return convertElementwise(ctx, op);
}

/// Round (11): to the nearest integer, halves to even (numpy.round):
/// tosa_math::roundHalfEven (TOSA 0.60 has no round).
LogicalResult convertRound(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::nearbyint(x); }, tosa_math::roundHalfEven);
}

/// erf(|x|) for |x| >= 0.5: Abramowitz and Stegun, Handbook of
/// Mathematical Functions, 7.1.26: t = 1 / (1 + p a), erf(a) = 1 - (a1 t +
/// a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-a^2), |error| <= 1.5e-7.
Value erfLarge(NodeContext &c, Value ax) {
  static constexpr double p = 0.3275911;
  static constexpr double a[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027,
                                 1.061405429};
  Value one = scalarLike(c, 1, ax);
  Value t = unary<tosa::ReciprocalOp>(
      c, binary<tosa::AddOp>(c, one, mul(c, ax, scalarLike(c, p, ax))));
  Value poly = scalarLike(c, a[4], ax); // Horner: (((a5 t + a4) t + a3) t ...) t
  for (int k = 3; k >= 0; --k)
    poly = binary<tosa::AddOp>(c, mul(c, poly, t), scalarLike(c, a[k], ax));
  poly = mul(c, poly, t);
  Value gauss = unary<tosa::ExpOp>(c, unary<tosa::NegateOp>(c, mul(c, ax, ax)));
  return binary<tosa::SubOp>(c, one, mul(c, poly, gauss));
}

/// erf(x) for |x| < 0.5: the Maclaurin series 2/sqrt(pi) sum_k (-1)^k
/// x^(2k+1) / (k! (2k+1)) to k = 6 (truncation below 5e-10), keeping the
/// relative accuracy near 0 that 7.1.26's 1 - ... cancels away.
Value erfSmall(NodeContext &c, Value x) {
  static constexpr double coef[] = {1.1283791670955126,    -0.37612638903183754,
                                    0.11283791670955126,   -0.026866170645131252,
                                    0.005223977625442188,  -0.0008548327023450853,
                                    0.00012055332981789664};
  Value x2 = mul(c, x, x);
  Value poly = scalarLike(c, coef[6], x);
  for (int k = 5; k >= 0; --k)
    poly = binary<tosa::AddOp>(c, mul(c, poly, x2), scalarLike(c, coef[k], x));
  return mul(c, poly, x);
}

/// Erf (9, 13): the error function, float32, shape of x. TOSA 0.60 has no
/// erf: the series (erfSmall) for |x| < 0.5, else sign(x) * erfLarge(|x|);
/// measured absolute error below 6e-7 on [-6, 6] against math.erf (NaN
/// stays NaN, +-inf gives +-1).
Value erfValue(NodeContext &c, Value x) {
  Value ax = unary<tosa::AbsOp>(c, x);
  Value y = erfLarge(c, ax);
  Value negative = compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x);
  Value large = select(c, negative, unary<tosa::NegateOp>(c, y), y);
  Value small = compare<tosa::GreaterOp>(c, scalarLike(c, 0.5, x), ax);
  return select(c, small, erfSmall(c, x), large);
}

LogicalResult convertErf(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::erf(x); }, erfValue);
}

/// Gelu (20): approximate "none" y = 0.5 x (1 + erf(x / sqrt(2))) (erfValue),
/// "tanh" y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); float32.
LogicalResult convertGelu(NodeContext &ctx) {
  std::string approximate = ctx.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.fail("attribute approximate is '" + approximate + "'; Gelu takes none or tanh");
  if (approximate == "none")
    return convertUnaryFloat(
        ctx, [](float x) { return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2))); },
        [](NodeContext &c, Value x) {
          Value e = erfValue(c, mul(c, x, scalarLike(c, M_SQRT1_2, x)));
          Value half = mul(c, x, scalarLike(c, 0.5, x));
          return mul(c, half, binary<tosa::AddOp>(c, e, scalarLike(c, 1, x)));
        });
  constexpr double k = 0.7978845608028654; // sqrt(2 / pi)
  return convertUnaryFloat(
      ctx,
      [](float x) { return 0.5f * x * (1.0f + std::tanh(float(k) * (x + 0.044715f * x * x * x))); },
      [](NodeContext &c, Value x) {
        Value cube = mul(c, mul(c, x, x), mul(c, x, scalarLike(c, 0.044715, x)));
        Value inner = mul(c, binary<tosa::AddOp>(c, x, cube), scalarLike(c, k, x));
        Value t = unary<tosa::TanhOp>(c, inner);
        Value half = mul(c, x, scalarLike(c, 0.5, x));
        return mul(c, half, binary<tosa::AddOp>(c, t, scalarLike(c, 1, x)));
      });
}

using tosa_math::evenPolynomial;
using tosa_math::reduceByPi;
using tosa_math::ReducedAngle;

/// Sin (7) / Cos (7): TOSA 0.60 has neither; tosa_math::sinOrCos (range
/// reduction by pi and a series). Float32, shape of x.
LogicalResult convertSinCos(NodeContext &ctx, bool cosine) {
  return convertUnaryFloat(
      ctx, [cosine](float x) { return cosine ? std::cos(x) : std::sin(x); },
      [cosine](NodeContext &c, Value x) { return tosa_math::sinOrCos(c, x, cosine); });
}
LogicalResult convertSin(NodeContext &ctx) { return convertSinCos(ctx, false); }
LogicalResult convertCos(NodeContext &ctx) { return convertSinCos(ctx, true); }

/// sqrt(x) as 1 / rsqrt(x) (convertSqrt's form; NaN below 0).
Value powHalf(NodeContext &c, Value x) {
  return unary<tosa::ReciprocalOp>(c, unary<tosa::RsqrtOp>(c, x));
}

/// sum_k coef[k] x^(2k+1) by Horner's rule on x^2 (an odd series).
Value oddSeries(NodeContext &c, Value x, llvm::ArrayRef<double> coef) {
  return mul(c, x, evenPolynomial(c, mul(c, x, x), coef));
}

/// Tan (7): tan has period pi, so tan(x) = tan(r) for x = k pi + r
/// (reduceByPi), sin(r) / cos(r) by the series of convertSinCos. Float32,
/// shape of x; +-inf for r at +-pi/2 as float32 rounding decides.
LogicalResult convertTan(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::tan(x); },
      [](NodeContext &c, Value x) {
        Value r = reduceByPi(c, x).r;
        Value r2 = mul(c, r, r);
        Value sin =
            mul(c, r,
                evenPolynomial(
                    c, r2, {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800}));
        Value cos = evenPolynomial(
            c, r2,
            {1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600});
        return mul(c, sin, unary<tosa::ReciprocalOp>(c, cos));
      });
}

/// Sinh (9) and Cosh (9): (e^x -+ e^-x) / 2; sinh by its Maclaurin series
/// to x^13 / 13! for |x| < 1 (truncation below 2e-11), where the difference
/// of exponentials cancels. Float32, shape of x.
LogicalResult convertSinhCosh(NodeContext &ctx, bool cosh) {
  return convertUnaryFloat(
      ctx, [cosh](float x) { return cosh ? std::cosh(x) : std::sinh(x); },
      [cosh](NodeContext &c, Value x) {
        Value ep = unary<tosa::ExpOp>(c, x),
              en = unary<tosa::ExpOp>(c, unary<tosa::NegateOp>(c, x));
        Value half = scalarLike(c, 0.5, x);
        if (cosh)
          return mul(c, binary<tosa::AddOp>(c, ep, en), half);
        Value large = mul(c, binary<tosa::SubOp>(c, ep, en), half);
        Value small = oddSeries(c, x,
                                {1.0, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800,
                                 1.0 / 6227020800.0});
        Value near0 = compare<tosa::GreaterOp>(c, scalarLike(c, 1, x), unary<tosa::AbsOp>(c, x));
        return select(c, near0, small, large);
      });
}
LogicalResult convertSinh(NodeContext &ctx) { return convertSinhCosh(ctx, false); }
LogicalResult convertCosh(NodeContext &ctx) { return convertSinhCosh(ctx, true); }

/// atan(x) after Cephes' atanf range reduction (Moshier, Cephes Math
/// Library): |x| > tan(3 pi / 8) gives pi/2 + atan(-1/|x|), |x| > tan(pi/8)
/// gives pi/4 + atan((|x| - 1) / (|x| + 1)), then its degree-9 odd
/// polynomial on |z| <= tan(pi/8); the sign of x restored. About 1 ulp on
/// float32; +-inf gives +-pi/2.
Value atanOf(NodeContext &c, Value x) {
  Value ax = unary<tosa::AbsOp>(c, x);
  Value big = compare<tosa::GreaterOp>(c, ax, scalarLike(c, 2.414213562373095, x));
  Value mid = compare<tosa::GreaterOp>(c, ax, scalarLike(c, 0.4142135623730950, x));
  Value one = scalarLike(c, 1, x);
  Value zBig = unary<tosa::NegateOp>(c, unary<tosa::ReciprocalOp>(c, ax));
  Value zMid = mul(c, binary<tosa::SubOp>(c, ax, one),
                   unary<tosa::ReciprocalOp>(c, binary<tosa::AddOp>(c, ax, one)));
  Value z = select(c, big, zBig, select(c, mid, zMid, ax));
  Value base = select(c, big, scalarLike(c, M_PI_2, x),
                      select(c, mid, scalarLike(c, M_PI_4, x), scalarLike(c, 0, x)));
  Value poly = oddSeries(
      c, z, {1.0, -3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2});
  Value y = binary<tosa::AddOp>(c, base, poly);
  Value negative = compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x);
  return select(c, negative, unary<tosa::NegateOp>(c, y), y);
}

/// Atan (7): atanOf. Float32, shape of x.
LogicalResult convertAtan(NodeContext &ctx) {
  return convertUnaryFloat(
      ctx, [](float x) { return std::atan(x); }, atanOf);
}

/// Asin (7): atan(x / sqrt(1 - x^2)) (x = +-1 divides by 0: atan(+-inf));
/// Acos (7): 2 atan(sqrt((1 - x) / (1 + x))), accurate near x = 1. NaN
/// outside [-1, 1] (the square root of a negative). Float32, shape of x.
LogicalResult convertAsinAcos(NodeContext &ctx, bool acos) {
  return convertUnaryFloat(
      ctx, [acos](float x) { return acos ? std::acos(x) : std::asin(x); },
      [acos](NodeContext &c, Value x) {
        Value one = scalarLike(c, 1, x);
        if (acos) {
          Value ratio = mul(c, binary<tosa::SubOp>(c, one, x),
                            unary<tosa::ReciprocalOp>(c, binary<tosa::AddOp>(c, one, x)));
          return mul(c, atanOf(c, powHalf(c, ratio)), scalarLike(c, 2, x));
        }
        Value root = powHalf(c, binary<tosa::SubOp>(c, one, mul(c, x, x)));
        return atanOf(c, mul(c, x, unary<tosa::ReciprocalOp>(c, root)));
      });
}
LogicalResult convertAsin(NodeContext &ctx) { return convertAsinAcos(ctx, false); }
LogicalResult convertAcos(NodeContext &ctx) { return convertAsinAcos(ctx, true); }

/// Asinh (9): sign(x) log(|x| + sqrt(x^2 + 1)), by its Maclaurin series to
/// x^15 for |x| < 0.5 (truncation about 1e-6 relative at 0.5). Acosh (9):
/// log(x + sqrt(x^2 - 1)), NaN below 1. Both are log(2 |x|) past 2^60. Atanh (9): log((1 + x) / (1
/// - x)) / 2, by its series to x^17 for |x| < 0.5. Float32, shape of x.
LogicalResult convertInverseHyperbolic(NodeContext &ctx, int which) {
  return convertUnaryFloat(
      ctx,
      [which](float x) {
        return which == 0 ? std::asinh(x) : which == 1 ? std::acosh(x) : std::atanh(x);
      },
      [which](NodeContext &c, Value x) {
        Value one = scalarLike(c, 1, x);
        Value ax = unary<tosa::AbsOp>(c, x);
        // Past 2^60, x^2 +- 1 = x^2 in float32 (and x^2 overflows past
        // 1.8e19): log(x + sqrt(x^2 +- 1)) = log(2 x) = log(x) + ln 2.
        Value huge = compare<tosa::GreaterOp>(c, ax, scalarLike(c, 0x1p60, x));
        Value logTwice = binary<tosa::AddOp>(c, unary<tosa::LogOp>(c, ax), scalarLike(c, M_LN2, x));
        if (which == 1) {
          Value y = unary<tosa::LogOp>(
              c, binary<tosa::AddOp>(c, x, powHalf(c, binary<tosa::SubOp>(c, mul(c, x, x), one))));
          y = select(c, compare<tosa::GreaterOp>(c, x, scalarLike(c, 0x1p60, x)), logTwice, y);
          // Below 1 (-inf and -FLT_MAX among them, whose x^2 overflows): NaN.
          Value below = compare<tosa::GreaterOp>(c, one, x);
          return select(c, below, scalarLike(c, std::numeric_limits<double>::quiet_NaN(), x), y);
        }
        Value near0 = compare<tosa::GreaterOp>(c, scalarLike(c, 0.5, x), ax);
        Value small, large;
        if (which == 0) {
          small = oddSeries(c, x,
                            {1.0, -1.0 / 6, 3.0 / 40, -5.0 / 112, 35.0 / 1152, -63.0 / 2816,
                             231.0 / 13312, -143.0 / 10240});
          Value l = unary<tosa::LogOp>(
              c, binary<tosa::AddOp>(c, ax, powHalf(c, binary<tosa::AddOp>(c, mul(c, x, x), one))));
          l = select(c, huge, logTwice, l);
          Value negative = compare<tosa::GreaterOp>(c, scalarLike(c, 0, x), x);
          large = select(c, negative, unary<tosa::NegateOp>(c, l), l);
        } else {
          small = oddSeries(
              c, x,
              {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17});
          Value ratio = mul(c, binary<tosa::AddOp>(c, one, x),
                            unary<tosa::ReciprocalOp>(c, binary<tosa::SubOp>(c, one, x)));
          large = mul(c, unary<tosa::LogOp>(c, ratio), scalarLike(c, 0.5, x));
        }
        return select(c, near0, small, large);
      });
}
LogicalResult convertAsinh(NodeContext &ctx) { return convertInverseHyperbolic(ctx, 0); }
LogicalResult convertAcosh(NodeContext &ctx) { return convertInverseHyperbolic(ctx, 1); }
LogicalResult convertAtanh(NodeContext &ctx) { return convertInverseHyperbolic(ctx, 2); }

/// IsNaN (9, 13): bool, x != x -> logical_not(equal(x, x)).
LogicalResult convertIsNaN(NodeContext &ctx) {
  Elementwise op;
  op.boolResult = true;
  op.fold = [](bool, llvm::ArrayRef<Elem> x) { return intElem(std::isnan(x[0].f)); };
  op.emit = [](NodeContext &c, Operands &o) {
    return unary<tosa::LogicalNotOp>(c, compare<tosa::EqualOp>(c, o.values[0], o.values[0]));
  };
  return convertElementwise(ctx, op);
}

/// IsInf (10): bool, x == +inf (detect_positive, default 1) or x == -inf
/// (detect_negative, default 1).
LogicalResult convertIsInf(NodeContext &ctx) {
  bool pos = ctx.attrInt("detect_positive", 1) != 0, neg = ctx.attrInt("detect_negative", 1) != 0;
  Elementwise op;
  op.boolResult = true;
  op.fold = [=](bool, llvm::ArrayRef<Elem> x) {
    return intElem(std::isinf(x[0].f) && (x[0].f > 0 ? pos : neg));
  };
  op.emit = [=](NodeContext &c, Operands &o) {
    Value x = o.values[0];
    const float inf = std::numeric_limits<float>::infinity();
    Value isPos = compare<tosa::EqualOp>(c, x, scalarLike(c, inf, x));
    Value isNeg = compare<tosa::EqualOp>(c, x, scalarLike(c, -inf, x));
    if (pos && neg)
      return c.create<tosa::LogicalOrOp>(isPos.getType(), isPos, isNeg);
    if (pos || neg)
      return pos ? isPos : isNeg;
    return compare<tosa::GreaterOp>(c, x, x); // always false
  };
  return convertElementwise(ctx, op);
}

// --- Arithmetic -----------------------------------------------------------

/// Add (7, 13, 14): a + b, numpy broadcast; float32, int32, int64 (int
/// wraps). Shape: broadcast of a and b. -> tosa.add.
LogicalResult convertAdd(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    return isFloat ? floatElem(v[0].f + v[1].f) : intElem(wrapAdd(v[0].i, v[1].i));
  };
  op.emit = [](NodeContext &c, Operands &o) {
    return binary<tosa::AddOp>(c, o.values[0], o.values[1]);
  };
  return convertElementwise(ctx, op);
}

/// Sub (7, 13, 14): a - b, as Add. -> tosa.sub.
LogicalResult convertSub(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    return isFloat ? floatElem(v[0].f - v[1].f) : intElem(wrapSub(v[0].i, v[1].i));
  };
  op.emit = [](NodeContext &c, Operands &o) {
    return binary<tosa::SubOp>(c, o.values[0], o.values[1]);
  };
  return convertElementwise(ctx, op);
}

/// Mul (7, 13, 14): a * b, as Add. -> tosa.mul (shift 0).
LogicalResult convertMul(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    return isFloat ? floatElem(v[0].f * v[1].f) : intElem(wrapMul(v[0].i, v[1].i));
  };
  op.emit = [](NodeContext &c, Operands &o) { return mul(c, o.values[0], o.values[1]); };
  return convertElementwise(ctx, op);
}

/// Truncating integer division (C, and ONNX's integer Div); the one
/// overflowing case, MIN / -1, wraps.
int64_t truncDiv(int64_t a, int64_t b) { return b == -1 ? wrapSub(0, a) : a / b; }

/// Div (7, 13, 14): a / b, as Add. float32 -> tosa.mul(a,
/// tosa.reciprocal(b)) (MLIR 16's tosa.div is int32-only; the reciprocal
/// adds one rounding, about 1e-7 relative; x/0 is still +-inf, 0/0 NaN);
/// folded in exact float32 division. Integers truncate toward zero: int32
/// -> tosa.div; int64 only when folded at import (TOSA 0.60 divides no
/// int64). A constant integer divisor holding 0 is refused (undefined).
LogicalResult convertDiv(NodeContext &ctx) {
  const Tensor *divisor = ctx.constant(1);
  if (divisor && !divisor->isFloat() && llvm::is_contained(divisor->ints, 0))
    return ctx.fail("input 1 ('" + ctx.node().inputs[1] +
                    "') is a constant integer divisor holding 0; integer division by zero is "
                    "undefined");
  Elementwise op;
  op.types = kF | kI;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    if (isFloat)
      return floatElem(v[0].f / v[1].f);
    return intElem(v[1].i == 0 ? 0 : truncDiv(v[0].i, v[1].i));
  };
  op.emit = [](NodeContext &c, Operands &o) -> Value {
    Value a = o.values[0], b = o.values[1];
    if (elementOf(a).isF32())
      return mul(c, a, unary<tosa::ReciprocalOp>(c, b));
    if (elementOf(a).isInteger(32))
      return binary<tosa::DivOp>(c, a, b);
    (void)c.fail("int64 division of values computed at run time is not supported (TOSA 0.60 "
                 "divides int32 only); Div takes float32, int32, and int64 values known when "
                 "the model is compiled");
    return Value();
  };
  return convertElementwise(ctx, op);
}

/// base^exp for integers (ONNX Pow of int tensors: numpy.power, wrapping;
/// a negative exponent truncates 1 / base^-exp toward zero).
int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  int64_t r = 1;
  for (; exp; exp >>= 1, base = wrapMul(base, base))
    if (exp & 1)
      r = wrapMul(r, base);
  return r;
}

/// Pow folded: the result has the base's type.
Elem powElem(bool floatBase, bool floatExp, Elem b, Elem e) {
  if (floatBase)
    return floatElem(std::pow(b.f, floatExp ? e.f : float(e.i)));
  if (!floatExp)
    return intElem(intPow(b.i, e.i));
  double r = std::trunc(std::pow(double(b.i), double(e.f)));
  return intElem(std::isfinite(r) && std::fabs(r) < 9.2e18 ? int64_t(r) : 0);
}

/// Pow (7, 12, 13, 15): base ^ exponent, numpy broadcast; shape: broadcast.
/// Opset 7: both float; opset 12+: base (T) and exponent (T1) each
/// float32, int32 or int64, the result of type T. Computed by tosa.pow in
/// float32 (math.powf): an integer exponent is cast to f32; an integer base
/// is cast to f32 and the result cast back (rounded to nearest for an
/// integer exponent, where the exact result is an integer; truncated toward
/// zero for a float exponent, as numpy's power then astype does), exact up
/// to 2^24.
LogicalResult convertPow(NodeContext &ctx) {
  if (failed(commonType(ctx, {0}, kF | kI)) || failed(commonType(ctx, {1}, kF | kI)))
    return failure();
  bool floatBase = isFloatType(ctx.inputType(0)), floatExp = isFloatType(ctx.inputType(1));
  FailureOr<std::vector<int64_t>> shape = outputShape(ctx, {0, 1});
  if (failed(shape))
    return failure();
  if (foldable(ctx, {0, 1}, *shape))
    return foldElementwise(ctx, {0, 1}, *shape, ctx.inputType(0), floatBase,
                           [=](bool, llvm::ArrayRef<Elem> v) {
                             return powElem(floatBase, floatExp, v[0], v[1]);
                           });
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  int64_t rank = int64_t(shape->size());
  Value base = ctx.broadcastRank(*a, rank), exp = ctx.broadcastRank(*b, rank);
  Type baseElement = elementOf(base);
  auto toF32 = [&](Value v) {
    auto t = v.getType().cast<RankedTensorType>();
    return ctx.create<tosa::CastOp>(ctx.f32Type(t.getShape()), v);
  };
  if (!floatExp)
    exp = toF32(exp);
  if (!floatBase)
    base = toF32(base);
  Value r = binary<tosa::PowOp>(ctx, base, exp);
  if (floatBase)
    return ctx.setOutput(0, r);
  if (floatExp)
    r = select(ctx, compare<tosa::GreaterOp>(ctx, scalarLike(ctx, 0, r), r),
               unary<tosa::CeilOp>(ctx, r), unary<tosa::FloorOp>(ctx, r));
  auto type = RankedTensorType::get(r.getType().cast<RankedTensorType>().getShape(), baseElement);
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(type, r));
}

// --- Variadic ---------------------------------------------------------------

/// Folds the elements of 1..N inputs left to right with `step`.
FoldFn reduceFold(std::function<Elem(bool, Elem, Elem)> step) {
  return [step](bool isFloat, llvm::ArrayRef<Elem> v) {
    Elem acc = v[0];
    for (size_t k = 1; k < v.size(); ++k)
      acc = step(isFloat, acc, v[k]);
    return acc;
  };
}

/// Chains a binary TOSA op over the rank-aligned operands.
template <typename OpTy> Value chain(NodeContext &ctx, Operands &o) {
  Value acc = o.values[0];
  for (size_t k = 1; k < o.values.size(); ++k)
    acc = binary<OpTy>(ctx, acc, o.values[k]);
  return acc;
}

/// Max (6, 8, 12, 13): elementwise maximum of 1..N inputs, numpy broadcast
/// (opset 8+; opset 6's equal shapes are a special case); float32, and
/// int32 / int64 from opset 12; NaN propagates. -> chained tosa.maximum.
LogicalResult convertMax(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = reduceFold([](bool isFloat, Elem a, Elem b) {
    if (!isFloat)
      return intElem(std::max(a.i, b.i));
    return floatElem(std::isnan(a.f) || std::isnan(b.f) ? NAN : std::max(a.f, b.f));
  });
  op.emit = chain<tosa::MaximumOp>;
  return convertElementwise(ctx, op);
}

/// Min (6, 8, 12, 13): elementwise minimum, as Max. -> tosa.minimum.
LogicalResult convertMin(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI;
  op.fold = reduceFold([](bool isFloat, Elem a, Elem b) {
    if (!isFloat)
      return intElem(std::min(a.i, b.i));
    return floatElem(std::isnan(a.f) || std::isnan(b.f) ? NAN : std::min(a.f, b.f));
  });
  op.emit = chain<tosa::MinimumOp>;
  return convertElementwise(ctx, op);
}

/// Sum (6, 8, 13): elementwise sum of 1..N float inputs, numpy broadcast
/// (opset 8+). -> chained tosa.add.
LogicalResult convertSum(NodeContext &ctx) {
  Elementwise op;
  op.fold = reduceFold([](bool, Elem a, Elem b) { return floatElem(a.f + b.f); });
  op.emit = chain<tosa::AddOp>;
  return convertElementwise(ctx, op);
}

/// Mean (6, 8, 13): the Sum of 1..N float inputs divided by N. -> chained
/// tosa.add, then tosa.mul by 1/N.
LogicalResult convertMean(NodeContext &ctx) {
  Elementwise op;
  op.fold = [](bool, llvm::ArrayRef<Elem> v) {
    float sum = 0;
    for (const Elem &e : v)
      sum += e.f;
    return floatElem(sum / float(v.size()));
  };
  op.emit = [](NodeContext &c, Operands &o) {
    Value sum = chain<tosa::AddOp>(c, o);
    if (o.values.size() == 1)
      return sum;
    return mul(c, sum, scalarLike(c, 1.0 / double(o.values.size()), sum));
  };
  return convertElementwise(ctx, op);
}

// --- Comparisons, Where, logic -------------------------------------------------

/// A comparison `Cmp` (std::greater, ...) emitted as `OpTy` (tosa.equal,
/// tosa.greater, tosa.greater_equal), operands swapped for Less /
/// LessOrEqual. Bool result, numpy broadcast.
template <typename Cmp, typename OpTy, bool Swap>
LogicalResult convertCompare(NodeContext &ctx, unsigned types) {
  Elementwise op;
  op.types = types;
  op.boolResult = true;
  op.fold = [](bool isFloat, llvm::ArrayRef<Elem> v) {
    return intElem(isFloat ? Cmp()(v[0].f, v[1].f) : Cmp()(v[0].i, v[1].i));
  };
  op.emit = [](NodeContext &c, Operands &o) {
    Value a = o.values[0], b = o.values[1];
    return Swap ? compare<OpTy>(c, b, a) : compare<OpTy>(c, a, b);
  };
  return convertElementwise(ctx, op);
}

/// Equal (7, 11, 13): a == b; bool, int32, int64, and float from opset 11.
LogicalResult convertEqual(NodeContext &ctx) {
  return convertCompare<std::equal_to<>, tosa::EqualOp, false>(ctx, kF | kI | kB);
}
/// Greater (7, 9, 13): a > b; float, and int32 / int64 from opset 9.
LogicalResult convertGreater(NodeContext &ctx) {
  return convertCompare<std::greater<>, tosa::GreaterOp, false>(ctx, kF | kI);
}
/// Less (7, 9, 13): a < b, as tosa.greater(b, a).
LogicalResult convertLess(NodeContext &ctx) {
  return convertCompare<std::less<>, tosa::GreaterOp, true>(ctx, kF | kI);
}
/// GreaterOrEqual (12, 16): a >= b -> tosa.greater_equal.
LogicalResult convertGreaterOrEqual(NodeContext &ctx) {
  return convertCompare<std::greater_equal<>, tosa::GreaterEqualOp, false>(ctx, kF | kI);
}
/// LessOrEqual (12, 16): a <= b, as tosa.greater_equal(b, a).
LogicalResult convertLessOrEqual(NodeContext &ctx) {
  return convertCompare<std::less_equal<>, tosa::GreaterEqualOp, true>(ctx, kF | kI);
}

/// Where (9, 16): condition ? X : Y, the three broadcast numpy-style (shape:
/// their broadcast); condition bool, X and Y one type (float32, int32,
/// int64, bool). -> tosa.select.
LogicalResult convertWhere(NodeContext &ctx) {
  Elementwise op;
  op.types = kF | kI | kB;
  op.condition = true;
  op.fold = [](bool, llvm::ArrayRef<Elem> v) { return v[0].i ? v[1] : v[2]; };
  op.emit = [](NodeContext &c, Operands &o) {
    return select(c, o.values[0], o.values[1], o.values[2]);
  };
  return convertElementwise(ctx, op);
}

/// Not (1): logical negation of a bool tensor -> tosa.logical_not.
LogicalResult convertNot(NodeContext &ctx) {
  Elementwise op;
  op.types = kB;
  op.fold = [](bool, llvm::ArrayRef<Elem> v) { return intElem(!v[0].i); };
  op.emit = [](NodeContext &c, Operands &o) { return unary<tosa::LogicalNotOp>(c, o.values[0]); };
  return convertElementwise(ctx, op);
}

/// And / Or / Xor (7): bool a op b, numpy broadcast -> tosa.logical_and /
/// logical_or / logical_xor.
template <typename OpTy> LogicalResult convertLogic(NodeContext &ctx, bool (*f)(bool, bool)) {
  Elementwise op;
  op.types = kB;
  op.fold = [f](bool, llvm::ArrayRef<Elem> v) { return intElem(f(v[0].i != 0, v[1].i != 0)); };
  op.emit = [](NodeContext &c, Operands &o) {
    return binary<OpTy>(c, o.values[0], o.values[1]);
  };
  return convertElementwise(ctx, op);
}
LogicalResult convertAnd(NodeContext &ctx) {
  return convertLogic<tosa::LogicalAndOp>(ctx, [](bool a, bool b) { return a && b; });
}
LogicalResult convertOr(NodeContext &ctx) {
  return convertLogic<tosa::LogicalOrOp>(ctx, [](bool a, bool b) { return a || b; });
}
LogicalResult convertXor(NodeContext &ctx) {
  return convertLogic<tosa::LogicalXorOp>(ctx, [](bool a, bool b) { return a != b; });
}

/// BitwiseAnd / BitwiseOr / BitwiseXor (18): integer a op b, numpy
/// broadcast -> tosa.bitwise_and / bitwise_or / bitwise_xor (int32, int64).
template <typename OpTy>
LogicalResult convertBitwise(NodeContext &ctx, int64_t (*f)(int64_t, int64_t)) {
  Elementwise op;
  op.types = kI;
  op.fold = [f](bool, llvm::ArrayRef<Elem> v) { return intElem(f(v[0].i, v[1].i)); };
  op.emit = [](NodeContext &c, Operands &o) { return binary<OpTy>(c, o.values[0], o.values[1]); };
  return convertElementwise(ctx, op);
}

/// BitwiseNot (18): ~x of an integer tensor -> tosa.bitwise_not.
LogicalResult convertBitwiseNot(NodeContext &ctx) {
  Elementwise op;
  op.types = kI;
  op.fold = [](bool, llvm::ArrayRef<Elem> v) { return intElem(~v[0].i); };
  op.emit = [](NodeContext &c, Operands &o) { return unary<tosa::BitwiseNotOp>(c, o.values[0]); };
  return convertElementwise(ctx, op);
}

} // namespace

void registerElementwiseOps(ConverterTable &table) {
  // Opset 18-20 additions.
  table["Mish"] = convertMish;
  table["Gelu"] = convertGelu;
  table["BitwiseAnd"] = [](NodeContext &c) {
    return convertBitwise<tosa::BitwiseAndOp>(c, [](int64_t a, int64_t b) { return a & b; });
  };
  table["BitwiseOr"] = [](NodeContext &c) {
    return convertBitwise<tosa::BitwiseOrOp>(c, [](int64_t a, int64_t b) { return a | b; });
  };
  table["BitwiseXor"] = [](NodeContext &c) {
    return convertBitwise<tosa::BitwiseXorOp>(c, [](int64_t a, int64_t b) { return a ^ b; });
  };
  table["BitwiseNot"] = convertBitwiseNot;
  // Activations.
  table["Relu"] = convertRelu;
  table["LeakyRelu"] = convertLeakyRelu;
  table["PRelu"] = convertPRelu;
  table["Elu"] = convertElu;
  table["Selu"] = convertSelu;
  table["Celu"] = convertCelu;
  table["ThresholdedRelu"] = convertThresholdedRelu;
  table["Clip"] = convertClip;
  table["Sigmoid"] = convertSigmoid;
  table["HardSigmoid"] = convertHardSigmoid;
  table["HardSwish"] = convertHardSwish;
  table["Softplus"] = convertSoftplus;
  table["Softsign"] = convertSoftsign;
  // Unary math.
  table["Tanh"] = convertTanh;
  table["Exp"] = convertExp;
  table["Log"] = convertLog;
  table["Sqrt"] = convertSqrt;
  table["Reciprocal"] = convertReciprocal;
  table["Neg"] = convertNeg;
  table["Abs"] = convertAbs;
  table["Sign"] = convertSign;
  table["Floor"] = convertFloor;
  table["Ceil"] = convertCeil;
  table["Round"] = convertRound;
  table["Erf"] = convertErf;
  table["Sin"] = convertSin;
  table["Cos"] = convertCos;
  table["Tan"] = convertTan;
  table["Sinh"] = convertSinh;
  table["Cosh"] = convertCosh;
  table["Asin"] = convertAsin;
  table["Acos"] = convertAcos;
  table["Atan"] = convertAtan;
  table["Asinh"] = convertAsinh;
  table["Acosh"] = convertAcosh;
  table["Atanh"] = convertAtanh;
  table["IsNaN"] = convertIsNaN;
  table["IsInf"] = convertIsInf;
  // Arithmetic.
  table["Add"] = convertAdd;
  table["Sub"] = convertSub;
  table["Mul"] = convertMul;
  table["Div"] = convertDiv;
  table["Pow"] = convertPow;
  table["Max"] = convertMax;
  table["Min"] = convertMin;
  table["Sum"] = convertSum;
  table["Mean"] = convertMean;
  // Comparisons, selection, logic.
  table["Equal"] = convertEqual;
  table["Greater"] = convertGreater;
  table["Less"] = convertLess;
  table["GreaterOrEqual"] = convertGreaterOrEqual;
  table["LessOrEqual"] = convertLessOrEqual;
  table["Where"] = convertWhere;
  table["Not"] = convertNot;
  table["And"] = convertAnd;
  table["Or"] = convertOr;
  table["Xor"] = convertXor;
}

} // namespace kiln::onnx
