//===- ProjectTest.cpp - .kilnproj files and kiln --project ---------------===//
//
// A project round-trips through its JSON form; unreadable or mistyped
// projects fail with a message naming the file and key and are left
// untouched (or set aside on request); `kiln compile --project=` and
// `kiln export --project=` build byte for byte what the same settings give
// as flags.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"
#include "TestSupport.h"

#include "kiln/Project.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string errorOf(llvm::Error err) { return llvm::toString(std::move(err)); }

TEST(Project, RoundTripsThroughJson) {
  TempDir dir;
  kiln::Project p;
  p.model = "blazeface.tflite";
  p.recipe.target = "aarch64-linux-gnu";
  p.recipe.targetCpu = "cortex-a72";
  p.recipe.profile = "stripped";
  p.recipe.format = kiln::OutputFormat::CModule;
  p.recipe.fusion = false;
  p.recipe.noFusion = {5, 7};
  p.recipe.tiles = {{3, {0, 8, 0, 0}}, {12, {1, 2}}};
  p.recipe.fixedShapes = {{"0", {2, 76, 32, 1}}};
  p.exportDir = "export";
  ASSERT_FALSE(static_cast<bool>(kiln::saveProject(p, dir.file("m.kilnproj"))));
  auto loaded = kiln::loadProject(dir.file("m.kilnproj"));
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_TRUE(*loaded == p);
  // Written through a temporary file that is gone now: one file.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  EXPECT_EQ(kiln::projectPathFor("/a/b/model.tflite"), "/a/b/model.tflite.kilnproj");
  EXPECT_EQ(kiln::projectModelPath(p, "/a/b/m.kilnproj"), "/a/b/blazeface.tflite");
  EXPECT_EQ(kiln::projectExportDir(p, "/a/b/m.kilnproj"), "/a/b/export");
  // Options: the target's triple, the kept CPU, the profile, the tuning.
  auto options = kiln::recipeCompileOptions(p.recipe);
  ASSERT_TRUE(static_cast<bool>(options));
  EXPECT_EQ(options->target.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(options->target.cpu, "cortex-a72");
  EXPECT_FALSE(options->reflection);
  EXPECT_FALSE(options->fusion);
  EXPECT_EQ(options->tileSizes.size(), 2u);
  EXPECT_EQ(options->format, kiln::OutputFormat::CModule);
}

TEST(Project, BadFilesNameTheFileAndKeyAndStayUntouched) {
  TempDir dir;
  struct Case {
    std::string text;
    std::string needle;
  } cases[] = {
      {"{not json", "invalid JSON"},
      {"[1, 2]", "not a Kiln project"},
      {R"({"kiln_project": 2, "model": "m.tflite"})", "version 2; this Kiln reads version 1"},
      {R"({"kiln_project": 1})", "\"model\" is missing"},
      {R"({"kiln_project": 1, "model": "m.tflite", "tilez": {}})", "unknown key 'tilez'"},
      {R"({"kiln_project": 1, "model": "m.tflite", "tiles": {"x": [1]}})", "'x' is not a dispatch id"},
      {R"({"kiln_project": 1, "model": "m.tflite", "tiles": {"1": [-4]}})", "tiles.1"},
      {R"({"kiln_project": 1, "model": "m.tflite", "fixed_shapes": {"0": [0, 3]}})",
       "not a positive dimension"},
      {R"({"kiln_project": 1, "model": "m.tflite", "fusion": "yes"})", "\"fusion\" must be true or false"},
      {R"({"kiln_project": 1, "model": "m.tflite", "output_format": "zip"})",
       "\"output_format\": 'zip' is not a format (kiln, c-module)"},
  };
  for (const Case &c : cases) {
    std::string path = dir.file("bad.kilnproj");
    writeText(path, c.text);
    auto loaded = kiln::loadProject(path);
    ASSERT_FALSE(static_cast<bool>(loaded)) << c.text;
    std::string message = llvm::toString(loaded.takeError());
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << message;
    EXPECT_EQ(readText(path), c.text);
  }
  // An unknown target set in the structure surfaces when the options are
  // made.
  kiln::Project p;
  p.model = "m.tflite";
  p.recipe.target = "z80";
  auto options = kiln::recipeCompileOptions(p.recipe);
  ASSERT_FALSE(static_cast<bool>(options));
  EXPECT_NE(errorOf(options.takeError()).find("'z80'"), std::string::npos);
  // Setting aside keeps the bytes under a new name, never overwriting an
  // earlier copy.
  std::string path = dir.file("bad.kilnproj");
  writeText(path, "{garbage");
  auto aside = kiln::setAsideProject(path);
  ASSERT_TRUE(static_cast<bool>(aside));
  EXPECT_EQ(*aside, path + ".unreadable");
  EXPECT_EQ(readText(*aside), "{garbage");
  EXPECT_FALSE(fs::exists(path));
  writeText(path, "{again");
  auto second = kiln::setAsideProject(path);
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_EQ(*second, path + ".unreadable-2");
  EXPECT_EQ(readText(*aside), "{garbage");
  writeText(path, "{\"kiln_project\": 1, \"model\": \"m.tflite\"}");
  auto failed = kiln::setAsideProject(path, "failed");
  ASSERT_TRUE(static_cast<bool>(failed));
  EXPECT_EQ(*failed, path + ".failed");
}

// Two models of one name in one folder keep their own projects; a project
// an older workbench wrote as MODEL.kilnproj is read by the model it names
// and by no other.
TEST(Project, OneProjectPerModelFile) {
  TempDir dir;
  const std::string tflite = dir.file("blazeface.tflite"), onnx = dir.file("blazeface.onnx");
  EXPECT_EQ(kiln::projectPathFor(tflite), dir.file("blazeface.tflite.kilnproj"));
  EXPECT_EQ(kiln::projectPathFor(onnx), dir.file("blazeface.onnx.kilnproj"));
  // Nothing written yet: both read (and save) their own name.
  EXPECT_EQ(kiln::projectPathToRead(tflite), kiln::projectPathFor(tflite));
  // The older name, holding the TFLite model's tiles.
  kiln::Project older;
  older.model = "blazeface.tflite";
  older.recipe.tiles = {{4, {1, 8, 8, 16, 4}}};
  ASSERT_FALSE(static_cast<bool>(kiln::saveProject(older, dir.file("blazeface.kilnproj"))));
  EXPECT_EQ(kiln::projectPathToRead(tflite), dir.file("blazeface.kilnproj"));
  EXPECT_EQ(kiln::projectPathToRead(onnx), kiln::projectPathFor(onnx)); // not the ONNX model's
  // Once the TFLite model has its own file, that one is read.
  kiln::Project own = older;
  own.recipe.tiles.clear();
  ASSERT_FALSE(static_cast<bool>(kiln::saveProject(own, kiln::projectPathFor(tflite))));
  EXPECT_EQ(kiln::projectPathToRead(tflite), kiln::projectPathFor(tflite));
  // An unreadable older file belongs to no one and is left alone.
  writeText(dir.file("x.kilnproj"), "{garbage");
  EXPECT_EQ(kiln::projectPathToRead(dir.file("x.tflite")), dir.file("x.tflite.kilnproj"));
  EXPECT_EQ(readText(dir.file("x.kilnproj")), "{garbage");
}

TEST(Project, CompileAndExportWithProjectEqualFlags) {
  ASSERT_TRUE(fs::exists(realModelPath("embedding"))) << missingModelHint(realModelPath("embedding"));
  TempDir dir;
  fs::copy_file(realModelPath("embedding"), dir.file("embedding.tflite"));
  kiln::Project p;
  p.model = "embedding.tflite";
  p.recipe.profile = "stripped";
  p.recipe.fixedShapes = {{"0", {2, 76, 32, 1}}};
  p.recipe.tiles = {{0, {0, 0, 0, 0}}};
  p.recipe.noFusion = {3};
  p.exportDir = "bundle";
  ASSERT_FALSE(static_cast<bool>(kiln::saveProject(p, dir.file("embedding.kilnproj"))));
  std::string model = shellQuote(dir.file("embedding.tflite"));
  std::string flags = " --profile=stripped --fix-shape=0=2x76x32x1 --tile=0=0,0,0,0 --no-fusion=3";
  CommandResult a = runCommand(kilnBinary() + " compile --project=" +
                               shellQuote(dir.file("embedding.kilnproj")) + " -o " +
                               shellQuote(dir.file("a.kiln")));
  ASSERT_EQ(a.exitCode, 0) << a.output;
  CommandResult b = runCommand(kilnBinary() + " compile " + model + flags + " -o " +
                               shellQuote(dir.file("b.kiln")));
  ASSERT_EQ(b.exitCode, 0) << b.output;
  EXPECT_EQ(readText(dir.file("a.kiln")), readText(dir.file("b.kiln")));

  // Export goes to the project's export folder and equals the flag form.
  CommandResult e = runCommand(kilnBinary() + " export --project=" +
                               shellQuote(dir.file("embedding.kilnproj")));
  ASSERT_EQ(e.exitCode, 0) << e.output;
  CommandResult f = runCommand(kilnBinary() + " export " + model + flags +
                               " --target=host -o " + shellQuote(dir.file("flags")));
  ASSERT_EQ(f.exitCode, 0) << f.output;
  for (const char *file : {"embedding.kiln", "manifest.json", "report.md"})
    EXPECT_EQ(readText(dir.file(std::string("bundle/") + file)),
              readText(dir.file(std::string("flags/") + file)))
        << file;
  // Flags that the project sets are refused next to it.
  CommandResult mixed = runCommand(kilnBinary() + " compile --project=" +
                                   shellQuote(dir.file("embedding.kilnproj")) + " --tile=0=1");
  EXPECT_EQ(mixed.exitCode, 2) << mixed.output; // a usage error, as other flag conflicts
  EXPECT_NE(mixed.output.find("edit the project"), std::string::npos) << mixed.output;
  CommandResult exportMixed =
      runCommand(kilnBinary() + " export --project=" + shellQuote(dir.file("embedding.kilnproj")) +
                 " --target=host -o " + shellQuote(dir.file("mixed")));
  EXPECT_EQ(exportMixed.exitCode, 2) << exportMixed.output;
  EXPECT_NE(exportMixed.output.find("edit the project"), std::string::npos) << exportMixed.output;
}

} // namespace
