//===- KitTest.cpp - Firmware kits' pieces (kiln/Kit.h) ------------------===//
//
// Without compiling or running anything: the project's "export.kit", the
// kit's file names, the pattern inputs (values computed here from the
// formula kit.h states), the input checks, the boards' linker script and
// the parser of the programs' output lines. tests/cross/KitTest.cpp builds
// and runs whole kits.
//
//===----------------------------------------------------------------------===//
#include "kiln/Kit.h"
#include "kiln/Project.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

std::string errorText(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  return value ? "" : llvm::toString(value.takeError());
}

TEST(KitProject, ExportKitRoundTripsAndReachesTheRequest) {
  auto p = kiln::parseProject(
      R"({"kiln_project": 1, "model": "face.tflite",
          "export": {"target": "thumbv6m-none-eabi", "output_format": "c-module", "kit": true}})",
      "m.kilnproj");
  ASSERT_TRUE(static_cast<bool>(p)) << llvm::toString(p.takeError());
  EXPECT_TRUE(p->exportSettings.kit);
  auto back = kiln::parseProject(kiln::projectToJson(*p), "m.kilnproj");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(*back == *p);
  kiln::ExportRequest request = kiln::projectExportRequest(*p, "/a/m.kilnproj");
  EXPECT_TRUE(request.kit.enabled);
  EXPECT_TRUE(request.kit.inputs.empty());
  // The C module, the Cortex-M kit (NAME.ld by the module's name), then
  // the manifest and the report.
  EXPECT_EQ(kiln::exportFileNames(request),
            (std::vector<std::string>{"face.h", "face.c", "face_constants.c", "face_kernels.o",
                                      "main.c", "startup.c", "semihost.h", "kit.h", "kit_buffers.c",
                                      "face.ld", "Makefile", "manifest.json", "report.md"}));
  request.recipe.target = "aarch64-linux-gnu";
  request.recipe.format = kiln::OutputFormat::Artifact;
  EXPECT_EQ(
      kiln::exportFileNames(request),
      (std::vector<std::string>{"face.kiln", "main.c", "kit.h", "kit_buffers.c", "runtime.h",
                                "libkiln_runtime.a", "Makefile", "manifest.json", "report.md"}));

  auto bad = kiln::parseProject(R"({"kiln_project": 1, "model": "m", "export": {"kit": 3}})",
                                "m.kilnproj");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "m.kilnproj: \"export.kit\" must be true or false (add a firmware kit)");
}

TEST(KitInputs, PatternFollowsTheDocumentedFormulaPerType) {
  const std::vector<kiln::IOInfo> inputs = {{"a", "|i1", {3}, 3},
                                            {"b", "|u1", {2}, 2},
                                            {"c", "<f4", {2}, 8},
                                            {"d", "|b1", {3}, 3},
                                            {"e", "<i4", {2}, 8}};
  auto got = kiln::kitPatternInputs(inputs);
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(got->size(), 5u);
  // v(i) = (37 i + 11) mod 256 - 128: v(0) = -117, v(1) = -80, v(2) = -43.
  EXPECT_EQ((*got)[0].bytes, (std::vector<uint8_t>{0x8b, 0xb0, 0xd5}));
  EXPECT_EQ((*got)[1].bytes, (std::vector<uint8_t>{11, 48}));
  float c[2];
  std::memcpy(c, (*got)[2].bytes.data(), 8);
  EXPECT_EQ(c[0], -117.0f / 128.0f);
  EXPECT_EQ(c[1], -0.625f);
  EXPECT_EQ((*got)[3].bytes, (std::vector<uint8_t>{0, 1, 0}));
  // Little-endian int32 -117 and -80.
  EXPECT_EQ((*got)[4].bytes,
            (std::vector<uint8_t>{0x8b, 0xff, 0xff, 0xff, 0xb0, 0xff, 0xff, 0xff}));
  EXPECT_EQ((*got)[4].dtype, "<i4");
  EXPECT_TRUE((*got)[4].file.empty());

  EXPECT_EQ(errorOf(kiln::kitPatternInputs({{"h", "<f2", {2}, 4}})),
            "input 0 \"h\" is f16: the kit's pattern covers integer, bool, f32 and f64 inputs; "
            "give its values with --kit-input=FILE.npy");
}

