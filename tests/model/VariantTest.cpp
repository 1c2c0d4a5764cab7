//===- VariantTest.cpp - Real models under other devices, fusion, tiles ---===//
//
// Each real model, compiled in-process, must match TensorFlow Lite's outputs
// (tests/data/models/<name>/) within 1e-4 * (1 + |reference|):
//  - with default tiles on local-sync;
//  - on local-task with 1, 2 and 4 threads, bit for bit what local-sync
//    computes with the same artifact (every workgroup computes a fixed tile);
//  - with fusion off, which must give more dispatches;
//  - with random valid workgroup tile sizes for every dispatch at once
//    (seeded, non-dividing sizes included), which the plan must report back.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <random>

using namespace kiln::test;

namespace {

void compileReal(const std::string &name, const kiln::CompileOptions &options,
                 kiln::CompileResult &out) {
  std::string path = realModelPath(name);
  ASSERT_TRUE(std::filesystem::exists(path)) << missingModelHint(path);
  auto result = kiln::compile(path, options);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(result->plan != nullptr);
  out = std::move(*result);
}

void runOn(const std::vector<uint8_t> &artifact, const std::vector<kiln::NpyArray> &inputs,
           const std::string &device, unsigned threads, std::vector<kiln::NpyArray> &outputs) {
  kiln::RunOptions options;
  options.device = device;
  options.threads = threads;
  auto result = kiln::runArtifact(artifact, inputs, options);
  ASSERT_TRUE(static_cast<bool>(result))
      << device << " x" << threads << ": " << llvm::toString(result.takeError());
  outputs = std::move(result->outputValues);
}

void expectMatchesReference(const std::vector<kiln::NpyArray> &got,
                            const std::vector<kiln::NpyArray> &reference) {
  ASSERT_FALSE(reference.empty());
  ASSERT_EQ(got.size(), reference.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_TRUE(allClose(got[k], reference[k])) << "output " << k;
}

::testing::AssertionResult bitIdentical(const std::vector<kiln::NpyArray> &got,
                                        const std::vector<kiln::NpyArray> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " outputs vs " << want.size();
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].dtype != want[k].dtype || got[k].shape != want[k].shape ||
        got[k].data.size() != want[k].data.size())
      return ::testing::AssertionFailure() << "output " << k << ": dtype/shape differ";
    if (std::memcmp(got[k].data.data(), want[k].data.data(), got[k].data.size()) == 0)
      continue;
    size_t n = got[k].data.size() / 4, first = n, count = 0;
    const float *g = reinterpret_cast<const float *>(got[k].data.data());
    const float *w = reinterpret_cast<const float *>(want[k].data.data());
    for (size_t i = 0; i < n; ++i)
      if (std::memcmp(&g[i], &w[i], 4) != 0) {
        first = std::min(first, i);
        ++count;
      }
    auto failure = ::testing::AssertionFailure() << "output " << k << ": " << count << " of "
                                                 << n << " elements differ";
    if (first < n)
      failure << "; first at flat index " << first << ": " << g[first] << " vs " << w[first];
    return failure;
  }
  return ::testing::AssertionSuccess();
}

class Variants : public ::testing::TestWithParam<std::string> {};

TEST_P(Variants, DefaultTilesLocalSync) {
  const std::string name = GetParam();
  kiln::CompileResult compiled;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, realModelOptions(name), compiled));
  std::vector<kiln::NpyArray> outputs;
  ASSERT_NO_FATAL_FAILURE(runOn(compiled.artifact, realModelInputs(name), "local-sync", 1, outputs));
  expectMatchesReference(outputs, realModelReference(name));
}

TEST_P(Variants, LocalTaskBitIdenticalToLocalSync) {
  const std::string name = GetParam();
  kiln::CompileResult compiled;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, realModelOptions(name), compiled));
  std::vector<kiln::NpyArray> inputs = realModelInputs(name);
  std::vector<kiln::NpyArray> sync;
  ASSERT_NO_FATAL_FAILURE(runOn(compiled.artifact, inputs, "local-sync", 1, sync));
  expectMatchesReference(sync, realModelReference(name));
  for (unsigned threads : {1u, 2u, 4u}) {
    SCOPED_TRACE("local-task, " + std::to_string(threads) + " thread(s)");
    std::vector<kiln::NpyArray> task;
    ASSERT_NO_FATAL_FAILURE(runOn(compiled.artifact, inputs, "local-task", threads, task));
    EXPECT_TRUE(bitIdentical(task, sync));
  }
}

TEST_P(Variants, FusionOff) {
  const std::string name = GetParam();
  kiln::CompileResult fused, unfused;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, realModelOptions(name), fused));
  kiln::CompileOptions options = realModelOptions(name);
  options.fusion = false;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, options, unfused));
  size_t with = fused.plan->dispatches.size(), without = unfused.plan->dispatches.size();
  std::cout << name << ": " << with << " dispatches with fusion, " << without << " without"
            << std::endl;
  RecordProperty("dispatches_fused", std::to_string(with));
  RecordProperty("dispatches_unfused", std::to_string(without));
  EXPECT_GT(without, with) << "turning fusion off should give more dispatches";
  std::vector<std::string> errors = kiln::checkPlan(*unfused.plan);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  std::vector<kiln::NpyArray> outputs;
  ASSERT_NO_FATAL_FAILURE(
      runOn(unfused.artifact, realModelInputs(name), "local-sync", 1, outputs));
  expectMatchesReference(outputs, realModelReference(name));
}

