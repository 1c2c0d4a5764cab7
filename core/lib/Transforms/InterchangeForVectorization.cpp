//===- InterchangeForVectorization.cpp - Innermost loop = contiguous ------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// The loop that walks `operand`'s innermost non-unit dimension (its
/// contiguous one); nullopt for a scalar or all-unit operand; failure when
/// that dimension is not indexed by a plain loop (a strided window).
FailureOr<std::optional<unsigned>> contiguousLoop(linalg::LinalgOp op, OpOperand &operand) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto type = operand.get().getType().dyn_cast<ShapedType>();
  if (!type)
    return std::optional<unsigned>();
  for (int64_t d = static_cast<int64_t>(map.getNumResults()) - 1; d >= 0; --d) {
    if (type.getDimSize(d) == 1)
      continue;
    if (auto dim = map.getResult(d).dyn_cast<AffineDimExpr>())
      return std::optional<unsigned>(dim.getPosition());
    return failure();
  }
  return std::optional<unsigned>();
}

/// The arith.maxf/minf that combines a reduction's accumulator (the output
/// block argument) with a new value, if that is the op's whole combiner.
Operation *minMaxCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1 || op->getRegion(0).empty())
    return nullptr;
  Block &body = op->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield->getNumOperands() != 1)
    return nullptr;
  Operation *combiner = yield->getOperand(0).getDefiningOp();
  if (!combiner || !isa<arith::MaxFOp, arith::MinFOp>(combiner))
    return nullptr;
  Value accumulator = body.getArguments().back();
  if ((combiner->getOperand(0) == accumulator) == (combiner->getOperand(1) == accumulator))
    return nullptr;
  return combiner;
}

/// True if the output of `op` holds a non-NaN constant when `op` starts:
/// a linalg.fill made it (tensors) or wrote it just before (buffers), as
/// the TOSA lowering of every reduction does.
bool startsFromNonNaNFill(linalg::LinalgOp op) {
  Value init = op.getDpsInitOperand(0)->get();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill && init.getType().isa<MemRefType>())
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (auto f = dyn_cast<linalg::FillOp>(prev)) {
        if (f.getDpsInitOperand(0)->get() == init)
          fill = f;
        break;
      }
      if (!isMemoryEffectFree(prev))
        break;
    }
  FloatAttr value;
  return fill && matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant(&value)) &&
         !value.getValue().isNaN();
}

/// True once makeMinMaxVectorizable rewrote `combiner`.
bool isNoNaN(Operation *combiner) {
  auto flags = combiner->getAttrOfType<arith::FastMathFlagsAttr>("fastmath");
  return flags && bitEnumContainsAll(flags.getValue(), arith::FastMathFlags::nnan);
}

/// The reduction loop that walks the inputs' contiguous dimension, when it
/// should be the innermost loop (see vectorFriendlyOrder).
std::optional<unsigned> contiguousReduction(linalg::LinalgOp op,
                                            std::optional<unsigned> outputLoop,
                                            int64_t minContiguousReduction) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  std::optional<unsigned> reduced;
  for (OpOperand *input : op.getDpsInputOperands()) {
    // Inputs the reductions do not walk (softmax's row maximum, subtracted
    // in the sum's body) are read once per output element in any order.
    AffineMap map = op.getMatchingIndexingMap(input);
    bool walked = false;
    for (unsigned i = 0; i < iterators.size(); ++i)
      walked |= iterators[i] == utils::IteratorType::reduction && map.isFunctionOfDim(i);
    if (!walked)
      continue;
    FailureOr<std::optional<unsigned>> contiguous = contiguousLoop(op, *input);
    if (failed(contiguous))
      return std::nullopt;
    std::optional<unsigned> loop = *contiguous;
    if (!loop)
      continue;
    if (loop == outputLoop || iterators[*loop] != utils::IteratorType::reduction ||
        (reduced && *reduced != *loop))
      return std::nullopt;
    reduced = loop;
  }
  if (!reduced)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[*reduced]) || ranges[*reduced] < minContiguousReduction)
    return std::nullopt;
  // LLVM 16 vectorizes a max/min recurrence only without NaNs; one it
  // cannot be told is NaN-free stays a scalar chain per row, slower than
  // the rows in vectors (a softmax over 100 rows of 88 channels, AVX2:
  // 9.7 us against 6.2 us).
  if (Operation *combiner = minMaxCombiner(op))
    if (!isNoNaN(combiner) && !startsFromNonNaNFill(op))
      return std::nullopt;
  return reduced;
}

/// The output loop vectorFriendlyOrder keeps innermost by default: the one
/// walking the output's innermost non-unit dimension; nullopt when every
/// dimension has size 1 (a reduction to one value: a 1x1000 softmax's max);
/// failure when that dimension is not indexed by a plain loop.
FailureOr<std::optional<unsigned>> outputLoop(linalg::LinalgOp op) {
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  auto type = init->get().getType().cast<ShapedType>();
  for (int64_t d = static_cast<int64_t>(map.getNumResults()) - 1; d >= 0; --d) {
    auto dim = map.getResult(d).dyn_cast<AffineDimExpr>();
    if (!dim)
      return failure();
    if (type.getDimSize(d) != 1)
      return std::optional<unsigned>(dim.getPosition());
  }
  return std::optional<unsigned>();
}

bool isIdentity(ArrayRef<unsigned> order) {
  for (unsigned i = 0; i < order.size(); ++i)
    if (order[i] != i)
      return false;
  return true;
}

} // namespace

