//===- InterchangeForVectorization.cpp - Innermost loop = contiguous ------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {

/// The loop permutation that makes the output's innermost non-unit
/// dimension the innermost loop, reductions just outside it, other parallel
/// loops outermost in their original order. Empty if nothing to do.
SmallVector<unsigned> vectorFriendlyOrder(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  auto type = init->get().getType().cast<ShapedType>();
  std::optional<unsigned> inner;
  for (int64_t d = static_cast<int64_t>(map.getNumResults()) - 1; d >= 0 && !inner; --d) {
    auto dim = map.getResult(d).dyn_cast<AffineDimExpr>();
    if (!dim)
      return {};
    if (type.getDimSize(d) != 1)
      inner = dim.getPosition();
  }
  if (!inner)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::parallel && i != *inner)
      order.push_back(i);
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::reduction)
      order.push_back(i);
  order.push_back(*inner);
  bool identity = true;
  for (unsigned i = 0; i < order.size(); ++i)
    identity &= order[i] == i;
  return identity ? SmallVector<unsigned>() : order;
}

namespace {

/// Generalizes a contraction/convolution/pooling op and interchanges its
/// loops into vectorFriendlyOrder.
struct InterchangeToContiguousInnermost
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr("kiln.interchanged"))
      return rewriter.notifyMatchFailure(op, "already interchanged");
    SmallVector<unsigned> order = vectorFriendlyOrder(op);
    if (order.empty())
      return rewriter.notifyMatchFailure(
          op, "no reduction, or the contiguous output loop is already innermost");
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *generalized;
    }
    FailureOr<linalg::GenericOp> interchanged =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(interchanged))
      return rewriter.notifyMatchFailure(op, "cannot interchange");
    (*interchanged)->setAttr("kiln.interchanged", rewriter.getUnitAttr());
    return success();
  }
};

struct InterchangeForVectorizationPass
    : public PassWrapper<InterchangeForVectorizationPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InterchangeForVectorizationPass)

  StringRef getArgument() const final {
    return "kiln-interchange-for-vectorization";
  }
  StringRef getDescription() const final {
    return "Make the output's contiguous dimension the innermost loop";
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateInterchangeForVectorizationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation().walk(
        [](Operation *op) { op->removeAttr("kiln.interchanged"); });
  }
};

} // namespace

void populateInterchangeForVectorizationPatterns(RewritePatternSet &patterns) {
  patterns.add<InterchangeToContiguousInnermost>(patterns.getContext());
}

std::unique_ptr<Pass> createInterchangeForVectorizationPass() {
  return std::make_unique<InterchangeForVectorizationPass>();
}

} // namespace kiln
