//===- ModelInputsTest.cpp - A model's inputs as data (kiln/ModelInputs.h) -===//
//
// kiln::readModelInputs on models whose inputs are known from how they were
// written:
//   - tests/data/bad/dynamic_batch.tflite: one input of shape and
//     shape_signature [-1,8] (tests/data/bad/README.md);
//   - the audio and pair models of tests/support/ShapeFixModels.h ([-1,-1];
//     two [-1,4]);
//   - tests/data/model_inputs/symbolic_n.onnx (make_symbolic_n.py): x [N,4],
//     b [1,4], Relu "relu#1" then Add;
//   - tests/data/mlir/add_scale.mlir: static arguments.
// checkShapeFixes' refusals, the suggestion an unfixed import carries as
// data (UnfixedInputError), `kiln inspect`'s listing of symbolic
// dimensions, and an ONNX node name holding '#' read back from the plan.
// Expected values come from the model definitions, not from Kiln.
//
//===----------------------------------------------------------------------===//
#include "ShapeFixModels.h"
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/ModelInputs.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"

#include "llvm/Support/JSON.h"

#include <cstring>

using namespace kiln::test;

namespace {

std::string dataFile(const std::string &rel) { return std::string(KILN_TEST_DATA_DIR) + "/" + rel; }

std::vector<kiln::ModelInput> inputsOf(const std::string &path) {
  auto inputs = kiln::readModelInputs(path);
  if (!inputs) {
    ADD_FAILURE() << llvm::toString(inputs.takeError());
    return {};
  }
  return *inputs;
}

std::string errorOf(llvm::Error err) { return err ? llvm::toString(std::move(err)) : std::string(); }

TEST(ModelInputs, TfliteDynamicBatch) {
  auto inputs = inputsOf(dataFile("bad/dynamic_batch.tflite"));
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].index, 0);
  EXPECT_EQ(inputs[0].elementType, "float32");
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(inputs[0].dimNames, (std::vector<std::string>{"", ""}));
  EXPECT_TRUE(inputs[0].isDynamic());
  EXPECT_EQ(inputs[0].shapeText(), "[?,8]");
}

TEST(ModelInputs, TfliteAudioAndPair) {
  TempDir tmp;
  ASSERT_TRUE(writeAudioModel(tmp.file("audio.tflite")));
  ASSERT_TRUE(writePairModel(tmp.file("pair.tflite")));
  auto audio = inputsOf(tmp.file("audio.tflite"));
  ASSERT_EQ(audio.size(), 1u);
  EXPECT_EQ(audio[0].name, "audio");
  EXPECT_EQ(audio[0].shape, (std::vector<int64_t>{-1, -1}));
  auto pair = inputsOf(tmp.file("pair.tflite"));
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(pair[0].name, "a");
  EXPECT_EQ(pair[1].name, "b");
  EXPECT_EQ(pair[1].index, 1);
  EXPECT_EQ(pair[1].shape, (std::vector<int64_t>{-1, 4}));
}

TEST(ModelInputs, OnnxSymbolicBatch) {
  auto inputs = inputsOf(dataFile("model_inputs/symbolic_n.onnx"));
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[0].elementType, "float32");
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(inputs[0].dimNames, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(inputs[0].shapeText(), "[N,4]");
  EXPECT_TRUE(inputs[0].isDynamic());
  EXPECT_EQ(inputs[1].name, "b");
  EXPECT_EQ(inputs[1].index, 1);
  EXPECT_EQ(inputs[1].shape, (std::vector<int64_t>{1, 4}));
  EXPECT_FALSE(inputs[1].isDynamic());
}

TEST(ModelInputs, MlirStaticArguments) {
  auto inputs = inputsOf(dataFile("mlir/add_scale.mlir"));
  ASSERT_FALSE(inputs.empty());
  for (const kiln::ModelInput &in : inputs)
    EXPECT_FALSE(in.isDynamic()) << in.name;
}

