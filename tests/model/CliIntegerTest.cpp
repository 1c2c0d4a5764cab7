//===- CliIntegerTest.cpp - kiln run / validate on int8 and uint8 I/O -----===//
//
// Issue 12, item 7: `kiln run` and `kiln validate` read and write |i1 and
// |u1 .npy files and DIMSxi8= / DIMSxu8= literals, and validate reports
// integer outputs in LSB with exact equality as the default criterion.
// The model is tests/data/mlir/int8_io.mlir: sum = clamp(a + b, -128, 127)
// on i8 and c_out = c on u8; expected values are computed here by hand.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <filesystem>

using namespace kiln::test;

namespace {

std::string int8Model() {
  return shellQuote(std::string(KILN_TEST_DATA_DIR) + "/mlir/int8_io.mlir");
}

/// An array of `dtype` ("|i1" or "|u1") holding `values` (each in range).
kiln::NpyArray bytesArray(const char *dtype, std::vector<int64_t> shape,
                          const std::vector<int> &values) {
  kiln::NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  for (int v : values)
    a.data.push_back(static_cast<uint8_t>(v));
  return a;
}

std::vector<int64_t> elementsOf(const kiln::NpyArray &a) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < a.numElements(); ++i)
    out.push_back(kiln::integerElement(a, i));
  return out;
}

// The literals used below and the sums clamp(a + b, -128, 127).
const char *kA = "100,-100,5,-5,127,-128";
const char *kB = "100,-100,3,2,1,-1";
const std::vector<int> kSum = {127, -128, 8, -3, 127, -128};
const std::vector<int> kC = {0, 1, 200, 255};

