//===- CEmbedTest.cpp - The runtime embedded in a plain C program ---------===//
//
// Builds examples/c/run_model.c with the system C compiler and no C++
// runtime library (no -lstdc++), once with the documented link line and
// once through the generated kiln-runtime.pc in a staged install, runs it on
// artifacts compiled by `kiln compile`, and checks the printed values against
// numbers computed here or by the independent reference evaluator.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

std::string dataFile(const std::string &rel) { return std::string(KILN_TEST_DATA_DIR) + "/" + rel; }

std::string exampleSource() { return std::string(KILN_EXAMPLES_DIR) + "/c/run_model.c"; }

/// Flags every build of the example uses: C99, warnings are errors.
const char *kCFlags = " -std=c99 -O2 -Wall -Wextra -Werror ";

/// Writes `values` as raw little-endian float32 bytes to `path`.
void writeFloats(const std::string &path, const std::vector<float> &values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

/// The numbers after "output INDEX 'NAME' values:" in `output`; empty when
/// the line is missing.
std::vector<double> printedValues(const std::string &output, int index, const std::string &name) {
  std::string tag = "output " + std::to_string(index) + " '" + name + "' values:";
  size_t at = output.find(tag);
  std::vector<double> values;
  if (at == std::string::npos)
    return values;
  std::istringstream line(output.substr(at + tag.size(), output.find('\n', at) - at - tag.size()));
  double v;
  while (line >> v)
    values.push_back(v);
  return values;
}

/// Compiles `model` with `kiln compile` into `out`; fails the test on error.
void compileModel(const std::string &model, const std::string &out) {
  CommandResult c =
      runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " + shellQuote(out));
  ASSERT_EQ(c.exitCode, 0) << c.output;
}

/// Builds the example with the documented link line: the header folder, the
/// archive and -ldl -lpthread -lm, nothing else.
std::string buildWithLinkLine(const TempDir &tmp) {
  std::string exe = tmp.file("run_model");
  CommandResult b =
      runCommand(std::string(KILN_C_COMPILER) + kCFlags + shellQuote(exampleSource()) + " -I" +
                 shellQuote(KILN_RUNTIME_INCLUDE_DIR) + " " + shellQuote(KILN_RUNTIME_ARCHIVE) +
                 " -ldl -lpthread -lm -o " + shellQuote(exe));
  EXPECT_EQ(b.exitCode, 0) << b.output;
  EXPECT_EQ(b.output, "") << "the example should build without a warning";
  return exe;
}

TEST(CEmbed, ArchiveNeedsNoCxxRuntime) {
  // What a C link would lack without libstdc++: operator new/delete, the
  // guard and exception ABI, the personality routine, std:: symbols.
  CommandResult r = runCommand("nm -u " + shellQuote(KILN_RUNTIME_ARCHIVE));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  size_t undefined = 0;
  while (std::getline(lines, line)) {
    if (line.find(" U ") == std::string::npos)
      continue;
    ++undefined;
    std::string symbol = line.substr(line.find(" U ") + 3);
    for (const char *prefix : {"_Znw", "_Zna", "_Zdl", "_Zda", "__cxa_", "__gxx_", "_ZSt", "_ZNSt",
                               "_ZNKSt", "_ZTV", "_ZTI", "_Unwind_"})
      EXPECT_NE(symbol.rfind(prefix, 0), 0u) << "libkiln_runtime.a needs " << symbol;
  }
  EXPECT_GT(undefined, 10u) << r.output; // nm did list the archive's imports
}

TEST(CEmbed, ExampleBuiltWithPlainCcRunsAddScale) {
  TempDir tmp;
  std::string exe = buildWithLinkLine(tmp);
  std::string artifact = tmp.file("add.kiln");
  compileModel(dataFile("mlir/add_scale.mlir"), artifact);
  if (HasFatalFailure())
    return;
  // sum = (a + b) * 0.5, element by element (row-major 2x3).
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, -20, 30.5f, 0.25f, -1, 7};
  writeFloats(tmp.file("a.bin"), a);
  writeFloats(tmp.file("b.bin"), b);
  CommandResult r =
      runCommand(shellQuote(exe) + " " + shellQuote(artifact) + " @" +
                 shellQuote(tmp.file("a.bin")) + " @" + shellQuote(tmp.file("b.bin")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char *needle : {"runtime: 0.", "artifact: format 1.", "target x86_64",
                             "input 0 'a': 2x3 f32 (24 bytes)", "input 1 'b': 2x3 f32 (24 bytes)",
                             "output 0 'sum': 2x3 f32 (24 bytes)", "kiln_module_invoke: KILN_OK"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in\n"
                                                        << r.output;
  std::vector<double> sum = printedValues(r.output, 0, "sum");
  ASSERT_EQ(sum.size(), 6u) << r.output;
  for (size_t i = 0; i < 6; ++i)
    EXPECT_DOUBLE_EQ(sum[i], (static_cast<double>(a[i]) + b[i]) * 0.5) << i;

  // Numbers fill whole inputs: (3 + -5) * 0.5 everywhere.
  r = runCommand(shellQuote(exe) + " " + shellQuote(artifact) + " 3 -5");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(printedValues(r.output, 0, "sum"), std::vector<double>(6, -1.0)) << r.output;
  EXPECT_NE(r.output.find("min -1 max -1 mean -1"), std::string::npos) << r.output;
}

TEST(CEmbed, ExampleReportsABadArtifactWithTheStatusName) {
  TempDir tmp;
  std::string exe = buildWithLinkLine(tmp);
  std::ofstream(tmp.file("junk.kiln")) << "not an artifact at all";
  CommandResult r = runCommand(shellQuote(exe) + " " + shellQuote(tmp.file("junk.kiln")));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(r.output.rfind("error: kiln_module_load: KILN_DATA_LOSS: ", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(CEmbed, ExampleBuiltThroughPkgConfigRunsModelWithArena) {
  if (runCommand("pkg-config --version").exitCode != 0)
    GTEST_SKIP() << "pkg-config is not installed";
  // The install layout the .deb has: <prefix>/include/kiln/runtime.h,
  // <prefix>/<libdir>/libkiln_runtime.a and <libdir>/pkgconfig/kiln-runtime.pc.
  TempDir tmp;
  fs::path prefix = fs::path(tmp.path()) / "usr";
  fs::path libdir = prefix / KILN_INSTALL_LIBDIR;
  fs::create_directories(prefix / "include/kiln");
  fs::create_directories(libdir / "pkgconfig");
  fs::copy_file(fs::path(KILN_RUNTIME_INCLUDE_DIR) / "kiln/runtime.h",
                prefix / "include/kiln/runtime.h");
  fs::copy_file(KILN_RUNTIME_ARCHIVE, libdir / "libkiln_runtime.a");
  fs::copy_file(KILN_RUNTIME_PC_FILE, libdir / "pkgconfig/kiln-runtime.pc");
  std::string env = "export PKG_CONFIG_PATH=" + shellQuote((libdir / "pkgconfig").string()) + "; ";
  CommandResult flags = runCommand(env + "pkg-config --cflags --libs kiln-runtime");
  ASSERT_EQ(flags.exitCode, 0) << flags.output;
  EXPECT_EQ(flags.output.find("stdc++"), std::string::npos) << flags.output;
  std::string exe = tmp.file("run_model");
  CommandResult b = runCommand(env + KILN_C_COMPILER + kCFlags + shellQuote(exampleSource()) +
                               " $(pkg-config --cflags --libs kiln-runtime) -o " + shellQuote(exe));
  ASSERT_EQ(b.exitCode, 0) << flags.output << b.output;

  // Seven dispatches through a 1472-byte arena (conv, pad, max pool,
  // reshape, fully connected, softmax); the reference output was computed
  // by tests/reference's double-precision evaluator.
  std::string caseDir = dataFile("ops/chain_conv_pad_maxpool_reshape_fc_softmax");
  std::string artifact = tmp.file("model.kiln");
  compileModel(caseDir + "/model.tflite", artifact);
  if (HasFatalFailure())
    return;
  kiln::NpyArray input = loadNpy(caseDir + "/input_0.npy");
  kiln::NpyArray want = loadNpy(caseDir + "/output_0.npy");
  std::ofstream(tmp.file("input.bin"), std::ios::binary)
      .write(reinterpret_cast<const char *>(input.data.data()),
             static_cast<std::streamsize>(input.data.size()));
  CommandResult r = runCommand(shellQuote(exe) + " " + shellQuote(artifact) + " @" +
                               shellQuote(tmp.file("input.bin")));
  ASSERT_EQ(r.exitCode, 0) << r.output;

  // The arena size and target the example prints are the gate's.
  std::ifstream in(artifact, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  kiln_artifact_info_t info;
  ASSERT_EQ(kiln_artifact_verify(bytes.data(), bytes.size(), &info).code, KILN_OK);
  EXPECT_GT(info.arena_bytes, 0u);
  EXPECT_NE(r.output.find("arena: " + std::to_string(info.arena_bytes) + " bytes"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(std::string("target ") + info.target_triple), std::string::npos)
      << r.output;

  std::vector<double> got = printedValues(r.output, 0, "softmax");
  const float *expected = reinterpret_cast<const float *>(want.data.data());
  ASSERT_EQ(got.size(), want.data.size() / sizeof(float)) << r.output;
  double total = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << i;
    total += got[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-5); // a softmax
}

TEST(CEmbed, StatusCodeNames) {
  const char *names[] = {"KILN_OK",
                         "KILN_INVALID_ARGUMENT",
                         "KILN_DATA_LOSS",
                         "KILN_INCOMPATIBLE",
                         "KILN_RESOURCE_EXHAUSTED",
                         "KILN_INTERNAL",
                         "KILN_UNIMPLEMENTED",
                         "KILN_OUT_OF_RANGE",
                         "KILN_CANCELLED"};
  kiln_status_code_t codes[] = {KILN_OK,
                                KILN_INVALID_ARGUMENT,
                                KILN_DATA_LOSS,
                                KILN_INCOMPATIBLE,
                                KILN_RESOURCE_EXHAUSTED,
                                KILN_INTERNAL,
                                KILN_UNIMPLEMENTED,
                                KILN_OUT_OF_RANGE,
                                KILN_CANCELLED};
  for (size_t i = 0; i < 9; ++i)
    EXPECT_STREQ(kiln_status_code_name(codes[i]), names[i]);

  // Values outside the enumeration, passed as a C caller can (an int).
  TempDir tmp;
  std::ofstream(tmp.file("names.c"))
      << "#include <kiln/runtime.h>\n#include <stdio.h>\n"
         "int main(void) {\n"
         "  int codes[] = {-1, 9, 1000};\n"
         "  for (int i = 0; i < 3; ++i)\n"
         "    printf(\"%s\\n\", kiln_status_code_name((kiln_status_code_t)codes[i]));\n"
         "  return 0;\n}\n";
  std::string exe = tmp.file("names");
  CommandResult b =
      runCommand(std::string(KILN_C_COMPILER) + kCFlags + shellQuote(tmp.file("names.c")) + " -I" +
                 shellQuote(KILN_RUNTIME_INCLUDE_DIR) + " " + shellQuote(KILN_RUNTIME_ARCHIVE) +
                 " -ldl -lpthread -lm -o " + shellQuote(exe));
  ASSERT_EQ(b.exitCode, 0) << b.output;
  CommandResult r = runCommand(shellQuote(exe));
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.output, "unknown\nunknown\nunknown\n");
}

} // namespace
