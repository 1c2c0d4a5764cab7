//===- OnnxErrorTest.cpp - kiln compile on malformed and unsupported ONNX -===//
//
// Each model of tests/data/onnx/ (written by tests/onnx/make_bad_models.py;
// tests/data/onnx/README.md says what each one is) must make `kiln compile`
// exit with status 1 and exactly one stderr line, "kiln: error: FILE: ...",
// naming what is wrong (node, operator, input, version), never a crash, an
// assertion, an LLVM crash report or an MLIR dump.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include <string>
#include <vector>

using namespace kiln::test;

namespace {

std::string onnxFile(const std::string &name) {
  return std::string(KILN_TEST_DATA_DIR) + "/onnx/" + name;
}

/// Runs `kiln COMMAND FILE ARGS` with stdout discarded and checks stderr is
/// one "kiln: error: FILE: ..." line holding every needle.
void expectOneErrorLine(const std::string &command, const std::string &file,
                        const std::vector<std::string> &needles, const std::string &args = "") {
  SCOPED_TRACE(command + " " + file);
  // The subshell sends kiln's stdout to /dev/null; runCommand captures its
  // stderr. A signal shows as status 128 + N.
  std::string line = "(" + kilnBinary() + " " + command + " " + shellQuote(onnxFile(file)) +
                     " " + args + " >/dev/null)";
  CommandResult r = runCommand(line);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  const std::string &err = r.output;
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "not one stderr line:\n" << err;
  EXPECT_EQ(err.rfind("kiln: error: " + file + ": ", 0), 0u) << err;
  for (const std::string &needle : needles)
    EXPECT_NE(err.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << err;
  for (const char *bad : {"Stack dump", "PLEASE submit", "Assertion", "LLVM ERROR", "module {",
                          "func.func", "loc(", "internal error", "terminate called"})
    EXPECT_EQ(err.find(bad), std::string::npos) << "leaked '" << bad << "':\n" << err;
}

void expectCompileError(const std::string &file, const std::vector<std::string> &needles) {
  TempDir tmp;
  expectOneErrorLine("compile", file, needles, "-o " + shellQuote(tmp.file("out.kiln")));
}

TEST(OnnxErrors, TruncatedFile) {
  expectCompileError("truncated.onnx", {"not a valid ONNX model", "truncated"});
}

TEST(OnnxErrors, GarbledFile) {
  expectCompileError("garbled.onnx", {"not a valid ONNX model"});
}

// A TFLite flatbuffer with the .onnx extension is recognised and named.
TEST(OnnxErrors, TfliteRenamedOnnx) {
  expectCompileError("tflite_renamed.onnx", {"TFLite", "not an ONNX model"});
}

// Node #1 (Bernoulli "coin") is named by index, op type and name.
TEST(OnnxErrors, UnsupportedNode) {
  expectCompileError("unsupported_op.onnx",
                     {"node #1", "Bernoulli", "\"coin\"", "opset 17", "not supported"});
}

TEST(OnnxErrors, OpsetAbove21) { expectCompileError("opset22.onnx", {"opset 22", "21"}); }

// The unfixed input and its symbolic dimension are named, with a --fix-shape
// that compiles.
TEST(OnnxErrors, SymbolicDimensionUnfixed) {
  expectCompileError("symbolic_batch.onnx",
                     {"'pixels'", "'batch'", "--fix-shape=pixels="});
}

// Two inputs sharing the symbol 'n' at different dimensions: both are
// named, with one size for 'n' (batch-like dimension 0 of 'column' is the
// symbol too, so it is not forced to 1), and the suggestion compiles.
TEST(OnnxErrors, SharedSymbolSuggestionCompiles) {
  expectCompileError("shared_symbol.onnx",
                     {"--fix-shape=row=1x224", "input 'column' with --fix-shape=column=224x1"});
  TempDir tmp;
  CommandResult r =
      runCommand(kilnBinary() + " compile " + shellQuote(onnxFile("shared_symbol.onnx")) +
                 " --fix-shape=row=1x224 --fix-shape=column=224x1 -o " +
                 shellQuote(tmp.file("m.kiln")) + " 2>&1");
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// libonnx's checker names a node by its name alone; the error names its
// index and operator too.
TEST(OnnxErrors, CheckerRefusalNamesTheNode) {
  expectCompileError("conv_missing_weight.onnx", {"node #1 Conv \"conv_1\"", "input size 1"});
}

// Reshape's new shape is a graph input: the output shape is known only at
// run time, so the node and its shape input are named.
TEST(OnnxErrors, OutputShapeUnknownAtCompileTime) {
  expectCompileError("runtime_reshape.onnx",
                     {"node #1", "Reshape", "\"reshape_at_run_time\"", "'target_shape'",
                      "known when the model is compiled"});
}

TEST(OnnxErrors, Float64Input) {
  expectCompileError("float64_input.onnx", {"'x'", "float64", "float32"});
}

// `kiln run` compiles in memory and refuses the same way.
TEST(OnnxErrors, RunRefusesLikeCompile) {
  expectOneErrorLine("run", "truncated.onnx", {"not a valid ONNX model"});
  expectOneErrorLine("run", "unsupported_op.onnx", {"node #1", "Bernoulli"}, "--input=2x3x3xf32=1");
}

// External data (weights in a side file) is read from beside the model,
// whatever the working directory: y = x + w, w = [10, 20, 30, 40] in
// external/add_weights.bin.
TEST(OnnxExternalData, ReadFromBesideTheModel) {
  CommandResult r = runCommand("cd / && " + kilnBinary() + " run " +
                               shellQuote(onnxFile("external/add_weights.onnx")) +
                               " --input=1x4xf32=1,2,3,4 --output=- 2>&1");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("\n11 22 33 44\n"), std::string::npos) << r.output;
}

// Without its side file the model is one error line naming the missing file.
TEST(OnnxExternalData, MissingSideFileIsOneError) {
  TempDir tmp;
  std::string model = tmp.file("add_weights.onnx");
  ASSERT_EQ(runCommand("cp " + shellQuote(onnxFile("external/add_weights.onnx")) + " " +
                       shellQuote(model)).exitCode, 0);
  CommandResult r = runCommand("(" + kilnBinary() + " compile " + shellQuote(model) + " -o " +
                               shellQuote(tmp.file("out.kiln")) + " >/dev/null)");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
  EXPECT_NE(r.output.find("add_weights.bin"), std::string::npos) << r.output;
}

} // namespace
