//===- CliTest.cpp - The kiln command line: happy paths and bad input -----===//
//
// Every bad input must give exit status 1 and one clear message naming the
// file, operator or tensor, never a crash, a stack dump or an IR dump.
//
//===----------------------------------------------------------------------===//
#include "ArtifactFixtures.h"
#include "TestSupport.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace kiln::test;

namespace {

std::string dataFile(const std::string &rel) { return std::string(KILN_TEST_DATA_DIR) + "/" + rel; }

/// Runs kiln with `args`; expects exit `status` (1: bad input, 2: bad
/// usage) and every needle in the output.
void expectCleanError(const std::string &args, std::initializer_list<const char *> needles,
                      int status = 1) {
  CommandResult r = runCommand(kilnBinary() + " " + args);
  EXPECT_EQ(r.exitCode, status) << r.output;
  for (const char *needle : needles)
    EXPECT_NE(r.output.find(needle), std::string::npos)
        << "missing '" << needle << "' in:\n" << r.output;
  for (const char *bad : {"Stack dump", "PLEASE submit", "module {", "func.func", "Assertion"})
    EXPECT_EQ(r.output.find(bad), std::string::npos) << "leaked '" << bad << "':\n" << r.output;
  // One message: a single "error:" line.
  size_t count = 0;
  for (size_t p = r.output.find("error:"); p != std::string::npos; p = r.output.find("error:", p + 1))
    ++count;
  EXPECT_EQ(count, 1u) << r.output;
}

TEST(Cli, VersionNamesKilnAndLLVM) {
  CommandResult r = runCommand(kilnBinary() + " --version");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("kiln 0."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LLVM/MLIR 16."), std::string::npos) << r.output;
}

TEST(Cli, TosaMlirRunsWithLiteralInputs) {
  TempDir tmp;
  std::string out = tmp.file("sum.npy");
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " --input=2x3xf32=1 --input=2x3xf32=1,2,3,4,5,6 --output=@" + out);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray sum = loadNpy(out);
  ASSERT_EQ(sum.shape, (std::vector<int64_t>{2, 3}));
  const float *f = reinterpret_cast<const float *>(sum.data.data());
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(f[i], (1.0f + (i + 1)) * 0.5f) << i;
}

// A tosa.pad whose pad value is computed at run time crashed dispatch
// formation (the scalar crossed the dispatch boundary); now one error line.
TEST(Cli, TosaPadWithComputedValueIsOneError) {
  CommandResult r = runCommand(kilnBinary() + " run " +
                               shellQuote(dataFile("mlir/pad_runtime_value.mlir")) +
                               " --input=1x4xf32=1,2,3,4 --input=1xf32=7 --output=- 2>&1");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
  EXPECT_NE(r.output.find("pad_runtime_value.mlir: line 6: 'tosa.pad'"), std::string::npos)
      << r.output;
}

TEST(Cli, CompileThenRunArtifact) {
  TempDir tmp;
  std::string artifact = tmp.file("add.kiln");
  CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " -o " + artifact);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  CommandResult r = runCommand(kilnBinary() + " run " + artifact +
                               " --input=2x3xf32=3 --input=2x3xf32=5 --benchmark=5");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("output 0 'sum': 2x3xf32 min 4 max 4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("median: "), std::string::npos) << r.output;
}

// `kiln diff --benchmark` measures on the device and threads asked, as
// `kiln run --benchmark` does, and says so; --threads needs local-task.
TEST(Cli, DiffBenchmarksOnTheDeviceAsked) {
  TempDir tmp;
  std::string artifact = tmp.file("add.kiln");
  CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " -o " + artifact);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  CommandResult d = runCommand(kilnBinary() + " diff " + artifact + " " + artifact +
                               " --json --benchmark=5 --device=local-task --threads=2");
  ASSERT_EQ(d.exitCode, 0) << d.output;
  auto parsed = llvm::json::parse(d.output);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError()) << d.output;
  const llvm::json::Object *timing = parsed->getAsObject()->getObject("timing");
  ASSERT_TRUE(timing) << d.output;
  EXPECT_EQ(timing->getString("device"), llvm::StringRef("local-task"));
  EXPECT_EQ(timing->getInteger("threads"), 2);
  EXPECT_EQ(timing->getInteger("runs"), 5); // 5 rounds of ceil(5 / 5) runs
  CommandResult text = runCommand(kilnBinary() + " diff " + artifact + " " + artifact + " --benchmark=5");
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find("local-sync, 1 thread;"), std::string::npos) << text.output;
  expectCleanError("diff " + artifact + " " + artifact + " --benchmark=5 --threads=2",
                   {"--threads=2 applies to --device=local-task"}, /*status=*/2);
}

TEST(Cli, EmitStagesPrintEachPhase) {
  std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  struct Stage { const char *name; const char *marker; } stages[] = {
      {"tosa", "tosa.add"}, {"linalg", "linalg.generic"},
      {"dispatches", "func.func private @main_dispatch_0"},
      {"buffers", "memref<2x3xf32>"},
      {"llvm-ir", "define void @main_dispatch_0"}, {"asm", "main_dispatch_0:"}};
  for (const Stage &s : stages) {
    CommandResult r = runCommand(kilnBinary() + " compile " + model + " --emit=" + s.name);
    EXPECT_EQ(r.exitCode, 0) << s.name << r.output;
    EXPECT_NE(r.output.find(s.marker), std::string::npos) << s.name << ":\n" << r.output.substr(0, 2000);
  }
  expectCleanError("compile " + model + " --emit=spirv",
                   {"--emit='spirv'", "tosa, linalg, dispatches, buffers, llvm-ir or asm"},
                   /*status=*/2);
}

