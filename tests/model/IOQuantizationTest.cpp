//===- IOQuantizationTest.cpp - Scale and zero point in the I/O table ----===//
//
// Issue 30, item 13: an int8 model's inputs and outputs carry their
// quantization in the artifact (TensorDesc.quantization, format 1.2), the
// runtime reports it in kiln_tensor_info_t, the C module header in
// macros, `kiln inspect --json` in the signature.
//
// Expected values are read from the .tflite files here with the TFLite
// schema's flatbuffers code (not Kiln's importer): person_detect.tflite's
// input is int8 scale 0.007843138 (2/255), zero point -1, its output int8
// scale 0.00390625 (1/256), zero point -128 (`flatc --json` of the file
// agrees); tests/data/ops_int8/add_uint8 has uint8 inputs with zero points
// 128 and 100 (make_int8_cases.mjs).
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/Compiler.h"
#include "kiln/runtime.h"

#include "tflite_generated.h"

#include "llvm/Support/JSON.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace kiln::test;

namespace {

std::string dataPath(const std::string &relative) {
  return std::string(KILN_TEST_DATA_DIR) + "/" + relative;
}

/// The quantization of one tensor as the .tflite file stores it.
struct FileQuantization {
  std::string name;
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  int32_t dimension = 0;
};

/// Subgraph 0's inputs (or outputs) of `path`, read with flatbuffers.
std::vector<FileQuantization> fileSignature(const std::string &path, bool inputs) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const kiln::tflite::Model *model = kiln::tflite::GetModel(bytes.data());
  const kiln::tflite::SubGraph *graph = model->subgraphs()->Get(0);
  std::vector<FileQuantization> out;
  for (int32_t index : *(inputs ? graph->inputs() : graph->outputs())) {
    const kiln::tflite::Tensor *t = graph->tensors()->Get(index);
    FileQuantization q;
    q.name = t->name()->str();
    if (t->quantization() && t->quantization()->scale()) {
      q.scales.assign(t->quantization()->scale()->begin(), t->quantization()->scale()->end());
      q.zeroPoints.assign(t->quantization()->zero_point()->begin(),
                          t->quantization()->zero_point()->end());
      q.dimension = t->quantization()->quantized_dimension();
    }
    out.push_back(q);
  }
  return out;
}

/// A 64-byte aligned copy of an artifact, loaded as a module.
struct Loaded {
  explicit Loaded(const std::vector<uint8_t> &bytes) : size(bytes.size()) {
    data = static_cast<uint8_t *>(std::aligned_alloc(64, (size + 63) / 64 * 64));
    std::memcpy(data, bytes.data(), size);
    status = kiln_module_load(data, size, &module);
  }
  ~Loaded() {
    kiln_module_release(module);
    std::free(data);
  }
  uint8_t *data;
  size_t size;
  kiln_module_t *module = nullptr;
  kiln_status_t status;
};

std::vector<uint8_t> compiled(const std::string &model) {
  auto built = kiln::compile(model, kiln::CompileOptions());
  if (!built) {
    ADD_FAILURE() << llvm::toString(built.takeError());
    return {};
  }
  return built->artifact;
}

/// Every input (or output) of `m` against the file's quantization.
void expectSameAsFile(kiln_module_t *m, const std::vector<FileQuantization> &file, bool inputs) {
  size_t count = inputs ? kiln_module_input_count(m) : kiln_module_output_count(m);
  ASSERT_EQ(count, file.size());
  for (size_t k = 0; k < count; ++k) {
    kiln_tensor_info_t info;
    kiln_status_t s =
        inputs ? kiln_module_input_info(m, k, &info) : kiln_module_output_info(m, k, &info);
    ASSERT_EQ(s.code, KILN_OK) << s.message;
    EXPECT_EQ(std::string(info.name), file[k].name);
    ASSERT_EQ(file[k].scales.size(), 1u) << file[k].name; // I/O is per tensor
    EXPECT_EQ(info.quantized, 1) << info.name;
    EXPECT_EQ(info.scale, file[k].scales[0]) << info.name; // bit for bit
    EXPECT_EQ(info.zero_point, file[k].zeroPoints[0]) << info.name;
    EXPECT_EQ(info.quantized_dimension, -1);
    ASSERT_EQ(info.quantization_count, 1u);
    EXPECT_EQ(info.scales[0], file[k].scales[0]);
    EXPECT_EQ(info.zero_points[0], file[k].zeroPoints[0]);
  }
}

} // namespace

TEST(IOQuantization, PersonDetectInfoEqualsTheFile) {
  const std::string model = dataPath("models/int8/person_detect.tflite");
  std::vector<FileQuantization> in = fileSignature(model, true), out = fileSignature(model, false);
  // The file's own numbers, as the header comment states them.
  ASSERT_EQ(in.size(), 1u);
  EXPECT_FLOAT_EQ(in[0].scales[0], 2.0f / 255.0f);
  EXPECT_EQ(in[0].zeroPoints[0], -1);
  EXPECT_EQ(out[0].scales[0], 1.0f / 256.0f);
  EXPECT_EQ(out[0].zeroPoints[0], -128);
  Loaded loaded(compiled(model));
  ASSERT_EQ(loaded.status.code, KILN_OK) << loaded.status.message;
  expectSameAsFile(loaded.module, in, true);
  expectSameAsFile(loaded.module, out, false);
  kiln_artifact_info_t info;
  ASSERT_EQ(kiln_module_artifact_info(loaded.module, &info).code, KILN_OK);
  EXPECT_EQ(info.format_minor, 2u);
}

