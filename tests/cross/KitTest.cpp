//===- KitTest.cpp - Firmware kits built and run on their device ---------===//
//
// `kiln export --kit` bundles, built with their own Makefile and run with
// `make run`, as a user would:
//   - TensorFlow Lite Micro's int8 person_detect (tests/data/models/int8)
//     on QEMU's mps2-an386 (Cortex-M4F) and mps2-an385 (the Cortex-M0+
//     target), and under qemu-aarch64 (the aarch64 kit with the runtime
//     archive the build cross-compiled): on the stored seeded input
//     (--kit-input) the printed output bytes equal the host runtime's and
//     TensorFlow Lite 2.9's (output_0.npy);
//   - the pattern input (no --kit-input) is the sequence kit.h documents;
//   - `kiln validate --on-target` runs the kit and passes against the host,
//     for a model and for a bundle's folder (which fails once its input is
//     edited);
//   - errors: a model over the RAM budget stops the link with the export's
//     figures, a missing runtime archive and a missing tool are one line
//     each, a --kit-input of the wrong shape names the file and the input.
// The output lines are parsed here, independently of kiln::parseKitOutputs.
//
//===----------------------------------------------------------------------===//
#include "CortexMBoards.h"
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

const std::string kInt8Dir = std::string(KILN_TEST_DATA_DIR) + "/models/int8";
const std::string kPersonDetect = kInt8Dir + "/person_detect.tflite";
const std::string kPersonInput = kInt8Dir + "/person_detect/input_0.npy";
const std::string kIntModel = std::string(KILN_TEST_DATA_DIR) + "/mlir/int8_cortexm.mlir";

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool haveTool(const std::string &tool) {
  return runCommand("command -v " + shellQuote(tool) + " >/dev/null 2>&1").exitCode == 0;
}

/// The bytes of each "kiln-output K BYTES HEX" line of `text`, by K; fails
/// the test when "kiln-done" is missing or a line is malformed.
std::vector<std::vector<uint8_t>> printedOutputs(const std::string &text) {
  std::vector<std::vector<uint8_t>> outputs;
  std::istringstream lines(text);
  std::string line;
  bool done = false;
  while (std::getline(lines, line)) {
    done = done || line == "kiln-done";
    std::istringstream words(line);
    std::string tag, hex;
    size_t index = 0, bytes = 0;
    if (!(words >> tag) || tag != "kiln-output")
      continue;
    words >> index >> bytes >> hex;
    EXPECT_EQ(index, outputs.size()) << line;
    EXPECT_EQ(hex.size(), 2 * bytes) << line;
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    outputs.push_back(out);
  }
  EXPECT_TRUE(done) << text;
  return outputs;
}

/// Exports `model` with a kit for `target` into DIR/kit (extra flags in
/// `flags`); the command's result.
CommandResult exportKit(const std::string &model, const std::string &target,
                        const std::string &flags, const TempDir &dir) {
  return runCommand(kilnBinary() + " export " + shellQuote(model) + " --target=" + target +
                    " --kit " + flags + " -o " + shellQuote(dir.file("kit")));
}

/// The host runtime's outputs for `model` on `inputs`.
std::vector<kiln::NpyArray> hostOutputs(const std::string &model,
                                        const std::vector<kiln::NpyArray> &inputs) {
  auto built = kiln::compile(model, {});
  EXPECT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  if (!built)
    return {};
  auto ran = kiln::runArtifact(built->artifact, inputs);
  EXPECT_TRUE(static_cast<bool>(ran)) << llvm::toString(ran.takeError());
  return ran ? ran->outputValues : std::vector<kiln::NpyArray>();
}

/// Builds the kit in `dir` with `make` (no compiler warning) and runs it.
CommandResult makeAndRun(const std::string &dir) {
  CommandResult built = runCommand("make -C " + shellQuote(dir));
  EXPECT_EQ(built.exitCode, 0) << built.output;
  EXPECT_EQ(built.output.find("warning:"), std::string::npos) << built.output;
  return runCommand("timeout 300 make -s -C " + shellQuote(dir) + " run");
}

