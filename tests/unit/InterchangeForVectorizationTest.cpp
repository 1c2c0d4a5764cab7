//===- InterchangeForVectorizationTest.cpp - kiln-interchange-for-vectorization
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



/// Runs the pass, with its default threshold unless one is given.
LogicalResult runInterchange(MLIRContext &context, ModuleOp module,
                             std::optional<int64_t> minContiguousReduction = std::nullopt) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(
      minContiguousReduction
          ? kiln::createInterchangeForVectorizationPass(*minContiguousReduction)
          : kiln::createInterchangeForVectorizationPass());
  return pm.run(module);
}

std::vector<utils::IteratorType> iterators(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> types = op.getIteratorTypesArray();
  return std::vector<utils::IteratorType>(types.begin(), types.end());
}

constexpr auto P = utils::IteratorType::parallel;
constexpr auto R = utils::IteratorType::reduction;

/// (d0, ..., d{n-1}) -> (results...), each result a plain dim.
AffineMap dims(MLIRContext *ctx, unsigned n, ArrayRef<unsigned> results) {
  SmallVector<AffineExpr> exprs;
  for (unsigned r : results)
    exprs.push_back(getAffineDimExpr(r, ctx));
  return AffineMap::get(n, 0, exprs, ctx);
}

linalg::GenericOp onlyGeneric(ModuleOp module) {
  std::vector<linalg::GenericOp> generics;
  module.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  EXPECT_EQ(generics.size(), 1u);
  return generics.empty() ? linalg::GenericOp() : generics.front();
}

// C(4x16) += A(4x8) * B(8x16) on buffers.
const char *kMatmul = R"mlir(
func.func @mm(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>)
                outs(%c : memref<4x16xf32>)
  return
}
)mlir";

TEST(InterchangeForVectorization, MatmulGetsOutputColumnsInnermost) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module)));

  int matmuls = 0;
  module->walk([&](linalg::MatmulOp) { ++matmuls; });
  EXPECT_EQ(matmuls, 0);
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  // (m, n, k) -> (m, k, n).
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{P, R, P}));
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  ASSERT_EQ(maps.size(), 3u);
  MLIRContext *ctx = &context;
  EXPECT_EQ(maps[0], dims(ctx, 3, {0, 1})) << str(maps[0]); // A[m, k]
  EXPECT_EQ(maps[1], dims(ctx, 3, {1, 2})) << str(maps[1]); // B[k, n]
  EXPECT_EQ(maps[2], dims(ctx, 3, {0, 2})) << str(maps[2]); // C[m, n]
  // The innermost loop walks the output's last (contiguous) dimension.
  AffineMap out = maps[2];
  EXPECT_EQ(out.getResult(out.getNumResults() - 1),
            getAffineDimExpr(out.getNumDims() - 1, ctx));
  // Still C += A * B on the same buffers.
  EXPECT_EQ(generic.getDpsInputOperand(0)->get(),
            module->lookupSymbol<func::FuncOp>("mm").getArgument(0));
  EXPECT_EQ(generic.getDpsInitOperand(0)->get(),
            module->lookupSymbol<func::FuncOp>("mm").getArgument(2));
  // The pass's bookkeeping attribute does not leak.
  EXPECT_FALSE(generic->hasAttr("kiln.interchanged"));
}

// 3x3 convolution on tensors, 8 output channels.
const char *kConv = R"mlir(
func.func @conv(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x8xf32>,
                %acc: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x8xf32>)
      outs(%acc : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %c : tensor<1x4x4x8xf32>
}
)mlir";

