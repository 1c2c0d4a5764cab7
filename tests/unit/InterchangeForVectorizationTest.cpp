//===- InterchangeForVectorizationTest.cpp - kiln-interchange-for-vectorization
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



LogicalResult runInterchange(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createInterchangeForVectorizationPass());
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

} // namespace
