//===- QuantizationInspectTest.cpp - Scales and zero points in the plan ---===//
//
// Issue 12, item 7: each quantized tensor's scale and zero point travels
// from the TFLite importer into CompilationPlan::quantization (and the
// artifact's reflection JSON), and `kiln inspect` shows them for the
// inputs, the outputs and each dispatch's output tensor.
//
// Expected values are the model's own, worked out independently of Kiln:
// person_detect.tflite (TensorFlow Lite Micro) quantizes its input range
// [-1, 1] to int8 as scale 2/255, zero point -1; each ReLU6 output [0, 6]
// as scale 6/255, zero point -128; the softmax output [0, 1) as scale 1/256,
// zero point -128 (TFLite's fixed softmax output quantization); `flatc
// --json` of the file prints 0.007843 / -1, 0.023529 / -128 and 0.003906 /
// -128. tests/data/ops_int8/add_uint8 stores uint8 zero points 128, 100 and
// 125 with scales 0.02, 0.05 and 0.06 (make_int8_cases.mjs).
//
// Weights: the per-channel scales of CONV_2D #2's filter are read from the
// .tflite here with the schema's flatbuffers code (not Kiln's importer), and
// the plan must report their count (the filter's output channels), min and
// max bit for bit. `flatc --json` of the file agrees: 16 scales, 0.006953 to
// 0.016528, quantized_dimension 0, zero points 0.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"
#include "kiln/Compiler.h"
#include "kiln/Plan.h"

#include "tflite_generated.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

using namespace kiln::test;

