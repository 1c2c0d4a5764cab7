//===- SinkTransposes.cpp - Move layout transposes until they cancel ------===//
//
// See Passes.h for what holds before and after.
//
// Permutations follow tosa.transpose: transpose(x, P) has dimension i =
// x's dimension P[i], so shape'[i] = shape[P[i]].
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace kiln {
namespace {

using Perm = SmallVector<int64_t, 6>;

/// Constants up to this many elements are copied when transposed even if
/// something else still reads the original (a per-channel vector, a scalar).
constexpr int64_t kSmallConstantElements = 4096;

std::optional<Perm> permOf(tosa::TransposeOp op) {
  SmallVector<int64_t> perm;
  if (failed(op.getConstantPerms(perm)))
    return std::nullopt;
  return Perm(perm.begin(), perm.end());
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != int64_t(k))
      return false;
  return true;
}

/// The permutation Q with transpose(transpose(x, P), Q) = x.
Perm inverseOf(ArrayRef<int64_t> perm) {
  Perm inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k)
    inverse[perm[k]] = int64_t(k);
  return inverse;
}

/// The shape of transpose(x, perm) for x of `shape`.
SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

RankedTensorType permuteType(Type type, ArrayRef<int64_t> perm) {
  auto ranked = type.cast<RankedTensorType>();
  return RankedTensorType::get(permuteShape(ranked.getShape(), perm), ranked.getElementType());
}

/// The value of a tosa.const with dense elements, else null.
DenseElementsAttr constantOf(Value v) {
  auto c = v.getDefiningOp<tosa::ConstOp>();
  if (!c)
    return {};
  return c.getValue().dyn_cast<DenseElementsAttr>();
}

/// Whether transposeElements can permute `attr`: a splat, or elements of
/// whole bytes (i1 tensors are bit-packed).
bool canTranspose(DenseElementsAttr attr) {
  if (attr.isSplat())
    return true;
  Type element = attr.getElementType();
  return element.isIntOrFloat() && element.getIntOrFloatBitWidth() % 8 == 0;
}

