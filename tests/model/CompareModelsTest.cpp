//===- CompareModelsTest.cpp - What quantization costs -------------------===//
//
// Issue 30, item 11: kiln/Compare.h against hand-computed numbers, a model
// against itself, and float models against their quantized twins
// (tests/data/quant_twins, written by tests/reference/make_quant_twins.py):
//  - Identity (float) vs tests/data/ops_int8/quantize_float_to_int8 (QUANTIZE
//    to int8, scale 0.02, zero point 5): dequantized, the int8 output differs
//    from its input by the rounding alone, at most 0.02 / 2;
//  - Identity vs .../dequantize_int8 (int8 input, scale 0.037, zero point
//    -9): the compare quantizes the random reals for the int8 model, so the
//    error is at most 0.037 / 2 again;
//  - a float Gemm classifier vs its ONNX QDQ int8 twin: the metrics
//    gemm_meta.json gives, computed there in float64 on the same inputs.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/Compare.h"
#include "kiln/Compiler.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>

using namespace kiln::test;

namespace {

std::string dataPath(const std::string &relative) {
  return std::string(KILN_TEST_DATA_DIR) + "/" + relative;
}

kiln::NpyArray floats(std::vector<int64_t> shape, const std::vector<float> &values) {
  kiln::NpyArray a;
  a.dtype = "<f4";
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

kiln::NpyArray int8s(std::vector<int64_t> shape, const std::vector<int8_t> &values) {
  kiln::NpyArray a;
  a.dtype = "|i1";
  a.shape = std::move(shape);
  a.data.assign(values.begin(), values.end());
  return a;
}

kiln::IOInfo infoOf(const kiln::NpyArray &a, kiln::IOQuantization q = {}) {
  kiln::IOInfo info;
  info.name = "y";
  info.dtype = a.dtype;
  info.shape = a.shape;
  info.quantization = std::move(q);
  return info;
}

std::vector<uint8_t> compiled(const std::string &model) {
  auto built = kiln::compile(model, kiln::CompileOptions());
  if (!built) {
    ADD_FAILURE() << model << ": " << llvm::toString(built.takeError());
    return {};
  }
  return built->artifact;
}

} // namespace

TEST(OutputMetrics, HandComputed) {
  // a = [1, 2, 3], b = [1, 2, 4]: max 1, RMSE sqrt(1/3), cosine
  // (1 + 4 + 12) / (sqrt(14) sqrt(21)).
  kiln::NpyArray a = floats({3}, {1, 2, 3}), b = floats({3}, {1, 2, 4});
  auto m = kiln::compareOutputSets({{a}}, {{b}}, {infoOf(a)}, {infoOf(b)});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  ASSERT_EQ(m->size(), 1u);
  const kiln::OutputAgreement &r = (*m)[0];
  EXPECT_EQ(r.elements, 3);
  EXPECT_DOUBLE_EQ(r.maxAbsError, 1.0);
  EXPECT_DOUBLE_EQ(r.rmse, std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(r.cosine, 17.0 / (std::sqrt(14.0) * std::sqrt(21.0)));
  // [3] is classifier-like: argmax 2 in both.
  EXPECT_TRUE(r.classifier);
  EXPECT_DOUBLE_EQ(r.top1Agreement, 1.0);
}

TEST(OutputMetrics, DequantizesAndCountsTopOneOverSamples) {
  // b is int8 with scale 0.5, zero point -2: q = [0, 2, 4] is [1, 2, 3].
  kiln::IOQuantization q;
  q.scales = {0.5f};
  q.zeroPoints = {-2};
  kiln::NpyArray a0 = floats({1, 3}, {1, 2, 3}), b0 = int8s({1, 3}, {0, 2, 4});
  // Sample 1: a's argmax is 0, b's (q = [0, 2, 0] -> [1, 2, 1]) is 1.
  kiln::NpyArray a1 = floats({1, 3}, {3, 2, 1}), b1 = int8s({1, 3}, {0, 2, 0});
  auto m = kiln::compareOutputSets({{a0}, {a1}}, {{b0}, {b1}}, {infoOf(a0)}, {infoOf(b0, q)});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const kiln::OutputAgreement &r = (*m)[0];
  EXPECT_TRUE(r.dequantizedB);
  EXPECT_FALSE(r.dequantizedA);
  EXPECT_EQ(r.elements, 6);
  EXPECT_EQ(r.samples, 2);
  // Differences: [0, 0, 0, 2, 0, 0].
  EXPECT_DOUBLE_EQ(r.maxAbsError, 2.0);
  EXPECT_DOUBLE_EQ(r.rmse, std::sqrt(4.0 / 6.0));
  // <a, b> = 14 + 3 + 4 + 1 = 22, |a|^2 = 28, |b|^2 = 14 + 6 = 20.
  EXPECT_DOUBLE_EQ(r.cosine, 22.0 / (std::sqrt(28.0) * std::sqrt(20.0)));
  EXPECT_DOUBLE_EQ(r.top1Agreement, 0.5);
}

TEST(OutputMetrics, PerChannelDequantization) {
  // [2, 2] along dimension 1: column c has scale s[c], zero point z[c].
  kiln::IOQuantization q;
  q.scales = {0.25f, 2.0f};
  q.zeroPoints = {4, -1};
  q.dimension = 1;
  auto v = kiln::realValues(int8s({2, 2}, {8, 1, 0, -1}), q, "y");
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  EXPECT_EQ(*v, (std::vector<double>{1.0, 4.0, -1.0, 0.0}));
  q.dimension = 0;
  q.scales = {1, 1, 1};
  q.zeroPoints = {0, 0, 0};
  auto bad = kiln::realValues(int8s({2, 2}, {0, 0, 0, 0}), q, "y");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "y: 3 quantization channels along dimension 0 of a 2x2 tensor");
}

TEST(OutputMetrics, ZeroVectorsAndNonClassifiers) {
  kiln::NpyArray z = floats({2, 2}, {0, 0, 0, 0}), o = floats({2, 2}, {0, 1, 0, 0});
  auto same = kiln::compareOutputSets({{z}}, {{z}}, {infoOf(z)}, {infoOf(z)});
  ASSERT_TRUE(bool(same));
  EXPECT_EQ((*same)[0].cosine, 1.0);
  EXPECT_FALSE((*same)[0].classifier); // [2, 2] is no classifier
  EXPECT_EQ((*same)[0].top1Agreement, -1.0);
  auto one = kiln::compareOutputSets({{z}}, {{o}}, {infoOf(z)}, {infoOf(o)});
  ASSERT_TRUE(bool(one));
  EXPECT_EQ((*one)[0].cosine, 0.0);
  kiln::NpyArray three = floats({3}, {0, 0, 0});
  auto shapes = kiln::compareOutputSets({{z}}, {{three}}, {infoOf(z)}, {infoOf(z)});
  ASSERT_FALSE(bool(shapes));
  EXPECT_EQ(llvm::toString(shapes.takeError()), "y: shape 2x2 in the first model, 3 in the second");
}

TEST(OutputMetrics, InputsQuantizeAsTfliteDoes) {
  kiln::IOInfo info;
  info.name = "x";
  info.dtype = "|i1";
  info.shape = {5};
  info.quantization.scales = {0.5f};
  info.quantization.zeroPoints = {3};
  // x / 0.5 + 3, rounded half away from zero, clamped to -128..127.
  auto q = kiln::modelInputOf(floats({5}, {0.25f, -0.25f, 1.0f, 100.0f, -100.0f}), info, "x");
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  std::vector<int8_t> got(5);
  std::memcpy(got.data(), q->data.data(), 5);
  EXPECT_EQ(got, (std::vector<int8_t>{4, 2, 5, 127, -128}));
  info.quantization = {};
  auto bad = kiln::modelInputOf(floats({5}, {0, 0, 0, 0, 0}), info, "x");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError())
                .find("x: f32 values for an i8 input without "
                      "quantization"),
            std::string::npos);
}

