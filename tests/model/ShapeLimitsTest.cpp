//===- ShapeLimitsTest.cpp - Shapes no target can hold, zero and bad dims --===//
//
// Shapes are checked once, right after import, before anything multiplies
// them: a dimension below -1 is invalid (not dynamic), a zero-size tensor
// is refused naming the tensor and dimension (Kiln's choice; TFLite runs
// them as empty tensors), an element count that overflows 64 bits and a
// tensor above the target's buffer limit are refused naming the tensor, its
// shape and byte size. Each gives one `kiln: error:` line and exit 1.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

using namespace kiln::test;

namespace {

std::string data(const std::string &rel) {
  return shellQuote(std::string(KILN_TEST_DATA_DIR) + "/" + rel);
}

TEST(ShapeLimits, InvalidDimensionIsNotDynamic) {
  std::string model = data("bad/invalid_dimension.tflite");
  for (const char *cmd : {"compile", "inspect", "run"})
    EXPECT_TRUE(kilnFailsCleanly(std::string(cmd) + " " + model,
                                 {"tensor 'input'", "invalid dimension 0 = -2"}))
        << cmd;
  CommandResult r = runCommand(kilnBinary() + " compile " + model);
  EXPECT_EQ(r.output.find("fix-shape"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("dynamic dimension 0"), std::string::npos) << r.output;
}

TEST(ShapeLimits, ElementCountOverflowIsRefused) {
  EXPECT_TRUE(kilnFailsCleanly("compile " + data("bad/element_count_overflow.tflite"),
                               {"[2147483647,2147483647,2147483647]", "overflows 64 bits"}));
}

// 1 x 100000 x 100000 x 8 floats = 320000000000 bytes: refused at compile
// time on a 64-bit target (4 GiB default), naming the tensor and bytes.
TEST(ShapeLimits, HugeIntermediateIsRefusedAtCompileTime) {
  for (const char *cmd : {"compile", "run", "inspect"})
    EXPECT_TRUE(kilnFailsCleanly(std::string(cmd) + " " + data("bad/huge_intermediate.tflite"),
                                 {"tensor 'resize'", "operator #0 RESIZE_NEAREST_NEIGHBOR",
                                  "320000000000 bytes", "4294967296-byte limit"}))
        << cmd;
}

// 1 x 16384 x 16384 x 2 floats = 2^31 bytes: fine for x86-64, one byte
// too many for a 32-bit target (PTRDIFF_MAX = 2^31 - 1).
TEST(ShapeLimits, TwoGibTensorFitsOnlyWith64BitPointers) {
  const std::string path = std::string(KILN_TEST_DATA_DIR) + "/bad/above_2gib.tflite";
  auto plan = kiln::planModel(path, kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ((*plan)->memory.arenaBytes, int64_t(1) << 31);
  TempDir tmp;
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(path) +
                                   " --target=thumbv7em-none-eabihf --output-format=c-module -o " +
                                   shellQuote(tmp.path()),
                               {"2147483648 bytes", "2147483647-byte limit", "32-bit pointers"}));
  // It cannot be raised past what 32-bit pointers address.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(path) +
                                   " --target=thumbv7em-none-eabihf --output-format=c-module"
                                   " --max-buffer-bytes=10000000000 -o " + shellQuote(tmp.path()),
                               {"--max-buffer-bytes=10000000000 is above", "2147483647 bytes"}));
  // The limit is a setting: lowered, the same model is refused on x86-64.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(path) + " --max-buffer-bytes=1000000 -o " +
                                   shellQuote(tmp.file("m.kiln")),
                               {"2147483648 bytes", "1000000-byte limit", "--max-buffer-bytes"}));
}

// Raised limit, tiny tiles: 1 x 100000 x 100000 workgroups do not fit the
// artifact's 32-bit workgroup count; refused naming the dispatch.
TEST(ShapeLimits, WorkgroupCountAbove32BitsIsRefused) {
  EXPECT_TRUE(kilnFailsCleanly("inspect " + data("bad/huge_intermediate.tflite") +
                                   " --max-buffer-bytes=400000000000 --tile=0=0,1,1,1,0,0",
                               {"main_dispatch_0 would launch 100000x100000x1 workgroups",
                                "2^32 - 1"}));
}

