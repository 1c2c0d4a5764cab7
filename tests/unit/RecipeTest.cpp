//===- RecipeTest.cpp - The settings of one build (kiln/Recipe.h) ---------===//
//
// The recipe's three forms agree: recipe -> JSON -> recipe and recipe ->
// command line -> recipe are identities over recipes that between them set
// every setting (each away from its default), and a .kilnproj keeps a
// recipe through a save and a load. Every bad value of every setting is
// one error naming the flag (or the file and key) and the value. The
// expected JSON, command lines, options and messages below are written by
// hand from the documented forms, never copied from the implementation.
//
//===----------------------------------------------------------------------===//
#include "kiln/Recipe.h"
#include "kiln/Error.h"
#include "kiln/Project.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using kiln::BuildRecipe;

/// Every setting away from its default: a C module for a named target with
/// CPU and features, the stripped profile with both overrides, three
/// dispatches' tiles, fusion off and off for three dispatches, shapes by
/// index and by name, a scalar value and a small tensor's.
BuildRecipe everySetting() {
  BuildRecipe r;
  r.target = "aarch64-linux-gnu";
  r.targetCpu = "cortex-a72";
  r.targetFeatures = "+neon,+crc";
  r.profile = "stripped";
  r.debugSymbols = true;
  r.reflection = false;
  r.format = kiln::OutputFormat::CModule;
  r.moduleName = "face_detector";
  r.tiles = {{0, {1, 8, 0, 0}}, {3, {0, 16}}, {12, {2}}};
  r.fusion = false;
  r.noFusion = {2, 5, 9};
  r.fixedShapes = {{"0", {1, 76, 32, 1}}, {"audio", {2, 8000}}};
  r.fixedValues = {{"sr", {int64_t(16000)}}, {"x", {int64_t(1), 2.5, int64_t(-3)}}};
  return r;
}

/// The overrides the other way round, a bare-metal target (as the C module
/// it must be), an input name holding '=' and a space, one tile.
BuildRecipe otherSettings() {
  BuildRecipe r;
  r.target = "thumbv7em-none-eabihf";
  r.targetCpu = "cortex-m7";
  r.debugSymbols = false;
  r.reflection = true;
  r.format = kiln::OutputFormat::CModule;
  r.tiles = {{7, {0, 0, 4}}};
  r.noFusion = {0};
  r.fixedShapes = {{"in put=1", {3}}};
  r.fixedValues = {{"in put=1", {0.125, -1e-30, 6.02e23}},
                   {"2", {int64_t(-9223372036854775807 - 1)}}};
  return r;
}

/// The host's own CPU and features, the riscv64 target, fusion on.
BuildRecipe hostCpu() {
  BuildRecipe r;
  r.target = "riscv64-linux-gnu";
  r.targetCpu = "host";
  r.targetFeatures = "-c";
  r.fixedShapes = {{"1", {4, 4}}};
  return r;
}

std::vector<BuildRecipe> recipes() {
  return {BuildRecipe(), everySetting(), otherSettings(), hostCpu()};
}

std::string errorText(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

/// Parses `flags` back as the command line does: "--" stripped, key and
/// value split at the first '='.
BuildRecipe fromCommandLine(const std::vector<std::string> &flags) {
  BuildRecipe r;
  for (const std::string &flag : flags) {
    llvm::StringRef text(flag);
    EXPECT_TRUE(text.consume_front("--")) << flag;
    auto [key, value] = text.split('=');
    EXPECT_EQ(errorText(kiln::setRecipeOption(r, key, value)), "") << flag;
  }
  return r;
}

llvm::json::Value parseJson(llvm::StringRef text) {
  auto parsed = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  return parsed ? std::move(*parsed) : llvm::json::Value(nullptr);
}

TEST(Recipe, JsonRoundTripIsTheIdentity) {
  for (const BuildRecipe &r : recipes()) {
    auto back = kiln::recipeFromJson(kiln::recipeToJson(r), "recipe.json");
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_TRUE(*back == r);
  }
}

TEST(Recipe, CommandLineRoundTripIsTheIdentity) {
  for (const BuildRecipe &r : recipes())
    EXPECT_TRUE(fromCommandLine(kiln::recipeCommandLine(r)) == r);
}

TEST(Recipe, JsonFormIsTheDocumentedOne) {
  // Defaults are not written.
  EXPECT_EQ(llvm::json::Value(kiln::recipeToJson(BuildRecipe())), parseJson("{}"));
  EXPECT_EQ(llvm::json::Value(kiln::recipeToJson(everySetting())), parseJson(R"({
    "target": "aarch64-linux-gnu", "target_cpu": "cortex-a72",
    "target_cpu_features": "+neon,+crc", "profile": "stripped",
    "debug_symbols": true, "reflection": false, "output_format": "c-module",
    "module_name": "face_detector",
    "tiles": {"0": [1, 8, 0, 0], "3": [0, 16], "12": [2]},
    "fusion": false, "no_fusion": [2, 5, 9],
    "fixed_shapes": {"0": [1, 76, 32, 1], "audio": [2, 8000]},
    "fixed_values": {"sr": 16000, "x": [1, 2.5, -3]}})"));
  // The same text read back (as a tuning file) is the recipe.
  auto tuning = kiln::parseRecipe(R"({"tiles": {"3": [0, 16], "12": [2], "0": [1, 8, 0, 0]},
    "no_fusion": [9, 2, 5, 2], "fusion": false, "target": "aarch64-linux-gnu",
    "target_cpu": "cortex-a72", "target_cpu_features": "+neon,+crc",
    "profile": "stripped", "debug_symbols": true, "reflection": false,
    "output_format": "c-module", "module_name": "face_detector",
    "fixed_shapes": {"audio": [2, 8000], "0": [1, 76, 32, 1]},
    "fixed_values": {"x": [1.0, 2.5, -3], "sr": [16000]}})",
                                  "tuning.json");
  ASSERT_TRUE(static_cast<bool>(tuning)) << llvm::toString(tuning.takeError());
  EXPECT_TRUE(*tuning == everySetting());
  // null leaves an override to the profile.
  auto nulls = kiln::parseRecipe(R"({"debug_symbols": null, "reflection": null})", "t.json");
  ASSERT_TRUE(static_cast<bool>(nulls));
  EXPECT_TRUE(*nulls == BuildRecipe());
}

