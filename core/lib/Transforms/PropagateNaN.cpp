//===- PropagateNaN.cpp - arith.maxf/minf that return NaN for a NaN -------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// True if `v` is a constant with no NaN element (a clamp bound).
bool isNonNaNConstant(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return !scalar.getValue().isNaN();
  DenseFPElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)))
    return llvm::none_of(dense.getValues<APFloat>(), [](const APFloat &x) { return x.isNaN(); });
  return false;
}

/// maxf(a, b) -> select(uno(a, b), a + b, maxf(a, b)) (minf alike): the
/// new maxf still lowers to llvm.maxnum, whose semantics LLVM knows, and
/// the select returns a NaN operand's NaN (a + b is NaN when either is).
/// With a constant bound b (no NaN) the test is uno(a, a) and the NaN is a.
/// (A compare-and-select maximum instead, select(ugt(a, b), a, b), was
/// folded by LLVM 16 into a maxnum that dropped the NaN of a reduction's
/// element.)
template <typename Op>
struct NaNPropagating : public OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;

  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    if (isNonNaNConstant(a) && isNonNaNConstant(b))
      return rewriter.notifyMatchFailure(op, "both operands are constants without NaN");
    if (isNonNaNConstant(a))
      std::swap(a, b); // the constant bound second
    Value extreme = rewriter.create<Op>(loc, a, b);
    Value nan, anyNaN;
    if (isNonNaNConstant(b)) {
      anyNaN = rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, a, a);
      nan = a;
    } else {
      anyNaN = rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, a, b);
      nan = rewriter.create<arith::AddFOp>(loc, a, b);
    }
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, anyNaN, nan, extreme);
    return success();
  }
};

struct PropagateNaNPass : public PassWrapper<PropagateNaNPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PropagateNaNPass)

  StringRef getArgument() const final { return "kiln-propagate-nan"; }
  StringRef getDescription() const final {
    return "arith.maxf/minf as compare-and-select that return NaN for a NaN operand";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (!isa<arith::MaxFOp, arith::MinFOp>(op))
        return;
      // A combiner that claims `nnan` (kiln-interchange-for-vectorization's,
      // whose NaN kiln-reduction-nan-flags carries) stays vectorizable.
      auto flags = op->getAttrOfType<arith::FastMathFlagsAttr>("fastmath");
      if (flags && bitEnumContainsAll(flags.getValue(), arith::FastMathFlags::nnan))
        return;
      ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populatePropagateNaNPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    (void)applyOpPatternsAndFold(ops, frozen, GreedyRewriteStrictness::ExistingOps);
  }
};

} // namespace

void populatePropagateNaNPatterns(RewritePatternSet &patterns) {
  patterns.add<NaNPropagating<arith::MaxFOp>, NaNPropagating<arith::MinFOp>>(
      patterns.getContext());
}

std::unique_ptr<Pass> createPropagateNaNPass() { return std::make_unique<PropagateNaNPass>(); }

} // namespace kiln
