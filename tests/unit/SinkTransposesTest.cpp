//===- SinkTransposesTest.cpp - kiln-sink-transposes -----------------------===//
#include "Import/Import.h"
#include "PassTestSupport.h"
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

using kiln::test::parse;
using kiln::test::str;

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

std::vector<float> floatsOf(Value v) {
  auto c = v.getDefiningOp<tosa::ConstOp>();
  if (!c)
    return {};
  auto attr = c.getValue().cast<DenseElementsAttr>();
  return std::vector<float>(attr.getValues<float>().begin(), attr.getValues<float>().end());
}

// What the ONNX importer emits for NCHW Conv -> BatchNormalization -> Clip
// -> Conv (1x1 convolutions, 2 -> 2 -> 1 channels, on a 1x2x2x2 input):
// each convolution between transposes to NHWC and back, the batch norm as a
// per-channel multiply and add of [1, C, 1, 1] constants.
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

TEST(SinkTransposes, ConvChainKeepsOnlyItsEdgeTransposesAndFoldsBatchNorm) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvChain);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));

  // Left: the input's transpose to NHWC and the output's back to NCHW.
  EXPECT_EQ(count<tosa::TransposeOp>(*module), 2) << str(*module);
  EXPECT_EQ(count<tosa::MulOp>(*module), 0) << str(*module);
  EXPECT_EQ(count<tosa::AddOp>(*module), 0) << str(*module);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto out = ret.getOperand(0).getDefiningOp<tosa::TransposeOp>();
  ASSERT_TRUE(out) << str(*module);
  auto conv2 = out.getInput1().getDefiningOp<tosa::Conv2DOp>();
  ASSERT_TRUE(conv2) << str(*module);
  auto clamp = conv2.getInput().getDefiningOp<tosa::ClampOp>();
  ASSERT_TRUE(clamp) << str(*module);
  EXPECT_EQ(clamp.getType().cast<RankedTensorType>().getShape(), (ArrayRef<int64_t>{1, 2, 2, 2}));
  auto conv1 = clamp.getInput().getDefiningOp<tosa::Conv2DOp>();
  ASSERT_TRUE(conv1) << str(*module);
  auto in = conv1.getInput().getDefiningOp<tosa::TransposeOp>();
  ASSERT_TRUE(in && in.getInput1() == main.getArgument(0)) << str(*module);

  // Batch norm folded: weights row o times scale[o] = [2, 0.5]; bias
  // b * scale + shift = [0.5 * 2 + 1, -0.5 * 0.5 - 2].
  EXPECT_EQ(floatsOf(conv1.getWeight()), (std::vector<float>{2, 4, 1.5f, -0.5f}));
  EXPECT_EQ(floatsOf(conv1.getBias()), (std::vector<float>{2, -2.25f}));
}

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

// Two NCHW branches concatenated on channels, padded, reduced over H,
// fed to an NHWC consumer: concat, pad and reduce move to NHWC.
const char *kConcatPadReduce = R"mlir(
func.func @main(%a: tensor<1x2x3x4xf32>, %b: tensor<1x2x3x1xf32>) -> tensor<1x1x6x3xf32> {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %to_nhwc = "tosa.const"() {value = dense<[0, 2, 3, 1]> : tensor<4xi32>} : () -> tensor<4xi32>
  %pads = "tosa.const"() {value = dense<[[0, 0], [0, 0], [1, 2], [0, 0]]> : tensor<4x2xi32>} : () -> tensor<4x2xi32>
  %0 = "tosa.transpose"(%a, %to_nchw) : (tensor<1x2x3x4xf32>, tensor<4xi32>) -> tensor<1x4x2x3xf32>
  %1 = "tosa.transpose"(%b, %to_nchw) : (tensor<1x2x3x1xf32>, tensor<4xi32>) -> tensor<1x1x2x3xf32>
  %2 = "tosa.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x4x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x5x2x3xf32>
  %3 = "tosa.pad"(%2, %pads) : (tensor<1x5x2x3xf32>, tensor<4x2xi32>) -> tensor<1x5x5x3xf32>
  %4 = "tosa.reduce_sum"(%3) {axis = 1 : i64} : (tensor<1x5x5x3xf32>) -> tensor<1x1x5x3xf32>
  %5 = "tosa.transpose"(%4, %to_nhwc) : (tensor<1x1x5x3xf32>, tensor<4xi32>) -> tensor<1x5x3x1xf32>
  %6 = "tosa.reshape"(%5) {new_shape = array<i64: 1, 1, 5, 3>} : (tensor<1x5x3x1xf32>) -> tensor<1x1x5x3xf32>
  %7 = "tosa.concat"(%6, %6) {axis = 2 : i64} : (tensor<1x1x5x3xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x10x3xf32>
  %8 = "tosa.slice"(%7) {start = array<i64: 0, 0, 0, 0>, size = array<i64: 1, 1, 6, 3>} : (tensor<1x1x10x3xf32>) -> tensor<1x1x6x3xf32>
  return %8 : tensor<1x1x6x3xf32>
}
)mlir";