TEST(CompareModels, ModelWithItselfAgreesExactly) {
  std::vector<uint8_t> a = compiled(dataPath("models/int8/person_detect.tflite"));
  kiln::ModelComparisonOptions options;
  options.samples = 3;
  auto c = kiln::compareModels(a, a, "A", "B", options);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  ASSERT_EQ(c->outputs.size(), 1u);
  const kiln::OutputAgreement &m = c->outputs[0];
  EXPECT_EQ(m.elements, 6); // [1, 2] x 3 samples
  EXPECT_EQ(m.maxAbsError, 0.0);
  EXPECT_EQ(m.rmse, 0.0);
  EXPECT_DOUBLE_EQ(m.cosine, 1.0);
  EXPECT_TRUE(m.classifier);
  EXPECT_EQ(m.top1Agreement, 1.0);
  EXPECT_TRUE(m.dequantizedA && m.dequantizedB);
}

TEST(CompareModels, QuantizeOutputWithinHalfAStep) {
  std::vector<uint8_t> f = compiled(dataPath("quant_twins/identity_4x64.onnx"));
  std::vector<uint8_t> q = compiled(dataPath("ops_int8/quantize_float_to_int8/model.tflite"));
  auto c = kiln::compareModels(f, q, "identity", "quantize", {});
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  const kiln::OutputAgreement &m = c->outputs[0];
  EXPECT_TRUE(m.dequantizedB);
  EXPECT_EQ(m.elements, 4 * 64 * 8);
  EXPECT_LE(m.maxAbsError, 0.02 / 2 * (1 + 1e-5));
  // Rounding errors spread over the step: the RMSE of a uniform error on
  // [-s/2, s/2] is s / sqrt(12) = 0.00577.
  EXPECT_NEAR(m.rmse, 0.02 / std::sqrt(12.0), 0.0006);
  EXPECT_GT(m.maxAbsError, 0.009); // 2048 samples reach close to the bound
}

