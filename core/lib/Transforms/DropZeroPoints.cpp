//===- DropZeroPoints.cpp - Quantized linalg ops with zero points 0 -------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// True if operands 2 and 3 of `op` (the zero points of linalg's *_q ops)
/// are the constant 0.
bool zeroPointsAreZero(Operation *op) {
  if (op->getNumOperands() < 5)
    return false;
  return matchPattern(op->getOperand(2), m_Zero()) &&
         matchPattern(op->getOperand(3), m_Zero());
}

/// QOp(a, b, 0, 0) -> PlainOp(a, b), same outputs and attributes: the
/// plain named op sign-extends its i8 operands to the i32 accumulator as
/// the quantized one does after subtracting its zero points.
template <typename QOp, typename PlainOp>
struct DropZeroPoints : public OpRewritePattern<QOp> {
  using OpRewritePattern<QOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(QOp op, PatternRewriter &rewriter) const override {
    if (!zeroPointsAreZero(op))
      return rewriter.notifyMatchFailure(op, "a zero point is not the constant 0");
    // Strides and dilations carry over; the operand segment sizes are the
    // new op's own.
    SmallVector<NamedAttribute> attributes;
    for (NamedAttribute attr : op->getAttrs())
      if (attr.getName() != "operand_segment_sizes" &&
          attr.getName() != linalg::LinalgDialect::kMemoizedIndexingMapsAttrName)
        attributes.push_back(attr);
    auto plain = rewriter.create<PlainOp>(
        op.getLoc(), op->getResultTypes(),
        ValueRange{op->getOperand(0), op->getOperand(1)},
        op.getDpsInitOperands().front()->get(), attributes);
    rewriter.replaceOp(op, plain->getResults());
    return success();
  }
};

struct DropZeroPointsPass
    : public PassWrapper<DropZeroPointsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropZeroPointsPass)

  StringRef getArgument() const final { return "kiln-drop-zero-points"; }
  StringRef getDescription() const final {
    return "Quantized linalg ops whose zero points are 0 -> the plain named ops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDropZeroPointsPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateDropZeroPointsPatterns(RewritePatternSet &patterns) {
  patterns.add<DropZeroPoints<linalg::QuantizedMatmulOp, linalg::MatmulOp>,
               DropZeroPoints<linalg::QuantizedBatchMatmulOp, linalg::BatchMatmulOp>,
               DropZeroPoints<linalg::Conv2DNhwcHwcfQOp, linalg::Conv2DNhwcHwcfOp>,
               DropZeroPoints<linalg::DepthwiseConv2DNhwcHwcmQOp,
                              linalg::DepthwiseConv2DNhwcHwcmOp>>(patterns.getContext());
}

std::unique_ptr<Pass> createDropZeroPointsPass() {
  return std::make_unique<DropZeroPointsPass>();
}

} // namespace kiln
