//===- DropZeroPointsTest.cpp - kiln-drop-zero-points ---------------------===//
//
// What the pass writes (each quantized named op with both zero points the
// constant 0 becomes its plain named op; a nonzero or run-time zero point
// leaves it alone) is checked in core/test/Transforms/drop-zero-points.mlir.
// Here, end to end: int8 TOSA convolutions (strided and dilated) and a matmul
// with zero points 0 (the pass's path) and with nonzero zero points (the
// quantized ops' path) compiled and run, against sums computed here.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

/// Deterministic int8 values over the whole range (-128 and 127 included):
/// element i is ((i * step + offset) mod 256) - 128.
std::vector<int> int8Values(int count, int step, int offset) {
  std::vector<int> v(count);
  for (int i = 0; i < count; ++i)
    v[i] = (i * step + offset) % 256 - 128;
  return v;
}

std::string join(const std::vector<int> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s;
}

kiln::NpyArray int8Array(std::vector<int64_t> shape, const std::vector<int> &values) {
  kiln::NpyArray a;
  a.dtype = "|i1";
  a.shape = std::move(shape);
  for (int v : values)
    a.data.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  return a;
}

/// Compiles the TOSA model `text` for the generic x86-64 CPU, runs it on
/// `inputs` and returns its one output, which must be i32 (empty, with a
/// test failure, on any error).
std::vector<int32_t> compileAndRun(const std::string &text,
                                   const std::vector<kiln::NpyArray> &inputs) {
  kiln::test::TempDir dir;
  std::string path = dir.file("model.mlir");
  std::ofstream(path) << text;
  auto artifact = kiln::compileArtifact(path, kiln::CompileOptions());
  if (!artifact) {
    ADD_FAILURE() << llvm::toString(artifact.takeError()) << "\n" << text;
    return {};
  }
  auto result = kiln::runArtifact(*artifact, inputs);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  if (result->outputValues.size() != 1 || result->outputValues[0].dtype != "<i4") {
    ADD_FAILURE() << "expected one i32 output";
    return {};
  }
  const kiln::NpyArray &out = result->outputValues[0];
  std::vector<int32_t> values(out.numElements());
  std::memcpy(values.data(), out.data.data(), values.size() * sizeof(int32_t));
  return values;
}

/// The linalg stage (EmitStage::Linalg) of the TOSA model `text` (empty,
/// with a test failure, on an error).
std::string linalgStageOf(const std::string &text) {
  kiln::test::TempDir dir;
  std::string path = dir.file("model.mlir");
  std::ofstream(path) << text;
  auto linalg = kiln::emitStage(path, kiln::EmitStage::Linalg, kiln::CompileOptions());
  if (!linalg) {
    ADD_FAILURE() << llvm::toString(linalg.takeError());
    return "";
  }
  return *linalg;
}

/// CONV_2D as TOSA: 1x9x8x3 int8 input, 4 output channels, 3x3 window,
/// strides [2, 3], dilations [3, 2], no padding (-> 1x2x2x4 i32), weights
/// (OHWI) and bias constants, zero points `inputZp` and `weightZp`.
std::string convModel(const std::vector<int> &w, const std::vector<int> &bias, int inputZp,
                      int weightZp) {
  return "func.func @main(%x: tensor<1x9x8x3xi8> {kiln.name = \"x\"}) -> "
         "(tensor<1x2x2x4xi32> {kiln.name = \"y\"}) {\n"
         "  %w = \"tosa.const\"() {value = dense<[" + join(w) + "]> : tensor<108xi8>} : () -> tensor<108xi8>\n"
         "  %w4 = \"tosa.reshape\"(%w) {new_shape = array<i64: 4, 3, 3, 3>} : (tensor<108xi8>) -> tensor<4x3x3x3xi8>\n"
         "  %b = \"tosa.const\"() {value = dense<[" + join(bias) + "]> : tensor<4xi32>} : () -> tensor<4xi32>\n"
         "  %y = \"tosa.conv2d\"(%x, %w4, %b) {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 3>, "
         "dilation = array<i64: 3, 2>, quantization_info = #tosa.conv_quant<input_zp = " +
         std::to_string(inputZp) + ", weight_zp = " + std::to_string(weightZp) +
         ">} : (tensor<1x9x8x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>) -> tensor<1x2x2x4xi32>\n"
         "  return %y : tensor<1x2x2x4xi32>\n}\n";
}

