//===- FuseElementwise.cpp - Elementwise fusion that keeps source ops -----===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// Fuse a producer into its consumer when the consumer is its only user
/// (MLIR's default rule). Before agreeing, the consumer's location absorbs
/// the producer's, because the fused op is created at the consumer's
/// location: the operators both came from stay visible in the plan.
bool fuseAndKeepLocation(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  Operation *consumer = fused->getOwner();
  consumer->setLoc(FusedLoc::get(consumer->getContext(),
                                 {producer->getLoc(), consumer->getLoc()}));
  return true;
}

struct FuseElementwisePass
    : public PassWrapper<FuseElementwisePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)

  StringRef getArgument() const final { return "kiln-fuse-elementwise"; }
  StringRef getDescription() const final {
    return "Fuse elementwise linalg ops, keeping every source location";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<AffineDialect, linalg::LinalgDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, fuseAndKeepLocation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, fuseAndKeepLocation);
    // Weight layout transposes of constants fold away here.
    linalg::populateConstantFoldLinalgOperations(
        patterns, [](OpOperand *operand) {
          Operation *producer = operand->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

} // namespace kiln