TEST(Cli, RunRejectsWrongInputs) {
  std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  expectCleanError("run " + model + " --input=2x3xf32=1", {"takes 2 input(s), 1 given", "'a'", "'b'"});
  expectCleanError("run " + model + " --input=3x2xf32=1 --input=2x3xf32=1",
                   {"input 0 'a' expects 2x3xf32, got 3x2xf32"});
  expectCleanError("run " + model + " --input=2x3xf32=1 --input=2x3xi32=1",
                   {"input 1 'b' expects 2x3xf32, got 2x3xi32"});
  TempDir tmp;
  std::string bogus = tmp.file("bogus.npy");
  std::ofstream(bogus) << "this is not an npy file";
  expectCleanError("run " + model + " --input=@" + bogus + " --input=2x3xf32=1",
                   {"bogus.npy", "not a NumPy .npy file"});
  expectCleanError("run " + model + " --input=@" + tmp.file("missing.npy") + " --input=2x3xf32=1",
                   {"missing.npy", "cannot read"});
  // A literal of the wrong form is a usage error (exit 2); a file that
  // cannot be read is not (exit 1).
  expectCleanError("run " + model + " --input=2x3xf32=abc --input=2x3xf32=1", {"'abc' is not a number"},
                   /*status=*/2);
}

TEST(Cli, BadModelFiles) {
  auto bad = [](const char *name) { return shellQuote(dataFile(std::string("bad/") + name)); };
  expectCleanError("compile " + bad("not_tflite.tflite"), {"not_tflite.tflite", "not a TFLite model"});
  TempDir tmp;
  std::ofstream(tmp.file("empty.tflite")).flush();
  expectCleanError("compile " + shellQuote(tmp.file("empty.tflite")), {"empty.tflite", "empty (0 bytes)"});
  expectCleanError("compile " + bad("truncated.tflite"), {"truncated.tflite", "truncated or corrupted"});
  expectCleanError("compile " + bad("garbled.tflite"), {"garbled.tflite", "truncated or corrupted"});
  expectCleanError("compile " + bad("custom_op.tflite"),
                   {"operator #1", "custom operator 'MyCustomOp'", "Supported float32 builtin operators"});
  expectCleanError("compile " + bad("unsupported_op.tflite"),
                   {"operator #1", "which Kiln does not support", "CONV_2D"});
  // Quantized models Kiln refuses (tests/data/bad/README.md): the
  // file, the tensor or operator, the bad value and the rule, on one line.
  expectCleanError("compile " + bad("int16_activations.tflite"),
                   {"int16_activations.tflite", "operator #0 (FULLY_CONNECTED, INT16, INT8, INT64 -> INT16)",
                    "16-bit activations", "float32, int8 and uint8"});
  expectCleanError("compile " + bad("hybrid_fully_connected.tflite"),
                   {"hybrid_fully_connected.tflite", "operator #0 (FULLY_CONNECTED, FLOAT32, INT8, FLOAT32 -> FLOAT32)",
                    "hybrid operator", "quantize the model fully"});
  expectCleanError("compile " + bad("zero_scale.tflite"),
                   {"zero_scale.tflite", "tensor 'input' (index 0, INT8)", "scale 0", "must be positive"});
  expectCleanError("compile " + bad("negative_scale.tflite"),
                   {"negative_scale.tflite", "tensor 'output' (index 3, INT8)", "scale -0.1", "must be positive"});
  expectCleanError("compile " + bad("int8_zero_point_out_of_range.tflite"),
                   {"tensor 'input' (index 0, INT8)", "zero point 200", "[-128, 127]"});
  expectCleanError("compile " + bad("uint8_zero_point_out_of_range.tflite"),
                   {"tensor 'input' (index 0, UINT8)", "zero point -1", "[0, 255]"});
  expectCleanError("compile " + bad("per_channel_scale_count.tflite"),
                   {"tensor 'conv_weights' (index 1, INT8)", "3 per-channel scales",
                    "dimension 0 (quantized_dimension) has 4 channels"});
  expectCleanError("compile " + bad("int8_without_quantization.tflite"),
                   {"tensor 'input' (index 0, INT8)", "no quantization scale", "affine quantization"});
  // sparse_weights.tflite (once refused) compiles: its CSR weights are
  // densified at import with one warning (Cli.SparseWeightsCompileWithOneWarning).
  expectCleanError("compile " + bad("per_channel_activation.tflite"),
                   {"tensor 'input'", "per-channel scales", "activations per tensor"});
  expectCleanError("compile " + bad("mixed_int8_uint8.tflite"), {"operator #0 (ADD", "mixes INT8 and UINT8"});
  expectCleanError("compile " + bad("int8_pack_mismatched_quantization.tflite"),
                   {"operator #0 (PACK", "input 1 (scale 0.1 zero point 2)",
                    "another quantization than the output", "pack.cc"});
  expectCleanError("compile " + bad("int8_reduce_max_mismatched_quantization.tflite"),
                   {"operator #0 (REDUCE_MAX", "the output (scale 0.1 zero point 3)",
                    "another quantization than the input", "reduce.cc"});
  expectCleanError("compile " + bad("int8_sum_same_quantization.tflite"),
                   {"operator #0 (SUM", "an output quantized as the input is not supported"});
  expectCleanError("compile " + bad("uint8_per_channel_weights.tflite"),
                   {"tensor 'conv_weights'", "per-channel quantization is for INT8"});
  expectCleanError("compile " + bad("int8_without_zero_point.tflite"),
                   {"tensor 'input'", "1 scales but 0 zero points"});
  expectCleanError("compile " + bad("dynamic_batch.tflite"),
                   {"dynamic dimension 0", "[-1,8]", "--fix-shape="});
  expectCleanError("compile " + shellQuote(dataFile("bad/does_not_exist.tflite")), {"cannot read"});
}

