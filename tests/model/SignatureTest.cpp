//===- SignatureTest.cpp - TFLite models with several signatures ---------===//
//
// The cases of tests/data/signatures (tests/reference/
// make_signature_cases.mjs): one model with SignatureDefs 'add' (subgraph
// 0), 'mul' (subgraph 1, inputs listed y, x) and 'sub' (subgraph 2, inputs
// and outputs listed in the reverse of the subgraph's order). Each
// signature is compiled with --signature (CompileOptions::signature), run
// in-process and compared with TFLite 2.9's builtin kernels on that
// subgraph, fed and read through the signature's TensorMaps (stored
// outputs, which the script checks against its own evaluation) within
// 1e-4 x (1 + |reference|). Also checked: the artifact's inputs and
// outputs carry the signature's names in its order, the default is
// subgraph 0 with its tensors' names (as before signatures were read), an
// unknown name (and --signature on an ONNX or .mlir
// model) is one error line, the setting round-trips through the recipe's
// text, JSON and .kilnproj forms, and `kiln inspect` lists the signatures.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/ModelInputs.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"

#include "llvm/Support/JSON.h"

#include <fstream>
#include <sstream>

using namespace kiln::test;

namespace {

std::string caseDir(const std::string &name) {
  return std::string(KILN_TEST_DATA_DIR) + "/signatures/" + name;
}

std::string modelPath() { return caseDir("add") + "/model.tflite"; }

kiln::CompileOptions withSignature(const std::string &signature) {
  kiln::BuildRecipe recipe;
  if (!signature.empty())
    llvm::cantFail(kiln::setRecipeOption(recipe, "signature", signature));
  return llvm::cantFail(kiln::recipeCompileOptions(recipe));
}

/// The names of `infos`, in order.
std::vector<std::string> namesOf(const std::vector<kiln::IOInfo> &infos) {
  std::vector<std::string> names;
  for (const kiln::IOInfo &i : infos)
    names.push_back(i.name);
  return names;
}

/// meta.json's string array `key`.
std::vector<std::string> metaNames(const std::string &name, const char *key) {
  std::ifstream in(caseDir(name) + "/meta.json");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = llvm::json::parse(text.str());
  std::vector<std::string> out;
  if (!parsed) {
    ADD_FAILURE() << llvm::toString(parsed.takeError());
    return out;
  }
  if (const llvm::json::Array *a = parsed->getAsObject()->getArray(key))
    for (const llvm::json::Value &v : *a)
      out.push_back(v.getAsString().value_or("").str());
  return out;
}

class SignatureCase : public ::testing::TestWithParam<std::string> {};

TEST_P(SignatureCase, MatchesTFLite) {
  expectFolderMatchesReference(caseDir(GetParam()), withSignature(GetParam()));
}

TEST_P(SignatureCase, NamesAndOrderAreTheSignatures) {
  auto planned = kiln::planOnly(modelPath(), withSignature(GetParam()));
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  EXPECT_EQ(namesOf(planned->inputs), metaNames(GetParam(), "inputs"));
  EXPECT_EQ(namesOf(planned->outputs), metaNames(GetParam(), "outputs"));
  auto inputs = kiln::readModelInputs(modelPath(), GetParam());
  ASSERT_TRUE(bool(inputs)) << llvm::toString(inputs.takeError());
  std::vector<std::string> declared;
  for (const kiln::ModelInput &in : *inputs)
    declared.push_back(in.name);
  EXPECT_EQ(declared, metaNames(GetParam(), "inputs"));
}

INSTANTIATE_TEST_SUITE_P(TFLite, SignatureCase, ::testing::Values("add", "mul", "sub"),
                         [](const auto &info) { return info.param; });

TEST(Signature, DefaultIsSubgraph0WithItsTensorNames) {
  // No --signature: subgraph 0 as before signatures were read, its tensors'
  // names kept (existing projects and --fix-shape flags name them).
  auto planned = kiln::planOnly(modelPath(), kiln::CompileOptions());
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  EXPECT_EQ(namesOf(planned->inputs),
            (std::vector<std::string>{"serving_default_x:0", "serving_default_y:0"}));
  EXPECT_EQ(namesOf(planned->outputs), (std::vector<std::string>{"PartitionedCall:0"}));
  // It computes subgraph 0, 'add' (whose inputs are in the subgraph's order).
  expectFolderMatchesReference(caseDir("add"), kiln::CompileOptions());
  auto signatures = kiln::readModelSignatures(modelPath());
  ASSERT_TRUE(bool(signatures)) << llvm::toString(signatures.takeError());
  ASSERT_EQ(signatures->size(), 3u);
  for (const kiln::ModelSignature &s : *signatures)
    EXPECT_FALSE(s.compiled) << s.key;
}

TEST(Signature, ModelWithoutSignaturesKeepsTensorNames) {
  // A control-flow case: no SignatureDef, subgraph 0 with its tensor names.
  std::string path =
      std::string(KILN_TEST_DATA_DIR) + "/control_flow/if_constant_true/model.tflite";
  auto signatures = kiln::readModelSignatures(path);
  ASSERT_TRUE(bool(signatures)) << llvm::toString(signatures.takeError());
  EXPECT_TRUE(signatures->empty());
  auto planned = kiln::planOnly(path, withSignature("add"));
  ASSERT_FALSE(bool(planned));
  std::string message = llvm::toString(planned.takeError());
  EXPECT_NE(message.find("the model has no signatures"), std::string::npos) << message;
}

TEST(Signature, UnknownNameIsOneErrorListingTheSignatures) {
  TempDir tmp;
  const std::string out = " -o " + shellQuote(tmp.file("m.kiln"));
  EXPECT_TRUE(kilnFailsCleanly(
      "compile " + shellQuote(modelPath()) + " --signature=div" + out,
      {"--signature='div' is not a signature of the model", "'add', 'mul', 'sub'"}));
  EXPECT_TRUE(kilnFailsCleanly("inspect " + shellQuote(modelPath()) + " --signature=div",
                               {"'div' is not a signature", "'add', 'mul', 'sub'"}));
  // An empty name is a usage error (exit status 2), as every flag's.
  CommandResult empty =
      runCommand(kilnBinary() + " compile " + shellQuote(modelPath()) + " --signature=" + out);
  EXPECT_EQ(empty.exitCode, 2) << empty.output;
  EXPECT_NE(empty.output.find("--signature= needs a value"), std::string::npos) << empty.output;
}

TEST(Signature, OtherFormatsRefuseTheSetting) {
  std::string mlir = std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir";
  std::string onnx = std::string(KILN_TEST_DATA_DIR) + "/onnx/symbolic_batch.onnx";
  TempDir tmp;
  const std::string out = " -o " + shellQuote(tmp.file("m.kiln"));
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(mlir) + " --signature=add" + out,
                               {"--signature is for TFLite models", "TOSA .mlir"}));
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(onnx) + " --signature=add" + out,
                               {"--signature is for TFLite models", "ONNX model"}));
  auto inputs = kiln::readModelInputs(onnx, "add");
  ASSERT_FALSE(bool(inputs));
  EXPECT_NE(llvm::toString(inputs.takeError()).find("--signature is for TFLite models"),
            std::string::npos);
}

