//===- MaxIdentityNegInf.cpp - Max reductions start from -inf -------------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// True if `v` is the f32 constant -FLT_MAX (MLIR 16's identity of max).
bool isLowestF32(Value v) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getType().isF32())
    return false;
  return attr.getValue().isLargest() && attr.getValue().isNegative();
}

/// True if `op` combines with arith.maxf: linalg.pooling_nhwc_max, or a
/// linalg op whose body yields an arith.maxf of its block arguments.
bool takesMaximum(linalg::LinalgOp op) {
  if (isa<linalg::PoolingNhwcMaxOp>(op))
    return true;
  Block *body = op.getBlock();
  if (!body || !isa<linalg::YieldOp>(body->getTerminator()))
    return false;
  for (Value yielded : body->getTerminator()->getOperands())
    if (yielded.getDefiningOp<arith::MaxFOp>())
      return true;
  return false;
}

struct MaxIdentityNegInfPass
    : public PassWrapper<MaxIdentityNegInfPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MaxIdentityNegInfPass)

  StringRef getArgument() const final { return "kiln-max-identity-neg-inf"; }
  StringRef getDescription() const final {
    return "Max reductions and max pools start from -inf (and pad with it), not -FLT_MAX";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    OpBuilder b(&getContext());
    auto negInf = [&](Location loc, Operation *before) {
      b.setInsertionPoint(before);
      return b.create<arith::ConstantOp>(
          loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    };
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!takesMaximum(op) || !op.hasTensorSemantics())
        return;
      // The accumulator's initial value.
      for (OpOperand *init : op.getDpsInitOperands())
        if (auto fill = init->get().getDefiningOp<linalg::FillOp>())
          if (isLowestF32(fill.getInputs()[0]) && fill->hasOneUse())
            fill->setOperand(0, negInf(fill.getLoc(), fill));
      // A max pool's padding (tensor.pad yielding the same constant).
      for (OpOperand *input : op.getDpsInputOperands())
        if (auto pad = input->get().getDefiningOp<tensor::PadOp>())
          if (Value value = pad.getConstantPaddingValue(); value && isLowestF32(value)) {
            auto yield = cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
            yield->setOperand(0, negInf(yield.getLoc(), yield));
          }
    });
  }
};

} // namespace

std::unique_ptr<Pass> createMaxIdentityNegInfPass() {
  return std::make_unique<MaxIdentityNegInfPass>();
}

} // namespace kiln
