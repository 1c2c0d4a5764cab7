//===- FuseElementwiseTest.cpp - kiln-fuse-elementwise --------------------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



LogicalResult runFuse(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createFuseElementwisePass());
  return pm.run(module);
}

/// Every NameLoc name found anywhere inside `loc` (through FusedLoc,
/// CallSiteLoc, nested NameLoc ...), in walk order.
std::vector<std::string> namesIn(Location loc) {
  std::vector<std::string> names;
  loc->walk([&](Location l) {
    if (auto name = l.dyn_cast<NameLoc>())
      names.push_back(name.getName().str());
    return WalkResult::advance();
  });
  return names;
}

// x + y, then relu: two elementwise generics on the same 4x8 iteration
// space, the add's only user is the relu.
const char *kAddRelu = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>)
      outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %s = arith.addf %in0, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc("ADD#1")
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>)
      outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32> loc("RELU#2")
  return %r : tensor<4x8xf32>
}
)mlir";

TEST(FuseElementwise, FusedGenericKeepsBothSourceLocations) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kAddRelu);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runFuse(context, *module)));

  auto main = module->lookupSymbol<func::FuncOp>("main");
  std::vector<linalg::GenericOp> generics;
  main.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  ASSERT_EQ(generics.size(), 1u);
  linalg::GenericOp fused = generics.front();

  // One loop nest computing max(x + y, 0): x and y are its only inputs,
  // its result is what @main returns.
  EXPECT_EQ(fused.getNumDpsInputs(), 2u);
  EXPECT_EQ(fused.getDpsInputOperand(0)->get(), main.getArgument(0));
  EXPECT_EQ(fused.getDpsInputOperand(1)->get(), main.getArgument(1));
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  EXPECT_EQ(ret.getOperand(0), fused->getResult(0));
  int adds = 0, maxes = 0;
  fused.getRegion().walk([&](Operation *op) {
    adds += isa<arith::AddFOp>(op);
    maxes += isa<arith::MaxFOp>(op);
  });
  EXPECT_EQ(adds, 1);
  EXPECT_EQ(maxes, 1);

  // The fused op's location is a FusedLoc naming both source operators.
  EXPECT_TRUE(fused.getLoc().isa<FusedLoc>()) << str(fused.getLoc());
  std::vector<std::string> names = namesIn(fused.getLoc());
  EXPECT_EQ(std::count(names.begin(), names.end(), "ADD#1"), 1) << str(fused.getLoc());
  EXPECT_EQ(std::count(names.begin(), names.end(), "RELU#2"), 1) << str(fused.getLoc());
}

// A 2x3 constant transposed by a linalg.generic into 3x2: out[i][j] =
// in[j][i], with the input read through (d0, d1) -> (d1, d0).
const char *kTransposeConstant = R"mlir(
func.func @main() -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32> loc("TRANSPOSE#0")
  return %t : tensor<3x2xf32>
}
)mlir";

TEST(FuseElementwise, TransposeOfConstantFoldsToConstant) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kTransposeConstant);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runFuse(context, *module)));

  auto main = module->lookupSymbol<func::FuncOp>("main");
  int generics = 0;
  main.walk([&](linalg::GenericOp) { ++generics; });
  EXPECT_EQ(generics, 0);

  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto cst = ret.getOperand(0).getDefiningOp<arith::ConstantOp>();
  ASSERT_TRUE(cst) << "returned value is not a constant";
  auto value = cst.getValue().dyn_cast<DenseElementsAttr>();
  ASSERT_TRUE(value);
  auto type = value.getType().cast<RankedTensorType>();
  EXPECT_EQ(type.getShape(), (ArrayRef<int64_t>{3, 2}));
  // [[1, 2, 3], [4, 5, 6]]^T = [[1, 4], [2, 5], [3, 6]], row-major.
  std::vector<float> got(value.getValues<float>().begin(),
                         value.getValues<float>().end());
  EXPECT_EQ(got, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

} // namespace
