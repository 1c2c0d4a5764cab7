//===- BoundsChecksTest.cpp - --check-bounds kernels ----------------------===//
//
// A tosa.gather whose indices are a model input reads wherever they point
// (TOSA leaves an out-of-range index undefined). Built with --check-bounds:
// in-range indices give the gathered values (computed here); an index past
// the values makes the invocation fail with KILN_OUT_OF_RANGE naming the
// dispatch, the binding, the byte offset and the extent (the values'
// binding, 32 bytes), on both devices,
// and the module runs correctly again afterwards. Without --check-bounds
// the artifact carries no report record; C modules are refused.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>

namespace {

const char *kGather =
    "func.func @main(%values: tensor<1x8x1xf32> {kiln.name = \"values\"},\n"
    "                %indices: tensor<1x2xi32> {kiln.name = \"indices\"})\n"
    "    -> (tensor<1x2x1xf32> {kiln.name = \"picked\"}) {\n"
    "  %0 = \"tosa.gather\"(%values, %indices) : (tensor<1x8x1xf32>, tensor<1x2xi32>)"
    " -> tensor<1x2x1xf32>\n"
    "  return %0 : tensor<1x2x1xf32>\n}\n";

kiln::NpyArray values() {
  kiln::NpyArray a;
  a.shape = {1, 8, 1};
  a.data.resize(32);
  for (int i = 0; i < 8; ++i) {
    float v = 10.0f * static_cast<float>(i);
    std::memcpy(a.data.data() + 4 * i, &v, 4);
  }
  return a;
}

kiln::NpyArray indices(int32_t a, int32_t b) {
  kiln::NpyArray x;
  x.dtype = "<i4";
  x.shape = {1, 2};
  x.data.resize(8);
  std::memcpy(x.data.data(), &a, 4);
  std::memcpy(x.data.data() + 4, &b, 4);
  return x;
}

std::vector<uint8_t> compileGather(bool checked, const kiln::test::TempDir &tmp) {
  std::string path = tmp.file("gather.mlir");
  std::ofstream(path) << kGather;
  kiln::CompileOptions options;
  options.checkBounds = checked;
  auto artifact = kiln::compileArtifact(path, options);
  EXPECT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  return artifact ? *artifact : std::vector<uint8_t>();
}

TEST(BoundsChecks, InRangeGathersAndOutOfRangeIsReported) {
  kiln::test::TempDir tmp;
  std::vector<uint8_t> artifact = compileGather(true, tmp);
  ASSERT_FALSE(artifact.empty());
  for (const char *device : {"local-sync", "local-task"}) {
    kiln::RunOptions options;
    options.device = device;
    options.threads = 2;
    auto ok = kiln::runArtifact(artifact, {values(), indices(3, 7)}, options);
    ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
    const float *picked = reinterpret_cast<const float *>(ok->outputValues.at(0).data.data());
    EXPECT_EQ(picked[0], 30.0f);
    EXPECT_EQ(picked[1], 70.0f);
    // Index 100: byte 400 of the 32-byte values binding.
    auto bad = kiln::runArtifact(artifact, {values(), indices(1, 100)}, options);
    ASSERT_FALSE(static_cast<bool>(bad)) << device;
    std::string message = llvm::toString(bad.takeError());
    EXPECT_NE(message.find("KILN_OUT_OF_RANGE: main_dispatch_0"), std::string::npos) << message;
    // The values are the dispatch's 32-byte binding (its index is the
    // dispatch's own argument order).
    EXPECT_TRUE(std::regex_search(message, std::regex("read binding [0-9] at byte 400 of 32 \\(4 bytes\\)")))
        << message;
    // A negative index: before the binding.
    auto before = kiln::runArtifact(artifact, {values(), indices(-2, 0)}, options);
    ASSERT_FALSE(static_cast<bool>(before)) << device;
    message = llvm::toString(before.takeError());
    EXPECT_NE(message.find("at byte -8 of 32"), std::string::npos) << message;
    // The report is cleared: the next run is fine.
    auto again = kiln::runArtifact(artifact, {values(), indices(0, 1)}, options);
    EXPECT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  }
}

TEST(BoundsChecks, OnlyCheckedBuildsCarryTheReportAndCModulesAreRefused) {
  kiln::test::TempDir tmp;
  std::vector<uint8_t> plain = compileGather(false, tmp), checked = compileGather(true, tmp);
  auto has = [](const std::vector<uint8_t> &bytes) {
    const std::string symbol = "__kiln_bounds_report";
    return std::search(bytes.begin(), bytes.end(), symbol.begin(), symbol.end()) != bytes.end();
  };
  EXPECT_FALSE(has(plain));
  EXPECT_TRUE(has(checked));
  EXPECT_GT(checked.size(), plain.size());
  EXPECT_TRUE(kiln::test::kilnFailsCleanly(
      "compile " + kiln::test::shellQuote(tmp.file("gather.mlir")) +
          " --check-bounds --output-format=c-module -o " + kiln::test::shellQuote(tmp.file("m")),
      {"--check-bounds", "C modules are not supported"}));
}

// kiln inspect says whether the kernels are bounds-checked, from the code
// itself (its exported report record), so a stripped artifact says it too.
TEST(BoundsChecks, InspectSaysWhetherKernelsAreChecked) {
  using kiln::test::shellQuote;
  kiln::test::TempDir tmp;
  std::string model = tmp.file("gather.mlir");
  std::ofstream(model) << kGather;
  for (const std::string &flags : {"", " --check-bounds", " --check-bounds --profile=stripped"}) {
    std::string artifact = tmp.file("g.kiln");
    kiln::test::CommandResult built = kiln::test::runCommand(
        kiln::test::kilnBinary() + " compile " + shellQuote(model) + flags + " -o " + shellQuote(artifact));
    ASSERT_EQ(built.exitCode, 0) << built.output;
    bool checked = !flags.empty();
    kiln::test::CommandResult json =
        kiln::test::runCommand(kiln::test::kilnBinary() + " inspect " + shellQuote(artifact) + " --json");
    ASSERT_EQ(json.exitCode, 0) << json.output;
    EXPECT_NE(json.output.find(checked ? "\"bounds_checked\": true" : "\"bounds_checked\": false"),
              std::string::npos)
        << flags << json.output;
    kiln::test::CommandResult text =
        kiln::test::runCommand(kiln::test::kilnBinary() + " inspect " + shellQuote(artifact));
    EXPECT_EQ(text.output.find("kernels bounds-checked") != std::string::npos, checked) << flags << text.output;
  }
  // A model inspected with --check-bounds says so in its text.
  for (bool checked : {false, true}) {
    std::string flag = checked ? " --check-bounds" : "";
    kiln::test::CommandResult text =
        kiln::test::runCommand(kiln::test::kilnBinary() + " inspect " + shellQuote(model) + flag);
    ASSERT_EQ(text.exitCode, 0) << text.output;
    EXPECT_EQ(text.output.find("kernels   bounds-checked (--check-bounds)") != std::string::npos,
              checked)
        << text.output;
  }
}

} // namespace
