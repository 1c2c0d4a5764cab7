//===- SpecialValuePassesTest.cpp - NaN, -inf and globals passes ----------===//
//
// kiln-propagate-nan, kiln-reduction-nan-flags, kiln-max-identity-neg-inf
// and kiln-order-globals.
//
// On IR: each pass's rewrite (what Passes.h promises) and what it leaves
// alone. End to end: max, min, clamp and a max reduction over a row with a
// NaN compiled and run give NaN; a max reduction of -inf gives -inf; two
// builds of a module with two same-typed globals are byte-identical.
// Expected values are IEEE's, written here.
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "TestSupport.h"
#include "Transforms/Passes.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

template <typename CreatePass>
void runPass(MLIRContext &context, ModuleOp module, CreatePass create, bool nested = true) {
  PassManager pm(&context);
  if (nested)
    pm.addNestedPass<func::FuncOp>(create());
  else
    pm.addPass(create());
  ASSERT_TRUE(succeeded(pm.run(module))) << str(module);
}

TEST(PropagateNaN, MaxOfTwoValuesSelectsTheirSumWhenEitherIsNaN) {
  MLIRContext context;
  auto module = parse(context, R"mlir(
    func.func @f(%a: f32, %b: f32) -> f32 {
      %m = arith.maxf %a, %b : f32
      return %m : f32
    }
    func.func @relu(%a: vector<4xf32>) -> vector<4xf32> {
      %z = arith.constant dense<0.0> : vector<4xf32>
      %m = arith.maxf %z, %a : vector<4xf32>
      return %m : vector<4xf32>
    })mlir");
  ASSERT_TRUE(module);
  runPass(context, *module, kiln::createPropagateNaNPass);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  auto select = ret.getOperand(0).getDefiningOp<arith::SelectOp>();
  ASSERT_TRUE(select) << str(f);
  auto uno = select.getCondition().getDefiningOp<arith::CmpFOp>();
  ASSERT_TRUE(uno && uno.getPredicate() == arith::CmpFPredicate::UNO) << str(f);
  EXPECT_TRUE(select.getTrueValue().getDefiningOp<arith::AddFOp>()) << str(f);
  EXPECT_TRUE(select.getFalseValue().getDefiningOp<arith::MaxFOp>()) << str(f);
  // The constant bound moves second and needs no NaN test of its own.
  auto relu = module->lookupSymbol<func::FuncOp>("relu");
  auto rsel = cast<func::ReturnOp>(relu.getBody().front().getTerminator())
                  .getOperand(0)
                  .getDefiningOp<arith::SelectOp>();
  ASSERT_TRUE(rsel) << str(relu);
  auto test = rsel.getCondition().getDefiningOp<arith::CmpFOp>();
  ASSERT_TRUE(test);
  EXPECT_EQ(test.getLhs(), relu.getArgument(0));
  EXPECT_EQ(test.getRhs(), relu.getArgument(0));
  EXPECT_EQ(rsel.getTrueValue(), relu.getArgument(0));
}

TEST(MaxIdentityNegInf, MaxReductionStartsFromNegativeInfinity) {
  MLIRContext context;
  auto module = parse(context, R"mlir(
    func.func @reduce(%x: tensor<16xf32>) -> (tensor<f32>, tensor<f32>) {
      %lowest = arith.constant -3.40282347E+38 : f32
      %e = tensor.empty() : tensor<f32>
      %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<f32>) -> tensor<f32>
      %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                           iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%f : tensor<f32>) {
      ^bb0(%in: f32, %out: f32):
        %r = arith.maxf %in, %out : f32
        linalg.yield %r : f32
      } -> tensor<f32>
      %e2 = tensor.empty() : tensor<f32>
      %f2 = linalg.fill ins(%lowest : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
      %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                           iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%f2 : tensor<f32>) {
      ^bb0(%in: f32, %out: f32):
        %r = arith.addf %in, %out : f32
        linalg.yield %r : f32
      } -> tensor<f32>
      return %m, %s : tensor<f32>, tensor<f32>
    })mlir");
  ASSERT_TRUE(module);
  runPass(context, *module, kiln::createMaxIdentityNegInfPass);
  SmallVector<linalg::FillOp> fills;
  module->walk([&](linalg::FillOp f) { fills.push_back(f); });
  ASSERT_EQ(fills.size(), 2u);
  auto value = [](linalg::FillOp f) {
    return f.getInputs()[0].getDefiningOp<arith::ConstantOp>().getValue().cast<FloatAttr>()
        .getValueAsDouble();
  };
  EXPECT_EQ(value(fills[0]), -std::numeric_limits<double>::infinity()) << str(*module);
  // A sum's accumulator is not a max identity: left alone.
  EXPECT_EQ(value(fills[1]), double(-std::numeric_limits<float>::max())) << str(*module);
}

