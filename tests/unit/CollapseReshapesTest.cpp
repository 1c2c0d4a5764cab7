//===- CollapseReshapesTest.cpp - kiln-collapse-reshapes ------------------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



LogicalResult runCollapse(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createCollapseReshapesPass());
  return pm.run(module);
}

template <typename OpTy> int count(func::FuncOp fn) {
  int n = 0;
  fn.walk([&](OpTy) { ++n; });
  return n;
}

// A 1x1 convolution as matmul (4096 = 1*64*64 pixels, 16 -> 24 channels),
// its result expanded back to NHWC, then a per-channel bias add.
const char *kMatmulExpandBias = R"mlir(
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @main(%a: tensor<4096x16xf32>, %w: tensor<16x24xf32>,
                %bias: tensor<24xf32>) -> tensor<1x64x64x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x24xf32>) -> tensor<4096x24xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4096x16xf32>, tensor<16x24xf32>)
                     outs(%f : tensor<4096x24xf32>) -> tensor<4096x24xf32>
  %x = tensor.expand_shape %m [[0, 1, 2], [3]]
      : tensor<4096x24xf32> into tensor<1x64x64x24xf32>
  %e2 = tensor.empty() : tensor<1x64x64x24xf32>
  %b = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %bias : tensor<1x64x64x24xf32>, tensor<24xf32>)
      outs(%e2 : tensor<1x64x64x24xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x64x24xf32>
  return %b : tensor<1x64x64x24xf32>
}
)mlir";

TEST(CollapseReshapes, BiasAddReadsMatmulDirectly) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmulExpandBias);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runCollapse(context, *module)));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  // matmul -> generic (2-D) -> expand_shape -> return.
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto expand = ret.getOperand(0).getDefiningOp<tensor::ExpandShapeOp>();
  ASSERT_TRUE(expand) << "result is not an expand_shape";
  EXPECT_EQ(expand.getResultType().getShape(),
            (ArrayRef<int64_t>{1, 64, 64, 24}));
  auto generic = expand.getSrc().getDefiningOp<linalg::GenericOp>();
  ASSERT_TRUE(generic) << "expand_shape does not read the generic";
  auto genericType = generic->getResult(0).getType().cast<RankedTensorType>();
  EXPECT_EQ(genericType.getShape(), (ArrayRef<int64_t>{4096, 24}));
  // (d0, d1, d2) collapse into one loop: 2 loops, both parallel.
  EXPECT_EQ(generic.getNumLoops(), 2u);
  EXPECT_EQ(generic.getNumParallelLoops(), 2u);

  ASSERT_EQ(generic.getNumDpsInputs(), 2u);
  auto matmul =
      generic.getDpsInputOperand(0)->get().getDefiningOp<linalg::MatmulOp>();
  ASSERT_TRUE(matmul) << "the generic does not read the matmul directly";
  EXPECT_EQ(generic.getDpsInputOperand(1)->get(), main.getArgument(2));
  // The bias is still read per channel: (d0, d1) -> (d1); input and output
  // are the identity on the 2-D space.
  auto maps = generic.getIndexingMapsArray();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_TRUE(maps[0].isIdentity()) << str(maps[0]);
  EXPECT_EQ(maps[1], AffineMap::get(2, 0, getAffineDimExpr(1, &context)))
      << str(maps[1]);
  EXPECT_TRUE(maps[2].isIdentity()) << str(maps[2]);

  // The only reshape left is the one after the generic; the generic's init
  // is an empty tensor of the collapsed shape.
  EXPECT_EQ(count<tensor::ExpandShapeOp>(main), 1);
  EXPECT_EQ(count<tensor::CollapseShapeOp>(main), 0);
  auto init = generic.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>();
  ASSERT_TRUE(init) << "init is not tensor.empty";
  EXPECT_EQ(init.getType().getShape(), (ArrayRef<int64_t>{4096, 24}));
}

// An accumulator fill of a 4-D empty tensor, collapsed to 2-D.
const char *kCollapseOfFill = R"mlir(
func.func @main() -> tensor<4096x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x64x24xf32>) -> tensor<1x64x64x24xf32>
  %c = tensor.collapse_shape %f [[0, 1, 2], [3]]
      : tensor<1x64x64x24xf32> into tensor<4096x24xf32>
  return %c : tensor<4096x24xf32>
}
)mlir";

TEST(CollapseReshapes, CollapseOfFilledEmptyBecomesFillOfCollapsedEmpty) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kCollapseOfFill);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runCollapse(context, *module)));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  EXPECT_EQ(count<tensor::CollapseShapeOp>(main), 0);
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto fill = ret.getOperand(0).getDefiningOp<linalg::FillOp>();
  ASSERT_TRUE(fill) << "result is not a linalg.fill";
  // Filled with the same 0.0 ...
  auto value = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  ASSERT_TRUE(value);
  EXPECT_EQ(value.getValue().cast<FloatAttr>().getValueAsDouble(), 0.0);
  // ... into an empty tensor of the collapsed shape 1*64*64 x 24.
  auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  ASSERT_TRUE(empty) << "fill does not initialize a tensor.empty";
  EXPECT_EQ(empty.getType().getShape(), (ArrayRef<int64_t>{4096, 24}));
  EXPECT_EQ(count<linalg::FillOp>(main), 1);
}

} // namespace
