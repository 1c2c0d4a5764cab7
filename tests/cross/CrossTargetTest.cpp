//===- CrossTargetTest.cpp - Device targets, C modules and exports --------===//
//
// Every real model, compiled for each device target and run where that
// target's code can run on this machine:
//   - the static C module for the host, built with the system C compiler;
//   - the static C module for a Cortex-M4F (thumbv7em-none-eabihf), built
//     with arm-none-eabi-gcc and run on QEMU's mps2-an386 board, I/O through
//     semihosting;
//   - the .kiln artifact for aarch64 and riscv64 Linux, run by Kiln's
//     runtime cross-built with <arch>-linux-gnu-g++, under qemu-user.
// Outputs must match TensorFlow Lite's reference within 1e-4 x (1 + |ref|)
// and the host runtime's outputs within the same tolerance. Then exports:
// byte-identical repeats, a manifest whose numbers agree with the files.
//
// The cross tools come from Debian packages that scripts/install-deps.sh
// installs; without them these tests skip and say which package is missing.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"
#include "TestSupport.h"

#include "kiln/Artifact.h"
#include "kiln/Export.h"
#include "kiln/Kit.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"
#include "llvm/ADT/StringExtras.h"

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace kiln::test;

namespace {

bool haveTool(const std::string &tool) {
  return runCommand("command -v " + shellQuote(tool) + " >/dev/null 2>&1").exitCode == 0;
}

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  ASSERT_TRUE(out.good()) << path;
}

/// Writes input_K.bin (raw bytes) for each seeded input into `dir`.
void writeRawInputs(const std::string &dir, const std::vector<kiln::NpyArray> &inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    writeBytes(dir + "/input_" + std::to_string(i) + ".bin", inputs[i].data);
}

/// Reads output_K.bin from `dir` as arrays shaped like `reference`.
std::vector<kiln::NpyArray> readRawOutputs(const std::string &dir,
                                           const std::vector<kiln::NpyArray> &reference) {
  std::vector<kiln::NpyArray> outputs;
  for (size_t i = 0; i < reference.size(); ++i) {
    kiln::NpyArray a = reference[i];
    a.data = readBytes(dir + "/output_" + std::to_string(i) + ".bin");
    EXPECT_EQ(a.data.size(), reference[i].data.size()) << "output " << i;
    a.data.resize(reference[i].data.size());
    outputs.push_back(std::move(a));
  }
  return outputs;
}

/// The host runtime's outputs for `name` (same options, host target).
std::vector<kiln::NpyArray> hostOutputs(const std::string &name) {
  auto built = kiln::compile(realModelPath(name), realModelOptions(name));
  EXPECT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  if (!built)
    return {};
  auto run = kiln::runArtifact(built->artifact, realModelInputs(name));
  EXPECT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  return run ? run->outputValues : std::vector<kiln::NpyArray>();
}

/// Checks `got` against TFLite's reference and the host runtime's outputs.
void expectMatches(const std::string &name, const std::vector<kiln::NpyArray> &got) {
  auto reference = realModelReference(name);
  ASSERT_EQ(got.size(), reference.size());
  auto host = hostOutputs(name);
  ASSERT_EQ(host.size(), reference.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(allClose(got[i], reference[i])) << name << " output " << i << " vs TFLite";
    EXPECT_TRUE(allClose(got[i], host[i])) << name << " output " << i << " vs the host";
  }
}

/// Compiles `name` to a C module for `target` into `dir`.
void writeCModule(const std::string &name, const std::string &target, const std::string &dir) {
  kiln::CompileOptions options = realModelOptions(name);
  ASSERT_FALSE(static_cast<bool>(kiln::applyTarget(target, options.target)));
  options.format = kiln::OutputFormat::CModule;
  auto built = kiln::compile(realModelPath(name), options);
  ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  ASSERT_EQ(built->files.size(), 4u);
  EXPECT_EQ(built->files[0].name, name + ".h");
  EXPECT_EQ(built->files[3].name, name + "_kernels.o");
  for (const kiln::GeneratedFile &f : built->files)
    writeBytes(dir + "/" + f.name, f.bytes);
  // Each workgroup's temporaries stay near the 64 KiB tile budget: one
  // output-sized intermediate plus one padded input window, each at most
  // 64 KiB, plus spill slots. (MLIR 16's alloca lowering once made every
  // stack buffer 4x too large: BlazeFace needed 904000 bytes.)
  EXPECT_GT(built->stackBytes, 0);
  EXPECT_LE(built->stackBytes, 2 * 65536 + 4096) << name << " on " << target;
}