TEST(Recipe, CommandLineIsTheDocumentedOne) {
  EXPECT_TRUE(kiln::recipeCommandLine(BuildRecipe()).empty());
  const std::vector<std::string> expected = {"--target=aarch64-linux-gnu",
                                             "--target-cpu=cortex-a72",
                                             "--target-cpu-features=+neon,+crc",
                                             "--profile=stripped",
                                             "--debug-symbols=true",
                                             "--reflection=false",
                                             "--output-format=c-module",
                                             "--module-name=face_detector",
                                             "--tile=0=1,8,0,0",
                                             "--tile=3=0,16",
                                             "--tile=12=2",
                                             "--fusion=false",
                                             "--no-fusion=2",
                                             "--no-fusion=5",
                                             "--no-fusion=9",
                                             "--fix-shape=0=1x76x32x1",
                                             "--fix-shape=audio=2x8000",
                                             "--fix-value=sr=16000",
                                             "--fix-value=x=1,2.5,-3"};
  EXPECT_EQ(kiln::recipeCommandLine(everySetting()), expected);
  // The input is everything before the last '='; reals in the shortest
  // text that reads back to the same double.
  std::vector<std::string> other = kiln::recipeCommandLine(otherSettings());
  ASSERT_GE(other.size(), 3u);
  EXPECT_EQ(other[other.size() - 3], "--fix-shape=in put=1=3");
  EXPECT_EQ(other[other.size() - 2], "--fix-value=2=-9223372036854775808");
  EXPECT_EQ(other.back(), "--fix-value=in put=1=0.125,-1e-30,6.02e+23");
}

TEST(Recipe, EveryKeyHasItsJsonKey) {
  const std::vector<std::string> keys = {
      "target",     "target-cpu",    "target-cpu-features", "profile",      "debug-symbols",
      "reflection", "output-format", "module-name",         "tile",         "fusion",
      "no-fusion",  "fix-shape",     "fix-value",           "check-bounds", "signature"};
  const std::vector<std::string> json = {
      "target",     "target_cpu",    "target_cpu_features", "profile",      "debug_symbols",
      "reflection", "output_format", "module_name",         "tiles",        "fusion",
      "no_fusion",  "fixed_shapes",  "fixed_values",        "check_bounds", "signature"};
  EXPECT_EQ(kiln::recipeKeys(), keys);
  EXPECT_EQ(kiln::recipeJsonKeys(), json);
}

TEST(Recipe, SettingsAccumulateAsOnTheCommandLine) {
  BuildRecipe r;
  for (auto [key, value] :
       std::vector<std::pair<const char *, const char *>>{{"tile", "3=1,2"},
                                                          {"tile", "3=4, 5"},
                                                          {"no-fusion", "7"},
                                                          {"no-fusion", "1"},
                                                          {"no-fusion", "7"},
                                                          {"fusion", "0"},
                                                          {"debug-symbols", "1"},
                                                          {"output-format", "artifact"},
                                                          {"fix-shape", "x=y=2x3"}})
    ASSERT_EQ(errorText(kiln::setRecipeOption(r, key, value)), "") << key << "=" << value;
  // A later --tile for one dispatch replaces it; ids sorted, once each.
  EXPECT_EQ(r.tiles, (std::map<int64_t, std::vector<int64_t>>{{3, {4, 5}}}));
  EXPECT_EQ(r.noFusion, (std::vector<int64_t>{1, 7}));
  EXPECT_FALSE(r.fusion);
  EXPECT_EQ(r.debugSymbols, std::optional<bool>(true));
  EXPECT_EQ(r.format, kiln::OutputFormat::Artifact);
  EXPECT_EQ(r.fixedShapes, (std::map<std::string, std::vector<int64_t>>{{"x=y", {2, 3}}}));
}