TEST(Cli, FixShapeCompilesDynamicBatch) {
  TempDir tmp;
  CommandResult r = runCommand(kilnBinary() + " compile " +
                               shellQuote(dataFile("bad/dynamic_batch.tflite")) +
                               " --fix-shape=0=1x8 -o " + tmp.file("d.kiln"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // A batch of 3 through the RELU: negatives become 0 (hand-computed).
  std::string out = tmp.file("relu.npy");
  CommandResult run = runCommand(kilnBinary() + " run " + shellQuote(dataFile("bad/dynamic_batch.tflite")) +
                                 " --fix-shape=0=3x8 --input=3x8xf32=" +
                                 "-1,2,-3,4,-5,6,-7,8,1,1,1,1,1,1,1,1,0,-2,0,-2,0,-2,0,-2 --output=@" + out);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  kiln::NpyArray relu = loadNpy(out);
  ASSERT_EQ(relu.shape, (std::vector<int64_t>{3, 8}));
  const float *f = reinterpret_cast<const float *>(relu.data.data());
  const float expected[24] = {0, 2, 0, 4, 0, 6, 0, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(f[i], expected[i]) << i;
  expectCleanError("compile " + shellQuote(dataFile("bad/dynamic_batch.tflite")) + " --fix-shape=0=1x9",
                   {"dimension 1 is static (8)"});
  expectCleanError("compile " + shellQuote(dataFile("bad/dynamic_batch.tflite")) + " --fix-shape=0=axb",
                   {"not a positive dimension"}, /*status=*/2);
}

/// `acc` x `real` the way TensorFlow Lite requantizes an int32 accumulator
/// (quantization_util.cc QuantizeMultiplier: real = q x 2^(shift - 31) with
/// q in [2^30, 2^31); common.h MultiplyByQuantizedMultiplier: gemmlowp's
/// SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT, which rounds
/// halves away from zero). For accumulators far from the int32 limits.
int32_t tfliteRequantize(int32_t acc, double real) {
  int shift = 0;
  double fraction = std::frexp(real, &shift);
  int64_t q = std::llround(fraction * double(int64_t(1) << 31));
  if (q == int64_t(1) << 31) {
    q /= 2;
    ++shift;
  }
  int64_t product = int64_t(acc) * (shift > 0 ? int64_t(1) << shift : 1) * q;
  int64_t nudge = product >= 0 ? (int64_t(1) << 30) : 1 - (int64_t(1) << 30);
  auto high = static_cast<int32_t>((product + nudge) / (int64_t(1) << 31)); // truncates, as C++ does
  int right = shift < 0 ? -shift : 0;
  int32_t mask = (int32_t(1) << right) - 1;
  int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

// tests/data/bad/int8_quantized.tflite (once refused, now the base of the
// quantization error cases above) compiles, and `kiln run` gives what
// TensorFlow Lite's int8 FULLY_CONNECTED computes, worked out here from the
// model's weights, bias, scales and zero points. (TFLite's wasm interpreter,
// tests/reference/tflite_reference.mjs, gives the same four values.)
TEST(Cli, Int8QuantizedModelRunsAsTfliteComputes) {
  // The model's constants (make_op_cases.mjs int8FcTensors): weights [4,8]
  // scale 0.02 zero point 0; bias int32; input scale 0.05 zero point -2;
  // output scale 0.1 zero point 3.
  const int8_t weights[4][8] = {{11, -11, -66, -70, 98, 7, -92, 68},
                                {60, 107, -22, -97, -55, 109, -89, -50},
                                {14, 108, 116, -55, 126, -23, -102, 110},
                                {-82, -33, 3, -28, 28, -95, -81, 10}};
  const int32_t bias[4] = {100, -50, 0, 25};
  const int inputZeroPoint = -2, outputZeroPoint = 3;
  const double multiplier = double(0.05f) * double(0.02f) / double(0.1f);
  // They are the file's bytes (little-endian buffers), not a stale copy.
  std::ifstream file(dataFile("bad/int8_quantized.tflite"), std::ios::binary);
  std::string model((std::istreambuf_iterator<char>(file)), {});
  EXPECT_NE(model.find(std::string(reinterpret_cast<const char *>(weights), sizeof(weights))),
            std::string::npos);
  EXPECT_NE(model.find(std::string(reinterpret_cast<const char *>(bias), sizeof(bias))), std::string::npos);

  TempDir tmp;
  std::string artifact = tmp.file("int8.kiln"), out = tmp.file("out.npy");
  CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(dataFile("bad/int8_quantized.tflite")) +
                               " -o " + artifact);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const int input[8] = {-128, -50, -1, 0, 1, 37, 100, 127};
  CommandResult r = runCommand(kilnBinary() + " run " + artifact +
                               " --input=1x8xi8=-128,-50,-1,0,1,37,100,127 --output=@" + out);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray y = loadNpy(out);
  ASSERT_EQ(y.dtype, "|i1");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 4}));
  for (int o = 0; o < 4; ++o) {
    int32_t acc = bias[o];
    for (int k = 0; k < 8; ++k)
      acc += int32_t(weights[o][k]) * (input[k] - inputZeroPoint);
    int32_t expected = std::clamp(tfliteRequantize(acc, multiplier) + outputZeroPoint, -128, 127);
    EXPECT_EQ(kiln::integerElement(y, o), expected) << "output " << o << ", accumulator " << acc;
  }
}

/// Runs kiln with `args`: its exit status and its stderr alone (stdout is
/// dropped). A signal shows as status 128 + N.
CommandResult runForStderr(const std::string &args) {
  return runCommand("{ " + kilnBinary() + " " + args + " 2>&1 >/dev/null; }");
}

/// The files under `dir` (relative to tests/data), README.md files aside,
/// sorted.
std::vector<std::string> filesUnder(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(dataFile(dir), ec))
    if (entry.is_regular_file() && entry.path().extension() != ".md")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// Feeds `file` to kiln compile, run, inspect and inspect --sizes: none may
