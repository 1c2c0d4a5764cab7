//===- CollapseReshapes.cpp - Fold reshapes into elementwise generics -----===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// reshape(tensor.empty) -> tensor.empty of the reshaped (static) type.
template <typename ReshapeOp>
struct FoldReshapeOfEmpty : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getSrc().template getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(op, "source is not tensor.empty");
    auto type = op.getResultType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result shape is dynamic");
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(),
                                                 type.getElementType());
    return success();
  }
};

/// reshape(linalg.fill(v, e)) -> linalg.fill(v, reshape(e)): an accumulator
/// initialized by a fill stays a fill of an undefined tensor after its
/// consumer's loops are collapsed, so it still joins the consumer's dispatch.
template <typename ReshapeOp>
struct FoldReshapeOfFill : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto fill = op.getSrc().template getDefiningOp<linalg::FillOp>();
    if (!fill)
      return rewriter.notifyMatchFailure(op, "source is not linalg.fill");
    if (!fill.getOutputs()[0].template getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(op, "fill does not initialize an empty tensor");
    auto type = op.getResultType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result shape is dynamic");
    Value empty = rewriter.create<tensor::EmptyOp>(op.getLoc(), type.getShape(),
                                                   type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(op, fill.getInputs()[0], empty);
    return success();
  }
};

struct CollapseReshapesPass
    : public PassWrapper<CollapseReshapesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CollapseReshapesPass)

  StringRef getArgument() const final { return "kiln-collapse-reshapes"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, tensor::TensorDialect>();
  }
  StringRef getDescription() const final {
    return "Fold reshapes into elementwise linalg.generic ops";
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only fold reshapes whose other side is a linalg op (the root a
    // generic could then fuse with), never plain function arguments.
    linalg::ControlFusionFn control = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      if (auto reshape = dyn_cast_or_null<tensor::ExpandShapeOp>(producer))
        return isa_and_nonnull<linalg::LinalgOp>(
            reshape.getSrc().getDefiningOp());
      if (auto reshape = dyn_cast_or_null<tensor::CollapseShapeOp>(producer))
        return isa_and_nonnull<linalg::LinalgOp>(
            reshape.getSrc().getDefiningOp());
      return false;
    };
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, control);
    // reshape(tensor.empty) -> tensor.empty: a collapsed consumer's init
    // stays an undefined tensor its dispatch can write in place.
    patterns.add<FoldReshapeOfEmpty<tensor::CollapseShapeOp>,
                 FoldReshapeOfEmpty<tensor::ExpandShapeOp>,
                 FoldReshapeOfFill<tensor::CollapseShapeOp>,
                 FoldReshapeOfFill<tensor::ExpandShapeOp>>(&getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createCollapseReshapesPass() {
  return std::make_unique<CollapseReshapesPass>();
}

} // namespace kiln