TEST(Recipe, FixValueTakesEveryDocumentedForm) {
  using N = kiln::FixedNumber;
  auto parse = [](const char *text) {
    auto v = kiln::parseFixValue(text);
    EXPECT_TRUE(static_cast<bool>(v)) << text << ": " << llvm::toString(v.takeError());
    return v ? *v : std::vector<N>();
  };
  EXPECT_EQ(parse("16000"), (std::vector<N>{int64_t(16000)}));
  EXPECT_EQ(parse("-7"), (std::vector<N>{int64_t(-7)}));
  EXPECT_EQ(parse("1,2,3"), (std::vector<N>{int64_t(1), int64_t(2), int64_t(3)}));
  EXPECT_EQ(parse("[1,2,3]"), parse("1,2,3"));
  EXPECT_EQ(parse(" [ 1 , 2 , 3 ] "), parse("1,2,3"));
  EXPECT_EQ(parse("0.5,-1e-3"), (std::vector<N>{0.5, -0.001}));
  // Reals with an integral value are whole numbers (one form per value).
  EXPECT_EQ(parse("2.0,1e3,+5,-0.0"),
            (std::vector<N>{int64_t(2), int64_t(1000), int64_t(5), int64_t(0)}));
  EXPECT_EQ(parse("true,false"), (std::vector<N>{int64_t(1), int64_t(0)}));
  EXPECT_EQ(parse("9223372036854775807"), (std::vector<N>{int64_t(9223372036854775807)}));
  // Beyond int64: a real (the model check says it is out of an integer
  // type's range).
  EXPECT_EQ(parse("1e20"), (std::vector<N>{1e20}));
  // The text form reads back to the same values.
  for (const char *text : {"16000", "1,2.5,-3", "0.1,1e-30,6.02e23,-2.5e-7", "true"})
    EXPECT_EQ(parse(kiln::fixValueText(parse(text)).c_str()), parse(text)) << text;
  EXPECT_EQ(kiln::fixValueText({int64_t(16000)}), "16000");
  EXPECT_EQ(kiln::fixValueText({0.1, int64_t(-3)}), "0.1,-3");
  // Setting by text: the input is everything before the last '='.
  BuildRecipe r;
  ASSERT_EQ(errorText(kiln::setRecipeOption(r, "fix-value", "a=b=[1, 2]")), "");
  ASSERT_EQ(errorText(kiln::setRecipeOption(r, "fix-value", "0=0.5")), "");
  EXPECT_EQ(r.fixedValues, (std::map<std::string, std::vector<N>>{{"a=b", {int64_t(1), int64_t(2)}},
                                                                  {"0", {0.5}}}));
  auto options = kiln::recipeCompileOptions(r);
  ASSERT_TRUE(static_cast<bool>(options)) << llvm::toString(options.takeError());
  ASSERT_EQ(options->fixedValues.size(), 2u);
  EXPECT_EQ(options->fixedValues[0].input, "0");
  EXPECT_EQ(options->fixedValues[0].values, (std::vector<N>{0.5}));
  EXPECT_EQ(options->fixedValues[1].input, "a=b");
}