/// Random valid tile sizes for every tileable dispatch of `plan`: each
/// parallel loop gets a size in [1, range] or 0, reductions 0, at most three
/// non-zero sizes per dispatch.
std::vector<std::pair<int64_t, std::vector<int64_t>>>
randomTiles(const kiln::CompilationPlan &plan, std::mt19937 &rng) {
  std::vector<std::pair<int64_t, std::vector<int64_t>>> tiles;
  for (const kiln::Dispatch &d : plan.dispatches) {
    if (d.loopRanges.empty())
      continue; // no tileable root: tile sizes cannot be set
    std::vector<size_t> parallel;
    for (size_t i = 0; i < d.loopKinds.size(); ++i)
      if (d.loopKinds[i] == "parallel")
        parallel.push_back(i);
    std::shuffle(parallel.begin(), parallel.end(), rng);
    size_t most = std::min<size_t>(3, parallel.size());
    size_t tiled = std::uniform_int_distribution<size_t>(0, most)(rng);
    std::vector<int64_t> sizes(d.loopRanges.size(), 0);
    for (size_t k = 0; k < tiled; ++k) {
      size_t loop = parallel[k];
      sizes[loop] = std::uniform_int_distribution<int64_t>(1, d.loopRanges[loop])(rng);
    }
    tiles.push_back({d.id, sizes});
  }
  return tiles;
}

TEST_P(Variants, RandomTileOverrides) {
  const std::string name = GetParam();
  kiln::CompileResult base;
  ASSERT_NO_FATAL_FAILURE(compileReal(name, realModelOptions(name), base));
  std::vector<kiln::NpyArray> inputs = realModelInputs(name);
  std::vector<kiln::NpyArray> reference = realModelReference(name);
  std::map<int64_t, const kiln::Dispatch *> baseById;
  for (const kiln::Dispatch &d : base.plan->dispatches)
    baseById[d.id] = &d;

  const int trials = 3;
  size_t nonDividing = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::mt19937 rng(0x6b696c6e + 1000 * trial + name.size());
    kiln::CompileOptions options = realModelOptions(name);
    options.tileSizes = randomTiles(*base.plan, rng);
    std::string flags;
    size_t split = 0, ragged = 0;
    for (auto &[id, sizes] : options.tileSizes) {
      flags += " " + tileFlag(id, sizes);
      bool splits = false;
      for (size_t i = 0; i < sizes.size(); ++i) {
        int64_t range = baseById[id]->loopRanges[i];
        splits |= sizes[i] > 0 && sizes[i] < range;
        if (sizes[i] > 0 && range % sizes[i] != 0)
          ++ragged;
      }
      split += splits;
    }
    nonDividing += ragged;
    std::cout << name << " trial " << trial << ": " << split << " of "
              << base.plan->dispatches.size() << " dispatches split into workgroups, "
              << ragged << " tile sizes not dividing their loop" << std::endl;
    SCOPED_TRACE("trial " + std::to_string(trial) + ", reproduce with:" + flags);
    kiln::CompileResult tiled;
    ASSERT_NO_FATAL_FAILURE(compileReal(name, options, tiled));
    const kiln::CompilationPlan &plan = *tiled.plan;

    // Same dispatches; each reports the sizes asked for (a size covering
    // its whole loop reads 0) and the grid they give.
    ASSERT_EQ(plan.dispatches.size(), base.plan->dispatches.size());
    std::map<int64_t, std::vector<int64_t>> asked(options.tileSizes.begin(),
                                                  options.tileSizes.end());
    for (const kiln::Dispatch &d : plan.dispatches) {
      ASSERT_TRUE(baseById.count(d.id)) << "new dispatch id " << d.id;
      EXPECT_EQ(d.loopRanges, baseById[d.id]->loopRanges) << d.name;
      auto it = asked.find(d.id);
      if (it == asked.end())
        continue;
      std::vector<int64_t> want = it->second;
      for (size_t i = 0; i < want.size(); ++i)
        if (want[i] >= d.loopRanges[i])
          want[i] = 0;
      EXPECT_EQ(d.tileSizes, want) << d.name << " asked " << tileFlag(d.id, it->second);
      EXPECT_EQ(d.workgroupCount, expectedWorkgroupCount(d)) << d.name;
    }
    std::vector<std::string> errors = kiln::checkPlan(plan);
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());

    std::vector<kiln::NpyArray> sync, task;
    ASSERT_NO_FATAL_FAILURE(runOn(tiled.artifact, inputs, "local-sync", 1, sync));
    expectMatchesReference(sync, reference);
    // Ragged edge tiles run concurrently too.
    ASSERT_NO_FATAL_FAILURE(runOn(tiled.artifact, inputs, "local-task", 4, task));
    EXPECT_TRUE(bitIdentical(task, sync)) << "local-task x4 vs local-sync";
  }
  // The draw must exercise tiles that do not divide their loop.
  EXPECT_GT(nonDividing, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealModel, Variants, ::testing::ValuesIn(realModelNames()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