/// `attr` transposed by `perm`, computed at compile time (canTranspose).
DenseElementsAttr transposeElements(DenseElementsAttr attr, ArrayRef<int64_t> perm) {
  auto type = attr.getType().cast<RankedTensorType>();
  RankedTensorType resultType = permuteType(type, perm);
  if (attr.isSplat())
    return attr.reshape(resultType);
  const int64_t rank = type.getRank();
  const size_t bytes = type.getElementTypeBitWidth() / 8;
  // Input strides (elements) in result dimension order.
  SmallVector<int64_t> stride(rank, 1), inStride(rank);
  for (int64_t k = rank - 2; k >= 0; --k)
    stride[k] = stride[k + 1] * type.getDimSize(k + 1);
  for (int64_t k = 0; k < rank; ++k)
    inStride[k] = stride[perm[k]];
  ArrayRef<char> in = attr.getRawData();
  std::vector<char> out(in.size());
  SmallVector<int64_t> index(rank, 0);
  const int64_t count = type.getNumElements();
  int64_t from = 0;
  for (int64_t n = 0; n < count; ++n) {
    std::memcpy(out.data() + n * bytes, in.data() + from * bytes, bytes);
    // Next result index (row-major), tracking the input offset.
    for (int64_t k = rank - 1; k >= 0; --k) {
      from += inStride[k];
      if (++index[k] < resultType.getDimSize(k))
        break;
      from -= inStride[k] * index[k];
      index[k] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, out);
}

Value createConstant(PatternRewriter &rewriter, Location loc, DenseElementsAttr value) {
  return rewriter.create<tosa::ConstOp>(loc, value.getType(), value);
}

Value createTranspose(PatternRewriter &rewriter, Location loc, Value x, ArrayRef<int64_t> perm) {
  SmallVector<int32_t> perm32(perm.begin(), perm.end());
  auto permType = RankedTensorType::get({int64_t(perm.size())}, rewriter.getI32Type());
  Value perms = createConstant(rewriter, loc,
                               DenseElementsAttr::get(permType, ArrayRef<int32_t>(perm32)));
  return rewriter.create<tosa::TransposeOp>(loc, permuteType(x.getType(), perm), x, perms);
}

/// TOSA's elementwise operators (one result, every operand of the result's
/// rank, broadcast along size-1 dimensions): results commute with
/// transposes of all their operands.
bool isElementwise(Operation *op) {
  return isa<tosa::AbsOp, tosa::BitwiseNotOp, tosa::CeilOp, tosa::ClzOp, tosa::ExpOp,
             tosa::FloorOp, tosa::LogOp, tosa::LogicalNotOp, tosa::NegateOp,
             tosa::ReciprocalOp, tosa::RsqrtOp, tosa::SigmoidOp, tosa::TanhOp, tosa::ClampOp,
             tosa::CastOp, tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::DivOp, tosa::PowOp,
             tosa::MaximumOp, tosa::MinimumOp, tosa::ArithmeticRightShiftOp,
             tosa::BitwiseAndOp, tosa::BitwiseOrOp, tosa::BitwiseXorOp, tosa::LogicalAndOp,
             tosa::LogicalOrOp, tosa::LogicalXorOp, tosa::LogicalLeftShiftOp,
             tosa::LogicalRightShiftOp, tosa::EqualOp, tosa::GreaterOp,
             tosa::GreaterEqualOp, tosa::SelectOp>(op);
}

bool isReduction(Operation *op) {
  return isa<tosa::ReduceAllOp, tosa::ReduceAnyOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
             tosa::ReduceProdOp, tosa::ReduceSumOp>(op);
}

/// Operands of an elementwise op or concat read through one permutation:
/// op(operands) = transpose(op(untransposed operands), perm). Entry k is
/// either inputs[k] (the transpose's input) or constants[k] (a constant
/// still to be transposed by the inverse permutation).
struct Untransposed {
  Perm perm;
  SmallVector<Value> inputs;
  SmallVector<DenseElementsAttr> constants;
  SmallVector<tosa::TransposeOp> transposes;
};

/// Whether `c` may be copied transposed: small, or read only by `user`.
bool mayCopy(Value c, DenseElementsAttr attr, Operation *user) {
  if (!canTranspose(attr))
    return false;
  if (attr.isSplat() || attr.getNumElements() <= kSmallConstantElements)
    return true;
  return llvm::all_of(c.getUsers(), [&](Operation *u) { return u == user; });
}

/// The operands of `op` as Untransposed: every non-constant operand is a
/// tosa.transpose by one permutation (at least one is), every constant has
/// the same rank. Else nullopt.
std::optional<Untransposed> untransposeOperands(Operation *op) {
  Untransposed u;
  for (Value operand : op->getOperands()) {
    auto transpose = operand.getDefiningOp<tosa::TransposeOp>();
    std::optional<Perm> perm = transpose ? permOf(transpose) : std::nullopt;
    if (perm && (u.perm.empty() || u.perm == *perm)) {
      u.perm = *perm;
      u.inputs.push_back(transpose.getInput1());
      u.constants.push_back({});
      u.transposes.push_back(transpose);
      continue;
    }
    DenseElementsAttr c = constantOf(operand);
    if (!c || transpose || !mayCopy(operand, c, op))
      return std::nullopt;
    u.inputs.push_back({});
    u.constants.push_back(c);
  }
  if (u.transposes.empty())
    return std::nullopt;
  for (DenseElementsAttr c : u.constants)
    if (c && c.getType().cast<RankedTensorType>().getRank() != int64_t(u.perm.size()))
      return std::nullopt;
  return u;
}

/// The untransposed operands, constants created before the rewritten op.
SmallVector<Value> materialize(PatternRewriter &rewriter, Location loc, const Untransposed &u) {
  Perm inverse = inverseOf(u.perm);
  SmallVector<Value> values;
  for (size_t k = 0; k < u.inputs.size(); ++k)
    values.push_back(u.inputs[k] ? u.inputs[k]
                                 : createConstant(rewriter, loc,
                                                  transposeElements(u.constants[k], inverse)));
  return values;
}

/// Whether `v`, an operand of an elementwise op or concat beside a
/// transpose by `perm`, lets that op move the transpose: a constant, a
/// transpose by `perm`, or the result of an op that may itself move one
/// later (a leaky ReLU's greater and mul both read the convolution's
/// transpose, and its select reads them).
bool operandMayMove(Value v, ArrayRef<int64_t> perm, Operation *user) {
  if (DenseElementsAttr c = constantOf(v))
    return mayCopy(v, c, user) &&
           c.getType().cast<RankedTensorType>().getRank() == int64_t(perm.size());
  Operation *producer = v.getDefiningOp();
  if (auto transpose = dyn_cast_or_null<tosa::TransposeOp>(producer)) {
    std::optional<Perm> other = permOf(transpose);
    return other && ArrayRef<int64_t>(*other) == perm;
  }
  return producer && (isElementwise(producer) || isReduction(producer) ||
                      isa<tosa::ConcatOp, tosa::PadOp>(producer));
}

/// Whether `user` reads `transposed` (a tosa.transpose by `perm`) in a way
/// one of the sinking patterns rewrites now or once its other operands
/// have moved, so that sinking duplicates nothing.
bool sinksThrough(Operation *user, Value transposed, ArrayRef<int64_t> perm) {
  if (isa<tosa::TransposeOp>(user))
    return true;
  if (isElementwise(user) || isa<tosa::ConcatOp>(user))
    return llvm::all_of(user->getOperands(),
                        [&](Value v) { return v == transposed || operandMayMove(v, perm, user); });
  if (isa<tosa::PadOp>(user) || isReduction(user))
    return user->getOperand(0) == transposed &&
           (!isa<tosa::PadOp>(user) || constantOf(user->getOperand(1)));
  return false;
}

bool allUsersSink(tosa::TransposeOp transpose) {
  Value v = transpose.getResult();
  std::optional<Perm> perm = permOf(transpose);
  return perm && llvm::all_of(v.getUsers(),
                              [&](Operation *user) { return sinksThrough(user, v, *perm); });
}

/// transpose(transpose(x, P), Q) -> transpose(x, R), R[i] = P[Q[i]];
/// x when R is the identity.
struct ComposeTransposes : public OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op, PatternRewriter &rewriter) const override {
    std::optional<Perm> outer = permOf(op);
    if (!outer)
      return rewriter.notifyMatchFailure(op, "permutation is not constant");
    if (isIdentity(*outer) && op.getInput1().getType() == op.getType()) {
      rewriter.replaceOp(op, op.getInput1());
      return success();
    }
    auto producer = op.getInput1().getDefiningOp<tosa::TransposeOp>();
    std::optional<Perm> inner = producer ? permOf(producer) : std::nullopt;
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a constant transpose");
    Perm composed;
    for (int64_t q : *outer)
      composed.push_back((*inner)[q]);
    Value x = producer.getInput1();
    rewriter.replaceOp(op, isIdentity(composed) ? x
                                                : createTranspose(rewriter, op.getLoc(), x, composed));
    return success();
  }
};