TEST(ModelInputs, NotAModel) {
  TempDir tmp;
  std::string text = errorOf(kiln::readModelInputs(tmp.file("missing.onnx")).takeError());
  EXPECT_NE(text.find("cannot read"), std::string::npos) << text;
  std::ofstream(tmp.file("junk.bin")) << "junk";
  text = errorOf(kiln::readModelInputs(tmp.file("junk.bin")).takeError());
  EXPECT_NE(text.find("unrecognized model format"), std::string::npos) << text;
}

TEST(ModelInputs, CheckShapeFixes) {
  auto inputs = inputsOf(dataFile("model_inputs/symbolic_n.onnx"));
  ASSERT_EQ(inputs.size(), 2u);
  auto check = [&](std::vector<kiln::ShapeFix> fixes, std::vector<std::string> *warnings = nullptr) {
    return errorOf(kiln::checkShapeFixes(inputs, fixes, "m.onnx", warnings));
  };
  EXPECT_EQ(check({{"x", {3, 4}}}), "");
  EXPECT_EQ(check({{"0", {3, 4}}}), "");
  std::string e = check({{"z", {3, 4}}});
  EXPECT_NE(e.find("m.onnx: --fix-shape names input 'z', which the model does not have; its inputs are "
                   "'x' (0), 'b' (1)"),
            std::string::npos)
      << e;
  e = check({{"x", {3, 4, 1}}});
  EXPECT_NE(e.find("gives rank 3, the input has rank 2 ([N,4])"), std::string::npos) << e;
  e = check({{"x", {3, 5}}});
  EXPECT_NE(e.find("dimension 1 is static (4) and cannot become 5"), std::string::npos) << e;
  e = check({{"x", {0, 4}}});
  EXPECT_NE(e.find("dimension 0 must be positive"), std::string::npos) << e;
  e = check({{"x", {3, 4}}, {"0", {2, 4}}});
  EXPECT_NE(e.find("fixes input 'x' twice"), std::string::npos) << e;
  std::vector<std::string> warnings;
  EXPECT_EQ(check({{"b", {1, 4}}}, &warnings), "");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("changes nothing: input 'b' is static"), std::string::npos) << warnings[0];
}

/// The inputs an unfixed import carries, and its message.
std::vector<kiln::UnfixedInput> unfixedOf(const std::string &path, std::string &message) {
  auto plan = kiln::planModel(path, kiln::CompileOptions());
  if (plan) {
    ADD_FAILURE() << path << " planned without --fix-shape";
    return {};
  }
  llvm::Error err = plan.takeError();
  EXPECT_TRUE(err.isA<kiln::UnfixedInputError>());
  std::vector<kiln::UnfixedInput> unfixed = kiln::unfixedInputsOf(err);
  message = llvm::toString(std::move(err)); // still the error, with its text
  return unfixed;
}