/// end by a signal; a failure is status 1 or 2 with exactly one line on
/// stderr, "kiln: error: ...". Bad inputs must fail; others (fuzzer
/// regression inputs may be valid models) may also succeed. `warning`: the
/// one "kiln: warning: " line a model that compiles may print before the
/// error (recorded_batch.tflite's recorded shape), empty for none.
void expectOneErrorLineOrSuccess(const std::string &file, bool mustFail,
                                 const std::string &warning = "") {
  TempDir tmp;
  for (const std::string &command :
       {"compile " + shellQuote(file) + " -o " + tmp.file("out.kiln"), "run " + shellQuote(file),
        "inspect " + shellQuote(file), "inspect --sizes " + shellQuote(file)}) {
    CommandResult r = runForStderr(command);
    if (r.exitCode == 0 && !mustFail)
      continue;
    if (!warning.empty() && r.output.rfind("kiln: warning: " + warning, 0) == 0)
      r.output.erase(0, r.output.find('\n') + 1);
    EXPECT_TRUE(r.exitCode == 1 || r.exitCode == 2) << command << ": status " << r.exitCode;
    EXPECT_EQ(r.output.rfind("kiln: error: ", 0), 0u) << command << ":\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1)
        << command << ":\n" << r.output;
  }
}

TEST(Cli, EveryBadFileGivesOneErrorLineAndNoSignal) {
  std::vector<std::string> files = filesUnder("bad");
  ASSERT_GE(files.size(), 45u); // the models and artifacts tests/data/bad/README.md lists
  // above_2gib.tflite is refused for 32-bit targets only: on this host it
  // compiles (and `kiln run` without --input fails cleanly);
  // int8_quantized.tflite compiles (Cli.Int8QuantizedModelRunsAsTfliteComputes);
  // recorded_batch.tflite compiles at its recorded shape with a warning
  // (ShapeFix.RecordedShapeCompilesWithOneWarning); two_subgraphs.tflite
  // compiles its subgraph 0 (ControlFlow.UnreferencedSubgraphIsIgnored);
  // sparse_weights.tflite compiles with its weights densified (one warning).
  // placeholder_code.kiln passes the gate (its code is no ELF object):
  // inspect describes it, run refuses it (Cli.BadArtifactsNameTheirCheck).
  for (const std::string &file : files) {
    bool hostCompiles = llvm::StringRef(file).ends_with("/above_2gib.tflite") ||
                        llvm::StringRef(file).ends_with("/int8_quantized.tflite") ||
                        llvm::StringRef(file).ends_with("/recorded_batch.tflite") ||
                        llvm::StringRef(file).ends_with("/two_subgraphs.tflite") ||
                        llvm::StringRef(file).ends_with("/sparse_weights.tflite");
    bool inspectable = llvm::StringRef(file).ends_with("/placeholder_code.kiln");
    bool recorded = llvm::StringRef(file).ends_with("/recorded_batch.tflite");
    bool sparse = llvm::StringRef(file).ends_with("/sparse_weights.tflite");
    expectOneErrorLineOrSuccess(file, /*mustFail=*/!hostCompiles && !inspectable,
                                recorded ? "input 'input' (input 0) has a dynamic dimension 0"
                                : sparse ? "tensor 'sparse_weights' (sparse FLOAT32 [4,8], CSR"
                                         : "");
  }
}

