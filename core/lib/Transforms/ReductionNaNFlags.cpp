//===- ReductionNaNFlags.cpp - Max/min reductions that return NaN ---------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// True if every user of `reduction` is tosa.sub(input, reduction), as in
/// softmax's x - max: the NaN element's difference is NaN already.
bool onlySubtractedFromItsInput(Operation *reduction) {
  Value input = reduction->getOperand(0), result = reduction->getResult(0);
  if (result.use_empty())
    return false;
  for (Operation *user : result.getUsers()) {
    auto sub = dyn_cast<tosa::SubOp>(user);
    if (!sub || sub.getInput1() != input || sub.getInput2() != result)
      return false;
  }
  return true;
}

/// A splat f32 constant of `shape`.
Value splat(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> shape, float value) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return b.create<tosa::ConstOp>(loc, type, DenseElementsAttr::get(type, value));
}

/// Adds the NaN flag to one f32 reduction (see Passes.h).
void addNaNFlag(Operation *reduction) {
  OpBuilder b(reduction->getContext());
  b.setInsertionPointAfter(reduction);
  Location loc = reduction->getLoc();
  Value x = reduction->getOperand(0), r = reduction->getResult(0);
  auto inType = x.getType().cast<RankedTensorType>();
  auto outType = r.getType().cast<RankedTensorType>();
  auto axis = reduction->getAttrOfType<IntegerAttr>("axis");
  auto i1 = [&](RankedTensorType t) { return RankedTensorType::get(t.getShape(), b.getI1Type()); };
  Value ordered = b.create<tosa::EqualOp>(loc, i1(inType), x, x);
  Value ones = b.create<tosa::CastOp>(loc, inType, ordered);
  Value allOrdered = b.create<tosa::ReduceMinOp>(loc, outType, ones, axis);
  llvm::SmallVector<int64_t> unit(outType.getRank(), 1);
  Value anyNaN =
      b.create<tosa::EqualOp>(loc, i1(outType), allOrdered, splat(b, loc, unit, 0.0f));
  Value nan = splat(b, loc, unit, std::numeric_limits<float>::quiet_NaN());
  auto result = b.create<tosa::SelectOp>(loc, outType, anyNaN, nan, r);
  r.replaceAllUsesExcept(result, result);
}

struct ReductionNaNFlagsPass
    : public PassWrapper<ReductionNaNFlagsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReductionNaNFlagsPass)

  StringRef getArgument() const final { return "kiln-reduction-nan-flags"; }
  StringRef getDescription() const final {
    return "f32 reduce_max/reduce_min return NaN for a row holding a NaN";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tosa::TosaDialect>();
  }

  void runOnOperation() override {
    SmallVector<Operation *> reductions;
    getOperation().walk([&](Operation *op) {
      if (!isa<tosa::ReduceMaxOp, tosa::ReduceMinOp>(op))
        return;
      auto type = op->getOperand(0).getType().dyn_cast<RankedTensorType>();
      if (type && type.getElementType().isF32() && type.hasStaticShape() &&
          !onlySubtractedFromItsInput(op))
        reductions.push_back(op);
    });
    for (Operation *op : reductions)
      addNaNFlag(op);
  }
};

} // namespace

std::unique_ptr<Pass> createReductionNaNFlagsPass() {
  return std::make_unique<ReductionNaNFlagsPass>();
}

} // namespace kiln
