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

/// True if `v` is the f32 constant -FLT_MAX (`negative`; MLIR 16's
/// identity of max) or +FLT_MAX (its identity of min).
bool isLargestF32(Value v, bool negative) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getType().isF32())
    return false;
  return attr.getValue().isLargest() && attr.getValue().isNegative() == negative;
}

/// True if `op`'s body yields a `CombinerOp` (arith.maxf, arith.minf).
template <typename CombinerOp> bool yields(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || !isa<linalg::YieldOp>(body->getTerminator()))
    return false;
  for (Value yielded : body->getTerminator()->getOperands())
    if (yielded.getDefiningOp<CombinerOp>())
      return true;
  return false;
}

/// True if `op` combines with arith.maxf: linalg.pooling_nhwc_max, or a
/// linalg op whose body yields an arith.maxf of its block arguments.
bool takesMaximum(linalg::LinalgOp op) {
  return isa<linalg::PoolingNhwcMaxOp>(op) || yields<arith::MaxFOp>(op);
}

struct MaxIdentityNegInfPass
    : public PassWrapper<MaxIdentityNegInfPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MaxIdentityNegInfPass)

  StringRef getArgument() const final { return "kiln-max-identity-neg-inf"; }
  StringRef getDescription() const final {
    return "Max reductions and max pools start from -inf (and pad with it), min reductions from "
           "+inf, not -FLT_MAX / +FLT_MAX";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    OpBuilder b(&getContext());
    auto infinity = [&](Location loc, Operation *before, bool negative) {
      b.setInsertionPoint(before);
      float inf = std::numeric_limits<float>::infinity();
      return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(negative ? -inf : inf));
    };
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasTensorSemantics())
        return;
      const bool max = takesMaximum(op);
      if (!max && !yields<arith::MinFOp>(op))
        return;
      // The accumulator's initial value: -FLT_MAX -> -inf for a maximum,
      // +FLT_MAX -> +inf for a minimum.
      for (OpOperand *init : op.getDpsInitOperands())
        if (auto fill = init->get().getDefiningOp<linalg::FillOp>())
          if (isLargestF32(fill.getInputs()[0], max) && fill->hasOneUse())
            fill->setOperand(0, infinity(fill.getLoc(), fill, max));
      if (!max)
        return;
      // A max pool's padding (tensor.pad yielding the same constant).
      for (OpOperand *input : op.getDpsInputOperands())
        if (auto pad = input->get().getDefiningOp<tensor::PadOp>())
          if (Value value = pad.getConstantPaddingValue(); value && isLargestF32(value, true)) {
            auto yield = cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
            yield->setOperand(0, infinity(yield.getLoc(), yield, true));
          }
    });
  }
};

} // namespace

std::unique_ptr<Pass> createMaxIdentityNegInfPass() {
  return std::make_unique<MaxIdentityNegInfPass>();
}

} // namespace kiln
