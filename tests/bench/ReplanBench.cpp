//===- ReplanBench.cpp - Time to re-plan a model after a tuning change ----===//
//
// The workbench re-plans (kiln::planModel: import, TOSA -> linalg, dispatch
// formation and tiling, bufferization, schedule and memory plan; no code
// generation) on every tile or fusion edit. This measures it per real model
// with Google Benchmark; the median goes to docs/benchmarks.md. The goal is
// at most 300 ms.
//
//   build/tests/bench/kiln_replan_bench --benchmark_repetitions=5
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler.h"
#include "kiln/Plan.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

namespace {

std::string modelPath(const std::string &name) {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  std::string cache = env && *env ? env : std::string(std::getenv("HOME")) + "/.cache/kiln/models";
  return cache + "/" + name + ".tflite";
}

void replan(benchmark::State &state, const std::string &name, bool full) {
  kiln::CompileOptions options;
  if (name == "embedding")
    options.fixedShapes.push_back({"0", {1, 76, 32, 1}});
  for (auto _ : state) {
    if (full) {
      auto result = kiln::compile(modelPath(name), options);
      if (!result) {
        state.SkipWithError(llvm::toString(result.takeError()).c_str());
        return;
      }
      benchmark::DoNotOptimize(result->artifact.data());
    } else {
      auto plan = kiln::planModel(modelPath(name), options);
      if (!plan) {
        state.SkipWithError(llvm::toString(plan.takeError()).c_str());
        return;
      }
      benchmark::DoNotOptimize((*plan)->dispatches.data());
    }
  }
}

BENCHMARK_CAPTURE(replan, alexa_plan, std::string("alexa"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(replan, embedding_plan, std::string("embedding"), false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(replan, blazeface_plan, std::string("blazeface"), false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(replan, blazeface_full_compile, std::string("blazeface"), true)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
