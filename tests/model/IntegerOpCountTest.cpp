//===- IntegerOpCountTest.cpp - The plan counts integer multiply-adds ------===//
//
// The plan's per-dispatch `flops` (kiln inspect's "FLOPs", docs/design.md,
// "Operation counts") counts 2 operations per multiply-accumulate of a
// contraction or convolution whatever its element type: an int8 model's
// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and BATCH_MATMUL dispatches
// count their i8 x i8 -> i32 products as a float model's count its FMAs.
// Expected values are hand-computed from each model's layer shapes (output
// elements x taps per output), not read from the compiler.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

std::shared_ptr<const kiln::CompilationPlan> plan(const std::string &relative) {
  std::string path = std::string(KILN_TEST_DATA_DIR) + "/" + relative;
  auto p = kiln::planModel(path, kiln::CompileOptions{});
  EXPECT_TRUE(static_cast<bool>(p)) << path << ": " << llvm::toString(p.takeError());
  return p ? *p : nullptr;
}

int64_t totalOps(const kiln::CompilationPlan &p) {
  int64_t total = 0;
  for (const kiln::Dispatch &d : p.dispatches)
    total += d.flops;
  return total;
}

/// Single-operator int8/uint8 cases of tests/data/ops_int8 (shapes from
/// their meta.json): 2 x output elements x taps per output. The uint8
/// FULLY_CONNECTED (weights zero point 125) and BATCH_MATMUL (both inputs
/// graph inputs) keep linalg's quantized ops, whose zero-point operands
/// the named-op interfaces do not count: both were 0 before.
TEST(IntegerOpCount, SingleOperatorCasesCountTwoPerMultiplyAdd) {
  struct Case {
    const char *name;
    int64_t ops;
  } cases[] = {
      // 1x3x3x5 output, 3x3 window over 4 input channels.
      {"conv_2d_valid_stride2_relu", 2 * (3 * 3 * 5) * (3 * 3 * 4)},
      // uint8: 1x5x5x3 output, 3x3 window over 3 channels.
      {"conv_2d_uint8", 2 * (5 * 5 * 3) * (3 * 3 * 3)},
      // [2, 16] x [16, 4]: M x N x K = 2 x 4 x 16.
      {"fully_connected_uint8", 2 * 2 * 4 * 16},
      // [2, 3, 8] x [2, 8, 5]: batch 2 x M 3 x N 5 x K 8.
      {"batch_matmul_rank3", 2 * 2 * 3 * 5 * 8},
      // [3, 16] x [8, 16]^T: M 3 x N 8 x K 16 (the bias add is not counted).
      {"fully_connected_bias", 2 * 3 * 8 * 16},
      // 1x3x3x4 output (multiplier 2 over 2 channels), one channel's 3x3
      // window per output.
      {"depthwise_conv_2d_valid_stride2_m2", 2 * (3 * 3 * 4) * 9},
  };
  for (const Case &c : cases) {
    auto p = plan(std::string("ops_int8/") + c.name + "/model.tflite");
    ASSERT_TRUE(p) << c.name;
    EXPECT_EQ(totalOps(*p), c.ops) << c.name;
  }
}

/// person_detect (TensorFlow Lite Micro's MobileNet v1, width 0.25, on a
/// 96x96x1 image): each CONV_2D and DEPTHWISE_CONV_2D dispatch counts 2 x
/// its layer's multiply-accumulates, and the model 7157888 of them in all
/// (0.96 M depthwise, 6.19 M 1x1; the plan said 1.93 MFLOP when only the
/// depthwise layers were counted).
TEST(IntegerOpCount, PersonDetectCountsEveryConvolutionLayer) {
  // Operator index -> {output H, W, C, taps per output element}: a
  // depthwise 3x3 tap reads one channel (9 taps), a 1x1 CONV_2D all input
  // channels. Operator 0 is a DEPTHWISE_CONV_2D of the 1-channel image
  // with multiplier 8; 27 is AVERAGE_POOL_2D, 28 the 1x1 classifier.
  struct Layer {
    int64_t h, w, c, taps;
  };
  std::map<int64_t, Layer> layers = {
      {0, {48, 48, 8, 9}},    {1, {48, 48, 8, 9}},    {2, {48, 48, 16, 8}},
      {3, {24, 24, 16, 9}},   {4, {24, 24, 32, 16}},  {5, {24, 24, 32, 9}},
      {6, {24, 24, 32, 32}},  {7, {12, 12, 32, 9}},   {8, {12, 12, 64, 32}},
      {9, {12, 12, 64, 9}},   {10, {12, 12, 64, 64}}, {11, {6, 6, 64, 9}},
      {12, {6, 6, 128, 64}},  {23, {3, 3, 128, 9}},   {24, {3, 3, 256, 128}},
      {25, {3, 3, 256, 9}},   {26, {3, 3, 256, 256}}, {28, {1, 1, 2, 256}},
  };
  for (int64_t i = 13; i <= 22; i += 2) {
    layers[i] = {6, 6, 128, 9};       // depthwise 3x3, stride 1
    layers[i + 1] = {6, 6, 128, 128}; // 1x1, 128 -> 128
  }
  int64_t macs = 0, pointwise = 0;
  for (const auto &[index, l] : layers) {
    macs += l.h * l.w * l.c * l.taps;
    if (l.taps != 9)
      pointwise += l.h * l.w * l.c * l.taps;
  }
  ASSERT_EQ(macs, 7157888);
  ASSERT_EQ(pointwise, 6193664);

  auto p = plan("models/int8/person_detect.tflite");
  ASSERT_TRUE(p);
  int64_t seen = 0;
  for (const kiln::Dispatch &d : p->dispatches)
    for (const kiln::SourceOp &op : d.ops) {
      auto it = layers.find(op.sourceIndex);
      if ((op.name != "CONV_2D" && op.name != "DEPTHWISE_CONV_2D") || it == layers.end())
        continue;
      const Layer &l = it->second;
      EXPECT_EQ(d.flops, 2 * l.h * l.w * l.c * l.taps) << d.name << " " << op.name << " #"
                                                        << op.sourceIndex;
      ++seen;
    }
  EXPECT_EQ(seen, static_cast<int64_t>(layers.size()));
  // Besides the convolutions: AVERAGE_POOL_2D's 3x3 window over 256
  // channels (2 per tap, as pooling is counted) and SOFTMAX's few float
  // operations on 2 classes; integer requantization counts nothing.
  int64_t total = totalOps(*p);
  EXPECT_GE(total, 2 * macs + 2 * 9 * 256);
  EXPECT_LE(total, 2 * macs + 2 * 9 * 256 + 200);
}

} // namespace