namespace {

std::string personDetect() {
  return std::string(KILN_TEST_DATA_DIR) + "/models/int8/person_detect.tflite";
}

const std::string kOutput = "MobilenetV1/Predictions/Reshape_1";
const float kInputScale = 2.0f / 255.0f, kRelu6Scale = 6.0f / 255.0f, kSoftmaxScale = 1.0f / 256.0f;

size_t countOf(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

/// A weights tensor as the file stores it: name, scale count, min and max
/// scale, quantized_dimension, and the shape's first dimension (a CONV_2D
/// filter is OHWI: its output channels).
struct FileWeights {
  std::string name;
  size_t scales = 0;
  float min = 0, max = 0;
  int64_t dimension = -1;
  int64_t outputChannels = 0;
};

/// Input 1 (the filter) of operator `index` of person_detect.tflite, read
/// with flatbuffers; `opName` receives the operator's builtin code name.
FileWeights weightsInFile(unsigned index, std::string &opName) {
  std::ifstream in(personDetect(), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const kiln::tflite::Model *model = kiln::tflite::GetModel(bytes.data());
  const kiln::tflite::SubGraph *graph = model->subgraphs()->Get(0);
  const kiln::tflite::Operator *op = graph->operators()->Get(index);
  const kiln::tflite::OperatorCode *code = model->operator_codes()->Get(op->opcode_index());
  opName = kiln::tflite::EnumNameBuiltinOperator(
      std::max(code->builtin_code(),
               static_cast<kiln::tflite::BuiltinOperator>(code->deprecated_builtin_code())));
  const kiln::tflite::Tensor *t = graph->tensors()->Get(op->inputs()->Get(1));
  const auto *scales = t->quantization()->scale();
  FileWeights w;
  w.name = t->name()->str();
  w.scales = scales->size();
  w.min = *std::min_element(scales->begin(), scales->end());
  w.max = *std::max_element(scales->begin(), scales->end());
  w.dimension = t->quantization()->quantized_dimension();
  w.outputChannels = t->shape()->Get(0);
  return w;
}

/// CONV_2D #2's weights line, formatted here from the file's values.
std::string conv2WeightsLine() {
  std::string op;
  FileWeights w = weightsInFile(2, op);
  char text[200];
  std::snprintf(text, sizeof text, " weights '%s' per-channel: %zu scales, min %g max %g, dimension %lld\n",
                w.name.c_str(), w.scales, w.min, w.max, (long long)w.dimension);
  return text;
}

/// The lines `kiln inspect` prints for person_detect, from the model or an
/// artifact compiled from it.
void expectPersonDetectLines(const std::string &out) {
  EXPECT_NE(out.find("input 0   'input' quantization: scale 0.00784314 zero point -1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("output 0  '" + kOutput + "' quantization: scale 0.00390625 zero point -128\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" output 'MobilenetV1/MobilenetV1/Conv2d_0/Relu6' scale 0.0235294 zero point -128\n"),
            std::string::npos)
      << out;
  // One dispatch completes the output (the softmax's last), once.
  EXPECT_EQ(countOf(out, " output '" + kOutput + "' scale 0.00390625 zero point -128\n"), 1u) << out;
  // Under CONV_2D #2's dispatch, right after its output line.
  size_t conv = out.find("  CONV_2D #2\n");
  ASSERT_NE(conv, std::string::npos) << out;
  size_t next = out.find("main_dispatch", conv);
  EXPECT_NE(out.substr(conv, next - conv).find(conv2WeightsLine()), std::string::npos)
      << conv2WeightsLine() << out;
  // Every CONV_2D and DEPTHWISE_CONV_2D filter of the file (28; the
  // AVERAGE_POOL_2D, RESHAPE and SOFTMAX read none).
  EXPECT_EQ(countOf(out, " weights '"), 28u) << out;
}

} // namespace

TEST(QuantizationInspect, PersonDetectShowsScalesAndZeroPoints) {
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(personDetect()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  expectPersonDetectLines(r.output);
}

TEST(QuantizationInspect, ArtifactReflectionKeepsThem) {
  TempDir tmp;
  std::string artifact = tmp.file("pd.kiln");
  CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(personDetect()) + " -o " +
                               shellQuote(artifact));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(artifact));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  expectPersonDetectLines(r.output);
}

TEST(QuantizationInspect, JsonListsEachActivationTensor) {
  CommandResult r = runCommand(kilnBinary() + " inspect --json " + shellQuote(personDetect()) + " 2>/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Array *quant = parsed->getAsObject()->getArray("quantization");
  ASSERT_TRUE(quant);
  bool input = false, output = false;
  size_t activations = 0, weights = 0;
  for (const llvm::json::Value &v : *quant) {
    const llvm::json::Object &o = *v.getAsObject();
    EXPECT_EQ(*o.getString("storage"), "i8");
    if (o.getArray("readers")) { // weights: checked in WeightsPerChannel
      ++weights;
      continue;
    }
    ++activations;
    EXPECT_EQ(*o.getInteger("dimension"), -1); // activations: per tensor
    const llvm::json::Array &scales = *o.getArray("scales");
    ASSERT_EQ(scales.size(), 1u);
    if (*o.getString("tensor") == "input") {
      input = true;
      EXPECT_EQ(static_cast<float>(*scales[0].getAsNumber()), kInputScale);
      EXPECT_EQ(*(*o.getArray("zero_points"))[0].getAsInteger(), -1);
    }
    if (*o.getString("tensor") == kOutput) {
      output = true;
      EXPECT_EQ(static_cast<float>(*scales[0].getAsNumber()), kSoftmaxScale);
      EXPECT_EQ(*(*o.getArray("zero_points"))[0].getAsInteger(), -128);
    }
  }
  EXPECT_TRUE(input && output);
  // One entry per activation: the input and the outputs of the 31
  // operators; one per 8-bit weights tensor (flatc: 89 tensors, the other
  // 57 are 28 int8 filters and 29 int32 biases, which are not listed).
  EXPECT_EQ(activations, 32u);
  EXPECT_EQ(weights, 28u);
}

TEST(QuantizationInspect, WeightsPerChannel) {
  std::string op;
  FileWeights file = weightsInFile(2, op);
  ASSERT_EQ(op, "CONV_2D");
  auto planned = kiln::planModel(personDetect(), {});
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  const kiln::TensorQuantization *w = kiln::findQuantization(**planned, file.name);
  ASSERT_TRUE(w) << file.name;
  EXPECT_TRUE(w->isWeights());
  EXPECT_EQ(w->readers, std::vector<int64_t>{2});
  // One scale per output channel, summarized as count, min and max.
  EXPECT_EQ(file.scales, static_cast<size_t>(file.outputChannels));
  EXPECT_EQ(w->channels, file.outputChannels);
  EXPECT_EQ(w->scaleCount(), file.outputChannels);
  EXPECT_EQ(w->scales, (std::vector<float>{file.min, file.max}));
  EXPECT_EQ(w->zeroPoints, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(w->dimension, file.dimension);
  // The dispatch of CONV_2D #2 lists it, and only it.
  for (const kiln::Dispatch &d : (*planned)->dispatches)
    if (d.ops.size() == 1 && d.ops[0].sourceIndex == 2) {
      std::vector<const kiln::TensorQuantization *> list = kiln::weightsOf(**planned, d);
      ASSERT_EQ(list.size(), 1u);
      EXPECT_EQ(list[0], w);
    }
}

TEST(QuantizationInspect, Uint8ZeroPointsAsTheFileStoresThem) {
  std::string model = std::string(KILN_TEST_DATA_DIR) + "/ops_int8/add_uint8/model.tflite";
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(model));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char *line : {"input 0   'input' quantization: scale 0.02 zero point 128\n",
                           "input 1   'input_1' quantization: scale 0.05 zero point 100\n",
                           "output 0  'add' quantization: scale 0.06 zero point 125\n",
                           " output 'add' scale 0.06 zero point 125\n"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
}

TEST(QuantizationInspect, PlanJsonRoundTripKeepsQuantization) {
  auto planned = kiln::planModel(personDetect(), {});
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  const kiln::CompilationPlan &plan = **planned;
  const kiln::TensorQuantization *in = kiln::findQuantization(plan, "input");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->scales, std::vector<float>{kInputScale});
  EXPECT_EQ(in->zeroPoints, std::vector<int64_t>{-1});
  const kiln::TensorQuantization *relu6 =
      kiln::findQuantization(plan, plan.dispatches.front().outputTensor);
  ASSERT_TRUE(relu6);
  EXPECT_EQ(relu6->scales, std::vector<float>{kRelu6Scale});
  EXPECT_EQ(kiln::findQuantization(plan, ""), nullptr);

  // A per-channel entry as a hand-built plan carries it.
  kiln::CompilationPlan copy = plan;
  copy.quantization.push_back({"weights", {0.5f, 0.0012f, 0.0201f}, {0, 0, 0}, 3, "i8"});
  kiln::CompilationPlan back;
  std::string error;
  ASSERT_TRUE(kiln::planFromJson(kiln::planToJson(copy), back, error)) << error;
  ASSERT_EQ(back.quantization.size(), copy.quantization.size());
  for (size_t i = 0; i < copy.quantization.size(); ++i) {
    const kiln::TensorQuantization &a = copy.quantization[i], &b = back.quantization[i];
    EXPECT_EQ(a.tensor, b.tensor);
    EXPECT_EQ(a.scales, b.scales); // bit for bit: float -> double -> float
    EXPECT_EQ(a.zeroPoints, b.zeroPoints);
    EXPECT_EQ(a.dimension, b.dimension);
    EXPECT_EQ(a.storage, b.storage);
    EXPECT_EQ(a.readers, b.readers);
    EXPECT_EQ(a.channels, b.channels);
  }
  EXPECT_EQ(std::count_if(back.quantization.begin(), back.quantization.end(),
                          [](const kiln::TensorQuantization &q) { return q.channels > 0; }),
            28);
  ASSERT_EQ(back.dispatches.size(), plan.dispatches.size());
  for (size_t i = 0; i < plan.dispatches.size(); ++i)
    EXPECT_EQ(back.dispatches[i].outputTensor, plan.dispatches[i].outputTensor);
  EXPECT_EQ(kiln::describeQuantization(back.quantization.back()),
            "per-channel: 3 scales, min 0.0012 max 0.5, dimension 3");
}

TEST(QuantizationInspect, DiffComparesIntegerBuilds) {
  TempDir tmp;
  std::string a = tmp.file("a.kiln"), b = tmp.file("b.kiln");
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(personDetect()) + " -o " + shellQuote(a)).exitCode, 0);
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(personDetect()) +
                       " --profile=stripped -o " + shellQuote(b))
                .exitCode,
            0);
  CommandResult r = runCommand(kilnBinary() + " diff " + shellQuote(a) + " " + shellQuote(b) + " --benchmark=1");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // The stripped build drops the reflection section (with the
  // quantization) and keeps the plan.
  size_t arena = r.output.find("\narena_bytes");
  ASSERT_NE(arena, std::string::npos) << r.output;
  std::string arenaRow = r.output.substr(arena + 1, r.output.find('\n', arena + 1) - arena - 1);
  EXPECT_TRUE(llvm::StringRef(arenaRow).ends_with(" +0")) << arenaRow;
  EXPECT_NE(r.output.find("median_ms"), std::string::npos) << r.output;
  size_t row = r.output.find("\nreflection");
  ASSERT_NE(row, std::string::npos) << r.output;
  EXPECT_NE(r.output.substr(row, 60).find(" 0 "), std::string::npos) << r.output;
}