// An empty float constant is a zero-size tensor too (not "used before any
// operator computes it").
TEST(ShapeLimits, ZeroSizeConstantIsRefusedAsZeroSize) {
  EXPECT_TRUE(kilnFailsCleanly("compile " + data("bad/zero_size_constant.tflite"),
                               {"tensor 'empty_k'", "[2,0,3]", "dimension 1 is 0"}));
}

// A 5 GB .npy input (a sparse file) under a 7.5 GB address-space limit:
// the file maps, its 5 GB of data cannot be allocated next to it, and kiln
// run reports the bytes instead of aborting with std::bad_alloc. Under
// 3 GB even the mapping fails, again one line naming the bytes.
#if defined(__SANITIZE_ADDRESS__) // gcc
#define KILN_TEST_UNDER_ASAN 1
#elif defined(__has_feature) // clang (the build-fuzz tree)
#if __has_feature(address_sanitizer)
#define KILN_TEST_UNDER_ASAN 1
#endif
#endif

TEST(ShapeLimits, HugeNpyInputIsAnAllocationErrorNotAnAbort) {
#ifdef KILN_TEST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of shadow memory, which ulimit -v "
                  "forbids; the normal build (scripts/test.sh) runs this test";
#endif
  TempDir tmp;
  const std::string npy = tmp.file("big.npy");
  uint64_t fileBytes = 0;
  {
    kiln::NpyArray header;
    header.dtype = "<f4";
    header.shape = {1250000000};
    std::vector<uint8_t> bytes = kiln::serializeNpy(header); // header only
    std::FILE *f = std::fopen(npy.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    fileBytes = bytes.size() + 5000000000ull;
    ASSERT_EQ(truncate(npy.c_str(), static_cast<off_t>(fileBytes)), 0);
  }
  auto run = [&](const char *limitKiB) {
    std::string cmd = std::string("ulimit -v ") + limitKiB + "; " + kilnBinary() + " run " +
                      data("ops/relu/model.tflite") + " --input=@" + shellQuote(npy);
    return runCommand("sh -c " + shellQuote(cmd));
  };
  CommandResult r = run("7500000");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("kiln: error: cannot allocate 5000000000 bytes for " + npy),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
  r = run("3000000");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find(npy + ": cannot read its " + std::to_string(fileBytes) + " bytes"), std::string::npos)
      << r.output;
}

// The arena is one buffer too: a model whose tensors each fit the limit
// but whose arena does not is refused after planning.
TEST(ShapeLimits, ArenaAboveTheLimitIsRefused) {
  kiln::CompileOptions options;
  options.maxBufferBytes = 4096;
  const std::string path = std::string(KILN_TEST_DATA_DIR) + "/ops/chain_attention/model.tflite";
  auto plan = kiln::planModel(path, kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  int64_t largest = 0;
  for (const kiln::Buffer &b : (*plan)->memory.buffers)
    largest = std::max(largest, b.bytes);
  ASSERT_GT((*plan)->memory.arenaBytes, largest) << "needs an arena above its largest tensor";
  options.maxBufferBytes = largest;
  auto refused = kiln::planModel(path, options);
  ASSERT_FALSE(static_cast<bool>(refused));
  std::string message = llvm::toString(refused.takeError());
  EXPECT_NE(message.find("the arena needs " + std::to_string((*plan)->memory.arenaBytes) +
                         " bytes"),
            std::string::npos)
      << message;
}

// Kiln refuses zero-size tensors (a graph input or an operator's output)
// with one line naming the tensor and the dimension; TFLite would run them
// as empty tensors (tests/data/zero/*/output_K.npy holds what it returns).
class ZeroSize : public ::testing::TestWithParam<std::string> {};

TEST_P(ZeroSize, RefusedNamingTensorAndDimension) {
  std::string model = data("zero/" + GetParam() + "/model.tflite");
  for (const char *cmd : {"compile", "inspect"})
    EXPECT_TRUE(kilnFailsCleanly(std::string(cmd) + " " + model,
                                 {"tensor '", "is 0. Kiln does not compile zero-size tensors"}))
        << cmd;
}

std::vector<std::string> zeroCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(std::string(KILN_TEST_DATA_DIR) + "/zero", ec))
    if (e.is_directory())
      cases.push_back(e.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(ZeroSizeCases, FolderIsPopulated) { EXPECT_GE(zeroCases().size(), 5u); }

INSTANTIATE_TEST_SUITE_P(Models, ZeroSize, ::testing::ValuesIn(zeroCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
