//===- FixValueTest.cpp - kiln compile --fix-value=INPUT=VALUE ------------===//
//
// Inputs fixed to values on the hand-built ONNX models of
// tests/data/onnx/fix_value/ (make_models.py says what they compute):
// rate.onnx's Ifs on `sr` (an int64 sample rate) and `flag` (a bool) fold
// once the inputs are fixed; the fixed inputs leave the artifact's
// signature, `kiln inspect` lists them under "fixed" (text and JSON, also
// stripped), and `kiln run` without them gives the outputs the model's
// definition gives (computed here by hand from make_models.py's formulas).
// Every bad --fix-value is one error line: exit status 2 for the flag's
// syntax, 1 for a value that does not suit the model.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/Npy.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace kiln::test;

namespace {

std::string fixValueModel(const std::string &name) {
  return shellQuote(std::string(KILN_TEST_DATA_DIR) + "/onnx/fix_value/" + name);
}

/// Runs kiln with `args`: exit `status`, one "error:" line, every needle.
void expectOneError(const std::string &args, std::initializer_list<const char *> needles,
                    int status) {
  CommandResult r = runCommand(kilnBinary() + " " + args + " 2>&1");
  EXPECT_EQ(r.exitCode, status) << args << "\n" << r.output;
  for (const char *needle : needles)
    EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n"
                                                        << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.rfind("kiln: error: ", 0), 0u) << r.output;
}

std::vector<float> floatsOf(const std::string &path, const std::vector<int64_t> &shape) {
  kiln::NpyArray a = loadNpy(path);
  EXPECT_EQ(a.shape, shape) << path;
  EXPECT_EQ(a.dtype, "<f4") << path;
  const float *f = reinterpret_cast<const float *>(a.data.data());
  return std::vector<float>(f, f + a.data.size() / sizeof(float));
}

const std::vector<float> kX = {-3, -2, -1, 1, 2, 3};
const std::vector<float> kW = {0.5f, -1, 2};
const char *kXLiteral = "--input=2x3xf32=-3,-2,-1,1,2,3";
const char *kWLiteral = "--input=3xf32=0.5,-1,2";

/// rate.onnx's y and z by make_models.py's definition, for sr and flag.
void rateByHand(int64_t sr, bool flag, std::vector<float> &y, std::vector<float> &z) {
  y.clear();
  z.clear();
  for (int i = 0; i < 6; ++i) {
    y.push_back(kX[i] * (sr == 16000 ? 2.0f : 3.0f) + kW[i % 3]);
    z.push_back((flag ? std::max(kX[i], 0.0f) : -kX[i]) + float(sr) / 1000.0f);
  }
}

llvm::json::Value inspectJson(const std::string &args) {
  CommandResult r = runCommand(kilnBinary() + " inspect " + args + " --json");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  auto parsed = llvm::json::parse(r.output);
  EXPECT_TRUE(static_cast<bool>(parsed)) << r.output;
  return parsed ? std::move(*parsed) : llvm::json::Value(nullptr);
}

std::vector<std::string> namesOf(const llvm::json::Array *tensors) {
  std::vector<std::string> names;
  if (tensors)
    for (const llvm::json::Value &t : *tensors)
      names.push_back(t.getAsObject()->getString("name").value_or("").str());
  return names;
}