// A model with sparse weights compiles; the densification is one warning
// with the stored and dense sizes (core/lib/Import/TFLiteSparsity.cpp).
TEST(Cli, SparseWeightsCompileWithOneWarning) {
  TempDir tmp;
  CommandResult r = runForStderr("compile " + shellQuote(dataFile("bad/sparse_weights.tflite")) +
                                 " -o " + tmp.file("out.kiln"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output, "kiln: warning: tensor 'sparse_weights' (sparse FLOAT32 [4,8], CSR, 8 of 32 "
                      "values stored, 84 bytes with its indices) densified at import to 128 "
                      "bytes\n");
}

TEST(Cli, FuzzerRegressionInputsGiveOneErrorLineAndNoSignal) {
  // tests/fuzz/regressions/<target>/: every input a fuzzer found.
  for (const std::string &file : filesUnder("../fuzz/regressions"))
    expectOneErrorLineOrSuccess(file, /*mustFail=*/false);
}

TEST(Cli, BackendErrorIsOneErrorLine) {
  // LLVM 16's BPF backend cannot call memset (the kernel's zero fill) and
  // reports an error diagnostic: one error line naming it and exit status
  // 1, no LLVM text on stderr, and no output.
  TempDir tmp;
  const std::string model =
      shellQuote(dataFile("ops/depthwise_conv_2d_tile_edges_5x5_s2/model.tflite"));
  std::string out = tmp.file("bpf");
  expectCleanError("compile " + model + " --target-triple=bpfel-unknown-none --output-format=c-module -o " +
                       shellQuote(out),
                   {"the bpfel backend refused a kernel", "'memset' is not supported"});
  EXPECT_FALSE(std::filesystem::exists(out));
  // SPARC used to stop with a fatal error on this partial-tile kernel's
  // over-aligned dynamic stack temporary; tile temporaries are static now
  // (bounded over the workgroup grid), so it compiles.
  CommandResult sparc = runCommand(kilnBinary() + " compile " + model +
                                   " --target-triple=sparcv9-unknown-linux-gnu -o " +
                                   shellQuote(tmp.file("sparc.kiln")));
  EXPECT_EQ(sparc.exitCode, 0) << sparc.output;
}

TEST(Cli, BadArtifactsNameTheirCheck) {
  auto bad = [](const char *name) { return shellQuote(dataFile(std::string("bad/") + name)); };
  expectCleanError("run " + bad("binding_past_buffer.kiln"),
                   {"binding_past_buffer.kiln", "lies outside its 16-byte buffer"});
  expectCleanError("inspect " + bad("workgroups_overflow.kiln"),
                   {"workgroups_overflow.kiln", "65536 x 65536 x 2 workgroups"});
  expectCleanError("inspect --sizes " + bad("bad_checksum.kiln"), {"bad_checksum.kiln", "checksum"});
  expectCleanError("run " + bad("not_an_artifact.kiln"), {"not_an_artifact.kiln", "not a Kiln artifact"});
  expectCleanError("compile " + bad("wrong_version.kiln"), {"a compiled .kiln artifact, not a model"});
  // Without reflection, inspect describes what the artifact holds.
  CommandResult r = runCommand(kilnBinary() + " inspect " + bad("placeholder_code.kiln"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("input 0   'x' 4xf32, 16 bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("need the reflection section"), std::string::npos) << r.output;
}

TEST(Cli, HugeArenaIsAnErrorNamingTheBytes) {
  // A real artifact whose arena says 2^62 bytes (below PTRDIFF_MAX, so the
  // gate lets it through): kiln run reports the failed allocation.
  TempDir tmp;
  std::string good = tmp.file("good.kiln"), huge = tmp.file("huge.kiln");
  CommandResult c = runCommand(kilnBinary() + " compile " +
                               shellQuote(dataFile("ops/chain_attention/model.tflite")) + " -o " + good);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  std::ifstream in(good, std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
  auto *artifact = kiln::artifact::GetMutableArtifact(bytes.data());
  ASSERT_TRUE(artifact->mutate_arena_bytes(uint64_t(1) << 62));
  kiln::test::reseal(bytes);
  std::ofstream(huge, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  auto described = kiln::describeArtifact(bytes);
  ASSERT_TRUE(static_cast<bool>(described)) << llvm::toString(described.takeError());
  std::string inputs;
  for (const kiln::IOInfo &info : described->inputs) {
    ASSERT_EQ(info.dtype, "<f4");
    inputs += " --input=";
    for (int64_t d : info.shape)
      inputs += std::to_string(d) + "x";
    inputs += "f32=0.5";
  }
  // Under AddressSanitizer malloc must return NULL rather than stop.
  expectCleanError("run " + huge + inputs,
                   {"huge.kiln: cannot allocate 4611686018427387904 bytes for the arena"});
}

TEST(Cli, BadArtifacts) {
  TempDir tmp;
  std::string garbage = tmp.file("garbage.kiln");
  std::ofstream(garbage) << "0123456789abcdef";
  expectCleanError("run " + garbage + " --input=2x3xf32=1", {"not a Kiln artifact"});
}

} // namespace

/// `kiln inspect` on an artifact: its signature, target, profile and
/// counts, for every profile and target. The expected
/// rows come from the model text (add_scale.mlir: a, b -> sum, 2x3xf32).
TEST(Cli, InspectArtifactShowsSignatureTargetAndProfile) {
  TempDir tmp;
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  struct Build {
    const char *name, *flags, *triple, *profile;
  } builds[] = {{"default.kiln", "", "x86_64", "default"},
                {"stripped.kiln", "--profile=stripped", "x86_64", "stripped"},
                {"arm.kiln", "--target=aarch64-linux-gnu", "aarch64", "default"},
                {"custom.kiln", "--reflection=false", "x86_64", "custom"}};
  for (const Build &b : builds) {
    SCOPED_TRACE(b.name);
    std::string artifact = tmp.file(b.name);
    CommandResult c =
        runCommand(kilnBinary() + " compile " + model + " " + b.flags + " -o " + artifact);
    ASSERT_EQ(c.exitCode, 0) << c.output;
    CommandResult r = runCommand(kilnBinary() + " inspect " + artifact);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (std::string row : {std::string("input 0   'a' 2x3xf32, 24 bytes, 4-byte aligned"),
                            std::string("input 1   'b' 2x3xf32, 24 bytes"),
                            std::string("output 0  'sum' 2x3xf32, 24 bytes"),
                            std::string("target    ") + b.triple,
                            std::string("profile   ") + b.profile,
                            std::string("format    Kiln artifact 1."),
                            std::string("from add_scale.mlir")})
      EXPECT_NE(r.output.find(row), std::string::npos) << "missing '" << row << "' in\n" << r.output;
    bool reflection = std::string(b.profile) == "default";
    EXPECT_EQ(r.output.find("need the reflection section") != std::string::npos, !reflection)
        << r.output;

    CommandResult j = runCommand(kilnBinary() + " inspect " + artifact + " --json");
    ASSERT_EQ(j.exitCode, 0) << j.output;
    auto parsed = llvm::json::parse(j.output);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError()) << j.output;
    const llvm::json::Object *a = parsed->getAsObject()->getObject("artifact");
    ASSERT_NE(a, nullptr) << j.output;
    EXPECT_EQ(a->getString("profile").value_or(""), b.profile);
    EXPECT_TRUE(a->getString("target_triple").value_or("").starts_with(b.triple));
    const llvm::json::Array *inputs = a->getArray("inputs");
    ASSERT_TRUE(inputs && inputs->size() == 2);
    const llvm::json::Object *in1 = (*inputs)[1].getAsObject();
    EXPECT_EQ(in1->getString("name").value_or(""), "b");
    EXPECT_EQ(in1->getString("element_type").value_or(""), "f32");
    EXPECT_EQ(in1->getInteger("bytes").value_or(0), 24);
    // The plan keys stay at the top level when there is reflection.
    EXPECT_EQ(parsed->getAsObject()->get("dispatches") != nullptr, reflection) << j.output;
    // Every dispatch command lists a workgroup grid of three positive counts.
    const llvm::json::Array *dispatches = a->getArray("dispatches");
    ASSERT_TRUE(dispatches && !dispatches->empty());
    for (const llvm::json::Value &d : *dispatches) {
      const llvm::json::Array *grid = d.getAsObject()->getArray("workgroup_count");
      ASSERT_TRUE(grid && grid->size() == 3);
      for (const llvm::json::Value &n : *grid)
        EXPECT_GE(n.getAsInteger().value_or(0), 1);
    }
  }
}

/// A stripped artifact keeps the grids the default build's plan records.
TEST(Cli, InspectStrippedArtifactGridsMatchThePlan) {
  TempDir tmp;
  std::string a = tmp.file("a.kiln"), s = tmp.file("s.kiln");
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + model + " -o " + a).exitCode, 0);
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + model + " --profile=stripped -o " + s).exitCode,
            0);
  auto json = [&](const std::string &path) {
    CommandResult r = runCommand(kilnBinary() + " inspect " + path + " --json");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    auto v = llvm::json::parse(r.output);
    EXPECT_TRUE(bool(v));
    return v ? std::move(*v) : llvm::json::Value(nullptr);
  };
  llvm::json::Value full = json(a), stripped = json(s);
  // The plan (reflection) of the default build, dispatch by dispatch.
  std::vector<std::string> fromPlan, fromCommands;
  for (const llvm::json::Value &d : *full.getAsObject()->getArray("dispatches")) {
    std::string grid;
    for (const llvm::json::Value &n : *d.getAsObject()->getArray("workgroup_count"))
      grid += std::to_string(n.getAsInteger().value_or(-1)) + ",";
    fromPlan.push_back(grid);
  }
  for (const llvm::json::Value &d :
       *stripped.getAsObject()->getObject("artifact")->getArray("dispatches")) {
    std::string grid;
    for (const llvm::json::Value &n : *d.getAsObject()->getArray("workgroup_count"))
      grid += std::to_string(n.getAsInteger().value_or(-1)) + ",";
    fromCommands.push_back(grid);
  }
  EXPECT_EQ(fromPlan, fromCommands);
  EXPECT_EQ(stripped.getAsObject()->get("plan")->kind(), llvm::json::Value::Null);
}