TEST(ReductionNaNFlags, MaxReductionGetsANaNFlagSoftmaxMaxDoesNot) {
  MLIRContext context;
  auto module = parse(context, R"mlir(
    func.func @max(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
      %m = "tosa.reduce_max"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
      return %m : tensor<4x1xf32>
    }
    func.func @softmax_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %m = "tosa.reduce_max"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
      %d = "tosa.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
      return %d : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(module);
  runPass(context, *module, kiln::createReductionNaNFlagsPass);
  auto count = [&](const char *fn, StringRef name) {
    int n = 0;
    module->lookupSymbol<func::FuncOp>(fn).walk([&](Operation *op) {
      n += op->getName().getStringRef() == name;
    });
    return n;
  };
  EXPECT_EQ(count("max", "tosa.reduce_min"), 1) << str(*module);
  EXPECT_EQ(count("max", "tosa.select"), 1);
  auto ret = cast<func::ReturnOp>(
      module->lookupSymbol<func::FuncOp>("max").getBody().front().getTerminator());
  EXPECT_TRUE(ret.getOperand(0).getDefiningOp<tosa::SelectOp>()) << str(*module);
  EXPECT_EQ(count("softmax_max", "tosa.reduce_min"), 0);
  EXPECT_EQ(count("softmax_max", "tosa.select"), 0);
}

TEST(OrderGlobals, GlobalsAreNamedAndPlacedByFirstUse) {
  MLIRContext context;
  auto module = parse(context, R"mlir(
    memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<2.0>
    memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<1.0>
    func.func @a() -> memref<2xf32> {
      %g = memref.get_global @__constant_2xf32 : memref<2xf32>
      return %g : memref<2xf32>
    }
    func.func @b() -> memref<2xf32> {
      %g = memref.get_global @__constant_2xf32_0 : memref<2xf32>
      return %g : memref<2xf32>
    })mlir");
  ASSERT_TRUE(module);
  runPass(context, *module, kiln::createOrderGlobalsPass, /*nested=*/false);
  SmallVector<memref::GlobalOp> globals(module->getOps<memref::GlobalOp>());
  ASSERT_EQ(globals.size(), 2u);
  EXPECT_EQ(globals[0].getSymName(), "__constant_0_2xf32");
  EXPECT_EQ(globals[1].getSymName(), "__constant_1_2xf32");
  // The first one used (by @a) holds 1.0, and @a reads it.
  EXPECT_EQ(globals[0].getInitialValue()->cast<DenseElementsAttr>().getSplatValue<float>(), 1.0f);
  memref::GetGlobalOp get;
  module->lookupSymbol<func::FuncOp>("a").walk([&](memref::GetGlobalOp g) { get = g; });
  EXPECT_EQ(get.getName(), "__constant_0_2xf32");
  // Globals come first in the module.
  EXPECT_TRUE(isa<memref::GlobalOp>(module->getBody()->front()));
}

/// Runs `source` (one f32 input x [N]) on `x` and returns the output.
std::vector<float> run(const std::string &source, const std::vector<float> &x) {
  return kiln::test::runMlirOnFloats(source, {int64_t(x.size())}, x);
}

TEST(SpecialValuePasses, CompiledMaxMinClampAndReductionsKeepNaNAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {nan, 1, -inf, 0, 2, -1, inf, 0.5};
  std::vector<float> clamped = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<8xf32> {kiln.name = "y"}) {
      %0 = "tosa.clamp"(%x) {min_int = 0 : i64, max_int = 6 : i64, min_fp = 0.0 : f32, max_fp = 6.0 : f32}
           : (tensor<8xf32>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })mlir", x);
  ASSERT_EQ(clamped.size(), 8u);
  EXPECT_TRUE(std::isnan(clamped[0]));
  EXPECT_EQ(clamped[2], 0.0f);
  EXPECT_EQ(clamped[6], 6.0f);
  std::vector<float> reduced = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<1xf32> {kiln.name = "y"}) {
      %0 = "tosa.reduce_max"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir", x);
  ASSERT_EQ(reduced.size(), 1u);
  EXPECT_TRUE(std::isnan(reduced[0]));
  std::vector<float> lowest = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<1xf32> {kiln.name = "y"}) {
      %0 = "tosa.reduce_max"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir", std::vector<float>(8, -inf));
  ASSERT_EQ(lowest.size(), 1u);
  EXPECT_EQ(lowest[0], -inf);
  std::vector<float> maxed = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<8xf32> {kiln.name = "y"}) {
      %r = "tosa.reverse"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>
      %0 = "tosa.maximum"(%x, %r) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })mlir", x);
  ASSERT_EQ(maxed.size(), 8u);
  EXPECT_TRUE(std::isnan(maxed[0])); // max(NaN, 0.5)
  EXPECT_TRUE(std::isnan(maxed[7])); // max(0.5, NaN)
  EXPECT_EQ(maxed[1], inf);          // max(1, inf)
  EXPECT_EQ(maxed[2], -1.0f);        // max(-inf, -1)
}

} // namespace