TEST(DropZeroPoints, StridedDilatedInt8ConvolutionRunsEndToEnd) {
  std::vector<int> x = int8Values(9 * 8 * 3, 37, 11), w = int8Values(4 * 3 * 3 * 3, 53, 7);
  std::vector<int> bias = {1000, -2000, 30000, -7};
  // Zero points 0 (kiln-drop-zero-points' path), then input zero point -3
  // and weight zero point 2 (the quantized op, left alone).
  for (auto [inputZp, weightZp] : {std::pair<int, int>{0, 0}, {-3, 2}}) {
    SCOPED_TRACE("zero points " + std::to_string(inputZp) + ", " + std::to_string(weightZp));
    std::string model = convModel(w, bias, inputZp, weightZp);
    std::string linalg = linalgStageOf(model);
    bool quantized = linalg.find("linalg.conv_2d_nhwc_hwcf_q") != std::string::npos;
    EXPECT_EQ(quantized, inputZp != 0) << linalg;
    EXPECT_NE(linalg.find("linalg.conv_2d_nhwc_hwcf"), std::string::npos) << linalg;
    std::vector<int32_t> got = compileAndRun(model, {int8Array({1, 9, 8, 3}, x)});
    ASSERT_EQ(got.size(), 16u);
    // y[oh, ow, f] = bias[f] + sum over kh, kw, c of
    //   (x[2 oh + 3 kh, 3 ow + 2 kw, c] - zx) (w[f, kh, kw, c] - zw).
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow)
        for (int f = 0; f < 4; ++f) {
          int64_t want = bias[f];
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              for (int c = 0; c < 3; ++c) {
                int ih = 2 * oh + 3 * kh, iw = 3 * ow + 2 * kw;
                want += int64_t(x[(ih * 8 + iw) * 3 + c] - inputZp) *
                        (w[((f * 3 + kh) * 3 + kw) * 3 + c] - weightZp);
              }
          EXPECT_EQ(got[(oh * 2 + ow) * 4 + f], want) << "at " << oh << ", " << ow << ", " << f;
        }
  }
}

TEST(DropZeroPoints, Int8ConvolutionWithOneHandComputedOutput) {
  // All inputs -128 and all weights of channel 0 equal to -128: each of
  // the 27 products is 16384, so y[.., 0] = 27 x 16384 + 5 = 442373; the
  // other channels' weights are 127: 27 x -16256 - 6 = -438918.
  std::vector<int> x(9 * 8 * 3, -128), w(108, 127);
  for (int i = 0; i < 27; ++i)
    w[i] = -128;
  std::vector<int32_t> got =
      compileAndRun(convModel(w, {5, -6, -6, -6}, 0, 0), {int8Array({1, 9, 8, 3}, x)});
  ASSERT_EQ(got.size(), 16u);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(got[p * 4 + 0], 442373) << "pixel " << p;
    for (int f = 1; f < 4; ++f)
      EXPECT_EQ(got[p * 4 + f], -438918) << "pixel " << p << ", channel " << f;
  }
}

TEST(DropZeroPoints, Int8BatchMatmulRunsEndToEnd) {
  // tosa.matmul of two run-time int8 operands with zero points 0 (TOSA ->
  // linalg.quantized_batch_matmul -> linalg.batch_matmul): 2 batches of
  // 5x6 times 6x7.
  const char *model = R"mlir(
func.func @main(%a: tensor<2x5x6xi8> {kiln.name = "a"}, %b: tensor<2x6x7xi8> {kiln.name = "b"})
    -> (tensor<2x5x7xi32> {kiln.name = "c"}) {
  %c = "tosa.matmul"(%a, %b) {quantization_info = #tosa.matmul_quant<a_zp = 0, b_zp = 0>}
      : (tensor<2x5x6xi8>, tensor<2x6x7xi8>) -> tensor<2x5x7xi32>
  return %c : tensor<2x5x7xi32>
}
)mlir";
  std::string linalg = linalgStageOf(model);
  EXPECT_NE(linalg.find("linalg.batch_matmul"), std::string::npos) << linalg;
  EXPECT_EQ(linalg.find("quantized"), std::string::npos) << linalg;
  std::vector<int> a = int8Values(2 * 5 * 6, 41, 3), b = int8Values(2 * 6 * 7, 97, 200);
  std::vector<int32_t> got =
      compileAndRun(model, {int8Array({2, 5, 6}, a), int8Array({2, 6, 7}, b)});
  ASSERT_EQ(got.size(), 70u);
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 7; ++j) {
        int64_t want = 0;
        for (int k = 0; k < 6; ++k)
          want += int64_t(a[(n * 5 + i) * 6 + k]) * b[(n * 6 + k) * 7 + j];
        EXPECT_EQ(got[(n * 5 + i) * 7 + j], want) << "at " << n << ", " << i << ", " << j;
      }
}

} // namespace
