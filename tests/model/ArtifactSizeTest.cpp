//===- ArtifactSizeTest.cpp - Sections, profiles and kiln diff ------------===//
//
// The writer records the bytes of every section; the sections plus the
// format overhead add up to the file, the constants section holds at least
// the weights' bytes, the stripped profile drops reflection and the symbol
// table, and `kiln diff` reports B - A per section.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

using namespace kiln::test;

namespace {

std::string alexa() {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  std::string cache = env && *env ? env : std::string(std::getenv("HOME")) + "/.cache/kiln/models";
  return cache + "/alexa.tflite";
}

std::map<std::string, int64_t> byName(const kiln::SectionSizes &s) {
  std::map<std::string, int64_t> m;
  for (const auto &[name, bytes] : s.sections)
    m[name] = bytes;
  return m;
}

kiln::SectionSizes sizesOf(const std::vector<uint8_t> &bytes) {
  auto sizes = kiln::readSectionSizes(bytes, "test");
  EXPECT_TRUE(static_cast<bool>(sizes)) << llvm::toString(sizes.takeError());
  return sizes ? *sizes : kiln::SectionSizes();
}

TEST(ArtifactSize, SectionsAddUpToTheFile) {
  ASSERT_TRUE(std::filesystem::exists(alexa())) << "run tests/reference/fetch_models.mjs";
  auto built = kiln::compile(alexa(), kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
  kiln::SectionSizes s = sizesOf(built->artifact);
  auto m = byName(s);
  int64_t sum = s.overhead;
  for (const auto &[name, bytes] : s.sections)
    sum += bytes;
  EXPECT_EQ(sum, static_cast<int64_t>(built->artifact.size()));
  EXPECT_EQ(s.fileBytes, static_cast<int64_t>(built->artifact.size()));
  for (const char *name : {"io", "commands", "memory_plan", "executables", "device",
                           "constants", "reflection"})
    EXPECT_GT(m[name], 0) << name;
  // The wake-word head's weights: FC 1536->128, 128->128, 128->1 plus
  // biases = 213,249 floats = 852,996 bytes (plus names and alignment).
  EXPECT_GE(m["constants"], 852996);
  EXPECT_LT(m["constants"], 852996 + 16 * 64 + 1024);
  // Overhead: root table, vtables, size table, identifier, trailer.
  EXPECT_LT(s.overhead, 1024);
  EXPECT_GE(s.overhead, 8); // at least the checksum trailer
}

TEST(ArtifactSize, StrippedProfileDropsReflectionAndSymbols) {
  ASSERT_TRUE(std::filesystem::exists(alexa())) << "run tests/reference/fetch_models.mjs";
  kiln::CompileOptions stripped;
  ASSERT_FALSE(static_cast<bool>(kiln::applyProfile("stripped", stripped)));
  auto a = kiln::compile(alexa(), kiln::CompileOptions());
  auto b = kiln::compile(alexa(), stripped);
  ASSERT_TRUE(static_cast<bool>(a) && static_cast<bool>(b));
  auto ma = byName(sizesOf(a->artifact)), mb = byName(sizesOf(b->artifact));
  EXPECT_EQ(mb["reflection"], 0);
  EXPECT_LT(mb["executables"], ma["executables"]);
  EXPECT_EQ(mb["constants"], ma["constants"]);
  // The brief's headline: the stripped wake-word head without its
  // constants fits in 10 KB.
  EXPECT_LE(static_cast<int64_t>(b->artifact.size()) - mb["constants"], 10 * 1024);
  // And it still runs and gives the same output.
  kiln::NpyArray input = loadNpy(std::string(KILN_TEST_DATA_DIR) + "/models/alexa/input_0.npy");
  auto ra = kiln::runArtifact(a->artifact, {input});
  auto rb = kiln::runArtifact(b->artifact, {input});
  ASSERT_TRUE(static_cast<bool>(ra) && static_cast<bool>(rb));
  EXPECT_EQ(ra->outputValues[0].data, rb->outputValues[0].data);
}

TEST(ArtifactSize, InspectSizesAndDiffThroughTheCli) {
  ASSERT_TRUE(std::filesystem::exists(alexa())) << "run tests/reference/fetch_models.mjs";
  TempDir tmp;
  std::string a = tmp.file("a.kiln"), b = tmp.file("b.kiln");
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(alexa()) + " -o " + a).exitCode, 0);
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(alexa()) +
                       " --profile=stripped -o " + b)
                .exitCode,
            0);
  CommandResult sizes = runCommand(kilnBinary() + " inspect " + a + " --sizes --json");
  ASSERT_EQ(sizes.exitCode, 0) << sizes.output;
  auto parsed = llvm::json::parse(sizes.output);
  ASSERT_TRUE(static_cast<bool>(parsed)) << sizes.output;
  const llvm::json::Object *root = parsed->getAsObject();
  int64_t fileBytes = static_cast<int64_t>(std::filesystem::file_size(a));
  EXPECT_EQ(root->getInteger("file_bytes"), fileBytes);
  int64_t sum = *root->getInteger("overhead_bytes");
  for (const auto &[name, value] : *root->getObject("sections"))
    sum += *value.getAsInteger();
  EXPECT_EQ(sum, fileBytes);

  CommandResult diff = runCommand(kilnBinary() + " diff " + a + " " + b + " --json");
  ASSERT_EQ(diff.exitCode, 0) << diff.output;
  auto d = llvm::json::parse(diff.output);
  ASSERT_TRUE(static_cast<bool>(d)) << diff.output;
  const llvm::json::Object *total = d->getAsObject()->getObject("total");
  ASSERT_NE(total, nullptr);
  int64_t bBytes = static_cast<int64_t>(std::filesystem::file_size(b));
  EXPECT_EQ(total->getInteger("a"), fileBytes);
  EXPECT_EQ(total->getInteger("b"), bBytes);
  EXPECT_EQ(total->getInteger("delta"), bBytes - fileBytes);
  const llvm::json::Object *reflection = d->getAsObject()->getObject("reflection");
  ASSERT_NE(reflection, nullptr);
  EXPECT_EQ(reflection->getInteger("b"), 0);
  EXPECT_EQ(reflection->getInteger("delta"), -*reflection->getInteger("a"));

  // Usage errors: exit status 2.
  CommandResult bad = runCommand(kilnBinary() + " compile " + shellQuote(alexa()) + " --profile=tiny");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.output.find("--profile='tiny' is not a profile (default, stripped)"),
            std::string::npos)
      << bad.output;
  CommandResult one = runCommand(kilnBinary() + " diff " + a);
  EXPECT_EQ(one.exitCode, 2);
  EXPECT_NE(one.output.find("takes two artifacts, A and B; 1 given"), std::string::npos)
      << one.output;
}

} // namespace