TEST(CliInteger, LiteralsRunAndOutputsAreIntegerNpy) {
  TempDir tmp;
  CommandResult r = runCommand(kilnBinary() + " run " + int8Model() + " --input=2x3xi8=" + kA +
                               " --input=2x3xi8=" + kB + " --input=4xu8=0,1,200,255 --output=@" +
                               tmp.file("sum.npy") + " --output=@" + tmp.file("c.npy"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("output 0 'sum': 2x3xi8 min -128 max 127"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("output 1 'c_out': 4xu8 min 0 max 255"), std::string::npos) << r.output;
  kiln::NpyArray sum = loadNpy(tmp.file("sum.npy")), c = loadNpy(tmp.file("c.npy"));
  EXPECT_EQ(sum.dtype, "|i1");
  EXPECT_EQ(sum.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elementsOf(sum), std::vector<int64_t>(kSum.begin(), kSum.end()));
  EXPECT_EQ(c.dtype, "|u1");
  EXPECT_EQ(elementsOf(c), std::vector<int64_t>(kC.begin(), kC.end()));
}

// A broadcast literal, .npy files of |i1 and |u1 as inputs, and --output=-.
TEST(CliInteger, BroadcastLiteralsAndNpyInputs) {
  TempDir tmp;
  ASSERT_FALSE(bool(kiln::writeNpyFile(tmp.file("b.npy"),
                                       bytesArray("|i1", {2, 3}, {-5, -5, -5, 120, 120, -128}))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(tmp.file("c.npy"), bytesArray("|u1", {4}, {9, 8, 7, 250}))));
  CommandResult r = runCommand(kilnBinary() + " run " + int8Model() + " --input=2x3xi8=3" +
                               " --input=@" + tmp.file("b.npy") + " --input=@" +
                               tmp.file("c.npy") + " --output=- --output=-");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // 3 + (-5, -5, -5, 120, 120, -128) = (-2, -2, -2, 123, 123, -125).
  EXPECT_NE(r.output.find("\n-2 -2 -2\n123 123 -125\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n9 8 7 250\n"), std::string::npos) << r.output;
}

TEST(CliInteger, WrongTypesAndRangesAreOneError) {
  TempDir tmp;
  const std::string model = int8Model();
  const std::string good = " --input=2x3xi8=1 --input=2x3xi8=2 --input=4xu8=3";
  ASSERT_FALSE(bool(kiln::writeNpyFile(tmp.file("f.npy"), [] {
    kiln::NpyArray f;
    f.shape = {2, 3};
    f.data.assign(24, 0);
    return f;
  }())));
  ASSERT_FALSE(bool(kiln::writeNpyFile(tmp.file("i.npy"), bytesArray("|i1", {4}, {1, 2, 3, 4}))));
  EXPECT_TRUE(kilnFailsCleanly("run " + model + " --input=@" + tmp.file("f.npy") +
                                   " --input=2x3xi8=2 --input=4xu8=3",
                               {"input 0 'a' expects 2x3xi8, got 2x3xf32"}));
  EXPECT_TRUE(kilnFailsCleanly("run " + model + " --input=2x3xi8=1 --input=2x3xi8=2 --input=@" +
                                   tmp.file("i.npy"),
                               {"input 2 'c' expects 4xu8, got 4xi8"}));
  // Literals out of their type's range are usage errors (status 2).
  for (auto [spec, needle] : {std::pair<std::string, std::string>{"4xu8=256", "'256' is not an integer from 0 to 255 (u8)"},
                              {"4xu8=-1", "'-1' is not an integer from 0 to 255 (u8)"},
                              {"2x3xi8=-129", "'-129' is not an integer from -128 to 127 (i8)"},
                              {"2x3xi8=1.5", "'1.5' is not an integer from -128 to 127 (i8)"}}) {
    CommandResult r = runCommand(kilnBinary() + " run " + model + " --input=" + spec);
    EXPECT_EQ(r.exitCode, 2) << spec << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  CommandResult ok = runCommand(kilnBinary() + " run " + model + good);
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
}

/// Writes one int8_io sample into `dir`: inputs kA, kB, kC and references
/// kSum (with `skew` added to the elements `skewAt`) and kC.
void writeIntegerSample(const std::string &dir, const std::vector<std::pair<int, int>> &skews = {}) {
  std::filesystem::create_directories(dir);
  std::vector<int> sum = kSum;
  for (auto [at, by] : skews)
    sum[at] += by;
  const std::vector<int> a = {100, -100, 5, -5, 127, -128}, b = {100, -100, 3, 2, 1, -1};
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_0.npy", bytesArray("|i1", {2, 3}, a))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_1.npy", bytesArray("|i1", {2, 3}, b))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_2.npy", bytesArray("|u1", {4}, kC))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_0.npy", bytesArray("|i1", {2, 3}, sum))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_1.npy", bytesArray("|u1", {4}, kC))));
}

/// The overall metrics of output `k` in a `kiln validate --json` document.
const llvm::json::Object *overallOutput(const llvm::json::Value &doc, size_t k) {
  const llvm::json::Array *outputs = doc.getAsObject()->getArray("outputs");
  return outputs && outputs->size() > k ? (*outputs)[k].getAsObject() : nullptr;
}

TEST(CliInteger, ValidateReportsLsbAndNeedsExactEquality) {
  TempDir tmp;
  const std::string model = int8Model(), dir = tmp.file("samples");
  writeIntegerSample(dir);
  CommandResult ok = runCommand(kilnBinary() + " validate " + model + " " + dir);
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
  EXPECT_NE(ok.output.find("0 LSB"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("PASS: every element of 1 sample(s) equal to the reference"),
            std::string::npos)
      << ok.output;

  // Reference off by +2 at element 2 (10 for 8) and -1 at element 3 (-4 for
  // -3): 2 LSB at most, 2 elements differ; exact equality fails.
  writeIntegerSample(dir, {{2, 2}, {3, -1}});
  CommandResult off = runCommand(kilnBinary() + " validate " + model + " " + dir + " --json");
  EXPECT_EQ(off.exitCode, 3) << off.output;
  auto json = llvm::json::parse(off.output);
  ASSERT_TRUE(bool(json)) << off.output;
  const llvm::json::Object *sum = overallOutput(*json, 0), *c = overallOutput(*json, 1);
  ASSERT_TRUE(sum && c) << off.output;
  EXPECT_EQ(sum->getBoolean("integer"), true);
  EXPECT_EQ(sum->getNumber("max_abs_error"), 2.0);
  EXPECT_EQ(sum->getInteger("differing"), 2);
  EXPECT_EQ(sum->getInteger("outside_tolerance"), 2);
  EXPECT_EQ(c->getNumber("max_abs_error"), 0.0);
  EXPECT_EQ(c->getInteger("differing"), 0);
  EXPECT_EQ(json->getAsObject()->getObject("tolerance")->getInteger("lsb"), 0);

  CommandResult text = runCommand(kilnBinary() + " validate " + model + " " + dir);
  EXPECT_EQ(text.exitCode, 3) << text.output;
  EXPECT_NE(text.output.find("2 LSB"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("FAIL: every element of 1 sample(s) equal to the reference does "
                             "not hold"),
            std::string::npos)
      << text.output;
  // 1 LSB allowed: element 2 (2 LSB) still outside; 2 LSB: passes.
  CommandResult one = runCommand(kilnBinary() + " validate " + model + " " + dir +
                                 " --json --tolerance-lsb=1");
  EXPECT_EQ(one.exitCode, 3) << one.output;
  auto oneJson = llvm::json::parse(one.output);
  ASSERT_TRUE(bool(oneJson)) << one.output;
  EXPECT_EQ(overallOutput(*oneJson, 0)->getInteger("outside_tolerance"), 1);
  EXPECT_EQ(overallOutput(*oneJson, 0)->getInteger("differing"), 2);
  CommandResult two =
      runCommand(kilnBinary() + " validate " + model + " " + dir + " --tolerance-lsb=2");
  EXPECT_EQ(two.exitCode, 0) << two.output;
  EXPECT_NE(two.output.find("PASS: every element of 1 sample(s) within 2 LSB of the reference"),
            std::string::npos)
      << two.output;
  CommandResult negative =
      runCommand(kilnBinary() + " validate " + model + " " + dir + " --tolerance-lsb=-1");
  EXPECT_EQ(negative.exitCode, 2) << negative.output;
  EXPECT_NE(negative.output.find("--tolerance-lsb=-1 must be an integer >= 0"), std::string::npos)
      << negative.output;
}

TEST(CliInteger, ValidateNamesAReferenceOfTheWrongType) {
  TempDir tmp;
  const std::string dir = tmp.file("samples");
  writeIntegerSample(dir);
  // A float reference for the i8 output, then a uint8 one: each named.
  kiln::NpyArray f;
  f.shape = {2, 3};
  f.data.assign(24, 0);
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_0.npy", f)));
  EXPECT_TRUE(kilnFailsCleanly("validate " + int8Model() + " " + dir,
                               {"output_0.npy: 2x3xf32; the model's output 0 'sum' is 2x3xi8"}));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_0.npy",
                                       bytesArray("|u1", {2, 3}, {1, 2, 3, 4, 5, 6}))));
  EXPECT_TRUE(kilnFailsCleanly("validate " + int8Model() + " " + dir,
                               {"output_0.npy: 2x3xu8; the model's output 0 'sum' is 2x3xi8"}));
}