/// The loop permutation that makes the output's innermost non-unit
/// dimension the innermost loop, reductions just outside it, other parallel
/// loops outermost in their original order; or, for a reduction over the
/// inputs' contiguous dimension (contiguousReduction), that reduction loop
/// innermost. Empty if nothing to do.
SmallVector<unsigned> vectorFriendlyOrder(linalg::LinalgOp op, int64_t minContiguousReduction) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  FailureOr<std::optional<unsigned>> inner = outputLoop(op);
  if (failed(inner))
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  if (std::optional<unsigned> reduced =
          contiguousReduction(op, *inner, minContiguousReduction)) {
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == utils::IteratorType::parallel)
        order.push_back(i);
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == utils::IteratorType::reduction && i != *reduced)
        order.push_back(i);
    order.push_back(*reduced);
  } else {
    if (!*inner)
      return {};
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == utils::IteratorType::parallel && i != **inner)
        order.push_back(i);
    for (unsigned i = 0; i < iterators.size(); ++i)
      if (iterators[i] == utils::IteratorType::reduction)
        order.push_back(i);
    order.push_back(**inner);
  }
  return isIdentity(order) ? SmallVector<unsigned>() : order;
}

namespace {

/// Makes the max/min combiner of a reduction that contiguousReduction put
/// innermost one LLVM 16 vectorizes: max(x, acc) becomes
/// max nnan nsz(isnan(x) ? -inf : x, acc) (+inf for min). arith.maxf
/// lowers to llvm.maxnum, which ignores a NaN operand, and the accumulator
/// starts from a non-NaN fill, so the result is the same for every input,
/// NaNs included, and `nnan` holds; maxnum of +0 and -0 may return either
/// already, so `nsz` changes nothing. LLVM 16's loop vectorizer needs both
/// flags on a max/min recurrence.
void makeMinMaxVectorizable(Operation *combiner, RewriterBase &rewriter) {
  Block *body = combiner->getBlock();
  Value accumulator = body->getArguments().back();
  unsigned valueIndex = combiner->getOperand(0) == accumulator ? 1 : 0;
  Value value = combiner->getOperand(valueIndex);
  auto type = value.getType().cast<FloatType>();
  Location loc = combiner->getLoc();
  rewriter.setInsertionPoint(combiner);
  Value isNaN = rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, value, value);
  Value neutral = rewriter.create<arith::ConstantOp>(
      loc, rewriter.getFloatAttr(type, APFloat::getInf(type.getFloatSemantics(),
                                                       /*Negative=*/isa<arith::MaxFOp>(combiner))));
  Value clean = rewriter.create<arith::SelectOp>(loc, isNaN, neutral, value);
  rewriter.updateRootInPlace(combiner, [&] {
    combiner->setOperand(valueIndex, clean);
    combiner->setAttr("fastmath", arith::FastMathFlagsAttr::get(
                                      rewriter.getContext(),
                                      arith::FastMathFlags::nnan | arith::FastMathFlags::nsz));
  });
}

/// Generalizes a contraction/convolution/pooling op and interchanges its
/// loops into vectorFriendlyOrder.
struct InterchangeToContiguousInnermost
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  InterchangeToContiguousInnermost(MLIRContext *context, int64_t minContiguousReduction)
      : OpInterfaceRewritePattern(context), minContiguousReduction(minContiguousReduction) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr("kiln.interchanged"))
      return rewriter.notifyMatchFailure(op, "already interchanged");
    SmallVector<unsigned> order = vectorFriendlyOrder(op, minContiguousReduction);
    // A max/min reduction over the contiguous dimension already innermost
    // (as TOSA lowers softmax's) may still need its NaN-free combiner.
    FailureOr<std::optional<unsigned>> inner =
        op.getNumDpsInits() == 1 && op.getNumReductionLoops()
            ? outputLoop(op)
            : FailureOr<std::optional<unsigned>>(failure());
    Operation *combiner =
        succeeded(inner) && contiguousReduction(op, *inner, minContiguousReduction)
            ? minMaxCombiner(op)
            : nullptr;
    if (combiner && isNoNaN(combiner))
      combiner = nullptr;
    if (order.empty() && !combiner)
      return rewriter.notifyMatchFailure(
          op, "no reduction, or the contiguous loop is already innermost");
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *generalized;
    }
    if (!order.empty()) {
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(interchanged))
        return rewriter.notifyMatchFailure(op, "cannot interchange");
      generic = *interchanged;
    }
    if (combiner)
      if (Operation *generalized = minMaxCombiner(generic))
        makeMinMaxVectorizable(generalized, rewriter);
    rewriter.updateRootInPlace(
        generic, [&] { generic->setAttr("kiln.interchanged", rewriter.getUnitAttr()); });
    return success();
  }

  int64_t minContiguousReduction;
};

struct InterchangeForVectorizationPass
    : public PassWrapper<InterchangeForVectorizationPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InterchangeForVectorizationPass)

  explicit InterchangeForVectorizationPass(int64_t minContiguousReduction)
      : minContiguousReduction(minContiguousReduction) {}

  StringRef getArgument() const final {
    return "kiln-interchange-for-vectorization";
  }
  StringRef getDescription() const final {
    return "Make the output's contiguous dimension the innermost loop";
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateInterchangeForVectorizationPatterns(patterns, minContiguousReduction);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation().walk(
        [](Operation *op) { op->removeAttr("kiln.interchanged"); });
  }

  int64_t minContiguousReduction;
};

} // namespace

void populateInterchangeForVectorizationPatterns(RewritePatternSet &patterns,
                                                 int64_t minContiguousReduction) {
  patterns.add<InterchangeToContiguousInnermost>(patterns.getContext(), minContiguousReduction);
}

std::unique_ptr<Pass> createInterchangeForVectorizationPass(int64_t minContiguousReduction) {
  return std::make_unique<InterchangeForVectorizationPass>(minContiguousReduction);
}

} // namespace kiln