TEST(ModelInputs, UnfixedImportCarriesSuggestion) {
  TempDir tmp;
  // Batch -1 in `shape` too: no recorded size to compile at.
  ASSERT_TRUE(writeUnrecordedPairModel(tmp.file("pair.tflite")));
  std::string message;
  auto pair = unfixedOf(tmp.file("pair.tflite"), message);
  ASSERT_EQ(pair.size(), 2u) << message;
  EXPECT_EQ(pair[0].input.name, "a");
  EXPECT_EQ(pair[1].input.name, "b");
  EXPECT_EQ(pair[0].input.shape, (std::vector<int64_t>{-1, 4}));
  // Batch 1 (any size compiles an ADD); the message names the same.
  EXPECT_EQ(pair[0].suggestion, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(pair[1].suggestion, (std::vector<int64_t>{1, 4}));
  EXPECT_NE(message.find("--fix-shape=a=1x4"), std::string::npos) << message;

  auto onnx = unfixedOf(dataFile("model_inputs/symbolic_n.onnx"), message);
  ASSERT_EQ(onnx.size(), 1u) << message;
  EXPECT_EQ(onnx[0].input.name, "x");
  EXPECT_EQ(onnx[0].input.dimNames[0], "N");
  EXPECT_EQ(onnx[0].suggestion, (std::vector<int64_t>{1, 4}));
  EXPECT_NE(message.find("--fix-shape=x=1x4"), std::string::npos) << message;

  // Another error carries no inputs and keeps its text.
  llvm::Error other = llvm::createStringError(llvm::inconvertibleErrorCode(), "other");
  EXPECT_TRUE(kiln::unfixedInputsOf(other).empty());
  EXPECT_EQ(llvm::toString(std::move(other)), "other");
}

TEST(ModelInputs, OnnxFixedByNameRunsAndNamesNodes) {
  TempDir tmp;
  std::string model = dataFile("model_inputs/symbolic_n.onnx"), out = tmp.file("y.npy");
  // y = relu(x) + b: x rows (-1,2,-3,4), (5,-6,7,-8), (0,0,0,0); b = 0.5.
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(model) +
                               " --fix-shape=x=3x4 --input=3x4xf32=-1,2,-3,4,5,-6,7,-8,0,0,0,0"
                               " --input=1x4xf32=0.5 --output=@" + shellQuote(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray y = loadNpy(out);
  ASSERT_EQ(y.shape, (std::vector<int64_t>{3, 4}));
  const float want[12] = {0.5, 2.5, 0.5, 4.5, 5.5, 0.5, 7.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  for (int i = 0; i < 12; ++i) {
    float got;
    std::memcpy(&got, y.data.data() + 4 * i, 4);
    EXPECT_EQ(got, want[i]) << i;
  }
  // The plan names the nodes by op type, name and index; the name's '#'
  // stays in the name (the index follows the last '#').
  kiln::CompileOptions options;
  options.fixedShapes = {{"0", {2, 4}}};
  auto plan = kiln::planModel(model, options);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  bool relu = false, add = false;
  for (const kiln::Dispatch &d : (*plan)->dispatches)
    for (const kiln::SourceOp &op : d.ops) {
      relu |= op.name == "Relu \"relu#1\"" && op.sourceIndex == 0;
      add |= op.name == "Add \"add\"" && op.sourceIndex == 1;
    }
  EXPECT_TRUE(relu && add);
}

TEST(ModelInputs, InspectListsSymbolicDimensions) {
  std::string model = shellQuote(dataFile("model_inputs/symbolic_n.onnx"));
  // Unfixed: the inputs, then the one error.
  CommandResult r = runCommand(kilnBinary() + " inspect " + model);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("model input 0 'x' float32 [N,4]: dimension 0 ('N') is dynamic"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("model input 1 'b' float32 [1,4]\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--fix-shape=x=1x4"), std::string::npos) << r.output;
  // Fixed: the plan, and the model's own dimensions after the signature.
  r = runCommand(kilnBinary() + " inspect " + model + " --fix-shape=x=2x4");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("model input 0 'x' float32 [N,4]"), std::string::npos) << r.output;
  r = runCommand(kilnBinary() + " inspect " + model + " --fix-shape=x=2x4 --json 2>/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = llvm::json::parse(r.output);
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  const llvm::json::Array *inputs = json->getAsObject()->getArray("model_inputs");
  ASSERT_TRUE(inputs);
  ASSERT_EQ(inputs->size(), 2u);
  const llvm::json::Object *x = (*inputs)[0].getAsObject();
  EXPECT_EQ(x->getString("name"), llvm::StringRef("x"));
  EXPECT_EQ((*x->getArray("shape"))[0].getAsInteger(), -1);
  EXPECT_EQ((*x->getArray("dim_names"))[0].getAsString(), llvm::StringRef("N"));
  EXPECT_EQ(x->getBoolean("dynamic"), true);
}

TEST(ModelInputs, FixShapeRefusedTheSameWayForOnnx) {
  std::string model = shellQuote(dataFile("model_inputs/symbolic_n.onnx"));
  EXPECT_TRUE(kilnFailsCleanly("compile " + model + " --fix-shape=x=2x5",
                               {"dimension 1 is static (4) and cannot become 5"}));
  EXPECT_TRUE(kilnFailsCleanly("compile " + model + " --fix-shape=q=2x4",
                               {"which the model does not have; its inputs are 'x' (0), 'b' (1)"}));
}

} // namespace