TEST(InterchangeForVectorization, ConvGetsOutputChannelsInnermost) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConv);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module)));

  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  // (n, oh, ow, f, kh, kw, c) -> (n, oh, ow, kh, kw, c, f).
  EXPECT_EQ(iterators(generic),
            (std::vector<utils::IteratorType>{P, P, P, R, R, R, P}));
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  ASSERT_EQ(maps.size(), 3u);
  MLIRContext *ctx = &context;
  // Output [n, oh, ow, f]: f is the last loop.
  EXPECT_EQ(maps[2], dims(ctx, 7, {0, 1, 2, 6})) << str(maps[2]);
  // Filter [kh, kw, c, f]: unit stride in the innermost loop too.
  EXPECT_EQ(maps[1], dims(ctx, 7, {3, 4, 5, 6})) << str(maps[1]);
  // Input [n, oh + kh, ow + kw, c] (stride 1, dilation 1).
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  EXPECT_EQ(maps[0], AffineMap::get(7, 0, {d(0), d(1) + d(3), d(2) + d(4), d(5)},
                                    ctx))
      << str(maps[0]);
  auto fn = module->lookupSymbol<func::FuncOp>("conv");
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  EXPECT_EQ(ret.getOperand(0), generic->getResult(0));
  EXPECT_EQ(generic.getDpsInitOperand(0)->get(), fn.getArgument(2));
}

// x * 2 on buffers: no reduction, nothing to interchange.
const char *kElementwise = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @scale(%x: memref<4x16xf32>, %y: memref<4x16xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  return
}
)mlir";

TEST(InterchangeForVectorization, ElementwiseGenericIsUnchanged) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kElementwise);
  ASSERT_TRUE(module);
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  linalg::GenericOp original = onlyGeneric(*module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module)));
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after);
  EXPECT_EQ(onlyGeneric(*module), original);
}

// Softmax's row maximum over 24 channels on buffers, the output filled
// with the lowest float first (as TOSA lowers reduce_max), written
// rows-innermost (the order the pass gave it before reductions over the
// contiguous dimension were told apart): loops (c, r),
// out[r] = max(out[r], x[r, c]).
const char *kRowMaxRowsInner = R"mlir(
func.func @rowmax(%x: memref<64x24xf32>, %m: memref<64xf32>) {
  %lowest = arith.constant -3.40282347E+38 : f32
  linalg.fill ins(%lowest : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x24xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}
)mlir";

TEST(InterchangeForVectorization, ReductionOverContiguousChannelsGoesInnermost) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRowMaxRowsInner);
  ASSERT_TRUE(module);
  // At or above the threshold: (c, r) -> (r, c), the channels innermost,
  // so the innermost loop is a unit-stride reduction.
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/8)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{P, R}));
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  MLIRContext *ctx = &context;
  EXPECT_EQ(maps[0], dims(ctx, 2, {0, 1})) << str(maps[0]); // x[r, c]
  EXPECT_EQ(maps[1], dims(ctx, 2, {0})) << str(maps[1]);    // m[r]
  // The combiner is the form LLVM 16 vectorizes, with the same results:
  // max nnan nsz(isnan(x) ? -inf : x, acc).
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaxFOp>();
  ASSERT_TRUE(max) << str(generic);
  EXPECT_TRUE(bitEnumContainsAll(max.getFastmath(),
                                 arith::FastMathFlags::nnan | arith::FastMathFlags::nsz))
      << str(max);
  auto select = max.getLhs().getDefiningOp<arith::SelectOp>();
  ASSERT_TRUE(select) << str(generic);
  EXPECT_EQ(max.getRhs(), body.getArgument(1)); // the accumulator
  auto isNaN = select.getCondition().getDefiningOp<arith::CmpFOp>();
  ASSERT_TRUE(isNaN);
  EXPECT_EQ(isNaN.getPredicate(), arith::CmpFPredicate::UNO);
  EXPECT_EQ(isNaN.getLhs(), body.getArgument(0));
  EXPECT_EQ(select.getFalseValue(), body.getArgument(0));
  FloatAttr neutral;
  ASSERT_TRUE(matchPattern(select.getTrueValue(), m_Constant(&neutral)));
  EXPECT_TRUE(neutral.getValue().isInfinity() && neutral.getValue().isNegative());
}

// The same maximum into a buffer nothing filled: it may hold a NaN, so
// the NaN-free combiner cannot be claimed, and a scalar max chain per row
// is slower than the rows in vectors: the rows stay innermost.
const char *kRowMaxUnknownStart = R"mlir(
func.func @rowmax(%x: memref<64x24xf32>, %m: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x24xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}
)mlir";