/// transpose(tosa.const) -> tosa.const holding the transposed elements
/// (weights reordered at compile time), when the constant is small or read
/// only here.
struct FoldTransposeOfConstant : public OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op, PatternRewriter &rewriter) const override {
    DenseElementsAttr value = constantOf(op.getInput1());
    std::optional<Perm> perm = permOf(op);
    if (!value || !perm || !mayCopy(op.getInput1(), value, op))
      return rewriter.notifyMatchFailure(op, "not a transpose of a copyable constant");
    rewriter.replaceOpWithNewOp<tosa::ConstOp>(op, op.getType(), transposeElements(value, *perm));
    return success();
  }
};

/// reciprocal, rsqrt or negate of an f32 tosa.const -> tosa.const (the
/// importer's Div by a constant is a multiply by its reciprocal), so the
/// multiply sees a constant it can transpose.
struct FoldUnaryOfConstant : public RewritePattern {
  FoldUnaryOfConstant(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<tosa::ReciprocalOp, tosa::RsqrtOp, tosa::NegateOp>(op) || op->getNumOperands() != 1)
      return failure();
    DenseElementsAttr value = constantOf(op->getOperand(0));
    auto type = op->getResult(0).getType().dyn_cast<RankedTensorType>();
    if (!value || !value.getElementType().isF32() || !type || type != value.getType() ||
        (!value.isSplat() && value.getNumElements() > kSmallConstantElements))
      return rewriter.notifyMatchFailure(op, "not a small f32 constant operand");
    SmallVector<float> values(value.getValues<float>());
    for (float &x : values)
      x = isa<tosa::ReciprocalOp>(op) ? 1.0f / x
          : isa<tosa::RsqrtOp>(op)    ? 1.0f / std::sqrt(x)
                                      : -x;
    rewriter.replaceOpWithNewOp<tosa::ConstOp>(
        op, type,
        value.isSplat() ? DenseElementsAttr::get(type, values.front())
                        : DenseElementsAttr::get(type, ArrayRef<float>(values)));
    return success();
  }
};

