//===- SinkTransposesTest.cpp - kiln-sink-transposes -----------------------===//
//
// The IR the pass writes is checked by core/test/Transforms/sink-transposes.mlir;
// here, what is not IR: the numbers a compiled chain computes, and a real model.
//
//===----------------------------------------------------------------------===//
#include "Import/Import.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using namespace mlir;

namespace {

LogicalResult runSink(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createSinkTransposesPass());
  return pm.run(module);
}

template <typename OpTy> int count(ModuleOp module) {
  int n = 0;
  module.walk([&](OpTy) { ++n; });
  return n;
}

// What the ONNX importer emits for NCHW Conv -> BatchNormalization -> Clip
// -> Conv (1x1 convolutions, 2 -> 2 -> 1 channels, on a 1x2x2x2 input):
// each convolution between transposes to NHWC and back, the batch norm as a
// per-channel multiply and add of [1, C, 1, 1] constants. What the pass
// makes of it (and of the other cases) is checked in
// core/test/Transforms/sink-transposes.mlir; here it runs.
const char *kConvChain = R"mlir(
func.func @main(%x: tensor<1x2x2x2xf32> {kiln.name = "x"})
    -> (tensor<1x1x2x2xf32> {kiln.name = "y"}) {
  %to_nhwc = "tosa.const"() {value = dense<[0, 2, 3, 1]> : tensor<4xi32>} : () -> tensor<4xi32>
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %w1 = "tosa.const"() {value = dense<[[[[1.0, 2.0]]], [[[3.0, -1.0]]]]> : tensor<2x1x1x2xf32>} : () -> tensor<2x1x1x2xf32>
  %b1 = "tosa.const"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w2 = "tosa.const"() {value = dense<[[[[1.0, 1.0]]]]> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %b2 = "tosa.const"() {value = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %scale = "tosa.const"() {value = dense<[[[[2.0]], [[0.5]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %shift = "tosa.const"() {value = dense<[[[[1.0]], [[-2.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %0 = "tosa.transpose"(%x, %to_nhwc) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %1 = "tosa.conv2d"(%0, %w1, %b1) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = "tosa.transpose"(%1, %to_nchw) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %3 = "tosa.mul"(%2, %scale) {shift = 0 : i32} : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %4 = "tosa.add"(%3, %shift) : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %5 = "tosa.clamp"(%4) {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64}
      : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %6 = "tosa.transpose"(%5, %to_nhwc) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %7 = "tosa.conv2d"(%6, %w2, %b2) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %8 = "tosa.transpose"(%7, %to_nchw) : (tensor<1x2x2x1xf32>, tensor<4xi32>) -> tensor<1x1x2x2xf32>
  return %8 : tensor<1x1x2x2xf32>
}
)mlir";

TEST(SinkTransposes, ConvChainComputesTheSameThroughTheCompiler) {
  // The pipeline runs the pass first: compile and run the chain.
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("sink-transposes", "mlir", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << kConvChain;
  }
  auto artifact = kiln::compileArtifact(std::string(path), kiln::CompileOptions());
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());

  // x (NCHW): channel 0 = [[1, 2], [3, 4]], channel 1 = [[-1, 0], [1, 2]].
  std::vector<float> x = {1, 2, 3, 4, -1, 0, 1, 2};
  kiln::NpyArray input;
  input.shape = {1, 2, 2, 2};
  input.data.resize(x.size() * 4);
  std::memcpy(input.data.data(), x.data(), input.data.size());
  auto run = kiln::runArtifact(*artifact, {input});
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  ASSERT_EQ(run->outputValues.size(), 1u);
  ASSERT_EQ(run->outputValues[0].data.size(), 16u);
  std::vector<float> y(4);
  std::memcpy(y.data(), run->outputValues[0].data.data(), 16);
  // Per pixel (c0, c1): conv1 (c0 + 2 c1 + 0.5, 3 c0 - c1 - 0.5), times
  // (2, 0.5), plus (1, -2), clamped to [0, 6], summed:
  // (1, -1): (-0.5, 3.5) -> (0, -0.25) -> (0, 0)      -> 0
  // (2, 0):  (2.5, 5.5)  -> (6, 0.75)  -> (6, 0.75)   -> 6.75
  // (3, 1):  (5.5, 7.5)  -> (12, 1.75) -> (6, 1.75)   -> 7.75
  // (4, 2):  (8.5, 9.5)  -> (18, 2.75) -> (6, 2.75)   -> 8.75
  std::vector<float> expected = {0, 6.75f, 7.75f, 8.75f};
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(y[i], expected[i]) << "element " << i;
}

// BlazeFace exported to ONNX (NCHW, tf2onnx): 37 convolutions, each
// wrapped by the importer in transposes to NHWC and back, joined by
// residual adds, ReLUs, channel-padding concats and max pools; the model
// transposes its NHWC input to NCHW and its four heads back to NHWC. After
// the pass no transpose is left anywhere.
TEST(SinkTransposesRealModel, BlazeFaceOnnxRunsInNhwcThroughout) {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  const char *home = std::getenv("HOME");
  std::string path = (env && *env ? std::string(env)
                                   : std::string(home ? home : "/tmp") + "/.cache/kiln/models") +
                     "/blazeface.onnx";
  MLIRContext context;
  DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  auto module = kiln::importModelFile(context, path, {});
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  int before = count<tosa::TransposeOp>(**module);
  ASSERT_TRUE(succeeded(runSink(context, **module)));
  int after = count<tosa::TransposeOp>(**module);
  std::cout << "blazeface.onnx: " << before << " tosa.transpose before, " << after << " after"
            << std::endl;
  EXPECT_GT(before, 74); // two per convolution
  EXPECT_EQ(after, 0);
  EXPECT_EQ(count<tosa::Conv2DOp>(**module) + count<tosa::DepthwiseConv2DOp>(**module), 37);
}

} // namespace
