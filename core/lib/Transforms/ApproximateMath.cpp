//===- ApproximateMath.cpp - exp and tanh as vectorizable arithmetic ------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

/// math.fma (which MLIR's approximations evaluate their polynomials with)
/// as a multiply and an add. llvm.fma must round once, so a CPU without
/// FMA (SSE2, the `generic` target; Cortex-M4F) would call the libm fmaf
/// per element; optimizeModule marks float math contractible, so where the
/// CPU has FMA LLVM fuses the pair back into one instruction.
struct ExpandFma : public OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    Value product = rewriter.create<arith::MulFOp>(op.getLoc(), op.getA(), op.getB());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, product, op.getC());
    return success();
  }
};

/// True if `op` sits in a linalg op whose innermost loop is too short for
/// LLVM to vectorize (a static extent below the vector width: a softmax
/// over 2 classes), so the approximation would run once per element.
bool inShortInnermostLoop(Operation *op, int64_t vectorLanes) {
  auto linalgOp = op->getParentOfType<linalg::LinalgOp>();
  if (!linalgOp || linalgOp.getNumLoops() == 0)
    return false;
  int64_t extent = linalgOp.getStaticLoopRanges().back();
  return !ShapedType::isDynamic(extent) && extent < vectorLanes;
}

/// A float constant of `type` (f32 or a vector of f32).
Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto vector = type.dyn_cast<VectorType>())
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(vector, b.getFloatAttr(vector.getElementType(), value)));
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

/// tanh(x) -> select(|x| >= 9, copysign(1, x), tanh(x)): float tanh is
/// exactly +-1 from |x| = 9.01 on, but MLIR's approximation clamps its
/// input to +-7.9 and gives 0.99999976 there, also for +-inf. NaN fails
/// the compare and goes through the approximation (NaN in, NaN out).
void saturateTanh(math::TanhOp op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op.getLoc();
  Value x = op.getOperand(), approx = op.getResult();
  Type type = x.getType();
  Value magnitude = b.create<math::AbsFOp>(loc, x);
  Value large = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, magnitude,
                                        floatConstant(b, loc, type, 9.0));
  Value one = b.create<math::CopySignOp>(loc, floatConstant(b, loc, type, 1.0), x);
  Value result = b.create<arith::SelectOp>(loc, large, one, approx);
  approx.replaceAllUsesExcept(result, result.getDefiningOp());
}

/// exp(x) for x < -80 as exp(x + 40) * exp(-40): MLIR's approximation
/// clamps its result at the smallest normal float (exp(-100) gave
/// 1.1754944e-38) and is not monotonic near -88, while the true value
/// there is subnormal or 0; both factors are normal floats and their
/// product rounds once, so exp(-100) = 3.72e-44, exp(-104) and exp(-inf)
/// = 0. NaN fails the compare and goes through the approximation.
void keepExpUnderflow(math::ExpOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = op.getOperand();
  Type type = x.getType();
  Value small = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x,
                                        floatConstant(b, loc, type, -80.0));
  Value shifted = b.create<arith::AddFOp>(loc, x, floatConstant(b, loc, type, 40.0));
  op->setOperand(0, b.create<arith::SelectOp>(loc, small, shifted, x));
  b.setInsertionPointAfter(op);
  Value approx = op.getResult();
  Value scaled = b.create<arith::MulFOp>(loc, approx,
                                         floatConstant(b, loc, type, 4.248354255291589e-18));
  Value result = b.create<arith::SelectOp>(loc, small, scaled, approx);
  approx.replaceAllUsesExcept(result, llvm::SmallPtrSet<Operation *, 2>{
                                          scaled.getDefiningOp(), result.getDefiningOp()});
}

struct ApproximateMathPass
    : public PassWrapper<ApproximateMathPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)

  explicit ApproximateMathPass(const KernelTarget &target) : target(target) {}

  StringRef getArgument() const final { return "kiln-approximate-math"; }
  StringRef getDescription() const final {
    return "Rewrite exp and tanh into polynomial arithmetic LLVM vectorizes";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    // The approximations of vector ops broadcast their constants.
    registry.insert<arith::ArithDialect, math::MathDialect, vector::VectorDialect>();
  }

  void runOnOperation() override {
    // Without FMA (SSE2, SSE4) one approximation costs as much as libm's
    // expf or more (a 2-class softmax over 896 rows, SSE2: 9.8 us against
    // 5.5 us): where the loop stays scalar, keep the call.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<math::ExpOp, math::TanhOp>(op) &&
          (target.fma || !inShortInnermostLoop(op, target.vectorLanes)))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    for (Operation *op : ops) {
      if (auto tanh = dyn_cast<math::TanhOp>(op))
        saturateTanh(tanh);
      if (auto exp = dyn_cast<math::ExpOp>(op))
        keepExpUnderflow(exp);
    }
    RewritePatternSet patterns(&getContext());
    populateApproximateMathPatterns(patterns);
    if (failed(applyOpPatternsAndFold(ops, std::move(patterns),
                                      GreedyRewriteStrictness::ExistingAndNewOps)))
      return signalPassFailure();
  }

  KernelTarget target;
};

} // namespace

void populateApproximateMathPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  // MLIR's set covers atan, atan2, tanh, log, log2, log1p, erf, exp,
  // expm1, cbrt, sin and cos; keep only the functions TOSA lowers to and
  // whose approximation was checked against double precision (a sweep of
  // each float range) and TFLite (tests/data/ops, the real models): exp
  // (also SOFTMAX and LOGISTIC) within 1.9e-6 relative (5.7e-6 without
  // FMA), tanh 3.1e-7. exp takes a math.floor, which optimizeModule
  // rewrites as arithmetic where the CPU has no floor instruction (x86-64
  // before SSE4.1), so it vectorizes there too.
  // math.log stays libm: the approximation reads a denormal input as the
  // smallest normal float, log(1e-44) = -87.3 instead of -101.3.
  const OperationName approximated[] = {
      OperationName(math::ExpOp::getOperationName(), context),
      OperationName(math::TanhOp::getOperationName(), context),
  };
  RewritePatternSet all(context);
  populateMathPolynomialApproximationPatterns(all);
  for (std::unique_ptr<RewritePattern> &pattern : all.getNativePatterns()) {
    std::optional<OperationName> root = pattern->getRootKind();
    if (root && llvm::is_contained(approximated, *root))
      patterns.add(std::move(pattern));
  }
  patterns.add<ExpandFma>(context);
}

std::unique_ptr<Pass> createApproximateMathPass(const KernelTarget &target) {
  return std::make_unique<ApproximateMathPass>(target);
}

} // namespace kiln