/// op(transpose(a, P), transpose(b, P), const c) ->
///   transpose(op(a, b, transpose(c, P^-1)), P)
/// for elementwise ops and tosa.concat (whose axis becomes P[axis]).
struct SinkThroughOperands : public RewritePattern {
  SinkThroughOperands(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    bool concat = isa<tosa::ConcatOp>(op);
    if ((!isElementwise(op) && !concat) || op->getNumResults() != 1)
      return failure();
    auto type = op->getResult(0).getType().dyn_cast<RankedTensorType>();
    std::optional<Untransposed> u = untransposeOperands(op);
    if (!type || !u || type.getRank() != int64_t(u->perm.size()))
      return rewriter.notifyMatchFailure(op, "operands are not transposes by one permutation");
    for (tosa::TransposeOp t : u->transposes)
      if (!allUsersSink(t))
        return rewriter.notifyMatchFailure(op, "a transpose has users that keep it");
    Perm inverse = inverseOf(u->perm);
    NamedAttrList attrs(op->getAttrs());
    if (concat) {
      int64_t axis = cast<tosa::ConcatOp>(op).getAxis();
      attrs.set("axis", rewriter.getI64IntegerAttr(u->perm[axis]));
    }
    OperationState state(op->getLoc(), op->getName(), materialize(rewriter, op->getLoc(), *u),
                         {permuteType(type, inverse)}, attrs);
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, createTranspose(rewriter, u->transposes.front().getLoc(),
                                           moved->getResult(0), u->perm));
    return success();
  }
};

/// pad(transpose(x, P), paddings) -> transpose(pad(x, paddings'), P) with
/// paddings'[P[i]] = paddings[i]; reduce(transpose(x, P), axis) ->
/// transpose(reduce(x, P[axis]), P).
struct SinkThroughPadOrReduce : public RewritePattern {
  SinkThroughPadOrReduce(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    auto pad = dyn_cast<tosa::PadOp>(op);
    if ((!pad && !isReduction(op)) || op->getNumOperands() < 1)
      return failure();
    auto transpose = op->getOperand(0).getDefiningOp<tosa::TransposeOp>();
    std::optional<Perm> perm = transpose ? permOf(transpose) : std::nullopt;
    if (!perm || !allUsersSink(transpose))
      return rewriter.notifyMatchFailure(op, "input is not a transpose that can move");
    SmallVector<Value> operands(op->getOperands());
    operands[0] = transpose.getInput1();
    NamedAttrList attrs(op->getAttrs());
    if (pad) {
      DenseElementsAttr paddings = constantOf(pad.getPadding());
      if (!paddings || paddings.getNumElements() != 2 * int64_t(perm->size()))
        return rewriter.notifyMatchFailure(op, "paddings are not a constant [rank, 2]");
      // Rows of the [rank, 2] paddings move with their dimension.
      SmallVector<APInt> rows(paddings.getValues<APInt>());
      SmallVector<APInt> moved(rows.size());
      for (size_t k = 0; k < perm->size(); ++k) {
        moved[2 * (*perm)[k]] = rows[2 * k];
        moved[2 * (*perm)[k] + 1] = rows[2 * k + 1];
      }
      operands[1] = createConstant(rewriter, op->getLoc(),
                                   DenseElementsAttr::get(paddings.getType(), moved));
    } else {
      int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
      attrs.set("axis", rewriter.getI64IntegerAttr((*perm)[axis]));
    }
    Type type = permuteType(op->getResult(0).getType(), inverseOf(*perm));
    OperationState state(op->getLoc(), op->getName(), operands, {type}, attrs);
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, createTranspose(rewriter, transpose.getLoc(), moved->getResult(0), *perm));
    return success();
  }
};

