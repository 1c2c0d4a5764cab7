//===- SvdfTest.cpp - TFLite SVDF (float32 and int8, stateful) --------------===//
//
// The cases of tests/data/state/svdf_* (tests/reference/make_svdf_cases.mjs):
// one SVDF each, float32 (rank 1 to 3, with and without bias, RELU, RELU6,
// TANH, batch 2, memory_size 1) and int8 (int16 weights_time and state, several scales,
// saturating state columns; and TFLM's int8-state form), and chains of
// SVDFs sharing one state within an invocation (svdf_*_chained3, so step 0
// already reads columns an earlier SVDF shifted in). Each folder holds
// three consecutive invocations (step_1/, step_2/ beside step 0), which
// StateTest.cpp (kiln_state_tests) runs in order on one module and compares
// with the stored reference within 1e-4 x (1 + |reference|) for float32 and
// exactly for int8; here the folders are checked present. The stored
// references are TensorFlow Lite 2.9's builtin kernels (steps: 3 on one
// interpreter), which the script also checks against its own evaluation of
// the recurrence (float64, or TFLM's exact integer arithmetic); for
// svdf_int8_state8_tflm, a form TFLite 2.9 reads as int16, the reference is
// the script's evaluation of TFLM's EvalIntegerSvdfReference (meta.json).
// tflm_keyword_scrambled{,_8bit} are the SVDF / FULLY_CONNECTED stacks
// (7 SVDFs, 5 FULLY_CONNECTEDs, every layer's output compared) of TFLite
// Micro's keyword benchmark models (README.md there): int16 state checked
// against TFLite 2.9, int8 state against TFLM's arithmetic.
// The svdf_refused models give one error line saying why.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"

#include <filesystem>

using namespace kiln::test;

namespace {

std::string stateDir() { return std::string(KILN_TEST_DATA_DIR) + "/state"; }

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(stateDir(), ec)) {
    std::string name = entry.path().filename().string();
    bool ours = name.rfind("svdf_", 0) == 0 || name.rfind("tflm_keyword_scrambled", 0) == 0;
    if (entry.is_directory() && ours && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(name);
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(Svdf, CasesArePresent) {
  std::vector<std::string> cases = listCases();
  EXPECT_GE(cases.size(), 17u);
  for (const std::string &name : cases)
    for (const char *step : {"step_1", "step_2"})
      EXPECT_TRUE(std::filesystem::exists(stateDir() + "/" + name + "/" + step + "/output_0.npy"))
          << name << "/" << step;
}

TEST(Svdf, RefusalsAreOneLineSayingWhy) {
  struct Refusal {
    const char *file;
    std::string message;
  };
  std::vector<Refusal> refusals = {
      {"input_3d.tflite",
       "operator #0 (SVDF): expects 2-D input, weights_feature, weights_time and "
       "activation_state; the model gives [1, 2, 4], [4, 4], [4, 3] and [1, 12]"},
      {"rank_not_divisor.tflite",
       "operator #0 (SVDF): rank 4 does not divide the 6 filters (weights_feature [6, 4]); "
       "num_units = num_filters / rank needs a positive divisor"},
      {"state_not_variable.tflite",
       "operator #0 (SVDF): activation_state (input 4) is not a variable tensor (is_variable); "
       "SVDF keeps its memory in a variable tensor"},
      {"hybrid.tflite",
       "operator #0 (SVDF, FLOAT32, INT8, INT8, FLOAT32 -> FLOAT32) is a hybrid operator "
       "(float32 activations with int8 weights): not supported; quantize the model fully "
       "(int8) or keep float32 weights"},
      // INT16 stays refused everywhere but SVDF's weights_time and state.
      {"int16_input.tflite",
       "operator #0 (SVDF, INT16, INT8, INT16, INT16 -> INT8) computes on INT16 tensors: "
       "16-bit activations (16x8 quantization) are not supported; Kiln compiles float32, "
       "int8 and uint8 models"},
  };
  TempDir tmp;
  for (const Refusal &r : refusals) {
    std::string path = stateDir() + "/svdf_refused/" + r.file;
    CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(path) + " -o " +
                                 shellQuote(tmp.file("m.kiln")));
    EXPECT_EQ(c.exitCode, 1) << r.file << ": " << c.output;
    EXPECT_EQ(c.output, std::string("kiln: error: ") + r.file + ": " + r.message + "\n");
    EXPECT_FALSE(std::filesystem::exists(tmp.file("m.kiln")));
  }
}

} // namespace