TEST(Recipe, EachBadValueIsOneErrorNamingTheFlagAndTheValue) {
  struct Case {
    const char *key, *value, *reason;
  } cases[] = {
      {"target", "z80",
       "is not a supported target (host, x86_64-linux-gnu, aarch64-linux-gnu, "
       "riscv64-linux-gnu, thumbv7em-none-eabihf, thumbv6m-none-eabi)"},
      {"profile", "fast", "is not a profile (default, stripped)"},
      {"debug-symbols", "yes", "is not true or false"},
      {"reflection", "2", "is not true or false"},
      {"output-format", "zip", "is not a format (kiln, c-module)"},
      {"module-name", "9lives", "is not a C identifier"},
      {"module-name", "int", "is a C keyword or standard header name (int.h would clash)"},
      {"module-name", "__m", "is not a C identifier"},
      {"tile", "3", "expected DISPATCH=SIZES"},
      {"tile", "3=", "expected DISPATCH=SIZES"},
      {"tile", "x=1", "expected DISPATCH=SIZES"},
      {"tile", "-1=2", "expected DISPATCH=SIZES"},
      {"tile", "3=1,a", "'a' is not a tile size (a whole number >= 0)"},
      {"tile", "3=1,-4", "'-4' is not a tile size (a whole number >= 0)"},
      {"fusion", "maybe", "is not true or false"},
      {"no-fusion", "-2", "is not a dispatch id (a whole number >= 0, from `kiln inspect`)"},
      {"no-fusion", "abc", "is not a dispatch id"},
      {"fix-shape", "0", "expected INPUT=DIMS"},
      {"fix-shape", "=1x2", "expected INPUT=DIMS"},
      {"fix-shape", "0=1x0", "'0' is not a positive dimension"},
      {"fix-shape", "0=axb", "'a' is not a positive dimension"},
      {"fix-shape", "0=65536x65536", "more than 2^31 elements"},
      {"fix-value", "sr", "expected INPUT=VALUE"},
      {"fix-value", "=16000", "expected INPUT=VALUE"},
      {"fix-value", "sr=", "no value"},
      {"fix-value", "sr=[]", "no value"},
      {"fix-value", "sr=abc", "'abc' is not a number (VALUE is a number such as 16000"},
      {"fix-value", "sr=16k", "'16k' is not a number"},
      {"fix-value", "x=1,,2", "'' is not a number"},
      {"fix-value", "x=[1,2", "has unbalanced [ ]"},
      {"fix-value", "x=1,2]", "has unbalanced [ ]"},
      {"fix-value", "x=nan", "'nan' is not a number"},
      {"fix-value", "x=inf", "'inf' is not a number"},
      {"fix-value", "x=1e999", "'1e999' is not a number"},
      {"fix-value", "x=0x10", "'0x10' is not a number"},
      {"fix-value", "x=True", "'True' is not a number"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.key) + "=" + c.value);
    BuildRecipe r = everySetting();
    std::string message = errorText(kiln::setRecipeOption(r, c.key, c.value));
    EXPECT_EQ(message.rfind("--" + std::string(c.key) + "=", 0), 0u) << message;
    EXPECT_NE(message.find(c.value), std::string::npos) << message;
    EXPECT_NE(message.find(c.reason), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_TRUE(r == everySetting()); // unchanged
    // The workbench's line: the setting's display name, the same value and
    // reason, no flag.
    std::string shown = kiln::settingErrorText(kiln::setRecipeOption(r, c.key, c.value));
    EXPECT_EQ(shown.rfind(kiln::settingDisplayName(c.key) + ": ", 0), 0u) << shown;
    EXPECT_NE(shown.find(c.value), std::string::npos) << shown;
    EXPECT_NE(shown.find(c.reason), std::string::npos) << shown;
    EXPECT_EQ(shown.find("--"), std::string::npos) << shown;
  }
  EXPECT_EQ(kiln::settingDisplayName("tile"), "Tile sizes");
  EXPECT_EQ(kiln::settingDisplayName("reflection"), "Reflection data");
  // Errors of other kinds pass through unchanged.
  EXPECT_EQ(kiln::settingErrorText(kiln::makeError("m.tflite: no such file")),
            "m.tflite: no such file");
  // Tile sizes alone: the one parser the Tune cells use too.
  auto sizes = kiln::parseTileSizes("1, 8,0");
  ASSERT_TRUE(bool(sizes)) << llvm::toString(sizes.takeError());
  EXPECT_EQ(*sizes, (std::vector<int64_t>{1, 8, 0}));
  EXPECT_EQ(errorText(kiln::parseTileSizes("1,x").takeError()),
            "'x' is not a tile size (a whole number >= 0)");
  EXPECT_EQ(errorText(kiln::parseTileSizes(" ").takeError()).rfind("no sizes", 0), 0u);
  // A long module name: the flag, the start of the value and the count.
  std::string longName(101, 'a');
  BuildRecipe r;
  std::string message = errorText(kiln::setRecipeOption(r, "module-name", longName));
  EXPECT_EQ(message.rfind("--module-name='aaaa", 0), 0u) << message;
  EXPECT_NE(message.find("is 101 characters; at most 100"), std::string::npos) << message;
  // A second shape or value for one input, and a key that is no setting.
  EXPECT_EQ(errorText(kiln::setRecipeOption(r, "fix-shape", "0=2x3")), "");
  EXPECT_EQ(errorText(kiln::setRecipeOption(r, "fix-shape", "0=1x3")),
            "--fix-shape fixes input '0' twice; give one shape per input");
  EXPECT_EQ(errorText(kiln::setRecipeOption(r, "fix-value", "sr=16000")), "");
  EXPECT_EQ(errorText(kiln::setRecipeOption(r, "fix-value", "sr=8000")),
            "--fix-value fixes input 'sr' twice; give one value per input");
  // More elements than a fixed value holds.
  std::string many = "x=0";
  for (size_t i = 1; i <= kiln::kMaxFixedValueElements; ++i)
    many += ",0";
  message = errorText(kiln::setRecipeOption(r, "fix-value", many));
  EXPECT_NE(message.find("65537 elements; a fixed value has at most 65536"), std::string::npos)
      << message.substr(0, 200);
  message = errorText(kiln::setRecipeOption(r, "tiles", "3=1"));
  EXPECT_NE(message.find("'tiles' is not a build setting (target, target-cpu"), std::string::npos)
      << message;
  // The CPU and its features are LLVM's names, checked when compiling:
  // any text is taken (empty = the target's default).
  for (const char *key : {"target-cpu", "target-cpu-features"})
    EXPECT_EQ(errorText(kiln::setRecipeOption(r, key, "")), "") << key;
}

