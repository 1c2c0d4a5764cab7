//===- OnnxRealModelTest.cpp - Real ONNX models vs ONNX Runtime -----------===//
//
// For each real ONNX model (fetched by the fetch_models CTest fixture into
// $KILN_MODEL_CACHE, tests/reference/fetch_models.mjs): `kiln compile` the
// .onnx file (its symbolic dimensions fixed with --fix-shape) to a .kiln
// file, `kiln run` it on local-sync on the seeded input in
// tests/data/models/<dir>/ and compare every output element with ONNX
// Runtime 1.30's output (tests/reference/ort_reference.mjs, run by
// tests/reference/make_expected.sh) within 1e-4 * (1 + |reference|).
// Outputs are in the graph's output order, as ONNX Runtime lists them.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"

#include <filesystem>

using namespace kiln::test;

namespace {

/// One ONNX model: file in the model cache, `kiln compile` flags, folder
/// of tests/data/models with its ONNX Runtime input and outputs.
struct OnnxModel {
  std::string file;
  std::string flags;
  std::string dataDir;
};

void checkOnnxModel(const OnnxModel &m) {
  std::string model = modelCacheDir() + "/" + m.file;
  ASSERT_TRUE(std::filesystem::exists(model)) << missingModelHint(model);
  std::string data = realModelDataDir(m.dataDir);
  std::vector<std::string> inputs = numberedFiles(data, "input");
  std::vector<std::string> expected = numberedFiles(data, "output");
  ASSERT_FALSE(inputs.empty()) << data;
  ASSERT_FALSE(expected.empty()) << data;

  TempDir tmp;
  std::string artifact = tmp.file("model.kiln");
  CommandResult compiled = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                                      shellQuote(artifact) + " " + m.flags);
  ASSERT_EQ(compiled.exitCode, 0) << compiled.output;

  std::string command = kilnBinary() + " run " + shellQuote(artifact) + " --device=local-sync";
  for (const std::string &in : inputs)
    command += " --input=@" + shellQuote(in);
  for (size_t k = 0; k < expected.size(); ++k)
    command += " --output=@" + shellQuote(tmp.file("out_" + std::to_string(k) + ".npy"));
  CommandResult ran = runCommand(command);
  ASSERT_EQ(ran.exitCode, 0) << ran.output;
  for (size_t k = 0; k < expected.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k) + " of " + m.file);
    EXPECT_TRUE(allClose(loadNpy(tmp.file("out_" + std::to_string(k) + ".npy")),
                         loadNpy(expected[k])));
  }
}

// openWakeWord's "alexa" head (alexa_v0.1.onnx): in [1,16,96], out [1,1].
TEST(OnnxRealModel, WakeWordHead) { checkOnnxModel({"alexa.onnx", "", "onnx/alexa"}); }

// openWakeWord's speech embedding (embedding_model.onnx): in input_1
// [N,76,32,1] with a symbolic batch, out [N,1,1,96]; batch fixed to 1.
TEST(OnnxRealModel, SpeechEmbedding) {
  checkOnnxModel({"embedding.onnx", "--fix-shape=input_1=1x76x32x1", "onnx/embedding"});
}

// The same model with the batch fixed to 2 (seed 2; the data RealModelTest's
// SpeechEmbeddingBatch2 compares the TFLite twin with).
TEST(OnnxRealModel, SpeechEmbeddingBatch2) {
  checkOnnxModel({"embedding.onnx", "--fix-shape=input_1=2x76x32x1", "embedding_batch2"});
}

// BlazeFace front model converted to ONNX (NHWC input [1,128,128,3]); four
// outputs: scores [1,512,1], [1,384,1], boxes [1,512,16], [1,384,16].
TEST(OnnxRealModel, BlazeFace) { checkOnnxModel({"blazeface.onnx", "", "onnx/blazeface"}); }

// PP-OCRv4's text detector (opset 11), in x [N,3,H,W] fixed to 1x3x96x96
// (H and W multiples of 32), out [1,1,96,96] text probability, on a
// synthetic text page (ort_reference.mjs --input text).
TEST(OnnxRealModel, TextDetector) {
  checkOnnxModel({"ppocr_det.onnx", "--fix-shape=x=1x3x96x96", "onnx/ppocr_det"});
}

} // namespace