namespace {

kiln::NpyArray floats(std::vector<int64_t> shape, const std::vector<float> &values) {
  kiln::NpyArray a;
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

/// add_scale.mlir computes sum = (a + b) * 0.5 elementwise on 2x3xf32:
/// writes sample `s` (a = i + s, b = 3, reference by that formula, plus
/// `skew` on element 0) into `dir`.
void writeAddScaleSample(const std::string &dir, int s, float skew = 0) {
  std::filesystem::create_directories(dir);
  std::vector<float> a(6), b(6, 3.0f), sum(6);
  for (int i = 0; i < 6; ++i) {
    a[i] = float(i + s);
    sum[i] = (a[i] + b[i]) * 0.5f;
  }
  sum[0] += skew;
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_0.npy", floats({2, 3}, a))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_1.npy", floats({2, 3}, b))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_0.npy", floats({2, 3}, sum))));
}

} // namespace

/// kiln validate: several samples (folders and stacked), tolerances, and
/// the missing file named exactly.
TEST(Cli, ValidateSamplesAndTolerances) {
  TempDir tmp;
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  std::string dir = tmp.file("samples");
  writeAddScaleSample(dir + "/sample_0", 0);
  writeAddScaleSample(dir + "/sample_1", 1);
  CommandResult ok = runCommand(kilnBinary() + " validate " + model + " " + dir);
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
  EXPECT_NE(ok.output.find("sample_0"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("sample_1"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("PASS: every element of 2 sample(s)"), std::string::npos) << ok.output;

  // Sample 1's reference off by 0.01 on one element: outside the default
  // tolerance (1e-4 + 1e-4 x 0.5), inside --atol=0.02.
  writeAddScaleSample(dir + "/sample_1", 1, 0.01f);
  CommandResult off = runCommand(kilnBinary() + " validate " + model + " " + dir + " --json");
  EXPECT_EQ(off.exitCode, 3) << off.output;
  auto json = llvm::json::parse(off.output);
  ASSERT_TRUE(bool(json)) << off.output;
  const llvm::json::Array *samples = json->getAsObject()->getArray("samples");
  ASSERT_TRUE(samples && samples->size() == 2) << off.output;
  auto outside = [](const llvm::json::Value &sample) {
    return (*sample.getAsObject()->getArray("outputs"))[0].getAsObject()->getInteger(
        "outside_tolerance");
  };
  EXPECT_EQ(outside((*samples)[0]), 0);
  EXPECT_EQ(outside((*samples)[1]), 1);
  double maxError = (*json->getAsObject()->getArray("outputs"))[0]
                        .getAsObject()
                        ->getNumber("max_abs_error")
                        .value_or(0);
  EXPECT_NEAR(maxError, 0.01, 1e-6);
  CommandResult loose =
      runCommand(kilnBinary() + " validate " + model + " " + dir + " --atol=0.02 --rtol=0");
  EXPECT_EQ(loose.exitCode, 0) << loose.output;
  EXPECT_NE(loose.output.find("0.02 + 0 x |reference|"), std::string::npos) << loose.output;

  // A missing reference is named with its path and the output count.
  std::filesystem::remove(dir + "/sample_1/output_0.npy");
  expectCleanError("validate " + model + " " + dir,
                   {"sample_1/output_0.npy does not exist", "the model has 1 output"});

  // Stacked: input_K.npy / output_K.npy of shape 2 x 2x3 with --samples=2.
  std::string stacked = tmp.file("stacked");
  std::filesystem::create_directories(stacked);
  std::vector<float> a, b, sum;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 6; ++i) {
      a.push_back(float(i * (s + 1)));
      b.push_back(-1.0f);
      sum.push_back((a.back() + b.back()) * 0.5f);
    }
  ASSERT_FALSE(bool(kiln::writeNpyFile(stacked + "/input_0.npy", floats({2, 2, 3}, a))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(stacked + "/input_1.npy", floats({2, 2, 3}, b))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(stacked + "/output_0.npy", floats({2, 2, 3}, sum))));
  CommandResult st = runCommand(kilnBinary() + " validate " + model + " " + stacked + " --samples=2");
  EXPECT_EQ(st.exitCode, 0) << st.output;
  EXPECT_NE(st.output.find("all 2"), std::string::npos) << st.output;
  expectCleanError("validate " + model + " " + stacked + " --samples=3",
                   {"input_0.npy", "--samples=3 needs a leading axis of 3 samples", "2x2x3xf32"});
}

/// kiln validate prints every output name whole (names were cut at 26
/// characters, so two long names could read alike): the output column is
/// as wide as the longest name and the numbers stay in their columns.
TEST(Cli, ValidateTablePrintsLongNamesWhole) {
  TempDir tmp;
  const std::string name = "StatefulPartitionedCall:0/detection_scores_long";
  const std::string mlir = tmp.file("long.mlir");
  std::ofstream(mlir) << "func.func @main(%a: tensor<2x3xf32> {kiln.name = \"a\"}) -> "
                         "(tensor<2x3xf32> {kiln.name = \""
                      << name
                      << "\"}) {\n  %0 = \"tosa.add\"(%a, %a) : (tensor<2x3xf32>, "
                         "tensor<2x3xf32>) -> tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>\n}\n";
  const std::string dir = tmp.file("sample");
  std::filesystem::create_directories(dir);
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, twice;
  for (float v : a)
    twice.push_back(2 * v);
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_0.npy", floats({2, 3}, a))));
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/output_0.npy", floats({2, 3}, twice))));
  CommandResult ran = runCommand(kilnBinary() + " validate " + shellQuote(mlir) + " " + dir);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  std::istringstream lines(ran.output);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  ASSERT_EQ(header.rfind("sample", 0), 0u) << ran.output;
  const size_t column = header.find("output");
  EXPECT_EQ(row.find(name), column) << ran.output;
  // "elements" ends where the row's element count (6) does.
  const size_t end = column + name.size() + 1 + 10;
  ASSERT_GE(header.size(), end) << ran.output;
  EXPECT_EQ(header.substr(end - 8, 8), "elements") << ran.output;
  ASSERT_GE(row.size(), end) << ran.output;
  EXPECT_EQ(row.substr(end - 2, 2), " 6") << ran.output;
}

/// iree-run-module's input and output forms: DIMSxTYPE=@file.bin (raw
/// little-endian) and --output=- (every element); errors say f32.
TEST(Cli, RawInputsAndPrintedOutputs) {
  TempDir tmp;
  std::string bin = tmp.file("a.bin");
  {
    std::vector<float> a = {1, 2, 3, 4, 5, 6};
    std::ofstream(bin, std::ios::binary).write(reinterpret_cast<const char *>(a.data()), 24);
  }
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " --input=2x3xf32=@" + bin + " --input=2x3xf32=1 --output=-");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // (a + 1) * 0.5, one row of the innermost dimension per line.
  EXPECT_NE(r.output.find("\n1 1.5 2\n2.5 3 3.5\n"), std::string::npos) << r.output;
  expectCleanError("run " + shellQuote(dataFile("mlir/add_scale.mlir")) + " --input=2x4xf32=@" +
                       bin + " --input=2x3xf32=1",
                   {"a.bin", "holds 24 bytes", "2x4xf32 is 32 bytes"});
  expectCleanError("run " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                       " --input=2x3xi32=1 --input=2x3xf32=1",
                   {"expects 2x3xf32, got 2x3xi32"});
  expectCleanError("run " + shellQuote(dataFile("mlir/add_scale.mlir")) + " --input=2x3xi8=300",
                   {"'300' is not an integer from -128 to 127 (i8)"}, /*status=*/2);
}