TEST(KitInputs, GivenArraysMustMatchTheSignature) {
  const std::vector<kiln::IOInfo> inputs = {{"x", "|i1", {1, 4}, 4}};
  EXPECT_EQ(errorText(kiln::checkKitInputs({{"x.npy", "|i1", {1, 4}, {1, 2, 3, 4}}}, inputs)), "");
  EXPECT_EQ(errorText(kiln::checkKitInputs({{"x.npy", "|i1", {4}, {1, 2, 3, 4}}}, inputs)),
            "--kit-input=x.npy is i8 4, the model's input 0 \"x\" is i8 1x4");
  EXPECT_EQ(
      errorText(kiln::checkKitInputs({{"x.npy", "<f4", {1, 4}, std::vector<uint8_t>(16)}}, inputs)),
      "--kit-input=x.npy is f32 1x4, the model's input 0 \"x\" is i8 1x4");
  EXPECT_NE(
      errorText(kiln::checkKitInputs({}, inputs)).find("0 files given; the model has 1 input"),
      std::string::npos);
}

TEST(KitBoards, TheTwoCortexMTargetsHaveTheirQemuBoards) {
  const kiln::CortexMBoard *m4 = kiln::cortexMBoardOf("thumbv7em-none-eabihf");
  const kiln::CortexMBoard *m0 = kiln::cortexMBoardOf("thumbv6m-none-eabi");
  ASSERT_NE(m4, nullptr);
  ASSERT_NE(m0, nullptr);
  EXPECT_EQ(m4->machine, "mps2-an386");
  EXPECT_EQ(m0->machine, "mps2-an385");
  EXPECT_NE(m4->cpuFlags.find("-mfloat-abi=hard -mfpu=fpv4-sp-d16"), std::string::npos);
  EXPECT_NE(m0->cpuFlags.find("-mcpu=cortex-m0plus"), std::string::npos);
  EXPECT_EQ(kiln::cortexMBoardOf("aarch64-linux-gnu"), nullptr);

  kiln::FirmwareLayout layout{4194304, 32768, 9216, "t", "FLASH FULL", "RAM FULL"};
  const std::string script = kiln::firmwareLinkerScript(*m4, layout);
  for (const char *part :
       {"FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4194304",
        "RAM (rwx)  : ORIGIN = 0x20000000, LENGTH = 32768", "KILN_STACK_BYTES = 9216;",
        "ASSERT(__stack_top <= ORIGIN(RAM) + LENGTH(RAM), \"RAM FULL\");", "\"FLASH FULL\");",
        "> RAM AT > FLASH"})
    EXPECT_NE(script.find(part), std::string::npos) << part << "\n" << script;
  EXPECT_EQ(script.find('@'), std::string::npos) << script; // every placeholder filled
}

TEST(KitOutputs, LinesParseAndFailuresAreNamed) {
  auto got = kiln::parseKitOutputs("   text data bss\n"
                                   "kiln-output 0 2 6799\n"
                                   "kiln-output 1 0 \n"
                                   "kiln-output 2 3 00ff10\n"
                                   "kiln-done\n");
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  EXPECT_EQ(*got, (std::vector<std::vector<uint8_t>>{{0x67, 0x99}, {}, {0x00, 0xff, 0x10}}));
  EXPECT_EQ(errorOf(kiln::parseKitOutputs("kiln-error m_run failed\n")),
            "the kit's program failed: 'm_run failed'");
  EXPECT_EQ(errorOf(kiln::parseKitOutputs("kiln-output 0 1 ab\n")),
            "the kit's program stopped before printing \"kiln-done\" (1 output line(s) read)");
  EXPECT_NE(errorOf(kiln::parseKitOutputs("kiln-output 0 2 ab\nkiln-done\n")).find("malformed"),
            std::string::npos);
  EXPECT_NE(errorOf(kiln::parseKitOutputs("kiln-output 1 1 ab\nkiln-done\n")).find("output 0 "),
            std::string::npos);
  EXPECT_NE(errorOf(kiln::parseKitOutputs("kiln-output 0 1 zz\nkiln-done\n")).find("malformed"),
            std::string::npos);
}

} // namespace