/// The values of an f32 constant `v` that is per output channel of a
/// `shape` result (rank equal, every dimension 1 but the last, which is
/// `shape`'s last or 1), one per channel.
std::optional<SmallVector<float>> perChannelValues(Value v, ArrayRef<int64_t> shape) {
  DenseElementsAttr attr = constantOf(v);
  if (!attr || !attr.getElementType().isF32())
    return std::nullopt;
  ArrayRef<int64_t> cshape = attr.getType().cast<RankedTensorType>().getShape();
  if (cshape.size() != shape.size() || shape.empty())
    return std::nullopt;
  for (size_t k = 0; k + 1 < cshape.size(); ++k)
    if (cshape[k] != 1)
      return std::nullopt;
  int64_t channels = shape.back();
  if (cshape.back() != channels && cshape.back() != 1)
    return std::nullopt;
  SmallVector<float> values(attr.getValues<float>());
  values.resize(channels, values.front());
  return values;
}

/// A float convolution whose weights and bias are constants, with the
/// output channel of each weight element (OHWI for conv2d, [KH, KW, C, M]
/// for depthwise: channel c * M + m).
struct ConstantConv {
  Operation *op = nullptr;
  SmallVector<float> weights;
  SmallVector<float> bias;
  RankedTensorType weightType;
  int64_t channels = 0;
  int64_t channelOf(int64_t index) const {
    return isa<tosa::Conv2DOp>(op) ? index / (int64_t(weights.size()) / channels)
                                   : index % channels;
  }
};

std::optional<ConstantConv> constantConvOf(Value v) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<tosa::Conv2DOp, tosa::DepthwiseConv2DOp>(op) || !op->hasOneUse() ||
      op->hasAttr("quantization_info"))
    return std::nullopt;
  DenseElementsAttr weights = constantOf(op->getOperand(1)), bias = constantOf(op->getOperand(2));
  auto type = v.getType().cast<RankedTensorType>();
  if (!weights || !bias || !type.getElementType().isF32() || !weights.getElementType().isF32() ||
      !bias.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  ConstantConv conv;
  conv.op = op;
  conv.channels = type.getShape().back();
  conv.weights.assign(weights.getValues<float>().begin(), weights.getValues<float>().end());
  conv.bias.assign(bias.getValues<float>().begin(), bias.getValues<float>().end());
  conv.weightType = weights.getType().cast<RankedTensorType>();
  if (conv.bias.size() == 1)
    conv.bias.resize(conv.channels, conv.bias.front());
  if (int64_t(conv.bias.size()) != conv.channels || conv.weights.size() % conv.channels != 0)
    return std::nullopt;
  return conv;
}

/// mul(conv, s), add(conv, t), sub(conv, t) with per-channel constants s, t
/// (a BatchNormalization after a convolution) -> the convolution with
/// weights * s and bias * s, or bias + t, bias - t.
struct FoldChannelAffineIntoConv : public RewritePattern {
  FoldChannelAffineIntoConv(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<tosa::MulOp, tosa::AddOp, tosa::SubOp>(op))
      return failure();
    if (auto mul = dyn_cast<tosa::MulOp>(op); mul && mul.getShift() != 0)
      return failure();
    for (int side = 0; side < 2; ++side) {
      if (side == 1 && isa<tosa::SubOp>(op))
        break; // t - conv is not an affine map of the bias alone
      Value convValue = op->getOperand(side), other = op->getOperand(1 - side);
      std::optional<ConstantConv> conv = constantConvOf(convValue);
      if (!conv || convValue.getType() != op->getResult(0).getType())
        continue;
      auto shape = convValue.getType().cast<RankedTensorType>().getShape();
      std::optional<SmallVector<float>> values = perChannelValues(other, shape);
      if (!values)
        continue;
      rewrite(op, *conv, *values, rewriter);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a convolution and a per-channel constant");
  }