/// person_detect's kit for `target` on the stored input: the printed
/// output equals the host runtime's and TFLite's.
void expectPersonDetectKitMatches(const std::string &target, const std::string &flags) {
  TempDir dir;
  CommandResult exported =
      exportKit(kPersonDetect, target, flags + " --kit-input=" + shellQuote(kPersonInput), dir);
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  CommandResult ran = makeAndRun(dir.file("kit"));
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  std::vector<std::vector<uint8_t>> printed = printedOutputs(ran.output);
  ASSERT_EQ(printed.size(), 1u) << ran.output;
  kiln::NpyArray reference = loadNpy(kInt8Dir + "/person_detect/output_0.npy");
  std::vector<kiln::NpyArray> host = hostOutputs(kPersonDetect, {loadNpy(kPersonInput)});
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(printed[0], host[0].data) << target << " kit vs the host runtime";
  EXPECT_EQ(printed[0], reference.data) << target << " kit vs TFLite";
}

TEST(FirmwareKit, CortexM4FKitOfPersonDetectMatchesHostAndTFLite) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  expectPersonDetectKitMatches("thumbv7em-none-eabihf", "--output-format=c-module");
}

TEST(FirmwareKit, CortexM0PlusKitOfPersonDetectMatchesHostAndTFLite) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  expectPersonDetectKitMatches("thumbv6m-none-eabi", "--output-format=c-module");
}

TEST(FirmwareKit, Aarch64KitRunsUnderQemuUserAndMatchesHostAndTFLite) {
  if (!haveTool("aarch64-linux-gnu-gcc") || !haveTool("aarch64-linux-gnu-g++") ||
      !haveTool("qemu-aarch64"))
    GTEST_SKIP() << "needs aarch64-linux-gnu-gcc (the kit), -g++ (Kiln's build of the runtime "
                    "archive) and qemu-aarch64 (Debian packages "
                    "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user; re-run cmake "
                    "after installing them so the build makes the aarch64 runtime archive)";
  expectPersonDetectKitMatches("aarch64-linux-gnu", "");
}

/// The kit's manifest (DIR/kit/manifest.json).
llvm::json::Object manifestOf(const TempDir &dir) {
  std::string text = readText(dir.file("kit/manifest.json"));
  auto parsed = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  return parsed && parsed->getAsObject() ? *parsed->getAsObject() : llvm::json::Object();
}

TEST(FirmwareKit, PatternInputIsTheDocumentedSequenceAndRunsAsOnTheHost) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  CommandResult exported =
      exportKit(kIntModel, "thumbv6m-none-eabi", "--output-format=c-module", dir);
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  // int8 1x4x4x3: element i is (37 i + 11) mod 256 - 128 (kit.h).
  kiln::NpyArray pattern{"|i1", {1, 4, 4, 3}, {}};
  std::string expected;
  for (int i = 0; i < 48; ++i) {
    pattern.data.push_back(static_cast<uint8_t>(static_cast<int8_t>((37 * i + 11) % 256 - 128)));
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x,", pattern.data.back());
    expected += std::string(i % 16 ? " " : "\n    ") + hex;
  }
  EXPECT_EQ(pattern.data[0], 0x8b); // 11 - 128 = -117
  std::string buffers = readText(dir.file("kit/kit_buffers.c"));
  EXPECT_NE(buffers.find("input0[48] KILN_KIT_ALIGNED = {" + expected + "\n};"), std::string::npos)
      << buffers;
  llvm::json::Object manifest = manifestOf(dir);
  const llvm::json::Object *kit = manifest.getObject("kit");
  ASSERT_NE(kit, nullptr);
  EXPECT_EQ(kit->getString("board").value_or(""), "mps2-an385");
  EXPECT_EQ((*kit->getArray("inputs"))[0].getAsObject()->getString("source").value_or(""),
            "pattern");
  EXPECT_NE(manifest.getString("command")->find(" --kit"), llvm::StringRef::npos);

  CommandResult ran = makeAndRun(dir.file("kit"));
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  std::vector<std::vector<uint8_t>> printed = printedOutputs(ran.output);
  std::vector<kiln::NpyArray> host = hostOutputs(kIntModel, {pattern});
  ASSERT_EQ(printed.size(), 1u);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(printed[0], host[0].data);

  // `kiln validate BUNDLE --on-target` runs the bundle's own kit: it
  // passes, and fails (exit status 3) once its input no longer is the
  // pattern the host build gets.
  const std::string validate =
      kilnBinary() + " validate " + shellQuote(dir.file("kit")) + " --on-target";
  CommandResult passed = runCommand(validate);
  EXPECT_EQ(passed.exitCode, 0) << passed.output;
  EXPECT_NE(passed.output.find("PASS: every element of output on mps2-an385 equal to the "
                               "reference"),
            std::string::npos)
      << passed.output;
  std::string edited = buffers;
  edited.replace(edited.find("0x8b,"), 5, "0x00,");
  std::ofstream(dir.file("kit/kit_buffers.c"), std::ios::binary) << edited;
  CommandResult failed = runCommand(validate);
  EXPECT_EQ(failed.exitCode, 3) << failed.output;
  EXPECT_NE(failed.output.find("FAIL: every element of output on mps2-an385"), std::string::npos)
      << failed.output;
  CommandResult flags = runCommand(validate + " --target=thumbv6m-none-eabi");
  EXPECT_EQ(flags.exitCode, 2) << flags.output;
}