TEST(Recipe, BadJsonValuesNameTheFileTheKeyAndTheValue) {
  struct Case {
    const char *text, *message;
  } cases[] = {
      {R"({"target": "z80"})", "t.json: \"target\": 'z80' is not a supported target"},
      {R"({"target": 3})", "t.json: \"target\" must be a string"},
      {R"({"profile": "fast"})",
       "t.json: \"profile\": 'fast' is not a profile (default, stripped)"},
      {R"({"debug_symbols": "yes"})",
       "t.json: \"debug_symbols\" must be true, false or null (the profile decides)"},
      {R"({"output_format": "zip"})", "t.json: \"output_format\": 'zip' is not a format"},
      {R"({"module_name": "9lives"})", "t.json: \"module_name\": '9lives' is not a C identifier"},
      {R"({"tiles": {"x": [1]}})", "t.json: \"tiles\": 'x' is not a dispatch id"},
      {R"({"tiles": {"1": [-4]}})",
       "t.json: \"tiles.1\": '-4' is not a tile size (a whole number >= 0)"},
      {R"({"tiles": {"1": []}})", "t.json: \"tiles.1\": no tile sizes"},
      {R"({"tiles": {"1": [1.5]}})", "t.json: \"tiles.1\" must be an array of whole numbers"},
      {R"({"fusion": 1})", "t.json: \"fusion\" must be true or false"},
      {R"({"no_fusion": [-1]})", "t.json: \"no_fusion\": '-1' is not a dispatch id"},
      {R"({"fixed_shapes": {"in": [0, 3]}})",
       "t.json: \"fixed_shapes.in\": '0' is not a positive dimension"},
      {R"({"fixed_shapes": {"": [3]}})", "t.json: \"fixed_shapes\" has an empty input name"},
      {R"({"fixed_values": {"sr": "16000"}})",
       "t.json: \"fixed_values.sr\" must be a number, true, false or an array of them"},
      {R"({"fixed_values": {"x": [1, "a"]}})",
       "t.json: \"fixed_values.x\" must be a number, true, false or an array of them"},
      {R"({"fixed_values": {"x": [[1], [2]]}})",
       "t.json: \"fixed_values.x\" must be a number, true, false or an array of them"},
      {R"({"fixed_values": {"x": []}})", "t.json: \"fixed_values.x\": no value"},
      {R"({"fixed_values": {"": 1}})", "t.json: \"fixed_values\" has an empty input name"},
      {R"({"fixed_values": [1]})",
       "t.json: \"fixed_values\" must map input names or indices to values"},
      {R"({"tilez": {}})", "t.json: unknown key 'tilez' (known: target, target_cpu"},
      {R"([1])", "t.json: expected a JSON object of build settings"},
      {R"({"tiles": )", "t.json: not valid JSON"},
  };
  for (const Case &c : cases) {
    auto r = kiln::parseRecipe(c.text, "t.json");
    ASSERT_FALSE(static_cast<bool>(r)) << c.text;
    std::string message = llvm::toString(r.takeError());
    EXPECT_EQ(message.rfind(c.message, 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // recipeFromJson leaves other keys to the caller.
  llvm::json::Object object{{"model", "m.tflite"}, {"profile", "stripped"}};
  std::vector<std::string> others;
  auto r = kiln::recipeFromJson(object, "p.kilnproj", &others);
  ASSERT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r->profile, "stripped");
  EXPECT_EQ(others, std::vector<std::string>{"model"});
}

TEST(Recipe, ValidateChecksFieldsSetDirectlyAndTheirCombination) {
  auto message = [](BuildRecipe r) { return errorText(kiln::validateRecipe(r)); };
  for (const BuildRecipe &r : recipes())
    EXPECT_EQ(message(r), "");
  BuildRecipe r;
  r.tiles = {{-1, {1}}};
  EXPECT_EQ(message(r), "--tile='-1=1': '-1' is not a dispatch id (a whole number >= 0, from "
                        "`kiln inspect`)");
  r.tiles = {{3, {}}};
  EXPECT_EQ(message(r).rfind("--tile='3=': no tile sizes", 0), 0u) << message(r);
  r = BuildRecipe();
  r.fixedShapes = {{"a", {2, 0}}};
  EXPECT_EQ(message(r), "--fix-shape='a=2x0': '0' is not a positive dimension");
  r = BuildRecipe();
  r.fixedValues = {{"a", {}}};
  EXPECT_EQ(message(r).rfind("--fix-value='a=': no value", 0), 0u) << message(r);
  r.fixedValues = {{"a", {std::numeric_limits<double>::infinity()}}};
  EXPECT_EQ(message(r).rfind("--fix-value='a=inf': a value that is not finite", 0), 0u)
      << message(r);
  r.fixedValues = {{"", {int64_t(1)}}};
  EXPECT_EQ(message(r), "--fix-value='=1': no input name (a name or an index)");
  r = BuildRecipe();
  r.noFusion = {-3};
  EXPECT_EQ(message(r).rfind("--no-fusion='-3' is not a dispatch id", 0), 0u) << message(r);
  r = BuildRecipe();
  r.profile = "small";
  EXPECT_EQ(message(r), "--profile='small' is not a profile (default, stripped)");
  r = BuildRecipe();
  r.moduleName = "stdint";
  EXPECT_EQ(message(r).rfind("--module-name='stdint' is a C keyword", 0), 0u) << message(r);
  // A bare-metal target loads no .kiln: the C module only.
  r = BuildRecipe();
  r.target = "thumbv7em-none-eabihf";
  EXPECT_TRUE(kiln::recipeIsBareMetal(r));
  EXPECT_EQ(message(r), "--target=thumbv7em-none-eabihf is bare metal: nothing there loads a "
                        ".kiln artifact's shared object; use --output-format=c-module");
  EXPECT_EQ(kiln::settingErrorText(kiln::validateRecipe(r)),
            "Target: thumbv7em-none-eabihf is bare metal: nothing there loads a .kiln artifact; "
            "choose the static C module format");
  r.checkBounds = true;
  r.format = kiln::OutputFormat::CModule;
  EXPECT_EQ(kiln::settingErrorText(kiln::validateRecipe(r))
                .rfind("Bounds checks: bounds-checked kernels need", 0),
            0u);
  r.checkBounds = false;
  r.format = kiln::OutputFormat::CModule;
  EXPECT_EQ(message(r), "");
  r.target = "aarch64-linux-gnu";
  EXPECT_FALSE(kiln::recipeIsBareMetal(r));
}

TEST(Recipe, CompileOptionsResolveTargetProfileAndOverrides) {
  auto plain = kiln::recipeCompileOptions(BuildRecipe());
  ASSERT_TRUE(static_cast<bool>(plain));
  EXPECT_EQ(plain->target.triple, ""); // the host's
  EXPECT_EQ(plain->target.cpu, "generic");
  EXPECT_TRUE(plain->debugSymbols && plain->reflection && plain->fusion);
  EXPECT_EQ(plain->format, kiln::OutputFormat::Artifact);

  auto every = kiln::recipeCompileOptions(everySetting());
  ASSERT_TRUE(static_cast<bool>(every)) << llvm::toString(every.takeError());
  EXPECT_EQ(every->target.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(every->target.cpu, "cortex-a72");
  EXPECT_EQ(every->target.features, "+neon,+crc"); // not the target's +neon
  EXPECT_TRUE(every->debugSymbols);                // the override beats "stripped"
  EXPECT_FALSE(every->reflection);
  EXPECT_EQ(every->format, kiln::OutputFormat::CModule);
  EXPECT_EQ(every->moduleName, "face_detector");
  EXPECT_FALSE(every->fusion);
  EXPECT_EQ(every->noFusion, (std::vector<int64_t>{2, 5, 9}));
  using Tiles = std::vector<std::pair<int64_t, std::vector<int64_t>>>;
  EXPECT_EQ(every->tileSizes, (Tiles{{0, {1, 8, 0, 0}}, {3, {0, 16}}, {12, {2}}}));
  ASSERT_EQ(every->fixedShapes.size(), 2u);
  EXPECT_EQ(every->fixedShapes[0].input, "0");
  EXPECT_EQ(every->fixedShapes[0].shape, (std::vector<int64_t>{1, 76, 32, 1}));
  EXPECT_EQ(every->fixedShapes[1].input, "audio");

  BuildRecipe stripped;
  stripped.profile = "stripped";
  auto s = kiln::recipeCompileOptions(stripped);
  ASSERT_TRUE(static_cast<bool>(s));
  EXPECT_FALSE(s->debugSymbols || s->reflection);
  // A named target's default CPU, features and ABI.
  BuildRecipe riscv;
  riscv.target = "riscv64-linux-gnu";
  auto rv = kiln::recipeCompileOptions(riscv);
  ASSERT_TRUE(static_cast<bool>(rv));
  EXPECT_EQ(rv->target.cpu, "generic-rv64");
  EXPECT_EQ(rv->target.features, "+m,+a,+f,+d,+c");
  EXPECT_EQ(rv->target.abi, "lp64d");
  // The profile alone, for builds beside a recipe's.
  kiln::CompileOptions o;
  EXPECT_EQ(errorText(kiln::applyProfile("stripped", o)), "");
  EXPECT_FALSE(o.debugSymbols || o.reflection);
  EXPECT_EQ(errorText(kiln::applyProfile("tiny", o)),
            "--profile='tiny' is not a profile (default, stripped)");
}

TEST(Recipe, CheckTileSizesByHand) {
  // A 3x3 convolution as the plan describes it: n, oh, ow, oc parallel
  // (1, 38, 38, 24), kh, kw, ic reductions (3, 3, 16).
  const std::vector<int64_t> ranges = {1, 38, 38, 24, 3, 3, 16};
  const std::vector<std::string> kinds = {"parallel",  "parallel",  "parallel", "parallel",
                                          "reduction", "reduction", "reduction"};
  auto check = [&](const std::vector<int64_t> &sizes) {
    return errorText(kiln::checkTileSizes(7, sizes, ranges, kinds));
  };
  EXPECT_EQ(check({0, 8, 38, 0, 0, 0, 0}), "");  // 38 = the whole loop
  EXPECT_EQ(check({1, 8, 19, 12, 0, 0, 0}), ""); // 1 = n's whole loop: 3 split
  EXPECT_EQ(check({0, 0, 0, 0, 0, 0, 0}), "");   // one workgroup
  EXPECT_EQ(check({0, 8, 19, 12, 3, 0, 0}),
            "dispatch 7: loop 4 is a reduction and cannot be split across workgroups "
            "(use tile size 0)");
  EXPECT_EQ(check({0, 39, 0, 0, 0, 0, 0}),
            "dispatch 7: tile size 39 for loop 1 exceeds the loop's range 38 (use 38 or 0 for "
            "the whole loop)");
  EXPECT_EQ(check({0, -8, 0, 0, 0, 0, 0}),
            "dispatch 7: tile size -8 for loop 1 is negative (0 = the whole loop)");
  EXPECT_EQ(check({0, 8, 0, 0, 0, 0}),
            "dispatch 7 has 7 loops; 6 tile sizes given (one per loop, 0 = whole loop)");
  // Four split loops have no fourth grid axis.
  EXPECT_EQ(errorText(kiln::checkTileSizes(2, {1, 2, 3, 4}, {2, 4, 6, 8}, {})),
            "dispatch 2: 4 loops split; at most 3 map to workgroups (x, y, z)");
  // Missing kinds are parallel.
  EXPECT_EQ(errorText(kiln::checkTileSizes(2, {1, 2, 3, 8}, {2, 4, 6, 8}, {})), "");
}

/// A file of `dir`.
std::string pathIn(const llvm::SmallString<128> &dir, const char *name) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

TEST(Recipe, ProjectFileKeepsTheRecipe) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-recipe-test", dir));
  for (const BuildRecipe &r : recipes()) {
    kiln::Project p;
    p.model = "models/face.tflite";
    p.recipe = r;
    p.exportDir = "../bundles/face";
    const std::string path = pathIn(dir, "face.kilnproj");
    ASSERT_EQ(errorText(kiln::saveProject(p, path)), "");
    auto loaded = kiln::loadProject(path);
    ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
    EXPECT_TRUE(*loaded == p);
  }
  // The file holds the recipe's JSON form beside the project's own keys.
  kiln::Project p;
  p.model = "face.tflite";
  p.recipe.profile = "stripped";
  p.recipe.tiles = {{3, {0, 8}}};
  EXPECT_EQ(parseJson(kiln::projectToJson(p)),
            parseJson(R"({"kiln_project": 1, "model": "face.tflite", "profile": "stripped",
                          "tiles": {"3": [0, 8]}})"));
  // Fixed values too: a scalar as a number, a tensor as an array.
  p.recipe.fixedValues = {{"sr", {int64_t(16000)}}, {"w", {0.5, int64_t(2)}}};
  EXPECT_EQ(parseJson(kiln::projectToJson(p)),
            parseJson(R"({"kiln_project": 1, "model": "face.tflite", "profile": "stripped",
                          "tiles": {"3": [0, 8]}, "fixed_values": {"sr": 16000, "w": [0.5, 2]}})"));
  p.recipe.fixedValues.clear();
  // A project written before the recipe (every key, empty ones too) reads.
  const std::string old = pathIn(dir, "old.kilnproj");
  std::ofstream(old) << R"({
  "export_dir": "",
  "fixed_shapes": {"0": [1, 76, 32, 1]},
  "fusion": true,
  "kiln_project": 1,
  "model": "blazeface.tflite",
  "no_fusion": [],
  "output_format": "kiln",
  "profile": "default",
  "target": "host",
  "target_cpu": "",
  "target_cpu_features": "",
  "tiles": {"3": [0, 8, 0, 0]}
})";
  auto loaded = kiln::loadProject(old);
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  kiln::Project expected;
  expected.model = "blazeface.tflite";
  expected.recipe.fixedShapes = {{"0", {1, 76, 32, 1}}};
  expected.recipe.tiles = {{3, {0, 8, 0, 0}}};
  EXPECT_TRUE(*loaded == expected);
  // Keys neither the project's nor the recipe's are refused, naming both.
  std::ofstream(old) << R"({"kiln_project": 1, "model": "m.tflite", "tile": {}})";
  auto bad = kiln::loadProject(old);
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("unknown key 'tile' (known: kiln_project, model, export_dir, export, target, "),
            std::string::npos)
      << message;
  llvm::sys::fs::remove_directories(dir);
}