TEST(Cli, FixValueFoldsTheIfsAndLeavesTheSignature) {
  TempDir tmp;
  struct Case {
    int64_t sr;
    bool flag;
  } cases[] = {{16000, true}, {8000, false}};
  for (const Case &c : cases) {
    SCOPED_TRACE("sr=" + std::to_string(c.sr));
    std::string artifact = tmp.file("rate" + std::to_string(c.sr) + ".kiln");
    std::string fixes = " --fix-value=sr=" + std::to_string(c.sr) +
                        " --fix-value=flag=" + (c.flag ? "true" : "false");
    CommandResult compiled = runCommand(kilnBinary() + " compile " + fixValueModel("rate.onnx") +
                                        fixes + " -o " + artifact);
    ASSERT_EQ(compiled.exitCode, 0) << compiled.output;
    // The artifact takes x and w only, in the model's order.
    CommandResult run =
        runCommand(kilnBinary() + " run " + artifact + " " + kXLiteral + " " + kWLiteral +
                   " --output=@" + tmp.file("y.npy") + " --output=@" + tmp.file("z.npy"));
    ASSERT_EQ(run.exitCode, 0) << run.output;
    std::vector<float> y, z;
    rateByHand(c.sr, c.flag, y, z);
    EXPECT_EQ(floatsOf(tmp.file("y.npy"), {2, 3}), y);
    std::vector<float> gotZ = floatsOf(tmp.file("z.npy"), {2, 3});
    ASSERT_EQ(gotZ.size(), z.size());
    for (size_t i = 0; i < z.size(); ++i)
      EXPECT_NEAR(gotZ[i], z[i], 1e-6f * (1 + std::fabs(z[i]))) << i;
    // Too few inputs: the count names x and w, not the fixed ones.
    CommandResult few = runCommand(kilnBinary() + " run " + artifact + " " + kXLiteral + " 2>&1");
    EXPECT_EQ(few.exitCode, 1) << few.output;
    EXPECT_NE(few.output.find("takes 2 input(s), 1 given"), std::string::npos) << few.output;
    EXPECT_EQ(few.output.find("'sr'"), std::string::npos) << few.output;
    // `kiln run MODEL` compiles with the same flags in memory.
    CommandResult inMemory = runCommand(kilnBinary() + " run " + fixValueModel("rate.onnx") +
                                        fixes + " " + kXLiteral + " " + kWLiteral + " --output=@" +
                                        tmp.file("y2.npy") + " --output=@" + tmp.file("z2.npy"));
    ASSERT_EQ(inMemory.exitCode, 0) << inMemory.output;
    EXPECT_EQ(floatsOf(tmp.file("y2.npy"), {2, 3}), y);
  }
}

TEST(Cli, FixValueInspectListsTheFixedInputs) {
  TempDir tmp;
  const std::string fixes = " --fix-value=sr=16000 --fix-value=flag=1 --fix-value=w=[0.5,-1,2]";
  for (const char *profile : {"default", "stripped"}) {
    SCOPED_TRACE(profile);
    std::string artifact = tmp.file(std::string(profile) + ".kiln");
    CommandResult c = runCommand(kilnBinary() + " compile " + fixValueModel("rate.onnx") + fixes +
                                 " --profile=" + profile + " -o " + artifact);
    ASSERT_EQ(c.exitCode, 0) << c.output;
    CommandResult text = runCommand(kilnBinary() + " inspect " + artifact);
    ASSERT_EQ(text.exitCode, 0) << text.output;
    for (const char *row :
         {"input 0   'x' 2x3xf32, 24 bytes",
          "fixed     'sr' int64 [] = 16000 (--fix-value; not an input of the artifact)",
          "fixed     'w' float32 [3] = [0.5,-1,2] (--fix-value",
          "fixed     'flag' bool [] = 1 (--fix-value"})
      EXPECT_NE(text.output.find(row), std::string::npos) << "missing '" << row << "' in\n"
                                                          << text.output;
    EXPECT_EQ(text.output.find("input 1 "), std::string::npos) << text.output;
    llvm::json::Value json = inspectJson(artifact);
    const llvm::json::Object *a = json.getAsObject()->getObject("artifact");
    ASSERT_TRUE(a);
    EXPECT_EQ(namesOf(a->getArray("inputs")), std::vector<std::string>{"x"});
    const llvm::json::Array *fixed = a->getArray("fixed_values");
    ASSERT_TRUE(fixed && fixed->size() == 3);
    // In the model's input order: sr (1), w (2), flag (3).
    EXPECT_EQ(namesOf(fixed), (std::vector<std::string>{"sr", "w", "flag"}));
    const llvm::json::Object *w = (*fixed)[1].getAsObject();
    EXPECT_EQ(w->getString("element_type").value_or(""), "float32");
    EXPECT_TRUE(*w->getArray("shape") == llvm::json::Array({3}));
    EXPECT_TRUE(*w->getArray("values") == llvm::json::Array({0.5, -1, 2}));
    EXPECT_EQ((*fixed)[0].getAsObject()->getArray("values")->front().getAsInteger(), 16000);
  }
  // The model's plan lists them the same way, before any artifact.
  CommandResult model = runCommand(kilnBinary() + " inspect " + fixValueModel("rate.onnx") + fixes);
  ASSERT_EQ(model.exitCode, 0) << model.output;
  EXPECT_NE(model.output.find("fixed     'sr' int64 [] = 16000"), std::string::npos)
      << model.output;
  llvm::json::Value json = inspectJson(fixValueModel("rate.onnx") + fixes);
  const llvm::json::Object *signature = json.getAsObject()->getObject("signature");
  ASSERT_TRUE(signature);
  EXPECT_EQ(namesOf(signature->getArray("inputs")), std::vector<std::string>{"x"});
  EXPECT_EQ(namesOf(signature->getArray("fixed_values")),
            (std::vector<std::string>{"sr", "w", "flag"}));
  // Without fixed values the JSON has no such key (unchanged output).
  llvm::json::Value plain = inspectJson(fixValueModel("scale.onnx"));
  EXPECT_EQ(plain.getAsObject()->getObject("signature")->get("fixed_values"), nullptr);
}

