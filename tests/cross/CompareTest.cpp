//===- CompareTest.cpp - kiln diff (plan rows, latency) and kiln validate -===//
//
// `kiln diff` puts two builds side by side: sections (ArtifactSizeTest), and
// the plan's arena, lower bound, dispatch/command/wave counts, which must
// equal what `kiln inspect --json` says of each build, plus measured
// latency with --benchmark. `kiln validate` runs a model on a folder of
// inputs and reports max error, RMSE and cosine against the folder's
// reference outputs, failing (exit 3) when they differ beyond tolerance.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"
#include "TestSupport.h"

#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

llvm::json::Object parseObject(const std::string &text) {
  auto parsed = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(parsed)) << text;
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return {};
  }
  return parsed->getAsObject() ? *parsed->getAsObject() : llvm::json::Object();
}

TEST(Compare, DiffPlanRowsEqualEachBuildsPlan) {
  ASSERT_TRUE(fs::exists(realModelPath("blazeface"))) << missingModelHint(realModelPath("blazeface"));
  TempDir dir;
  std::string model = shellQuote(realModelPath("blazeface"));
  // B: fusion off, so every count moves.
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + model + " -o " + dir.file("a.kiln")).exitCode, 0);
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + model + " --fusion=false -o " +
                       dir.file("b.kiln")).exitCode, 0);
  CommandResult diff = runCommand(kilnBinary() + " diff " + dir.file("a.kiln") + " " +
                                  dir.file("b.kiln") + " --json --benchmark=3");
  ASSERT_EQ(diff.exitCode, 0) << diff.output;
  llvm::json::Object d = parseObject(diff.output);
  for (const char *side : {"a", "b"}) {
    CommandResult inspect = runCommand(kilnBinary() + " inspect " +
                                       dir.file(std::string(side) + ".kiln") + " --json");
    ASSERT_EQ(inspect.exitCode, 0) << inspect.output;
    llvm::json::Object plan = parseObject(inspect.output);
    const llvm::json::Object *memory = plan.getObject("memory");
    const llvm::json::Object *schedule = plan.getObject("schedule");
    ASSERT_TRUE(memory && schedule);
    int64_t dispatchCommands = 0;
    for (const llvm::json::Value &c : *schedule->getArray("commands"))
      dispatchCommands += c.getAsObject()->getString("kind") == llvm::StringRef("dispatch");
    auto row = [&](const char *name) { return *d.getObject(name)->getInteger(side); };
    EXPECT_EQ(row("arena_bytes"), *memory->getInteger("arena_bytes")) << side;
    EXPECT_EQ(row("lower_bound_bytes"), *memory->getInteger("lower_bound_bytes")) << side;
    EXPECT_EQ(row("command_count"), static_cast<int64_t>(schedule->getArray("commands")->size()))
        << side;
    EXPECT_EQ(row("dispatch_count"), dispatchCommands) << side;
    EXPECT_EQ(row("wave_count"), *schedule->getInteger("waves")) << side;
    // The commands section's bytes are a row of their own.
    EXPECT_GT(*d.getObject("commands")->getInteger(side), row("command_count")) << side;
    EXPECT_GT(*d.getObject("median_ms")->getNumber(side), 0.0) << side;
  }
  EXPECT_GT(*d.getObject("dispatch_count")->getInteger("delta"), 0);
  EXPECT_EQ(*d.getObject("dispatch_count")->getInteger("delta"),
            *d.getObject("dispatch_count")->getInteger("b") -
                *d.getObject("dispatch_count")->getInteger("a"));
}

TEST(Compare, ValidatePassesOnTheReferenceAndFailsOnAPerturbedOne) {
  ASSERT_TRUE(fs::exists(realModelPath("alexa"))) << missingModelHint(realModelPath("alexa"));
  std::string model = shellQuote(realModelPath("alexa"));
  CommandResult good = runCommand(kilnBinary() + " validate " + model + " " +
                                  shellQuote(realModelDataDir("alexa")) + " --json");
  ASSERT_EQ(good.exitCode, 0) << good.output;
  llvm::json::Object g = parseObject(good.output);
  EXPECT_EQ(g.getBoolean("pass"), true);
  const llvm::json::Object *out = (*g.getArray("outputs"))[0].getAsObject();
  EXPECT_LT(*out->getNumber("max_abs_error"), 1e-4);
  EXPECT_GT(*out->getNumber("cosine"), 0.9999);
  // The reference output shifted by 0.01: max error and RMSE are 0.01 (one
  // element), up to the float rounding of the shifted value.
  TempDir dir;
  fs::copy_file(realModelDataDir("alexa") + "/input_0.npy", dir.file("input_0.npy"));
  kiln::NpyArray ref = loadNpy(realModelDataDir("alexa") + "/output_0.npy");
  ASSERT_EQ(ref.numElements(), 1);
  float value;
  std::memcpy(&value, ref.data.data(), 4);
  float shifted = value + 0.01f;
  std::memcpy(ref.data.data(), &shifted, 4);
  ASSERT_FALSE(static_cast<bool>(kiln::writeNpyFile(dir.file("output_0.npy"), ref)));
  CommandResult bad = runCommand(kilnBinary() + " validate " + model + " " +
                                 shellQuote(dir.path()) + " --json");
  EXPECT_EQ(bad.exitCode, 3) << bad.output;
  llvm::json::Object b = parseObject(bad.output);
  EXPECT_EQ(b.getBoolean("pass"), false);
  const llvm::json::Object *o = (*b.getArray("outputs"))[0].getAsObject();
  EXPECT_NEAR(*o->getNumber("max_abs_error"), 0.01, 1e-4);
  EXPECT_NEAR(*o->getNumber("rmse"), 0.01, 1e-4);
  EXPECT_EQ(*o->getInteger("outside_tolerance"), 1);
  // A folder without reference data is an error, not a pass.
  TempDir empty;
  CommandResult none = runCommand(kilnBinary() + " validate " + model + " " +
                                  shellQuote(empty.path()));
  EXPECT_EQ(none.exitCode, 1) << none.output;
  EXPECT_NE(none.output.find("input_0.npy does not exist; the model has 1 input (input_0.npy)"),
            std::string::npos)
      << none.output;
}

} // namespace
