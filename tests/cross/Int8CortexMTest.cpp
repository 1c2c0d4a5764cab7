//===- Int8CortexMTest.cpp - person_detect and micro_speech on Cortex-M ---===//
//
// TensorFlow Lite Micro's int8 models person_detect and
// micro_speech_quantized (tests/data/models/int8/, README.md there gives
// their source and license) as static C modules on QEMU's Cortex-M boards:
//   thumbv7em-none-eabihf on mps2-an386 (Cortex-M4F),
//   thumbv6m-none-eabi on mps2-an385 (ARMv6-M code on a Cortex-M3 that
//   faults on unaligned accesses as an M0+ does; see CortexMBoards.h).
// On the stored seeded input (seed 1, the folder's input_0.npy) every
// output byte must equal the same model's host C module's, and TensorFlow
// Lite 2.9's (the folder's output_0.npy). These tests need the int8
// TFLite importer (without it compiling fails with "tensor ... is
// INT8-quantized").
//
// RAM: module_main.c gives the arena and I/O a 3 MiB static pool in the
// boards' 4 MiB SSRAM2/3; the test also prints each model's flash and RAM
// (arena + I/O + largest kernel stack frame) for comparison with real
// parts (a Cortex-M0+ typically has 16 to 264 KiB of SRAM).
//
//===----------------------------------------------------------------------===//
#include "CortexMBoards.h"
#include "IntegerCompare.h"
#include "TestSupport.h"

#include <iostream>
#include <tuple>

using namespace kiln::test;

namespace {

std::string int8Dir() { return std::string(KILN_TEST_DATA_DIR) + "/models/int8"; }

/// (model, board) pairs.
using Case = std::tuple<std::string, CortexMBoard>;

class Int8OnCortexM : public ::testing::TestWithParam<Case> {};

TEST_P(Int8OnCortexM, MatchesHostCModuleAndTFLiteBitForBit) {
  const auto &[name, board] = GetParam();
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  const std::string model = int8Dir() + "/" + name + ".tflite";
  kiln::NpyArray input = loadNpy(int8Dir() + "/" + name + "/input_0.npy");
  kiln::NpyArray reference = loadNpy(int8Dir() + "/" + name + "/output_0.npy");
  ASSERT_EQ(input.dtype, "|i1");
  ASSERT_EQ(reference.dtype, "|i1");
  const std::vector<std::vector<uint8_t>> inputs = {input.data};
  const std::vector<size_t> outputBytes = {reference.data.size()};

  TempDir host, device;
  ASSERT_EQ(writeCModule(model, name, "host", {}, host.path()), "");
  kiln::CompileResult compiled;
  ASSERT_EQ(writeCModule(model, name, board.target, {}, device.path(), &compiled), "");
  ModuleRun want = runOnHost(host.path(), name, inputs, outputBytes);
  ASSERT_EQ(want.error, "");
  ModuleRun got = runOnBoard(board, device.path(), name, inputs, outputBytes);
  ASSERT_EQ(got.error, "");

  kiln::NpyArray hostOut = reference, boardOut = reference;
  hostOut.data = want.outputs[0];
  boardOut.data = got.outputs[0];
  EXPECT_TRUE(integersEqual(boardOut, hostOut)) << name << " on " << board.machine << " vs host";
  EXPECT_TRUE(integersEqual(boardOut, reference))
      << name << " on " << board.machine << " vs TFLite";
  // The firmware's merged build attributes: ARMv6-M code with no FP unit
  // on the Cortex-M0+ target (SOFTMAX's float table arithmetic runs as
  // libgcc's soft-float calls there).
  if (board.target == "thumbv6m-none-eabi") {
    CommandResult attributes =
        runCommand("arm-none-eabi-readelf -A " + shellQuote(device.file("prog.elf")));
    EXPECT_NE(attributes.output.find("Tag_CPU_arch: v6S-M"), std::string::npos)
        << attributes.output;
    EXPECT_EQ(attributes.output.find("Tag_FP_arch"), std::string::npos) << attributes.output;
  }
  const int64_t ram = compiled.arenaBytes + compiled.inputBytes + compiled.outputBytes +
                      std::max<int64_t>(compiled.stackBytes, 0);
  std::cout << "[ figures  ] " << name << " " << board.target << ": kernels " << compiled.codeBytes
            << " B, weights " << compiled.constantBytes << " B, arena " << compiled.arenaBytes
            << " B, RAM (arena + I/O + stack) " << ram << " B; firmware flash " << got.flashBytes
            << " B; QEMU run on " << board.machine << " " << got.seconds << " s\n";
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string board = std::get<1>(info.param).machine;
  for (char &c : board)
    if (c == '-')
      c = '_';
  return std::get<0>(info.param) + "_on_" + board;
}

INSTANTIATE_TEST_SUITE_P(
    PersonDetectAndMicroSpeech, Int8OnCortexM,
    ::testing::Combine(::testing::Values("person_detect", "micro_speech_quantized"),
                       ::testing::Values(cortexM4Board(), cortexM0PlusBoard())),
    caseName);

} // namespace
