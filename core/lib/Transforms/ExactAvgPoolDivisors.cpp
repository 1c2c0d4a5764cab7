//===- ExactAvgPoolDivisors.cpp - Padded avg_pool2d with exact divisors ---===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

int64_t avgPoolWindowCount(int64_t o, int64_t stride, int64_t padBegin, int64_t kernel,
                           int64_t in) {
  int64_t start = o * stride - padBegin;
  return std::min(start + kernel, in) - std::max<int64_t>(start, 0);
}

namespace {

/// avg_pool2d(x, pad P) on f32 -> mul(avg_pool2d(pad(x, P, 0), pad 0), c),
/// c[1, oy, ox, 1] = (KH * KW) / count(oy, ox).
struct ExactAvgPoolDivisor : public OpRewritePattern<tosa::AvgPool2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::AvgPool2dOp op, PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> pad = op.getPad(), kernel = op.getKernel(), stride = op.getStride();
    // MLIR 16 counts the padding window o covers from o instead of
    // o * stride: right for stride 1, and for pads of at most 1 (window 0
    // is the only one reaching into a pad of 1 at either end).
    bool miscounted = false;
    for (int d = 0; d < 2; ++d)
      miscounted |= stride[d] > 1 && (pad[2 * d] > 1 || pad[2 * d + 1] > 1);
    if (!miscounted)
      return rewriter.notifyMatchFailure(
          op, "stride 1 or pads of at most 1: MLIR 16's divisors are right");
    auto inType = op.getInput().getType().dyn_cast<RankedTensorType>();
    auto outType = op.getType().dyn_cast<RankedTensorType>();
    if (!inType || !outType || !inType.hasStaticShape() || !outType.hasStaticShape() ||
        !inType.getElementType().isF32() || inType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "not a static f32 NHWC pool");
    if (llvm::any_of(pad, [](int64_t p) { return p < 0; }))
      return rewriter.notifyMatchFailure(op, "negative padding (the contract gate refuses it)");
    ArrayRef<int64_t> in = inType.getShape(), out = outType.getShape();
    const int64_t oh = out[1], ow = out[2], window = kernel[0] * kernel[1];
    std::vector<float> factor(oh * ow);
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        int64_t count = avgPoolWindowCount(y, stride[0], pad[0], kernel[0], in[1]) *
                        avgPoolWindowCount(x, stride[1], pad[2], kernel[1], in[2]);
        if (count <= 0)
          return rewriter.notifyMatchFailure(op, "a window lies entirely in the padding");
        factor[y * ow + x] = static_cast<float>(static_cast<double>(window) / count);
      }
    Location loc = op.getLoc();
    auto f32 = rewriter.getF32Type();
    auto paddedType = RankedTensorType::get(
        {in[0], in[1] + pad[0] + pad[1], in[2] + pad[2] + pad[3], in[3]}, f32);
    auto padsType = RankedTensorType::get({4, 2}, rewriter.getI32Type());
    std::vector<int32_t> pads = {0, 0, int32_t(pad[0]), int32_t(pad[1]),
                                 int32_t(pad[2]), int32_t(pad[3]), 0, 0};
    Value padsValue = rewriter.create<tosa::ConstOp>(
        loc, padsType, DenseElementsAttr::get(padsType, llvm::ArrayRef(pads)));
    Value padded = rewriter.create<tosa::PadOp>(loc, paddedType, op.getInput(), padsValue,
                                                  Value(), nullptr);
    Value mean = rewriter.create<tosa::AvgPool2dOp>(
        loc, outType, padded, op.getKernelAttr(), op.getStrideAttr(),
        rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}), op.getQuantizationInfoAttr());
    auto factorType = RankedTensorType::get({1, oh, ow, 1}, f32);
    Value c = rewriter.create<tosa::ConstOp>(
        loc, factorType, DenseElementsAttr::get(factorType, llvm::ArrayRef(factor)));
    rewriter.replaceOpWithNewOp<tosa::MulOp>(op, outType, mean, c, rewriter.getI32IntegerAttr(0));
    return success();
  }
};

struct ExactAvgPoolDivisorsPass
    : public PassWrapper<ExactAvgPoolDivisorsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExactAvgPoolDivisorsPass)

  StringRef getArgument() const final { return "kiln-exact-avg-pool-divisors"; }
  StringRef getDescription() const final {
    return "Padded f32 tosa.avg_pool2d -> zero pad, unpadded pool, times KH*KW/count";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tosa::TosaDialect>();
  }

  void runOnOperation() override {
    // Only the pools change: the rest of the function is not folded.
    SmallVector<Operation *> pools;
    getOperation().walk([&](tosa::AvgPool2dOp op) { pools.push_back(op); });
    if (pools.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateExactAvgPoolDivisorsPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    (void)applyOpPatternsAndFold(pools, frozen, GreedyRewriteStrictness::ExistingOps);
  }
};

} // namespace

void populateExactAvgPoolDivisorsPatterns(RewritePatternSet &patterns) {
  patterns.add<ExactAvgPoolDivisor>(patterns.getContext());
}

std::unique_ptr<Pass> createExactAvgPoolDivisorsPass() {
  return std::make_unique<ExactAvgPoolDivisorsPass>();
}

} // namespace kiln