class CrossTarget : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (!std::filesystem::exists(realModelPath(GetParam())))
      GTEST_FAIL() << missingModelHint(realModelPath(GetParam()));
  }
};

TEST_P(CrossTarget, HostCModuleMatchesReference) {
  const std::string name = GetParam();
  TempDir dir;
  writeCModule(name, "host", dir.path());
  // The generated C must build warning-free with the system compiler.
  std::string cc = "cc -O2 -std=c11 -Wall -Wextra -Wcast-qual -pedantic -Werror -DKILN_MODULE=" +
                   name + " -I" +
                   shellQuote(dir.path()) + " " + KILN_CROSS_DIR "/module_main.c " +
                   shellQuote(dir.file(name + ".c")) + " " +
                   shellQuote(dir.file(name + "_constants.c")) + " " +
                   shellQuote(dir.file(name + "_kernels.o")) + " -lm -o " +
                   shellQuote(dir.file("prog"));
  CommandResult built = runCommand(cc);
  ASSERT_EQ(built.exitCode, 0) << cc << "\n" << built.output;
  auto inputs = realModelInputs(name);
  writeRawInputs(dir.path(), inputs);
  std::string cmd = "cd " + shellQuote(dir.path()) + " && ./prog";
  for (size_t i = 0; i < inputs.size(); ++i)
    cmd += " input_" + std::to_string(i) + ".bin";
  for (size_t i = 0; i < realModelReference(name).size(); ++i)
    cmd += " output_" + std::to_string(i) + ".bin";
  CommandResult ran = runCommand(cmd);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  expectMatches(name, readRawOutputs(dir.path(), realModelReference(name)));
}

TEST_P(CrossTarget, CortexM4CModuleMatchesReference) {
  if (!haveTool("arm-none-eabi-gcc") || !haveTool("qemu-system-arm"))
    GTEST_SKIP() << "needs arm-none-eabi-gcc and qemu-system-arm (Debian packages "
                    "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm; "
                    "scripts/install-deps.sh installs them)";
  const std::string name = GetParam();
  TempDir dir;
  writeCModule(name, "thumbv7em-none-eabihf", dir.path());
  const std::string m = KILN_CROSS_DIR "/cortexm", kit = KILN_KITS_DIR "/cortexm";
  // The firmware kits' linker script for the board, with a 256 KiB stack.
  const kiln::CortexMBoard *board = kiln::cortexMBoardOf("thumbv7em-none-eabihf");
  ASSERT_NE(board, nullptr);
  kiln::FirmwareLayout layout{board->flashBytes, board->ramBytes, 256 * 1024, name, "flash", "RAM"};
  writeBytes(dir.file("firmware.ld"), [&] {
    std::string script = kiln::firmwareLinkerScript(*board, layout);
    return std::vector<uint8_t>(script.begin(), script.end());
  }());
  std::string cc =
      "arm-none-eabi-gcc -O2 " + board->cpuFlags +
      " -std=c11 -Wall -Wextra -Werror -nostartfiles -T " + shellQuote(dir.file("firmware.ld")) +
      " -Wl,--no-warn-execstack -DKILN_MODULE=" + name + " -I" + shellQuote(dir.path()) + " -I" +
      kit + " " + kit + "/startup.c " + m + "/module_main.c " + shellQuote(dir.file(name + ".c")) +
      " " + shellQuote(dir.file(name + "_constants.c")) + " " +
      shellQuote(dir.file(name + "_kernels.o")) + " -lm -lc -lgcc -o " +
      shellQuote(dir.file("prog.elf"));
  CommandResult built = runCommand(cc);
  ASSERT_EQ(built.exitCode, 0) << cc << "\n" << built.output;
  writeRawInputs(dir.path(), realModelInputs(name));
  // Semihosting files resolve against QEMU's working directory.
  std::string cmd = "cd " + shellQuote(dir.path()) +
                    " && timeout 300 qemu-system-arm -M mps2-an386 -nographic -monitor none "
                    "-serial none -semihosting-config enable=on,target=native -kernel prog.elf";
  CommandResult ran = runCommand(cmd);
  ASSERT_EQ(ran.exitCode, 0) << cmd << "\n" << ran.output;
  expectMatches(name, readRawOutputs(dir.path(), realModelReference(name)));
}