// Build flags with an artifact, which is already built, are refused (they
// were silently ignored): validate, run and inspect say so in one line.
TEST(CliInteger, BuildFlagsWithAnArtifactAreRefused) {
  TempDir tmp;
  const std::string dir = tmp.file("samples");
  writeIntegerSample(dir);
  const std::string artifact = tmp.file("sum.kiln");
  CommandResult built = runCommand(kilnBinary() + " compile " + int8Model() + " -o " + shellQuote(artifact));
  ASSERT_EQ(built.exitCode, 0) << built.output;
  for (const std::string &command : {"validate " + shellQuote(artifact) + " " + dir,
                                     "run " + shellQuote(artifact), "inspect " + shellQuote(artifact)})
    for (const char *flag : {" --check-bounds", " --profile=stripped", " --fusion=false"})
      EXPECT_TRUE(kilnFailsCleanly(command + flag, {"sum.kiln is already compiled; compile options"}))
          << command << flag;
}

// A real int8 model end to end: micro_speech_quantized (int8 in, int8
// SOFTMAX out) against TensorFlow Lite 2.9's outputs in
// tests/data/models/int8/micro_speech_quantized (make_int8_expected.mjs).
TEST(CliInteger, ValidateRealInt8ModelAgainstTFLite) {
  const std::string dir = std::string(KILN_TEST_DATA_DIR) + "/models/int8";
  CommandResult r = runCommand(kilnBinary() + " validate " +
                               shellQuote(dir + "/micro_speech_quantized.tflite") + " " +
                               shellQuote(dir + "/micro_speech_quantized") + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(json)) << r.output;
  const llvm::json::Object *out = overallOutput(*json, 0);
  ASSERT_TRUE(out) << r.output;
  EXPECT_EQ(out->getBoolean("integer"), true);
  EXPECT_EQ(out->getInteger("elements"), 4);
  EXPECT_EQ(out->getInteger("differing"), 0);
  EXPECT_EQ(out->getNumber("max_abs_error"), 0.0);
}

} // namespace