/// The result of parsing `text` as a project ("" when it parses).
std::string projectError(const std::string &text) {
  auto p = kiln::parseProject(text, "m.kilnproj");
  return p ? std::string() : llvm::toString(p.takeError());
}

TEST(Recipe, ProjectKeepsExportSettingsApart) {
  // A working build tuned on the host, exported as a stripped C module for
  // the Cortex-M4F with budgets.
  kiln::Project p;
  p.model = "face.tflite";
  p.recipe.targetCpu = "x86-64-v3";
  p.recipe.reflection = false;
  p.recipe.tiles = {{3, {0, 8}}};
  p.recipe.fusion = false;
  p.recipe.fixedShapes = {{"0", {2, 16}}};
  p.recipe.moduleName = "face_net";
  p.exportSettings.target = "thumbv7em-none-eabihf";
  p.exportSettings.targetCpu = "cortex-m7";
  p.exportSettings.profile = "stripped";
  p.exportSettings.format = kiln::OutputFormat::CModule;
  p.exportSettings.budget = {256 * 1024, 1000000};
  p.exportDir = "bundle";
  // The JSON: the export's settings in their own object, the working
  // recipe's keys untouched at the top.
  EXPECT_EQ(parseJson(kiln::projectToJson(p)), parseJson(R"({
    "kiln_project": 1, "model": "face.tflite", "export_dir": "bundle",
    "target_cpu": "x86-64-v3", "reflection": false, "tiles": {"3": [0, 8]}, "fusion": false,
    "fixed_shapes": {"0": [2, 16]}, "module_name": "face_net",
    "export": {"target": "thumbv7em-none-eabihf", "target_cpu": "cortex-m7", "profile": "stripped",
               "output_format": "c-module", "ram_budget_bytes": 262144,
               "flash_budget_bytes": 1000000}})"));
  auto back = kiln::parseProject(kiln::projectToJson(p), "m.kilnproj");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(*back == p);

  // The export's recipe: its target, CPU, profile (overrides dropped) and
  // format; tiles, fusion, shapes and module name from the working one.
  BuildRecipe expected = p.recipe;
  expected.target = "thumbv7em-none-eabihf";
  expected.targetCpu = "cortex-m7";
  expected.profile = "stripped";
  expected.reflection.reset();
  expected.format = kiln::OutputFormat::CModule;
  EXPECT_TRUE(kiln::exportRecipe(p) == expected);
  EXPECT_EQ(errorText(kiln::validateRecipe(kiln::exportRecipe(p))), "");
  kiln::ExportRequest request = kiln::projectExportRequest(p, "/a/b/m.kilnproj");
  EXPECT_EQ(request.model, "/a/b/face.tflite");
  EXPECT_TRUE(request.recipe == expected);
  EXPECT_EQ(request.budget.ramBytes, 262144);
  EXPECT_EQ(request.budget.flashBytes, 1000000);
  // What such an export writes, by the documented names.
  EXPECT_EQ(kiln::exportFileNames(request),
            (std::vector<std::string>{"face_net.h", "face_net.c", "face_net_constants.c", "face_net_kernels.o",
                                      "manifest.json", "report.md"}));
  request.recipe.format = kiln::OutputFormat::Artifact;
  EXPECT_EQ(kiln::exportFileNames(request), (std::vector<std::string>{"face.kiln", "manifest.json", "report.md"}));

  // Unset export settings follow the working build, CPU and overrides too.
  kiln::Project plain = p;
  plain.exportSettings = {};
  EXPECT_TRUE(kiln::exportRecipe(plain) == p.recipe);
  EXPECT_EQ(parseJson(kiln::projectToJson(plain)).getAsObject()->get("export"), nullptr);
  // Only a format: the working target and CPU stay.
  plain.exportSettings.format = kiln::OutputFormat::CModule;
  EXPECT_EQ(kiln::exportRecipe(plain).targetCpu, "x86-64-v3");
  EXPECT_EQ(kiln::exportRecipe(plain).target, "host");
  EXPECT_EQ(kiln::exportRecipe(plain).reflection, std::optional<bool>(false));

  // A file written before the export settings: the export follows the
  // working recipe, as it did then.
  auto old = kiln::parseProject(R"({"kiln_project": 1, "model": "m.tflite", "export_dir": "out",
                                    "target": "aarch64-linux-gnu", "output_format": "kiln"})",
                                "old.kilnproj");
  ASSERT_TRUE(static_cast<bool>(old)) << llvm::toString(old.takeError());
  EXPECT_TRUE(old->exportSettings == kiln::ExportSettings());
  EXPECT_EQ(old->exportDir, "out");
  EXPECT_EQ(kiln::exportRecipe(*old).target, "aarch64-linux-gnu");

  // Bad export settings: one error naming the file and the key.
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"target": "z80"}})")
                .find("m.kilnproj: in \"export\": \"target\""),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"target": "z80"}})").find("z80"),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"tiles": {}}})")
                .find("unknown key 'export.tiles'"),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"ram_budget_bytes": 0}})")
                .find("\"export.ram_budget_bytes\" must be a whole number of bytes >= 1"),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"target_cpu": "cortex-m7"}})")
                .find("need \"export.target\""),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": []})").find("\"export\" must be an object"),
            std::string::npos);
  EXPECT_NE(projectError(R"({"kiln_project": 1, "model": "m", "export": {"profile": "tiny"}})").find("tiny"),
            std::string::npos);
}

TEST(Recipe, TargetsHaveNames) {
  // One name per known target, none for others.
  EXPECT_EQ(kiln::targetDisplayName("thumbv7em-none-eabihf"), "Cortex-M4F bare metal");
  EXPECT_EQ(kiln::targetDisplayName("aarch64-linux-gnu"), "aarch64 Linux");
  EXPECT_EQ(kiln::targetDisplayName("x86_64-linux-gnu"), "x86-64 Linux");
  EXPECT_EQ(kiln::targetDisplayName("z80"), "");
  for (const std::string &t : kiln::knownTargets())
    EXPECT_NE(kiln::targetDisplayName(t), "") << t;
}

} // namespace
