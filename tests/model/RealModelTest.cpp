//===- RealModelTest.cpp - Real TFLite models vs TensorFlow Lite ----------===//
//
// For each real model (fetched by the fetch_models CTest fixture into
// $KILN_MODEL_CACHE): `kiln compile` to a .kiln file, `kiln run` it on the
// seeded inputs in tests/data/models/<name>/, and compare every output
// element with the TensorFlow Lite interpreter's output (written by
// tests/reference/make_expected.sh) within 1e-4 * (1 + |reference|).
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include <cstdlib>
#include <filesystem>

using namespace kiln::test;

namespace {

std::string modelCache() {
  const char *env = std::getenv("KILN_MODEL_CACHE");
  if (env && *env)
    return env;
  const char *home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/kiln/models";
}

void checkModel(const std::string &name, const std::string &extraFlags,
                const std::string &dataName = "") {
  std::string model = modelCache() + "/" + name + ".tflite";
  ASSERT_TRUE(std::filesystem::exists(model))
      << model << " is missing: run `node tests/reference/fetch_models.mjs` "
      << "(CTest's fetch_models fixture does this)";
  std::string data = std::string(KILN_TEST_DATA_DIR) + "/models/" +
                     (dataName.empty() ? name : dataName);
  TempDir tmp;
  std::string artifact = tmp.file(name + ".kiln");
  CommandResult compiled = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                                      shellQuote(artifact) + " " + extraFlags);
  ASSERT_EQ(compiled.exitCode, 0) << compiled.output;

  std::string command = kilnBinary() + " run " + shellQuote(artifact);
  for (const std::string &in : numberedFiles(data, "input"))
    command += " --input=@" + shellQuote(in);
  std::vector<std::string> expected = numberedFiles(data, "output");
  ASSERT_FALSE(expected.empty());
  for (size_t k = 0; k < expected.size(); ++k)
    command += " --output=@" + shellQuote(tmp.file("out_" + std::to_string(k) + ".npy"));
  CommandResult ran = runCommand(command);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  for (size_t k = 0; k < expected.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    EXPECT_TRUE(allClose(loadNpy(tmp.file("out_" + std::to_string(k) + ".npy")),
                         loadNpy(expected[k])));
  }
}

TEST(RealModel, WakeWordHead) { checkModel("alexa", ""); }

// The embedding model's input has a dynamic batch (shape signature
// [-1,76,32,1]); it compiles once the batch is fixed.
TEST(RealModel, SpeechEmbedding) { checkModel("embedding", "--fix-shape=0=1x76x32x1"); }

// The same model with its dynamic batch fixed to 2: every -1 of the graph's
// shape signatures becomes 2. TFLite's interpreter cannot resize here, so
// the reference is ONNX Runtime 1.30 on the model's ONNX twin
// (tests/reference/ort_reference.mjs, seed 2).
TEST(RealModel, SpeechEmbeddingBatch2) {
  checkModel("embedding", "--fix-shape=serving_default_input_1:0=2x76x32x1",
             "embedding_batch2");
}

TEST(RealModel, BlazeFace) { checkModel("blazeface", ""); }

} // namespace