TEST(CompareModels, DequantizeInputWithinHalfAStep) {
  std::vector<uint8_t> f = compiled(dataPath("quant_twins/identity_4x64.onnx"));
  std::vector<uint8_t> d = compiled(dataPath("ops_int8/dequantize_int8/model.tflite"));
  auto c = kiln::compareModels(f, d, "identity", "dequantize", {});
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  const kiln::OutputAgreement &m = c->outputs[0];
  EXPECT_FALSE(m.dequantizedB); // a float output; its int8 input was quantized
  EXPECT_LE(m.maxAbsError, 0.037 / 2 * (1 + 1e-5));
  EXPECT_NEAR(m.rmse, 0.037 / std::sqrt(12.0), 0.0011);
}

TEST(CompareModels, GemmAndItsQdqTwinAsComputedInFloat64) {
  auto text = llvm::MemoryBuffer::getFile(dataPath("quant_twins/gemm_meta.json"));
  ASSERT_TRUE(bool(text));
  auto meta = llvm::json::parse((*text)->getBuffer());
  ASSERT_TRUE(bool(meta));
  const llvm::json::Object &root = *meta->getAsObject();
  const llvm::json::Object &want = *root.getObject("expected");
  const double outputStep = *root.getNumber("output_scale");
  std::vector<uint8_t> f = compiled(dataPath("quant_twins/gemm_float.onnx"));
  std::vector<uint8_t> q = compiled(dataPath("quant_twins/gemm_qdq.onnx"));
  kiln::ModelComparisonOptions options;
  options.samples = *root.getInteger("samples");
  options.seed = static_cast<uint64_t>(*root.getInteger("seed"));
  auto c = kiln::compareModels(f, q, "float", "qdq", options);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  const kiln::OutputAgreement &m = c->outputs[0];
  EXPECT_LE(m.maxAbsError, *root.getNumber("max_abs_error_bound"));
  // Kiln's integer kernels may round a value on a tie the other way: one
  // output step at most.
  EXPECT_NEAR(m.maxAbsError, *want.getNumber("max_abs_error"), outputStep);
  EXPECT_NEAR(m.rmse, *want.getNumber("rmse"), outputStep / 4);
  EXPECT_NEAR(m.cosine, *want.getNumber("cosine"), 1e-4);
  EXPECT_TRUE(m.classifier);
  EXPECT_DOUBLE_EQ(m.top1Agreement, *want.getNumber("top1_agreement"));
}

TEST(CompareModels, CliSelfComparisonAndJson) {
  const std::string model = dataPath("models/int8/person_detect.tflite");
  CommandResult r = runCommand(kilnBinary() + " validate " + shellQuote(model) +
                               " --compare-with=" + shellQuote(model) + " --samples=2 --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(json)) << r.output;
  const llvm::json::Object &root = *json->getAsObject();
  EXPECT_EQ(root.getInteger("samples"), 2);
  const llvm::json::Object &out = *(*root.getArray("outputs"))[0].getAsObject();
  EXPECT_EQ(out.getNumber("max_abs_error"), 0.0);
  EXPECT_EQ(out.getNumber("rmse"), 0.0);
  EXPECT_EQ(out.getNumber("cosine"), 1.0);
  EXPECT_EQ(out.getNumber("top1_agreement"), 1.0);
  r = runCommand(kilnBinary() + " validate " + shellQuote(model) +
                 " --compare-with=" + shellQuote(model) + " --samples=2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("compared on 2 random samples (seed 1)\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("0.0000e+00   0.0000e+00  1.00000000  1.0000  (dequantized: both)"),
            std::string::npos)
      << r.output;
}

TEST(CompareModels, CliRefusesDifferentSignatures) {
  EXPECT_TRUE(kilnFailsCleanly(
      "validate " + shellQuote(dataPath("models/int8/person_detect.tflite")) +
          " --compare-with=" + shellQuote(dataPath("quant_twins/identity_4x64.onnx")),
      {"input 0 is 1x96x96x1xi8 'input' in "}));
}

TEST(CompareModels, CliReadsInputFiles) {
  // Two samples of [4, 64] real values, stacked.
  TempDir dir;
  std::vector<float> values(2 * 4 * 64);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir.file("input_0.npy"), floats({2, 4, 64}, values))));
  const std::string f = dataPath("quant_twins/identity_4x64.onnx");
  CommandResult r =
      runCommand(kilnBinary() + " validate " + shellQuote(f) + " " + shellQuote(dir.path()) +
                 " --json --compare-with=" +
                 shellQuote(dataPath("ops_int8/quantize_float_to_int8/model.tflite")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(json)) << r.output;
  EXPECT_EQ(json->getAsObject()->getInteger("samples"), 2);
  // Every value is a multiple of 0.25 = 12.5 steps of 0.02: off by half a
  // step (0.01) or none (0.25 x even). Round half away from zero.
  const llvm::json::Object &out = *(*json->getAsObject()->getArray("outputs"))[0].getAsObject();
  EXPECT_NEAR(*out.getNumber("max_abs_error"), 0.01, 1e-6);
}
