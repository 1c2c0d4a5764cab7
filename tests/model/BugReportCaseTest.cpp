//===- BugReportCaseTest.cpp - Models from public bug reports -------------===//
//
// tests/data/cases holds small models from public bug reports against
// TFLite, ONNX Runtime, TVM and IREE, as they were handed to Kiln
// (README.md there). Each either matches its expected_K.npy (TFLite's
// output, or an independent double-precision computation where TFLite is
// wrong) within 1e-4 x (1 + |expected|) on both devices, or is one Kiln
// refuses on purpose, with one clear error line.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include <algorithm>
#include <filesystem>
#include <map>

using namespace kiln::test;

namespace {

std::string caseDir(const std::string &name) {
  return std::string(KILN_TEST_DATA_DIR) + "/cases/" + name;
}

/// The cases Kiln refuses, and what the one error line must say.
const std::map<std::string, std::vector<std::string>> &refused() {
  static const std::map<std::string, std::vector<std::string>> cases = {
      // 1 x 100000 x 100000 x 8 floats: above the 4 GiB buffer limit.
      {"user_huge_intermediate", {"tensor 'out'", "320000000000 bytes", "limit"}},
      // Zero-size tensors: refused naming the tensor and the dimension.
      {"user_zero_dim_1x0x4x3", {"tensor 'input'", "dimension 1 is 0"}},
      {"strided_slice_empty_result", {"STRIDED_SLICE", "dimension 0 is 0"}},
  };
  return cases;
}

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(caseDir(""), ec))
    if (e.is_directory())
      cases.push_back(e.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

class BugReportCase : public ::testing::TestWithParam<std::string> {};

TEST_P(BugReportCase, MatchesExpectedOrIsRefusedCleanly) {
  const std::string dir = caseDir(GetParam());
  const std::string model = dir + "/model.tflite";
  if (auto it = refused().find(GetParam()); it != refused().end()) {
    for (const char *cmd : {"compile", "inspect", "run"}) {
      std::string args = std::string(cmd) + " " + shellQuote(model);
      if (std::string(cmd) == "compile")
        args += " -o /dev/null";
      ::testing::AssertionResult clean = kilnFailsCleanly(args, {});
      EXPECT_TRUE(clean) << cmd;
      CommandResult r = runCommand(kilnBinary() + " " + args);
      for (const std::string &needle : it->second)
        EXPECT_NE(r.output.find(needle), std::string::npos) << cmd << ": " << r.output;
    }
    return;
  }
  std::vector<std::string> expected = numberedFiles(dir, "expected");
  ASSERT_FALSE(expected.empty()) << dir << " has no expected_0.npy and is not listed as refused";
  std::vector<kiln::NpyArray> inputs;
  for (const std::string &path : numberedFiles(dir, "input"))
    inputs.push_back(loadNpy(path));
  auto artifact = kiln::compileArtifact(model, kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  std::vector<kiln::NpyArray> want;
  for (const std::string &path : expected)
    want.push_back(loadNpy(path));
  EXPECT_TRUE(matchesOnBothDevices(*artifact, inputs, want));
}

TEST(BugReportCases, EveryCaseIsHere) { EXPECT_EQ(listCases().size(), 9u); }

INSTANTIATE_TEST_SUITE_P(Cases, BugReportCase, ::testing::ValuesIn(listCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