TEST(Signature, SettingRoundTripsThroughTheRecipe) {
  kiln::BuildRecipe recipe;
  ASSERT_FALSE(bool(kiln::setRecipeOption(recipe, "signature", "mul")));
  EXPECT_EQ(recipe.signature, "mul");
  EXPECT_EQ(kiln::recipeCommandLine(recipe), (std::vector<std::string>{"--signature=mul"}));
  llvm::json::Object json = kiln::recipeToJson(recipe);
  EXPECT_EQ(json.getString("signature").value_or("").str(), "mul");
  auto back = kiln::recipeFromJson(json, "test");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, recipe);
  EXPECT_EQ(kiln::settingDisplayName("signature"), "Signature");
  // A .kilnproj keeps it.
  TempDir tmp;
  kiln::Project project;
  project.model = modelPath();
  project.recipe = recipe;
  ASSERT_FALSE(bool(kiln::saveProject(project, tmp.file("m.kilnproj"))));
  auto loaded = kiln::loadProject(tmp.file("m.kilnproj"));
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->recipe.signature, "mul");
  // An empty key in JSON is refused like the flag's.
  llvm::json::Object empty{{"signature", ""}};
  auto refused = kiln::recipeFromJson(empty, "m.kilnproj");
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("'' is not a signature key"),
            std::string::npos);
}

