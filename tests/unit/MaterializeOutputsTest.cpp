//===- MaterializeOutputsTest.cpp - kiln-materialize-outputs --------------===//
#include "PassTestSupport.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

// Results: 0 the input itself, 1 a reshape of the input, 2 a splat
// constant, 3 a computed value, 4 the same computed value again, 5 a
// reshape of it, 6 a non-splat constant (outlined later, here inline).
const char *kMain = R"mlir(
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>,
    tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>,
    tensor<2xf32>) {
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %one = arith.constant dense<1.0> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %nv = tensor.collapse_shape %n [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x, %v, %one, %n, %n, %nv, %c : tensor<2x3xf32>, tensor<6xf32>,
      tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2xf32>
}
)mlir";

TEST(MaterializeOutputs, EveryResultGetsItsOwnValue) {
  MLIRContext context;
  auto module = parse(context, kMain);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(kiln::createMaterializeOutputsPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto isCopy = [&](unsigned i) {
    auto alloc = ret.getOperand(i).getDefiningOp<bufferization::AllocTensorOp>();
    return alloc && alloc.getCopy();
  };
  EXPECT_TRUE(isCopy(0)) << str(*module);
  EXPECT_TRUE(isCopy(1)) << "a view of the input is copied too";
  auto fill = ret.getOperand(2).getDefiningOp<linalg::FillOp>();
  ASSERT_TRUE(fill) << "a splat constant output becomes a fill";
  EXPECT_FALSE(isCopy(3)) << "the first use of a computed value stays as it is";
  EXPECT_TRUE(ret.getOperand(3).getDefiningOp<linalg::GenericOp>());
  EXPECT_TRUE(isCopy(4)) << "the same value listed again is copied";
  EXPECT_TRUE(isCopy(5)) << "a view of an earlier output is copied";
  EXPECT_TRUE(isCopy(6)) << "a non-splat constant output is copied";
  // Every result is now a distinct value.
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    for (unsigned j = i + 1; j < ret.getNumOperands(); ++j)
      EXPECT_NE(ret.getOperand(i), ret.getOperand(j)) << i << " and " << j;
}

// Nothing to do: computed, distinct results stay untouched.
TEST(MaterializeOutputs, LeavesDistinctComputedResultsAlone) {
  MLIRContext context;
  auto module = parse(context, R"mlir(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %n : tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(module);
  std::string before = str(*module);
  PassManager pm(&context);
  pm.addPass(kiln::createMaterializeOutputsPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(str(*module), before);
}

} // namespace