TEST(SinkTransposes, ConcatPadAndReduceMoveToTheUntransposedLayout) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConcatPadReduce);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));
  EXPECT_EQ(count<tosa::TransposeOp>(*module), 0) << str(*module);

  auto main = module->lookupSymbol<func::FuncOp>("main");
  tosa::ConcatOp concat;
  tosa::PadOp pad;
  tosa::ReduceSumOp reduce;
  main.walk([&](Operation *op) {
    if (auto c = dyn_cast<tosa::ConcatOp>(op); c && c.getOperand(0) == main.getArgument(0))
      concat = c;
    if (auto p = dyn_cast<tosa::PadOp>(op))
      pad = p;
    if (auto r = dyn_cast<tosa::ReduceSumOp>(op))
      reduce = r;
  });
  ASSERT_TRUE(concat && pad && reduce) << str(*module);
  // NCHW channels (1) are NHWC's dimension 3; H padding moves to dim 1;
  // the reduction over C is over dimension 3.
  EXPECT_EQ(concat.getAxis(), 3u);
  EXPECT_EQ(concat.getOperand(1), main.getArgument(1));
  EXPECT_EQ(pad.getInput1(), concat.getResult());
  auto pads = pad.getPadding().getDefiningOp<tosa::ConstOp>().getValue().cast<DenseElementsAttr>();
  std::vector<int32_t> padValues(pads.getValues<int32_t>().begin(), pads.getValues<int32_t>().end());
  EXPECT_EQ(padValues, (std::vector<int32_t>{0, 0, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(pad.getType().cast<RankedTensorType>().getShape(), (ArrayRef<int64_t>{1, 5, 3, 5}));
  EXPECT_EQ(reduce.getInput(), pad.getResult());
  EXPECT_EQ(reduce.getAxis(), 3u);
  EXPECT_EQ(reduce.getType().cast<RankedTensorType>().getShape(), (ArrayRef<int64_t>{1, 5, 3, 1}));
}

// A transpose also returned as a model output stays where it is, and the
// elementwise op reading it does not get a copy of it.
const char *kSharedTranspose = R"mlir(
func.func @main(%x: tensor<1x2x3x4xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = "tosa.transpose"(%x, %to_nchw) : (tensor<1x2x3x4xf32>, tensor<4xi32>) -> tensor<1x4x2x3xf32>
  %1 = "tosa.sigmoid"(%0) : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  return %0, %1 : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>
}
)mlir";

TEST(SinkTransposes, TransposeWithAUserThatKeepsItIsNotCopied) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kSharedTranspose);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));
  EXPECT_EQ(count<tosa::TransposeOp>(*module), 1) << str(*module);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto sigmoid = ret.getOperand(1).getDefiningOp<tosa::SigmoidOp>();
  ASSERT_TRUE(sigmoid) << str(*module);
  EXPECT_EQ(sigmoid.getInput(), ret.getOperand(0));
}