// `kiln compile --emit=tosa` writes the attribute, so a TOSA .mlir file may
// carry one: a well-formed one is shown, a malformed one is one error line.
TEST(QuantizationInspect, TosaMlirAttributeIsCheckedNotTrusted) {
  TempDir tmp;
  auto write = [&](const std::string &name, const std::string &entry) {
    std::string path = tmp.file(name);
    std::ofstream(path) << "module attributes {kiln.quantization = {x = " << entry << "}} {\n"
                        << "  func.func @main(%x: tensor<4xi8> {kiln.name = \"x\"}) -> (tensor<4xi8> {kiln.name = \"y\"}) {\n"
                        << "    %0 = \"tosa.abs\"(%x) : (tensor<4xi8>) -> tensor<4xi8>\n"
                        << "    return %0 : tensor<4xi8>\n  }\n}\n";
    return path;
  };
  std::string good = write("good.mlir", "{scales = [2.5e-01 : f32], zero_points = [3], dimension = -1, "
                                        "storage = \"i8\", constant = false}");
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(good));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("input 0   'x' quantization: scale 0.25 zero point 3\n"), std::string::npos)
      << r.output;
  // Integer scales, a zero point missing, readers that are not indices.
  for (const char *entry : {"{scales = [1], zero_points = [0], dimension = -1, storage = \"i8\", constant = false}",
                            "{scales = [1.0 : f32], zero_points = [], dimension = -1, storage = \"i8\", constant = false}",
                            "{scales = [1.0 : f32], zero_points = [0], dimension = -1, storage = \"i8\", constant = true, "
                            "readers = [\"conv\"]}"}) {
    std::string bad = write("bad.mlir", entry);
    EXPECT_TRUE(kilnFailsCleanly("inspect " + shellQuote(bad),
                                 {"kiln.quantization entry 'x' is malformed", "scales = [f32, ...]"}))
        << entry;
  }
  // Readers on an activation.
  std::string bad = write("bad.mlir", "{scales = [1.0 : f32], zero_points = [0], dimension = -1, "
                                      "storage = \"i8\", constant = false, readers = [0]}");
  EXPECT_TRUE(kilnFailsCleanly("inspect " + shellQuote(bad),
                               {"kiln.quantization entry 'x' has readers but is not constant"}));
}
