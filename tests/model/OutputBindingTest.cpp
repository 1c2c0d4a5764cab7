//===- OutputBindingTest.cpp - Every model output written, in its slot ----===//
//
// Every folder of tests/data/outputs holds a small model whose outputs are
// easy to get wrong: an output that is a model input, that folds to one
// (identity TRANSPOSE, SUM over no axes, RESHAPE to the same shape), a
// constant, the same tensor listed twice, a view of another output, outputs
// listed out of tensor order (tests/reference/make_op_cases.mjs writes them;
// output_K.npy is TensorFlow Lite's result, checked against an independent
// computation). Each is compiled and run three ways, the .kiln artifact on
// local-sync and on local-task (2 threads) and the static C module built
// with the host's C compiler, and every output must match within
// 1e-4 x (1 + |reference|). The plan must bind every output slot.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace kiln::test;

namespace {

std::string casesRoot() { return std::string(KILN_TEST_DATA_DIR) + "/outputs"; }

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(casesRoot(), ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

struct Case {
  std::string dir;
  std::vector<kiln::NpyArray> inputs;
  std::vector<kiln::NpyArray> expected;
};

Case loadCase(const std::string &name) {
  Case c;
  c.dir = casesRoot() + "/" + name;
  for (const std::string &path : numberedFiles(c.dir, "input"))
    c.inputs.push_back(loadNpy(path));
  for (const std::string &path : numberedFiles(c.dir, "output"))
    c.expected.push_back(loadNpy(path));
  return c;
}

void expectOutputs(const std::vector<kiln::NpyArray> &got, const Case &c) {
  ASSERT_EQ(got.size(), c.expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    EXPECT_EQ(got[k].shape, c.expected[k].shape);
    EXPECT_TRUE(allClose(got[k], c.expected[k]));
  }
}

class OutputBinding : public ::testing::TestWithParam<std::string> {};

TEST_P(OutputBinding, PlanBindsEverySlot) {
  Case c = loadCase(GetParam());
  auto plan = kiln::planModel(c.dir + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  const kiln::CompilationPlan &p = **plan;
  EXPECT_TRUE(kiln::checkPlan(p).empty());
  ASSERT_EQ(p.outputs.size(), c.expected.size());
  for (const kiln::OutputBinding &out : p.outputs) {
    SCOPED_TRACE("slot " + std::to_string(out.slot));
    EXPECT_FALSE(out.writers.empty());
    EXPECT_EQ(out.bytes, static_cast<int64_t>(c.expected[out.slot].data.size()));
  }
}

TEST_P(OutputBinding, ArtifactMatchesOnBothDevices) {
  Case c = loadCase(GetParam());
  auto artifact = kiln::compileArtifact(c.dir + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  EXPECT_TRUE(matchesOnBothDevices(*artifact, c.inputs, c.expected));
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST_P(OutputBinding, HostCModuleMatches) {
  Case c = loadCase(GetParam());
  kiln::CompileOptions options;
  options.format = kiln::OutputFormat::CModule;
  options.moduleName = "m";
  auto built = kiln::compile(c.dir + "/model.tflite", options);
  ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  TempDir dir;
  for (const kiln::GeneratedFile &f : built->files) {
    std::ofstream out(dir.file(f.name), std::ios::binary);
    out.write(reinterpret_cast<const char *>(f.bytes.data()), f.bytes.size());
  }
  std::string cc = "cc -O1 -std=c11 -Wall -Wextra -pedantic -Werror -DKILN_MODULE=m -I" +
                   shellQuote(dir.path()) + " " + KILN_CROSS_SOURCE_DIR "/module_main.c " +
                   shellQuote(dir.file("m.c")) + " " + shellQuote(dir.file("m_constants.c")) +
                   " " + shellQuote(dir.file("m_kernels.o")) + " -lm -o " +
                   shellQuote(dir.file("prog"));
  CommandResult compiled = runCommand(cc);
  ASSERT_EQ(compiled.exitCode, 0) << cc << "\n" << compiled.output;
  std::string cmd = "cd " + shellQuote(dir.path()) + " && ./prog";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::string name = "input_" + std::to_string(i) + ".bin";
    std::ofstream out(dir.file(name), std::ios::binary);
    out.write(reinterpret_cast<const char *>(c.inputs[i].data.data()), c.inputs[i].data.size());
    cmd += " " + name;
  }
  for (size_t k = 0; k < c.expected.size(); ++k)
    cmd += " output_" + std::to_string(k) + ".bin";
  CommandResult ran = runCommand(cmd);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  std::vector<kiln::NpyArray> got;
  for (size_t k = 0; k < c.expected.size(); ++k) {
    kiln::NpyArray a = c.expected[k];
    a.data = readFile(dir.file("output_" + std::to_string(k) + ".bin"));
    got.push_back(std::move(a));
  }
  expectOutputs(got, c);
}

// What `kiln inspect` prints per output: the writer, named for people.
TEST(OutputBindingText, NamesTheWriterOfEverySlot) {
  auto writers = [](const std::string &name) {
    auto plan = kiln::planModel(casesRoot() + "/" + name + "/model.tflite", kiln::CompileOptions());
    std::vector<std::string> out;
    if (!plan) {
      ADD_FAILURE() << llvm::toString(plan.takeError());
      return out;
    }
    for (const kiln::OutputBinding &o : (*plan)->outputs)
      out.push_back(o.name + " <- " + kiln::describeOutputWriters(**plan, o));
    return out;
  };
  // Outputs listed [relu, input, add, tanh] while the operators run TANH,
  // RELU, ADD: each slot names its own tensor and writer.
  EXPECT_EQ(writers("outputs_permuted_four"),
            (std::vector<std::string>{"relu <- main_dispatch_1", "input <- copy of input 0",
                                      "add <- main_dispatch_2", "tanh <- main_dispatch_0"}));
  EXPECT_EQ(writers("same_tensor_twice"),
            (std::vector<std::string>{"relu <- main_dispatch_0", "relu <- copy of output 0"}));
  EXPECT_EQ(writers("constant_output"),
            (std::vector<std::string>{"relu <- main_dispatch_0", "constant <- copy of constant 0"}));
}

// The suite must not silently shrink to nothing.
TEST(OutputBindingCases, FolderIsPopulated) { EXPECT_GE(listCases().size(), 10u); }

INSTANTIATE_TEST_SUITE_P(Models, OutputBinding, ::testing::ValuesIn(listCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
