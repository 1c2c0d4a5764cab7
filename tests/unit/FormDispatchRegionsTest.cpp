//===- FormDispatchRegionsTest.cpp - kiln-form-dispatch-regions -----------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



/// Runs the pass; error diagnostics are appended to `errors`.
LogicalResult runForm(MLIRContext &context, ModuleOp module,
                      const kiln::DispatchOptions &options,
                      std::string *errors = nullptr) {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (errors)
      *errors += diag.str() + "\n";
    return success();
  });
  PassManager pm(&context);
  pm.addPass(kiln::createFormDispatchRegionsPass(options));
  return pm.run(module);
}

std::optional<int64_t> dispatchOf(Operation *op) {
  if (!op) // only<> already reported the missing op
    return std::nullopt;
  if (auto id = op->getAttrOfType<IntegerAttr>(kiln::kDispatchAttrName))
    return id.getInt();
  return std::nullopt;
}

/// The only op of type OpTy in @main.
template <typename OpTy> OpTy only(func::FuncOp main) {
  OpTy found;
  int n = 0;
  for (Operation &op : main.getBody().front())
    if (auto typed = dyn_cast<OpTy>(&op)) {
      found = typed;
      ++n;
    }
  EXPECT_EQ(n, 1) << OpTy::getOperationName().str();
  return found;
}

// pad (SAME padding of a 3x3 window) -> conv with a zero-filled accumulator
// -> bias + relu.
const char *kConvBiasRelu = R"mlir(
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>,
                %bias: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x3xf32> to tensor<1x10x10x3xf32>
  %e = tensor.empty() : tensor<1x8x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>)
      outs(%f : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %e2 = tensor.empty() : tensor<1x8x8x4xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<1x8x8x4xf32>, tensor<4xf32>)
      outs(%e2 : tensor<1x8x8x4xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %m = arith.maxf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x4xf32>
  return %r : tensor<1x8x8x4xf32>
}
)mlir";

TEST(FormDispatchRegions, PadFillConvAndBiasReluFormOneDispatch) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvBiasRelu);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runForm(context, *module, kiln::DispatchOptions())));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  EXPECT_EQ(dispatchOf(only<tensor::PadOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::FillOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::Conv2DNhwcHwcfOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::GenericOp>(main)), 0);
  // Constants, empty tensors and the return launch nothing.
  for (Operation &op : main.getBody().front())
    if (isa<arith::ConstantOp, tensor::EmptyOp, func::ReturnOp>(op))
      EXPECT_FALSE(dispatchOf(&op)) << str(op);
}

TEST(FormDispatchRegions, WithoutFusionPadAndGenericGetTheirOwnDispatch) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvBiasRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.fusion = false;
  ASSERT_TRUE(succeeded(runForm(context, *module, options)));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  // Roots in program order: conv = 0, generic = 1; the fill always joins
  // its root; the pad is left over and numbered after every root: 2.
  EXPECT_EQ(dispatchOf(only<linalg::Conv2DNhwcHwcfOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::FillOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::GenericOp>(main)), 1);
  EXPECT_EQ(dispatchOf(only<tensor::PadOp>(main)), 2);
}

TEST(FormDispatchRegions, NoFusionOfTheConvDispatchSplitsItLikeFusionOff) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvBiasRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.noFusion = {0};
  ASSERT_TRUE(succeeded(runForm(context, *module, options)));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  EXPECT_EQ(dispatchOf(only<linalg::Conv2DNhwcHwcfOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::FillOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::GenericOp>(main)), 1);
  EXPECT_EQ(dispatchOf(only<tensor::PadOp>(main)), 2);
}

TEST(FormDispatchRegions, NoFusionOfMissingDispatchFails) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvBiasRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  // With fusion on there is one dispatch, id 0: id 1 is one past the end.
  options.noFusion = {1};
  std::string errors;
  EXPECT_TRUE(failed(runForm(context, *module, options, &errors)));
  EXPECT_NE(errors.find("dispatch 1"), std::string::npos) << errors;
  EXPECT_NE(errors.find("does not exist"), std::string::npos) << errors;
}

TEST(FormDispatchRegions, NegativeNoFusionIdFails) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvBiasRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.noFusion = {-1};
  EXPECT_TRUE(failed(runForm(context, *module, options)));
}

// A 1x1 convolution written as collapse -> matmul (dense weights) -> expand.
const char *kReshapedMatmul = R"mlir(
func.func @main(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0],
                             [9.0, 10.0], [11.0, 12.0], [13.0, 14.0], [15.0, 16.0]]>
      : tensor<8x2xf32>
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1, 2], [3]]
      : tensor<1x4x4x8xf32> into tensor<16x8xf32>
  %e = tensor.empty() : tensor<16x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %m = linalg.matmul ins(%c, %w : tensor<16x8xf32>, tensor<8x2xf32>)
                     outs(%f : tensor<16x2xf32>) -> tensor<16x2xf32>
  %r = tensor.expand_shape %m [[0, 1, 2], [3]]
      : tensor<16x2xf32> into tensor<1x4x4x2xf32>
  return %r : tensor<1x4x4x2xf32>
}
)mlir";

TEST(FormDispatchRegions, ReshapesAndConstantsGetNoDispatch) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kReshapedMatmul);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runForm(context, *module, kiln::DispatchOptions())));
  auto main = module->lookupSymbol<func::FuncOp>("main");

  EXPECT_EQ(dispatchOf(only<linalg::MatmulOp>(main)), 0);
  EXPECT_EQ(dispatchOf(only<linalg::FillOp>(main)), 0);
  EXPECT_FALSE(dispatchOf(only<tensor::CollapseShapeOp>(main)));
  EXPECT_FALSE(dispatchOf(only<tensor::ExpandShapeOp>(main)));
  EXPECT_FALSE(dispatchOf(only<tensor::EmptyOp>(main)));
  int constants = 0;
  for (auto cst : main.getBody().front().getOps<arith::ConstantOp>()) {
    ++constants;
    EXPECT_FALSE(dispatchOf(cst)) << str(cst);
  }
  EXPECT_EQ(constants, 2);
}

} // namespace