TEST(IOQuantization, Uint8InputsKeepTheirZeroPoints) {
  const std::string model = dataPath("ops_int8/add_uint8/model.tflite");
  std::vector<FileQuantization> in = fileSignature(model, true), out = fileSignature(model, false);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].zeroPoints[0], 128);
  EXPECT_EQ(in[1].zeroPoints[0], 100);
  Loaded loaded(compiled(model));
  ASSERT_EQ(loaded.status.code, KILN_OK) << loaded.status.message;
  expectSameAsFile(loaded.module, in, true);
  expectSameAsFile(loaded.module, out, false);
}

TEST(IOQuantization, FloatTensorsHaveNone) {
  Loaded loaded(compiled(dataPath("quant_twins/identity_4x64.onnx")));
  ASSERT_EQ(loaded.status.code, KILN_OK) << loaded.status.message;
  kiln_tensor_info_t info;
  ASSERT_EQ(kiln_module_input_info(loaded.module, 0, &info).code, KILN_OK);
  EXPECT_EQ(info.quantized, 0);
  EXPECT_EQ(info.scale, 0.0f);
  EXPECT_EQ(info.zero_point, 0);
  EXPECT_EQ(info.quantized_dimension, -1);
  EXPECT_EQ(info.quantization_count, 0u);
  EXPECT_EQ(info.scales, nullptr);
  EXPECT_EQ(info.zero_points, nullptr);
}

TEST(IOQuantization, CModuleHeaderHasTheMacros) {
  const std::string model = dataPath("models/int8/person_detect.tflite");
  std::vector<FileQuantization> in = fileSignature(model, true), out = fileSignature(model, false);
  TempDir dir;
  CommandResult r =
      runCommand(kilnBinary() + " compile " + shellQuote(model) +
                 " --output-format=c-module --module-name=pd -o " + shellQuote(dir.path()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream h(dir.path() + "/pd.h");
  std::string header((std::istreambuf_iterator<char>(h)), std::istreambuf_iterator<char>());
  // The file's floats printed with 9 significant digits read back exactly.
  char line[128];
  std::snprintf(line, sizeof line, "#define PD_INPUT0_SCALE %.9gf\n", double(in[0].scales[0]));
  EXPECT_NE(header.find(line), std::string::npos) << line << header;
  EXPECT_FLOAT_EQ(std::strtof(line + std::strlen("#define PD_INPUT0_SCALE "), nullptr),
                  in[0].scales[0]);
  EXPECT_NE(header.find("#define PD_INPUT0_ZERO_POINT (-1)\n"), std::string::npos) << header;
  std::snprintf(line, sizeof line, "#define PD_OUTPUT0_SCALE %.9gf\n", double(out[0].scales[0]));
  EXPECT_NE(header.find(line), std::string::npos) << line << header;
  EXPECT_NE(header.find("#define PD_OUTPUT0_ZERO_POINT (-128)\n"), std::string::npos) << header;
}

TEST(IOQuantization, InspectJsonOfAStrippedArtifactShowsIt) {
  const std::string model = dataPath("models/int8/person_detect.tflite");
  TempDir dir;
  const std::string artifact = dir.path() + "/pd.kiln";
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(model) + " --profile=stripped -o " +
                       shellQuote(artifact))
                .exitCode,
            0);
  // A stripped artifact has no plan: the numbers come from the I/O table.
  CommandResult r = runCommand(kilnBinary() + " inspect --json " + shellQuote(artifact));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(json)) << r.output;
  const llvm::json::Array *inputs = json->getAsObject()->getObject("artifact")->getArray("inputs");
  ASSERT_TRUE(inputs) << r.output;
  const llvm::json::Object *q = (*inputs)[0].getAsObject()->getObject("quantization");
  ASSERT_TRUE(q) << r.output;
  EXPECT_EQ(float((*q->getArray("scales"))[0].getAsNumber().value_or(0)), 2.0f / 255.0f);
  EXPECT_EQ((*q->getArray("zero_points"))[0].getAsInteger().value_or(0), -1);
  EXPECT_EQ(q->getInteger("quantized_dimension").value_or(0), -1);
}

TEST(IOQuantization, InspectTextOfAStrippedArtifactShowsIt) {
  TempDir dir;
  const std::string artifact = dir.path() + "/pd.kiln";
  ASSERT_EQ(runCommand(kilnBinary() + " compile " +
                       shellQuote(dataPath("models/int8/person_detect.tflite")) +
                       " --profile=stripped -o " + shellQuote(artifact))
                .exitCode,
            0);
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(artifact));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // The lines `kiln inspect` prints from the plan of a default build.
  EXPECT_NE(r.output.find("input 0   'input' quantization: scale 0.00784314 zero point -1\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("output 0  'MobilenetV1/Predictions/Reshape_1' quantization: scale "
                          "0.00390625 zero point -128\n"),
            std::string::npos)
      << r.output;
}