TEST(FirmwareKit, ValidateOnTargetRunsTheKitAndPassesAgainstTheHost) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  TempDir tmp; // the temporary kit is made here and removed after a pass
  CommandResult ran = runCommand(
      "TMPDIR=" + shellQuote(tmp.path()) + " " + kilnBinary() + " validate " +
      shellQuote(kPersonDetect) +
      " --target=thumbv7em-none-eabihf --on-target --kit-input=" + shellQuote(kPersonInput));
  EXPECT_EQ(ran.exitCode, 0) << ran.output;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "the passing kit's temporary folder was left";
  EXPECT_NE(ran.output.find("built in a temporary folder"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("run on mps2-an386"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("PASS: every element of output on mps2-an386 equal to the reference"),
            std::string::npos)
      << ran.output;
  // One row for the one output: 2 elements, 0 LSB, none differing.
  EXPECT_NE(ran.output.find("on mps2-an386"), std::string::npos);
  CommandResult json = runCommand(kilnBinary() + " validate " + shellQuote(kPersonDetect) +
                                  " --target=thumbv6m-none-eabi --on-target --json");
  ASSERT_EQ(json.exitCode, 0) << json.output;
  auto parsed = llvm::json::parse(json.output);
  ASSERT_TRUE(static_cast<bool>(parsed)) << json.output;
  const llvm::json::Object *report = parsed->getAsObject();
  EXPECT_EQ(report->getBoolean("pass"), true);
  const llvm::json::Object *output = (*report->getArray("outputs"))[0].getAsObject();
  EXPECT_EQ(output->getInteger("elements"), 2);
  EXPECT_EQ(output->getInteger("differing"), 0);
}

TEST(FirmwareKit, ValidateOnTargetWithoutTheCompilerNamesItsPackage) {
  TempDir dir;
  // A PATH with make and nothing else.
  fs::create_directories(dir.file("bin"));
  CommandResult make =
      runCommand("ln -s \"$(command -v make)\" " + shellQuote(dir.file("bin/make")));
  ASSERT_EQ(make.exitCode, 0) << make.output;
  TempDir tmp; // a refusal leaves no empty folder behind
  CommandResult ran =
      runCommand("PATH=" + shellQuote(dir.file("bin")) + " TMPDIR=" + shellQuote(tmp.path()) + " " +
                 kilnBinary() + " validate " + shellQuote(kIntModel) +
                 " --target=thumbv6m-none-eabi --on-target");
  EXPECT_EQ(ran.exitCode, 1) << ran.output;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "the refused kit's temporary folder was left";
  EXPECT_EQ(std::count(ran.output.begin(), ran.output.end(), '\n'), 1) << ran.output;
  EXPECT_NE(ran.output.find("arm-none-eabi-gcc is not installed (Debian package "
                            "gcc-arm-none-eabi libnewlib-arm-none-eabi)"),
            std::string::npos)
      << ran.output;
}

// A model the compiler refuses is named once, as the compiler names it
// (the review saw "m/embedding.tflite: embedding.tflite: input ...").
TEST(FirmwareKit, ValidateOnTargetNamesARefusedModelOnce) {
  const std::string model = std::string(KILN_TEST_DATA_DIR) + "/bad/unsupported_op.tflite";
  CommandResult ran = runCommand(kilnBinary() + " validate " + shellQuote(model) +
                                 " --target=thumbv7em-none-eabihf --on-target");
  EXPECT_EQ(ran.exitCode, 1) << ran.output;
  size_t count = 0;
  for (size_t at = ran.output.find("unsupported_op.tflite:"); at != std::string::npos;
       at = ran.output.find("unsupported_op.tflite:", at + 1))
    ++count;
  EXPECT_EQ(count, 1u) << ran.output;
}

TEST(FirmwareKit, ModelOverTheRamBudgetStopsTheLinkWithTheExportsFigures) {
  if (std::string why = missingCortexMTools(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  CommandResult exported = exportKit(kPersonDetect, "thumbv7em-none-eabihf",
                                     "--output-format=c-module --ram-budget=32K", dir);
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  EXPECT_NE(exported.output.find("exceeds the budget 32 KiB"), std::string::npos)
      << exported.output;
  // The manifest outlives the pointer into it (a temporary's would dangle:
  // CI read freed memory here).
  llvm::json::Object manifest = manifestOf(dir);
  const llvm::json::Object *memory = manifest.getObject("memory");
  ASSERT_NE(memory, nullptr);
  // The linker script's RAM is the budget, and its message quotes the
  // manifest's arena and I/O bytes.
  std::string script = readText(dir.file("kit/person_detect.ld"));
  EXPECT_NE(script.find("RAM (rwx)  : ORIGIN = 0x20000000, LENGTH = 32768"), std::string::npos)
      << script;
  CommandResult built = runCommand("make -C " + shellQuote(dir.file("kit")));
  EXPECT_NE(built.exitCode, 0) << built.output;
  EXPECT_NE(built.output.find("kiln kit: person_detect does not fit in RAM (32768 bytes): the "
                              "export counted arena " +
                              std::to_string(*memory->getInteger("arena_bytes")) + " + I/O " +
                              std::to_string(*memory->getInteger("io_bytes")) + " bytes"),
            std::string::npos)
      << built.output;
  EXPECT_NE(built.output.find("region `RAM' overflowed"), std::string::npos) << built.output;
}

TEST(FirmwareKit, MissingRuntimeArchiveIsOneErrorNamingItAndHowToGetIt) {
  // The same kiln with no lib/kiln beside its bin/ folder (a hard link:
  // the executable's path is the link's).
  TempDir dir;
  fs::create_directories(dir.file("bin"));
  std::error_code ec;
  fs::create_hard_link(kilnBinary(), dir.file("bin/kiln"), ec);
  if (ec)
    fs::copy_file(kilnBinary(), dir.file("bin/kiln"));
  CommandResult ran =
      runCommand(shellQuote(dir.file("bin/kiln")) + " export " + shellQuote(kPersonDetect) +
                 " --target=aarch64-linux-gnu --kit -o " + shellQuote(dir.file("out")));
  EXPECT_EQ(ran.exitCode, 1) << ran.output;
  EXPECT_EQ(std::count(ran.output.begin(), ran.output.end(), '\n'), 1) << ran.output;
  EXPECT_NE(ran.output.find(dir.file("lib/kiln/aarch64-linux-gnu/libkiln_runtime.a") +
                            ", which does not exist"),
            std::string::npos)
      << ran.output;
  EXPECT_NE(ran.output.find("install g++-aarch64-linux-gnu and rebuild Kiln"), std::string::npos)
      << ran.output;
  EXPECT_FALSE(fs::exists(dir.file("out")));
}

TEST(FirmwareKit, KitInputOfAnotherShapeNamesTheFileAndTheInput) {
  TempDir dir;
  const std::string other = kInt8Dir + "/micro_speech_quantized/input_0.npy";
  CommandResult ran = exportKit(kPersonDetect, "thumbv7em-none-eabihf",
                                "--output-format=c-module --kit-input=" + shellQuote(other), dir);
  EXPECT_EQ(ran.exitCode, 1) << ran.output;
  EXPECT_EQ(std::count(ran.output.begin(), ran.output.end(), '\n'), 1) << ran.output;
  EXPECT_NE(ran.output.find("--kit-input=" + other + " is i8 "), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("the model's input 0 "), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("is i8 1x96x96x1"), std::string::npos) << ran.output;
  EXPECT_FALSE(fs::exists(dir.file("kit")));
}

} // namespace