  static void rewrite(Operation *op, ConstantConv &conv, ArrayRef<float> values,
                      PatternRewriter &rewriter) {
    bool mul = isa<tosa::MulOp>(op);
    for (int64_t o = 0; o < conv.channels; ++o)
      conv.bias[o] = mul ? conv.bias[o] * values[o]
                   : isa<tosa::AddOp>(op) ? conv.bias[o] + values[o]
                                          : conv.bias[o] - values[o];
    if (mul)
      for (size_t k = 0; k < conv.weights.size(); ++k)
        conv.weights[k] *= values[conv.channelOf(int64_t(k))];
    rewriter.setInsertionPoint(conv.op);
    Location loc = conv.op->getLoc();
    auto biasType = RankedTensorType::get({conv.channels}, rewriter.getF32Type());
    Value bias = createConstant(rewriter, loc, DenseElementsAttr::get(biasType, ArrayRef<float>(conv.bias)));
    Value weights = mul ? createConstant(rewriter, loc,
                                         DenseElementsAttr::get(conv.weightType,
                                                                ArrayRef<float>(conv.weights)))
                        : conv.op->getOperand(1);
    rewriter.updateRootInPlace(conv.op, [&] {
      conv.op->setOperand(1, weights);
      conv.op->setOperand(2, bias);
      conv.op->setLoc(rewriter.getFusedLoc({loc, op->getLoc()}));
    });
    rewriter.replaceOp(op, conv.op->getResults());
  }
};

/// Whether `fn` holds a transpose or an op of a convolution's result (its
/// only use) and a constant that FoldChannelAffineIntoConv may fold.
bool hasCandidates(func::FuncOp fn) {
  auto candidate = [](Operation *op) {
    if (isa<tosa::TransposeOp>(op))
      return true;
    auto conv = [](Value v) {
      return isa_and_nonnull<tosa::Conv2DOp, tosa::DepthwiseConv2DOp>(v.getDefiningOp()) &&
             v.hasOneUse();
    };
    return isa<tosa::MulOp, tosa::AddOp, tosa::SubOp>(op) &&
           llvm::any_of(op->getOperands(), conv) &&
           llvm::any_of(op->getOperands(), [](Value v) { return bool(constantOf(v)); });
  };
  return fn.walk([&](Operation *op) {
             return candidate(op) ? WalkResult::interrupt() : WalkResult::advance();
           }).wasInterrupted();
}

struct SinkTransposesPass
    : public PassWrapper<SinkTransposesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SinkTransposesPass)

  StringRef getArgument() const final { return "kiln-sink-transposes"; }
  StringRef getDescription() const final {
    return "Move TOSA layout transposes through elementwise ops, concats, pads and "
           "reductions until they cancel; fold per-channel affine ops into convolutions";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tosa::TosaDialect>();
  }

  void runOnOperation() override {
    // The greedy driver also folds, hoists and merges constants: a function
    // with nothing to rewrite (most TFLite models) is left exactly as is.
    if (!hasCandidates(getOperation()))
      return;
    RewritePatternSet patterns(&getContext());
    populateSinkTransposesPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateSinkTransposesPatterns(RewritePatternSet &patterns) {
  patterns.add<ComposeTransposes, FoldTransposeOfConstant, FoldUnaryOfConstant, SinkThroughOperands,
               SinkThroughPadOrReduce, FoldChannelAffineIntoConv>(patterns.getContext());
}

std::unique_ptr<Pass> createSinkTransposesPass() {
  return std::make_unique<SinkTransposesPass>();
}

} // namespace kiln
