//===- CortexMIntegerTest.cpp - The Cortex-M0+ target (thumbv6m) ----------===//
//
// thumbv6m-none-eabi: the Cortex-M0+ (ARMv6-M, no FPU, no DSP, soft-float
// EABI) takes integer models only.
//   - An integer TOSA model (tests/data/mlir/int8_cortexm.mlir: int8 conv,
//     per-channel rescale, clamp, average pool, fully connected) compiled to
//     a thumbv6m C module runs on QEMU's mps2-an385 and gives the same bytes
//     as the same model's host C module on a seeded input; the linked
//     firmware is ARMv6-M throughout (its ELF attributes) and uses no FPU.
//   - The board catches what an M0+ would: an unaligned word load faults.
//   - A float model is one error in compile, export and inspect, naming the
//     target, the model and the operator; a float input that only reaches
//     an output (no dispatch) is refused too.
//   - export writes the C module for cortex-m0plus.
// The QEMU tests skip, saying which Debian packages they need, without
// arm-none-eabi-gcc and qemu-system-arm.
//
//===----------------------------------------------------------------------===//
#include "CortexMBoards.h"
#include "TestSupport.h"

#include "llvm/Support/JSON.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

using namespace kiln::test;

namespace {

const std::string kIntModel = std::string(KILN_TEST_DATA_DIR) + "/mlir/int8_cortexm.mlir";
const std::string kFloatModel = std::string(KILN_TEST_DATA_DIR) + "/ops/add_relu/model.tflite";

/// `bytes` int8 values drawn uniformly from [-128, 127] (mt19937, `seed`).
std::vector<uint8_t> seededInt8(size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-128, 127);
  std::vector<uint8_t> out(bytes);
  for (uint8_t &b : out)
    b = static_cast<uint8_t>(static_cast<int8_t>(value(rng)));
  return out;
}

TEST(CortexM0Plus, IntegerTosaModelOnMps2An385MatchesHostBitForBit) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  TempDir host, board;
  ASSERT_EQ(writeCModule(kIntModel, "int8_cortexm", "host", {}, host.path()), "");
  kiln::CompileResult compiled;
  ASSERT_EQ(
      writeCModule(kIntModel, "int8_cortexm", "thumbv6m-none-eabi", {}, board.path(), &compiled),
      "");
  EXPECT_EQ(compiled.triple, "thumbv6m-none-unknown-eabi");
  // 1x4x4x3 int8 in, 1x10 int8 out.
  const std::vector<std::vector<uint8_t>> inputs = {seededInt8(48, 12)};
  const std::vector<size_t> outputBytes = {10};
  ModuleRun want = runOnHost(host.path(), "int8_cortexm", inputs, outputBytes);
  ASSERT_EQ(want.error, "");
  ModuleRun got =
      runOnBoard(cortexM0PlusBoard(), board.path(), "int8_cortexm", inputs, outputBytes);
  ASSERT_EQ(got.error, "");
  ASSERT_EQ(got.outputs.size(), 1u);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_EQ(static_cast<int8_t>(got.outputs[0][i]), static_cast<int8_t>(want.outputs[0][i]))
        << "output element " << i;
  // The whole firmware (kernels, C glue, newlib, libgcc's thumb/v6-m
  // helpers such as __aeabi_lmul) is ARMv6-M and has no FP code: the
  // linker's merged build attributes would name a later architecture or
  // an FP unit if any object needed one.
  CommandResult attributes =
      runCommand("arm-none-eabi-readelf -A " + shellQuote(board.file("prog.elf")));
  EXPECT_NE(attributes.output.find("Tag_CPU_arch: v6S-M"), std::string::npos) << attributes.output;
  EXPECT_EQ(attributes.output.find("Tag_FP_arch"), std::string::npos) << attributes.output;
  EXPECT_EQ(attributes.output.find("Tag_ABI_VFP_args"), std::string::npos) << attributes.output;
  std::cout << "[ figures  ] thumbv6m int8_cortexm: kernels " << compiled.codeBytes
            << " B, weights " << compiled.constantBytes << " B, arena " << compiled.arenaBytes
            << " B; firmware flash " << got.flashBytes << " B; QEMU run " << got.seconds << " s\n";
}