// A non-splat constant operand of an elementwise op is transposed at
// compile time: NCHW [1, 2, 1, 3] -> NHWC [1, 1, 3, 2].
const char *kConstantOperand = R"mlir(
func.func @main(%x: tensor<1x1x3x2xf32>) -> tensor<1x2x1x3xf32> {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %c = "tosa.const"() {value = dense<[[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]]> : tensor<1x2x1x3xf32>} : () -> tensor<1x2x1x3xf32>
  %0 = "tosa.transpose"(%x, %to_nchw) : (tensor<1x1x3x2xf32>, tensor<4xi32>) -> tensor<1x2x1x3xf32>
  %1 = "tosa.sub"(%c, %0) : (tensor<1x2x1x3xf32>, tensor<1x2x1x3xf32>) -> tensor<1x2x1x3xf32>
  return %1 : tensor<1x2x1x3xf32>
}
)mlir";

TEST(SinkTransposes, ConstantOperandsAreTransposedAtCompileTime) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConstantOperand);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto out = ret.getOperand(0).getDefiningOp<tosa::TransposeOp>();
  ASSERT_TRUE(out) << str(*module);
  auto sub = out.getInput1().getDefiningOp<tosa::SubOp>();
  ASSERT_TRUE(sub && sub.getInput2() == main.getArgument(0)) << str(*module);
  // c'[0, 0, w, c] = c[0, c, 0, w].
  EXPECT_EQ(floatsOf(sub.getInput1()), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(count<tosa::TransposeOp>(*module), 1) << str(*module);
}

// A depthwise convolution (C = 2, multiplier 2: 4 output channels) with a
// per-channel scale and shift after it.
const char *kDepthwiseBatchNorm = R"mlir(
func.func @main(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = "tosa.const"() {value = dense<1.0> : tensor<1x1x2x2xf32>} : () -> tensor<1x1x2x2xf32>
  %b = "tosa.const"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %s = "tosa.const"() {value = dense<[[[[1.0, 2.0, 3.0, 4.0]]]]> : tensor<1x1x1x4xf32>} : () -> tensor<1x1x1x4xf32>
  %t = "tosa.const"() {value = dense<0.5> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %0 = "tosa.depthwise_conv2d"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  %1 = "tosa.mul"(%s, %0) {shift = 0 : i32} : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %2 = "tosa.sub"(%1, %t) : (tensor<1x3x3x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x3x3x4xf32>
  return %2 : tensor<1x3x3x4xf32>
}
)mlir";

TEST(SinkTransposes, DepthwiseScaleAndShiftFoldIntoWeightsAndBias) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kDepthwiseBatchNorm);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  auto conv = ret.getOperand(0).getDefiningOp<tosa::DepthwiseConv2DOp>();
  ASSERT_TRUE(conv) << str(*module);
  // Weight [0, 0, c, m] is output channel 2c + m: times [1, 2, 3, 4].
  EXPECT_EQ(floatsOf(conv.getWeight()), (std::vector<float>{1, 2, 3, 4}));
  // Bias [1, 2, 3, 4] * [1, 2, 3, 4] - 0.5.
  EXPECT_EQ(floatsOf(conv.getBias()), (std::vector<float>{0.5f, 3.5f, 8.5f, 15.5f}));
}

// A convolution result read twice (the batch norm and a residual add)
// keeps its weights: folding would change the other reader's value.
const char *kConvTwoUsers = R"mlir(
func.func @main(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32> {
  %w = "tosa.const"() {value = dense<2.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %b = "tosa.const"() {value = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = "tosa.const"() {value = dense<3.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %0 = "tosa.conv2d"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %1 = "tosa.mul"(%0, %s) {shift = 0 : i32} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x2x1xf32>
  %2 = "tosa.add"(%1, %0) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %2 : tensor<1x2x2x1xf32>
}
)mlir";

TEST(SinkTransposes, ConvolutionWithSeveralUsersIsNotFolded) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kConvTwoUsers);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runSink(context, *module)));
  EXPECT_EQ(count<tosa::MulOp>(*module), 1) << str(*module);
  EXPECT_EQ(count<tosa::AddOp>(*module), 1) << str(*module);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  tosa::Conv2DOp conv;
  main.walk([&](tosa::Conv2DOp c) { conv = c; });
  ASSERT_TRUE(conv);
  EXPECT_EQ(floatsOf(conv.getWeight()), (std::vector<float>{2}));
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
