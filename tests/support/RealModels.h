//===- RealModels.h - The three real models, for in-process tests -*- C++ -*-===//
//
// The real models of RealModelTest (fetched by the fetch_models CTest
// fixture into $KILN_MODEL_CACHE), their compile options, seeded inputs and
// TensorFlow Lite reference outputs (tests/data/models/<name>/), and
// helpers shared by the tests that compile them in-process.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_REALMODELS_H
#define KILN_TESTS_REALMODELS_H

#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kiln::test {

/// Names of the real models, in the order of RealModelTest.
inline std::vector<std::string> realModelNames() {
  return {"alexa", "embedding", "blazeface"};
}

/// $KILN_MODEL_CACHE, or ~/.cache/kiln/models.
inline std::string modelCacheDir() {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  if (env && *env)
    return env;
  const char *home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/kiln/models";
}

/// Path of `name`.tflite in the model cache.
inline std::string realModelPath(const std::string &name) {
  return modelCacheDir() + "/" + name + ".tflite";
}

/// tests/data/models/`name`: seeded inputs and reference outputs.
inline std::string realModelDataDir(const std::string &name) {
  return std::string(KILN_TEST_DATA_DIR) + "/models/" + name;
}

/// Default compile options of `name`. The speech embedding model's input
/// has a dynamic batch (shape signature [-1,76,32,1]); it is fixed to 1.
inline kiln::CompileOptions realModelOptions(const std::string &name) {
  kiln::CompileOptions options;
  if (name == "embedding")
    options.fixedShapes.push_back({"0", {1, 76, 32, 1}});
  return options;
}

/// Seeded inputs of `name`, in signature order.
inline std::vector<kiln::NpyArray> realModelInputs(const std::string &name) {
  std::vector<kiln::NpyArray> inputs;
  for (const std::string &path : numberedFiles(realModelDataDir(name), "input"))
    inputs.push_back(loadNpy(path));
  return inputs;
}

/// TensorFlow Lite's outputs for the seeded inputs, in signature order.
inline std::vector<kiln::NpyArray> realModelReference(const std::string &name) {
  std::vector<kiln::NpyArray> outputs;
  for (const std::string &path : numberedFiles(realModelDataDir(name), "output"))
    outputs.push_back(loadNpy(path));
  return outputs;
}

/// Message for a missing model file.
inline std::string missingModelHint(const std::string &path) {
  return path + " is missing: run `node tests/reference/fetch_models.mjs` "
                "(CTest's fetch_models fixture does this)";
}

/// Workgroup grid a dispatch must have, recomputed from its tile sizes and
/// loop ranges: one grid dimension per tiled loop (tile size t with
/// 0 < t < range), ceil(range / t) workgroups along it; the innermost tiled
/// loop is x, the next y, then z; untiled dimensions are 1.
inline std::array<int64_t, 3> expectedWorkgroupCount(const kiln::Dispatch &d) {
  std::vector<int64_t> counts; // outermost tiled loop first
  for (size_t i = 0; i < d.tileSizes.size() && i < d.loopRanges.size(); ++i) {
    int64_t t = d.tileSizes[i], range = d.loopRanges[i];
    if (t > 0 && t < range)
      counts.push_back((range + t - 1) / t);
  }
  std::array<int64_t, 3> grid = {1, 1, 1};
  for (size_t k = 0; k < counts.size() && k < 3; ++k)
    grid[k] = counts[counts.size() - 1 - k];
  return grid;
}

/// "ID=s0,s1,..." as `kiln --tile=` takes it, for failure messages.
inline std::string tileFlag(int64_t id, const std::vector<int64_t> &sizes) {
  std::string s = "--tile=" + std::to_string(id) + "=";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? "," : "") + std::to_string(sizes[i]);
  return s;
}

} // namespace kiln::test

#endif