TEST(CortexM0Plus, UnalignedWordLoadFaultsOnMps2An385) {
  // startup.c makes the an385's Cortex-M3 fault on unaligned accesses for
  // ARMv6-M builds, as a Cortex-M0+ does; without that the M3 would run
  // such code and the thumbv6m tests would not see it.
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  const std::string m = KILN_CROSS_DIR "/cortexm", kit = cortexMKitDir();
  const CortexMBoard board = cortexM0PlusBoard();
  CommandResult built =
      runCommand("arm-none-eabi-gcc -O2 " + board.cpuFlags + " -nostartfiles -T " +
                 shellQuote(writeLinkerScript(board, dir.path())) + " -Wl,--no-warn-execstack -I" +
                 kit + " " + kit + "/startup.c " + m + "/unaligned_main.c -lc -lgcc -o " +
                 shellQuote(dir.file("prog.elf")));
  ASSERT_EQ(built.exitCode, 0) << built.output;
  CommandResult ran = runCommand("cd " + shellQuote(dir.path()) +
                                 " && timeout 60 qemu-system-arm -M " + board.machine +
                                 " -nographic -monitor none -serial none -semihosting-config "
                                 "enable=on,target=native -kernel prog.elf");
  EXPECT_EQ(ran.exitCode, 1) << ran.output;
  EXPECT_NE(ran.output.find("fault"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("unaligned load done"), std::string::npos) << ran.output;
}

TEST(CortexM0Plus, FloatModelIsOneErrorInCompileExportAndInspect) {
  TempDir dir;
  const std::string model = shellQuote(kFloatModel);
  const std::initializer_list<std::string> needles = {
      "thumbv6m-none-eabi has no FPU: Kiln compiles only integer models for it; model.tflite "
      "computes in float32 (operator ADD #0: its output is float32)"};
  EXPECT_TRUE(kilnFailsCleanly("compile " + model +
                                   " --target=thumbv6m-none-eabi --output-format=c-module -o " +
                                   shellQuote(dir.file("c")),
                               needles));
  EXPECT_TRUE(kilnFailsCleanly("export " + model +
                                   " --target=thumbv6m-none-eabi --output-format=c-module -o " +
                                   shellQuote(dir.file("bundle")),
                               needles));
  EXPECT_TRUE(kilnFailsCleanly("inspect " + model + " --target=thumbv6m-none-eabi", needles));
  // The same rule for any CPU without an FPU, named by its triple.
  EXPECT_TRUE(kilnFailsCleanly("compile " + model +
                                   " --target-triple=thumbv7m-none-eabi --target-cpu=cortex-m3 "
                                   "--output-format=c-module -o " +
                                   shellQuote(dir.file("c3")),
                               {"target 'thumbv7m-none-unknown-eabi' (cpu cortex-m3) has no FPU"}));
}

TEST(CortexM0Plus, FloatInputCopiedToAnOutputIsRefused) {
  // No operator computes here (the output is the input): the float I/O
  // itself is what the target cannot take.
  TempDir dir;
  std::ofstream(dir.file("copy.mlir"))
      << "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %0 = \"tosa.identity\"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}\n";
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(dir.file("copy.mlir")) +
                                   " --target=thumbv6m-none-eabi --output-format=c-module -o " +
                                   shellQuote(dir.file("c")),
                               {"thumbv6m-none-eabi has no FPU",
                                "copy.mlir computes in float32 (model input 0 is float32)"}));
}

TEST(CortexM0Plus, IntegerModelExportsForCortexM0Plus) {
  TempDir dir;
  CommandResult r = runCommand(kilnBinary() + " export " + shellQuote(kIntModel) +
                               " --target=thumbv6m-none-eabi --output-format=c-module "
                               "--profile=stripped -o " +
                               shellQuote(dir.file("bundle")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(dir.file("bundle/manifest.json"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto manifest = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(manifest)) << llvm::toString(manifest.takeError());
  const llvm::json::Object *target = manifest->getAsObject()->getObject("target");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->getString("name").value_or(""), "thumbv6m-none-eabi");
  EXPECT_EQ(target->getString("cpu").value_or(""), "cortex-m0plus");
  EXPECT_EQ(target->getString("triple").value_or(""), "thumbv6m-none-unknown-eabi");
  std::ifstream header(dir.file("bundle/int8_cortexm.h"));
  EXPECT_TRUE(header.good());
}

} // namespace