/// Usage errors: one `kiln: error:` line and exit status 2, no LLVM
/// parser text.
TEST(Cli, UsageErrorsAreOneLineWithStatus2) {
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  struct Case {
    std::string args;
    const char *needle;
  } cases[] = {
      {"", "no command given"},
      {"frob", "'frob' is not a command"},
      {"comple " + model, "did you mean 'compile'?"},
      {"compile " + model + " --bogus", "kiln compile takes no flag '--bogus'"},
      {"compile " + model + " --til=0=1", "did you mean --tile=0=1?"},
      {"compile", "kiln compile takes a model file"},
      {"run", "kiln run takes an artifact or model file"},
      {"inspect", "kiln inspect takes a model or artifact file"},
      {"inspect a b", "too many positional arguments"},
      {"compile " + model + " --emit=foo", "--emit='foo' is not a stage"},
      {"diff a.kiln", "kiln diff takes two artifacts"},
      {"validate " + model, "kiln validate takes a model or artifact and a folder"},
      {"run " + model + " --threads=abc", "for the --threads option"},
      {"compile " + model + " --profile=weird", "--profile='weird' is not a profile"},
      {"compile " + model + " --fix-shape=zz", "--fix-shape"},
      {"help frob", "kiln help takes one command name"},
      {"compile " + model + " --target-cpu=", "--target-cpu= needs a value"},
      {"validate " + model + " . --rtol=", "--rtol= needs a value"},
      // Empty values of boolean flags (llvm::cl would read them as true)
      // and an empty separate value.
      {"compile " + model + " --check-bounds=", "--check-bounds= needs a value"},
      {"compile " + model + " --fusion=", "--fusion= needs a value"},
      {"inspect " + model + " --json=", "--json= needs a value"},
      {"compile " + model + " -o ''", "-o needs a value, not an empty argument"},
      {"inspect " + model + " --dump-schedule ''", "--dump-schedule needs a value"},
      {"compile " + model + " --profile=stripped --profile=default", "--profile is given twice"},
      {"compile " + model + " -o a.kiln -o b.kiln",
       "-o is given twice ('-o a.kiln' and '-o b.kiln')"},
      {"compile " + model + " --fix-shape=0=2x3 --fix-shape=0=1x3", "fixes input '0' twice"},
      {"compile " + model + " -O3", "did you mean -o?"},
      {"--verison", "did you mean --version?"},
      {"run " + model + " --device=bogus", "--device='bogus' is not a device"},
      {"run " + model + " --threads=0 --device=local-task", "--threads=0 must be from 1 to 256"},
      {"run " + model + " --input=garbage", "--input='garbage': expected"},
      {"--bogus", "give a command first"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.args);
    CommandResult r = runCommand(kilnBinary() + " " + c.args);
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find(c.needle), std::string::npos) << r.output;
    EXPECT_EQ(r.output.rfind("kiln: error: ", 0), 0u) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    for (const char *leak : {"Try:", "See:", "Did you mean"})
      EXPECT_EQ(r.output.find(leak), std::string::npos) << r.output;
  }
  // kiln help COMMAND prints that command's options.
  CommandResult help = runCommand(kilnBinary() + " help compile");
  EXPECT_EQ(help.exitCode, 0) << help.output;
  EXPECT_NE(help.output.find("SUBCOMMAND 'compile'"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--emit"), std::string::npos) << help.output;
}

/// Flags that do not apply warn once and the build goes on.
TEST(Cli, FlagsThatDoNotApplyWarnOnce) {
  TempDir tmp;
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  auto warnings = [](const std::string &text) {
    size_t n = 0;
    for (size_t p = text.find("kiln: warning: "); p != std::string::npos;
         p = text.find("kiln: warning: ", p + 1))
      ++n;
    return n;
  };
  CommandResult fix =
      runForStderr("compile " + model + " --fix-shape=0=2x3 -o " + tmp.file("a.kiln"));
  EXPECT_EQ(fix.exitCode, 0) << fix.output;
  EXPECT_EQ(warnings(fix.output), 1u) << fix.output;
  EXPECT_NE(fix.output.find("--fix-shape changes nothing"), std::string::npos) << fix.output;
  CommandResult c = runForStderr("compile " + model + " --output-format=c-module --debug-symbols -o " +
                                 tmp.file("cm"));
  EXPECT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(warnings(c.output), 1u) << c.output;
  EXPECT_NE(c.output.find("--debug-symbols changes nothing for a C module"), std::string::npos)
      << c.output;
  // --emit makes no plan: a dump asked with it is said to do nothing.
  CommandResult emit = runForStderr("compile " + model + " --emit=tosa -o " + tmp.file("e.mlir") +
                                    " --dump-schedule=" + tmp.file("s.csv"));
  EXPECT_EQ(emit.exitCode, 0) << emit.output;
  EXPECT_EQ(warnings(emit.output), 1u) << emit.output;
  EXPECT_NE(emit.output.find("--dump-schedule has no effect with --emit"), std::string::npos)
      << emit.output;
  // A dynamic input fixed: no warning.
  CommandResult dyn = runForStderr("compile " + shellQuote(dataFile("bad/dynamic_batch.tflite")) +
                                   " --fix-shape=0=2x8 -o " + tmp.file("d.kiln"));
  EXPECT_EQ(dyn.exitCode, 0) << dyn.output;
  EXPECT_EQ(warnings(dyn.output), 0u) << dyn.output;
}

/// `kiln inspect MODEL --target=thumbv7em-none-eabihf` plans the C module it
/// would export: the signature (from the model text) and target rows.
TEST(Cli, InspectCModulePlanShowsSignatureAndTarget) {
  CommandResult r = runCommand(kilnBinary() + " inspect " +
                               shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " --target=thumbv7em-none-eabihf");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char *row : {"input 0   'a' 2x3xf32, 24 bytes", "input 1   'b' 2x3xf32, 24 bytes",
                          "output 0  'sum' 2x3xf32, 24 bytes",
                          "target thumbv7em-none-eabihf: thumbv7em", "cpu cortex-m4",
                          "as c-module", "flash ", "RAM "})
    EXPECT_NE(r.output.find(row), std::string::npos) << "missing '" << row << "' in\n" << r.output;
  CommandResult j = runCommand(kilnBinary() + " inspect " +
                               shellQuote(dataFile("mlir/add_scale.mlir")) + " --json");
  ASSERT_EQ(j.exitCode, 0) << j.output;
  auto parsed = llvm::json::parse(j.output);
  ASSERT_TRUE(bool(parsed)) << j.output;
  const llvm::json::Object *sig = parsed->getAsObject()->getObject("signature");
  ASSERT_NE(sig, nullptr) << j.output;
  ASSERT_EQ(sig->getArray("inputs")->size(), 2u);
  EXPECT_EQ((*sig->getArray("outputs"))[0].getAsObject()->getString("name").value_or(""), "sum");
}