/// Compiles `name` to a .kiln for `target` and runs it with the runtime
/// cross-built for `arch` under qemu-<arch>.
void runCrossArtifact(const std::string &name, const std::string &target,
                      const std::string &arch, const std::string &runner) {
  if (runner.empty() || !haveTool("qemu-" + arch))
    GTEST_SKIP() << "needs " << arch << "-linux-gnu-g++ and qemu-" << arch
                 << " (Debian packages g++-" << arch << "-linux-gnu qemu-user; "
                 << "scripts/install-deps.sh installs them; re-run cmake after)";
  TempDir dir;
  kiln::CompileOptions options = realModelOptions(name);
  ASSERT_FALSE(static_cast<bool>(kiln::applyTarget(target, options.target)));
  auto built = kiln::compile(realModelPath(name), options);
  ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  EXPECT_EQ(built->triple.rfind(arch, 0), 0u) << built->triple;
  writeBytes(dir.file("model.kiln"), built->artifact);
  auto inputs = realModelInputs(name);
  writeRawInputs(dir.path(), inputs);
  std::string cmd = "cd " + shellQuote(dir.path()) + " && timeout 300 qemu-" + arch + " -L /usr/" +
                    arch + "-linux-gnu " + shellQuote(runner) + " model.kiln";
  for (size_t i = 0; i < inputs.size(); ++i)
    cmd += " input_" + std::to_string(i) + ".bin";
  for (size_t i = 0; i < realModelReference(name).size(); ++i)
    cmd += " output_" + std::to_string(i) + ".bin";
  CommandResult ran = runCommand(cmd);
  ASSERT_EQ(ran.exitCode, 0) << cmd << "\n" << ran.output;
  expectMatches(name, readRawOutputs(dir.path(), realModelReference(name)));
}

TEST_P(CrossTarget, Aarch64ArtifactMatchesReference) {
  runCrossArtifact(GetParam(), "aarch64-linux-gnu", "aarch64", KILN_AARCH64_RUNNER);
}

TEST_P(CrossTarget, Riscv64ArtifactMatchesReference) {
  runCrossArtifact(GetParam(), "riscv64-linux-gnu", "riscv64", KILN_RISCV64_RUNNER);
}

INSTANTIATE_TEST_SUITE_P(RealModels, CrossTarget, ::testing::ValuesIn(realModelNames()),
                         [](const auto &info) { return info.param; });

} // namespace

namespace {

/// A hosted target whose code this machine cannot run.
std::string foreignTarget() {
#if defined(__aarch64__)
  return "riscv64-linux-gnu";
#else
  return "aarch64-linux-gnu";
#endif
}

} // namespace

/// `kiln run` of an artifact built for another architecture is refused at
/// load with one line naming both architectures and the flag that builds
/// for this machine (the named --target, not the raw triple).
TEST(CrossTargetArtifact, ForeignArchitectureRefusedWithTheFlagToUse) {
  TempDir tmp;
  const std::string artifact = tmp.file("foreign.kiln");
  CommandResult built =
      runCommand(kilnBinary() + " compile " +
                 shellQuote(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir") +
                 " --target=" + foreignTarget() + " -o " + shellQuote(artifact));
  ASSERT_EQ(built.exitCode, 0) << built.output;
  CommandResult run = runCommand(kilnBinary() + " run " + shellQuote(artifact));
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_EQ(run.output.rfind("kiln: error: ", 0), 0u) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  EXPECT_NE(run.output.find("the artifact's code targets " + foreignTarget().substr(0, 5)),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("kiln compile --target=host"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("--target-triple"), std::string::npos) << run.output;
}