TEST(InterchangeForVectorization, MaxIntoUnfilledOutputKeepsRowsInnermost) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRowMaxUnknownStart);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/8)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{R, P}));
  int selects = 0;
  generic.walk([&](arith::SelectOp) { ++selects; });
  EXPECT_EQ(selects, 0);
}

// A 1x1000 softmax's maximum, on tensors: one row, so every output
// dimension has size 1; the channel loop is innermost already and only the
// combiner changes.
const char *kMaxOfOneRow = R"mlir(
func.func @rowmax(%x: tensor<1x1000xf32>, %init: tensor<1xf32>) -> tensor<1xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %filled = linalg.fill ins(%lowest : f32) outs(%init : tensor<1xf32>) -> tensor<1xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1x1000xf32>) outs(%filled : tensor<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %m : tensor<1xf32>
}
)mlir";

TEST(InterchangeForVectorization, MaxOfOneRowGetsVectorizableCombiner) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMaxOfOneRow);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{P, R}));
  auto yield = cast<linalg::YieldOp>(generic.getRegion().front().getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaxFOp>();
  ASSERT_TRUE(max) << str(generic);
  EXPECT_TRUE(bitEnumContainsAll(max.getFastmath(),
                                 arith::FastMathFlags::nnan | arith::FastMathFlags::nsz))
      << str(max);
  EXPECT_TRUE(max.getLhs().getDefiningOp<arith::SelectOp>()) << str(generic);
}

TEST(InterchangeForVectorization, ShortChannelReductionKeepsRowsInnermost) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRowMaxRowsInner);
  ASSERT_TRUE(module);
  // 24 channels below a threshold of 32: the rows stay innermost (one
  // output vector across rows, the channels outside).
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/32)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{R, P}));
  EXPECT_EQ(generic.getIndexingMapsArray()[0], dims(&context, 2, {1, 0}));
}

// Softmax's sum of exp(x - max) over 24 channels as TOSA lowers it:
// loops (r, c), channels already innermost; max[r] is not walked by the
// reduction and must not pull the rows innermost.
const char *kRowSum = R"mlir(
func.func @rowsum(%x: tensor<64x24xf32>, %max: tensor<64xf32>,
                  %acc: tensor<64xf32>) -> tensor<64xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : tensor<64x24xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %out : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}
)mlir";

TEST(InterchangeForVectorization, ChannelReductionAlreadyInnermostIsUnchanged) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRowSum);
  ASSERT_TRUE(module);
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/8)));
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after);

  // Below the threshold it is interchanged to rows innermost, as before.
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/32)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{R, P}));
}

TEST(InterchangeForVectorization, DefaultThresholdIsEightChannels) {
  // The pipeline's threshold: below 8 channels the rows in vectors were as
  // fast or faster (Passes.h); from 8 on, along the channels.
  auto rowSumOver = [](int channels) {
    std::string text = kRowSum;
    for (size_t at; (at = text.find("x24x")) != std::string::npos;)
      text.replace(at, 4, "x" + std::to_string(channels) + "x");
    return text;
  };
  for (int channels : {4, 8}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    MLIRContext context;
    std::string text = rowSumOver(channels);
    OwningOpRef<ModuleOp> module = parse(context, text.c_str());
    ASSERT_TRUE(module);
    ASSERT_TRUE(succeeded(runInterchange(context, *module)));
    linalg::GenericOp generic = onlyGeneric(*module);
    ASSERT_TRUE(generic);
    EXPECT_EQ(iterators(generic),
              channels < 8 ? (std::vector<utils::IteratorType>{R, P})
                           : (std::vector<utils::IteratorType>{P, R}));
  }
}

TEST(InterchangeForVectorization, MatmulKeepsOutputColumnsInnermostAtAnyThreshold) {
  // A[m, k] is contiguous along the reduction k, but B[k, n] along the
  // output's n: the contraction keeps n innermost (broadcast-multiply-add).
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runInterchange(context, *module, /*minContiguousReduction=*/1)));
  linalg::GenericOp generic = onlyGeneric(*module);
  ASSERT_TRUE(generic);
  EXPECT_EQ(iterators(generic), (std::vector<utils::IteratorType>{P, R, P}));
}

} // namespace