/// MIPS shared objects link with the System V symbol hash (the MIPS ABI
/// has no .gnu.hash; LLD refuses it), so a MIPS artifact compiles and
/// inspect names its target.
TEST(Cli, MipsArtifactLinks) {
  TempDir tmp;
  std::string out = tmp.file("mips.kiln");
  CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(dataFile("mlir/add_scale.mlir")) +
                               " --target-triple=mips-unknown-linux-gnu -o " + out);
  ASSERT_EQ(c.exitCode, 0) << c.output;
  CommandResult r = runCommand(kilnBinary() + " inspect " + out);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("target    mips-unknown-linux-gnu"), std::string::npos) << r.output;
}

/// kiln validate names the file whose shape differs from the signature and
/// suggests --samples=N for stacked arrays.
TEST(Cli, ValidateNamesTheMismatchedFile) {
  TempDir tmp;
  const std::string model = shellQuote(dataFile("mlir/add_scale.mlir"));
  std::string dir = tmp.file("one");
  writeAddScaleSample(dir, 0);
  // input_1 holds 2 samples of 2x3: the hint names --samples=2.
  std::vector<float> twelve(12, 1.0f);
  ASSERT_FALSE(bool(kiln::writeNpyFile(dir + "/input_1.npy", floats({2, 2, 3}, twelve))));
  expectCleanError("validate " + model + " " + dir,
                   {"one/input_1.npy: 2x2x3xf32; the model's input 1 'b' is 2x3xf32",
                    "add --samples=2"});
  expectCleanError("validate " + model + " " + tmp.file("absent"), {"absent: no such folder"});
  std::string folders = tmp.file("folders");
  writeAddScaleSample(folders + "/sample_0", 0);
  expectCleanError("validate " + model + " " + folders + " --samples=2",
                   {"holds sample_S folders", "drop it"});
}