TEST(Signature, ProjectFlagCompilesItsSignature) {
  TempDir tmp;
  kiln::Project project;
  project.model = modelPath();
  llvm::cantFail(kiln::setRecipeOption(project.recipe, "signature", "sub"));
  ASSERT_FALSE(bool(kiln::saveProject(project, tmp.file("m.kilnproj"))));
  CommandResult c =
      runCommand(kilnBinary() + " compile --project=" + shellQuote(tmp.file("m.kilnproj")) +
                 " -o " + shellQuote(tmp.file("m.kiln")));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  // The artifact's signature is 'sub''s: outputs scaled, difference.
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(tmp.file("m.kiln")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  size_t scaled = r.output.find("'scaled'"), difference = r.output.find("'difference'");
  ASSERT_NE(scaled, std::string::npos) << r.output;
  ASSERT_NE(difference, std::string::npos) << r.output;
  EXPECT_LT(scaled, difference) << r.output;
}

TEST(Signature, InspectListsTheSignatures) {
  CommandResult plain = runCommand(kilnBinary() + " inspect " + shellQuote(modelPath()));
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  EXPECT_NE(plain.output.find("signature none given: subgraph 0 compiled"), std::string::npos)
      << plain.output;
  CommandResult r =
      runCommand(kilnBinary() + " inspect " + shellQuote(modelPath()) + " --signature=mul");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("signature 'add' (subgraph 0): inputs ('x', 'y') -> outputs ('sum')\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(
      r.output.find(
          "signature 'mul' (subgraph 1): inputs ('y', 'x') -> outputs ('product') [compiled]\n"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("signature 'sub' (subgraph 2): inputs ('y', 'x') -> outputs ('scaled', "
                          "'difference')\n"),
            std::string::npos)
      << r.output;

  CommandResult j = runCommand(kilnBinary() + " inspect " + shellQuote(modelPath()) + " --json");
  ASSERT_EQ(j.exitCode, 0) << j.output;
  auto parsed = llvm::json::parse(j.output);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Array *signatures = parsed->getAsObject()->getArray("signatures");
  ASSERT_NE(signatures, nullptr) << j.output;
  ASSERT_EQ(signatures->size(), 3u);
  std::vector<std::string> keys, compiled;
  for (const llvm::json::Value &v : *signatures) {
    const llvm::json::Object *s = v.getAsObject();
    keys.push_back(s->getString("key").value_or("").str());
    if (s->getBoolean("compiled").value_or(false))
      compiled.push_back(keys.back());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"add", "mul", "sub"}));
  EXPECT_TRUE(compiled.empty()); // the default: subgraph 0, no signature
  const llvm::json::Object *sub = (*signatures)[2].getAsObject();
  EXPECT_EQ(sub->getInteger("subgraph").value_or(-1), 2);
  ASSERT_NE(sub->getArray("outputs"), nullptr);
  EXPECT_EQ((*sub->getArray("outputs"))[0].getAsString().value_or("").str(), "scaled");
}

} // namespace