TEST(Cli, FixValueOfEveryInputLeavesAnArtifactWithoutInputs) {
  TempDir tmp;
  std::string artifact = tmp.file("none.kiln");
  CommandResult c = runCommand(
      kilnBinary() + " compile " + fixValueModel("scale.onnx") +
      " --fix-value=x=[-3,-2,-1,1,2,3] --fix-value=w=0.5,-1,2 --fix-value=sr=16000 -o " + artifact);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  CommandResult run =
      runCommand(kilnBinary() + " run " + artifact + " --output=@" + tmp.file("y.npy"));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  // y = x * w + sr / 1000 (make_models.py), by hand.
  std::vector<float> y;
  for (int i = 0; i < 6; ++i)
    y.push_back(kX[i] * kW[i % 3] + 16.0f);
  EXPECT_EQ(floatsOf(tmp.file("y.npy"), {2, 3}), y);
  llvm::json::Value json = inspectJson(artifact);
  EXPECT_TRUE(namesOf(json.getAsObject()->getObject("artifact")->getArray("inputs")).empty());
}

TEST(Cli, FixValueErrorsAreOneLine) {
  const std::string rate = fixValueModel("rate.onnx");
  const std::string all = " --fix-value=sr=16000 --fix-value=flag=true";
  // The flag's own syntax: usage errors (exit status 2).
  expectOneError("compile " + rate + " --fix-value=sr", {"--fix-value='sr': expected INPUT=VALUE"},
                 2);
  expectOneError("compile " + rate + " --fix-value=sr=abc",
                 {"--fix-value='sr=abc': 'abc' is not a number (VALUE is a number such as 16000"},
                 2);
  expectOneError("compile " + rate + " --fix-value=w=[1,2", {"has unbalanced [ ]"}, 2);
  expectOneError("compile " + rate + " --fix-value=sr=1 --fix-value=sr=2",
                 {"--fix-value fixes input 'sr' twice; give one value per input"}, 2);
  // Against the model: exit status 1, naming the input.
  expectOneError(
      "compile " + rate + " --fix-value=rate=16000",
      {"rate.onnx: --fix-value names input 'rate', which the model does not have; its inputs are "
       "'x' (0), 'sr' (1), 'w' (2), 'flag' (3)"},
      1);
  expectOneError(
      "compile " + rate + all + " --fix-value=w=1,2",
      {"rate.onnx: --fix-value for input 'w' gives 2 values; the input float32 [3] has 3 elements"},
      1);
  expectOneError("compile " + rate + " --fix-value=sr=16000 --fix-value=flag=2",
                 {"--fix-value for input 'flag': 2 is out of range for bool (0 to 1)"}, 1);
  expectOneError("compile " + rate + " --fix-value=sr=1.5 --fix-value=flag=1",
                 {"--fix-value for input 'sr': 1.5 is not a whole number (the input is int64)"}, 1);
  expectOneError("compile " + rate + " --fix-value=sr=1e20 --fix-value=flag=1",
                 {"--fix-value for input 'sr': 1e+20 is out of range for int64"}, 1);
  expectOneError("compile " + rate + all + " --fix-value=w=1,2,1e39",
                 {"--fix-value for input 'w': 1e+39 is out of range for float32"}, 1);
  expectOneError("compile " + rate + " --fix-value=sr=16000 --fix-value=1=16000 --fix-value=flag=1",
                 {"--fix-value fixes input 'sr' twice, as '1' and as 'sr'"}, 1);
  // (An If on an unfixed input now compiles as a run-time select where its
  // branches agree; the suggestion on those that disagree, and on a Loop,
  // is checked by OnnxControlFlowCases.)
  // Other formats have no graph input to replace.
  expectOneError("compile " + shellQuote(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir") +
                     " --fix-value=a=1",
                 {"add_scale.mlir: --fix-value=a=... is supported for ONNX models only"}, 1);
  expectOneError(
      "compile " + shellQuote(std::string(KILN_TEST_DATA_DIR) + "/bad/dynamic_batch.tflite") +
          " --fix-value=0=1",
      {"--fix-value=0=... is supported for ONNX models only; this is a TFLite model"}, 1);
}

} // namespace
